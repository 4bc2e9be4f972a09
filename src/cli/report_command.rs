//! `baton report RUN [--json]`: per state, per agent and in total, what a run
//! spent (`inspect::report`), as a table that fits 100 columns or as JSON
//! (`docs/inspecting.md`).

use std::fmt::Write as _;
use std::io::Write;

use super::CliError;
use crate::inspect::report::{Report, ReportDocument, StepFigures, report};
use crate::inspect::trace_file::{read_complete, trace_path};
use crate::model::run_state::RunState;
use crate::store::runs::RunStore;
use crate::text::count::count as counted;

pub(crate) fn report_run(store: &RunStore, run_id: &str, as_json: bool) -> Result<i32, CliError> {
    let run = store.load(run_id)?;
    let path = trace_path(&store.run_dir(run_id));
    let trace = read_complete(&path).map_err(|source| CliError::Trace { path: path.clone(), source })?;
    let figures = report(trace.lines());
    let text = if as_json {
        let document = ReportDocument::new(&run, &figures);
        format!("{}\n", serde_json::to_string_pretty(&document).unwrap_or_default())
    } else {
        render(&run, &figures)
    };
    std::io::stdout().lock().write_all(text.as_bytes()).map_err(|source| CliError::Stdout { source })?;
    Ok(0)
}

/// The report as text, every line at most 100 columns (state names are cut).
pub(crate) fn render(run: &RunState, report: &Report) -> String {
    let mut out = String::new();
    let totals = &report.totals;
    let _ = writeln!(out, "run {} ({}): {}", run.run_id, run.status, run.scope_dir.display());
    let _ = writeln!(
        out,
        "{} in {}, {}; tokens {} in, {} out, {} cache read; {}, {}",
        counted(totals.steps, "step", "steps"),
        duration(totals.wall_ms),
        dollars(totals.cost_usd),
        count(totals.tokens.input_tokens),
        count(totals.tokens.output_tokens),
        count(totals.tokens.cache_read_input_tokens),
        counted(totals.retries, "retry", "retries"),
        counted(totals.reminders, "reminder", "reminders")
    );
    if report.states.is_empty() {
        let _ = writeln!(out, "\nno steps recorded yet");
        return out;
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "{:<20} {:>6} {:>8} {:>8} {:>8} {:>8} {:>7} {:>9} {:>5} {:>6}",
        "STATE", "VISITS", "TIME", "MEDIAN", "MAX", "TOK IN", "TOK OUT", "COST", "RETRY", "REMIND"
    );
    for state in &report.states {
        let _ = writeln!(
            out,
            "{:<20} {:>6} {:>8} {:>8} {:>8} {:>8} {:>7} {:>9} {:>5} {:>6}",
            cut(&state.state, 20),
            state.visits,
            duration(state.duration_total_ms),
            duration(state.duration_median_ms),
            duration(state.duration_max_ms),
            count(state.tokens.input_tokens),
            count(state.tokens.output_tokens),
            dollars(state.cost_usd),
            state.retries,
            state.reminders
        );
    }
    let with_tools: Vec<_> = report.states.iter().filter(|state| !state.tools.is_empty()).collect();
    if !with_tools.is_empty() {
        let _ = writeln!(out, "\ntool calls");
        for state in with_tools {
            let tools: Vec<String> = state
                .tools
                .iter()
                .map(|(name, tool)| match tool.failures {
                    0 => format!("{name} {}", tool.calls),
                    failures => format!("{name} {} ({failures} failed)", tool.calls),
                })
                .collect();
            let _ = writeln!(out, "  {:<20} {}", cut(&state.state, 20), cut(&tools.join(", "), 77));
        }
    }
    let _ = writeln!(out, "\n{:<24} {:>6} {:>9}  RESULT", "AGENT", "STEPS", "COST");
    for agent in &report.agents {
        let result = agent
            .result
            .as_deref()
            .map_or("(running or stopped)".to_string(), |result| cut(result.trim().lines().next().unwrap_or(""), 57));
        let _ =
            writeln!(out, "{:<24} {:>6} {:>9}  {result}", cut(&agent.agent, 24), agent.steps, dollars(agent.cost_usd));
    }
    steps(&mut out, "slowest steps", &report.slowest_steps, |step| duration(step.duration_ms.unwrap_or(0)));
    steps(&mut out, "most expensive steps", &report.most_expensive_steps, |step| dollars(step.cost_usd));
    if report.unreadable_lines > 0 {
        let _ = writeln!(out, "\n{} trace lines could not be read and were skipped", report.unreadable_lines);
    }
    out
}

fn steps(out: &mut String, title: &str, steps: &[StepFigures], figure: impl Fn(&StepFigures) -> String) {
    if steps.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n{title}");
    for step in steps {
        let _ = writeln!(
            out,
            "  {:>9}  {} {} step {}",
            figure(step),
            cut(&step.agent, 24),
            cut(&step.state, 40),
            step.step
        );
    }
}

/// `text` cut to `width` characters, with `…` when cut.
fn cut(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(width.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// `850ms`, `12.3s`, `4m05s`, `2h03m`.
fn duration(ms: u64) -> String {
    match ms {
        0..1000 => format!("{ms}ms"),
        1000..60_000 => format!("{:.1}s", ms as f64 / 1000.0),
        60_000..3_600_000 => format!("{}m{:02}s", ms / 60_000, ms % 60_000 / 1000),
        _ => format!("{}h{:02}m", ms / 3_600_000, ms % 3_600_000 / 60_000),
    }
}

fn dollars(usd: f64) -> String {
    format!("${usd:.4}")
}

/// `1234567` → `1.2M`, `12345` → `12.3k`.
fn count(value: u64) -> String {
    match value {
        0..10_000 => value.to_string(),
        10_000..1_000_000 => format!("{:.1}k", value as f64 / 1000.0),
        _ => format!("{:.1}M", value as f64 / 1_000_000.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn figures_are_short() {
        assert_eq!(duration(850), "850ms");
        assert_eq!(duration(12_345), "12.3s");
        assert_eq!(duration(245_000), "4m05s");
        assert_eq!(count(12_345), "12.3k");
        assert_eq!(cut("abcdef", 4), "abc…");
    }
}
