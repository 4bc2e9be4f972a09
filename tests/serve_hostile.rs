//! Issue 19's daemon items: text a person types reaches the run unchanged
//! whatever its first character or size, one daemon per project, every error as
//! JSON, run ids checked once, unreadable runs shown and removable, event streams
//! past their end, cancels that stay cancelled, and `cwd` checks (`docs/serve.md`).

use std::io::Write;
use std::path::PathBuf;
use std::process::Stdio;

use serde_json::json;

use crate::conformance::common::emit;
use crate::support::Test;
use crate::support::serve::Daemon;

/// The texts that once went astray: flags, a lone dash, and more than one
/// argument may hold (128 KiB).
fn hostile_texts() -> Vec<(&'static str, String)> {
    let big: String = (0..200 * 1024).map(|index| char::from(b'a' + (index % 26) as u8)).collect();
    vec![("dash-y", "-y".to_string()), ("flag", "--input".to_string()), ("dash", "-".to_string()), ("big", big)]
}

/// START copies its input to `got/<run>-start`, then NEXT copies its own to
/// `got/<run>-next`: what reached each state, byte for byte.
fn copying() -> (Test, PathBuf) {
    let test = Test::new();
    let got = test.root().join("got");
    std::fs::create_dir_all(&got).expect("got dir");
    let copy = |suffix: &str| {
        format!(
            "if [ -n \"${{BATON_INPUT_FILE:-}}\" ]; then cp \"$BATON_INPUT_FILE\" '{}/'\"$BATON_WORKFLOW_ID-{suffix}\"; fi\n",
            got.display()
        )
    };
    let test = test
        .file("START.sh", &format!("{}echo '<goto>NEXT</goto>'\n", copy("start")))
        .file("NEXT.sh", &format!("{}echo '<result>ok</result>'\n", copy("next")))
        .write("asking/START.sh", &emit(r#"<ask next="GOT" timeout="1h">Ship it?</ask>"#))
        .write("asking/GOT.sh", &format!("{}echo '<result>ok</result>'\n", copy("answer")));
    (test, got)
}

fn got(dir: &std::path::Path, run_id: &str, suffix: &str) -> String {
    std::fs::read_to_string(dir.join(format!("{run_id}-{suffix}")))
        .unwrap_or_else(|error| panic!("{run_id}-{suffix}: {error}"))
}

#[test]
fn daemon_passed_user_text_as_an_argument_now_any_input_answer_or_rerun_input_reaches_the_run_unchanged() {
    let (test, dir) = copying();
    let daemon = Daemon::start(&test, &[]);
    for (name, text) in hostile_texts() {
        // Create.
        let created = daemon.post("/api/v1/runs", &json!({"workflow": "wf", "input": text, "run_id": name}));
        assert_eq!(created.status, 201, "{name}: {}", created.body);
        daemon.wait_for_status(name, "completed");
        assert!(got(&dir, name, "start") == text, "{name}: the input changed on its way");
        // Rerun from START's step with a new input for NEXT.
        let from = daemon.get(&format!("/api/v1/runs/{name}/rerun-steps")).json()["steps"][0]["commit"]
            .as_u64()
            .expect("commit");
        let again = format!("{name}-rerun");
        let rerun =
            daemon.post(&format!("/api/v1/runs/{name}/rerun"), &json!({"from": from, "input": text, "run_id": again}));
        assert_eq!(rerun.status, 201, "{name}: {}", rerun.body);
        daemon.wait_for_status(&again, "completed");
        assert!(got(&dir, &again, "next") == text, "{name}: the rerun input changed on its way");
        // An answer to a run no process drives: the daemon resumes it with the answer.
        let asked = format!("{name}-ask");
        let paused = test
            .command(&[
                "run".into(),
                "asking".into(),
                "--run-id".into(),
                asked.clone(),
                "--on-ask".into(),
                "pause".into(),
            ])
            .output()
            .expect("baton run");
        assert_eq!(paused.status.code(), Some(2), "{}", String::from_utf8_lossy(&paused.stderr));
        let ask_id = daemon.get(&format!("/api/v1/runs/{asked}/asks")).json()["asks"][0]["ask_id"]
            .as_str()
            .expect("ask id")
            .to_string();
        let answered = daemon.post(&format!("/api/v1/runs/{asked}/asks/{ask_id}"), &json!({"text": text}));
        assert_eq!(answered.status, 202, "{name}: {}", answered.body);
        assert_eq!(answered.json()["delivered"], "resumed");
        daemon.wait_for_status(&asked, "completed");
        assert!(got(&dir, &asked, "answer") == text, "{name}: the answer changed on its way");
    }
    let shown = daemon.post("/api/v1/runs", &json!({"workflow": "wf", "input": "-y", "run_id": "shown"})).json();
    assert_eq!(
        shown["command"],
        format!("baton run {} --run-id=shown --input=-y", test.root().join("wf").display()),
        "the echoed command works when typed"
    );
    daemon.wait_for_status("shown", "completed");
    // The daemon removes a child's input file once that child has exited.
    let inputs = test.root().join(".baton/serve/inputs");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while std::fs::read_dir(&inputs).map(Iterator::count).unwrap_or(0) > 0 {
        assert!(std::time::Instant::now() < deadline, "the daemon's input files stayed");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The commit of run `run_id`'s first step (what `rerun --from` takes).
fn first_step_commit(test: &Test, run_id: &str) -> String {
    let trace = std::fs::read_to_string(test.root().join(format!(".baton/runs/{run_id}/events.jsonl"))).expect("trace");
    trace
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .find(|event| event["type"] == "TransitionOccurred")
        .and_then(|event| event["commit"].as_u64())
        .expect("a step")
        .to_string()
}

/// `baton COMMAND` with `input` written to its stdin; (exit code, stderr).
fn baton_with_stdin(test: &Test, args: &[&str], input: &str) -> (i32, String) {
    let args: Vec<String> = args.iter().map(|arg| arg.to_string()).collect();
    let mut child =
        test.command(&args).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("baton");
    let mut stdin = child.stdin.take().expect("stdin");
    let text = input.to_string();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(text.as_bytes());
    });
    let output = child.wait_with_output().expect("baton output");
    writer.join().expect("stdin writer");
    (output.status.code().unwrap_or(-1), String::from_utf8_lossy(&output.stderr).into_owned())
}

#[test]
fn cli_input_starting_with_a_dash_or_over_128_kib_reaches_the_run_through_input_equals_and_input_file() {
    let (test, dir) = copying();
    for (name, text) in hostile_texts() {
        let file = test.root().join(format!("{name}.txt"));
        std::fs::write(&file, &text).expect("input file");
        let file = file.display().to_string();
        // run: `--input=TEXT` (where an argument can hold it), `--input-file PATH`, `--input-file -`.
        if text.len() < 100 * 1024 {
            let equals = format!("{name}-equals");
            let (code, stderr) =
                baton_with_stdin(&test, &["run", "wf", "--run-id", &equals, &format!("--input={text}")], "");
            assert_eq!(code, 0, "{stderr}");
            assert!(got(&dir, &equals, "start") == text, "{name}");
        }
        let from_file = format!("{name}-file");
        let (code, stderr) = baton_with_stdin(&test, &["run", "wf", "--run-id", &from_file, "--input-file", &file], "");
        assert_eq!(code, 0, "{stderr}");
        assert!(got(&dir, &from_file, "start") == text, "{name}");
        let piped = format!("{name}-stdin");
        let (code, stderr) = baton_with_stdin(&test, &["run", "wf", "--run-id", &piped, "--input-file", "-"], &text);
        assert_eq!(code, 0, "{stderr}");
        assert!(got(&dir, &piped, "start") == text, "{name}");
        // rerun --input-file.
        let rerun = format!("{name}-rerun");
        let from = first_step_commit(&test, &from_file);
        let (code, stderr) = baton_with_stdin(
            &test,
            &["rerun", &from_file, "--from", &from, "--run-id", &rerun, "--input-file", &file],
            "",
        );
        assert_eq!(code, 0, "{stderr}");
        assert!(got(&dir, &rerun, "next") == text, "{name}");
        // answer --input-file, and resume --input-file.
        for (how, args) in [
            ("answer", vec!["answer", "RUN", "--input-file", &file]),
            ("resume", vec!["resume", "RUN", "--input-file", &file]),
        ] {
            let asked = format!("{name}-{how}");
            let (code, stderr) =
                baton_with_stdin(&test, &["run", "asking", "--run-id", &asked, "--on-ask", "pause"], "");
            assert_eq!(code, 2, "{stderr}");
            let args: Vec<&str> = args.iter().map(|arg| if *arg == "RUN" { asked.as_str() } else { arg }).collect();
            let (code, stderr) = baton_with_stdin(&test, &args, "");
            assert_eq!(code, 0, "{how}: {stderr}");
            assert!(got(&dir, &asked, "answer") == text, "{name} {how}");
        }
    }
    // `baton answer RUN -- -y`: after `--`, a leading dash is text.
    let (code, stderr) = baton_with_stdin(&test, &["run", "asking", "--run-id", "dashed", "--on-ask", "pause"], "");
    assert_eq!(code, 2, "{stderr}");
    let (code, stderr) = baton_with_stdin(&test, &["answer", "dashed", "--", "-y"], "");
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(got(&dir, "dashed", "answer"), "-y");
}

#[test]
fn input_file_from_stdin_is_refused_where_on_ask_json_needs_stdin() {
    let (test, _) = copying();
    let (code, stderr) = baton_with_stdin(&test, &["run", "wf", "--input-file", "-", "--on-ask", "json"], "text");
    assert_eq!(code, 1);
    assert_eq!(
        stderr.trim(),
        "error: --input-file - reads stdin, which --on-ask json keeps for its control lines; write the input to a \
         file and give its path"
    );
    let (code, stderr) = baton_with_stdin(&test, &["run", "wf", "--input-file", "/nonexistent/in.txt"], "");
    assert_eq!(code, 1);
    assert_eq!(
        stderr.trim(),
        "error: cannot read --input-file /nonexistent/in.txt: No such file or directory (os error 2)"
    );
}

#[test]
fn a_second_daemon_in_the_same_project_is_refused_and_the_first_keeps_its_address_and_answers() {
    let (test, dir) = copying();
    let daemon = Daemon::start(&test, &[]);
    daemon.start_run("asking", json!({"run_id": "held"}));
    daemon.first_ask("held");
    let second = test
        .command(&["serve".into(), "--bind".into(), "127.0.0.1:0".into(), "--rotate-token".into()])
        .output()
        .expect("second baton serve");
    assert_eq!(second.status.code(), Some(4), "the documented exit code");
    let lock = std::fs::read_to_string(test.root().join(".baton/serve/daemon.lock")).expect("daemon.lock");
    let pid = lock.lines().next().expect("pid").to_string();
    let stderr = String::from_utf8_lossy(&second.stderr)
        .replace(&pid, "[PID]")
        .replace(&daemon.url, "[URL]")
        .replace(&test.root().display().to_string(), "[ROOT]");
    assert_eq!(
        stderr.trim(),
        "error: another baton serve (pid [PID], [URL]) already serves the runs in [ROOT]/.baton; use that one, or \
         stop it first (`kill -TERM [PID]`)"
    );
    assert!(second.stdout.is_empty(), "no URL printed");
    let address = std::fs::read_to_string(test.root().join(".baton/serve/address")).expect("address file intact");
    assert_eq!(address.trim(), daemon.url);
    assert_eq!(
        std::fs::read_to_string(test.root().join(".baton/serve/token")).expect("token").trim(),
        daemon.token,
        "the second daemon did not rotate the first one's token"
    );
    let answered = test.command(&["answer".into(), "held".into(), "go".into()]).output().expect("baton answer");
    assert_eq!(answered.status.code(), Some(0), "{}", String::from_utf8_lossy(&answered.stderr));
    daemon.wait_for_status("held", "completed");
    assert_eq!(got(&dir, "held", "answer"), "go");
}

#[test]
fn a_daemon_killed_with_sigkill_leaves_nothing_that_blocks_the_next_one() {
    let (test, _) = copying();
    let daemon = Daemon::start(&test, &[]);
    daemon.kill();
    assert!(test.root().join(".baton/serve/address").exists(), "a killed daemon leaves its address file behind");
    let next = Daemon::start(&test, &[]);
    assert_eq!(next.get("/api/v1/health").status, 200);
    let address = std::fs::read_to_string(test.root().join(".baton/serve/address")).expect("address file");
    assert_eq!(address.trim(), next.url);
}

#[test]
fn errors_that_were_plain_text_or_an_empty_404_are_json_now() {
    let (test, _) = copying();
    let daemon = Daemon::start(&test, &[]);
    daemon.start_run("wf", json!({"run_id": "r", "input": "x"}));
    daemon.wait_for_status("r", "completed");
    let cases = [
        ("/api/v1/runs/r/steps/main/-1", 400, "Invalid URL: Cannot parse value at index 2 with value `-1` to a `u64`"),
        (
            "/api/v1/runs/r/steps?after=-5",
            400,
            "Failed to deserialize query string: after: invalid digit found in string",
        ),
        (
            "/api/v1/runs/r/events?after=-5",
            400,
            "Failed to deserialize query string: after: invalid digit found in string",
        ),
        ("/api/v1/nope", 404, "no such path `/api/v1/nope`: the API is under /api/v1 (docs/serve.md), the page at /"),
    ];
    for (path, status, message) in cases {
        let reply = daemon.get(path);
        assert_eq!((reply.status, reply.header("content-type")), (status, Some("application/json")), "{path}");
        assert_eq!(reply.json(), json!({"error": message}), "{path}");
    }
    let page = daemon.get_with("/nope.html", &[]);
    assert_eq!(page.status, 404);
    assert_eq!(
        page.json(),
        json!({"error": "no such path `/nope.html`: the API is under /api/v1 (docs/serve.md), the page at /"})
    );
    let method = daemon.delete("/api/v1/runs");
    assert_eq!(method.status, 405);
    assert_eq!(method.json(), json!({"error": "this path does not take that method (docs/serve.md lists the calls)"}));
    assert!(method.header("allow").is_some_and(|allow| allow.contains("GET")), "{:?}", method.headers);
}

#[test]
fn a_300_character_run_id_gave_file_name_too_long_now_one_message_everywhere() {
    let (test, _) = copying();
    let long = "a".repeat(300);
    let message = format!(
        "invalid run id `{}…` (300 characters): use only letters, digits, `_` and `-`, at most 128 of them",
        "a".repeat(40)
    );
    let daemon = Daemon::start(&test, &[]);
    for reply in [
        daemon.get(&format!("/api/v1/runs/{long}")),
        daemon.delete(&format!("/api/v1/runs/{long}")),
        daemon.post("/api/v1/runs", &json!({"workflow": "wf", "run_id": long})),
    ] {
        assert_eq!(reply.status, 400, "{}", reply.body);
        assert_eq!(reply.json(), json!({"error": message}));
    }
    for args in [vec!["status", &long], vec!["run", "wf", "--run-id", &long], vec!["resume", &long]] {
        let (code, stderr) = baton_with_stdin(&test, &args, "");
        assert_eq!((code, stderr.trim()), (1, format!("error: {message}").as_str()), "{args:?}");
    }
}

#[test]
fn cwd_that_is_a_file_or_under_baton_was_misreported_or_accepted_now_refused_and_the_command_names_it() {
    let (test, _) = copying();
    let daemon = Daemon::start(&test, &[]);
    let file = test.root().join("wf/START.sh");
    let reply = daemon.post("/api/v1/runs", &json!({"workflow": "wf", "cwd": file}));
    assert_eq!(reply.status, 400);
    assert_eq!(reply.json(), json!({"error": format!("cwd `{}` is not a directory", file.display())}));
    for inside in [".baton", ".baton/serve", ".baton/serve/logs"] {
        let dir = test.root().join(inside);
        let reply = daemon.post("/api/v1/runs", &json!({"workflow": "wf", "cwd": dir}));
        assert_eq!(reply.status, 403, "{inside}: {}", reply.body);
        assert_eq!(
            reply.json(),
            json!({"error": format!(
                "cwd `{}` is inside {}, which holds Baton's own files; pick a directory of the project",
                dir.display(),
                test.root().join(".baton").display()
            )})
        );
    }
    let dir = test.root().join("got");
    let reply = daemon.post("/api/v1/runs", &json!({"workflow": "wf", "cwd": dir, "run_id": "here", "input": "x"}));
    assert_eq!(reply.status, 201, "{}", reply.body);
    let real = dir.canonicalize().expect("canonical");
    assert_eq!(
        reply.json()["command"],
        format!("cd {} && baton run {} --run-id=here --input x", real.display(), test.root().join("wf").display())
    );
    daemon.wait_for_status("here", "completed");
}

#[test]
fn a_run_with_a_corrupt_state_json_gave_500_now_it_is_listed_unreadable_and_can_be_deleted() {
    let (test, _) = copying();
    for run_id in ["broken", "gone", "fine"] {
        let (code, stderr) = baton_with_stdin(&test, &["run", "wf", "--run-id", run_id, "--input", "x"], "");
        assert_eq!(code, 0, "{stderr}");
    }
    for run_id in ["broken", "gone"] {
        std::fs::write(test.root().join(format!(".baton/runs/{run_id}/state.json")), "{garbage").expect("corrupt");
    }
    let reason = |run_id: &str| {
        format!(
            "{}/.baton/runs/{run_id}/state.json is not a valid run state file: key must be a string at line 1 column 2",
            test.root().display()
        )
    };
    let daemon = Daemon::start(&test, &[]);
    let listed = daemon.get("/api/v1/runs");
    assert_eq!(listed.status, 200, "{}", listed.body);
    let runs = listed.json()["runs"].as_array().cloned().expect("runs");
    let broken = runs.iter().find(|run| run["run_id"] == "broken").expect("listed");
    assert_eq!(
        (broken["status"].as_str(), broken["error"].as_str()),
        (Some("unreadable"), Some(reason("broken").as_str()))
    );
    assert!(runs.iter().any(|run| run["run_id"] == "fine" && run["status"] == "completed"));
    let message =
        format!("the run cannot be read: {}; DELETE removes it (as `baton gc --unreadable` does)", reason("broken"));
    for path in ["/api/v1/runs/broken", "/api/v1/runs/broken/report"] {
        let reply = daemon.get(path);
        assert_eq!(reply.status, 409, "{path}: {}", reply.body);
        assert_eq!(reply.json(), json!({"error": message}));
    }
    assert_eq!(daemon.delete("/api/v1/runs/broken").status, 204);
    assert!(!test.root().join(".baton/runs/broken").exists());
    assert_eq!(daemon.stop(), 0);
    // The CLI: `list` shows it, `status` says why, `gc --unreadable` removes it and only it.
    let (code, _) = baton_with_stdin(&test, &["list"], "");
    assert_eq!(code, 0);
    let (code, stderr) = baton_with_stdin(&test, &["status", "gone"], "");
    assert_eq!((code, stderr.trim()), (1, format!("error: {}", reason("gone")).as_str()));
    let output = test.command(&["gc".into(), "--unreadable".into()]).output().expect("baton gc");
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&output.stdout), "deleted gone\n");
    assert_eq!(String::from_utf8_lossy(&output.stderr), "deleted 1 of 1 unreadable run\n");
    assert!(!test.root().join(".baton/runs/gone").exists());
    assert!(test.root().join(".baton/runs/fine").exists(), "a readable run is not touched");
}

/// A raw connection to the daemon that sends `sent` and then reads until the
/// daemon closes it; what it read (an error after 30 s means it never closed).
fn raw_connection(daemon: &Daemon, sent: &[u8]) -> std::net::TcpStream {
    let mut stream = std::net::TcpStream::connect(daemon.url.trim_start_matches("http://")).expect("connect");
    stream.set_read_timeout(Some(std::time::Duration::from_secs(30))).expect("read timeout");
    stream.write_all(sent).expect("send");
    stream
}

#[test]
fn half_open_sockets_were_held_for_ever_now_a_header_read_timeout_closes_them() {
    let (test, _) = copying();
    let test = test.env("BATON_SERVE_HEADER_TIMEOUT_MS", "200");
    let daemon = Daemon::start(&test, &[]);
    for sent in [&b""[..], b"GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n"] {
        let mut stream = raw_connection(&daemon, sent);
        let mut read = Vec::new();
        let closed = std::io::Read::read_to_end(&mut stream, &mut read);
        assert!(closed.is_ok(), "the daemon closed the connection: {closed:?}");
        let text = String::from_utf8_lossy(&read);
        assert!(text.is_empty() || text.starts_with("HTTP/1.1 408"), "{text}");
    }
    assert_eq!(daemon.get("/api/v1/health").status, 200, "a prompt client is served as before");
}

#[test]
fn connections_had_no_cap_now_one_beyond_it_gets_503_in_json() {
    let (test, _) = copying();
    let test = test.env("BATON_SERVE_MAX_CONNECTIONS", "2");
    let daemon = Daemon::start(&test, &[]);
    let first = raw_connection(&daemon, b"");
    let second = raw_connection(&daemon, b"");
    let refused = daemon.get("/api/v1/health");
    assert_eq!(refused.status, 503, "{}", refused.body);
    assert_eq!(
        refused.json(),
        json!({"error": "this daemon serves at most 2 connections at once; try again when one has closed"})
    );
    drop(first);
    drop(second);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while daemon.get("/api/v1/health").status != 200 {
        assert!(std::time::Instant::now() < deadline, "the slots never came back");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Issue 19: a run id may start with `-` (R8.7: `[A-Za-z0-9_-]+`), but the daemon
/// passed `--run-id -x` to its child, which refused it (`{"error":"unexpected
/// argument '-x' found"}`), and `resume -x` / `rerun -x` read the id as a flag. The
/// daemon now passes `--run-id=-x`, and resume and rerun take an id starting with `-`.
#[test]
fn run_ids_starting_with_a_dash_are_created_rerun_and_resumed_through_the_daemon() {
    let (test, dir) = copying();
    let daemon = Daemon::start(&test, &[]);
    let created = daemon.post("/api/v1/runs", &json!({"workflow": "wf", "input": "in", "run_id": "-x"}));
    assert_eq!(created.status, 201, "{}", created.body);
    assert_eq!(
        created.json()["command"],
        format!("baton run {} --run-id=-x --input in", test.root().join("wf").display())
    );
    daemon.wait_for_status("-x", "completed");
    let from = first_step_commit(&test, "-x");
    let rerun = daemon.post(
        "/api/v1/runs/-x/rerun",
        &json!({"from": from.parse::<u64>().expect("commit"), "input": "again", "run_id": "-y"}),
    );
    assert_eq!(rerun.status, 201, "{}", rerun.body);
    daemon.wait_for_status("-y", "completed");
    assert_eq!(got(&dir, "-y", "next"), "again");
    let paused = test
        .command(&["run".into(), "asking".into(), "--run-id=-a".into(), "--on-ask".into(), "pause".into()])
        .output()
        .expect("baton run");
    assert_eq!(paused.status.code(), Some(2), "{}", String::from_utf8_lossy(&paused.stderr));
    let ask_id = daemon.get("/api/v1/runs/-a/asks").json()["asks"][0]["ask_id"].as_str().expect("ask id").to_string();
    let answered = daemon.post(&format!("/api/v1/runs/-a/asks/{ask_id}"), &json!({"text": "yes"}));
    assert_eq!(answered.status, 202, "{}", answered.body);
    daemon.wait_for_status("-a", "completed");
    assert_eq!(got(&dir, "-a", "answer"), "yes");
    // The CLI's own hint (`baton status -x shows its result`) works as typed.
    let status = test.command(&["status".into(), "-a".into()]).output().expect("baton status");
    assert_eq!(status.status.code(), Some(0), "{}", String::from_utf8_lossy(&status.stderr));
    assert!(String::from_utf8_lossy(&status.stdout).starts_with("run -a: completed\n"));
    let answer = test.command(&["answer".into(), "-a".into(), "yes".into()]).output().expect("baton answer");
    assert_eq!(answer.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&answer.stderr).trim_end(),
        "error: run `-a` has already completed; `baton status -a` shows its result"
    );
}

/// A run its lint gate refused was answered 400 with the gate's first line only
/// ("… fix them, or run with --no-lint:") and none of the findings it announced: the
/// daemon kept the child's `error:` lines and dropped the indented lines under them.
#[test]
fn a_run_the_lint_gate_refused_was_answered_without_its_findings_now_they_follow() {
    let test = Test::new().file("START.sh", "echo '<goto>NOWHERE</goto>'\n").file("NEXT.sh", "echo '<ask>Go?</ask>'\n");
    let daemon = Daemon::start(&test, &[]);
    let refused = daemon.post("/api/v1/runs", &json!({"workflow": "wf", "run_id": "r"}));
    assert_eq!(refused.status, 400, "{}", refused.body);
    let root = test.root().display().to_string();
    let said = refused.json()["error"].as_str().unwrap_or_default().replace(&root, "[ROOT]");
    assert_eq!(
        said,
        "workflow `[ROOT]/wf` has 2 lint errors that would fail the run; fix them, or run with --no-lint:\n  \
         wf/NEXT.sh:1:7: error[missing-ask-next]: <ask> needs a non-empty `next` attribute; a run stops if the agent \
         emits this `<ask>`\n  \
         wf/START.sh:1:7: error[missing-target]: `<goto>` target `NOWHERE` is not a state of this workflow"
    );
    assert!(!test.root().join(".baton/runs/r").exists(), "nothing ran");
}
