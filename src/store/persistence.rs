//! Persistence of a live run: every state change is a journal commit, made durable
//! before anything depends on it; the snapshot is compacted from the journal every
//! `compact_every` commits and at the start and end of every invocation.
//!
//! The cost per commit is one small `write` and one `fdatasync`, whatever the
//! number of agents; compaction rewrites the whole state, but only once per
//! `compact_every` steps. Order within a compaction: write the new snapshot (it
//! records the last commit it includes), then empty the journal. A crash between
//! the two leaves journal entries the snapshot already holds, which replay skips.

use std::time::Instant;

use crate::events::metrics::PersistenceCounters;
use crate::model::run_state::RunState;
use crate::store::failpoint;
use crate::store::failure_note::{self, FailureNote};
use crate::store::journal::{Commit, Journal};
use crate::store::runs::{RunStore, StoreError};

/// Commits between snapshots unless `BATON_COMPACT_EVERY` says otherwise.
pub(crate) const DEFAULT_COMPACT_EVERY: u64 = 1000;

pub(crate) struct RunPersistence {
    store: RunStore,
    journal: Journal,
    compact_every: u64,
    counters: PersistenceCounters,
}

impl RunPersistence {
    /// Take over the run's files: fold the journal (already replayed into `state`)
    /// into a fresh snapshot and start an empty journal. `snapshot_is_current`
    /// (a run just created from `state`, with no journal) skips that rewrite.
    pub(crate) fn begin(
        store: RunStore,
        state: &RunState,
        journal_intact: u64,
        snapshot_is_current: bool,
    ) -> Result<RunPersistence, StoreError> {
        let journal = Journal::open(&store.journal_path(&state.run_id), journal_intact)?;
        failure_note::reserve(&store.run_dir(&state.run_id));
        let compact_every = std::env::var("BATON_COMPACT_EVERY")
            .ok()
            .and_then(|value| value.parse().ok())
            .filter(|every| *every > 0)
            .unwrap_or(DEFAULT_COMPACT_EVERY);
        let mut persistence =
            RunPersistence { store, journal, compact_every, counters: PersistenceCounters::default() };
        if !snapshot_is_current {
            persistence.compact(state)?;
        }
        Ok(persistence)
    }

    /// Leave word that the run failed with `error` when its state cannot be saved
    /// (`store::failure_note`); best effort, as nothing else can be written.
    pub(crate) fn note_failure(&self, state: &RunState, error: &str) {
        let note = FailureNote { commit: state.journal_commit, error: error.to_string() };
        if let Err(write_error) = failure_note::record(&self.store.run_dir(&state.run_id), &note) {
            tracing::warn!(%write_error, "cannot leave the run's failure note");
        }
    }

    /// Make `entry` durable. `entry.commit` must be `state.journal_commit` after the change.
    pub(crate) fn commit(&mut self, entry: &Commit) -> Result<(), StoreError> {
        let started = Instant::now();
        self.counters.bytes += self.journal.append(entry)?;
        self.counters.commits += 1;
        self.counters.time += started.elapsed();
        failpoint::hit("after_journal_append");
        Ok(())
    }

    /// What persistence has cost so far.
    pub(crate) fn counters(&self) -> &PersistenceCounters {
        &self.counters
    }

    /// Compact if enough commits have accumulated.
    pub(crate) fn compact_if_due(&mut self, state: &RunState) -> Result<(), StoreError> {
        if self.journal.len() >= self.compact_every { self.compact(state) } else { Ok(()) }
    }

    /// Write `state` (which includes every commit) as the snapshot and empty the journal.
    pub(crate) fn compact(&mut self, state: &RunState) -> Result<(), StoreError> {
        let started = Instant::now();
        self.counters.bytes += self.store.write_snapshot(state)?;
        self.journal.clear()?;
        self.counters.snapshots += 1;
        self.counters.time += started.elapsed();
        Ok(())
    }
}
