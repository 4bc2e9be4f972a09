//! Where a run lives on disk (`.baton/runs/<id>/`): the snapshot, the per-step
//! journal, compaction, the owner lock, and the failpoints that test them.

pub mod failpoint;
pub mod journal;
pub mod lock;
pub mod persistence;
pub mod runs;
