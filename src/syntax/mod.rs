//! What a state file says: frontmatter and policy, the prompt template, and the
//! transition tags of its output (raymond's grammar, R4.x). Pure text in, typed
//! values out; nothing here runs anything.

pub(crate) mod frontmatter;
pub(crate) mod policy;
pub(crate) mod print_extractor;
pub(crate) mod scanner;
pub(crate) mod tag;
pub(crate) mod template;
