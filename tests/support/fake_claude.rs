//! Drives `fixtures/fake-claude/claude`, the stand-in CLI for fast markdown tests:
//! rules say what to answer for which prompt; every call is recorded.
//!
//! ```ignore
//! let test = Test::new().with_fake_claude();
//! FakeClaude::at(test.root()).rule("a-plan", "PLAN", Reply::text("<goto>NEXT</goto>").cost(0.01));
//! let outcome = test.file("START.md", "PLAN").file("NEXT.md", "...").run_workflow(&[]);
//! let calls = FakeClaude::at(outcome.root()).calls();
//! ```

#![allow(dead_code)] // A toolkit: each test uses part of it.

use std::path::{Path, PathBuf};

use serde_json::json;

/// The fake CLI's path.
pub(crate) fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/fake-claude/claude")
}

/// One recorded invocation.
#[derive(Debug, Clone)]
pub(crate) struct Call {
    pub(crate) argv: Vec<String>,
    pub(crate) prompt: String,
    pub(crate) cwd: String,
    /// The rule that answered, if any.
    pub(crate) rule: Option<String>,
    /// Its `TRACEPARENT`, `TRACESTATE`, `CLAUDE_CODE_*TELEMETRY*` and `OTEL_*` variables.
    pub(crate) env: std::collections::BTreeMap<String, String>,
}

impl Call {
    /// The value after `flag` in argv.
    pub(crate) fn flag(&self, flag: &str) -> Option<&str> {
        self.argv.iter().position(|arg| arg == flag).and_then(|index| self.argv.get(index + 1)).map(String::as_str)
    }

    pub(crate) fn has(&self, flag: &str) -> bool {
        self.argv.iter().any(|arg| arg == flag)
    }
}

/// What a rule answers.
#[derive(Clone, Debug)]
pub(crate) struct Reply {
    lines: Vec<serde_json::Value>,
    exit_code: i32,
    times: Option<u32>,
    delay: Option<f64>,
}

impl Reply {
    /// A successful turn whose final message is `text`.
    pub(crate) fn text(text: &str) -> Reply {
        Reply {
            lines: vec![
                json!({"type": "system", "subtype": "init", "session_id": "{{SESSION}}"}),
                json!({"type": "assistant", "message": {"content": [{"type": "text", "text": text}]}, "session_id": "{{SESSION}}"}),
                json!({"type": "result", "subtype": "success", "is_error": false, "result": text,
                       "session_id": "{{SESSION}}", "total_cost_usd": 0.0,
                       "usage": {"input_tokens": 100, "output_tokens": 20, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}),
            ],
            exit_code: 0,
            times: None,
            delay: None,
        }
    }

    /// A subscriber usage limit, reported the way Claude Code 2.1.197 does (A15).
    pub(crate) fn usage_limit(text: &str, resets_at: i64) -> Reply {
        Reply {
            lines: vec![
                json!({"type": "system", "subtype": "init", "session_id": "{{SESSION}}"}),
                json!({"type": "rate_limit_event", "rate_limit_info": {"status": "rejected", "resetsAt": resets_at, "rateLimitType": "five_hour"}, "session_id": "{{SESSION}}"}),
                json!({"type": "assistant", "message": {"model": "<synthetic>", "content": [{"type": "text", "text": text}]}, "session_id": "{{SESSION}}", "error": "rate_limit"}),
                json!({"type": "result", "subtype": "success", "is_error": true, "api_error_status": 429, "result": text, "session_id": "{{SESSION}}", "total_cost_usd": 0}),
            ],
            exit_code: 1,
            times: None,
            delay: None,
        }
    }

    /// An API error after Claude Code's own retries: exit 1, the message only in `result`.
    pub(crate) fn api_error(text: &str) -> Reply {
        Reply {
            lines: vec![
                json!({"type": "system", "subtype": "init", "session_id": "{{SESSION}}"}),
                json!({"type": "result", "subtype": "success", "is_error": true, "api_error_status": 529, "result": text, "session_id": "{{SESSION}}", "total_cost_usd": 0}),
            ],
            exit_code: 1,
            times: None,
            delay: None,
        }
    }

    /// Arbitrary stream lines and exit code.
    pub(crate) fn raw(lines: Vec<serde_json::Value>, exit_code: i32) -> Reply {
        Reply { lines, exit_code, times: None, delay: None }
    }

    /// Set the turn's `total_cost_usd`.
    pub(crate) fn cost(mut self, cost: f64) -> Reply {
        for line in &mut self.lines {
            if line["type"] == "result" {
                line["total_cost_usd"] = json!(cost);
            }
        }
        self
    }

    /// Cost the way Claude Code 2.1.330 reports a turn: `total_cost_usd` is the
    /// session's running total (a resumed or forked session's earlier turns
    /// included), `model_usage_since_last_result` this turn's own.
    pub(crate) fn session_cost(mut self, session_total: f64, turn: f64) -> Reply {
        for line in &mut self.lines {
            if line["type"] == "result" {
                line["total_cost_usd"] = json!(session_total);
                line["model_usage_since_last_result"] = json!({"claude-sonnet-5-5": {"costUSD": turn}});
            }
        }
        self
    }

    /// Answer only the first `times` matching calls.
    pub(crate) fn times(mut self, times: u32) -> Reply {
        self.times = Some(times);
        self
    }

    /// Wait before answering.
    pub(crate) fn delay(mut self, seconds: f64) -> Reply {
        self.delay = Some(seconds);
        self
    }
}

pub(crate) struct FakeClaude {
    dir: PathBuf,
}

impl FakeClaude {
    /// The fake's files for the project at `root`.
    pub(crate) fn at(root: &Path) -> FakeClaude {
        FakeClaude { dir: root.join(".fake-claude") }
    }

    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// Add a rule; rules are tried in name order, `matching` "" matches every prompt.
    pub(crate) fn rule(&self, name: &str, matching: &str, reply: Reply) -> &FakeClaude {
        let rules = self.dir.join("rules");
        std::fs::create_dir_all(&rules).expect("rules dir");
        let base = rules.join(name);
        std::fs::write(base.with_extension("match"), matching).expect("match");
        let lines: Vec<String> = reply.lines.iter().map(|line| line.to_string()).collect();
        std::fs::write(base.with_extension("jsonl"), lines.join("\n") + "\n").expect("jsonl");
        std::fs::write(base.with_extension("rc"), reply.exit_code.to_string()).expect("rc");
        if let Some(times) = reply.times {
            std::fs::write(base.with_extension("times"), times.to_string()).expect("times");
        }
        if let Some(delay) = reply.delay {
            std::fs::write(base.with_extension("delay"), delay.to_string()).expect("delay");
        }
        self
    }

    /// Every call so far, in order.
    pub(crate) fn calls(&self) -> Vec<Call> {
        let count: usize = std::fs::read_to_string(self.dir.join(".count"))
            .ok()
            .and_then(|text| text.trim().parse().ok())
            .unwrap_or(0);
        (1..=count)
            .map(|n| {
                let read = |ext: &str| std::fs::read_to_string(self.dir.join("calls").join(format!("{n}.{ext}")));
                Call {
                    argv: session_ids_as_placeholders(read("argv").unwrap_or_default().lines().map(str::to_string)),
                    prompt: read("stdin").unwrap_or_default(),
                    cwd: read("cwd").unwrap_or_default().trim().to_string(),
                    rule: read("rule").ok().map(|rule| rule.trim().to_string()),
                    env: read("env")
                        .unwrap_or_default()
                        .lines()
                        .filter_map(|line| line.split_once('='))
                        .map(|(name, value)| (name.to_string(), value.to_string()))
                        .collect(),
                }
            })
            .collect()
    }
}

/// argv with the value of each `--session-id` (a fresh UUID every run) written as
/// `<uuid>` when it is one, so argv can be compared whole.
fn session_ids_as_placeholders(argv: impl Iterator<Item = String>) -> Vec<String> {
    let mut words: Vec<String> = argv.collect();
    for index in 1..words.len() {
        if words[index - 1] == "--session-id" && uuid_shaped(&words[index]) {
            words[index] = "<uuid>".to_string();
        }
    }
    words
}

fn uuid_shaped(text: &str) -> bool {
    let groups: Vec<&str> = text.split('-').collect();
    groups.iter().map(|group| group.len()).eq([8, 4, 4, 4, 12])
        && groups.iter().all(|group| group.chars().all(|c| c.is_ascii_hexdigit()))
}
