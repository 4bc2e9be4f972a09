//! The diagram as one self-contained HTML page that works offline: an inline
//! SVG laid out by `layout`, a side panel that shows a clicked state, and a few
//! lines of our own JavaScript. Nothing is fetched at view time.
//!
//! Security model: a state's text is whatever its author (or a model) wrote, so
//! none of it reaches the page as markup. Prompts are rendered from markdown
//! with their raw HTML turned into escaped text and links or images with a
//! scheme other than http, https or mailto neutralised; scripts and frontmatter
//! are escaped `<pre>` text. The rendered panels travel as JSON inside a
//! `<script type="application/json">` with `<`, `>` and `&` escaped, so no text
//! can close that element. A strict Content-Security-Policy forbids loading
//! anything, so even a missed injection could not reach the network.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use pulldown_cmark::{CodeBlockKind, CowStr, Event, Options, Parser, Tag, TagEnd};
use serde::Serialize;

use crate::diagram::layout::{label_width, layout};
use crate::diagram::{Content, Diagram, NodeKind, Style};

const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:";

const STYLE: &str = r#"
:root { font-family: system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: #1f2328; }
body { margin: 0; display: flex; flex-direction: column; height: 100vh; }
header { padding: 10px 18px; border-bottom: 1px solid #d0d7de; display: flex; gap: 24px; align-items: baseline; flex-wrap: wrap; }
header h1 { font-size: 18px; margin: 0; }
.legend { font-size: 13px; color: #57606a; }
main { flex: 1; display: flex; min-height: 0; }
#graph { flex: 1; overflow: auto; background: #f6f8fa; }
#panel { width: 42%; max-width: 720px; border-left: 1px solid #d0d7de; overflow: auto; padding: 0 20px 20px; background: #fff; }
#panel h2 { font-size: 17px; }
#panel pre { background: #f6f8fa; padding: 10px; overflow: auto; font-size: 12.5px; white-space: pre-wrap; word-break: break-word; }
#panel code { background: #f6f8fa; padding: 1px 3px; }
#panel .markdown { line-height: 1.5; font-size: 14px; }
#panel .note { color: #57606a; }
svg text { font-size: 14px; }
.node { cursor: pointer; }
.node .shape { fill: #fff; stroke: #57606a; stroke-width: 1.5; }
.node.script .shape { fill: #eef6ff; }
.node.workflow .shape { fill: #f3eefe; }
.node.missing .shape { stroke-dasharray: 5 4; fill: #fff8f0; }
.node.current .shape { fill: #ffe08a; stroke: #d97706; stroke-width: 3; }
.node:hover .shape, .node:focus .shape { stroke: #0969da; }
.node.selected .shape { stroke: #0969da; stroke-width: 3; }
.terminal { fill: #57606a; }
.edge { fill: none; stroke: #57606a; stroke-width: 1.4; }
.edge.dashed { stroke-dasharray: 6 4; }
.edge-label rect { fill: #f6f8fa; }
.edge-label text { font-size: 11.5px; fill: #57606a; }
"#;

const SCRIPT: &str = r#"
(function () {
  "use strict";
  var states = JSON.parse(document.getElementById("states").textContent);
  var title = document.getElementById("panel-title");
  var body = document.getElementById("panel-body");
  function has(id) { return Object.prototype.hasOwnProperty.call(states, id); }
  function select(id) {
    if (!has(id)) { return; }
    var selected = document.querySelectorAll(".node.selected");
    for (var i = 0; i < selected.length; i++) { selected[i].classList.remove("selected"); }
    var nodes = document.querySelectorAll(".node[data-id]");
    for (var j = 0; j < nodes.length; j++) {
      if (nodes[j].getAttribute("data-id") === id) { nodes[j].classList.add("selected"); }
    }
    title.textContent = states[id].title;
    // Rendered and sanitised by baton: raw HTML of a prompt arrives as text.
    body.innerHTML = states[id].html;
    body.setAttribute("data-state", id);
  }
  function byName(name) {
    if (has(name)) { return name; }
    for (var id in states) { if (has(id) && states[id].name === name) { return id; } }
    return null;
  }
  var nodes = document.querySelectorAll(".node[data-id]");
  for (var k = 0; k < nodes.length; k++) {
    (function (node) {
      var id = node.getAttribute("data-id");
      node.addEventListener("click", function () { select(id); });
      node.addEventListener("keydown", function (event) {
        if (event.key === "Enter" || event.key === " ") { event.preventDefault(); select(id); }
      });
    })(nodes[k]);
  }
  function fromHash() {
    var match = /^#select=(.*)$/.exec(window.location.hash);
    if (!match) { return; }
    var name;
    try { name = decodeURIComponent(match[1]); } catch (error) { return; }
    var id = byName(name);
    if (id !== null) { select(id); }
  }
  window.addEventListener("hashchange", fromHash);
  fromHash();
})();
"#;

/// What the panel shows for one node.
#[derive(Serialize)]
struct Panel {
    name: String,
    title: String,
    html: String,
}

/// The page for `diagram` of workflow `title`.
pub(crate) fn render(diagram: &Diagram, title: &str) -> String {
    let mut page = String::new();
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{} — baton diagram</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        escape_html(title)
    );
    let overlay = diagram.nodes.iter().any(|node| node.visits.is_some());
    let legend = if overlay {
        "rectangles are prompts, hexagons scripts; ×N: times a state started in the run; highlighted: where an agent is now"
    } else {
        "rectangles are prompts, hexagons scripts, double boxes other workflows; dashed edges fork, reset or return"
    };
    let _ = writeln!(page, "<header><h1>{}</h1><span class=\"legend\">{legend}</span></header>", escape_html(title));
    page.push_str("<main>\n<div id=\"graph\">\n");
    page.push_str(&svg(diagram));
    page.push_str("</div>\n<aside id=\"panel\"><h2 id=\"panel-title\">Select a state</h2>");
    page.push_str("<div id=\"panel-body\"><p class=\"note\">Click a state to see its prompt or script.</p></div></aside>\n</main>\n");
    let panels: BTreeMap<&str, Panel> = diagram
        .nodes
        .iter()
        .filter(|node| !matches!(node.kind, NodeKind::Start | NodeKind::End))
        .map(|node| (node.id.as_str(), panel(diagram, node)))
        .collect();
    let json = serde_json::to_string(&panels).unwrap_or_else(|_| "{}".into());
    let _ = write!(
        page,
        "<script type=\"application/json\" id=\"states\">{}</script>\n<script>{SCRIPT}</script>\n</body>\n</html>\n",
        json_for_script(&json)
    );
    page
}

fn panel(diagram: &Diagram, node: &crate::diagram::Node) -> Panel {
    let mut html = String::new();
    let title = match (&node.file, node.visits) {
        (Some(file), Some(visits)) => {
            format!("{file} (started {visits}×{})", if node.current { ", agent here now" } else { "" })
        }
        (Some(file), None) => file.clone(),
        (None, _) => node.name.clone(),
    };
    match (node.kind, diagram.contents.get(&node.id)) {
        (_, Some(Content::Prompt { frontmatter, body })) => {
            if let Some(frontmatter) = frontmatter {
                let newline = if frontmatter.ends_with('\n') { "" } else { "\n" };
                let _ = write!(html, "<pre class=\"frontmatter\">---\n{}{newline}---</pre>", escape_html(frontmatter));
            }
            let _ = write!(html, "<div class=\"markdown\">{}</div>", render_markdown(body));
        }
        (_, Some(Content::Script(text))) => {
            let _ = write!(html, "<pre class=\"script\">{}</pre>", escape_html(text));
        }
        (_, Some(Content::Unreadable(reason))) => {
            let _ = write!(html, "<p class=\"note\">This state cannot be read: {}</p>", escape_html(reason));
        }
        (NodeKind::Workflow, None) => {
            let _ = write!(html, "<p class=\"note\">Another workflow: <code>{}</code></p>", escape_html(&node.name));
        }
        (_, None) => {
            let _ = write!(
                html,
                "<p class=\"note\">A transition names <code>{}</code>, but the workflow has no such state.</p>",
                escape_html(&node.name)
            );
        }
    }
    Panel { name: node.name.clone(), title, html }
}

fn svg(diagram: &Diagram) -> String {
    let placed = layout(diagram);
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"diagram\" width=\"{w:.0}\" height=\"{h:.0}\" viewBox=\"0 0 {w:.0} {h:.0}\" role=\"img\">",
        w = placed.width,
        h = placed.height
    );
    svg.push_str(
        "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"8\" markerHeight=\"8\" \
         orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#57606a\"/></marker></defs>\n",
    );
    svg.push_str("<g class=\"edges\">\n");
    for (edge, curve) in diagram.edges.iter().zip(&placed.edges) {
        if curve.path.is_empty() {
            continue;
        }
        let class = if edge.style == Style::Dashed { "edge dashed" } else { "edge" };
        let _ = writeln!(
            svg,
            "<path class=\"{class}\" data-from=\"{}\" data-to=\"{}\" d=\"{}\" marker-end=\"url(#arrow)\"/>",
            escape_html(&edge.from),
            escape_html(&edge.to),
            curve.path
        );
    }
    // Labels above every edge, so that no line crosses a label.
    for (edge, curve) in diagram.edges.iter().zip(&placed.edges) {
        if curve.path.is_empty() || edge.label.is_empty() {
            continue;
        }
        let (x, y) = curve.label_at;
        let width = label_width(&edge.label);
        let _ = writeln!(
            svg,
            "<g class=\"edge-label\"><rect x=\"{:.1}\" y=\"{:.1}\" width=\"{width:.1}\" height=\"16\" rx=\"3\"/>\
             <text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text></g>",
            x - width / 2.0,
            y - 8.0,
            y + 4.0,
            escape_html(&edge.label)
        );
    }
    svg.push_str("</g>\n<g class=\"nodes\">\n");
    for node in &diagram.nodes {
        let Some(at) = placed.nodes.get(&node.id) else { continue };
        let (x, y, w, h) = (at.x, at.y, at.width, at.height);
        let (left, top) = (x - w / 2.0, y - h / 2.0);
        match node.kind {
            NodeKind::Start => {
                let _ = writeln!(
                    svg,
                    "<circle class=\"terminal start\" cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"{:.1}\"/>",
                    w / 2.0
                );
                continue;
            }
            NodeKind::End => {
                let _ = writeln!(
                    svg,
                    "<g class=\"terminal-end\"><circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"{:.1}\" fill=\"#fff\" stroke=\"#57606a\" stroke-width=\"1.5\"/>\
                     <circle class=\"terminal\" cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"{:.1}\"/></g>",
                    w / 2.0,
                    w / 2.0 - 4.0
                );
                continue;
            }
            _ => {}
        }
        let kind = match node.kind {
            NodeKind::Script => "script",
            NodeKind::Workflow => "workflow",
            NodeKind::Missing => "missing",
            _ => "prompt",
        };
        let current = if node.current { " current" } else { "" };
        let _ = write!(
            svg,
            "<g class=\"node {kind}{current}\" data-id=\"{}\" tabindex=\"0\" role=\"button\"><title>{}</title>",
            escape_html(&node.id),
            escape_html(node.file.as_deref().unwrap_or(&node.name))
        );
        match node.kind {
            NodeKind::Script => {
                let inset = 14.0;
                let _ = write!(
                    svg,
                    "<polygon class=\"shape\" points=\"{:.1},{y:.1} {:.1},{top:.1} {:.1},{top:.1} {:.1},{y:.1} {:.1},{:.1} {:.1},{:.1}\"/>",
                    left,
                    left + inset,
                    left + w - inset,
                    left + w,
                    left + w - inset,
                    top + h,
                    left + inset,
                    top + h
                );
            }
            NodeKind::Workflow => {
                let _ = write!(
                    svg,
                    "<rect class=\"shape\" x=\"{left:.1}\" y=\"{top:.1}\" width=\"{w:.1}\" height=\"{h:.1}\"/>\
                     <line x1=\"{:.1}\" y1=\"{top:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#57606a\"/>\
                     <line x1=\"{:.1}\" y1=\"{top:.1}\" x2=\"{:.1}\" y2=\"{:.1}\" stroke=\"#57606a\"/>",
                    left + 8.0,
                    left + 8.0,
                    top + h,
                    left + w - 8.0,
                    left + w - 8.0,
                    top + h
                );
            }
            _ => {
                let _ = write!(
                    svg,
                    "<rect class=\"shape\" x=\"{left:.1}\" y=\"{top:.1}\" width=\"{w:.1}\" height=\"{h:.1}\" rx=\"4\"/>"
                );
            }
        }
        let _ = writeln!(
            svg,
            "<text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text></g>",
            y + 5.0,
            escape_html(&node.label())
        );
    }
    svg.push_str("</g>\n</svg>\n");
    svg
}

/// `text` as HTML text or a quoted attribute value.
pub(crate) fn escape_html(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&#39;"),
            other => escaped.push(other),
        }
    }
    escaped
}

/// A prompt's markdown as HTML that carries none of the prompt's own markup:
/// raw HTML (blocks and inline) becomes escaped text — a block shown as code —
/// and a link or image whose URL is not safe leads nowhere.
pub(crate) fn render_markdown(markdown: &str) -> String {
    let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let events = Parser::new_ext(markdown, options).map(|event| match event {
        Event::Html(html) | Event::InlineHtml(html) => Event::Text(html),
        Event::Start(Tag::HtmlBlock) => Event::Start(Tag::CodeBlock(CodeBlockKind::Indented)),
        Event::End(TagEnd::HtmlBlock) => Event::End(TagEnd::CodeBlock),
        Event::Start(Tag::Link { link_type, dest_url, title, id }) => {
            Event::Start(Tag::Link { link_type, dest_url: safe_url(dest_url), title, id })
        }
        Event::Start(Tag::Image { link_type, dest_url, title, id }) => {
            Event::Start(Tag::Image { link_type, dest_url: safe_url(dest_url), title, id })
        }
        other => other,
    });
    let mut html = String::new();
    pulldown_cmark::html::push_html(&mut html, events);
    html
}

/// `url` if it is relative or http, https or mailto; `#` otherwise
/// (`javascript:`, `data:`, `vbscript:`, however they are spelled).
fn safe_url(url: CowStr<'_>) -> CowStr<'_> {
    // Browsers drop tabs, line breaks and leading controls or spaces before reading a scheme.
    let compact: String =
        url.chars().filter(|character| !character.is_ascii_control() && !character.is_whitespace()).collect();
    let scheme_end = compact.find([':', '/', '?', '#']);
    let safe = match scheme_end {
        Some(end) if compact[end..].starts_with(':') => {
            matches!(compact[..end].to_ascii_lowercase().as_str(), "http" | "https" | "mailto")
        }
        _ => true,
    };
    if safe { url } else { CowStr::Borrowed("#") }
}

/// JSON made safe inside a `<script>` element: `<`, `>` and `&` (which only
/// occur inside JSON strings) as `\u` escapes, so `</script>` or `<!--` in a
/// prompt cannot end or change the element; U+2028 and U+2029 too.
pub(crate) fn json_for_script(json: &str) -> String {
    json.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_html_in_a_prompt_becomes_text() {
        let html = render_markdown("Hi <b onclick=\"x()\">there</b>\n\n<script>document.title='pwned'</script>\n");
        assert!(!html.contains("<b"), "{html}");
        assert!(!html.contains("<script"), "{html}");
        assert!(html.contains("&lt;b onclick=\"x()\"&gt;there&lt;/b&gt;"), "{html}");
        assert!(html.contains("&lt;script&gt;document.title='pwned'&lt;/script&gt;"), "{html}");
        let image = render_markdown("<img src=x onerror=\"alert(1)\">");
        assert!(!image.contains("<img"), "{image}");
    }

    #[test]
    fn unsafe_link_and_image_urls_lead_nowhere() {
        for markdown in [
            "[a](javascript:alert(1))",
            "[a](JavaScript:alert(1))",
            "[a](<java\tscript:alert(1)>)",
            "[a]( data:text/html,x)",
            "![i](vbscript:x)",
            "<javascript:alert(1)>",
        ] {
            let html = render_markdown(markdown);
            let start = html.find("href=\"").map(|at| at + 6).or_else(|| html.find("src=\"").map(|at| at + 5));
            let url = start.and_then(|start| html[start..].split('"').next());
            assert_eq!(url, Some("#"), "{markdown} -> {html}");
        }
        assert!(render_markdown("[a](https://example.com/x?y#z)").contains("href=\"https://example.com/x?y#z\""));
        assert!(render_markdown("[a](other.md#part)").contains("href=\"other.md#part\""));
        assert!(render_markdown("[a](mailto:me@example.com)").contains("href=\"mailto:me@example.com\""));
    }

    #[test]
    fn json_in_a_script_cannot_close_it() {
        let json = serde_json::to_string(&"</script><!-- & \u{2028}").unwrap_or_default();
        let safe = json_for_script(&json);
        assert!(!safe.contains('<') && !safe.contains('>') && !safe.contains('&'), "{safe}");
        assert_eq!(safe, r#""\u003c/script\u003e\u003c!-- \u0026 \u2028""#);
        let back: String = serde_json::from_str(&safe).unwrap_or_default();
        assert_eq!(back, "</script><!-- & \u{2028}");
    }

    #[test]
    fn html_escaping_covers_text_and_attributes() {
        assert_eq!(escape_html(r#"<a href="x" title='y'>&"#), "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;");
    }
}
