//! `baton list [--json] [--status S] [--since AGE]`: one line per run — id,
//! status, age, cost, steps, workflow — or a JSON array for tools
//! (`docs/inspecting.md`).

use std::io::Write;

use serde::Serialize;

use super::CliError;
use super::arguments::ListArguments;
use crate::model::run_state::RunState;
use crate::store::lock::RunLock;
use crate::store::runs::{RunStore, StoreError};
use crate::text::duration::parse_duration;

/// One run as `--json` lists it.
#[derive(Serialize)]
struct JsonRun {
    run_id: String,
    /// A run status, or `unreadable`.
    status: String,
    /// Whether a baton process drives it now.
    live: bool,
    created_at: Option<String>,
    updated_at: Option<String>,
    cost_usd: Option<f64>,
    steps: Option<u64>,
    workflow: Option<String>,
    /// The run's error, or why its state cannot be read.
    error: Option<String>,
}

pub(crate) fn list(store: &RunStore, arguments: &ListArguments) -> Result<i32, CliError> {
    let now = jiff::Timestamp::now();
    let since = match &arguments.since {
        Some(text) => Some(parse_duration(text).map_err(|error| CliError::InvalidValue {
            flag: "since",
            value: text.clone(),
            expected: error.to_string(),
        })?),
        None => None,
    };
    let wanted = |run: &Result<RunState, StoreError>| {
        let Ok(run) = run else { return arguments.status.is_none() && since.is_none() };
        let status = arguments.status.is_none_or(|wanted| wanted == run.status);
        let recent = since.is_none_or(|since| {
            run.created_at.parse::<jiff::Timestamp>().is_ok_and(|created| {
                now.as_second().saturating_sub(created.as_second())
                    <= i64::try_from(since.as_secs()).unwrap_or(i64::MAX)
            })
        });
        status && recent
    };
    let runs: Vec<_> = store.list_in_order().into_iter().filter(|(_, run)| wanted(run)).collect();
    let mut stdout = std::io::stdout().lock();
    if arguments.json {
        let listed: Vec<JsonRun> = runs.iter().map(|(id, run)| json_run(store, id, run)).collect();
        let text = serde_json::to_string_pretty(&listed).unwrap_or_default();
        return writeln!(stdout, "{text}").map(|()| 0).map_err(|source| CliError::Stdout { source });
    }
    if runs.is_empty() {
        eprintln!("no runs in {}", store.runs_dir().display());
        return Ok(0);
    }
    let lines: Vec<Vec<String>> = runs.iter().map(|(id, run)| table_row(now, id, run)).collect();
    let header = ["RUN", "STATUS", "AGE", "COST", "STEPS", "WORKFLOW"].map(String::from).to_vec();
    let mut widths = vec![0; header.len()];
    for row in std::iter::once(&header).chain(&lines) {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    for row in std::iter::once(&header).chain(&lines) {
        let mut text = String::new();
        for (index, (cell, width)) in row.iter().zip(&widths).enumerate() {
            if index + 1 == row.len() {
                text.push_str(cell);
            } else {
                text.push_str(&format!("{cell:<width$}  "));
            }
        }
        writeln!(stdout, "{}", text.trim_end()).map_err(|source| CliError::Stdout { source })?;
    }
    Ok(0)
}

fn table_row(now: jiff::Timestamp, id: &str, run: &Result<RunState, StoreError>) -> Vec<String> {
    match run {
        Ok(run) => {
            let age = run.created_at.parse::<jiff::Timestamp>().map_or_else(|_| "?".to_string(), |t| age(now, t));
            vec![
                run.run_id.to_string(),
                run.status.to_string(),
                age,
                format!("${:.4}", run.total_cost_usd),
                run.steps_completed.to_string(),
                run.scope_dir.display().to_string(),
            ]
        }
        Err(error) => {
            let reason = error.to_string().replace('\n', " ");
            vec![id.to_string(), "unreadable".into(), "?".into(), "?".into(), "?".into(), reason]
        }
    }
}

fn json_run(store: &RunStore, id: &str, run: &Result<RunState, StoreError>) -> JsonRun {
    let live = RunLock::holder(&store.run_dir(id)).is_some();
    match run {
        Ok(run) => JsonRun {
            run_id: run.run_id.to_string(),
            status: run.status.to_string(),
            live,
            created_at: Some(run.created_at.clone()),
            updated_at: Some(run.updated_at.clone()),
            cost_usd: Some(run.total_cost_usd),
            steps: Some(run.steps_completed),
            workflow: Some(run.scope_dir.display().to_string()),
            error: run.error.clone(),
        },
        Err(error) => JsonRun {
            run_id: id.to_string(),
            status: "unreadable".into(),
            live,
            created_at: None,
            updated_at: None,
            cost_usd: None,
            steps: None,
            workflow: None,
            error: Some(error.to_string()),
        },
    }
}

/// A compact age: `42s`, `5m`, `3h`, `2d`.
fn age(now: jiff::Timestamp, then: jiff::Timestamp) -> String {
    let seconds = now.as_second().saturating_sub(then.as_second()).max(0);
    match seconds {
        0..60 => format!("{seconds}s"),
        60..3600 => format!("{}m", seconds / 60),
        3600..86400 => format!("{}h", seconds / 3600),
        _ => format!("{}d", seconds / 86400),
    }
}
