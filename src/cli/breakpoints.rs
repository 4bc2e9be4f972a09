//! `--break-before`, `--break-after`, `--step` and `--clear-breakpoints` folded
//! into a run's launch parameters (`model::breakpoints`). Each state is named as a
//! tag names it and resolved in the run's workflow the way a `<goto>` would be, so
//! a typo is refused before anything runs, with a did-you-mean.

use std::path::Path;

use super::CliError;
use super::arguments::ExecutionArguments;
use crate::ids::StateName;
use crate::model::run_state::LaunchParams;
use crate::workflow::resolution::resolve_states;

/// A new run's breakpoints, or a resumed run's: a list given replaces the run's
/// list of that kind; `--clear-breakpoints` drops every one not given again.
pub(crate) fn apply_breakpoints(
    options: &ExecutionArguments,
    params: &mut LaunchParams,
    scope_dir: &Path,
) -> Result<(), CliError> {
    let before = resolve_all("break-before", &options.break_before, scope_dir)?;
    let after = resolve_all("break-after", &options.break_after, scope_dir)?;
    let breakpoints = &mut params.breakpoints;
    if options.clear_breakpoints {
        *breakpoints = Default::default();
    }
    if !options.break_before.is_empty() {
        breakpoints.before = before.into_iter().collect();
    }
    if !options.break_after.is_empty() {
        breakpoints.after = after.into_iter().collect();
    }
    if options.step {
        breakpoints.step = true;
    }
    Ok(())
}

/// Every name of `--FLAG`, resolved in the workflow at `scope_dir`.
fn resolve_all(flag: &'static str, names: &[String], scope_dir: &Path) -> Result<Vec<StateName>, CliError> {
    resolve_states(scope_dir, names).map_err(|(name, error)| CliError::InvalidValue {
        flag,
        value: name.trim().to_string(),
        expected: error.to_string(),
    })
}
