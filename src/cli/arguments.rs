//! Command-line arguments (clap). Only parsing lives here; each command has its own file.

use std::path::PathBuf;

use clap::builder::PossibleValue;
use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::model::on_ask::OnAsk;

/// Shown under `baton --help`: raymond's form, and where Baton differs on purpose.
const RAYMOND_HELP: &str = "\
raymond's command line works too (`ray` may be a link to `baton`): `baton WORKFLOW [FLAGS]` runs it,
and --resume ID, --list, --recover, --status ID, --init-config, --workflow-id, --on-ask, --name
and -v/--verbose are accepted. Where Baton differs on purpose (docs/decisions.md): a paused run
exits 3, not 0; finished runs are kept under .baton/runs (`baton list`); stdout carries only the
run's result.";

#[derive(Debug, Parser)]
#[command(
    name = "baton",
    version,
    about = "Run AI-agent workflows written as plain files",
    max_term_width = 100,
    after_help = RAYMOND_HELP
)]
pub(crate) struct Arguments {
    #[command(flatten)]
    pub(crate) global: GlobalArguments,

    #[command(subcommand)]
    pub(crate) command: Command,
}

/// The flags every subcommand takes.
#[derive(Debug, Args)]
pub(crate) struct GlobalArguments {
    /// Use this `.baton` directory instead of discovering one.
    #[arg(long, global = true, env = "BATON_DIR", value_name = "DIR", hide_env_values = true)]
    pub(crate) baton_dir: Option<PathBuf>,
}

impl Arguments {
    /// Parse `args` (program name first) as [`Arguments`], with clap's errors.
    ///
    /// Building the whole command line, every subcommand with every flag, was 40% of
    /// the instructions of a one-state `baton run` (about 800,000, callgrind). So the
    /// commands that start runs, where start-up is what a user waits for, build only
    /// their own subcommand; the parse is the same, as is every error it reports. Help
    /// needs the whole tree (the subcommands' descriptions), so `-h` and `--help` get
    /// it, like every other command.
    pub(crate) fn parse_from(args: Vec<std::ffi::OsString>) -> Result<Arguments, clap::Error> {
        use clap::{CommandFactory, FromArgMatches};
        let mut command = match args.get(1).and_then(|name| name.to_str()) {
            Some(name) if !asks_for_help(&args) => match name {
                "run" => only(RunArguments::augment_args(clap::Command::new("run"))),
                "resume" => only(ResumeArguments::augment_args(clap::Command::new("resume"))),
                "rerun" => only(RerunArguments::augment_args(clap::Command::new("rerun"))),
                _ => Arguments::command(),
            },
            _ => Arguments::command(),
        };
        let mut matches = command.try_get_matches_from_mut(args)?;
        Arguments::from_arg_matches_mut(&mut matches).map_err(|error| error.format(&mut command))
    }
}

/// A whole number from `least` to `most` for a count or a step number. clap's own
/// parser for unsigned numbers says only "invalid digit found in string" of `-1`,
/// and without `allow_negative_numbers` clap takes `-1` for an unknown flag.
fn whole_number<T: TryFrom<u64>>(least: u64, most: u64) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync {
    move |text| {
        let expected = match least {
            0 => "expected a whole number".to_string(),
            _ => format!("expected a whole number of at least {least}"),
        };
        let not_expected = || format!("{expected}, found `{text}`");
        let number = text.trim().parse::<u64>().map_err(|_| not_expected())?;
        if number < least {
            return Err(not_expected());
        }
        let too_large = || format!("expected a whole number of at most {most}, found `{text}`");
        if number > most {
            return Err(too_large());
        }
        T::try_from(number).map_err(|_| too_large())
    }
}

/// The top level of the command line with `subcommand` as its only subcommand.
fn only(subcommand: clap::Command) -> clap::Command {
    GlobalArguments::augment_args(clap::Command::new("baton").max_term_width(100))
        .subcommand_required(true)
        .subcommand(subcommand)
}

/// Whether `args` may ask for help: `--help`, or `-h` alone or among short flags.
fn asks_for_help(args: &[std::ffi::OsString]) -> bool {
    args.iter()
        .skip(1)
        .filter_map(|arg| arg.to_str())
        .any(|arg| arg == "--help" || (arg.starts_with('-') && !arg.starts_with("--") && arg.contains('h')))
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Start a run of a workflow: a directory (or one state file in it), a YAML or zip workflow,
    /// or a zip at an http(s) URL whose name pins its SHA-256.
    Run(RunArguments),
    /// Continue a run that stopped (crash, error, pause or interrupt).
    Resume(ResumeArguments),
    /// Answer a run's `<ask>` and continue it (`baton resume RUN --input TEXT`).
    Answer(AnswerArguments),
    /// Start a new run from a step of an earlier one: its history up to that step is taken over
    /// (nothing runs or is paid for again), every later step runs afresh, and the earlier run is
    /// left as it was (Claude sessions are forked, never continued).
    Rerun(RerunArguments),
    /// List the runs in this project's `.baton` directory.
    List(ListArguments),
    /// Delete finished (completed or failed) runs; live, paused, interrupted and asking runs are
    /// never touched. Without options, runs older than 30 days go.
    Gc(GcArguments),
    /// Show a run's agents, their states and stacks, and its totals.
    Status(StatusArguments),
    /// What a run spent where: per state visits, time, tokens, cost, retries, reminders and
    /// tool calls; per agent steps, cost and result; the slowest and most expensive steps.
    Report {
        run_id: String,
        /// Print one JSON document (docs/inspecting.md).
        #[arg(long)]
        json: bool,
    },
    /// Show a run's trace as the console showed it while it ran, from any terminal, for
    /// finished and live runs; `--follow` keeps showing a run another baton drives.
    #[command(after_help = LOGS_HELP)]
    Logs(LogsArguments),
    /// Cut a damaged journal back to its intact entries (after a backup) so the run can resume.
    Repair(RepairArguments),
    /// Create a `.baton/config.toml` listing every setting (commented out).
    InitConfig,
    /// Serve the HTTP API and the web run inspector on this machine (docs/serve.md): start,
    /// watch, answer, cancel, resume and rerun runs from a browser. Loopback and a token by default.
    Serve(ServeArguments),
    /// Serve Baton's step service for runs started with --engine restate=URL (docs/distributed.md):
    /// HTTP/2 cleartext for a Restate server; --register adds it to the server.
    Worker(WorkerArguments),
    /// Create a workflow directory from a template (script-only ones run without Claude).
    New {
        /// The directory to create.
        name: String,
        #[arg(long, value_enum, default_value_t)]
        template: crate::cli::new_command::Template,
    },
    /// Convert a workflow directory to one YAML file, or a YAML workflow to a directory.
    Convert {
        /// The workflow directory or YAML file.
        path: String,
        #[arg(long, value_enum)]
        to: crate::cli::convert_command::Form,
        /// Where to write (default: beside PATH, as `PATH.yaml` or `PATH` without `.yaml`).
        #[arg(long, value_name = "PATH")]
        output: Option<String>,
        /// Replace what is already there.
        #[arg(long)]
        force: bool,
    },
    /// Check a workflow (directory, YAML or zip) for mistakes before running it: unknown targets,
    /// missing returns, unreachable states, bad frontmatter (docs/lint.md lists every check).
    Lint {
        /// The workflow directory, YAML or zip file, or a state file in a workflow.
        workflow: String,
        /// Print one JSON document (docs/lint.md) instead of lines.
        #[arg(long)]
        json: bool,
        /// The least severe finding to show; errors decide the exit code whatever is shown.
        #[arg(long, value_enum, default_value_t)]
        level: crate::cli::lint_command::Level,
    },
    /// Draw a workflow's states and transitions: Mermaid (default), Graphviz DOT, or one
    /// self-contained HTML page (an SVG graph; click a state to read it) that works offline.
    Diagram {
        /// The workflow directory, YAML or zip file, or a state file in a workflow.
        workflow: String,
        /// mermaid: a `flowchart TD` for Markdown and GitHub; dot: for Graphviz (`dot -Tsvg`);
        /// html: an interactive page.
        #[arg(long, value_enum, default_value_t)]
        format: crate::cli::diagram_command::Format,
        /// Write the diagram to FILE instead of stdout.
        #[arg(long, short, value_name = "FILE")]
        output: Option<PathBuf>,
        /// Draw what run RUN did over the graph: how often each state started, where each
        /// live agent is now.
        #[arg(long, value_name = "RUN")]
        run: Option<String>,
    },
    /// Run workflows' tests offline: scripted model replies and script stubs instead of Claude
    /// and real scripts, checked against the expected outcome, result, path, steps and cost
    /// (docs/testing.md). Prints one PASS/FAIL line per test, then `N passed, M failed`; exits 1
    /// if any test failed.
    Test {
        /// Workflows to test (a directory with a `tests/` folder, a YAML or zip workflow with a
        /// `NAME.tests/` folder beside it) or single test files. Default: every workflow directly
        /// under `.` and `./states/` that has tests.
        workflows: Vec<String>,
        /// Print one JSON document (docs/testing.md) instead of lines.
        #[arg(long)]
        json: bool,
        /// Show each test's run on stderr as `baton run` shows it (states, tools, transitions).
        #[arg(long)]
        console: bool,
        /// Write a test that replays finished run RUN offline (its model replies, script outputs
        /// as stubs, path, result and cost) instead of running tests; into the workflow's
        /// tests/recorded-RUN.yaml unless --output says where.
        #[arg(long, value_name = "RUN", conflicts_with_all = ["workflows", "json", "console"])]
        record: Option<String>,
        /// With --record: the test file to write.
        #[arg(long, value_name = "FILE", requires = "record")]
        output: Option<PathBuf>,
        /// With --record: let the replay run the scripts for real instead of stubbing them.
        #[arg(long, requires = "record")]
        keep_scripts: bool,
    },
    /// Print the JSON Schema of a prompt's frontmatter, a YAML workflow or a test file, for editors.
    Schema {
        #[arg(value_enum)]
        kind: crate::cli::schema_command::SchemaKind,
    },
    /// Print a shell completion script: `baton completion bash > /etc/bash_completion.d/baton`.
    Completion {
        /// bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
    },
}

#[derive(Debug, Args)]
pub(crate) struct ListArguments {
    /// Print a JSON array (docs/inspecting.md) instead of a table.
    #[arg(long)]
    pub(crate) json: bool,
    /// Only runs with this status: running, completed, failed, paused, interrupted or asking.
    #[arg(long, value_name = "STATUS", value_parser = crate::model::run_state::RunStatus::parse)]
    pub(crate) status: Option<crate::model::run_state::RunStatus>,
    /// Only runs created within this long (`90m`, `2h`, `7d`).
    #[arg(long, value_name = "AGE")]
    pub(crate) since: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct GcArguments {
    /// Delete finished runs last updated longer ago than this (`12h`, `30d`; `0s`: all of
    /// them) [default: 30d unless --keep is given].
    #[arg(long, value_name = "AGE")]
    pub(crate) older_than: Option<String>,
    /// Keep the newest N finished runs, however old.
    #[arg(long, allow_negative_numbers = true, value_name = "N", value_parser = whole_number::<usize>(0, u64::MAX))]
    pub(crate) keep: Option<usize>,
    /// Delete the runs whose files cannot be read (`unreadable` in `baton list`: a damaged
    /// state file or journal), and only those, whatever their age.
    #[arg(long, conflicts_with_all = ["older_than", "keep"])]
    pub(crate) unreadable: bool,
    /// Say what would be deleted, and delete nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,
}

/// Shown under `baton logs --help`.
const LOGS_HELP: &str = "\
Examples:
  baton logs RUN                    the whole run, one line per thing that happened
  baton logs RUN --follow           keep showing a run that another `baton` drives, until it ends
  baton logs RUN --agent main_worker1 --state REVIEW
  baton logs RUN --step 3           step 3 of agent main in full: each agent counts its own steps
                                    from 1, one per `[AGENT] > STATE` line of `baton logs RUN`
                                    (a retry, `(attempt 2)`, is the same step again)
  baton logs RUN --raw | jq .       the trace lines themselves (docs/trace-format.md)

Run-wide lines (started, done, paused, failed) are shown whatever the filters. Colours mark the
agents when stdout is a terminal (not with NO_COLOR). Reading a run never changes it.";

#[derive(Debug, Args)]
pub(crate) struct LogsArguments {
    /// The run to show (`baton list` shows them).
    #[arg(allow_hyphen_values = true)]
    pub(crate) run_id: String,
    /// Keep showing new lines while another `baton` drives the run; stop when the run
    /// completes, fails, pauses, asks or is interrupted, or when no baton drives it any more.
    #[arg(long, short, conflicts_with = "step")]
    pub(crate) follow: bool,
    /// Only what agent A did (`main`, or a worker such as `main_worker1`).
    #[arg(long, value_name = "A")]
    pub(crate) agent: Option<String>,
    /// Only what happened in state S (`REVIEW` or `REVIEW.md`).
    #[arg(long, value_name = "S", conflicts_with = "step")]
    pub(crate) state: Option<String>,
    /// Show step N in full: the prompt of every turn, Claude's turn as a transcript (text,
    /// tool calls with their inputs and results, cost and tokens), a script's stdout,
    /// stderr and exit code, the tags found and the transition. Steps are counted per
    /// agent from 1; --agent picks the agent (default: main).
    #[arg(long, allow_negative_numbers = true, value_name = "N", value_parser = whole_number::<u64>(0, u64::MAX))]
    pub(crate) step: Option<u64>,
    /// Print the trace's JSON lines (those the filters keep) unchanged.
    #[arg(long)]
    pub(crate) raw: bool,
    /// What agent A runs next, exactly as it would be sent: the state, the session it
    /// continues or forks and the rendered prompt, or the script's command line and
    /// environment (for an agent stopped at a breakpoint).
    #[arg(long, value_name = "A", conflicts_with_all = ["follow", "step", "raw", "agent", "state"])]
    pub(crate) next: Option<String>,
}

/// Options shared by `run`, `resume` and `rerun`.
#[derive(Debug, Args)]
pub(crate) struct ExecutionArguments {
    /// Inactivity timeout per state in seconds (0 disables it) [default: 600].
    #[arg(long, value_name = "SECS", allow_negative_numbers = true)]
    pub(crate) timeout: Option<f64>,
    /// Print one JSON object describing the run on stdout instead of the result.
    #[arg(long)]
    pub(crate) json: bool,
    /// Show only errors and the final line on stderr.
    #[arg(long, short)]
    pub(crate) quiet: bool,
    /// Do not write the trace files (events.jsonl, per-step output, transitions.log).
    #[arg(long)]
    pub(crate) no_debug: bool,
    /// Send the run's trace to this OpenTelemetry collector (its OTLP base URL, such
    /// as http://127.0.0.1:4318 or https://api.honeycomb.io; port 4317 with
    /// OTEL_EXPORTER_OTLP_PROTOCOL=grpc); OTEL_EXPORTER_OTLP_ENDPOINT does the same
    /// (docs/observability.md).
    #[arg(long, value_name = "URL")]
    pub(crate) otel: Option<String>,
    /// Attempts per state for retryable errors.
    #[arg(long, allow_negative_numbers = true, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub(crate) attempts: u32,
    /// Run at most N agents' steps at once; further agents wait in a queue.
    #[arg(long, allow_negative_numbers = true, value_name = "N", value_parser = whole_number::<u32>(1, u32::MAX.into()))]
    pub(crate) max_agents: Option<u32>,
    /// Pause the run once N steps have completed (over all resumes).
    #[arg(long, allow_negative_numbers = true, value_name = "N", value_parser = whole_number::<u64>(1, u64::MAX))]
    pub(crate) max_steps: Option<u64>,
    /// Pause the run once it has run this long, e.g. 90m, 2h, 1h30m (over all resumes).
    #[arg(long, value_name = "DURATION")]
    pub(crate) time_limit: Option<String>,
    /// Seconds running steps get to finish after Ctrl-C or a bound, before they are terminated.
    #[arg(long, value_name = "SECS", default_value_t = 30.0, allow_negative_numbers = true)]
    pub(crate) grace: f64,
    /// The agent CLI of prompt states whose frontmatter and workflow name none:
    /// claude (the default), pi or codex.
    #[arg(long, value_name = "BACKEND")]
    pub(crate) backend: Option<String>,
    /// Model for prompt states on the run's backend without a `model` in their
    /// frontmatter (Claude: opus, sonnet or haiku).
    #[arg(long, value_name = "MODEL")]
    pub(crate) model: Option<String>,
    /// Effort for prompt states on the run's backend without an `effort` (Claude:
    /// low, medium, high, xhigh or max).
    #[arg(long, value_name = "EFFORT")]
    pub(crate) effort: Option<String>,
    /// Let Claude act without asking (default true); `=false` uses `--permission-mode acceptEdits`.
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_missing_value = "true", require_equals = true)]
    pub(crate) dangerously_skip_permissions: Option<bool>,
    /// The Claude Code CLI to run (else BATON_CLAUDE_BIN, config claude_bin, then `claude` on PATH).
    #[arg(long, value_name = "PATH")]
    pub(crate) claude_bin: Option<PathBuf>,
    /// The pi CLI to run (else BATON_PI_BIN, config pi_bin, then `pi` on PATH).
    #[arg(long, value_name = "PATH")]
    pub(crate) pi_bin: Option<PathBuf>,
    /// The Codex CLI to run (else BATON_CODEX_BIN, config codex_bin, then `codex` on PATH).
    #[arg(long, value_name = "PATH")]
    pub(crate) codex_bin: Option<PathBuf>,
    /// On a usage limit, pause and exit (code 3) instead of waiting for the reset.
    #[arg(long)]
    pub(crate) no_wait: bool,
    /// Log Baton's own diagnostics in detail on stderr (as BATON_LOG=debug does).
    #[arg(long, short)]
    pub(crate) verbose: bool,
    /// Label the terminal's title with NAME while the run goes on (raymond's --name).
    #[arg(long, value_name = "NAME")]
    pub(crate) name: Option<String>,
    /// What an `<ask>` does: reject (the default: the agent pauses), pause (the run
    /// stops and exits 2 with the question on stdout), prompt (ask at this terminal
    /// while the run goes on; as pause without a terminal), or json (the run goes on;
    /// answers and control lines arrive as JSON lines on stdin, for a supervisor such as
    /// `baton serve`).
    #[arg(long, value_name = "MODE", value_enum)]
    pub(crate) on_ask: Option<OnAsk>,
    /// Where the steps execute: local (the default: in this process) or
    /// restate=INGRESS_URL (on `baton worker`s behind a Restate server, docs/distributed.md).
    /// A resume keeps the run's engine.
    #[arg(long, value_name = "ENGINE")]
    pub(crate) engine: Option<String>,
    /// With --engine restate: shared (the default: workers see this machine's paths, one
    /// machine or NFS) or shipped (each step's files travel with it: workflows, the working
    /// directory through git, the task folder, the agents' sessions; docs/distributed-files.md).
    #[arg(long, value_name = "MODE")]
    pub(crate) files: Option<String>,
    /// With --files shipped: the git remote both this machine and the workers reach
    /// [default: the working directory's `origin`].
    #[arg(long, value_name = "URL")]
    pub(crate) repo: Option<String>,
    /// Stop each agent before it runs one of these states (comma-separated, named as
    /// tags name them); the others go on. On resume: replaces the run's list.
    #[arg(long, value_name = "STATE[,STATE…]", value_delimiter = ',')]
    pub(crate) break_before: Vec<String>,
    /// Stop each agent after it ran one of these states, before its next one. On
    /// resume: replaces the run's list.
    #[arg(long, value_name = "STATE[,STATE…]", value_delimiter = ',')]
    pub(crate) break_after: Vec<String>,
    /// Stop every agent after each of its steps (`baton resume` takes one more).
    #[arg(long)]
    pub(crate) step: bool,
    /// Resume without the run's breakpoints (and without --step), except those given again.
    #[arg(long)]
    pub(crate) clear_breakpoints: bool,
}

#[derive(Debug, Args)]
pub(crate) struct RunArguments {
    /// A workflow directory or a state file inside one, a YAML workflow (`flow.yaml`,
    /// `flow.yaml/STATE`), a zip (`pack.zip`, `pack.zip/STATE`), or `https://…/name-<sha256>.zip`.
    pub(crate) workflow: String,
    /// Input for the first state (`{{input}}` / `$BATON_INPUT`); `--input=-x` for text that
    /// starts with `-`.
    #[arg(long, value_name = "TEXT")]
    pub(crate) input: Option<String>,
    /// Read the input from a file (`-`: stdin), for text of any size or first character.
    #[arg(long, value_name = "PATH", conflicts_with = "input")]
    pub(crate) input_file: Option<PathBuf>,
    /// Name the run instead of generating an id.
    #[arg(long, value_name = "ID", alias = "workflow-id")]
    pub(crate) run_id: Option<String>,
    /// Stop the run when the model costs (Claude, pi, Codex) exceed this many US dollars (0 = unlimited).
    #[arg(long, value_name = "USD", allow_negative_numbers = true)]
    pub(crate) budget: Option<f64>,
    /// Start from a fork of the latest Claude session of this directory (`claude -c --fork-session`).
    #[arg(long)]
    pub(crate) continue_session: bool,
    /// Run even if `baton lint` finds errors in the workflow (by default such a run is refused
    /// before any step, with the errors).
    #[arg(long)]
    pub(crate) no_lint: bool,
    #[command(flatten)]
    pub(crate) execution: ExecutionArguments,
}

#[derive(Debug, Args)]
pub(crate) struct ResumeArguments {
    /// A run id may start with `-` (`--run-id=-x`); `baton serve` resumes it as given.
    #[arg(allow_hyphen_values = true)]
    pub(crate) run_id: String,
    /// The answer for an agent waiting at an `<ask>` (the first one, unless --ask);
    /// `--input=-x` for text that starts with `-`.
    #[arg(long, value_name = "TEXT", group = "answer")]
    pub(crate) input: Option<String>,
    /// Read the answer from a file (`-`: stdin), for text of any size or first character.
    #[arg(long, value_name = "PATH", group = "answer")]
    pub(crate) input_file: Option<PathBuf>,
    /// Which ask --input answers (its id, from `baton status`).
    #[arg(long, value_name = "ASK_ID", requires = "answer")]
    pub(crate) ask: Option<String>,
    /// Edit this paused agent (stopped at a breakpoint) before it goes on: --input
    /// replaces its pending input, --goto and --prompt-file change what it runs next.
    #[arg(long, value_name = "AGENT", conflicts_with = "ask")]
    pub(crate) agent: Option<String>,
    /// With --agent: run this state next instead (resolved in the agent's workflow).
    #[arg(long, value_name = "STATE", requires = "agent")]
    pub(crate) goto: Option<String>,
    /// With --agent: send this file's text as the next prompt, once, instead of the
    /// state's rendered prompt.
    #[arg(long, value_name = "PATH", requires = "agent")]
    pub(crate) prompt_file: Option<PathBuf>,
    /// Raise (or set) the run's budget in US dollars.
    #[arg(long, value_name = "USD", allow_negative_numbers = true)]
    pub(crate) budget: Option<f64>,
    #[command(flatten)]
    pub(crate) execution: ExecutionArguments,
}

#[derive(Debug, Args)]
pub(crate) struct RerunArguments {
    /// The run to start from (`baton list` shows them); it is only read.
    #[arg(value_name = "RUN", allow_hyphen_values = true)]
    pub(crate) run: String,
    /// The step to continue after: its journal commit, the `commit` of its `TransitionOccurred`
    /// event (`baton status RUN --steps` lists the steps a rerun can start from).
    #[arg(long, allow_negative_numbers = true, value_name = "STEP", value_parser = whole_number::<u64>(0, u64::MAX))]
    pub(crate) from: u64,
    /// Input for the agent that took STEP, replacing what STEP passed on to its next state
    /// (`{{input}}` / `$BATON_INPUT`); the answer, when STEP was an `<ask>`. `--input=-x` for
    /// text that starts with `-`.
    #[arg(long, value_name = "TEXT")]
    pub(crate) input: Option<String>,
    /// Read that input from a file (`-`: stdin), for text of any size or first character.
    #[arg(long, value_name = "PATH", conflicts_with = "input")]
    pub(crate) input_file: Option<PathBuf>,
    /// Name the new run instead of generating an id.
    #[arg(long, value_name = "ID")]
    pub(crate) run_id: Option<String>,
    /// Set the new run's budget in US dollars (the cost of the steps taken over counts).
    #[arg(long, value_name = "USD", allow_negative_numbers = true)]
    pub(crate) budget: Option<f64>,
    #[command(flatten)]
    pub(crate) execution: ExecutionArguments,
}

#[derive(Debug, Args)]
pub(crate) struct AnswerArguments {
    #[arg(allow_hyphen_values = true)]
    pub(crate) run_id: String,
    /// The answer (after `--` when it starts with `-`: `baton answer RUN -- -y`).
    #[arg(required_unless_present = "input_file")]
    pub(crate) text: Option<String>,
    /// Read the answer from a file (`-`: stdin), for text of any size or first character.
    #[arg(long, value_name = "PATH", conflicts_with = "text")]
    pub(crate) input_file: Option<PathBuf>,
    /// Which ask to answer (its id); the first one waiting by default.
    #[arg(long, value_name = "ASK_ID")]
    pub(crate) ask: Option<String>,
    #[command(flatten)]
    pub(crate) execution: ExecutionArguments,
}

impl AnswerArguments {
    /// The same as a resume with `--input`.
    pub(crate) fn into_resume(self) -> ResumeArguments {
        ResumeArguments {
            run_id: self.run_id,
            input: self.text,
            input_file: self.input_file,
            ask: self.ask,
            agent: None,
            goto: None,
            prompt_file: None,
            budget: None,
            execution: self.execution,
        }
    }
}

#[derive(Debug, Args)]
pub(crate) struct StatusArguments {
    #[arg(allow_hyphen_values = true)]
    pub(crate) run_id: String,
    /// Print the run's whole state (snapshot plus journal) as JSON.
    #[arg(long)]
    pub(crate) json: bool,
    /// List the steps `baton rerun RUN --from STEP` can start from, one per line.
    #[arg(long, conflicts_with = "json")]
    pub(crate) steps: bool,
}

#[derive(Debug, Args)]
pub(crate) struct RepairArguments {
    /// The run whose journal to repair (`baton list` shows them).
    #[arg(allow_hyphen_values = true)]
    pub(crate) run_id: String,
}

/// `--on-ask`'s values are the modes' persisted names.
impl ValueEnum for OnAsk {
    fn value_variants<'a>() -> &'a [OnAsk] {
        &OnAsk::ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.as_str()))
    }
}

#[derive(Debug, Args)]
pub(crate) struct ServeArguments {
    /// Where to listen: IP:PORT (port 0 picks a free one). Only loopback unless --allow-remote.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:7420")]
    pub(crate) bind: std::net::SocketAddr,
    /// Accept a --bind address other machines can reach (the token still guards every request).
    #[arg(long)]
    pub(crate) allow_remote: bool,
    /// A directory whose children are workflows (repeatable; default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub(crate) root: Vec<PathBuf>,
    /// Print the page's URL with the token (and open it when there is a desktop).
    #[arg(long)]
    pub(crate) open: bool,
    /// Replace the token before serving; clients must use the new one.
    #[arg(long)]
    pub(crate) rotate_token: bool,
}

#[derive(Debug, Args)]
pub(crate) struct WorkerArguments {
    /// Where to listen for the Restate server: IP:PORT (HTTP/2 cleartext; port 0 picks a free one).
    #[arg(long, value_name = "ADDR")]
    pub(crate) listen: std::net::SocketAddr,
    /// Register this worker with the Restate server's admin API, e.g. http://127.0.0.1:9070.
    #[arg(long, value_name = "ADMIN_URL")]
    pub(crate) register: Option<String>,
    /// The URL the server reaches this worker at (a balancer in front of several workers)
    /// [default: http://LISTEN].
    #[arg(long, value_name = "URL", requires = "register")]
    pub(crate) advertise: Option<String>,
    /// This worker's name in the runs' traces [default: HOST:PID].
    #[arg(long, value_name = "NAME")]
    pub(crate) name: Option<String>,
    /// Run at most N steps at once; more wait [default: 4 per core].
    #[arg(long, allow_negative_numbers = true, value_name = "N", value_parser = whole_number::<u32>(1, u32::MAX.into()))]
    pub(crate) max_concurrent_steps: Option<u32>,
    /// The longest a step may run before Restate gives up on it (its inactivity and abort
    /// timeouts for this service), e.g. 30m, 2h.
    #[arg(long, value_name = "DURATION", default_value = "2h")]
    pub(crate) longest_step: String,
    /// Seconds running steps get to finish after SIGTERM or SIGINT, before they are killed.
    #[arg(long, allow_negative_numbers = true, value_name = "SECS", default_value_t = 30.0)]
    pub(crate) grace: f64,
    /// Where steps run with --files shipped keep their files: workflows, checkouts, task
    /// folders (docs/distributed-files.md) [default: ~/.cache/baton/worker].
    #[arg(long, value_name = "DIR")]
    pub(crate) dir: Option<PathBuf>,
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    fn words(line: &str) -> Vec<std::ffi::OsString> {
        line.split(' ').map(std::ffi::OsString::from).collect()
    }

    /// Both the whole command line's result and the quick one's, as text: the
    /// parsed arguments, or the error exactly as it is printed.
    fn both(line: &str) -> (String, String) {
        let show = |parsed: Result<Arguments, clap::Error>| match parsed {
            Ok(arguments) => format!("{arguments:?}"),
            Err(error) => format!("{:?}: {}", error.kind(), error.render()),
        };
        (show(Arguments::try_parse_from(words(line))), show(Arguments::parse_from(words(line))))
    }

    #[test]
    fn the_quick_parse_of_run_resume_and_rerun_is_the_whole_command_lines_parse() {
        for line in [
            "baton run flow",
            "baton run flow/START.md --input hi --quiet --no-debug --budget 2.5 --max-agents 3",
            "baton run flow --baton-dir /p/.baton --on-ask json --break-before A,B --step",
            "baton run flow --input=-x --workflow-id my_run --model opus",
            "baton resume r1 --agent main --goto B",
            "baton resume r1 --clear-breakpoints --baton-dir d",
            "baton rerun r1 --from 3 --input again",
        ] {
            let (whole, quick) = both(line);
            assert!(whole.starts_with("Arguments {"), "`{line}` parses: {whole}");
            assert_eq!(quick, whole, "`{line}`");
        }
        // Mistakes: each is reported the same way.
        for line in [
            "baton run",
            "baton run flow --bogus",
            "baton run flow --budget many",
            "baton run flow --on-ask sometimes",
            "baton run flow extra",
            "baton run flow --version",
            "baton resume",
            "baton rerun r1 --form 3",
            "baton run flow --baton-dir",
        ] {
            let (whole, quick) = both(line);
            assert!(!whole.starts_with("Arguments {"), "`{line}` is refused: {whole}");
            assert_eq!(quick, whole, "`{line}`");
        }
    }

    #[test]
    fn help_is_asked_of_the_whole_command_line() {
        for line in ["baton run --help", "baton run flow -h", "baton resume -qh r1", "baton run flow --help"] {
            assert!(asks_for_help(&words(line)), "`{line}`");
            let (whole, quick) = both(line);
            assert_eq!(quick, whole, "`{line}`");
        }
        assert!(!asks_for_help(&words("baton run flow --input hello")));
        assert!(!asks_for_help(&words("baton run flow --on-ask json")));
    }
}
