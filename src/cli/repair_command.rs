//! `baton repair <RUN_ID>`: when a run's journal is damaged in the middle (a disk
//! error, a hand edit), keep the intact entries before the damage so the run can
//! resume from them. The whole journal is copied aside first; the steps after the
//! cut are not known to the run any more and run again on resume.

use std::io::Write;

use super::CliError;
use crate::store::lock::RunLock;
use crate::store::runs::RunStore;

pub(crate) fn repair(store: &RunStore, run_id: &str) -> Result<i32, CliError> {
    let run_dir = store.existing_run_dir(run_id)?;
    let _lock = RunLock::acquire(&run_dir, run_id)?;
    let repair = store.repair_journal(&run_dir)?;
    let text = match repair.cut {
        None => format!(
            "the journal of run {run_id} is intact ({} {} after the snapshot); nothing to repair\n",
            repair.kept,
            if repair.kept == 1 { "entry" } else { "entries" }
        ),
        Some(cut) => format!(
            "cut the journal of run {run_id} at line {}: {}\n\
             kept {} {} after the snapshot; the run now ends at commit {}, and the steps after it run again on \
             resume\n\
             the whole journal was copied to {}\n\
             continue with `baton resume {run_id}`\n",
            cut.line,
            cut.reason,
            repair.kept,
            if repair.kept == 1 { "entry" } else { "entries" },
            repair.last_commit,
            cut.backup.display()
        ),
    };
    std::io::stdout().lock().write_all(text.as_bytes()).map_err(|source| CliError::Stdout { source })?;
    Ok(0)
}
