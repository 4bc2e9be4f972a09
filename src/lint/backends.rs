//! `session-crosses-backend`: where a workflow that mixes backends hands an
//! agent's conversation from a state on one backend to a state on another.
//!
//! A session never crosses backends (one CLI cannot continue another's
//! conversation), so the run starts a fresh one there and says so; lint says it
//! before the run, as information: the workflow may mean it (a reviewer with a
//! fresh context), or may expect the next state to remember what came before.

use std::collections::{BTreeMap, BTreeSet};

use crate::backend::profile::profile;
use crate::ids::BackendName;
use crate::lint::check::Check;
use crate::lint::diagnostic::Diagnostic;
use crate::lint::source::LintedWorkflow;
use crate::lint::transitions::StateAnalysis;
use crate::syntax::tag::TagKind;

/// The backend each prompt state runs on (a run on Claude's defaults, as lint
/// assumes everywhere); states whose backend cannot be chosen are left out
/// (they have their own finding).
pub(crate) fn backends_of(workflow: &LintedWorkflow, states: &[StateAnalysis]) -> BTreeMap<String, BackendName> {
    states
        .iter()
        .filter(|state| !state.is_script())
        .filter_map(|state| {
            let (name, _) = workflow.backend_of(state.frontmatter.as_ref()?).ok()?;
            Some((state.text.file.clone(), name))
        })
        .collect()
}

/// An info for each `goto`, and each `return` of a `call`/`function`, that
/// continues the agent's session in a state on another backend.
pub(crate) fn crossings(workflow: &LintedWorkflow, states: &[StateAnalysis]) -> Vec<Diagnostic> {
    let backends = backends_of(workflow, states);
    let mut seen = BTreeSet::new();
    let mut diagnostics = Vec::new();
    for state in states {
        let from = &state.text.file;
        let Some(&from_backend) = backends.get(from) else { continue };
        for transition in &state.transitions {
            let (key, name) = match transition.kind {
                TagKind::Goto => ("target", transition.target.as_str()),
                TagKind::Call | TagKind::Function => match transition.attribute("return") {
                    Some(name) => ("return", name),
                    None => continue,
                },
                _ => continue,
            };
            let Ok(to) = workflow.resolve(name) else { continue };
            let Some(&to_backend) = backends.get(&to) else { continue };
            if to_backend == from_backend || !seen.insert((from.clone(), transition.kind, key, to.clone())) {
                continue;
            }
            let how = match key {
                "target" => {
                    format!("`<{}>` from {from} ({from_backend}) to {to} ({to_backend})", transition.kind.name())
                }
                _ => format!(
                    "`<{}>` from {from} ({from_backend}) returns to {to} ({to_backend}), which",
                    transition.kind.name()
                ),
            };
            let message = format!(
                "a session never crosses backends: {how} starts a fresh {} conversation",
                profile(to_backend).cli
            );
            let at = workflow.at_transition(&state.text, transition, key);
            diagnostics.push(Diagnostic::new(Check::SessionCrossesBackend, &workflow.label, at, message).state(from));
        }
    }
    diagnostics
}
