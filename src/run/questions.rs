//! `--on-ask prompt`: asks answered at the terminal while the rest of the run goes
//! on (issue 10, "answer in place"). One question is shown at a time, the earliest
//! first; every line typed answers the question shown. A question with a `timeout`
//! counts down on the console and, when time runs out, goes to its `timeout_next`
//! (`transition::ask_timeout`). The loop does not end while a question waits, unless
//! it is stopped (a signal), which saves the asks for `baton resume`.

use std::collections::VecDeque;
use std::io::BufRead;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::events::Event;
use crate::ids::AgentId;
use crate::model::agent::AgentStatus;
use crate::run::step_outcome::paused_event;
use crate::run::workflow_loop::{Stop, WorkflowLoop};
use crate::transition::ask_timeout::{remaining, time_out};

/// The questions of a run answered at the terminal.
#[derive(Default)]
pub(super) struct Questions {
    /// Agents whose ask waits, the one shown first.
    waiting: VecDeque<AgentId>,
    /// Lines typed at the terminal, from a reader thread started at the first ask.
    lines: Option<mpsc::UnboundedReceiver<String>>,
    /// The agent whose question is shown (its clock started).
    shown: Option<AgentId>,
    /// When the shown question times out, and when its countdown shows next.
    deadline: Option<Instant>,
    reminder: Option<Instant>,
}

impl Questions {
    /// A question waits for an answer.
    pub(super) fn pending(&self) -> bool {
        !self.waiting.is_empty()
    }

    /// The next line typed; never, while no question was ever shown.
    pub(super) async fn next_line(&mut self) -> Option<String> {
        match self.lines.as_mut() {
            Some(lines) => lines.recv().await,
            None => std::future::pending().await,
        }
    }

    /// When the shown question times out, and when its countdown shows next (far in
    /// the future when there is none).
    pub(super) fn clocks(&self, far: Instant) -> (Instant, Instant) {
        (self.deadline.unwrap_or(far), self.reminder.unwrap_or(far))
    }

    fn read_the_terminal(&mut self) {
        if self.lines.is_some() {
            return;
        }
        let (sender, receiver) = mpsc::unbounded_channel();
        let reader = std::thread::Builder::new().name("baton-answers".into()).spawn(move || {
            for line in std::io::stdin().lock().lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        if let Err(error) = reader {
            tracing::warn!(%error, "cannot read answers from the terminal");
        }
        self.lines = Some(receiver);
    }
}

impl WorkflowLoop {
    /// `agent_id` asked under `--on-ask prompt` at a terminal: queue its question.
    pub(super) fn ask_at_terminal(&mut self, agent_id: AgentId) {
        self.questions.read_the_terminal();
        self.questions.waiting.push_back(agent_id);
    }

    /// The asks a resumed run still waits on, shown again, the earliest first.
    pub(super) fn ask_again_at_terminal(&mut self) {
        let asking: Vec<(AgentId, crate::model::agent::PendingAsk)> = self
            .state
            .asking_agents()
            .into_iter()
            .filter_map(|agent| agent.ask.clone().map(|ask| (agent.id.clone(), ask)))
            .collect();
        for (agent_id, ask) in asking {
            self.context.bus.emit(Event::AgentAsking {
                agent_id: agent_id.clone(),
                ask_id: ask.id,
                prompt: ask.prompt,
                next_state: ask.next,
            });
            self.ask_at_terminal(agent_id);
        }
    }

    /// Start the clock of the first waiting question once it is shown (its
    /// `AgentAsking` event was published with the step that asked).
    pub(super) fn show_question(&mut self) {
        if self.questions.shown.is_some() && self.questions.shown.as_ref() == self.questions.waiting.front() {
            return;
        }
        self.questions.shown = self.questions.waiting.front().cloned();
        self.questions.deadline = None;
        self.questions.reminder = None;
        let Some(agent_id) = self.questions.waiting.front() else { return };
        let Some(left) = self
            .agent(agent_id)
            .and_then(|agent| agent.ask.as_ref())
            .and_then(|ask| remaining(ask, jiff::Timestamp::now()))
        else {
            return;
        };
        let now = Instant::now();
        self.questions.deadline = Some(now + left);
        self.questions.reminder = Some(now + countdown_step(left));
    }

    /// A line was typed: it answers the question shown (R3.26).
    pub(super) fn answered(&mut self, line: String) {
        let Some(agent_id) = self.questions.waiting.pop_front() else { return };
        if let Some(index) = self.position(&agent_id)
            && self.state.agents[index].status == AgentStatus::Asking
        {
            let agent = &mut self.state.agents[index];
            agent.answer(line);
            self.changes.touch(agent);
            self.ready.push_back(agent_id);
            self.dirty = true;
        }
    }

    /// The shown question's time ran out (A11).
    pub(super) fn question_timed_out(&mut self) {
        let Some(agent_id) = self.questions.waiting.pop_front() else { return };
        if let Some(index) = self.position(&agent_id) {
            let agent = &mut self.state.agents[index];
            time_out(agent);
            self.changes.touch(agent);
            if agent.is_active() {
                self.ready.push_back(agent_id);
            } else {
                self.outbox.extend(paused_event(agent));
            }
            self.dirty = true;
        }
    }

    /// The terminal closed (end of input): the questions wait for `baton resume`
    /// instead, as under `--on-ask pause`.
    pub(super) fn terminal_closed(&mut self) {
        self.questions.waiting.clear();
        self.questions.shown = None;
        if self.stop.is_none() {
            self.stop = Some(Stop::Ask);
        }
    }

    /// Show how long the question has left, and when to show it again.
    pub(super) fn count_down(&mut self) {
        let Some(agent_id) = self.questions.waiting.front().cloned() else { return };
        let left = self.questions.deadline.map(|deadline| deadline.saturating_duration_since(Instant::now()));
        if let Some(left) = left {
            self.context.bus.emit(Event::AskWaiting { agent_id, seconds_left: left.as_secs() });
            self.questions.reminder = Some(Instant::now() + countdown_step(left));
        }
    }

    fn agent(&self, id: &AgentId) -> Option<&crate::model::agent::Agent> {
        self.position(id).map(|index| &self.state.agents[index])
    }
}

/// How often a countdown shows: a fifth of what is left, from 1 s to 5 minutes.
fn countdown_step(left: Duration) -> Duration {
    (left / 5).clamp(Duration::from_secs(1), Duration::from_secs(300))
}
