//! raymond's command line through a `ray → baton` link (issue 10, item 8): scripts
//! written for `ray` keep working when `ray` is Baton.

use std::process::{Command, Stdio};

use crate::support::{Test, normalize};

/// `ray ARGS` run in `test`'s project through a symlink named `ray`.
fn ray(test: &Test, args: &[&str]) -> (i32, String, String) {
    let link = test.root().join(".bin/ray");
    if !link.exists() {
        std::fs::create_dir_all(test.root().join(".bin")).expect("bin dir");
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_baton"), &link).expect("ray link");
    }
    let output = Command::new(&link)
        .args(args)
        .current_dir(test.root())
        .env_remove("BATON_DIR")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .expect("run ray");
    let text = |bytes: &[u8]| normalize(&String::from_utf8_lossy(bytes), test.root());
    (output.status.code().unwrap_or(-1), text(&output.stdout), text(&output.stderr))
}

fn counting_workflow() -> Test {
    Test::new()
        .file("START.sh", "echo '<goto input=\"1\">NEXT</goto>'\n")
        .file("NEXT.sh", "echo \"<result>next got $BATON_INPUT</result>\"\n")
}

#[test]
fn ray_runs_a_workflow_and_its_action_flags_work() {
    let test = counting_workflow();
    let (status, stdout, stderr) = ray(&test, &["wf", "--workflow-id", "w1", "--quiet"]);
    assert_eq!((status, stdout.as_str()), (0, "next got 1\n"), "{stderr}");
    let (status, stdout, _) = ray(&test, &["--status", "w1"]);
    assert_eq!(status, 0);
    assert!(stdout.contains("w1") && stdout.contains("completed"), "{stdout}");
    let (status, stdout, _) = ray(&test, &["--list"]);
    assert_eq!(status, 0);
    assert!(stdout.contains("w1"), "{stdout}");
    let (status, stdout, _) = ray(&test, &["--recover"]);
    assert_eq!(status, 0);
    assert!(stdout.contains("w1"), "{stdout}");
}

#[test]
fn ray_resume_continues_a_paused_run() {
    let test = counting_workflow();
    let (status, _, stderr) = ray(&test, &["wf", "--workflow-id=w2", "--max-steps", "1", "-v"]);
    assert_eq!(status, 3, "paused (Baton exits 3 where raymond exits 0)\n{stderr}");
    let (status, stdout, stderr) = ray(&test, &["--resume", "w2", "--max-steps", "5", "--quiet"]);
    assert_eq!((status, stdout.as_str()), (0, "next got 1\n"), "{stderr}");
}

#[test]
fn ray_init_config_creates_a_template_once() {
    let test = Test::new();
    let (status, stdout, _) = ray(&test, &["--init-config"]);
    assert_eq!((status, stdout.as_str()), (0, "Created [ROOT]/.baton/config.toml\n"));
    let (status, _, stderr) = ray(&test, &["--init-config"]);
    assert_eq!(status, 1);
    assert_eq!(
        stderr,
        "error: [ROOT]/.baton/config.toml already exists; edit it, or remove it to start from the template\n"
    );
}

#[test]
fn a_raymond_config_file_is_read() {
    let test = counting_workflow().write(".raymond/config.toml", "[raymond]\nno_debug = true\nfuture_key = 1\n");
    let (status, _, stderr) = ray(&test, &["wf", "--workflow-id", "w3", "--quiet"]);
    assert_eq!(status, 0, "{stderr}");
    assert!(test.root().join(".baton/runs/w3").exists());
    assert!(!test.root().join(".baton/runs/w3/events.jsonl").exists(), "no_debug from [raymond] was honoured");
}

#[test]
fn on_ask_is_accepted_and_kept_for_resumes() {
    let test = counting_workflow();
    let (status, _, stderr) = ray(&test, &["wf", "--workflow-id", "w4", "--on-ask", "pause", "-q"]);
    assert_eq!(status, 0, "{stderr}");
    let (_, stdout, _) = ray(&test, &["--status", "w4", "--json"]);
    let state: serde_json::Value = serde_json::from_str(&stdout).expect("status --json");
    assert_eq!(state["launch_params"]["on_ask"], "pause");
    let (status, _, stderr) = ray(&test, &["wf", "--workflow-id", "w5", "--on-ask", "ask-me"]);
    assert_eq!(status, 1);
    assert!(stderr.contains("invalid value 'ask-me' for '--on-ask <MODE>'"), "{stderr}");
}

#[test]
fn name_labels_the_terminal_title_in_a_real_terminal() {
    let test = counting_workflow();
    // `script` gives baton a real pseudo-terminal; its output is what the terminal saw.
    let command = format!("'{}' run wf --run-id w6 --name nightly -q", env!("CARGO_BIN_EXE_baton"));
    let output = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .current_dir(test.root())
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .expect("script(1) from util-linux");
    let seen = String::from_utf8_lossy(&output.stdout);
    assert!(seen.contains("\u{1b}]0;nightly · w6\u{7}"), "{seen:?}");
    // Without a terminal nothing is written.
    let (_, stdout, stderr) = ray(&test, &["wf", "--workflow-id", "w7", "--name", "nightly", "-q"]);
    assert!(!stdout.contains('\u{1b}') && !stderr.contains('\u{1b}'), "{stderr:?}");
}

#[test]
fn help_says_where_baton_differs_from_raymond() {
    let (status, stdout, _) = ray(&Test::new(), &["--help"]);
    assert_eq!(status, 0);
    assert!(stdout.contains("raymond's command line works too"), "{stdout}");
    assert!(stdout.contains("a paused run\nexits 3, not 0"), "{stdout}");
}
