//! Typed transitions: what a state's output asks the orchestrator to do next.
//!
//! A [`Tag`] is turned into a [`Transition`] only after its targets were resolved
//! to concrete file names (R3.2), so every `String` naming a state here is a file
//! that existed when the step finished. Attribute rules that the handlers would
//! otherwise check at run time (a `<call>` without `return`, R3.10) are checked
//! here, once, with a message that names the tag.

pub(crate) mod apply;
pub(crate) mod ask_timeout;
pub(crate) mod cd;
pub(crate) mod interpret;
pub(crate) mod task_folder;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::ids::StateName;
use crate::syntax::tag::{Tag, TagKind};
use crate::workflow::specifier::WorkflowEntry;

/// Where a forked worker keeps its task folder (R3.21).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum TaskMode {
    /// A fresh folder for the worker (the default).
    New,
    /// Share the parent's folder (`task="inherit"`).
    Inherit,
}

/// Where a forked worker works (`docs/isolation.md`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Isolation {
    /// In the directory its parent gives it (the default).
    #[default]
    Shared,
    /// `isolation="worktree"`: in a git worktree of its own, on its own branch.
    Worktree,
    /// Any other value, refused when the fork is applied (the parent pauses).
    Unknown(String),
}

impl Isolation {
    fn of(tag: &Tag) -> Isolation {
        match tag.attribute("isolation") {
            None | Some("" | "none") => Isolation::Shared,
            Some("worktree") => Isolation::Worktree,
            Some(other) => Isolation::Unknown(other.to_string()),
        }
    }
}

/// One worker to create: from a single `<fork>` or one element of a multi-fork.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ForkSpec {
    pub(crate) target: StateName,
    pub(crate) cd: Option<String>,
    pub(crate) input: Option<String>,
    pub(crate) task: TaskMode,
    /// `isolation` (`docs/isolation.md`).
    pub(crate) isolation: Isolation,
    /// Every attribute except `next`, `cd`, `input`, `task` and `isolation`: the worker's variables
    /// (none for `<fork-workflow>`, which drops them, R3.35).
    pub(crate) attributes: BTreeMap<String, String>,
    /// For `<fork-workflow>`: the worker's workflow; `target` is its entry state.
    pub(crate) workflow: Option<WorkflowEntry>,
}

/// `<join [timeout="…"]>NEXT</join>` (`docs/join.md`): wait until every worker
/// this agent forked since its last join has ended, then continue at `next`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct JoinSpec {
    pub(crate) next: StateName,
    /// Continue with what has arrived once this long has passed.
    pub(crate) timeout: Option<std::time::Duration>,
}

impl JoinSpec {
    /// The join of a resolved `<join>` tag (its timeout was checked by the scanner).
    pub(crate) fn of(tag: &Tag) -> JoinSpec {
        JoinSpec {
            next: StateName::from(tag.target.as_str()),
            timeout: tag.attribute("timeout").and_then(|text| crate::text::duration::parse_duration(text).ok()),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Transition {
    Goto {
        target: StateName,
        input: Option<String>,
    },
    Reset {
        target: StateName,
        cd: Option<String>,
        input: Option<String>,
        new_task: bool,
    },
    Call {
        target: StateName,
        return_state: StateName,
        input: Option<String>,
    },
    Function {
        target: StateName,
        return_state: StateName,
        input: Option<String>,
    },
    Fork {
        worker: ForkSpec,
        /// Where the parent continues; `None` only for a `<fork-workflow>` without
        /// `next`, whose parent stays at its state (R3.36).
        next: Option<StateName>,
    },
    Result {
        payload: String,
    },
    /// Several forks and a continuation in one output (R3.43–R3.45, A1–A2). With
    /// `join`, the continuation is a `<join>`'s: the caller waits for its workers
    /// first (`docs/join.md`).
    MultiFork {
        workers: Vec<ForkSpec>,
        continuation: StateName,
        join: Option<JoinSpec>,
    },
    /// `<join>` (`docs/join.md`).
    Join(JoinSpec),
    /// `<call-workflow>` (the callee forks the caller's session) or
    /// `<function-workflow>` (a fresh session, and `cd` allowed): R3.30–R3.33.
    CallWorkflow {
        callee: WorkflowEntry,
        return_state: StateName,
        input: Option<String>,
        fork_session: bool,
        cd: Option<String>,
    },
    /// `<ask>`: wait for a person's answer, then continue at `next` (R3.24–R3.26).
    Ask {
        next: StateName,
        prompt: String,
        timeout: Option<String>,
        timeout_next: Option<String>,
        /// The file attributes (R3.29).
        files: BTreeMap<String, String>,
    },
    /// `<reset-workflow>`: start over in another workflow, stack cleared (R3.37).
    ResetWorkflow {
        entry: WorkflowEntry,
        cd: Option<String>,
        input: Option<String>,
        new_task: bool,
    },
}

impl Transition {
    /// The short name used in traces and on the console.
    pub(crate) fn kind_name(&self) -> &'static str {
        match self {
            Transition::Goto { .. } => "goto",
            Transition::Reset { .. } => "reset",
            Transition::Call { .. } => "call",
            Transition::Function { .. } => "function",
            Transition::Fork { worker, .. } if worker.workflow.is_some() => "fork-workflow",
            Transition::Fork { .. } => "fork",
            Transition::Result { .. } => "result",
            Transition::MultiFork { join: Some(_), .. } => "multi-fork-join",
            Transition::MultiFork { .. } => "multi-fork",
            Transition::Join(_) => "join",
            Transition::CallWorkflow { fork_session: true, .. } => "call-workflow",
            Transition::CallWorkflow { .. } => "function-workflow",
            Transition::ResetWorkflow { .. } => "reset-workflow",
            Transition::Ask { .. } => "ask",
        }
    }

    /// The workers this transition creates.
    pub(crate) fn fork_specs(&self) -> &[ForkSpec] {
        match self {
            Transition::Fork { worker, .. } => std::slice::from_ref(worker),
            Transition::MultiFork { workers, .. } => workers,
            _ => &[],
        }
    }

    /// Render the `input` of a cross-workflow transition (R3.41: unlike the other
    /// tags' inputs, theirs are templates).
    pub(crate) fn render_workflow_input(&mut self, render: impl Fn(&str) -> String) {
        let input = match self {
            Transition::CallWorkflow { input, .. } | Transition::ResetWorkflow { input, .. } => input,
            Transition::Fork { worker, .. } if worker.workflow.is_some() => &mut worker.input,
            _ => return,
        };
        if let Some(text) = input.as_mut() {
            *text = render(text);
        }
    }
}

/// A tag that cannot become a transition.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum TransitionError {
    #[error("<{tag}> needs a `{attribute}` attribute ({purpose})")]
    MissingAttribute { tag: TagKind, attribute: &'static str, purpose: &'static str },
    /// A cross-workflow tag, which needs its caller's scope (`interpret::transition_of`).
    #[error("<{tag}> needs the caller's workflow to be interpreted")]
    NeedsScope { tag: TagKind },
}

/// `input` counts only when present and non-empty (R3.5, R3.9, R3.12).
fn input_of(tag: &Tag) -> Option<String> {
    tag.attribute("input").filter(|value| !value.is_empty()).map(str::to_string)
}

fn required(tag: &Tag, attribute: &'static str, purpose: &'static str) -> Result<StateName, TransitionError> {
    tag.attribute(attribute).map(StateName::from).ok_or(TransitionError::MissingAttribute {
        tag: tag.kind,
        attribute,
        purpose,
    })
}

const RETURN_PURPOSE: &str = "the state to continue at when the callee emits <result>";
const NEXT_PURPOSE: &str = "the state the parent continues at while the worker runs";

/// The worker half of a `<fork>` tag.
pub(crate) fn fork_spec(tag: &Tag) -> ForkSpec {
    let attributes = tag
        .attributes
        .iter()
        .filter(|(name, _)| !matches!(name.as_str(), "next" | "cd" | "input" | "task" | "isolation"))
        .map(|(name, value)| (name.clone(), value.clone()))
        .collect();
    ForkSpec {
        target: StateName::from(tag.target.as_str()),
        cd: tag.attribute("cd").map(str::to_string),
        input: input_of(tag),
        task: task_mode(tag),
        isolation: Isolation::of(tag),
        attributes,
        workflow: None,
    }
}

fn task_mode(tag: &Tag) -> TaskMode {
    if tag.attribute("task") == Some("inherit") { TaskMode::Inherit } else { TaskMode::New }
}

/// The worker half of a `<fork-workflow>` tag, whose specifier resolved to `entry`.
pub(crate) fn workflow_fork_spec(tag: &Tag, entry: WorkflowEntry) -> ForkSpec {
    ForkSpec {
        target: entry.state.clone(),
        cd: tag.attribute("cd").map(str::to_string),
        input: input_of(tag),
        task: task_mode(tag),
        isolation: Isolation::of(tag),
        attributes: BTreeMap::new(),
        workflow: Some(entry),
    }
}

/// Why a cross-workflow tag cannot be applied as written (R3.30): the agent is
/// paused, not the run.
pub(crate) fn cross_workflow_transition(tag: &Tag, entry: WorkflowEntry) -> Result<Transition, String> {
    let input = input_of(tag);
    Ok(match tag.kind {
        TagKind::CallWorkflow | TagKind::FunctionWorkflow => {
            let Some(return_state) = tag.attribute("return").filter(|value| !value.is_empty()) else {
                return Err(format!("needs a `return` attribute ({RETURN_PURPOSE})"));
            };
            let fork_session = tag.kind == TagKind::CallWorkflow;
            if fork_session && tag.attribute("cd").is_some() {
                return Err("`cd` is not allowed (the callee continues the caller's session, which belongs to \
                            its directory); use <function-workflow cd=…> for a fresh session elsewhere"
                    .to_string());
            }
            let cd = if fork_session { None } else { tag.attribute("cd").map(str::to_string) };
            Transition::CallWorkflow { callee: entry, return_state: return_state.into(), input, fork_session, cd }
        }
        TagKind::ForkWorkflow => Transition::Fork {
            next: tag.attribute("next").map(StateName::from),
            worker: workflow_fork_spec(tag, entry),
        },
        _ => Transition::ResetWorkflow {
            entry,
            cd: tag.attribute("cd").filter(|cd| !cd.is_empty()).map(str::to_string),
            input,
            new_task: tag.attribute("task") == Some("new"),
        },
    })
}

impl TryFrom<&Tag> for Transition {
    type Error = TransitionError;

    /// Build the typed transition of a single, already resolved tag.
    fn try_from(tag: &Tag) -> Result<Transition, TransitionError> {
        let target = StateName::from(tag.target.as_str());
        Ok(match tag.kind {
            TagKind::Goto => Transition::Goto { target, input: input_of(tag) },
            TagKind::Reset => Transition::Reset {
                target,
                cd: tag.attribute("cd").map(str::to_string),
                input: input_of(tag),
                new_task: tag.attribute("task") == Some("new"),
            },
            TagKind::Call => Transition::Call {
                target,
                return_state: required(tag, "return", RETURN_PURPOSE)?,
                input: input_of(tag),
            },
            TagKind::Function => Transition::Function {
                target,
                return_state: required(tag, "return", RETURN_PURPOSE)?,
                input: input_of(tag),
            },
            TagKind::Fork => {
                Transition::Fork { next: Some(required(tag, "next", NEXT_PURPOSE)?), worker: fork_spec(tag) }
            }
            TagKind::Result => Transition::Result { payload: tag.payload.clone().unwrap_or_default() },
            TagKind::Join => Transition::Join(JoinSpec::of(tag)),
            TagKind::Ask => Transition::Ask {
                next: target,
                prompt: tag.payload.clone().unwrap_or_default(),
                timeout: tag.attribute("timeout").filter(|value| !value.is_empty()).map(str::to_string),
                timeout_next: tag.attribute("timeout_next").filter(|value| !value.is_empty()).map(str::to_string),
                files: tag
                    .attributes
                    .iter()
                    .filter(|(name, _)| name.starts_with("upload_") || name.as_str() == "display_files")
                    .map(|(name, value)| (name.clone(), value.clone()))
                    .collect(),
            },
            kind => return Err(TransitionError::NeedsScope { tag: kind }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tag(kind: TagKind, target: &str, attributes: &[(&str, &str)]) -> Tag {
        Tag::new(kind, target, attributes.iter().copied())
    }

    #[test]
    fn r3_10_call_without_return_is_an_error() {
        let error = Transition::try_from(&tag(TagKind::Call, "C.sh", &[])).unwrap_err();
        assert_eq!(
            error.to_string(),
            "<call> needs a `return` attribute (the state to continue at when the callee emits <result>)"
        );
    }

    #[test]
    fn r3_20_fork_without_next_is_an_error() {
        let error = Transition::try_from(&tag(TagKind::Fork, "W.sh", &[])).unwrap_err();
        assert_eq!(
            error.to_string(),
            "<fork> needs a `next` attribute (the state the parent continues at while the worker runs)"
        );
    }

    #[test]
    fn r3_5_empty_input_is_no_input() {
        let transition = Transition::try_from(&tag(TagKind::Goto, "B.sh", &[("input", "")])).unwrap();
        assert_eq!(transition, Transition::Goto { target: "B.sh".into(), input: None });
    }

    #[test]
    fn r3_21_fork_attributes_exclude_reserved_names() {
        let fork = tag(
            TagKind::Fork,
            "W.sh",
            &[("next", "N.sh"), ("cd", "w"), ("input", "i"), ("task", "inherit"), ("item", "a")],
        );
        let Transition::Fork { worker, next } = Transition::try_from(&fork).unwrap() else {
            panic!("expected a fork");
        };
        assert_eq!(next.as_deref(), Some("N.sh"));
        assert_eq!(worker.attributes, BTreeMap::from([("item".to_string(), "a".to_string())]));
        assert_eq!(worker.task, TaskMode::Inherit);
        assert_eq!(worker.cd.as_deref(), Some("w"));
        assert_eq!(worker.input.as_deref(), Some("i"));
    }
}
