//! A layered layout for the HTML page's SVG, simple on purpose: a node's row is
//! its breadth-first depth from the start node, its place in the row follows
//! its parents (one barycentre pass), and edges are cubic curves — straight
//! down between rows, out to the right for edges that go back up or sideways.

use std::collections::{BTreeMap, VecDeque};

use crate::diagram::{Diagram, NodeKind};

const ROW_HEIGHT: f64 = 120.0;
const NODE_HEIGHT: f64 = 40.0;
const CIRCLE: f64 = 22.0;
const GAP: f64 = 72.0;
const MARGIN: f64 = 40.0;
/// Approximate width of a character of the 14px sans-serif labels.
const CHAR_WIDTH: f64 = 8.2;

#[derive(Clone, Copy, Debug)]
pub(crate) struct Placed {
    /// Centre.
    pub(crate) x: f64,
    pub(crate) y: f64,
    pub(crate) width: f64,
    pub(crate) height: f64,
}

#[derive(Clone, Debug)]
pub(crate) struct Curve {
    /// SVG path data.
    pub(crate) path: String,
    /// Where the label goes.
    pub(crate) label_at: (f64, f64),
}

pub(crate) struct Layout {
    /// By node id.
    pub(crate) nodes: BTreeMap<String, Placed>,
    /// In the order of `Diagram::edges`.
    pub(crate) edges: Vec<Curve>,
    pub(crate) width: f64,
    pub(crate) height: f64,
}

pub(crate) fn layout(diagram: &Diagram) -> Layout {
    let index: BTreeMap<&str, usize> =
        diagram.nodes.iter().enumerate().map(|(position, node)| (node.id.as_str(), position)).collect();
    let mut successors: Vec<Vec<usize>> = vec![Vec::new(); diagram.nodes.len()];
    for edge in &diagram.edges {
        if let (Some(from), Some(to)) = (index.get(edge.from.as_str()), index.get(edge.to.as_str())) {
            successors[*from].push(*to);
        }
    }
    // Rows: breadth-first from the start; what it does not reach starts new rows below.
    let mut depth: Vec<Option<usize>> = vec![None; diagram.nodes.len()];
    let mut discovered = Vec::new();
    for root in 0..diagram.nodes.len() {
        if depth[root].is_some() {
            continue;
        }
        let base = depth.iter().flatten().max().map_or(0, |deepest| deepest + 1);
        depth[root] = Some(base);
        let mut queue = VecDeque::from([root]);
        while let Some(node) = queue.pop_front() {
            discovered.push(node);
            let next_depth = depth[node].unwrap_or(base) + 1;
            for &next in &successors[node] {
                if depth[next].is_none() {
                    depth[next] = Some(next_depth);
                    queue.push_back(next);
                }
            }
        }
    }
    let rows_count = depth.iter().flatten().max().map_or(0, |deepest| deepest + 1);
    let mut rows: Vec<Vec<usize>> = vec![Vec::new(); rows_count];
    for &node in &discovered {
        if let Some(row) = depth[node] {
            rows[row].push(node);
        }
    }
    // One barycentre pass: order each row by where its parents are.
    let mut column: Vec<f64> = vec![0.0; diagram.nodes.len()];
    for row in &mut rows {
        let keys: BTreeMap<usize, f64> = row
            .iter()
            .map(|&node| {
                let parents: Vec<f64> = (0..diagram.nodes.len())
                    .filter(|&parent| {
                        successors[parent].contains(&node) && depth[parent].zip(depth[node]).is_some_and(|(a, b)| a < b)
                    })
                    .map(|parent| column[parent])
                    .collect();
                let key =
                    if parents.is_empty() { f64::MAX } else { parents.iter().sum::<f64>() / parents.len() as f64 };
                (node, key)
            })
            .collect();
        row.sort_by(|a, b| keys[a].total_cmp(&keys[b]));
        for (position, &node) in row.iter().enumerate() {
            column[node] = position as f64;
        }
    }
    let size = |node: usize| -> (f64, f64) {
        let node = &diagram.nodes[node];
        match node.kind {
            NodeKind::Start | NodeKind::End => (CIRCLE, CIRCLE),
            kind => {
                let padding = if kind == NodeKind::Script { 48.0 } else { 32.0 };
                ((node.label().chars().count() as f64 * CHAR_WIDTH + padding).max(90.0), NODE_HEIGHT)
            }
        }
    };
    // A node's loops (edges to itself) and their labels stand out to its right: room
    // is kept for them, so a neighbour never covers a loop's label.
    let mut loop_room: Vec<f64> = vec![0.0; diagram.nodes.len()];
    let mut loops: BTreeMap<usize, usize> = BTreeMap::new();
    for edge in diagram.edges.iter().filter(|edge| edge.from == edge.to) {
        let Some(&node) = index.get(edge.from.as_str()) else { continue };
        let nth = loops.entry(node).or_insert(0);
        let reach = 46.0 + *nth as f64 * 36.0;
        *nth += 1;
        loop_room[node] = loop_room[node].max(reach * 0.75 + 8.0 + label_width(&edge.label));
    }
    let room = |node: usize| size(node).0 + loop_room[node];
    let row_widths: Vec<f64> = rows
        .iter()
        .map(|row| row.iter().map(|&node| room(node)).sum::<f64>() + GAP * row.len().saturating_sub(1) as f64)
        .collect();
    let widest = row_widths.iter().copied().fold(0.0, f64::max);
    // Room on the right for the curves of edges that go back up.
    let back_room = 80.0 + 24.0 * diagram.edges.len().min(12) as f64;
    let mut nodes = BTreeMap::new();
    for (row_number, row) in rows.iter().enumerate() {
        let mut x = MARGIN + (widest - row_widths[row_number]) / 2.0;
        let y = MARGIN + NODE_HEIGHT / 2.0 + row_number as f64 * ROW_HEIGHT;
        for &node in row {
            let (width, height) = size(node);
            nodes.insert(diagram.nodes[node].id.clone(), Placed { x: x + width / 2.0, y, width, height });
            x += room(node) + GAP;
        }
    }
    let width = MARGIN * 2.0 + widest + back_room;
    let height = MARGIN * 2.0 + NODE_HEIGHT + rows_count.saturating_sub(1) as f64 * ROW_HEIGHT;

    // Edges between the same two nodes are spread apart.
    let mut parallel: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    let mut back_edges = 0usize;
    let mut edges = Vec::new();
    for edge in &diagram.edges {
        let (Some(from), Some(to)) = (nodes.get(&edge.from), nodes.get(&edge.to)) else {
            edges.push(Curve { path: String::new(), label_at: (0.0, 0.0) });
            continue;
        };
        let pair = if edge.from <= edge.to { (&*edge.from, &*edge.to) } else { (&*edge.to, &*edge.from) };
        let nth = parallel.entry(pair).or_insert(0);
        let spread = *nth as f64 * 36.0;
        *nth += 1;
        let curve = if edge.from == edge.to {
            let (x, y) = (from.x + from.width / 2.0, from.y);
            let reach = 46.0 + spread;
            let start = (x, y - 8.0);
            let end = (x, y + 8.0);
            let mut curve = cubic(start, (x + reach, y - 30.0), (x + reach, y + 30.0), end, 0.5);
            // Beside the loop, not on it.
            curve.label_at = (x + reach * 0.75 + 8.0 + label_width(&edge.label) / 2.0, y);
            curve
        } else if to.y > from.y {
            let start = (from.x + spread * 0.3, from.y + from.height / 2.0);
            let end = (to.x + spread * 0.3, to.y - to.height / 2.0);
            let bend = (end.1 - start.1) * 0.45;
            // Labels sit nearer the target, where edges that leave one node have parted.
            cubic(start, (start.0 + spread, start.1 + bend), (end.0 + spread, end.1 - bend), end, 0.62)
        } else {
            // Back up, or along the row: out of the right side and round.
            back_edges += 1;
            let start = (from.x + from.width / 2.0, from.y);
            let end = (to.x + to.width / 2.0, to.y);
            let out = start.0.max(end.0) + 40.0 + (back_edges % 8) as f64 * 22.0 + spread;
            cubic(start, (out, start.1), (out, end.1), end, 0.5)
        };
        edges.push(curve);
    }
    Layout { nodes, edges, width, height }
}

/// The curve through `p0`..`p3`, its label at parameter `t`.
fn cubic(p0: (f64, f64), p1: (f64, f64), p2: (f64, f64), p3: (f64, f64), t: f64) -> Curve {
    let path =
        format!("M{:.1},{:.1} C{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}", p0.0, p0.1, p1.0, p1.1, p2.0, p2.1, p3.0, p3.1);
    let u = 1.0 - t;
    let at = |a: f64, b: f64, c: f64, d: f64| u * u * u * a + 3.0 * u * u * t * b + 3.0 * u * t * t * c + t * t * t * d;
    Curve { path, label_at: (at(p0.0, p1.0, p2.0, p3.0), at(p0.1, p1.1, p2.1, p3.1)) }
}

/// The width of an edge label's background (11.5px text).
pub(crate) fn label_width(label: &str) -> f64 {
    label.chars().count() as f64 * 6.6 + 8.0
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::diagram::{Edge, Node, Style};

    fn node(id: &str, kind: NodeKind) -> Node {
        Node { id: id.into(), name: id.into(), kind, file: None, visits: None, current: false, backend: None }
    }

    fn edge(from: &str, to: &str, label: &str) -> Edge {
        Edge { from: from.into(), to: to.into(), label: label.into(), style: Style::Solid }
    }

    /// Regression: in the page of a fork-and-join run the label of TICK's loop was
    /// drawn under DONE, its neighbour in the row.
    #[test]
    fn a_loops_label_is_not_covered_by_the_next_node_in_the_row() {
        let diagram = Diagram {
            nodes: vec![
                node("START", NodeKind::Script),
                node("TICK", NodeKind::Script),
                node("DONE", NodeKind::Script),
            ],
            edges: vec![
                edge("START", "TICK", "fork [input]"),
                edge("START", "DONE", "join"),
                edge("TICK", "TICK", "goto [input]"),
            ],
            contents: BTreeMap::new(),
            warnings: Vec::new(),
        };
        let placed = layout(&diagram);
        let (tick, done) = (&placed.nodes["TICK"], &placed.nodes["DONE"]);
        assert_eq!(tick.y, done.y, "one row");
        let label = &placed.edges[2].label_at;
        let label_right = label.0 + label_width("goto [input]") / 2.0;
        assert!(
            label_right < done.x - done.width / 2.0,
            "label ends at {label_right}, DONE starts at {}",
            done.x - done.width / 2.0
        );
        assert!(placed.width >= done.x + done.width / 2.0, "the picture holds every node");
    }
}
