//! `baton test --record RUN [--output FILE] [--keep-scripts]` (issue 23): a
//! finished run written as a `baton test` file that replays it offline
//! (`testing::record`, docs/testing.md). Nothing of the run is changed.

use std::path::{Path, PathBuf};

use super::CliError;
use crate::ids::AgentId;
use crate::inspect::trace_file::{read_complete, trace_path};
use crate::store::rerun::History;
use crate::store::runs::RunStore;
use crate::testing::record::{RecordError, RecordOptions, Secrets, record};

/// Why a recording was not written.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RecordFileError {
    #[error(transparent)]
    Record(#[from] RecordError),
    #[error(
        "{} already exists: choose another --output, or remove it to record again",
        .path.display()
    )]
    Exists { path: PathBuf },
    #[error(
        "run {run_id}'s workflow {} is not a directory, so it has no tests/ folder to record into: give --output FILE",
        .scope.display()
    )]
    NoTestsFolder { run_id: String, scope: PathBuf },
    #[error("cannot write {}: {source}", .path.display())]
    Write { path: PathBuf, source: std::io::Error },
}

pub(crate) fn record_run(
    store: &RunStore,
    run_id: &str,
    output: Option<&Path>,
    keep_scripts: bool,
) -> Result<i32, CliError> {
    let state = store.load(run_id)?;
    let run_dir = store.run_dir(run_id);
    let path = trace_path(&run_dir);
    if !path.is_file() {
        return Err(RecordFileError::from(RecordError::NoTrace { run_id: run_id.to_string() }).into());
    }
    let trace = read_complete(&path).map_err(|source| CliError::Trace { path: path.clone(), source })?;
    // The input the run started with: the main agent's, after the first commit.
    let input = History::read(&run_dir)
        .ok()
        .and_then(|history| history.state_at(1).ok())
        .and_then(|at| at.state.agents.into_iter().find(|agent| agent.id == AgentId::main()))
        .and_then(|main| main.pending_result);
    let inherited: Vec<(String, String)> = std::env::vars().collect();
    let secrets = Secrets::among(
        inherited
            .iter()
            .map(|(name, value)| (name.as_str(), value.as_str()))
            .chain(state.launch_params.environment.iter().map(|(name, value)| (name.as_str(), value.as_str()))),
    );
    let text = record(&state, &trace, input.as_deref(), RecordOptions { keep_scripts }, &secrets)
        .map_err(RecordFileError::from)?;
    let file = match output {
        Some(file) => file.to_path_buf(),
        None if state.scope_dir.is_dir() => state.scope_dir.join("tests").join(format!("recorded-{run_id}.yaml")),
        None => {
            return Err(
                RecordFileError::NoTestsFolder { run_id: run_id.to_string(), scope: state.scope_dir.clone() }.into()
            );
        }
    };
    if file.exists() {
        return Err(RecordFileError::Exists { path: file }.into());
    }
    if let Some(parent) = file.parent().filter(|parent| !parent.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|source| RecordFileError::Write { path: parent.to_path_buf(), source })?;
    }
    std::fs::write(&file, text).map_err(|source| RecordFileError::Write { path: file.clone(), source })?;
    eprintln!("recorded run {run_id} as {}; replay it with `baton test {}`", file.display(), file.display());
    Ok(0)
}
