//! A backend session's files, carried between machines (`docs/distributed-files.md`).
//!
//! An agent CLI keeps its conversation in files under its own home (`~/.claude`,
//! `~/.pi/agent`, `~/.codex`), often in a folder named after the working
//! directory. A later turn on another machine can continue (or fork) the
//! conversation only if those files are there, under the name that machine's
//! working directory gives them. Each backend's folder knows where its files
//! are (`claude/session_files.rs`, `pi/…`, `codex/…`); this module holds what
//! they share: the file as it travels (a path relative to the backend's session
//! folder, never absolute, so it is placed again under the receiver's names),
//! the size bound, and writing files so that a reader never sees half of one.

use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::bounded_read::read_at_most;
use crate::ids::BackendName;

const MIB: u64 = 1024 * 1024;
/// The most one session's files may hold together; a larger session is not
/// carried and the next turn starts a fresh conversation (with a notice).
pub(crate) const MAX_SESSION_BYTES: u64 = 32 * MIB;

/// One file of a session: where it goes, relative to the backend's session
/// folder for the receiving machine's working directory (`/`-separated, no
/// `..`), and its bytes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SessionFile {
    pub(crate) path: String,
    #[serde(with = "base64_bytes")]
    pub(crate) bytes: Vec<u8>,
}

/// Why a session's files cannot be collected or installed. Every variant but
/// [`SessionFilesError::Install`] means "the next turn starts a fresh
/// conversation" ([`SessionFilesError::fallback_notice`]).
#[derive(Debug, thiserror::Error)]
pub(crate) enum SessionFilesError {
    #[error("{backend} session `{session}` has no files under {}", .looked_in.display())]
    NotFound { backend: BackendName, session: String, looked_in: PathBuf },
    #[error(
        "{backend} session `{session}` is {size} bytes, more than the {} MiB a session may carry to another machine",
        MAX_SESSION_BYTES / MIB
    )]
    TooLarge { backend: BackendName, session: String, size: u64 },
    #[error("{backend} session `{session}` cannot be carried to another machine: {reason}")]
    NotPortable { backend: BackendName, session: String, reason: String },
    #[error("cannot read {}: {reason}", .path.display())]
    Unreadable { path: PathBuf, reason: String },
    #[error("refusing session file `{path}`: {reason}")]
    BadPath { path: String, reason: &'static str },
    #[error("cannot write {}: {reason}", .path.display())]
    Install { path: PathBuf, reason: String },
}

impl SessionFilesError {
    /// The line a run shows when a session could not travel: the conversation
    /// starts afresh rather than the step failing.
    pub(crate) fn fallback_notice(&self) -> String {
        format!("{self}; the agent's next turn starts a fresh conversation")
    }
}

/// Read `files` (absolute path, path to travel under), at most
/// [`MAX_SESSION_BYTES`] together.
pub(crate) fn read_files(
    backend: BackendName,
    session: &str,
    files: &[(PathBuf, String)],
) -> Result<Vec<SessionFile>, SessionFilesError> {
    let mut total: u64 = 0;
    let mut read = Vec::with_capacity(files.len());
    for (path, relative) in files {
        let unreadable = |reason: String| SessionFilesError::Unreadable { path: path.clone(), reason };
        let size = std::fs::metadata(path).map_err(|error| unreadable(error.to_string()))?.len();
        let too_large = |size: u64| SessionFilesError::TooLarge { backend, session: session.to_string(), size };
        if total.saturating_add(size) > MAX_SESSION_BYTES {
            return Err(too_large(total.saturating_add(size)));
        }
        let left = MAX_SESSION_BYTES - total;
        let bytes = std::fs::File::open(path)
            .and_then(|file| read_at_most(file, left))
            .map_err(|error| unreadable(error.to_string()))?
            // It grew while being read.
            .ok_or_else(|| too_large(MAX_SESSION_BYTES + 1))?;
        total += bytes.len() as u64;
        read.push(SessionFile { path: relative.clone(), bytes });
    }
    Ok(read)
}

/// The files under `dir` (recursively), as (absolute path, `prefix/relative`),
/// sorted; symlinks are not followed.
pub(crate) fn files_under(dir: &Path, prefix: &str) -> Result<Vec<(PathBuf, String)>, SessionFilesError> {
    let mut found = Vec::new();
    let mut pending = vec![(dir.to_path_buf(), prefix.to_string())];
    while let Some((dir, prefix)) = pending.pop() {
        let unreadable =
            |error: std::io::Error| SessionFilesError::Unreadable { path: dir.clone(), reason: error.to_string() };
        for entry in std::fs::read_dir(&dir).map_err(unreadable)? {
            let entry = entry.map_err(unreadable)?;
            let Some(name) = entry.file_name().to_str().map(str::to_string) else { continue };
            let kind = entry.file_type().map_err(unreadable)?;
            let relative = format!("{prefix}/{name}");
            if kind.is_dir() {
                pending.push((entry.path(), relative));
            } else if kind.is_file() {
                found.push((entry.path(), relative));
            }
        }
    }
    found.sort_by(|a, b| a.1.cmp(&b.1));
    Ok(found)
}

/// Write `files` under `root`, each to a temporary file renamed into place (a
/// CLI reading the session never sees half a file). A path that is absolute or
/// climbs out (`..`) is refused before anything is written.
pub(crate) fn write_files(root: &Path, files: &[SessionFile]) -> Result<(), SessionFilesError> {
    let mut targets = Vec::with_capacity(files.len());
    for file in files {
        targets.push(root.join(checked_relative(&file.path)?));
    }
    for (file, target) in files.iter().zip(targets) {
        let failed =
            |error: std::io::Error| SessionFilesError::Install { path: target.clone(), reason: error.to_string() };
        let parent = target.parent().unwrap_or(root);
        std::fs::create_dir_all(parent).map_err(failed)?;
        let mut temporary = tempfile::NamedTempFile::new_in(parent).map_err(failed)?;
        std::io::Write::write_all(&mut temporary, &file.bytes).map_err(failed)?;
        temporary.persist(&target).map_err(|error| failed(error.error))?;
    }
    Ok(())
}

/// `path` as a relative path with normal components only.
fn checked_relative(path: &str) -> Result<PathBuf, SessionFilesError> {
    let bad = |reason| SessionFilesError::BadPath { path: path.to_string(), reason };
    if path.is_empty() {
        return Err(bad("it is empty"));
    }
    let relative = Path::new(path);
    for component in relative.components() {
        match component {
            Component::Normal(_) => {}
            Component::CurDir | Component::ParentDir => return Err(bad("it climbs out of the session folder")),
            Component::RootDir | Component::Prefix(_) => return Err(bad("it is absolute")),
        }
    }
    Ok(relative.to_path_buf())
}

/// `bytes` (JSON lines) with the first top-level `"cwd"` (pi's session header)
/// set to `cwd`. Only that value changes; every other byte of the file stays
/// as it was (a line that is not JSON too).
pub(crate) fn with_first_cwd(bytes: &[u8], cwd: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut done = false;
    for line in bytes.split_inclusive(|byte| *byte == b'\n') {
        let found = if done {
            None
        } else {
            serde_json::from_slice::<serde_json::Value>(line)
                .ok()
                .and_then(|value| value.get("cwd").and_then(serde_json::Value::as_str).map(str::to_string))
        };
        let Some(found) = found else {
            out.extend(line);
            continue;
        };
        let text = |value: &str| format!("\"cwd\":{}", serde_json::Value::String(value.to_string()));
        let (from, to) = (text(&found), text(cwd));
        match find(line, from.as_bytes()) {
            Some(at) => {
                out.extend(&line[..at]);
                out.extend(to.as_bytes());
                out.extend(&line[at + from.len()..]);
            }
            None => out.extend(line),
        }
        done = true;
    }
    out
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|window| window == needle)
}

/// A home-relative default: `$HOME/<tail>`.
/// A CLI's own folder: `variable` from the step's environment, else from Baton's,
/// else `~/<home_tail>` (Claude Code's `CLAUDE_CONFIG_DIR`, pi's `PI_CODING_AGENT_DIR`).
pub(crate) fn cli_dir(
    step_env: &std::collections::BTreeMap<String, String>,
    variable: &str,
    home_tail: &str,
) -> Option<PathBuf> {
    if let Some(dir) = step_env.get(variable).filter(|dir| !dir.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    if let Some(dir) = std::env::var_os(variable).filter(|dir| !dir.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    under_home(home_tail)
}

pub(crate) fn under_home(tail: &str) -> Option<PathBuf> {
    std::env::var_os("HOME").filter(|home| !home.is_empty()).map(|home| Path::new(&home).join(tail))
}

/// The working directory as the CLI sees it (symlinks resolved), or as given
/// when it cannot be resolved (it does not exist on this machine yet).
pub(crate) fn real_cwd(cwd: &Path) -> PathBuf {
    std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf())
}

/// Bytes as one base64 string in JSON: a quarter larger, not four times as an
/// array of numbers would be (`#[serde(with = …)]`; the workflow bundle's zip too).
pub(crate) mod base64_bytes {
    use base64::Engine;
    use base64::engine::general_purpose::STANDARD;
    use serde::{Deserialize, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&STANDARD.encode(bytes))
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(deserializer)?;
        STANDARD.decode(text.as_bytes()).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_that_climbs_out_or_is_absolute_is_refused_before_anything_is_written() {
        let root = tempfile::tempdir().expect("root");
        let files = vec![
            SessionFile { path: "ok.jsonl".into(), bytes: b"{}\n".to_vec() },
            SessionFile { path: "../escape.jsonl".into(), bytes: b"x".to_vec() },
        ];
        let error = write_files(root.path(), &files).expect_err("refused");
        assert_eq!(error.to_string(), "refusing session file `../escape.jsonl`: it climbs out of the session folder");
        assert!(!root.path().join("ok.jsonl").exists());
        let absolute = [SessionFile { path: "/etc/x".into(), bytes: Vec::new() }];
        assert_eq!(
            write_files(root.path(), &absolute).expect_err("refused").to_string(),
            "refusing session file `/etc/x`: it is absolute"
        );
    }

    #[test]
    fn files_travel_as_base64_and_are_written_under_nested_folders() {
        let file = SessionFile { path: "s/subagents/a.jsonl".into(), bytes: vec![0, 255, b'\n'] };
        let json = serde_json::to_string(&file).expect("json");
        assert_eq!(json, r#"{"path":"s/subagents/a.jsonl","bytes":"AP8K"}"#);
        let back: SessionFile = serde_json::from_str(&json).expect("back");
        let root = tempfile::tempdir().expect("root");
        write_files(root.path(), &[back]).expect("written");
        assert_eq!(std::fs::read(root.path().join("s/subagents/a.jsonl")).expect("read"), vec![0, 255, b'\n']);
    }

    #[test]
    fn with_first_cwd_changes_that_value_and_no_other_byte() {
        let text = "not json\n{\"type\":\"session\",\"cwd\":\"/a/x\",\"n\":\"cwd /a/x\"}\n{\"cwd\":\"/a/x\"}";
        let moved = String::from_utf8(with_first_cwd(text.as_bytes(), "/b \"y\"")).expect("utf8");
        assert_eq!(
            moved,
            "not json\n{\"type\":\"session\",\"cwd\":\"/b \\\"y\\\"\",\"n\":\"cwd /a/x\"}\n{\"cwd\":\"/a/x\"}"
        );
    }

    #[test]
    fn a_session_over_the_bound_is_refused_with_its_name_and_the_fallback() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("big.jsonl");
        let file = std::fs::File::create(&path).expect("create");
        file.set_len(MAX_SESSION_BYTES + 1).expect("sparse");
        let error = read_files(BackendName::Claude, "s-1", &[(path, "big.jsonl".into())]).expect_err("too large");
        assert_eq!(
            error.fallback_notice(),
            "claude session `s-1` is 33554433 bytes, more than the 32 MiB a session may carry to another machine; \
             the agent's next turn starts a fresh conversation"
        );
    }
}
