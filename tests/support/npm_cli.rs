//! A pinned npm CLI for end-to-end tests (Claude Code, pi, Codex), installed on
//! first use into `<target dir>/<dir name>/`, or the executable an override
//! variable names.
//!
//! The three CLIs install the same way, so the way lives here once: one
//! attempt per test process (a `OnceLock` in the [`NpmCli`]), an `flock` on
//! `<dir>/.install.lock` so parallel test binaries share one installation, and a
//! failure reported in one line that names the way out, so a missing registry
//! fails every test at once instead of retrying npm in each. `tests/run`
//! installs the same pinned versions before `cargo test`, reading them from the
//! version consts in `claude_cli.rs`, `pi_cli.rs` and `codex_cli.rs`.

#![allow(dead_code)] // A toolkit: each test uses part of it.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

/// How to tell that an installed binary is the pinned version.
pub(crate) enum VersionCheck {
    /// `binary --version` (with `env` set) prints the version as its
    /// whitespace-separated word number `word` (0-based).
    Output { word: usize, env: &'static [(&'static str, &'static str)] },
    /// The `package.json` next to the binary's script names the package and
    /// version (for a CLI whose `--version` is slow to start).
    PackageJson,
}

/// One pinned CLI from npm.
pub(crate) struct NpmCli {
    /// The npm package, e.g. `@openai/codex`.
    pub(crate) package: &'static str,
    pub(crate) version: &'static str,
    /// The executable in `node_modules/.bin/`, e.g. `codex`.
    pub(crate) binary: &'static str,
    /// The install directory's name under the target dir, e.g. `codex-cli`.
    pub(crate) dir_name: &'static str,
    /// The variable that overrides the install, e.g. `BATON_TEST_CODEX_BIN`.
    pub(crate) override_var: &'static str,
    pub(crate) version_check: VersionCheck,
    /// A script (relative to the install dir) to run with `node` when npm left
    /// the binary unfinished (npm may skip a package's postinstall).
    pub(crate) postinstall: Option<&'static str>,
    /// The outcome of this process's one install attempt.
    pub(crate) installed: OnceLock<Result<PathBuf, String>>,
}

impl NpmCli {
    /// The override variable's executable, or the pinned CLI installed on first
    /// use. The install is tried once per test run: when it fails, every later
    /// test fails at once with the same one-line reason.
    pub(crate) fn binary_path(&self) -> PathBuf {
        if let Some(binary) = std::env::var_os(self.override_var).filter(|value| !value.is_empty()) {
            return PathBuf::from(binary);
        }
        match self.installed.get_or_init(|| self.install(Path::new("npm"), &self.install_dir())) {
            Ok(binary) => binary.clone(),
            Err(reason) => panic!("{reason}"),
        }
    }

    /// `<CARGO_TARGET_DIR or the target dir of this build>/<dir name>`.
    pub(crate) fn install_dir(&self) -> PathBuf {
        let target = match std::env::var_os("CARGO_TARGET_DIR").filter(|value| !value.is_empty()) {
            Some(target) => PathBuf::from(target),
            // Cargo sets CARGO_TARGET_TMPDIR to `<target dir>/tmp` for integration tests.
            None => Path::new(env!("CARGO_TARGET_TMPDIR")).parent().expect("target dir").to_path_buf(),
        };
        target.join(self.dir_name)
    }

    /// Install the pinned CLI into `dir` with `npm`, or say in one line why not.
    pub(crate) fn install(&self, npm: &Path, dir: &Path) -> Result<PathBuf, String> {
        let binary = dir.join("node_modules/.bin").join(self.binary);
        if self.is_pinned_version(&binary) {
            return Ok(binary);
        }
        let package = format!("{}@{}", self.package, self.version);
        let failed = |why: String| {
            format!(
                "cannot install {package} for the end-to-end tests into {}: {why}; make the npm registry reachable, \
                 or set {} to a {} {} executable",
                dir.display(),
                self.override_var,
                self.binary,
                self.version
            )
        };
        std::fs::create_dir_all(dir).map_err(|error| failed(format!("cannot create it: {error}")))?;
        let lock_path = dir.join(".install.lock");
        let lock = File::create(&lock_path)
            .map_err(|error| failed(format!("cannot create {}: {error}", lock_path.display())))?;
        // Blocks while another test binary installs; released when `lock` closes.
        // SAFETY: flock on a descriptor this function owns.
        if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) } != 0 {
            return Err(failed(format!("cannot lock {}: {}", lock_path.display(), std::io::Error::last_os_error())));
        }
        if self.is_pinned_version(&binary) {
            return Ok(binary);
        }
        eprintln!("installing {package} into {} (first use)", dir.display());
        // SCARF_ANALYTICS: restate-server's install-time download counter stays off (as in tests/run).
        let output = output_once_not_busy(
            Command::new(npm)
                .env("SCARF_ANALYTICS", "false")
                .args(["install", "--no-audit", "--no-fund", "--prefix"])
                .arg(dir)
                .arg(&package),
        )
        .map_err(|error| failed(format!("cannot run {}: {error} (install Node.js and npm)", npm.display())))?;
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let last = stderr.lines().rev().find(|line| !line.trim().is_empty()).unwrap_or("no output");
            return Err(failed(format!("npm install failed ({}): {}", output.status, last.trim())));
        }
        if let Some(script) = self.postinstall
            && !self.is_pinned_version(&binary)
        {
            let script = dir.join(script);
            let status = Command::new("node").arg(&script).status();
            if !status.as_ref().is_ok_and(std::process::ExitStatus::success) {
                return Err(failed(format!("{} failed ({status:?})", script.display())));
            }
        }
        if !self.is_pinned_version(&binary) {
            return Err(failed(format!("{} is not version {}", binary.display(), self.version)));
        }
        Ok(binary)
    }

    fn is_pinned_version(&self, binary: &Path) -> bool {
        match self.version_check {
            VersionCheck::Output { word, env } => {
                binary.exists()
                    && Command::new(binary).arg("--version").envs(env.iter().copied()).output().is_ok_and(|output| {
                        String::from_utf8_lossy(&output.stdout).split_whitespace().nth(word) == Some(self.version)
                    })
            }
            VersionCheck::PackageJson => {
                let Ok(script) = std::fs::canonicalize(binary) else { return false };
                script.ancestors().skip(1).take(4).any(|dir| {
                    std::fs::read_to_string(dir.join("package.json"))
                        .ok()
                        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
                        .is_some_and(|package| package["name"] == self.package && package["version"] == self.version)
                })
            }
        }
    }
}

/// Run `command` to its end, waiting while its executable is open for writing.
///
/// A test that writes an executable and runs it at once (a stand-in `npm`) can be
/// refused with `ETXTBSY`: another test's thread that forks while the file is still
/// open hands the child a copy of the writing descriptor, held until that child's
/// own `exec` (rust-lang/rust#114554). The copy goes within milliseconds, so the
/// spawn is tried again for up to two seconds.
fn output_once_not_busy(command: &mut Command) -> std::io::Result<std::process::Output> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    loop {
        match command.output() {
            Err(error)
                if error.kind() == std::io::ErrorKind::ExecutableFileBusy && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            done => return done,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::BufRead;

    use super::super::{claude_cli, codex_cli, pi_cli};

    /// A directory with a stand-in `npm` that prints `error` and exits 1.
    fn failing_npm(error: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let npm = dir.path().join("npm");
        std::fs::write(&npm, format!("#!/bin/sh\necho '{error}' >&2\nexit 1\n")).unwrap();
        std::fs::set_permissions(&npm, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        (dir, npm)
    }

    /// Regression: without a reachable registry every Claude test retried the
    /// install (about 70 s each, 19 minutes in all). A failing install is tried
    /// once and reported in one line naming the way out, for every CLI.
    #[test]
    fn a_failed_install_is_reported_in_one_line() {
        let (dir, npm) = failing_npm("npm error network request failed");
        for (cli, name) in [(&claude_cli::CLAUDE, "claude"), (&pi_cli::PI, "pi"), (&codex_cli::CODEX, "codex")] {
            let reason = cli.install(&npm, &dir.path().join(cli.dir_name)).unwrap_err();
            assert!(!reason.contains('\n'), "{reason}");
            assert!(reason.starts_with(&format!("cannot install {}@{}", cli.package, cli.version)), "{reason}");
            assert!(
                reason.contains("npm install failed (exit status: 1): npm error network request failed;"),
                "{reason}"
            );
            assert!(reason.ends_with(&format!("or set {} to a {name} {} executable", cli.override_var, cli.version)));
        }
    }

    /// Regression: CI failed this file's other test with "cannot run …/npm: Text file
    /// busy" — a thread of another test forked while the stand-in `npm` was being
    /// written. An `npm` still open for writing in another process is run once that
    /// process lets it go.
    #[test]
    fn an_npm_still_open_for_writing_elsewhere_is_run_once_it_is_let_go() {
        let (dir, npm) = failing_npm("npm error offline");
        // A process holding `npm` open for writing for a tenth of a second.
        let mut holder = std::process::Command::new("sh")
            .args(["-c", "exec 3>>\"$0\"; echo open; sleep 0.1", &npm.to_string_lossy()])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(holder.stdout.take().unwrap()).read_line(&mut line).unwrap();
        assert_eq!(line, "open\n");
        let reason = claude_cli::CLAUDE.install(&npm, &dir.path().join("claude-code")).unwrap_err();
        assert!(reason.contains("npm install failed (exit status: 1): npm error offline;"), "{reason}");
        holder.wait().unwrap();
    }
}
