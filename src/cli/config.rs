//! `.baton/config.toml`: project defaults for options a user would otherwise pass
//! on every run. Precedence everywhere is CLI flag > config file > built-in default.
//!
//! Unknown keys are errors (with a did-you-mean): a misspelt `modle = "opus"` that
//! silently did nothing would be worse than a refusal.
//!
//! raymond's config is read too, so a project can switch without editing it: a
//! `[raymond]` table (in `.baton/config.toml`, or in `.raymond/config.toml` beside
//! the `.baton` directory when Baton has none) is read with raymond's rules, which
//! ignore unknown keys. Baton's own keys win over the table's.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::text::duration::{SecondsError, number_text, seconds};
use crate::text::suggestion::did_you_mean;

pub(crate) const CONFIG_FILE: &str = "config.toml";

/// The models and efforts Baton accepts on its command line and in config (R5.22).
pub(crate) const MODELS: [&str; 3] = ["opus", "sonnet", "haiku"];
pub(crate) use crate::backend::claude::vocabulary::EFFORTS;
use crate::backend::profile::profile;
use crate::ids::BackendName;

const KEYS: [&str; 15] = [
    "backend",
    "model",
    "effort",
    "dangerously_skip_permissions",
    "claude_bin",
    "pi_bin",
    "codex_bin",
    "budget",
    "timeout",
    "no_wait",
    "no_debug",
    "verbose",
    "name",
    "engine",
    "otel",
];

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Config {
    /// The run's backend when `--backend` says none.
    pub(crate) backend: Option<String>,
    pub(crate) model: Option<String>,
    pub(crate) effort: Option<String>,
    pub(crate) dangerously_skip_permissions: Option<bool>,
    pub(crate) claude_bin: Option<PathBuf>,
    pub(crate) pi_bin: Option<PathBuf>,
    pub(crate) codex_bin: Option<PathBuf>,
    pub(crate) budget: Option<f64>,
    pub(crate) timeout: Option<f64>,
    pub(crate) no_wait: Option<bool>,
    pub(crate) no_debug: Option<bool>,
    pub(crate) verbose: Option<bool>,
    /// The terminal title's label (raymond's `--name`).
    pub(crate) name: Option<String>,
    /// Where new runs' steps execute when `--engine` says nothing: `local` or
    /// `restate=INGRESS_URL`, or the table `[engine] restate = "INGRESS_URL"`
    /// (`docs/distributed.md`).
    pub(crate) engine: Option<String>,
    /// `[otel] endpoint = "URL"`: export runs' traces there (`docs/observability.md`).
    pub(crate) otel: Option<OtelTable>,
    /// raymond settings Baton reads but cannot honour, to be warned about.
    #[serde(skip)]
    pub(crate) ignored: Vec<&'static str>,
}

/// The `[otel]` table.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct OtelTable {
    /// The collector's OTLP base URL (http:// or https://), as `OTEL_EXPORTER_OTLP_ENDPOINT` takes it.
    pub(crate) endpoint: Option<String>,
}

/// raymond's `[raymond]` table: its keys, unknown ones ignored as raymond does.
#[derive(Debug, Default, Deserialize)]
struct RaymondTable {
    model: Option<String>,
    effort: Option<String>,
    dangerously_skip_permissions: Option<bool>,
    budget: Option<f64>,
    timeout: Option<f64>,
    no_wait: Option<bool>,
    no_debug: Option<bool>,
    verbose: Option<bool>,
    name: Option<String>,
    /// raymond names task folders with it; Baton's layout is fixed, so it is only noted.
    task_folder_pattern: Option<String>,
}

impl RaymondTable {
    /// `config` with the table's values where `config` has none.
    fn under(self, mut config: Config) -> Config {
        if self.task_folder_pattern.is_some() {
            config.ignored.push("task_folder_pattern");
        }
        config.model = config.model.or(self.model);
        config.effort = config.effort.or(self.effort);
        config.dangerously_skip_permissions = config.dangerously_skip_permissions.or(self.dangerously_skip_permissions);
        config.budget = config.budget.or(self.budget);
        config.timeout = config.timeout.or(self.timeout);
        config.no_wait = config.no_wait.or(self.no_wait);
        config.no_debug = config.no_debug.or(self.no_debug);
        config.verbose = config.verbose.or(self.verbose);
        config.name = config.name.or(self.name);
        config
    }
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{path}: {problem}")]
    Invalid { path: PathBuf, problem: ConfigProblem },
}

/// What is wrong inside a config file.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub(crate) enum ConfigProblem {
    #[error("unknown key `{key}`{} (valid keys: {})", suggestion_of(.suggestion), KEYS.join(", "))]
    UnknownKey { key: String, suggestion: Option<&'static str> },
    /// TOML syntax or a value of the wrong type, as the parser words it.
    #[error("{0}")]
    Syntax(String),
    #[error(transparent)]
    Choice(#[from] ChoiceError),
    #[error("invalid budget `{}`: expected a non-negative amount in US dollars", number_text(*.0))]
    Budget(f64),
    #[error("invalid timeout `{}`: {error} (0 disables it)", number_text(*.value))]
    Timeout { value: f64, error: SecondsError },
}

fn suggestion_of(suggestion: &Option<&'static str>) -> String {
    suggestion.map_or_else(String::new, |key| format!("; did you mean `{key}`?"))
}

/// A model or effort outside the accepted list.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid {what} `{value}`: expected one of {}", .valid.join(", "))]
pub(crate) struct ChoiceError {
    what: &'static str,
    value: String,
    valid: &'static [&'static str],
}

/// Check `value` against `valid` (ignoring case and surrounding space) and return
/// its normalised form.
pub(crate) fn check_choice(
    what: &'static str,
    value: &str,
    valid: &'static [&'static str],
) -> Result<String, ChoiceError> {
    let normalised = value.trim().to_lowercase();
    if valid.contains(&normalised.as_str()) {
        Ok(normalised)
    } else {
        Err(ChoiceError { what, value: value.to_string(), valid })
    }
}

/// `model` (trimmed, lowercased) if backend `backend` takes it. Claude's run-wide
/// model is one of its aliases (R5.21); another backend's is checked against
/// its vocabulary.
pub(crate) fn check_model(backend: BackendName, model: &str) -> Result<String, String> {
    if backend == BackendName::Claude {
        return check_choice("model", model, &MODELS).map_err(|_| {
            // A typo gets a did-you-mean; a model of another backend says which
            // (`--model gpt-5` wants `--backend codex`).
            let wanted = model.trim().to_lowercase();
            let hint = match did_you_mean(&wanted, MODELS) {
                Some(known) => format!("; did you mean `{known}`?"),
                None => profile(backend)
                    .owner_of(&wanted)
                    .map(|owner| {
                        format!(" (`{}` is a {} model: `backend: {owner}`?)", model.trim(), profile(owner).cli)
                    })
                    .unwrap_or_default(),
            };
            format!("invalid model `{model}`: expected one of {}{hint}", MODELS.join(", "))
        });
    }
    let normalised = model.trim().to_lowercase();
    match profile(backend).model_problem(&normalised) {
        None => Ok(normalised),
        Some(problem) => Err(problem),
    }
}

/// `effort` (trimmed, lowercased) if backend `backend` takes it.
pub(crate) fn check_effort(backend: BackendName, effort: &str) -> Result<String, String> {
    let normalised = effort.trim().to_lowercase();
    match profile(backend).effort_problem(&normalised) {
        None => Ok(normalised),
        Some(_) if backend == BackendName::Claude => {
            Err(format!("invalid effort `{effort}`: expected one of {}", EFFORTS.join(", ")))
        }
        Some(problem) => Err(problem),
    }
}

impl Config {
    /// Say which read settings are ignored (once tracing is set up).
    pub(crate) fn warn_ignored(&self) {
        for key in &self.ignored {
            tracing::warn!(
                "`{key}` in the [raymond] config table is ignored: Baton's task folders are .baton/tasks/RUN/AGENT"
            );
        }
    }

    /// The config of the `.baton` directory `baton_dir`, else raymond's
    /// `.raymond/config.toml` beside it; none when neither exists.
    pub(crate) fn load(baton_dir: &Path) -> Result<Config, ConfigError> {
        let raymond = baton_dir.parent().map(|project| project.join(".raymond").join(CONFIG_FILE));
        for path in std::iter::once(baton_dir.join(CONFIG_FILE)).chain(raymond) {
            match std::fs::read_to_string(&path) {
                Ok(text) => return Config::parse(&text).map_err(|problem| ConfigError::Invalid { path, problem }),
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
                Err(source) => return Err(ConfigError::Read { path, source }),
            }
        }
        Ok(Config::default())
    }

    fn parse(text: &str) -> Result<Config, ConfigProblem> {
        let mut table: toml::Table =
            toml::from_str(text).map_err(|error| ConfigProblem::Syntax(error.message().to_string()))?;
        let raymond = match table.remove("raymond") {
            Some(toml::Value::Table(raymond)) => Some(
                toml::Value::Table(raymond)
                    .try_into::<RaymondTable>()
                    .map_err(|error| ConfigProblem::Syntax(format!("[raymond]: {}", error.message())))?,
            ),
            Some(_) => return Err(ConfigProblem::Syntax("`raymond` must be a table ([raymond])".to_string())),
            None => None,
        };
        // `[engine]` with `restate = "URL"` is `engine = "restate=URL"` written as a table.
        if let Some(toml::Value::Table(engine)) = table.get("engine") {
            let text = match (engine.len(), engine.get("restate")) {
                (1, Some(toml::Value::String(url))) => format!("restate={url}"),
                _ => {
                    let keys: Vec<&str> = engine.keys().map(String::as_str).collect();
                    return Err(ConfigProblem::Syntax(format!(
                        "[engine] takes one key, `restate = \"INGRESS_URL\"`, found {}",
                        if keys.is_empty() { "an empty table".to_string() } else { format!("`{}`", keys.join("`, `")) }
                    )));
                }
            };
            table.insert("engine".to_string(), toml::Value::String(text));
        }
        let config: Config = toml::Value::Table(table).try_into().map_err(|error: toml::de::Error| {
            let message = error.message().to_string();
            // serde names the unknown field between backticks.
            match message.split('`').nth(1).filter(|_| message.starts_with("unknown field")) {
                Some(key) => ConfigProblem::UnknownKey { key: key.to_string(), suggestion: did_you_mean(key, KEYS) },
                None => ConfigProblem::Syntax(message),
            }
        })?;
        let config = match raymond {
            Some(table) => table.under(config),
            None => config,
        };
        let backend = match &config.backend {
            Some(name) => {
                BackendName::parse(name).map_err(|error| ConfigProblem::Syntax(format!("`backend`: {error}")))?
            }
            None => BackendName::Claude,
        };
        if let Some(model) = &config.model {
            check_model(backend, model).map_err(ConfigProblem::Syntax)?;
        }
        if let Some(effort) = &config.effort {
            check_effort(backend, effort).map_err(ConfigProblem::Syntax)?;
        }
        if let Some(budget) = config.budget.filter(|budget| !budget.is_finite() || *budget < 0.0) {
            return Err(ConfigProblem::Budget(budget));
        }
        if let Some(value) = config.timeout
            && let Err(error) = seconds(value)
        {
            return Err(ConfigProblem::Timeout { value, error });
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
            Config::parse("modle = \"opus\"\n").unwrap_err().to_string(),
            "unknown key `modle`; did you mean `model`? (valid keys: backend, model, effort, \
             dangerously_skip_permissions, claude_bin, pi_bin, codex_bin, budget, timeout, no_wait, no_debug, verbose, \
             name, engine, otel)"
        );
    }

    #[test]
    fn the_engine_is_a_key_or_an_engine_table() {
        let key = Config::parse("engine = \"restate=http://127.0.0.1:8080\"\n").unwrap();
        let table = Config::parse("[engine]\nrestate = \"http://127.0.0.1:8080\"\n").unwrap();
        assert_eq!(key.engine.as_deref(), Some("restate=http://127.0.0.1:8080"));
        assert_eq!(table, key);
        assert_eq!(
            Config::parse("[engine]\nrestat = \"http://127.0.0.1:8080\"\n").unwrap_err().to_string(),
            "[engine] takes one key, `restate = \"INGRESS_URL\"`, found `restat`"
        );
        assert_eq!(
            Config::parse("[engine]\n").unwrap_err().to_string(),
            "[engine] takes one key, `restate = \"INGRESS_URL\"`, found an empty table"
        );
    }

    #[test]
    fn invalid_model_lists_the_valid_ones() {
        assert_eq!(
            Config::parse("model = \"gpt\"\n").unwrap_err().to_string(),
            "invalid model `gpt`: expected one of opus, sonnet, haiku (`gpt` is a Codex model: `backend: codex`?)"
        );
    }

    #[test]
    fn timeouts_out_of_range_are_refused() {
        assert_eq!(
            Config::parse("timeout = 1e300\n").unwrap_err().to_string(),
            "invalid timeout `1e300`: expected at most 31536000 seconds (1 year) (0 disables it)"
        );
        assert_eq!(
            Config::parse("timeout = -5\n").unwrap_err().to_string(),
            "invalid timeout `-5`: expected a number of seconds that is not negative (0 disables it)"
        );
    }

    #[test]
    fn a_raymond_table_is_read_with_raymonds_rules_and_baton_keys_win() {
        let config = Config::parse(
            "model = \"opus\"\n[raymond]\nmodel = \"haiku\"\nbudget = 3\nno_debug = true\nname = \"nightly\"\n\
             some_future_key = 1\n",
        )
        .unwrap();
        assert_eq!(config.model.as_deref(), Some("opus"));
        assert_eq!(config.budget, Some(3.0));
        assert_eq!(config.no_debug, Some(true));
        assert_eq!(config.name.as_deref(), Some("nightly"));
        assert_eq!(
            Config::parse("[raymond]\nmodel = \"gpt\"\n").unwrap_err().to_string(),
            "invalid model `gpt`: expected one of opus, sonnet, haiku (`gpt` is a Codex model: `backend: codex`?)"
        );
    }

    #[test]
    fn raymonds_config_file_is_read_when_baton_has_none() {
        let project = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(project.path().join(".raymond")).unwrap();
        std::fs::write(project.path().join(".raymond/config.toml"), "[raymond]\ntimeout = 90\n").unwrap();
        let baton_dir = project.path().join(".baton");
        assert_eq!(Config::load(&baton_dir).unwrap().timeout, Some(90.0));
        std::fs::create_dir_all(&baton_dir).unwrap();
        std::fs::write(baton_dir.join("config.toml"), "timeout = 30\n").unwrap();
        assert_eq!(Config::load(&baton_dir).unwrap().timeout, Some(30.0), ".baton/config.toml first");
    }

    #[test]
    fn a_missing_file_is_an_empty_config() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Config::load(dir.path()).unwrap(), Config::default());
    }
}
