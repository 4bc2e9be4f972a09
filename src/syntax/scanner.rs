//! Finds the transition tags in a state's output (R4.1–R4.9).
//!
//! The scan reproduces raymond's regex-based parser, quirks included, instead of
//! parsing the output as markup: a workflow that runs under raymond must run
//! unchanged under Baton, and its prompts are written against exactly this
//! behaviour. So tags inside another tag's content count, code fences are not
//! special, `<callback>…</call>` reads as `<call>`, an opener without its closing
//! tag is ignored, and attribute names are ASCII words, which turns
//! `data-item="x"` into `item="x"`.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

use crate::syntax::tag::{Tag, TagKind};
use crate::text::duration::{DurationError, parse_duration};
use crate::text::state_name;

/// R4.1's tag names plus Baton's `join` (`docs/join.md`), in the order of R4.1's
/// alternation `<(call-workflow|…|ask)([^>]*)>`: matching is leftmost-first, so at
/// a `<` the first name that starts there wins (`<callx>` is `<call>` with `x`
/// left over). No other name starts with `join`.
const TAG_NAMES: [&str; 12] = [
    "call-workflow",
    "function-workflow",
    "fork-workflow",
    "reset-workflow",
    "goto",
    "reset",
    "function",
    "call",
    "fork",
    "result",
    "ask",
    "join",
];

/// An opening tag as R4.1's pattern matches it: from its `<` to its `>`.
struct Opening<'a> {
    whole: Range<usize>,
    name: &'a str,
    attributes: &'a str,
}

/// R4.1's opening tags in `text`, left to right, each search resuming after the
/// last match (as a regex's `captures_iter`). Written out rather than compiled from
/// the pattern: compiling it (and `attribute_pairs`' pattern) cost more than the
/// rest of a one-state run's start-up, and every run needs them; the tests check
/// both against the patterns.
fn opening_tags(text: &str) -> impl Iterator<Item = Opening<'_>> {
    let mut from = 0;
    std::iter::from_fn(move || {
        loop {
            let start = from + text.get(from..)?.find('<')?;
            let after = start + 1;
            let rest = text.get(after..)?;
            let Some(name) = TAG_NAMES.into_iter().find(|name| rest.starts_with(name)) else {
                from = after;
                continue;
            };
            let attributes_start = after + name.len();
            // No `>` after this name means none after any later `<` either.
            let end = attributes_start + text.get(attributes_start..)?.find('>')?;
            from = end + 1;
            let attributes = text.get(attributes_start..end)?;
            return Some(Opening { whole: start..end + 1, name, attributes });
        }
    })
}

/// R4.6's `name="value"` or `name='value'` pairs in `text`, as the pattern
/// `([0-9A-Za-z_]+)=(?:"([^"]*)"|'([^']*)')` finds them, left to right:
/// `(whole, name, value)`. raymond's `\w` is ASCII-only in RE2.
fn attribute_pairs(text: &str) -> impl Iterator<Item = (Range<usize>, &str, &str)> {
    let bytes = text.as_bytes();
    let is_word = |byte: &u8| byte.is_ascii_alphanumeric() || *byte == b'_';
    let mut at = 0;
    std::iter::from_fn(move || {
        while at < bytes.len() {
            if !is_word(&bytes[at]) {
                at += 1;
                continue;
            }
            let start = at;
            let name_end = start + bytes[start..].iter().take_while(|byte| is_word(byte)).count();
            // Every start inside this run of word characters ends it at the same
            // place, so fails the same way: the next try is after the run.
            at = name_end;
            let (Some(b'='), Some(&quote @ (b'"' | b'\''))) = (bytes.get(name_end), bytes.get(name_end + 1)) else {
                continue;
            };
            let value_start = name_end + 2;
            let Some(length) = bytes[value_start..].iter().position(|byte| *byte == quote) else {
                continue;
            };
            let value_end = value_start + length;
            at = value_end + 1;
            // Every bound is at an ASCII byte, so a character boundary.
            let (Some(name), Some(value)) = (text.get(start..name_end), text.get(value_start..value_end)) else {
                continue;
            };
            return Some((start..value_end + 1, name, value));
        }
        None
    })
}

/// Attributes that only make sense on an upload bucket (R3.29).
const BUCKET_ATTRIBUTES: [&str; 4] = ["upload_max_count", "upload_max_size", "upload_max_total_size", "upload_mime"];
const BUCKET_LIMITS: [&str; 3] = ["upload_max_count", "upload_max_size", "upload_max_total_size"];

/// A malformed transition tag. Any one of these makes the whole output unusable (R4.8).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum TagParseError {
    #[error("<{tag}> has an empty target")]
    EmptyTarget { tag: TagKind },
    #[error("<{tag}> target `{target}` contains a path separator; targets are bare state names in the same workflow")]
    PathSeparator { tag: TagKind, target: String },
    #[error("<ask> needs a non-empty `next` attribute")]
    MissingAskNext,
    #[error("<ask> `next` value `{next}` contains a path separator")]
    AskNextPathSeparator { next: String },
    #[error("<ask> cannot combine `upload_slots` with `upload_bucket=\"true\"`; pick one upload mode")]
    AskSlotsWithBucket,
    #[error("<ask> attribute `{attribute}` {problem}")]
    InvalidAskAttribute { attribute: &'static str, problem: String },
    #[error("<join> `timeout` {problem}")]
    InvalidJoinTimeout { problem: String },
    /// `timeout` is not a duration `parse_duration` reads, so the ask could never time out.
    #[error("<ask> `timeout` `{value}` {problem}")]
    InvalidAskTimeout { value: String, problem: &'static str },
    #[error(
        "<ask> `timeout_next` value `{next}` contains a path separator; expected a bare state name in the same workflow"
    )]
    AskTimeoutNextPathSeparator { next: String },
}

/// Why an `<ask>` `timeout` that is no duration was refused, with the forms it takes.
const ASK_TIMEOUT_PROBLEM: &str =
    "is not a duration; expected a number of seconds or a duration such as 90s, 30m, 24h or 7d";

/// Every recognised, closed transition tag in `output`, in the order of their
/// opening tags.
pub(crate) fn scan(output: &str) -> Result<Vec<Tag>, TagParseError> {
    scan_each(output).into_iter().map(|found| found.parsed).collect()
}

/// A closed tag found in a text: where it is, from `<` of the opening tag to `>`
/// of the closing one, and what it says, or why it is malformed.
#[derive(Debug)]
pub(crate) struct FoundTag {
    pub(crate) span: Range<usize>,
    pub(crate) kind: TagKind,
    pub(crate) parsed: Result<Tag, TagParseError>,
}

/// Every recognised, closed transition tag in `text` with its place, malformed
/// ones included: [`scan`] stops a run at the first of those, `baton lint`
/// reports each.
pub(crate) fn scan_each(text: &str) -> Vec<FoundTag> {
    let mut found = Vec::new();
    // The first `</name>` found from an earlier opener is still the first one after a
    // later opener if it lies beyond it, and an absent one stays absent; remembering
    // them spares rescanning the rest of the output for every unclosed opener.
    let mut closing_tags: BTreeMap<TagKind, Option<usize>> = BTreeMap::new();
    // `captures_iter` resumes after each opening tag, never after its closing tag,
    // which is what makes nested tags count (R4.4).
    for Opening { whole, name, attributes: attribute_text } in opening_tags(text) {
        let Some(kind) = TagKind::from_name(name) else {
            continue;
        };
        let body_start = whole.end;
        let closing_tag = match closing_tags.get(&kind) {
            Some(&known) if known.is_none_or(|start| start >= body_start) => known,
            _ => {
                let found = text[body_start..].find(&format!("</{name}>")).map(|offset| body_start + offset);
                closing_tags.insert(kind, found);
                found
            }
        };
        let Some(body_end) = closing_tag else {
            continue;
        };
        let Some(content) = text.get(body_start..body_end) else {
            continue;
        };
        let (attributes, ignored) = parse_attributes(attribute_text.trim());
        let parsed = build_tag(kind, content, attributes).map(|mut tag| {
            tag.ignored = ignored;
            tag
        });
        let span = whole.start..body_end + name.len() + 3;
        found.push(FoundTag { span, kind, parsed });
    }
    found
}

/// The quoted `name="value"` attributes of an opening tag, and the words of what
/// is left over (R4.6 ignores them; Baton reports them).
fn parse_attributes(text: &str) -> (BTreeMap<String, String>, Vec<String>) {
    let mut attributes = BTreeMap::new();
    let mut leftover = String::new();
    let mut end_of_last = 0;
    for (whole, name, value) in attribute_pairs(text) {
        leftover.push_str(text.get(end_of_last..whole.start).unwrap_or_default());
        leftover.push(' ');
        end_of_last = whole.end;
        attributes.insert(name.to_owned(), value.to_owned());
    }
    leftover.push_str(text.get(end_of_last..).unwrap_or_default());
    (attributes, leftover.split_whitespace().map(str::to_owned).collect())
}

fn build_tag(kind: TagKind, content: &str, attributes: BTreeMap<String, String>) -> Result<Tag, TagParseError> {
    let (target, payload) = match kind {
        TagKind::Result => (String::new(), Some(content.to_owned())),
        TagKind::Ask => {
            let next = ask_next(&attributes)?;
            validate_ask_timeout(&attributes)?;
            validate_ask_files(&attributes)?;
            (next, Some(content.to_owned()))
        }
        TagKind::Join => {
            validate_join_timeout(&attributes)?;
            (content_target(kind, content)?, None)
        }
        _ => (content_target(kind, content)?, None),
    };
    Ok(Tag { kind, target, attributes, payload, ignored: Vec::new() })
}

fn content_target(kind: TagKind, content: &str) -> Result<String, TagParseError> {
    let target = content.trim();
    if target.is_empty() {
        return Err(TagParseError::EmptyTarget { tag: kind });
    }
    if !kind.is_cross_workflow() && state_name::has_path_separator(target) {
        return Err(TagParseError::PathSeparator { tag: kind, target: target.to_owned() });
    }
    Ok(target.to_owned())
}

/// A join's `timeout` is a duration (`90s`, `10m`, `1h30m`): a malformed one is
/// refused where it is written, not when the join would time out.
fn validate_join_timeout(attributes: &BTreeMap<String, String>) -> Result<(), TagParseError> {
    match attributes.get("timeout") {
        Some(timeout) => parse_duration(timeout)
            .map(drop)
            .map_err(|error| TagParseError::InvalidJoinTimeout { problem: error.to_string() }),
        None => Ok(()),
    }
}

/// R3.28: an ask's `timeout` is a duration and its `timeout_next` a state name. raymond
/// stores both unchecked; Baton enforces the timeout (A11), so a value it could never
/// use is refused where it is written, like a join's (`docs/decisions.md`). An empty
/// value is no value.
pub(crate) fn validate_ask_timeout(attributes: &BTreeMap<String, String>) -> Result<(), TagParseError> {
    if let Some(timeout) = attributes.get("timeout").filter(|timeout| !timeout.is_empty()) {
        let problem = match parse_duration(timeout) {
            Ok(_) => None,
            Err(DurationError::Malformed { .. }) => Some(ASK_TIMEOUT_PROBLEM),
            Err(DurationError::TooLong { .. }) => Some("is too long; expected at most 1 year (365d)"),
        };
        if let Some(problem) = problem {
            return Err(TagParseError::InvalidAskTimeout { value: timeout.clone(), problem });
        }
    }
    match attributes.get("timeout_next") {
        Some(next) if state_name::has_path_separator(next) => {
            Err(TagParseError::AskTimeoutNextPathSeparator { next: next.clone() })
        }
        _ => Ok(()),
    }
}

/// R3.24. Like raymond, only the empty string counts as missing: `next=" "` passes here
/// and fails later, when the state is resolved.
fn ask_next(attributes: &BTreeMap<String, String>) -> Result<String, TagParseError> {
    match attributes.get("next") {
        None => Err(TagParseError::MissingAskNext),
        Some(next) if next.is_empty() => Err(TagParseError::MissingAskNext),
        Some(next) if state_name::has_path_separator(next) => {
            Err(TagParseError::AskNextPathSeparator { next: next.clone() })
        }
        Some(next) => Ok(next.clone()),
    }
}

/// R3.29, checked in raymond's order so that an ask with several problems reports
/// the same one.
fn validate_ask_files(attributes: &BTreeMap<String, String>) -> Result<(), TagParseError> {
    let slots = attributes.get("upload_slots");
    if let Some(slots) = slots {
        validate_slots(slots)?;
    }
    let bucket = match attributes.get("upload_bucket") {
        None => false,
        Some(value) => match value.trim().to_lowercase().as_str() {
            "true" => true,
            "false" => false,
            _ => {
                return Err(invalid("upload_bucket", format!("must be `true` or `false`, found `{value}`")));
            }
        },
    };
    if slots.is_some() && bucket {
        return Err(TagParseError::AskSlotsWithBucket);
    }
    if !bucket
        && let Some(attribute) = BUCKET_ATTRIBUTES.into_iter().find(|attribute| attributes.contains_key(*attribute))
    {
        return Err(invalid(attribute, "requires `upload_bucket=\"true\"`".to_owned()));
    }
    for attribute in BUCKET_LIMITS {
        if let Some(value) = attributes.get(attribute)
            && !matches!(value.trim().parse::<i64>(), Ok(limit) if limit > 0)
        {
            return Err(invalid(attribute, format!("must be a positive integer, found `{value}`")));
        }
    }
    if let Some(mime_types) = attributes.get("upload_mime") {
        validate_mime_types("upload_mime", mime_types, ',')?;
    }
    if let Some(files) = attributes.get("display_files") {
        validate_display_files(files)?;
    }
    Ok(())
}

/// `name[:mime|mime],…`
fn validate_slots(list: &str) -> Result<(), TagParseError> {
    const ATTRIBUTE: &str = "upload_slots";
    if list.trim().is_empty() {
        return Err(invalid(ATTRIBUTE, "must list at least one slot name".to_owned()));
    }
    let mut seen = BTreeSet::new();
    for entry in list.split(',').map(str::trim) {
        if entry.is_empty() {
            return Err(invalid(ATTRIBUTE, "has an empty slot name".to_owned()));
        }
        let name = match entry.split_once(':') {
            Some((name, mime_types)) => {
                validate_mime_types(ATTRIBUTE, mime_types, '|')?;
                name.trim()
            }
            None => entry,
        };
        if name.is_empty() {
            return Err(invalid(ATTRIBUTE, "has an empty slot name".to_owned()));
        }
        validate_file_name(ATTRIBUTE, "slot name", name)?;
        if !seen.insert(name) {
            return Err(invalid(ATTRIBUTE, format!("lists slot name `{name}` twice")));
        }
    }
    Ok(())
}

/// `src[:label],…`; sources are relative to the task folder.
fn validate_display_files(list: &str) -> Result<(), TagParseError> {
    const ATTRIBUTE: &str = "display_files";
    if list.trim().is_empty() {
        return Err(invalid(ATTRIBUTE, "must list at least one file".to_owned()));
    }
    for entry in list.split(',').map(str::trim) {
        if entry.is_empty() {
            return Err(invalid(ATTRIBUTE, "has an empty entry".to_owned()));
        }
        let (source, label) = match entry.split_once(':') {
            Some((source, label)) => (source.trim(), label.trim()),
            None => (entry, ""),
        };
        if source.is_empty() {
            return Err(invalid(ATTRIBUTE, "has an empty source path".to_owned()));
        }
        if has_control_character(source) {
            return Err(invalid(
                ATTRIBUTE,
                format!("has source path `{}` with a control character", source.escape_debug()),
            ));
        }
        if source.starts_with(['/', '\\']) {
            return Err(invalid(
                ATTRIBUTE,
                format!("has absolute source path `{source}`; sources are relative to the task folder"),
            ));
        }
        if source.split(['/', '\\']).any(|segment| segment == "..") {
            return Err(invalid(ATTRIBUTE, format!("has source path `{source}` with a `..` segment")));
        }
        if !label.is_empty() {
            validate_file_name(ATTRIBUTE, "display name", label)?;
        }
    }
    Ok(())
}

/// Slot names and display labels become file names, so they must be plain, visible ones.
fn validate_file_name(attribute: &'static str, what: &str, name: &str) -> Result<(), TagParseError> {
    let problem = if has_control_character(name) {
        format!("has {what} `{}` with a control character", name.escape_debug())
    } else if state_name::has_path_separator(name) {
        format!("has {what} `{name}` with a path separator")
    } else if name.starts_with('.') {
        format!("has {what} `{name}` with a leading dot")
    } else {
        return Ok(());
    };
    Err(invalid(attribute, problem))
}

fn validate_mime_types(attribute: &'static str, list: &str, separator: char) -> Result<(), TagParseError> {
    if list.split(separator).any(|mime_type| mime_type.trim().is_empty()) {
        return Err(invalid(attribute, "has an empty MIME type".to_owned()));
    }
    Ok(())
}

/// NUL included; the same set as raymond's check (C0 controls and DEL).
fn has_control_character(text: &str) -> bool {
    text.chars().any(|c| c < ' ' || c == '\u{7f}')
}

fn invalid(attribute: &'static str, problem: String) -> TagParseError {
    TagParseError::InvalidAskAttribute { attribute, problem }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::print_extractor::extract_prints;
    use proptest::prelude::*;

    /// R4.1's and R4.6's patterns, which `opening_tags` and `attribute_pairs` stand for.
    fn patterns() -> (regex::Regex, regex::Regex) {
        let opening = regex::Regex::new(&format!("<({})([^>]*)>", TAG_NAMES.join("|"))).expect("valid");
        let attribute = regex::Regex::new(r#"([0-9A-Za-z_]+)=(?:"([^"]*)"|'([^']*)')"#).expect("valid");
        (opening, attribute)
    }

    /// Each match: where it is, and its two groups (name and attributes, or name and value).
    type Matches = Vec<(Range<usize>, String, String)>;

    fn by_pattern(text: &str) -> (Matches, Matches) {
        let (opening, attribute) = patterns();
        let openings = opening
            .captures_iter(text)
            .map(|found| (found.get_match().range(), found[1].to_string(), found[2].to_string()))
            .collect();
        let pairs = attribute
            .captures_iter(text)
            .map(|found| {
                let value = found.get(2).or_else(|| found.get(3)).map_or("", |value| value.as_str());
                (found.get_match().range(), found[1].to_string(), value.to_string())
            })
            .collect();
        (openings, pairs)
    }

    fn by_hand(text: &str) -> (Matches, Matches) {
        let openings = opening_tags(text)
            .map(|found| (found.whole, found.name.to_string(), found.attributes.to_string()))
            .collect();
        let pairs =
            attribute_pairs(text).map(|(whole, name, value)| (whole, name.to_string(), value.to_string())).collect();
        (openings, pairs)
    }

    #[test]
    fn r4_1_r4_6_the_written_out_scanners_match_the_patterns_on_their_quirks() {
        for text in [
            "<callx>",
            "<call-workflow a=\"1\">",
            "<<goto>>",
            "<goto",
            "<goto x='y' z=\"w>",
            "a=\"b\" c='d' e=f g=\"h",
            "data-item=\"x\"",
            "é=\"ü\" <fork ñ='ç'>x</fork>",
            "<result>\n<ask next=\"B\">\n</result>",
            "ab=cd=\"e\"",
        ] {
            assert_eq!(by_hand(text), by_pattern(text), "{text:?}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]
        #[test]
        fn r4_1_r4_6_the_written_out_scanners_match_the_patterns(
            text in r#"(<|>|/|=|"|'| |\n|a|_|é|call|goto|fork|-workflow|result|ask|join|reset|function|x=|'v'|"v")*"#
        ) {
            prop_assert_eq!(by_hand(&text), by_pattern(&text));
        }
    }

    fn one(output: &str) -> Tag {
        let tags = scan(output).expect("output parses");
        assert_eq!(tags.len(), 1, "expected one tag in {output:?}, got {tags:?}");
        tags.into_iter().next().expect("one tag")
    }

    fn error(output: &str) -> String {
        scan(output).expect_err("output is rejected").to_string()
    }

    fn attributes(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(name, value)| (name.to_string(), value.to_string())).collect()
    }

    #[test]
    fn r4_1_every_tag_name_is_recognised() {
        for kind in TagKind::ALL {
            let name = kind.name();
            let output = format!(r#"<{name} next="N">T</{name}>"#);
            let tag = one(&output);
            assert_eq!(tag.kind, kind, "{output}");
        }
    }

    #[test]
    fn join_takes_its_target_from_its_content_and_a_checked_timeout() {
        let tag = one(r#"<join timeout="1h30m"> AGG </join>"#);
        assert_eq!((tag.kind, tag.target.as_str()), (TagKind::Join, "AGG"));
        assert_eq!(tag.attributes, attributes(&[("timeout", "1h30m")]));
        assert_eq!(
            error(r#"<join timeout="soon">AGG</join>"#),
            "<join> `timeout` expected a duration such as 90m, 2h, 1h30m or 45s, found `soon`"
        );
        assert_eq!(error("<join></join>"), "<join> has an empty target");
        assert_eq!(error("<join>a/B</join>").split(';').next(), Some("<join> target `a/B` contains a path separator"));
        // raymond's other tags are untouched: `<joined>` without `</join>` is no tag.
        assert_eq!(scan("<joined> the workers"), Ok(vec![]));
    }

    #[test]
    fn r4_1_tag_names_are_case_sensitive() {
        assert_eq!(scan("<GOTO>X</GOTO> <Goto>Y</Goto>"), Ok(vec![]));
    }

    #[test]
    fn r4_1_workflow_tags_are_not_taken_for_their_prefix() {
        let tag = one(r#"<call-workflow return="R">../w/</call-workflow>"#);
        assert_eq!(tag.kind, TagKind::CallWorkflow);
        assert_eq!(tag.target, "../w/");
        assert_eq!(tag.attribute("return"), Some("R"));
    }

    #[test]
    fn r4_1_tags_come_in_opening_order_with_attributes() {
        let tags = scan(r#"a <goto input="i">A</goto> b <reset cd="sub">B</reset>"#).expect("output parses");
        let summary: Vec<_> = tags.iter().map(|tag| (tag.kind, tag.target.as_str(), tag.attributes.clone())).collect();
        assert_eq!(
            summary,
            [(TagKind::Goto, "A", attributes(&[("input", "i")])), (TagKind::Reset, "B", attributes(&[("cd", "sub")])),]
        );
    }

    #[test]
    fn r4_2_callback_matches_call_only_when_closed() {
        assert_eq!(scan("<callback>X</callback>"), Ok(vec![]));
        let tag = one("<callback>X</call>");
        assert_eq!((tag.kind, tag.target.as_str()), (TagKind::Call, "X"));
        assert!(tag.attributes.is_empty());
    }

    #[test]
    fn r4_2_results_matches_result() {
        let tag = one("<results>ok</result>");
        assert_eq!(tag.kind, TagKind::Result);
        assert_eq!(tag.payload.as_deref(), Some("ok"));
    }

    #[test]
    fn r4_3_unclosed_opener_skipped() {
        let tags = scan("<goto>A.md</goto> then <goto>B.md").expect("output parses");
        assert_eq!(tags.len(), 1);
        assert_eq!(tags[0].target, "A.md");
    }

    #[test]
    fn r4_3_first_closing_tag_ends_the_content() {
        assert_eq!(one("<goto>A</goto>B</goto>").target, "A");
        let tags = scan("<result>a<result>b</result>c</result>").expect("output parses");
        let payloads: Vec<_> = tags.iter().map(|tag| tag.payload.as_deref()).collect();
        assert_eq!(payloads, [Some("a<result>b"), Some("b")]);
    }

    #[test]
    fn r4_3_each_opener_finds_its_own_closing_tag() {
        let tags = scan("<goto>A</goto> <goto>B</goto> <goto>C").expect("output parses");
        let targets: Vec<_> = tags.iter().map(|tag| tag.target.as_str()).collect();
        assert_eq!(targets, ["A", "B"]);
    }

    #[test]
    fn r4_3_closing_tag_must_match_the_name() {
        assert_eq!(scan("<goto>A</reset>"), Ok(vec![]));
        assert_eq!(scan("<reset>B</Reset> </goto>"), Ok(vec![]));
    }

    #[test]
    fn r4_4_inner_tags_are_counted() {
        let tags = scan("<result>see <goto>X</goto></result>").expect("output parses");
        assert_eq!(tags.len(), 2);
        assert_eq!(tags[0].kind, TagKind::Result);
        assert_eq!(tags[0].payload.as_deref(), Some("see <goto>X</goto>"));
        assert_eq!((tags[1].kind, tags[1].target.as_str()), (TagKind::Goto, "X"));
    }

    #[test]
    fn r4_5_tag_in_code_fence_counts() {
        let tag = one("Example:\n```\n<goto>X.md</goto>\n```\nand `<call` is not one.");
        assert_eq!((tag.kind, tag.target.as_str()), (TagKind::Goto, "X.md"));
    }

    #[test]
    fn r4_6_single_quotes_accepted() {
        assert_eq!(one("<fork next='N.md'>W</fork>").attribute("next"), Some("N.md"));
    }

    #[test]
    fn r4_6_spaces_around_equals_ignored() {
        assert!(one(r#"<fork next = "N.md">W</fork>"#).attributes.is_empty());
    }

    #[test]
    fn r4_6_mismatched_quotes_ignored() {
        assert!(one(r#"<fork next="N.md' item=x>W</fork>"#).attributes.is_empty());
    }

    #[test]
    fn r4_6_duplicate_key_last_wins() {
        let tag = one(r#"<fork next="A" item='x' next='B'>W</fork>"#);
        assert_eq!(tag.attributes, attributes(&[("item", "x"), ("next", "B")]));
    }

    #[test]
    fn r4_6_empty_value_is_kept() {
        assert_eq!(one(r#"<goto input="">X</goto>"#).attribute("input"), Some(""));
        assert_eq!(one("<goto input=''>X</goto>").attribute("input"), Some(""));
    }

    #[test]
    fn r4_6_attribute_names_are_ascii_words() {
        let tag = one(r#"<goto näme="x">X</goto>"#);
        assert_eq!(tag.attributes, attributes(&[("me", "x")]));
    }

    #[test]
    fn r4_6_values_are_not_unescaped() {
        let tag = one(r#"<goto input="a &amp; \"b">X</goto>"#);
        assert_eq!(tag.attribute("input"), Some(r"a &amp; \"));
    }

    #[test]
    fn r4_6_greater_than_ends_the_opening_tag() {
        let tag = one(r#"<goto input="a>b">X</goto>"#);
        assert!(tag.attributes.is_empty());
        assert_eq!(tag.target, r#"b">X"#);
    }

    #[test]
    fn data_item_quirk() {
        let tag = one(r#"<fork next="N.md" data-item="x">W.md</fork>"#);
        assert_eq!(tag.attributes, attributes(&[("item", "x"), ("next", "N.md")]));
    }

    #[test]
    fn r4_7_target_is_trimmed() {
        let tag = one("<goto>\n  REVIEW.md \t</goto>");
        assert_eq!(tag.target, "REVIEW.md");
        assert_eq!(tag.payload, None);
    }

    #[test]
    fn r4_7_empty_target() {
        assert_eq!(error("<goto>   </goto>"), "<goto> has an empty target");
        assert_eq!(error("<fork-workflow></fork-workflow>"), "<fork-workflow> has an empty target");
    }

    #[test]
    fn r4_7_path_separator() {
        assert_eq!(
            error("<goto>sub/X.md</goto>"),
            "<goto> target `sub/X.md` contains a path separator; targets are bare state names in the same workflow"
        );
        assert_eq!(
            error(r"<call return='R'>..\X</call>"),
            r"<call> target `..\X` contains a path separator; targets are bare state names in the same workflow"
        );
    }

    #[test]
    fn r4_7_workflow_tags_accept_paths() {
        for name in ["call-workflow", "function-workflow", "fork-workflow", "reset-workflow"] {
            let tag = one(&format!(r"<{name}> ../lib/w.zip\ENTRY </{name}>"));
            assert_eq!(tag.target, r"../lib/w.zip\ENTRY", "{name}");
        }
    }

    #[test]
    fn r4_7_result_payload_untrimmed() {
        let tag = one("<result>\n YES \n</result>");
        assert_eq!(tag.target, "");
        assert_eq!(tag.payload.as_deref(), Some("\n YES \n"));
        assert_eq!(one("<result></result>").payload.as_deref(), Some(""));
    }

    #[test]
    fn r4_8_an_error_aborts_the_whole_scan() {
        assert_eq!(
            scan("<goto>A</goto> <goto>a/b</goto> <goto>C</goto>"),
            Err(TagParseError::PathSeparator { tag: TagKind::Goto, target: "a/b".to_owned() })
        );
        assert_eq!(scan("<goto>A</goto><reset> </reset>"), Err(TagParseError::EmptyTarget { tag: TagKind::Reset }));
    }

    #[test]
    fn r4_9_text_and_unknown_tags_are_ignored() {
        assert_eq!(scan("<div>x</div> <print>y</print> <go to>z</go to> plain < goto>X</goto>"), Ok(vec![]));
    }

    #[test]
    fn handles_multibyte_text_around_and_inside_tags() {
        let tag = one("日本語 <goto>é☃.md</goto> 🎉 <goto>未閉");
        assert_eq!(tag.target, "é☃.md");
    }

    #[test]
    fn r3_24_ask_target_is_next_and_payload_is_raw() {
        let tag = one(r#"<ask next="N.md" timeout="30m"> Approve? </ask>"#);
        assert_eq!(tag.target, "N.md");
        assert_eq!(tag.payload.as_deref(), Some(" Approve? "));
        assert_eq!(tag.attribute("timeout"), Some("30m"));
    }

    #[test]
    fn r3_24_ask_next_missing_or_empty() {
        let message = "<ask> needs a non-empty `next` attribute";
        assert_eq!(error("<ask>Q?</ask>"), message);
        assert_eq!(error(r#"<ask next="">Q?</ask>"#), message);
        assert_eq!(error("<ask next=N>Q?</ask>"), message);
    }

    #[test]
    fn r3_24_ask_next_path_separator() {
        assert_eq!(error(r#"<ask next="a/b">Q?</ask>"#), "<ask> `next` value `a/b` contains a path separator");
        assert_eq!(error(r#"<ask next="..\b">Q?</ask>"#), r"<ask> `next` value `..\b` contains a path separator");
    }

    #[test]
    fn r3_24_ask_content_may_be_empty() {
        assert_eq!(one(r#"<ask next="N"></ask>"#).payload.as_deref(), Some(""));
    }

    fn ask_error(file_attributes: &str) -> String {
        error(&format!(r#"<ask next="N" {file_attributes}>Q?</ask>"#))
    }

    #[test]
    fn r3_28_an_ask_timeout_is_a_duration_and_timeout_next_a_state_name() {
        for timeout in ["90", "1.5", "90s", "30m", "24h", "7d", "1h30m", ""] {
            assert_eq!(one(&format!(r#"<ask next="N" timeout="{timeout}">Q?</ask>"#)).target, "N", "{timeout}");
        }
        let expected = "expected a number of seconds or a duration such as 90s, 30m, 24h or 7d";
        assert_eq!(ask_error(r#"timeout="banana""#), format!("<ask> `timeout` `banana` is not a duration; {expected}"));
        assert_eq!(ask_error(r#"timeout="0""#), format!("<ask> `timeout` `0` is not a duration; {expected}"));
        assert_eq!(ask_error(r#"timeout="-5m""#), format!("<ask> `timeout` `-5m` is not a duration; {expected}"));
        assert_eq!(
            ask_error(r#"timeout="400d""#),
            "<ask> `timeout` `400d` is too long; expected at most 1 year (365d)"
        );
        assert_eq!(
            ask_error(r#"timeout="1h" timeout_next="../LATE""#),
            "<ask> `timeout_next` value `../LATE` contains a path separator; expected a bare state name in the same \
             workflow"
        );
    }

    #[test]
    fn r3_29_valid_file_attributes_are_accepted() {
        for file_attributes in [
            r#"upload_slots="resume.pdf:application/pdf, cover.pdf:APPLICATION/PDF|text/plain,notes""#,
            r#"upload_bucket="TRUE" upload_max_count="5" upload_max_size="+10485760" upload_max_total_size=" 52428800 " upload_mime="image/png, image/jpeg""#,
            r#"upload_bucket="false" display_files="out/report.pdf:Final Report, chart.png""#,
        ] {
            let output = format!(r#"<ask next="N" {file_attributes}>Q?</ask>"#);
            assert_eq!(one(&output).target, "N", "{file_attributes}");
        }
    }

    #[test]
    fn r3_29_bucket_limits_must_be_positive_integers() {
        assert_eq!(
            ask_error(r#"upload_bucket="true" upload_max_count="abc""#),
            "<ask> attribute `upload_max_count` must be a positive integer, found `abc`"
        );
        assert_eq!(
            ask_error(r#"upload_bucket="true" upload_max_size="0""#),
            "<ask> attribute `upload_max_size` must be a positive integer, found `0`"
        );
        assert_eq!(
            ask_error(r#"upload_bucket="true" upload_max_total_size="-5""#),
            "<ask> attribute `upload_max_total_size` must be a positive integer, found `-5`"
        );
    }

    #[test]
    fn r3_29_bucket_attributes_require_a_bucket() {
        assert_eq!(
            ask_error(r#"upload_mime="image/png""#),
            "<ask> attribute `upload_mime` requires `upload_bucket=\"true\"`"
        );
        assert_eq!(
            ask_error(r#"upload_bucket="false" upload_max_count="3""#),
            "<ask> attribute `upload_max_count` requires `upload_bucket=\"true\"`"
        );
    }

    #[test]
    fn r3_29_bucket_flag_is_true_or_false() {
        assert_eq!(
            ask_error(r#"upload_bucket="yes""#),
            "<ask> attribute `upload_bucket` must be `true` or `false`, found `yes`"
        );
    }

    #[test]
    fn r3_29_slots_and_bucket_are_exclusive() {
        assert_eq!(
            ask_error(r#"upload_slots="a" upload_bucket="true""#),
            "<ask> cannot combine `upload_slots` with `upload_bucket=\"true\"`; pick one upload mode"
        );
    }

    #[test]
    fn r3_29_slot_names_are_checked() {
        let cases = [
            (r#"upload_slots=" ""#, "must list at least one slot name"),
            (r#"upload_slots="a,,b""#, "has an empty slot name"),
            (r#"upload_slots=":text/plain""#, "has an empty slot name"),
            (r#"upload_slots="a/b""#, "has slot name `a/b` with a path separator"),
            (r#"upload_slots="a\b""#, r"has slot name `a\b` with a path separator"),
            (r#"upload_slots=".env""#, "has slot name `.env` with a leading dot"),
            ("upload_slots=\"a\u{1}b\"", r"has slot name `a\u{1}b` with a control character"),
            (r#"upload_slots="a,b,a""#, "lists slot name `a` twice"),
            (r#"upload_slots="a:text/plain|""#, "has an empty MIME type"),
        ];
        for (file_attributes, problem) in cases {
            assert_eq!(ask_error(file_attributes), format!("<ask> attribute `upload_slots` {problem}"));
        }
    }

    #[test]
    fn r3_29_bucket_mime_list_is_checked() {
        assert_eq!(
            ask_error(r#"upload_bucket="true" upload_mime="image/png,""#),
            "<ask> attribute `upload_mime` has an empty MIME type"
        );
    }

    #[test]
    fn r3_29_display_files_are_checked() {
        let cases = [
            (r#"display_files="""#, "must list at least one file"),
            (r#"display_files="a.txt, ""#, "has an empty entry"),
            (r#"display_files=":Label""#, "has an empty source path"),
            (
                r#"display_files="/etc/passwd""#,
                "has absolute source path `/etc/passwd`; sources are relative to the task folder",
            ),
            (r#"display_files="out/../../x""#, "has source path `out/../../x` with a `..` segment"),
            (r#"display_files="a.txt:x/y""#, "has display name `x/y` with a path separator"),
            (r#"display_files="a.txt:.hidden""#, "has display name `.hidden` with a leading dot"),
        ];
        for (file_attributes, problem) in cases {
            assert_eq!(ask_error(file_attributes), format!("<ask> attribute `display_files` {problem}"));
        }
    }

    #[test]
    fn r3_29_file_attributes_are_only_checked_on_ask() {
        assert_eq!(one(r#"<goto upload_max_count="x">X</goto>"#).target, "X");
    }

    #[test]
    fn r3_50_tag_inside_print_counts() {
        let output = "<print>hi <goto>X.md</goto></print>";
        let tag = one(output);
        assert_eq!((tag.kind, tag.target.as_str()), (TagKind::Goto, "X.md"));
        assert_eq!(extract_prints(output), ["hi <goto>X.md</goto>"]);
    }

    const FRAGMENTS: &[&str] = &[
        "<goto",
        "</goto>",
        "<result",
        "</result>",
        "<ask",
        "</ask>",
        "<call",
        "back",
        "</call>",
        "<fork-workflow",
        "</fork-workflow>",
        "<print>",
        "</print>",
        "<",
        ">",
        "/",
        "\\",
        "\"",
        "'",
        "=",
        " ",
        "\n",
        "next",
        "upload_slots",
        "upload_bucket",
        "true",
        "display_files",
        "..",
        ":",
        ",",
        "|",
        ".",
        "X.md",
        "é",
        "日本",
        "🎉",
        "\u{0}",
        "\u{1}",
    ];

    proptest! {
        #[test]
        fn scan_never_panics(output in any::<String>()) {
            let _ = scan(&output);
        }

        #[test]
        fn scanned_tags_satisfy_r4_7(output in crate::syntax::fragment_soup(FRAGMENTS)) {
            let Ok(tags) = scan(&output) else { return Ok(()) };
            for tag in tags {
                match tag.kind {
                    TagKind::Result => prop_assert!(tag.target.is_empty() && tag.payload.is_some()),
                    TagKind::Ask => {
                        prop_assert!(!tag.target.is_empty() && tag.payload.is_some());
                        prop_assert!(!state_name::has_path_separator(&tag.target));
                    }
                    kind => {
                        prop_assert!(tag.payload.is_none());
                        prop_assert_eq!(tag.target.trim(), tag.target.as_str());
                        prop_assert!(!tag.target.is_empty());
                        prop_assert!(kind.is_cross_workflow() || !state_name::has_path_separator(&tag.target));
                    }
                }
            }
        }
    }
}
