//! One finding of `baton lint`: which check, where (the file a person opens, and
//! the line and column in it), what is wrong, the text at fault and a better
//! spelling when one is close. It is also the JSON schema of `--json`
//! (`docs/lint.md`), so fields are only ever added.

use serde::Serialize;

use crate::lint::check::{Check, Severity};

/// Where in which file; line and column count from 1.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Location {
    pub(crate) file: String,
    pub(crate) line: Option<usize>,
    pub(crate) column: Option<usize>,
}

impl Location {
    pub(crate) fn file(file: impl Into<String>) -> Location {
        Location { file: file.into(), line: None, column: None }
    }

    pub(crate) fn at(file: impl Into<String>, line: usize, column: usize) -> Location {
        Location { file: file.into(), line: Some(line), column: Some(column) }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub(crate) struct Diagnostic {
    pub(crate) check: Check,
    pub(crate) severity: Severity,
    pub(crate) file: String,
    pub(crate) line: Option<usize>,
    pub(crate) column: Option<usize>,
    /// The workflow the finding is in (a directory, YAML or zip file), as given
    /// or relative to the current directory.
    pub(crate) workflow: String,
    /// The state file the finding is about, when it is about one.
    pub(crate) state: Option<String>,
    pub(crate) message: String,
    /// The offending text as written (a target, a field, a value).
    pub(crate) found: Option<String>,
    /// What was probably meant.
    pub(crate) suggestion: Option<String>,
}

impl Diagnostic {
    pub(crate) fn new(check: Check, workflow: &str, at: Location, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            check,
            severity: check.severity(),
            file: at.file,
            line: at.line,
            column: at.column,
            workflow: workflow.to_string(),
            state: None,
            message: message.into(),
            found: None,
            suggestion: None,
        }
    }

    pub(crate) fn state(mut self, state: &str) -> Diagnostic {
        self.state = Some(state.to_string());
        self
    }

    pub(crate) fn found(mut self, found: &str) -> Diagnostic {
        self.found = Some(found.to_string());
        self
    }

    pub(crate) fn suggestion(mut self, suggestion: Option<String>) -> Diagnostic {
        self.suggestion = suggestion;
        self
    }

    /// `file:line:col`, as editors and terminals link it.
    pub(crate) fn place(&self) -> String {
        match (self.line, self.column) {
            (Some(line), Some(column)) => format!("{}:{line}:{column}", self.file),
            (Some(line), None) => format!("{}:{line}", self.file),
            _ => self.file.clone(),
        }
    }
}

/// How many findings of each severity (`baton lint`'s summary line and `--json`,
/// and the daemon's workflow list).
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub(crate) struct Summary {
    pub(crate) errors: usize,
    pub(crate) warnings: usize,
    pub(crate) info: usize,
}

impl Summary {
    pub(crate) fn of(diagnostics: &[Diagnostic]) -> Summary {
        let mut summary = Summary::default();
        for diagnostic in diagnostics {
            match diagnostic.severity {
                Severity::Error => summary.errors += 1,
                Severity::Warning => summary.warnings += 1,
                Severity::Info => summary.info += 1,
            }
        }
        summary
    }

    /// `2 errors, 1 warning, 3 info`; the zero counts left out.
    pub(crate) fn words(&self) -> String {
        let plural = |count: usize, one: &str, many: &str| format!("{count} {}", if count == 1 { one } else { many });
        [
            (self.errors, plural(self.errors, "error", "errors")),
            (self.warnings, plural(self.warnings, "warning", "warnings")),
            (self.info, format!("{} info", self.info)),
        ]
        .into_iter()
        .filter(|(count, _)| *count > 0)
        .map(|(_, words)| words)
        .collect::<Vec<_>>()
        .join(", ")
    }
}
