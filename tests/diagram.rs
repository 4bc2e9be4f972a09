//! `baton diagram`: the exact Mermaid and DOT of a small workflow that uses every
//! kind of edge, `--run` drawn over a real run, `--output`, the errors, and the
//! HTML page in a real headless browser (`chromium`).

use crate::support::Test;
use crate::support::browser::chromium_path;

/// A workflow with an entry, prompts and a script, a call whose callee's result
/// returns, a fork, a reset and a call into another workflow.
fn every_edge() -> Test {
    Test::new()
        .file("START.md", "Check first: <call return=\"AFTER\">CHECK</call>\n")
        .file("CHECK.sh", "#!/usr/bin/env bash\necho \"<result>ok</result>\"\n")
        .file("AFTER.md", "Split: <fork next=\"JOIN\">WORKER</fork>\n")
        .file("WORKER.md", "Work, then <result>done</result>.\n")
        .file(
            "JOIN.md",
            "Hand over with <call-workflow return=\"FINISH\">../other/</call-workflow>, \
             or start over with <reset>START</reset>.\n",
        )
        .file("FINISH.md", "Report <result>all done</result>.\n")
        .write("other/START.md", "Other: <result>x</result>\n")
}

const EVERY_EDGE_MERMAID: &str = r#"flowchart TD
    __start__((" "))
    AFTER["AFTER"]
    CHECK{{"CHECK"}}
    FINISH["FINISH"]
    JOIN["JOIN"]
    START["START"]
    WORKER["WORKER"]
    w___2e__2e__2f_other_2f_[["../other/"]]
    __end_1__((" "))
    __end_2__((" "))

    __start__ --> START
    AFTER -.->|fork| WORKER
    AFTER -->|fork next| JOIN
    JOIN -->|call-workflow| w___2e__2e__2f_other_2f_
    JOIN -.->|call-workflow return| FINISH
    JOIN -.->|reset| START
    START -->|call| CHECK
    CHECK -.->|return #40;START#41;| AFTER
    FINISH -->|result| __end_1__
    WORKER -->|result| __end_2__
"#;

#[test]
fn mermaid_draws_every_kind_of_edge() {
    let outcome = every_edge().args(["diagram", "wf"]).run();
    outcome.status(0).stdout(EVERY_EDGE_MERMAID);
    assert_eq!(outcome.stderr, "");
}

#[test]
fn dot_draws_the_same_graph() {
    every_edge().args(["diagram", "wf", "--format", "dot"]).run().status(0).stdout(
        r#"digraph workflow {
    rankdir=TB;
    node [fontname="Helvetica"];
    edge [fontname="Helvetica", fontsize=10];

    "__start__" [shape=circle, width=0.25, label=""];
    "AFTER" [shape=box, label="AFTER"];
    "CHECK" [shape=hexagon, label="CHECK"];
    "FINISH" [shape=box, label="FINISH"];
    "JOIN" [shape=box, label="JOIN"];
    "START" [shape=box, label="START"];
    "WORKER" [shape=box, label="WORKER"];
    "w___2e__2e__2f_other_2f_" [shape=component, label="../other/"];
    "__end_1__" [shape=doublecircle, width=0.2, label=""];
    "__end_2__" [shape=doublecircle, width=0.2, label=""];

    "__start__" -> "START";
    "AFTER" -> "WORKER" [label="fork", style=dashed];
    "AFTER" -> "JOIN" [label="fork next"];
    "JOIN" -> "w___2e__2e__2f_other_2f_" [label="call-workflow"];
    "JOIN" -> "FINISH" [label="call-workflow return", style=dashed];
    "JOIN" -> "START" [label="reset", style=dashed];
    "START" -> "CHECK" [label="call"];
    "CHECK" -> "AFTER" [label="return (START)", style=dashed];
    "FINISH" -> "__end_1__" [label="result"];
    "WORKER" -> "__end_2__" [label="result"];
}
"#,
    );
}

#[test]
fn yaml_workflows_and_frontmatter_transitions_are_drawn_the_same_way() {
    let yaml = "states:\n  START:\n    allowed_transitions:\n      - { tag: goto, target: DONE }\n    prompt: Go on.\n  \
                DONE:\n    sh: echo '<result>ok</result>'\n";
    Test::new().write("flow.yaml", yaml).args(["diagram", "flow.yaml"]).run().status(0).stdout(
        r#"flowchart TD
    __start__((" "))
    DONE{{"DONE"}}
    START["START"]
    __end_1__((" "))

    __start__ --> START
    START -->|goto| DONE
    DONE -->|result| __end_1__
"#,
    );
}

#[test]
fn odd_state_names_get_safe_ids_and_missing_targets_a_dashed_node() {
    let outcome = Test::new()
        .file("START.md", "<goto>a-b \"c\"</goto> or <goto>end</goto> or <goto>GONE</goto>\n")
        .file("a-b \"c\".md", "<result>x</result>\n")
        .file("end.md", "<result>y</result>\n")
        .args(["diagram", "wf"])
        .run();
    outcome.status(0).stdout(
        r#"flowchart TD
    __start__((" "))
    GONE["GONE"]
    style GONE stroke-dasharray: 5 5
    START["START"]
    s__a_2d_b_20__22_c_22_["a-b #quot;c#quot;"]
    s__end["end"]
    __end_1__((" "))
    __end_2__((" "))

    __start__ --> START
    START -->|goto| s__a_2d_b_20__22_c_22_
    START -->|goto| s__end
    START -->|goto| GONE
    s__a_2d_b_20__22_c_22_ -->|result| __end_1__
    s__end -->|result| __end_2__
"#,
    );
    assert_eq!(outcome.stderr, "warning: state `GONE` is named by a transition but the workflow has no such state\n");
}

/// Issue 19, item 7: the example tag of a `force_implicit` prompt (R5.14) was drawn
/// as an edge to a missing state; the state's one way out is its policy's entry.
#[test]
fn r5_14_a_force_implicit_prompts_example_tags_are_no_edges() {
    let outcome = Test::new()
        .file(
            "1_START.md",
            "---\nallowed_transitions:\n  - tag: goto\n    target: DONE\nforce_implicit: true\n---\nTag examples like <goto>X</goto> are ignored.\n",
        )
        .file("DONE.md", "<result></result>\n")
        .args(["diagram", "wf"])
        .run();
    outcome.status(0).stdout(
        r#"flowchart TD
    __start__((" "))
    1_START["1_START"]
    DONE["DONE"]
    __end_1__((" "))

    __start__ --> 1_START
    1_START -->|goto| DONE
    DONE -->|result| __end_1__
"#,
    );
    assert_eq!(outcome.stderr, "");
}

#[test]
fn a_workflow_that_mixes_backends_names_each_prompts_backend() {
    let outcome = Test::new()
        .file("START.md", "Implement, then <goto>REVIEW</goto>.\n")
        .file("REVIEW.md", "---\nbackend: codex\n---\nReview: <goto>START</goto> or <result>ok</result>.\n")
        .file("CHECK.sh", "echo '<goto>START</goto>'\n")
        .args(["diagram", "wf", "--format", "dot"])
        .run();
    outcome.status(0);
    assert!(outcome.stdout.contains("\"REVIEW\" [shape=box, label=\"REVIEW (codex)\"];\n"), "{}", outcome.stdout);
    assert!(outcome.stdout.contains("\"START\" [shape=box, label=\"START (claude)\"];\n"), "{}", outcome.stdout);
    assert!(outcome.stdout.contains("\"CHECK\" [shape=hexagon, label=\"CHECK\"];\n"), "{}", outcome.stdout);
}

#[test]
fn a_workflow_on_one_other_backend_names_it_and_one_on_claude_says_nothing() {
    let outcome = Test::new()
        .file("workflow.yaml", "id: x\nbackend: pi\n")
        .file("START.md", "Work, then <result>done</result>.\n")
        .args(["diagram", "wf"])
        .run();
    outcome.status(0);
    assert!(outcome.stdout.contains("    START[\"START #40;pi#41;\"]\n"), "{}", outcome.stdout);
    let outcome = Test::new()
        .file("START.md", "---\nbackend: claude\n---\nWork, then <result>done</result>.\n")
        .args(["diagram", "wf"])
        .run();
    assert!(outcome.stdout.contains("    START[\"START\"]\n"), "{}", outcome.stdout);
}

#[test]
fn a_missing_workflow_is_an_error() {
    let outcome = Test::new().args(["diagram", "nowhere"]).run();
    outcome.status(1);
    assert_eq!(outcome.error_message(), "error: workflow `nowhere` not found: no such file or directory");
    assert_eq!(outcome.stdout, "");
}

#[test]
fn output_writes_the_file_instead_of_stdout() {
    let outcome = every_edge().args(["diagram", "wf", "--output", "wf.mmd"]).run();
    outcome.status(0).stdout("");
    let written = std::fs::read_to_string(outcome.root().join("wf.mmd")).expect("the diagram file");
    assert_eq!(written, EVERY_EDGE_MERMAID);
}

const COUNTDOWN_START: &str = "#!/usr/bin/env bash\necho \"<goto input=\\\"${BATON_INPUT:-3}\\\">TICK</goto>\"\n";
const COUNTDOWN_TICK: &str = "#!/usr/bin/env bash\nn=\"$BATON_INPUT\"\nif [ \"$n\" -le 0 ]; then\n  \
                              echo \"<goto>LIFTOFF</goto>\"\nelse\n  echo \"<goto input=\\\"$((n - 1))\\\">TICK</goto>\"\nfi\n";

#[test]
fn run_overlay_counts_the_visits_of_a_finished_run() {
    let outcome = Test::new()
        .file("START.sh", COUNTDOWN_START)
        .file("TICK.sh", COUNTDOWN_TICK)
        .file("LIFTOFF.sh", "#!/usr/bin/env bash\necho '<result>Liftoff!</result>'\n")
        .args(["run", "wf", "--input", "2"])
        .run();
    outcome.status(0);
    let runs: Vec<String> = std::fs::read_dir(outcome.root().join(".baton/runs"))
        .expect("the runs directory")
        .filter_map(|entry| entry.ok().map(|entry| entry.file_name().to_string_lossy().into_owned()))
        .collect();
    let [run_id] = runs.as_slice() else { panic!("one run, found {runs:?}") };
    outcome.rerun(["diagram", "wf", "--run", run_id]).status(0).stdout(
        r#"flowchart TD
    __start__((" "))
    LIFTOFF{{"LIFTOFF ×1"}}
    START{{"START ×1"}}
    TICK{{"TICK ×3"}}
    __end_1__((" "))

    __start__ --> START
    START -->|goto #91;input#93;| TICK
    TICK -->|goto| LIFTOFF
    TICK -->|goto #91;input#93;| TICK
    LIFTOFF -->|result| __end_1__
"#,
    );
}

#[test]
fn run_overlay_highlights_where_a_live_agent_is() {
    let outcome = Test::new()
        .file("START.sh", COUNTDOWN_START)
        .file("TICK.sh", COUNTDOWN_TICK)
        .file("LIFTOFF.sh", "#!/usr/bin/env bash\necho 'no tag, so the step fails'\nexit 3\n")
        .run_workflow(&["--input", "1"]);
    outcome.status(1);
    let outcome = outcome.rerun(["diagram", "wf", "--run", "test", "--format", "dot"]);
    outcome.status(0);
    assert!(
        outcome.stdout.contains(
            r##""LIFTOFF" [shape=hexagon, label="LIFTOFF ×1", style="filled,bold", fillcolor="#ffe08a", color="#d97706"];"##
        ),
        "{}",
        outcome.stdout
    );
    assert!(outcome.stdout.contains(r#""TICK" [shape=hexagon, label="TICK ×2"];"#), "{}", outcome.stdout);
    let mermaid = outcome.rerun(["diagram", "wf", "--run", "test"]);
    assert!(
        mermaid.stdout.ends_with(
            "    classDef current fill:#ffe08a,stroke:#d97706,stroke-width:3px\n    class LIFTOFF current\n"
        ),
        "{}",
        mermaid.stdout
    );
}

#[test]
fn an_unknown_run_is_the_stores_error() {
    let outcome = every_edge().args(["diagram", "wf", "--run", "nope"]).run();
    outcome.status(1);
    assert_eq!(
        outcome.error_message(),
        "error: run `nope` not found in [ROOT]/.baton/runs; `baton list` shows the runs there are"
    );
}

/// The prompt of the browser test: every way a prompt could try to run code.
const HOSTILE_PROMPT: &str = "# Evil prompt\n\nSome **bold** advice.\n\n\
<script>document.title='pwned'</script>\n\n\
Inline <img src=x onerror=\"document.title='pwned'\"> image and a [link](javascript:alert(1)).\n\n\
</script><script>document.title='pwned'</script>\n\n\
Then <goto>TOOL</goto>.\n";

/// Run headless Chromium on `url` with every network path closed; stdout (the
/// DOM once scripts ran) and stderr (Chromium's log, the page's console included).
fn dump_dom(profile: &std::path::Path, url: &str) -> (String, String) {
    let mut child = std::process::Command::new(chromium_path())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-extensions",
            "--disable-background-networking",
            "--proxy-server=127.0.0.1:9",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=2000",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start chromium");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(90);
    let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
    let read_out =
        std::thread::spawn(move || std::io::read_to_string(stdout.expect("stdout piped")).unwrap_or_default());
    let read_err =
        std::thread::spawn(move || std::io::read_to_string(stderr.expect("stderr piped")).unwrap_or_default());
    loop {
        match child.try_wait().expect("wait for chromium") {
            Some(status) => {
                let (out, err) = (read_out.join().unwrap_or_default(), read_err.join().unwrap_or_default());
                assert!(status.success(), "chromium failed ({status}):\n{err}");
                return (out, err);
            }
            None if std::time::Instant::now() > deadline => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("chromium did not finish within 90 s");
            }
            None => std::thread::sleep(std::time::Duration::from_millis(50)),
        }
    }
}

#[test]
fn html_page_in_a_headless_browser_shows_the_graph_and_no_injected_code() {
    let outcome = Test::new()
        .file("START.md", HOSTILE_PROMPT)
        .file("TOOL.sh", "#!/usr/bin/env bash\necho '</script><b>x</b>'\necho '<goto>DONE</goto>'\n")
        .file("DONE.md", "<result>done</result>\n")
        .args(["diagram", "wf", "--format", "html", "--output", "page.html"])
        .run();
    outcome.status(0).stdout("");
    let page = outcome.root().join("page.html");
    let html = std::fs::read_to_string(&page).expect("the page");
    assert!(!html.contains("<script>document.title"), "a prompt's script reached the page");
    assert!(html.contains("content=\"default-src 'none';"), "the page has its CSP");

    let profile = outcome.root().join(".chromium");
    let url = format!("file://{}#select=START", page.display());
    let (dom, log) = dump_dom(&profile, &url);

    // The graph: one clickable node per state, and the page's own title.
    assert!(dom.contains("<svg") && dom.contains("id=\"diagram\""), "no SVG graph in:\n{dom}");
    let nodes: Vec<&str> = dom.match_indices("class=\"node ").map(|(at, _)| &dom[at..at + 40]).collect();
    assert_eq!(nodes.len(), 3, "one node per state: {nodes:?}");
    for state in ["DONE", "START", "TOOL"] {
        assert!(dom.contains(&format!("data-id=\"{state}\"")), "no node for {state}");
    }
    assert!(dom.contains("<title>wf — baton diagram</title>"), "the title changed:\n{dom}");
    assert!(!dom.contains("pwned</title>"));

    // The page's script opened START's panel from the URL and rendered its markdown.
    assert!(dom.contains("<h2 id=\"panel-title\">START.md</h2>"), "the panel was not opened:\n{dom}");
    assert!(dom.contains("<div id=\"panel-body\" data-state=\"START\">"), "{dom}");
    assert!(dom.contains("<h1>Evil prompt</h1>") && dom.contains("<strong>bold</strong>"), "{dom}");
    assert!(dom.contains("&lt;script&gt;document.title='pwned'&lt;/script&gt;"), "the script is shown as text");
    assert!(dom.contains("<a href=\"#\">link</a>"), "the javascript: link is neutralised:\n{dom}");

    // Nothing injected is alive: only the page's own two scripts, no image, no handler.
    assert_eq!(dom.matches("<script").count(), 2, "{dom}");
    assert!(!dom.contains("<img"), "an injected image is in the DOM:\n{dom}");
    assert!(!dom.to_ascii_lowercase().contains("href=\"javascript:"), "{dom}");
    assert!(!dom.contains("<b>x</b>"), "a script's output markup is in the DOM");

    // The page logged nothing: no uncaught error, no CSP refusal, no console output.
    let console: Vec<&str> =
        log.lines().filter(|line| line.contains(":CONSOLE") || line.contains("Uncaught")).collect();
    assert!(console.is_empty(), "the page logged:\n{}", console.join("\n"));
}
