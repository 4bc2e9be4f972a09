//! Orchestrator overhead, measured against the floor (`cargo bench --bench orchestrator`).
//!
//! Runs the script-only workflows in `bench/workflows/` with the release `baton`,
//! each `--runs` times (default 5), and reports medians:
//! - per-transition overhead: wall time minus what the same number of bare
//!   `bash <script>` spawns of the same scripts take, measured right after each
//!   run (the median of those paired differences);
//! - Baton's own CPU per transition, peak RSS, and the time and bytes spent on
//!   persistence per step, snapshots amortised (from the run's `--json` metrics);
//! - trace bytes written per step.
//!
//! The scope rows run one chain of 1,000 script states as a directory, a YAML
//! file and a zip archive, generated for the run: a step should cost the same
//! whatever kind of file holds the workflow.
//!
//! Numbers, not assertions: this prints a table and never fails on a slow machine.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[path = "../tests/support/user_environment.rs"]
mod user_environment;

struct Scenario {
    name: &'static str,
    /// A folder of `bench/workflows/`, or a generated workflow (`Scenario::path`).
    workflow: &'static str,
    /// The workflow run, when it is not `bench/workflows/<workflow>`, and the
    /// directory whose scripts the floor runs.
    path: Option<(PathBuf, PathBuf)>,
    env: Vec<(&'static str, String)>,
    args: Vec<&'static str>,
    /// The script executions of one run, as (script, input) pairs, for the floor.
    floor: Vec<(&'static str, String)>,
    /// Whether steps run one after another (the floor then adds up).
    sequential: bool,
    /// For the scaling rows: the series the row belongs to and its number of agents;
    /// each series prints how its CPU per step grows from the smallest to the largest.
    scaling: Option<(&'static str, u64)>,
}

struct Sample {
    wall: Duration,
    steps: u64,
    metrics: serde_json::Value,
    trace_bytes: u64,
}

fn workflows() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("bench/workflows")
}

fn directory_size(path: &Path) -> u64 {
    std::fs::read_dir(path)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|entry| match entry.metadata() {
                    Ok(meta) if meta.is_dir() => directory_size(&entry.path()),
                    Ok(meta) => meta.len(),
                    Err(_) => 0,
                })
                .sum()
        })
        .unwrap_or(0)
}

impl Scenario {
    fn workflow_path(&self) -> PathBuf {
        self.path.as_ref().map_or_else(|| workflows().join(self.workflow), |(path, _)| path.clone())
    }

    fn scripts_dir(&self) -> PathBuf {
        self.path.as_ref().map_or_else(|| workflows().join(self.workflow), |(_, dir)| dir.clone())
    }
}

/// States in the scope rows' chain: each state names the next, so a step of a
/// YAML or zip workflow that re-read its whole file would cost in proportion.
const CHAIN_STATES: usize = 1000;

/// The chain of `CHAIN_STATES` script states as a directory, a YAML file and a
/// zip archive, written under `root` (the scope rows run the same workflow three ways).
fn chain_workflows(root: &Path) -> (PathBuf, PathBuf, PathBuf) {
    use std::io::Write;
    let script = |n: usize| match n {
        n if n == CHAIN_STATES => "echo '<result>chained</result>'\n".to_string(),
        n => format!("echo '<goto>S{}</goto>'\n", n + 1),
    };
    let name = |n: usize| if n == 1 { "START".to_string() } else { format!("S{n}") };
    let dir = root.join("chain");
    std::fs::create_dir_all(&dir).expect("chain dir");
    let mut yaml = String::from("states:\n");
    let zip_path = root.join("chain.zip");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&zip_path).expect("chain.zip"));
    let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for n in 1..=CHAIN_STATES {
        std::fs::write(dir.join(format!("{}.sh", name(n))), script(n)).expect("chain state");
        yaml.push_str(&format!("  {}:\n    sh: \"{}\"\n", name(n), script(n).trim_end()));
        zip.start_file(format!("{}.sh", name(n)), options).expect("zip entry");
        zip.write_all(script(n).as_bytes()).expect("zip write");
    }
    zip.finish().expect("zip finish");
    let yaml_path = root.join("chain.yaml");
    std::fs::write(&yaml_path, yaml).expect("chain.yaml");
    (dir, yaml_path, zip_path)
}

fn run_once(scenario: &Scenario, index: usize) -> Sample {
    let project = tempfile::tempdir().expect("temp dir");
    std::fs::create_dir(project.path().join(".git")).expect(".git");
    let run_id = format!("bench{index}");
    let started = Instant::now();
    let output = Command::new(env!("CARGO_BIN_EXE_baton"))
        .args(["run", &scenario.workflow_path().to_string_lossy(), "--run-id", &run_id, "-q", "--json"])
        .args(&scenario.args)
        .envs(scenario.env.iter().map(|(key, value)| (*key, value.as_str())))
        .current_dir(project.path())
        .stdin(Stdio::null())
        .output()
        .expect("run baton");
    let wall = started.elapsed();
    assert!(output.status.success(), "{} failed: {}", scenario.name, String::from_utf8_lossy(&output.stderr));
    let run_dir = project.path().join(".baton/runs").join(&run_id);
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("--json report");
    let state_files = ["state.json", "journal.jsonl", "lock"]
        .iter()
        .map(|file| std::fs::metadata(run_dir.join(file)).map_or(0, |meta| meta.len()))
        .sum::<u64>();
    Sample {
        wall,
        steps: report["steps"].as_u64().unwrap_or(0),
        metrics: report["metrics"].clone(),
        trace_bytes: directory_size(&run_dir) - state_files,
    }
}

/// The time of `bash <script>` spawns for every execution of one run, sequentially.
fn floor(scenario: &Scenario) -> Duration {
    let project = tempfile::tempdir().expect("temp dir");
    let directory = scenario.scripts_dir();
    let started = Instant::now();
    for (script, input) in &scenario.floor {
        let status = Command::new("bash")
            .arg(directory.join(script))
            .current_dir(project.path())
            .envs(scenario.env.iter().map(|(key, value)| (*key, value.as_str())))
            .env("BATON_INPUT", input)
            .env("BATON_WORKFLOW_ID", "floor")
            .env("BATON_AGENT_ID", "main")
            .env("BATON_TASK_FOLDER", project.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .output()
            .expect("bash");
        assert!(status.status.success());
    }
    started.elapsed()
}

fn median<T: Copy + PartialOrd>(mut values: Vec<T>) -> T {
    values.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    values[values.len() / 2]
}

fn metric(sample: &Sample, key: &str) -> f64 {
    sample.metrics[key].as_f64().unwrap_or(0.0)
}

fn scenarios(generated: &Path) -> Vec<Scenario> {
    let loop_floor = |steps: u64| {
        std::iter::once(("START.sh", String::new()))
            .chain((1..=steps).map(|n| ("STEP.sh", n.to_string())))
            .collect::<Vec<_>>()
    };
    let fanout_floor = |workers: u64, steps: u64| {
        let mut floor = vec![("START.sh", String::new()), ("DONE.sh", String::new())];
        for _ in 0..workers {
            floor.extend((1..=steps).map(|k| ("W.sh", k.to_string())));
        }
        floor
    };
    let callstack_floor = |depth: u64| {
        let mut floor = vec![("START.sh", String::new())];
        floor.extend((0..=depth).rev().map(|n| ("DOWN.sh", n.to_string())));
        floor.extend((0..depth).map(|n| ("UP.sh", n.to_string())));
        floor.push(("REPORT.sh", depth.to_string()));
        floor
    };
    let mut scenarios = vec![
        Scenario {
            name: "loop (1,000 gotos)",
            workflow: "loop",
            path: None,
            env: vec![],
            args: vec![],
            floor: loop_floor(1000),
            sequential: true,
            scaling: None,
        },
        Scenario {
            name: "loop, --no-debug",
            workflow: "loop",
            path: None,
            env: vec![],
            args: vec!["--no-debug"],
            floor: loop_floor(1000),
            sequential: true,
            scaling: None,
        },
        Scenario {
            name: "callstack (depth 100)",
            workflow: "callstack",
            path: None,
            env: vec![],
            args: vec![],
            floor: callstack_floor(100),
            sequential: true,
            scaling: None,
        },
        Scenario {
            name: "fanout (10 live agents: 10 workers x 500)",
            workflow: "fanout",
            path: None,
            env: vec![("BENCH_WORKERS", "10".into()), ("BENCH_WORKER_STEPS", "500".into())],
            args: vec![],
            floor: fanout_floor(10, 500),
            sequential: false,
            scaling: None,
        },
        Scenario {
            name: "fanout (1,000 live agents: 1,000 workers x 5)",
            workflow: "fanout",
            path: None,
            env: vec![("BENCH_WORKERS", "1000".into())],
            args: vec![],
            floor: fanout_floor(1000, 5),
            sequential: false,
            scaling: None,
        },
    ];
    // The same chain of states as a directory, a YAML workflow and a zip archive:
    // a scope's kind should not change what a step costs.
    let (chain_dir, chain_yaml, chain_zip) = chain_workflows(generated);
    let chain_floor: Vec<(&'static str, String)> = (1..=CHAIN_STATES)
        .map(|n| {
            let file = if n == 1 { "START.sh".to_string() } else { format!("S{n}.sh") };
            (&*Box::leak(file.into_boxed_str()), String::new())
        })
        .collect();
    for (name, path) in [
        ("scope: chain of 1,000 states, directory", chain_dir.clone()),
        ("scope: chain of 1,000 states, YAML", chain_yaml),
        ("scope: chain of 1,000 states, zip", chain_zip),
    ] {
        scenarios.push(Scenario {
            name,
            workflow: "chain",
            path: Some((path, chain_dir.clone())),
            env: vec![],
            args: vec!["--no-debug"],
            floor: chain_floor.clone(),
            sequential: true,
            scaling: None,
        });
    }
    // Cost per step against the number of agents: N workers of one step each, all
    // forked in one output, with and without `--max-agents 100`.
    for (series, args) in [("no cap", vec![]), ("--max-agents 100", vec!["--max-agents", "100"])] {
        for (workers, name) in [(100, "100"), (1_000, "1,000"), (10_000, "10,000")] {
            scenarios.push(Scenario {
                name: Box::leak(format!("scaling: {name} workers x 1, {series}").into_boxed_str()),
                workflow: "fanout",
                path: None,
                env: vec![("BENCH_WORKERS", workers.to_string()), ("BENCH_WORKER_STEPS", "1".into())],
                args: [vec!["--no-debug"], args.clone()].concat(),
                floor: fanout_floor(workers, 1),
                sequential: false,
                scaling: Some((series, workers)),
            });
        }
    }
    scenarios
}

fn main() {
    user_environment::drop_cargo_loader_path();
    let mut args = std::env::args().skip(1);
    let mut runs = 5;
    let mut only: Option<String> = None;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--runs" => runs = args.next().and_then(|value| value.parse().ok()).unwrap_or(runs),
            "--only" => only = args.next(),
            _ => {}
        }
    }
    println!(
        "baton orchestrator benchmark: median of {runs} runs, {} cores",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    println!();
    println!(
        "| scenario | steps | wall | bash floor | overhead / transition | baton CPU / transition | peak RSS | persistence / step | state bytes / step | trace bytes / step |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    // (series, agents, wall per step in ms, CPU per step in ms) of the scaling rows.
    let mut scaling: Vec<(&str, u64, f64, f64)> = Vec::new();
    let generated = tempfile::tempdir().expect("temp dir");
    for scenario in scenarios(generated.path()) {
        if only.as_deref().is_some_and(|only| !scenario.workflow.contains(only) && !scenario.name.contains(only)) {
            continue;
        }
        // Each run is paired with a floor measured right after it, and the overhead
        // is the median of the pairs' differences: on a shared machine the load
        // drifts over a row's runs, and a floor measured after all of them compared
        // another moment's machine with Baton's.
        let (samples, floors): (Vec<Sample>, Vec<Duration>) =
            (0..runs).map(|index| (run_once(&scenario, index), floor(&scenario))).unzip();
        let steps = samples[0].steps;
        let wall = median(samples.iter().map(|sample| sample.wall).collect());
        let per_step = |value: f64| value / steps as f64;
        let overhead_ms = median(
            samples
                .iter()
                .zip(&floors)
                .map(|(sample, floor)| (sample.wall.as_secs_f64() - floor.as_secs_f64()) * 1000.0)
                .collect(),
        );
        let floor = median(floors);
        let overhead = if scenario.sequential {
            format!("{:.3} ms", per_step(overhead_ms))
        } else {
            String::from("n/a (concurrent)")
        };
        let cpu =
            median(samples.iter().map(|s| per_step(metric(s, "cpu_user_ms") + metric(s, "cpu_system_ms"))).collect());
        let rss = median(samples.iter().map(|sample| metric(sample, "peak_rss_kb")).collect());
        // Journal commits and amortised snapshots, per completed step.
        let persistence = median(samples.iter().map(|s| per_step(metric(s, "persistence_us"))).collect());
        let state_bytes = median(samples.iter().map(|s| per_step(metric(s, "persisted_bytes"))).collect());
        let trace_bytes = median(samples.iter().map(|s| per_step(s.trace_bytes as f64)).collect());
        if let Some((series, agents)) = scenario.scaling {
            scaling.push((series, agents, per_step(wall.as_secs_f64() * 1000.0), cpu));
        }
        println!(
            "| {} | {steps} | {:.2} s | {:.2} s | {overhead} | {:.3} ms | {:.1} MB | {:.0} µs | {:.0} | {:.0} |",
            scenario.name,
            wall.as_secs_f64(),
            floor.as_secs_f64(),
            cpu,
            rss / 1024.0,
            persistence,
            state_bytes,
            trace_bytes,
        );
    }
    print_growth(&scaling);
}

/// For each scaling series: wall and CPU per step at its largest size divided by
/// those at its smallest (1.0 means flat in the number of agents).
fn print_growth(rows: &[(&str, u64, f64, f64)]) {
    let mut series: Vec<&str> = rows.iter().map(|row| row.0).collect();
    series.dedup();
    for name in series {
        let of_series: Vec<_> = rows.iter().filter(|row| row.0 == name).collect();
        let (Some(smallest), Some(largest)) =
            (of_series.iter().min_by_key(|row| row.1), of_series.iter().max_by_key(|row| row.1))
        else {
            continue;
        };
        if smallest.1 == largest.1 {
            continue;
        }
        println!(
            "growth, {name}: {} -> {} agents: wall per step x{:.2}, CPU per step x{:.2}",
            smallest.1,
            largest.1,
            largest.2 / smallest.2,
            largest.3 / smallest.3
        );
    }
}
