//! `baton list`: one line per run — id, status, age, cost, steps, workflow.

use std::io::Write;

use super::CliError;
use crate::model::run_state::RunState;
use crate::store::runs::RunStore;

pub(crate) fn list(store: &RunStore) -> Result<i32, CliError> {
    let mut lines = Vec::new();
    let now = jiff::Timestamp::now();
    // Readable runs oldest first (ties by id); unreadable ones after them, by id,
    // with the reason where the workflow would be.
    let (mut readable, unreadable): (Vec<_>, Vec<_>) = store.list().into_iter().partition(|(_, run)| run.is_ok());
    readable.sort_by(|(a_id, a), (b_id, b)| {
        let created = |run: &Result<RunState, _>| run.as_ref().map(|run| run.created_at.clone()).unwrap_or_default();
        created(a).cmp(&created(b)).then_with(|| a_id.cmp(b_id))
    });
    for (id, run) in readable.into_iter().chain(unreadable) {
        match run {
            Ok(run) => {
                let age = run.created_at.parse::<jiff::Timestamp>().map_or_else(|_| "?".to_string(), |t| age(now, t));
                lines.push(vec![
                    run.run_id.to_string(),
                    run.status.to_string(),
                    age,
                    format!("${:.4}", run.total_cost_usd),
                    run.steps_completed.to_string(),
                    run.scope_dir.display().to_string(),
                ]);
            }
            Err(error) => {
                let reason = error.to_string().replace('\n', " ");
                lines.push(vec![id, "unreadable".into(), "?".into(), "?".into(), "?".into(), reason]);
            }
        }
    }
    let mut stdout = std::io::stdout().lock();
    let write = |stdout: &mut std::io::StdoutLock<'_>, text: String| {
        stdout.write_all(text.as_bytes()).map_err(|source| CliError::Stdout { source })
    };
    if lines.is_empty() {
        eprintln!("no runs in {}", store.runs_dir().display());
        return Ok(0);
    }
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
        write(&mut stdout, format!("{}\n", text.trim_end()))?;
    }
    Ok(0)
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
