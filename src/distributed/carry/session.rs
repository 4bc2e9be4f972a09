//! One backend's session files, by the backend's name: the dispatch from a
//! session (which backend made it) to `backend::<name>::session_files`, and the
//! home each backend keeps them under on this machine.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::backend::session_files::{SessionFile, SessionFilesError};
use crate::backend::{claude, codex, pi};
use crate::ids::BackendName;

/// A session and its files as they travel.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ShippedSession {
    pub(crate) backend: BackendName,
    pub(crate) session: String,
    pub(crate) files: Vec<SessionFile>,
}

/// Where `backend` keeps its sessions on this machine, for a step whose
/// environment is `step_env` (`CLAUDE_CONFIG_DIR`, `PI_CODING_AGENT_DIR`,
/// `CODEX_HOME`, else under `HOME`).
pub(crate) fn home(backend: BackendName, step_env: &BTreeMap<String, String>) -> Option<PathBuf> {
    match backend {
        BackendName::Claude => claude::session_files::config_dir(step_env),
        BackendName::Pi => pi::session_files::agent_dir(step_env),
        BackendName::Codex => codex::session_files::codex_home(step_env),
    }
}

/// Collect `session` of `backend`, made in `cwd`.
pub(crate) fn collect(
    backend: BackendName,
    session: &str,
    cwd: &Path,
    step_env: &BTreeMap<String, String>,
) -> Result<ShippedSession, SessionFilesError> {
    let home = home(backend, step_env).ok_or_else(|| no_home(backend, session))?;
    let files = match backend {
        BackendName::Claude => claude::session_files::collect(session, cwd, &home),
        BackendName::Pi => pi::session_files::collect(session, cwd, &home),
        BackendName::Codex => codex::session_files::collect(session, cwd, &home),
    }?;
    Ok(ShippedSession { backend, session: session.to_string(), files })
}

/// Install `shipped` where its backend, run in `cwd`, finds it.
pub(crate) fn install(
    shipped: &ShippedSession,
    cwd: &Path,
    step_env: &BTreeMap<String, String>,
) -> Result<(), SessionFilesError> {
    let home = home(shipped.backend, step_env).ok_or_else(|| no_home(shipped.backend, &shipped.session))?;
    match shipped.backend {
        BackendName::Claude => claude::session_files::install(&shipped.files, cwd, &home),
        BackendName::Pi => pi::session_files::install(&shipped.files, cwd, &home),
        BackendName::Codex => codex::session_files::install(&shipped.files, cwd, &home),
    }
}

fn no_home(backend: BackendName, session: &str) -> SessionFilesError {
    SessionFilesError::NotPortable {
        backend,
        session: session.to_string(),
        reason: "this machine has no HOME (nor the backend's own home variable) to keep it under".to_string(),
    }
}
