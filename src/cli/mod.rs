//! The command-line front end: parse arguments, run one command, map the outcome
//! to an exit code (A7). Kept thin: everything a command does lives in the library
//! modules it calls, and `run` is what `main` and the tests call.

mod arguments;
mod breakpoints;
pub(crate) mod config;
mod convert_command;
mod diagram_command;
mod edit;
mod error;
mod execute;
mod gc_command;
mod init_config_command;
mod input_file;
mod lint_command;
mod list_command;
mod logs_command;
mod new_command;
mod otel_export;
mod raymond_form;
mod record_command;
mod repair_command;
mod report_command;
mod rerun_command;
mod resume_command;
mod run_command;
mod schema_command;
mod status_command;
mod test_command;
mod worker_command;

use std::ffi::OsString;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

pub(crate) use arguments::{Arguments, Command, ResumeArguments};
pub(crate) use error::CliError;

use crate::cli::config::Config;
use crate::exit_code;
use crate::process::watchdog::Watchdog;
use crate::store::runs::{RunStore, discover_baton_dir};

/// Run the command line `args` (including the program name) and return the exit code.
pub fn run(args: impl IntoIterator<Item = OsString>) -> i32 {
    let arguments = match Arguments::parse_from(raymond_form::translate(args.into_iter().collect())) {
        Ok(arguments) => arguments,
        Err(error) => {
            let _ = error.print();
            return if error.use_stderr() { exit_code::ERROR } else { exit_code::COMPLETED };
        }
    };
    match dispatch(arguments) {
        Ok(code) => code,
        // A reader that went away (`baton list | head`) is not an error worth a
        // message; exit as a process killed by SIGPIPE would.
        Err(CliError::Stdout { source }) if source.kind() == std::io::ErrorKind::BrokenPipe => exit_code::BROKEN_PIPE,
        Err(error) => {
            eprintln!("error: {error}");
            match error {
                CliError::Serve(crate::serve::ServeError::AlreadyServing { .. }) => exit_code::ALREADY_SERVING,
                CliError::Edit(edit::EditError::NotPaused { .. } | edit::EditError::Busy { .. }) => exit_code::CONFLICT,
                _ => exit_code::ERROR,
            }
        }
    }
}

fn dispatch(arguments: Arguments) -> Result<i32, CliError> {
    // Every command works on the project's `.baton` directory.
    let project = || -> Result<(PathBuf, RunStore), CliError> {
        let cwd = std::env::current_dir().map_err(|source| CliError::CurrentDir { source })?;
        let store = RunStore::new(baton_dir(arguments.global.baton_dir.as_deref(), &cwd));
        check_baton_dir(store.baton_dir())?;
        Ok((cwd, store))
    };
    match arguments.command {
        Command::List(list) => {
            init_tracing(false);
            list_command::list(&project()?.1, &list)
        }
        Command::Gc(gc) => {
            init_tracing(false);
            gc_command::gc(&project()?.1, &gc)
        }
        Command::Status(status) => {
            init_tracing(false);
            status_command::status(&project()?.1, &status.run_id, status.json, status.steps)
        }
        Command::Report { run_id, json } => {
            init_tracing(false);
            report_command::report_run(&project()?.1, &run_id, json)
        }
        Command::Logs(logs) => {
            init_tracing(false);
            logs_command::logs(&project()?.1, &logs)
        }
        Command::Repair(repair) => {
            init_tracing(false);
            repair_command::repair(&project()?.1, &repair.run_id)
        }
        Command::New { name, template } => {
            init_tracing(false);
            let cwd = std::env::current_dir().map_err(|source| CliError::CurrentDir { source })?;
            new_command::new_workflow(&cwd, &name, template)
        }
        Command::Convert { path, to, output, force } => {
            init_tracing(false);
            let cwd = std::env::current_dir().map_err(|source| CliError::CurrentDir { source })?;
            convert_command::convert(&cwd, &path, to, output.as_deref(), force)
        }
        Command::Lint { workflow, json, level } => {
            init_tracing(false);
            let cwd = std::env::current_dir().map_err(|source| CliError::CurrentDir { source })?;
            lint_command::lint(&cwd, &workflow, json, level)
        }
        Command::Diagram { workflow, format, output, run } => {
            init_tracing(false);
            let (cwd, store) = project()?;
            diagram_command::diagram(&cwd, &store, &workflow, format, output.as_deref(), run.as_deref())
        }
        Command::Test { record: Some(run_id), output, keep_scripts, .. } => {
            init_tracing(false);
            record_command::record_run(&project()?.1, &run_id, output.as_deref(), keep_scripts)
        }
        Command::Test { workflows, json, console, .. } => {
            init_tracing(false);
            let cwd = std::env::current_dir().map_err(|source| CliError::CurrentDir { source })?;
            runtime()?.block_on(test_command::test(&cwd, &workflows, json, console))
        }
        Command::Schema { kind } => schema_command::print_schema(kind),
        Command::Completion { shell } => {
            let mut command = <Arguments as clap::CommandFactory>::command();
            let mut stdout = std::io::stdout().lock();
            clap_complete::generate(shell, &mut command, "baton", &mut stdout);
            Ok(exit_code::COMPLETED)
        }
        Command::InitConfig => {
            init_tracing(false);
            init_config_command::init_config(&project()?.1)
        }
        Command::Run(mut run) => {
            input_file::take_input_file(&mut run.input, run.input_file.as_deref(), run.execution.on_ask)?;
            let (cwd, store) = project()?;
            let config = Config::load(store.baton_dir())?;
            init_tracing(run.execution.verbose || config.verbose.unwrap_or(false));
            config.warn_ignored();
            let watchdog = Watchdog::fork();
            block_on(run_command::run(store, &config, run, cwd, watchdog))?
        }
        Command::Resume(resume) => resume_run(project()?.1, resume),
        Command::Rerun(mut rerun) => {
            input_file::take_input_file(&mut rerun.input, rerun.input_file.as_deref(), rerun.execution.on_ask)?;
            let store = project()?.1;
            let config = Config::load(store.baton_dir())?;
            init_tracing(rerun.execution.verbose || config.verbose.unwrap_or(false));
            config.warn_ignored();
            let watchdog = Watchdog::fork();
            block_on(rerun_command::rerun(store, &config, rerun, watchdog))?
        }
        Command::Worker(arguments) => {
            init_tracing(false);
            worker_command::worker(arguments)
        }
        Command::Serve(serve) => {
            init_tracing(false);
            let (cwd, store) = project()?;
            let options = crate::serve::ServeOptions {
                bind: serve.bind,
                allow_remote: serve.allow_remote,
                roots: serve.root,
                open: serve.open,
                rotate_token: serve.rotate_token,
            };
            Ok(runtime()?.block_on(crate::serve::serve(cwd, store, options))?)
        }
        // `baton answer RUN TEXT` is `baton resume RUN --input TEXT`.
        Command::Answer(answer) => resume_run(project()?.1, answer.into_resume()),
    }
}

fn resume_run(store: RunStore, mut resume: ResumeArguments) -> Result<i32, CliError> {
    input_file::take_input_file(&mut resume.input, resume.input_file.as_deref(), resume.execution.on_ask)?;
    let config = Config::load(store.baton_dir())?;
    init_tracing(resume.execution.verbose || config.verbose.unwrap_or(false));
    config.warn_ignored();
    let watchdog = Watchdog::fork();
    block_on(resume_command::resume(store, &config, resume, watchdog))?
}

fn baton_dir(explicit: Option<&Path>, cwd: &Path) -> PathBuf {
    match explicit {
        Some(dir) if dir.is_absolute() => dir.to_path_buf(),
        Some(dir) => cwd.join(dir),
        None => discover_baton_dir(cwd),
    }
}

/// A `.baton` that is there must be a directory this user can read: a file named
/// by --baton-dir would otherwise read as a project with no runs.
fn check_baton_dir(baton_dir: &Path) -> Result<(), CliError> {
    match std::fs::read_dir(baton_dir) {
        Ok(_) => Ok(()),
        // A dangling symbolic link: creating the directory failed with "File exists".
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => match std::fs::read_link(baton_dir) {
            Ok(target) => Err(CliError::BatonDirDanglingLink { path: baton_dir.to_path_buf(), target }),
            Err(_) => Ok(()),
        },
        Err(error) if error.kind() == std::io::ErrorKind::NotADirectory => {
            Err(CliError::BatonDirNotADirectory { path: baton_dir.to_path_buf() })
        }
        Err(source) => Err(CliError::BatonDirUnreadable { path: baton_dir.to_path_buf(), source }),
    }
}

/// Run a workflow's future on this thread, then leave without joining the
/// blocking pool's idle threads.
///
/// The runtime has no worker threads. A step's task (`run::launch`) mostly waits,
/// on its process's pipes and exit, and then parses a few kilobytes; the loop that
/// joins them (`run::workflow_loop`) runs on this thread. On a multi-thread runtime
/// each of those wake-ups crossed threads: a worker saw the event, the task ran there,
/// and its completion woke this thread. On one thread the loop waits on epoll itself:
/// no hand-offs, and no threads to start. Measured side by side (`docs/benchmarks.md`,
/// issue 22's seventh and eighth rounds): 0.27 ms less for a one-state run (from fresh
/// copies of both binaries; their page cache's age alone moved it 0.7 ms), less per step on
/// chains (`loop`, `callstack`), and on 100 parallel workers on tmpfs up to 0.07 ms a
/// step more (within 0.01 ms over the longest round), where each spawn now holds the
/// one thread until the child reaches `exec`. The disk's work already runs on threads
/// of its own (the journal's syncer, the trace's writer), and `serve`, whose handlers
/// call `block_in_place`, keeps the multi-thread [`runtime`].
///
/// When the run's future returns, everything it wrote is durable and its steps'
/// processes are gone (`cli::execute`); waiting for blocking-pool threads to wind
/// down would only delay the exit.
fn block_on<F: Future>(future: F) -> Result<F::Output, CliError> {
    // The journal's syncer is woken when this thread waits, not mid-step.
    crate::idle_wake::block_on(future).map_err(|source| CliError::Runtime { source })
}

fn runtime() -> Result<tokio::runtime::Runtime, CliError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(worker_threads(std::env::var("TOKIO_WORKER_THREADS").ok().as_deref()))
        .enable_all()
        .build()
        .map_err(|source| CliError::Runtime { source })
}

/// Most worker threads a Baton runtime starts unless `TOKIO_WORKER_THREADS` says.
///
/// tokio starts one per core. Baton's threads mostly wait (on processes, pipes and
/// the disk; the work is in the steps' own processes), and 10,000 live agents run at
/// a flat cost per step on two cores (`docs/benchmarks.md`), so on a 64-core machine
/// the other 56 would be thread creations at every start and nothing else.
const MOST_WORKER_THREADS: usize = 8;

/// The runtime's worker threads: `TOKIO_WORKER_THREADS` (tokio's own variable) when it
/// is a positive number, else one per core the process may use, at most
/// [`MOST_WORKER_THREADS`].
fn worker_threads(requested: Option<&str>) -> usize {
    requested.and_then(|value| value.trim().parse::<usize>().ok()).filter(|threads| *threads > 0).unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZero::get).min(MOST_WORKER_THREADS)
    })
}

/// Diagnostics about Baton itself (observer failures and the like) go to stderr,
/// at the level `BATON_LOG` asks for (default: warnings; `verbose`: debug).
fn init_tracing(verbose: bool) {
    let default = if verbose { "debug" } else { "warn" };
    let filter = tracing_subscriber::EnvFilter::try_from_env("BATON_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worker_threads_follow_the_cores_up_to_a_cap_unless_tokio_worker_threads_says() {
        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        assert_eq!(worker_threads(None), cores.min(MOST_WORKER_THREADS));
        assert_eq!(worker_threads(Some("24")), 24);
        assert_eq!(worker_threads(Some(" 3 ")), 3);
        for ignored in ["0", "-2", "many", ""] {
            assert_eq!(worker_threads(Some(ignored)), cores.min(MOST_WORKER_THREADS), "{ignored:?}");
        }
    }
}
