//! What stands in for the model and for scripts in a test: the [`ScriptedBackend`]
//! (a [`Backend`] that answers from the test's `replies`) and [`Stubs`]'s
//! implementation of the script executor's seam.
//!
//! Both answer by **(agent, state, count)**: every agent has its own cursor per
//! state, so the n-th model turn agent `main` takes at `REVIEW.md` (reminders
//! included) gets the n-th reply listed for `REVIEW`, however concurrent forks
//! interleave. A turn or a visit with nothing scripted for it fails its step
//! (fatal, never the network) and is remembered as a [`Miss`], which fails the
//! test whatever it expected.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::watch;

use crate::backend::{
    Backend, BackendError, BackendEvent, BackendFuture, BackendRequest, BackendResponse, SessionMode,
};
use crate::executor::script::ScriptStubs;
use crate::ids::{AgentId, SessionId, StateName};
use crate::model::agent::Agent;
use crate::process::script::ScriptRun;
use crate::process::stop_level::StopLevel;
use crate::process::watchdog::Watchdog;
use crate::testing::spec::{Reply, Stubs, TestSpec};
use crate::text::count::count;

/// A turn or a script visit the test gave nothing for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Miss {
    pub(crate) message: String,
}

/// Counts per (agent, state), and what was missing.
#[derive(Default)]
struct Counters {
    counts: HashMap<(AgentId, StateName), u64>,
    misses: Vec<Miss>,
}

impl Counters {
    /// Add one to `agent`'s count at `state`; the new count.
    fn next(&mut self, agent: &AgentId, state: &StateName) -> u64 {
        let count = self.counts.entry((agent.clone(), state.clone())).or_insert(0);
        *count += 1;
        *count
    }
}

fn lock(counters: &Mutex<Counters>) -> std::sync::MutexGuard<'_, Counters> {
    counters.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The model of a test: replies from its `replies` and `agent_replies`.
pub(crate) struct ScriptedBackend {
    spec: Arc<TestSpec>,
    /// Turns per (agent, state), and visits (first turns) per (agent, state).
    turns: Mutex<Counters>,
    visits: Mutex<Counters>,
}

impl ScriptedBackend {
    pub(crate) fn new(spec: Arc<TestSpec>) -> ScriptedBackend {
        ScriptedBackend { spec, turns: Mutex::default(), visits: Mutex::default() }
    }

    /// The turns that had no reply, in the order they were asked for.
    pub(crate) fn misses(&self) -> Vec<Miss> {
        lock(&self.turns).misses.clone()
    }

    fn replies_for(&self, agent: &AgentId, state: &StateName) -> Option<&[Reply]> {
        self.spec
            .agent_replies
            .get(&(agent.to_string(), state.clone()))
            .or_else(|| self.spec.replies.get(state))
            .map(Vec::as_slice)
    }

    fn answer(&self, request: &BackendRequest) -> Result<(Reply, u64), BackendError> {
        let (agent, state) = (&request.agent_id, &request.state);
        let visit = {
            let mut visits = lock(&self.visits);
            if request.reminder == 0 {
                visits.next(agent, state)
            } else {
                visits.counts.get(&(agent.clone(), state.clone())).copied().unwrap_or(1)
            }
        };
        let mut turns = lock(&self.turns);
        let turn = turns.next(agent, state);
        let replies = self.replies_for(agent, state);
        if let Some(reply) = replies.and_then(|replies| replies.get(turn as usize - 1)) {
            if let Some(written_for) = reply.backend.filter(|backend| *backend != request.backend) {
                let message = format!(
                    "the scripted reply for {state}, turn {turn} of agent {agent} is for the {written_for} backend, \
                     but {state} runs on {}",
                    request.backend
                );
                turns.misses.push(Miss { message: message.clone() });
                return Err(BackendError::Fatal(message));
            }
            return Ok((reply.clone(), turn));
        }
        let which = if request.reminder == 0 {
            format!("visit {visit}")
        } else {
            format!("visit {visit}, reminder {}", request.reminder)
        };
        let given = count(replies.map_or(0, <[Reply]>::len), "reply", "replies");
        let message = format!(
            "no scripted reply for {state}, {which} of agent {agent} (turn {turn} there; the test gives {given})"
        );
        turns.misses.push(Miss { message: message.clone() });
        Err(BackendError::Fatal(message))
    }
}

impl Backend for ScriptedBackend {
    fn invoke<'a>(
        &'a self,
        request: BackendRequest,
        _stop: watch::Receiver<StopLevel>,
        _watchdog: Option<&'a Arc<Watchdog>>,
        on_event: &'a mut (dyn FnMut(BackendEvent) + Send),
    ) -> BackendFuture<'a> {
        Box::pin(async move {
            let (reply, turn) = self.answer(&request)?;
            on_event(BackendEvent::AssistantText(reply.text.clone()));
            // A resumed session keeps its id; any other turn opens a new one, named
            // so that the same test always produces the same ids.
            let session_id = match &request.session {
                SessionMode::Resume(id) => id.clone(),
                _ => SessionId::from(format!("scripted-{}-{}-{turn}", request.agent_id, request.state)),
            };
            Ok(BackendResponse {
                text: reply.text,
                session_id: Some(session_id),
                cost_usd: reply.cost_usd,
                input_tokens: reply.input_tokens,
                output_tokens: reply.output_tokens,
                message_uuid: None,
                structured_output: None,
            })
        })
    }
}

/// The test's `scripts`: stubbed states run no process.
pub(crate) struct ScriptedStubs {
    spec: Arc<TestSpec>,
    visits: Mutex<Counters>,
}

impl ScriptedStubs {
    pub(crate) fn new(spec: Arc<TestSpec>) -> ScriptedStubs {
        ScriptedStubs { spec, visits: Mutex::default() }
    }

    /// The visits that had no stub left.
    pub(crate) fn misses(&self) -> Vec<Miss> {
        lock(&self.visits).misses.clone()
    }
}

impl ScriptStubs for ScriptedStubs {
    fn stub(&self, agent: &Agent) -> Option<Result<ScriptRun, String>> {
        let own = self.spec.agent_scripts.get(&(agent.id.to_string(), agent.current_state.clone()));
        let stubs = own.or_else(|| self.spec.scripts.get(&agent.current_state))?;
        let mut visits = lock(&self.visits);
        let visit = visits.next(&agent.id, &agent.current_state);
        let stub = match stubs {
            Stubs::Every(stub) => Some(stub),
            Stubs::PerVisit(list) => list.get(visit as usize - 1),
        };
        let Some(stub) = stub else {
            let given = if let Stubs::PerVisit(list) = stubs { list.len() } else { 0 };
            let message = format!(
                "no script stub for {}, visit {visit} of agent {} (the test gives {})",
                agent.current_state,
                agent.id,
                count(given, "stub", "stubs")
            );
            visits.misses.push(Miss { message: message.clone() });
            return Some(Err(message));
        };
        Some(Ok(ScriptRun {
            stdout: stub.stdout.clone(),
            stderr: stub.stderr.clone(),
            exit_code: Some(stub.exit_code),
            signal: None,
        }))
    }
}
