//! A state's backend options as data: every frontmatter key Baton's own format
//! does not use (R5.2), over the options of the manifest's `backend:` block
//! (R13.1). The frontmatter parser does not know which keys a backend takes; the
//! backend the state runs on reads them itself (`claude::options`,
//! `pi::options`, `codex::options`) and says which are wrong, which it has no
//! equivalent for, and which no backend knows.
//!
//! Values are JSON whatever YAML they were written in (frontmatter, a YAML
//! workflow's state, `workflow.yaml`), so each backend reads one shape.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::text::excerpt::Excerpt;

/// Option keys and their values, sorted by key.
pub(crate) type OptionValues = BTreeMap<String, Value>;

/// The longest text quoted from a value.
const MAX_QUOTED_CHARS: usize = 60;

/// Why an option's value was refused. The text follows the frontmatter's
/// (`` `max_turns` must be …, found … ``); callers put the file and
/// "Invalid YAML frontmatter: " in front.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum OptionError {
    #[error("`{key}` must be {expected}, found {found}")]
    WrongType { key: String, expected: &'static str, found: String },
    /// One item of a list. `item` counts from 1.
    #[error("`{key}` item {item} must be {expected}, found {found}")]
    WrongItem { key: String, item: usize, expected: &'static str, found: String },
    /// A value outside a fixed set of choices.
    #[error(
        "`{key}` must be one of {choices}, found {found}{}",
        .suggestion.map_or_else(String::new, |known| format!("; did you mean `{known}`?"))
    )]
    UnknownChoice { key: String, choices: String, found: String, suggestion: Option<&'static str> },
    /// Two options that exclude each other.
    #[error("`{first}` and `{second}` cannot both be set: {why}")]
    Conflict { first: String, second: String, why: &'static str },
}

impl OptionError {
    /// The option the error is about, to place it at its line.
    pub(crate) fn key(&self) -> &str {
        match self {
            OptionError::WrongType { key, .. }
            | OptionError::WrongItem { key, .. }
            | OptionError::UnknownChoice { key, .. } => key,
            OptionError::Conflict { second, .. } => second,
        }
    }

    pub(crate) fn wrong(key: &str, expected: &'static str, value: &Value) -> OptionError {
        OptionError::WrongType { key: key.to_string(), expected, found: describe(value) }
    }
}

/// How a value is named in an error message: its kind, and its text when short.
pub(crate) fn describe(value: &Value) -> String {
    match value {
        Value::Null => "nothing (null)".to_string(),
        Value::String(text) => format!("the text \"{}\"", Excerpt { text, max_chars: MAX_QUOTED_CHARS }),
        Value::Number(number) => format!("the number {number}"),
        Value::Bool(flag) => format!("the value {flag}"),
        Value::Array(_) => "a list".to_string(),
        Value::Object(_) => "a mapping".to_string(),
    }
}

/// A scalar as trimmed text; `None` when null or blank.
pub(crate) fn text(key: &str, value: &Value, expected: &'static str) -> Result<Option<String>, OptionError> {
    let text = match value {
        Value::Null => return Ok(None),
        Value::String(text) => text.clone(),
        Value::Number(number) => number.to_string(),
        Value::Bool(_) | Value::Array(_) | Value::Object(_) => return Err(OptionError::wrong(key, expected, value)),
    };
    let text = text.trim();
    Ok((!text.is_empty()).then(|| text.to_string()))
}

/// `true` or `false`; null is `false`.
pub(crate) fn flag(key: &str, value: &Value) -> Result<bool, OptionError> {
    match value {
        Value::Null => Ok(false),
        Value::Bool(flag) => Ok(*flag),
        other => Err(OptionError::wrong(key, "true or false", other)),
    }
}

/// One of `choices` in any letter case, written back as `choices` spells it.
pub(crate) fn choice(
    key: &str,
    value: &Value,
    choices: &'static [&'static str],
    expected: &'static str,
) -> Result<Option<&'static str>, OptionError> {
    let Some(written) = text(key, value, expected)? else { return Ok(None) };
    match choices.iter().find(|known| known.eq_ignore_ascii_case(&written)) {
        Some(known) => Ok(Some(known)),
        None => Err(OptionError::UnknownChoice {
            key: key.to_string(),
            choices: choices.join(", "),
            found: describe(value),
            suggestion: crate::text::suggestion::did_you_mean(&written, choices.iter().copied()),
        }),
    }
}

/// A list of texts (each item trimmed, blank ones dropped), or one text; `None`
/// when null.
pub(crate) fn text_list(
    key: &str,
    value: &Value,
    expected: &'static str,
    expected_item: &'static str,
) -> Result<Option<Vec<String>>, OptionError> {
    match value {
        Value::Null => Ok(None),
        Value::String(text) => {
            Ok(Some([text.trim()].into_iter().filter(|text| !text.is_empty()).map(String::from).collect()))
        }
        Value::Array(items) => {
            let mut texts = Vec::new();
            for (index, item) in items.iter().enumerate() {
                match item {
                    Value::String(text) if !text.trim().is_empty() => texts.push(text.trim().to_string()),
                    Value::String(_) => {}
                    other => {
                        return Err(OptionError::WrongItem {
                            key: key.to_string(),
                            item: index + 1,
                            expected: expected_item,
                            found: describe(other),
                        });
                    }
                }
            }
            Ok(Some(texts))
        }
        other => Err(OptionError::wrong(key, expected, other)),
    }
}

/// What a backend made of a state's options before it runs: the keys another
/// backend takes but this one has no equivalent for (ignored, a lint warning), and
/// those no backend knows (an unknown field, R5.5).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct OptionSort {
    /// `(key, why)`: why this backend ignores it.
    pub(crate) ignored: Vec<(String, String)>,
    pub(crate) unknown: Vec<String>,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn choices_are_matched_in_any_case_and_typos_get_a_hint() {
        const CHOICES: [&str; 2] = ["read-only", "workspace-write"];
        assert_eq!(choice("sandbox", &json!("Read-Only"), &CHOICES, "x"), Ok(Some("read-only")));
        assert_eq!(
            choice("sandbox", &json!("readonly"), &CHOICES, "x").unwrap_err().to_string(),
            "`sandbox` must be one of read-only, workspace-write, found the text \"readonly\"; did you mean `read-only`?"
        );
    }

    #[test]
    fn lists_take_one_text_or_texts_only() {
        assert_eq!(
            text_list("tools", &json!(["read", " ", "ls"]), "x", "y"),
            Ok(Some(vec!["read".into(), "ls".into()]))
        );
        assert_eq!(
            text_list("tools", &json!(["read", 3]), "x", "a tool name").unwrap_err().to_string(),
            "`tools` item 2 must be a tool name, found the number 3"
        );
        assert_eq!(text_list("tools", &Value::Null, "x", "y"), Ok(None));
    }
}
