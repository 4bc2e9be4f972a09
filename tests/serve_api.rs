//! `baton serve`'s HTTP API over real HTTP on 127.0.0.1 (`docs/serve.md`): the
//! token, origins and hosts, names that cannot become paths, workflows, runs from
//! start to delete, steps, reports, asks with uploads, and many clients at once.
//! Every workflow is script-only.

use std::time::Duration;

use serde_json::json;

use crate::conformance::common::{archive, emit, say, with_wait_for};
use crate::support::Test;
use crate::support::serve::Daemon;

/// A loop of `n` script steps (`$BATON_INPUT` counts down), then a result.
fn countdown() -> Test {
    Test::new().file("START.sh", "echo \"<goto input=\\\"${BATON_INPUT:-3}\\\">TICK</goto>\"\n").file(
        "TICK.sh",
        "n=$BATON_INPUT\necho \"tick $n\"\nif [ \"$n\" -le 0 ]; then echo '<result>lift-off</result>'; \
             else echo \"<goto input=\\\"$((n - 1))\\\">TICK</goto>\"; fi\n",
    )
}

#[test]
fn every_api_request_needs_the_token_and_the_page_does_not() {
    let test = countdown();
    let daemon = Daemon::start(&test, &[]);
    let none = daemon.get_with("/api/v1/health", &[]);
    assert_eq!(none.status, 401, "{}", none.body);
    assert_eq!(none.header("www-authenticate"), Some("Bearer"));
    assert!(none.json()["error"].as_str().unwrap_or_default().contains("needs the token"), "{}", none.body);
    let wrong = daemon.get_with("/api/v1/runs", &[("Authorization", &format!("Bearer {}", "0".repeat(64)))]);
    assert_eq!(wrong.status, 401);
    assert!(wrong.json()["error"].as_str().unwrap_or_default().starts_with("wrong token"), "{}", wrong.body);
    let not_bearer = daemon.get_with("/api/v1/runs", &[("Authorization", &daemon.token.clone())]);
    assert_eq!(not_bearer.status, 401);
    let basic = daemon.get_with("/api/v1/runs", &[("Authorization", &format!("Basic {}", daemon.token))]);
    assert_eq!(basic.status, 401);
    let lower_case = daemon.get_with("/api/v1/runs", &[("Authorization", &format!("bearer {}", daemon.token))]);
    assert_eq!(lower_case.status, 200, "the scheme's name is case-insensitive");
    let events = daemon.get_with("/api/v1/events", &[]);
    assert_eq!(events.status, 401, "event streams need the token too");
    let health = daemon.get("/api/v1/health");
    assert_eq!(health.status, 200);
    assert_eq!(health.json()["workflows"], 1);
    let page = daemon.get_with("/", &[]);
    assert_eq!(page.status, 200);
    let policy = page.header("content-security-policy").unwrap_or_default();
    assert!(policy.contains("default-src 'self'") && policy.contains("frame-ancestors 'none'"), "{policy}");
    assert_eq!(page.header("x-content-type-options"), Some("nosniff"));
    for reply in [&none, &health, &page] {
        assert!(reply.header("access-control-allow-origin").is_none(), "no CORS header, ever");
    }
}

#[test]
fn the_token_file_is_private_and_rotating_it_locks_out_the_old_one() {
    use std::os::unix::fs::PermissionsExt;
    let test = countdown();
    let daemon = Daemon::start(&test, &[]);
    let mode = std::fs::metadata(test.root().join(".baton/serve/token")).expect("token").permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let old = daemon.token.clone();
    assert_eq!(daemon.printed, format!("{}/#token={old}", daemon.url), "a new token is shown once with the URL");
    assert_eq!(daemon.stop(), 0);
    let again = Daemon::start(&test, &[]);
    assert_eq!(again.printed, format!("{}/", again.url), "later starts keep it out of the output");
    assert_eq!(again.stop(), 0);
    let opened = Daemon::start(&test, &["--open"]);
    assert_eq!(opened.printed, format!("{}/#token={old}", opened.url), "--open shows it again");
    assert_eq!(opened.stop(), 0);
    let daemon = Daemon::start(&test, &["--rotate-token"]);
    assert_ne!(daemon.token, old);
    let stale = daemon.get_with("/api/v1/health", &[("Authorization", &format!("Bearer {old}"))]);
    assert_eq!(stale.status, 401);
    assert_eq!(daemon.get("/api/v1/health").status, 200);
}

#[test]
fn a_foreign_origin_cannot_change_anything_and_a_foreign_host_is_refused() {
    let test = countdown();
    let daemon = Daemon::start(&test, &[]);
    let bearer = format!("Bearer {}", daemon.token);
    let foreign = daemon.post_with(
        "/api/v1/workflows/rescan",
        &json!({}),
        &[("Authorization", &bearer), ("Origin", "http://evil.example")],
    );
    assert_eq!(foreign.status, 403, "{}", foreign.body);
    assert!(foreign.body.contains("Origin refused"), "{}", foreign.body);
    // Regression: the refused POST's body is never read, so its connection is closed,
    // and the client must be told, or it sends the next request down a closed socket.
    assert_eq!(foreign.header("connection"), Some("close"));
    let own_origin = daemon.url.clone();
    let own = daemon.post_with(
        "/api/v1/workflows/rescan",
        &json!({}),
        &[("Authorization", &bearer), ("Origin", &own_origin)],
    );
    assert_eq!(own.status, 200, "{}", own.body);
    let read = daemon.get_with("/api/v1/runs", &[("Authorization", &bearer), ("Origin", "http://evil.example")]);
    assert_eq!(read.status, 200, "reads are allowed; no CORS header lets the page read them");
    assert!(read.header("access-control-allow-origin").is_none());
    let rebound = daemon.get_with("/api/v1/health", &[("Authorization", &bearer), ("Host", "evil.example:80")]);
    assert_eq!(rebound.status, 403, "{}", rebound.body);
    let page = daemon.get_with("/", &[("Host", "attacker.example")]);
    assert_eq!(page.status, 403);
}

#[test]
fn a_reachable_bind_address_needs_allow_remote() {
    let outcome = countdown().args(["serve", "--bind", "0.0.0.0:0"]).run();
    assert_eq!(outcome.status, 1);
    assert_eq!(
        outcome.stderr.trim(),
        "error: --bind 0.0.0.0:0 can be reached from other machines; give --allow-remote as well to serve there \
         (every request still needs the token), or bind to 127.0.0.1"
    );
}

#[test]
fn workflows_are_listed_described_with_their_graph_and_rescanned() {
    let test = countdown()
        .write("review/START.sh", &emit("<result>ok</result>"))
        .write(
            "review/workflow.yaml",
            "id: review-loop\nname: Review loop\ndescription: Plans, codes and reviews a PR.\n\
             input:\n  mode: required\n  label: a PR\n  description: its URL\n\
             working_directory: ../repo\nenvironment:\n  TOKEN: secret-value\n",
        )
        .write("notes/readme.txt", "not a workflow");
    let packed = archive(&[("workflow.yaml", "id: packed\n"), ("START.sh", &emit("<result>from the zip</result>"))]);
    std::fs::write(test.root().join("packed.zip"), packed).expect("zip");
    std::fs::write(test.root().join("single.yaml"), "states:\n  START:\n    sh: echo '<result>from yaml</result>'\n")
        .expect("yaml");
    let daemon = Daemon::start(&test, &[]);
    let listed = daemon.get("/api/v1/workflows").json();
    let workflows = listed["workflows"].as_array().expect("list");
    let ids: Vec<&str> = workflows.iter().filter_map(|w| w["id"].as_str()).collect();
    assert_eq!(ids, ["packed", "review-loop", "single", "wf"]);
    let kinds: Vec<&str> = workflows.iter().filter_map(|w| w["kind"].as_str()).collect();
    assert_eq!(kinds, ["zip", "directory", "yaml", "directory"]);
    for (workflow, result) in [("packed", "from the zip"), ("single", "from yaml")] {
        let run_id = daemon.start_run(workflow, json!({}));
        let done = daemon.wait_for_status(&run_id, "completed");
        assert_eq!(done["run"]["terminated"][0]["result"], result);
    }
    let review = &workflows[1];
    assert_eq!(review["name"], "Review loop");
    assert_eq!(review["input"], json!({"mode": "required", "label": "a PR", "description": "its URL"}));
    assert_eq!(review["description"], "Plans, codes and reviews a PR.");
    assert_eq!(review["working_directory"], "../repo");
    assert_eq!(review["environment"], json!(["TOKEN"]), "names only");
    assert!(!listed.to_string().contains("secret-value"), "a manifest's values never leave the daemon");
    let described = daemon.get("/api/v1/workflows/wf").json();
    assert_eq!(described["states"], json!(["START.sh", "TICK.sh"]));
    let nodes = described["diagram"]["nodes"].as_array().expect("nodes");
    let files: Vec<&str> = nodes.iter().filter_map(|node| node["file"].as_str()).collect();
    assert_eq!(files, ["START.sh", "TICK.sh"]);
    assert!(nodes.iter().all(|node| node["x"].is_number() && node["width"].is_number()));
    let edges = described["diagram"]["edges"].as_array().expect("edges");
    assert!(edges.iter().any(|edge| edge["label"].as_str().unwrap_or_default().starts_with("goto")), "{edges:?}");
    let missing = daemon.get("/api/v1/workflows/nope");
    assert_eq!(missing.status, 404);
    std::fs::create_dir_all(test.root().join("later")).expect("mkdir");
    std::fs::write(test.root().join("later/START.sh"), emit("<result>later</result>")).expect("write");
    let rescanned = daemon.post("/api/v1/workflows/rescan", &json!({})).json();
    assert_eq!(rescanned["workflows"].as_array().map(Vec::len), Some(5));
}

#[test]
fn a_run_goes_from_start_to_steps_report_rerun_and_delete() {
    let test = countdown();
    let daemon = Daemon::start(&test, &[]);
    let reply = daemon.post("/api/v1/runs", &json!({"workflow": "wf", "input": "2", "run_id": "first"}));
    assert_eq!(reply.status, 201, "{}", reply.body);
    assert_eq!(
        reply.json()["command"],
        "baton run ".to_string() + &test.root().join("wf").display().to_string() + " --run-id=first --input 2"
    );
    let done = daemon.wait_for_status("first", "completed");
    assert_eq!(done["run"]["steps_completed"], 4);
    assert_eq!(done["served"], true);
    assert!(done["trace_seq"].as_u64().unwrap_or_default() > 4);
    // The CLI sees the daemon's run as its own.
    let status = test.command(&["status".into(), "first".into()]).output().expect("baton status");
    assert!(String::from_utf8_lossy(&status.stdout).starts_with("run first: completed"));
    let listed = daemon.get("/api/v1/runs?status=completed").json();
    let entry = &listed["runs"][0];
    assert_eq!(
        (entry["run_id"].as_str(), entry["workflow_id"].as_str(), entry["steps"].as_u64()),
        (Some("first"), Some("wf"), Some(4))
    );
    assert_eq!(daemon.get("/api/v1/runs?status=running").json()["runs"], json!([]));
    assert_eq!(daemon.get("/api/v1/runs?status=bogus").status, 400);
    let timeline = daemon.get("/api/v1/runs/first/steps").json();
    let steps = timeline["steps"].as_array().expect("steps");
    let states: Vec<&str> = steps.iter().filter_map(|step| step["state"].as_str()).collect();
    assert_eq!(states, ["START.sh", "TICK.sh", "TICK.sh", "TICK.sh"]);
    assert!(steps.iter().all(|step| step["status"] == "done"));
    assert_eq!(steps[3]["tag"], "result");
    assert_eq!(timeline["agents"][0]["result"], "lift-off");
    let later = daemon.get(&format!("/api/v1/runs/first/steps?after={}", timeline["trace_seq"])).json();
    assert_eq!(later["steps"], json!([]), "nothing changed after the last line");
    let step = daemon.get("/api/v1/runs/first/steps/main/2").json();
    assert_eq!(step["state"], "TICK.sh");
    assert_eq!(step["kind"], "script");
    assert_eq!(step["script"]["stdout"], "tick 2\n<goto input=\"1\">TICK</goto>\n");
    assert_eq!(step["script"]["exit_code"], 0);
    assert_eq!(step["transition"]["tag"], "goto");
    assert_eq!(step["transition"]["attributes"]["input"], "1");
    let unknown_step = daemon.get("/api/v1/runs/first/steps/main/9");
    assert_eq!(unknown_step.status, 404);
    assert_eq!(unknown_step.json()["error"], "run `first` has no step 9 of agent `main`: its steps are 1 to 4");
    let report = daemon.get("/api/v1/runs/first/report").json();
    assert_eq!(report["run_id"], "first");
    assert_eq!(report["totals"]["steps"], 4, "{report}");
    let diagram = daemon.get("/api/v1/runs/first/diagram").json();
    let tick =
        diagram["diagram"]["nodes"].as_array().expect("nodes").iter().find(|node| node["file"] == "TICK.sh").cloned();
    assert_eq!(tick.expect("TICK node")["visits"], 3);
    let steps = daemon.get("/api/v1/runs/first/rerun-steps").json();
    assert_eq!(steps["steps"].as_array().map(Vec::len), Some(4));
    assert_eq!(steps["steps"][0]["state"], "START.sh");
    let from = steps["steps"][0]["commit"].as_u64().expect("commit");
    let rerun = daemon.post("/api/v1/runs/first/rerun", &json!({"from": from, "input": "1", "run_id": "again"}));
    assert_eq!(rerun.status, 201, "{}", rerun.body);
    assert_eq!(rerun.json()["command"], format!("baton rerun first --from {from} --run-id=again --input 1"));
    let again = daemon.wait_for_status("again", "completed");
    assert_eq!(again["run"]["steps_completed"], 3, "the taken-over step and two new ticks");
    let order: Vec<String> = daemon.get("/api/v1/runs").json()["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .filter_map(|run| run["run_id"].as_str().map(str::to_string))
        .collect();
    assert_eq!(order, ["again", "first"], "newest first");
    let resumed = daemon.post("/api/v1/runs/first/resume", &json!({}));
    assert_eq!(resumed.status, 409, "a completed run is not resumed: {}", resumed.body);
    assert_eq!(daemon.delete("/api/v1/runs/first").status, 204);
    assert_eq!(daemon.get("/api/v1/runs/first").status, 404);
    assert!(!test.root().join(".baton/runs/first").exists());
}

#[test]
fn bad_run_requests_are_refused_with_what_was_wrong() {
    let test = countdown().write("broken/START.md", "---\nmodel: sonet\n---\nHi <goto>NOWHERE</goto>\n");
    let daemon = Daemon::start(&test, &[]);
    let unknown = daemon.post("/api/v1/runs", &json!({"workflow": "nope"}));
    assert_eq!(unknown.status, 404, "{}", unknown.body);
    let typo = daemon.post("/api/v1/runs", &json!({"workflow": "wf", "budgett": 3}));
    assert_eq!(typo.status, 422, "{}", typo.body);
    let said = typo.json()["error"].as_str().unwrap_or_default().to_string();
    assert!(said.starts_with("the request body is not what this call takes: unknown field `budgett`"), "{said}");
    let resumed = daemon.post("/api/v1/runs/x/resume", &json!({"max_step": 3}));
    assert_eq!(resumed.status, 422, "{}", resumed.body);
    let negative = daemon.post("/api/v1/runs", &json!({"workflow": "wf", "budget": -1}));
    assert_eq!(negative.status, 400);
    let limit = daemon.post("/api/v1/runs", &json!({"workflow": "wf", "time_limit": "soon"}));
    assert_eq!(limit.status, 400);
    assert!(limit.body.contains("time_limit `soon`"), "{}", limit.body);
    let refused = daemon.post("/api/v1/runs", &json!({"workflow": "broken"}));
    assert_eq!(refused.status, 400, "{}", refused.body);
    assert!(refused.body.contains("lint error"), "the child's own refusal: {}", refused.body);
    let taken = daemon.post("/api/v1/runs", &json!({"workflow": "wf", "run_id": "dup"}));
    assert_eq!(taken.status, 201);
    let again = daemon.post("/api/v1/runs", &json!({"workflow": "wf", "run_id": "dup"}));
    assert_eq!(again.status, 409, "{}", again.body);
    daemon.wait_for_status("dup", "completed");
}

#[test]
fn names_from_requests_never_become_paths_outside_the_roots() {
    let test = countdown();
    let daemon = Daemon::start(&test, &[]);
    daemon.start_run("wf", json!({"run_id": "r"}));
    daemon.wait_for_status("r", "completed");
    for path in [
        "/api/v1/runs/..%2F..%2Fetc",
        "/api/v1/runs/..",
        "/api/v1/runs/r%2F..%2F..%2Fserve/steps",
        "/api/v1/workflows/..%2F..%2Fetc",
    ] {
        let reply = daemon.get(path);
        assert!(matches!(reply.status, 400 | 404), "{path}: {} {}", reply.status, reply.body);
    }
    let agent = daemon.get("/api/v1/runs/r/steps/..%2F..%2Fx/1");
    assert_eq!(agent.status, 400, "{}", agent.body);
    let bad_id = daemon.post("/api/v1/runs", &json!({"workflow": "wf", "run_id": "../../x"}));
    assert_eq!(bad_id.status, 400);
    let by_path = daemon.post("/api/v1/runs", &json!({"workflow": "../wf"}));
    assert_eq!(by_path.status, 404);
    let outside = daemon.post("/api/v1/runs", &json!({"workflow": "wf", "cwd": "/tmp"}));
    assert_eq!(outside.status, 403, "{}", outside.body);
    let sneaky = format!("{}/wf/../../..", test.root().display());
    let escaped = daemon.post("/api/v1/runs", &json!({"workflow": "wf", "cwd": sneaky}));
    assert_eq!(escaped.status, 403, "{}", escaped.body);
    let relative = daemon.post("/api/v1/runs", &json!({"workflow": "wf", "cwd": "wf"}));
    assert_eq!(relative.status, 400);
    let inside = daemon.post("/api/v1/runs", &json!({"workflow": "wf", "cwd": test.root().join("wf"), "run_id": "in"}));
    assert_eq!(inside.status, 201, "{}", inside.body);
    daemon.wait_for_status("in", "completed");
}

/// A workflow whose first state asks; the answer comes back in the result.
fn asking() -> Test {
    Test::new()
        .file("START.sh", &emit(r#"<ask next="GOT" timeout="1h" upload_bucket="true" upload_max_count="2" upload_max_size="100">Ship it?</ask>"#))
        .file("GOT.sh", &say("<result>answer=$BATON_INPUT</result>"))
}

#[test]
fn an_ask_is_listed_and_answered_over_http_while_the_run_stays_live() {
    let test = asking();
    let daemon = Daemon::start(&test, &[]);
    daemon.start_run("wf", json!({"run_id": "q"}));
    let waiting = daemon.wait_for_run("q", "an ask", |run| run["run"]["agents"][0]["status"] == "asking");
    assert_eq!(waiting["live"], true, "the run waits live, not stopped");
    let asks = daemon.get("/api/v1/runs/q/asks").json();
    let ask = &asks["asks"][0];
    assert_eq!(ask["prompt"], "Ship it?");
    assert_eq!(ask["mode"], "bucket");
    assert_eq!(ask["bucket"]["max_count"], 2);
    assert!(ask["deadline"].is_string(), "{ask}");
    let ask_id = ask["ask_id"].as_str().expect("ask_id").to_string();
    assert_eq!(daemon.get("/api/v1/asks").json()["asks"][0]["run_id"], "q");
    let wrong = daemon.post("/api/v1/runs/q/asks/ask_nobody_1", &json!({"text": "yes"}));
    assert_eq!(wrong.status, 404);
    let reply = daemon.post(&format!("/api/v1/runs/q/asks/{ask_id}"), &json!({"text": "yes"}));
    assert_eq!(reply.status, 202, "{}", reply.body);
    assert_eq!(reply.json()["delivered"], "live");
    assert_eq!(reply.json()["command"], format!("baton answer q --ask {ask_id} yes"));
    let done = daemon.wait_for_status("q", "completed");
    assert_eq!(done["run"]["terminated"][0]["result"], "answer=yes");
}

#[test]
fn uploads_land_in_the_asks_folder_and_oversized_ones_are_refused() {
    let test = asking();
    let daemon = Daemon::start(&test, &[]);
    daemon.start_run("wf", json!({"run_id": "up"}));
    let ask_id = daemon.first_ask("up")["ask_id"].as_str().expect("ask").to_string();
    let path = format!("/api/v1/runs/up/asks/{ask_id}");
    let big = vec![b'x'; 101];
    let oversized = daemon.post_form(&path, &[("text", "here")], &[("files", "big.bin", &big)]);
    assert_eq!(oversized.status, 413, "{}", oversized.body);
    assert!(oversized.body.contains("`big.bin` is larger than 100 bytes"), "{}", oversized.body);
    let too_many =
        daemon.post_form(&path, &[("text", "x")], &[("files", "a", b"1"), ("files", "b", b"2"), ("files", "c", b"3")]);
    assert_eq!(too_many.status, 413, "{}", too_many.body);
    let traversal = daemon.post_form(&path, &[("text", "x")], &[("files", "../escape.txt", b"1")]);
    assert_eq!(traversal.status, 400, "{}", traversal.body);
    let hidden = daemon.post_form(&path, &[("text", "x")], &[("files", ".bashrc", b"1")]);
    assert_eq!(hidden.status, 400, "{}", hidden.body);
    let wrong_field = daemon.post_form(&path, &[("text", "x")], &[("slot", "a.txt", b"1")]);
    assert_eq!(wrong_field.status, 400, "{}", wrong_field.body);
    let reply = daemon.post_form(&path, &[("text", "see attached")], &[("files", "notes.txt", b"hello")]);
    assert_eq!(reply.status, 202, "{}", reply.body);
    let done = daemon.wait_for_status("up", "completed");
    let result = done["run"]["terminated"][0]["result"].as_str().expect("result").to_string();
    assert!(result.starts_with("answer=see attached\n\nUploaded files:\n- "), "{result}");
    let saved = result.lines().last().and_then(|line| line.strip_prefix("- ")).and_then(|line| line.split(" (").next());
    let saved = std::path::PathBuf::from(saved.expect("a saved path"));
    assert!(saved.ends_with(format!("asks/{ask_id}/notes.txt")), "{}", saved.display());
    assert_eq!(std::fs::read_to_string(&saved).expect("uploaded file"), "hello");
    assert!(!saved.with_file_name("escape.txt").exists() && !saved.with_file_name("big.bin").exists());
    let kept: Vec<String> = std::fs::read_dir(saved.parent().expect("the ask's folder"))
        .expect("the ask's folder")
        .filter_map(|entry| entry.ok().map(|entry| entry.file_name().to_string_lossy().into_owned()))
        .collect();
    assert_eq!(kept, ["notes.txt"], "refused answers leave nothing behind");
}

#[test]
fn a_run_is_cancelled_then_resumed_with_a_bound_then_finished() {
    let test = Test::new()
        .file("START.sh", "echo '<goto input=\"1\">STEP</goto>'\n")
        .file(
            "STEP.sh",
            &with_wait_for(
                "n=$BATON_INPUT\necho \"step $n\" >> effects.log\n[ \"$n\" -eq 3 ] && wait_for go.flag\n\
                 if [ \"$n\" -ge 8 ]; then echo '<result>done</result>'; else echo \"<goto input=\\\"$((n + 1))\\\">STEP</goto>\"; fi\n",
            ),
        );
    let daemon = Daemon::start(&test, &[]);
    daemon.start_run("wf", json!({"run_id": "c"}));
    assert!(test.wait_for_file("effects.log"));
    daemon.wait_for_run("c", "step 3", |_| {
        std::fs::read_to_string(test.root().join("effects.log")).unwrap_or_default().contains("step 3")
    });
    let cancel = daemon.post("/api/v1/runs/c/cancel", &json!({}));
    assert_eq!(cancel.status, 202, "{}", cancel.body);
    assert!(cancel.json()["command"].as_str().unwrap_or_default().starts_with("kill -INT "));
    std::fs::write(test.root().join("go.flag"), "").expect("flag");
    let stopped = daemon.wait_for_status("c", "interrupted");
    let steps = stopped["run"]["steps_completed"].as_u64().expect("steps");
    assert_eq!(steps, 4, "START, steps 1 and 2, and step 3 that was in flight and finished");
    let again = daemon.post("/api/v1/runs/c/cancel", &json!({}));
    assert_eq!(again.status, 409);
    let resumed = daemon.post("/api/v1/runs/c/resume", &json!({"max_steps": 6}));
    assert_eq!(resumed.status, 202, "{}", resumed.body);
    assert_eq!(resumed.json()["command"], "baton resume c --max-steps 6");
    let paused = daemon.wait_for_status("c", "paused");
    assert_eq!(paused["run"]["steps_completed"], 6);
    let resumed = daemon.post("/api/v1/runs/c/resume", &json!({"max_steps": 100}));
    assert_eq!(resumed.status, 202, "a paused run whose child has ended resumes: {}", resumed.body);
    let done = daemon.wait_for_status("c", "completed");
    assert_eq!(done["run"]["steps_completed"], 9);
    let effects = std::fs::read_to_string(test.root().join("effects.log")).expect("effects");
    let lines: Vec<&str> = effects.lines().collect();
    assert_eq!(lines, (1..=8).map(|n| format!("step {n}")).collect::<Vec<_>>(), "no step ran twice");
    let deleted = daemon.delete("/api/v1/runs/c");
    assert_eq!(deleted.status, 204);
}

#[test]
fn twenty_clients_read_and_follow_one_run_at_once() {
    let test = countdown();
    let daemon = std::sync::Arc::new(Daemon::start(&test, &[]));
    let run_id = daemon.start_run("wf", json!({"input": "30", "run_id": "busy"}));
    let mut handles = Vec::new();
    for client in 0..20 {
        let daemon = std::sync::Arc::clone(&daemon);
        let run_id = run_id.clone();
        handles.push(std::thread::spawn(move || {
            if client % 4 == 0 {
                let mut stream = daemon.events(&format!("/api/v1/runs/{run_id}/events"), Some(0));
                let seen = stream.until(|event| event.event == "WorkflowCompleted");
                let ids: Vec<u64> = seen.iter().filter_map(|event| event.id.as_deref()?.parse().ok()).collect();
                assert!(ids.windows(2).all(|pair| pair[1] == pair[0] + 1), "client {client}: gaps in {ids:?}");
                return;
            }
            for _ in 0..10 {
                for path in ["/api/v1/runs", "/api/v1/health", "/api/v1/workflows"] {
                    let reply = daemon.get(path);
                    assert_eq!(reply.status, 200, "client {client}: {path}: {}", reply.body);
                }
                let reply = daemon.get(&format!("/api/v1/runs/{run_id}/steps"));
                assert_eq!(reply.status, 200);
                std::thread::sleep(Duration::from_millis(10));
            }
        }));
    }
    for handle in handles {
        handle.join().expect("a client failed");
    }
    daemon.wait_for_status(&run_id, "completed");
}

#[test]
fn a_run_started_with_the_cli_is_seen_and_followed_by_the_daemon() {
    let test = Test::new().file("START.sh", &with_wait_for("wait_for go.flag\necho '<result>from the cli</result>'\n"));
    let daemon = Daemon::start(&test, &[]);
    let mut cli = test.spawn(&["run", "wf", "--run-id", "cli", "-q"]);
    let live = daemon.wait_for_run("cli", "a live run", |run| run["live"] == true);
    assert_eq!(live["served"], false);
    assert_eq!(daemon.get("/api/v1/runs?status=running").json()["runs"][0]["run_id"], "cli");
    let mut stream = daemon.events("/api/v1/runs/cli/events", None);
    std::fs::write(test.root().join("go.flag"), "").expect("flag");
    let seen = stream.until(|event| event.event == "WorkflowCompleted");
    assert!(seen.iter().any(|event| event.event == "AgentTerminated" && event.data.contains("from the cli")));
    assert!(cli.wait().expect("cli run").success());
    let resumed = daemon.post("/api/v1/runs/cli/resume", &json!({}));
    assert_eq!(resumed.status, 409);
}

#[test]
fn shutdown_over_http_stops_the_daemon() {
    let test = countdown();
    let daemon = Daemon::start(&test, &[]);
    let reply = daemon.post("/api/v1/shutdown", &json!({}));
    assert_eq!(reply.status, 202);
    assert_eq!(daemon.stop(), 0);
}

#[test]
fn one_agent_of_a_live_run_is_cancelled_while_the_others_go_on_then_resumed() {
    let test = Test::new()
        .file("START.sh", &emit(r#"<fork next="WAIT" input="1">W</fork>"#))
        .file(
            "W.sh",
            "n=$BATON_INPUT\necho \"w $n\" >> worker.log\nsleep 0.05\n\
             if [ \"$n\" -ge 40 ]; then echo '<result>worked</result>'; else echo \"<goto input=\\\"$((n + 1))\\\">W</goto>\"; fi\n",
        )
        .file("WAIT.sh", &with_wait_for("wait_for done.flag\necho '<result>main done</result>'\n"));
    let daemon = Daemon::start(&test, &[]);
    daemon.start_run("wf", json!({"run_id": "team"}));
    assert!(test.wait_for_file("worker.log"));
    let run = daemon.get("/api/v1/runs/team").json();
    let worker = run["run"]["agents"]
        .as_array()
        .expect("agents")
        .iter()
        .filter_map(|agent| agent["id"].as_str())
        .find(|id| *id != "main")
        .expect("a worker")
        .to_string();
    let reply = daemon.post("/api/v1/runs/team/cancel", &json!({"agent": worker}));
    assert_eq!(reply.status, 202, "{}", reply.body);
    let paused = daemon.wait_for_run("team", "the worker paused", |run| {
        run["run"]["agents"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|agent| agent["id"] == worker.as_str() && agent["status"] == "paused")
    });
    let agent = paused["run"]["agents"]
        .as_array()
        .expect("agents")
        .iter()
        .find(|agent| agent["id"] == worker.as_str())
        .cloned();
    assert_eq!(agent.expect("worker")["pause_reason"], "cancelled");
    assert_eq!(paused["live"], true, "the rest of the run goes on");
    let ticks = std::fs::read_to_string(test.root().join("worker.log")).expect("log").lines().count();
    std::fs::write(test.root().join("done.flag"), "").expect("flag");
    let stopped = daemon.wait_for_status("team", "paused");
    assert_eq!(stopped["run"]["terminated"][0]["result"], "main done");
    let later = std::fs::read_to_string(test.root().join("worker.log")).expect("log").lines().count();
    assert!(later <= ticks + 1, "the cancelled worker ran at most the step it was in: {ticks} then {later}");
    assert_eq!(daemon.post("/api/v1/runs/team/resume", &json!({})).status, 202);
    let done = daemon.wait_for_status("team", "completed");
    let results: Vec<&str> = done["run"]["terminated"]
        .as_array()
        .expect("terminated")
        .iter()
        .filter_map(|agent| agent["result"].as_str())
        .collect();
    assert!(results.contains(&"worked"), "{results:?}");
    let not_ours = daemon.post("/api/v1/runs/team/cancel", &json!({"agent": "main"}));
    assert_eq!(not_ours.status, 409, "{}", not_ours.body);
}

#[test]
fn an_asks_display_files_are_downloaded_by_name_and_nothing_else_is() {
    let test = Test::new()
        .file(
            "START.sh",
            "mkdir -p out && printf 'quarterly numbers' > out/report.txt && printf '# notes' > notes.md\n\
             echo '<ask next=\"GOT\" display_files=\"out/report.txt:Report.txt, notes.md\">Look?</ask>'\n",
        )
        .file("GOT.sh", &say("<result>answer=$BATON_INPUT</result>"));
    let daemon = Daemon::start(&test, &[]);
    daemon.start_run("wf", json!({"run_id": "show"}));
    let ask = daemon.first_ask("show");
    assert_eq!(ask["mode"], "display");
    assert_eq!(
        ask["display_files"],
        json!([{"source": "out/report.txt", "name": "Report.txt"}, {"source": "notes.md", "name": "notes.md"}])
    );
    let ask_id = ask["ask_id"].as_str().expect("ask_id");
    let file = daemon.get(&format!("/api/v1/runs/show/asks/{ask_id}/files/Report.txt"));
    assert_eq!(file.status, 200, "{}", file.body);
    assert_eq!(file.body, "quarterly numbers");
    assert_eq!(file.header("content-type"), Some("application/octet-stream"));
    assert_eq!(file.header("content-disposition"), Some("attachment; filename=\"Report.txt\""));
    for name in ["report.txt", "..%2F..%2F..%2Fruns%2Fshow%2Fstate.json", "GOT.sh"] {
        let refused = daemon.get(&format!("/api/v1/runs/show/asks/{ask_id}/files/{name}"));
        assert_eq!(refused.status, 404, "{name}: {}", refused.body);
    }
    daemon.post(&format!("/api/v1/runs/show/asks/{ask_id}"), &json!({"text": "seen"}));
    daemon.wait_for_status("show", "completed");
    let gone = daemon.get(&format!("/api/v1/runs/show/asks/{ask_id}/files/Report.txt"));
    assert_eq!(gone.status, 404, "an answered ask shows nothing any more");
}

/// `baton answer` of a run the daemon drives hands the answer to the daemon; once the
/// daemon is gone the CLI says who holds the run, as before.
#[test]
fn baton_answer_at_a_terminal_reaches_a_run_the_daemon_drives() {
    let test = asking();
    let daemon = Daemon::start(&test, &[]);
    daemon.start_run("wf", json!({"run_id": "handed"}));
    daemon.first_ask("handed");
    let address = std::fs::read_to_string(test.root().join(".baton/serve/address")).expect("address file");
    assert_eq!(address.trim(), daemon.url);
    let answered =
        test.command(&["answer".into(), "handed".into(), "from the terminal".into()]).output().expect("baton");
    let stderr = String::from_utf8_lossy(&answered.stderr);
    assert_eq!(answered.status.code(), Some(0), "{stderr}");
    assert_eq!(stderr.trim(), format!("answered through baton serve at {}: run handed goes on there", daemon.url));
    let done = daemon.wait_for_status("handed", "completed");
    assert_eq!(done["run"]["terminated"][0]["result"], "answer=from the terminal");
    let again = test.command(&["answer".into(), "handed".into(), "late".into()]).output().expect("baton");
    assert_eq!(again.status.code(), Some(1));
    assert_eq!(daemon.stop(), 0);
    assert!(!test.root().join(".baton/serve/address").exists(), "a stopped daemon takes its address away");
}

/// With `--allow-remote` another machine's name for this host is accepted; the
/// token and the origin check still guard every request.
#[test]
fn allow_remote_serves_every_interface_and_still_needs_the_token() {
    let test = countdown();
    let daemon = Daemon::start_at(&test, "0.0.0.0:0", &["--allow-remote"]);
    let port = daemon.url.rsplit(':').next().unwrap_or_default().to_string();
    let bearer = format!("Bearer {}", daemon.token);
    let by_name =
        daemon.get_with("/api/v1/health", &[("Authorization", &bearer), ("Host", &format!("build-box.lan:{port}"))]);
    assert_eq!(by_name.status, 200, "{}", by_name.body);
    assert_eq!(daemon.get_with("/api/v1/health", &[("Host", &format!("build-box.lan:{port}"))]).status, 401);
    let foreign = daemon.post_with(
        "/api/v1/workflows/rescan",
        &json!({}),
        &[("Authorization", &bearer), ("Origin", "http://evil.example")],
    );
    assert_eq!(foreign.status, 403);
    let own = daemon.post_with(
        "/api/v1/workflows/rescan",
        &json!({}),
        &[
            ("Authorization", &bearer),
            ("Host", &format!("build-box.lan:{port}")),
            ("Origin", &format!("http://build-box.lan:{port}")),
        ],
    );
    assert_eq!(own.status, 200, "the page served under that name may change things: {}", own.body);
}

/// Regression: two resumes at once started two children; the second lost to the
/// run's lock, and the daemon forgot the first, so answers and cancels no longer
/// reached the live run.
#[test]
fn two_resumes_at_once_start_one_child_and_the_run_stays_reachable() {
    let test = Test::new()
        .file("START.sh", &with_wait_for("wait_for go.flag\necho '<goto>ASK</goto>'\n"))
        .file("ASK.sh", &emit(r#"<ask next="GOT">Again?</ask>"#))
        .file("GOT.sh", &say("<result>answer=$BATON_INPUT</result>"));
    let daemon = std::sync::Arc::new(Daemon::start(&test, &[]));
    daemon.start_run("wf", json!({"run_id": "twice"}));
    assert_eq!(daemon.post("/api/v1/runs/twice/cancel", &json!({})).status, 202);
    std::fs::write(test.root().join("go.flag"), "").expect("flag");
    daemon.wait_for_status("twice", "interrupted");
    let racers: Vec<_> = (0..2)
        .map(|_| {
            let daemon = std::sync::Arc::clone(&daemon);
            std::thread::spawn(move || daemon.post("/api/v1/runs/twice/resume", &json!({})).status)
        })
        .collect();
    let mut statuses: Vec<u16> = racers.into_iter().map(|racer| racer.join().expect("a resume")).collect();
    statuses.sort_unstable();
    assert_eq!(statuses, [202, 409]);
    daemon.wait_for_run("twice", "the ask", |run| run["run"]["agents"][0]["status"] == "asking");
    let ask = daemon.get("/api/v1/runs/twice/asks").json()["asks"][0]["ask_id"].as_str().expect("ask").to_string();
    let answered = daemon.post(&format!("/api/v1/runs/twice/asks/{ask}"), &json!({"text": "yes"}));
    assert_eq!(answered.json()["delivered"], "live", "{}", answered.body);
    let done = daemon.wait_for_status("twice", "completed");
    assert_eq!(done["run"]["terminated"][0]["result"], "answer=yes");
}

/// Upload slots (R3.29): each file goes in its slot's field, of a media type the
/// slot takes; a bucket's `upload_mime` is kept to as well.
#[test]
fn slots_take_their_own_media_types() {
    let test = Test::new()
        .file("START.sh", &emit(r#"<ask next="GOT" upload_slots="report:application/pdf,shot:image/*">Files?</ask>"#))
        .file("GOT.sh", &say("<result>$BATON_INPUT</result>"));
    let daemon = Daemon::start(&test, &[]);
    daemon.start_run("wf", json!({"run_id": "slots"}));
    let ask = daemon.first_ask("slots");
    assert_eq!(ask["mode"], "slots");
    assert_eq!(
        ask["slots"],
        json!([{"name": "report", "mime": ["application/pdf"]}, {"name": "shot", "mime": ["image/*"]}])
    );
    let path = format!("/api/v1/runs/slots/asks/{}", ask["ask_id"].as_str().expect("ask_id"));
    let wrong = daemon.post_form_typed(&path, &[("text", "x")], &[("report", "r.txt", "text/plain", b"plain")]);
    assert_eq!(wrong.status, 415, "{}", wrong.body);
    assert_eq!(wrong.json()["error"], "`r.txt` is text/plain; this ask takes application/pdf");
    let good = daemon.post_form_typed(
        &path,
        &[("text", "both")],
        &[("report", "r.pdf", "application/pdf", b"%PDF-1.4"), ("shot", "s.png", "image/png", b"\x89PNG")],
    );
    assert_eq!(good.status, 202, "{}", good.body);
    let done = daemon.wait_for_status("slots", "completed");
    let result = done["run"]["terminated"][0]["result"].as_str().expect("result").to_string();
    assert!(result.contains("/report (8 bytes)") && result.contains("/shot (4 bytes)"), "{result}");
}

/// The page is split into ES modules by view (issue 24), served as they are: the
/// index loads `main.js` as a module and every module it reaches through `import`
/// is served as JavaScript under the page's content security policy. Nothing
/// outside the embedded list is served.
#[test]
fn the_page_loads_one_es_module_per_view_and_serves_nothing_else_under_assets() {
    let test = countdown();
    let daemon = Daemon::start(&test, &[]);
    let page = daemon.get_with("/", &[]);
    assert!(page.body.contains(r#"<script type="module" src="/assets/main.js"></script>"#), "{}", page.body);
    let import = regex::Regex::new(r#"(?m)^import \{[^}]*\} from "\./([a-z-]+\.js)";$"#).expect("pattern");
    let mut seen = std::collections::BTreeSet::new();
    let mut queue = vec!["main.js".to_owned()];
    while let Some(name) = queue.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        let module = daemon.get_with(&format!("/assets/{name}"), &[]);
        assert_eq!(module.status, 200, "{name}");
        assert_eq!(module.header("content-type"), Some("text/javascript; charset=utf-8"), "{name}");
        assert!(module.header("content-security-policy").unwrap_or_default().contains("script-src 'self'"), "{name}");
        queue.extend(import.captures_iter(&module.body).map(|found| found[1].to_owned()));
    }
    let views = ["home.js", "run.js", "timeline.js", "graph.js", "step.js", "asks.js", "stepping.js"];
    for view in views {
        assert!(seen.contains(view), "{view} is reached from main.js: {seen:?}");
    }
    for missing in ["/assets/app.js", "/assets/nope.js", "/assets/..%2FCargo.toml", "/assets/main.js.map"] {
        assert_eq!(daemon.get_with(missing, &[]).status, 404, "{missing}");
    }
}
