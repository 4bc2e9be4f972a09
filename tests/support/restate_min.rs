//! What the distributed tests that drive one worker directly need beside
//! `support::restate`'s server (`tests/distributed.rs`,
//! `tests/distributed_shipped.rs`): a worker that registers itself, ended with
//! the test, and a bounded poll. Several workers behind a balancer are
//! `support::{haproxy, worker}`.

#![allow(dead_code)] // A toolkit: each test uses part of it.

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use super::Test;
pub(crate) use super::loopback::free_port;
use super::loopback::http_get;
pub(crate) use super::restate::{RestateOptions, RestateServer, exclusive};

/// Poll `check` every 20 ms for up to `limit`; panics with `what` if it never holds.
#[track_caller]
pub(crate) fn wait_until(limit: Duration, what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !check() {
        assert!(Instant::now() < deadline, "timed out after {limit:?} waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

impl RestateServer {
    /// Whether the ingress lists `BatonStep`.
    pub(crate) fn has_step_service(&self) -> bool {
        http_get(&format!("{}/restate/health", self.ingress_url())).is_ok_and(|(_, body)| body.contains("BatonStep"))
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
        // A step's input directory is a temp dir, and a test that kills a worker leaves
        // it behind: under the target directory, not in the machine's /tmp.
        let tmp = Path::new(env!("CARGO_TARGET_TMPDIR")).join("worker-tmp");
        std::fs::create_dir_all(&tmp).expect("worker temp dir");
        let mut worker = test
            .command(&args)
            .env("TMPDIR", &tmp)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn worker");
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
    u32::try_from(pid).is_ok_and(super::loopback::is_alive)
}
