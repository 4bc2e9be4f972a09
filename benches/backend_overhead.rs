//! Baton's overhead per markdown step on each backend, against bare calls of the
//! same CLI to the same fake model API (`cargo bench --bench backend_overhead
//! [-- --backend claude|pi|codex] [--runs N] [--steps N] [--versus BIN]`; every backend by default).
//!
//! The floor is what the CLI costs on its own: one fresh call and `steps - 1`
//! calls each continuing the conversation the one before it left (`claude --resume`,
//! `pi --session`, `codex exec resume`), the chain measured right before the Baton run
//! it is compared with. Baton
//! runs a workflow of `steps` prompt states chained by implicit `goto`s (so it makes
//! one fresh and `steps - 1` continuing calls too); overhead per step is
//! `(Baton wall - floor) / steps`, the median over `--runs` (default 9) paired runs.
//! It also prints how long the bare CLI takes to exit after the stream object that
//! ends its turn (time every step waits for, Baton's and the bare CLI's alike), and
//! which files in the CLI's state directory it still wrote after that object: a
//! turn could only move on at the object if the next turn, resuming the session,
//! would not race those writes.
//! With `--versus BIN`, each iteration also runs the same workflow with another
//! `baton` binary (a build to compare with), the two in alternating order, and prints
//! both builds' overhead and their paired difference per step: the CLIs' own
//! variance, which makes the overhead's range wide, is shared within a pair.
//! Baton's own share is also measured directly: each run logs when it started and
//! reaped each CLI (`BATON_LOG=baton::backend::jsonl_process=debug`), and the wall
//! time outside those lifetimes (before the first turn, between turns, after the
//! last) is Baton's alone, with none of the CLIs' variance in it; the CLI's
//! lifetime under Baton is printed beside the bare call's. A lifetime starts where
//! a bare call's wall does, at the spawn call (the started line says how long the
//! call took): the call returns once the child has exec'd, and on a busy machine
//! the child keeps the core its parent waits for, which is the CLI's start-up.
//! Numbers only: nothing is asserted.

#![allow(dead_code, unused_imports)] // The test support is shared; this bench uses part of it.

#[path = "../tests/support/mod.rs"]
mod support;
#[path = "../tests/support/user_environment.rs"]
mod user_environment;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::fake_anthropic::FakeAnthropic;
use support::fake_openai::FakeOpenAi;
use support::{Test, claude_cli, codex_cli, pi_cli};

/// One backend: how its CLI is called bare, as Baton calls it for a state
/// without options in a run that skips permissions.
struct Backend {
    name: &'static str,
    /// The CLI's command against the fake at `url`, with its environment.
    command: fn(&str) -> Command,
    /// Arguments of a fresh call, and of one continuing conversation `id`.
    fresh: &'static [&'static str],
    continuing: fn(&str) -> Vec<String>,
    /// The object field holding the conversation's id in the CLI's stream.
    id_field: &'static str,
    /// The `type` of the stream object that ends a turn (what Baton waits for).
    end_type: &'static str,
    /// `test` pointed at the fake at `url`, with this backend's binary.
    environment: fn(Test, &str) -> Test,
}

const CLAUDE_FRESH: &[&str] = &[
    "-p",
    "--output-format",
    "stream-json",
    "--verbose",
    "--dangerously-skip-permissions",
    "--model",
    "sonnet",
    "--disallowed-tools",
    "EnterPlanMode,ExitPlanMode,AskUserQuestion,NotebookEdit",
];
const CODEX_FRESH: &[&str] =
    &["exec", "--json", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "-"];

const BACKENDS: [Backend; 3] = [
    Backend {
        name: "claude",
        command: claude_cli::claude_command,
        fresh: CLAUDE_FRESH,
        continuing: |id| CLAUDE_FRESH.iter().map(|arg| arg.to_string()).chain(["--resume".into(), id.into()]).collect(),
        id_field: "session_id",
        end_type: "result",
        environment: |mut test, url| {
            for key in claude_cli::CLAUDE_ENV_REMOVE {
                test = test.env_remove(key);
            }
            for (key, value) in claude_cli::claude_env(url) {
                test = test.env(&key, &value);
            }
            test.env("BATON_CLAUDE_BIN", &claude_cli::claude_binary().to_string_lossy())
        },
    },
    Backend {
        name: "pi",
        command: pi_cli::pi_command,
        fresh: &["--mode", "json", "-p"],
        continuing: |id| ["--mode", "json", "-p", "--session", id].map(String::from).to_vec(),
        id_field: "id",
        end_type: "agent_end",
        environment: |mut test, url| {
            for key in pi_cli::PI_ENV_REMOVE {
                test = test.env_remove(key);
            }
            for (key, value) in pi_cli::pi_env(url) {
                test = test.env(&key, &value);
            }
            test.env("BATON_PI_BIN", &pi_cli::pi_binary().to_string_lossy())
        },
    },
    Backend {
        name: "codex",
        command: codex_cli::codex_command,
        fresh: CODEX_FRESH,
        continuing: |id| {
            let (last, first) = CODEX_FRESH.split_last().expect("arguments");
            first.iter().map(|arg| arg.to_string()).chain(["resume".into(), id.into(), last.to_string()]).collect()
        },
        id_field: "thread_id",
        end_type: "turn.completed",
        environment: |mut test, url| {
            for key in codex_cli::CODEX_ENV_REMOVE {
                test = test.env_remove(key);
            }
            for (key, value) in codex_cli::codex_env(url) {
                test = test.env(&key, &value);
            }
            test.env("BATON_CODEX_BIN", &codex_cli::codex_binary().to_string_lossy())
        },
    },
];

/// The fake model API a backend talks to, kept alive while it is measured.
enum Fake {
    Anthropic(FakeAnthropic),
    OpenAi(FakeOpenAi),
}

impl Fake {
    fn for_backend(name: &str) -> Fake {
        if name == "codex" {
            use support::fake_openai::Rule;
            Fake::OpenAi(FakeOpenAi::start(vec![
                Rule::when_prompt("BENCH STATE").reply_text("ok"),
                Rule::when_prompt("LAST STEP").reply_text("<result>done</result>"),
                Rule::when_prompt("STEP").reply_text("ok"),
            ]))
        } else {
            use support::fake_anthropic::Rule;
            Fake::Anthropic(FakeAnthropic::start(vec![
                Rule::when_prompt("BENCH STATE").reply_text("ok"),
                Rule::when_prompt("LAST STEP").reply_text("<result>done</result>"),
                Rule::when_prompt("STEP").reply_text("ok"),
            ]))
        }
    }

    fn url(&self) -> String {
        match self {
            Fake::Anthropic(fake) => fake.url(),
            Fake::OpenAi(fake) => fake.url(),
        }
    }
}

/// The median, lowest and highest of `seconds`, in milliseconds.
fn spread_ms(mut seconds: Vec<f64>) -> (f64, f64, f64) {
    seconds.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    (seconds[seconds.len() / 2] * 1000.0, seconds[0] * 1000.0, seconds[seconds.len() - 1] * 1000.0)
}

fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    values[values.len() / 2]
}

/// The variables naming the directory where each CLI keeps its sessions.
const STATE_DIR_VARIABLES: [&str; 3] = ["CLAUDE_CONFIG_DIR", "PI_CODING_AGENT_DIR", "CODEX_HOME"];

/// Every file under `dir`, with its size and modification time.
fn files_under(dir: &Path) -> std::collections::BTreeMap<PathBuf, (u64, std::time::SystemTime)> {
    let mut files = std::collections::BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&next) else { continue };
        for entry in entries.flatten() {
            match entry.metadata() {
                Ok(meta) if meta.is_dir() => pending.push(entry.path()),
                Ok(meta) => {
                    let modified = meta.modified().unwrap_or(std::time::UNIX_EPOCH);
                    let relative = entry.path().strip_prefix(dir).map(Path::to_path_buf).unwrap_or_default();
                    files.insert(relative, (meta.len(), modified));
                }
                Err(_) => {}
            }
        }
    }
    files
}

/// What one bare call measured.
struct BareCall {
    wall: Duration,
    /// The conversation id the CLI reported.
    id: String,
    /// From the object that ends the turn to the process's exit.
    lingered: Option<Duration>,
    /// Files under the CLI's state directory written after that object was read.
    written_after_end: Vec<PathBuf>,
}

/// One bare call of the CLI.
fn bare_call(backend: &Backend, url: &str, cwd: &Path, continuing: Option<&str>) -> BareCall {
    use std::io::BufRead;
    let mut command = (backend.command)(url);
    let state_dir = command
        .get_envs()
        .find(|(key, _)| STATE_DIR_VARIABLES.iter().any(|name| key == name))
        .and_then(|(_, value)| value.map(PathBuf::from));
    match continuing {
        Some(id) => command.args((backend.continuing)(id)),
        None => command.args(backend.fresh),
    };
    command.current_dir(cwd).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
    let started = Instant::now();
    let mut child = command.spawn().expect("the CLI");
    child.stdin.take().expect("stdin").write_all(b"BENCH STATE").expect("prompt");
    let (mut id, mut ended_at, mut files_at_end) = (String::new(), None, None);
    for line in std::io::BufReader::new(child.stdout.take().expect("stdout")).lines() {
        let Ok(value) = serde_json::from_str::<serde_json::Value>(&line.expect("a line")) else { continue };
        if id.is_empty()
            && let Some(found) = value[backend.id_field].as_str()
        {
            id = found.to_string();
        }
        if ended_at.is_none() && value["type"] == backend.end_type {
            ended_at = Some(Instant::now());
            files_at_end = state_dir.as_deref().map(files_under);
        }
    }
    child.wait().expect("the CLI's exit");
    let exited = Instant::now();
    let written_after_end = match (state_dir.as_deref(), files_at_end) {
        (Some(dir), Some(before)) => files_under(dir)
            .into_iter()
            .filter(|(path, stamp)| before.get(path) != Some(stamp))
            .map(|(path, _)| path)
            .collect(),
        _ => Vec::new(),
    };
    BareCall { wall: exited - started, id, lingered: ended_at.map(|at| exited - at), written_after_end }
}

/// The `spawn_us` field of an `agent CLI started` line (absent from builds before it).
fn spawn_us(line: &str) -> Option<u64> {
    line.split_whitespace().find_map(|field| field.strip_prefix("spawn_us=")).and_then(|value| value.parse().ok())
}

/// What one `baton` binary measured over the runs.
#[derive(Default)]
struct BatonRuns {
    wall: Vec<Duration>,
    /// (Baton wall - floor) / steps, in seconds, per run.
    differences: Vec<f64>,
    cpu_per_step: Vec<Duration>,
    /// Where each run's wall time went, from Baton's own timestamps (absent for a
    /// build that does not log them).
    split: Vec<WallSplit>,
}

/// One Baton run's wall time split at its CLIs' starts and exits (the
/// `agent CLI started` and `agent CLI exited` lines `BATON_LOG=debug` prints):
/// the CLIs' lifetimes are their own, and whatever is left is Baton's, which no
/// variance of the CLIs' start-up can hide.
struct WallSplit {
    /// Each CLI's lifetime, from its spawn to its reaping, in turn order.
    lifetimes: Vec<Duration>,
    /// From the launch of `baton run` to the first CLI's spawn.
    before_first: Duration,
    /// From each CLI's exit to the next one's spawn.
    gaps: Vec<Duration>,
    /// From each CLI's exit to the end of its process group (the leftover check).
    group_ends: Vec<Duration>,
    /// From the last CLI's exit to `baton run`'s own exit.
    after_last: Duration,
    /// How long each spawn call took to return: part of the CLI's lifetime (the
    /// child runs from its first instant), shown apart because a busy machine
    /// lengthens it.
    spawns: Vec<Duration>,
}

impl WallSplit {
    /// The split of a run launched at `launched` and ended at `ended`, from its stderr.
    fn read(stderr: &str, launched: jiff::Timestamp, ended: jiff::Timestamp) -> Option<WallSplit> {
        let at = |line: &str| line.split_whitespace().next().and_then(|stamp| stamp.parse::<jiff::Timestamp>().ok());
        let (mut starts, mut exits, mut ended_groups, mut spawns) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for line in stderr.lines() {
            if line.contains("agent CLI started") {
                // The CLI's life began with the spawn call, as a bare call's wall does.
                let spawn = Duration::from_micros(spawn_us(line).unwrap_or(0));
                spawns.push(spawn);
                starts.push(at(line)?.checked_sub(spawn).ok()?);
            } else if line.contains("agent CLI exited") {
                exits.push(at(line)?);
            } else if line.contains("agent CLI's process group ended") {
                ended_groups.push(at(line)?);
            }
        }
        if starts.is_empty() || starts.len() != exits.len() || exits.len() != ended_groups.len() {
            return None;
        }
        let span = |from: jiff::Timestamp, to: jiff::Timestamp| {
            Duration::try_from(to.duration_since(from)).unwrap_or_default()
        };
        Some(WallSplit {
            lifetimes: starts.iter().zip(&exits).map(|(start, exit)| span(*start, *exit)).collect(),
            before_first: span(launched, starts[0]),
            gaps: exits.iter().zip(&starts[1..]).map(|(exit, next)| span(*exit, *next)).collect(),
            group_ends: exits.iter().zip(&ended_groups).map(|(exit, ended)| span(*exit, *ended)).collect(),
            after_last: span(exits[exits.len() - 1], ended),
            spawns,
        })
    }

    /// From one CLI's exit to the next one's spawn, summed.
    fn between(&self) -> Duration {
        self.gaps.iter().sum()
    }

    /// Baton's own wall time: all but its CLIs' lifetimes.
    fn outside(&self) -> Duration {
        self.before_first + self.between() + self.after_last
    }
}

impl BatonRuns {
    /// Run the workflow in `test` as run `run_id` with `binary` (this build's if None).
    fn run(
        &mut self,
        test: Test,
        binary: Option<&Path>,
        backend: &Backend,
        run_id: &str,
        floor: Duration,
        steps: usize,
    ) -> Test {
        let (launched, started) = (jiff::Timestamp::now(), Instant::now());
        let outcome = test
            .binary(binary)
            .env("BATON_LOG", "baton::backend::jsonl_process=debug")
            .args(["run", "wf", "--run-id", run_id, "-q", "--json", "--backend", backend.name])
            .run();
        let (wall, ended) = (started.elapsed(), jiff::Timestamp::now());
        assert_eq!(outcome.status, 0, "{}", outcome.stderr);
        self.split.extend(WallSplit::read(&outcome.stderr, launched, ended));
        self.wall.push(wall);
        self.differences.push((wall.as_secs_f64() - floor.as_secs_f64()) / steps as f64);
        let report: serde_json::Value = serde_json::from_str(&outcome.stdout).expect("--json");
        let metrics = &report["metrics"];
        let cpu_ms = metrics["cpu_user_ms"].as_f64().unwrap_or(0.0) + metrics["cpu_system_ms"].as_f64().unwrap_or(0.0);
        self.cpu_per_step.push(Duration::from_secs_f64(cpu_ms / 1000.0 / steps as f64));
        outcome.test
    }

    fn print(&self, backend: &str, label: &str) {
        let (middle, lowest, highest) = spread_ms(self.differences.clone());
        println!(
            "{backend}: {label}wall overhead per markdown step (median of paired runs): {middle:.1} ms; range {lowest:.1} to {highest:.1} ms; baton CPU per step (median) {:.1} ms",
            median(self.cpu_per_step.clone()).as_secs_f64() * 1000.0
        );
        if self.split.is_empty() {
            return;
        }
        let steps = self.split[0].lifetimes.len() as f64;
        let per_step = |part: fn(&WallSplit) -> Duration| {
            spread_ms(self.split.iter().map(|split| part(split).as_secs_f64() / steps).collect())
        };
        let (middle, lowest, highest) = per_step(WallSplit::outside);
        let (before, _, _) = per_step(|split| split.before_first);
        let (between, _, _) = per_step(WallSplit::between);
        let (after, _, _) = per_step(|split| split.after_last);
        println!(
            "{backend}: {label}baton's own wall per markdown step, outside its CLIs (median of {} runs): {middle:.1} ms; range {lowest:.1} to {highest:.1} ms; of it, per step: before the first CLI {before:.1}, between CLIs {between:.1}, after the last {after:.1}",
            self.split.len()
        );
        // The range's top, split: an outlier's cause is in one part or spread over all.
        if let Some(slowest) = self.split.iter().max_by_key(|split| split.outside()) {
            let ms = |part: Duration| part.as_secs_f64() * 1000.0;
            let gaps: Vec<String> = slowest
                .gaps
                .iter()
                .zip(&slowest.group_ends)
                .map(|(gap, group)| format!("{:.1} ({:.1} to the group's end)", ms(*gap), ms(*group)))
                .collect();
            println!(
                "{backend}: {label}the slowest of those runs, per step: before the first CLI {:.1}, between CLIs {:.1} (each gap in ms: {}), after the last {:.1}",
                ms(slowest.before_first) / steps,
                ms(slowest.between()) / steps,
                gaps.join(", "),
                ms(slowest.after_last) / steps
            );
        }
        let spawns: Vec<f64> =
            self.split.iter().flat_map(|split| &split.spawns).map(|spawn| spawn.as_secs_f64()).collect();
        if spawns.iter().any(|spawn| *spawn > 0.0) {
            let (middle, lowest, highest) = spread_ms(spawns);
            println!(
                "{backend}: {label}each spawn call returned after {middle:.2} ms (median; range {lowest:.2} to {highest:.2}), counted in the CLI's lifetime as in a bare call's: the CLI runs from the call's start"
            );
        }
        let turns: Vec<String> = (0..self.split[0].lifetimes.len())
            .map(|turn| {
                let lives = self.split.iter().filter_map(|split| split.lifetimes.get(turn).copied()).collect();
                format!("{:.3}", median(lives).as_secs_f64())
            })
            .collect();
        println!("{backend}: {label}the CLI under baton, turn by turn (median): {} s", turns.join(", "));
    }
}

fn measure(backend: &Backend, runs: usize, steps: usize, versus: Option<&Path>) {
    let fake = Fake::for_backend(backend.name);
    let url = fake.url();
    let scratch = tempfile::tempdir().expect("temp dir");
    // Warm the page cache: the first call after install is much slower.
    bare_call(backend, &url, scratch.path(), None);

    let (mut fresh, mut continued, mut lingering) = (Vec::new(), Vec::new(), Vec::new());
    // Each bare turn's wall, by its place in the chain.
    let mut bare_turns: Vec<Vec<Duration>> = Vec::new();
    let (mut this_build, mut other) = (BatonRuns::default(), BatonRuns::default());
    // Which files the bare calls wrote after their end object, and how many calls did.
    let (mut written_after_end, mut calls, mut calls_writing) = (std::collections::BTreeSet::new(), 0, 0);
    for run in 0..runs {
        // START.md → S2.md → … → S<steps>.md; each state's policy has a single goto,
        // so the reply "ok" (no tag) takes the implicit transition (R5.11–R5.13).
        let mut test = Test::new().file(&format!("S{steps}.md"), "LAST STEP");
        for step in 1..steps {
            let name = if step == 1 { "START.md".to_string() } else { format!("S{step}.md") };
            let body =
                format!("---\nallowed_transitions:\n  - {{ tag: goto, target: S{} }}\n---\nSTEP {step}", step + 1);
            test = test.file(&name, &body);
        }
        // Paired: the bare calls and the Baton run of one iteration see the same machine,
        // and run in the same directory. (The test project has a `.git` marker; Claude Code
        // probes a repository it finds with about ten `git` calls a turn, 30 ms here, which
        // a bare call in a plain temporary directory never paid and Baton seemed to.)
        // The floor is the same chain of turns bare: one fresh call, then each call
        // continuing the conversation the one before left, so turn k resumes k - 1
        // turns of history in both (a floor of one continuing call repeated would
        // resume one turn each time, and miss what a longer history costs the CLI).
        let mut chain: Vec<BareCall> = Vec::with_capacity(steps);
        for _ in 0..steps {
            let previous = chain.last().map(|call| call.id.clone());
            chain.push(bare_call(backend, &url, test.root(), previous.as_deref()));
        }
        let floor = chain.iter().map(|call| call.wall).sum();
        for (turn, call) in chain.into_iter().enumerate() {
            if turn == 0 {
                fresh.push(call.wall)
            } else {
                continued.push(call.wall)
            }
            if bare_turns.len() <= turn {
                bare_turns.push(Vec::new());
            }
            bare_turns[turn].push(call.wall);
            lingering.extend(call.lingered);
            calls += 1;
            calls_writing += usize::from(!call.written_after_end.is_empty());
            written_after_end.extend(call.written_after_end);
        }

        let mut test = (backend.environment)(test, &url);
        let run_id = format!("bench{run}");
        match versus {
            None => {
                this_build.run(test, None, backend, &run_id, floor, steps);
            }
            // Alternating which goes first: the second run of a pair finds the page
            // cache and the CLI's state directory warmer.
            Some(binary) if run % 2 == 0 => {
                test = this_build.run(test, None, backend, &run_id, floor, steps);
                other.run(test, Some(binary), backend, &format!("{run_id}v"), floor, steps);
            }
            Some(binary) => {
                test = other.run(test, Some(binary), backend, &format!("{run_id}v"), floor, steps);
                this_build.run(test, None, backend, &run_id, floor, steps);
            }
        }
    }
    println!(
        "{}: bare CLI (median of {runs}): fresh {:.3} s, continuing {:.3} s; baton, {steps} prompt states: {:.3} s",
        backend.name,
        median(fresh).as_secs_f64(),
        median(continued).as_secs_f64(),
        median(this_build.wall.clone()).as_secs_f64()
    );
    let turns: Vec<String> =
        bare_turns.into_iter().map(|walls| format!("{:.3}", median(walls).as_secs_f64())).collect();
    println!("{}: the bare CLI, turn by turn (median): {} s", backend.name, turns.join(", "));
    this_build.print(backend.name, "");
    if let Some(binary) = versus {
        other.print(backend.name, &format!("{}: ", binary.display()));
        let paired = other
            .wall
            .iter()
            .zip(&this_build.wall)
            .map(|(b, a)| (b.as_secs_f64() - a.as_secs_f64()) / steps as f64)
            .collect();
        let (middle, lowest, highest) = spread_ms(paired);
        println!(
            "{}: {} minus this build, per step (median of pairs): {middle:.1} ms; range {lowest:.1} to {highest:.1} ms",
            backend.name,
            binary.display(),
        );
    }
    if !lingering.is_empty() {
        println!(
            "{}: the bare CLI exits {:.1} ms (median) after printing its `{}` object",
            backend.name,
            median(lingering).as_secs_f64() * 1000.0,
            backend.end_type
        );
        // Whether a turn could move on at that object: a CLI that still writes its
        // session after it would race the next turn resuming that session.
        let names: Vec<String> = written_after_end.iter().map(|path| path.display().to_string()).collect();
        println!(
            "{}: {calls_writing} of {calls} bare calls wrote files in the CLI's state directory after that object{}",
            backend.name,
            if names.is_empty() { String::new() } else { format!(": {}", names.join(", ")) }
        );
    }
}

fn main() {
    user_environment::drop_cargo_loader_path();
    let mut args = std::env::args().skip(1);
    let (mut runs, mut steps, mut only, mut versus) = (9usize, 5usize, None::<String>, None::<PathBuf>);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--runs" => runs = args.next().and_then(|v| v.parse().ok()).unwrap_or(runs),
            "--steps" => steps = args.next().and_then(|v| v.parse().ok()).unwrap_or(steps),
            "--backend" => only = args.next(),
            "--versus" => versus = args.next().map(PathBuf::from),
            _ => {}
        }
    }
    for backend in BACKENDS.iter().filter(|backend| only.as_deref().is_none_or(|name| name == backend.name)) {
        measure(backend, runs, steps, versus.as_deref());
    }
}
