//! A transition tag as written in a state's output, before resolution.
//!
//! The scanner (`tag_scanner`) produces these; the executors resolve their targets
//! and check them against a policy; `transition` turns a resolved tag into the
//! typed [`crate::transition::Transition`] that the handlers apply. Keeping the raw
//! form separate matters because policy checks (R5.8) and reminders (R5.20) talk
//! about tags and attributes, not about typed transitions.

use std::collections::BTreeMap;
use std::fmt;

/// The recognised transition tag names (R4.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum TagKind {
    Goto,
    Reset,
    Call,
    Function,
    Fork,
    Result,
    Ask,
    CallWorkflow,
    FunctionWorkflow,
    ForkWorkflow,
    ResetWorkflow,
    /// Baton's fan-in (`docs/join.md`): wait for the workers this agent forked.
    Join,
}

impl TagKind {
    pub(crate) const ALL: [TagKind; 12] = [
        TagKind::Goto,
        TagKind::Reset,
        TagKind::Call,
        TagKind::Function,
        TagKind::Fork,
        TagKind::Result,
        TagKind::Ask,
        TagKind::CallWorkflow,
        TagKind::FunctionWorkflow,
        TagKind::ForkWorkflow,
        TagKind::ResetWorkflow,
        TagKind::Join,
    ];

    /// The tag's name as written between `<` and `>`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            TagKind::Goto => "goto",
            TagKind::Reset => "reset",
            TagKind::Call => "call",
            TagKind::Function => "function",
            TagKind::Fork => "fork",
            TagKind::Result => "result",
            TagKind::Ask => "ask",
            TagKind::CallWorkflow => "call-workflow",
            TagKind::FunctionWorkflow => "function-workflow",
            TagKind::ForkWorkflow => "fork-workflow",
            TagKind::ResetWorkflow => "reset-workflow",
            TagKind::Join => "join",
        }
    }

    pub(crate) fn from_name(name: &str) -> Option<TagKind> {
        TagKind::ALL.into_iter().find(|kind| kind.name() == name)
    }

    /// Cross-workflow tags take a workflow specifier, not a state name (R1.10).
    pub(crate) fn is_cross_workflow(self) -> bool {
        matches!(
            self,
            TagKind::CallWorkflow | TagKind::FunctionWorkflow | TagKind::ForkWorkflow | TagKind::ResetWorkflow
        )
    }

    /// `fork` and `fork-workflow`: the tags that may be combined in one output (R3.43).
    pub(crate) fn is_fork_family(self) -> bool {
        matches!(self, TagKind::Fork | TagKind::ForkWorkflow)
    }
}

impl fmt::Display for TagKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One closed, recognised tag found in an output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Tag {
    pub(crate) kind: TagKind,
    /// The state name (or workflow specifier) the tag points at: the trimmed content
    /// for most tags, the `next` attribute for `ask`, empty for `result`.
    pub(crate) target: String,
    /// Attributes in name order; a later duplicate has already overwritten an earlier one (R4.6).
    pub(crate) attributes: BTreeMap<String, String>,
    /// The raw, untrimmed content for `result` and `ask`; `None` for the others.
    pub(crate) payload: Option<String>,
    /// Text between the name and `>` that is no `name="value"` attribute (an
    /// unquoted `input=foo`): ignored, as raymond ignores it, but reported.
    pub(crate) ignored: Vec<String>,
}

impl Tag {
    /// A non-`result`, non-`ask` tag (no payload) with `attributes`.
    #[cfg(test)]
    pub(crate) fn new<'a>(
        kind: TagKind,
        target: &str,
        attributes: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Tag {
        Tag {
            kind,
            target: target.to_string(),
            attributes: attributes.into_iter().map(|(name, value)| (name.to_string(), value.to_string())).collect(),
            payload: None,
            ignored: Vec::new(),
        }
    }

    pub(crate) fn attribute(&self, name: &str) -> Option<&str> {
        self.attributes.get(name).map(String::as_str)
    }
}
