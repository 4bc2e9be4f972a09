//! `baton list`: one line per run — id, status, age, cost, steps, workflow.

use std::io::Write;

use super::CliError;
use crate::store::runs::RunStore;

pub(crate) fn list(store: &RunStore) -> Result<i32, CliError> {
    let mut lines = Vec::new();
    let now = jiff::Timestamp::now();
    let mut runs: Vec<_> = store.list();
    runs.sort_by(|a, b| match (a, b) {
        (Ok(a), Ok(b)) => a.created_at.cmp(&b.created_at),
        _ => std::cmp::Ordering::Equal,
    });
    for run in runs {
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
            Err(error) => eprintln!("warning: {error}"),
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
