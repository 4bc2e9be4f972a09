//! YAML workflows: a whole workflow in one file (§13.2, R13.4–R13.8, R1.5, R1.16).
//!
//! ```yaml
//! states:
//!   START:
//!     prompt: "Plan the work, then <goto>CHECK</goto>"
//!     allowed_transitions: [{tag: goto, target: CHECK}]
//!   CHECK:
//!     sh: "make test && echo '<result>ok</result>'"
//! ```
//!
//! Each state is a *virtual file*: a prompt state is `NAME.md`, a script state is
//! `NAME.sh` (and `NAME.ps1`/`NAME.bat` for the other keys present), so resolution,
//! entry points and policies work exactly as in a directory. The file is read
//! again on every access (R13.8): editing it between steps, or before a resume,
//! takes effect, and a mistake is reported where it is made, with its line. Only a
//! text that differs from the last one validated is parsed again (`YamlWorkflow::open`):
//! parsing the whole file at every access made each step of a long workflow cost
//! time in proportion to its number of states.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock};

use yaml_rust2::yaml::Hash;
use yaml_rust2::{Yaml, YamlEmitter, YamlLoader};

use crate::backend::profile::all_option_keys;
use crate::syntax::yaml_limits;
use crate::syntax::yaml_positions::{KeyPositions, Position, key_positions};
use crate::text::state_name;
use crate::text::suggestion::did_you_mean;
use crate::workflow::kept::KeptByPath;

/// A loaded, valid YAML workflow.
#[derive(Debug)]
pub(crate) struct YamlWorkflow {
    states: Vec<YamlState>,
    /// Where each key is written, for messages that point into the file.
    positions: KeyPositions,
    /// The virtual file names (`listing`), made once: a run lists its workflow at
    /// every step, and a chain of 1,000 states formatted 1,000 names each time.
    files: Arc<[String]>,
    /// Each state's place in `states`, by name (the first one, as a search would find).
    by_name: HashMap<String, usize>,
}

/// Deep enough for `states.NAME.allowed_transitions.N.target`.
const KEY_DEPTH: usize = 5;

#[derive(Debug)]
struct YamlState {
    name: String,
    kind: StateKind,
    /// Keys that are no state key (R5.5 words them for prompt states at run time).
    unknown_keys: Vec<String>,
    /// Seconds; 0 disables the timeout, like `--timeout 0`.
    timeout: Option<f64>,
}

#[derive(Debug)]
enum StateKind {
    /// The virtual `.md` file's text (R13.7).
    Prompt(String),
    Script {
        sh: Option<String>,
        ps1: Option<String>,
        bat: Option<String>,
    },
}

/// What a virtual state file holds.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum VirtualFile<'a> {
    /// A prompt state's text, frontmatter included.
    Prompt(&'a str),
    /// A script's source.
    Script(&'a str),
}

/// Why a YAML workflow cannot be used. The message names the file and, where it
/// can, the line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum YamlError {
    #[error("cannot read YAML workflow `{}`: {reason}", .path.display())]
    Read { path: PathBuf, reason: String },
    #[error("YAML workflow `{}`{}: {message}", .path.display(), .line.map_or_else(String::new, |line| format!(", line {line}")))]
    Invalid { path: PathBuf, line: Option<usize>, message: String },
}

/// The keys a state may have besides the backends' options ([`all_option_keys`])
/// (R13.6); lint suggests among them too.
pub(crate) const STATE_KEYS: &[&str] = &[
    "prompt",
    "sh",
    "ps1",
    "bat",
    "allowed_transitions",
    "model",
    "effort",
    "force_implicit",
    "isolation",
    "timeout",
    "backend",
];
const SCRIPT_KEYS: &[&str] = &["sh", "ps1", "bat"];
/// Prompt-only keys besides the backends' options, which are prompt-only too (R13.6:
/// refused on a script state).
const PROMPT_ONLY_KEYS: &[&str] = &["allowed_transitions", "model", "effort", "force_implicit", "isolation", "backend"];

/// Every key a state may have.
fn state_keys() -> impl Iterator<Item = &'static str> {
    STATE_KEYS.iter().copied().chain(all_option_keys())
}

/// A valid YAML workflow and the text it was parsed from.
#[derive(Debug)]
pub(crate) struct LoadedYaml {
    pub(crate) workflow: YamlWorkflow,
    pub(crate) text: String,
}

/// YAML workflows kept by path; more than this and the least recently used goes.
const KEPT_WORKFLOWS: usize = 8;

/// The workflows validated in this process, by path, with the text each was read from.
static LOADED: LazyLock<KeptByPath<(), Arc<LoadedYaml>>> = LazyLock::new(|| KeptByPath::new(KEPT_WORKFLOWS));

impl YamlWorkflow {
    /// Read the workflow at `path` and validate it, unless its text is the one
    /// validated last time (which would validate the same way).
    pub(crate) fn open(path: &Path) -> Result<Arc<LoadedYaml>, YamlError> {
        let text = crate::workflow::scope::read_yaml_text(path)
            .map_err(|error| YamlError::Read { path: path.to_path_buf(), reason: error.to_string() })?;
        if let Some(workflow) = LOADED.find(path, |(), kept| kept.text == text) {
            return Ok(workflow);
        }
        let workflow = Arc::new(LoadedYaml { workflow: YamlWorkflow::parse(path, &text)?, text });
        LOADED.keep(path, (), Arc::clone(&workflow));
        Ok(workflow)
    }

    /// Validate `text`, the contents of `path`.
    pub(crate) fn parse(path: &Path, text: &str) -> Result<YamlWorkflow, YamlError> {
        let invalid =
            |line: Option<usize>, message: String| YamlError::Invalid { path: path.to_path_buf(), line, message };
        yaml_limits::check(text).map_err(|error| invalid(error.line(), error.message_without_line()))?;
        let positions = key_positions(text, KEY_DEPTH);
        let twice = positions.duplicates.iter().find(|(path, ..)| path.len() == 2 && path[0] == "states");
        if let Some((path, first, second)) = twice {
            let (name, first, second) = (&path[1], first.line, second.line);
            return Err(invalid(Some(second), format!("state `{name}` is defined twice (lines {first} and {second})")));
        }
        let documents = YamlLoader::load_from_str(text)
            .map_err(|error| invalid(Some(error.marker().line()), format!("invalid YAML: {}", error.info())))?;
        let line_of = |keys: &[&str]| positions.get(keys).map(|position| position.line);
        let Some(Yaml::Hash(root)) = documents.first() else {
            return Err(invalid(None, "expected a mapping with a `states:` key at the top".to_string()));
        };
        let states = match root.get(&Yaml::String("states".into())) {
            Some(Yaml::Hash(states)) if !states.is_empty() => states,
            Some(Yaml::Hash(_)) | Some(Yaml::Null) => {
                return Err(invalid(
                    line_of(&["states"]),
                    "`states` is empty; a workflow needs at least one state".into(),
                ));
            }
            Some(_) => {
                return Err(invalid(
                    line_of(&["states"]),
                    "`states` must be a mapping from state names to states".into(),
                ));
            }
            None => return Err(invalid(None, missing_states_message(root))),
        };
        let mut parsed = Vec::with_capacity(states.len());
        for (key, value) in states {
            let name = match key {
                Yaml::String(name) => name.clone(),
                Yaml::Integer(number) => number.to_string(),
                other => {
                    // Named by kind: the parser's own debug form (`Array([String("a")])`)
                    // means nothing to an author.
                    let found = match other {
                        Yaml::Array(_) => "a list".to_string(),
                        Yaml::Hash(_) => "a mapping".to_string(),
                        Yaml::Boolean(value) => format!("`{value}` (quote it to use it as a name)"),
                        Yaml::Real(value) => format!("`{value}` (quote it to use it as a name)"),
                        Yaml::Null => "nothing (null)".to_string(),
                        _ => "something else".to_string(),
                    };
                    let message = format!("a state name must be text; found {found}");
                    return Err(invalid(line_of(&["states"]), message));
                }
            };
            let line = line_of(&["states", &name]).or_else(|| line_of(&["states"]));
            let shown = name.escape_debug();
            let at = |message: String| invalid(line, format!("state `{shown}`: {message}"));
            if name.is_empty() || state_name::has_path_separator(&name) {
                return Err(at("a state name must be non-empty and contain no `/` or `\\`".into()));
            }
            // Each would name no file of a directory: `..` is its parent, and a
            // name with a line break cannot be written in a tag (R4).
            if name == "." || name == ".." {
                return Err(at(format!("`{name}` cannot be a state name")));
            }
            if name.chars().any(char::is_control) {
                return Err(at("a state name cannot contain a line break or other control character".into()));
            }
            let Yaml::Hash(fields) = value else {
                return Err(at("expected a mapping with `prompt:` or `sh:`".into()));
            };
            let unknown_keys = fields
                .keys()
                .filter_map(Yaml::as_str)
                .filter(|key| !state_keys().any(|known| known == *key))
                .map(str::to_string)
                .collect();
            parsed.push(YamlState {
                kind: state_kind(fields, &at)?,
                timeout: timeout_of(fields, &at)?,
                unknown_keys,
                name,
            });
        }
        let files = virtual_files(&parsed).into();
        let mut by_name = HashMap::with_capacity(parsed.len());
        for (index, state) in parsed.iter().enumerate() {
            by_name.entry(state.name.clone()).or_insert(index);
        }
        Ok(YamlWorkflow { states: parsed, positions, files, by_name })
    }

    /// The virtual file names, in the order the states are written (R1.5).
    pub(crate) fn listing(&self) -> Arc<[String]> {
        Arc::clone(&self.files)
    }

    /// The state virtual file `file` belongs to.
    fn state_of(&self, file: &str) -> Option<&YamlState> {
        let stem = state_name::strip_state_extension(file);
        self.by_name.get(stem).and_then(|index| self.states.get(*index))
    }

    /// The `timeout` of the state virtual file `file` belongs to.
    pub(crate) fn timeout(&self, file: &str) -> Option<f64> {
        self.state_of(file)?.timeout
    }

    /// The keys of the state virtual file `file` belongs to that are no state key,
    /// in the order written.
    pub(crate) fn unknown_keys(&self, file: &str) -> &[String] {
        self.state_of(file).map_or(&[], |state| &state.unknown_keys)
    }

    /// Where the key at `path` (`["states", "START", "prompt"]`) is written.
    pub(crate) fn position(&self, path: &[&str]) -> Option<Position> {
        self.positions.get(path)
    }

    /// The contents of virtual file `file` (a name from `listing`).
    pub(crate) fn file(&self, file: &str) -> Option<VirtualFile<'_>> {
        let extension = state_name::extension(file).to_ascii_lowercase();
        let state = self.state_of(file)?;
        match (&state.kind, extension.as_str()) {
            (StateKind::Prompt(text), ".md") => Some(VirtualFile::Prompt(text)),
            (StateKind::Script { sh: Some(source), .. }, ".sh")
            | (StateKind::Script { ps1: Some(source), .. }, ".ps1")
            | (StateKind::Script { bat: Some(source), .. }, ".bat") => Some(VirtualFile::Script(source)),
            _ => None,
        }
    }
}

/// The virtual file names of `states`, in the order they are written (R1.5).
fn virtual_files(states: &[YamlState]) -> Vec<String> {
    let mut names = Vec::new();
    for state in states {
        match &state.kind {
            StateKind::Prompt(_) => names.push(format!("{}.md", state.name)),
            StateKind::Script { sh, ps1, bat } => {
                for (present, extension) in [(sh, "sh"), (ps1, "ps1"), (bat, "bat")] {
                    if present.is_some() {
                        names.push(format!("{}.{extension}", state.name));
                    }
                }
            }
        }
    }
    names
}

/// R13.4: without `states`, say so, and suggest the wrapper when the top-level
/// keys already look like states.
fn missing_states_message(root: &Hash) -> String {
    let looks_like_states = root.values().any(|value| match value {
        Yaml::Hash(fields) => {
            ["prompt", "sh", "ps1", "bat"].iter().any(|key| fields.contains_key(&Yaml::String((*key).into())))
        }
        _ => false,
    });
    if looks_like_states {
        "no `states:` key; the top-level keys look like states: indent them under `states:`".to_string()
    } else {
        "no `states:` key; a YAML workflow lists its states under `states:`".to_string()
    }
}

/// R13.6: a prompt state XOR a script state, and what each may hold.
fn state_kind(fields: &Hash, at: &dyn Fn(String) -> YamlError) -> Result<StateKind, YamlError> {
    let text = |key: &str| -> Result<Option<String>, YamlError> {
        match fields.get(&Yaml::String(key.into())) {
            None => Ok(None),
            Some(Yaml::String(value)) => Ok(Some(value.clone())),
            Some(Yaml::Integer(value)) => Ok(Some(value.to_string())),
            Some(Yaml::Real(value)) => Ok(Some(value.clone())),
            Some(_) => Err(at(format!("`{key}` must be text"))),
        }
    };
    let prompt = text("prompt")?;
    let scripts: Vec<&str> =
        SCRIPT_KEYS.iter().copied().filter(|key| fields.contains_key(&Yaml::String((*key).into()))).collect();
    match (prompt, scripts.is_empty()) {
        (Some(_), false) => {
            Err(at(format!("has both `prompt` and `{}`; a state is either a prompt or a script", scripts.join("`/`"))))
        }
        (None, true) => {
            let keys: Vec<&str> = fields.keys().filter_map(Yaml::as_str).collect();
            let hint = keys
                .iter()
                .find_map(|key| did_you_mean(key, state_keys()).map(|known| (key, known)))
                .map_or_else(String::new, |(key, known)| format!(" (`{key}`: did you mean `{known}`?)"));
            Err(at(format!("has neither `prompt` nor `sh`/`ps1`/`bat`{hint}")))
        }
        (Some(prompt), true) => Ok(StateKind::Prompt(virtual_markdown(fields, &prompt))),
        (None, false) => {
            // `force_implicit: false` says nothing; any other prompt-only key is a mistake.
            let forbidden = PROMPT_ONLY_KEYS.iter().copied().chain(all_option_keys()).find(|key| {
                match fields.get(&Yaml::String((*key).into())) {
                    None => false,
                    Some(Yaml::Boolean(false)) => *key != "force_implicit",
                    Some(_) => true,
                }
            });
            if let Some(key) = forbidden {
                return Err(at(format!("`{key}` applies to prompt states only; this is a script state")));
            }
            Ok(StateKind::Script { sh: text("sh")?, ps1: text("ps1")?, bat: text("bat")? })
        }
    }
}

/// R13.6: `timeout`, a number of seconds, 0 or more.
fn timeout_of(fields: &Hash, at: &dyn Fn(String) -> YamlError) -> Result<Option<f64>, YamlError> {
    let Some(timeout) = fields.get(&Yaml::String("timeout".into())) else { return Ok(None) };
    match non_negative_number(timeout) {
        Some(seconds) => Ok(Some(seconds)),
        None => Err(at("`timeout` must be a number of seconds, 0 or more".into())),
    }
}

/// A YAML number that is finite and 0 or more (`timeout`, a manifest's `default_budget`).
pub(crate) fn non_negative_number(value: &Yaml) -> Option<f64> {
    let number = match value {
        Yaml::Integer(number) => *number as f64,
        Yaml::Real(text) => text.parse::<f64>().ok()?,
        _ => return None,
    };
    (number.is_finite() && number >= 0.0).then_some(number)
}

/// R13.7: the prompt alone, or with a frontmatter holding every field that is
/// neither the prompt nor `timeout` (unknown ones too, so the run warns about them).
fn virtual_markdown(fields: &Hash, prompt: &str) -> String {
    let mut frontmatter = Hash::new();
    for (key, value) in fields {
        if !matches!(key.as_str(), Some("prompt" | "timeout")) {
            frontmatter.insert(key.clone(), value.clone());
        }
    }
    if frontmatter.is_empty() {
        return prompt.to_string();
    }
    let mut yaml = String::new();
    if YamlEmitter::new(&mut yaml).dump(&Yaml::Hash(frontmatter)).is_err() {
        return prompt.to_string();
    }
    let yaml = yaml.strip_prefix("---").unwrap_or(&yaml).trim_start_matches('\n');
    format!("---\n{yaml}\n---\n{prompt}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<YamlWorkflow, YamlError> {
        YamlWorkflow::parse(Path::new("wf.yaml"), text)
    }

    /// R13.8 with one parse per text: an unchanged file is the workflow validated
    /// before, an edit between two accesses is validated again (and its mistake reported).
    #[test]
    fn r13_8_every_access_reads_the_file_and_only_a_changed_text_is_parsed_again() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("wf.yaml");
        std::fs::write(&path, "states:\n  START:\n    sh: echo '<result>a</result>'\n").expect("write");
        let first = YamlWorkflow::open(&path).expect("valid");
        let again = YamlWorkflow::open(&path).expect("valid");
        assert!(Arc::ptr_eq(&first, &again), "an unchanged text is not parsed again");
        std::fs::write(&path, "states:\n  START:\n    sh: echo '<result>b</result>'\n    prompt: x\n").expect("write");
        let error = YamlWorkflow::open(&path).expect_err("the edit is validated");
        assert!(error.to_string().contains("line 2"), "{error}");
        std::fs::write(&path, "states:\n  START:\n    sh: echo '<result>b</result>'\n").expect("write");
        let edited = YamlWorkflow::open(&path).expect("valid");
        assert!(!Arc::ptr_eq(&first, &edited));
        assert!(matches!(edited.workflow.file("START.sh"), Some(VirtualFile::Script(text)) if text.contains("b")));
    }

    fn error(text: &str) -> String {
        parse(text).unwrap_err().to_string()
    }

    const SAMPLE: &str = "\
id: sample
states:
  START:
    prompt: Plan it.
    model: sonnet
  CHECK:
    sh: echo '<result>ok</result>'
    ps1: Write-Output '<result>ok</result>'
  PLAIN:
    prompt: Just text.
    timeout: 30
";

    #[test]
    fn r1_5_states_are_virtual_files_in_written_order() {
        let workflow = parse(SAMPLE).expect("valid");
        assert_eq!(workflow.listing().to_vec(), ["START.md", "CHECK.sh", "CHECK.ps1", "PLAIN.md"]);
        assert_eq!(workflow.file("CHECK.sh"), Some(VirtualFile::Script("echo '<result>ok</result>'")));
        assert_eq!(workflow.file("PLAIN.md"), Some(VirtualFile::Prompt("Just text.")));
        assert_eq!(workflow.file("CHECK.md"), None);
        assert_eq!(workflow.file("NOPE.md"), None);
    }

    #[test]
    fn regression_a_yaml_workflow_formatted_every_name_again_at_each_listing() {
        // A run lists its workflow at every step: a chain of 1,000 states spent more
        // on formatting its names than a directory's step costs in all.
        let workflow = parse(SAMPLE).expect("valid");
        assert!(Arc::ptr_eq(&workflow.listing(), &workflow.listing()), "the names are made once");
        assert_eq!(workflow.timeout("CHECK.ps1"), workflow.timeout("CHECK.sh"));
        assert_eq!(workflow.unknown_keys("START.md"), workflow.unknown_keys("START"));
    }

    #[test]
    fn r13_7_prompt_fields_become_frontmatter_the_prompt_parser_reads() {
        let workflow = parse(SAMPLE).expect("valid");
        let Some(VirtualFile::Prompt(text)) = workflow.file("START.md") else { panic!("a prompt") };
        assert_eq!(text, "---\nmodel: sonnet\n---\nPlan it.");
        let parsed = crate::syntax::frontmatter::parse_prompt(text).expect("parses");
        assert_eq!(parsed.frontmatter.model.as_deref(), Some("sonnet"));
        assert_eq!(parsed.body, "Plan it.");
    }

    #[test]
    fn r13_4_to_r13_6_mistakes_are_reported_with_their_line() {
        assert_eq!(
            error("START:\n  prompt: hi\n"),
            "YAML workflow `wf.yaml`: no `states:` key; the top-level keys look like states: indent them under `states:`"
        );
        assert_eq!(
            error("states: {}\n"),
            "YAML workflow `wf.yaml`, line 1: `states` is empty; a workflow needs at least one state"
        );
        assert_eq!(
            error("states:\n  A:\n    prompt: hi\n  B:\n    prompt: x\n    sh: echo\n"),
            "YAML workflow `wf.yaml`, line 4: state `B`: has both `prompt` and `sh`; a state is either a prompt or a script"
        );
        assert_eq!(
            error("states:\n  A:\n    promt: hi\n"),
            "YAML workflow `wf.yaml`, line 2: state `A`: has neither `prompt` nor `sh`/`ps1`/`bat` (`promt`: did you mean `prompt`?)"
        );
        assert_eq!(
            error("states:\n  A:\n    sh: echo\n    model: opus\n"),
            "YAML workflow `wf.yaml`, line 2: state `A`: `model` applies to prompt states only; this is a script state"
        );
        assert_eq!(
            error("states:\n  A:\n    prompt: x\n    timeout: -1\n"),
            "YAML workflow `wf.yaml`, line 2: state `A`: `timeout` must be a number of seconds, 0 or more"
        );
        assert_eq!(
            error("states:\n  A/B:\n    prompt: x\n"),
            "YAML workflow `wf.yaml`, line 2: state `A/B`: a state name must be non-empty and contain no `/` or `\\`"
        );
        assert_eq!(
            error("states:\n  A:\n    prompt: x\n  A:\n    sh: y\n"),
            "YAML workflow `wf.yaml`, line 4: state `A` is defined twice (lines 2 and 4)"
        );
        assert!(error("states:\n  A: [unclosed\n").starts_with("YAML workflow `wf.yaml`, line 3: invalid YAML: "));
    }

    #[test]
    fn yaml_states_named_dot_dot_or_containing_a_newline_are_refused() {
        assert_eq!(
            error("states:\n  START:\n    sh: echo\n  ..:\n    prompt: x\n"),
            "YAML workflow `wf.yaml`, line 4: state `..`: `..` cannot be a state name"
        );
        assert_eq!(
            error("states:\n  .:\n    prompt: x\n"),
            "YAML workflow `wf.yaml`, line 2: state `.`: `.` cannot be a state name"
        );
        assert_eq!(
            error("states:\n  START:\n    sh: echo\n  \"A\\nB\":\n    prompt: x\n"),
            "YAML workflow `wf.yaml`, line 4: state `A\\nB`: a state name cannot contain a line break or other control \
             character"
        );
    }

    #[test]
    fn claude_options_are_prompt_state_keys() {
        let workflow =
            parse("states:\n  A:\n    prompt: x\n    permission_mode: plan\n    tools: [Read]\n").expect("valid");
        assert!(workflow.unknown_keys("A.md").is_empty());
        let Some(VirtualFile::Prompt(text)) = workflow.file("A.md") else { panic!("a prompt") };
        let parsed = crate::syntax::frontmatter::parse_prompt(text).expect("parses");
        assert_eq!(parsed.frontmatter.options["permission_mode"], "plan");
        assert_eq!(parsed.frontmatter.options["tools"], serde_json::json!(["Read"]));
        assert_eq!(
            error("states:\n  A:\n    sh: echo\n    allowed_tools: [Read]\n"),
            "YAML workflow `wf.yaml`, line 2: state `A`: `allowed_tools` applies to prompt states only; this is a script state"
        );
        assert_eq!(
            error("states:\n  A:\n    permision_mode: plan\n"),
            "YAML workflow `wf.yaml`, line 2: state `A`: has neither `prompt` nor `sh`/`ps1`/`bat` (`permision_mode`: did you mean `permission_mode`?)"
        );
    }

    #[test]
    fn force_implicit_false_is_allowed_on_a_script_state() {
        assert!(parse("states:\n  A:\n    sh: echo\n    force_implicit: false\n").is_ok());
        assert!(parse("states:\n  A:\n    sh: echo\n    force_implicit: true\n").is_err());
    }

    #[test]
    fn yaml_scopes_are_recognised_by_extension_in_any_case() {
        use crate::workflow::scope::ScopeKind;
        assert_eq!(ScopeKind::of(Path::new("/w/flow.yaml")), ScopeKind::Yaml);
        assert_eq!(ScopeKind::of(Path::new("/w/flow.YML")), ScopeKind::Yaml);
        assert_eq!(ScopeKind::of(Path::new("/w/flow")), ScopeKind::Directory);
        assert_eq!(ScopeKind::of(Path::new("/w/flow.zip")), ScopeKind::Zip);
    }
}
