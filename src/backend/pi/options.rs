//! The pi options a state (frontmatter) or a workflow (`backend: {name: pi,
//! options: …}` in `workflow.yaml`, R13.1) may set, as raymond names them.

use serde_json::Value;

use crate::backend::options::{OptionError, OptionValues, flag, text, text_list};

/// The keys of [`PiOptions`].
pub(crate) const OPTION_KEYS: [&str; 11] = [
    "provider",
    "thinking",
    "tools",
    "no_builtin_tools",
    "no_tools",
    "no_extensions",
    "no_skills",
    "extensions",
    "skills",
    "session_dir",
    "append_system_prompt",
];

/// What a state asks of pi beyond its model and effort.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct PiOptions {
    pub(crate) provider: Option<String>,
    /// `--thinking`; the state's `effort` when absent.
    pub(crate) thinking: Option<String>,
    /// `--tools`; `Some(empty)` is `--no-tools`.
    pub(crate) tools: Option<Vec<String>>,
    pub(crate) no_builtin_tools: bool,
    pub(crate) no_tools: bool,
    pub(crate) no_extensions: bool,
    pub(crate) no_skills: bool,
    pub(crate) extensions: Vec<String>,
    pub(crate) skills: Vec<String>,
    pub(crate) session_dir: Option<String>,
    pub(crate) append_system_prompt: Option<String>,
}

impl PiOptions {
    /// The pi options among `values` (keys of other backends are skipped).
    pub(crate) fn from_values(values: &OptionValues) -> Result<PiOptions, OptionError> {
        let mut options = PiOptions::default();
        for (key, value) in values {
            options.read(key, value)?;
        }
        let exclusive = [
            ("tools", options.tools.is_some()),
            ("no_builtin_tools", options.no_builtin_tools),
            ("no_tools", options.no_tools),
        ];
        let set: Vec<&str> = exclusive.iter().filter(|(_, set)| *set).map(|(key, _)| *key).collect();
        if let [first, second, ..] = set[..] {
            return Err(OptionError::Conflict {
                first: first.to_string(),
                second: second.to_string(),
                why: "pi takes one of `--tools`, `--no-builtin-tools` and `--no-tools`",
            });
        }
        Ok(options)
    }

    fn read(&mut self, key: &str, value: &Value) -> Result<(), OptionError> {
        match key {
            "provider" => self.provider = text(key, value, "a provider name such as `anthropic`")?,
            "thinking" => {
                self.thinking = crate::backend::options::choice(
                    key,
                    value,
                    &super::THINKING_LEVELS,
                    "a thinking level such as `medium`",
                )?
                .map(String::from)
            }
            "tools" => {
                self.tools =
                    text_list(key, value, "a list of pi tools such as `[read, grep]`", "a tool name")?.map(|tools| {
                        tools
                            .iter()
                            .flat_map(|tool| tool.split(','))
                            .map(str::trim)
                            .filter(|tool| !tool.is_empty())
                            .map(String::from)
                            .collect()
                    })
            }
            "no_builtin_tools" => self.no_builtin_tools = flag(key, value)?,
            "no_tools" => self.no_tools = flag(key, value)?,
            "no_extensions" => self.no_extensions = flag(key, value)?,
            "no_skills" => self.no_skills = flag(key, value)?,
            "extensions" => {
                self.extensions = text_list(key, value, "a list of extensions", "an extension")?.unwrap_or_default()
            }
            "skills" => {
                self.skills = text_list(key, value, "a list of skill paths", "a skill path")?.unwrap_or_default()
            }
            "session_dir" => self.session_dir = text(key, value, "a directory")?,
            "append_system_prompt" => self.append_system_prompt = text(key, value, "text")?,
            _ => {}
        }
        Ok(())
    }
}

impl PiOptions {
    /// The options with relative paths made absolute from the workflow's
    /// directory, as every backend's paths are (`docs/backends.md`): the
    /// `session_dir`, each skill, and each extension written as a relative
    /// path (`./…`, `../…`); an extension given as a package source
    /// (`npm:…`, `git:…`) or an absolute path is passed as written.
    pub(crate) fn resolve_paths(&self, workflow_dir: &std::path::Path) -> PiOptions {
        let absolute = |path: &String| workflow_dir.join(path).to_string_lossy().into_owned();
        let mut resolved = self.clone();
        resolved.session_dir = self.session_dir.as_ref().map(absolute);
        resolved.skills = self.skills.iter().map(absolute).collect();
        resolved.extensions = self
            .extensions
            .iter()
            .map(|extension| {
                if extension.starts_with("./") || extension.starts_with("../") {
                    absolute(extension)
                } else {
                    extension.clone()
                }
            })
            .collect();
        resolved
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_start_at_the_workflows_directory() {
        let options = PiOptions {
            session_dir: Some("sessions".into()),
            skills: vec!["skills/a".into(), "/abs/b".into()],
            extensions: vec!["./ext.ts".into(), "npm:pi-ext".into(), "/abs/ext.ts".into()],
            ..PiOptions::default()
        };
        let resolved = options.resolve_paths(std::path::Path::new("/w"));
        assert_eq!(resolved.session_dir.as_deref(), Some("/w/sessions"));
        assert_eq!(resolved.skills, ["/w/skills/a", "/abs/b"]);
        assert_eq!(resolved.extensions, ["/w/./ext.ts", "npm:pi-ext", "/abs/ext.ts"]);
    }

    #[test]
    fn the_tool_options_exclude_each_other() {
        let values: OptionValues =
            [("tools".to_string(), serde_json::json!(["read"])), ("no_tools".to_string(), serde_json::json!(true))]
                .into_iter()
                .collect();
        let error = PiOptions::from_values(&values).unwrap_err();
        assert_eq!(
            error.to_string(),
            "`tools` and `no_tools` cannot both be set: pi takes one of `--tools`, `--no-builtin-tools` and `--no-tools`"
        );
    }
}
