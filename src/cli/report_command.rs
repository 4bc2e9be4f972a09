//! `baton report RUN [--json]`: per state, per agent and in total, what a run
//! spent (`inspect::report`), as a table that fits 100 columns or as JSON
//! (`docs/inspecting.md`).

use std::fmt::Write as _;
use std::io::Write;

use super::CliError;
use crate::ids::BackendName;
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
    // A run on Claude alone reads as it always has; one that used another
    // backend says what each spent.
    let mixed = report.backends.iter().any(|figures| figures.backend != BackendName::Claude);
    if mixed {
        let _ = writeln!(out, "\n{:<20} {:>6} {:>9} {:>8} {:>7}", "BACKEND", "STEPS", "COST", "TOK IN", "TOK OUT");
        for figures in &report.backends {
            let _ = writeln!(
                out,
                "{:<20} {:>6} {:>9} {:>8} {:>7}",
                figures.backend.as_str(),
                figures.steps,
                dollars(figures.cost_usd),
                count(figures.tokens.input_tokens),
                count(figures.tokens.output_tokens)
            );
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
    if !report.workers.is_empty() {
        let _ = writeln!(out, "\n{:<24} {:>6}", "WORKER", "STEPS");
        for figures in &report.workers {
            let _ = writeln!(out, "{:<24} {:>6}", cut(&figures.worker, 24), figures.steps);
        }
    }
    let time = |step: &StepFigures| duration(step.duration_ms.unwrap_or(0));
    steps(&mut out, "slowest steps", &report.slowest_steps, mixed, time);
    steps(&mut out, "most expensive steps", &report.most_expensive_steps, mixed, |step| dollars(step.cost_usd));
    if !report.edits.is_empty() {
        let _ = writeln!(out, "\nedited by hand (this history is not the workflow's alone):");
        for edit in &report.edits {
            let _ = writeln!(out, "  {} before {}: {} (by {})", edit.agent, cut(&edit.state, 40), edit.field, edit.by);
        }
    }
    if report.unreadable_lines > 0 {
        let _ = writeln!(out, "\n{} trace lines could not be read and were skipped", report.unreadable_lines);
    }
    out
}

/// A list of steps; with `backends`, each prompt step says its backend and model.
fn steps(
    out: &mut String,
    title: &str,
    steps: &[StepFigures],
    backends: bool,
    figure: impl Fn(&StepFigures) -> String,
) {
    if steps.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n{title}");
    for step in steps {
        let on = match (&step.backend, backends) {
            (Some(backend), true) => format!(" ({})", backend_and_model(*backend, step.model.as_deref())),
            _ => String::new(),
        };
        let on = match &step.worker {
            Some(worker) => format!("{on} on {}", cut(worker, 24)),
            None => on,
        };
        let _ = writeln!(
            out,
            "  {:>9}  {} {} step {}{on}",
            figure(step),
            cut(&step.agent, 24),
            cut(&step.state, 40),
            step.step
        );
    }
}

/// `codex gpt-5`, or `pi` when the CLI chose its own model.
fn backend_and_model(backend: BackendName, model: Option<&str>) -> String {
    match model.filter(|model| !model.is_empty()) {
        Some(model) => format!("{backend} {}", cut(model, 24)),
        None => backend.to_string(),
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

    #[test]
    fn a_run_that_used_another_backend_says_what_each_spent_and_where_each_step_ran() {
        use crate::model::agent::Agent;
        use crate::model::run_state::{LaunchParams, NewRun};
        let main = Agent::main("PLAN.md".into(), "/wf".into(), "/p".into(), "/t".into());
        let run = RunState::new(NewRun {
            run_id: "mixed".into(),
            scope_dir: "/wf".into(),
            scope_url: None,
            initial_state: "PLAN.md".into(),
            launch_cwd: "/p".into(),
            budget_usd: 0.0,
            main,
            launch_params: LaunchParams::default(),
        });
        let trace = crate::inspect::report::tests::mixed_trace();
        let text = render(&run, &report(trace.iter().map(String::as_str)));
        let backends = text.split("\n\nAGENT").next().and_then(|head| head.split("\n\nBACKEND").nth(1));
        assert_eq!(
            backends,
            Some(
                "               STEPS      COST   TOK IN TOK OUT\n\
                 claude                    1   $0.0100      100      20\n\
                 codex                     1   $0.0300      500      50"
            )
        );
        let slowest = text.split("slowest steps\n").nth(1).and_then(|rest| rest.split("\n\n").next());
        assert_eq!(
            slowest,
            Some(
                "       2.0s  main REVIEW.md step 2 (codex gpt-5)\n\
                 \x20      1.0s  main PLAN.md step 1 (claude sonnet)\n\
                 \x20       5ms  main DONE.sh step 3"
            )
        );
    }
}
