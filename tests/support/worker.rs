//! A `baton worker` for the distributed tests: the step service Restate calls,
//! on a free loopback port, its output in a log file, killed (SIGKILL) at will
//! or when dropped.
//!
//! It is started without `--register`: tests put workers behind one
//! [`Haproxy`](super::haproxy::Haproxy) and register the balancer's URI once
//! (registering each worker would pin every invocation to the newest one).

#![allow(dead_code)] // A toolkit: each test uses part of it.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use super::loopback::{free_port, is_listening, kill_child, log_tail, wait_until};

/// A running `baton worker`.
pub(crate) struct Worker {
    name: String,
    address: SocketAddr,
    dir: tempfile::TempDir,
    child: Child,
}

impl Worker {
    /// `baton worker --listen 127.0.0.1:<free port> --name NAME EXTRA…`, waiting
    /// until it accepts connections.
    pub(crate) fn start(baton_bin: &Path, name: &str, extra_args: &[&str]) -> Worker {
        Worker::start_with_env(baton_bin, name, extra_args, &[])
    }

    /// [`Worker::start`] with more environment variables for the worker (and so
    /// for the steps it runs).
    pub(crate) fn start_with_env(baton_bin: &Path, name: &str, extra_args: &[&str], env: &[(&str, &str)]) -> Worker {
        let dir = tempfile::Builder::new().prefix("baton-worker-").tempdir().expect("worker temp dir");
        let address = SocketAddr::from(([127, 0, 0, 1], free_port()));
        let log_path = dir.path().join("worker.log");
        let log = std::fs::File::create(&log_path).expect("worker log");
        let mut command = Command::new(baton_bin);
        command
            .arg("worker")
            .arg("--listen")
            .arg(address.to_string())
            .args(["--name", name])
            .args(extra_args)
            .env_remove("BATON_LOG")
            .env("NO_COLOR", "1")
            .env("BATON_SYNC_IN_MEMORY", "1")
            .env("BATON_BIN", baton_bin)
            // A step's input directory is a temp dir; a test that kills the worker
            // leaves it behind, in the worker's own dir rather than the machine's /tmp.
            .env("TMPDIR", dir.path())
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("worker log"))
            .stderr(log);
        command.envs(env.iter().copied());
        let mut child =
            command.spawn().unwrap_or_else(|error| panic!("cannot start {} worker: {error}", baton_bin.display()));
        wait_until(&format!("worker `{name}`"), &mut child, &log_path, || is_listening(address));
        Worker { name: name.to_string(), address, dir, child }
    }

    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    pub(crate) fn address(&self) -> SocketAddr {
        self.address
    }

    /// `http://127.0.0.1:<port>`: the URI to register when it runs alone.
    pub(crate) fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    pub(crate) fn log_path(&self) -> PathBuf {
        self.dir.path().join("worker.log")
    }

    /// The last lines the worker printed, for a failure message.
    pub(crate) fn log_tail(&self, lines: usize) -> String {
        log_tail(&self.log_path(), lines)
    }

    /// SIGKILL the worker: no drain, its streams to Restate cut.
    pub(crate) fn kill(&mut self) {
        kill_child(&mut self.child);
    }

    /// Whether the worker still runs.
    pub(crate) fn is_running(&mut self) -> bool {
        self.child.try_wait().ok().flatten().is_none()
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        kill_child(&mut self.child);
    }
}
