//! What a state file says: frontmatter and policy, the prompt template, and the
//! transition tags of its output (raymond's grammar, R4.x). Pure text in, typed
//! values out; nothing here runs anything.

pub(crate) mod frontmatter;
pub(crate) mod policy;
pub(crate) mod print_extractor;
pub(crate) mod scanner;
pub(crate) mod script_directive;
pub(crate) mod tag;
pub(crate) mod template;
pub(crate) mod yaml_limits;
pub(crate) mod yaml_positions;

/// Text made of tag-like fragments and random characters, for property tests of
/// the scanner and the `<print>` extractor.
#[cfg(test)]
pub(crate) fn fragment_soup(fragments: &'static [&'static str]) -> impl proptest::strategy::Strategy<Value = String> {
    use proptest::prelude::*;
    let fragment = prop_oneof![
        4 => prop::sample::select(fragments).prop_map(String::from),
        1 => "\\PC{0,3}",
    ];
    prop::collection::vec(fragment, 0..40).prop_map(|parts| parts.concat())
}
