//! A run's trace in a real OTLP receiver users run (issue 23): Arize Phoenix
//! (`support::phoenix`), read back through its REST API. The prompt step runs
//! the real, pinned Claude Code against the fake Anthropic API, with the
//! `TRACEPARENT` Baton hands it: Claude Code's own spans arrive in the same
//! trace, under the step's span.

use serde_json::Value;

use crate::claude_e2e::with_real_claude;
use crate::support::Test;
use crate::support::fake_anthropic::{FakeAnthropic, Rule};
use crate::support::phoenix::Phoenix;

fn named<'a>(spans: &'a [Value], name: &str) -> Vec<&'a Value> {
    spans.iter().filter(|span| span["name"] == name).collect()
}

fn one<'a>(spans: &'a [Value], name: &str) -> &'a Value {
    let found = named(spans, name);
    assert_eq!(found.len(), 1, "one span named {name} in {spans:#?}");
    found[0]
}

#[test]
fn phoenix_holds_the_run_tree_with_claude_codes_own_spans_under_the_step() {
    let phoenix = Phoenix::start();
    let fake =
        FakeAnthropic::start(vec![Rule::when_prompt("PLAN the work").reply_text("planned\n<goto>NEXT.sh</goto>")]);
    // Claude Code sends its spans when it exits and waits 2 s for them by default:
    // not enough for Phoenix on a loaded two-core machine.
    let test = Test::new()
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &phoenix.url())
        .env("CLAUDE_CODE_OTEL_SHUTDOWN_TIMEOUT_MS", "30000")
        .file("START.md", "PLAN the work")
        .file("NEXT.sh", "echo '<result>done</result>'\n");
    let outcome = with_real_claude(test, &fake).run_workflow(&["--model", "sonnet"]);
    outcome.status(0).stdout("done\n");
    assert!(!outcome.stderr.contains("warning"), "{}", outcome.stderr);

    // Baton's four spans and at least Claude Code's interaction and LLM request.
    let spans = phoenix.spans("default", 6);
    let run = one(&spans, "workflow wf");
    let trace = run["context"]["trace_id"].as_str().expect("a trace id");
    assert_eq!(run["parent_id"], Value::Null);
    let agent = one(&spans, "invoke_agent main");
    assert_eq!(agent["parent_id"], run["context"]["span_id"]);
    let step = one(&spans, "START.md");
    assert_eq!(step["parent_id"], agent["context"]["span_id"]);
    assert_eq!(step["status_code"], "OK");
    let attributes = &step["attributes"];
    assert_eq!(attributes["baton.run_id"], "test");
    assert_eq!(attributes["baton.state"], "START.md");
    assert_eq!(attributes["baton.transition"], "goto");
    // Phoenix nests dotted keys it knows (its LLM view reads gen_ai.*) and keeps the rest flat.
    let genai = |key: &str| attributes.get(format!("gen_ai.{key}")).or_else(|| attributes["gen_ai"].get(key)).cloned();
    assert_eq!(genai("system"), Some(Value::from("anthropic")), "{step:#}");
    assert_eq!(
        genai("request.model").or_else(|| attributes["gen_ai"]["request"].get("model").cloned()),
        Some(Value::from("sonnet"))
    );
    assert_eq!(one(&spans, "NEXT.sh")["parent_id"], agent["context"]["span_id"]);

    // Claude Code's own spans: in the run's trace, its interaction under the step.
    let interaction = one(&spans, "claude_code.interaction");
    assert_eq!(interaction["context"]["trace_id"], trace, "{interaction:#}");
    assert_eq!(interaction["parent_id"], step["context"]["span_id"], "{interaction:#}");
    let requests = named(&spans, "claude_code.llm_request");
    assert!(!requests.is_empty(), "{spans:#?}");
    assert!(requests.iter().all(|request| request["context"]["trace_id"] == trace));
    assert!(spans.iter().all(|span| span["context"]["trace_id"] == trace), "one trace: {spans:#?}");
    screenshot(&phoenix, trace);
}

/// With `BATON_TEST_PHOENIX_SCREENSHOT=FILE.png`, the trace as Phoenix's UI draws
/// it, taken by headless Chromium (the closing note).
fn screenshot(phoenix: &Phoenix, trace: &str) {
    let Some(path) = std::env::var_os("BATON_TEST_PHOENIX_SCREENSHOT") else { return };
    // Project 1 is `default`, as Phoenix's GraphQL ids write it.
    let url = format!("{}/projects/UHJvamVjdDox/traces/{trace}", phoenix.url());
    let mut browser = crate::support::browser::Browser::launch_with_viewport(1600, 1000);
    browser.goto(&url);
    browser.wait_for("document.body.innerText.includes('claude_code.llm_request')", std::time::Duration::from_secs(60));
    browser.screenshot(std::path::Path::new(&path));
}
