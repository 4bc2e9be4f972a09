use std::collections::BTreeMap;

use super::*;
use crate::distributed::carry::shipped::{Outgoing, materialise, prepare};
use crate::ids::{SessionId, StateName};
use crate::transition::interpret::transition_of;
use crate::workflow::specifier::Caller;

fn git(dir: &Path, args: &[&str]) {
    crate::process::git::git_with(dir, args, &[]).unwrap_or_else(|error| panic!("git {args:?}: {error}"));
}

#[test]
fn a_step_runs_with_the_workers_paths_and_its_call_workflow_comes_back_with_the_coordinators() {
    let root = tempfile::tempdir().expect("root");
    let root_path = std::fs::canonicalize(root.path()).expect("canonical");
    let remote = root_path.join("remote.git");
    git(&root_path, &["init", "--quiet", "--bare", &remote.to_string_lossy()]);
    let project = root_path.join("project");
    std::fs::create_dir_all(project.join("sub")).expect("project");
    std::fs::write(project.join("sub/a.txt"), "a\n").expect("a");
    git(&project, &["init", "--quiet"]);
    git(&project, &["add", "-A"]);
    git(&project, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-m", "first"]);
    for (file, text) in [
        ("flows/main/START.md", "<call-workflow return=\"START\">../lib/</call-workflow>"),
        ("flows/lib/START.md", "x"),
    ] {
        let path = root_path.join(file);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }
    let (scope, cwd, task_folder) =
        (root_path.join("flows/main"), project.join("sub"), root_path.join(".baton/tasks/r/main"));
    let mut agent = Agent::main(StateName::from("START.md"), scope.clone(), cwd.clone(), task_folder.clone());
    agent.session_id = Some(SessionId::from("s-1"));
    agent.session_backend = Some(BackendName::Pi);
    assert_eq!(sessions_before(&agent), [(BackendName::Pi, "s-1".to_string())]);
    let env = BTreeMap::new();
    let remote = remote.to_string_lossy().into_owned();
    let prepared = prepare(&Outgoing {
        run_id: "r",
        agent_id: "main",
        scope: &scope,
        cwd: &cwd,
        task_folder: &task_folder,
        remote: &remote,
        sessions: &[],
        step_env: &env,
    })
    .expect("prepared");
    let worker = root_path.join("worker");
    let workspace = materialise(&prepared.files, "r", &worker, &env).expect("materialised");

    let mut on_worker = agent.clone();
    agent_to_worker(&mut on_worker, &workspace).expect("moved");
    assert_eq!(on_worker.cwd, worker.join("checkouts/r/main/sub"));
    assert_eq!(on_worker.scope_dir, workspace.workflows.worker_root.join("main"));
    assert_eq!(on_worker.task_folder, worker.join("tasks/r/main"));

    // The tag, resolved on the worker as the executor does, comes back as the coordinator's.
    let tag = crate::syntax::scanner::scan("<call-workflow return=\"START.md\">../lib/</call-workflow>")
        .expect("scanned")
        .into_iter()
        .next()
        .expect("tag");
    let transition = transition_of(&tag, Caller::local(&on_worker.scope_dir)).expect("transition");
    let mut result =
        ExecutionResult { transition, session_id: None, session_message: None, session_backend: None, cost_usd: 0.0 };
    result_to_coordinator(&mut result, &workspace);
    let Transition::CallWorkflow { callee, .. } = &result.transition else { panic!("{:?}", result.transition) };
    assert_eq!(callee.scope_dir, root_path.join("flows/lib"));
    assert_eq!(sessions_after(&agent, &result), [(BackendName::Pi, "s-1".to_string())]);

    let mut elsewhere = agent.clone();
    elsewhere.cwd = root_path.clone();
    let error = agent_to_worker(&mut elsewhere, &workspace).expect_err("outside");
    assert_eq!(
        error.to_string(),
        format!(
            "agent `main`'s working directory {} is outside what `--files shipped` carries ({}); run with `--files shared`",
            root_path.display(),
            project.display()
        )
    );
}
