//! The Codex options a state may set: its sandbox (or Claude's
//! `permission_mode`, mapped onto one), a JSON Schema for the result, extra
//! writable directories, and raw `-c key=value` overrides.

use std::collections::BTreeMap;

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
    /// `-c key=value` overrides, values as TOML-ish text.
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
                    let text = match setting {
                        Value::String(text) => format!("{text:?}"),
                        Value::Number(_) | Value::Bool(_) | Value::Array(_) | Value::Object(_) => setting.to_string(),
                        Value::Null => {
                            return Err(OptionError::WrongType {
                                key: format!("codex_config.{name}"),
                                expected: "a value",
                                found: describe(setting),
                            });
                        }
                    };
                    self.config.insert(name.clone(), text);
                }
            }
            _ => {}
        }
        Ok(())
    }
}
