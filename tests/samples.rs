//! Every workflow in `states/` runs, from a fresh project, with the result its
//! README promises. A new sample without an entry here fails the last test.

use std::path::PathBuf;

use crate::support::Test;

fn sample(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("states").join(name).to_string_lossy().into_owned()
}

/// (sample, extra arguments, expected stdout)
const SAMPLES: [(&str, &[&str], &str); 5] = [
    ("countdown", &[], "Liftoff!\n"),
    ("countdown", &["--input", "1"], "Liftoff!\n"),
    ("factorial", &[], "5! = 120\n"),
    ("factorial", &["--input", "10"], "10! = 3628800\n"),
    ("fanout", &["--input", "one two three"], "3 words, 11 letters\n"),
];

#[test]
fn every_sample_runs_to_its_documented_result() {
    for (name, extra, expected) in SAMPLES {
        let mut args = vec!["run".to_string(), sample(name), "--run-id".to_string(), "sample".to_string()];
        args.extend(extra.iter().map(|arg| arg.to_string()));
        let outcome = Test::new().args(args).run();
        outcome.status(0).stdout(expected);
    }
}

#[test]
fn factorial_builds_a_real_call_stack() {
    let outcome = Test::new().args(["run", &sample("factorial"), "--run-id", "f", "--input", "4"]).run();
    outcome.status(0);
    let pushes = outcome
        .events_of("f", "TransitionOccurred")
        .into_iter()
        .filter(|event| event["transition_type"] == "call" || event["transition_type"] == "function")
        .count();
    assert_eq!(pushes, 4, "one <function> and three recursive <call>s");
}

#[test]
fn fanout_workers_run_concurrently_and_terminate() {
    let outcome = Test::new().args(["run", &sample("fanout"), "--run-id", "f", "--json"]).run();
    outcome.status(0);
    let report: serde_json::Value = serde_json::from_str(&outcome.stdout).expect("--json prints JSON");
    let workers: Vec<&str> = report["agents"]
        .as_array()
        .expect("agents")
        .iter()
        .filter_map(|agent| agent["id"].as_str())
        .filter(|id| id.starts_with("main_worker"))
        .collect();
    assert_eq!(workers.len(), 3, "{report}");
    assert_eq!(report["result"], "3 words, 18 letters");
}

#[test]
fn every_sample_directory_is_covered() {
    let states = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("states");
    let mut on_disk: Vec<String> = std::fs::read_dir(states)
        .expect("states/")
        .filter_map(Result::ok)
        .filter(|entry| entry.path().is_dir())
        .filter(|entry| {
            // Prompt workflows need a Claude account; they are covered by the Claude test suite.
            std::fs::read_dir(entry.path())
                .map(|files| files.filter_map(Result::ok).all(|f| !f.path().to_string_lossy().ends_with(".md")))
                .unwrap_or(false)
        })
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    on_disk.sort();
    let mut covered: Vec<String> = SAMPLES.iter().map(|(name, _, _)| name.to_string()).collect();
    covered.sort();
    covered.dedup();
    assert_eq!(on_disk, covered, "every script-only sample in states/ needs an entry in SAMPLES");
}

/// 21! and beyond overflowed bash's 64-bit arithmetic: `--input 25` printed
/// `25! = 7034535277573963776`. MULTIPLY now multiplies decimal digit strings.
#[test]
fn factorial_25_is_exact_or_refused_regression() {
    let outcome = Test::new().args(["run", &sample("factorial"), "--run-id", "f", "--input", "25"]).run();
    outcome.status(0).stdout("25! = 15511210043330985984000000\n");
}

/// 0! was reported as `1! = 1`, and a leading zero made bash read the input as octal.
#[test]
fn factorial_of_zero_and_leading_zeros_regression() {
    let outcome = Test::new().args(["run", &sample("factorial"), "--run-id", "f", "--input", "0"]).run();
    outcome.status(0).stdout("0! = 1\n");
    let outcome = Test::new().args(["run", &sample("factorial"), "--run-id", "f", "--input", "010"]).run();
    outcome.status(0).stdout("10! = 3628800\n");
}

/// One call-stack frame per level: an absurd depth is refused up front, not attempted.
#[test]
fn factorial_refuses_absurd_depth_regression() {
    let outcome = Test::new().args(["run", &sample("factorial"), "--run-id", "f", "--input", "100000"]).run();
    outcome
        .status(1)
        .stdout("")
        .stderr_contains("input must be at most 1000 (one call-stack frame per level), got 100000");
}

/// A word went into the fork tag as `word="…"`, which has no escapes: `"quoted"`
/// ended the attribute early and the sample printed `3 words, 6 letters`.
#[test]
fn fanout_counts_words_with_quotes_regression() {
    let input = r#"it's "quoted" "don't" ok"#;
    let outcome = Test::new().args(["run", &sample("fanout"), "--run-id", "f", "--input", input]).run();
    outcome.status(0).stdout("4 words, 21 letters\n");
}

/// Any word survives: tag-like text (which also ends a tag at `>`), `=`, a glob and a backslash.
#[test]
fn fanout_counts_words_with_markup_and_globs_regression() {
    let input = r"<goto>X</goto> a=b * \ -n";
    let outcome = Test::new().args(["run", &sample("fanout"), "--run-id", "f", "--input", input]).run();
    outcome.status(0).stdout("5 words, 21 letters\n");
}

/// The samples that drive agent CLIs (plan-judge, supervised-team, architect-pm on
/// Claude; cross-review on Claude and Codex) pass their offline tests: scripted
/// replies, script stubs and answers, no CLI.
#[test]
fn the_claude_samples_pass_their_offline_tests() {
    let samples = ["plan-judge", "supervised-team", "architect-pm", "cross-review"].map(sample);
    let mut args = vec!["test".to_string()];
    args.extend(samples);
    let outcome = Test::new().args(args).run();
    outcome.status(0);
    assert!(outcome.stdout.contains(" passed, 0 failed"), "{}", outcome.stdout);
    assert!(!outcome.stdout.contains("FAIL"), "{}", outcome.stdout);
}

/// architect-pm's PM asks the user: as its README row says, it needs `--on-ask`,
/// and without it the run is refused before any model turn.
#[test]
fn architect_pm_needs_on_ask() {
    let outcome = Test::new().args(["run", &sample("architect-pm"), "--input", "add a flag"]).run();
    outcome.status(1).stderr_contains("run it with --on-ask pause");
}
