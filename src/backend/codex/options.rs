//! The Codex options a state may set: its sandbox (or Claude's
//! `permission_mode`, mapped onto one), a JSON Schema for the result, extra
//! writable directories, and raw `-c key=value` overrides.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::backend::options::{OptionError, OptionValues, choice, describe, text_list};

/// The keys of [`CodexOptions`].
pub(crate) const OPTION_KEYS: [&str; 5] = ["sandbox", "permission_mode", "output_schema", "add_dirs", "codex_config"];

/// `codex exec --sandbox` choices.
pub(crate) const SANDBOXES: [&str; 3] = ["read-only", "workspace-write", "danger-full-access"];

/// What a state asks of Codex beyond its model and effort.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct CodexOptions {
    /// `--sandbox`, or `None` for the run's permission choice.
    pub(crate) sandbox: Option<String>,
    /// Claude's `permission_mode`, as written, mapped by the command builder.
    pub(crate) permission_mode: Option<String>,
    /// A JSON Schema, as compact JSON text.
    pub(crate) output_schema: Option<String>,
    pub(crate) add_dirs: Vec<String>,
    /// `-c key=value` overrides, values as TOML text.
    pub(crate) config: BTreeMap<String, String>,
}

impl CodexOptions {
    /// The Codex options among `values` (keys of other backends are skipped).
    pub(crate) fn from_values(values: &OptionValues) -> Result<CodexOptions, OptionError> {
        let mut options = CodexOptions::default();
        for (key, value) in values {
            options.read(key, value)?;
        }
        Ok(options)
    }

    fn read(&mut self, key: &str, value: &Value) -> Result<(), OptionError> {
        match key {
            "sandbox" => {
                self.sandbox = choice(key, value, &SANDBOXES, "a sandbox such as `workspace-write`")?.map(String::from)
            }
            "permission_mode" => {
                self.permission_mode = choice(
                    key,
                    value,
                    &crate::backend::claude::options::PERMISSION_MODES,
                    "a permission mode such as `acceptEdits`",
                )?
                .map(String::from)
            }
            "output_schema" => {
                self.output_schema = match value {
                    Value::Null => None,
                    Value::Object(_) => Some(value.to_string()),
                    other => {
                        return Err(OptionError::wrong(
                            key,
                            "a JSON Schema written as a mapping, such as `{type: object}`",
                            other,
                        ));
                    }
                }
            }
            "add_dirs" => {
                self.add_dirs =
                    text_list(key, value, "a directory or a list of directories", "a directory")?.unwrap_or_default()
            }
            "codex_config" => {
                let Value::Object(entries) = value else {
                    if value.is_null() {
                        return Ok(());
                    }
                    return Err(OptionError::wrong(
                        key,
                        "a mapping of Codex settings such as `{model_verbosity: low}`",
                        value,
                    ));
                };
                for (name, setting) in entries {
                    let Some(text) = toml_value(setting) else {
                        return Err(OptionError::WrongType {
                            key: format!("codex_config.{name}"),
                            expected: "a value (text, number, true/false, list or mapping) without nulls",
                            found: describe(setting),
                        });
                    };
                    self.config.insert(name.clone(), text);
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// The options with `add_dirs` made absolute against the agent's `cwd`.
    pub(crate) fn resolve_paths(&self, cwd: &Path) -> CodexOptions {
        let mut resolved = self.clone();
        resolved.add_dirs = self.add_dirs.iter().map(|dir| cwd.join(dir).to_string_lossy().into_owned()).collect();
        resolved
    }
}

/// A JSON value as the TOML text `codex -c key=value` parses; `None` for a null
/// anywhere in it (TOML has none).
fn toml_value(value: &Value) -> Option<String> {
    Some(match value {
        Value::Null => return None,
        // JSON's string escapes are TOML's basic-string escapes.
        Value::String(_) | Value::Number(_) | Value::Bool(_) => value.to_string(),
        Value::Array(items) => format!("[{}]", items.iter().map(toml_value).collect::<Option<Vec<_>>>()?.join(", ")),
        Value::Object(entries) => {
            let entries = entries
                .iter()
                .map(|(key, value)| Some(format!("{} = {}", Value::String(key.clone()), toml_value(value)?)))
                .collect::<Option<Vec<_>>>()?;
            format!("{{{}}}", entries.join(", "))
        }
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn codex_config_values_become_toml() {
        let values: OptionValues = [(
            "codex_config".to_string(),
            json!({"model_verbosity": "low", "tools": {"web_search": true}, "n": 3, "list": ["a", "b\"c"]}),
        )]
        .into_iter()
        .collect();
        let options = CodexOptions::from_values(&values).expect("valid");
        assert_eq!(options.config["model_verbosity"], "\"low\"");
        assert_eq!(options.config["tools"], "{\"web_search\" = true}");
        assert_eq!(options.config["n"], "3");
        assert_eq!(options.config["list"], "[\"a\", \"b\\\"c\"]");
    }

    #[test]
    fn a_null_in_codex_config_is_refused() {
        let values: OptionValues = [("codex_config".to_string(), json!({"x": {"y": null}}))].into_iter().collect();
        assert_eq!(
            CodexOptions::from_values(&values).unwrap_err().to_string(),
            "`codex_config.x` must be a value (text, number, true/false, list or mapping) without nulls, found a mapping"
        );
    }
}
