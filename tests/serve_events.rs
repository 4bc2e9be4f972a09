//! `baton serve`'s server-sent events (`docs/serve.md`, "Events"): a run's trace
//! lines live, keyed by `seq`, resumed with `Last-Event-ID` (or `?after=`), a
//! `resync` for a client too far behind, and the daemon's own stream of runs.

use serde_json::{Value, json};

use crate::conformance::common::with_wait_for;
use crate::support::Test;
use crate::support::serve::Daemon;

/// Five steps, the third waiting for `go.flag`.
fn gated() -> Test {
    Test::new().file("START.sh", "echo '<goto input=\"1\">STEP</goto>'\n").file(
        "STEP.sh",
        &with_wait_for(
            "n=$BATON_INPUT\n[ \"$n\" -eq 3 ] && wait_for go.flag\n\
             if [ \"$n\" -ge 4 ]; then echo '<result>done</result>'; else echo \"<goto input=\\\"$((n + 1))\\\">STEP</goto>\"; fi\n",
        ),
    )
}

fn seq(event: &crate::support::serve::SseEvent) -> u64 {
    event.id.as_deref().and_then(|id| id.parse().ok()).expect("an id")
}

#[test]
fn a_runs_events_are_its_trace_lines_and_a_reconnect_resumes_after_the_last_id() {
    let test = gated();
    let daemon = Daemon::start(&test, &[]);
    daemon.start_run("wf", json!({"run_id": "e"}));
    let mut first = daemon.events("/api/v1/runs/e/events", None);
    assert!(first.status_line.starts_with("HTTP/1.1 200"), "{}", first.status_line);
    let before = first.until(|event| event.event == "StateStarted" && event.data.contains("\"step\":3"));
    assert_eq!(before[0].event, "WorkflowStarted", "a client without an id starts at the beginning");
    let ids: Vec<u64> = before.iter().map(seq).collect();
    assert_eq!(ids, (1..=ids.len() as u64).collect::<Vec<_>>());
    for event in &before {
        let line: Value = serde_json::from_str(&event.data).expect("data is the trace line");
        assert_eq!(line["seq"].as_u64(), event.id.as_deref().and_then(|id| id.parse().ok()));
        assert_eq!(line["type"], event.event.as_str());
    }
    let last = *ids.last().expect("ids");
    drop(first);
    std::fs::write(test.root().join("go.flag"), "").expect("flag");
    let mut again = daemon.events("/api/v1/runs/e/events", Some(last));
    let after = again.until(|event| event.event == "WorkflowCompleted");
    assert_eq!(seq(&after[0]), last + 1, "nothing seen twice, nothing lost");
    let trace = std::fs::read_to_string(test.root().join(".baton/runs/e/events.jsonl")).expect("trace");
    assert_eq!(trace.lines().count(), before.len() + after.len(), "every trace line was sent once");
    let mut by_query = daemon.events(&format!("/api/v1/runs/e/events?after={}", last + 2), None);
    assert_eq!(by_query.next_event().map(|event| seq(&event)), Some(last + 3));
}

#[test]
fn a_client_too_far_behind_is_told_to_resync() {
    let test = gated().env("BATON_SERVE_REPLAY_LIMIT", "5");
    std::fs::write(test.root().join("go.flag"), "").expect("flag");
    let daemon = Daemon::start(&test, &[]);
    daemon.start_run("wf", json!({"run_id": "far"}));
    let done = daemon.wait_for_status("far", "completed");
    let last = done["trace_seq"].as_u64().expect("trace_seq");
    assert!(last > 10, "{last}");
    let mut behind = daemon.events("/api/v1/runs/far/events", Some(1));
    let resync = behind.next_event().expect("an event");
    assert_eq!(resync.event, "resync");
    assert_eq!(serde_json::from_str::<Value>(&resync.data).expect("JSON"), json!({"trace_seq": last}));
    let mut close = daemon.events("/api/v1/runs/far/events", Some(last - 3));
    assert_eq!(close.next_event().map(|event| seq(&event)), Some(last - 2), "within the limit: replayed");
}

#[test]
fn the_daemons_stream_tells_of_new_and_changed_runs_and_resumes() {
    let test = gated();
    let daemon = Daemon::start(&test, &[]);
    let mut stream = daemon.events("/api/v1/events", None);
    daemon.start_run("wf", json!({"run_id": "watched"}));
    let seen = stream.until(|event| event.event == "run" && event.data.contains("\"live\":true"));
    let entry: Value = serde_json::from_str(&seen.last().expect("event").data).expect("JSON");
    assert_eq!(entry["run_id"], "watched");
    let id: u64 = seen.last().and_then(|event| event.id.as_deref()?.parse().ok()).expect("id");
    drop(stream);
    std::fs::write(test.root().join("go.flag"), "").expect("flag");
    daemon.wait_for_status("watched", "completed");
    let mut resumed = daemon.events("/api/v1/events", Some(id));
    let later = resumed.until(|event| event.data.contains("\"status\":\"completed\""));
    let first: u64 = later[0].id.as_deref().and_then(|id| id.parse().ok()).expect("id");
    assert_eq!(first, id + 1, "resumed right after the last id seen");
    // An id an earlier daemon gave is older than any of this one's: reload.
    let mut stale = daemon.events("/api/v1/events", Some(1_000_000));
    assert_eq!(stale.next_event().map(|event| event.event), Some("resync".to_string()));
}

/// `?after=` past the last id once replayed everything from event 1; now it waits
/// for what comes after that id.
#[test]
fn sse_after_past_the_end_replayed_from_event_1_now_waits_for_later_events() {
    let test = gated();
    let daemon = Daemon::start(&test, &[]);
    let mut now = daemon.events("/api/v1/events", None);
    daemon.post("/api/v1/workflows/rescan", &json!({}));
    let last = now.next_event().and_then(|event| event.id?.parse::<u64>().ok()).expect("an id");
    let mut ahead = daemon.events(&format!("/api/v1/events?after={}", last + 1), None);
    daemon.post("/api/v1/workflows/rescan", &json!({}));
    daemon.post("/api/v1/workflows/rescan", &json!({}));
    assert_eq!(ahead.next_event().and_then(|event| event.id), Some((last + 2).to_string()));
    // A run's stream: lines after the id given, none before.
    daemon.start_run("wf", json!({"run_id": "ahead"}));
    let mut follow = daemon.events("/api/v1/runs/ahead/events", None);
    let before = follow.until(|event| event.event == "StateStarted" && event.data.contains("\"step\":3"));
    let seen = before.last().map(seq).expect("a line");
    let mut past = daemon.events(&format!("/api/v1/runs/ahead/events?after={}", seen + 2), None);
    std::fs::write(test.root().join("go.flag"), "").expect("flag");
    assert_eq!(past.next_event().map(|event| seq(&event)), Some(seen + 3));
}
