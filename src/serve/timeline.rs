//! The swimlane timeline of a run, from its trace: one entry per step (an agent's
//! `StateStarted` with attempt 1, up to its transition), with when it started
//! relative to the run's first event, how long it took, what it cost, its
//! attempts, and the tag and target it left by; and one entry per agent, with the
//! agent that forked it. Built incrementally: the daemon keeps one per run and
//! feeds it only the lines appended since the last request, so a 10,000-step run
//! is parsed once, not on every page load.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize)]
pub(crate) struct Step {
    pub(crate) agent: String,
    pub(crate) step: u64,
    pub(crate) state: String,
    pub(crate) kind: String,
    pub(crate) start_ms: i64,
    pub(crate) duration_ms: Option<i64>,
    pub(crate) cost_usd: f64,
    pub(crate) attempts: u32,
    pub(crate) tag: Option<String>,
    pub(crate) target: Option<String>,
    pub(crate) commit: Option<u64>,
    /// A prompt step's backend (`claude`, `pi`, `codex`) and the model asked for
    /// (empty: the CLI's own); absent for a script.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) backend: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) model: Option<String>,
    /// The `baton worker` that ran the step (`--engine restate`); absent for a local step.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) worker: Option<String>,
    /// `running`, `done`, `failed` (an attempt failed and none succeeded yet) or
    /// `paused` (the agent paused at this step).
    pub(crate) status: &'static str,
    #[serde(skip)]
    changed_at: u64,
}

#[derive(Clone, Debug, Serialize)]
pub(crate) struct Lane {
    pub(crate) id: String,
    pub(crate) parent: Option<String>,
    pub(crate) spawned_ms: i64,
    pub(crate) result: Option<String>,
    #[serde(skip)]
    changed_at: u64,
}

#[derive(Debug, Default)]
pub(crate) struct Timeline {
    started: Option<jiff::Timestamp>,
    steps: Vec<Step>,
    /// The index of each agent's latest step.
    latest: HashMap<String, usize>,
    lanes: BTreeMap<String, Lane>,
    /// Lane order: the order agents appeared.
    order: Vec<String>,
    last_seq: u64,
}

#[derive(Deserialize)]
struct Line<'a> {
    seq: u64,
    #[serde(borrow)]
    ts: &'a str,
    #[serde(rename = "type", borrow)]
    kind: &'a str,
    #[serde(default, borrow)]
    agent_id: Option<std::borrow::Cow<'a, str>>,
    #[serde(default)]
    state: Option<String>,
    #[serde(default)]
    state_type: Option<String>,
    #[serde(default)]
    step: Option<u64>,
    #[serde(default)]
    attempt: Option<u32>,
    #[serde(default)]
    cost_usd: Option<f64>,
    #[serde(default)]
    to_state: Option<String>,
    #[serde(default)]
    transition_type: Option<String>,
    #[serde(default)]
    commit: Option<u64>,
    #[serde(default)]
    parent_agent_id: Option<String>,
    #[serde(default)]
    new_agent_id: Option<String>,
    #[serde(default)]
    result: Option<String>,
    #[serde(default)]
    backend: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    worker: Option<String>,
    #[serde(default)]
    is_reminder: Option<bool>,
}

/// What `GET …/steps` answers.
#[derive(Serialize)]
pub(crate) struct TimelineView<'a> {
    pub(crate) trace_seq: u64,
    pub(crate) started_at: Option<String>,
    pub(crate) steps: Vec<&'a Step>,
    pub(crate) agents: Vec<&'a Lane>,
}

impl Timeline {
    /// Take in trace lines (a torn or foreign line is skipped).
    pub(crate) fn add(&mut self, text: &str) {
        for line in text.lines() {
            if let Ok(line) = serde_json::from_str::<Line>(line) {
                self.add_line(&line);
            }
        }
    }

    fn ms(&mut self, ts: &str) -> i64 {
        let Ok(at) = ts.parse::<jiff::Timestamp>() else { return 0 };
        let started = *self.started.get_or_insert(at);
        at.duration_since(started).as_millis() as i64
    }

    fn lane(&mut self, id: &str, parent: Option<String>, at: i64, seq: u64) {
        if !self.lanes.contains_key(id) {
            self.order.push(id.to_string());
            self.lanes.insert(
                id.to_string(),
                Lane { id: id.to_string(), parent, spawned_ms: at, result: None, changed_at: seq },
            );
        }
    }

    fn add_line(&mut self, line: &Line) {
        self.last_seq = self.last_seq.max(line.seq);
        let at = self.ms(line.ts);
        let seq = line.seq;
        let agent = line.agent_id.as_deref().unwrap_or_default().to_string();
        match line.kind {
            "StateStarted" => {
                self.lane(&agent, None, at, seq);
                let step = line.step.unwrap_or_default();
                let attempt = line.attempt.unwrap_or(1);
                let same = self.latest.get(&agent).copied().filter(|&index| self.steps[index].step == step);
                match same {
                    Some(index) if attempt > 1 => {
                        let entry = &mut self.steps[index];
                        entry.attempts = entry.attempts.max(attempt);
                        entry.status = "running";
                        entry.changed_at = seq;
                    }
                    _ => {
                        self.steps.push(Step {
                            agent: agent.clone(),
                            step,
                            state: line.state.clone().unwrap_or_default(),
                            kind: line.state_type.clone().unwrap_or_default(),
                            start_ms: at,
                            duration_ms: None,
                            cost_usd: 0.0,
                            attempts: attempt,
                            tag: None,
                            target: None,
                            commit: None,
                            backend: None,
                            model: None,
                            worker: None,
                            status: "running",
                            changed_at: seq,
                        });
                        self.latest.insert(agent, self.steps.len() - 1);
                    }
                }
            }
            "ClaudeInvocationStarted" if !line.is_reminder.unwrap_or(false) => {
                if let Some(entry) = self.latest_of(&agent) {
                    // A trace written before backends were chosen: Claude.
                    entry.backend = Some(line.backend.clone().unwrap_or_else(|| "claude".to_string()));
                    entry.model = Some(line.model.clone().unwrap_or_default());
                    entry.changed_at = seq;
                }
            }
            "StepRanOn" => {
                if let Some(entry) = self.latest_of(&agent) {
                    entry.worker = line.worker.clone();
                    entry.changed_at = seq;
                }
            }
            "StateCompleted" => {
                if let Some(entry) = self.latest_of(&agent) {
                    entry.cost_usd += line.cost_usd.unwrap_or_default();
                    entry.duration_ms = Some(at - entry.start_ms);
                    entry.changed_at = seq;
                }
            }
            "ErrorOccurred" => {
                if let Some(entry) = self.latest_of(&agent) {
                    entry.status = "failed";
                    entry.duration_ms = Some(at - entry.start_ms);
                    entry.changed_at = seq;
                }
            }
            "AgentPaused" => {
                if let Some(entry) = self.latest_of(&agent) {
                    if entry.status == "running" || entry.status == "failed" {
                        entry.status = "paused";
                    }
                    entry.duration_ms.get_or_insert(at - entry.start_ms);
                    entry.changed_at = seq;
                }
            }
            "TransitionOccurred" => {
                if let Some(entry) = self.latest_of(&agent) {
                    entry.tag = line.transition_type.clone();
                    entry.target = line.to_state.clone();
                    entry.commit = line.commit;
                    entry.status = "done";
                    entry.duration_ms.get_or_insert(at - entry.start_ms);
                    entry.changed_at = seq;
                }
            }
            "AgentSpawned" => {
                if let Some(new) = &line.new_agent_id {
                    self.lane(new, line.parent_agent_id.clone(), at, seq);
                }
            }
            "AgentTerminated" => {
                self.lane(&agent, None, at, seq);
                if let Some(lane) = self.lanes.get_mut(&agent) {
                    lane.result = line.result.clone();
                    lane.changed_at = seq;
                }
            }
            _ => {}
        }
    }

    fn latest_of(&mut self, agent: &str) -> Option<&mut Step> {
        let index = *self.latest.get(agent)?;
        self.steps.get_mut(index)
    }

    /// Steps started, by state file (a retried step counts once).
    pub(crate) fn visits(&self) -> BTreeMap<String, u64> {
        let mut visits = BTreeMap::new();
        for step in &self.steps {
            *visits.entry(step.state.clone()).or_insert(0) += 1;
        }
        visits
    }

    /// The timeline, or what changed in it after trace line `after`.
    pub(crate) fn view(&self, after: u64) -> TimelineView<'_> {
        TimelineView {
            trace_seq: self.last_seq,
            started_at: self.started.map(|at| at.to_string()),
            steps: self.steps.iter().filter(|step| step.changed_at > after).collect(),
            agents: self
                .order
                .iter()
                .filter_map(|id| self.lanes.get(id))
                .filter(|lane| lane.changed_at > after)
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TRACE: &str = r#"{"v":1,"seq":1,"ts":"2026-11-22T10:00:00Z","type":"WorkflowStarted","run_id":"r"}
{"v":1,"seq":2,"ts":"2026-11-22T10:00:00.100Z","type":"StateStarted","agent_id":"main","state":"START.sh","state_type":"script","step":1,"attempt":1}
{"v":1,"seq":3,"ts":"2026-11-22T10:00:00.300Z","type":"StateCompleted","agent_id":"main","state":"START.sh","step":1,"cost_usd":0.0}
{"v":1,"seq":4,"ts":"2026-11-22T10:00:00.300Z","type":"AgentSpawned","parent_agent_id":"main","new_agent_id":"main_w1","initial_state":"W.md"}
{"v":1,"seq":5,"ts":"2026-11-22T10:00:00.300Z","type":"TransitionOccurred","agent_id":"main","from_state":"START.sh","to_state":"DONE.sh","transition_type":"goto","metadata":{},"commit":1}
{"v":1,"seq":6,"ts":"2026-11-22T10:00:00.400Z","type":"StateStarted","agent_id":"main_w1","state":"W.md","state_type":"markdown","step":1,"attempt":1}
{"v":1,"seq":7,"ts":"2026-11-22T10:00:01.400Z","type":"ErrorOccurred","agent_id":"main_w1"}
{"v":1,"seq":8,"ts":"2026-11-22T10:00:02.400Z","type":"StateStarted","agent_id":"main_w1","state":"W.md","state_type":"markdown","step":1,"attempt":2}
{"v":1,"seq":9,"ts":"2026-11-22T10:00:03.400Z","type":"StateCompleted","agent_id":"main_w1","state":"W.md","step":1,"cost_usd":0.25}
{"v":1,"seq":10,"ts":"2026-11-22T10:00:03.400Z","type":"TransitionOccurred","agent_id":"main_w1","from_state":"W.md","to_state":null,"transition_type":"result","metadata":{},"commit":2}
{"v":1,"seq":11,"ts":"2026-11-22T10:00:03.400Z","type":"AgentTerminated","agent_id":"main_w1","result":"done"}
{"v":1,"seq":12,"ts":"2026-11-22T10:00:03.5"#;

    #[test]
    fn a_prompt_step_says_its_backend_and_model_and_an_older_trace_reads_as_claude() {
        let mut timeline = Timeline::default();
        timeline.add(
            r#"{"v":1,"seq":1,"ts":"2026-11-22T10:00:00Z","type":"StateStarted","agent_id":"main","state":"R.md","state_type":"markdown","step":1,"attempt":1}
{"v":1,"seq":2,"ts":"2026-11-22T10:00:00Z","type":"ClaudeInvocationStarted","agent_id":"main","state":"R.md","backend":"codex","model":"gpt-5","is_reminder":false}
{"v":1,"seq":3,"ts":"2026-11-22T10:00:00Z","type":"ClaudeInvocationStarted","agent_id":"main","state":"R.md","backend":"codex","model":"other","is_reminder":true}
{"v":1,"seq":4,"ts":"2026-11-22T10:00:01Z","type":"StateStarted","agent_id":"main","state":"P.md","state_type":"markdown","step":2,"attempt":1}
{"v":1,"seq":5,"ts":"2026-11-22T10:00:01Z","type":"ClaudeInvocationStarted","agent_id":"main","state":"P.md","is_reminder":false}
{"v":1,"seq":6,"ts":"2026-11-22T10:00:02Z","type":"StateStarted","agent_id":"main","state":"S.sh","state_type":"script","step":3,"attempt":1}
"#,
        );
        let view = timeline.view(0);
        let on: Vec<_> = view.steps.iter().map(|step| (step.backend.as_deref(), step.model.as_deref())).collect();
        assert_eq!(on, [(Some("codex"), Some("gpt-5")), (Some("claude"), Some("")), (None, None)]);
        let json = serde_json::to_value(view.steps[2]).expect("JSON");
        assert!(json.get("backend").is_none(), "a script has no backend: {json}");
    }

    #[test]
    fn a_distributed_step_names_its_worker_and_a_local_one_none() {
        let mut timeline = Timeline::default();
        timeline.add(
            r#"{"v":1,"seq":1,"ts":"2026-11-22T10:00:00Z","type":"StateStarted","agent_id":"main","state":"S.sh","state_type":"script","step":1,"attempt":1}
{"v":1,"seq":2,"ts":"2026-11-22T10:00:01Z","type":"StepRanOn","agent_id":"main","state":"S.sh","step":1,"worker":"w2"}
{"v":1,"seq":3,"ts":"2026-11-22T10:00:02Z","type":"StateStarted","agent_id":"main","state":"T.sh","state_type":"script","step":2,"attempt":1}
"#,
        );
        let view = timeline.view(0);
        let workers: Vec<_> = view.steps.iter().map(|step| step.worker.as_deref()).collect();
        assert_eq!(workers, [Some("w2"), None]);
        let json = serde_json::to_value(view.steps[1]).expect("JSON");
        assert!(json.get("worker").is_none(), "a local step has no worker: {json}");
    }

    #[test]
    fn steps_lanes_retries_and_costs_come_from_the_trace() {
        let mut timeline = Timeline::default();
        timeline.add(TRACE);
        let view = timeline.view(0);
        assert_eq!(view.trace_seq, 11);
        assert_eq!(view.steps.len(), 2);
        let start = view.steps[0];
        assert_eq!((start.agent.as_str(), start.start_ms, start.duration_ms), ("main", 100, Some(200)));
        assert_eq!(
            (start.tag.as_deref(), start.target.as_deref(), start.status),
            (Some("goto"), Some("DONE.sh"), "done")
        );
        let worker = view.steps[1];
        assert_eq!((worker.attempts, worker.status, worker.cost_usd), (2, "done", 0.25));
        assert_eq!(worker.duration_ms, Some(3000));
        let lanes: Vec<(&str, Option<&str>)> =
            view.agents.iter().map(|lane| (lane.id.as_str(), lane.parent.as_deref())).collect();
        assert_eq!(lanes, [("main", None), ("main_w1", Some("main"))]);
        assert_eq!(view.agents[1].result.as_deref(), Some("done"));
        let visits: Vec<(String, u64)> = timeline.visits().into_iter().collect();
        assert_eq!(visits, [("START.sh".to_string(), 1), ("W.md".to_string(), 1)]);
    }

    #[test]
    fn after_gives_only_what_changed() {
        let mut timeline = Timeline::default();
        timeline.add(TRACE);
        let view = timeline.view(8);
        assert_eq!(view.steps.len(), 1);
        assert_eq!(view.steps[0].agent, "main_w1");
        assert_eq!(view.agents.len(), 1);
    }
}
