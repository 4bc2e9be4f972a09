//! `baton diagram`: a workflow drawn as a graph of states, the way raymond's
//! `ray diagram` draws it — as Mermaid text, Graphviz DOT, or one self-contained
//! HTML page with an SVG laid out here.
//!
//! The graph comes from what `baton lint` reads: the same workflow sources
//! (`lint::source`), the same transitions per state (`lint::transitions`), the
//! same resolution of a state name, and lint's graph to trace which `<result>`
//! states return to which `return` state. This module only turns that into
//! nodes and edges; `mermaid`, `dot` and `html` draw them, `overlay` adds what
//! a run did.

pub(crate) mod dot;
pub(crate) mod html;
pub(crate) mod layout;
pub(crate) mod mermaid;
pub(crate) mod overlay;

use std::collections::{BTreeMap, BTreeSet};

use crate::ids::BackendName;
use crate::lint::backends::backends_of;
use crate::lint::graph::Graph;
use crate::lint::source::LintedWorkflow;
use crate::lint::transitions::{Transition, analyse};
use crate::syntax::tag::TagKind;
use crate::text::state_name;
use crate::workflow::resolution::{Platform, ResolveError, entry_point_in_listing};

/// What a node stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum NodeKind {
    /// Where a run enters: points at the entry state.
    Start,
    /// A prompt state (`.md`).
    Prompt,
    /// A script state (`.sh`, `.ps1`, `.bat`).
    Script,
    /// A state a transition names that the workflow does not have.
    Missing,
    /// Another workflow, named by a cross-workflow tag.
    Workflow,
    /// Where an agent ends with `<result>`.
    End,
}

#[derive(Clone, Debug)]
pub(crate) struct Node {
    /// Unique, and safe as a Mermaid id (`[A-Za-z0-9_]`); DOT and HTML quote it anyway.
    pub(crate) id: String,
    /// The state's name (its file without extension), or the workflow as written.
    pub(crate) name: String,
    pub(crate) kind: NodeKind,
    /// The state file, for a state of this workflow.
    pub(crate) file: Option<String>,
    /// How often a run started this state (`--run`).
    pub(crate) visits: Option<u64>,
    /// Whether an agent of the run is at this state now (`--run`).
    pub(crate) current: bool,
    /// A prompt state's backend, when the workflow runs one other than Claude
    /// (the diagram says nothing in a workflow on Claude alone).
    pub(crate) backend: Option<BackendName>,
}

impl Node {
    /// The text drawn in the node: its name, its backend when shown, and the
    /// visit count of a run (`REVIEW (codex) ×3`).
    pub(crate) fn label(&self) -> String {
        let name = match self.backend {
            Some(backend) => format!("{} ({backend})", self.name),
            None => self.name.clone(),
        };
        match (self.kind, self.visits) {
            (NodeKind::Start | NodeKind::End, _) => String::new(),
            (_, Some(visits)) => format!("{name} ×{visits}"),
            (_, None) => name,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Style {
    Solid,
    Dashed,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Edge {
    /// Node ids.
    pub(crate) from: String,
    pub(crate) to: String,
    /// Empty for the start edge.
    pub(crate) label: String,
    pub(crate) style: Style,
}

/// What the HTML page shows for a state.
#[derive(Clone, Debug)]
pub(crate) enum Content {
    Prompt { frontmatter: Option<String>, body: String },
    Script(String),
    Unreadable(String),
}

pub(crate) struct Diagram {
    /// The start node (if there is an entry point), then the states, the missing
    /// states and the workflows by name, then the end nodes.
    pub(crate) nodes: Vec<Node>,
    /// The start edge, the transitions in listing and tag order, the traced
    /// returns, then the edges into the end nodes; no duplicates.
    pub(crate) edges: Vec<Edge>,
    /// The text of each state, by node id.
    pub(crate) contents: BTreeMap<String, Content>,
    /// What could not be drawn faithfully: unreadable states, missing targets.
    pub(crate) warnings: Vec<String>,
}

/// A node before ids are given: what it stands for decides its place.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Key {
    /// A state file of the workflow.
    State(String),
    /// A name that resolves to no state.
    Missing(String),
    /// A cross-workflow target as written.
    Workflow(String),
}

struct RawEdge {
    from: Key,
    to: Key,
    label: String,
    style: Style,
}

/// A `<call>` or `<function>`: the callee's results come back to `returns`.
struct CallSite {
    caller: String,
    callee: String,
    returns: Key,
}

/// Draw the workflow `workflow` as a graph.
pub(crate) fn build(workflow: &LintedWorkflow) -> Diagram {
    let mut warnings = Vec::new();
    let mut states = Vec::new();
    let mut contents: BTreeMap<Key, Content> = BTreeMap::new();
    for file in &workflow.listing {
        match workflow.read(file) {
            Ok(text) => {
                let content = if state_name::is_script(file) {
                    Content::Script(text.text.clone())
                } else {
                    Content::Prompt { frontmatter: text.frontmatter.clone(), body: text.body().to_string() }
                };
                contents.insert(Key::State(file.clone()), content);
                states.push(analyse(text));
            }
            Err(reason) => {
                warnings.push(format!("cannot read state `{file}`: {reason}"));
                contents.insert(Key::State(file.clone()), Content::Unreadable(reason));
            }
        }
    }
    let mut keys: BTreeSet<Key> = workflow.listing.iter().map(|file| Key::State(file.clone())).collect();
    let mut edges = Vec::new();
    let mut calls = Vec::new();
    let mut missing = BTreeSet::new();
    for state in &states {
        for transition in &state.transitions {
            let mut drawn = Drawn { workflow, from: &state.text.file, edges: &mut edges, missing: &mut missing };
            drawn.transition(transition, &mut calls);
        }
    }
    keys.extend(edges.iter().flat_map(|edge: &RawEdge| [edge.from.clone(), edge.to.clone()]));
    for name in &missing {
        warnings.push(format!("state `{name}` is named by a transition but the workflow has no such state"));
    }

    // Which results end an agent, and which return to a caller.
    let graph = Graph::build(workflow, &states);
    let entry = entry_point_in_listing(&workflow.all_files, &workflow.label, Platform::CURRENT).ok();
    let mut roots: Vec<String> = entry.iter().cloned().collect();
    for state in &states {
        for transition in state.transitions.iter().filter(|transition| transition.kind == TagKind::Fork) {
            roots.extend(resolved(workflow, &transition.target));
        }
    }
    let top_level = graph.same_agent_reachable(&roots);
    let mut returns: BTreeMap<(String, Key), BTreeSet<String>> = BTreeMap::new();
    let mut inside_call = BTreeSet::new();
    for call in &calls {
        for state in graph.same_agent_reachable([&call.callee]) {
            if graph.results().contains(&state) {
                inside_call.insert(state.clone());
                returns.entry((state, call.returns.clone())).or_default().insert(call.caller.clone());
            }
        }
    }
    let ends: Vec<String> = graph
        .results()
        .iter()
        .filter(|state| top_level.contains(*state) || !inside_call.contains(*state))
        .cloned()
        .collect();

    // A prompt state says its backend when the workflow mixes backends or runs
    // on one other than Claude.
    let mut shown_backends = backends_of(workflow, &states);
    let first = shown_backends.values().next().copied();
    let mixed = shown_backends.values().any(|backend| Some(*backend) != first);
    if !mixed && first.is_none_or(|backend| backend == BackendName::Claude) {
        shown_backends.clear();
    }

    // Ids, in drawing order.
    let ordered = order(keys, workflow);
    let mut ids: BTreeMap<Key, String> = BTreeMap::new();
    let mut taken: BTreeSet<String> = ["__start__".to_string()].into();
    let mut nodes = Vec::new();
    if entry.is_some() {
        nodes.push(Node {
            id: "__start__".into(),
            name: String::new(),
            kind: NodeKind::Start,
            file: None,
            visits: None,
            current: false,
            backend: None,
        });
    }
    for (key, name) in &ordered {
        let (kind, file) = match key {
            Key::State(file) if state_name::is_script(file) => (NodeKind::Script, Some(file.clone())),
            Key::State(file) => (NodeKind::Prompt, Some(file.clone())),
            Key::Missing(_) => (NodeKind::Missing, None),
            Key::Workflow(_) => (NodeKind::Workflow, None),
        };
        let id = unique(node_id(kind, name), &mut taken);
        ids.insert(key.clone(), id.clone());
        let backend = file.as_ref().and_then(|file| shown_backends.get(file)).copied();
        nodes.push(Node { id, name: name.clone(), kind, file, visits: None, current: false, backend });
    }
    let id_of = |key: &Key| ids.get(key).cloned().unwrap_or_default();
    let mut drawn_edges = Vec::new();
    if let Some(entry) = &entry {
        drawn_edges.push(Edge {
            from: "__start__".into(),
            to: id_of(&Key::State(entry.clone())),
            label: String::new(),
            style: Style::Solid,
        });
    }
    for edge in &edges {
        drawn_edges.push(Edge {
            from: id_of(&edge.from),
            to: id_of(&edge.to),
            label: edge.label.clone(),
            style: edge.style,
        });
    }
    for ((state, to), callers) in &returns {
        let callers: Vec<String> = callers.iter().map(|caller| name_of(&ordered, caller)).collect();
        drawn_edges.push(Edge {
            from: id_of(&Key::State(state.clone())),
            to: id_of(to),
            label: format!("return ({})", callers.join(", ")),
            style: Style::Dashed,
        });
    }
    // End nodes follow the order of the states they end.
    let ends: Vec<&Node> =
        nodes.iter().filter(|node| node.file.as_ref().is_some_and(|file| ends.contains(file))).collect();
    let mut end_nodes = Vec::new();
    for (number, state) in ends.iter().enumerate() {
        let id = unique(format!("__end_{}__", number + 1), &mut taken);
        drawn_edges.push(Edge { from: state.id.clone(), to: id.clone(), label: "result".into(), style: Style::Solid });
        end_nodes.push(Node {
            id,
            name: String::new(),
            kind: NodeKind::End,
            file: None,
            visits: None,
            current: false,
            backend: None,
        });
    }
    nodes.extend(end_nodes);
    let mut seen = BTreeSet::new();
    drawn_edges.retain(|edge| seen.insert(edge.clone()));
    let contents = contents.into_iter().map(|(key, content)| (id_of(&key), content)).collect();
    Diagram { nodes, edges: drawn_edges, contents, warnings }
}

/// The state files a name resolves to here: one, each candidate of an
/// ambiguous name, or none.
fn resolved(workflow: &LintedWorkflow, name: &str) -> Vec<String> {
    match workflow.resolve(name) {
        Ok(file) => vec![file],
        Err(ResolveError::Ambiguous { files, .. }) => files,
        Err(_) => Vec::new(),
    }
}

/// Turns one state's transitions into edges.
struct Drawn<'a> {
    workflow: &'a LintedWorkflow,
    from: &'a str,
    edges: &'a mut Vec<RawEdge>,
    missing: &'a mut BTreeSet<String>,
}

impl Drawn<'_> {
    fn targets(&mut self, name: &str) -> Vec<Key> {
        let files = resolved(self.workflow, name);
        if files.is_empty() {
            self.missing.insert(name.to_string());
            return vec![Key::Missing(state_name::strip_state_extension(name).to_string())];
        }
        files.into_iter().map(Key::State).collect()
    }

    fn edge(&mut self, to: Vec<Key>, label: String, style: Style) {
        for to in to {
            self.edges.push(RawEdge { from: Key::State(self.from.to_string()), to, label: label.clone(), style });
        }
    }

    fn transition(&mut self, transition: &Transition, calls: &mut Vec<CallSite>) {
        let kind = transition.kind;
        // A policy entry that allows any target draws nothing.
        if kind != TagKind::Result && transition.target.is_empty() {
            return;
        }
        let suffix = if transition.attributes.contains_key("input") { " [input]" } else { "" };
        let tag = kind.name();
        let attribute = |name: &str| transition.attribute(name).filter(|value| !value.is_empty());
        match kind {
            TagKind::Goto | TagKind::Ask => {
                let to = self.targets(&transition.target);
                self.edge(to, format!("{tag}{suffix}"), Style::Solid);
                if let Some(timeout) = attribute("timeout_next") {
                    let to = self.targets(timeout);
                    self.edge(to, format!("{tag} timeout"), Style::Dashed);
                }
            }
            TagKind::Reset => {
                let to = self.targets(&transition.target);
                self.edge(to, format!("{tag}{suffix}"), Style::Dashed);
            }
            TagKind::Call | TagKind::Function => {
                let to = self.targets(&transition.target);
                self.edge(to.clone(), format!("{tag}{suffix}"), Style::Solid);
                if let Some(returns) = attribute("return") {
                    for returns in self.targets(returns) {
                        for callee in &to {
                            if let Key::State(callee) = callee {
                                calls.push(CallSite {
                                    caller: self.from.to_string(),
                                    callee: callee.clone(),
                                    returns: returns.clone(),
                                });
                            }
                        }
                    }
                }
            }
            TagKind::Fork => {
                let to = self.targets(&transition.target);
                self.edge(to, format!("{tag}{suffix}"), Style::Dashed);
                if let Some(next) = attribute("next") {
                    let to = self.targets(next);
                    self.edge(to, format!("{tag} next"), Style::Solid);
                }
            }
            TagKind::CallWorkflow | TagKind::FunctionWorkflow => {
                self.edge(vec![Key::Workflow(transition.target.clone())], format!("{tag}{suffix}"), Style::Solid);
                if let Some(returns) = attribute("return") {
                    let to = self.targets(returns);
                    self.edge(to, format!("{tag} return"), Style::Dashed);
                }
            }
            TagKind::ForkWorkflow => {
                self.edge(vec![Key::Workflow(transition.target.clone())], format!("{tag}{suffix}"), Style::Dashed);
                if let Some(next) = attribute("next") {
                    let to = self.targets(next);
                    self.edge(to, format!("{tag} next"), Style::Solid);
                }
            }
            TagKind::ResetWorkflow => {
                self.edge(vec![Key::Workflow(transition.target.clone())], format!("{tag}{suffix}"), Style::Dashed);
            }
            TagKind::Join => {
                // The agent itself goes on there, once its workers ended: dashed, as
                // it waits first (`docs/join.md`).
                let to = self.targets(&transition.target);
                let timeout = attribute("timeout").map(|timeout| format!(" (timeout {timeout})")).unwrap_or_default();
                self.edge(to, format!("{tag}{timeout}"), Style::Dashed);
            }
            TagKind::Result => {}
        }
    }
}

/// The nodes with their names, in drawing order: states and missing states by
/// name, then workflows. Two files with one name (`A.md`, `A.sh`) keep their
/// extensions.
fn order(keys: BTreeSet<Key>, workflow: &LintedWorkflow) -> Vec<(Key, String)> {
    let stems: Vec<&str> = workflow.listing.iter().map(|file| state_name::strip_state_extension(file)).collect();
    let mut named: Vec<(Key, String)> = keys
        .into_iter()
        .map(|key| {
            let name = match &key {
                Key::State(file) => {
                    let stem = state_name::strip_state_extension(file);
                    if stems.iter().filter(|other| **other == stem).count() > 1 {
                        file.clone()
                    } else {
                        stem.to_string()
                    }
                }
                Key::Missing(name) | Key::Workflow(name) => name.clone(),
            };
            (key, name)
        })
        .collect();
    named.sort_by(|(a_key, a_name), (b_key, b_name)| {
        let group = |key: &Key| matches!(key, Key::Workflow(_));
        (group(a_key), a_name, a_key).cmp(&(group(b_key), b_name, b_key))
    });
    named
}

fn name_of(ordered: &[(Key, String)], file: &str) -> String {
    ordered
        .iter()
        .find(|(key, _)| matches!(key, Key::State(state) if state == file))
        .map_or_else(|| file.to_string(), |(_, name)| name.clone())
}

/// Words Mermaid reads as syntax where a node id stands.
const MERMAID_KEYWORDS: [&str; 11] = [
    "end",
    "graph",
    "flowchart",
    "subgraph",
    "style",
    "classdef",
    "class",
    "click",
    "linkstyle",
    "direction",
    "default",
];

/// A Mermaid-safe id for a node named `name`. A plain name (letters, digits and
/// single `_`) is kept as it is; any other name is encoded (`_2d_` for `-`, `_5f_`
/// for `_`) behind `s__` (a state) or `w__` (a workflow), which a plain name
/// cannot contain, so two names never share an id.
pub(crate) fn node_id(kind: NodeKind, name: &str) -> String {
    let plain = name.chars().next().is_some_and(|first| first.is_ascii_alphanumeric())
        && name.chars().all(|character| character.is_ascii_alphanumeric() || character == '_')
        && !name.contains("__")
        && !MERMAID_KEYWORDS.contains(&name.to_ascii_lowercase().as_str());
    if plain && kind != NodeKind::Workflow {
        return name.to_string();
    }
    let mut id = String::from(if kind == NodeKind::Workflow { "w__" } else { "s__" });
    for byte in name.bytes() {
        if byte.is_ascii_alphanumeric() {
            id.push(char::from(byte));
        } else {
            id.push_str(&format!("_{byte:02x}_"));
        }
    }
    id
}

fn unique(id: String, taken: &mut BTreeSet<String>) -> String {
    let mut candidate = id.clone();
    let mut number = 2;
    while !taken.insert(candidate.clone()) {
        candidate = format!("{id}__{number}");
        number += 1;
    }
    candidate
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_are_their_own_ids_and_others_are_encoded_apart() {
        assert_eq!(node_id(NodeKind::Prompt, "REVIEW"), "REVIEW");
        assert_eq!(node_id(NodeKind::Prompt, "1_START"), "1_START");
        assert_eq!(node_id(NodeKind::Prompt, "end"), "s__end");
        assert_eq!(node_id(NodeKind::Prompt, "a-b"), "s__a_2d_b");
        assert_eq!(node_id(NodeKind::Prompt, "a_2d_b"), "a_2d_b");
        assert_eq!(node_id(NodeKind::Prompt, "a__b"), "s__a_5f__5f_b");
        assert_eq!(node_id(NodeKind::Workflow, "../other/"), "w___2e__2e__2f_other_2f_");
        assert_eq!(node_id(NodeKind::Prompt, "é"), "s___c3__a9_");
    }

    #[test]
    fn ids_taken_get_a_number() {
        let mut taken = BTreeSet::new();
        assert_eq!(unique("A".into(), &mut taken), "A");
        assert_eq!(unique("A".into(), &mut taken), "A__2");
    }
}
