//! The diagram as Graphviz DOT: the nodes and edges of the Mermaid drawing,
//! with Graphviz shapes (box, hexagon, component) and dashed styles.

use std::fmt::Write as _;

use crate::diagram::{Diagram, NodeKind, Style};

pub(crate) fn render(diagram: &Diagram) -> String {
    let mut text = String::from("digraph workflow {\n    rankdir=TB;\n    node [fontname=\"Helvetica\"];\n");
    text.push_str("    edge [fontname=\"Helvetica\", fontsize=10];\n\n");
    for node in &diagram.nodes {
        let mut attributes = match node.kind {
            NodeKind::Start => vec!["shape=circle".to_string(), "width=0.25".into(), "label=\"\"".into()],
            NodeKind::End => vec!["shape=doublecircle".to_string(), "width=0.2".into(), "label=\"\"".into()],
            NodeKind::Prompt => vec!["shape=box".to_string()],
            NodeKind::Script => vec!["shape=hexagon".to_string()],
            NodeKind::Workflow => vec!["shape=component".to_string()],
            NodeKind::Missing => vec!["shape=box".to_string(), "style=dashed".into()],
        };
        if !matches!(node.kind, NodeKind::Start | NodeKind::End) {
            attributes.push(format!("label={}", quote(&node.label())));
        }
        if node.current {
            attributes.push("style=\"filled,bold\"".into());
            attributes.push("fillcolor=\"#ffe08a\"".into());
            attributes.push("color=\"#d97706\"".into());
        }
        let _ = writeln!(text, "    {} [{}];", quote(&node.id), attributes.join(", "));
    }
    text.push('\n');
    for edge in &diagram.edges {
        let mut attributes = Vec::new();
        if !edge.label.is_empty() {
            attributes.push(format!("label={}", quote(&edge.label)));
        }
        if edge.style == Style::Dashed {
            attributes.push("style=dashed".to_string());
        }
        let attributes = if attributes.is_empty() { String::new() } else { format!(" [{}]", attributes.join(", ")) };
        let _ = writeln!(text, "    {} -> {}{attributes};", quote(&edge.from), quote(&edge.to));
    }
    text.push_str("}\n");
    text
}

/// `text` as a DOT double-quoted string: `\` and `"` escaped, a line break as
/// `\n` (a centred line in a label).
pub(crate) fn quote(text: &str) -> String {
    let mut quoted = String::with_capacity(text.len() + 2);
    quoted.push('"');
    for character in text.chars() {
        match character {
            '"' => quoted.push_str("\\\""),
            '\\' => quoted.push_str("\\\\"),
            '\n' => quoted.push_str("\\n"),
            '\r' => {}
            other if other.is_control() => {}
            other => quoted.push(other),
        }
    }
    quoted.push('"');
    quoted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_escapes_quotes_backslashes_and_line_breaks() {
        assert_eq!(quote("START"), "\"START\"");
        assert_eq!(quote(r#"say "hi" \n"#), r#""say \"hi\" \\n""#);
        assert_eq!(quote("a\r\nb\u{0}"), "\"a\\nb\"");
        assert_eq!(quote("-> ; } {"), "\"-> ; } {\"");
    }
}
