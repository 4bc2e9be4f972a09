//! Debian's `haproxy` in front of `baton worker`s for the distributed tests:
//! Restate pins each invocation to the deployment it started on and sends new
//! work to the newest registration, so several workers only share steps (and
//! take over a dead one's) behind **one** registered URI, an HTTP/2 balancer's.
//!
//! The configuration is rendered from `haproxy.cfg.in`, the template that
//! `docs/distributed.md` shows (a test keeps the two in step): HTTP/2 cleartext
//! on both sides, round robin, a health check every 500 ms on the SDK's
//! `/health`, and timeouts longer than any step. `tests/run` installs haproxy
//! with apt-get; `BATON_TEST_HAPROXY_BIN` names another executable.

#![allow(dead_code)] // A toolkit: each test uses part of it.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use super::loopback::{free_port, is_listening, kill_child, wait_until};

/// Overrides the haproxy on `PATH` (or in `/usr/sbin`) with this executable.
pub(crate) const HAPROXY_BIN_VAR: &str = "BATON_TEST_HAPROXY_BIN";

/// The configuration template: `{{bind}}` is the listen address, `{{servers}}`
/// the server lines ([`server_line`]).
pub(crate) const HAPROXY_TEMPLATE: &str = include_str!("haproxy.cfg.in");

/// The configuration for a balancer listening on `bind` in front of `servers`
/// (name, address).
pub(crate) fn haproxy_config(bind: &str, servers: &[(String, String)]) -> String {
    let lines: Vec<String> = servers.iter().map(|(name, address)| server_line(name, address)).collect();
    HAPROXY_TEMPLATE.replace("{{bind}}", bind).replace("{{servers}}", &lines.join("\n"))
}

/// One worker behind the balancer: HTTP/2 cleartext, health-checked twice a second.
pub(crate) fn server_line(name: &str, address: &str) -> String {
    format!("    server {name} {address} proto h2 check inter 500ms")
}

/// The haproxy executable: `BATON_TEST_HAPROXY_BIN`, `haproxy` on `PATH`, or
/// Debian's `/usr/sbin/haproxy` (not on a user's `PATH`).
pub(crate) fn haproxy_binary() -> PathBuf {
    if let Some(binary) = std::env::var_os(HAPROXY_BIN_VAR).filter(|value| !value.is_empty()) {
        return PathBuf::from(binary);
    }
    let on_path = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|dir| dir.join("haproxy"))
        .find(|candidate| candidate.is_file());
    let binary = on_path.unwrap_or_else(|| PathBuf::from("/usr/sbin/haproxy"));
    assert!(
        binary.is_file(),
        "the distributed tests need haproxy: run tests/run (it installs Debian's haproxy), \
         `apt-get install haproxy` as root, or set {HAPROXY_BIN_VAR} to an haproxy executable"
    );
    binary
}

/// A running haproxy on a free loopback port; dropping it kills it.
pub(crate) struct Haproxy {
    dir: tempfile::TempDir,
    port: u16,
    child: Child,
}

impl Haproxy {
    /// Start haproxy in the foreground (`-db`) in front of `backends` (named
    /// `w1`, `w2`, …) and wait until it listens. With no backend, or none up,
    /// it answers 503.
    pub(crate) fn start(backends: &[SocketAddr]) -> Haproxy {
        let binary = haproxy_binary();
        let dir = tempfile::Builder::new().prefix("haproxy-").tempdir().expect("haproxy temp dir");
        let port = free_port();
        let servers: Vec<(String, String)> = backends
            .iter()
            .enumerate()
            .map(|(index, address)| (format!("w{}", index + 1), address.to_string()))
            .collect();
        let config = dir.path().join("haproxy.cfg");
        std::fs::write(&config, haproxy_config(&format!("127.0.0.1:{port}"), &servers)).expect("haproxy config");
        let log_path = dir.path().join("haproxy.log");
        let log = std::fs::File::create(&log_path).expect("haproxy log");
        let mut child = Command::new(&binary)
            .arg("-f")
            .arg(&config)
            .arg("-db")
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("haproxy log"))
            .stderr(log)
            .spawn()
            .unwrap_or_else(|error| panic!("cannot start {}: {error}", binary.display()));
        let address = SocketAddr::from(([127, 0, 0, 1], port));
        wait_until("haproxy", &mut child, &log_path, || is_listening(address));
        Haproxy { dir, port, child }
    }

    /// `http://127.0.0.1:<port>`: the one URI to register with Restate.
    pub(crate) fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub(crate) fn address(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.port))
    }

    /// What haproxy logged (health checks going up and down, alerts).
    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("haproxy.log")).unwrap_or_default()
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Haproxy {
    fn drop(&mut self) {
        kill_child(&mut self.child);
    }
}

/// The status of `GET http://<address><path>` over HTTP/2 cleartext with prior
/// knowledge (how Restate talks to a deployment), or the error as text.
pub(crate) fn h2_get_status(address: SocketAddr, path: &str) -> Result<u16, String> {
    use hyper_util::rt::{TokioExecutor, TokioIo};
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
    runtime.block_on(async {
        let stream = tokio::net::TcpStream::connect(address).await.map_err(|error| error.to_string())?;
        let (mut sender, connection) =
            hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(stream))
                .await
                .map_err(|error| error.to_string())?;
        tokio::spawn(connection);
        let request = hyper::Request::get(format!("http://{address}{path}"))
            .body(String::new())
            .map_err(|error| error.to_string())?;
        let response = tokio::time::timeout(std::time::Duration::from_secs(20), sender.send_request(request))
            .await
            .map_err(|_| "no answer in 20 s".to_string())?
            .map_err(|error| error.to_string())?;
        Ok(response.status().as_u16())
    })
}
