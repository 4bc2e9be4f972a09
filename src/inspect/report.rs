//! `baton report`: what a run spent where, computed from its trace.
//!
//! Per state: visits, time, tokens, cost, retries, reminders and tool calls by
//! tool (with failures: on Claude read from its stream, a `tool_result` marked
//! `is_error` for a `tool_use` id; on pi and Codex from the `ToolInvocation` and
//! `ToolError` events their backends publish, a failure going to the agent's
//! last tool); per agent: steps, cost, result; the run's
//! totals; the slowest and the most expensive steps. The run's status comes from
//! its state, so a live, failed or paused run reports what it did so far.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};

use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};

use crate::ids::BackendName;
use crate::model::run_state::RunState;

/// How many of the slowest and most expensive steps are listed.
const TOP_STEPS: usize = 5;

/// The fields of a trace line the report reads; the rest are skipped unparsed,
/// and text is borrowed from the line where it has no escapes (a long trace is
/// mostly prompts and stream objects the report never looks into).
#[derive(Deserialize)]
struct Line<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(default, borrow)]
    ts: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    agent_id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    state: Option<Cow<'a, str>>,
    #[serde(default)]
    step: Option<u64>,
    #[serde(default)]
    attempt: Option<u64>,
    #[serde(default)]
    duration_ms: Option<u64>,
    #[serde(default)]
    cost_usd: Option<f64>,
    #[serde(default)]
    reminder: Option<u64>,
    #[serde(default)]
    result: Option<String>,
    #[serde(default, borrow)]
    json: Option<StreamObject<'a>>,
    /// A turn's backend and model (`ClaudeInvocationStarted`).
    #[serde(default)]
    backend: Option<BackendName>,
    #[serde(default, borrow)]
    model: Option<Cow<'a, str>>,
    #[serde(default)]
    is_reminder: Option<bool>,
    /// `ToolInvocation`'s tool.
    #[serde(default, borrow)]
    tool_name: Option<Cow<'a, str>>,
    /// A step's tokens on a backend whose stream is not read here (`StateCompleted`).
    #[serde(default)]
    tokens: Option<Usage>,
    /// The worker a distributed step ran on (`StepRanOn`).
    #[serde(default, borrow)]
    worker: Option<Cow<'a, str>>,
    /// What an edit changed, and through what (`AgentEdited`).
    #[serde(default, borrow)]
    field: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    by: Option<Cow<'a, str>>,
}

/// The parts of one Claude Code stream-json object the report needs.
#[derive(Deserialize)]
struct StreamObject<'a> {
    #[serde(rename = "type", default, borrow)]
    kind: Option<Cow<'a, str>>,
    #[serde(default)]
    usage: Option<Usage>,
    #[serde(default, borrow)]
    message: Option<StreamMessage<'a>>,
}

#[derive(Deserialize)]
struct StreamMessage<'a> {
    #[serde(default, borrow)]
    content: Option<Content<'a>>,
}

/// A message's content: a list of items, or (in user messages) plain text.
#[derive(Deserialize)]
#[serde(untagged)]
enum Content<'a> {
    #[serde(borrow)]
    Items(Vec<ContentItem<'a>>),
    Text(IgnoredAny),
}

#[derive(Deserialize)]
struct ContentItem<'a> {
    #[serde(rename = "type", default, borrow)]
    kind: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    tool_use_id: Option<Cow<'a, str>>,
    #[serde(default)]
    is_error: Option<bool>,
}

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq)]
pub(crate) struct Usage {
    #[serde(default)]
    pub(crate) input_tokens: u64,
    #[serde(default)]
    pub(crate) output_tokens: u64,
    #[serde(default)]
    pub(crate) cache_read_input_tokens: u64,
    #[serde(default)]
    pub(crate) cache_creation_input_tokens: u64,
}

impl Usage {
    fn add(&mut self, other: Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_input_tokens += other.cache_read_input_tokens;
        self.cache_creation_input_tokens += other.cache_creation_input_tokens;
    }
}

/// One step: a state executed by an agent, all its attempts and turns.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub(crate) struct StepFigures {
    pub(crate) agent: String,
    pub(crate) state: String,
    pub(crate) step: u64,
    /// The backend its turns ran on; `None` for a script (a trace written before
    /// backends were chosen says nothing: Claude).
    pub(crate) backend: Option<BackendName>,
    /// The model asked for; empty when the CLI chose its own (or the trace is older).
    pub(crate) model: Option<String>,
    /// `None` while the step runs (or when it never completed).
    pub(crate) duration_ms: Option<u64>,
    pub(crate) cost_usd: f64,
    pub(crate) tokens: Usage,
    /// The worker that ran it, in a distributed run (`--engine restate=URL`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) worker: Option<String>,
}

/// The steps one worker of a distributed run ran.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub(crate) struct WorkerFigures {
    pub(crate) worker: String,
    pub(crate) steps: u64,
}

/// What the prompt steps on one backend spent.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub(crate) struct BackendFigures {
    pub(crate) backend: BackendName,
    /// Steps completed on it.
    pub(crate) steps: u64,
    pub(crate) cost_usd: f64,
    pub(crate) tokens: Usage,
}

#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub(crate) struct ToolFigures {
    pub(crate) calls: u64,
    pub(crate) failures: u64,
}

#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub(crate) struct StateFigures {
    pub(crate) state: String,
    /// Steps started (retries of a step are not visits).
    pub(crate) visits: u64,
    pub(crate) completed: u64,
    pub(crate) duration_total_ms: u64,
    pub(crate) duration_median_ms: u64,
    pub(crate) duration_max_ms: u64,
    pub(crate) tokens: Usage,
    pub(crate) cost_usd: f64,
    /// Attempts after the first, over all visits.
    pub(crate) retries: u64,
    /// Reminder turns (R5.18), over all visits.
    pub(crate) reminders: u64,
    pub(crate) tools: BTreeMap<String, ToolFigures>,
}

#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub(crate) struct AgentFigures {
    pub(crate) agent: String,
    pub(crate) steps: u64,
    pub(crate) cost_usd: f64,
    /// The `<result>` it terminated with; `None` while it lives.
    pub(crate) result: Option<String>,
}

#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub(crate) struct Totals {
    pub(crate) steps: u64,
    pub(crate) cost_usd: f64,
    pub(crate) tokens: Usage,
    pub(crate) retries: u64,
    pub(crate) reminders: u64,
    pub(crate) tool_calls: u64,
    pub(crate) tool_failures: u64,
    /// From the trace's first line to its last.
    pub(crate) wall_ms: u64,
}

/// What a run did, by state and agent. Also the `--json` document (`docs/inspecting.md`).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub(crate) struct Report {
    pub(crate) states: Vec<StateFigures>,
    pub(crate) agents: Vec<AgentFigures>,
    pub(crate) totals: Totals,
    /// The prompt steps' figures by backend, in `claude`, `pi`, `codex` order.
    pub(crate) backends: Vec<BackendFigures>,
    pub(crate) slowest_steps: Vec<StepFigures>,
    pub(crate) most_expensive_steps: Vec<StepFigures>,
    /// A distributed run's workers and how many steps each ran, by name; empty
    /// (and absent from the JSON) for a local run.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) workers: Vec<WorkerFigures>,
    /// Trace lines that could not be read (a torn or foreign line); skipped.
    pub(crate) unreadable_lines: u64,
    /// Where a person changed what a stopped agent did next (`AgentEdited`), in
    /// order: the history is not the workflow's alone. Absent when none did.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) edits: Vec<EditFigures>,
}

/// One edit of a stopped agent.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub(crate) struct EditFigures {
    pub(crate) agent: String,
    pub(crate) state: String,
    pub(crate) field: String,
    pub(crate) by: String,
}

/// Adds trace lines up; `finish` gives the report.
#[derive(Default)]
pub(crate) struct ReportBuilder {
    states: BTreeMap<String, StateFigures>,
    agents: BTreeMap<String, AgentFigures>,
    steps: Vec<StepFigures>,
    /// The index in `steps` of each agent's running step.
    open_steps: HashMap<(String, u64), usize>,
    /// Each `tool_use` id's tool, for the `tool_result` that may report its failure.
    tool_names: HashMap<String, String>,
    /// Each agent's last tool on a backend whose stream is not read here, for a
    /// `ToolError` that follows it.
    last_tool: HashMap<String, String>,
    first_ts: Option<String>,
    last_ts: Option<String>,
    unreadable_lines: u64,
    edits: Vec<EditFigures>,
}

impl ReportBuilder {
    pub(crate) fn add(&mut self, line: &str) {
        let Ok(line) = serde_json::from_str::<Line>(line) else {
            self.unreadable_lines += 1;
            return;
        };
        if let Some(ts) = &line.ts {
            if self.first_ts.is_none() {
                self.first_ts = Some(ts.to_string());
            }
            self.last_ts = Some(ts.to_string());
        }
        let agent = line.agent_id.as_deref().unwrap_or_default().to_string();
        match &*line.kind {
            "StateStarted" => self.state_started(&line, agent),
            "StateCompleted" => self.state_completed(&line, agent),
            "PromptRendered" if line.reminder.unwrap_or(0) > 0 => {
                if let Some(state) = &line.state {
                    self.state(state).reminders += 1;
                }
            }
            "ClaudeStreamOutput" => self.stream_object(&line, agent),
            "ClaudeInvocationStarted" if !line.is_reminder.unwrap_or(false) => {
                if let Some(figures) = self.open_step(&agent, line.state.as_deref()) {
                    figures.backend = Some(line.backend.unwrap_or_default());
                    figures.model = Some(line.model.as_deref().unwrap_or_default().to_string());
                }
            }
            "ToolInvocation" | "ToolError" => self.tool_event(&line, agent),
            "AgentTerminated" => self.agent(&agent).result = line.result.clone(),
            "AgentEdited" => self.edits.push(EditFigures {
                agent,
                state: line.state.as_deref().unwrap_or_default().to_string(),
                field: line.field.as_deref().unwrap_or_default().to_string(),
                by: line.by.as_deref().unwrap_or_default().to_string(),
            }),
            "StepRanOn" => {
                let (Some(step), Some(worker)) = (line.step, line.worker.as_deref()) else { return };
                if let Some(index) = self.open_steps.get(&(agent, step)).copied()
                    && let Some(figures) = self.steps.get_mut(index)
                {
                    figures.worker = Some(worker.to_string());
                }
            }
            _ => {}
        }
    }

    fn state(&mut self, state: &str) -> &mut StateFigures {
        self.states
            .entry(state.to_string())
            .or_insert_with(|| StateFigures { state: state.to_string(), ..StateFigures::default() })
    }

    fn agent(&mut self, agent: &str) -> &mut AgentFigures {
        self.agents
            .entry(agent.to_string())
            .or_insert_with(|| AgentFigures { agent: agent.to_string(), ..AgentFigures::default() })
    }

    fn state_started(&mut self, line: &Line<'_>, agent: String) {
        let (Some(state), Some(step)) = (line.state.as_deref(), line.step) else { return };
        self.agent(&agent);
        if line.attempt.unwrap_or(1) > 1 {
            self.state(state).retries += 1;
            return;
        }
        self.state(state).visits += 1;
        self.open_steps.insert((agent.clone(), step), self.steps.len());
        self.steps.push(StepFigures { agent, state: state.to_string(), step, ..StepFigures::default() });
    }

    /// The running step of `agent`, when it is at `state` (an invocation names no step).
    fn open_step(&mut self, agent: &str, state: Option<&str>) -> Option<&mut StepFigures> {
        let index = self
            .open_steps
            .iter()
            .filter(|((owner, _), _)| owner == agent)
            .max_by_key(|((_, step), _)| *step)
            .map(|(_, index)| *index)?;
        self.steps.get_mut(index).filter(|figures| Some(figures.state.as_str()) == state)
    }

    /// A tool call or failure of a pi or Codex step (Claude's are read from its
    /// stream, which says which call failed).
    fn tool_event(&mut self, line: &Line<'_>, agent: String) {
        let running = self
            .open_steps
            .iter()
            .filter(|((owner, _), _)| *owner == agent)
            .max_by_key(|((_, step), _)| *step)
            .and_then(|(_, index)| self.steps.get(*index));
        let Some(step) = running.filter(|step| step.backend.is_some_and(|backend| backend != BackendName::Claude))
        else {
            return;
        };
        let state = step.state.clone();
        match (&*line.kind, &line.tool_name) {
            ("ToolInvocation", Some(tool)) => {
                self.state(&state).tools.entry(tool.to_string()).or_default().calls += 1;
                self.last_tool.insert(agent, tool.to_string());
            }
            ("ToolError", _) => {
                if let Some(tool) = self.last_tool.get(&agent).cloned() {
                    self.state(&state).tools.entry(tool).or_default().failures += 1;
                }
            }
            _ => {}
        }
    }

    fn state_completed(&mut self, line: &Line<'_>, agent: String) {
        let (Some(state), Some(step)) = (line.state.as_deref(), line.step) else { return };
        let cost = line.cost_usd.unwrap_or(0.0);
        let duration = line.duration_ms.unwrap_or(0);
        let tokens = line.tokens.unwrap_or_default();
        let figures = self.state(state);
        figures.completed += 1;
        figures.cost_usd += cost;
        figures.tokens.add(tokens);
        let record = self.agent(&agent);
        record.steps += 1;
        record.cost_usd += cost;
        let index = match self.open_steps.remove(&(agent.clone(), step)) {
            Some(index) => index,
            None => {
                self.steps.push(StepFigures { agent, state: state.to_string(), step, ..StepFigures::default() });
                self.steps.len() - 1
            }
        };
        if let Some(figures) = self.steps.get_mut(index) {
            figures.duration_ms = Some(duration);
            figures.cost_usd = cost;
            figures.tokens.add(tokens);
        }
    }

    fn stream_object(&mut self, line: &Line<'_>, agent: String) {
        let (Some(object), Some(state), Some(step)) = (&line.json, line.state.as_deref(), line.step) else { return };
        let items = match object.message.as_ref().and_then(|message| message.content.as_ref()) {
            Some(Content::Items(items)) => items.as_slice(),
            _ => &[],
        };
        match object.kind.as_deref() {
            Some("result") => {
                let usage = object.usage.unwrap_or_default();
                self.state(state).tokens.add(usage);
                if let Some(index) = self.open_steps.get(&(agent, step)).copied()
                    && let Some(figures) = self.steps.get_mut(index)
                {
                    figures.tokens.add(usage);
                }
            }
            Some("assistant") => {
                for item in items.iter().filter(|item| item.kind.as_deref() == Some("tool_use")) {
                    let (Some(id), Some(name)) = (&item.id, &item.name) else { continue };
                    self.tool_names.insert(id.to_string(), name.to_string());
                    self.state(state).tools.entry(name.to_string()).or_default().calls += 1;
                }
            }
            Some("user") => {
                for item in items.iter().filter(|item| item.kind.as_deref() == Some("tool_result")) {
                    let failed = item.is_error.unwrap_or(false);
                    let id = item.tool_use_id.as_deref().unwrap_or_default();
                    if let (true, Some(name)) = (failed, self.tool_names.get(id).cloned()) {
                        self.state(state).tools.entry(name).or_default().failures += 1;
                    }
                }
            }
            _ => {}
        }
    }

    pub(crate) fn finish(self) -> Report {
        let mut durations: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
        for step in &self.steps {
            if let Some(duration) = step.duration_ms {
                durations.entry(step.state.as_str()).or_default().push(duration);
            }
        }
        let mut states: Vec<StateFigures> = self.states.values().cloned().collect();
        for figures in &mut states {
            let mut taken = durations.remove(figures.state.as_str()).unwrap_or_default();
            taken.sort_unstable();
            figures.duration_total_ms = taken.iter().sum();
            figures.duration_max_ms = taken.last().copied().unwrap_or(0);
            figures.duration_median_ms = median(&taken);
        }
        let mut totals = Totals::default();
        for figures in &states {
            totals.steps += figures.completed;
            totals.cost_usd += figures.cost_usd;
            totals.tokens.add(figures.tokens);
            totals.retries += figures.retries;
            totals.reminders += figures.reminders;
            totals.tool_calls += figures.tools.values().map(|tool| tool.calls).sum::<u64>();
            totals.tool_failures += figures.tools.values().map(|tool| tool.failures).sum::<u64>();
        }
        totals.wall_ms = wall_ms(self.first_ts.as_deref(), self.last_ts.as_deref());
        let completed: Vec<&StepFigures> = self.steps.iter().filter(|step| step.duration_ms.is_some()).collect();
        let top = |key: &dyn Fn(&StepFigures) -> f64| {
            let mut ranked = completed.clone();
            ranked.sort_by(|a, b| key(b).total_cmp(&key(a)));
            ranked.into_iter().filter(|step| key(step) > 0.0).take(TOP_STEPS).cloned().collect::<Vec<_>>()
        };
        let mut backends: BTreeMap<BackendName, BackendFigures> = BTreeMap::new();
        for step in &self.steps {
            let Some(backend) = step.backend else { continue };
            let figures = backends.entry(backend).or_insert_with(|| BackendFigures { backend, ..Default::default() });
            figures.steps += u64::from(step.duration_ms.is_some());
            figures.cost_usd += step.cost_usd;
            figures.tokens.add(step.tokens);
        }
        let mut workers: BTreeMap<&str, u64> = BTreeMap::new();
        for step in &self.steps {
            if let Some(worker) = &step.worker {
                *workers.entry(worker.as_str()).or_default() += 1;
            }
        }
        let workers =
            workers.into_iter().map(|(worker, steps)| WorkerFigures { worker: worker.to_string(), steps }).collect();
        let slowest_steps = top(&|step| step.duration_ms.unwrap_or(0) as f64);
        let most_expensive_steps = top(&|step| step.cost_usd);
        Report {
            states,
            agents: self.agents.into_values().collect(),
            totals,
            backends: backends.into_values().collect(),
            slowest_steps,
            most_expensive_steps,
            workers,
            unreadable_lines: self.unreadable_lines,
            edits: self.edits,
        }
    }
}

/// The report of a trace's lines.
/// The `baton report --json` document (`docs/inspecting.md`): the run, then its
/// figures. `GET /api/v1/runs/{id}/report` answers the same.
#[derive(Serialize)]
pub(crate) struct ReportDocument<'a> {
    schema: u32,
    run_id: &'a str,
    status: String,
    workflow: String,
    #[serde(flatten)]
    report: &'a Report,
}

impl<'a> ReportDocument<'a> {
    pub(crate) fn new(run: &'a RunState, report: &'a Report) -> ReportDocument<'a> {
        ReportDocument {
            schema: 1,
            run_id: &run.run_id,
            status: run.status.to_string(),
            workflow: run.scope_dir.display().to_string(),
            report,
        }
    }
}

pub(crate) fn report<'a>(lines: impl IntoIterator<Item = &'a str>) -> Report {
    let mut builder = ReportBuilder::default();
    for line in lines {
        builder.add(line);
    }
    builder.finish()
}

fn median(sorted: &[u64]) -> u64 {
    match sorted.len() {
        0 => 0,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2,
    }
}

fn wall_ms(first: Option<&str>, last: Option<&str>) -> u64 {
    let parse = |ts: Option<&str>| ts.and_then(|ts| ts.parse::<jiff::Timestamp>().ok());
    match (parse(first), parse(last)) {
        (Some(first), Some(last)) => u64::try_from(last.duration_since(first).as_millis()).unwrap_or(0),
        _ => 0,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    use serde_json::Value;

    fn line(value: Value) -> String {
        value.to_string()
    }

    #[test]
    fn states_add_up_visits_time_tokens_retries_reminders_and_tools() {
        let lines = [
            line(
                serde_json::json!({"type":"StateStarted","ts":"2026-01-01T00:00:00Z","agent_id":"main","state":"A.md","step":1,"attempt":1}),
            ),
            line(serde_json::json!({"type":"StateStarted","agent_id":"main","state":"A.md","step":1,"attempt":2})),
            line(serde_json::json!({"type":"PromptRendered","agent_id":"main","state":"A.md","step":1,"reminder":1})),
            line(
                serde_json::json!({"type":"ClaudeStreamOutput","agent_id":"main","state":"A.md","step":1,"json":{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"Bash"},{"type":"text","text":"x"}]}}}),
            ),
            line(
                serde_json::json!({"type":"ClaudeStreamOutput","agent_id":"main","state":"A.md","step":1,"json":{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","is_error":true}]}}}),
            ),
            line(
                serde_json::json!({"type":"ClaudeStreamOutput","agent_id":"main","state":"A.md","step":1,"json":{"type":"result","usage":{"input_tokens":10,"output_tokens":2,"cache_read_input_tokens":5}}}),
            ),
            line(
                serde_json::json!({"type":"StateCompleted","agent_id":"main","state":"A.md","step":1,"cost_usd":0.5,"duration_ms":300}),
            ),
            line(serde_json::json!({"type":"StateStarted","agent_id":"main","state":"A.md","step":2,"attempt":1})),
            line(
                serde_json::json!({"type":"StateCompleted","agent_id":"main","state":"A.md","step":2,"cost_usd":0.25,"duration_ms":100}),
            ),
            line(
                serde_json::json!({"type":"AgentTerminated","ts":"2026-01-01T00:00:02Z","agent_id":"main","result":"ok"}),
            ),
            "{\"type\":\"StateSta".to_string(),
        ];
        let report = report(lines.iter().map(String::as_str));
        let a = &report.states[0];
        assert_eq!((a.visits, a.completed, a.retries, a.reminders), (2, 2, 1, 1));
        assert_eq!((a.duration_total_ms, a.duration_median_ms, a.duration_max_ms), (400, 200, 300));
        assert_eq!(
            a.tokens,
            Usage { input_tokens: 10, output_tokens: 2, cache_read_input_tokens: 5, cache_creation_input_tokens: 0 }
        );
        assert_eq!(a.tools["Bash"], ToolFigures { calls: 1, failures: 1 });
        assert_eq!(report.agents[0].result.as_deref(), Some("ok"));
        assert_eq!((report.totals.steps, report.totals.wall_ms), (2, 2000));
        assert_eq!(report.slowest_steps.iter().map(|step| step.step).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(report.unreadable_lines, 1);
    }

    /// A trace of a plan on Claude (tokens from its stream) and a review on Codex
    /// (tokens from `StateCompleted`), then a script.
    pub(crate) fn mixed_trace() -> Vec<String> {
        [
            serde_json::json!({"type":"StateStarted","agent_id":"main","state":"PLAN.md","step":1,"attempt":1}),
            serde_json::json!({"type":"ClaudeInvocationStarted","agent_id":"main","state":"PLAN.md","backend":"claude","model":"sonnet","is_reminder":false}),
            serde_json::json!({"type":"ClaudeStreamOutput","agent_id":"main","state":"PLAN.md","step":1,"json":{"type":"result","usage":{"input_tokens":100,"output_tokens":20}}}),
            serde_json::json!({"type":"StateCompleted","agent_id":"main","state":"PLAN.md","step":1,"cost_usd":0.01,"duration_ms":1000}),
            serde_json::json!({"type":"StateStarted","agent_id":"main","state":"REVIEW.md","step":2,"attempt":1}),
            serde_json::json!({"type":"ClaudeInvocationStarted","agent_id":"main","state":"REVIEW.md","backend":"codex","model":"gpt-5","is_reminder":false}),
            serde_json::json!({"type":"ClaudeInvocationStarted","agent_id":"main","state":"REVIEW.md","backend":"codex","model":"gpt-5","is_reminder":true}),
            serde_json::json!({"type":"StateCompleted","agent_id":"main","state":"REVIEW.md","step":2,"cost_usd":0.03,"duration_ms":2000,"tokens":{"input_tokens":500,"output_tokens":50}}),
            serde_json::json!({"type":"StateStarted","agent_id":"main","state":"DONE.sh","step":3,"attempt":1}),
            serde_json::json!({"type":"StateCompleted","agent_id":"main","state":"DONE.sh","step":3,"cost_usd":0.0,"duration_ms":5}),
        ]
        .iter()
        .map(|value| line(value.clone()))
        .collect()
    }

    #[test]
    fn steps_say_their_backend_and_model_and_backends_add_up_steps_cost_and_tokens() {
        let report = report(mixed_trace().iter().map(String::as_str));
        let by_backend: Vec<_> = report
            .backends
            .iter()
            .map(|figures| (figures.backend, figures.steps, figures.tokens.input_tokens, figures.tokens.output_tokens))
            .collect();
        assert_eq!(by_backend, [(BackendName::Claude, 1, 100, 20), (BackendName::Codex, 1, 500, 50)]);
        assert_eq!(report.backends[1].cost_usd, 0.03);
        let steps: Vec<_> = report
            .slowest_steps
            .iter()
            .map(|step| (step.state.as_str(), step.backend, step.model.as_deref()))
            .collect();
        assert_eq!(
            steps,
            [
                ("REVIEW.md", Some(BackendName::Codex), Some("gpt-5")),
                ("PLAN.md", Some(BackendName::Claude), Some("sonnet")),
                ("DONE.sh", None, None)
            ]
        );
        assert_eq!((report.totals.tokens.input_tokens, report.totals.tokens.output_tokens), (600, 70));
    }

    /// Regression: a pi or Codex step's tool calls were counted only from Claude's
    /// stream, so they showed none.
    #[test]
    fn a_codex_steps_tool_calls_and_failures_are_counted_from_its_events() {
        let lines: Vec<String> = [
            serde_json::json!({"type":"StateStarted","agent_id":"main","state":"REVIEW.md","step":1,"attempt":1}),
            serde_json::json!({"type":"ClaudeInvocationStarted","agent_id":"main","state":"REVIEW.md","backend":"codex","model":"","is_reminder":false}),
            serde_json::json!({"type":"ToolInvocation","agent_id":"main","tool_name":"command","detail":"ls"}),
            serde_json::json!({"type":"ToolInvocation","agent_id":"main","tool_name":"command","detail":"false"}),
            serde_json::json!({"type":"ToolError","agent_id":"main","message":"failed (exit code 1)"}),
            serde_json::json!({"type":"StateCompleted","agent_id":"main","state":"REVIEW.md","step":1,"cost_usd":0.0,"duration_ms":10}),
            serde_json::json!({"type":"StateStarted","agent_id":"main","state":"PLAN.md","step":2,"attempt":1}),
            serde_json::json!({"type":"ClaudeInvocationStarted","agent_id":"main","state":"PLAN.md","backend":"claude","model":"sonnet","is_reminder":false}),
            serde_json::json!({"type":"ToolInvocation","agent_id":"main","tool_name":"Bash","detail":"ls"}),
        ]
        .iter()
        .map(|value| line(value.clone()))
        .collect();
        let report = report(lines.iter().map(String::as_str));
        let review = report.states.iter().find(|state| state.state == "REVIEW.md").expect("REVIEW.md");
        assert_eq!(review.tools["command"], ToolFigures { calls: 2, failures: 1 });
        let plan = report.states.iter().find(|state| state.state == "PLAN.md").expect("PLAN.md");
        assert!(plan.tools.is_empty(), "Claude's tools come from its stream, not counted twice");
    }

    #[test]
    fn an_older_trace_without_backends_reads_as_claude() {
        let lines = [
            line(serde_json::json!({"type":"StateStarted","agent_id":"main","state":"A.md","step":1,"attempt":1})),
            line(
                serde_json::json!({"type":"ClaudeInvocationStarted","agent_id":"main","state":"A.md","is_reminder":false}),
            ),
            line(
                serde_json::json!({"type":"StateCompleted","agent_id":"main","state":"A.md","step":1,"cost_usd":0.5,"duration_ms":3}),
            ),
        ];
        let report = report(lines.iter().map(String::as_str));
        assert_eq!(
            report.backends.iter().map(|figures| (figures.backend, figures.steps)).collect::<Vec<_>>(),
            [(BackendName::Claude, 1)]
        );
        assert_eq!(report.slowest_steps[0].model.as_deref(), Some(""));
    }
}
