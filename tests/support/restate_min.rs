//! A real `restate-server` (the pinned npm package's native binary) on free
//! loopback ports, and `baton worker`s registered with it, for the distributed
//! tests that drive one worker directly (`tests/distributed.rs`,
//! `tests/distributed_shipped.rs`). Several workers behind a balancer are
//! `support::{restate, haproxy, worker}`; the server binary and the lock are shared.

#![allow(dead_code)] // A toolkit: each test uses part of it.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::Test;

/// The one server binary and the one lock of `support::restate`: a test here and a
/// test there never run two servers at once, and `BATON_TEST_RESTATE_BIN` overrides
/// both.
pub(crate) use super::restate::{exclusive, restate_server_binary as server_binary};

pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("address").port()
}

/// `GET url`: the status and body, or `None` when nothing answers.
pub(crate) fn get(url: &str) -> Option<(u16, String)> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(5)))
        .build()
        .into();
    let mut response = agent.get(url).call().ok()?;
    let status = response.status().as_u16();
    Some((status, response.body_mut().read_to_string().unwrap_or_default()))
}

/// Poll `check` every 20 ms for up to `limit`; panics with `what` if it never holds.
#[track_caller]
pub(crate) fn wait_until(limit: Duration, what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !check() {
        assert!(Instant::now() < deadline, "timed out after {limit:?} waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

pub(crate) struct RestateServer {
    child: Child,
    pub(crate) ingress_port: u16,
    pub(crate) admin_port: u16,
    node_port: u16,
    dir: tempfile::TempDir,
    env: Vec<(String, String)>,
}

impl RestateServer {
    pub(crate) fn start() -> RestateServer {
        RestateServer::start_with(&[])
    }

    /// With extra environment (e.g. `RESTATE_WORKER__INVOKER__INACTIVITY_TIMEOUT=2s`).
    pub(crate) fn start_with(env: &[(&str, &str)]) -> RestateServer {
        let dir = tempfile::Builder::new().prefix("baton-restate-").tempdir().expect("temp dir");
        let env: Vec<(String, String)> = env.iter().map(|(key, value)| (key.to_string(), value.to_string())).collect();
        let (ingress_port, admin_port, node_port) = (free_port(), free_port(), free_port());
        let child = spawn_server(&dir, &env, ingress_port, admin_port, node_port);
        let server = RestateServer { child, ingress_port, admin_port, node_port, dir, env };
        server.wait_healthy();
        server
    }

    fn wait_healthy(&self) {
        let admin = format!("{}/health", self.admin_url());
        let ingress = format!("{}/restate/health", self.ingress_url());
        wait_until(Duration::from_secs(30), "restate-server to be healthy", || {
            get(&admin).is_some_and(|(status, _)| status == 200)
                && get(&ingress).is_some_and(|(status, _)| status == 200)
        });
    }

    pub(crate) fn ingress_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.ingress_port)
    }

    pub(crate) fn admin_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.admin_port)
    }

    /// `--engine restate=INGRESS`.
    pub(crate) fn engine(&self) -> String {
        format!("restate={}", self.ingress_url())
    }

    /// SIGKILL the server (its data stays), as a crash would.
    pub(crate) fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Start the server again on the same ports and data.
    pub(crate) fn restart(&mut self) {
        self.kill();
        self.child = spawn_server(&self.dir, &self.env, self.ingress_port, self.admin_port, self.node_port);
        self.wait_healthy();
    }

    /// Whether the ingress lists `BatonStep`.
    pub(crate) fn has_step_service(&self) -> bool {
        get(&format!("{}/restate/health", self.ingress_url())).is_some_and(|(_, body)| body.contains("BatonStep"))
    }

    /// `baton worker --listen 127.0.0.1:PORT --register ADMIN --name NAME` in `test`'s
    /// project and environment, plus `env`; returns once it is registered.
    pub(crate) fn start_worker(&self, test: &Test, name: &str, extra: &[&str]) -> Child {
        let port = free_port();
        let listen = format!("127.0.0.1:{port}");
        let admin = self.admin_url();
        let mut args = vec!["worker", "--listen", &listen, "--register", &admin, "--name", name];
        args.extend_from_slice(extra);
        let args: Vec<String> = args.into_iter().map(str::to_string).collect();
        let mut worker =
            test.command(&args).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().expect("spawn worker");
        let deadline = Instant::now() + Duration::from_secs(30);
        while !self.has_step_service() {
            if let Ok(Some(status)) = worker.try_wait() {
                let mut stderr = String::new();
                if let Some(mut pipe) = worker.stderr.take() {
                    let _ = std::io::Read::read_to_string(&mut pipe, &mut stderr);
                }
                panic!("worker `{name}` exited ({status}) before it was registered:\n{stderr}");
            }
            assert!(Instant::now() < deadline, "worker `{name}` was not registered in 30 s");
            std::thread::sleep(Duration::from_millis(20));
        }
        worker
    }
}

fn spawn_server(
    dir: &tempfile::TempDir,
    env: &[(String, String)],
    ingress_port: u16,
    admin_port: u16,
    node_port: u16,
) -> Child {
    let log =
        std::fs::OpenOptions::new().create(true).append(true).open(dir.path().join("server.log")).expect("server log");
    let mut command = Command::new(server_binary());
    command
        .env("RESTATE_DISABLE_TELEMETRY", "true")
        .env("RESTATE_INGRESS__BIND_ADDRESS", format!("127.0.0.1:{ingress_port}"))
        .env("RESTATE_ADMIN__BIND_ADDRESS", format!("127.0.0.1:{admin_port}"))
        .args(["--bind-ip", "127.0.0.1", "--bind-port", &node_port.to_string(), "--node-name", "n1", "--base-dir"])
        .arg(dir.path().join("data"))
        .stdin(Stdio::null())
        .stdout(log.try_clone().expect("log"))
        .stderr(log);
    for (key, value) in env {
        command.env(key, value);
    }
    command.spawn().expect("start restate-server")
}

impl Drop for RestateServer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Ends a worker (SIGKILL) when the test is done with it, whatever happens.
pub(crate) struct Reaped(pub(crate) Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Whether process `pid` is alive (a zombie is not).
pub(crate) fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| stat.rsplit(')').next().map(|rest| !rest.trim_start().starts_with('Z')))
        .unwrap_or(false)
}
