//! The YAML frontmatter of a markdown state (R5.1–R5.6).
//!
//! A prompt file may open with a `---` block that carries the state's transition
//! policy, its model and effort, and `force_implicit`. Authors write these files
//! for raymond, so the block is found with raymond's exact pattern (lazy, closing
//! `---` line must end with a newline, CRLF normalised first): a file that raymond
//! reads as "all body" must be all body here too, or the prompt sent to Claude
//! would change.
//!
//! The YAML itself is parsed by `gray_matter`'s YAML engine into a loosely typed
//! [`Pod`], and then checked against the schema by hand. Checking by hand is what
//! lets an error say *which* key was wrong and what was found there, instead of a
//! generic "cannot deserialize". Every schema error is an "Invalid YAML
//! frontmatter" error (R5.3); the executor pauses the agent with a
//! `PromptFileError`. This module parses text it is given; reading a state's
//! file, wherever it lives, is `workflow::state_file`'s.
//!
//! Scalars inside `allowed_transitions` entries become strings, as raymond's
//! `map[string]string` does. One difference is inherent to the YAML library: a
//! number is turned back into text from its value, so `1.50` reads as `1.5` and
//! `0x1F` as `31`. Quoting the value keeps its exact text.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use gray_matter::Pod;
use gray_matter::engine::{Engine, YAML};
use regex::Regex;

use crate::syntax::policy::{Policy, PolicyEntry};
use crate::syntax::yaml_limits::{self, YamlLimitError};
use crate::text::excerpt::Excerpt;

/// yaml-rust2 names a duplicated key by its Rust debug form: `String("model"): duplicated key in mapping …`.
static DUPLICATE_KEY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"^\w+\("?(.*?)"?\): duplicated key in mapping(.*)$"#).expect("the duplicate-key pattern is valid")
});

/// The deepest structural indentation accepted, in columns (spaces plus `- `, `? `
/// and `: ` indicators at the start of a line). The YAML library converts and drops
/// documents recursively, so a document nested thousands of levels deep (a few
/// kilobytes of `- - - …`) would overflow the stack and abort the process; this
/// bound keeps nesting far below that, and far above any real frontmatter. Flow
/// collections (`[[[…`) are bounded separately by the YAML scanner (255 levels).
const MAX_INDENT_COLUMNS: usize = 256;

/// Longest excerpt of an offending string value quoted in an error message.
const MAX_QUOTED_CHARS: usize = 60;

/// Splits a prompt file into its frontmatter YAML (if any) and its body (R5.1, R5.2).
///
/// CRLF is normalised to LF first, in both parts. `---\n---\n` gives no YAML and
/// the body after it. Without a match the whole (normalised) text is the body,
/// including a malformed `---` block.
pub(crate) fn split(text: &str) -> (Option<String>, String) {
    let text = text.replace("\r\n", "\n");
    let Some(yaml_start) = fence_line_end(&text, 0) else { return (None, text) };
    // R5.1's `(?s)^---[ \t]*\n(.+?)\n---[ \t]*\n`: the first closing fence line
    // after at least one character of YAML. A newline is never inside a
    // multi-byte character, so searching from the next byte finds what the
    // pattern's lazy `.+?` finds.
    let bytes = text.as_bytes();
    let mut from = yaml_start + 1;
    while let Some(offset) = bytes.get(from..).and_then(|rest| rest.iter().position(|byte| *byte == b'\n')) {
        let newline = from + offset;
        if let Some(body_start) = fence_line_end(&text, newline + 1) {
            return (Some(text[yaml_start..newline].to_string()), text[body_start..].to_string());
        }
        from = newline + 1;
    }
    // R5.2: `---` directly followed by `---`.
    if let Some(body_start) = fence_line_end(&text, yaml_start) {
        return (None, text[body_start..].to_string());
    }
    (None, text)
}

/// Where the line after a fence line (`---`, then spaces or tabs, then a
/// newline) starting at byte `at` begins; `None` when no fence line starts there.
/// Found by hand rather than by a regex: building the pattern's automaton cost
/// more than the rest of a small workflow's lint at every start.
fn fence_line_end(text: &str, at: usize) -> Option<usize> {
    let rest = text.as_bytes().get(at..)?.strip_prefix(b"---")?;
    let blanks = rest.iter().take_while(|byte| matches!(byte, b' ' | b'\t')).count();
    (rest.get(blanks) == Some(&b'\n')).then_some(at + 3 + blanks + 1)
}

/// What a state's frontmatter says, after validation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct StateFrontmatter {
    /// `Some` when the frontmatter has an `allowed_transitions` key (even an empty
    /// list, which allows everything, R5.7); `None` when it has none.
    pub(crate) policy: Option<Policy>,
    /// Trimmed and lowercased; `None` when absent or empty (R5.21).
    pub(crate) model: Option<String>,
    /// Trimmed and lowercased; `None` when absent or empty (R5.22).
    pub(crate) effort: Option<String>,
    /// R5.14. Whether it applies also depends on the policy (R5.15); this is only what was written.
    pub(crate) force_implicit: bool,
    /// `backend`: the agent CLI the state runs on, trimmed and lowercased as
    /// written; the markdown executor and lint check the name.
    pub(crate) backend: Option<String>,
    /// Every other key, for the state's backend to read (`backend::options`):
    /// its options (`permission_mode`, `tools`, …), another backend's, or keys no
    /// backend knows (R5.5's unknown fields).
    pub(crate) options: BTreeMap<String, serde_json::Value>,
    /// `isolation`: what the state's forks get when they say nothing
    /// (`docs/isolation.md`); `worktree` or `none`.
    pub(crate) isolation: Option<String>,
}

impl StateFrontmatter {
    /// R5.14–R5.15: `force_implicit: true` applies — the policy's single entry can be
    /// taken implicitly — so the turn's output is never parsed, and the tags the
    /// prompt's body shows are not transitions. Written but not eligible, it is
    /// ignored and the output is parsed as usual.
    pub(crate) fn forces_implicit(&self) -> bool {
        self.force_implicit && self.policy.as_ref().is_some_and(Policy::can_use_implicit)
    }
}

/// Why a frontmatter block was refused (R5.3). Every message starts with
/// "Invalid YAML frontmatter: ".
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum FrontmatterError {
    /// The block is not valid YAML; `message` is the YAML parser's own text.
    #[error("Invalid YAML frontmatter: {message}")]
    Syntax { message: String },
    /// A line is indented or nested deeper than [`MAX_INDENT_COLUMNS`]. `line` counts from 1 within the block.
    #[error(
        "Invalid YAML frontmatter: line {line} of the frontmatter is nested or indented deeper than {MAX_INDENT_COLUMNS} columns"
    )]
    TooDeep { line: usize },
    /// The block is over a bound of `yaml_limits` (size, aliases, nesting); lines count within the block.
    #[error("Invalid YAML frontmatter: {0}")]
    Limit(YamlLimitError),
    /// The document is a list or a single value instead of `key: value` lines.
    #[error("Invalid YAML frontmatter: expected `key: value` fields at the top level, found {found}")]
    NotMapping { found: String },
    /// `allowed_transitions` is not a list.
    #[error(
        "Invalid YAML frontmatter: `allowed_transitions` must be a list of entries such as `- tag: goto`, found {found}"
    )]
    TransitionsNotList { found: String },
    /// One item of `allowed_transitions` is not a mapping. `entry` counts from 1.
    #[error(
        "Invalid YAML frontmatter: `allowed_transitions` entry {entry} must be a mapping such as `tag: goto`, found {found}"
    )]
    EntryNotMapping { entry: usize, found: String },
    /// A value inside an entry is a list or a mapping. `entry` counts from 1.
    #[error(
        "Invalid YAML frontmatter: `allowed_transitions` entry {entry}, key `{key}`: expected a single value (text, number or true/false), found {found}"
    )]
    EntryValueNotScalar { entry: usize, key: String, found: String },
    /// `model` or `effort` is a list or a mapping.
    #[error("Invalid YAML frontmatter: `{key}` must be a single value such as `{}`, found {found}", field_example(.key))]
    FieldNotScalar { key: &'static str, found: String },
    /// `force_implicit` is not a boolean.
    #[error("Invalid YAML frontmatter: `force_implicit` must be true or false, found {found}")]
    ForceImplicitNotBool { found: String },
    /// A field has the wrong type or value.
    #[error("Invalid YAML frontmatter: `{key}` must be {expected}, found {found}")]
    WrongType { key: &'static str, expected: &'static str, found: String },
}

/// Parses and validates the YAML of a frontmatter block (R5.2–R5.6).
///
/// Whitespace-only YAML, `null` and `{}` give the default (no policy).
pub(crate) fn parse_frontmatter(yaml: &str) -> Result<StateFrontmatter, FrontmatterError> {
    if yaml.trim().is_empty() {
        return Ok(StateFrontmatter::default());
    }
    if let Some(index) = yaml.lines().position(|line| structural_indent(line) > MAX_INDENT_COLUMNS) {
        return Err(FrontmatterError::TooDeep { line: index + 1 });
    }
    yaml_limits::check(yaml).map_err(FrontmatterError::Limit)?;
    let document = YAML::parse(yaml).map_err(|error| FrontmatterError::Syntax { message: yaml_error_text(error) })?;
    let fields = match document {
        Pod::Null => return Ok(StateFrontmatter::default()),
        Pod::Hash(fields) => fields,
        other => return Err(FrontmatterError::NotMapping { found: describe(&other) }),
    };

    let mut frontmatter = StateFrontmatter::default();
    // The engine hands back a HashMap; sorting keeps errors and unknown fields deterministic.
    let fields: BTreeMap<String, Pod> = fields.into_iter().collect();
    for (key, value) in fields {
        match key.as_str() {
            "allowed_transitions" => frontmatter.policy = parse_policy(value)?,
            "model" => frontmatter.model = normalised_choice("model", value)?,
            "backend" => frontmatter.backend = normalised_choice("backend", value)?,
            "effort" => frontmatter.effort = normalised_choice("effort", value)?,
            "isolation" => {
                frontmatter.isolation = match normalised_choice("isolation", value)?.as_deref() {
                    None => None,
                    Some(choice @ ("worktree" | "none")) => Some(choice.to_string()),
                    Some(other) => {
                        return Err(FrontmatterError::WrongType {
                            key: "isolation",
                            expected: "`worktree` or `none`",
                            found: format!("`{other}`"),
                        });
                    }
                }
            }
            "force_implicit" => {
                frontmatter.force_implicit = match value {
                    Pod::Boolean(flag) => flag,
                    Pod::Null => false,
                    other => return Err(FrontmatterError::ForceImplicitNotBool { found: describe(&other) }),
                }
            }
            _ => {
                frontmatter.options.insert(key, json_of(&value));
            }
        }
    }
    Ok(frontmatter)
}

/// The columns taken at the start of `line` by blanks and by block indicators (`-`, `?`,
/// `:` followed by a blank or the end of the line): an upper bound on how deeply the line
/// can nest block collections.
fn structural_indent(line: &str) -> usize {
    let bytes = line.as_bytes();
    let mut columns = 0;
    loop {
        match bytes.get(columns) {
            Some(b' ' | b'\t') => columns += 1,
            Some(b'-' | b'?' | b':') if matches!(bytes.get(columns + 1), None | Some(b' ' | b'\t')) => columns += 1,
            _ => return columns,
        }
    }
}

/// `allowed_transitions`: a list of mappings of scalars. `null` counts as an empty list.
fn parse_policy(value: Pod) -> Result<Option<Policy>, FrontmatterError> {
    let items = match value {
        Pod::Null => return Ok(None),
        Pod::Array(items) => items,
        other => return Err(FrontmatterError::TransitionsNotList { found: describe(&other) }),
    };
    let mut entries = Vec::new();
    for (index, item) in items.into_iter().enumerate() {
        let entry_number = index + 1;
        let map = match item {
            // `- ` with nothing after it: no `tag`, so it is dropped like any tagless entry.
            Pod::Null => continue,
            Pod::Hash(map) => map,
            other => return Err(FrontmatterError::EntryNotMapping { entry: entry_number, found: describe(&other) }),
        };
        let mut entry = BTreeMap::new();
        for (key, value) in map {
            let Some(text) = scalar_text(&value) else {
                return Err(FrontmatterError::EntryValueNotScalar {
                    entry: entry_number,
                    key,
                    found: describe(&value),
                });
            };
            entry.insert(key, text);
        }
        // R5.2: entries without `tag` are silently dropped.
        if entry.contains_key("tag") {
            entries.push(PolicyEntry(entry));
        }
    }
    Ok(Some(Policy { entries }))
}

/// `model` / `effort`: a scalar, trimmed and lowercased; empty or null is "not set".
fn normalised_choice(key: &'static str, value: Pod) -> Result<Option<String>, FrontmatterError> {
    let Some(text) = scalar_text(&value) else {
        return Err(FrontmatterError::FieldNotScalar { key, found: describe(&value) });
    };
    let text = text.trim().to_lowercase();
    Ok(if text.is_empty() { None } else { Some(text) })
}

/// The value shown as an example when `model`, `effort` or `isolation` has the wrong type.
fn field_example(key: &str) -> &'static str {
    match key {
        "effort" => "high",
        "isolation" => "worktree",
        _ => "sonnet",
    }
}

/// A scalar as the string raymond's `map[string]string` would hold; `None` for lists and mappings.
/// A null value is the empty string, as Go's zero value.
fn scalar_text(value: &Pod) -> Option<String> {
    match value {
        Pod::Null => Some(String::new()),
        Pod::String(text) => Some(text.clone()),
        Pod::Integer(number) => Some(number.to_string()),
        // `{:?}` keeps a decimal point: `1.0` stays `1.0` rather than becoming `1`.
        Pod::Float(number) => Some(format!("{number:?}")),
        Pod::Boolean(flag) => Some(flag.to_string()),
        Pod::Array(_) | Pod::Hash(_) => None,
    }
}

/// A YAML value as JSON (`serde_json`'s maps keep keys sorted).
pub(crate) fn json_of(value: &Pod) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Pod::Null => Value::Null,
        Pod::String(text) => Value::String(text.clone()),
        Pod::Integer(number) => Value::from(*number),
        Pod::Float(number) => serde_json::Number::from_f64(*number).map_or(Value::Null, Value::Number),
        Pod::Boolean(flag) => Value::Bool(*flag),
        Pod::Array(items) => Value::Array(items.iter().map(json_of).collect()),
        Pod::Hash(map) => Value::Object(map.iter().map(|(key, value)| (key.clone(), json_of(value))).collect()),
    }
}

/// How a value is named in an error message: its kind, and its text when short.
pub(crate) fn describe(value: &Pod) -> String {
    match value {
        Pod::Null => "nothing (null)".to_string(),
        Pod::String(text) => format!("the text \"{}\"", Excerpt { text, max_chars: MAX_QUOTED_CHARS }),
        Pod::Integer(number) => format!("the number {number}"),
        Pod::Float(number) => format!("the number {number:?}"),
        Pod::Boolean(flag) => format!("the value {flag}"),
        Pod::Array(_) => "a list".to_string(),
        Pod::Hash(_) => "a mapping".to_string(),
    }
}

/// The YAML parser's message without `gray_matter`'s "Deserialize error: " wrapper,
/// and with a duplicated key named as written rather than in Rust debug form.
fn yaml_error_text(error: gray_matter::Error) -> String {
    let message = match error {
        gray_matter::Error::DeserializeError(message) => message,
        other => other.to_string(),
    };
    match DUPLICATE_KEY.captures(&message) {
        Some(captures) => {
            let key = captures.get(1).map_or("", |m| m.as_str());
            let position = captures.get(2).map_or("", |m| m.as_str());
            format!("duplicate key `{key}`{position}")
        }
        None => message,
    }
}

/// A markdown state file, split and validated.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct PromptFile {
    pub(crate) frontmatter: StateFrontmatter,
    /// The text after the frontmatter, CRLF normalised; this is what gets rendered (R6.5).
    pub(crate) body: String,
}

/// The YAML parser's position suffix, counted within the frontmatter block.
static BLOCK_POSITION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r" at byte \d+ line (\d+) column (\d+)$").expect("the position pattern is valid"));

impl FrontmatterError {
    /// `, line L, column C` in the state's file for an error inside the
    /// frontmatter (its first line is the file's second); empty when unknown.
    pub(crate) fn file_position(&self) -> String {
        match self.block_position() {
            Some((line, Some(column))) => format!(", line {}, column {column}", line + 1),
            Some((line, None)) => format!(", line {}", line + 1),
            None => String::new(),
        }
    }

    /// The line (and column, when known) of the error within the frontmatter
    /// block, both from 1.
    pub(crate) fn block_position(&self) -> Option<(usize, Option<usize>)> {
        match self {
            FrontmatterError::Syntax { message } => BLOCK_POSITION.captures(message).and_then(|captures| {
                let line: usize = captures.get(1)?.as_str().parse().ok()?;
                Some((line, captures.get(2)?.as_str().parse().ok()))
            }),
            FrontmatterError::TooDeep { line } => Some((*line, None)),
            FrontmatterError::Limit(limit) => limit.line().map(|line| (line, None)),
            _ => None,
        }
    }

    /// The top-level key the error is about, when it is about one.
    pub(crate) fn key(&self) -> Option<&str> {
        match self {
            FrontmatterError::TransitionsNotList { .. }
            | FrontmatterError::EntryNotMapping { .. }
            | FrontmatterError::EntryValueNotScalar { .. } => Some("allowed_transitions"),
            FrontmatterError::FieldNotScalar { key, .. } | FrontmatterError::WrongType { key, .. } => Some(key),
            FrontmatterError::ForceImplicitNotBool { .. } => Some("force_implicit"),
            FrontmatterError::Syntax { .. }
            | FrontmatterError::TooDeep { .. }
            | FrontmatterError::Limit(_)
            | FrontmatterError::NotMapping { .. } => None,
        }
    }

    /// The message, without the block-relative position of a YAML syntax error.
    pub(crate) fn message_without_position(&self) -> String {
        match self {
            FrontmatterError::Syntax { message } => {
                format!("Invalid YAML frontmatter: {}", BLOCK_POSITION.replace(message, ""))
            }
            FrontmatterError::TooDeep { .. } => {
                format!("Invalid YAML frontmatter: nested or indented deeper than {MAX_INDENT_COLUMNS} columns")
            }
            FrontmatterError::Limit(limit) => format!("Invalid YAML frontmatter: {}", limit.message_without_line()),
            other => other.to_string(),
        }
    }
}

/// A prompt state's text split and its frontmatter parsed; the text is read by
/// `workflow::state_file`, wherever the state lives.
pub(crate) fn parse_prompt(text: &str) -> Result<PromptFile, FrontmatterError> {
    let (yaml, body) = split(text);
    let frontmatter = match yaml {
        Some(yaml) => parse_frontmatter(&yaml)?,
        None => StateFrontmatter::default(),
    };
    Ok(PromptFile { frontmatter, body })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(pairs: &[(&str, &str)]) -> PolicyEntry {
        PolicyEntry(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect())
    }

    fn parse(yaml: &str) -> StateFrontmatter {
        match parse_frontmatter(yaml) {
            Ok(frontmatter) => frontmatter,
            Err(error) => panic!("frontmatter {yaml:?} was refused: {error}"),
        }
    }

    fn refuse(yaml: &str) -> String {
        match parse_frontmatter(yaml) {
            Ok(frontmatter) => panic!("frontmatter {yaml:?} was accepted: {frontmatter:?}"),
            Err(error) => error.to_string(),
        }
    }

    #[test]
    fn isolation_is_a_default_for_the_states_forks() {
        assert_eq!(parse("isolation: Worktree\n").isolation.as_deref(), Some("worktree"));
        assert_eq!(parse("isolation: none\n").isolation.as_deref(), Some("none"));
        assert_eq!(
            refuse("isolation: sandbox\n"),
            "Invalid YAML frontmatter: `isolation` must be `worktree` or `none`, found `sandbox`"
        );
    }

    #[test]
    fn r5_1_frontmatter_at_byte_zero_is_split_off() {
        let (yaml, body) = split("---\nmodel: haiku\n---\nHello {{input}}\n");
        assert_eq!(yaml.as_deref(), Some("model: haiku"));
        assert_eq!(body, "Hello {{input}}\n");
    }

    #[test]
    fn r5_1_crlf_is_normalised_before_matching() {
        let (yaml, body) = split("---\r\nmodel: haiku\r\n---\r\nline one\r\nline two\r\n");
        assert_eq!(yaml.as_deref(), Some("model: haiku"));
        assert_eq!(body, "line one\nline two\n");
    }

    #[test]
    fn r5_1_trailing_blanks_on_delimiters_are_allowed() {
        let (yaml, body) = split("--- \t\na: 1\n---  \nbody");
        assert_eq!(yaml.as_deref(), Some("a: 1"));
        assert_eq!(body, "body");
    }

    #[test]
    fn r5_1_first_closing_line_ends_the_block() {
        let (yaml, body) = split("---\na: 1\n---\nb: 2\n---\nrest");
        assert_eq!(yaml.as_deref(), Some("a: 1"));
        assert_eq!(body, "b: 2\n---\nrest");
    }

    #[test]
    fn r5_1_frontmatter_must_start_at_byte_zero() {
        let text = "\n---\nmodel: haiku\n---\nbody";
        assert_eq!(split(text), (None, text.to_string()));
        let text = " ---\nmodel: haiku\n---\nbody";
        assert_eq!(split(text), (None, text.to_string()));
    }

    #[test]
    fn r5_1_closing_delimiter_with_other_text_does_not_close() {
        let text = "---\nmodel: haiku\n--- more\nbody";
        assert_eq!(split(text), (None, text.to_string()));
    }

    #[test]
    fn s16_38_no_newline_after_closing_delimiter_is_all_body() {
        let text = "---\nallowed_transitions:\n  - tag: goto\n    target: NEXT\n---";
        assert_eq!(split(text), (None, text.to_string()));
        let prompt = parse_prompt(text);
        assert_eq!(prompt, Ok(PromptFile { frontmatter: StateFrontmatter::default(), body: text.to_string() }));
    }

    #[test]
    fn r5_2_empty_block_gives_no_yaml_and_the_body() {
        assert_eq!(split("---\n---\nbody\n"), (None, "body\n".to_string()));
        assert_eq!(split("--- \n---\t\nbody"), (None, "body".to_string()));
    }

    #[test]
    fn r5_2_blank_line_between_delimiters_is_not_a_block() {
        // `(.+?)` needs one character before `\n---`, and the empty form needs adjacent lines.
        let text = "---\n\n---\nbody";
        assert_eq!(split(text), (None, text.to_string()));
    }

    #[test]
    fn r5_2_no_frontmatter_means_whole_text_is_body() {
        assert_eq!(split("just a prompt\r\n"), (None, "just a prompt\n".to_string()));
        assert_eq!(split(""), (None, String::new()));
    }

    #[test]
    fn r5_2_whitespace_null_and_empty_mapping_give_no_policy() {
        for yaml in ["   ", " \n\t", "null", "~", "{}", "# only a comment"] {
            assert_eq!(parse(yaml), StateFrontmatter::default(), "yaml {yaml:?}");
        }
        let prompt = parse_prompt("---\n \n---\nbody");
        assert_eq!(prompt, Ok(PromptFile { frontmatter: StateFrontmatter::default(), body: "body".to_string() }));
    }

    #[test]
    fn r5_2_allowed_transitions_become_policy_entries() {
        let frontmatter = parse(
            "allowed_transitions:\n  - tag: goto\n    target: NEXT\n  - tag: call\n    target: RESEARCH\n    return: SUMMARIZE.md\n",
        );
        let expected = Policy {
            entries: vec![
                entry(&[("tag", "goto"), ("target", "NEXT")]),
                entry(&[("tag", "call"), ("target", "RESEARCH"), ("return", "SUMMARIZE.md")]),
            ],
        };
        assert_eq!(frontmatter.policy, Some(expected));
    }

    #[test]
    fn r5_2_scalars_become_strings() {
        let frontmatter = parse(
            "allowed_transitions:\n  - tag: result\n    payload: true\n    count: 3\n    ratio: 1.0\n    half: 0.5\n    nothing:\n    quoted: \"007\"\n",
        );
        let expected = entry(&[
            ("tag", "result"),
            ("payload", "true"),
            ("count", "3"),
            ("ratio", "1.0"),
            ("half", "0.5"),
            ("nothing", ""),
            ("quoted", "007"),
        ]);
        assert_eq!(frontmatter.policy, Some(Policy { entries: vec![expected] }));
    }

    #[test]
    fn r5_2_entries_without_tag_are_dropped() {
        let frontmatter = parse("allowed_transitions:\n  - target: NEXT\n  -\n  - tag: goto\n    target: B\n");
        assert_eq!(frontmatter.policy, Some(Policy { entries: vec![entry(&[("tag", "goto"), ("target", "B")])] }));
    }

    #[test]
    fn r5_2_empty_or_null_allowed_transitions() {
        assert_eq!(parse("allowed_transitions: []").policy, Some(Policy { entries: vec![] }));
        assert_eq!(parse("allowed_transitions:").policy, None);
        assert_eq!(parse("model: haiku").policy, None);
    }

    #[test]
    fn r5_2_model_and_effort_are_trimmed_and_lowercased() {
        let frontmatter = parse("model: '  Opus '\neffort: HIGH");
        assert_eq!(frontmatter.model.as_deref(), Some("opus"));
        assert_eq!(frontmatter.effort.as_deref(), Some("high"));
        let frontmatter = parse("model: '   '\neffort:");
        assert_eq!(frontmatter.model, None);
        assert_eq!(frontmatter.effort, None);
    }

    #[test]
    fn r5_2_force_implicit_is_a_bool() {
        assert!(parse("force_implicit: true").force_implicit);
        assert!(!parse("force_implicit: false").force_implicit);
        assert!(!parse("force_implicit:").force_implicit);
    }

    #[test]
    fn r5_5_unknown_fields_are_listed_sorted() {
        let frontmatter = parse("zeta: 1\ntimeout: 30\nmodel: haiku\nalpha: [1]\n");
        assert_eq!(frontmatter.options.keys().collect::<Vec<_>>(), ["alpha", "timeout", "zeta"]);
        assert_eq!(frontmatter.model.as_deref(), Some("haiku"));
    }

    #[test]
    fn s16_37_misspelt_force_implicit_is_unknown_and_not_applied() {
        let frontmatter = parse("force_implcit: true\nallowed_transitions:\n  - tag: goto\n    target: NEXT\n");
        assert_eq!(frontmatter.options.keys().collect::<Vec<_>>(), ["force_implcit"]);
        assert!(!frontmatter.force_implicit);
    }

    #[test]
    fn s16_35_no_frontmatter_means_no_policy() {
        let prompt = parse_prompt("Just do it.\n");
        assert_eq!(prompt, Ok(PromptFile { frontmatter: StateFrontmatter::default(), body: "Just do it.\n".into() }));
    }

    #[test]
    fn s16_36_force_implicit_with_a_single_goto() {
        let frontmatter = parse("force_implicit: true\nallowed_transitions:\n  - tag: goto\n    target: NEXT\n");
        assert!(frontmatter.force_implicit);
        let policy = frontmatter.policy.unwrap_or_default();
        assert!(policy.can_use_implicit());
        assert_eq!(policy.implicit_tag(str::to_string).map(|tag| tag.target), Some("NEXT".to_string()));
    }

    #[test]
    fn r5_3_invalid_syntax_message() {
        assert_eq!(
            refuse("allowed_transitions: [\n"),
            "Invalid YAML frontmatter: while parsing a node, did not find expected node content at byte 23 line 2 column 1"
        );
        assert_eq!(
            refuse("model: a\nmodel: b"),
            "Invalid YAML frontmatter: duplicate key `model` at byte 16 line 2 column 8"
        );
    }

    #[test]
    fn r5_3_top_level_must_be_a_mapping() {
        assert_eq!(
            refuse("- tag: goto\n  target: NEXT"),
            "Invalid YAML frontmatter: expected `key: value` fields at the top level, found a list"
        );
        assert_eq!(
            refuse("just words"),
            "Invalid YAML frontmatter: expected `key: value` fields at the top level, found the text \"just words\""
        );
        assert_eq!(
            refuse("42"),
            "Invalid YAML frontmatter: expected `key: value` fields at the top level, found the number 42"
        );
    }

    #[test]
    fn r5_3_allowed_transitions_must_be_a_list() {
        assert_eq!(
            refuse("allowed_transitions:\n  tag: goto"),
            "Invalid YAML frontmatter: `allowed_transitions` must be a list of entries such as `- tag: goto`, found a mapping"
        );
        assert_eq!(
            refuse("allowed_transitions: goto"),
            "Invalid YAML frontmatter: `allowed_transitions` must be a list of entries such as `- tag: goto`, found the text \"goto\""
        );
    }

    #[test]
    fn r5_3_entries_must_be_mappings() {
        assert_eq!(
            refuse("allowed_transitions:\n  - tag: goto\n  - goto"),
            "Invalid YAML frontmatter: `allowed_transitions` entry 2 must be a mapping such as `tag: goto`, found the text \"goto\""
        );
        assert_eq!(
            refuse("allowed_transitions:\n  - [goto, NEXT]"),
            "Invalid YAML frontmatter: `allowed_transitions` entry 1 must be a mapping such as `tag: goto`, found a list"
        );
    }

    #[test]
    fn r5_3_non_scalar_entry_value() {
        assert_eq!(
            refuse("allowed_transitions:\n  - tag: goto\n    target: [A, B]"),
            "Invalid YAML frontmatter: `allowed_transitions` entry 1, key `target`: expected a single value (text, number or true/false), found a list"
        );
        assert_eq!(
            refuse("allowed_transitions:\n  - tag: goto\n  - tag: fork\n    next: {a: 1}"),
            "Invalid YAML frontmatter: `allowed_transitions` entry 2, key `next`: expected a single value (text, number or true/false), found a mapping"
        );
    }

    #[test]
    fn r5_3_model_effort_and_force_implicit_types() {
        assert_eq!(
            refuse("model: [opus]"),
            "Invalid YAML frontmatter: `model` must be a single value such as `sonnet`, found a list"
        );
        assert_eq!(
            refuse("effort: {level: high}"),
            "Invalid YAML frontmatter: `effort` must be a single value such as `high`, found a mapping"
        );
        assert_eq!(
            refuse("force_implicit: yes"),
            "Invalid YAML frontmatter: `force_implicit` must be true or false, found the text \"yes\""
        );
        assert_eq!(
            refuse("force_implicit: 1"),
            "Invalid YAML frontmatter: `force_implicit` must be true or false, found the number 1"
        );
    }

    #[test]
    fn errors_name_their_key() {
        for (yaml, key) in
            [("model: [a]", Some("model")), ("allowed_transitions: x", Some("allowed_transitions")), ("- a", None)]
        {
            let error = parse_frontmatter(yaml).expect_err(yaml);
            assert_eq!(error.key(), key, "{yaml}");
        }
    }

    #[test]
    fn r5_3_long_found_text_is_cut() {
        let long = "x".repeat(100);
        let message = refuse(&long);
        assert_eq!(
            message,
            format!(
                "Invalid YAML frontmatter: expected `key: value` fields at the top level, found the text \"{}…\"",
                "x".repeat(MAX_QUOTED_CHARS)
            )
        );
    }

    #[test]
    fn deeply_nested_yaml_is_refused_not_crashing() {
        let nested = format!("a: {}1{}", "[".repeat(300), "]".repeat(300));
        assert!(matches!(parse_frontmatter(&nested), Err(FrontmatterError::Syntax { .. })));
        let block = format!("a:\n{}x", "- ".repeat(50_000));
        assert_eq!(
            refuse(&block),
            "Invalid YAML frontmatter: line 2 of the frontmatter is nested or indented deeper than 256 columns"
        );
        let mut indented = String::new();
        for level in 0..200 {
            indented.push_str(&format!("{}k:\n", "  ".repeat(level)));
        }
        assert_eq!(
            refuse(&indented),
            "Invalid YAML frontmatter: line 130 of the frontmatter is nested or indented deeper than 256 columns"
        );
    }

    #[test]
    fn nesting_up_to_the_bound_is_accepted() {
        // The worst accepted shape: 128 compact block levels holding 250 flow levels.
        let block = format!("a:\n{}{}1{}", "- ".repeat(MAX_INDENT_COLUMNS / 2), "[".repeat(250), "]".repeat(250));
        assert!(parse_frontmatter(&block).is_ok());
        let dashes = format!("a: |\n  {}\n", "-".repeat(1000));
        assert!(parse_frontmatter(&dashes).is_ok());
    }

    #[test]
    fn structural_indent_counts_blanks_and_indicators() {
        assert_eq!(structural_indent("  - - x"), 6);
        assert_eq!(structural_indent("? : -"), 5);
        assert_eq!(structural_indent("----"), 0);
        assert_eq!(structural_indent("  -x"), 2);
        assert_eq!(structural_indent(""), 0);
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn split_never_panics_and_never_keeps_crlf(text in any::<String>()) {
                let (yaml, body) = split(&text);
                prop_assert!(!body.contains("\r\n"));
                prop_assert!(yaml.is_none_or(|yaml| !yaml.contains("\r\n")));
            }

            #[test]
            fn split_finds_what_raymonds_pattern_finds(text in "(---[ \t]?\n)?(---|\n|\n---\n|[-a \t\r]|é){0,16}") {
                // R5.1 and R5.2 verbatim, as the splitter once used them.
                let frontmatter = Regex::new(r"(?s)^---[ \t]*\n(.+?)\n---[ \t]*\n").unwrap();
                let empty = Regex::new(r"^---[ \t]*\n---[ \t]*\n").unwrap();
                let normalised = text.replace("\r\n", "\n");
                let expected = match (frontmatter.captures(&normalised), empty.find(&normalised)) {
                    (Some(captures), _) => (
                        Some(captures[1].to_string()),
                        normalised[captures.get(0).unwrap().end()..].to_string(),
                    ),
                    (None, Some(found)) => (None, normalised[found.end()..].to_string()),
                    (None, None) => (None, normalised.clone()),
                };
                prop_assert_eq!(split(&text), expected);
            }

            #[test]
            fn split_then_rejoin_round_trips(yaml in "[a-z: \n]{1,40}", body in "[a-z\n-]{0,40}") {
                prop_assume!(!yaml.contains("\n---") && !yaml.starts_with("---") && !yaml.starts_with('\n'));
                let text = format!("---\n{yaml}\n---\n{body}");
                prop_assert_eq!(split(&text), (Some(yaml), body));
            }

            #[test]
            fn parse_frontmatter_never_panics(yaml in any::<String>()) {
                let _ = parse_frontmatter(&yaml);
            }

            #[test]
            fn parse_frontmatter_never_panics_on_yamlish_text(yaml in "[a-z_:\\-\\[\\]{}, \n'\"#&*!|>0-9.]{0,80}") {
                let _ = parse_frontmatter(&yaml);
            }
        }
    }
}
