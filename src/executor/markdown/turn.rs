//! One model turn's text → the transition to apply, or why not (R5.17 after the
//! budget check): `force_implicit`, the tags, a multi-fork (A2), an implicit
//! transition, then exactly one tag resolved and allowed by the policy. What a
//! reminder could fix is `Remindable`; the rest fails the step.

use std::collections::BTreeMap;
use std::path::Path;

use crate::events::error_kind::ErrorKind;
use crate::executor::step_failure::{StepFailure, interpretation_kind};
use crate::syntax::frontmatter::StateFrontmatter;
use crate::syntax::policy::Policy;
use crate::syntax::scanner::scan;
use crate::syntax::tag::{Tag, TagKind};
use crate::syntax::template::render;
use crate::transition::Transition;
use crate::transition::interpret::{InterpretError, interpret, is_multi_fork, resolve_tag, transition_of};
use crate::workflow::specifier::Caller;

/// Why one turn's output could not become a transition.
pub(super) enum TurnError {
    /// Worth a reminder under a policy (R5.18).
    Remindable { kind: ErrorKind, message: String },
    /// Fatal, reminder or not.
    Fatal(StepFailure),
}

/// One turn's text → the transition, or why not (R5.17 after the budget check).
///
/// `structured` is the turn's structured output (a state with `output_schema`): when
/// the text holds no transition tag it is the turn's `<result>`, before an implicit
/// transition is considered. Without it the text is parsed as usual.
pub(super) fn interpret_turn(
    text: &str,
    structured: Option<&str>,
    frontmatter: &StateFrontmatter,
    policy: &Policy,
    template_variables: &BTreeMap<String, String>,
    caller: Caller<'_>,
) -> Result<Transition, TurnError> {
    let scope_dir = caller.scope;
    let implicit = || -> Result<Transition, TurnError> {
        let tag = policy.implicit_tag(|input| render(input, template_variables)).ok_or_else(|| {
            TurnError::Fatal(StepFailure::fatal(
                ErrorKind::PolicyError,
                "the policy's single entry cannot be used implicitly",
            ))
        })?;
        let resolved = resolve_tag(scope_dir, &tag).map_err(|error| {
            TurnError::Fatal(StepFailure::fatal(
                ErrorKind::TargetResolutionError,
                format!("implicit transition: {error}"),
            ))
        })?;
        let mut transition = transition_of(&resolved, caller).map_err(fatal_transition)?;
        transition.render_workflow_input(|input| render(input, template_variables));
        Ok(transition)
    };
    if frontmatter.forces_implicit() {
        return implicit();
    }
    // Claude Code repeats the structured output as the result text: tag-like text
    // inside its strings is data, not a transition.
    let text = if structured.is_some_and(|json| is_same_json(text, json)) { "" } else { text };
    let mut tags = scan(text).map_err(|error| {
        TurnError::Fatal(StepFailure::fatal(ErrorKind::ParseError, format!("transition parse error: {error}")))
    })?;
    // The state's `isolation` is the default of each fork that names none.
    if let Some(isolation) = &frontmatter.isolation {
        for tag in tags.iter_mut().filter(|tag| tag.kind.is_fork_family()) {
            tag.attributes.entry("isolation".to_string()).or_insert_with(|| isolation.clone());
        }
    }
    if let (true, Some(json)) = (tags.is_empty(), structured) {
        tags.push(Tag {
            kind: TagKind::Result,
            target: String::new(),
            attributes: BTreeMap::new(),
            payload: Some(json.to_string()),
            ignored: Vec::new(),
        });
    }
    if is_multi_fork(&tags) {
        // A2: every tag of a multi-fork is resolved and checked against the policy.
        for tag in &tags {
            check_policy(policy, scope_dir, tag)?;
        }
        return interpret(&tags, caller).map_err(|error| match &error {
            InterpretError::InvalidMultiFork(reason) => {
                TurnError::Fatal(StepFailure::of_interpretation(&error, format!("invalid multi-fork output: {reason}")))
            }
            _ => remindable_or_fatal(error),
        });
    }
    if tags.is_empty() && policy.can_use_implicit() {
        return implicit();
    }
    match tags.as_slice() {
        [] => Err(TurnError::Remindable {
            kind: ErrorKind::NoTransitionTag,
            message: "no transition tag in the output".into(),
        }),
        [tag] => {
            let resolved = check_policy(policy, scope_dir, tag)?;
            let mut transition = transition_of(&resolved, caller).map_err(fatal_transition)?;
            if let Transition::Result { payload } = &mut transition {
                *payload = payload.trim().to_string();
            }
            transition.render_workflow_input(|input| render(input, template_variables));
            Ok(transition)
        }
        more => Err(TurnError::Remindable {
            kind: ErrorKind::MultipleTransitions,
            message: format!("{} transition tags in the output (expected 1)", more.len()),
        }),
    }
}

/// Whether `text` is the JSON value `json` (whatever its spacing and key order).
fn is_same_json(text: &str, json: &str) -> bool {
    let parse = |text: &str| serde_json::from_str::<serde_json::Value>(text.trim()).ok();
    parse(text).is_some_and(|value| Some(value) == parse(json))
}

/// Resolve `tag`'s targets and check it against the policy (R5.8).
fn check_policy(policy: &Policy, scope_dir: &Path, tag: &Tag) -> Result<Tag, TurnError> {
    let resolved = resolve_tag(scope_dir, tag).map_err(|error| TurnError::Remindable {
        kind: ErrorKind::TargetResolutionError,
        message: format!("cannot resolve the target of <{}>: {error}", tag.kind),
    })?;
    // An empty policy allows every tag (R5.7).
    policy.validate(&resolved).map_err(|violation| TurnError::Remindable {
        kind: ErrorKind::PolicyViolation,
        message: violation.to_string(),
    })?;
    Ok(resolved)
}

/// A resolved tag that still cannot become a transition: an attribute rule
/// (fatal) or a cross-workflow tag that names no workflow (the agent pauses).
fn fatal_transition(error: InterpretError) -> TurnError {
    TurnError::Fatal(StepFailure::of_interpretation(&error, error.to_string()))
}

/// Under a policy a wrong tag earns a reminder; a tag that breaks an attribute
/// rule, or a broken multi-fork, would break again and fails at once.
fn remindable_or_fatal(error: InterpretError) -> TurnError {
    let kind = interpretation_kind(&error);
    match error {
        InterpretError::Transition(_) | InterpretError::InvalidMultiFork(_) | InterpretError::CrossWorkflow { .. } => {
            TurnError::Fatal(StepFailure::of_interpretation(&error, error.to_string()))
        }
        InterpretError::NoTag | InterpretError::MultipleTags { .. } | InterpretError::Resolve(_) => {
            TurnError::Remindable { kind, message: error.to_string() }
        }
    }
}
