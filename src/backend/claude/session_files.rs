//! Where Claude Code keeps a session, to carry it to another machine
//! (`docs/distributed-files.md`).
//!
//! Claude Code writes a session to
//! `<config dir>/projects/<mangled cwd>/<session id>.jsonl` (the config dir is
//! `CLAUDE_CONFIG_DIR`, else `~/.claude`), and a subagent's or a large tool
//! result's files to a folder `<session id>/` beside it. The folder name is the
//! working directory as Claude sees it (symlinks resolved) with every character
//! that is not an ASCII letter or digit replaced by `-`. `--resume ID` looks the
//! session up in the folder of the directory it runs in, so the files travel
//! relative to that folder and are installed under the name of the receiver's
//! working directory: a session made in `/a/x` continues in `/b/y`. Nothing in
//! the files is rewritten: resumed in another directory, Claude Code 2.1.330
//! runs there and tells the model so itself ("# Environment update - Primary
//! working directory: /b/y (was /a/x)"; checked by the real-CLI test).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::backend::session_files::{
    SessionFile, SessionFilesError, cli_dir, files_under, read_files, real_cwd, write_files,
};
use crate::ids::BackendName;

/// Claude Code's config dir: `CLAUDE_CONFIG_DIR` (the step's environment
/// first), else `~/.claude`.
pub(crate) fn config_dir(step_env: &BTreeMap<String, String>) -> Option<PathBuf> {
    cli_dir(step_env, "CLAUDE_CONFIG_DIR", ".claude")
}

/// The folder of `cwd`'s sessions under `config_dir`.
pub(crate) fn project_dir(config_dir: &Path, cwd: &Path) -> PathBuf {
    config_dir.join("projects").join(mangle(&real_cwd(cwd)))
}

/// Claude Code's name for a working directory's folder.
fn mangle(cwd: &Path) -> String {
    cwd.to_string_lossy().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect()
}

/// The files `--resume SESSION` (or a fork of it) needs, made in `cwd` under
/// `config_dir`: the transcript and its folder, if any. A session not in `cwd`'s
/// folder is looked for in every project folder (a step may have moved with
/// `<cd>`).
pub(crate) fn collect(session: &str, cwd: &Path, config_dir: &Path) -> Result<Vec<SessionFile>, SessionFilesError> {
    let transcript_name = format!("{session}.jsonl");
    let home = project_dir(config_dir, cwd);
    let folder = if home.join(&transcript_name).is_file() {
        home
    } else {
        find_elsewhere(&config_dir.join("projects"), &transcript_name).ok_or_else(|| SessionFilesError::NotFound {
            backend: BackendName::Claude,
            session: session.to_string(),
            looked_in: home,
        })?
    };
    let mut files = vec![(folder.join(&transcript_name), transcript_name)];
    let beside = folder.join(session);
    if beside.is_dir() {
        files.extend(files_under(&beside, session)?);
    }
    read_files(BackendName::Claude, session, &files)
}

fn find_elsewhere(projects: &Path, transcript_name: &str) -> Option<PathBuf> {
    let entries = std::fs::read_dir(projects).ok()?;
    let mut folders: Vec<PathBuf> = entries.flatten().map(|entry| entry.path()).collect();
    folders.sort();
    folders.into_iter().find(|folder| folder.join(transcript_name).is_file())
}

/// Put `files` (from [`collect`] on another machine) where `claude --resume`
/// run in `cwd` with `config_dir` finds them. The files are written as they
/// came: Claude Code itself notices that the directory moved.
pub(crate) fn install(files: &[SessionFile], cwd: &Path, config_dir: &Path) -> Result<(), SessionFilesError> {
    write_files(&project_dir(config_dir, cwd), files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_travels_from_one_working_directory_to_another() {
        let a = tempfile::tempdir().expect("a");
        let b = tempfile::tempdir().expect("b");
        let cwd_a = a.path().join("work.dir/x");
        let cwd_b = b.path().join("elsewhere");
        std::fs::create_dir_all(&cwd_a).expect("cwd a");
        let config_a = a.path().join("claude");
        let folder = project_dir(&config_a, &cwd_a);
        assert!(folder.to_string_lossy().ends_with("-work-dir-x"), "{}", folder.display());
        std::fs::create_dir_all(folder.join("s-1/subagents")).expect("folder");
        std::fs::write(folder.join("s-1.jsonl"), "{\"a\":1}\n").expect("transcript");
        std::fs::write(folder.join("s-1/subagents/agent-1.jsonl"), "{}\n").expect("subagent");
        std::fs::write(folder.join("s-2.jsonl"), "other\n").expect("other session");

        let files = collect("s-1", &cwd_a, &config_a).expect("collected");
        let paths: Vec<&str> = files.iter().map(|file| file.path.as_str()).collect();
        assert_eq!(paths, ["s-1.jsonl", "s-1/subagents/agent-1.jsonl"]);

        let config_b = b.path().join("claude");
        install(&files, &cwd_b, &config_b).expect("installed");
        let installed = project_dir(&config_b, &cwd_b);
        assert_eq!(std::fs::read_to_string(installed.join("s-1.jsonl")).expect("read"), "{\"a\":1}\n");
        assert!(installed.join("s-1/subagents/agent-1.jsonl").is_file());
        // Collected again on B (after a step there), from B's own folder.
        assert_eq!(collect("s-1", &cwd_b, &config_b).expect("again"), files);
    }

    #[test]
    fn a_missing_session_names_the_folder_it_was_looked_for_in() {
        let config = tempfile::tempdir().expect("config");
        let error = collect("gone", Path::new("/no/such"), config.path()).expect_err("missing");
        assert_eq!(
            error.fallback_notice(),
            format!(
                "claude session `gone` has no files under {}/projects/-no-such; the agent's next turn starts a \
                 fresh conversation",
                config.path().display()
            )
        );
    }
}
