//! `.baton/config.toml`: project defaults for options a user would otherwise pass
//! on every run. Precedence everywhere is CLI flag > config file > built-in default.
//!
//! Unknown keys are errors (with a did-you-mean): a misspelt `modle = "opus"` that
//! silently did nothing would be worse than a refusal.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::workflow::suggestion::did_you_mean;

pub(crate) const CONFIG_FILE: &str = "config.toml";

/// The models and efforts Baton accepts on its command line and in config (R5.22).
pub(crate) const MODELS: [&str; 3] = ["opus", "sonnet", "haiku"];
pub(crate) const EFFORTS: [&str; 4] = ["low", "medium", "high", "max"];

const KEYS: [&str; 7] =
    ["model", "effort", "dangerously_skip_permissions", "claude_bin", "budget", "timeout", "no_wait"];

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Config {
    pub(crate) model: Option<String>,
    pub(crate) effort: Option<String>,
    pub(crate) dangerously_skip_permissions: Option<bool>,
    pub(crate) claude_bin: Option<PathBuf>,
    pub(crate) budget: Option<f64>,
    pub(crate) timeout: Option<f64>,
    pub(crate) no_wait: Option<bool>,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
}

/// Check `value` against `valid`, or say what is valid.
pub(crate) fn check_choice(what: &str, value: &str, valid: &[&str]) -> Result<String, String> {
    let normalised = value.trim().to_lowercase();
    if valid.contains(&normalised.as_str()) {
        Ok(normalised)
    } else {
        Err(format!("invalid {what} `{value}`: expected one of {}", valid.join(", ")))
    }
}

impl Config {
    /// The config of the `.baton` directory `baton_dir`; none when the file is absent.
    pub(crate) fn load(baton_dir: &Path) -> Result<Config, ConfigError> {
        let path = baton_dir.join(CONFIG_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Config::default()),
            Err(source) => return Err(ConfigError::Read { path, source }),
        };
        Config::parse(&text).map_err(|message| ConfigError::Invalid { path, message })
    }

    fn parse(text: &str) -> Result<Config, String> {
        let config: Config = toml::from_str(text).map_err(|error| {
            let message = error.message().to_string();
            // serde names the unknown field; add the closest valid key.
            match message.split('`').nth(1).filter(|_| message.starts_with("unknown field")) {
                Some(field) => match did_you_mean(field, KEYS) {
                    Some(key) => {
                        format!("unknown key `{field}`; did you mean `{key}`? (valid keys: {})", KEYS.join(", "))
                    }
                    None => format!("unknown key `{field}` (valid keys: {})", KEYS.join(", ")),
                },
                None => message,
            }
        })?;
        if let Some(model) = &config.model {
            check_choice("model", model, &MODELS)?;
        }
        if let Some(effort) = &config.effort {
            check_choice("effort", effort, &EFFORTS)?;
        }
        if let Some(budget) = config.budget.filter(|budget| !budget.is_finite() || *budget < 0.0) {
            return Err(format!("invalid budget `{budget}`: expected a non-negative amount in US dollars"));
        }
        if let Some(timeout) = config.timeout.filter(|timeout| !timeout.is_finite()) {
            return Err(format!("invalid timeout `{timeout}`: expected a number of seconds (0 disables it)"));
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_is_read() {
        let config = Config::parse(
            "model = \"opus\"\neffort = \"low\"\ndangerously_skip_permissions = false\nclaude_bin = \"/opt/claude\"\n\
             budget = 2.5\ntimeout = 60\nno_wait = true\n",
        )
        .unwrap();
        assert_eq!(config.model.as_deref(), Some("opus"));
        assert_eq!(config.dangerously_skip_permissions, Some(false));
        assert_eq!(config.budget, Some(2.5));
        assert_eq!(config.timeout, Some(60.0));
        assert_eq!(config.no_wait, Some(true));
    }

    #[test]
    fn unknown_key_suggests_the_closest() {
        assert_eq!(
            Config::parse("modle = \"opus\"\n").unwrap_err(),
            "unknown key `modle`; did you mean `model`? (valid keys: model, effort, dangerously_skip_permissions, \
             claude_bin, budget, timeout, no_wait)"
        );
    }

    #[test]
    fn invalid_model_lists_the_valid_ones() {
        assert_eq!(
            Config::parse("model = \"gpt\"\n").unwrap_err(),
            "invalid model `gpt`: expected one of opus, sonnet, haiku"
        );
    }

    #[test]
    fn a_missing_file_is_an_empty_config() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Config::load(dir.path()).unwrap(), Config::default());
    }
}
