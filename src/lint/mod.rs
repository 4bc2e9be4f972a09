//! `baton lint`: what a run would trip over, found before it spends anything.
//!
//! Lint reads a workflow the way a run does — the same resolution (R1.x), the
//! same frontmatter parser (R5), the same tag grammar (R4) — but never stops at
//! the first problem. Each state's transitions come from its prompt body, its
//! `allowed_transitions` and the tags its script prints literally
//! (`transitions`); each is checked on its own (`state_checks`) and as part of
//! the workflow's graph (`graph`). Cross-workflow tags are followed into the
//! workflows they name, which are linted too.
//!
//! The checks carry raymond's ids (spec §15); `docs/lint.md` lists them with an
//! example each and the JSON schema.

pub(crate) mod backends;
pub(crate) mod check;
pub(crate) mod diagnostic;
pub(crate) mod graph;
pub(crate) mod source;
mod state_checks;
pub(crate) mod transitions;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::lint::check::Check;
use crate::lint::diagnostic::Diagnostic;
use crate::lint::graph::Graph;
use crate::lint::source::LintedWorkflow;
use crate::lint::state_checks::StateChecker;
use crate::lint::transitions::{Origin, StateAnalysis, Transition, analyse};
use crate::syntax::tag::TagKind;
use crate::workflow::resolution::{Platform, ResolveError, entry_point_in_listing};
use crate::workflow::specifier::WorkflowEntry;

/// At most this many workflows are followed from one (a guard against a chain
/// of generated workflows, not a limit anyone should meet).
const MAX_WORKFLOWS: usize = 64;

/// Lint the workflow at `scope` (shown as `label`) and every workflow its
/// cross-workflow tags name. The error is a workflow that cannot be read at all.
pub(crate) fn lint(scope: &Path, label: &str) -> Result<Vec<Diagnostic>, ResolveError> {
    lint_from(scope, label, None)
}

/// [`lint`] for a run that starts at state `start` (a file name): unless that is
/// the entry point, the entry point need not exist.
pub(crate) fn lint_from(scope: &Path, label: &str, start: Option<&str>) -> Result<Vec<Diagnostic>, ResolveError> {
    let root = LintedWorkflow::open(scope, label.to_string())?;
    let starts_at_entry = start.is_none_or(|start| {
        entry_point_in_listing(&root.all_files, &root.label, Platform::CURRENT).is_ok_and(|entry| entry == start)
    });
    let entered: BTreeSet<String> = start.map(str::to_string).into_iter().collect();
    let mut linted = vec![lint_workflow(root, starts_at_entry, &entered)];
    let mut index: BTreeMap<PathBuf, usize> = BTreeMap::new();
    index.insert(absolute(scope), 0);
    let mut next = 0;
    while next < linted.len() && linted.len() < MAX_WORKFLOWS {
        // The workflows this one leads to, each with the states entered there.
        let mut entered: BTreeMap<PathBuf, BTreeSet<String>> = BTreeMap::new();
        for (_, _, entry) in &linted[next].followed {
            entered.entry(entry.scope_dir.clone()).or_default().insert(entry.state.to_string());
        }
        for (scope_dir, roots) in entered {
            if index.contains_key(&scope_dir) {
                continue;
            }
            match LintedWorkflow::open(&scope_dir, shown(&scope_dir)) {
                Ok(workflow) => {
                    index.insert(scope_dir, linted.len());
                    linted.push(lint_workflow(workflow, false, &roots));
                }
                // resolve_specifier read it a moment ago; if it changed since, the
                // next lint will say why.
                Err(_) => continue,
            }
        }
        next += 1;
    }
    let calls: Vec<Vec<Diagnostic>> =
        linted.iter().map(|workflow| calls_into_other_workflows(workflow, &linted, &index)).collect();
    let mut diagnostics = Vec::new();
    for (workflow, calls) in linted.into_iter().zip(calls) {
        let mut found = workflow.diagnostics;
        found.extend(calls);
        found.sort_by(|a, b| (&a.file, a.line, a.column, a.check).cmp(&(&b.file, b.line, b.column, b.check)));
        diagnostics.extend(found);
    }
    Ok(diagnostics)
}

/// One workflow, linted: its findings and what the cross-workflow calls need.
struct LintedScope {
    workflow: LintedWorkflow,
    states: Vec<StateAnalysis>,
    graph: Graph,
    diagnostics: Vec<Diagnostic>,
    /// Each resolved cross-workflow tag: the state it is in, the tag, where it leads.
    followed: Vec<(String, Transition, WorkflowEntry)>,
}

fn lint_workflow(workflow: LintedWorkflow, is_root: bool, entered: &BTreeSet<String>) -> LintedScope {
    let mut diagnostics = Vec::new();
    let entry = entry_point_in_listing(&workflow.all_files, &workflow.label, Platform::CURRENT);
    if is_root && let Err(error) = &entry {
        let check = if matches!(error, ResolveError::AmbiguousEntryPoint { .. }) {
            Check::AmbiguousEntryPoint
        } else {
            Check::NoEntryPoint
        };
        diagnostics.push(Diagnostic::new(check, &workflow.label, workflow.whole(), error.to_string()));
    }
    if let Some((at, reason)) = workflow.manifest_problem() {
        diagnostics.push(Diagnostic::new(Check::InvalidManifest, &workflow.label, at, format!("manifest: {reason}")));
    }
    let mut states = Vec::new();
    for file in &workflow.listing {
        match workflow.read(file) {
            Ok(text) => states.push(analyse(text)),
            Err(reason) => diagnostics.push(
                Diagnostic::new(
                    Check::UnreadableState,
                    &workflow.label,
                    workflow.at_state(file),
                    format!("cannot read state `{file}`: {reason}"),
                )
                .state(file),
            ),
        }
    }
    let mut ambiguous_seen = BTreeSet::new();
    let mut followed = Vec::new();
    for state in &states {
        let findings = StateChecker::check(&workflow, state, &mut ambiguous_seen);
        diagnostics.extend(findings.diagnostics);
        followed.extend(
            findings.followed.into_iter().map(|(transition, entry)| (state.text.file.clone(), transition, entry)),
        );
    }
    diagnostics.extend(backends::crossings(&workflow, &states));
    let graph = Graph::build(&workflow, &states);
    let mut roots: BTreeSet<String> = entered.clone();
    roots.extend(entry.ok());
    if !roots.is_empty() {
        let reachable = graph.reachable(&roots);
        for file in workflow.listing.iter().filter(|file| !reachable.contains(*file)) {
            let from = roots.iter().map(|root| format!("`{root}`")).collect::<Vec<_>>().join(", ");
            let message = format!("no transition leads to `{file}` from {from}; it never runs");
            diagnostics.push(
                Diagnostic::new(Check::UnreachableState, &workflow.label, workflow.at_state(file), message).state(file),
            );
        }
    }
    for state in &states {
        let file = &state.text.file;
        let silent = !state.is_script() && state.frontmatter_error.is_none() && state.transitions.is_empty();
        if silent && state.malformed.is_empty() {
            let message = "the prompt shows no transition tag and has no `allowed_transitions`: the agent has no way to leave this state";
            diagnostics.push(
                Diagnostic::new(Check::DeadEndState, &workflow.label, workflow.at_state(file), message).state(file),
            );
        }
        for transition in
            state.transitions.iter().filter(|transition| matches!(transition.kind, TagKind::Call | TagKind::Function))
        {
            let Ok(callee) = workflow.resolve(&transition.target) else { continue };
            if !graph.returns(&callee) {
                let at = workflow.at_transition(&state.text, transition, "target");
                diagnostics.push(never_returns(&workflow.label, at, transition, &callee).state(file));
            }
        }
    }
    LintedScope { workflow, states, graph, diagnostics, followed }
}

/// `call-without-result-path` for `<call-workflow>` and `<function-workflow>`:
/// the callee is another linted workflow.
fn calls_into_other_workflows(
    scope: &LintedScope,
    linted: &[LintedScope],
    index: &BTreeMap<PathBuf, usize>,
) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    for (file, transition, entry) in &scope.followed {
        if !matches!(transition.kind, TagKind::CallWorkflow | TagKind::FunctionWorkflow) {
            continue;
        }
        let Some(callee) = index.get(&entry.scope_dir).and_then(|position| linted.get(*position)) else { continue };
        if callee.graph.returns(&entry.state.to_string()) {
            continue;
        }
        let Some(state) = scope.states.iter().find(|state| &state.text.file == file) else { continue };
        let at = scope.workflow.at_transition(&state.text, transition, "target");
        let callee_state = format!("{}/{}", callee.workflow.label.trim_end_matches('/'), entry.state);
        diagnostics.push(never_returns(&scope.workflow.label, at, transition, &callee_state).state(file));
    }
    diagnostics
}

fn never_returns(workflow: &str, at: diagnostic::Location, transition: &Transition, callee: &str) -> Diagnostic {
    let message = format!(
        "{} to `{}` never returns: no state the callee reaches from `{callee}` emits `<result>`",
        transition.subject(),
        transition.target
    );
    Diagnostic::new(Check::CallWithoutResultPath, workflow, at, message).found(&transition.target)
}

impl LintedWorkflow {
    /// Where `key` (`target`, `next`, …) of `transition`, found in `state`, is written.
    pub(crate) fn at_transition(
        &self,
        state: &source::StateText,
        transition: &Transition,
        key: &str,
    ) -> diagnostic::Location {
        match &transition.origin {
            Origin::Text { offset, .. } => self.at_offset(state, *offset),
            Origin::Policy { index } => {
                let key = match key {
                    "target" if transition.kind == TagKind::Ask => "next",
                    "target" => "target",
                    _ if transition.attributes.contains_key(key) => key,
                    _ => "tag",
                };
                self.at_key(state, &["allowed_transitions", &index.to_string(), key])
            }
        }
    }
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path)
        .map_or_else(|_| path.to_path_buf(), |path| crate::workflow::target::clean_lexically(&path))
}

/// A workflow as shown: relative to the current directory when below it.
pub(crate) fn shown(scope: &Path) -> String {
    let relative = std::env::current_dir().ok().and_then(|cwd| scope.strip_prefix(cwd).ok().map(Path::to_path_buf));
    relative.unwrap_or_else(|| scope.to_path_buf()).display().to_string()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// Pieces of workflows, well and badly formed, to be shuffled together.
    const FRAGMENTS: &[&str] = &[
        "---\n",
        "allowed_transitions:\n",
        "  - {tag: goto, target: A}\n",
        "  - tag: ask\n",
        "model: x\n",
        "force_implicit: true\n",
        "- [",
        "<goto>A</goto>",
        "<goto>",
        "</goto>",
        "<call return=\"B\">",
        "</call>",
        "<fork next=\"\">A</fork>",
        "<ask>",
        "</ask>",
        "<result>",
        "</result>",
        "<!--",
        "-->",
        "```\n",
        "<call-workflow return=\"A\">../",
        "</call-workflow>",
        "$X",
        "\\\"",
        "\n",
        "é",
        "\r\n",
        "<reset task=\"inherit\">START</reset>",
        "<function>",
        "/",
        "# ",
    ];
    const NAMES: &[&str] = &["START.md", "1_START.md", "START.sh", "A.md", "A.sh", "B.md", "notes.txt", "x.ps1"];

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        #[test]
        fn lint_never_panics_on_arbitrary_workflows(
            files in prop::collection::vec(
                (prop::sample::select(NAMES), crate::syntax::fragment_soup(FRAGMENTS), any::<bool>()),
                0..6,
            )
        ) {
            let dir = tempfile::tempdir().expect("temp dir");
            for (name, text, garble) in &files {
                let mut bytes = text.clone().into_bytes();
                if *garble {
                    bytes.push(0xff);
                }
                std::fs::write(dir.path().join(name), bytes).expect("write");
            }
            let found = lint(dir.path(), "wf").expect("a directory can always be listed");
            for diagnostic in found {
                prop_assert!(!diagnostic.message.is_empty());
            }
        }
    }
}
