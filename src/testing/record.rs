//! `baton test --record RUN` (issue 23): a finished run turned into a test file
//! that replays it offline (`docs/testing.md`). The trace has everything a test
//! needs: each model turn's stream (read back by the backend that ran it), each
//! script's output, the states each agent entered; the run's state has the
//! outcome, result, step count and cost, and its journal the input it started with.
//!
//! Secrets never reach the file: no `env` is written (the manifest's
//! `environment` applies in a test anyway), and the value of every variable
//! whose name says it is a secret (`*KEY*`, `*TOKEN*`, `*SECRET*`, …), in
//! Baton's environment or the run's, is replaced wherever it occurs in a reply,
//! a stub, the input or the result.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;
use yaml_rust2::yaml::Hash;
use yaml_rust2::{Yaml, YamlEmitter};

use crate::backend::recorded_turn::answer;
use crate::events::Event;
use crate::ids::{AgentId, BackendName, StateName};
use crate::model::run_state::{RunState, RunStatus};

/// Names of variables whose values are secrets (compared in upper case).
const SECRET_WORDS: [&str; 7] = ["KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH"];
/// Shorter values are not taken for secrets (`AUTH_MODE=on` would redact every "on").
const MIN_SECRET_LEN: usize = 8;

/// Why a run cannot be recorded.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum RecordError {
    #[error(
        "run {run_id} is {status}: only a run that completed, failed or paused can be recorded \
         (finish it with `baton resume {run_id}` first)"
    )]
    NotFinished { run_id: String, status: String },
    #[error("line {line} of the trace of run {run_id} is not a trace event ({reason}): the trace is damaged")]
    Corrupt { run_id: String, line: usize, reason: String },
    #[error(
        "{state}, turn {turn} of agent {agent} in run {run_id} has no reply in the trace (its output is not on \
         disk, or the turn was cut short): the run cannot be replayed"
    )]
    MissingReply { run_id: String, agent: String, state: String, turn: usize },
    #[error("run {run_id} has no trace (it ran with --no-debug): there is nothing to record it from")]
    NoTrace { run_id: String },
    #[error("run {run_id} never started a step: there is nothing to record")]
    NoSteps { run_id: String },
}

/// What `--record` was asked to keep.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RecordOptions {
    /// Scripts run for real in the replay instead of being stubbed.
    pub(crate) keep_scripts: bool,
}

/// A script's stdout, stderr and exit code.
type Stub = (String, String, i32);

/// One model turn as the test file writes it.
#[derive(Clone, Debug, PartialEq)]
struct RecordedReply {
    text: String,
    cost_usd: f64,
    backend: BackendName,
}

/// A turn still being read from the trace.
struct OpenTurn {
    state: StateName,
    backend: BackendName,
    objects: Vec<Value>,
}

/// The test file (YAML) for run `state` from its trace `trace` (the lines of
/// `events.jsonl`) and the input it started with.
pub(crate) fn record(
    state: &RunState,
    trace: &str,
    input: Option<&str>,
    options: RecordOptions,
    secrets: &Secrets,
) -> Result<String, RecordError> {
    let run_id = state.run_id.to_string();
    match state.status {
        RunStatus::Completed | RunStatus::Failed | RunStatus::Paused => {}
        other => return Err(RecordError::NotFinished { run_id, status: status_word(other) }),
    }
    let mut start: Option<StateName> = None;
    let mut path: Vec<StateName> = Vec::new();
    let mut turns = Turns::default();
    let mut scripts: BTreeMap<AgentId, BTreeMap<StateName, Vec<Stub>>> = BTreeMap::new();
    for (index, line) in trace.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let event: Event = serde_json::from_str(line).map_err(|error| RecordError::Corrupt {
            run_id: run_id.clone(),
            line: index + 1,
            reason: error.to_string(),
        })?;
        match event {
            Event::WorkflowStarted { initial_state, resumed: false, .. } if start.is_none() => {
                start = Some(initial_state);
            }
            Event::StateStarted { agent_id, state, attempt: 1, .. } if agent_id.is_main() => path.push(state),
            Event::ClaudeInvocationStarted { agent_id, state, backend, .. } => {
                turns.close(&run_id, &agent_id)?;
                turns.open.insert(agent_id, OpenTurn { state, backend, objects: Vec::new() });
            }
            Event::ClaudeStreamOutput { agent_id, json, .. } => {
                if let Some(turn) = turns.open.get_mut(&agent_id) {
                    turn.objects.push(json);
                }
            }
            Event::StateCompleted { agent_id, cost_usd, .. } => {
                turns.close(&run_id, &agent_id)?;
                turns.spend(&agent_id, cost_usd);
            }
            Event::TransitionOccurred { agent_id, .. }
            | Event::AgentPaused { agent_id, .. }
            | Event::StateStarted { agent_id, .. } => turns.close(&run_id, &agent_id)?,
            Event::ScriptOutput { agent_id, state, stdout, stderr, exit_code, .. } if !options.keep_scripts => {
                scripts.entry(agent_id).or_default().entry(state).or_default().push((
                    stdout,
                    stderr,
                    exit_code.unwrap_or(-1),
                ));
            }
            _ => {}
        }
    }
    let agents: Vec<AgentId> = turns.open.keys().cloned().collect();
    for agent in agents {
        turns.close(&run_id, &agent)?;
    }
    let Some(start) = start.or_else(|| path.first().cloned()) else {
        return Err(RecordError::NoSteps { run_id });
    };
    Ok(to_yaml(state, start, &path, input, &turns.replies, &scripts, secrets))
}

/// The turns read so far: the open one of each agent, and every agent's
/// answers per state, in order.
#[derive(Default)]
struct Turns {
    open: HashMap<AgentId, OpenTurn>,
    replies: BTreeMap<AgentId, BTreeMap<StateName, Vec<RecordedReply>>>,
    /// The state of each agent's last closed turn (where its step's cost goes).
    last: HashMap<AgentId, StateName>,
}

impl Turns {
    /// End `agent`'s open turn, if it has one: its answer joins the agent's replies.
    fn close(&mut self, run_id: &str, agent: &AgentId) -> Result<(), RecordError> {
        let Some(turn) = self.open.remove(agent) else { return Ok(()) };
        let list = self.replies.entry(agent.clone()).or_default().entry(turn.state.clone()).or_default();
        let Some(text) = answer(turn.backend, &turn.objects) else {
            return Err(RecordError::MissingReply {
                run_id: run_id.to_string(),
                agent: agent.to_string(),
                state: turn.state.to_string(),
                turn: list.len() + 1,
            });
        };
        list.push(RecordedReply { text, cost_usd: 0.0, backend: turn.backend });
        self.last.insert(agent.clone(), turn.state);
        Ok(())
    }

    /// `agent`'s step ended costing `cost_usd`: its last turn carries it, so the
    /// replay spends it all.
    fn spend(&mut self, agent: &AgentId, cost_usd: f64) {
        let Some(state) = self.last.get(agent) else { return };
        if let Some(reply) =
            self.replies.get_mut(agent).and_then(|states| states.get_mut(state)).and_then(|list| list.last_mut())
        {
            reply.cost_usd += cost_usd;
        }
    }
}

fn status_word(status: RunStatus) -> String {
    serde_json::to_value(status).ok().and_then(|value| value.as_str().map(str::to_string)).unwrap_or_default()
}

/// Values of secret-named variables, and what replaces them.
#[derive(Debug, Default)]
pub(crate) struct Secrets {
    values: Vec<(String, String)>,
}

impl Secrets {
    /// The secrets among `variables` (name, value).
    pub(crate) fn among<'a>(variables: impl IntoIterator<Item = (&'a str, &'a str)>) -> Secrets {
        let mut values: Vec<(String, String)> = variables
            .into_iter()
            .filter(|(name, value)| {
                let upper = name.to_ascii_uppercase();
                value.len() >= MIN_SECRET_LEN && SECRET_WORDS.iter().any(|word| upper.contains(word))
            })
            .map(|(name, value)| (value.to_string(), format!("[redacted {name}]")))
            .collect();
        // The longest first, so a secret that contains another is replaced whole.
        values.sort_by_key(|(value, _)| std::cmp::Reverse(value.len()));
        Secrets { values }
    }

    pub(crate) fn scrub(&self, text: &str) -> String {
        let mut text = text.to_string();
        for (value, replacement) in &self.values {
            if text.contains(value.as_str()) {
                text = text.replace(value.as_str(), replacement);
            }
        }
        text
    }
}

fn string(text: &str) -> Yaml {
    Yaml::String(text.to_string())
}

fn key(name: &str) -> Yaml {
    string(name)
}

fn number(value: f64) -> Yaml {
    Yaml::Real(format!("{value}"))
}

/// What each agent recorded per state, as a test file holds it: the main agent's under
/// `keys.0` (`replies`, `scripts`), every other agent's under `keys.1` by agent id.
fn insert_per_agent<T>(
    document: &mut Hash,
    keys: (&str, &str),
    recorded: &BTreeMap<AgentId, BTreeMap<StateName, Vec<T>>>,
    render: impl Fn(&[T]) -> Yaml,
) {
    let states_of = |states: &BTreeMap<StateName, Vec<T>>| {
        Yaml::Hash(states.iter().map(|(state, list)| (string(state), render(list))).collect())
    };
    if let Some(main) = recorded.get(&AgentId::main()) {
        document.insert(key(keys.0), states_of(main));
    }
    let others: Hash = recorded
        .iter()
        .filter(|(agent, _)| !agent.is_main())
        .map(|(agent, states)| (string(agent), states_of(states)))
        .collect();
    if !others.is_empty() {
        document.insert(key(keys.1), Yaml::Hash(others));
    }
}

fn to_yaml(
    state: &RunState,
    start: StateName,
    path: &[StateName],
    input: Option<&str>,
    replies: &BTreeMap<AgentId, BTreeMap<StateName, Vec<RecordedReply>>>,
    scripts: &BTreeMap<AgentId, BTreeMap<StateName, Vec<Stub>>>,
    secrets: &Secrets,
) -> String {
    let mut document = Hash::new();
    document.insert(
        key("description"),
        string(&format!("recorded from run {} ({})", state.run_id, status_word(state.status))),
    );
    if let Some(input) = input {
        document.insert(key("input"), string(&secrets.scrub(input)));
    }
    document.insert(key("start"), string(&start));
    if let Some(max) = state.launch_params.max_steps {
        document.insert(key("max_steps"), Yaml::Integer(i64::try_from(max).unwrap_or(i64::MAX)));
    }
    if state.budget_usd > 0.0 {
        document.insert(key("budget"), number(state.budget_usd));
    }
    let reply_list = |list: &[RecordedReply]| {
        Yaml::Array(
            list.iter()
                .map(|reply| {
                    let mut entry = Hash::new();
                    entry.insert(key("text"), string(&secrets.scrub(&reply.text)));
                    if reply.cost_usd != 0.0 {
                        entry.insert(key("cost_usd"), number(reply.cost_usd));
                    }
                    entry.insert(key("backend"), string(reply.backend.as_str()));
                    Yaml::Hash(entry)
                })
                .collect(),
        )
    };
    insert_per_agent(&mut document, ("replies", "agent_replies"), replies, |list| reply_list(list));
    let stubs = |visits: &[Stub]| {
        Yaml::Array(
            visits
                .iter()
                .map(|(stdout, stderr, exit_code)| {
                    let mut stub = Hash::new();
                    stub.insert(key("stdout"), string(&secrets.scrub(stdout)));
                    stub.insert(key("stderr"), string(&secrets.scrub(stderr)));
                    stub.insert(key("exit_code"), Yaml::Integer(i64::from(*exit_code)));
                    Yaml::Hash(stub)
                })
                .collect(),
        )
    };
    insert_per_agent(&mut document, ("scripts", "agent_scripts"), scripts, |visits| stubs(visits));
    let mut expect = Hash::new();
    expect.insert(key("outcome"), string(&status_word(state.status)));
    if let Some(result) = state.main_result() {
        expect.insert(key("result"), string(&secrets.scrub(result)));
    }
    expect.insert(key("path"), Yaml::Array(path.iter().map(|state| string(state)).collect()));
    expect.insert(key("steps"), Yaml::Integer(i64::try_from(state.steps_completed).unwrap_or(i64::MAX)));
    expect.insert(key("cost_usd"), number(state.total_cost_usd));
    document.insert(key("expect"), Yaml::Hash(expect));
    let mut out = String::new();
    let mut emitter = YamlEmitter::new(&mut out);
    emitter.multiline_strings(true);
    // Writing to a String cannot fail.
    let _ = emitter.dump(&Yaml::Hash(document));
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_long_values_of_secret_named_variables_are_redacted_the_longest_first() {
        let secrets = Secrets::among([
            ("ANTHROPIC_API_KEY", "sk-ant-0123456789"),
            ("GH_TOKEN", "sk-ant-0123"),
            ("AUTH_MODE", "on"),
            ("HOME", "/home/someone-long"),
        ]);
        assert_eq!(
            secrets.scrub("key sk-ant-0123456789, token sk-ant-0123, mode on, home /home/someone-long"),
            "key [redacted ANTHROPIC_API_KEY], token [redacted GH_TOKEN], mode on, home /home/someone-long"
        );
    }
}
