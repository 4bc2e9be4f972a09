//! One daemon per project. `baton serve` holds an exclusive `flock` on
//! `.baton/serve/daemon.lock` for its whole life, with its pid (and, once it
//! listens, its URL) written in it. A second daemon on the same `.baton` finds the
//! lock taken and exits before touching anything (the token, the address file, the
//! runs the first one drives), naming the first one. The kernel drops the lock when
//! its holder dies, however it dies, so a daemon killed with SIGKILL never blocks
//! the next one: no pid guessing, no stale file to clean up by hand.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::serve::ServeError;
use crate::store::lock::{open, try_lock};

pub(crate) const DAEMON_LOCK_FILE: &str = "daemon.lock";

/// Held while the daemon lives; dropped (and so released) when it ends.
pub(crate) struct DaemonLock {
    file: File,
    path: PathBuf,
}

impl DaemonLock {
    /// Take the project's daemon lock in `serve_dir`, or say which daemon holds it.
    pub(crate) fn acquire(serve_dir: &Path) -> Result<DaemonLock, ServeError> {
        let path = serve_dir.join(DAEMON_LOCK_FILE);
        let failed = |source| ServeError::Write { path: path.clone(), source };
        std::fs::create_dir_all(serve_dir).map_err(|source| ServeError::Write { path: serve_dir.into(), source })?;
        let mut file = open(&path).map_err(failed)?;
        if !try_lock(&file).map_err(failed)? {
            let mut said = String::new();
            let _ = file.read_to_string(&mut said);
            let mut lines = said.lines().map(str::trim);
            let pid = lines.next().filter(|pid| !pid.is_empty()).unwrap_or("unknown").to_string();
            let address = lines.next().filter(|url| !url.is_empty()).unwrap_or("an address not known yet").to_string();
            let baton_dir = serve_dir.parent().unwrap_or(serve_dir).to_path_buf();
            return Err(ServeError::AlreadyServing { pid, address, baton_dir });
        }
        let mut lock = DaemonLock { file, path };
        lock.record(None)?;
        Ok(lock)
    }

    /// Write this daemon's pid, and its URL once it listens.
    pub(crate) fn record(&mut self, url: Option<&str>) -> Result<(), ServeError> {
        let text = format!("{}\n{}\n", std::process::id(), url.unwrap_or_default());
        let written = self
            .file
            .set_len(0)
            .and_then(|()| self.file.seek(SeekFrom::Start(0)))
            .and_then(|_| self.file.write_all(text.as_bytes()));
        written.map_err(|source| ServeError::Write { path: self.path.clone(), source })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_daemon_is_refused_with_the_first_ones_pid_and_address() {
        let dir = tempfile::tempdir().unwrap();
        let serve_dir = dir.path().join("serve");
        let mut first = DaemonLock::acquire(&serve_dir).unwrap();
        first.record(Some("http://127.0.0.1:7420")).unwrap();
        let error = DaemonLock::acquire(&serve_dir).err().expect("refused");
        let pid = std::process::id();
        assert_eq!(
            error.to_string(),
            format!(
                "another baton serve (pid {pid}, http://127.0.0.1:7420) already serves the runs in {}; use that \
                 one, or stop it first (`kill -TERM {pid}`)",
                dir.path().display()
            )
        );
        drop(first);
        assert!(DaemonLock::acquire(&serve_dir).is_ok(), "free again once the first one is gone");
    }
}
