//! `baton gc [--older-than AGE] [--keep N] [--dry-run]`: runs are kept (A9)
//! until this prunes them. Only finished runs — completed or failed — are
//! deleted, with their task folders; a run that can still go on (running, paused, interrupted, asking)
//! is never touched, and a run some baton drives right now is skipped: each
//! deletion first takes the run's lock, so it cannot race a `resume`.
//! `--unreadable` deletes the runs whose files are damaged instead (`unreadable`
//! in `baton list`): they can never go on, and nothing else removes them.

use std::io::Write;
use std::time::Duration;

use super::CliError;
use super::arguments::GcArguments;
use crate::model::run_state::{RunState, RunStatus};
use crate::store::lock::RunLock;
use crate::store::removal::{DeleteError, delete_run};
use crate::store::runs::{RunStore, StoreError};
use crate::text::count::count;
use crate::text::duration::{is_zero_duration, parse_duration};

const DEFAULT_AGE: Duration = Duration::from_secs(30 * 86400);

pub(crate) fn gc(store: &RunStore, arguments: &GcArguments) -> Result<i32, CliError> {
    if arguments.unreadable {
        return gc_unreadable(store, arguments.dry_run);
    }
    let older_than = match (&arguments.older_than, arguments.keep) {
        // Zero is an age like any other here: every finished run is older than that.
        (Some(text), _) if is_zero_duration(text) => Some(Duration::ZERO),
        (Some(text), _) => Some(parse_duration(text).map_err(|error| CliError::InvalidValue {
            flag: "older-than",
            value: text.clone(),
            expected: error.to_string(),
        })?),
        (None, Some(_)) => None,
        (None, None) => Some(DEFAULT_AGE),
    };
    let now = jiff::Timestamp::now();
    let finished: Vec<(String, RunState)> = store
        .list_in_order()
        .into_iter()
        .filter_map(|(id, run)| {
            let run = run.ok()?;
            matches!(run.status, RunStatus::Completed | RunStatus::Failed).then_some((id, run))
        })
        .collect();
    // Newest first, so `--keep N` keeps the first N.
    let kept = arguments.keep.unwrap_or(0);
    let mut doomed: Vec<(&String, &RunState)> = Vec::new();
    for (index, (id, run)) in finished.iter().rev().enumerate() {
        let updated_at = &run.updated_at;
        let old_enough = older_than.is_none_or(|age| {
            updated_at.parse::<jiff::Timestamp>().is_ok_and(|updated| {
                now.as_second().saturating_sub(updated.as_second()) >= i64::try_from(age.as_secs()).unwrap_or(i64::MAX)
            })
        });
        if index >= kept && old_enough {
            doomed.push((id, run));
        }
    }
    let mut stdout = std::io::stdout().lock();
    let mut removed = 0;
    for (id, run) in doomed {
        let run_dir = store.run_dir(id);
        if arguments.dry_run {
            if RunLock::holder(&run_dir).is_none() {
                writeln!(stdout, "would delete {id}").map_err(|source| CliError::Stdout { source })?;
                removed += 1;
            }
            continue;
        }
        match delete_run(store, id, Some(run)) {
            Ok(()) => {
                removed += 1;
                writeln!(stdout, "deleted {id}").map_err(|source| CliError::Stdout { source })?;
            }
            Err(DeleteError::Driven) => eprintln!("skipped {id}: a baton is driving it"),
            Err(error) => eprintln!("{error}"),
        }
    }
    let verb = if arguments.dry_run { "would delete" } else { "deleted" };
    eprintln!("{verb} {removed} of {}", count(finished.len(), "finished run", "finished runs"));
    Ok(0)
}

/// `baton gc --unreadable`: delete the runs whose files are damaged (never one in a
/// newer Baton's format, nor one a baton drives).
fn gc_unreadable(store: &RunStore, dry_run: bool) -> Result<i32, CliError> {
    let damaged: Vec<String> =
        store.list().into_iter().filter_map(|(id, run)| run.err().filter(StoreError::is_damage).map(|_| id)).collect();
    let mut stdout = std::io::stdout().lock();
    let mut removed = 0;
    for id in &damaged {
        if dry_run {
            if RunLock::holder(&store.run_dir(id)).is_none() {
                writeln!(stdout, "would delete {id}").map_err(|source| CliError::Stdout { source })?;
                removed += 1;
            }
            continue;
        }
        match delete_run(store, id, None) {
            Ok(()) => {
                removed += 1;
                writeln!(stdout, "deleted {id}").map_err(|source| CliError::Stdout { source })?;
            }
            Err(DeleteError::Driven) => eprintln!("skipped {id}: a baton is driving it"),
            Err(error) => eprintln!("{error}"),
        }
    }
    let verb = if dry_run { "would delete" } else { "deleted" };
    eprintln!("{verb} {removed} of {}", count(damaged.len(), "unreadable run", "unreadable runs"));
    Ok(0)
}
