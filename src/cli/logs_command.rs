//! `baton logs RUN [--follow] [--agent A] [--state S] [--step N] [--raw]`: a run's
//! trace as the console showed it (`inspect::logs`), one step in full
//! (`inspect::transcript`), or the trace lines themselves (`docs/inspecting.md`).
//!
//! Reading never writes: the trace is opened read-only, and `--follow` only polls
//! it (every [`POLL`]) and asks the run's lock whether a baton still drives the run.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use super::CliError;
use super::arguments::LogsArguments;
use crate::inspect::logs::{Filter, LogView};
use crate::inspect::next_step;
use crate::inspect::trace_file::{TraceTail, read_complete, trace_path};
use crate::inspect::transcript::StepCollector;
use crate::model::run_state::RunStatus;
use crate::store::lock::RunLock;
use crate::store::runs::RunStore;

/// How often `--follow` looks for new lines.
const POLL: Duration = Duration::from_millis(100);

/// How long `--follow` waits for a driver before deciding that a run whose state
/// still says `running` was killed: a run just created takes its lock a moment later.
const DRIVER_GRACE: Duration = Duration::from_secs(5);

pub(crate) fn logs(store: &RunStore, arguments: &LogsArguments) -> Result<i32, CliError> {
    let run_id = arguments.run_id.as_str();
    if let Some(agent) = &arguments.next {
        return show_next(store, run_id, agent);
    }
    let run_dir = store.existing_run_dir(run_id)?;
    let path = trace_path(&run_dir);
    let colour = std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    if let Some(step) = arguments.step {
        return show_step(run_id, &path, arguments, step, colour);
    }
    let filter = Filter { agent: arguments.agent.clone(), state: arguments.state.clone() };
    let mut view = LogView::new(filter, arguments.raw, colour);
    let mut tail = TraceTail::new(path.clone());
    let mut stdout = std::io::stdout().lock();
    let mut driverless_since: Option<Instant> = None;
    let mut first_read = true;
    loop {
        // Asked before reading: once no baton drives the run, the read gets its last lines.
        let driven = arguments.follow && RunLock::holder(&run_dir).is_some();
        let lines = tail.read_new().map_err(|source| CliError::Trace { path: path.clone(), source })?;
        let text: String = lines.lines().filter(|line| !line.is_empty()).map(|line| view.line(line)).collect();
        // An agent the whole trace does not know is a mistake, like an unknown step;
        // only a live run followed may still fork it.
        if first_read && !driven && path.exists() {
            check_agent(run_id, arguments, &view)?;
        }
        first_read = false;
        stdout
            .write_all(text.as_bytes())
            .and_then(|()| stdout.flush())
            .map_err(|source| CliError::Stdout { source })?;
        if !arguments.follow {
            break;
        }
        if driven {
            driverless_since = None;
        } else if view.ended() || stopped(store, run_id) {
            break;
        } else if driverless_since.get_or_insert_with(Instant::now).elapsed() >= DRIVER_GRACE {
            eprintln!(
                "note: no baton drives run `{run_id}`, yet it did not end (it was killed); `baton resume {run_id}` \
                 continues it"
            );
            break;
        }
        std::thread::sleep(POLL);
    }
    notes(run_id, &path, arguments, &view);
    Ok(0)
}

/// `--next A`: what agent A runs next, in full (`inspect::next_step`).
fn show_next(store: &RunStore, run_id: &str, agent: &str) -> Result<i32, CliError> {
    let run = store.load(run_id)?;
    let wanted = crate::ids::AgentId::from(agent);
    let Some(found) = run.agents.iter().find(|candidate| candidate.id == wanted) else {
        return Err(super::edit::no_such_agent(&run, &wanted));
    };
    let text = match next_step::describe(&run, found) {
        Ok(next) => next.full(),
        Err(reason) => format!("agent {agent} runs {} next, which cannot be shown: {reason}\n", found.current_state),
    };
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()).map_err(|source| CliError::Stdout { source })?;
    Ok(0)
}

/// Whether the run's state says it is not running (a trace can lack the final
/// line: `--no-debug`, or a disk that filled up).
fn stopped(store: &RunStore, run_id: &str) -> bool {
    store.load(run_id).is_ok_and(|run| run.status != RunStatus::Running)
}

/// `--agent A` names an agent of the run (the trace's agents), else an error with a
/// did-you-mean.
fn check_agent(run_id: &str, arguments: &LogsArguments, view: &LogView) -> Result<(), CliError> {
    let Some(agent) = &arguments.agent else { return Ok(()) };
    let known = view.agents();
    if known.is_empty() || known.contains(agent) {
        return Ok(());
    }
    let suggestion = crate::text::suggestion::did_you_mean(agent, known.iter().map(String::as_str))
        .map(|near| format!(" (did you mean `{near}`?)"))
        .unwrap_or_default();
    Err(CliError::NoSuchAgent {
        run_id: run_id.to_string(),
        agent: agent.clone(),
        suggestion,
        known: known.iter().map(String::as_str).collect::<Vec<_>>().join(", "),
    })
}

/// What a reader should know about output that may look short.
fn notes(run_id: &str, path: &Path, arguments: &LogsArguments, view: &LogView) {
    if !path.exists() {
        eprintln!("note: run `{run_id}` has no trace ({}): it ran with --no-debug", path.display());
        return;
    }
    if view.unreadable_lines() > 0 && !arguments.raw {
        eprintln!("note: {} trace lines were no event this baton knows and were skipped", view.unreadable_lines());
    }
    if let Some(agent) = &arguments.agent
        && !view.agents().contains(agent)
    {
        let known = view.agents().iter().map(String::as_str).collect::<Vec<_>>().join(", ");
        eprintln!("note: run `{run_id}` has no agent `{agent}`; its agents are: {known}");
    }
}

fn show_step(run_id: &str, path: &Path, arguments: &LogsArguments, step: u64, colour: bool) -> Result<i32, CliError> {
    let agent = arguments.agent.as_deref().unwrap_or("main");
    let trace = read_complete(path).map_err(|source| CliError::Trace { path: path.to_path_buf(), source })?;
    let mut collector = StepCollector::new(agent, step);
    for line in trace.lines().filter(|line| !line.is_empty()) {
        collector.add(line);
    }
    if !collector.found() {
        let valid = collector.what_exists(" (pick one with --agent)");
        return Err(CliError::NoSuchStep { run_id: run_id.to_string(), agent: agent.to_string(), step, valid });
    }
    let text = if arguments.raw {
        collector.raw_lines().map(|line| format!("{line}\n")).collect()
    } else {
        collector.render(colour)
    };
    std::io::stdout().lock().write_all(text.as_bytes()).map_err(|source| CliError::Stdout { source })?;
    Ok(0)
}
