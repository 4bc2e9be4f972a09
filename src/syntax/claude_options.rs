//! The Claude Code options a prompt state may set in its frontmatter (or as keys of
//! a YAML workflow's prompt state): the permission mode, tool lists, a turn limit,
//! a fallback model, an appended system prompt, MCP servers, settings, extra
//! directories and a JSON Schema for the `<result>` (`docs/claude.md`).
//!
//! They are checked here, when the state is loaded, with the same precise
//! messages as the other frontmatter fields; paths stay as written, and the
//! markdown executor resolves them (against the workflow's directory, or the
//! agent's cwd for `add_dirs`) when it builds the backend request.

use std::collections::BTreeMap;

use gray_matter::Pod;
use serde_json::Value;

use crate::syntax::frontmatter::{FrontmatterError, describe};
use crate::text::suggestion::did_you_mean;

/// `claude --permission-mode` choices (the pinned Claude Code 2.1.330's `--help`;
/// 2.1.197 had `default` where it now has `manual`).
pub(crate) const PERMISSION_MODES: [&str; 6] =
    ["acceptEdits", "auto", "bypassPermissions", "manual", "dontAsk", "plan"];

/// The frontmatter keys of [`ClaudeOptions`], in the order their flags are written.
pub(crate) const CLAUDE_OPTION_KEYS: [&str; 11] = [
    "permission_mode",
    "tools",
    "allowed_tools",
    "disallowed_tools",
    "max_turns",
    "fallback_model",
    "append_system_prompt",
    "mcp_config",
    "settings",
    "add_dirs",
    "output_schema",
];

/// A configuration Claude Code reads from a file or takes inline as JSON text
/// (`--settings`, `--mcp-config`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ConfigSource {
    /// A path as written (relative ones are relative to the workflow's directory),
    /// or absolute once the executor has resolved it.
    Path(String),
    /// An inline YAML mapping, serialised to JSON.
    Json(String),
}

/// What a state asks of Claude Code beyond its model and effort. Empty lists and
/// `None` add no flag.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ClaudeOptions {
    /// One of [`PERMISSION_MODES`]; replaces the run's permission choice.
    pub(crate) permission_mode: Option<String>,
    /// `Some(empty)`: no tools at all (`--tools ""`).
    pub(crate) tools: Option<Vec<String>>,
    pub(crate) allowed_tools: Vec<String>,
    /// Added to Baton's own disallowed tools.
    pub(crate) disallowed_tools: Vec<String>,
    /// 1 or more.
    pub(crate) max_turns: Option<u64>,
    /// Trimmed and lowercased like `model`; Claude Code takes a comma-separated list.
    pub(crate) fallback_model: Option<String>,
    pub(crate) append_system_prompt: Option<String>,
    pub(crate) mcp_config: Vec<ConfigSource>,
    pub(crate) settings: Option<ConfigSource>,
    /// As written; relative ones are relative to the agent's cwd.
    pub(crate) add_dirs: Vec<String>,
    /// A JSON Schema, as compact JSON text.
    pub(crate) output_schema: Option<String>,
}

impl ClaudeOptions {
    /// Read frontmatter key `key` into these options; `false` when `key` is no option.
    pub(crate) fn read(&mut self, key: &str, value: Pod) -> Result<bool, FrontmatterError> {
        match key {
            "permission_mode" => self.permission_mode = permission_mode(value)?,
            "tools" => self.tools = tool_list("tools", value)?,
            "allowed_tools" => self.allowed_tools = tool_list("allowed_tools", value)?.unwrap_or_default(),
            "disallowed_tools" => self.disallowed_tools = tool_list("disallowed_tools", value)?.unwrap_or_default(),
            "max_turns" => self.max_turns = max_turns(value)?,
            "fallback_model" => {
                self.fallback_model =
                    text("fallback_model", value, "a model name such as `haiku`")?.map(|model| model.to_lowercase())
            }
            "append_system_prompt" => {
                self.append_system_prompt = text("append_system_prompt", value, "text")?;
            }
            "mcp_config" => self.mcp_config = mcp_config(value)?,
            "settings" => self.settings = settings(value)?,
            "add_dirs" => self.add_dirs = add_dirs(value)?,
            "output_schema" => self.output_schema = output_schema(value)?,
            _ => return Ok(false),
        }
        Ok(true)
    }
}

fn wrong(key: &'static str, expected: &'static str, value: &Pod) -> FrontmatterError {
    FrontmatterError::WrongType { key, expected, found: describe(value) }
}

/// A scalar as trimmed text; `None` when null or blank.
fn text(key: &'static str, value: Pod, expected: &'static str) -> Result<Option<String>, FrontmatterError> {
    let text = match &value {
        Pod::Null => return Ok(None),
        Pod::String(text) => text.clone(),
        Pod::Integer(number) => number.to_string(),
        Pod::Float(number) => format!("{number:?}"),
        Pod::Boolean(_) | Pod::Array(_) | Pod::Hash(_) => return Err(wrong(key, expected, &value)),
    };
    let text = text.trim();
    Ok((!text.is_empty()).then(|| text.to_string()))
}

/// One of [`PERMISSION_MODES`], in any letter case, written back as Claude Code spells it.
fn permission_mode(value: Pod) -> Result<Option<String>, FrontmatterError> {
    const EXPECTED: &str = "one of acceptEdits, auto, bypassPermissions, manual, dontAsk, plan";
    let Some(mode) = text("permission_mode", value.clone(), EXPECTED)? else { return Ok(None) };
    match PERMISSION_MODES.iter().find(|known| known.eq_ignore_ascii_case(&mode)) {
        Some(known) => Ok(Some(known.to_string())),
        None => Err(FrontmatterError::UnknownPermissionMode {
            found: describe(&value),
            suggestion: did_you_mean(&mode, PERMISSION_MODES),
        }),
    }
}

/// A list of tool names, or one comma-separated text. `None` when null; `Some(empty)`
/// for `""` or `[]`.
fn tool_list(key: &'static str, value: Pod) -> Result<Option<Vec<String>>, FrontmatterError> {
    const EXPECTED: &str = "a list of tool names such as `[Read, Grep]`, or one text such as `Read,Grep`";
    match value {
        Pod::Null => Ok(None),
        Pod::String(text) => Ok(Some(split_tools(&text))),
        Pod::Array(items) => {
            let mut tools = Vec::new();
            for (index, item) in items.into_iter().enumerate() {
                match item {
                    Pod::String(text) => tools.extend(split_tools(&text)),
                    other => {
                        return Err(FrontmatterError::WrongItem {
                            key,
                            item: index + 1,
                            expected: "a tool name such as `Read` or `Bash(git diff:*)`",
                            found: describe(&other),
                        });
                    }
                }
            }
            Ok(Some(tools))
        }
        other => Err(wrong(key, EXPECTED, &other)),
    }
}

/// `Read, Bash(git add:*)` → `Read`, `Bash(git add:*)`: commas inside parentheses
/// belong to a tool's pattern. Blank names are dropped.
fn split_tools(text: &str) -> Vec<String> {
    let mut tools = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (index, character) in text.char_indices() {
        match character {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                tools.push(&text[start..index]);
                start = index + 1;
            }
            _ => {}
        }
    }
    tools.push(&text[start..]);
    tools.into_iter().map(str::trim).filter(|tool| !tool.is_empty()).map(str::to_string).collect()
}

fn max_turns(value: Pod) -> Result<Option<u64>, FrontmatterError> {
    match value {
        Pod::Null => Ok(None),
        Pod::Integer(turns) if turns >= 1 => Ok(Some(turns as u64)),
        other => Err(wrong("max_turns", "a whole number of turns, 1 or more", &other)),
    }
}

/// A path (text) or an inline mapping.
fn config_source(
    key: &'static str,
    value: Pod,
    expected: &'static str,
) -> Result<Option<ConfigSource>, FrontmatterError> {
    match value {
        Pod::Null => Ok(None),
        Pod::Hash(_) => Ok(Some(ConfigSource::Json(json_of(&value).to_string()))),
        Pod::String(path) if path.trim().is_empty() => Ok(None),
        Pod::String(path) => Ok(Some(ConfigSource::Path(path.trim().to_string()))),
        other => Err(wrong(key, expected, &other)),
    }
}

fn settings(value: Pod) -> Result<Option<ConfigSource>, FrontmatterError> {
    config_source("settings", value, "a path to a settings file, or a mapping of settings")
}

/// A path, an inline mapping, or a list of them.
fn mcp_config(value: Pod) -> Result<Vec<ConfigSource>, FrontmatterError> {
    const EXPECTED: &str = "a path to an MCP configuration file, an inline mapping, or a list of them";
    let Pod::Array(items) = value else {
        return Ok(config_source("mcp_config", value, EXPECTED)?.into_iter().collect());
    };
    let mut sources = Vec::new();
    for (index, item) in items.into_iter().enumerate() {
        match item {
            Pod::String(_) | Pod::Hash(_) => sources.extend(config_source("mcp_config", item, EXPECTED)?),
            other => {
                return Err(FrontmatterError::WrongItem {
                    key: "mcp_config",
                    item: index + 1,
                    expected: "a path or an inline mapping",
                    found: describe(&other),
                });
            }
        }
    }
    Ok(sources)
}

/// A path or a list of paths.
fn add_dirs(value: Pod) -> Result<Vec<String>, FrontmatterError> {
    let items = match value {
        Pod::Null => return Ok(Vec::new()),
        Pod::String(path) => vec![Pod::String(path)],
        Pod::Array(items) => items,
        other => return Err(wrong("add_dirs", "a directory or a list of directories", &other)),
    };
    let mut dirs = Vec::new();
    for (index, item) in items.into_iter().enumerate() {
        match item {
            Pod::String(path) if !path.trim().is_empty() => dirs.push(path.trim().to_string()),
            Pod::String(_) => {}
            other => {
                return Err(FrontmatterError::WrongItem {
                    key: "add_dirs",
                    item: index + 1,
                    expected: "a directory",
                    found: describe(&other),
                });
            }
        }
    }
    Ok(dirs)
}

fn output_schema(value: Pod) -> Result<Option<String>, FrontmatterError> {
    match value {
        Pod::Null => Ok(None),
        Pod::Hash(_) => Ok(Some(json_of(&value).to_string())),
        other => Err(wrong("output_schema", "a JSON Schema written as a mapping, such as `{type: object}`", &other)),
    }
}

/// A YAML value as JSON, mapping keys sorted so the text is the same on every load.
fn json_of(value: &Pod) -> Value {
    match value {
        Pod::Null => Value::Null,
        Pod::String(text) => Value::String(text.clone()),
        Pod::Integer(number) => Value::from(*number),
        Pod::Float(number) => serde_json::Number::from_f64(*number).map_or(Value::Null, Value::Number),
        Pod::Boolean(flag) => Value::Bool(*flag),
        Pod::Array(items) => Value::Array(items.iter().map(json_of).collect()),
        Pod::Hash(map) => {
            let sorted: BTreeMap<&String, &Pod> = map.iter().collect();
            Value::Object(sorted.into_iter().map(|(key, value)| (key.clone(), json_of(value))).collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_split_at_commas_outside_parentheses() {
        assert_eq!(split_tools("Read, Grep,,Bash(git add:*)"), ["Read", "Grep", "Bash(git add:*)"]);
        assert_eq!(split_tools("Bash(echo a,b),Edit"), ["Bash(echo a,b)", "Edit"]);
        assert!(split_tools("  ").is_empty());
    }

    #[test]
    fn json_keys_are_sorted() {
        let mut map = std::collections::HashMap::new();
        for key in ["zeta", "alpha", "mid"] {
            map.insert(key.to_string(), Pod::Integer(1));
        }
        assert_eq!(json_of(&Pod::Hash(map)).to_string(), r#"{"alpha":1,"mid":1,"zeta":1}"#);
    }
}
