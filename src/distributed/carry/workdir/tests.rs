//! A bare repository as the shared remote, one clone as the coordinator's
//! working directory and worker folders of their own: real git throughout.

use super::*;

fn git(dir: &Path, args: &[&str]) -> String {
    git_with(dir, args, &[]).unwrap_or_else(|error| panic!("git {args:?}: {error}"))
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// A remote, a coordinator clone with one commit (`a.txt`, `c.txt`,
/// `sub/s.txt`, `*.log` ignored) and a worker folder.
struct Setup {
    root: tempfile::TempDir,
    remote: String,
    coordinator: PathBuf,
}

impl Setup {
    fn new() -> Setup {
        let root = tempfile::tempdir().expect("root");
        let remote = root.path().join("remote.git");
        git(root.path(), &["init", "--quiet", "--bare", &remote.to_string_lossy()]);
        let coordinator = root.path().join("coordinator");
        std::fs::create_dir_all(&coordinator).expect("coordinator");
        git(&coordinator, &["init", "--quiet"]);
        write(&coordinator.join("a.txt"), "a\n");
        write(&coordinator.join("c.txt"), "c\n");
        write(&coordinator.join("sub/s.txt"), "s\n");
        write(&coordinator.join(".gitignore"), "*.log\n");
        git(&coordinator, &["add", "-A"]);
        git(&coordinator, &["-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-m", "first"]);
        git(&coordinator, &["remote", "add", "origin", &remote.to_string_lossy()]);
        let remote = remote.to_string_lossy().into_owned();
        Setup { root, remote, coordinator }
    }

    fn worker(&self, name: &str) -> PathBuf {
        self.root.path().join(name)
    }

    /// What the user's git shows of the coordinator: HEAD, the index, the branches.
    fn user_state(&self) -> (String, String, String) {
        let dir = &self.coordinator;
        (git(dir, &["rev-parse", "HEAD"]), git(dir, &["ls-files", "--stage"]), git(dir, &["branch", "--list"]))
    }
}

#[test]
fn a_steps_edits_come_back_and_the_users_index_head_and_ignored_files_stay() {
    let setup = Setup::new();
    let coordinator = &setup.coordinator;
    write(&coordinator.join("notes.txt"), "untracked, travels\n");
    write(&coordinator.join("local.log"), "ignored, stays here\n");
    write(&coordinator.join("a.txt"), "a, staged by the user\n");
    git(coordinator, &["add", "a.txt"]);
    let before = setup.user_state();

    let remote = remote_for(&coordinator.join("sub"), None).expect("origin");
    assert_eq!(remote, setup.remote);
    let ticket = ship(&coordinator.join("sub"), &remote, "run-1", "main").expect("shipped");
    assert_eq!(ticket.branch, "baton/run-1/main");
    assert_eq!(ticket.offset, "sub");
    assert_eq!(setup.user_state(), before);

    let checkout = check_out(&setup.worker("w1"), &ticket).expect("checked out");
    assert_eq!(checkout.cwd, setup.worker("w1").join("checkouts/run-1/main/sub"));
    let top = &checkout.toplevel;
    assert_eq!(read(&top.join("notes.txt")), "untracked, travels\n");
    assert_eq!(read(&top.join("a.txt")), "a, staged by the user\n");
    assert!(!top.join("local.log").exists(), "ignored files do not travel");
    // The step, on the worker.
    write(&top.join("a.txt"), "a, by the step\n");
    write(&checkout.cwd.join("new.txt"), "new\n");
    std::fs::remove_file(top.join("notes.txt")).expect("delete");
    write(&top.join("build.log"), "ignored, stays on the worker\n");
    let result = send_back(&checkout).expect("sent back");
    assert_ne!(result, ticket.commit);

    let changed = bring_back(&coordinator.join("sub"), &ticket, &result).expect("brought back");
    assert_eq!(changed, ["a.txt", "notes.txt", "sub/new.txt"]);
    assert_eq!(read(&coordinator.join("a.txt")), "a, by the step\n");
    assert_eq!(read(&coordinator.join("sub/new.txt")), "new\n");
    assert!(!coordinator.join("notes.txt").exists());
    assert!(!coordinator.join("build.log").exists());
    assert_eq!(read(&coordinator.join("local.log")), "ignored, stays here\n");
    assert_eq!(setup.user_state(), before, "HEAD, index and branches are the user's");

    // The next step starts from the coordinator's tree again, on any worker.
    let next = ship(&coordinator.join("sub"), &remote, "run-1", "main").expect("shipped again");
    let again = check_out(&setup.worker("w2"), &next).expect("checked out on w2");
    assert_eq!(read(&again.toplevel.join("a.txt")), "a, by the step\n");
    assert_eq!(send_back(&again).expect("nothing changed"), next.commit);
    assert_eq!(bring_back(&coordinator.join("sub"), &next, &next.commit).expect("nothing"), Vec::<String>::new());
}

#[test]
fn a_file_edited_on_both_sides_is_refused_by_name_and_nothing_is_written() {
    let setup = Setup::new();
    let coordinator = &setup.coordinator;
    let ticket = ship(coordinator, &setup.remote, "run-2", "main").expect("shipped");
    let checkout = check_out(&setup.worker("w1"), &ticket).expect("checked out");
    write(&checkout.toplevel.join("a.txt"), "a, by the step\n");
    write(&checkout.toplevel.join("c.txt"), "c, by the step\n");
    let result = send_back(&checkout).expect("sent back");
    // Meanwhile, on the coordinator.
    write(&coordinator.join("a.txt"), "a, by the user\n");

    let error = bring_back(coordinator, &ticket, &result).expect_err("conflict");
    assert_eq!(
        error.to_string(),
        format!(
            "the step's result cannot be written into {}: this file changed there while the step ran on the worker, and \
             the step changed it too: `a.txt`. Nothing was overwritten; the step's result is commit {result} on branch \
             `baton/run-2/main` of {}",
            coordinator.display(),
            setup.remote
        )
    );
    assert_eq!(read(&coordinator.join("a.txt")), "a, by the user\n");
    assert_eq!(read(&coordinator.join("c.txt")), "c\n");

    // An edit of another file meanwhile is no conflict: the step's files are written, the user's kept.
    write(&coordinator.join("a.txt"), "a\n");
    write(&coordinator.join("sub/s.txt"), "s, by the user\n");
    assert_eq!(bring_back(coordinator, &ticket, &result).expect("disjoint"), ["a.txt", "c.txt"]);
    assert_eq!(read(&coordinator.join("a.txt")), "a, by the step\n");
    assert_eq!(read(&coordinator.join("sub/s.txt")), "s, by the user\n");
}

#[test]
fn a_step_run_again_on_another_worker_replaces_the_first_try_which_cannot_push_after_it() {
    let setup = Setup::new();
    let ticket = ship(&setup.coordinator, &setup.remote, "run-3", "main").expect("shipped");
    let first = check_out(&setup.worker("w1"), &ticket).expect("w1");
    write(&first.toplevel.join("a.txt"), "first try\n");
    let first_result = send_back(&first).expect("first try pushed");
    // The coordinator gave up on w1 and sent the same step to w2.
    let second = check_out(&setup.worker("w2"), &ticket).expect("w2 accepts a branch holding a try of the same step");
    write(&second.toplevel.join("a.txt"), "second try\n");
    let second_result = send_back(&second).expect("second try pushed");
    // w1, still running, tries again: its lease no longer holds.
    write(&first.toplevel.join("a.txt"), "first try, later\n");
    let error = send_back(&first).expect_err("lease");
    assert!(matches!(error, WorkdirError::Superseded { .. }), "{error}");
    assert!(error.to_string().starts_with("branch `baton/run-3/main` of "), "{error}");
    // The coordinator only takes the result its reply named, and it is the branch's.
    assert!(matches!(bring_back(&setup.coordinator, &ticket, &first_result), Err(WorkdirError::BranchMoved { .. })));
    bring_back(&setup.coordinator, &ticket, &second_result).expect("second");
    assert_eq!(read(&setup.coordinator.join("a.txt")), "second try\n");
}

#[test]
fn a_working_tree_over_the_bound_is_refused_naming_the_biggest_files() {
    let setup = Setup::new();
    let big = std::fs::File::create(setup.coordinator.join("video.bin")).expect("big");
    big.set_len(MAX_TREE_BYTES).expect("sparse");
    let error = ship(&setup.coordinator, &setup.remote, "run-4", "main").expect_err("too large");
    assert_eq!(
        error.to_string(),
        format!(
            "the working directory {} holds {} bytes that git would carry, more than the 512 MiB a step may ship; the \
             biggest: `video.bin` (512 MiB), `.gitignore` (6 bytes), `a.txt` (2 bytes). Ignore them in .gitignore, or run \
             with `--files shared`",
            setup.coordinator.display(),
            MAX_TREE_BYTES + 12
        )
    );
    assert_eq!(git(setup.remote.as_ref(), &["branch", "--list"]), "", "nothing pushed");
}

#[test]
fn without_origin_the_run_must_name_a_remote() {
    let setup = Setup::new();
    git(&setup.coordinator, &["remote", "remove", "origin"]);
    let error = remote_for(&setup.coordinator, None).expect_err("no origin");
    assert_eq!(
        error.to_string(),
        format!(
            "`--files shipped` needs a git remote both machines reach, and the repository at {} has no `origin`; name one \
             with `--repo URL`",
            setup.coordinator.display()
        )
    );
    assert_eq!(remote_for(&setup.coordinator, Some("git@host:x.git")).expect("named"), "git@host:x.git");
    let outside = tempfile::tempdir().expect("outside");
    let error = ship(outside.path(), &setup.remote, "run-5", "main").expect_err("no repository");
    assert!(error.to_string().starts_with("`--files shipped` carries the working directory"), "{error}");
}
