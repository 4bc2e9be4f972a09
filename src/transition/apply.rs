//! Transition handlers: pure functions from (agent, transition) to the agents that
//! exist afterwards (spec §3, decisions A3–A6).
//!
//! Nothing here does I/O or emits events. The workflow loop applies the result,
//! publishes what happened and persists it, which keeps every rule of §3 testable
//! as a plain function call.

use std::collections::BTreeMap;

use crate::ids::{AgentId, StateName};
use std::path::PathBuf;

use crate::model::agent::{Agent, AgentStatus, Frame, PendingAsk, PendingJoin, Worktree};
use crate::text::state_name::abbreviation;
use crate::transition::cd::resolve_cd;
use crate::transition::task_folder::TaskFolders;
use crate::transition::{ForkSpec, Isolation, JoinSpec, TaskMode, Transition};

/// What remains after a transition.
#[derive(Debug, PartialEq)]
pub(crate) struct Applied {
    /// The agent after the transition; `None` when a `<result>` with an empty stack terminated it.
    pub(crate) agent: Option<Agent>,
    /// Workers created by `<fork>` (in output order).
    pub(crate) workers: Vec<Agent>,
    /// The payload an agent terminated with (R3.16).
    pub(crate) terminated_with: Option<String>,
}

/// Run-level data the handlers need: where task folders go, and the persisted fork
/// counters (one per parent, shared by every fork of that parent: R3.22, A6).
pub(crate) struct TransitionEnv<'a> {
    pub(crate) task_folders: &'a TaskFolders,
    pub(crate) fork_counters: &'a mut BTreeMap<AgentId, u64>,
    /// The time, for an ask's id and `asked_at` (R3.25).
    pub(crate) now: jiff::Timestamp,
    /// For forks with `isolation="worktree"`: the parent's repository, looked up by
    /// the loop before the transition is applied (`docs/isolation.md`).
    pub(crate) isolation: Option<&'a IsolationBase>,
}

/// Where the worktrees of one fork's isolated workers come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct IsolationBase {
    /// The top of the parent's repository.
    pub(crate) repo: PathBuf,
    /// The parent's `HEAD`.
    pub(crate) head: String,
    /// The parent's directory relative to `repo` (its worker starts at the same
    /// place in its worktree).
    pub(crate) offset: PathBuf,
    /// `.baton/worktrees/<run_id>`.
    pub(crate) worktrees: PathBuf,
    pub(crate) run_id: String,
}

/// Apply `transition` to a copy of `agent` (R3.1: transient fields are cleared first,
/// so `{{input}}` and fork attributes last for exactly one state).
pub(crate) fn apply_transition(agent: &Agent, transition: &Transition, env: &mut TransitionEnv<'_>) -> Applied {
    let mut next = agent.clone();
    next.pending_result = None;
    next.fork_session_id = None;
    next.fork_attributes.clear();
    next.pending_ask_id = None;
    next.join_results = None;
    let mut workers = Vec::new();

    match transition {
        Transition::Goto { target, input } => {
            next.current_state = target.clone();
            next.pending_result = input.clone();
        }
        Transition::Reset { target, cd, input, new_task } => {
            start_over(&mut next, target, cd.as_deref(), input, *new_task, env);
        }
        Transition::Call { target, return_state, input } => {
            next.stack.push(frame_for(&next, return_state));
            next.fork_session_id = next.session_id.clone();
            next.current_state = target.clone();
            next.pending_result = input.clone();
        }
        Transition::Function { target, return_state, input } => {
            next.stack.push(frame_for(&next, return_state));
            next.session_id = None;
            next.current_state = target.clone();
            next.pending_result = input.clone();
        }
        Transition::Fork { worker, next: continuation } => {
            workers.push(spawn_worker(&mut next, worker, env));
            if let Some(continuation) = continuation {
                next.current_state = continuation.clone();
            }
        }
        Transition::MultiFork { workers: specs, continuation, join } => {
            for spec in specs {
                workers.push(spawn_worker(&mut next, spec, env));
            }
            match join {
                Some(join) => start_join(&mut next, join, env),
                None => next.current_state = continuation.clone(),
            }
        }
        Transition::Join(join) => start_join(&mut next, join, env),
        Transition::CallWorkflow { callee, return_state, input, fork_session, cd } => {
            next.stack.push(frame_for(&next, return_state));
            next.nesting_depth += 1;
            if *fork_session {
                next.fork_session_id = next.session_id.clone();
            }
            next.session_id = None;
            if let Some(cd) = cd {
                next.cwd = resolve_cd(cd, &next.cwd);
            }
            next.scope_dir = callee.scope_dir.clone();
            next.scope_url = callee.url.clone();
            next.current_state = callee.state.clone();
            next.pending_result = input.clone();
        }
        Transition::ResetWorkflow { entry, cd, input, new_task } => {
            next.stack.clear();
            next.nesting_depth = 0;
            next.scope_dir = entry.scope_dir.clone();
            next.scope_url = entry.url.clone();
            start_over(&mut next, &entry.state, cd.as_deref(), input, *new_task, env);
        }
        Transition::Ask { next: answer_to, prompt, timeout, timeout_next, files } => {
            // R3.25: the state, session and stack stay; the agent waits.
            next.status = AgentStatus::Asking;
            next.ask = Some(PendingAsk {
                id: format!("ask_{}_{}", next.id, env.now.as_nanosecond()),
                prompt: prompt.clone(),
                next: answer_to.clone(),
                timeout: timeout.clone(),
                timeout_next: timeout_next.clone(),
                asked_at: env.now.to_string(),
                files: files.clone(),
            });
        }
        Transition::Result { payload } => match next.stack.pop() {
            None => {
                return Applied { agent: None, workers, terminated_with: Some(payload.clone()) };
            }
            Some(frame) => {
                next.session_id = frame.session;
                next.session_backend = frame.session_backend;
                next.session_message = frame.session_message;
                next.current_state = frame.state;
                next.pending_result = Some(payload.clone());
                next.scope_dir = frame.scope_dir;
                // R3.17: the URL is restored always, even to none.
                next.scope_url = frame.scope_url;
                next.cwd = frame.cwd;
                next.nesting_depth = frame.nesting_depth;
                next.task_folder = frame.task_folder;
            }
        },
    }
    Applied { agent: Some(next), workers, terminated_with: None }
}

/// `<join>` (`docs/join.md`): the agent stops at its state, `joining`, waiting for
/// the workers it forked since its last join; the workflow loop continues it at
/// `join.next` once they have ended (or the timeout passed). The state, session
/// and stack stay, as for an ask.
fn start_join(next: &mut Agent, join: &JoinSpec, env: &TransitionEnv<'_>) {
    let deadline = join.timeout.and_then(|timeout| {
        let timeout = jiff::SignedDuration::try_from(timeout).ok()?;
        env.now.checked_add(timeout).ok().map(|deadline| deadline.to_string())
    });
    next.status = AgentStatus::Joining;
    next.join = Some(PendingJoin {
        next: join.next.clone(),
        workers: std::mem::take(&mut next.forked),
        since: env.now.to_string(),
        deadline,
    });
}

/// `<reset>` and `<reset-workflow>` alike (R3.6–R3.9, R3.37): a fresh session at
/// `state`, in the directory `cd` names, in a new task folder when asked.
fn start_over(
    next: &mut Agent,
    state: &StateName,
    cd: Option<&str>,
    input: &Option<String>,
    new_task: bool,
    env: &TransitionEnv<'_>,
) {
    next.current_state = state.clone();
    next.session_id = None;
    if let Some(cd) = cd {
        next.cwd = resolve_cd(cd, &next.cwd);
    }
    if new_task {
        next.task_count += 1;
        next.task_folder = env.task_folders.folder_for(&next.id, next.task_count);
    }
    next.pending_result = input.clone();
}

/// The deepest cross-workflow nesting a `<call-workflow>`/`<function-workflow>` may
/// start from (R13.13).
pub(crate) const MAX_NESTING_DEPTH: u32 = 4;

/// Why `transition` cannot be applied to `agent`, which then pauses instead
/// (R3.30: a call into a fifth nested workflow).
pub(crate) fn refusal(agent: &Agent, transition: &Transition) -> Option<String> {
    match transition {
        Transition::CallWorkflow { .. } if agent.nesting_depth >= MAX_NESTING_DEPTH => Some(format!(
            "{}: maximum cross-workflow nesting depth ({MAX_NESTING_DEPTH}) exceeded",
            transition.kind_name()
        )),
        _ => None,
    }
}

/// The return frame for `<call>`/`<function>` (R3.11). The session recorded is the
/// one that includes the calling turn (R2.6), because the loop updates the session
/// before applying the transition.
fn frame_for(caller: &Agent, return_state: &StateName) -> Frame {
    Frame {
        session: caller.session_id.clone(),
        session_backend: caller.session_backend,
        session_message: caller.session_message.clone(),
        state: return_state.clone(),
        scope_dir: caller.scope_dir.clone(),
        scope_url: caller.scope_url.clone(),
        cwd: caller.cwd.clone(),
        nesting_depth: caller.nesting_depth,
        task_folder: caller.task_folder.clone(),
    }
}

/// A new agent for one fork (R3.21–R3.22, with A3: no `cd` means the parent's cwd),
/// or for one `<fork-workflow>` (R3.35: the workflow's scope and abbreviation, the
/// parent's depth, no attributes; A6: the same counter as plain forks).
/// The worker's id is recorded on the parent, for its next `<join>`.
fn spawn_worker(parent: &mut Agent, spec: &ForkSpec, env: &mut TransitionEnv<'_>) -> Agent {
    let counter = env.fork_counters.entry(parent.id.clone()).or_insert(0);
    *counter += 1;
    let abbrev = spec.workflow.as_ref().map_or_else(|| abbreviation(&spec.target), |entry| entry.abbrev.clone());
    let id = AgentId::from(format!("{}_{abbrev}{counter}", parent.id));
    let task_folder = match spec.task {
        TaskMode::Inherit => parent.task_folder.clone(),
        TaskMode::New => env.task_folders.folder_for(&id, 0),
    };
    let worktree = match (&spec.isolation, env.isolation) {
        (Isolation::Worktree, Some(base)) => Some(Worktree {
            repo: base.repo.clone(),
            path: base.worktrees.join(&*id),
            branch: format!("baton/{}/{id}", base.run_id),
            base: base.head.clone(),
        }),
        _ => None,
    };
    let start = match (&worktree, env.isolation) {
        (Some(worktree), Some(base)) => worktree.path.join(&base.offset),
        _ => parent.cwd.clone(),
    };
    let cwd = spec.cd.as_deref().map_or_else(|| start.clone(), |cd| resolve_cd(cd, &start));
    let (scope_dir, scope_url, nesting_depth) = match &spec.workflow {
        Some(entry) => (entry.scope_dir.clone(), entry.url.clone(), parent.nesting_depth),
        None => (parent.scope_dir.clone(), parent.scope_url.clone(), 0),
    };
    parent.forked.push(id.clone());
    Agent {
        pending_result: spec.input.clone(),
        fork_attributes: spec.attributes.clone(),
        nesting_depth,
        scope_url,
        worktree,
        ..Agent::new(id, spec.target.clone(), scope_dir, cwd, task_folder)
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;

    fn main_agent() -> Agent {
        let mut agent = Agent::main(
            "START.sh".into(),
            PathBuf::from("/wf"),
            PathBuf::from("/work"),
            PathBuf::from("/b/tasks/r/main"),
        );
        agent.session_id = Some("s1".into());
        agent.pending_result = Some("old input".into());
        agent
    }

    fn apply(agent: &Agent, transition: Transition, counters: &mut BTreeMap<AgentId, u64>) -> Applied {
        let folders = TaskFolders::new(Path::new("/b"), "r");
        let now = jiff::Timestamp::UNIX_EPOCH;
        apply_transition(
            agent,
            &transition,
            &mut TransitionEnv { task_folders: &folders, fork_counters: counters, now, isolation: None },
        )
    }

    fn fork_of(target: &str) -> ForkSpec {
        ForkSpec {
            target: target.into(),
            cd: None,
            input: None,
            task: TaskMode::New,
            isolation: Isolation::Shared,
            attributes: BTreeMap::new(),
            workflow: None,
        }
    }

    #[test]
    fn r3_4_goto_keeps_session_and_sets_input() {
        let applied = apply(
            &main_agent(),
            Transition::Goto { target: "B.sh".into(), input: Some("x".into()) },
            &mut BTreeMap::new(),
        );
        let agent = applied.agent.unwrap();
        assert_eq!(agent.current_state, "B.sh");
        assert_eq!(agent.session_id.as_deref(), Some("s1"));
        assert_eq!(agent.pending_result.as_deref(), Some("x"));
    }

    #[test]
    fn r3_1_input_lasts_one_state() {
        let applied =
            apply(&main_agent(), Transition::Goto { target: "B.sh".into(), input: None }, &mut BTreeMap::new());
        assert_eq!(applied.agent.unwrap().pending_result, None);
    }

    #[test]
    fn r3_6_reset_clears_session_keeps_stack_and_applies_cd() {
        let mut agent = main_agent();
        agent.stack.push(frame_for(&agent, &"RET.sh".into()));
        let applied = apply(
            &agent,
            Transition::Reset { target: "X.sh".into(), cd: Some("sub".into()), input: None, new_task: true },
            &mut BTreeMap::new(),
        );
        let agent = applied.agent.unwrap();
        assert_eq!(agent.session_id, None);
        assert_eq!(agent.stack.len(), 1);
        assert_eq!(agent.cwd, PathBuf::from("/work/sub"));
        assert_eq!(agent.task_count, 1);
        assert_eq!(agent.task_folder, PathBuf::from("/b/tasks/r/main_task1"));
    }

    #[test]
    fn r3_12_call_pushes_frame_and_forks_session() {
        let applied = apply(
            &main_agent(),
            Transition::Call { target: "C.sh".into(), return_state: "R.sh".into(), input: Some("in".into()) },
            &mut BTreeMap::new(),
        );
        let agent = applied.agent.unwrap();
        assert_eq!(agent.stack.len(), 1);
        assert_eq!(agent.stack[0].session.as_deref(), Some("s1"));
        assert_eq!(agent.stack[0].state, "R.sh");
        assert_eq!(agent.fork_session_id.as_deref(), Some("s1"));
        assert_eq!(agent.session_id.as_deref(), Some("s1"));
        assert_eq!(agent.current_state, "C.sh");
    }

    #[test]
    fn r3_14_function_starts_fresh() {
        let applied = apply(
            &main_agent(),
            Transition::Function { target: "F.sh".into(), return_state: "R.sh".into(), input: None },
            &mut BTreeMap::new(),
        );
        let agent = applied.agent.unwrap();
        assert_eq!(agent.session_id, None);
        assert_eq!(agent.fork_session_id, None);
        assert_eq!(agent.stack[0].session.as_deref(), Some("s1"));
    }

    #[test]
    fn r3_16_result_with_empty_stack_terminates() {
        let applied = apply(&main_agent(), Transition::Result { payload: " done ".into() }, &mut BTreeMap::new());
        assert_eq!(applied.agent, None);
        assert_eq!(applied.terminated_with.as_deref(), Some(" done "));
    }

    #[test]
    fn r3_17_and_a4_result_pops_and_restores_caller_cwd() {
        let mut counters = BTreeMap::new();
        let called = apply(
            &main_agent(),
            Transition::Function { target: "F.sh".into(), return_state: "R.sh".into(), input: None },
            &mut counters,
        )
        .agent
        .unwrap();
        let moved = apply(
            &called,
            Transition::Reset { target: "G.sh".into(), cd: Some("/elsewhere".into()), input: None, new_task: false },
            &mut counters,
        )
        .agent
        .unwrap();
        let back = apply(&moved, Transition::Result { payload: String::new() }, &mut counters).agent.unwrap();
        assert_eq!(back.current_state, "R.sh");
        assert_eq!(back.cwd, PathBuf::from("/work"));
        assert_eq!(back.session_id.as_deref(), Some("s1"));
        assert_eq!(back.pending_result.as_deref(), Some(""));
        assert!(back.stack.is_empty());
    }

    #[test]
    fn r3_22_fork_ids_share_one_counter_per_parent() {
        let mut counters = BTreeMap::new();
        let mut ids = Vec::new();
        for target in ["WORKER.sh", "WORKER.sh", "ANALYZE.sh"] {
            let applied = apply(
                &main_agent(),
                Transition::Fork { worker: fork_of(target), next: Some("N.sh".into()) },
                &mut counters,
            );
            ids.push(applied.workers[0].id.clone());
        }
        assert_eq!(ids, ["main_worker1", "main_worker2", "main_analyz3"]);
        assert_eq!(counters, BTreeMap::from([(AgentId::main(), 3)]));
    }

    #[test]
    fn r3_21_and_a3_worker_inherits_cwd_and_gets_attributes() {
        let mut spec = fork_of("W.sh");
        spec.attributes.insert("item".into(), "a".into());
        spec.input = Some("i".into());
        let applied =
            apply(&main_agent(), Transition::Fork { worker: spec, next: Some("N.sh".into()) }, &mut BTreeMap::new());
        let worker = &applied.workers[0];
        assert_eq!(worker.cwd, PathBuf::from("/work"));
        assert_eq!(worker.session_id, None);
        assert_eq!(worker.pending_result.as_deref(), Some("i"));
        assert_eq!(worker.fork_attributes.get("item").map(String::as_str), Some("a"));
        assert_eq!(worker.task_folder, PathBuf::from("/b/tasks/r/main_w1"));
        let parent = applied.agent.unwrap();
        assert_eq!(parent.current_state, "N.sh");
        assert_eq!(parent.session_id.as_deref(), Some("s1"));
    }

    #[test]
    fn r3_21_worker_cd_is_relative_to_parent_and_task_inherit_shares_folder() {
        let mut spec = fork_of("W.sh");
        spec.cd = Some("w".into());
        spec.task = TaskMode::Inherit;
        let applied =
            apply(&main_agent(), Transition::Fork { worker: spec, next: Some("N.sh".into()) }, &mut BTreeMap::new());
        assert_eq!(applied.workers[0].cwd, PathBuf::from("/work/w"));
        assert_eq!(applied.workers[0].task_folder, PathBuf::from("/b/tasks/r/main"));
    }

    #[test]
    fn r3_45_multi_fork_creates_workers_in_order() {
        let applied = apply(
            &main_agent(),
            Transition::MultiFork {
                workers: vec![fork_of("A.sh"), fork_of("B.sh")],
                continuation: "N.sh".into(),
                join: None,
            },
            &mut BTreeMap::new(),
        );
        let ids: Vec<_> = applied.workers.iter().map(|w| &*w.id).collect();
        assert_eq!(ids, ["main_a1", "main_b2"]);
        assert_eq!(applied.agent.unwrap().current_state, "N.sh");
    }

    #[test]
    fn a_join_waits_for_the_workers_forked_since_the_last_join_in_fork_order() {
        let mut counters = BTreeMap::new();
        let forked = apply(
            &main_agent(),
            Transition::Fork { worker: fork_of("W.sh"), next: Some("N.sh".into()) },
            &mut counters,
        );
        let parent = forked.agent.unwrap();
        assert_eq!(parent.forked, ["main_w1"]);
        let join = JoinSpec { next: "AGG.sh".into(), timeout: Some(std::time::Duration::from_secs(60)) };
        let applied = apply(
            &parent,
            Transition::MultiFork {
                workers: vec![fork_of("A.sh"), fork_of("B.sh")],
                continuation: "AGG.sh".into(),
                join: Some(join),
            },
            &mut counters,
        );
        let joining = applied.agent.unwrap();
        assert_eq!(joining.status, AgentStatus::Joining);
        assert_eq!(joining.current_state, "N.sh", "it stays at the state that joined");
        assert_eq!(joining.session_id.as_deref(), Some("s1"));
        assert!(joining.forked.is_empty(), "the next join starts afresh");
        let pending = joining.join.unwrap();
        assert_eq!(pending.next, "AGG.sh");
        assert_eq!(pending.workers, ["main_w1", "main_a2", "main_b3"]);
        assert_eq!(pending.since, "1970-01-01T00:00:00Z");
        assert_eq!(pending.deadline.as_deref(), Some("1970-01-01T00:01:00Z"));
    }

    #[test]
    fn the_join_results_last_one_state() {
        let mut agent = main_agent();
        agent.join_results = Some(Vec::new());
        let next = apply(&agent, Transition::Goto { target: "B.sh".into(), input: None }, &mut BTreeMap::new());
        assert_eq!(next.agent.unwrap().join_results, None);
    }

    fn lib_entry() -> crate::workflow::specifier::WorkflowEntry {
        crate::workflow::specifier::WorkflowEntry {
            scope_dir: PathBuf::from("/lib"),
            state: "START.md".into(),
            abbrev: "lib".into(),
            url: None,
        }
    }

    #[test]
    fn r3_31_call_workflow_enters_the_callee_and_r3_32_result_restores_the_caller() {
        let call = Transition::CallWorkflow {
            callee: lib_entry(),
            return_state: "RET.md".into(),
            input: Some("in".into()),
            fork_session: true,
            cd: None,
        };
        let inside = apply(&main_agent(), call, &mut BTreeMap::new()).agent.unwrap();
        assert_eq!(inside.scope_dir, PathBuf::from("/lib"));
        assert_eq!(inside.current_state, "START.md");
        assert_eq!((inside.nesting_depth, inside.session_id.as_deref()), (1, None));
        assert_eq!(inside.fork_session_id.as_deref(), Some("s1"));
        let back = apply(&inside, Transition::Result { payload: "out".into() }, &mut BTreeMap::new()).agent.unwrap();
        assert_eq!(back.scope_dir, PathBuf::from("/wf"));
        assert_eq!(back.current_state, "RET.md");
        assert_eq!((back.nesting_depth, back.session_id.as_deref()), (0, Some("s1")));
        assert_eq!(back.pending_result.as_deref(), Some("out"));
    }

    #[test]
    fn r13_13_the_fifth_nested_call_is_refused_but_reset_workflow_is_not() {
        let mut agent = main_agent();
        let call = Transition::CallWorkflow {
            callee: lib_entry(),
            return_state: "RET.md".into(),
            input: None,
            fork_session: false,
            cd: None,
        };
        agent.nesting_depth = 3;
        assert_eq!(refusal(&agent, &call), None);
        agent.nesting_depth = 4;
        assert_eq!(
            refusal(&agent, &call).as_deref(),
            Some("function-workflow: maximum cross-workflow nesting depth (4) exceeded")
        );
        let reset = Transition::ResetWorkflow { entry: lib_entry(), cd: None, input: None, new_task: false };
        assert_eq!(refusal(&agent, &reset), None);
        let after = apply(&agent, reset, &mut BTreeMap::new()).agent.unwrap();
        assert_eq!((after.nesting_depth, after.stack.len()), (0, 0));
    }
}
