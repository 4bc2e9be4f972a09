//! A real `restate-server` for the distributed tests (issue 21), pinned to one
//! version, installed from npm on first use, started on free loopback ports in
//! a temporary base directory, and killed (SIGKILL) and restarted at will.
//!
//! The server is cached in `<target dir>/restate-server/` (`tests/run` installs
//! the same pinned version there before `cargo test`, reading it from
//! [`RESTATE_SERVER_VERSION`]). What runs is the **native** binary of the
//! platform package (`node_modules/@restatedev/restate-server-linux-x64/bin/`),
//! never `node_modules/.bin/restate-server`: that is a Node launcher, and a
//! SIGKILL sent to it would leave the server running. `BATON_TEST_RESTATE_BIN`
//! names another native binary instead.
//!
//! A [`RestateServer`] keeps its ports and base directory for its lifetime, so
//! [`RestateServer::restart`] brings back the same server with its journal,
//! registered deployments and invocations; dropping it kills it. Its
//! stdout and stderr go to `server.log` in its directory, whose tail is shown
//! when it fails to start.

#![allow(dead_code)] // A toolkit: each test uses part of it.

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, MutexGuard, OnceLock};

use serde_json::Value;

use super::loopback::{free_ports, http_get, http_post_json, kill_child, log_tail, wait_until};
use super::npm_cli::{NpmCli, VersionCheck};

/// The restate-server version every distributed test runs (also read by `tests/run`).
pub(crate) const RESTATE_SERVER_VERSION: &str = "1.7.12";

/// Overrides the installed server with this native executable.
pub(crate) const RESTATE_BIN_VAR: &str = "BATON_TEST_RESTATE_BIN";

/// The pinned server; `--version` prints `restate-server <RESTATE_SERVER_VERSION>`.
pub(crate) static RESTATE: NpmCli = NpmCli {
    package: "@restatedev/restate-server",
    version: RESTATE_SERVER_VERSION,
    binary: "restate-server",
    dir_name: "restate-server",
    override_var: RESTATE_BIN_VAR,
    version_check: VersionCheck::Output { word: 1, env: &[] },
    postinstall: None,
    installed: OnceLock::new(),
};

/// The native server binary: `BATON_TEST_RESTATE_BIN`, or the pinned package's
/// platform binary, installed on first use.
pub(crate) fn restate_server_binary() -> PathBuf {
    let launcher = RESTATE.binary_path();
    if std::env::var_os(RESTATE_BIN_VAR).is_some_and(|value| !value.is_empty()) {
        return launcher;
    }
    let native = RESTATE.install_dir().join(native_binary_path());
    assert!(
        native.is_file(),
        "{} has no native server at {} (npm installs it as an optional dependency for this platform); \
         set {RESTATE_BIN_VAR} to a restate-server {RESTATE_SERVER_VERSION} executable",
        RESTATE.install_dir().display(),
        native.display()
    );
    native
}

/// The native binary's path inside the install directory, for this platform.
fn native_binary_path() -> String {
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        other => other,
    };
    format!("node_modules/@restatedev/restate-server-{}-{arch}/bin/restate-server", std::env::consts::OS)
}

/// One server (about 270 MB, and its workers) at a time in a test process: the
/// machine is small and shared, and a distributed test bounds its waits.
pub(crate) fn exclusive() -> MutexGuard<'static, ()> {
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    ONE_AT_A_TIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// How to start a server.
#[derive(Clone, Debug, Default)]
pub(crate) struct RestateOptions {
    /// The invoker's inactivity and abort timeouts at 2 s and 3 s instead of
    /// 1 min and 10 min: a journaled action longer than their sum is aborted
    /// and retried unless its service declares longer ones.
    pub(crate) short_invoker_timeouts: bool,
    /// More variables for the server (`RESTATE_…`).
    pub(crate) env: Vec<(String, String)>,
}

impl RestateOptions {
    pub(crate) fn short_invoker_timeouts() -> RestateOptions {
        RestateOptions { short_invoker_timeouts: true, ..RestateOptions::default() }
    }
}

/// A running (or killed, until restarted) restate-server on loopback.
pub(crate) struct RestateServer {
    dir: tempfile::TempDir,
    binary: PathBuf,
    options: RestateOptions,
    ingress_port: u16,
    admin_port: u16,
    node_port: u16,
    child: Option<Child>,
}

impl RestateServer {
    /// Start a server on three free loopback ports (ingress, admin, node) with a
    /// fresh base directory, and wait until it is healthy and its partitions
    /// answer queries. Fails the test with the server's log tail when it does not
    /// come up in time.
    pub(crate) fn start(options: RestateOptions) -> RestateServer {
        let binary = restate_server_binary();
        let dir = tempfile::Builder::new().prefix("restate-").tempdir().expect("restate temp dir");
        let ports = free_ports(3);
        let mut server = RestateServer {
            dir,
            binary,
            options,
            ingress_port: ports[0],
            admin_port: ports[1],
            node_port: ports[2],
            child: None,
        };
        server.spawn();
        server
    }

    /// `http://127.0.0.1:<ingress port>`: where `baton run --engine restate=` points.
    pub(crate) fn ingress_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.ingress_port)
    }

    /// `restate=<ingress URL>`: `baton run`'s `--engine`.
    pub(crate) fn engine(&self) -> String {
        format!("restate={}", self.ingress_url())
    }

    /// `http://127.0.0.1:<admin port>`: where workers `--register`.
    pub(crate) fn admin_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.admin_port)
    }

    /// The server's log (stdout and stderr of every start).
    pub(crate) fn log_path(&self) -> PathBuf {
        self.dir.path().join("server.log")
    }

    /// The server's process id while it runs.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// SIGKILL the server (no shutdown: what a crash or an OOM kill does).
    pub(crate) fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            kill_child(&mut child);
        }
    }

    /// Kill the server if it runs and start it again on the same ports and base
    /// directory (its journal, deployments and invocations kept); waits until it
    /// is healthy again.
    pub(crate) fn restart(&mut self) {
        self.kill();
        self.spawn();
    }

    /// Register the deployment at `uri` (`POST admin/deployments`); the admin
    /// API's answer. Fails the test when the server refuses it.
    #[track_caller]
    pub(crate) fn register(&self, uri: &str) -> Value {
        let body = serde_json::json!({ "uri": uri }).to_string();
        let url = format!("{}/deployments", self.admin_url());
        match http_post_json(&url, &body) {
            Ok((status, answer)) if (200..300).contains(&status) => {
                serde_json::from_str(&answer).unwrap_or_else(|error| panic!("POST {url}: {error} in {answer}"))
            }
            Ok((status, answer)) => panic!("POST {url} {body}: {status} {answer}"),
            Err(error) => panic!("POST {url} {body}: {error}"),
        }
    }

    /// The rows of `sql` over the server's tables (`POST admin/query`), e.g.
    /// `SELECT id, status FROM sys_invocation`. Fails the test on an error.
    #[track_caller]
    pub(crate) fn query(&self, sql: &str) -> Vec<Value> {
        let url = format!("{}/query", self.admin_url());
        let body = serde_json::json!({ "query": sql }).to_string();
        match http_post_json(&url, &body) {
            Ok((200, answer)) => {
                let answer: Value =
                    serde_json::from_str(&answer).unwrap_or_else(|error| panic!("POST {url}: {error} in {answer}"));
                answer["rows"].as_array().cloned().unwrap_or_else(|| panic!("POST {url}: no rows in {answer}"))
            }
            Ok((status, answer)) => panic!("query `{sql}`: {status} {answer}"),
            Err(error) => panic!("query `{sql}`: {error}"),
        }
    }

    fn spawn(&mut self) {
        let log_path = self.log_path();
        let log = OpenOptions::new().create(true).append(true).open(&log_path).expect("server log");
        let mut command = Command::new(&self.binary);
        command
            .args(["--bind-ip", "127.0.0.1", "--bind-port"])
            .arg(self.node_port.to_string())
            .arg("--base-dir")
            .arg(self.dir.path().join("base"))
            .args(["--node-name", "n1", "--no-logo", "--log-disable-ansi-codes", "true"])
            .env("RESTATE_DISABLE_TELEMETRY", "true")
            // Each start makes a few hundred `invoker-<id>` directories in its TMPDIR
            // and leaves them: in the server's own directory they go with the test.
            .env("TMPDIR", self.dir.path())
            .env("RESTATE_INGRESS__BIND_ADDRESS", format!("127.0.0.1:{}", self.ingress_port))
            .env("RESTATE_ADMIN__BIND_ADDRESS", format!("127.0.0.1:{}", self.admin_port))
            .env_remove("RUST_LOG")
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("server log"))
            .stderr(log);
        if self.options.short_invoker_timeouts {
            command
                .env("RESTATE_WORKER__INVOKER__INACTIVITY_TIMEOUT", "2s")
                .env("RESTATE_WORKER__INVOKER__ABORT_TIMEOUT", "3s");
        }
        command.envs(self.options.env.iter().map(|(key, value)| (key, value)));
        let mut child =
            command.spawn().unwrap_or_else(|error| panic!("cannot start {}: {error}", self.binary.display()));
        let admin = self.admin_url();
        let ingress = self.ingress_url();
        wait_until("restate-server", &mut child, &log_path, || is_ready(&admin, &ingress));
        self.child = Some(child);
    }
}

/// Healthy admin and ingress, and partitions that answer a query (the admin
/// API is healthy a few hundred ms before its queries stop failing with "node
/// lookup for partition 1 failed").
fn is_ready(admin: &str, ingress: &str) -> bool {
    matches!(http_get(&format!("{admin}/health")), Ok((200, _)))
        && matches!(http_get(&format!("{ingress}/restate/health")), Ok((200, _)))
        && matches!(
            http_post_json(&format!("{admin}/query"), r#"{"query":"SELECT count(*) AS n FROM sys_invocation"}"#),
            Ok((200, body)) if body.contains("\"rows\"")
        )
}

impl Drop for RestateServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The log tail of `server`, for a test's own failure message.
pub(crate) fn server_log_tail(server: &RestateServer, lines: usize) -> String {
    log_tail(&server.log_path(), lines)
}

/// `<target dir>/restate-server`, where the pinned server is installed.
pub(crate) fn install_dir() -> PathBuf {
    RESTATE.install_dir()
}

/// Whether `path` is the Node launcher rather than a native binary (a script).
pub(crate) fn is_node_launcher(path: &Path) -> bool {
    std::fs::read(path).is_ok_and(|bytes| bytes.starts_with(b"#!"))
}
