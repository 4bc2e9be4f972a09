//! What the distributed harness's processes (restate-server, haproxy, `baton
//! worker`) share: free loopback ports, a bounded wait for a port to listen,
//! a plain HTTP/1.1 client for Restate's admin API and ingress, and the tail
//! of a process's log for a failure message.
//!
//! Every wait has a deadline and fails the test with the process's log tail:
//! a server that never comes up says why instead of hanging the suite.

#![allow(dead_code)] // A toolkit: each test uses part of it.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

/// How long a process of the harness may take to start listening. The machine
/// may be busy with parallel builds; a healthy start takes under 2 s.
pub(crate) const START_DEADLINE: Duration = Duration::from_secs(60);

/// `count` distinct free ports on 127.0.0.1. The listeners are held until all
/// are chosen, so the ports differ; another process may still take one before
/// its user binds it, which on loopback in a test run is unlikely enough.
pub(crate) fn free_ports(count: usize) -> Vec<u16> {
    let listeners: Vec<TcpListener> =
        (0..count).map(|_| TcpListener::bind("127.0.0.1:0").expect("bind a free loopback port")).collect();
    listeners.iter().map(|listener| listener.local_addr().expect("local address").port()).collect()
}

/// One free port on 127.0.0.1.
pub(crate) fn free_port() -> u16 {
    free_ports(1)[0]
}

/// The last `lines` lines of the log at `path` (or why it cannot be read).
pub(crate) fn log_tail(path: &Path, lines: usize) -> String {
    match std::fs::read(path) {
        Ok(bytes) => {
            let text = String::from_utf8_lossy(&bytes);
            let all: Vec<&str> = text.lines().collect();
            all[all.len().saturating_sub(lines)..].join("\n")
        }
        Err(error) => format!("(cannot read {}: {error})", path.display()),
    }
}

/// Wait until `ready()` holds, polling every 50 ms. Fails the test, naming
/// `what` and showing the log tail, when `child` exits first or the deadline
/// passes.
#[track_caller]
pub(crate) fn wait_until(what: &str, child: &mut Child, log: &Path, mut ready: impl FnMut() -> bool) {
    let deadline = Instant::now() + START_DEADLINE;
    loop {
        if ready() {
            return;
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!("{what} exited ({status}) before it was ready; its log ends:\n{}", log_tail(log, 40));
        }
        if Instant::now() >= deadline {
            panic!("{what} was not ready after {START_DEADLINE:?}; its log ends:\n{}", log_tail(log, 40));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Whether something accepts TCP connections at `address`.
pub(crate) fn is_listening(address: SocketAddr) -> bool {
    TcpStream::connect_timeout(&address, Duration::from_millis(200)).is_ok()
}

/// SIGKILL `child` (if it still runs) and reap it.
pub(crate) fn kill_child(child: &mut Child) {
    if child.try_wait().ok().flatten().is_none() {
        // SAFETY: kill(2) on a child this harness spawned and has not reaped.
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGKILL) };
    }
    let _ = child.wait();
}

/// Whether a process with this pid exists (and is not a zombie).
pub(crate) fn is_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state is the field after the parenthesised command name.
        Ok(stat) => stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().next()) != Some("Z"),
        Err(_) => false,
    }
}

/// An HTTP/1.1 agent for loopback: no proxy from the environment, statuses
/// returned rather than turned into errors, every call bounded.
pub(crate) fn http_agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .proxy(None)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .into()
}

/// `GET url`: the status and body, or the transport error as text.
pub(crate) fn http_get(url: &str) -> Result<(u16, String), String> {
    let mut response = http_agent().get(url).call().map_err(|error| error.to_string())?;
    let status = response.status().as_u16();
    let body = response.body_mut().read_to_string().map_err(|error| error.to_string())?;
    Ok((status, body))
}

/// `POST url` with a JSON body: the status and body, or the transport error as text.
pub(crate) fn http_post_json(url: &str, body: &str) -> Result<(u16, String), String> {
    let mut response = http_agent()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json")
        .send(body)
        .map_err(|error| error.to_string())?;
    let status = response.status().as_u16();
    let body = response.body_mut().read_to_string().map_err(|error| error.to_string())?;
    Ok((status, body))
}
