//! Asks answered while the rest of the run goes on (issue 10, "answer in place"),
//! instead of stopping the run (`--on-ask pause`) or being refused (`reject`).
//! Answers come from one source (`AnswerSource`), read on a thread of its own and
//! handled in one place in the loop's `select!`:
//!
//! - `--on-ask prompt`, a person at a terminal: one question is shown at a time, the
//!   earliest first, and every line typed answers the question shown. The terminal is
//!   read from the first ask on, so nothing typed before it is taken for an answer. The
//!   question shown counts down on the console when it has a `timeout`, and goes to its
//!   `timeout_next` when time runs out (`transition::ask_timeout`, A11).
//! - `--on-ask json`, a supervisor such as `baton serve` that drives the run as its
//!   child: JSON control lines (`run::control`) answer any waiting ask by its id, in any
//!   order, or cancel an agent (`run::cancel`). stdin is read from the start, since a
//!   cancel may come before any ask. Nobody watches a countdown, and any waiting ask may
//!   be answered next, so every waiting ask's `timeout` runs: the loop sleeps until the
//!   earliest deadline, times that ask out, and so on. Nothing about asks is shown
//!   beyond their events: the supervisor reads the trace.
//!
//! The loop does not end while an ask waits, unless it is stopped (a signal, a bound),
//! which saves the asks for `baton resume`. Once the input ends the asks that wait stop
//! the run as under `pause`, and so does any asked later: a closed terminal or a
//! supervisor that died never leaves a run waiting for nobody.

use std::collections::VecDeque;
use std::io::BufRead;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::events::Event;
use crate::ids::AgentId;
use crate::model::agent::{AgentStatus, PendingAsk};
use crate::run::outcome::AnswerSource;
use crate::run::step_outcome::paused_event;
use crate::run::workflow_loop::{Stop, WorkflowLoop};
use crate::transition::ask_timeout::{remaining, time_out};

/// An ask waiting for its answer.
struct Waiting {
    agent_id: AgentId,
    ask_id: String,
    /// When it times out, on tokio's clock (from its `asked_at` and `timeout`).
    deadline: Option<Instant>,
}

/// The asks of a run answered while it goes on, and where their answers come from.
pub(super) struct Questions {
    /// `None`: nobody answers while the run goes on (`pause`, `reject`, or `prompt`
    /// without a terminal).
    source: Option<AnswerSource>,
    /// The asks that wait, in the order they were asked.
    waiting: VecDeque<Waiting>,
    /// The lines of the source, from a reader thread once it is started.
    lines: Option<mpsc::UnboundedReceiver<Vec<u8>>>,
    /// The source's input ended: nothing more will be answered.
    ended: bool,
    /// At a terminal: the agent whose question is shown, and when its countdown shows next.
    shown: Option<AgentId>,
    reminder: Option<Instant>,
}

impl Questions {
    pub(super) fn new(source: Option<AnswerSource>) -> Questions {
        Questions { source, waiting: VecDeque::new(), lines: None, ended: false, shown: None, reminder: None }
    }

    /// An ask waits for an answer.
    pub(super) fn pending(&self) -> bool {
        !self.waiting.is_empty()
    }

    /// Asks can be answered while the run goes on: there is a source and its input
    /// has not ended.
    pub(super) fn live(&self) -> bool {
        self.source.is_some() && !self.ended
    }

    /// A supervisor's control lines are heard, and their input has not ended.
    pub(super) fn supervised(&self) -> bool {
        self.source == Some(AnswerSource::ControlLines) && !self.ended
    }

    /// Whether the loop waits for the source's next line now: a terminal is heard
    /// while a question waits, a supervisor all along.
    pub(super) fn listening(&self) -> bool {
        self.lines.is_some()
            && !self.ended
            && match self.source {
                Some(AnswerSource::Terminal) => self.pending(),
                Some(AnswerSource::ControlLines) => true,
                None => false,
            }
    }

    /// The loop starts: a supervisor is heard from now on, since a cancel may come
    /// before any ask (a terminal is read from the first ask on).
    pub(super) fn start(&mut self) {
        if self.source == Some(AnswerSource::ControlLines) {
            self.listen();
        }
    }

    /// The source's next line; `None` once its input ended.
    pub(super) async fn next_line(&mut self) -> Option<Vec<u8>> {
        match self.lines.as_mut() {
            Some(lines) => lines.recv().await,
            None => std::future::pending().await,
        }
    }

    /// When the next ask times out, and when the countdown shows next (far in the
    /// future when there is none). At a terminal only the question shown is timed.
    pub(super) fn clocks(&self, far: Instant) -> (Instant, Instant) {
        let deadline = self.due().map(|index| self.waiting[index].deadline);
        (deadline.flatten().unwrap_or(far), self.reminder.unwrap_or(far))
    }

    /// Where, in `waiting`, the ask that times out next is: the question shown at a
    /// terminal, else the earliest deadline of all.
    fn due(&self) -> Option<usize> {
        match self.source {
            Some(AnswerSource::ControlLines) => self
                .waiting
                .iter()
                .enumerate()
                .filter_map(|(index, waiting)| Some((waiting.deadline?, index)))
                .min()
                .map(|(_, index)| index),
            _ => (!self.waiting.is_empty()).then_some(0),
        }
    }

    /// `agent_id`'s `ask` waits for an answer from the source.
    pub(super) fn wait_for(&mut self, agent_id: AgentId, ask: &PendingAsk) {
        self.listen();
        let deadline = remaining(ask, jiff::Timestamp::now()).map(|left| Instant::now() + left);
        self.waiting.push_back(Waiting { agent_id, ask_id: ask.id.clone(), deadline });
    }

    /// The ask that timed out (`clocks`), no longer waiting.
    fn take_due(&mut self) -> Option<AgentId> {
        let index = self.due()?;
        self.waiting.remove(index).map(|waiting| waiting.agent_id)
    }

    /// The agent whose ask `ask_id` waits, no longer waiting; `None` when no
    /// waiting ask has that id.
    pub(super) fn take_ask(&mut self, ask_id: &str) -> Option<AgentId> {
        let index = self.waiting.iter().position(|waiting| waiting.ask_id == ask_id)?;
        self.waiting.remove(index).map(|waiting| waiting.agent_id)
    }

    /// `agent_id`'s ask no longer waits (its agent was cancelled).
    pub(super) fn forget(&mut self, agent_id: &AgentId) {
        self.waiting.retain(|waiting| &waiting.agent_id != agent_id);
    }

    /// Start reading the source's lines (once).
    fn listen(&mut self) {
        if self.lines.is_some() || self.source.is_none() {
            return;
        }
        let (sender, receiver) = mpsc::unbounded_channel();
        let reader = std::thread::Builder::new().name("baton-answers".into()).spawn(move || read_lines(&sender));
        if let Err(error) = reader {
            tracing::warn!(%error, "cannot read answers from stdin");
        }
        self.lines = Some(receiver);
    }
}

/// Send stdin's lines (without their line ending) until it ends or nobody listens.
/// Bytes, not text: what a line must be is the source's to say.
fn read_lines(sender: &mpsc::UnboundedSender<Vec<u8>>) {
    let mut stdin = std::io::stdin().lock();
    loop {
        let mut line = Vec::new();
        match stdin.read_until(b'\n', &mut line) {
            Ok(0) => break,
            Ok(_) => {
                if line.last() == Some(&b'\n') {
                    line.pop();
                    if line.last() == Some(&b'\r') {
                        line.pop();
                    }
                }
                if sender.send(line).is_err() {
                    break;
                }
            }
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
}

impl WorkflowLoop {
    /// The asks a resumed run still waits on, asked again, the earliest first.
    pub(super) fn ask_again(&mut self) {
        let asking: Vec<(AgentId, PendingAsk)> = self
            .state
            .asking_agents()
            .into_iter()
            .filter_map(|agent| agent.ask.clone().map(|ask| (agent.id.clone(), ask)))
            .collect();
        for (agent_id, ask) in asking {
            self.context.bus.emit(Event::AgentAsking {
                agent_id: agent_id.clone(),
                ask_id: ask.id.clone(),
                prompt: ask.prompt.clone(),
                next_state: ask.next.clone(),
            });
            self.questions.wait_for(agent_id, &ask);
        }
    }

    /// At a terminal, start the countdown of the first waiting question once it is
    /// shown (its `AgentAsking` event was published with the step that asked).
    pub(super) fn show_question(&mut self) {
        let questions = &mut self.questions;
        if questions.source != Some(AnswerSource::Terminal) {
            return;
        }
        let front = questions.waiting.front();
        if questions.shown.is_some() && questions.shown.as_ref() == front.map(|waiting| &waiting.agent_id) {
            return;
        }
        questions.shown = front.map(|waiting| waiting.agent_id.clone());
        let now = Instant::now();
        questions.reminder = front
            .and_then(|waiting| waiting.deadline)
            .map(|deadline| now + countdown_step(deadline.saturating_duration_since(now)));
    }

    /// A line from the source.
    pub(super) fn heard(&mut self, line: Vec<u8>) {
        match self.questions.source {
            // Every line typed answers the question shown (R3.26).
            Some(AnswerSource::Terminal) => {
                if let Some(waiting) = self.questions.waiting.pop_front() {
                    self.answer(&waiting.agent_id, String::from_utf8_lossy(&line).into_owned());
                }
            }
            Some(AnswerSource::ControlLines) => self.obey(&line),
            None => {}
        }
    }

    /// `agent_id` gets its answer (R3.26): it goes to its ask's `next` with it.
    pub(super) fn answer(&mut self, agent_id: &AgentId, text: String) {
        if let Some(index) = self.position(agent_id)
            && self.state.agents[index].status == AgentStatus::Asking
        {
            let agent = &mut self.state.agents[index];
            agent.answer(text);
            self.changes.touch(agent);
            self.ready.push_back(agent_id.clone());
            self.dirty = true;
        }
    }

    /// An ask's time ran out (A11).
    pub(super) fn question_timed_out(&mut self) {
        let Some(agent_id) = self.questions.take_due() else { return };
        if let Some(index) = self.position(&agent_id)
            && self.state.agents[index].status == AgentStatus::Asking
        {
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

    /// The source's input ended: nothing more will be answered. The asks that wait
    /// stop the run as under `--on-ask pause`, and so will any asked later (`asked`).
    pub(super) fn input_ended(&mut self) {
        self.questions.ended = true;
        self.questions.shown = None;
        self.questions.reminder = None;
        if !self.questions.waiting.is_empty() {
            self.questions.waiting.clear();
            if self.stop.is_none() {
                self.stop = Some(Stop::Ask);
            }
        }
    }

    /// Show how long the question shown has left, and when to show it again.
    pub(super) fn count_down(&mut self) {
        let Some(waiting) = self.questions.waiting.front() else { return };
        if let Some(deadline) = waiting.deadline {
            let left = deadline.saturating_duration_since(Instant::now());
            self.context
                .bus
                .emit(Event::AskWaiting { agent_id: waiting.agent_id.clone(), seconds_left: left.as_secs() });
            self.questions.reminder = Some(Instant::now() + countdown_step(left));
        }
    }
}

/// How often a countdown shows: a fifth of what is left, from 1 s to 5 minutes.
fn countdown_step(left: Duration) -> Duration {
    (left / 5).clamp(Duration::from_secs(1), Duration::from_secs(300))
}

#[cfg(test)]
impl WorkflowLoop {
    /// Answer as under `--on-ask json`, from the lines sent to the sender returned
    /// instead of from stdin.
    pub(super) fn control_lines(&mut self) -> mpsc::UnboundedSender<Vec<u8>> {
        let (sender, receiver) = mpsc::unbounded_channel();
        self.questions = Questions::new(Some(AnswerSource::ControlLines));
        self.questions.lines = Some(receiver);
        sender
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(id: &str, timeout: Option<&str>) -> PendingAsk {
        PendingAsk {
            id: id.to_string(),
            prompt: "?".to_string(),
            next: "NEXT.sh".into(),
            timeout: timeout.map(str::to_string),
            timeout_next: None,
            asked_at: jiff::Timestamp::now().to_string(),
            files: Default::default(),
        }
    }

    /// Questions with `asks` waiting, without reading stdin.
    fn waiting(source: AnswerSource, asks: &[(&str, Option<&str>)]) -> Questions {
        let mut questions = Questions::new(Some(source));
        let (_, receiver) = mpsc::unbounded_channel();
        questions.lines = Some(receiver);
        for (agent, timeout) in asks {
            questions.wait_for(AgentId::from(*agent), &ask(&format!("ask_{agent}"), *timeout));
        }
        questions
    }

    #[test]
    fn under_json_the_earliest_deadline_of_all_waiting_asks_is_due_first() {
        let asks = [("a", Some("1h")), ("b", None), ("c", Some("1m")), ("d", Some("2m"))];
        let mut questions = waiting(AnswerSource::ControlLines, &asks);
        let due: Vec<AgentId> = std::iter::from_fn(|| questions.take_due()).collect();
        assert_eq!(due, ["c", "d", "a"], "an ask without a timeout never times out");
        assert_eq!(questions.take_ask("ask_b"), Some(AgentId::from("b")));
        assert!(!questions.pending());
    }

    #[test]
    fn at_a_terminal_only_the_question_shown_is_timed() {
        let questions = waiting(AnswerSource::Terminal, &[("a", None), ("c", Some("1m"))]);
        let far = Instant::now() + Duration::from_secs(3600);
        assert_eq!(questions.clocks(far).0, far, "the first question has no timeout");
    }

    #[test]
    fn an_ask_is_answered_once_and_forgotten_with_its_agent() {
        let mut questions = waiting(AnswerSource::ControlLines, &[("a", None), ("b", Some("1m"))]);
        assert_eq!(questions.take_ask("ask_a"), Some(AgentId::from("a")));
        assert_eq!(questions.take_ask("ask_a"), None, "answered already");
        questions.forget(&AgentId::from("b"));
        assert_eq!(questions.take_ask("ask_b"), None);
        assert!(!questions.pending());
    }
}
