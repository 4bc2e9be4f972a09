//! `baton diagram WORKFLOW [--format mermaid|dot|html] [--output FILE] [--run RUN]`:
//! the workflow's graph (`diagram`), optionally with what a run did drawn over
//! it, to stdout or a file. What the graph cannot show faithfully (an unreadable
//! state, a transition to no state) is a `warning:` line on stderr.

use std::io::Write;
use std::path::Path;

use clap::ValueEnum;

use crate::cli::CliError;
use crate::cli::lint_command::lint_scope;
use crate::diagram::overlay::Overlay;
use crate::diagram::{self, dot, html, mermaid};
use crate::exit_code;
use crate::lint::source::LintedWorkflow;
use crate::store::runs::RunStore;
use crate::workflow::resolution::{Platform, entry_point_in_listing};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    #[default]
    Mermaid,
    Dot,
    Html,
}

pub(crate) fn diagram(
    cwd: &Path,
    store: &RunStore,
    argument: &str,
    format: Format,
    output: Option<&Path>,
    run: Option<&str>,
) -> Result<i32, CliError> {
    let label = argument.trim_end_matches('/');
    let label = if label.is_empty() { argument } else { label };
    let scope = lint_scope(cwd, argument)?;
    let workflow = LintedWorkflow::open(&scope, label.to_string()).map_err(|error| CliError::Workflow(error.into()))?;
    // A workflow no run can enter (no `START`, or two) is what lint calls an error:
    // drawing it would show an empty or headless chart and say all is well.
    entry_point_in_listing(&workflow.all_files, &workflow.label, Platform::CURRENT)
        .map_err(|error| CliError::Workflow(error.into()))?;
    let overlay = run.map(|run_id| Overlay::load(store, run_id)).transpose()?;
    let mut drawn = diagram::build(&workflow);
    if let Some(overlay) = &overlay {
        overlay.apply(&mut drawn);
    }
    for warning in &drawn.warnings {
        eprintln!("warning: {warning}");
    }
    let text = match format {
        Format::Mermaid => mermaid::render(&drawn),
        Format::Dot => dot::render(&drawn),
        Format::Html => html::render(&drawn, label),
    };
    match output {
        Some(path) => {
            std::fs::write(path, text).map_err(|source| CliError::DiagramWrite { path: path.to_path_buf(), source })?
        }
        None => {
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(text.as_bytes()).map_err(|source| CliError::Stdout { source })?;
        }
    }
    Ok(exit_code::COMPLETED)
}
