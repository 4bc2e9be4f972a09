//! `baton lint WORKFLOW [--json] [--level info|warning|error]`: the findings of
//! `lint`, one per line as `file:line:col: severity[check]: message`, or as the
//! JSON document `docs/lint.md` specifies. Exit 1 when any finding is an error
//! (whatever `--level` shows), 0 otherwise.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::ValueEnum;
use serde::Serialize;

use crate::cli::CliError;
use crate::exit_code;
use crate::lint::check::Severity;
use crate::lint::diagnostic::{Diagnostic, Summary};
use crate::workflow::scope::ScopeKind;
use crate::workflow::target::{clean_lexically, interpret};

/// The least severe finding shown.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub(crate) enum Level {
    Info,
    #[default]
    Warning,
    Error,
}

impl Level {
    fn shows(self, severity: Severity) -> bool {
        let least = match self {
            Level::Info => Severity::Info,
            Level::Warning => Severity::Warning,
            Level::Error => Severity::Error,
        };
        severity <= least
    }
}

/// Version of the `--json` document; raised only for changes that are not additions.
const JSON_SCHEMA_VERSION: u32 = 1;

#[derive(Serialize)]
struct JsonReport<'a> {
    schema: u32,
    workflow: &'a str,
    diagnostics: Vec<&'a Diagnostic>,
    summary: Summary,
}

pub(crate) fn lint(cwd: &Path, argument: &str, json: bool, level: Level) -> Result<i32, CliError> {
    let scope = lint_scope(cwd, argument)?;
    // The workflow as the user wrote it, or, for a state file, the workflow it is in.
    let trimmed = argument.trim_end_matches('/');
    let label = if clean_lexically(&cwd.join(argument)) == scope && !trimmed.is_empty() {
        trimmed.to_string()
    } else {
        crate::lint::shown(&scope)
    };
    let label = label.as_str();
    let diagnostics = crate::lint::lint(&scope, label).map_err(|error| CliError::Workflow(error.into()))?;
    let mut stdout = std::io::stdout().lock();
    let written = if json {
        let report = JsonReport {
            schema: JSON_SCHEMA_VERSION,
            workflow: label,
            diagnostics: diagnostics.iter().filter(|diagnostic| level.shows(diagnostic.severity)).collect(),
            summary: Summary::of(&diagnostics),
        };
        let text = serde_json::to_string_pretty(&report).unwrap_or_default();
        writeln!(stdout, "{text}")
    } else {
        write_text(&mut stdout, label, &diagnostics, level)
    };
    written.map_err(|source| CliError::Stdout { source })?;
    let failed = diagnostics.iter().any(|diagnostic| diagnostic.severity == Severity::Error);
    Ok(if failed { exit_code::ERROR } else { exit_code::COMPLETED })
}

/// The findings as lines, then a summary that also counts what `level` hides.
pub(crate) fn write_text(
    out: &mut impl Write,
    label: &str,
    diagnostics: &[Diagnostic],
    level: Level,
) -> std::io::Result<()> {
    let shown: Vec<&Diagnostic> = diagnostics.iter().filter(|diagnostic| level.shows(diagnostic.severity)).collect();
    for diagnostic in &shown {
        writeln!(out, "{}", finding(diagnostic))?;
    }
    if diagnostics.is_empty() {
        return writeln!(out, "{label}: no issues found");
    }
    let hidden = diagnostics.len() - shown.len();
    let hidden = match hidden {
        0 => String::new(),
        count => format!(" ({count} not shown; --level info shows all)"),
    };
    writeln!(out, "{label}: {}{hidden}", Summary::of(diagnostics).words())
}

/// One finding as a line: `file:line:col: severity[check]: message`.
pub(crate) fn finding(diagnostic: &Diagnostic) -> String {
    format!("{}: {}[{}]: {}", diagnostic.place(), diagnostic.severity, diagnostic.check, diagnostic.message)
}

/// The workflow `argument` names: a directory, a YAML or zip file, or the
/// workflow a state file is in. A directory needs no entry point here; its
/// absence is a finding, not a reason to refuse.
pub(crate) fn lint_scope(cwd: &Path, argument: &str) -> Result<PathBuf, CliError> {
    let path = clean_lexically(&cwd.join(argument));
    if path.is_dir() || (path.is_file() && ScopeKind::of(&path).is_packed()) {
        return Ok(path);
    }
    // A state file, or a state in a YAML or zip workflow: the workflow it is in.
    let target = interpret(argument, cwd)?;
    Ok(target.scope_dir)
}
