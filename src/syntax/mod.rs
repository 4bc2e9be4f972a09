//! What a state file says: frontmatter and policy, the prompt template, and the
//! transition tags of its output (raymond's grammar, R4.x). Pure text in, typed
//! values out; nothing here runs anything.

pub mod frontmatter;
pub mod policy;
pub mod print_extractor;
pub mod scanner;
pub mod tag;
pub mod template;
