//! Bounds on a YAML document, checked before any loader builds it.
//!
//! The YAML loaders Baton uses (yaml-rust2, directly and through gray_matter)
//! expand every alias into a full copy of the node it names. A few hundred bytes
//! of nested aliases ("billion laughs": `b: &b [*a,*a,…]`, nine levels deep) then
//! become billions of nodes and take the machine's memory before any check of
//! ours runs. A document nested thousands of levels deep overflows the stack when
//! a loader converts or drops it recursively. And nothing stops a multi-gigabyte
//! file from being parsed at all.
//!
//! [`check`] walks the parser's events once — events never expand an alias — and
//! computes what the loaders would build: an alias counts as the size (and the
//! height) of the node its anchor was set on, measured when that node closed. Every
//! reader of YAML runs it first and words its error with the file it read
//! (`docs/format.md`, "Limits on YAML"; `docs/decisions.md`).

use std::collections::HashMap;

use yaml_rust2::parser::{Event, Parser};
use yaml_rust2::scanner::Marker;

/// The largest YAML text read, in bytes: far above any workflow, test or
/// frontmatter written by hand, far below what strains memory.
pub(crate) const MAX_YAML_BYTES: usize = 1024 * 1024;

/// The most nodes aliases may add to a document, in all: each `*name` adds as many
/// nodes as the node `&name` was set on holds, aliases inside it expanded.
pub(crate) const MAX_ALIAS_NODES: usize = 100_000;

/// The deepest nesting of sequences and mappings, aliases expanded.
pub(crate) const MAX_YAML_DEPTH: usize = 512;

/// Why a YAML text was refused before parsing. Messages name the line, counted
/// from 1 in the text given to [`check`]; callers add the file (and shift the
/// line when the text is part of a file, as a frontmatter block is).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum YamlLimitError {
    #[error("the YAML is {bytes} bytes, over the limit of {MAX_YAML_BYTES} bytes (1 MiB)")]
    Large { bytes: usize },
    #[error("line {line}: `*{alias}` expands aliases past the limit of {MAX_ALIAS_NODES} nodes")]
    AliasExpansion { line: usize, alias: String },
    #[error("line {line}: the YAML is nested deeper than the limit of {MAX_YAML_DEPTH} levels")]
    Deep { line: usize },
}

impl YamlLimitError {
    /// The line the error is about, counted from 1; `None` for a text too large.
    pub(crate) fn line(&self) -> Option<usize> {
        match self {
            YamlLimitError::Large { .. } => None,
            YamlLimitError::AliasExpansion { line, .. } | YamlLimitError::Deep { line } => Some(*line),
        }
    }

    /// The message without its `line N: ` prefix, for callers that place the line themselves.
    pub(crate) fn message_without_line(&self) -> String {
        match self {
            YamlLimitError::Large { .. } => self.to_string(),
            YamlLimitError::AliasExpansion { alias, .. } => {
                format!("`*{alias}` expands aliases past the limit of {MAX_ALIAS_NODES} nodes")
            }
            YamlLimitError::Deep { .. } => {
                format!("the YAML is nested deeper than the limit of {MAX_YAML_DEPTH} levels")
            }
        }
    }

    /// The same error with its line moved down by `lines` (a block that starts
    /// `lines` lines into its file).
    pub(crate) fn shifted(self, lines: usize) -> YamlLimitError {
        match self {
            YamlLimitError::Large { .. } => self,
            YamlLimitError::AliasExpansion { line, alias } => {
                YamlLimitError::AliasExpansion { line: line + lines, alias }
            }
            YamlLimitError::Deep { line } => YamlLimitError::Deep { line: line + lines },
        }
    }
}

/// What a node becomes once its aliases are expanded.
#[derive(Clone, Copy, Default)]
struct Extent {
    /// Nodes, the node itself included.
    nodes: usize,
    /// Levels of sequences and mappings: 0 for a scalar.
    height: usize,
}

/// A sequence or mapping still open: its anchor and what it holds so far.
struct Open {
    anchor: usize,
    children: Extent,
}

/// Refuses `text` when loading it would build more than the limits allow. A
/// syntax error ends the walk without an error: the loader reports it, at the
/// same place, before building anything past it.
pub(crate) fn check(text: &str) -> Result<(), YamlLimitError> {
    if text.len() > MAX_YAML_BYTES {
        return Err(YamlLimitError::Large { bytes: text.len() });
    }
    let mut parser = Parser::new_from_str(text);
    let mut anchors: HashMap<usize, Extent> = HashMap::new();
    let mut open: Vec<Open> = Vec::new();
    let mut aliased_nodes: usize = 0;
    loop {
        let Ok((event, mark)) = parser.next_token() else { return Ok(()) };
        let closed = match event {
            Event::StreamEnd => return Ok(()),
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                if open.len() >= MAX_YAML_DEPTH {
                    return Err(YamlLimitError::Deep { line: mark.line() });
                }
                open.push(Open { anchor, children: Extent::default() });
                continue;
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let Some(node) = open.pop() else { continue };
                let extent = Extent { nodes: node.children.nodes.saturating_add(1), height: node.children.height + 1 };
                if node.anchor != 0 {
                    anchors.insert(node.anchor, extent);
                }
                extent
            }
            Event::Scalar(_, _, anchor, _) => {
                let extent = Extent { nodes: 1, height: 0 };
                if anchor != 0 {
                    anchors.insert(anchor, extent);
                }
                extent
            }
            Event::Alias(anchor) => {
                // An unknown anchor is the loader's syntax error; it builds nothing.
                let extent = anchors.get(&anchor).copied().unwrap_or_default();
                aliased_nodes = aliased_nodes.saturating_add(extent.nodes);
                if aliased_nodes > MAX_ALIAS_NODES {
                    return Err(YamlLimitError::AliasExpansion { line: mark.line(), alias: alias_name(text, mark) });
                }
                if open.len() + extent.height > MAX_YAML_DEPTH {
                    return Err(YamlLimitError::Deep { line: mark.line() });
                }
                extent
            }
            Event::Nothing | Event::StreamStart | Event::DocumentStart | Event::DocumentEnd => continue,
        };
        if let Some(parent) = open.last_mut() {
            parent.children.nodes = parent.children.nodes.saturating_add(closed.nodes);
            parent.children.height = parent.children.height.max(closed.height);
        }
    }
}

/// The name written after the `*` at `mark` (the scanner counts characters, not bytes).
fn alias_name(text: &str, mark: Marker) -> String {
    text.chars()
        .skip(mark.index())
        .skip_while(|character| *character == '*')
        .take_while(|character| !character.is_whitespace() && !matches!(character, ',' | '[' | ']' | '{' | '}'))
        .take(60)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `levels` levels of aliases, each a list of `width` aliases of the one before.
    fn laughs(levels: usize, width: usize) -> String {
        let mut text = format!("a0: &a0 [{}]\n", vec!["x"; width].join(","));
        for level in 1..levels {
            let items = vec![format!("*a{}", level - 1); width].join(",");
            text.push_str(&format!("a{level}: &a{level} [{items}]\n"));
        }
        text
    }

    #[test]
    fn billion_laughs_is_refused_at_the_alias_that_crosses_the_limit() {
        // Level sizes: a0 = 10 nodes, a1 = 91, a2 = 820, a3 = 7381, a4 = 66430.
        // Aliases to a4 add 66430 each: the second crosses 100000, on line 6.
        assert_eq!(check(&laughs(9, 9)), Err(YamlLimitError::AliasExpansion { line: 6, alias: "a4".into() }));
        assert_eq!(
            check(&laughs(9, 9)).map_err(|error| error.to_string()),
            Err("line 6: `*a4` expands aliases past the limit of 100000 nodes".to_string())
        );
    }

    #[test]
    fn aliases_adding_exactly_the_limit_pass_and_one_more_node_fails() {
        // `&big` holds 1 + 999 = 1000 nodes; 100 aliases of it add exactly 100000.
        let big = format!("big: &big [{}]\n", vec!["x"; 999].join(","));
        let at_limit = format!("{big}uses: [{}]\n", vec!["*big"; 100].join(","));
        assert_eq!(check(&at_limit), Ok(()));
        let over = format!("{at_limit}one: &one x\nmore: *one\n");
        assert_eq!(check(&over), Err(YamlLimitError::AliasExpansion { line: 4, alias: "one".into() }));
    }

    #[test]
    fn a_large_document_without_aliases_under_the_size_limit_passes() {
        let mut text = String::new();
        let mut index = 0;
        while text.len() < MAX_YAML_BYTES - 100 {
            text.push_str(&format!("- {}\n", index % 10));
            index += 1;
        }
        assert!(index > MAX_ALIAS_NODES);
        assert_eq!(check(&text), Ok(()));
    }

    #[test]
    fn a_text_over_the_size_limit_is_refused_before_parsing() {
        let text = "#".repeat(MAX_YAML_BYTES + 1);
        assert_eq!(check(&text), Err(YamlLimitError::Large { bytes: MAX_YAML_BYTES + 1 }));
        assert_eq!(check(&"#".repeat(MAX_YAML_BYTES)), Ok(()));
    }

    #[test]
    fn nesting_is_bounded_in_blocks_and_through_aliases() {
        let nested = |depth: usize| format!("{}x\n", "- ".repeat(depth));
        assert_eq!(check(&nested(MAX_YAML_DEPTH)), Ok(()));
        assert_eq!(check(&nested(MAX_YAML_DEPTH + 1)), Err(YamlLimitError::Deep { line: 1 }));
        // Flow levels stop at 255 in the scanner, but aliases stack them: `&a` is
        // 250 levels, `&b` 100 around `*a`, and `c` 200 around `*b`: 551 in all.
        let deep = format!(
            "a: &a {}x{}\nb: &b {}*a{}\nc: {}*b{}\n",
            "[".repeat(250),
            "]".repeat(250),
            "[".repeat(100),
            "]".repeat(100),
            "[".repeat(200),
            "]".repeat(200)
        );
        assert_eq!(check(&deep), Err(YamlLimitError::Deep { line: 3 }));
    }

    #[test]
    fn a_syntax_error_is_left_to_the_loader() {
        assert_eq!(check("a: [1, 2\n"), Ok(()));
        assert_eq!(check("a: *missing\n"), Ok(()));
    }

    #[test]
    fn shifting_moves_the_line_into_the_file() {
        let error = YamlLimitError::Deep { line: 3 }.shifted(1);
        assert_eq!(error.line(), Some(4));
        assert_eq!(error.message_without_line(), "the YAML is nested deeper than the limit of 512 levels");
    }
}
