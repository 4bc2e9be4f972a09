//! `baton status <RUN_ID>`: each agent's state, status, cwd and stack, the agents
//! that terminated with their results, and the run's totals. The state shown is
//! the snapshot with the journal replayed, so a live run shows its latest step.
//! `--json` prints that whole state.

use std::fmt::Write as _;
use std::io::Write;

use super::CliError;
use crate::model::agent::AgentStatus;
use crate::model::run_state::RunStatus;
use crate::observers::console::bound_reached;
use crate::store::lock::RunLock;
use crate::store::runs::RunStore;

pub(crate) fn status(store: &RunStore, run_id: &str, as_json: bool) -> Result<i32, CliError> {
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
    let _ = writeln!(text, "started: {}  updated: {}", run.created_at, run.updated_at);
    let budget = if run.budget_usd > 0.0 { format!(" of ${:.4}", run.budget_usd) } else { String::new() };
    let _ = writeln!(text, "steps: {}  cost: ${:.4}{budget}", run.steps_completed, run.total_cost_usd);
    if let Some(error) = &run.error {
        let _ = writeln!(text, "error: {}", error.replace('\n', "\n    "));
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
        };
        let _ = writeln!(text, "  {}  at {}  [{status}]", agent.id, agent.current_state);
        let _ = writeln!(text, "      cwd: {}", agent.cwd.display());
        if !agent.stack.is_empty() {
            let frames: Vec<&str> = agent.stack.iter().rev().map(|frame| &*frame.state).collect();
            let _ = writeln!(text, "      returns to: {}", frames.join(" <- "));
        }
        if let Some(session) = &agent.session_id {
            let _ = writeln!(text, "      session: {session}");
        }
        if let Some(error) = &agent.error {
            let _ = writeln!(text, "      error: {}", error.replace('\n', "\n        "));
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

fn print(text: &str) -> Result<i32, CliError> {
    std::io::stdout().lock().write_all(text.as_bytes()).map_err(|source| CliError::Stdout { source })?;
    Ok(0)
}
