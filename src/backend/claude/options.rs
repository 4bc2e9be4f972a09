//! The Claude Code options a prompt state may set in its frontmatter (or as keys of
//! a YAML workflow's prompt state): the permission mode, tool lists, a turn limit,
//! a fallback model, an appended system prompt, MCP servers, settings, extra
//! directories and a JSON Schema for the `<result>` (`docs/claude.md`).
//!
//! The frontmatter hands them over as data (`backend::options`); they are read
//! here, by lint and before each step, with the same precise messages as the
//! other frontmatter fields. Paths are resolved against the workflow's directory
//! (or the agent's cwd for `add_dirs`) when the command is built.

use std::path::Path;

use serde_json::Value;

use crate::backend::options::{OptionError, OptionValues, describe};
use crate::text::suggestion::did_you_mean;

/// `claude --permission-mode` choices (the pinned Claude Code 2.1.330's `--help`;
/// 2.1.197 had `default` where it now has `manual`).
pub(crate) const PERMISSION_MODES: [&str; 6] =
    ["acceptEdits", "auto", "bypassPermissions", "manual", "dontAsk", "plan"];

/// The frontmatter keys of [`ClaudeOptions`], in the order their flags are written.
pub(crate) const OPTION_KEYS: [&str; 11] = [
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
    /// The Claude options among `values` (keys of other backends are skipped).
    pub(crate) fn from_values(values: &OptionValues) -> Result<ClaudeOptions, OptionError> {
        let mut options = ClaudeOptions::default();
        for (key, value) in values {
            options.read(key, value.clone())?;
        }
        Ok(options)
    }

    /// Read option `key` into these options; `false` when `key` is no option.
    fn read(&mut self, key: &str, value: Value) -> Result<bool, OptionError> {
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

fn wrong(key: &'static str, expected: &'static str, value: &Value) -> OptionError {
    OptionError::wrong(key, expected, value)
}

fn text(key: &'static str, value: Value, expected: &'static str) -> Result<Option<String>, OptionError> {
    crate::backend::options::text(key, &value, expected)
}

/// One of [`PERMISSION_MODES`], in any letter case, written back as Claude Code spells it.
fn permission_mode(value: Value) -> Result<Option<String>, OptionError> {
    const EXPECTED: &str = "one of acceptEdits, auto, bypassPermissions, manual, dontAsk, plan";
    let Some(mode) = text("permission_mode", value.clone(), EXPECTED)? else { return Ok(None) };
    match PERMISSION_MODES.iter().find(|known| known.eq_ignore_ascii_case(&mode)) {
        Some(known) => Ok(Some(known.to_string())),
        None => Err(OptionError::UnknownChoice {
            key: "permission_mode".to_string(),
            choices: PERMISSION_MODES.join(", "),
            found: describe(&value),
            suggestion: did_you_mean(&mode, PERMISSION_MODES),
        }),
    }
}

/// A list of tool names, or one comma-separated text. `None` when null; `Some(empty)`
/// for `""` or `[]`.
fn tool_list(key: &'static str, value: Value) -> Result<Option<Vec<String>>, OptionError> {
    const EXPECTED: &str = "a list of tool names such as `[Read, Grep]`, or one text such as `Read,Grep`";
    match value {
        Value::Null => Ok(None),
        Value::String(text) => Ok(Some(split_tools(&text))),
        Value::Array(items) => {
            let mut tools = Vec::new();
            for (index, item) in items.into_iter().enumerate() {
                match item {
                    Value::String(text) => tools.extend(split_tools(&text)),
                    other => {
                        return Err(OptionError::WrongItem {
                            key: key.to_string(),
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

fn max_turns(value: Value) -> Result<Option<u64>, OptionError> {
    match value {
        Value::Null => Ok(None),
        Value::Number(turns) if turns.as_u64().is_some_and(|turns| turns >= 1) => Ok(turns.as_u64()),
        other => Err(wrong("max_turns", "a whole number of turns, 1 or more", &other)),
    }
}

/// A path (text) or an inline mapping.
fn config_source(key: &'static str, value: Value, expected: &'static str) -> Result<Option<ConfigSource>, OptionError> {
    match value {
        Value::Null => Ok(None),
        Value::Object(_) => Ok(Some(ConfigSource::Json(value.to_string()))),
        Value::String(path) if path.trim().is_empty() => Ok(None),
        Value::String(path) => Ok(Some(ConfigSource::Path(path.trim().to_string()))),
        other => Err(wrong(key, expected, &other)),
    }
}

fn settings(value: Value) -> Result<Option<ConfigSource>, OptionError> {
    config_source("settings", value, "a path to a settings file, or a mapping of settings")
}

/// A path, an inline mapping, or a list of them.
fn mcp_config(value: Value) -> Result<Vec<ConfigSource>, OptionError> {
    const EXPECTED: &str = "a path to an MCP configuration file, an inline mapping, or a list of them";
    let Value::Array(items) = value else {
        return Ok(config_source("mcp_config", value, EXPECTED)?.into_iter().collect());
    };
    let mut sources = Vec::new();
    for (index, item) in items.into_iter().enumerate() {
        match item {
            Value::String(_) | Value::Object(_) => sources.extend(config_source("mcp_config", item, EXPECTED)?),
            other => {
                return Err(OptionError::WrongItem {
                    key: "mcp_config".to_string(),
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
fn add_dirs(value: Value) -> Result<Vec<String>, OptionError> {
    let items = match value {
        Value::Null => return Ok(Vec::new()),
        Value::String(path) => vec![Value::String(path)],
        Value::Array(items) => items,
        other => return Err(wrong("add_dirs", "a directory or a list of directories", &other)),
    };
    let mut dirs = Vec::new();
    for (index, item) in items.into_iter().enumerate() {
        match item {
            Value::String(path) if !path.trim().is_empty() => dirs.push(path.trim().to_string()),
            Value::String(_) => {}
            other => {
                return Err(OptionError::WrongItem {
                    key: "add_dirs".to_string(),
                    item: index + 1,
                    expected: "a directory",
                    found: describe(&other),
                });
            }
        }
    }
    Ok(dirs)
}

fn output_schema(value: Value) -> Result<Option<String>, OptionError> {
    match value {
        Value::Null => Ok(None),
        Value::Object(_) => Ok(Some(value.to_string())),
        other => Err(wrong("output_schema", "a JSON Schema written as a mapping, such as `{type: object}`", &other)),
    }
}

impl ClaudeOptions {
    /// These options with `mcp_config` and `settings` paths made absolute against
    /// the workflow's directory, and `add_dirs` against the agent's cwd. A
    /// configuration file that does not exist would fail every attempt: the message
    /// says which.
    pub(crate) fn resolve_paths(&self, workflow_dir: &Path, cwd: &Path) -> Result<ClaudeOptions, String> {
        let config = |key: &str, source: &ConfigSource| -> Result<ConfigSource, String> {
            let ConfigSource::Path(written) = source else { return Ok(source.clone()) };
            let path = workflow_dir.join(written);
            if !path.is_file() {
                return Err(format!(
                    "`{key}` names `{written}`, which is no file (`{}`; relative paths are relative to the workflow's directory)",
                    path.display()
                ));
            }
            Ok(ConfigSource::Path(path.to_string_lossy().into_owned()))
        };
        let mut resolved = self.clone();
        resolved.mcp_config =
            self.mcp_config.iter().map(|source| config("mcp_config", source)).collect::<Result<_, _>>()?;
        resolved.settings = self.settings.as_ref().map(|source| config("settings", source)).transpose()?;
        resolved.add_dirs = self.add_dirs.iter().map(|dir| cwd.join(dir).to_string_lossy().into_owned()).collect();
        Ok(resolved)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::frontmatter::parse_frontmatter;

    fn parse(yaml: &str) -> ClaudeOptions {
        let frontmatter = parse_frontmatter(yaml).expect("frontmatter");
        ClaudeOptions::from_values(&frontmatter.options).expect("options")
    }

    /// The message a run and lint give, with the frontmatter's prefix.
    fn refuse(yaml: &str) -> String {
        let frontmatter = parse_frontmatter(yaml).expect("frontmatter");
        let error = ClaudeOptions::from_values(&frontmatter.options).expect_err(yaml);
        format!("Invalid YAML frontmatter: {error}")
    }

    #[test]
    fn errors_name_their_key() {
        for (yaml, key) in
            [("permission_mode: x", "permission_mode"), ("max_turns: 0", "max_turns"), ("add_dirs: [[a]]", "add_dirs")]
        {
            let frontmatter = parse_frontmatter(yaml).expect("frontmatter");
            assert_eq!(ClaudeOptions::from_values(&frontmatter.options).expect_err(yaml).key(), key);
        }
    }

    #[test]
    fn claude_options_are_read() {
        let frontmatter = parse(
            "permission_mode: PLAN\ntools: [Read, 'Grep,Glob']\nallowed_tools: Read, Bash(git diff:*)\n\
             disallowed_tools: [WebFetch]\nmax_turns: 4\nfallback_model: ' Haiku '\n\
             append_system_prompt: |\n  Be terse.\n  Cite files.\nmcp_config: [mcp.json, {mcpServers: {}}]\n\
             settings: {model: haiku, env: {A: 1}}\nadd_dirs: ../shared\n\
             output_schema: {type: object, required: [verdict], properties: {verdict: {type: string}}}\n",
        );
        assert_eq!(
            frontmatter,
            ClaudeOptions {
                permission_mode: Some("plan".into()),
                tools: Some(vec!["Read".into(), "Grep".into(), "Glob".into()]),
                allowed_tools: vec!["Read".into(), "Bash(git diff:*)".into()],
                disallowed_tools: vec!["WebFetch".into()],
                max_turns: Some(4),
                fallback_model: Some("haiku".into()),
                append_system_prompt: Some("Be terse.\nCite files.".into()),
                mcp_config: vec![
                    ConfigSource::Path("mcp.json".into()),
                    ConfigSource::Json(r#"{"mcpServers":{}}"#.into())
                ],
                settings: Some(ConfigSource::Json(r#"{"env":{"A":1},"model":"haiku"}"#.into())),
                add_dirs: vec!["../shared".into()],
                output_schema: Some(
                    r#"{"properties":{"verdict":{"type":"string"}},"required":["verdict"],"type":"object"}"#.into()
                ),
            }
        );
    }

    #[test]
    fn claude_options_empty_values() {
        let frontmatter =
            parse("tools: ''\nallowed_tools: []\npermission_mode:\nmcp_config: x.json\nsettings: s.json\n");
        assert_eq!(frontmatter.tools, Some(Vec::new()), "no tools at all");
        assert!(frontmatter.allowed_tools.is_empty());
        assert_eq!(frontmatter.permission_mode, None);
        assert_eq!(frontmatter.mcp_config.len(), 1);
        assert_eq!(parse("tools: []").tools, Some(Vec::new()));
        assert_eq!(parse("tools:").tools, None);
        assert_eq!(parse("add_dirs: [a, b]").add_dirs, ["a", "b"]);
    }

    #[test]
    fn permission_mode_refusals() {
        assert_eq!(
            refuse("permission_mode: plna"),
            "Invalid YAML frontmatter: `permission_mode` must be one of acceptEdits, auto, bypassPermissions, \
             manual, dontAsk, plan, found the text \"plna\"; did you mean `plan`?"
        );
        assert_eq!(
            refuse("permission_mode: readonly"),
            "Invalid YAML frontmatter: `permission_mode` must be one of acceptEdits, auto, bypassPermissions, \
             manual, dontAsk, plan, found the text \"readonly\""
        );
        assert_eq!(
            refuse("permission_mode: [plan]"),
            "Invalid YAML frontmatter: `permission_mode` must be one of acceptEdits, auto, bypassPermissions, \
             manual, dontAsk, plan, found a list"
        );
    }

    #[test]
    fn tool_list_refusals() {
        assert_eq!(
            refuse("tools: {Read: true}"),
            "Invalid YAML frontmatter: `tools` must be a list of tool names such as `[Read, Grep]`, or one text such \
             as `Read,Grep`, found a mapping"
        );
        assert_eq!(
            refuse("allowed_tools: 3"),
            "Invalid YAML frontmatter: `allowed_tools` must be a list of tool names such as `[Read, Grep]`, or one \
             text such as `Read,Grep`, found the number 3"
        );
        assert_eq!(
            refuse("disallowed_tools: [Bash, [Edit]]"),
            "Invalid YAML frontmatter: `disallowed_tools` item 2 must be a tool name such as `Read` or \
             `Bash(git diff:*)`, found a list"
        );
    }

    #[test]
    fn max_turns_refusals() {
        for (yaml, found) in [
            ("max_turns: 0", "the number 0"),
            ("max_turns: -3", "the number -3"),
            ("max_turns: 2.5", "the number 2.5"),
            ("max_turns: '5'", "the text \"5\""),
        ] {
            assert_eq!(
                refuse(yaml),
                format!(
                    "Invalid YAML frontmatter: `max_turns` must be a whole number of turns, 1 or more, found {found}"
                )
            );
        }
    }

    #[test]
    fn text_option_refusals() {
        assert_eq!(
            refuse("fallback_model: [haiku]"),
            "Invalid YAML frontmatter: `fallback_model` must be a model name such as `haiku`, found a list"
        );
        assert_eq!(
            refuse("append_system_prompt: {a: b}"),
            "Invalid YAML frontmatter: `append_system_prompt` must be text, found a mapping"
        );
        assert_eq!(
            refuse("append_system_prompt: true"),
            "Invalid YAML frontmatter: `append_system_prompt` must be text, found the value true"
        );
    }

    #[test]
    fn path_option_refusals() {
        assert_eq!(
            refuse("mcp_config: 7"),
            "Invalid YAML frontmatter: `mcp_config` must be a path to an MCP configuration file, an inline mapping, \
             or a list of them, found the number 7"
        );
        assert_eq!(
            refuse("mcp_config: [a.json, [b.json]]"),
            "Invalid YAML frontmatter: `mcp_config` item 2 must be a path or an inline mapping, found a list"
        );
        assert_eq!(
            refuse("settings: [a.json]"),
            "Invalid YAML frontmatter: `settings` must be a path to a settings file, or a mapping of settings, found a list"
        );
        assert_eq!(
            refuse("add_dirs: {a: b}"),
            "Invalid YAML frontmatter: `add_dirs` must be a directory or a list of directories, found a mapping"
        );
        assert_eq!(
            refuse("add_dirs: [ok, 3]"),
            "Invalid YAML frontmatter: `add_dirs` item 2 must be a directory, found the number 3"
        );
        assert_eq!(
            refuse("output_schema: object"),
            "Invalid YAML frontmatter: `output_schema` must be a JSON Schema written as a mapping, such as \
             `{type: object}`, found the text \"object\""
        );
    }

    #[test]
    fn tool_names_split_at_commas_outside_parentheses() {
        assert_eq!(split_tools("Read, Grep,,Bash(git add:*)"), ["Read", "Grep", "Bash(git add:*)"]);
        assert_eq!(split_tools("Bash(echo a,b),Edit"), ["Bash(echo a,b)", "Edit"]);
        assert!(split_tools("  ").is_empty());
    }

    #[test]
    fn json_keys_are_sorted() {
        let value: Value = serde_json::from_str(r#"{"zeta":1,"alpha":1,"mid":1}"#).unwrap();
        // serde_json's maps keep keys sorted, so the flag's text is the same on every load.
        assert_eq!(value.to_string(), r#"{"alpha":1,"mid":1,"zeta":1}"#);
    }
}
