//! `baton status <RUN_ID>`: each agent's state, status, cwd and stack, the agents
//! that terminated with their results, and the run's totals. The state shown is
//! the snapshot with the journal replayed, so a live run shows its latest step.
//! `--json` prints that whole state; `--steps` lists the steps `baton rerun` can
//! start from.

use std::fmt::Write as _;
use std::io::Write;

use super::CliError;
use crate::inspect::next_step;
use crate::model::agent::{Agent, AgentStatus};
use crate::model::run_state::{RunState, RunStatus};
use crate::observers::console::bound_reached;
use crate::store::lock::RunLock;
use crate::store::rerun::History;
use crate::store::runs::RunStore;

pub(crate) fn status(store: &RunStore, run_id: &str, as_json: bool, steps: bool) -> Result<i32, CliError> {
    if steps {
        return print(&rerun_steps(store, run_id)?);
    }
    let run = store.load(run_id)?;
    let mut text = String::new();
    if as_json {
        let json = serde_json::to_string_pretty(&run).unwrap_or_default();
        let _ = writeln!(text, "{json}");
        return print(&text);
    }
    let liveness = match (run.status, RunLock::holder(&store.run_dir(run_id))) {
        (RunStatus::Running, Some(pid)) => format!(" (driven by baton pid {pid})"),
        (RunStatus::Running, None) => {
            format!(" (but no baton is driving it: it was killed; continue with `baton resume {run_id}`)")
        }
        _ => String::new(),
    };
    let _ = writeln!(text, "run {}: {}{liveness}", run.run_id, run.status);
    let _ = writeln!(text, "workflow: {}", run.scope_dir.display());
    if let Some(origin) = &run.rerun_of {
        let _ = writeln!(text, "rerun of: {} from step {}", origin.run_id, origin.commit);
    }
    if let Some(engine) = &run.launch_params.engine {
        let files = run.launch_params.files.as_deref().unwrap_or("shared");
        let _ =
            writeln!(text, "engine: {engine} (files {files}; `baton report {}` names each step's worker)", run.run_id);
    }
    let _ = writeln!(text, "started: {}  updated: {}", run.created_at, run.updated_at);
    let budget = if run.budget_usd > 0.0 { format!(" of ${:.4}", run.budget_usd) } else { String::new() };
    let _ = writeln!(text, "steps: {}  cost: ${:.4}{budget}", run.steps_completed, run.total_cost_usd);
    if let Some(error) = &run.error {
        let _ = writeln!(text, "error: {}", error.replace('\n', "\n    "));
    }
    if !run.launch_params.breakpoints.is_empty() {
        let _ = writeln!(text, "breakpoints: {}", run.launch_params.breakpoints.described());
    }
    if let Some(bound) = &run.paused_by {
        let _ = writeln!(text, "paused: {}", bound_reached(bound, &run.run_id));
    }
    if !run.agents.is_empty() {
        let _ = writeln!(text, "agents:");
    }
    for agent in &run.agents {
        let status = match (agent.status, agent.pause_reason) {
            (AgentStatus::Paused, Some(reason)) => format!("paused ({reason})"),
            (AgentStatus::Paused, None) => "paused".to_string(),
            (AgentStatus::Active, _) if agent.queued => "queued".to_string(),
            (AgentStatus::Active, _) if agent.retry_count > 0 => {
                format!("active, {} failed attempts", agent.retry_count)
            }
            (AgentStatus::Active, _) => "active".to_string(),
            (AgentStatus::Asking, _) => match &agent.ask {
                Some(ask) => format!("asking ({}): {}", ask.id, ask.prompt.trim()),
                None => "asking".to_string(),
            },
            (AgentStatus::Joining, _) => joining(&run, agent),
        };
        let _ = writeln!(text, "  {}  at {}  [{status}]", agent.id, agent.current_state);
        let _ = writeln!(text, "      cwd: {}", agent.cwd.display());
        if !agent.stack.is_empty() {
            let frames: Vec<&str> = agent.stack.iter().rev().map(|frame| &*frame.state).collect();
            let _ = writeln!(text, "      returns to: {}", frames.join(" <- "));
        }
        // The backend of the agent's last prompt step is its session's: Claude's
        // sessions say nothing, as in every run before backends were chosen.
        if let Some(session) = &agent.session_id {
            let on = agent.session_backend.map(|backend| format!(" (on {backend})")).unwrap_or_default();
            let _ = writeln!(text, "      session: {session}{on}");
        }
        if let Some(error) = &agent.error {
            // A breakpoint is no error: it says where and why the agent stopped.
            let label = if agent.is_at_breakpoint() { "breakpoint" } else { "error" };
            let _ = writeln!(text, "      {label}: {}", error.replace('\n', "\n        "));
        }
        if agent.is_at_breakpoint() {
            next_of(&mut text, &run, agent);
        }
    }
    if !run.terminated.is_empty() {
        let _ = writeln!(text, "terminated:");
    }
    for agent in &run.terminated {
        let first_line = agent.result.trim().lines().next().unwrap_or("");
        let _ = writeln!(text, "  {}  result: {first_line}", agent.id);
    }
    print(&text)
}

/// How many lines of a stopped agent's next prompt or command `status` shows.
const NEXT_LINES: usize = 8;

/// A stopped agent's next step (`inspect::next_step`): its header and session, and
/// the head of its prompt or command; `baton logs --next` shows all of it.
fn next_of(text: &mut String, run: &RunState, agent: &Agent) {
    let next = match next_step::describe(run, agent) {
        Ok(next) => next,
        Err(reason) => {
            let _ = writeln!(text, "      next: cannot be shown: {reason}");
            return;
        }
    };
    for line in next.header.lines().skip(1) {
        let _ = writeln!(text, "      {line}");
    }
    if let Some(session) = &next.session {
        let _ = writeln!(text, "      session: {session}");
    }
    let _ = writeln!(text, "      {}:", if next.session.is_some() { "prompt" } else { "runs" });
    let lines: Vec<&str> = next.text.lines().collect();
    for line in lines.iter().take(NEXT_LINES) {
        let _ = writeln!(text, "        {line}");
    }
    if lines.len() > NEXT_LINES {
        let _ = writeln!(
            text,
            "        … {} more lines: `baton logs {} --next {}` shows it all",
            lines.len() - NEXT_LINES,
            run.run_id,
            agent.id
        );
    }
}

/// A joining agent's status: whom it still waits for, and where it goes on.
fn joining(run: &RunState, agent: &Agent) -> String {
    let Some(join) = &agent.join else { return "joining".to_string() };
    let waiting: Vec<&str> = join
        .workers
        .iter()
        .filter(|worker| run.agents.iter().any(|other| &other.id == *worker && other.status != AgentStatus::Paused))
        .map(|worker| &**worker)
        .collect();
    let timeout = join.deadline.as_ref().map(|deadline| format!(", until {deadline}")).unwrap_or_default();
    if waiting.is_empty() {
        return format!("joining, then {}: every worker has ended", join.next);
    }
    format!(
        "joining, then {}: waits for {} ({} of {} ended{timeout})",
        join.next,
        waiting.join(", "),
        join.workers.len() - waiting.len(),
        join.workers.len()
    )
}

/// `--steps`: the steps `baton rerun RUN --from STEP` can start from, as
/// `transitions.log` words them, each after its commit.
fn rerun_steps(store: &RunStore, run_id: &str) -> Result<String, CliError> {
    let history = History::read(&store.existing_run_dir(run_id)?)?;
    let mut text = String::new();
    let steps = history.steps();
    if steps.is_empty() {
        let _ = writeln!(text, "run {run_id} has no steps a rerun can start from");
    } else {
        let _ = writeln!(text, "steps of run {run_id} a rerun can start from (`baton rerun {run_id} --from STEP`):");
    }
    for (commit, step) in steps {
        let to = step.to_state.as_deref().unwrap_or("(terminated)");
        let _ = write!(text, "  {commit:>4}  {} {} -> {to} [{}]", step.agent_id, step.from_state, step.transition_type);
        for (key, value) in &step.metadata {
            let _ = write!(text, " {key}={value:?}");
        }
        text.push('\n');
    }
    if history.first() > 1 {
        let _ = writeln!(
            text,
            "steps before commit {} were compacted into state.json: their states are no longer on disk",
            history.first()
        );
    }
    Ok(text)
}

fn print(text: &str) -> Result<i32, CliError> {
    std::io::stdout().lock().write_all(text.as_bytes()).map_err(|source| CliError::Stdout { source })?;
    Ok(0)
}
