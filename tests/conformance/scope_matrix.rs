//! The scope matrix: every tag that makes Baton read a state file, run in every
//! kind of scope, with every kind of state (issue 19, item 1; R1.1, R1.3, R1.5,
//! R1.15–R1.18, R3.4–R3.23, R3.30–R3.37, R13.9–R13.11).
//!
//! Why one table: each reader of a state (prompt text, script, entry point,
//! specifier) once knew some scope kinds and not others, and a suite that wrote
//! each case by hand tested only script states inside zips, so prompt states in
//! zips never ran and nobody saw it. Here a scenario is written once, abstractly
//! (states with a workflow, a name, the input they must receive and the tag they
//! emit), and *rendered* into each scope kind and each state kind, in the spirit
//! of ripgrep's `rgtest!`:
//!
//! - scopes: a workflow directory (`baton run wf`); one of its state files
//!   (`baton run wf/START.md`); a YAML workflow (`wf.yaml`); a flat zip
//!   (`wf.zip`); and a single-folder zip entered by `<call-workflow>` from a
//!   directory workflow (`caller/` → `wf.zip`). A cross-workflow tag goes to a
//!   second workflow of the same kind (`../lib/`, `../lib/START.md`,
//!   `../lib.yaml`, `../lib.zip`), once to its entry point and once (for
//!   `<fork-workflow>`) to a named state inside it;
//! - states: `.sh` scripts; `.md` prompts answered by the real Claude Code CLI
//!   against the fake Anthropic API; `.md` prompts answered by the fast
//!   `fixtures/fake-claude`.
//!
//! Every state leaves an effect naming itself and the input it got (a script
//! appends to a trail file; a prompt is answered only by the fake's rule for that
//! exact prompt, so an unanswered or wrong prompt shows), and every cell checks
//! the exit code, the printed result, the effects, and which agents finished with
//! which result. Cells run in parallel; all failing cells are reported together,
//! each named `scope × state kind × tag`.

use std::collections::BTreeMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::common::{RUN, archive, str_of};
use crate::claude_e2e::with_real_claude;
use crate::codex_e2e::with_real_codex;
use crate::pi_e2e::with_real_pi_env;
use crate::support::fake_anthropic::{FakeAnthropic, Rule};
use crate::support::fake_claude::{FakeClaude, Reply};
use crate::support::fake_openai::{self, FakeOpenAi};
use crate::support::{Outcome, Test};
use Flow::{Lib, Main};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scope {
    /// `baton run wf` on a directory.
    Directory,
    /// `baton run wf/START.md`: the scope is the file's directory (R1.18).
    StateFile,
    /// `baton run wf.yaml`: every state in one file (R13.4).
    Yaml,
    /// `baton run wf.zip`, a flat archive (R1.3).
    Zip,
    /// A directory workflow `caller/` whose `<call-workflow>` enters `wf.zip`, a
    /// single-folder archive (R1.3, R13.11).
    CalledZip,
}

const SCOPES: [Scope; 5] = [Scope::Directory, Scope::StateFile, Scope::Yaml, Scope::Zip, Scope::CalledZip];

impl Scope {
    fn label(self) -> &'static str {
        match self {
            Scope::Directory => "directory",
            Scope::StateFile => "state file",
            Scope::Yaml => "YAML",
            Scope::Zip => "zip",
            Scope::CalledZip => "zip called from a directory",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Script,
    RealClaude,
    FakeClaude,
    /// pi 0.73.1 against the fake Anthropic API, chosen by `--backend pi`.
    RealPi,
    /// Codex 0.169.0 against the fake Responses API, chosen by `--backend codex`.
    RealCodex,
}

const KINDS: [Kind; 5] = [Kind::Script, Kind::RealClaude, Kind::FakeClaude, Kind::RealPi, Kind::RealCodex];

impl Kind {
    fn label(self) -> &'static str {
        match self {
            Kind::Script => ".sh",
            Kind::RealClaude => ".md (real Claude CLI)",
            Kind::FakeClaude => ".md (fake-claude)",
            Kind::RealPi => ".md (real pi CLI)",
            Kind::RealCodex => ".md (real Codex CLI)",
        }
    }

    fn extension(self) -> &'static str {
        match self {
            Kind::Script => "sh",
            Kind::RealClaude | Kind::FakeClaude | Kind::RealPi | Kind::RealCodex => "md",
        }
    }
}

/// The workflows a scenario's states live in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Flow {
    /// The workflow under test (`wf`).
    Main,
    /// The second workflow cross-workflow tags go to (`lib`).
    Lib,
    /// The directory workflow that calls `wf.zip` (only in [`Scope::CalledZip`]).
    Caller,
}

impl Flow {
    fn name(self) -> &'static str {
        match self {
            Main => "wf",
            Lib => "lib",
            Flow::Caller => "caller",
        }
    }
}

/// One state of a scenario: it must receive `input` as `{{input}}` /
/// `$BATON_INPUT` and emits `emits`, where `{in}` stands for that input, `{lib}`
/// for the specifier of `lib`'s entry point and `{lib_side}` for `lib`'s `SIDE`.
#[derive(Clone, Copy, Debug)]
struct State {
    flow: Flow,
    name: &'static str,
    input: &'static str,
    emits: &'static str,
}

impl State {
    /// What the state leaves behind when it runs: `flow:NAME[input]`.
    fn effect(&self) -> String {
        format!("{}:{}[{}]", self.flow.name(), self.name, self.input)
    }
}

const fn state(flow: Flow, name: &'static str, input: &'static str, emits: &'static str) -> State {
    State { flow, name, input, emits }
}

/// A tag's scenario, written once for every scope and state kind.
struct Scenario {
    tag: &'static str,
    /// The states in the order they run (each runs once; `START` of `wf` first).
    states: &'static [State],
    /// The result `main` prints.
    result: &'static str,
    /// The result of the one worker `main` forks, if it forks.
    worker: Option<&'static str>,
    /// The tag clears the call stack (R3.37), so a caller never gets control back.
    clears_stack: bool,
}

const SCENARIOS: &[Scenario] = &[
    Scenario {
        tag: "goto",
        states: &[
            state(Main, "START", "", r#"<goto input="g">NEXT</goto>"#),
            state(Main, "NEXT", "g", "<result>goto:{in}</result>"),
        ],
        result: "goto:g",
        worker: None,
        clears_stack: false,
    },
    Scenario {
        tag: "reset",
        states: &[
            state(Main, "START", "", r#"<reset input="r">NEXT</reset>"#),
            state(Main, "NEXT", "r", "<result>reset:{in}</result>"),
        ],
        result: "reset:r",
        worker: None,
        clears_stack: false,
    },
    Scenario {
        tag: "call",
        states: &[
            state(Main, "START", "", r#"<call return="RET" input="c">CHILD</call>"#),
            state(Main, "CHILD", "c", "<result>child:{in}</result>"),
            state(Main, "RET", "child:c", "<result>call:{in}</result>"),
        ],
        result: "call:child:c",
        worker: None,
        clears_stack: false,
    },
    Scenario {
        tag: "function",
        states: &[
            state(Main, "START", "", r#"<function return="RET" input="f">CHILD</function>"#),
            state(Main, "CHILD", "f", "<result>child:{in}</result>"),
            state(Main, "RET", "child:f", "<result>function:{in}</result>"),
        ],
        result: "function:child:f",
        worker: None,
        clears_stack: false,
    },
    Scenario {
        tag: "fork",
        states: &[
            state(Main, "START", "", r#"<fork next="JOIN" input="w">WORKER</fork>"#),
            state(Main, "WORKER", "w", "<result>worker:{in}</result>"),
            state(Main, "JOIN", "", "<result>join</result>"),
        ],
        result: "join",
        worker: Some("worker:w"),
        clears_stack: false,
    },
    Scenario {
        tag: "call-workflow",
        states: &[
            state(Main, "START", "", r#"<call-workflow return="RET" input="x">{lib}</call-workflow>"#),
            state(Lib, "START", "x", "<result>lib:{in}</result>"),
            state(Main, "RET", "lib:x", "<result>call-workflow:{in}</result>"),
        ],
        result: "call-workflow:lib:x",
        worker: None,
        clears_stack: false,
    },
    Scenario {
        tag: "function-workflow",
        states: &[
            state(Main, "START", "", r#"<function-workflow return="RET" input="y">{lib}</function-workflow>"#),
            state(Lib, "START", "y", "<result>lib:{in}</result>"),
            state(Main, "RET", "lib:y", "<result>function-workflow:{in}</result>"),
        ],
        result: "function-workflow:lib:y",
        worker: None,
        clears_stack: false,
    },
    Scenario {
        tag: "fork-workflow",
        states: &[
            state(Main, "START", "", r#"<fork-workflow next="JOIN" input="v">{lib_side}</fork-workflow>"#),
            state(Lib, "SIDE", "v", "<result>side:{in}</result>"),
            state(Main, "JOIN", "", "<result>join</result>"),
        ],
        result: "join",
        worker: Some("side:v"),
        clears_stack: false,
    },
    Scenario {
        tag: "reset-workflow",
        states: &[
            state(Main, "START", "", r#"<reset-workflow input="z">{lib}</reset-workflow>"#),
            state(Lib, "START", "z", "<result>lib:{in}</result>"),
        ],
        result: "lib:z",
        worker: None,
        clears_stack: true,
    },
];

/// One cell of the matrix.
#[derive(Clone, Copy)]
struct Cell {
    scope: Scope,
    kind: Kind,
    scenario: &'static Scenario,
}

impl Cell {
    fn name(&self) -> String {
        format!("{} × {} × {}", self.scope.label(), self.kind.label(), self.scenario.tag)
    }

    /// Every state written, `caller/`'s included.
    fn states(&self) -> Vec<State> {
        let mut states = self.scenario.states.to_vec();
        if self.scope == Scope::CalledZip {
            states.insert(
                0,
                state(Flow::Caller, "START", "", r#"<call-workflow return="DONE">../wf.zip</call-workflow>"#),
            );
            states.push(state(Flow::Caller, "DONE", self.scenario.result, "<result>called:{in}</result>"));
        }
        states
    }

    /// Every state that runs: all but `caller/DONE` when the stack was cleared.
    fn states_run(&self) -> Vec<State> {
        let cleared = self.scenario.clears_stack;
        self.states()
            .into_iter()
            .filter(|state| !(cleared && state.flow == Flow::Caller && state.name == "DONE"))
            .collect()
    }

    /// What the run prints: the result of the last state `main` runs.
    fn result(&self) -> String {
        match self.scope {
            Scope::CalledZip if !self.scenario.clears_stack => format!("called:{}", self.scenario.result),
            _ => self.scenario.result.to_string(),
        }
    }

    /// The specifier of `lib`'s `state` (its entry point when `None`), written
    /// relative to `wf` (R13.10) in the form for this scope kind (R13.11).
    fn lib_specifier(&self, state: Option<&str>) -> String {
        let extension = self.kind.extension();
        match (self.scope, state) {
            (Scope::Directory, None) => "../lib/".to_string(),
            (Scope::Directory, Some(state)) => format!("../lib/{state}"),
            (Scope::StateFile, state) => format!("../lib/{}.{extension}", state.unwrap_or("START")),
            (Scope::Yaml, None) => "../lib.yaml".to_string(),
            (Scope::Yaml, Some(state)) => format!("../lib.yaml/{state}"),
            (Scope::Zip | Scope::CalledZip, None) => "../lib.zip".to_string(),
            (Scope::Zip | Scope::CalledZip, Some(state)) => format!("../lib.zip/{state}"),
        }
    }

    /// The tag `state` emits, with its input in place of `{in}` (`input` is the
    /// literal for a prompt's scripted reply, `${BATON_INPUT-}` for a script).
    fn tag(&self, state: &State, input: &str) -> String {
        state
            .emits
            .replace("{lib_side}", &self.lib_specifier(Some("SIDE")))
            .replace("{lib}", &self.lib_specifier(None))
            .replace("{in}", input)
    }

    /// The file text of `state`: a prompt that names the state and shows its
    /// input, or a script that records the same and prints its tag.
    fn body(&self, state: &State, trail: &str) -> String {
        match self.kind {
            Kind::Script => format!(
                "echo \"{}:{}[${{BATON_INPUT-}}]\" >> '{trail}'\ncat <<BATON_EOF\n{}\nBATON_EOF\n",
                state.flow.name(),
                state.name,
                self.tag(state, "${BATON_INPUT-}")
            ),
            Kind::RealClaude | Kind::FakeClaude | Kind::RealPi | Kind::RealCodex => {
                format!("STATE {}:{} INPUT[{{{{input}}}}]", state.flow.name(), state.name)
            }
        }
    }

    /// The prompt a state must receive, as the fakes match it: with no input the
    /// placeholder stays as written (R6.3).
    fn prompt(state: &State) -> String {
        let input = if state.input.is_empty() { "{{input}}" } else { state.input };
        format!("STATE {}:{} INPUT[{input}]", state.flow.name(), state.name)
    }

    /// Write the cell's workflows into `test` and give the `baton run` argument.
    fn render(&self, mut test: Test) -> (Test, String) {
        let trail = test.root().join("trail").to_string_lossy().into_owned();
        let extension = self.kind.extension();
        let mut flows: BTreeMap<&'static str, Vec<(String, String)>> = BTreeMap::new();
        let mut kinds: BTreeMap<&'static str, Flow> = BTreeMap::new();
        for state in self.states() {
            let flow = state.flow.name();
            kinds.insert(flow, state.flow);
            let states = flows.entry(flow).or_default();
            if !states.iter().any(|(name, _)| name == state.name) {
                states.push((state.name.to_string(), self.body(&state, &trail)));
            }
        }
        for (flow, states) in &flows {
            let as_directory = matches!(self.scope, Scope::Directory | Scope::StateFile) || kinds[flow] == Flow::Caller;
            if as_directory {
                for (name, body) in states {
                    test = test.write(&format!("{flow}/{name}.{extension}"), body);
                }
            } else if self.scope == Scope::Yaml {
                test = test.write(&format!("{flow}.yaml"), &self.yaml(states));
            } else {
                // A flat archive for a zip run directly, a single-folder one for a called zip.
                let prefix = if self.scope == Scope::Zip { String::new() } else { format!("{flow}/") };
                let entries: Vec<(String, &str)> =
                    states.iter().map(|(name, body)| (format!("{prefix}{name}.{extension}"), body.as_str())).collect();
                let entries: Vec<(&str, &str)> = entries.iter().map(|(name, body)| (name.as_str(), *body)).collect();
                std::fs::write(test.root().join(format!("{flow}.zip")), archive(&entries)).expect("write zip");
            }
        }
        let argument = match self.scope {
            Scope::Directory => "wf".to_string(),
            Scope::StateFile => format!("wf/START.{extension}"),
            Scope::Yaml => "wf.yaml".to_string(),
            Scope::Zip => "wf.zip".to_string(),
            Scope::CalledZip => "caller".to_string(),
        };
        (test, argument)
    }

    /// A YAML workflow holding `states` (R13.4–R13.7).
    fn yaml(&self, states: &[(String, String)]) -> String {
        let mut text = String::from("states:\n");
        for (name, body) in states {
            text.push_str(&format!("  {name}:\n"));
            match self.kind {
                Kind::Script => {
                    text.push_str("    sh: |\n");
                    for line in body.lines() {
                        text.push_str(&format!("      {line}\n"));
                    }
                }
                Kind::RealClaude | Kind::FakeClaude | Kind::RealPi | Kind::RealCodex => {
                    text.push_str(&format!("    prompt: \"{body}\"\n"))
                }
            }
        }
        text
    }

    /// What the model answers each state of the cell: the prompt it receives, the
    /// state's effect (the answering rule's name) and the reply holding its tag.
    fn answers(&self) -> impl Iterator<Item = (String, String, String)> + '_ {
        self.states().into_iter().map(|state| (Self::prompt(&state), state.effect(), self.tag(&state, state.input)))
    }

    /// The effects a fake API's requests show: the name of the rule that answered
    /// each, in order, or the prompt no rule matched.
    fn effects(requests: impl Iterator<Item = (Option<String>, String)>) -> Vec<String> {
        requests.map(|(rule, prompt)| rule.unwrap_or_else(|| format!("unmatched prompt {prompt:?}"))).collect()
    }

    /// Run the cell; the list of what went wrong (empty when it passed).
    fn run(&self) -> Vec<String> {
        let (test, argument) = self.render(Test::new());
        let args = ["run", argument.as_str(), "--run-id", RUN];
        match self.kind {
            Kind::Script => {
                let outcome = test.args(args).run();
                let trail = std::fs::read_to_string(outcome.root().join("trail")).unwrap_or_default();
                self.check(&outcome, trail.lines().map(str::to_string).collect())
            }
            Kind::RealClaude | Kind::RealPi => {
                let rules = self
                    .answers()
                    .map(|(prompt, name, text)| Rule::when_prompt(&prompt).named(&name).reply_text(&text));
                let fake = FakeAnthropic::start(rules.collect());
                let outcome = match self.kind {
                    Kind::RealPi => {
                        with_real_pi_env(test, &fake).args(args.iter().chain(&["--backend", "pi"]).copied())
                    }
                    _ => with_real_claude(test, &fake).args(args),
                }
                .run();
                let requests = fake.requests().into_iter().map(|request| (request.rule, request.view.prompt));
                self.check(&outcome, Self::effects(requests))
            }
            Kind::RealCodex => {
                let rules = self
                    .answers()
                    .map(|(prompt, name, text)| fake_openai::Rule::when_prompt(&prompt).named(&name).reply_text(&text));
                let fake = FakeOpenAi::start(rules.collect());
                let outcome =
                    with_real_codex(test, &fake).args(args.iter().chain(&["--backend", "codex"]).copied()).run();
                let requests = fake.requests().into_iter().map(|request| (request.rule, request.view.prompt));
                self.check(&outcome, Self::effects(requests))
            }
            Kind::FakeClaude => {
                let test = test.with_fake_claude();
                let fake = FakeClaude::at(test.root());
                let states = self.states();
                for (index, state) in states.iter().enumerate() {
                    fake.rule(&format!("{index:02}"), &Self::prompt(state), Reply::text(&self.tag(state, state.input)));
                }
                let outcome = test.args(args).run();
                let effects = FakeClaude::at(outcome.root())
                    .calls()
                    .into_iter()
                    .map(|call| match call.rule.and_then(|rule| rule.parse::<usize>().ok()) {
                        Some(index) => states[index].effect(),
                        None => format!("unmatched prompt {:?}", call.prompt),
                    })
                    .collect();
                self.check(&outcome, effects)
            }
        }
    }

    /// The exit code, the printed result, every state's effect, and the agents
    /// that finished with their results.
    fn check(&self, outcome: &Outcome, mut effects: Vec<String>) -> Vec<String> {
        let mut problems = Vec::new();
        if outcome.status != 0 {
            problems.push(format!("exit code {}, expected 0", outcome.status));
        }
        let result = format!("{}\n", self.result());
        if outcome.stdout != result {
            problems.push(format!("printed {:?}, expected {result:?}", outcome.stdout));
        }
        let mut expected: Vec<String> = self.states_run().iter().map(State::effect).collect();
        expected.sort();
        effects.sort();
        if effects != expected {
            problems.push(format!("states that ran (flow:STATE[input]): {effects:?}, expected {expected:?}"));
        }
        let finished: BTreeMap<String, String> = outcome
            .events_of(RUN, "AgentTerminated")
            .iter()
            .map(|event| (str_of(&event["agent_id"]), str_of(&event["result"])))
            .collect();
        let mut expected = BTreeMap::from([("main".to_string(), self.result())]);
        if let Some(worker) = self.scenario.worker {
            let worker_id = outcome
                .events_of(RUN, "AgentSpawned")
                .iter()
                .find(|event| event["parent_agent_id"] == "main")
                .map_or_else(|| "(main's worker, never spawned)".to_string(), |event| str_of(&event["new_agent_id"]));
            expected.insert(worker_id, worker.to_string());
        }
        if finished != expected {
            problems.push(format!("agents finished with {finished:?}, expected {expected:?}"));
        }
        if !problems.is_empty() {
            let stderr = outcome.stderr_normalized();
            let tail: Vec<&str> = stderr.lines().rev().take(12).collect::<Vec<_>>().into_iter().rev().collect();
            problems.push(format!("stderr (last lines):\n      {}", tail.join("\n      ")));
        }
        problems
    }
}

/// Run `cells` on a few threads: each failing cell's name and problems, and the
/// time the cells of each state kind took in all.
fn run_all(cells: &[Cell]) -> (Vec<String>, BTreeMap<&'static str, Duration>) {
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    let times = Mutex::new(BTreeMap::new());
    let threads = std::thread::available_parallelism().map_or(2, |count| count.get()).max(2);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                while let Some(cell) = cells.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let started = Instant::now();
                    let problems = catch_unwind(AssertUnwindSafe(|| cell.run()))
                        .unwrap_or_else(|panic| vec![format!("panicked: {}", panic_text(&panic))]);
                    *times.lock().expect("times").entry(cell.kind.label()).or_default() += started.elapsed();
                    if !problems.is_empty() {
                        let report = format!("{}:\n    {}", cell.name(), problems.join("\n    "));
                        failures.lock().expect("failures").push((cell.name(), report));
                    }
                }
            });
        }
    });
    let mut failures = failures.into_inner().expect("failures");
    failures.sort();
    let failures = failures.into_iter().map(|(_, report)| report).collect();
    (failures, times.into_inner().expect("times"))
}

fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|text| text.to_string()))
        .unwrap_or_else(|| "(no message)".to_string())
}

#[test]
fn r1_1_every_scope_kind_runs_every_state_kind_through_every_tag_that_reads_a_state() {
    let cells: Vec<Cell> = SCOPES
        .iter()
        .flat_map(|&scope| {
            KINDS.iter().flat_map(move |&kind| SCENARIOS.iter().map(move |scenario| Cell { scope, kind, scenario }))
        })
        .collect();
    let started = Instant::now();
    let (failures, times) = run_all(&cells);
    let times: Vec<String> = times.iter().map(|(kind, time)| format!("{kind} {:.1} s", time.as_secs_f64())).collect();
    eprintln!(
        "scope matrix: {} scopes × {} state kinds × {} tags = {} cells in {:.1} s (cell time by kind: {})",
        SCOPES.len(),
        KINDS.len(),
        SCENARIOS.len(),
        cells.len(),
        started.elapsed().as_secs_f64(),
        times.join(", ")
    );
    assert!(failures.is_empty(), "{} of {} cells failed:\n\n{}", failures.len(), cells.len(), failures.join("\n\n"));
}
