//! Durability of a distributed run across the death of any process (issue 21,
//! item 3), with a real restate-server, real `baton worker`s behind Debian's
//! haproxy and the real `baton run`, all on loopback: SIGKILL a worker mid-step,
//! SIGKILL the coordinator mid-step, kill and restart the server mid-run, a step
//! longer than the server's invoker timeouts, and 250 steps over three workers.
//!
//! Every test ends by checking that the run completed and each completed step is
//! recorded once (`TransitionOccurred` once per journal commit, as many as the
//! run's completed steps, and no step number twice per agent in `events.jsonl`
//! and in `baton report --json`). Steps that must be caught mid-flight wait on a
//! gate file the test creates; the test waits on files the steps write, every
//! wait bounded. Only the long-step test waits on real time: that is what it
//! proves.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::haproxy::Haproxy;
use crate::support::loopback::is_alive;
use crate::support::restate::{RestateOptions, RestateServer, exclusive, server_log_tail};
use crate::support::worker::Worker;
use crate::support::{Outcome, Test};

/// How long any one wait of these tests may take on a busy machine.
const DEADLINE: Duration = Duration::from_secs(90);

/// A shell function for step scripts: prints `PID NAME` of the `baton worker`
/// the step runs under (found by walking up the process tree), `0 local` when
/// none.
const WORKER_OF: &str = r#"worker_of() {
  p=$$
  while [ "$p" -gt 1 ]; do
    cmd=$(tr '\0' ' ' < /proc/$p/cmdline 2>/dev/null)
    case "$cmd" in
      *" worker --listen "*) name=${cmd##*--name }; echo "$p ${name%% *}"; return ;;
    esac
    p=$(sed 's/.*) [A-Za-z] \([0-9]*\) .*/\1/' /proc/$p/stat 2>/dev/null || echo 1)
  done
  echo "0 local"
}
"#;

/// A restate-server, `workers` workers (`w1`…) behind one haproxy, and the
/// balancer's URI registered once.
struct Cluster {
    _one_at_a_time: std::sync::MutexGuard<'static, ()>,
    server: RestateServer,
    workers: Vec<Worker>,
    haproxy: Haproxy,
}

impl Cluster {
    fn start(workers: usize, options: RestateOptions) -> Cluster {
        let one_at_a_time = exclusive();
        let server = RestateServer::start(options);
        let baton = Path::new(env!("CARGO_BIN_EXE_baton"));
        let workers: Vec<Worker> = (1..=workers).map(|n| Worker::start(baton, &format!("w{n}"), &[])).collect();
        let addresses: Vec<_> = workers.iter().map(Worker::address).collect();
        let haproxy = Haproxy::start(&addresses);
        server.register(&haproxy.url());
        Cluster { _one_at_a_time: one_at_a_time, server, workers, haproxy }
    }

    fn engine(&self) -> String {
        self.server.engine()
    }

    /// What the processes logged, for a failure message.
    fn logs(&self) -> String {
        let mut text = format!("--- restate-server\n{}\n", server_log_tail(&self.server, 30));
        for worker in &self.workers {
            text.push_str(&format!("--- worker {}\n{}\n", worker.name(), worker.log_tail(30)));
        }
        text.push_str(&format!("--- haproxy\n{}", self.haproxy.log()));
        text
    }
}

/// The lines of `path` (none while it does not exist).
fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path).unwrap_or_default().lines().map(str::to_string).collect()
}

/// Wait until `path` has at least `count` lines; its lines.
#[track_caller]
fn wait_for_lines(path: &Path, count: usize, cluster: &Cluster) -> Vec<String> {
    let deadline = Instant::now() + DEADLINE;
    loop {
        let found = lines(path);
        if found.len() >= count {
            return found;
        }
        assert!(
            Instant::now() < deadline,
            "{} has {} lines, expected {count} within {DEADLINE:?}:\n{found:?}\n{}",
            path.display(),
            found.len(),
            cluster.logs()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Wait (bounded) for `child` to exit; its exit code and stderr.
#[track_caller]
fn wait_for_exit(mut child: Child, cluster: &Cluster) -> (i32, String) {
    let deadline = Instant::now() + DEADLINE;
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            let output = child.wait_with_output().expect("output");
            return (status.code().unwrap_or(-1), String::from_utf8_lossy(&output.stderr).into_owned());
        }
        if Instant::now() >= deadline {
            crate::support::loopback::kill_child(&mut child);
            let output = child.wait_with_output().expect("output");
            panic!(
                "baton did not finish within {DEADLINE:?}; its stderr:\n{}\n{}",
                String::from_utf8_lossy(&output.stderr),
                cluster.logs()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Wait (bounded) until no process has the pid.
#[track_caller]
fn wait_until_gone(pid: u32, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while is_alive(pid) {
        assert!(Instant::now() < deadline, "{what} (pid {pid}) is still alive 20 s after its worker died");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The run completed, and each completed step is recorded once: one
/// `TransitionOccurred` per journal commit, as many as the completed steps; no
/// `(agent, step)` completed twice in `events.jsonl`; `baton report --json`
/// counts the same steps.
#[track_caller]
fn assert_completed_with_each_step_once(outcome: &Outcome, run_id: &str, context: &str) {
    let state = outcome.state(run_id);
    assert_eq!(state["status"], "completed", "{context}: {state}");
    let mut commits: BTreeMap<u64, usize> = BTreeMap::new();
    for event in outcome.events_of(run_id, "TransitionOccurred") {
        *commits.entry(event["commit"].as_u64().expect("commit")).or_default() += 1;
    }
    let twice: Vec<_> = commits.iter().filter(|(_, count)| **count > 1).collect();
    assert!(twice.is_empty(), "{context}: transitions traced twice: {twice:?}");
    let steps = state["steps_completed"].as_u64().expect("steps_completed");
    assert_eq!(commits.len() as u64, steps, "{context}: every completed step is in the trace once");
    let mut completed = BTreeSet::new();
    for event in outcome.events_of(run_id, "StateCompleted") {
        let key = (event["agent_id"].as_str().expect("agent").to_string(), event["step"].as_u64().expect("step"));
        assert!(completed.insert(key.clone()), "{context}: step {key:?} completed twice in events.jsonl");
    }
    let log = std::fs::read_to_string(outcome.run_dir(run_id).join("transitions.log")).expect("transitions.log");
    assert_eq!(log.lines().count() as u64, steps, "{context}: transitions.log has one line per step:\n{log}");
    let report = outcome.test.command(&["report".into(), run_id.into(), "--json".into()]).output().expect("report");
    let report: Value = serde_json::from_slice(&report.stdout).expect("report JSON");
    assert_eq!(report["totals"]["steps"].as_u64(), Some(completed.len() as u64), "{context}: {report}");
}

/// A workflow START → GATED → END whose GATED step appends `WORKER_PID NAME
/// STEP_PID` to `starts.log`, waits for the file `gate`, appends to
/// `finished.log`, then goes to END.
fn gated_workflow() -> (Test, PathBuf) {
    let test = Test::new();
    let root = test.root().to_path_buf();
    let gated = format!(
        "{WORKER_OF}echo \"$(worker_of) $$\" >> '{root}/starts.log'\n\
         while [ ! -e '{root}/gate' ]; do sleep 0.02; done\n\
         echo \"$(worker_of) $$\" >> '{root}/finished.log'\n\
         echo '<goto>END</goto>'\n",
        root = root.display()
    );
    let test = test
        .file("START.sh", "echo '<goto>GATED</goto>'\n")
        .file("GATED.sh", &gated)
        .file("END.sh", "echo '<result>done</result>'\n");
    (test, root)
}

/// `WORKER_PID NAME STEP_PID` of a line of `starts.log`.
fn parse_start(line: &str) -> (u32, String, u32) {
    let fields: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(fields.len(), 3, "a starts.log line: {line:?}");
    (fields[0].parse().expect("worker pid"), fields[1].to_string(), fields[2].parse().expect("step pid"))
}

#[test]
fn a_worker_killed_mid_step_its_step_runs_again_on_another_worker_and_the_run_completes() {
    let mut cluster = Cluster::start(3, RestateOptions::default());
    let (test, root) = gated_workflow();
    let coordinator = test.spawn(&["run", "wf", "--run-id", "kill-worker", "--engine", &cluster.engine(), "-q"]);

    let first = wait_for_lines(&root.join("starts.log"), 1, &cluster);
    let (worker_pid, worker_name, step_pid) = parse_start(&first[0]);
    let victim = cluster.workers.iter_mut().find(|worker| worker.pid() == worker_pid);
    let victim = victim.unwrap_or_else(|| panic!("the step runs under no worker of the cluster: {first:?}"));
    victim.kill();
    let killed_at = Instant::now();
    wait_until_gone(step_pid, "the dead worker's step");

    let again = wait_for_lines(&root.join("starts.log"), 2, &cluster);
    let taken_over_in = killed_at.elapsed();
    let (second_worker, second_name, _) = parse_start(&again[1]);
    assert_ne!(second_worker, worker_pid, "the step ran again on the dead worker: {again:?}");
    assert_ne!(second_name, worker_name);
    eprintln!("the step of killed worker {worker_name} ran again on {second_name} after {taken_over_in:?}");
    std::fs::write(root.join("gate"), "").expect("open the gate");

    let (code, stderr) = wait_for_exit(coordinator, &cluster);
    assert_eq!(code, 0, "the run failed:\n{stderr}\n{}", cluster.logs());
    assert_eq!(lines(&root.join("starts.log")).len(), 2, "the step started more than twice");
    assert_eq!(lines(&root.join("finished.log")).len(), 1, "the step finished more than once");
    let outcome = test.args(["status", "kill-worker"]).run();
    assert_completed_with_each_step_once(&outcome, "kill-worker", "worker killed");
}

#[test]
fn the_coordinator_killed_mid_step_resume_completes_without_running_the_step_again() {
    let cluster = Cluster::start(3, RestateOptions::default());
    let (test, root) = gated_workflow();
    let mut coordinator =
        test.spawn(&["run", "wf", "--run-id", "kill-coordinator", "--engine", &cluster.engine(), "-q"]);
    wait_for_lines(&root.join("starts.log"), 1, &cluster);
    crate::support::loopback::kill_child(&mut coordinator);

    // The step finishes on its worker while no coordinator waits for it.
    std::fs::write(root.join("gate"), "").expect("open the gate");
    wait_for_lines(&root.join("finished.log"), 1, &cluster);

    let resume = test.spawn(&["resume", "kill-coordinator", "-q"]);
    let (code, stderr) = wait_for_exit(resume, &cluster);
    assert_eq!(code, 0, "the resume failed:\n{stderr}\n{}", cluster.logs());
    assert_eq!(lines(&root.join("starts.log")).len(), 1, "the resumed run ran the finished step again");
    let outcome = test.args(["status", "kill-coordinator"]).run();
    assert_completed_with_each_step_once(&outcome, "kill-coordinator", "coordinator killed");
}

#[test]
fn restate_server_killed_and_restarted_mid_run_the_run_continues_and_completes() {
    let mut cluster = Cluster::start(3, RestateOptions::default());
    let (test, root) = gated_workflow();
    let coordinator = test.spawn(&["run", "wf", "--run-id", "kill-server", "--engine", &cluster.engine(), "-q"]);
    wait_for_lines(&root.join("starts.log"), 1, &cluster);

    cluster.server.kill();
    std::fs::write(root.join("gate"), "").expect("open the gate");
    cluster.server.restart();

    let (code, stderr) = wait_for_exit(coordinator, &cluster);
    assert_eq!(code, 0, "the run failed:\n{stderr}\n{}", cluster.logs());
    let outcome = test.args(["status", "kill-server"]).run();
    assert_completed_with_each_step_once(&outcome, "kill-server", "server restarted");
}

/// The server aborts a silent invocation after its inactivity + abort timeouts
/// (2 s + 3 s here) and runs it again, forever, unless the service declares
/// longer ones: an 8 s step runs exactly once.
#[test]
fn a_step_longer_than_the_servers_invoker_timeouts_runs_once() {
    let cluster = Cluster::start(1, RestateOptions::short_invoker_timeouts());
    let test = Test::new();
    let root = test.root().to_path_buf();
    let test = test.file(
        "START.sh",
        &format!("echo $$ >> '{}/starts.log'\nsleep 8\necho '<result>long</result>'\n", root.display()),
    );
    let coordinator = test.spawn(&["run", "wf", "--run-id", "long", "--engine", &cluster.engine(), "-q"]);
    let (code, stderr) = wait_for_exit(coordinator, &cluster);
    assert_eq!(code, 0, "the run failed:\n{stderr}\n{}", cluster.logs());
    assert_eq!(lines(&root.join("starts.log")).len(), 1, "the long step was re-run:\n{}", cluster.logs());
    let outcome = test.args(["status", "long"]).run();
    assert_completed_with_each_step_once(&outcome, "long", "long step");
}

#[test]
fn two_hundred_fifty_steps_split_over_three_workers_with_none_run_twice() {
    let cluster = Cluster::start(3, RestateOptions::default());
    let test = Test::new();
    let root = test.root().to_path_buf();
    let step = format!(
        "{WORKER_OF}n=$BATON_INPUT\necho \"$n $(worker_of)\" >> '{root}/steps.log'\n\
         if [ \"$n\" -ge 249 ]; then echo '<result>looped</result>'; \
         else echo \"<goto input=\\\"$((n + 1))\\\">STEP</goto>\"; fi\n",
        root = root.display()
    );
    let test = test.file("START.sh", "echo '<goto input=\"1\">STEP</goto>'\n").file("STEP.sh", &step);
    let coordinator = test.spawn(&["run", "wf", "--run-id", "split", "--engine", &cluster.engine(), "-q"]);
    let (code, stderr) = wait_for_exit(coordinator, &cluster);
    assert_eq!(code, 0, "the run failed:\n{stderr}\n{}", cluster.logs());

    let ran = lines(&root.join("steps.log"));
    assert_eq!(ran.len(), 249, "STEP ran 249 times (plus START): {ran:?}");
    let inputs: BTreeSet<&str> = ran.iter().filter_map(|line| line.split_whitespace().next()).collect();
    assert_eq!(inputs.len(), 249, "a step ran twice");
    let outcome = test.args(["status", "split"]).run();
    assert_completed_with_each_step_once(&outcome, "split", "250 steps");
    // Which worker ran each step, as the trace says (and as the steps saw it).
    let mut per_worker: BTreeMap<String, usize> = BTreeMap::new();
    let ran_on = outcome.events_of("split", "StepRanOn");
    assert_eq!(ran_on.len(), 250, "one StepRanOn per step");
    for event in &ran_on {
        *per_worker.entry(event["worker"].as_str().expect("worker").to_string()).or_default() += 1;
    }
    eprintln!("250 steps over three workers: {per_worker:?}");
    let names: Vec<&String> = per_worker.keys().collect();
    assert_eq!(names, ["w1", "w2", "w3"], "every worker ran some steps: {per_worker:?}");
    for line in &ran {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let traced = ran_on.iter().find(|event| event["step"].as_u64() == fields[0].parse::<u64>().ok().map(|n| n + 1));
        assert_eq!(traced.map(|event| event["worker"].as_str()), Some(fields.get(2).copied()), "step input {line}");
    }
}
