//! The distributed engine against the local one, side by side on one machine
//! (`cargo bench --bench distributed`; issue 21's benchmark).
//!
//! Two workflows, each run with the local engine and with `--engine restate=`
//! through three `baton worker`s behind haproxy (a fresh restate-server and
//! workers per workflow, so each peak is that workflow's):
//! - a fan-out of 300 agents each running `sleep 1` (the fan-out's wall time is
//!   bounded below by 1 s; what is above it is dispatch and bookkeeping);
//! - a loop of 300 trivial script steps, one after another (wall / steps is the
//!   cost of one transition, including a round trip through Restate).
//!
//! For every process it prints CPU (user + system, including the children it
//! reaped: the step scripts for the local engine and for the workers) and peak
//! RSS (`VmHWM`): the coordinator (`baton run`, from its `--json` metrics), each
//! worker, the server and haproxy (from `/proc/PID/stat` and `/proc/PID/status`
//! at the end). Numbers, not assertions: it prints a table and never fails on a
//! slow machine. `--runs N` (default 3) runs each row N times; medians shown.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

// The tests' harness, shared: its modules refer to each other as `super::…`,
// which at the crate root of this bench is the crate itself. npm_cli.rs's own test
// names the three agent CLIs' installs; cargo compiles a bench with cfg(test), so
// they come along (nothing here runs them).
#[cfg(test)]
#[path = "../tests/support/claude_cli.rs"]
mod claude_cli;
#[cfg(test)]
#[path = "../tests/support/codex_cli.rs"]
mod codex_cli;
#[path = "../tests/support/haproxy.rs"]
mod haproxy;
#[path = "../tests/support/loopback.rs"]
mod loopback;
#[allow(unused_imports)]
#[path = "../tests/support/npm_cli.rs"]
mod npm_cli;
#[cfg(test)]
#[path = "../tests/support/pi_cli.rs"]
mod pi_cli;
#[path = "../tests/support/restate.rs"]
mod restate;
#[path = "../tests/support/user_environment.rs"]
mod user_environment;
#[path = "../tests/support/worker.rs"]
mod worker;

use haproxy::Haproxy;
use restate::{RestateOptions, RestateServer};
use worker::Worker;

const AGENTS: usize = 300;
const LOOP_STEPS: usize = 300;

/// A workflow written into a fresh project.
struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    fn new(states: &[(&str, String)]) -> Project {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir(dir.path().join(".git")).expect(".git");
        std::fs::create_dir(dir.path().join("wf")).expect("wf");
        for (name, body) in states {
            std::fs::write(dir.path().join("wf").join(name), body).expect("state");
        }
        Project { dir }
    }
}

fn fan_out() -> Project {
    Project::new(&[
        ("START.sh", format!("for i in $(seq {AGENTS}); do echo \"<fork next=\\\"DONE\\\">W</fork>\"; done\n")),
        ("W.sh", "sleep 1\necho '<result>slept</result>'\n".to_string()),
        ("DONE.sh", "echo '<result>fanned out</result>'\n".to_string()),
    ])
}

fn step_loop() -> Project {
    Project::new(&[
        ("START.sh", "echo '<goto input=\"2\">STEP</goto>'\n".to_string()),
        (
            "STEP.sh",
            format!(
                "n=$BATON_INPUT\nif [ \"$n\" -ge {LOOP_STEPS} ]; then echo '<result>looped</result>'; \
                 else echo \"<goto input=\\\"$((n + 1))\\\">STEP</goto>\"; fi\n"
            ),
        ),
    ])
}

/// CPU (user + system + reaped children) in ms and peak RSS in kB of a live process.
fn process_usage(pid: u32) -> (f64, f64) {
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let fields: Vec<f64> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().filter_map(|field| field.parse().ok()).collect())
        .unwrap_or_default();
    // After the state letter (not a number): ppid … utime stime cutime cstime at 11..=14.
    let cpu = fields.get(10..14).map_or(0.0, |times| times.iter().sum::<f64>()) / ticks * 1000.0;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let peak = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|value| value.split_whitespace().next()?.parse().ok())
        .unwrap_or(0.0);
    (cpu, peak)
}

/// One run of `baton run wf` in `project`: wall time and the run's `--json` report.
fn run_baton(project: &Project, run_id: &str, engine: Option<&str>) -> (Duration, serde_json::Value) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_baton"));
    command.args(["run", "wf", "--run-id", run_id, "-q", "--json", "--max-agents", "1000"]);
    if let Some(engine) = engine {
        command.args(["--engine", engine]);
    }
    let started = Instant::now();
    let output =
        command.current_dir(project.dir.path()).env("NO_COLOR", "1").stdin(Stdio::null()).output().expect("run baton");
    let wall = started.elapsed();
    assert!(output.status.success(), "{run_id} failed: {}", String::from_utf8_lossy(&output.stderr));
    (wall, serde_json::from_slice(&output.stdout).expect("--json report"))
}

fn metric(report: &serde_json::Value, key: &str) -> f64 {
    report["metrics"][key].as_f64().or_else(|| report[key].as_f64()).unwrap_or(0.0)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

struct Row {
    label: String,
    steps: f64,
    wall: f64,
    coordinator: (f64, f64),
    others: Vec<(String, (f64, f64))>,
}

fn measure(name: &str, build: fn() -> Project, runs: usize, distributed: bool) -> Row {
    let cluster = distributed.then(|| {
        let server = RestateServer::start(RestateOptions::default());
        let baton = Path::new(env!("CARGO_BIN_EXE_baton"));
        let workers: Vec<Worker> =
            (1..=3).map(|n| Worker::start(baton, &format!("w{n}"), &["--max-concurrent-steps", "400"])).collect();
        let haproxy = Haproxy::start(&workers.iter().map(Worker::address).collect::<Vec<_>>());
        server.register(&haproxy.url());
        (server, workers, haproxy)
    });
    let engine = cluster.as_ref().map(|(server, _, _)| server.engine());
    let mut walls = Vec::new();
    let mut cpus = Vec::new();
    let mut rsss = Vec::new();
    let mut steps = 0.0;
    for index in 0..runs {
        let project = build();
        let (wall, report) = run_baton(&project, &format!("bench{index}"), engine.as_deref());
        steps = report["steps"].as_f64().unwrap_or(0.0);
        walls.push(wall.as_secs_f64());
        cpus.push(metric(&report, "cpu_user_ms") + metric(&report, "cpu_system_ms"));
        rsss.push(metric(&report, "peak_rss_kb"));
    }
    let mut others = Vec::new();
    if let Some((server, workers, haproxy)) = &cluster {
        for worker in workers {
            others.push((format!("worker {}", worker.name()), process_usage(worker.pid())));
        }
        others.push(("restate-server".to_string(), process_usage(server.pid().expect("server pid"))));
        others.push(("haproxy".to_string(), process_usage(haproxy.pid())));
    }
    Row {
        label: format!("{name}, {}", if distributed { "3 workers via Restate" } else { "local" }),
        steps,
        wall: median(walls),
        coordinator: (median(cpus), median(rsss)),
        others: others.into_iter().map(|(name, (cpu, rss))| (name, (cpu / runs as f64, rss))).collect(),
    }
}

fn main() {
    user_environment::drop_cargo_loader_path();
    let mut args = std::env::args().skip(1);
    let mut runs = 3;
    while let Some(arg) = args.next() {
        if arg == "--runs" {
            runs = args.next().and_then(|value| value.parse().ok()).unwrap_or(runs);
        }
    }
    println!(
        "baton distributed benchmark: median of {runs} runs, {} cores; CPU per run, peak RSS over all runs",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    println!();
    println!(
        "| workflow, engine | steps | wall | wall / step | coordinator CPU | coordinator peak RSS | other processes (CPU per run, peak RSS) |"
    );
    println!("|---|---|---|---|---|---|---|");
    let rows = [
        measure(&format!("fan-out of {AGENTS} × sleep 1"), fan_out, runs, false),
        measure(&format!("fan-out of {AGENTS} × sleep 1"), fan_out, runs, true),
        measure(&format!("loop of {LOOP_STEPS} steps"), step_loop, runs, false),
        measure(&format!("loop of {LOOP_STEPS} steps"), step_loop, runs, true),
    ];
    for row in &rows {
        let others: Vec<String> = row
            .others
            .iter()
            .map(|(name, (cpu, rss))| format!("{name}: {:.0} ms, {:.1} MB", cpu, rss / 1024.0))
            .collect();
        println!(
            "| {} | {:.0} | {:.2} s | {:.2} ms | {:.0} ms | {:.1} MB | {} |",
            row.label,
            row.steps,
            row.wall,
            row.wall * 1000.0 / row.steps.max(1.0),
            row.coordinator.0,
            row.coordinator.1 / 1024.0,
            if others.is_empty() { "none".to_string() } else { others.join("; ") },
        );
    }
}
