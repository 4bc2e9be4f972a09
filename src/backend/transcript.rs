//! One piece of a turn's transcript as `baton logs --step` shows it, for the
//! backends whose streams are not Claude Code's: each reads its own events
//! (`codex::transcript`, `pi::transcript`) into these, and
//! `inspect::transcript` lays them out like Claude's.

/// One piece of a turn's transcript.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Entry {
    /// A heading: the turn's start, a tool call, a warning, the turn's end.
    Heading(String),
    /// What the model said (or reasoned), shown whole.
    Said(String),
    /// A tool's output, shown cut short.
    ToolOutput(String),
    /// The text the state's tags are read from: the turn's last message.
    Answer(String),
}
