//! Where a run lives on disk (`.baton/runs/<id>/`): the snapshot, the per-step
//! journal, compaction, the owner lock, the failpoints that test them, and the
//! state at an earlier commit that `baton rerun` starts from.

pub(crate) mod baton_dir;
pub(crate) mod disk_full;
pub(crate) mod failpoint;
pub(crate) mod failure_note;
pub(crate) mod journal;
pub(crate) mod lock;
pub(crate) mod persistence;
pub(crate) mod removal;
pub(crate) mod rerun;
pub(crate) mod runs;
pub(crate) mod syncer;
