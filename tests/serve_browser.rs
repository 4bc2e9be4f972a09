//! `baton serve`'s page in a real headless Chromium against a real daemon: a run
//! started from the page and watched live to its end, a step opened from the
//! timeline, a question answered from its form (with a file), a prompt full of
//! markup shown as text, and a 10,000-step run whose page renders every step
//! without an element each (how fast: `cargo bench --bench serve_render`).
//! Screenshots go to `target/test-artifacts/serve-*.png` for a person to look at.
//! Workflows are scripts, or prompts answered by the fake Claude.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::conformance::common::emit;
use crate::support::Test;
use crate::support::browser::{Browser, artifact_dir};
use crate::support::fake_claude::{FakeClaude, Reply};
use crate::support::restate_min::{Reaped, RestateOptions, RestateServer, exclusive};
use crate::support::serve::{Daemon, ten_thousand_steps};

const WAIT: Duration = Duration::from_secs(30);

/// The page at `route` (`/`, `/runs/ID`, …), handed the token in the fragment.
fn page(daemon: &Daemon, route: &str) -> String {
    format!("{}/#token={}&{route}", daemon.url, daemon.token)
}

/// `document.querySelector` of a test hook.
fn hook(testid: &str) -> String {
    format!("document.querySelector('[data-testid={testid}]')")
}

fn text_of(browser: &mut Browser, testid: &str) -> String {
    browser.eval(&format!("{}.textContent", hook(testid))).as_str().unwrap_or_default().to_string()
}

/// Open the run page of `run_id` as a fresh document and wait for its first render.
fn open_run(browser: &mut Browser, daemon: &Daemon, run_id: &str) {
    browser.goto("about:blank");
    browser.goto(&page(daemon, &format!("/runs/{run_id}")));
    browser.wait_for(&format!("window.baton.rendered && window.baton.rendered.run === '{run_id}'"), WAIT);
}

fn no_page_errors(browser: &Browser) {
    assert_eq!(browser.console_errors(), Vec::<String>::new(), "the page logged errors");
}

#[test]
fn a_run_started_from_the_page_grows_live_and_its_steps_open_from_the_timeline() {
    let test = Test::new().file("START.sh", "echo \"<goto input=\\\"${BATON_INPUT:-3}\\\">TICK</goto>\"\n").file(
        "TICK.sh",
        "n=$BATON_INPUT\necho \"tick $n\"\necho \"note $n\" >&2\nsleep 0.25\n\
         if [ \"$n\" -le 0 ]; then echo '<result>lift-off</result>'; else echo \"<goto input=\\\"$((n - 1))\\\">TICK</goto>\"; fi\n",
    );
    let daemon = Daemon::start(&test, &[]);
    let mut browser = Browser::launch();
    browser.goto(&page(&daemon, "/"));
    browser.wait_for("document.querySelector('[data-testid=workflow-row][data-workflow-id=wf]')", WAIT);
    assert_eq!(browser.eval("location.hash"), "#/", "the token leaves the address bar");
    assert_eq!(browser.eval("sessionStorage.getItem('baton.token')"), daemon.token.as_str());

    // Start it from the workflow's form.
    browser.eval("document.querySelector('[data-testid=workflow-row][data-workflow-id=wf]').click()");
    browser.wait_for(&hook("start-form"), WAIT);
    browser.eval(&format!("{}.value = '8'; {}.click()", hook("start-input"), hook("start-submit")));
    let hash = browser.wait_for("location.hash.startsWith('#/runs/') && location.hash", WAIT);
    let run_id = hash.as_str().unwrap_or_default().trim_start_matches("#/runs/").to_string();
    browser.wait_for(&format!("window.baton.rendered && window.baton.rendered.run === '{run_id}'"), WAIT);
    assert!(text_of(&mut browser, "cli-command").contains("baton run"), "the page shows the command it ran");

    // Every value the timeline summary takes from now on, to see it grow step by step.
    browser.eval(&format!(
        "window.seenSteps = [{summary}.dataset.steps];
         new MutationObserver(() => window.seenSteps.push({summary}.dataset.steps))
           .observe({summary}, {{attributes: true, attributeFilter: ['data-steps']}});",
        summary = hook("timeline-summary")
    ));
    browser.wait_for(&format!("Number({}.dataset.steps) >= 4", hook("timeline-summary")), WAIT);
    let status = browser.eval(&format!("{}.dataset.status", hook("run-status")));
    browser.screenshot(&artifact_dir().join("serve-live-run.png"));
    assert_eq!(status, "running", "the run is still going while its steps appear");

    browser.wait_for(
        &format!(
            "{}.dataset.status === 'completed' && {}.dataset.steps === '10'",
            hook("run-status"),
            hook("timeline-summary")
        ),
        WAIT,
    );
    let seen: Vec<u64> = browser
        .eval("window.seenSteps.map(Number)")
        .as_array()
        .expect("an array")
        .iter()
        .filter_map(Value::as_u64)
        .collect();
    assert!(seen.windows(2).all(|pair| pair[0] <= pair[1]), "the step count only grows: {seen:?}");
    let distinct = seen.iter().collect::<std::collections::BTreeSet<_>>().len();
    assert!(distinct >= 4, "the timeline grew as the run went, not all at once: {seen:?}");
    let served = daemon.get(&format!("/api/v1/runs/{run_id}/steps")).json();
    assert_eq!(served["steps"].as_array().map(Vec::len), Some(10), "the page drew what the daemon has");
    let graph = browser.eval(
        "Object.fromEntries([...document.querySelectorAll('[data-testid=graph-node]')].map(node => [node.dataset.state, node.dataset.visits]))",
    );
    assert_eq!(graph, json!({"START.sh": "1", "TICK.sh": "9"}), "visit counts on the graph");

    // A click on a bar of the canvas opens its step, as for a person.
    let bar = browser.eval("window.baton.barCenter('main', 4)");
    browser.eval(&format!(
        "{}.dispatchEvent(new MouseEvent('click', {{clientX: {}, clientY: {}, bubbles: true}}))",
        hook("timeline"),
        bar["x"],
        bar["y"]
    ));
    browser.wait_for(&format!("{}.dataset.loaded === 'true'", hook("step-inspector")), WAIT);
    assert_eq!(browser.eval("location.hash"), format!("#/runs/{run_id}/steps/main/4").as_str());
    assert_eq!(text_of(&mut browser, "step-stdout"), "tick 6\n<goto input=\"5\">TICK</goto>\n");
    assert_eq!(text_of(&mut browser, "step-stderr"), "note 6\n");
    assert!(text_of(&mut browser, "step-exit").starts_with("exit 0"), "{}", text_of(&mut browser, "step-exit"));
    let transition = text_of(&mut browser, "step-transition");
    assert!(transition.contains("<goto> → TICK.sh") && transition.contains("5"), "{transition}");

    // The test hook opens the same way; the last step is the result.
    browser.eval("window.baton.openStep('main', 10)");
    browser.wait_for(
        &format!(
            "{}.dataset.step === '10' && {}.dataset.loaded === 'true'",
            hook("step-inspector"),
            hook("step-inspector")
        ),
        WAIT,
    );
    assert!(text_of(&mut browser, "step-output").contains("<result>lift-off</result>"));
    assert!(text_of(&mut browser, "step-transition").contains("<result> → (terminated)"));
    browser.screenshot(&artifact_dir().join("serve-step.png"));

    browser.goto(&page(&daemon, "/"));
    browser.wait_for(
        &format!("document.querySelector('[data-testid=run-row][data-run-id=\"{run_id}\"][data-status=completed]')"),
        WAIT,
    );
    browser.screenshot(&artifact_dir().join("serve-run-list.png"));
    no_page_errors(&browser);
}

#[test]
fn a_question_is_answered_from_its_form_with_a_file_and_the_run_goes_on() {
    let test = Test::new()
        .file(
            "START.sh",
            &emit(r#"<ask next="GOT" timeout="10m" upload_bucket="true" upload_max_count="2">Ship it? Attach the notes.</ask>"#),
        )
        .file("GOT.sh", "echo \"<result>answer=$BATON_INPUT</result>\"\n");
    let daemon = Daemon::start(&test, &[]);
    daemon.start_run("wf", json!({"run_id": "q"}));
    daemon.wait_for_run("q", "an ask", |run| run["run"]["agents"][0]["status"] == "asking");
    let mut browser = Browser::launch();
    open_run(&mut browser, &daemon, "q");
    browser.wait_for(&hook("ask-form"), WAIT);
    let ask_id = daemon.get("/api/v1/runs/q/asks").json()["asks"][0]["ask_id"].as_str().expect("an ask").to_string();
    assert_eq!(browser.eval(&format!("{}.dataset.askId", hook("ask-form"))), ask_id.as_str());
    assert!(text_of(&mut browser, "ask-form").contains("Ship it? Attach the notes."));
    let countdown = browser.wait_for(
        &format!("/times out in (10:00|9:[0-5][0-9])/.test({0}.textContent) && {0}.textContent", hook("ask-countdown")),
        WAIT,
    );
    let first: u64 =
        browser.eval(&format!("Number({}.dataset.remainingMs)", hook("ask-countdown"))).as_u64().unwrap_or(0);
    browser
        .wait_for(&format!("Number({}.dataset.remainingMs) < {first}", hook("ask-countdown")), Duration::from_secs(5));
    assert!(countdown.as_str().unwrap_or_default().ends_with(", then the agent pauses"), "{countdown}");

    browser.eval(&format!(
        "{}.value = 'yes from the page';
         const files = new DataTransfer();
         files.items.add(new File(['hello'], 'notes.txt', {{type: 'text/plain'}}));
         document.querySelector('[data-testid=ask-form] input[type=file]').files = files.files;",
        hook("ask-text")
    ));
    browser.screenshot(&artifact_dir().join("serve-ask.png"));
    browser.eval(&format!("{}.click()", hook("ask-submit")));
    browser.wait_for(&format!("{}.dataset.command", hook("cli-command")), WAIT);
    assert!(text_of(&mut browser, "cli-command").contains(&format!("baton answer q --ask {ask_id}")));
    browser.wait_for(&format!("{}.dataset.status === 'completed'", hook("run-status")), WAIT);
    browser.wait_for(&format!("!{}", hook("ask-form")), WAIT);
    let done = daemon.wait_for_status("q", "completed");
    let result = done["run"]["terminated"][0]["result"].as_str().expect("a result").to_string();
    assert!(result.starts_with("answer=yes from the page\n\nUploaded files:\n- "), "{result}");
    assert!(result.contains(&format!("asks/{ask_id}/notes.txt (5 bytes)")), "{result}");
    no_page_errors(&browser);
}

/// A distributed run (`--engine restate=URL`, one worker) seen in the daemon: the
/// timeline's steps and the step inspector name the worker that ran each step.
#[test]
fn a_distributed_runs_steps_name_their_worker_in_the_timeline_and_the_inspector() {
    let _one = exclusive();
    let server = RestateServer::start(RestateOptions::default());
    let test =
        Test::new().file("START.sh", "echo '<goto>END.sh</goto>'\n").file("END.sh", "echo '<result>e</result>'\n");
    let _worker = Reaped(server.start_worker(&test, "w7", &[]));
    let outcome = test.run_workflow(&["--engine", &server.engine()]);
    outcome.status(0);
    let test = outcome.into_test();
    let daemon = Daemon::start(&test, &[]);
    let timeline: Value = serde_json::from_str(&daemon.get("/api/v1/runs/test/steps").body).expect("timeline");
    let workers: Vec<&str> =
        timeline["steps"].as_array().expect("steps").iter().filter_map(|step| step["worker"].as_str()).collect();
    assert_eq!(workers, ["w7", "w7"], "{timeline}");
    let mut browser = Browser::launch();
    browser.goto("about:blank");
    browser.goto(&page(&daemon, "/runs/test/steps/main/2"));
    browser.wait_for(&format!("{}.dataset.loaded === 'true'", hook("step-inspector")), WAIT);
    assert_eq!(text_of(&mut browser, "step-worker"), "on worker w7");
    no_page_errors(&browser);
}

#[test]
fn markup_in_a_prompt_an_output_or_a_question_shows_as_text_and_never_runs() {
    let markup = r#"<script>window.pwned = 1; document.title = 'pwned'</script><img src=x onerror="window.pwned = 2">"#;
    let test = Test::new().with_fake_claude();
    let said = format!("I read {markup}\n<goto>ASK.sh</goto>");
    FakeClaude::at(test.root()).rule("review", "REVIEW THIS", Reply::text(&said));
    let test = test
        .file("START.md", &format!("REVIEW THIS: {markup}\n"))
        .file("ASK.sh", &emit(&format!(r#"<ask next="END">Really? {markup}</ask>"#)))
        .file("END.sh", "echo \"<result>$BATON_INPUT</result>\"\n");
    let daemon = Daemon::start(&test, &[]);
    daemon.start_run("wf", json!({"run_id": "x"}));
    daemon.wait_for_run("x", "an ask", |run| run["run"]["agents"][0]["status"] == "asking");
    let mut browser = Browser::launch();
    browser.goto("about:blank");
    browser.goto(&page(&daemon, "/runs/x/steps/main/1"));
    browser.wait_for(&format!("{}.dataset.loaded === 'true'", hook("step-inspector")), WAIT);
    browser.wait_for(&hook("ask-form"), WAIT);
    assert!(text_of(&mut browser, "step-prompt").contains(&format!("REVIEW THIS: {markup}")));
    assert!(text_of(&mut browser, "step-output").contains(&format!("I read {markup}")));
    assert!(text_of(&mut browser, "ask-form").contains(&format!("Really? {markup}")));
    let executed = browser.eval(
        "JSON.stringify({pwned: window.pwned === undefined ? null : window.pwned, title: document.title,
          elements: document.querySelectorAll('#view img, #view script, #view [onerror]').length})",
    );
    assert_eq!(
        executed, r#"{"pwned":null,"title":"x · baton","elements":0}"#,
        "no markup from the run became an element"
    );
    no_page_errors(&browser);
}

/// The daemon's `baton_sse_clients`: event streams it is serving now.
fn sse_clients(daemon: &Daemon) -> u64 {
    let metrics = daemon.get("/metrics").body;
    metrics
        .lines()
        .find_map(|line| line.strip_prefix("baton_sse_clients "))
        .and_then(|value| value.trim().parse::<f64>().ok())
        .map_or(u64::MAX, |value| value as u64)
}

fn wait_for_sse_clients(daemon: &Daemon, want: u64, why: &str) {
    let deadline = Instant::now() + WAIT;
    while sse_clients(daemon) != want {
        assert!(
            Instant::now() < deadline,
            "{why}: the daemon serves {} event streams, not {want}",
            sse_clients(daemon)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Hide the page as a tab behind another is hidden (its `visibilityState`), and show it.
const HIDE: &str = "Object.defineProperty(document, 'visibilityState', {configurable: true, get: () => 'hidden'}); \
                    document.dispatchEvent(new Event('visibilitychange'))";
const SHOW: &str = "delete document.visibilityState; document.dispatchEvent(new Event('visibilitychange'))";

/// Regression: a run page left for another kept its event stream open (Chromium
/// keeps a left page whole in its back/forward cache, fetches included), and a
/// browser keeps six HTTP/1.1 connections to one host for all its tabs: the
/// seventh run page opened in a tab never loaded. A page now lets its stream go
/// when it is hidden or left, and reads what it missed when it is shown again.
#[test]
fn a_page_left_or_hidden_lets_its_event_stream_go_and_catches_up_when_shown_again() {
    // TICK n waits for the file `gates/n`: the test lets the run go step by step.
    let test = Test::new();
    let gates = test.root().join("gates");
    std::fs::create_dir(&gates).expect("gates");
    let test = test.file("START.sh", "echo '<goto input=\"10\">TICK</goto>'\n").file(
        "TICK.sh",
        &format!(
            "n=$BATON_INPUT\nuntil [ -e '{}'/$n ]; do sleep 0.02; done\n\
             if [ \"$n\" -le 0 ]; then echo '<result>done</result>'; else echo \"<goto input=\\\"$((n - 1))\\\">TICK</goto>\"; fi\n",
            gates.display()
        ),
    );
    let open_gates = |gates_to_open: std::ops::RangeInclusive<u32>| {
        for n in gates_to_open {
            std::fs::write(gates.join(n.to_string()), "").expect("a gate");
        }
    };
    let daemon = Daemon::start(&test, &[]);
    let run_id = daemon.start_run("wf", json!({}));
    daemon.wait_for_run(&run_id, "its first step", |run| run["summary"]["steps"] == 1);
    let mut browser = Browser::launch();
    let steps_shown = |browser: &mut Browser| {
        browser.eval(&format!("Number({}.dataset.steps)", hook("timeline-summary"))).as_u64().unwrap_or(0)
    };

    // Seven times the page of the run, each load leaving the one before.
    for _ in 0..7 {
        open_run(&mut browser, &daemon, &run_id);
    }
    wait_for_sse_clients(&daemon, 1, "the last page's stream alone is open");
    // START and the running TICK 10.
    assert_eq!(steps_shown(&mut browser), 2);

    // Hidden (as a tab behind another, told by its visibilityState): the stream
    // goes; shown again, the page reads what it missed.
    browser.eval(HIDE);
    wait_for_sse_clients(&daemon, 0, "a hidden page lets its stream go");
    open_gates(6..=10);
    daemon.wait_for_run(&run_id, "six steps", |run| run["summary"]["steps"] == 6);
    assert_eq!(steps_shown(&mut browser), 2, "a hidden page has no stream to grow from");
    browser.eval(SHOW);
    wait_for_sse_clients(&daemon, 1, "a page shown again reconnects");
    browser.wait_for(&format!("{}.dataset.steps === '7'", hook("timeline-summary")), WAIT);

    // Left for another page, and brought back.
    browser.eval("window.keptWhole = true");
    browser.goto("about:blank");
    wait_for_sse_clients(&daemon, 0, "a page left lets its stream go");
    open_gates(0..=5);
    daemon.wait_for_run(&run_id, "its end", |run| run["run"]["status"] == "completed");
    browser.eval("history.back()");
    browser
        .wait_for(&format!("window.baton && window.baton.rendered && window.baton.rendered.run === '{run_id}'"), WAIT);
    browser.wait_for(
        &format!(
            "{}.dataset.status === 'completed' && {}.dataset.steps === '12'",
            hook("run-status"),
            hook("timeline-summary")
        ),
        WAIT,
    );
    let kept_whole = browser.eval("window.keptWhole === true");
    eprintln!("the page came back from the back/forward cache: {kept_whole}");

    // The run list, hidden while a run starts and ends, shows it when shown again
    // (its stream had read no event to go on after, so the list is loaded again).
    browser.goto(&page(&daemon, "/"));
    browser.wait_for(&format!("document.querySelector('[data-testid=run-row][data-run-id=\"{run_id}\"]')"), WAIT);
    wait_for_sse_clients(&daemon, 1, "the run list follows the daemon's stream");
    // Hidden, a run starts and ends; the row that shows it once the list is shown.
    let run_while_hidden = |browser: &mut Browser| {
        browser.eval(HIDE);
        wait_for_sse_clients(&daemon, 0, "a hidden run list lets its stream go");
        let run = daemon.start_run("wf", json!({}));
        daemon.wait_for_status(&run, "completed");
        format!("document.querySelector('[data-testid=run-row][data-run-id=\"{run}\"][data-status=completed]')")
    };
    let row = run_while_hidden(&mut browser);
    assert_eq!(browser.eval(&format!("{row} === null")), true, "a hidden run list has no stream to grow from");
    browser.eval(SHOW);
    browser.wait_for(&row, WAIT);
    wait_for_sse_clients(&daemon, 1, "a run list shown again follows the daemon's stream");

    // Shown, hidden and shown again while the list still reloads (a quick switch of
    // tabs): two reloads, and one stream connected after them, not one for each.
    let row = run_while_hidden(&mut browser);
    browser.eval(&format!("window.flippedAt = performance.now(); {SHOW}; {HIDE}; {SHOW}"));
    browser.wait_for(
        "performance.getEntriesByType('resource').filter(r => r.startTime >= window.flippedAt && \
         new URL(r.name).pathname === '/api/v1/runs' && r.responseEnd > 0).length === 2",
        WAIT,
    );
    browser.wait_for(&row, WAIT);
    wait_for_sse_clients(&daemon, 1, "a run list shown twice follows the daemon's stream");
    // Both reloads are done; a second connection would come at once. Watch a while.
    let watched = Instant::now();
    while watched.elapsed() < Duration::from_millis(500) {
        assert_eq!(sse_clients(&daemon), 1, "one stream after a quick hide and show, not one for each show");
        std::thread::sleep(Duration::from_millis(50));
    }
    no_page_errors(&browser);
}

/// How long the first render takes is `cargo bench --bench serve_render`'s to say
/// (issue 14: under a second); this test checks what it renders.
#[test]
fn the_page_of_a_ten_thousand_step_run_renders_every_step_without_an_element_each() {
    let test = ten_thousand_steps();
    let daemon = Daemon::start(&test, &[]);
    daemon.start_run("wf", json!({"run_id": "big"}));
    daemon.wait_for_long_run("big", Duration::from_secs(600));
    let steps = daemon.get("/api/v1/runs/big/steps").json()["steps"].as_array().map(Vec::len).unwrap_or(0);
    assert_eq!(steps, 10_002);

    let mut browser = Browser::launch();
    open_run(&mut browser, &daemon, "big");
    let rendered = browser.eval("window.baton.rendered");
    assert_eq!(rendered["steps"], 10_002);
    browser.screenshot(&artifact_dir().join("serve-10k.png"));
    assert_eq!(browser.eval(&format!("{}.dataset.steps", hook("timeline-summary"))), "10002");
    assert_eq!(browser.eval(&format!("{}.dataset.agents", hook("timeline-summary"))), "5");
    let nodes = browser.eval("document.getElementsByTagName('*').length").as_u64().unwrap_or(u64::MAX);
    assert!(nodes < 1500, "{nodes} elements: steps must not become one element each");
    no_page_errors(&browser);
}

/// Step by step in the inspector (issue 24): a breakpoint set by clicking a state on
/// the graph, the stopped agent with its rendered prompt, its input edited and
/// Continue pressed; the run goes on with the edit. `serve-stepping-*.png` show it.
#[test]
fn a_breakpoint_is_set_on_the_graph_and_the_stopped_agent_is_read_edited_and_continued() {
    let test = Test::new()
        .with_fake_claude()
        .file(
            "START.sh",
            "while [ ! -f go.flag ]; do sleep 0.02; done\necho '<goto input=\"draft one\">JUDGE</goto>'\n",
        )
        .file("JUDGE.md", "You are a strict judge. Judge: {{input}}\n")
        .file("DONE.sh", "echo \"<result>judged: $BATON_INPUT</result>\"\n");
    FakeClaude::at(test.root()).rule("judge", "strict judge", Reply::text("<goto input=\"fine\">DONE</goto>"));
    let daemon = Daemon::start(&test, &[]);
    daemon.start_run("wf", json!({"run_id": "dbg"}));
    let mut browser = Browser::launch();
    open_run(&mut browser, &daemon, "dbg");
    browser.wait_for("document.querySelector('[data-testid=graph-node][data-state=\"JUDGE.md\"]')", WAIT);
    // Pick breakpoints, then click JUDGE on the graph.
    browser.wait_for(&format!("!{}.disabled", hook("breakpoint-pick")), WAIT);
    browser.eval(&format!("{}.click()", hook("breakpoint-pick")));
    browser.eval(
        "document.querySelector('[data-testid=graph-node][data-state=\"JUDGE.md\"]')\
         .dispatchEvent(new MouseEvent('click', {bubbles: true}))",
    );
    browser.wait_for(&format!("{}.dataset.before === 'JUDGE.md'", hook("breakpoint-list")), WAIT);
    browser.wait_for(
        "document.querySelector('[data-testid=graph-node][data-state=\"JUDGE.md\"]').dataset.breakpoint === 'true'",
        WAIT,
    );
    std::fs::write(test.root().join("go.flag"), "").expect("open the gate");
    browser.wait_for(&hook("stopped-agent"), WAIT);
    assert_eq!(browser.eval(&format!("{}.dataset.state", hook("stopped-agent"))), "JUDGE.md");
    browser.wait_for(&hook("next-text"), WAIT);
    assert_eq!(text_of(&mut browser, "next-text"), "You are a strict judge. Judge: draft one\n");
    assert_eq!(browser.eval(&format!("{}.value", hook("edit-input"))), "draft one");
    browser.screenshot(&artifact_dir().join("serve-stepping-stopped.png"));
    browser.eval(&format!("{}.value = 'draft two'", hook("edit-input")));
    browser.eval(&format!("{}.click()", hook("continue-agent")));
    browser.wait_for(&format!("{}.dataset.command", hook("cli-command")), WAIT);
    assert!(text_of(&mut browser, "cli-command").contains("baton resume dbg --agent main --input 'draft two'"));
    browser.wait_for(&format!("{}.dataset.status === 'completed'", hook("run-status")), WAIT);
    browser.screenshot(&artifact_dir().join("serve-stepping-continued.png"));
    let calls = FakeClaude::at(test.root()).calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].prompt, "You are a strict judge. Judge: draft two\n");
    let done = daemon.wait_for_status("dbg", "completed");
    assert_eq!(done["run"]["terminated"][0]["result"], "judged: fine");
    no_page_errors(&browser);
}
