//! What changed since the last commit, and making it durable: each loop turn
//! journals only the agents, stack tops and counters it touched (O(changed
//! agents), `docs/state-format.md`), and publishes its events only after that;
//! the bus holds them until the entry's sync is done (`store::syncer`).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::events::Event;
use crate::ids::AgentId;
use crate::model::agent::Agent;
use crate::model::run_state::TerminatedAgent;
use crate::run::workflow_loop::{FatalError, WorkflowLoop};
use crate::store::journal::{AgentUpsert, Commit, RunFields, StepSummary};
use crate::store::runs::StoreError;
use crate::store::syncer::Synced;

/// What changed since the last commit.
#[derive(Default)]
pub(super) struct Changes {
    pub(super) agents: BTreeSet<AgentId>,
    pub(super) terminated: Vec<TerminatedAgent>,
    pub(super) counters: BTreeSet<AgentId>,
    /// For agents that existed at the last commit: how many bottom stack frames are
    /// unchanged since then (stacks change only at the top).
    pub(super) stack_keep: HashMap<AgentId, usize>,
}

impl Changes {
    /// `agent` changed, but not its stack.
    pub(super) fn touch(&mut self, agent: &Agent) {
        self.agents.insert(agent.id.clone());
        self.stack_keep.entry(agent.id.clone()).or_insert(agent.stack.len());
    }

    /// `agent` stepped from a stack of `before` frames to one of `after`.
    pub(super) fn stepped(&mut self, id: &AgentId, before: usize, after: usize) {
        self.agents.insert(id.clone());
        let keep = self.stack_keep.entry(id.clone()).or_insert(before);
        *keep = (*keep).min(before).min(after);
    }
}

impl WorkflowLoop {
    /// Journal everything that changed since the last commit (O(changed agents)).
    /// When the journal cannot take it, nothing is lost from memory: the changes,
    /// the step and the commit number are restored, so a later commit (the final
    /// save) carries them, and the journal never skips a number.
    pub(super) fn commit(&mut self, step: Option<StepSummary>) -> Result<(), StoreError> {
        let mut changes = std::mem::take(&mut self.changes);
        self.dirty = false;
        // Changed agents in run order (replay appends new ones in this order); those
        // no longer in the run are removed. O(changed agents), not O(agents).
        let mut present: Vec<usize> = Vec::with_capacity(changes.agents.len());
        let mut remove = Vec::new();
        for id in &changes.agents {
            match self.positions.get(id) {
                Some(&index) => present.push(index),
                None => remove.push(id.clone()),
            }
        }
        present.sort_unstable();
        let upsert: Vec<AgentUpsert> = present
            .into_iter()
            .map(|index| &self.state.agents[index])
            .map(|agent| AgentUpsert::new(agent, changes.stack_keep.get(&agent.id).copied()))
            .collect();
        let fork_counters: BTreeMap<AgentId, u64> = changes
            .counters
            .iter()
            .filter_map(|parent| self.state.fork_counters.get(parent).map(|count| (parent.clone(), *count)))
            .collect();
        self.state.elapsed_ms = self.elapsed_at_start + self.started.elapsed().as_millis() as u64;
        self.state.updated_at = jiff::Timestamp::now().to_string();
        let previous_last_step = self.state.last_step.clone();
        self.state.journal_commit += 1;
        if let Some(step) = &step {
            self.state.last_step = Some((self.state.journal_commit, step.clone()));
        }
        let mut entry = Commit {
            commit: self.state.journal_commit,
            run: RunFields::of(&self.state),
            upsert,
            remove,
            terminated: std::mem::take(&mut changes.terminated),
            fork_counters,
            step,
        };
        let committed = self.persistence.commit(&entry).map(|pending| {
            // What is published from here on is about this entry: it waits for its sync.
            if let Some(seq) = pending {
                self.context.bus.hold_until(seq);
            }
        });
        match &committed {
            // The step an earlier failed commit left unsaved is saved with this one.
            Ok(()) => {
                let unsaved = std::mem::take(&mut self.unsaved);
                self.outbox.splice(0..0, unsaved);
            }
            // A resume runs the unsaved step again: its transition, and the agents it
            // started or ended, are published only once a commit saves them, or the
            // trace would hold the step twice.
            Err(_) => {
                let (unsaved, rest) = std::mem::take(&mut self.outbox).into_iter().partition(|event| {
                    matches!(event, Event::TransitionOccurred { commit, .. } if *commit == entry.commit)
                        || matches!(event, Event::AgentSpawned { .. } | Event::AgentTerminated { .. })
                });
                self.unsaved.extend::<Vec<Event>>(unsaved);
                self.outbox = rest;
            }
        }
        if committed.is_err() {
            self.state.journal_commit -= 1;
            self.state.last_step = previous_last_step;
            self.pending_step = entry.step.take();
            changes.terminated = std::mem::take(&mut entry.terminated);
            self.changes = changes;
            self.dirty = true;
        }
        committed
    }

    /// A change that cannot be made durable is fatal (§10.1): continuing would run
    /// steps that a resume could not know about.
    pub(super) fn commit_or_fail(&mut self, step: Option<StepSummary>) {
        if let Err(error) = self.commit(step) {
            self.record_store_failure(error);
        }
    }

    pub(super) fn record_store_failure(&mut self, error: StoreError) {
        // Nothing will be known durable any more; what is held must still be seen.
        self.context.bus.open();
        let fatal = FatalError { agent: None, message: error.to_string() };
        self.record_fatal(fatal);
    }

    /// The journal's syncer moved on: release the events that waited for it.
    pub(super) fn synced(&mut self) {
        let synced = *self.synced.borrow_and_update();
        match synced {
            Synced::UpTo(seq) => self.context.bus.reached(seq),
            Synced::Failed => {
                if let Err(error) = self.persistence.settle() {
                    self.record_store_failure(error);
                }
            }
        }
    }

    /// Fold the journal into a snapshot. Its steps' events are delivered first: after
    /// the fold only the snapshot's last step could be published again.
    pub(super) fn compact(&mut self) {
        self.settle();
        match self.persistence.compact(&self.state) {
            Ok(()) => self.context.bus.reached(self.persistence.written()),
            Err(error) => self.record_store_failure(error),
        }
    }

    /// Wait until every commit is durable and release every held event (before
    /// the loop waits a long time, or the journal is folded or closed, so nothing
    /// stays unseen meanwhile).
    pub(super) fn settle(&mut self) {
        match self.persistence.settle() {
            Ok(seq) => self.context.bus.reached(seq),
            Err(error) => self.record_store_failure(error),
        }
    }

    pub(super) fn publish(&mut self) {
        for event in self.outbox.drain(..) {
            self.context.bus.emit(event);
        }
    }
}
