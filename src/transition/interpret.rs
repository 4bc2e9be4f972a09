//! From the tags a state printed to the one transition to apply (R3.43–R3.45,
//! R4.9, R7.8; decisions A1–A2).
//!
//! Both executors share this: the script executor directly, the markdown executor
//! inside its policy and reminder loop, which is why failures are a typed enum the
//! caller classifies rather than a final verdict.

use std::path::Path;

use crate::syntax::tag::{Tag, TagKind};
use crate::transition::{
    JoinSpec, Transition, TransitionError, cross_workflow_transition, fork_spec, workflow_fork_spec,
};
use crate::workflow::resolution::{ResolveError, resolve_state};
use crate::workflow::specifier::{Caller, resolve_specifier};

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub(crate) enum InterpretError {
    #[error("no transition tag")]
    NoTag,
    #[error("{count} transition tags (expected 1)")]
    MultipleTags { count: usize },
    #[error(transparent)]
    Resolve(#[from] ResolveError),
    #[error(transparent)]
    Transition(#[from] TransitionError),
    /// A multi-fork output that breaks R3.44; the agent is paused, not the run.
    #[error("invalid multi-fork output: {0}")]
    InvalidMultiFork(String),
    /// A cross-workflow tag whose specifier or attributes do not work (R3.30,
    /// R3.34, R3.37); the agent is paused, not the run.
    #[error("{tag}: {reason}")]
    CrossWorkflow { tag: TagKind, reason: String },
}

/// The transition of one tag whose state names are resolved (`resolve_tag`); a
/// cross-workflow specifier is resolved here, against the caller's `scope_dir`.
pub(crate) fn transition_of(resolved: &Tag, caller: Caller<'_>) -> Result<Transition, InterpretError> {
    if !resolved.kind.is_cross_workflow() {
        return Ok(Transition::try_from(resolved)?);
    }
    let refuse = |reason: String| InterpretError::CrossWorkflow { tag: resolved.kind, reason };
    let entry = resolve_specifier(&resolved.target, caller).map_err(|error| refuse(error.to_string()))?;
    cross_workflow_transition(resolved, entry).map_err(refuse)
}

/// Whether `tags` form a multi-fork: ≥2 fork-family tags, or ≥1 with a `<goto>`
/// (R3.43) or a `<join>` (Baton's, `docs/join.md`).
pub(crate) fn is_multi_fork(tags: &[Tag]) -> bool {
    let forks = tags.iter().filter(|tag| tag.kind.is_fork_family()).count();
    let continuations = tags.iter().filter(|tag| is_continuation(tag.kind)).count();
    forks >= 2 || (forks >= 1 && continuations >= 1)
}

/// The tags that may give a multi-fork's continuation.
fn is_continuation(kind: TagKind) -> bool {
    matches!(kind, TagKind::Goto | TagKind::Join)
}

/// Resolve the state names a tag refers to: its target, `return` and `next` (R3.2).
/// An ask's `timeout_next` must resolve too, or the ask could never time out as
/// written; it is kept as written (R3.25 stores it raw) and resolved again when the
/// ask times out. Cross-workflow targets are specifiers, not names.
pub(crate) fn resolve_tag(scope_dir: &Path, tag: &Tag) -> Result<Tag, ResolveError> {
    if tag.kind == TagKind::Ask
        && let Some(next) = tag.attribute("timeout_next").filter(|next| !next.is_empty())
    {
        resolve_state(scope_dir, next)?;
    }
    let mut resolved = tag.clone();
    let has_state_target = !matches!(tag.kind, TagKind::Result) && !tag.kind.is_cross_workflow();
    if has_state_target {
        resolved.target = resolve_state(scope_dir, &tag.target)?;
    }
    for attribute in ["return", "next"] {
        if tag.kind == TagKind::Ask && attribute == "next" {
            resolved.attributes.insert("next".into(), resolved.target.clone());
            continue;
        }
        if let Some(value) = tag.attribute(attribute) {
            resolved.attributes.insert(attribute.to_string(), resolve_state(scope_dir, value)?);
        }
    }
    Ok(resolved)
}

/// The transition for a whole output's tags.
pub(crate) fn interpret(tags: &[Tag], caller: Caller<'_>) -> Result<Transition, InterpretError> {
    let scope_dir = caller.scope;
    if is_multi_fork(tags) {
        return interpret_multi_fork(tags, caller);
    }
    match tags {
        [] => Err(InterpretError::NoTag),
        [tag] => transition_of(&resolve_tag(scope_dir, tag)?, caller),
        _ => Err(InterpretError::MultipleTags { count: tags.len() }),
    }
}

/// R3.44 structure checks, then resolution of every target (A2).
fn interpret_multi_fork(tags: &[Tag], caller: Caller<'_>) -> Result<Transition, InterpretError> {
    let scope_dir = caller.scope;
    if let Some(stray) = tags.iter().find(|tag| !tag.kind.is_fork_family() && !is_continuation(tag.kind)) {
        return Err(InterpretError::InvalidMultiFork(format!(
            "<{}> cannot be combined with <fork>; only <fork> tags and one <goto> or <join> may appear together",
            stray.kind
        )));
    }
    let gotos: Vec<&Tag> = tags.iter().filter(|tag| is_continuation(tag.kind)).collect();
    if gotos.len() > 1 {
        let names: Vec<String> = gotos.iter().map(|tag| format!("<{}>", tag.kind)).collect();
        return Err(InterpretError::InvalidMultiFork(format!(
            "{} continuation tags ({}); at most one <goto> or <join> may give the continuation",
            gotos.len(),
            names.join(", ")
        )));
    }
    let resolved: Vec<Tag> = tags.iter().map(|tag| resolve_tag(scope_dir, tag)).collect::<Result<_, _>>()?;
    let join = resolved.iter().find(|tag| tag.kind == TagKind::Join).map(JoinSpec::of);
    let mut continuations: Vec<&str> = resolved
        .iter()
        .filter_map(|tag| if is_continuation(tag.kind) { Some(tag.target.as_str()) } else { tag.attribute("next") })
        .collect();
    continuations.dedup();
    let continuation = match continuations.as_slice() {
        [] => {
            return Err(InterpretError::InvalidMultiFork(
                "no continuation: give one <fork> a `next` attribute or add a <goto> or a <join>".to_string(),
            ));
        }
        [one] => one.to_string(),
        several => {
            let mut distinct = several.to_vec();
            distinct.sort_unstable();
            distinct.dedup();
            if distinct.len() > 1 {
                return Err(InterpretError::InvalidMultiFork(format!(
                    "the continuations disagree ({}); every `next` and the <goto> or <join> must name the same state",
                    distinct.join(", ")
                )));
            }
            distinct[0].to_string()
        }
    };
    let mut workers = Vec::new();
    for tag in resolved.iter().filter(|tag| tag.kind.is_fork_family()) {
        workers.push(if tag.kind == TagKind::Fork {
            fork_spec(tag)
        } else {
            let entry = resolve_specifier(&tag.target, caller)
                .map_err(|error| InterpretError::CrossWorkflow { tag: tag.kind, reason: error.to_string() })?;
            workflow_fork_spec(tag, entry)
        });
    }
    Ok(Transition::MultiFork { workers, continuation: continuation.into(), join })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::syntax::scanner::scan;

    fn interpret_in(states: &[&str], output: &str) -> Result<Transition, InterpretError> {
        let dir = tempfile::tempdir().expect("temp dir");
        for state in states {
            std::fs::write(dir.path().join(state), "").expect("write state");
        }
        interpret(&scan(output).expect("tags"), Caller::local(dir.path()))
    }

    #[test]
    fn join_alone_is_a_join_to_its_resolved_target() {
        let transition = interpret_in(&["AGG.sh"], r#"<join timeout="10m">AGG</join>"#).unwrap();
        assert_eq!(
            transition,
            Transition::Join(JoinSpec { next: "AGG.sh".into(), timeout: Some(Duration::from_secs(600)) })
        );
    }

    #[test]
    fn forks_with_a_join_are_a_multi_fork_whose_continuation_is_the_join() {
        let output = "<fork item=\"a\">W</fork><fork item=\"b\">W</fork><join>AGG</join>";
        let Transition::MultiFork { workers, continuation, join } = interpret_in(&["W.sh", "AGG.md"], output).unwrap()
        else {
            panic!("a multi-fork");
        };
        assert_eq!(workers.len(), 2);
        assert_eq!(continuation, "AGG.md");
        assert_eq!(join, Some(JoinSpec { next: "AGG.md".into(), timeout: None }));
        // One fork and a join are a multi-fork too, and a `next` must agree with the join.
        assert!(matches!(
            interpret_in(&["W.sh", "AGG.md"], "<fork next=\"AGG\">W</fork><join>AGG</join>"),
            Ok(Transition::MultiFork { join: Some(_), .. })
        ));
        let error = interpret_in(&["W.sh", "AGG.md", "N.sh"], "<fork next=\"N\">W</fork><join>AGG</join>").unwrap_err();
        assert!(error.to_string().contains("the continuations disagree (AGG.md, N.sh)"), "{error}");
    }

    #[test]
    fn a_join_and_a_goto_cannot_both_continue_a_multi_fork() {
        let error = interpret_in(&["W.sh", "AGG.sh"], "<fork>W</fork><goto>AGG</goto><join>AGG</join>").unwrap_err();
        assert_eq!(
            error.to_string(),
            "invalid multi-fork output: 2 continuation tags (<goto>, <join>); at most one <goto> or <join> may give \
             the continuation"
        );
    }

    #[test]
    fn a_join_with_a_result_is_two_tags() {
        let error = interpret_in(&["AGG.sh"], "<join>AGG</join><result>x</result>").unwrap_err();
        assert_eq!(error, InterpretError::MultipleTags { count: 2 });
    }
}
