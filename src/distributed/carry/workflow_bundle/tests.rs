use super::*;
use crate::ids::StateName;

fn write(root: &Path, file: &str, text: &str) {
    let path = root.join(file);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

/// `w/main/` calls `../lib/` and forks into `../flows/f.yaml`; `lib/` calls
/// `../main/` back (a cycle); `w/unrelated/` is named by nobody.
fn workflows() -> tempfile::TempDir {
    let root = tempfile::tempdir().expect("root");
    let w = root.path().join("w");
    write(
        &w,
        "main/START.md",
        "---\nallowed_transitions:\n  - {tag: call-workflow, target: ../lib/, return: START}\n---\n\
         Then <fork-workflow next=\"START\">../flows/f.yaml</fork-workflow>\n",
    );
    write(&w, "main/RUN.sh", "#!/bin/bash\necho '<goto>START.md</goto>'\n");
    write(&w, "main/data/table.txt", "data a script reads\n");
    write(
        &w,
        "lib/START.md",
        "---\nallowed_transitions:\n  - {tag: call-workflow, target: ../main/, return: START}\n---\nx",
    );
    write(&w, "flows/f.yaml", "states:\n  START:\n    prompt: hi\n");
    write(&w, "unrelated/START.md", "x");
    write(&w, "main/.git/HEAD", "a repository is no workflow file");
    write(&w, "main/.baton/runs/r/state.json", "nor are runs");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(w.join("main/RUN.sh"), std::fs::Permissions::from_mode(0o755)).expect("chmod");
        write(root.path(), "outside/shared.md", "shared prompt\n");
        std::os::unix::fs::symlink(root.path().join("outside/shared.md"), w.join("main/SHARED.md")).expect("link");
    }
    root
}

#[test]
fn a_directory_and_the_workflows_its_tags_reach_travel_under_their_own_names() {
    let root = workflows();
    let bundle = pack(&root.path().join("w/main")).expect("packed");
    assert_eq!(bundle.root, root.path().join("w"));
    assert_eq!(bundle.scopes, ["main", "lib", "flows/f.yaml"]);
    let again = pack(&root.path().join("w/main/")).expect("packed again");
    assert_eq!(again.hash, bundle.hash, "the same files make the same bundle");
    write(&root.path().join("w"), "lib/START.md", "changed");
    assert_ne!(pack(&root.path().join("w/main")).expect("changed").hash, bundle.hash);

    let worker = tempfile::tempdir().expect("worker");
    let map = unpack(&bundle, worker.path()).expect("unpacked");
    assert_eq!(map.worker_root, worker.path().join("workflows").join(&bundle.hash));
    let top = &map.worker_root;
    assert_eq!(std::fs::read_to_string(top.join("main/data/table.txt")).expect("data"), "data a script reads\n");
    assert!(top.join("lib/START.md").is_file() && top.join("flows/f.yaml").is_file());
    assert!(!top.join("unrelated").exists(), "only what the tags reach travels");
    assert!(!top.join("main/.git").exists() && !top.join("main/.baton").exists());
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(top.join("main/RUN.sh")).expect("script").permissions().mode();
        assert_eq!(mode & 0o777, 0o755);
        assert_eq!(std::fs::read_to_string(top.join("main/SHARED.md")).expect("link"), "shared prompt\n");
    }

    // A specifier resolved on the worker names the worker's copy, which maps back.
    let scope = map.to_worker(&root.path().join("w/main")).expect("inside");
    let entry = resolve_specifier("../lib/", Caller::local(&scope)).expect("resolves on the worker");
    assert_eq!(entry.scope_dir, top.join("lib"));
    assert_eq!(entry.state, StateName::from("START.md"));
    assert_eq!(map.to_coordinator(&entry.scope_dir), Some(root.path().join("w/lib")));
    assert_eq!(map.to_worker(Path::new("/elsewhere")), None);
}

#[test]
fn two_steps_unpacking_one_bundle_at_once_share_one_whole_copy() {
    let root = workflows();
    let bundle = pack(&root.path().join("w/flows/f.yaml")).expect("packed");
    assert_eq!(bundle.scopes, ["f.yaml"]);
    let worker = tempfile::tempdir().expect("worker");
    let maps: Vec<PathMap> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4).map(|_| scope.spawn(|| unpack(&bundle, worker.path()))).collect();
        handles.into_iter().map(|handle| handle.join().expect("thread").expect("unpacked")).collect()
    });
    assert!(maps.iter().all(|map| *map == maps[0]));
    let cache: Vec<String> = std::fs::read_dir(worker.path().join("workflows"))
        .expect("cache")
        .map(|entry| entry.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(cache, std::slice::from_ref(&bundle.hash), "no half-made copy is left");
    assert_eq!(
        std::fs::read_to_string(maps[0].worker_root.join("f.yaml")).expect("yaml"),
        "states:\n  START:\n    prompt: hi\n"
    );
}

#[test]
fn a_bundle_changed_on_the_way_is_refused() {
    let root = workflows();
    let mut bundle = pack(&root.path().join("w/lib")).expect("packed");
    let last = bundle.zip.len() - 30;
    bundle.zip[last] ^= 1;
    let worker = tempfile::tempdir().expect("worker");
    let error = unpack(&bundle, worker.path()).expect_err("refused");
    assert!(
        error
            .to_string()
            .starts_with(&format!("the workflow bundle does not match its SHA-256: expected {}", bundle.hash)),
        "{error}"
    );
    assert!(!worker.path().join("workflows").join(&bundle.hash).exists());
}

#[test]
fn workflow_files_over_the_bound_are_refused_with_the_shared_mode_named() {
    let root = workflows();
    let big = std::fs::File::create(root.path().join("w/lib/big.bin")).expect("big");
    big.set_len(MAX_BUNDLE_BYTES).expect("sparse");
    let error = pack(&root.path().join("w/main")).expect_err("too large");
    let main = root.path().join("w/main");
    assert!(
        error.to_string().starts_with(&format!(
            "the workflow files a step needs (`{}` and 2 workflows it calls) are ",
            main.display()
        )),
        "{error}"
    );
    assert!(
        error.to_string().ends_with(
            "bytes, more than the 16 MiB a step may carry to a worker; run with `--files shared` and give the workers \
             the same paths (NFS, or one machine)"
        ),
        "{error}"
    );
}

#[cfg(unix)]
#[test]
fn a_symlinked_directory_is_refused_by_name() {
    let root = workflows();
    let link = root.path().join("w/lib/linked");
    std::os::unix::fs::symlink(root.path().join("outside"), &link).expect("link");
    let error = pack(&root.path().join("w/lib")).expect_err("refused");
    assert_eq!(
        error.to_string(),
        format!(
            "{} is a symbolic link to a directory, which a step cannot carry to a worker; make it a directory, or run \
             with `--files shared`",
            link.display()
        )
    );
}
