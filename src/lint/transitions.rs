//! The transitions a state can take, as far as its files say: the tags its prompt
//! tells the agent to emit, its `allowed_transitions`, and the tags a script
//! prints literally.
//!
//! A prompt body is read as markdown (pulldown-cmark) so that a tag inside an
//! HTML comment, which an author wrote to switch it off, is not taken for an
//! instruction; tags in code spans and fences count, as prompts show the exact
//! tag to emit that way. A script's tags count when their targets are written
//! out; a target built at run time (`$NEXT`, `%NEXT%`, a command's output) is
//! noted as dynamic, and only that gets `script-state-no-static-analysis`.
//!
//! A prompt whose `force_implicit: true` applies (R5.14) has no body tags: its
//! output is never parsed, so its only transition is its policy's entry.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::LazyLock;

use pulldown_cmark::{Event, Parser, Tag as MarkdownTag};
use regex::Regex;

use crate::lint::source::StateText;
use crate::syntax::frontmatter::{FrontmatterError, StateFrontmatter, parse_frontmatter};
use crate::syntax::scanner::{FoundTag, TagParseError, scan_each};
use crate::syntax::tag::TagKind;

/// Where a transition was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Origin {
    /// A tag in the state's text (a prompt's body, a script's source), from byte
    /// `offset` of that text; `source` is the tag as written.
    Text { offset: usize, source: String },
    /// Entry `index` (from 0) of `allowed_transitions`.
    Policy { index: usize },
}

#[derive(Clone, Debug)]
pub(crate) struct Transition {
    pub(crate) kind: TagKind,
    /// The state or workflow named: a tag's content, `next` for `ask`; empty for
    /// `result` and for a policy entry that allows any target.
    pub(crate) target: String,
    pub(crate) attributes: BTreeMap<String, String>,
    pub(crate) origin: Origin,
}

impl Transition {
    pub(crate) fn attribute(&self, name: &str) -> Option<&str> {
        self.attributes.get(name).map(String::as_str)
    }

    /// How a message names it: the tag as written, or the policy entry.
    pub(crate) fn subject(&self) -> String {
        match &self.origin {
            Origin::Text { .. } => format!("`<{}>`", self.kind),
            Origin::Policy { index } => format!("`allowed_transitions` entry {} (`tag: {}`)", index + 1, self.kind),
        }
    }
}

/// Why part of a script's transitions cannot be known before it runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Dynamic {
    /// The script prints no tag literally.
    NoLiteralTag,
    /// A tag whose name or target is built at run time, at byte `offset`.
    Computed { offset: usize, source: String },
}

/// What lint knows of one state file.
pub(crate) struct StateAnalysis {
    pub(crate) text: StateText,
    /// `None` for a script, or when the frontmatter is refused (see `frontmatter_error`).
    pub(crate) frontmatter: Option<StateFrontmatter>,
    pub(crate) frontmatter_error: Option<FrontmatterError>,
    pub(crate) transitions: Vec<Transition>,
    /// Tags in the text that would stop a run if the agent copied them.
    pub(crate) malformed: Vec<(usize, TagKind, TagParseError)>,
    /// `allowed_transitions` entries whose tag is no transition tag: index, tag.
    pub(crate) unknown_policy_tags: Vec<(usize, String)>,
    pub(crate) dynamic: Option<Dynamic>,
}

impl StateAnalysis {
    pub(crate) fn is_script(&self) -> bool {
        crate::text::state_name::is_script(&self.text.file)
    }
}

pub(crate) fn analyse(text: StateText) -> StateAnalysis {
    let mut analysis = StateAnalysis {
        text,
        frontmatter: None,
        frontmatter_error: None,
        transitions: Vec::new(),
        malformed: Vec::new(),
        unknown_policy_tags: Vec::new(),
        dynamic: None,
    };
    if analysis.is_script() {
        read_script(&mut analysis);
        return analysis;
    }
    match analysis.text.frontmatter.as_deref().map(parse_frontmatter) {
        Some(Ok(frontmatter)) => analysis.frontmatter = Some(frontmatter),
        Some(Err(error)) => analysis.frontmatter_error = Some(error),
        None => analysis.frontmatter = Some(StateFrontmatter::default()),
    }
    read_policy(&mut analysis);
    // Under `force_implicit` the output is never parsed (R5.14): a tag the body
    // shows is an example for the reader, not a way out, and cannot stop a run.
    if !analysis.frontmatter.as_ref().is_some_and(StateFrontmatter::forces_implicit) {
        read_body(&mut analysis);
    }
    analysis
}

fn read_policy(analysis: &mut StateAnalysis) {
    let Some(policy) = analysis.frontmatter.as_ref().and_then(|frontmatter| frontmatter.policy.as_ref()) else {
        return;
    };
    for (index, entry) in policy.entries.iter().enumerate() {
        let Some(kind) = TagKind::from_name(entry.tag()) else {
            analysis.unknown_policy_tags.push((index, entry.tag().to_string()));
            continue;
        };
        let target_key = if kind == TagKind::Ask { "next" } else { "target" };
        let target = if kind == TagKind::Result { "" } else { entry.get(target_key).unwrap_or("") };
        let attributes =
            entry.0.iter().filter(|(key, _)| !matches!(key.as_str(), "tag" | "target")).map(clone_pair).collect();
        analysis.transitions.push(Transition {
            kind,
            target: target.to_string(),
            attributes,
            origin: Origin::Policy { index },
        });
    }
}

fn clone_pair((key, value): (&String, &String)) -> (String, String) {
    (key.clone(), value.clone())
}

fn read_body(analysis: &mut StateAnalysis) {
    let start = analysis.text.body_start;
    let body = analysis.text.body();
    let comments = html_comments(body);
    let mut transitions = Vec::new();
    let mut malformed = Vec::new();
    for found in scan_each(body) {
        if spans_lines(body, &found) || comments.iter().any(|comment| comment.contains(&found.span.start)) {
            continue;
        }
        let offset = start + found.span.start;
        match found.parsed {
            Ok(tag) => transitions.push(Transition {
                kind: tag.kind,
                target: tag.target,
                attributes: tag.attributes,
                origin: Origin::Text { offset, source: body[found.span].to_string() },
            }),
            Err(error) => malformed.push((offset, found.kind, error)),
        }
    }
    analysis.transitions.extend(transitions);
    analysis.malformed = malformed;
}

/// The byte ranges of `markdown`'s HTML comments, inline or block.
fn html_comments(markdown: &str) -> Vec<Range<usize>> {
    static COMMENT: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"(?s)<!--.*?(-->|\z)").expect("the comment pattern is valid"));
    let mut comments = Vec::new();
    for (event, range) in Parser::new(markdown).into_offset_iter() {
        let html = match event {
            Event::Start(MarkdownTag::HtmlBlock) | Event::InlineHtml(_) => range,
            _ => continue,
        };
        let Some(text) = markdown.get(html.clone()) else { continue };
        comments.extend(COMMENT.find_iter(text).map(|found| html.start + found.start()..html.start + found.end()));
    }
    comments
}

/// Whether a tag that names a state runs over several lines: an opening tag in
/// prose matched with a closing tag much later, not a transition (a state name
/// is one line). A `result` or `ask` may hold several lines.
fn spans_lines(text: &str, found: &FoundTag) -> bool {
    !matches!(found.kind, TagKind::Result | TagKind::Ask) && text[found.span.clone()].contains('\n')
}

/// The byte ranges of a script's whole-line comments (`#` in bash and
/// PowerShell, `REM` and `::` in batch files), where tags are prose.
fn comment_lines(source: &str) -> Vec<Range<usize>> {
    let mut comments = Vec::new();
    let mut start = 0;
    for line in source.split_inclusive('\n') {
        let code = line.trim_start();
        let upper = code.get(..4).unwrap_or(code).to_ascii_uppercase();
        if code.starts_with('#') || code.starts_with("::") || upper == "REM " || upper.trim_end() == "REM" {
            comments.push(start..start + line.len());
        }
        start += line.len();
    }
    comments
}

/// A tag opened by a variable: `<$TAG>`, `<${TAG}>`, `<%TAG%>`. Its Unicode `\w`
/// costs more to compile than the rest of a one-state run's start-up together, so
/// it is only built for a script that holds `<$` or `<%` (`computed_tags`).
static COMPUTED_TAG: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"<(\$\{?\w+\}?|%\w+%)[^<>\n]*>").expect("the computed-tag pattern is valid"));

/// Characters that make a value computed at run time in bash, batch or PowerShell.
fn is_computed(value: &str) -> bool {
    value.contains(['$', '%', '`'])
}

fn read_script(analysis: &mut StateAnalysis) {
    // A tag inside a double-quoted string has its quotes escaped (`\"` in bash,
    // `` `" `` in PowerShell); read it as printed, keeping offsets into the source.
    let (source, offsets) = unescape_quotes(&analysis.text.text);
    let mut first_computed: Option<(usize, String)> = None;
    let mut note = |offset: usize, text: &str| {
        if first_computed.as_ref().is_none_or(|(first, _)| offset < *first) {
            first_computed = Some((offset, text.to_string()));
        }
    };
    let comments = comment_lines(&source);
    let found: Vec<_> = scan_each(&source)
        .into_iter()
        .filter(|tag| !spans_lines(&source, tag) && !comments.iter().any(|comment| comment.contains(&tag.span.start)))
        .collect();
    for tag in &found {
        let offset = offsets[tag.span.start];
        let text = &source[tag.span.clone()];
        let parsed = match &tag.parsed {
            Ok(parsed) => parsed,
            Err(_) if is_computed(text) => {
                note(offset, text);
                continue;
            }
            Err(error) => {
                analysis.malformed.push((offset, tag.kind, error.clone()));
                continue;
            }
        };
        let computed = is_computed(&parsed.target)
            || ["next", "return", "timeout_next"].iter().any(|key| parsed.attribute(key).is_some_and(is_computed));
        if computed {
            note(offset, text);
            continue;
        }
        analysis.transitions.push(Transition {
            kind: parsed.kind,
            target: parsed.target.clone(),
            attributes: parsed.attributes.clone(),
            origin: Origin::Text { offset, source: text.to_string() },
        });
    }
    for (start, text) in computed_tags(&source) {
        note(offsets[start], text);
    }
    analysis.dynamic = match first_computed {
        Some((offset, source)) => Some(Dynamic::Computed { offset, source }),
        None if found.is_empty() => Some(Dynamic::NoLiteralTag),
        None => None,
    };
}

/// Where `COMPUTED_TAG` matches `source`: none without a `<$` or `<%`, which
/// every match starts with, so most scripts never compile it.
fn computed_tags(source: &str) -> Vec<(usize, &str)> {
    if !source.contains("<$") && !source.contains("<%") {
        return Vec::new();
    }
    COMPUTED_TAG.find_iter(source).map(|found| (found.start(), found.as_str())).collect()
}

/// `text` with `\"` and `` `" `` read as `"`, and for each byte of the result
/// (and its end) the offset of the byte it came from.
fn unescape_quotes(text: &str) -> (String, Vec<usize>) {
    let mut unescaped = String::with_capacity(text.len());
    let mut offsets = Vec::with_capacity(text.len() + 1);
    let mut chars = text.char_indices().peekable();
    while let Some((offset, character)) = chars.next() {
        let escape = matches!(character, '\\' | '`') && chars.peek().is_some_and(|(_, next)| *next == '"');
        if escape {
            continue;
        }
        unescaped.push(character);
        offsets.extend(std::iter::repeat_n(offset, character.len_utf8()));
    }
    offsets.push(text.len());
    (unescaped, offsets)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prompt(text: &str) -> StateAnalysis {
        let (frontmatter, body) = crate::syntax::frontmatter::split(text);
        let body_start = text.len() - body.len();
        analyse(StateText { file: "S.md".into(), text: text.into(), body_start, frontmatter })
    }

    fn script(text: &str) -> StateAnalysis {
        analyse(StateText { file: "S.sh".into(), text: text.into(), body_start: 0, frontmatter: None })
    }

    fn targets(analysis: &StateAnalysis) -> Vec<(TagKind, String)> {
        analysis.transitions.iter().map(|transition| (transition.kind, transition.target.clone())).collect()
    }

    #[test]
    fn body_tags_count_in_prose_and_code_but_not_in_comments() {
        let analysis = prompt(
            "Go on with <goto>A</goto>.\n\n```\n<goto>B</goto>\n```\n\n<!-- old: <goto>C</goto> -->\nand <!-- <reset>D</reset> --> `<reset>E</reset>`\n",
        );
        assert_eq!(
            targets(&analysis),
            [(TagKind::Goto, "A".into()), (TagKind::Goto, "B".into()), (TagKind::Reset, "E".into())]
        );
    }

    #[test]
    fn frontmatter_entries_and_body_tags_are_both_transitions() {
        let analysis = prompt(
            "---\nallowed_transitions:\n  - {tag: goto, target: A}\n  - {tag: ask, next: B}\n  - {tag: goot, target: C}\n---\n<goto>A</goto>\n",
        );
        assert_eq!(
            targets(&analysis),
            [(TagKind::Goto, "A".into()), (TagKind::Ask, "B".into()), (TagKind::Goto, "A".into())]
        );
        assert_eq!(analysis.unknown_policy_tags, [(2, "goot".to_string())]);
    }

    #[test]
    fn r5_14_body_tags_of_a_force_implicit_state_are_no_transitions() {
        let forced = prompt(
            "---\nallowed_transitions:\n  - {tag: goto, target: DONE}\nforce_implicit: true\n---\nExamples: <goto>X</goto>, <goto>a/b</goto>, <fork>W</fork>.\n",
        );
        assert_eq!(targets(&forced), [(TagKind::Goto, "DONE".into())]);
        assert!(forced.malformed.is_empty());
        // Not eligible (two entries): ignored at run time, so the body is read as usual.
        let ignored = prompt(
            "---\nallowed_transitions:\n  - {tag: goto, target: A}\n  - {tag: goto, target: B}\nforce_implicit: true\n---\n<goto>X</goto>\n",
        );
        assert_eq!(
            targets(&ignored),
            [(TagKind::Goto, "A".into()), (TagKind::Goto, "B".into()), (TagKind::Goto, "X".into())]
        );
    }

    #[test]
    fn literal_script_tags_are_read_through_escaped_quotes() {
        let analysis = script("#!/bin/bash\necho \"<fork next=\\\"JOIN\\\">WORK</fork>\"\necho '<goto>DONE</goto>'\n");
        assert_eq!(targets(&analysis), [(TagKind::Fork, "WORK".into()), (TagKind::Goto, "DONE".into())]);
        assert_eq!(analysis.transitions[0].attribute("next"), Some("JOIN"));
        assert_eq!(analysis.dynamic, None);
        let Origin::Text { offset, .. } = analysis.transitions[0].origin else { panic!("a text origin") };
        assert_eq!(&analysis.text.text[offset..offset + 5], "<fork");
    }

    #[test]
    fn computed_script_tags_are_dynamic() {
        let analysis = script("echo \"<goto>$NEXT</goto>\"\necho '<result>ok</result>'\n");
        assert_eq!(targets(&analysis), [(TagKind::Result, String::new())]);
        assert_eq!(analysis.dynamic, Some(Dynamic::Computed { offset: 6, source: "<goto>$NEXT</goto>".into() }));
        assert!(matches!(script("echo \"<$TAG>X</$TAG>\"\n").dynamic, Some(Dynamic::Computed { .. })));
        assert_eq!(script("cat decision.txt\n").dynamic, Some(Dynamic::NoLiteralTag));
    }
}
