use super::*;

fn git(dir: &Path, args: &[&str]) {
    crate::process::git::git_with(dir, args, &[]).unwrap_or_else(|error| panic!("git {args:?}: {error}"));
}

#[test]
fn a_session_that_cannot_travel_is_dropped_with_a_notice_and_the_step_still_goes() {
    let root = tempfile::tempdir().expect("root");
    let remote = root.path().join("remote.git");
    git(root.path(), &["init", "--quiet", "--bare", &remote.to_string_lossy()]);
    let project = root.path().join("project");
    std::fs::create_dir_all(&project).expect("project");
    std::fs::write(project.join("a.txt"), "a\n").expect("a");
    git(&project, &["init", "--quiet"]);
    git(&project, &["add", "-A"]);
    git(&project, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-m", "first"]);
    let scope = root.path().join("flows/main");
    std::fs::create_dir_all(&scope).expect("scope");
    std::fs::write(scope.join("START.sh"), "echo '<result>ok</result>'\n").expect("state");
    let config = root.path().join("claude-config");
    let env = BTreeMap::from([("CLAUDE_CONFIG_DIR".to_string(), config.to_string_lossy().into_owned())]);
    let sessions = [(BackendName::Claude, "gone".to_string())];
    let remote = remote.to_string_lossy().into_owned();
    let prepared = prepare(&Outgoing {
        run_id: "r",
        agent_id: "main",
        scope: &scope,
        cwd: &project,
        task_folder: &root.path().join("tasks/r/main"),
        remote: &remote,
        sessions: &sessions,
        step_env: &env,
    })
    .expect("prepared");
    assert_eq!(prepared.dropped, ["gone"]);
    let project = std::fs::canonicalize(&project).expect("canonical");
    let mangled: String =
        project.to_string_lossy().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    assert_eq!(
        prepared.notices,
        [format!(
            "claude session `gone` has no files under {}/projects/{mangled}; the agent's next turn starts a fresh \
             conversation",
            config.display()
        )]
    );
    let worker = root.path().join("worker");
    let workspace = materialise(&prepared.files, "r", &worker, &env).expect("materialised");
    assert_eq!(workspace.cwd, worker.join("checkouts/r/main"));
    std::fs::write(workspace.cwd.join("a.txt"), "a, by the script\n").expect("step");
    let back = send_back(&workspace, &[], &workspace.cwd, &env).expect("sent back");
    let received = receive(&prepared.files, &back, &project, &env).expect("received");
    assert_eq!(received.changed, ["a.txt"]);
    assert_eq!(std::fs::read_to_string(project.join("a.txt")).expect("a"), "a, by the script\n");
    assert!(root.path().join("tasks/r/main").is_dir(), "the task folder exists after the step, empty");
}

#[test]
fn sessions_that_would_overflow_a_restate_message_are_left_out_largest_first() {
    let session = |id: &str, size: usize| ShippedSession {
        backend: BackendName::Claude,
        session: id.to_string(),
        files: vec![SessionFile { path: format!("{id}.jsonl"), bytes: vec![b'x'; size] }],
    };
    let mut sessions = vec![session("small", 10), session("big", 3000), session("mid", 300)];
    let left_out = fit(&mut sessions, 100, 1000, "to the worker").expect("fits");
    assert_eq!(left_out.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>(), ["big"]);
    assert_eq!(
        left_out[0].1,
        "claude session `big` takes 4078 bytes as JSON, too many to carry to the worker with the step; the agent's \
         next turn starts a fresh conversation"
    );
    assert_eq!(sessions.iter().map(|session| session.session.as_str()).collect::<Vec<_>>(), ["small", "mid"]);
    let error = fit(&mut sessions, 2000, 1000, "back from the worker").expect_err("too large");
    assert_eq!(
        error.to_string(),
        "the files a step carries back from the worker are 2000 bytes as JSON, more than the 0 MiB a Restate message \
         may hold with the rest of the step; run with `--files shared`, or keep less in the task folder"
    );
}
