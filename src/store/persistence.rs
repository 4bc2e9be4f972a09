//! Persistence of a live run: every state change is a journal commit, written
//! before anything depends on it and synced before anyone is told about it
//! (`store::syncer`); the snapshot is compacted from the journal every
//! `compact_every` commits, when a resumed invocation starts, and when an invocation
//! ends with more than `FINAL_COMPACT_AFTER` entries in the journal.
//!
//! The cost per commit is one small `write` and at most one `fdatasync`, whatever
//! the number of agents; compaction rewrites the whole state, but only once per
//! `compact_every` steps. Order within a compaction: write the new snapshot (it
//! records the last commit it includes), then empty the journal. A crash between
//! the two leaves journal entries the snapshot already holds, which replay skips.

use std::path::PathBuf;
use std::time::Instant;

use tokio::sync::watch;

use crate::events::metrics::PersistenceCounters;
use crate::model::run_state::RunState;
use crate::store::failpoint;
use crate::store::failure_note::FailureNote;
use crate::store::journal::{Commit, Journal};
use crate::store::runs::{RunStore, StoreError};
use crate::store::syncer::Synced;

/// Commits between snapshots unless `BATON_COMPACT_EVERY` says otherwise.
pub(crate) const DEFAULT_COMPACT_EVERY: u64 = 1000;

/// An invocation that leaves fewer entries than this ends with a sync of the journal
/// instead of a compaction (three syncs): loading replays them in microseconds.
const FINAL_COMPACT_AFTER: u64 = 100;

pub(crate) struct RunPersistence {
    store: RunStore,
    journal: Journal,
    compact_every: u64,
    counters: PersistenceCounters,
}

impl RunPersistence {
    /// Take over the run's files and start appending to the journal (whose entries
    /// are already replayed into the caller's state); `fold` then compacts them.
    /// The caller holds the run's lock. The journal holds space for a failure note
    /// past its end (`store::failure_note`).
    pub(crate) fn begin(store: RunStore, state: &RunState, journal_intact: u64) -> Result<RunPersistence, StoreError> {
        let journal = Journal::open(&store.journal_path(&state.run_id), journal_intact)?;
        let compact_every = std::env::var("BATON_COMPACT_EVERY")
            .ok()
            .and_then(|value| value.parse().ok())
            .filter(|every| *every > 0)
            .unwrap_or(DEFAULT_COMPACT_EVERY);
        Ok(RunPersistence { store, journal, compact_every, counters: PersistenceCounters::default() })
    }

    /// Fold the journal of earlier invocations into a fresh snapshot. A resume does
    /// this once the replayed steps are in the trace: after it, only the snapshot's
    /// last step is known.
    pub(crate) fn fold(&mut self, state: &RunState) -> Result<(), StoreError> {
        self.compact(state)
    }

    /// Leave word that the run failed with `error` when its state cannot be saved
    /// (`store::failure_note`); best effort, as nothing else can be written.
    pub(crate) fn note_failure(&self, state: &RunState, error: &str) {
        let note = FailureNote { commit: state.journal_commit, error: error.to_string() };
        if let Err(write_error) = self.journal.note_failure(&note) {
            tracing::warn!(%write_error, "cannot leave the run's failure note");
        }
    }

    /// Write `entry` (safe from a killed process once this returns) and start its
    /// sync; returns its sequence number for `updates`. `entry.commit` must be
    /// `state.journal_commit` after the change.
    /// `Ok(None)` when the entry is as durable as it will get already (a journal on
    /// a file system in memory).
    pub(crate) fn commit(&mut self, entry: &Commit) -> Result<Option<u64>, StoreError> {
        let started = Instant::now();
        let appended = self.journal.append(entry)?;
        self.counters.bytes += appended.bytes;
        self.counters.commits += 1;
        self.counters.time += started.elapsed();
        failpoint::hit("after_journal_append");
        Ok(appended.pending)
    }

    /// Sync `files` in the background (a new run's first snapshot, `RunStore::create`);
    /// returns the sequence number for `updates` that says when they are durable
    /// (`None`: nothing to wait for).
    pub(crate) fn sync_files(&mut self, files: Vec<PathBuf>) -> Option<u64> {
        self.journal.sync_files(files)
    }

    /// Follow how far the commits are durable (sequence numbers from `commit`).
    pub(crate) fn updates(&self) -> watch::Receiver<Synced> {
        self.journal.updates()
    }

    /// The sequence number of the last commit (or file sync) so far.
    pub(crate) fn written(&self) -> u64 {
        self.journal.written()
    }

    /// Block until every commit so far is durable; returns the last one's sequence number.
    pub(crate) fn settle(&mut self) -> Result<u64, StoreError> {
        let started = Instant::now();
        self.journal.sync()?;
        self.counters.time += started.elapsed();
        Ok(self.journal.written())
    }

    /// Make the invocation's end durable: a compaction if the journal is long, else
    /// a sync. Returns the sequence number everything is durable up to.
    pub(crate) fn close(&mut self, state: &RunState) -> Result<u64, StoreError> {
        if self.journal.len() > FINAL_COMPACT_AFTER {
            self.compact(state)?;
            Ok(self.written())
        } else {
            self.settle()
        }
    }

    /// What persistence has cost so far.
    pub(crate) fn counters(&self) -> &PersistenceCounters {
        &self.counters
    }

    /// Enough commits have accumulated for a compaction.
    pub(crate) fn compaction_due(&self) -> bool {
        self.journal.len() >= self.compact_every
    }

    /// Write `state` (which includes every commit) as the snapshot and empty the
    /// journal; every commit so far is durable after it.
    pub(crate) fn compact(&mut self, state: &RunState) -> Result<(), StoreError> {
        let started = Instant::now();
        self.counters.bytes += self.store.write_snapshot(state)?;
        self.journal.clear()?;
        self.counters.snapshots += 1;
        self.counters.time += started.elapsed();
        Ok(())
    }
}
