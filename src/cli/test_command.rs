//! `baton test [WORKFLOW…] [--json]`: run workflows' tests offline
//! (`docs/testing.md`) and report one line per test, then `N passed, M failed`.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};

use super::CliError;
use crate::exit_code;
use crate::testing::discovery::{Found, TestFile, find_tests};
use crate::testing::runner::{Observed, check, run_test};
use crate::testing::spec::TestSpec;

/// One test's verdict.
struct Verdict {
    shown: String,
    description: Option<String>,
    /// Empty when the test passed.
    failures: Vec<String>,
    /// The line of the test file a mistake in it is on.
    line: Option<usize>,
    observed: Option<Observed>,
}

impl Verdict {
    fn problem(shown: String, message: String) -> Verdict {
        Verdict { shown, description: None, failures: vec![message], line: None, observed: None }
    }

    fn passed(&self) -> bool {
        self.failures.is_empty()
    }

    /// `PASS file: description` or `FAIL file: what went wrong; …`.
    fn line(&self) -> String {
        if self.passed() {
            match &self.description {
                Some(description) => format!("PASS {}: {description}", self.shown),
                None => format!("PASS {}", self.shown),
            }
        } else {
            // A mistake in the test file is placed in it: `file:3: …`.
            let place = match self.line {
                Some(line) => format!("{}:{line}", self.shown),
                None => self.shown.clone(),
            };
            // One line per test: a message's own line breaks (a script's stderr) become spaces.
            let failures = self.failures.join("; ");
            let failures: Vec<&str> = failures.lines().map(str::trim).filter(|line| !line.is_empty()).collect();
            format!("FAIL {place}: {}", failures.join(" "))
        }
    }

    fn json(&self) -> Value {
        let run = self.observed.as_ref().map(|observed| {
            json!({
                "outcome": observed.outcome,
                "detail": observed.detail,
                "result": observed.result,
                "path": observed.path,
                "visits": observed.visits,
                "steps": observed.steps,
                "cost_usd": observed.cost_usd,
            })
        });
        json!({
            "file": self.shown,
            "description": self.description,
            "passed": self.passed(),
            "failures": self.failures,
            "line": self.line,
            "run": run,
        })
    }
}

async fn run_one(test: &TestFile, console: bool) -> Verdict {
    let text = match std::fs::read_to_string(&test.path) {
        Ok(text) => text,
        Err(error) => return Verdict::problem(test.shown.clone(), format!("cannot read it: {error}")),
    };
    let spec = match TestSpec::parse(&text, &test.scope) {
        Ok(spec) => Arc::new(spec),
        Err(error) => {
            return Verdict { line: error.line, ..Verdict::problem(test.shown.clone(), error.message) };
        }
    };
    let description = spec.description.clone();
    if console {
        eprintln!("--- {}", test.shown);
    }
    match run_test(&test.scope, Arc::clone(&spec), console).await {
        Ok(observed) => Verdict {
            shown: test.shown.clone(),
            description,
            failures: check(&spec.expect, &observed),
            line: None,
            observed: Some(observed),
        },
        Err(message) => Verdict { description, ..Verdict::problem(test.shown.clone(), message) },
    }
}

pub(crate) async fn test(cwd: &Path, workflows: &[String], as_json: bool, console: bool) -> Result<i32, CliError> {
    let found = find_tests(workflows, cwd);
    if found.is_empty() && !as_json {
        eprintln!("no tests found: no workflow under . or ./states has a tests/ directory (docs/testing.md)");
    }
    let mut stdout = std::io::stdout().lock();
    let mut verdicts = Vec::new();
    // One after the other, in order: the output is the same on every run.
    for found in found {
        let verdict = match found {
            Found::Test(test) => run_one(&test, console).await,
            Found::Problem { shown, message } => Verdict::problem(shown, message),
        };
        if !as_json {
            writeln!(stdout, "{}", verdict.line()).map_err(|source| CliError::Stdout { source })?;
            stdout.flush().map_err(|source| CliError::Stdout { source })?;
        }
        verdicts.push(verdict);
    }
    let passed = verdicts.iter().filter(|verdict| verdict.passed()).count();
    let failed = verdicts.len() - passed;
    let written = if as_json {
        let document = json!({
            "tests": verdicts.iter().map(Verdict::json).collect::<Vec<_>>(),
            "passed": passed,
            "failed": failed,
        });
        writeln!(stdout, "{}", serde_json::to_string_pretty(&document).unwrap_or_default())
    } else {
        writeln!(stdout, "{passed} passed, {failed} failed")
    };
    written.map_err(|source| CliError::Stdout { source })?;
    Ok(if failed == 0 { exit_code::COMPLETED } else { exit_code::ERROR })
}
