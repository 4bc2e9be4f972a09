//! `workflow.yaml` manifests: what a workflow says about itself (R13.1–R13.3).
//!
//! A manifest sits beside the states (a directory's or a zip's `workflow.yaml`) or
//! at the top of a YAML workflow, next to `states`. Baton's command line uses it
//! where a user would expect it (`docs/decisions.md`, "Manifests"): a workflow for a
//! backend Baton lacks is refused before anything runs, `input.mode` is checked,
//! `default_budget` is the run's budget unless `--budget` says otherwise,
//! `working_directory` is where its agents start, and `environment` reaches every
//! script and Claude process of the run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use yaml_rust2::{Yaml, YamlLoader};

use crate::backend::options::OptionValues;
use crate::backend::profile::profile;
use crate::ids::BackendName;
use crate::syntax::frontmatter::StateFrontmatter;
use crate::syntax::yaml_limits;
use crate::workflow::scope::{ManifestText, Scope};
use crate::workflow::yaml_scope::non_negative_number;

/// The manifest file of a directory or zip workflow.
pub(crate) const MANIFEST_FILE: &str = "workflow.yaml";

/// Whether the workflow takes an input (R13.1 `input.mode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum InputMode {
    Required,
    #[default]
    Optional,
    None,
}

/// Whether the workflow asks a person (R13.1 `requires_human_input`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum HumanInput {
    #[default]
    Auto,
    Yes,
    No,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Manifest {
    pub(crate) id: String,
    pub(crate) name: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) input_mode: InputMode,
    pub(crate) input_label: Option<String>,
    pub(crate) input_description: Option<String>,
    pub(crate) default_budget: Option<f64>,
    pub(crate) working_directory: Option<String>,
    /// As written: `${VAR}` is replaced at launch (`environment_now`).
    pub(crate) environment: BTreeMap<String, String>,
    pub(crate) requires_human_input: HumanInput,
    /// The backend the workflow's prompt states run on, unless a state says
    /// otherwise; `None` leaves the run's choice (`--backend`, config, Claude).
    pub(crate) backend: Option<BackendChoice>,
}

/// `backend:` — raymond's `pi` or `{name: pi, options: {…}}` (R13.1), for any
/// backend Baton has. The options are checked by that backend now, so a mistake
/// is reported before anything runs, and handed to it under each state's own.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct BackendChoice {
    pub(crate) name: BackendName,
    pub(crate) options: OptionValues,
}

impl BackendChoice {
    /// The backend a state runs on and the options it gets: the state's `backend`,
    /// else its workflow's manifest's, else the run's; the manifest's
    /// `backend.options` (when it names the same backend) under the state's own keys.
    pub(crate) fn for_state(
        frontmatter: &StateFrontmatter,
        workflow: &Scope,
        run_default: BackendName,
    ) -> Result<(BackendName, OptionValues), String> {
        let manifest =
            Manifest::of_scope(workflow).map_err(|error| error.to_string())?.and_then(|manifest| manifest.backend);
        let name = match &frontmatter.backend {
            Some(name) => BackendName::parse(name).map_err(|error| format!("`backend`: {error}"))?,
            None => manifest.as_ref().map_or(run_default, |choice| choice.name),
        };
        let mut options =
            manifest.filter(|choice| choice.name == name).map(|choice| choice.options).unwrap_or_default();
        options.extend(frontmatter.options.iter().map(|(key, value)| (key.clone(), value.clone())));
        Ok((name, options))
    }

    /// `None` for an empty name (raymond: "" is Claude's default).
    fn read(value: &Yaml) -> Result<Option<BackendChoice>, String> {
        let (name, options) = match value {
            Yaml::Hash(fields) => {
                for key in fields.keys() {
                    let key = scalar(key).unwrap_or_default();
                    if key != "name" && key != "options" {
                        return Err(format!("`backend` has `{key}`; expected `name` and `options`"));
                    }
                }
                let name = match fields.get(&Yaml::String("name".into())) {
                    Some(name) => scalar(name).ok_or("`backend.name` must be text")?,
                    None => return Err("`backend` needs a `name` (claude, pi or codex)".into()),
                };
                let options = match fields.get(&Yaml::String("options".into())) {
                    None | Some(Yaml::Null) => OptionValues::new(),
                    Some(Yaml::Hash(options)) => {
                        options.iter().map(|(key, value)| (scalar(key).unwrap_or_default(), json_of(value))).collect()
                    }
                    Some(_) => return Err("`backend.options` must be a mapping (`options: {provider: …}`)".into()),
                };
                (name, options)
            }
            other => (
                scalar(other).ok_or("`backend` must be a name (claude, pi, codex) or `{name: …, options: {…}}`")?,
                OptionValues::new(),
            ),
        };
        if name.trim().is_empty() {
            return Ok(None);
        }
        let name = BackendName::parse(&name).map_err(|error| format!("`backend`: {error}"))?;
        let backend = profile(name);
        if let Some(key) = backend.sort_options(&options).unknown.first() {
            return Err(format!(
                "`backend.options` has `{key}`, which no backend takes; {} takes {}",
                backend.cli,
                backend.option_keys.join(", ")
            ));
        }
        (backend.check_options)(&options).map_err(|error| format!("`backend.options`: {error}"))?;
        Ok(Some(BackendChoice { name, options }))
    }
}

/// A YAML value as JSON.
fn json_of(value: &Yaml) -> serde_json::Value {
    use serde_json::Value;
    match value {
        Yaml::Real(text) => {
            text.parse::<f64>().ok().and_then(serde_json::Number::from_f64).map_or(Value::Null, Value::Number)
        }
        Yaml::Integer(number) => Value::from(*number),
        Yaml::String(text) => Value::String(text.clone()),
        Yaml::Boolean(flag) => Value::Bool(*flag),
        Yaml::Array(items) => Value::Array(items.iter().map(json_of).collect()),
        Yaml::Hash(map) => {
            Value::Object(map.iter().map(|(key, value)| (scalar(key).unwrap_or_default(), json_of(value))).collect())
        }
        Yaml::Alias(_) | Yaml::Null | Yaml::BadValue => Value::Null,
    }
}

/// Why a manifest cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ManifestError {
    /// The manifest itself is wrong.
    #[error("manifest `{}`: {message}", .path.display())]
    Invalid { path: PathBuf, message: String },
    /// The workflow holding it cannot be opened; its own error names the file (and,
    /// for a YAML workflow, the line), so it is not wrapped again.
    #[error("{0}")]
    Workflow(String),
}

impl Manifest {
    /// The manifest of the workflow `scope`, if it has one.
    pub(crate) fn of(scope: &Path) -> Result<Option<Manifest>, ManifestError> {
        let workflow = Scope::open(scope).map_err(|error| ManifestError::Workflow(error.to_string()))?;
        Manifest::of_scope(&workflow)
    }

    /// The manifest of a workflow already opened, if it has one.
    pub(crate) fn of_scope(scope: &Scope) -> Result<Option<Manifest>, ManifestError> {
        match scope.manifest_text() {
            Err((path, message)) => Err(ManifestError::Invalid { path, message }),
            Ok(None) => Ok(None),
            Ok(Some(ManifestText::Beside { path, text })) => Manifest::parse(&path, &text, false),
            // Manifest keys may sit beside `states` (R13.4).
            Ok(Some(ManifestText::InWorkflow { path, text })) => Manifest::parse(&path, &text, true),
        }
    }

    /// Read `text`; `in_workflow` for a YAML workflow's own file, whose manifest keys
    /// are optional (no `id`: no manifest).
    fn parse(path: &Path, text: &str, in_workflow: bool) -> Result<Option<Manifest>, ManifestError> {
        let invalid = |message: String| ManifestError::Invalid { path: path.to_path_buf(), message };
        yaml_limits::check(text).map_err(|error| invalid(error.to_string()))?;
        let documents = YamlLoader::load_from_str(text).map_err(|e| invalid(format!("invalid YAML: {e}")))?;
        let Some(Yaml::Hash(root)) = documents.into_iter().next() else {
            return Err(invalid("expected a mapping (`id: …`, `name: …`)".into()));
        };
        let key = |name: &str| root.get(&Yaml::String(name.into()));
        // R13.2: a `workflow.yaml` with states is a YAML workflow, not a manifest.
        if !in_workflow && (key("states").is_some() || key("initial_state").is_some()) {
            return Ok(None);
        }
        let text_of = |name: &str, value: &Yaml| -> Result<String, ManifestError> {
            scalar(value).ok_or_else(|| invalid(format!("`{name}` must be text")))
        };
        let id = match key("id") {
            Some(value) => text_of("id", value)?,
            // A YAML workflow's `backend` counts without an `id`: it says how the
            // states run, and ignoring it would run them on Claude instead.
            None if in_workflow && key("backend").is_some() => String::new(),
            None if in_workflow => return Ok(None),
            None => String::new(),
        };
        if id.trim().is_empty() && !(in_workflow && key("id").is_none()) {
            return Err(invalid("`id` is required and must not be empty".into()));
        }
        let mut manifest = Manifest { id, ..Manifest::default() };
        if let Some(value) = key("name") {
            manifest.name = Some(text_of("name", value)?);
        }
        if let Some(value) = key("description") {
            manifest.description = Some(text_of("description", value)?);
        }
        if let Some(Yaml::Hash(input)) = key("input") {
            if let Some(mode) = input.get(&Yaml::String("mode".into())) {
                manifest.input_mode = match text_of("input.mode", mode)?.as_str() {
                    "required" => InputMode::Required,
                    "optional" => InputMode::Optional,
                    "none" => InputMode::None,
                    other => {
                        return Err(invalid(format!("`input.mode` is `{other}`; expected required, optional or none")));
                    }
                };
            }
            if let Some(label) = input.get(&Yaml::String("label".into())) {
                manifest.input_label = Some(text_of("input.label", label)?);
            }
            if let Some(description) = input.get(&Yaml::String("description".into())) {
                manifest.input_description = Some(text_of("input.description", description)?);
            }
        } else if key("input").is_some_and(|value| !value.is_null()) {
            // `input: required` read as no `input` at all: a run went ahead without one.
            return Err(invalid("`input` must be a mapping (`input: {mode: required}`)".into()));
        }
        if let Some(value) = key("default_budget") {
            match non_negative_number(value) {
                Some(budget) => manifest.default_budget = Some(budget),
                None => return Err(invalid("`default_budget` must be an amount in US dollars, 0 or more".into())),
            }
        }
        if let Some(value) = key("working_directory") {
            manifest.working_directory = Some(text_of("working_directory", value)?);
        }
        if let Some(value) = key("environment") {
            let Yaml::Hash(variables) = value else {
                return Err(invalid("`environment` must map variable names to values".into()));
            };
            for (name, value) in variables {
                let name = text_of("environment", name)?;
                manifest.environment.insert(name.clone(), text_of(&format!("environment.{name}"), value)?);
            }
        }
        if let Some(value) = key("requires_human_input") {
            manifest.requires_human_input = match text_of("requires_human_input", value)?.as_str() {
                "auto" => HumanInput::Auto,
                "true" => HumanInput::Yes,
                "false" => HumanInput::No,
                other => {
                    return Err(invalid(format!("`requires_human_input` is `{other}`; expected auto, true or false")));
                }
            };
        }
        manifest.backend = match key("backend") {
            None | Some(Yaml::Null) => None,
            Some(value) => BackendChoice::read(value).map_err(invalid)?,
        };
        Ok(Some(manifest))
    }

    /// `environment` with `${VAR}` replaced from this process's environment (a
    /// missing variable becomes "", R13.1).
    pub(crate) fn environment_now(&self) -> BTreeMap<String, String> {
        self.environment.iter().map(|(name, value)| (name.clone(), expand(value))).collect()
    }
}

/// A scalar's text (YAML reads `1`, `true`, `1.5` as numbers and booleans).
pub(crate) fn scalar(value: &Yaml) -> Option<String> {
    match value {
        Yaml::String(text) | Yaml::Real(text) => Some(text.clone()),
        Yaml::Integer(number) => Some(number.to_string()),
        Yaml::Boolean(flag) => Some(flag.to_string()),
        _ => None,
    }
}

/// Replace every `${NAME}` in `text` with that environment variable ("" if unset).
fn expand(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        match after.find('}') {
            Some(end) => {
                out.push_str(&std::env::var(&after[..end]).unwrap_or_default());
                rest = &after[end + 1..];
            }
            None => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Option<Manifest>, ManifestError> {
        Manifest::parse(Path::new("wf/workflow.yaml"), text, false)
    }

    #[test]
    fn r13_1_every_key_is_read() {
        let manifest = parse(
            "id: review\nname: Code review\ninput: {mode: required, label: Pull request}\ndefault_budget: 2.5\n\
             working_directory: ../repo\nenvironment: {REPO: \"${HOME}/repo\", LEVEL: 3}\nrequires_human_input: \"true\"\n\
             backend: {name: pi, options: {provider: x}}\nunknown_key: ignored\n",
        )
        .expect("valid")
        .expect("a manifest");
        assert_eq!(manifest.id, "review");
        assert_eq!(manifest.input_mode, InputMode::Required);
        assert_eq!(manifest.input_label.as_deref(), Some("Pull request"));
        assert_eq!(manifest.default_budget, Some(2.5));
        assert_eq!(manifest.working_directory.as_deref(), Some("../repo"));
        assert_eq!(manifest.environment["LEVEL"], "3");
        assert_eq!(manifest.requires_human_input, HumanInput::Yes);
        let backend = manifest.backend.expect("a backend");
        assert_eq!((backend.name, backend.options["provider"].as_str()), (BackendName::Pi, Some("x")));
        assert_eq!(
            parse("id: x\nbackend: pi\n").unwrap().unwrap().backend.map(|backend| backend.name),
            Some(BackendName::Pi)
        );
        assert_eq!(parse("id: x\nbackend: ''\n").unwrap().unwrap().backend, None);
    }

    #[test]
    fn r13_2_a_file_with_states_is_no_manifest() {
        assert_eq!(parse("id: x\nstates:\n  START: {prompt: hi}\n").unwrap(), None);
        assert_eq!(parse("initial_state: START\n").unwrap(), None);
    }

    #[test]
    fn mistakes_are_named() {
        let message = |text: &str| parse(text).unwrap_err().to_string();
        assert_eq!(message("name: x\n"), "manifest `wf/workflow.yaml`: `id` is required and must not be empty");
        assert_eq!(
            message("id: x\ninput: {mode: sometimes}\n"),
            "manifest `wf/workflow.yaml`: `input.mode` is `sometimes`; expected required, optional or none"
        );
        assert_eq!(
            message("id: x\ndefault_budget: lots\n"),
            "manifest `wf/workflow.yaml`: `default_budget` must be an amount in US dollars, 0 or more"
        );
    }

    #[test]
    fn r13_1_environment_variables_are_expanded_and_missing_ones_are_empty() {
        // PATH is set in any test environment; the other name is not.
        let path = std::env::var("PATH").unwrap_or_default();
        assert_eq!(expand("a:${PATH}:b"), format!("a:{path}:b"));
        assert_eq!(expand("${BATON_SURELY_UNSET_VARIABLE}x"), "x");
        assert_eq!(expand("no ${ end"), "no ${ end");
    }
}
