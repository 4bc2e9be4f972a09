//! Baton's overhead per markdown step on Codex, against bare `codex exec --json`
//! calls to the same fake Responses API (`cargo bench --bench codex_overhead`).
//!
//! The floor is what the same Codex CLI costs on its own: one fresh call and
//! `steps - 1` resumed calls (`exec resume`), each the median of `--runs` (default 9).
//! Baton runs a workflow of `steps` prompt states chained by implicit `goto`s (so it also
//! makes one fresh and `steps - 1` resumed calls); overhead per step is
//! `(median Baton wall - floor) / steps`. Numbers only: nothing is asserted.

#![allow(dead_code, unused_imports)] // The test support is shared; this bench uses part of it.

#[path = "../tests/support/mod.rs"]
mod support;

use std::io::Write;
use std::process::Stdio;
use std::time::{Duration, Instant};

use support::codex_cli::codex_command;
use support::fake_openai::{FakeOpenAi, Rule};

/// What Baton passes for a state without options in a run that skips permissions.
const ARGS: [&str; 4] = ["exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"];

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values[values.len() / 2]
}

/// One bare `codex exec --json` call; returns its wall time and the thread id it reported.
fn bare_call(url: &str, cwd: &std::path::Path, resume: Option<&str>) -> (Duration, String) {
    let mut command = codex_command(url);
    command.args(ARGS).current_dir(cwd).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
    if let Some(thread) = resume {
        command.args(["resume", thread]);
    }
    command.arg("-");
    let started = Instant::now();
    let mut child = command.spawn().expect("codex");
    child.stdin.take().expect("stdin").write_all(b"BENCH STATE").expect("prompt");
    let output = child.wait_with_output().expect("codex output");
    let elapsed = started.elapsed();
    let thread = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .find_map(|value| value["thread_id"].as_str().map(str::to_string))
        .unwrap_or_default();
    (elapsed, thread)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let (mut runs, mut steps) = (9usize, 5usize);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--runs" => runs = args.next().and_then(|v| v.parse().ok()).unwrap_or(runs),
            "--steps" => steps = args.next().and_then(|v| v.parse().ok()).unwrap_or(steps),
            _ => {}
        }
    }
    let fake = FakeOpenAi::start(vec![
        Rule::when_prompt("BENCH STATE").reply_text("ok"),
        Rule::when_prompt("LAST STEP").reply_text("<result>done</result>"),
        Rule::when_prompt("STEP").reply_text("ok"),
    ]);
    let url = fake.url();
    let scratch = tempfile::tempdir().expect("temp dir");
    // Warm the page cache: the first call after install is much slower.
    bare_call(&url, scratch.path(), None);

    let (mut fresh, mut resumed, mut baton, mut differences, mut cpu_per_step) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for run in 0..runs {
        // Paired: the bare calls and the Baton run of one iteration see the same machine.
        // A new directory each time, as each Baton run has its own project.
        let directory = tempfile::tempdir().expect("temp dir");
        let (fresh_time, thread) = bare_call(&url, directory.path(), None);
        let resumed_time = bare_call(&url, directory.path(), Some(&thread)).0;
        fresh.push(fresh_time);
        resumed.push(resumed_time);
        let floor = fresh_time + resumed_time * (steps as u32 - 1);

        // START.md → S2.md → … → S<steps>.md; each state's policy has a single goto,
        // so the reply "ok" (no tag) takes the implicit transition (R5.11–R5.13).
        let mut test = support::Test::new().file(&format!("S{steps}.md"), "LAST STEP");
        for step in 1..steps {
            let name = if step == 1 { "START.md".to_string() } else { format!("S{step}.md") };
            let body =
                format!("---\nallowed_transitions:\n  - {{ tag: goto, target: S{} }}\n---\nSTEP {step}", step + 1);
            test = test.file(&name, &body);
        }
        for key in support::codex_cli::CODEX_ENV_REMOVE {
            test = test.env_remove(key);
        }
        for (key, value) in support::codex_cli::codex_env(&url) {
            test = test.env(&key, &value);
        }
        let test = test.env("BATON_CODEX_BIN", &support::codex_cli::codex_binary().to_string_lossy());
        let started = Instant::now();
        let outcome =
            test.args(["run", "wf", "--run-id", &format!("bench{run}"), "-q", "--json", "--backend", "codex"]).run();
        let wall = started.elapsed();
        assert_eq!(outcome.status, 0, "{}", outcome.stderr);
        baton.push(wall);
        differences.push((wall.as_secs_f64() - floor.as_secs_f64()) / steps as f64);
        let report: serde_json::Value = serde_json::from_str(&outcome.stdout).expect("--json");
        let metrics = &report["metrics"];
        let cpu_ms = metrics["cpu_user_ms"].as_f64().unwrap_or(0.0) + metrics["cpu_system_ms"].as_f64().unwrap_or(0.0);
        cpu_per_step.push(Duration::from_secs_f64(cpu_ms / 1000.0 / steps as f64));
    }
    differences.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    println!(
        "codex exec --json (median of {runs}): fresh {:.3} s, resumed {:.3} s; baton, {steps} prompt states: {:.3} s",
        median(fresh).as_secs_f64(),
        median(resumed).as_secs_f64(),
        median(baton).as_secs_f64()
    );
    println!(
        "wall overhead per markdown step (median of paired runs): {:.1} ms; range {:.1} to {:.1} ms",
        differences[differences.len() / 2] * 1000.0,
        differences[0] * 1000.0,
        differences[differences.len() - 1] * 1000.0
    );
    println!("baton CPU per markdown step (median): {:.1} ms", median(cpu_per_step).as_secs_f64() * 1000.0);
}
