//! Reading a long run (`cargo bench --bench inspect`): `baton report` over a
//! trace of 100,000 steps, each with the events a Claude step writes (state
//! started and completed, a rendered prompt, a tool call and its result, the
//! final `result` object with usage, a transition).
//!
//! The run is made by `baton run` of a one-step workflow (so its state is real),
//! then its trace is extended with synthetic steps. Numbers, not assertions.

use std::io::Write;
use std::process::Command;
use std::time::Instant;

#[path = "../tests/support/user_environment.rs"]
mod user_environment;

const STEPS: u64 = 100_000;
const RUNS: usize = 3;

fn main() {
    user_environment::drop_cargo_loader_path();
    let project = tempfile::tempdir().expect("temp dir");
    let root = project.path();
    std::fs::create_dir(root.join(".git")).expect(".git");
    std::fs::create_dir(root.join("wf")).expect("wf");
    std::fs::write(root.join("wf/START.sh"), "echo '<result>ok</result>'\n").expect("START.sh");
    let baton = env!("CARGO_BIN_EXE_baton");
    let status = Command::new(baton)
        .args(["run", "wf", "-q", "--run-id", "long"])
        .current_dir(root)
        .status()
        .expect("baton run");
    assert!(status.success(), "the one-step run completes");
    let trace = root.join(".baton/runs/long/events.jsonl");
    let mut file = std::fs::OpenOptions::new().append(true).open(&trace).expect("trace");
    let states = ["PLAN.md", "IMPLEMENT.md", "TEST.sh", "REVIEW.md", "DECIDE.sh"];
    let mut text = String::new();
    for step in 1..=STEPS {
        let state = states[(step % 5) as usize];
        let agent = if step % 3 == 0 { "main_worker1" } else { "main" };
        let ts = "2026-11-22T02:18:00.005501453Z";
        text.push_str(&format!(
            r#"{{"v":1,"seq":{step},"ts":"{ts}","type":"StateStarted","agent_id":"{agent}","state":"{state}","state_type":"markdown","step":{step},"attempt":1}}
{{"v":1,"seq":{step},"ts":"{ts}","type":"PromptRendered","agent_id":"{agent}","state":"{state}","step":{step},"reminder":0,"prompt":"Do the work for step {step}, then emit a tag."}}
{{"v":1,"seq":{step},"ts":"{ts}","type":"ClaudeStreamOutput","agent_id":"{agent}","state":"{state}","step":{step},"json":{{"type":"assistant","message":{{"content":[{{"type":"tool_use","id":"t{step}","name":"Bash","input":{{"command":"make test"}}}}]}}}}}}
{{"v":1,"seq":{step},"ts":"{ts}","type":"ClaudeStreamOutput","agent_id":"{agent}","state":"{state}","step":{step},"json":{{"type":"user","message":{{"content":[{{"type":"tool_result","tool_use_id":"t{step}","is_error":{},"content":"ok"}}]}}}}}}
{{"v":1,"seq":{step},"ts":"{ts}","type":"ClaudeStreamOutput","agent_id":"{agent}","state":"{state}","step":{step},"json":{{"type":"result","total_cost_usd":0.0021,"usage":{{"input_tokens":1200,"output_tokens":80,"cache_read_input_tokens":900,"cache_creation_input_tokens":0}}}}}}
{{"v":1,"seq":{step},"ts":"{ts}","type":"StateCompleted","agent_id":"{agent}","state":"{state}","step":{step},"cost_usd":0.0021,"total_cost_usd":1.0,"session_id":"s","duration_ms":{}}}
{{"v":1,"seq":{step},"ts":"{ts}","type":"TransitionOccurred","agent_id":"{agent}","from_state":"{state}","to_state":"PLAN.md","transition_type":"goto","metadata":{{}},"commit":{step},"recovered":false}}
"#,
            step % 7 == 0,
            100 + step % 977
        ));
    }
    file.write_all(text.as_bytes()).expect("append");
    drop(file);
    let bytes = std::fs::metadata(&trace).map(|meta| meta.len()).unwrap_or(0);
    let mut times = Vec::new();
    for _ in 0..RUNS {
        let started = Instant::now();
        let output = Command::new(baton).args(["report", "long"]).current_dir(root).output().expect("baton report");
        times.push(started.elapsed());
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    }
    times.sort();
    println!(
        "baton report over {STEPS} steps ({:.1} MB of trace): median {:.2} s, best {:.2} s of {RUNS}",
        bytes as f64 / 1e6,
        times[RUNS / 2].as_secs_f64(),
        times[0].as_secs_f64()
    );
}
