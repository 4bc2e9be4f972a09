//! What a coordinator sends a worker for one step, and what comes back
//! (`docs/distributed.md`). Both sides are the same program at the same version:
//! a worker refuses a request from another Baton or another step protocol with
//! both named, so nothing half-understood ever runs.
//!
//! The reply is journaled by Restate (one `ctx.run` per step), whose message limit
//! is 32 MiB: its events are bounded here ([`bound_events`]): no text field beyond
//! [`MAX_FIELD_BYTES`], the whole reply within [`MAX_REPLY_BYTES`].

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::events::Event;
use crate::executor::context::StateTimeout;
use crate::executor::step_failure::StepFailure;
use crate::executor::{ExecutionResult, StepInput};
use crate::ids::{BackendName, RunId, SessionId};

/// Changes whenever [`StepRequest`] or [`StepReply`] change shape.
pub(crate) const STEP_PROTOCOL: u32 = 1;

/// The Restate service the workers serve, and its one handler.
pub(crate) const SERVICE: &str = "BatonStep";
pub(crate) const HANDLER: &str = "run";

/// No single text field of an event in a reply is longer (the full text stays
/// in the worker's own files; the coordinator's trace gets the start and a note).
pub(crate) const MAX_FIELD_BYTES: usize = 1024 * 1024;
/// A reply's events never add up to more (Restate's limit is 32 MiB).
pub(crate) const MAX_REPLY_BYTES: usize = 8 * 1024 * 1024;

/// A step's result (its transition, with the tag's payload) is never larger: with
/// the events and shipped files it must stay under Restate's 32 MiB, or the server
/// would retry the invocation for ever.
pub(crate) const MAX_OUTCOME_BYTES: usize = 4 * 1024 * 1024;

/// `outcome`, unless it is larger than [`MAX_OUTCOME_BYTES`]: then a failure that
/// pauses the agent at `state`, saying how large it was and what to do instead. What
/// the step cost is kept.
pub(crate) fn bound_outcome(
    outcome: Result<ExecutionResult, StepFailure>,
    state: &str,
) -> Result<ExecutionResult, StepFailure> {
    let size = serde_json::to_vec(&outcome).map_or(0, |bytes| bytes.len());
    if size <= MAX_OUTCOME_BYTES {
        return outcome;
    }
    let cost = match &outcome {
        Ok(result) => result.cost_usd,
        Err(failure) => failure.cost_usd,
    };
    let message = format!(
        "state `{state}`: the step's result is {:.1} MiB, more than the {} MiB a step run on a worker may send back \
         through Restate; write large results to a file (the task folder travels with the step) and pass its path",
        size as f64 / (1024.0 * 1024.0),
        MAX_OUTCOME_BYTES / (1024 * 1024)
    );
    Err(StepFailure::pause(
        crate::model::agent::PauseReason::WorkerRefused,
        crate::events::error_kind::ErrorKind::WorkerRefused,
        message,
    )
    .with_cost(cost))
}

/// This Baton's version.
pub(crate) fn baton_version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// Which Baton sent a request or runs a worker.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Versions {
    pub(crate) baton: String,
    pub(crate) protocol: u32,
}

impl Versions {
    pub(crate) fn own() -> Versions {
        Versions { baton: baton_version().to_string(), protocol: STEP_PROTOCOL }
    }
}

/// How the worker sees the step's files.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub(crate) enum Files {
    /// The worker sees the coordinator's paths (the same machine, or a shared
    /// filesystem mounted at the same place): scope, working directory, run
    /// directory and the backends' session files under `HOME`.
    Shared,
    /// The step's files travel with it (`--files shipped`,
    /// `docs/distributed-files.md`): the workflows, a snapshot of the working
    /// directory on a git branch, the task folder and the sessions.
    Shipped(Box<crate::distributed::carry::shipped::ShippedFiles>),
}

/// One step, as a worker runs it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct StepRequest {
    pub(crate) versions: Versions,
    pub(crate) run_id: RunId,
    /// `.baton/runs/<id>` on the coordinator.
    pub(crate) run_dir: PathBuf,
    pub(crate) baton_dir: PathBuf,
    pub(crate) agent: crate::model::agent::Agent,
    pub(crate) step: u64,
    pub(crate) attempt: u32,
    pub(crate) total_cost_at_launch: f64,
    pub(crate) settings: StepSettings,
    pub(crate) files: Files,
}

impl StepRequest {
    pub(crate) fn input(&self) -> StepInput {
        StepInput {
            agent: self.agent.clone(),
            step: self.step,
            attempt: self.attempt,
            total_cost_at_launch: self.total_cost_at_launch,
        }
    }

    /// Restate's idempotency key: one invocation per attempt of a step (a failed
    /// attempt's retry must not get the cached failure).
    pub(crate) fn idempotency_key(&self) -> String {
        format!("{}/{}/{}/{}", self.run_id, self.agent.id, self.step, self.attempt)
    }
}

/// The run's settings a step runs under (`ExecutionContext`'s, minus what is
/// the worker's own: its bus, stop channel and watchdog).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct StepSettings {
    pub(crate) environment: BTreeMap<String, String>,
    pub(crate) timeout: StateTimeout,
    pub(crate) budget_usd: f64,
    pub(crate) default_backend: BackendName,
    pub(crate) default_model: Option<String>,
    pub(crate) default_effort: Option<String>,
    pub(crate) borrowed_sessions: BTreeSet<SessionId>,
    /// `--dangerously-skip-permissions` (or not) for the backends' CLIs.
    pub(crate) skip_permissions: bool,
}

/// An event as it travels: `ScriptOutput`'s variables are not serialised into the
/// trace (they go to the step's `.meta.json`), so they ride beside it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct WireEvent {
    pub(crate) event: Event,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) env_vars: BTreeMap<String, String>,
}

impl WireEvent {
    pub(crate) fn of(event: Event) -> WireEvent {
        let env_vars = match &event {
            Event::ScriptOutput { env_vars, .. } => env_vars.clone(),
            _ => BTreeMap::new(),
        };
        WireEvent { event, env_vars }
    }

    pub(crate) fn into_event(self) -> Event {
        let WireEvent { mut event, env_vars: vars } = self;
        if let Event::ScriptOutput { env_vars, .. } = &mut event {
            *env_vars = vars;
        }
        event
    }
}

/// What a step came to on the worker.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct StepReply {
    /// `--name` of the worker that ran it.
    pub(crate) worker: String,
    pub(crate) outcome: Result<ExecutionResult, StepFailure>,
    /// What the step emitted, in order, bounded ([`bound_events`]).
    pub(crate) events: Vec<WireEvent>,
    /// With `--files shipped`: what the step changed, to bring back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) shipped: Option<Box<crate::distributed::carry::shipped::ShippedBack>>,
}

/// `text` cut to at most `limit` bytes on a character boundary, with a note
/// saying how much was left out.
fn cut(text: &mut String, limit: usize) {
    if text.len() <= limit {
        return;
    }
    let mut end = limit;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let left_out = text.len() - end;
    text.truncate(end);
    text.push_str(&format!(
        "\n[baton: {left_out} more bytes were left out on the worker: a distributed step's reply is bounded]\n"
    ));
}

/// Cut each event's long text fields, then drop bulky events once the reply
/// would pass [`MAX_REPLY_BYTES`], saying how many were dropped.
pub(crate) fn bound_events(events: Vec<Event>, agent: &crate::ids::AgentId) -> Vec<WireEvent> {
    let mut kept = Vec::with_capacity(events.len());
    let mut total = 0usize;
    let mut dropped = 0usize;
    for mut event in events {
        match &mut event {
            Event::ScriptOutput { stdout, stderr, .. } => {
                cut(stdout, MAX_FIELD_BYTES);
                cut(stderr, MAX_FIELD_BYTES);
            }
            Event::PrintOutput { content: text, .. }
            | Event::PromptRendered { prompt: text, .. }
            | Event::ProgressMessage { message: text, .. }
            | Event::ErrorOccurred { message: text, .. }
            | Event::ToolInvocation { detail: text, .. } => cut(text, MAX_FIELD_BYTES),
            Event::ClaudeStreamOutput { json, .. } => {
                let size = serde_json::to_string(json).map_or(0, |text| text.len());
                if size > MAX_FIELD_BYTES {
                    *json = serde_json::json!({
                        "type": "baton_cut",
                        "note": format!("a {size}-byte stream line was left out on the worker: a distributed step's reply is bounded"),
                    });
                }
            }
            _ => {}
        }
        let wire = WireEvent::of(event);
        let size = serde_json::to_string(&wire).map_or(0, |text| text.len());
        let bulky = matches!(
            wire.event,
            Event::ScriptOutput { .. }
                | Event::PrintOutput { .. }
                | Event::PromptRendered { .. }
                | Event::ClaudeStreamOutput { .. }
                | Event::ToolInvocation { .. }
        );
        if bulky && total + size > MAX_REPLY_BYTES - MAX_FIELD_BYTES {
            dropped += 1;
            continue;
        }
        total += size;
        kept.push(wire);
    }
    if dropped > 0 {
        kept.push(WireEvent::of(Event::ProgressMessage {
            agent_id: agent.clone(),
            message: format!(
                "the worker left {dropped} output events out of this step's reply to keep it under {} MiB",
                MAX_REPLY_BYTES / (1024 * 1024)
            ),
        }));
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{AgentId, StateName};

    #[test]
    fn a_long_output_is_cut_and_the_reply_stays_bounded() {
        let agent = AgentId::from("main");
        let big = "x".repeat(3 * MAX_FIELD_BYTES);
        let events: Vec<Event> = (0..20)
            .map(|step| Event::ScriptOutput {
                agent_id: agent.clone(),
                state: StateName::from("a.sh"),
                step,
                stdout: big.clone(),
                stderr: String::new(),
                exit_code: Some(0),
                execution_time_ms: 1,
                env_vars: BTreeMap::new(),
            })
            .collect();
        let wire = bound_events(events, &agent);
        let total: usize = wire.iter().map(|event| serde_json::to_string(event).unwrap().len()).sum();
        assert!(total <= MAX_REPLY_BYTES, "{total}");
        let Event::ScriptOutput { stdout, .. } = &wire[0].event else { panic!("{:?}", wire[0]) };
        assert!(stdout.len() < MAX_FIELD_BYTES + 200);
        assert!(stdout.ends_with("a distributed step's reply is bounded]\n"), "{}", &stdout[stdout.len() - 200..]);
        let Event::ProgressMessage { message, .. } = &wire.last().unwrap().event else { panic!() };
        assert!(message.contains("output events out of this step's reply"), "{message}");
    }

    #[test]
    fn script_variables_travel_beside_the_event() {
        let event = Event::ScriptOutput {
            agent_id: AgentId::from("main"),
            state: StateName::from("a.sh"),
            step: 1,
            stdout: String::new(),
            stderr: String::new(),
            exit_code: Some(0),
            execution_time_ms: 1,
            env_vars: BTreeMap::from([("BATON_AGENT_ID".to_string(), "main".to_string())]),
        };
        let text = serde_json::to_string(&WireEvent::of(event.clone())).unwrap();
        let back: WireEvent = serde_json::from_str(&text).unwrap();
        assert_eq!(back.into_event(), event);
    }
}
