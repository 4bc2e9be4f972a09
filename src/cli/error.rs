//! Errors that end a command before or outside a run, each rendered as one precise
//! `error: …` line on stderr with exit code 1.

use std::io;
use std::path::PathBuf;

use crate::store::runs::StoreError;
use crate::workflow::target::WorkflowTargetError;

#[derive(Debug, thiserror::Error)]
pub(crate) enum CliError {
    #[error("cannot determine the current directory: {source}")]
    CurrentDir { source: io::Error },
    #[error("cannot start the async runtime: {source}")]
    Runtime { source: io::Error },
    #[error(transparent)]
    Workflow(#[from] WorkflowTargetError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Record(#[from] crate::cli::record_command::RecordFileError),
    #[error(transparent)]
    InputFile(#[from] crate::cli::input_file::InputFileError),
    #[error(transparent)]
    Worker(#[from] crate::distributed::worker::WorkerError),
    #[error(transparent)]
    EngineCheck(#[from] crate::distributed::ingress::CheckError),
    #[error(
        "run `{run_id}` was started with {started}; it cannot be resumed with {given}: one run's steps all run on one \
         engine (a step still running on the other could run twice). Resume it with `--engine {started_flag}` or \
         without --engine"
    )]
    EngineMismatch { run_id: String, started: String, given: String, started_flag: String },
    #[error("invalid value `{value}` for --{flag}: {expected}")]
    InvalidValue { flag: &'static str, value: String, expected: String },
    #[error("cannot open the trace in {path}: {source}")]
    Trace { path: PathBuf, source: io::Error },
    #[error("{} already exists; edit it, or remove it to start from the template", .path.display())]
    ConfigExists { path: PathBuf },
    #[error("{} already exists; pick another name", .path.display())]
    WorkflowExists { path: PathBuf },
    #[error("cannot convert {}: {reason}", .path.display())]
    Convert { path: PathBuf, reason: String },
    #[error("{} already exists; give --force to replace it, or --output another path", .path.display())]
    ConvertTargetExists { path: PathBuf },
    #[error("cannot write {}: {source}", .path.display())]
    ConvertWrite { path: PathBuf, source: io::Error },
    #[error("cannot write the diagram to {}: {source}", .path.display())]
    DiagramWrite { path: PathBuf, source: io::Error },
    #[error("cannot write the new workflow in {}: {source}", .path.display())]
    NewWorkflow { path: PathBuf, source: io::Error },
    #[error(transparent)]
    Manifest(#[from] crate::workflow::manifest::ManifestError),
    #[error(transparent)]
    Remote(#[from] crate::workflow::remote::RemoteError),
    #[error("workflow `{workflow}` needs an input{}: give it with --input TEXT", .label.as_ref().map_or_else(String::new, |label| format!(" ({label})")))]
    InputRequired { workflow: String, label: Option<String> },
    #[error("workflow `{workflow}` takes no input (its manifest says `input: {{mode: none}}`); drop --input")]
    InputNotTaken { workflow: String },
    #[error("workflow `{workflow}` asks a person for input ({reason}); run it with --on-ask pause")]
    NeedsHumanInput { workflow: String, reason: String },
    #[error("the manifest's working_directory {} does not exist", .path.display())]
    WorkingDirectory { path: PathBuf },
    #[error("cannot write {}: {source}", .path.display())]
    ConfigWrite { path: PathBuf, source: io::Error },
    #[error("run `{run_id}` has already completed; `baton status {run_id}` shows its result")]
    AlreadyCompleted { run_id: String },
    #[error("--input was given, but no agent of run `{run_id}` is waiting for input")]
    NoAgentWaiting { run_id: String },
    #[error("run `{run_id}` has no ask `{ask_id}` waiting; the asks waiting are: {open}")]
    NoSuchAsk { run_id: String, ask_id: String, open: String },
    #[error(
        "workflow `{workflow}` has {} that would fail the run; fix {}, or run with --no-lint:\n{findings}",
        if *.count == 1 { "a lint error".to_string() } else { format!("{} lint errors", .count) },
        if *.count == 1 { "it" } else { "them" }
    )]
    LintErrors { workflow: String, count: usize, findings: String },
    #[error(transparent)]
    Rerun(#[from] crate::store::rerun::RerunError),
    #[error(
        "commit {commit} of run `{run_id}` recorded no step (a retry, a pause or the run's end), so --input has no \
         agent to go to; rerun from a step (`baton status {run_id} --steps` lists them)"
    )]
    RerunInputNoStep { run_id: String, commit: u64 },
    #[error(
        "agent `{agent_id}` terminated at step {commit} of run `{run_id}`, so --input has no agent to go to; rerun \
         from an earlier step, or without --input"
    )]
    RerunInputTerminated { run_id: String, commit: u64, agent_id: String },
    #[error("run `{run_id}` has no step {step} of agent `{agent}`: {valid}")]
    NoSuchStep { run_id: String, agent: String, step: u64, valid: String },
    #[error("run `{run_id}` has no agent `{agent}`{suggestion}; its agents are: {known}")]
    NoSuchAgent { run_id: String, agent: String, suggestion: String, known: String },
    #[error("baton directory {} is not a directory; give --baton-dir (or BATON_DIR) a directory for Baton's runs", .path.display())]
    BatonDirNotADirectory { path: PathBuf },
    #[error(
        "baton directory {} is a symbolic link to {}, which does not exist; create that directory, or give \
         --baton-dir (or BATON_DIR) a directory for Baton's runs",
        .path.display(), .target.display()
    )]
    BatonDirDanglingLink { path: PathBuf, target: PathBuf },
    #[error("cannot read baton directory {}: {source}", .path.display())]
    BatonDirUnreadable { path: PathBuf, source: io::Error },
    #[error("cannot write to stdout: {source}")]
    Stdout { source: io::Error },
    #[error(transparent)]
    Lock(#[from] crate::store::lock::LockError),
    #[error(transparent)]
    Config(#[from] crate::cli::config::ConfigError),
    #[error(transparent)]
    Serve(#[from] crate::serve::ServeError),
    #[error(transparent)]
    Handoff(#[from] crate::serve::handoff::HandoffError),
    #[error(transparent)]
    Edit(#[from] crate::cli::edit::EditError),
}
