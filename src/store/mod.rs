//! Where a run lives on disk (`.baton/runs/<id>/`): the snapshot, the per-step
//! journal, compaction, the owner lock, and the failpoints that test them.

pub(crate) mod disk_full;
pub(crate) mod failpoint;
pub(crate) mod failure_note;
pub(crate) mod journal;
pub(crate) mod lock;
pub(crate) mod persistence;
pub(crate) mod runs;
pub(crate) mod syncer;
