//! Where pi keeps a session, to carry it to another machine
//! (`docs/distributed-files.md`).
//!
//! pi 0.73 writes a session to
//! `<agent dir>/sessions/--<cwd, leading / dropped, / \ : as ->--/<time>_<id>.jsonl`
//! (the agent dir is `PI_CODING_AGENT_DIR`, else `~/.pi/agent`). `--session ID`
//! looks in the working directory's folder first, then in every folder — but a
//! session found in another project's folder is only *offered* as a fork, which
//! headless pi cannot accept. And pi runs a session in the working directory its
//! header line records (`{"type":"session",…,"cwd":…}`), refusing to start when
//! that directory does not exist. So a session is installed under the folder of
//! the receiver's working directory, with its header's `cwd` rewritten to it.
//!
//! A state's `session_dir` option or `PI_CODING_AGENT_SESSION_DIR` puts sessions
//! elsewhere; those are not carried (the conversation starts afresh on another
//! machine; `docs/distributed-files.md`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::backend::session_files::{
    SessionFile, SessionFilesError, cli_dir, read_files, real_cwd, with_first_cwd, write_files,
};
use crate::ids::BackendName;

/// pi's agent dir: `PI_CODING_AGENT_DIR` (the step's environment first), else
/// `~/.pi/agent`.
pub(crate) fn agent_dir(step_env: &BTreeMap<String, String>) -> Option<PathBuf> {
    cli_dir(step_env, "PI_CODING_AGENT_DIR", ".pi/agent")
}

/// The folder of `cwd`'s sessions under `agent_dir`.
pub(crate) fn sessions_dir(agent_dir: &Path, cwd: &Path) -> PathBuf {
    let cwd = real_cwd(cwd).to_string_lossy().into_owned();
    let trimmed = cwd.strip_prefix(['/', '\\']).unwrap_or(&cwd);
    let safe: String = trimmed.chars().map(|c| if matches!(c, '/' | '\\' | ':') { '-' } else { c }).collect();
    agent_dir.join("sessions").join(format!("--{safe}--"))
}

/// The session file of `session` (named `<time>_<session>.jsonl`) made in `cwd`:
/// looked for in `cwd`'s folder, then in every folder (a step may have moved
/// with `<cd>`).
pub(crate) fn collect(session: &str, cwd: &Path, agent_dir: &Path) -> Result<Vec<SessionFile>, SessionFilesError> {
    let home = sessions_dir(agent_dir, cwd);
    let suffix = format!("_{session}.jsonl");
    let found = find_in(&home, &suffix).or_else(|| {
        let entries = std::fs::read_dir(agent_dir.join("sessions")).ok()?;
        let mut folders: Vec<PathBuf> = entries.flatten().map(|entry| entry.path()).collect();
        folders.sort();
        folders.iter().find_map(|folder| find_in(folder, &suffix))
    });
    let Some((path, name)) = found else {
        return Err(SessionFilesError::NotFound {
            backend: BackendName::Pi,
            session: session.to_string(),
            looked_in: home,
        });
    };
    read_files(BackendName::Pi, session, &[(path, name)])
}

fn find_in(folder: &Path, suffix: &str) -> Option<(PathBuf, String)> {
    let entries = std::fs::read_dir(folder).ok()?;
    let mut names: Vec<String> = entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str().map(str::to_string))
        .filter(|name| name.ends_with(suffix))
        .collect();
    names.sort();
    let name = names.pop()?;
    Some((folder.join(&name), name))
}

/// Put `files` (from [`collect`] on another machine) where `pi --session ID`
/// run in `cwd` with `agent_dir` finds them, their header naming `cwd`.
pub(crate) fn install(files: &[SessionFile], cwd: &Path, agent_dir: &Path) -> Result<(), SessionFilesError> {
    let cwd_text = real_cwd(cwd).to_string_lossy().into_owned();
    let rewritten: Vec<SessionFile> = files
        .iter()
        .map(|file| SessionFile { path: file.path.clone(), bytes: with_first_cwd(&file.bytes, &cwd_text) })
        .collect();
    write_files(&sessions_dir(agent_dir, cwd), &rewritten)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn the_folder_is_pis_name_for_the_working_directory() {
        let agent = Path::new("/agent");
        assert_eq!(sessions_dir(agent, Path::new("/no/such/wd:1")), Path::new("/agent/sessions/--no-such-wd-1--"));
    }

    #[test]
    fn a_session_installed_elsewhere_names_the_new_working_directory_in_its_header() {
        let a = tempfile::tempdir().expect("a");
        let b = tempfile::tempdir().expect("b");
        let (cwd_a, cwd_b) = (a.path().join("wd"), b.path().join("other"));
        std::fs::create_dir_all(&cwd_a).expect("cwd a");
        std::fs::create_dir_all(&cwd_b).expect("cwd b");
        let folder = sessions_dir(&a.path().join("agent"), &cwd_a);
        std::fs::create_dir_all(&folder).expect("folder");
        let header = format!(
            "{{\"type\":\"session\",\"version\":3,\"id\":\"p-1\",\"cwd\":{}}}\n",
            serde_json::to_string(&real_cwd(&cwd_a)).expect("cwd")
        );
        let message = "{\"type\":\"message\",\"cwd\":\"/kept\"}\n";
        std::fs::write(folder.join("2026-11-25T10-00-00-000Z_p-1.jsonl"), format!("{header}{message}"))
            .expect("session");

        let files = collect("p-1", &cwd_a, &a.path().join("agent")).expect("collected");
        assert_eq!(files.len(), 1);
        install(&files, &cwd_b, &b.path().join("agent")).expect("installed");
        let installed = sessions_dir(&b.path().join("agent"), &cwd_b).join("2026-11-25T10-00-00-000Z_p-1.jsonl");
        let text = std::fs::read_to_string(installed).expect("read");
        let mut lines = text.lines();
        let header: Value = serde_json::from_str(lines.next().expect("header")).expect("json");
        assert_eq!(header["cwd"], real_cwd(&cwd_b).to_string_lossy().as_ref());
        assert_eq!(header["id"], "p-1");
        assert_eq!(lines.next(), Some(message.trim_end()));
    }
}
