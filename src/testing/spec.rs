//! A test file (`docs/testing.md`): what the run gets (input, bounds, budget,
//! environment), what stands in for the model and for scripts, the answers to its
//! asks, and what is expected of it.
//!
//! Read with `yaml-rust2` like every YAML file of Baton; a mistake is reported with
//! its line (`yaml_positions`) and what was expected. State names are resolved
//! against the workflow under test, so `REVIEW` means `REVIEW.md` and a typo is
//! caught before anything runs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use yaml_rust2::{Yaml, YamlLoader};

use crate::ids::{BackendName, StateName};
use crate::syntax::yaml_limits;
use crate::syntax::yaml_positions::{KeyPositions, key_positions};
use crate::text::state_name;
use crate::text::suggestion::did_you_mean;
use crate::workflow::manifest::scalar;
use crate::workflow::resolution::resolve_state;
use crate::workflow::yaml_scope::non_negative_number;

/// How a test's run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ExpectedOutcome {
    Completed,
    Paused,
    Failed,
    Asking,
}

impl ExpectedOutcome {
    pub(crate) const NAMES: [&'static str; 4] = ["completed", "paused", "failed", "asking"];

    fn parse(name: &str) -> Option<ExpectedOutcome> {
        Some(match name {
            "completed" => ExpectedOutcome::Completed,
            "paused" => ExpectedOutcome::Paused,
            "failed" => ExpectedOutcome::Failed,
            "asking" => ExpectedOutcome::Asking,
            _ => return None,
        })
    }

    pub(crate) fn as_str(self) -> &'static str {
        ExpectedOutcome::NAMES[self as usize]
    }
}

/// One scripted model turn.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Reply {
    pub(crate) text: String,
    pub(crate) cost_usd: f64,
    pub(crate) input_tokens: u64,
    pub(crate) output_tokens: u64,
    /// The backend the reply was written for; the turn must run on it.
    pub(crate) backend: Option<BackendName>,
}

/// What a stubbed script "printed".
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct ScriptStub {
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    pub(crate) exit_code: i32,
}

/// A state's stubs: one per visit, or one for every visit.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Stubs {
    Every(ScriptStub),
    PerVisit(Vec<ScriptStub>),
}

/// What the test checks once the run has stopped; `None` checks nothing.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Expectations {
    pub(crate) outcome: ExpectedOutcome,
    pub(crate) result: Option<String>,
    pub(crate) result_contains: Option<String>,
    /// The states the main agent entered, in order.
    pub(crate) path: Option<Vec<StateName>>,
    /// The states any agent entered, as a set.
    pub(crate) visited: Option<BTreeSet<StateName>>,
    /// Steps completed over the run.
    pub(crate) steps: Option<u64>,
    /// How many times each listed state was entered (by any agent).
    pub(crate) visits: BTreeMap<StateName, u64>,
    pub(crate) cost_usd: Option<f64>,
}

/// One stop at a breakpoint the test expects, and how it continues (issue 24):
/// the agent must be stopped before `at`; the edits are made as `baton resume
/// --agent` makes them, then the run goes on.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Stop {
    pub(crate) agent: String,
    pub(crate) at: StateName,
    /// The rendered next prompt (or script command) must contain this.
    pub(crate) prompt_contains: Option<String>,
    pub(crate) input: Option<String>,
    pub(crate) goto: Option<StateName>,
    pub(crate) prompt: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct TestSpec {
    pub(crate) description: Option<String>,
    pub(crate) input: Option<String>,
    /// The state to start at instead of the entry point.
    pub(crate) start: Option<StateName>,
    pub(crate) max_steps: Option<u64>,
    pub(crate) budget: Option<f64>,
    /// Seconds of inactivity before a state is stopped (as `--timeout`).
    pub(crate) timeout: Option<f64>,
    pub(crate) env: BTreeMap<String, String>,
    /// Whether the run's working directory is a git repository (one empty commit),
    /// for workflows that need one (`isolation="worktree"`, scripts that run git).
    pub(crate) repository: bool,
    /// Replies by state, each agent reading the list from its start.
    pub(crate) replies: BTreeMap<StateName, Vec<Reply>>,
    /// Replies for one agent at one state, instead of `replies`.
    pub(crate) agent_replies: BTreeMap<(String, StateName), Vec<Reply>>,
    pub(crate) scripts: BTreeMap<StateName, Stubs>,
    /// Stubs for one agent at one script state, instead of `scripts` (a recorded
    /// run whose workers' scripts printed different things).
    pub(crate) agent_scripts: BTreeMap<(String, StateName), Stubs>,
    pub(crate) answers: Vec<String>,
    /// The run's breakpoints (`--break-before`, `--break-after`, `--step`).
    pub(crate) breakpoints: crate::model::breakpoints::Breakpoints,
    /// The stops at breakpoints, in order, and their edits.
    pub(crate) stops: Vec<Stop>,
    pub(crate) expect: Expectations,
}

/// A mistake in a test file, with its line when known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SpecError {
    pub(crate) line: Option<usize>,
    pub(crate) message: String,
}

const TOP_KEYS: [&str; 18] = [
    "description",
    "input",
    "start",
    "max_steps",
    "budget",
    "timeout",
    "env",
    "repository",
    "replies",
    "agent_replies",
    "scripts",
    "agent_scripts",
    "answers",
    "break_before",
    "break_after",
    "step",
    "stops",
    "expect",
];
const STOP_KEYS: [&str; 6] = ["agent", "at", "prompt_contains", "input", "goto", "prompt"];
const EXPECT_KEYS: [&str; 8] =
    ["outcome", "result", "result_contains", "path", "visited", "steps", "visits", "cost_usd"];
const REPLY_KEYS: [&str; 5] = ["text", "cost_usd", "input_tokens", "output_tokens", "backend"];
const STUB_KEYS: [&str; 3] = ["stdout", "stderr", "exit_code"];

/// Keys are looked up this deep (`scripts.TEST.0.stdout`).
const KEY_DEPTH: usize = 4;

impl TestSpec {
    /// Read a test of the workflow `scope` from `text`.
    pub(crate) fn parse(text: &str, scope: &Path) -> Result<TestSpec, SpecError> {
        yaml_limits::check(text)
            .map_err(|error| SpecError { line: error.line(), message: error.message_without_line() })?;
        let reader = Reader { positions: key_positions(text, KEY_DEPTH), scope };
        if let Some((path, _, second)) = reader.positions.duplicates.first() {
            return Err(SpecError {
                line: Some(second.line),
                message: format!("`{}` is written twice", path.join(".")),
            });
        }
        let documents = YamlLoader::load_from_str(text).map_err(|error| SpecError {
            line: Some(error.marker().line()),
            message: format!("invalid YAML: {}", error.info()),
        })?;
        let root = match documents.into_iter().next() {
            Some(Yaml::Hash(root)) => root,
            Some(Yaml::Null) | None => {
                return Err(reader
                    .error(&[], "the file is empty; expected a mapping such as `replies: …` and `expect: …`".into()));
            }
            Some(_) => {
                return Err(
                    reader.error(&[], "expected a mapping with keys such as `input`, `replies` and `expect`".into())
                );
            }
        };
        reader.check_keys(&[], &root, &TOP_KEYS)?;
        let get = |name: &str| root.get(&Yaml::String(name.into()));
        let mut spec = TestSpec {
            description: get("description").map(|value| reader.text(&["description"], value)).transpose()?,
            input: get("input").map(|value| reader.text(&["input"], value)).transpose()?,
            start: get("start").map(|value| reader.state(&["start"], value, None)).transpose()?,
            max_steps: get("max_steps").map(|value| reader.count(&["max_steps"], value, 1)).transpose()?,
            budget: get("budget").map(|value| reader.amount(&["budget"], value)).transpose()?,
            timeout: get("timeout").map(|value| reader.amount(&["timeout"], value)).transpose()?,
            env: BTreeMap::new(),
            repository: get("repository")
                .map(|value| reader.flag(&["repository"], value))
                .transpose()?
                .unwrap_or(false),
            replies: BTreeMap::new(),
            agent_replies: BTreeMap::new(),
            scripts: BTreeMap::new(),
            agent_scripts: BTreeMap::new(),
            answers: Vec::new(),
            breakpoints: Default::default(),
            stops: Vec::new(),
            expect: Expectations {
                outcome: ExpectedOutcome::Completed,
                result: None,
                result_contains: None,
                path: None,
                visited: None,
                steps: None,
                visits: BTreeMap::new(),
                cost_usd: None,
            },
        };
        if let Some(value) = get("env") {
            for (name, value) in reader.mapping(&["env"], value, "variable names to values")? {
                let name = reader.text(&["env"], name)?;
                let value = reader.text(&["env", &name], value)?;
                spec.env.insert(name, value);
            }
        }
        if let Some(value) = get("replies") {
            for (state, list) in reader.mapping(&["replies"], value, "prompt states to lists of replies")? {
                let key = reader.text(&["replies"], state)?;
                let name = reader.state(&["replies", &key], state, Some(false))?;
                let replies = reader.replies(&["replies", &key], list)?;
                if spec.replies.insert(name.clone(), replies).is_some() {
                    return Err(reader.error(&["replies", &key], format!("`{key}`: {name} is given replies twice")));
                }
            }
        }
        if let Some(value) = get("agent_replies") {
            for (agent, states) in reader.mapping(&["agent_replies"], value, "agent ids to `STATE: [replies]`")? {
                let agent = reader.text(&["agent_replies"], agent)?;
                let at = ["agent_replies", agent.as_str()];
                for (state, list) in reader.mapping(&at, states, "prompt states to lists of replies")? {
                    let key = reader.text(&at, state)?;
                    let path = ["agent_replies", agent.as_str(), key.as_str()];
                    let name = reader.state(&path, state, Some(false))?;
                    spec.agent_replies.insert((agent.clone(), name), reader.replies(&path, list)?);
                }
            }
        }
        if let Some(value) = get("scripts") {
            for (state, stubs) in reader.mapping(&["scripts"], value, "script states to stubs")? {
                let key = reader.text(&["scripts"], state)?;
                let name = reader.state(&["scripts", &key], state, Some(true))?;
                let stubs = reader.stubs(&["scripts", &key], stubs)?;
                if spec.scripts.insert(name.clone(), stubs).is_some() {
                    return Err(reader.error(&["scripts", &key], format!("`{key}`: {name} is stubbed twice")));
                }
            }
        }
        if let Some(value) = get("agent_scripts") {
            for (agent, states) in reader.mapping(&["agent_scripts"], value, "agent ids to `STATE: stubs`")? {
                let agent = reader.text(&["agent_scripts"], agent)?;
                let at = ["agent_scripts", agent.as_str()];
                for (state, stubs) in reader.mapping(&at, states, "script states to stubs")? {
                    let key = reader.text(&at, state)?;
                    let path = ["agent_scripts", agent.as_str(), key.as_str()];
                    let name = reader.state(&path, state, Some(true))?;
                    spec.agent_scripts.insert((agent.clone(), name), reader.stubs(&path, stubs)?);
                }
            }
        }
        if let Some(value) = get("answers") {
            let Yaml::Array(items) = value else {
                return Err(reader.error(&["answers"], "`answers` must be a list of texts, one per <ask>".into()));
            };
            spec.answers = items.iter().map(|item| reader.text(&["answers"], item)).collect::<Result<_, _>>()?;
        }
        if let Some(value) = get("break_before") {
            spec.breakpoints.before = reader.states(&["break_before"], value)?.into_iter().collect();
        }
        if let Some(value) = get("break_after") {
            spec.breakpoints.after = reader.states(&["break_after"], value)?.into_iter().collect();
        }
        if let Some(value) = get("step") {
            spec.breakpoints.step = reader.flag(&["step"], value)?;
        }
        if let Some(value) = get("stops") {
            let Yaml::Array(items) = value else {
                return Err(
                    reader.error(&["stops"], "`stops` must be a list, one entry per stop at a breakpoint".into())
                );
            };
            for (index, item) in items.iter().enumerate() {
                spec.stops.push(reader.stop(index, item)?);
            }
        }
        if let Some(value) = get("expect") {
            spec.expect = reader.expectations(value, spec.expect)?;
        }
        Ok(spec)
    }
}

struct Reader<'a> {
    positions: KeyPositions,
    scope: &'a Path,
}

impl Reader<'_> {
    /// `message` at the line of the key `path` (the nearest written ancestor).
    fn error(&self, path: &[&str], message: String) -> SpecError {
        let line = (0..=path.len()).rev().find_map(|len| self.positions.get(&path[..len])).map(|at| at.line);
        SpecError { line: line.or(if path.is_empty() { Some(1) } else { None }), message }
    }

    fn name(path: &[&str]) -> String {
        path.join(".")
    }

    fn check_keys(&self, path: &[&str], map: &yaml_rust2::yaml::Hash, known: &[&str]) -> Result<(), SpecError> {
        for key in map.keys() {
            let Some(key) = scalar(key) else {
                return Err(self.error(path, "a key must be text".into()));
            };
            if known.contains(&key.as_str()) {
                continue;
            }
            let hint = did_you_mean(&key, known.iter().copied())
                .map_or_else(String::new, |near| format!(" (did you mean `{near}`?)"));
            let place: Vec<&str> = path.iter().copied().chain([key.as_str()]).collect();
            let within = if path.is_empty() { String::new() } else { format!(" in `{}`", Reader::name(path)) };
            return Err(
                self.error(&place, format!("unknown key `{key}`{within}{hint}; expected one of {}", known.join(", ")))
            );
        }
        Ok(())
    }

    fn text(&self, path: &[&str], value: &Yaml) -> Result<String, SpecError> {
        scalar(value).ok_or_else(|| self.error(path, format!("`{}` must be text", Reader::name(path))))
    }

    fn flag(&self, path: &[&str], value: &Yaml) -> Result<bool, SpecError> {
        match value {
            Yaml::Boolean(flag) => Ok(*flag),
            _ => Err(self.error(path, format!("`{}` must be true or false", Reader::name(path)))),
        }
    }

    fn count(&self, path: &[&str], value: &Yaml, least: i64) -> Result<u64, SpecError> {
        match value {
            Yaml::Integer(number) if *number >= least => Ok(*number as u64),
            _ => Err(self.error(path, format!("`{}` must be a whole number, {least} or more", Reader::name(path)))),
        }
    }

    fn amount(&self, path: &[&str], value: &Yaml) -> Result<f64, SpecError> {
        non_negative_number(value)
            .ok_or_else(|| self.error(path, format!("`{}` must be a number, 0 or more", Reader::name(path))))
    }

    fn mapping<'y>(&self, path: &[&str], value: &'y Yaml, what: &str) -> Result<&'y yaml_rust2::yaml::Hash, SpecError> {
        match value {
            Yaml::Hash(map) => Ok(map),
            _ => Err(self.error(path, format!("`{}` must map {what}", Reader::name(path)))),
        }
    }

    /// A state of the workflow under test; `script`: whether it must be a script
    /// (`Some(true)`), a prompt (`Some(false)`) or either.
    fn state(&self, path: &[&str], value: &Yaml, script: Option<bool>) -> Result<StateName, SpecError> {
        let name = self.text(path, value)?;
        let file = resolve_state(self.scope, &name).map_err(|error| self.error(path, format!("`{name}`: {error}")))?;
        match script {
            Some(true) if !state_name::is_script(&file) => {
                Err(self.error(path, format!("`{name}` is the prompt state {file}; `scripts` stubs script states")))
            }
            Some(false) if state_name::is_script(&file) => Err(self.error(
                path,
                format!("`{name}` is the script {file}; replies are for prompt states (stub scripts under `scripts`)"),
            )),
            _ => Ok(StateName::from(file)),
        }
    }

    /// `stops.N`: `{at: STATE, agent?, prompt_contains?, input?, goto?, prompt?}`.
    fn stop(&self, index: usize, value: &Yaml) -> Result<Stop, SpecError> {
        let key = index.to_string();
        let path = ["stops", key.as_str()];
        let map = self.mapping(&path, value, "a stop (`at`, and `input`, `goto` or `prompt` to edit)")?;
        self.check_keys(&path, map, &STOP_KEYS)?;
        let get = |name: &str| map.get(&Yaml::String(name.into()));
        let text = |name: &str| get(name).map(|value| self.text(&["stops", key.as_str(), name], value)).transpose();
        let Some(at) = get("at") else {
            return Err(self.error(&path, format!("`stops.{index}` needs `at`: the state the agent stops before")));
        };
        Ok(Stop {
            agent: text("agent")?.unwrap_or_else(|| "main".to_string()),
            at: self.state(&["stops", key.as_str(), "at"], at, None)?,
            prompt_contains: text("prompt_contains")?,
            input: text("input")?,
            goto: get("goto").map(|value| self.state(&["stops", key.as_str(), "goto"], value, None)).transpose()?,
            prompt: text("prompt")?,
        })
    }

    fn states(&self, path: &[&str], value: &Yaml) -> Result<Vec<StateName>, SpecError> {
        let Yaml::Array(items) = value else {
            return Err(self.error(path, format!("`{}` must be a list of state names", Reader::name(path))));
        };
        items.iter().map(|item| self.state(path, item, None)).collect()
    }

    fn replies(&self, path: &[&str], value: &Yaml) -> Result<Vec<Reply>, SpecError> {
        let Yaml::Array(items) = value else {
            return Err(
                self.error(path, format!("`{}` must be a list of replies, one per model turn", Reader::name(path)))
            );
        };
        items.iter().enumerate().map(|(index, item)| self.reply(path, index, item)).collect()
    }

    fn reply(&self, path: &[&str], index: usize, value: &Yaml) -> Result<Reply, SpecError> {
        let number = index + 1;
        let index = index.to_string();
        let at: Vec<&str> = path.iter().copied().chain([index.as_str()]).collect();
        let map = match value {
            Yaml::Hash(map) => map,
            other => return Ok(Reply { text: self.text(&at, other)?, ..Reply::default() }),
        };
        self.check_keys(&at, map, &REPLY_KEYS)?;
        let field = |name: &str| map.get(&Yaml::String(name.into()));
        let in_field = |name: &'static str| -> Vec<&str> { at.iter().copied().chain([name]).collect() };
        let Some(text) = field("text") else {
            return Err(self.error(&at, format!("reply {number} of `{}` has no `text`", Reader::name(path))));
        };
        let tokens = |name: &'static str| -> Result<u64, SpecError> {
            field(name).map_or(Ok(0), |value| self.count(&in_field(name), value, 0))
        };
        Ok(Reply {
            text: self.text(&in_field("text"), text)?,
            cost_usd: field("cost_usd").map_or(Ok(0.0), |value| self.amount(&in_field("cost_usd"), value))?,
            input_tokens: tokens("input_tokens")?,
            output_tokens: tokens("output_tokens")?,
            backend: field("backend").map(|value| self.backend(&in_field("backend"), value)).transpose()?,
        })
    }

    /// A reply's `backend`: a name as `--backend` takes it. Anything but a
    /// non-blank text (a number, a list, `""`) is refused as what it is, not
    /// read as a backend called ``.
    fn backend(&self, path: &[&str], value: &Yaml) -> Result<BackendName, SpecError> {
        let name = match value {
            Yaml::String(name) if !name.trim().is_empty() => name,
            _ => {
                let names = BackendName::ALL.map(BackendName::as_str).join(", ");
                return Err(
                    self.error(path, format!("`{}` must be a backend's name, one of {names}", Reader::name(path)))
                );
            }
        };
        BackendName::parse(name).map_err(|error| self.error(path, format!("`{}`: {error}", Reader::name(path))))
    }

    fn stubs(&self, path: &[&str], value: &Yaml) -> Result<Stubs, SpecError> {
        match value {
            Yaml::Array(items) => Ok(Stubs::PerVisit(
                items
                    .iter()
                    .enumerate()
                    .map(|(index, item)| {
                        let index = index.to_string();
                        let at: Vec<&str> = path.iter().copied().chain([index.as_str()]).collect();
                        self.stub(&at, item)
                    })
                    .collect::<Result<_, _>>()?,
            )),
            _ => Ok(Stubs::Every(self.stub(path, value)?)),
        }
    }

    fn stub(&self, path: &[&str], value: &Yaml) -> Result<ScriptStub, SpecError> {
        let Yaml::Hash(map) = value else {
            return Err(self.error(
                path,
                format!(
                    "`{}` must be a stub such as `{{stdout: \"<goto>NEXT</goto>\", exit_code: 0}}`, or a list of them",
                    Reader::name(path)
                ),
            ));
        };
        self.check_keys(path, map, &STUB_KEYS)?;
        let field = |name: &str| map.get(&Yaml::String(name.into()));
        let in_field = |name: &'static str| -> Vec<&str> { path.iter().copied().chain([name]).collect() };
        let text =
            |name: &'static str| field(name).map_or(Ok(String::new()), |value| self.text(&in_field(name), value));
        let exit_code = match field("exit_code") {
            None => 0,
            Some(Yaml::Integer(code)) if (0..=255).contains(code) => *code as i32,
            Some(_) => {
                return Err(
                    self.error(&in_field("exit_code"), "`exit_code` must be a whole number from 0 to 255".into())
                );
            }
        };
        Ok(ScriptStub { stdout: text("stdout")?, stderr: text("stderr")?, exit_code })
    }

    fn expectations(&self, value: &Yaml, mut expect: Expectations) -> Result<Expectations, SpecError> {
        let map = self.mapping(&["expect"], value, "what to check (`outcome`, `result`, `path`, …)")?;
        self.check_keys(&["expect"], map, &EXPECT_KEYS)?;
        let get = |name: &str| map.get(&Yaml::String(name.into()));
        if let Some(value) = get("outcome") {
            let name = self.text(&["expect", "outcome"], value)?;
            expect.outcome = ExpectedOutcome::parse(&name).ok_or_else(|| {
                self.error(
                    &["expect", "outcome"],
                    format!("`expect.outcome` is `{name}`; expected one of {}", ExpectedOutcome::NAMES.join(", ")),
                )
            })?;
        }
        expect.result = get("result").map(|value| self.text(&["expect", "result"], value)).transpose()?;
        expect.result_contains =
            get("result_contains").map(|value| self.text(&["expect", "result_contains"], value)).transpose()?;
        expect.path = get("path").map(|value| self.states(&["expect", "path"], value)).transpose()?;
        expect.visited = get("visited")
            .map(|value| self.states(&["expect", "visited"], value).map(|states| states.into_iter().collect()))
            .transpose()?;
        expect.steps = get("steps").map(|value| self.count(&["expect", "steps"], value, 0)).transpose()?;
        if let Some(value) = get("visits") {
            for (state, count) in self.mapping(&["expect", "visits"], value, "state names to counts")? {
                let key = self.text(&["expect", "visits"], state)?;
                let path = ["expect", "visits", key.as_str()];
                let name = self.state(&path, state, None)?;
                expect.visits.insert(name, self.count(&path, count, 0)?);
            }
        }
        expect.cost_usd = get("cost_usd").map(|value| self.amount(&["expect", "cost_usd"], value)).transpose()?;
        Ok(expect)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workflow() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in [("START.md", "go"), ("REVIEW.md", "review"), ("TEST.sh", "echo")] {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        dir
    }

    fn parse(text: &str) -> Result<TestSpec, SpecError> {
        TestSpec::parse(text, workflow().path())
    }

    fn error(text: &str) -> String {
        let error = parse(text).unwrap_err();
        format!("{}: {}", error.line.map_or("?".to_string(), |line| line.to_string()), error.message)
    }

    #[test]
    fn every_key_is_read_and_state_names_resolved() {
        let spec = parse(
            "description: round trip\ninput: add a flag\nstart: START\nmax_steps: 9\nbudget: 1.5\ntimeout: 30\n\
             env: {TEST_COMMAND: \"true\", LEVEL: 3}\n\
             replies:\n  START: [\"<goto>REVIEW</goto>\"]\n  REVIEW:\n    - no tag\n    - {text: \"<result>OK</result>\", cost_usd: 0.25, input_tokens: 10, output_tokens: 2}\n\
             agent_replies: {main_review1: {REVIEW: [x]}}\n\
             scripts:\n  TEST.sh: [{stdout: a, exit_code: 2, stderr: b}]\n\
             answers: [yes]\n\
             expect: {outcome: paused, result: OK, result_contains: O, path: [START, REVIEW.md], visited: [START], \
             steps: 3, visits: {REVIEW: 2}, cost_usd: 0.25}\n",
        )
        .unwrap();
        assert_eq!(spec.description.as_deref(), Some("round trip"));
        assert_eq!(spec.start, Some(StateName::from("START.md")));
        assert_eq!(spec.max_steps, Some(9));
        assert_eq!(spec.budget, Some(1.5));
        assert_eq!(spec.timeout, Some(30.0));
        assert_eq!(spec.env["LEVEL"], "3");
        let review = &spec.replies[&StateName::from("REVIEW.md")];
        assert_eq!(review[0], Reply { text: "no tag".into(), ..Reply::default() });
        assert_eq!(
            review[1],
            Reply {
                text: "<result>OK</result>".into(),
                cost_usd: 0.25,
                input_tokens: 10,
                output_tokens: 2,
                backend: None
            }
        );
        assert_eq!(spec.agent_replies[&("main_review1".to_string(), StateName::from("REVIEW.md"))].len(), 1);
        assert_eq!(
            spec.scripts[&StateName::from("TEST.sh")],
            Stubs::PerVisit(vec![ScriptStub { stdout: "a".into(), stderr: "b".into(), exit_code: 2 }])
        );
        assert_eq!(spec.answers, ["yes"]);
        assert_eq!(spec.expect.outcome, ExpectedOutcome::Paused);
        assert_eq!(spec.expect.path, Some(vec![StateName::from("START.md"), StateName::from("REVIEW.md")]));
        assert_eq!(spec.expect.visits[&StateName::from("REVIEW.md")], 2);
        assert_eq!(spec.expect.cost_usd, Some(0.25));
    }

    /// A reply's `backend` that was no text (`3`, `[pi]`) or empty was read as a
    /// backend called ``: "unknown backend ``", naming neither the key nor the value.
    #[test]
    fn a_reply_backend_that_is_no_name_is_refused_as_such_regression() {
        for value in ["3", "[pi]", "\"\"", "\"  \"", "~"] {
            assert_eq!(
                error(&format!("replies:\n  START:\n    - {{text: x, backend: {value}}}\n")),
                "3: `replies.START.0.backend` must be a backend's name, one of claude, pi, codex",
                "backend: {value}"
            );
        }
        let spec = parse("replies:\n  START:\n    - {text: x, backend: ' Codex '}\n").unwrap();
        assert_eq!(spec.replies[&StateName::from("START.md")][0].backend, Some(BackendName::Codex));
    }

    #[test]
    fn the_outcome_defaults_to_completed() {
        assert_eq!(parse("input: x\n").unwrap().expect.outcome, ExpectedOutcome::Completed);
    }

    #[test]
    fn mistakes_are_reported_with_their_line_and_what_was_expected() {
        assert_eq!(
            error("input: x\nreplys: {}\n"),
            "2: unknown key `replys` (did you mean `replies`?); expected one of description, input, start, max_steps, \
             budget, timeout, env, repository, replies, agent_replies, scripts, agent_scripts, answers, break_before, \
             break_after, step, stops, expect"
        );
        assert!(error("replies:\n  REVEIW: [x]\n").starts_with("2: `REVEIW`: state `REVEIW` not found"));
        assert_eq!(
            error("replies:\n  TEST: [x]\n"),
            "2: `TEST` is the script TEST.sh; replies are for prompt states (stub scripts under `scripts`)"
        );
        assert_eq!(
            error("expect:\n  outcome: done\n"),
            "2: `expect.outcome` is `done`; expected one of completed, paused, failed, asking"
        );
        assert_eq!(error("max_steps: 0\n"), "1: `max_steps` must be a whole number, 1 or more");
        assert_eq!(
            error("replies:\n  START: \"<goto>X</goto>\"\n"),
            "2: `replies.START` must be a list of replies, one per model turn"
        );
        assert_eq!(
            error("scripts:\n  TEST: {stdout: x, exit: 1}\n"),
            "2: unknown key `exit` in `scripts.TEST`; expected one of stdout, stderr, exit_code"
        );
        assert!(error("input: [unclosed\n").starts_with("2: invalid YAML: "), "{}", error("input: [unclosed\n"));
        assert_eq!(error("input: a\ninput: b\n"), "2: `input` is written twice");
        assert_eq!(
            error("replies:\n  START:\n    - {text: x, backend: codx}\n"),
            "3: `replies.START.0.backend`: unknown backend `codx`: expected one of claude, pi, codex; did you mean `codex`?"
        );
        assert_eq!(error("scripts:\n  TEST: {}\n  TEST.sh: {}\n"), "3: `TEST.sh`: TEST.sh is stubbed twice");
        assert_eq!(error(""), "1: the file is empty; expected a mapping such as `replies: …` and `expect: …`");
    }
}
