//! Markdown (prompt) states run through the fake Claude CLI
//! (`fixtures/fake-claude/claude`, driven by `support::fake_claude`): templates,
//! sessions, policies and reminders, budget, errors and retries, argv
//! (docs/format.md §16 items 20–23, 31–44, 54–55; A1, A2, A15).
//!
//! Each state's body carries a marker such as `[[C]]`, so a rule can answer that
//! state and a recorded call can be attributed to it.

use crate::conformance::common;

mod argv;
mod budget;
mod errors;
mod output;
mod policy;
mod sessions;
mod templates;

use crate::support::fake_claude::{Call, FakeClaude};
use crate::support::{Outcome, Test};

/// The fake CLI's records for `test`'s project.
pub(crate) fn fake(test: &Test) -> FakeClaude {
    FakeClaude::at(test.root())
}

/// Every call the fake CLI received during the outcome's run(s).
pub(crate) fn calls(outcome: &Outcome) -> Vec<Call> {
    FakeClaude::at(outcome.root()).calls()
}

/// The calls whose prompt contains `marker`, in order.
pub(crate) fn calls_for(outcome: &Outcome, marker: &str) -> Vec<Call> {
    calls(outcome).into_iter().filter(|call| call.prompt.contains(marker)).collect()
}

/// How a call continues a conversation: `fresh`, `resume S`, `resume S fork`, or `continue fork`.
pub(crate) fn session_of(call: &Call) -> String {
    let fork = if call.has("--fork-session") { " fork" } else { "" };
    match call.flag("--resume") {
        Some(session) => format!("resume {session}{fork}"),
        None if call.has("-c") => format!("continue{fork}"),
        None => format!("fresh{fork}"),
    }
}

/// A prompt file whose frontmatter is `yaml` (without the `---` lines) and whose body is `body`.
pub(crate) fn with_frontmatter(yaml: &str, body: &str) -> String {
    format!("---\n{yaml}\n---\n{body}")
}

/// A trace file of run `test` (e.g. `main_START_001.prompt.md`).
pub(crate) fn trace_file(outcome: &Outcome, name: &str) -> String {
    let path = outcome.run_dir(common::RUN).join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()))
}
