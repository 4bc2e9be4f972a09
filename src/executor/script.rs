//! The script executor (R7.1–R7.13): runs a `.sh` state with bash in the agent's
//! working directory and turns its stdout into exactly one transition.
//!
//! Every failure here is fatal (R7.7–R7.8): a script is code the workflow author
//! controls, so a bad exit or a missing tag is a bug to report, not something to
//! retry. The one exception is a malformed multi-fork, which pauses the agent like
//! it does for prompts (R3.44).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::{
    ExecutionContext, ExecutionResult, StateExecutor, StepFuture, StepInput, template_variables,
    warn_ignored_attributes,
};
use crate::events::bus::EventBus;
use crate::events::error_kind::ErrorKind;
use crate::events::{Event, OutputStream, StateType};
use crate::executor::step_failure::StepFailure;
use crate::ids::AgentId;
use crate::model::agent::Agent;
use crate::process::executable::find_on_path;
use crate::process::script::{Pipe, ScriptCommand, ScriptProcessError, ScriptRun, run_script};
use crate::syntax::print_extractor::PrintExtractor;
use crate::syntax::scanner::scan;
use crate::syntax::script_directive::{DIRECTIVE_HEAD_BYTES, keeps_background};
use crate::syntax::template::render;
use crate::transition::interpret::{InterpretError, interpret};
use crate::workflow::resolution;
use crate::workflow::scope::ScriptSource;
use crate::workflow::specifier::Caller;

/// How much of a failing script's stderr goes into the error message (spec §16 item 15).
const STDERR_EXCERPT_BYTES: usize = 4096;

/// The start of the script at `path`, where directives live.
fn script_head(path: &Path) -> Option<String> {
    let mut head = Vec::with_capacity(DIRECTIVE_HEAD_BYTES);
    std::fs::File::open(path).ok()?.take(DIRECTIVE_HEAD_BYTES as u64).read_to_end(&mut head).ok()?;
    Some(String::from_utf8_lossy(&head).into_owned())
}

/// `bash`, found on `PATH` once (R7.1).
static BASH: std::sync::LazyLock<OsString> =
    std::sync::LazyLock::new(|| find_on_path("bash").map_or_else(|| OsString::from("bash"), PathBuf::into_os_string));

/// Runs scripts with bash; `baton test` may stand in for some of them
/// ([`ScriptStubs`]).
#[derive(Clone, Default)]
pub(crate) struct ScriptExecutor {
    stubs: Option<Arc<dyn ScriptStubs>>,
}

/// What stands in for a script's run (`baton test`'s stubs, `docs/testing.md`):
/// everything after the run — the exit code's meaning, the tag in stdout, the
/// transition — is the executor's as for a real run.
pub(crate) trait ScriptStubs: Send + Sync {
    /// The output to use instead of running `agent`'s current state: `None` runs
    /// the script; `Some(Err(message))` fails the step (a stub was due but none is
    /// left).
    fn stub(&self, agent: &Agent) -> Option<Result<ScriptRun, String>>;
}

impl ScriptExecutor {
    /// Scripts whose output `stubs` gives run no process.
    pub(crate) fn stubbed(stubs: Arc<dyn ScriptStubs>) -> ScriptExecutor {
        ScriptExecutor { stubs: Some(stubs) }
    }
}

impl StateExecutor for ScriptExecutor {
    fn execute<'a>(&'a self, input: StepInput, context: &'a ExecutionContext) -> StepFuture<'a> {
        Box::pin(run_script_state(self.stubs.as_deref(), input, context))
    }
}

/// The variables a script sees on top of Baton's own environment (R7.6): the
/// `BATON_*` names, the same values under `RAYMOND_*` so existing scripts keep
/// working, then the worker's fork attributes, which may override both.
pub(crate) fn script_environment(
    run_environment: &BTreeMap<String, String>,
    run_id: &str,
    agent: &Agent,
    input_file: Option<&Path>,
    results_file: Option<&Path>,
) -> BTreeMap<String, String> {
    // The run's own variables first: Baton's, set next, win over a manifest's.
    let mut env = run_environment.clone();
    let task_folder = agent.task_folder.to_string_lossy().into_owned();
    for prefix in ["BATON", "RAYMOND"] {
        env.insert(format!("{prefix}_WORKFLOW_ID"), run_id.to_string());
        env.insert(format!("{prefix}_AGENT_ID"), agent.id.to_string());
        env.insert(format!("{prefix}_TASK_FOLDER"), task_folder.clone());
        if let Some(input) = agent.pending_result.as_ref().filter(|input| fits_in_a_variable(input)) {
            env.insert(format!("{prefix}_INPUT"), input.clone());
        }
    }
    if let Some(path) = input_file {
        env.insert("BATON_INPUT_FILE".to_string(), path.to_string_lossy().into_owned());
    }
    // Baton's own (`docs/join.md`): raymond has no join, so no `RAYMOND_RESULTS`.
    if let Some(path) = results_file {
        env.insert("BATON_RESULTS".to_string(), path.to_string_lossy().into_owned());
    }
    let attributes = agent.fork_attributes.iter().filter(|(_, value)| fits_in_a_variable(value));
    env.extend(attributes.map(|(name, value)| (name.clone(), value.clone())));
    env
}

/// Linux refuses to start a program if one environment string (`NAME=value`) is
/// longer than 128 KiB (`MAX_ARG_STRLEN`); a larger input reaches the script only
/// through `BATON_INPUT_FILE`.
fn fits_in_a_variable(value: &str) -> bool {
    const MAX_ARG_STRLEN: usize = 128 * 1024;
    const NAME_ROOM: usize = 256;
    value.len() + NAME_ROOM <= MAX_ARG_STRLEN
}

/// Where a run's scripts find their input files: in memory when the machine has a
/// tmpfs at `/dev/shm` (`/dev/shm/baton-<uid>/<run>-XXXXXX`, private to the user),
/// else `<run_dir>/inputs`. They
/// are rewritten before each step and need no durability; on a disk, rewriting one
/// per step made the next journal sync also flush it (about 1 ms per step on ext4).
///
/// The directory in `/dev/shm` is new for each invocation (`<run>-XXXXXX`): two
/// projects may hold runs of the same id, and must not share input files.
pub(crate) fn input_files_dir(run_dir: &Path, run_id: &str) -> PathBuf {
    private_dir_in(Path::new("/dev/shm"))
        .and_then(|private| tempfile::Builder::new().prefix(&format!("{run_id}-")).tempdir_in(private).ok())
        .map_or_else(|| run_dir.join("inputs"), tempfile::TempDir::keep)
}

/// `<shared>/baton-<uid>`, only if it is a real directory of this user that no one
/// else can enter: inputs may be secrets, and `/dev/shm` is shared by every user.
fn private_dir_in(shared: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    // SAFETY: getuid has no preconditions.
    let uid = unsafe { libc::getuid() };
    let dir = shared.join(format!("baton-{uid}"));
    if let Err(error) = std::fs::DirBuilder::new().mode(0o700).create(&dir)
        && error.kind() != std::io::ErrorKind::AlreadyExists
    {
        return None;
    }
    let meta = std::fs::symlink_metadata(&dir).ok()?;
    if !meta.is_dir() || meta.uid() != uid {
        return None;
    }
    // Ours, but others may enter it (made by an older Baton): close it first.
    if meta.permissions().mode() & 0o077 != 0 {
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).ok()?;
    }
    Some(dir)
}

/// Write the agent's input where `BATON_INPUT_FILE` points: always when there is
/// one, so a script can read inputs of any size the same way.
fn write_input_file(inputs_dir: &Path, agent: &Agent) -> std::io::Result<Option<PathBuf>> {
    let Some(input) = &agent.pending_result else { return Ok(None) };
    create_private_dir(inputs_dir)?;
    let path = inputs_dir.join(format!("{}.input", agent.id));
    // Rewritten in place, not truncated to zero first: on ext4 a truncate-and-rewrite
    // makes `close` start writeback (auto_da_alloc).
    let file = std::fs::OpenOptions::new().create(true).write(true).truncate(false).open(&path)?;
    file.write_all_at(input.as_bytes(), 0)?;
    file.set_len(input.len() as u64)?;
    Ok(Some(path))
}

/// Where `$BATON_RESULTS` and `{{results}}` point in the state after a `<join>`
/// (`docs/join.md`): beside the agent's input file.
pub(crate) fn results_path(inputs_dir: &Path, agent: &Agent) -> PathBuf {
    inputs_dir.join(format!("{}.results.json", agent.id))
}

/// Write what the agent's last join gathered, a JSON array in fork order, where
/// `$BATON_RESULTS` points; nothing when the state does not follow a join. Like the
/// input file it is derived from the agent (`join_results`), so it is rewritten
/// before every attempt and needs no durability.
pub(crate) fn write_results_file(inputs_dir: &Path, agent: &Agent) -> std::io::Result<Option<PathBuf>> {
    let Some(results) = &agent.join_results else { return Ok(None) };
    create_private_dir(inputs_dir)?;
    let path = results_path(inputs_dir, agent);
    let mut text = serde_json::to_string_pretty(results).map_err(std::io::Error::other)?;
    text.push('\n');
    std::fs::write(&path, text)?;
    Ok(Some(path))
}

/// The invocation's directory for inputs and scripts, readable by this user only.
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::os::unix::fs::DirBuilderExt::mode(std::fs::DirBuilder::new().recursive(true), 0o700).create(dir)
}

/// A YAML workflow's script, written where the invocation keeps its private files
/// (`inputs_dir`, removed with it) so that `bash` can run it like any other.
fn write_inline_script(inputs_dir: &Path, agent: &Agent, source: &str) -> std::io::Result<PathBuf> {
    create_private_dir(inputs_dir)?;
    let path = inputs_dir.join(format!("{}.script", agent.id));
    std::fs::write(&path, source)?;
    Ok(path)
}

/// Too many open files or processes: the machine is busy, not the script wrong.
fn is_out_of_resources(error: &std::io::Error) -> bool {
    matches!(error.raw_os_error(), Some(libc::EMFILE | libc::ENFILE | libc::EAGAIN | libc::ENOMEM))
}

/// A signal's conventional name, with its number.
fn signal_name(signal: i32) -> String {
    let name = match signal {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGABRT => "SIGABRT",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGTERM => "SIGTERM",
        _ => return format!("signal {signal}"),
    };
    format!("{name} (signal {signal})")
}

/// The tail of `text`, at most `limit` bytes, cut on a character boundary.
fn tail(text: &str, limit: usize) -> &str {
    if text.len() <= limit {
        return text;
    }
    let mut start = text.len() - limit;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

fn failure_message(state: &str, what: &str, stderr: &str) -> String {
    let stderr = stderr.trim_end();
    if stderr.is_empty() {
        format!("script `{state}` {what} (its stderr was empty)")
    } else if stderr.len() > STDERR_EXCERPT_BYTES {
        format!(
            "script `{state}` {what}; the last {STDERR_EXCERPT_BYTES} bytes of its stderr:\n{}",
            tail(stderr, STDERR_EXCERPT_BYTES)
        )
    } else {
        format!("script `{state}` {what}; its stderr:\n{stderr}")
    }
}

/// Feeds output chunks to per-stream `<print>` extractors and publishes each print.
fn print_forwarder(bus: Arc<EventBus>, agent_id: AgentId) -> impl FnMut(Pipe, &str) {
    let extractors = Mutex::new((PrintExtractor::new(), PrintExtractor::new()));
    move |pipe, chunk| {
        let mut extractors = extractors.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let (extractor, stream) = match pipe {
            Pipe::Stdout => (&mut extractors.0, OutputStream::Stdout),
            Pipe::Stderr => (&mut extractors.1, OutputStream::Stderr),
        };
        for content in extractor.push(chunk) {
            bus.emit(Event::PrintOutput { agent_id: agent_id.clone(), stream, content });
        }
    }
}

async fn run_script_state(
    stubs: Option<&dyn ScriptStubs>,
    input: StepInput,
    context: &ExecutionContext,
) -> Result<ExecutionResult, StepFailure> {
    let agent = &input.agent;
    context.bus.emit(Event::StateStarted {
        agent_id: agent.id.clone(),
        state: agent.current_state.clone(),
        state_type: StateType::Script,
        step: input.step,
        attempt: input.attempt,
    });
    let started = Instant::now();
    let run = match stubs.and_then(|stubs| stubs.stub(agent)) {
        Some(Ok(run)) => {
            emit_output(context, &input, &run.stdout, &run.stderr, run.exit_code, started, BTreeMap::new());
            run
        }
        Some(Err(message)) => return Err(StepFailure::fatal(ErrorKind::ScriptError, message)),
        None => run_script_process(&input, context, started).await?,
    };
    finish_script_state(run, &input, context, started)
}

/// Run the state's script with bash and publish its output.
async fn run_script_process(
    input: &StepInput,
    context: &ExecutionContext,
    started: Instant,
) -> Result<ScriptRun, StepFailure> {
    let agent = &input.agent;
    let state: &str = &agent.current_state;
    let extension = crate::text::state_name::extension(state).to_ascii_lowercase();
    if extension != ".sh" {
        return Err(StepFailure::fatal(
            ErrorKind::ScriptError,
            format!("script `{state}` is a Windows script ({extension}) and cannot run on this platform"),
        ));
    }
    // The workflow is opened once for the step: the script's source and its timeout.
    let workflow = resolution::open(&agent.scope_dir)
        .map_err(|error| StepFailure::fatal(ErrorKind::ScriptError, error.to_string()))?;
    let source = workflow.script(state).map_err(|message| StepFailure::fatal(ErrorKind::ScriptError, message))?;
    let script_path = match source {
        ScriptSource::File(path) => path,
        ScriptSource::Inline(text) => write_inline_script(&context.inputs_dir, agent, &text).map_err(|error| {
            StepFailure::fatal(
                ErrorKind::ScriptError,
                format!("script `{state}` cannot run: cannot write it to {}: {error}", context.inputs_dir.display()),
            )
        })?,
    };

    if !agent.cwd.is_dir() {
        return Err(StepFailure::fatal(
            ErrorKind::ScriptError,
            format!(
                "script `{state}` cannot run: its working directory {} does not exist (an agent's directory comes from a tag's `cd=`; create it first)",
                agent.cwd.display()
            ),
        ));
    }
    let input_file = write_input_file(&context.inputs_dir, agent).map_err(|error| {
        if is_out_of_resources(&error) {
            return StepFailure::throttled(
                ErrorKind::ScriptError,
                format!("script `{state}` could not start yet: {error}"),
            );
        }
        StepFailure::fatal(
            ErrorKind::ScriptError,
            format!("script `{state}` cannot run: cannot write its input to {}: {error}", context.inputs_dir.display()),
        )
    })?;
    let results_file = write_results_file(&context.inputs_dir, agent).map_err(|error| {
        StepFailure::fatal(
            ErrorKind::ScriptError,
            format!(
                "script `{state}` cannot run: cannot write its join results to {}: {error}",
                context.inputs_dir.display()
            ),
        )
    })?;
    let env = script_environment(
        &context.environment,
        &context.run_id,
        agent,
        input_file.as_deref(),
        results_file.as_deref(),
    );
    let keep_background = script_head(&script_path).is_some_and(|head| keeps_background(&head));
    let timeout = context.timeout_for(&workflow, state);
    let command = ScriptCommand {
        program: BASH.clone(),
        args: vec![script_path.into_os_string()],
        cwd: agent.cwd.clone(),
        env: env.clone(),
        inactivity_timeout: timeout.limit,
        keep_background,
    };
    let forward_prints = print_forwarder(Arc::clone(&context.bus), agent.id.clone());
    let run = match run_script(command, forward_prints, context.stop.clone(), context.watchdog.as_ref()).await {
        Ok(run) => run,
        Err(ScriptProcessError::TimedOut { after, stdout, stderr }) => {
            emit_output(context, input, &stdout, &stderr, None, started, env);
            return Err(StepFailure::fatal(
                ErrorKind::ScriptTimeout,
                format!(
                    "script `{state}` produced no output for {} and was killed (timeout from {})",
                    crate::text::duration::seconds_phrase(after.as_secs_f64()),
                    timeout.source
                ),
            ));
        }
        Err(ScriptProcessError::Cancelled) => {
            return Err(StepFailure::fatal(
                ErrorKind::Cancelled,
                format!("script `{state}` was stopped before it finished"),
            ));
        }
        Err(ScriptProcessError::Spawn { source, .. }) if is_out_of_resources(&source) => {
            return Err(StepFailure::throttled(
                ErrorKind::ScriptError,
                format!("script `{state}` could not start yet: {source}"),
            ));
        }
        Err(error) => return Err(StepFailure::fatal(ErrorKind::ScriptError, format!("script `{state}` {error}"))),
    };
    emit_output(context, input, &run.stdout, &run.stderr, run.exit_code, started, env);
    Ok(run)
}

/// A script's run, real or stubbed → the step's transition (R7.7–R7.8).
fn finish_script_state(
    run: ScriptRun,
    input: &StepInput,
    context: &ExecutionContext,
    started: Instant,
) -> Result<ExecutionResult, StepFailure> {
    let agent = &input.agent;
    let state: &str = &agent.current_state;
    match (run.exit_code, run.signal) {
        (Some(0), _) => {}
        (Some(code), _) => {
            return Err(StepFailure::fatal(
                ErrorKind::ScriptError,
                failure_message(state, &format!("failed with exit code {code}"), &run.stderr),
            ));
        }
        (None, signal) => {
            let what = format!("was killed by {}", signal_name(signal.unwrap_or_default()));
            return Err(StepFailure::fatal(ErrorKind::ScriptError, failure_message(state, &what, &run.stderr)));
        }
    }

    let tags = scan(&run.stdout).map_err(|error| {
        StepFailure::fatal(
            ErrorKind::ParseError,
            format!("script `{state}` printed an invalid transition tag: {error}"),
        )
    })?;
    warn_ignored_attributes(context, agent, &tags);
    let caller = Caller { scope: &agent.scope_dir, url: agent.scope_url.as_deref(), baton_dir: &context.baton_dir };
    let mut transition = interpret(&tags, caller).map_err(|error| {
        let message = match &error {
            InterpretError::NoTag => {
                let hint = if scan(&run.stderr).is_ok_and(|tags| !tags.is_empty()) {
                    " (a tag was printed to stderr, but only stdout counts)"
                } else {
                    ""
                };
                format!("script `{state}` produced no transition tag in stdout{hint}")
            }
            InterpretError::MultipleTags { count } => {
                format!("script `{state}` produced {count} transition tags (expected 1)")
            }
            InterpretError::Resolve(error) => {
                format!("script `{state}`: cannot resolve its transition target: {error}")
            }
            InterpretError::Transition(error) => format!("script `{state}`: {error}"),
            InterpretError::InvalidMultiFork(reason) => {
                format!("script `{state}` produced an invalid multi-fork: {reason}")
            }
            InterpretError::CrossWorkflow { .. } => format!("script `{state}`: {error}"),
        };
        StepFailure::of_interpretation(&error, message)
    })?;
    // R3.41: a cross-workflow tag's input is a template, as in a prompt state (the
    // variables are built only for such a tag).
    transition.render_workflow_input(|input| render(input, &template_variables(context, agent)));

    context.bus.emit(Event::StateCompleted {
        agent_id: agent.id.clone(),
        state: agent.current_state.clone(),
        step: input.step,
        cost_usd: 0.0,
        total_cost_usd: input.total_cost_at_launch,
        session_id: agent.session_id.clone(),
        duration_ms: started.elapsed().as_millis() as u64,
        tokens: None,
    });
    Ok(ExecutionResult { transition, session_id: None, session_message: None, session_backend: None, cost_usd: 0.0 })
}

fn emit_output(
    context: &ExecutionContext,
    input: &StepInput,
    stdout: &str,
    stderr: &str,
    exit_code: Option<i32>,
    started: Instant,
    env_vars: BTreeMap<String, String>,
) {
    context.bus.emit(Event::ScriptOutput {
        agent_id: input.agent.id.clone(),
        state: input.agent.current_state.clone(),
        step: input.step,
        stdout: stdout.to_string(),
        stderr: stderr.to_string(),
        exit_code,
        execution_time_ms: started.elapsed().as_millis() as u64,
        env_vars,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_files_go_only_to_a_private_directory() {
        use std::os::unix::fs::PermissionsExt;
        let shared = tempfile::tempdir().unwrap();
        let private = private_dir_in(shared.path()).expect("created");
        assert_eq!(std::fs::metadata(&private).unwrap().permissions().mode() & 0o777, 0o700);
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(private_dir_in(shared.path()).as_ref(), Some(&private), "our own directory is closed again");
        assert_eq!(std::fs::metadata(&private).unwrap().permissions().mode() & 0o777, 0o700);
        std::fs::remove_dir(&private).unwrap();
        std::os::unix::fs::symlink(shared.path(), &private).unwrap();
        assert_eq!(private_dir_in(shared.path()), None, "a link planted by someone else");
    }

    #[test]
    fn tail_cuts_on_a_character_boundary() {
        assert_eq!(tail("abcdef", 3), "def");
        assert_eq!(tail("aé", 1), "");
        assert_eq!(tail("short", 100), "short");
    }
}
