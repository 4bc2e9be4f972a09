//! The persisted state of one run: `.baton/runs/<run_id>/state.json`.
//!
//! This is a consistent snapshot taken after every step, so `baton resume` can
//! continue from it (R8.3, schema documented in `docs/state-format.md`). Newer
//! fields must have serde defaults so that files written by older versions stay
//! readable; `version` says which writer produced the file.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::ids::{AgentId, RunId, SessionId, StateName};
use crate::model::agent::{Agent, AgentStatus};
use crate::model::bound::Bound;
use crate::model::on_ask::OnAsk;

/// The schema version this build writes. Version 1 had no journal: every step
/// rewrote `state.json`. Version 2 adds `journal_commit`, `elapsed_ms`,
/// `paused_by`, the bounds in `launch_params` and `queued` agents. Version 3 adds
/// `rerun_of` and `borrowed_sessions` (`baton rerun`): a Baton that knew only 2
/// would drop them and continue the original run's Claude conversations, so it
/// must refuse the file rather than read it. Version 4 adds joins (`docs/join.md`):
/// the `joining` status and an agent's `forked`, `join` and `join_results`; a
/// Baton that knew only 3 would drop the results a joined agent is about to read.
/// Version 5 adds worktree isolation (`docs/isolation.md`): an agent's and a
/// terminated agent's `worktree`, and `diff_stat`; a Baton that knew only 4 would run
/// a worker in a directory it never creates and leave its changes uncommitted.
/// Version 6 adds step-by-step execution (issue 24): `launch_params.breakpoints`,
/// the `breakpoint` pause reason, an agent's `breakpoint_passed` and
/// `prompt_override`; a Baton that knew only 5 would send the prompt its author
/// replaced, and stop again at the breakpoint it was continued from.
pub(crate) const STATE_VERSION: u32 = 6;

/// This build, as `written_by` records it.
pub(crate) const BATON_VERSION: &str = env!("CARGO_PKG_VERSION");

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum RunStatus {
    /// Steps are running, or the process died while they were.
    Running,
    /// Every agent terminated.
    Completed,
    /// A fatal step error stopped the run; resuming re-runs the failed step.
    Failed,
    /// Every remaining agent is paused; resuming un-pauses them.
    Paused,
    /// Stopped by SIGINT/SIGTERM after a clean save.
    Interrupted,
    /// An agent waits for a person's answer (`--on-ask pause`, R11.4).
    Asking,
}

impl RunStatus {
    pub(crate) const ALL: [RunStatus; 6] = [
        RunStatus::Running,
        RunStatus::Completed,
        RunStatus::Failed,
        RunStatus::Paused,
        RunStatus::Interrupted,
        RunStatus::Asking,
    ];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Completed => "completed",
            RunStatus::Failed => "failed",
            RunStatus::Paused => "paused",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Asking => "asking",
        }
    }

    /// The status named `text`, or what the names are.
    pub(crate) fn parse(text: &str) -> Result<RunStatus, String> {
        RunStatus::ALL.into_iter().find(|status| status.as_str() == text).ok_or_else(|| {
            let names: Vec<&str> = RunStatus::ALL.iter().map(|status| status.as_str()).collect();
            format!("expected one of {}", names.join(", "))
        })
    }
}

impl fmt::Display for RunStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An agent that emitted `<result>` with an empty stack (R3.16), kept so the run's
/// outcome can be reported after the fact (A8, A9).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct TerminatedAgent {
    pub(crate) id: AgentId,
    pub(crate) result: String,
    /// Its worktree, when it had one (`docs/isolation.md`): for the join and `baton gc`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) worktree: Option<crate::model::agent::Worktree>,
    /// What its branch changed (`git diff --stat BASE BRANCH`, after Baton committed
    /// the worktree), or why that could not be done.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) diff_stat: Option<String>,
}

/// Settings given at launch that a resume reuses unless overridden (R8.12, A10).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct LaunchParams {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) timeout_seconds: Option<f64>,
    /// At most this many agents run a step at once; the others wait, `queued`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) max_agents: Option<u32>,
    /// The run pauses once this many steps have completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) max_steps: Option<u64>,
    /// The run pauses once it has been running this long (over all invocations).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) time_limit_ms: Option<u64>,
    /// Claude settings given at launch (R8.12).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) effort: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) dangerously_skip_permissions: Option<bool>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) no_wait: bool,
    /// `--backend`, kept for resumes; absent is config's, else Claude.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) backend: Option<crate::ids::BackendName>,
    /// `--on-ask`, kept for `<ask>` and for resumes (raymond keeps it too); absent is `reject`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) on_ask: Option<OnAsk>,
    /// The manifest's `environment`, expanded at launch: every process of the run gets it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) environment: BTreeMap<String, String>,
    /// Where the run's steps execute, as `--engine` wrote it (`restate=URL`);
    /// absent is the local engine. A resume keeps it (`distributed::engine`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) engine: Option<String>,
    /// `--files shipped` (`docs/distributed-files.md`); absent is `shared`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) files: Option<String>,
    /// `--repo`: the git remote of `--files shipped`; absent is the working directory's `origin`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) repo: Option<String>,
    /// Where agents stop for the run's author (`--break-before`, `--break-after`,
    /// `--step`); a resume keeps them unless it sets or clears them.
    #[serde(default, skip_serializing_if = "crate::model::breakpoints::Breakpoints::is_empty")]
    pub(crate) breakpoints: crate::model::breakpoints::Breakpoints,
}

/// Where a run made by `baton rerun` came from: its history up to and including
/// journal commit `commit` is run `run_id`'s.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct RerunOf {
    pub(crate) run_id: RunId,
    pub(crate) commit: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct RunState {
    pub(crate) version: u32,
    /// The Baton that last wrote this run (`0.1.0`), so an older one can say which
    /// version a newer format needs. Absent in files from before it was recorded.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub(crate) written_by: String,
    pub(crate) run_id: RunId,
    /// The launch scope, absolute.
    pub(crate) scope_dir: PathBuf,
    /// The URL a remote workflow was fetched from (R1.2, R13.14); `scope_dir` is its copy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) scope_url: Option<String>,
    pub(crate) initial_state: StateName,
    /// The directory `baton run` was started in; the main agent's first cwd.
    pub(crate) launch_cwd: PathBuf,
    pub(crate) status: RunStatus,
    pub(crate) created_at: String,
    pub(crate) updated_at: String,
    #[serde(default)]
    pub(crate) total_cost_usd: f64,
    /// 0 means unlimited (R9.1).
    #[serde(default)]
    pub(crate) budget_usd: f64,
    /// Steps whose transition has been applied.
    #[serde(default)]
    pub(crate) steps_completed: u64,
    #[serde(default)]
    pub(crate) agents: Vec<Agent>,
    #[serde(default)]
    pub(crate) terminated: Vec<TerminatedAgent>,
    #[serde(default)]
    pub(crate) fork_counters: BTreeMap<AgentId, u64>,
    #[serde(default)]
    pub(crate) launch_params: LaunchParams,
    /// The fatal error that stopped the run, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<String>,
    /// The bound that paused the whole run, if one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) paused_by: Option<Bound>,
    /// Time spent running, over every invocation (the `--time-limit` clock).
    #[serde(default)]
    pub(crate) elapsed_ms: u64,
    /// The last journal entry this snapshot includes (`journal.rs`).
    #[serde(default)]
    pub(crate) journal_commit: u64,
    /// The last completed step and its commit: a crash right after the commit may
    /// have kept it out of the trace, so a resume re-publishes it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) last_step: Option<(u64, crate::store::journal::StepSummary)>,
    /// Set by `baton rerun`: the run and commit this run's history was taken from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) rerun_of: Option<RerunOf>,
    /// Claude sessions this run took over from the run it reruns: they are that run's
    /// conversations, so a turn that would continue one forks it instead
    /// (`--resume S --fork-session`) and the original never changes.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub(crate) borrowed_sessions: BTreeSet<SessionId>,
}

/// What a new run starts from: where, with which first agent, under which
/// parameters. Everything else of its state starts empty.
pub(crate) struct NewRun {
    pub(crate) run_id: RunId,
    pub(crate) scope_dir: PathBuf,
    pub(crate) scope_url: Option<String>,
    pub(crate) initial_state: StateName,
    pub(crate) launch_cwd: PathBuf,
    pub(crate) budget_usd: f64,
    pub(crate) main: Agent,
    pub(crate) launch_params: LaunchParams,
}

impl RunState {
    /// The state of a run about to take its first step (`baton run`, `baton test`).
    pub(crate) fn new(run: NewRun) -> RunState {
        let now = jiff::Timestamp::now().to_string();
        RunState {
            version: STATE_VERSION,
            written_by: BATON_VERSION.to_string(),
            run_id: run.run_id,
            scope_dir: run.scope_dir,
            scope_url: run.scope_url,
            initial_state: run.initial_state,
            launch_cwd: run.launch_cwd,
            status: RunStatus::Running,
            created_at: now.clone(),
            updated_at: now,
            total_cost_usd: 0.0,
            budget_usd: run.budget_usd,
            steps_completed: 0,
            agents: vec![run.main],
            terminated: Vec::new(),
            fork_counters: BTreeMap::new(),
            launch_params: run.launch_params,
            error: None,
            paused_by: None,
            elapsed_ms: 0,
            journal_commit: 0,
            last_step: None,
            rerun_of: None,
            borrowed_sessions: Default::default(),
        }
    }

    /// The result `main` terminated with, if it has.
    pub(crate) fn main_result(&self) -> Option<&str> {
        self.terminated.iter().find(|agent| agent.id.is_main()).map(|agent| agent.result.as_str())
    }

    /// The agents waiting for an answer, the earliest ask first (R11.5 answers the
    /// first; `docs/decisions.md` says why not in `agents` order).
    pub(crate) fn asking_agents(&self) -> Vec<&Agent> {
        let mut asking: Vec<&Agent> = self.agents.iter().filter(|agent| agent.status == AgentStatus::Asking).collect();
        asking.sort_by(|a, b| {
            let asked = |agent: &Agent| agent.ask.as_ref().map(|ask| ask.asked_at.clone()).unwrap_or_default();
            asked(a).cmp(&asked(b)).then_with(|| a.id.cmp(&b.id))
        });
        asking
    }

    pub(crate) fn paused_agents(&self) -> usize {
        self.agents.iter().filter(|agent| agent.status == AgentStatus::Paused).count()
    }
}
