//! The diagram as a Mermaid `flowchart TD`, drawn as raymond's `ray diagram`
//! draws it: a start circle, prompts as rectangles, scripts as hexagons, other
//! workflows as subroutines, an end circle per state whose `<result>` ends an
//! agent; solid edges for moves, dashed ones for forks, resets and returns.

use std::fmt::Write as _;

use crate::diagram::{Diagram, NodeKind, Style};

/// The class of the nodes an agent is at (`--run`).
const CURRENT_CLASS: &str = "classDef current fill:#ffe08a,stroke:#d97706,stroke-width:3px";

pub(crate) fn render(diagram: &Diagram) -> String {
    let mut text = String::from("flowchart TD\n");
    for node in &diagram.nodes {
        let id = &node.id;
        let label = escape_label(&node.label());
        let _ = match node.kind {
            NodeKind::Start | NodeKind::End => writeln!(text, "    {id}((\" \"))"),
            NodeKind::Prompt => writeln!(text, "    {id}[\"{label}\"]"),
            NodeKind::Script => writeln!(text, "    {id}{{{{\"{label}\"}}}}"),
            NodeKind::Workflow => writeln!(text, "    {id}[[\"{label}\"]]"),
            NodeKind::Missing => writeln!(text, "    {id}[\"{label}\"]\n    style {id} stroke-dasharray: 5 5"),
        };
    }
    text.push('\n');
    for edge in &diagram.edges {
        let arrow = match edge.style {
            Style::Solid => "-->",
            Style::Dashed => "-.->",
        };
        let _ = if edge.label.is_empty() {
            writeln!(text, "    {} {arrow} {}", edge.from, edge.to)
        } else {
            writeln!(text, "    {} {arrow}|{}| {}", edge.from, escape_label(&edge.label), edge.to)
        };
    }
    let current: Vec<&str> = diagram.nodes.iter().filter(|node| node.current).map(|node| node.id.as_str()).collect();
    if !current.is_empty() {
        let _ = writeln!(text, "\n    {CURRENT_CLASS}\n    class {} current", current.join(","));
    }
    text
}

/// `text` safe inside a quoted Mermaid label: quotes, the characters Mermaid
/// reads as shapes, edges or markup, and `#` itself become entity codes
/// (`#quot;`, `#35;`); line breaks become spaces.
pub(crate) fn escape_label(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '"' => escaped.push_str("#quot;"),
            '#' => escaped.push_str("#35;"),
            '&' => escaped.push_str("#38;"),
            '<' => escaped.push_str("#lt;"),
            '>' => escaped.push_str("#gt;"),
            '|' | '[' | ']' | '(' | ')' | '{' | '}' | '`' | '\\' | ';' => {
                let _ = write!(escaped, "#{};", u32::from(character));
            }
            '\n' | '\r' | '\t' => escaped.push(' '),
            other if other.is_control() => {}
            other => escaped.push(other),
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_escape_what_mermaid_would_read_as_syntax() {
        assert_eq!(escape_label("REVIEW ×3"), "REVIEW ×3");
        assert_eq!(escape_label(r#"a "b" | [c] (d) {e}"#), "a #quot;b#quot; #124; #91;c#93; #40;d#41; #123;e#125;");
        assert_eq!(escape_label("#quot; <b>&amp;"), "#35;quot#59; #lt;b#gt;#38;amp#59;");
        assert_eq!(escape_label("two\nlines\u{7}"), "two lines");
        assert_eq!(escape_label("`md` \\"), "#96;md#96; #92;");
    }
}
