//! One turn's tokens out of a Codex thread's running totals.
//!
//! `turn.completed` reports what the *thread* has used so far: after `codex exec
//! resume` the first turn's tokens are counted again, and a thread made by
//! `codex exec fork` starts from its parent's totals. Adding those up would count
//! every earlier turn once per later one. So a turn's own tokens are its
//! `turn.completed` totals less the totals the thread it continues (or forks)
//! had before it started: the baseline.
//!
//! The baseline is read from Codex's own record of that thread, the rollout file
//! `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl`, whose last
//! `token_count` event holds `total_token_usage`: exactly where the next `codex
//! exec resume` of it starts counting. Reading it, not remembering what Baton saw,
//! keeps the count right when Baton itself was restarted (a resume after a crash,
//! `baton resume` days later) and when a turn Baton never saw finished (a turn
//! cut short by a crash that Codex still recorded). When the file cannot be found
//! (`CODEX_HOME` elsewhere, sessions deleted), the totals Baton saw for the
//! thread in this process are used, else none: the turn then counts the thread's
//! whole usage, and the backend says so.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::Value;

/// Token counts, as `turn.completed`'s `usage` gives them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct TokenTotals {
    /// Every input token, cached ones included.
    pub(crate) input: u64,
    pub(crate) cached_input: u64,
    /// Every output token, reasoning included.
    pub(crate) output: u64,
}

impl TokenTotals {
    /// From a `usage` object (`input_tokens`, `cached_input_tokens`, `output_tokens`).
    pub(crate) fn from_usage(usage: &Value) -> TokenTotals {
        let number = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
        TokenTotals {
            input: number("input_tokens"),
            cached_input: number("cached_input_tokens"),
            output: number("output_tokens"),
        }
    }

    /// What was added since `baseline` (never below zero: a compacted thread may
    /// report less than before).
    pub(crate) fn since(self, baseline: TokenTotals) -> TokenTotals {
        TokenTotals {
            input: self.input.saturating_sub(baseline.input),
            cached_input: self.cached_input.saturating_sub(baseline.cached_input),
            output: self.output.saturating_sub(baseline.output),
        }
    }
}

/// Where Codex keeps its threads: `CODEX_HOME` (the step's environment first),
/// else `~/.codex`.
pub(crate) fn codex_home(step_env: &std::collections::BTreeMap<String, String>) -> Option<PathBuf> {
    if let Some(home) = step_env.get("CODEX_HOME").filter(|home| !home.is_empty()) {
        return Some(PathBuf::from(home));
    }
    if let Some(home) = std::env::var_os("CODEX_HOME").filter(|home| !home.is_empty()) {
        return Some(PathBuf::from(home));
    }
    std::env::var_os("HOME").filter(|home| !home.is_empty()).map(|home| Path::new(&home).join(".codex"))
}

/// The rollout file of `thread` under `home` (`sessions/`, then `archived_sessions/`).
pub(crate) fn rollout_file(home: &Path, thread: &str) -> Option<PathBuf> {
    let suffix = format!("-{thread}.jsonl");
    let is_rollout = |path: &Path| {
        path.file_name()
            .and_then(|name| name.to_str())
            .is_some_and(|name| name.starts_with("rollout-") && name.ends_with(&suffix))
    };
    for root in [home.join("sessions"), home.join("archived_sessions")] {
        // Newest first: a thread continued is usually a recent one.
        let mut pending = vec![root];
        while let Some(dir) = pending.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else { continue };
            let mut dirs = Vec::new();
            for entry in entries.flatten() {
                let path = entry.path();
                if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                    dirs.push(path);
                } else if is_rollout(&path) {
                    return Some(path);
                }
            }
            dirs.sort();
            pending.extend(dirs);
        }
    }
    None
}

/// What a rollout file says of its thread: the last `total_token_usage` and the
/// last turn's model.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct RolloutFacts {
    pub(crate) totals: Option<TokenTotals>,
    pub(crate) model: Option<String>,
}

/// Read `path`; lines that are not the events sought are passed over unparsed.
pub(crate) fn rollout_facts(path: &Path) -> std::io::Result<RolloutFacts> {
    let mut facts = RolloutFacts::default();
    let reader = BufReader::new(std::fs::File::open(path)?);
    for line in reader.split(b'\n') {
        let line = line?;
        let text = String::from_utf8_lossy(&line);
        if !(text.contains("\"token_count\"") || text.contains("\"turn_context\"")) {
            continue;
        }
        let Ok(object) = serde_json::from_str::<Value>(&text) else { continue };
        let payload = object.get("payload").unwrap_or(&Value::Null);
        if object.get("type").and_then(Value::as_str) == Some("turn_context") {
            if let Some(model) = payload.get("model").and_then(Value::as_str) {
                facts.model = Some(model.to_string());
            }
        } else if payload.get("type").and_then(Value::as_str) == Some("token_count")
            && let Some(total) = payload.get("info").and_then(|info| info.get("total_token_usage"))
        {
            facts.totals = Some(TokenTotals::from_usage(total));
        }
    }
    Ok(facts)
}

/// The totals Baton saw per thread in this process: the fallback when Codex's
/// own record cannot be read.
#[derive(Default)]
pub(crate) struct SeenTotals {
    threads: Mutex<HashMap<String, TokenTotals>>,
}

impl SeenTotals {
    pub(crate) fn get(&self, thread: &str) -> Option<TokenTotals> {
        self.threads.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).get(thread).copied()
    }

    pub(crate) fn record(&self, thread: &str, totals: TokenTotals) {
        self.threads.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).insert(thread.to_string(), totals);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const THREAD: &str = "01a211ab-6bad-78c2-b9f2-46b9b6824e6b";

    #[test]
    fn the_last_token_count_of_the_rollout_is_the_threads_baseline() {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/codex");
        let facts = rollout_facts(&fixtures.join("rollout_of_01_and_02.jsonl")).expect("fixture");
        assert_eq!(facts.totals, Some(TokenTotals { input: 30, cached_input: 6, output: 15 }));
        assert_eq!(facts.model.as_deref(), Some("gpt-5-codex"));
    }

    #[test]
    fn a_threads_rollout_is_found_under_the_dated_sessions_folders() {
        let home = tempfile::tempdir().unwrap();
        let day = home.path().join("sessions/2026/11/25");
        std::fs::create_dir_all(&day).unwrap();
        let file = day.join(format!("rollout-2026-11-25T07-30-00-{THREAD}.jsonl"));
        std::fs::write(&file, "").unwrap();
        std::fs::write(day.join("rollout-2026-11-25T07-30-00-other.jsonl"), "").unwrap();
        assert_eq!(rollout_file(home.path(), THREAD), Some(file));
        assert_eq!(rollout_file(home.path(), "missing"), None);
    }

    #[test]
    fn a_turns_tokens_are_the_threads_totals_less_the_baseline() {
        let after = TokenTotals { input: 40, cached_input: 8, output: 20 };
        let before = TokenTotals { input: 30, cached_input: 6, output: 15 };
        assert_eq!(after.since(before), TokenTotals { input: 10, cached_input: 2, output: 5 });
        assert_eq!(before.since(after), TokenTotals::default());
    }
}
