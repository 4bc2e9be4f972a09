//! The workflow as a graph of states, for the checks no single state can answer:
//! which states the entry point reaches, which prompts have no way out, and
//! which calls can never come back.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::lint::source::LintedWorkflow;
use crate::lint::transitions::{StateAnalysis, Transition};
use crate::syntax::tag::TagKind;
use crate::workflow::resolution::ResolveError;

/// How an edge is taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Edge {
    /// The agent itself moves on: goto, reset, an answered or timed-out ask, the
    /// state a call returns to, the state a forking agent continues at.
    SameAgent,
    /// Another frame or agent starts there: a call's callee, a fork's worker.
    Spawn,
}

#[derive(Default)]
pub(crate) struct Graph {
    edges: BTreeMap<String, Vec<(Edge, String)>>,
    /// States that emit `<result>`.
    results: BTreeSet<String>,
    /// Scripts whose transitions are decided at run time: they may do anything.
    open: BTreeSet<String>,
}

impl Graph {
    pub(crate) fn build(workflow: &LintedWorkflow, states: &[StateAnalysis]) -> Graph {
        let mut graph = Graph::default();
        for state in states {
            let from = state.text.file.clone();
            if state.dynamic.is_some() {
                graph.open.insert(from.clone());
            }
            for transition in &state.transitions {
                for (edge, name) in names(transition) {
                    // An ambiguous name is reported once; here it leads to each candidate.
                    let targets = match workflow.resolve(name) {
                        Ok(to) => vec![to],
                        Err(ResolveError::Ambiguous { files, .. }) => files,
                        Err(_) => Vec::new(),
                    };
                    for to in targets {
                        graph.edges.entry(from.clone()).or_default().push((edge, to));
                    }
                }
                if transition.kind == TagKind::Result {
                    graph.results.insert(from.clone());
                }
            }
        }
        graph
    }

    /// Every state reachable from `roots`, by any edge.
    pub(crate) fn reachable<'a>(&self, roots: impl IntoIterator<Item = &'a String>) -> BTreeSet<String> {
        self.walk(roots, |_| true)
    }

    /// Whether an agent entering `state` as a callee can reach a `<result>` on its
    /// own (or through a script that may print one).
    pub(crate) fn returns(&self, state: &String) -> bool {
        let reached = self.walk([state], |edge| edge == Edge::SameAgent);
        reached.iter().any(|state| self.results.contains(state) || self.open.contains(state))
    }

    /// Every state one agent entering `roots` moves through on its own: no
    /// callee's frame and no forked worker, but the states calls return to.
    pub(crate) fn same_agent_reachable<'a>(&self, roots: impl IntoIterator<Item = &'a String>) -> BTreeSet<String> {
        self.walk(roots, |edge| edge == Edge::SameAgent)
    }

    /// The states that emit `<result>`.
    pub(crate) fn results(&self) -> &BTreeSet<String> {
        &self.results
    }

    fn walk<'a>(&self, roots: impl IntoIterator<Item = &'a String>, follow: impl Fn(Edge) -> bool) -> BTreeSet<String> {
        let mut seen: BTreeSet<String> = roots.into_iter().cloned().collect();
        let mut queue: VecDeque<String> = seen.iter().cloned().collect();
        while let Some(state) = queue.pop_front() {
            for (edge, next) in self.edges.get(&state).into_iter().flatten() {
                if follow(*edge) && seen.insert(next.clone()) {
                    queue.push_back(next.clone());
                }
            }
        }
        seen
    }
}

/// The local state names a transition leads to, and how.
fn names(transition: &Transition) -> Vec<(Edge, &str)> {
    let mut names = Vec::new();
    let kind = transition.kind;
    if !kind.is_cross_workflow() && !transition.target.is_empty() {
        let edge = match kind {
            TagKind::Call | TagKind::Function | TagKind::Fork => Edge::Spawn,
            _ => Edge::SameAgent,
        };
        names.push((edge, transition.target.as_str()));
    }
    // An ask's `next` is its target already.
    let continuations: &[&str] =
        if kind == TagKind::Ask { &["timeout_next"] } else { &["return", "next", "timeout_next"] };
    for key in continuations {
        if let Some(name) = transition.attribute(key).filter(|name| !name.is_empty()) {
            names.push((Edge::SameAgent, name));
        }
    }
    names
}
