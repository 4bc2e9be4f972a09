//! Small text helpers shared by messages everywhere, and the pure rules over
//! state *names* (`state_name`) and did-you-mean (`suggestion`) that `syntax`,
//! `workflow` and the layers above them must agree on.

pub(crate) mod count;
pub(crate) mod duration;
pub(crate) mod excerpt;
pub(crate) mod state_name;
pub(crate) mod suggestion;

/// The largest character boundary of `text` at or below byte `at`: where to cut
/// `text` to at most `at` bytes without splitting a character.
pub(crate) fn char_floor(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}
