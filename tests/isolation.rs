//! `isolation="worktree"` (`docs/isolation.md`) with real git: each worker works in
//! a worktree of its own on `baton/<run>/<agent>`, its changes are committed there
//! when it terminates, the join reports its branch, and `baton gc` leaves nothing.

use std::path::Path;
use std::process::Command;

use crate::support::Test;

fn git(root: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .output()
        .expect("git runs");
    assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// `test` with its root made a git repository with one commit (`shared.txt`).
fn in_a_repository(test: Test) -> Test {
    let root = test.root().to_path_buf();
    std::fs::remove_dir_all(root.join(".git")).unwrap();
    git(&root, &["init", "--quiet", "--initial-branch=trunk"]);
    std::fs::write(root.join(".gitignore"), ".baton/\n").unwrap();
    std::fs::write(root.join("shared.txt"), "base\n").unwrap();
    git(&root, &["add", "-A"]);
    git(&root, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-m", "base"]);
    test
}

/// Two workers write `out.txt` (the same name) in their worktrees, at once.
fn two_writers() -> Test {
    Test::new()
        .file(
            "START.sh",
            "echo '<fork item=\"a\" isolation=\"worktree\">W</fork>\
             <fork item=\"b\" isolation=\"worktree\">W</fork><join>AGG</join>'\n",
        )
        .file(
            "W.sh",
            "echo \"$item\" > out.txt\necho changed >> shared.txt\npwd > where.txt\n\
             sleep 0.2\necho \"<result>wrote $item</result>\"\n",
        )
        .file("AGG.sh", "cp \"$BATON_RESULTS\" results.json\necho '<result>joined</result>'\n")
}

#[test]
fn worktree_isolation_gives_each_worker_its_own_branch_with_its_own_content() {
    let outcome = in_a_repository(two_writers()).run_workflow(&[]);
    outcome.status(0).stdout("joined\n");
    let root = outcome.root().to_path_buf();
    let base = git(&root, &["rev-parse", "HEAD"]);
    for (agent, item) in [("main_w1", "a"), ("main_w2", "b")] {
        let branch = format!("baton/test/{agent}");
        assert_eq!(git(&root, &["show", &format!("{branch}:out.txt")]), format!("{item}\n"));
        assert_eq!(git(&root, &["show", &format!("{branch}:shared.txt")]), "base\nchanged\n");
        assert_eq!(git(&root, &["rev-parse", &format!("{branch}~1")]), base, "one commit on the base");
        assert_eq!(git(&root, &["log", "-1", "--format=%an %s", &branch]), format!("baton baton: {agent} (test)\n"));
        let worktree = root.join(".baton/worktrees/test").join(agent);
        let cwd = git(&root, &["show", &format!("{branch}:where.txt")]);
        assert_eq!(Path::new(cwd.trim()).canonicalize().unwrap(), worktree.canonicalize().unwrap());
    }
    // The parent's own tree is untouched.
    assert!(!root.join("out.txt").exists());
    assert_eq!(std::fs::read_to_string(root.join("shared.txt")).unwrap(), "base\n");
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("results.json")).unwrap()).unwrap();
    for (index, agent) in ["main_w1", "main_w2"].iter().enumerate() {
        let entry = &results[index];
        assert_eq!(entry["agent_id"], *agent);
        assert_eq!(entry["status"], "terminated");
        assert_eq!(entry["branch"], format!("baton/test/{agent}"));
        let stat = entry["diff_stat"].as_str().unwrap();
        assert!(stat.contains("out.txt") && stat.contains("shared.txt") && stat.contains("3 files changed"), "{stat}");
    }
    assert_eq!(results[0]["result"], "wrote a");
}

#[test]
fn worktree_isolation_outside_a_git_repository_pauses_the_parent_with_a_clear_message() {
    // The test project's `.git` is an empty marker directory: no repository.
    let outcome = two_writers().run_workflow(&[]);
    outcome.status(3);
    let state = outcome.state("test");
    let main = &state["agents"][0];
    assert_eq!(main["status"], "paused");
    assert_eq!(main["pause_reason"], "validation_error");
    assert_eq!(
        crate::support::normalize(main["error"].as_str().unwrap(), outcome.root()),
        "isolation=\"worktree\" needs a git repository with a commit: [ROOT] is not in a git repository"
    );
    assert_eq!(state["agents"].as_array().unwrap().len(), 1, "no worker was created");
    assert!(!outcome.root().join(".baton/worktrees").exists());
}

#[test]
fn an_unknown_isolation_is_a_lint_error_and_at_run_time_pauses_the_parent() {
    let outcome = Test::new()
        .file("START.sh", "echo '<fork isolation=\"vm\" next=\"END\">W</fork>'\n")
        .file("W.sh", "echo '<result>w</result>'\n")
        .file("END.sh", "echo '<result>end</result>'\n")
        .run_workflow(&[]);
    outcome.status(1).stderr_contains("error[invalid-isolation-value]: `<fork>` has isolation=\"vm\"");
    let outcome = outcome.into_test().args(["run", "wf", "--run-id", "test", "--no-lint"]).run();
    outcome.status(3);
    assert_eq!(
        outcome.state("test")["agents"][0]["error"],
        "isolation=\"vm\" is not known (the only isolation is \"worktree\")"
    );
}

#[test]
fn worktree_isolation_killed_mid_fan_out_resumes_and_gc_leaves_no_worktree_or_branch() {
    let test = in_a_repository(
        Test::new()
            .file(
                "START.sh",
                "for i in 1 2 3; do echo \"<fork item=\\\"$i\\\" isolation=\\\"worktree\\\">W</fork>\"; done\n\
                 echo '<join>AGG</join>'\n",
            )
            .file(
                "W.sh",
                "touch \"../../../../started.$item\"\necho \"$item\" > out.txt\nsleep 1\n\
                 echo \"<result>$item</result>\"\n",
            )
            .file("AGG.sh", "echo \"<result>$(grep -c '\"branch\"' \"$BATON_RESULTS\") branches</result>\"\n"),
    );
    let mut child = test.spawn(&["run", "wf", "--run-id", "test", "-q"]);
    if !test.wait_for_file("started.1") {
        child.kill().unwrap();
        let output = child.wait_with_output().unwrap();
        panic!("no worker started: {}", String::from_utf8_lossy(&output.stderr));
    }
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    child.wait().unwrap();
    let outcome = test.args(["resume", "test", "-q"]).run();
    outcome.status(0).stdout("3 branches\n");
    let root = outcome.root().to_path_buf();
    for agent in ["main_w1", "main_w2", "main_w3"] {
        let item = &agent[6..];
        assert_eq!(git(&root, &["show", &format!("baton/test/{agent}:out.txt")]), format!("{item}\n"));
    }
    assert_eq!(git(&root, &["worktree", "list"]).lines().count(), 4);
    let gc = outcome.rerun(["gc", "--keep", "0"]);
    gc.status(0).stdout("deleted test\n");
    let root = gc.root().to_path_buf();
    let worktrees = git(&root, &["worktree", "list", "--porcelain"]);
    assert_eq!(worktrees.matches("worktree ").count(), 1, "only the main worktree: {worktrees}");
    assert_eq!(git(&root, &["branch", "--list", "baton/*"]), "");
    assert!(!root.join(".baton/worktrees/test").exists());
}

/// A forking state's `isolation: worktree` frontmatter is the default of each fork
/// that names no isolation (issue 13, item 2).
#[test]
fn a_states_isolation_frontmatter_isolates_the_forks_that_name_none() {
    let outcome = Test::new()
        .file("START.md", "---\nisolation: worktree\n---\nFork two workers, then join them.\n")
        .file("W.sh", "echo \"<result>$(pwd)</result>\"\n")
        .file("AGG.sh", "echo \"<result>$(tr -d '\\n' < \"$BATON_RESULTS\")</result>\"\n")
        .write(
            "wf/tests/default.yaml",
            "repository: true\nreplies:\n  START: [\"<fork>W</fork><fork isolation=\\\"none\\\">W</fork><join>AGG</join>\"]\n\
             expect:\n  result_contains: baton/test/main_w1\n",
        )
        .args(["test", "wf", "--json"])
        .run();
    outcome.status(0);
    let report: serde_json::Value = serde_json::from_str(&outcome.stdout).expect("JSON");
    let result = report["tests"][0]["run"]["result"].as_str().unwrap_or_default().to_string();
    assert!(result.contains(".baton/worktrees/test/main_w1"), "the first worker ran in its worktree: {result}");
    assert!(result.contains("\"result\": \"") && result.contains("/work\""), "the second said none: {result}");
    assert_eq!(result.matches("\"branch\"").count(), 1, "only the first has a branch: {result}");
}
