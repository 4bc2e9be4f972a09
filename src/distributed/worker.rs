//! `baton worker`: serve `BatonStep` over HTTP/2 cleartext (what Restate's SDK
//! speaks), optionally register it with a server's admin API, and drain on
//! SIGTERM or SIGINT: stop accepting connections, let running steps finish for
//! up to `grace`, then kill their process groups and exit.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http2;
use hyper_util::rt::{TokioExecutor, TokioIo};
use restate_sdk::endpoint::Endpoint;
use restate_sdk::hyper::HyperEndpoint;
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};

use crate::distributed::ingress::Ingress;
use crate::distributed::protocol::Versions;
use crate::distributed::step_service::{self, WorkerState};
use crate::process::stop_level::StopLevel;
use crate::process::watchdog::Watchdog;
use crate::run::shutdown::shutdown_signals;

/// How a worker runs (`baton worker`'s flags, checked).
pub(crate) struct WorkerOptions {
    pub(crate) listen: SocketAddr,
    pub(crate) register: Option<String>,
    pub(crate) advertise: Option<String>,
    pub(crate) name: Option<String>,
    pub(crate) max_concurrent_steps: usize,
    pub(crate) longest_step: Duration,
    pub(crate) grace: Duration,
    /// `--dir`: where shipped steps' files are kept (`docs/distributed-files.md`).
    pub(crate) dir: std::path::PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum WorkerError {
    #[error("cannot listen on {addr}: {source}")]
    Listen { addr: SocketAddr, source: std::io::Error },
    #[error("cannot register {uri} with the Restate admin API at {admin}: {reason}")]
    Register { uri: String, admin: String, reason: String },
}

/// `hostname:pid`, the default `--name`.
pub(crate) fn default_name() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|name| name.trim().to_string())
        .ok()
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "worker".to_string());
    format!("{host}:{}", std::process::id())
}

/// The default `--max-concurrent-steps`: four per core (steps mostly wait on a model).
/// Where a worker keeps shipped steps' files when `--dir` says nothing:
/// `$XDG_CACHE_HOME/baton/worker`, else `~/.cache/baton/worker`, else a folder
/// under the system's temporary directory.
pub(crate) fn default_dir() -> std::path::PathBuf {
    let cache =
        std::env::var_os("XDG_CACHE_HOME").filter(|dir| !dir.is_empty()).map(std::path::PathBuf::from).or_else(|| {
            std::env::var_os("HOME")
                .filter(|dir| !dir.is_empty())
                .map(|home| std::path::Path::new(&home).join(".cache"))
        });
    cache.map_or_else(|| std::env::temp_dir().join("baton-worker"), |cache| cache.join("baton/worker"))
}

pub(crate) fn default_max_steps() -> usize {
    std::thread::available_parallelism().map_or(4, |cores| cores.get() * 4)
}

/// The versions this worker claims: its own, unless a test pretends otherwise
/// (`BATON_TEST_WORKER_VERSION=0.2.0` or `0.2.0/2` with a step protocol).
fn claimed_versions() -> Versions {
    let mut versions = Versions::own();
    if let Ok(text) = std::env::var("BATON_TEST_WORKER_VERSION") {
        let (baton, protocol) = text.split_once('/').unwrap_or((&text, ""));
        versions.baton = baton.to_string();
        if let Ok(protocol) = protocol.parse() {
            versions.protocol = protocol;
        }
    }
    versions
}

/// Serve until SIGTERM or SIGINT, then drain. Returns once every step is done.
pub(crate) async fn serve(options: WorkerOptions, watchdog: Watchdog) -> Result<(), WorkerError> {
    let mut signals = shutdown_signals();
    let listener = TcpListener::bind(options.listen)
        .await
        .map_err(|source| WorkerError::Listen { addr: options.listen, source })?;
    let local = listener.local_addr().unwrap_or(options.listen);
    let name = options.name.clone().unwrap_or_else(default_name);
    let (stop_sender, stop) = watch::channel(StopLevel::Run);
    let (running, mut running_changes) = watch::channel(0usize);
    let worker = Arc::new(WorkerState {
        name: name.clone(),
        versions: claimed_versions(),
        slots: Arc::new(Semaphore::new(options.max_concurrent_steps.max(1))),
        stop,
        watchdog: Some(Arc::new(watchdog)),
        running: Arc::new(running),
        dir: options.dir.clone(),
    });
    let endpoint = HyperEndpoint::new(
        Endpoint::builder().bind(step_service::definition(Arc::clone(&worker), options.longest_step)).build(),
    );
    eprintln!(
        "baton worker `{name}` listening on http://{local} (HTTP/2 cleartext; at most {} steps at once)",
        options.max_concurrent_steps
    );
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let accept = async {
        loop {
            match listener.accept().await {
                Ok((stream, remote)) => {
                    let connection = http2::Builder::new(TokioExecutor::new())
                        .serve_connection(TokioIo::new(stream), endpoint.clone());
                    let connection = graceful.watch(connection);
                    tokio::spawn(async move {
                        if let Err(error) = connection.await {
                            tracing::debug!(%remote, %error, "connection ended");
                        }
                    });
                }
                Err(error) => {
                    tracing::warn!(%error, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
    };
    let registration = async {
        if let Some(admin) = &options.register {
            let uri = options.advertise.clone().unwrap_or_else(|| format!("http://{local}"));
            register(admin, &uri).await
        } else {
            Ok(())
        }
    };
    let signal = tokio::select! {
        () = accept => None,
        signal = async {
            registration.await?;
            match signals.recv().await {
                Some(signal) => Ok(Some(signal)),
                // No signal handlers: run until killed.
                None => std::future::pending().await,
            }
        } => match signal {
            Ok(signal) => signal,
            Err(error) => return Err(error),
        },
    };
    // No new connections; the open ones are told to take no new steps (HTTP/2
    // GOAWAY) while the steps they carry finish.
    drop(listener);
    let closing = tokio::spawn(graceful.shutdown());
    let running_now = *running_changes.borrow();
    eprintln!(
        "baton worker `{name}`: {}, draining: no new connections; {running_now} running step(s) get {} s to finish",
        signal.map_or("stopping", |signal| signal.name()),
        options.grace.as_secs()
    );
    let finished = tokio::select! {
        () = no_step_running(&mut running_changes) => true,
        () = tokio::time::sleep(options.grace) => false,
        _ = signals.recv() => false,
    };
    if !finished {
        eprintln!("baton worker `{name}`: killing the steps still running");
        let _ = stop_sender.send(StopLevel::Kill);
        let _ = tokio::time::timeout(Duration::from_secs(5), no_step_running(&mut running_changes)).await;
    }
    // Replies still on their way get a moment; connections then close.
    let _ = tokio::time::timeout(Duration::from_secs(2), closing).await;
    if let Some(watchdog) = &worker.watchdog {
        watchdog.disarm();
    }
    eprintln!("baton worker `{name}` stopped");
    Ok(())
}

/// Until the count of running steps is 0 (or nobody can change it any more).
async fn no_step_running(running: &mut watch::Receiver<usize>) {
    while *running.borrow_and_update() > 0 {
        if running.changed().await.is_err() {
            break;
        }
    }
}

/// The restate-server versions this Baton's step service works with: the 1.x
/// line, whose service protocol `restate-sdk` 0.13 speaks (tested with 1.7.12).
pub(crate) const SUPPORTED_SERVER: &str = "restate-server 1.x (tested with 1.7.12)";

/// Whether the admin API's `GET /version` answer (`status`, `body`) names a server of
/// [`SUPPORTED_SERVER`]; else why not, in words for the user.
fn server_version_supported(status: u16, body: &[u8]) -> Result<(), String> {
    let version = serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .filter(|_| status == 200)
        .and_then(|answer| answer.get("version").and_then(|version| version.as_str()).map(str::to_string));
    let Some(version) = version else {
        let text: String =
            String::from_utf8_lossy(&body[..body.len().min(120)]).split_whitespace().collect::<Vec<_>>().join(" ");
        return Err(format!(
            "it does not look like a Restate admin API (GET /version answered HTTP {status}: `{text}`); --register takes the \
             server's admin URL (port 9070 by default)"
        ));
    };
    if version.split('.').next() == Some("1") {
        Ok(())
    } else {
        Err(format!("the server is restate-server {version}; this Baton works with {SUPPORTED_SERVER}"))
    }
}

/// `POST ADMIN/deployments {"uri": URI}`; says what the server registered.
async fn register(admin: &str, uri: &str) -> Result<(), WorkerError> {
    let failed = |reason: String| WorkerError::Register { uri: uri.to_string(), admin: admin.to_string(), reason };
    let client = Ingress::new(admin);
    let (status, answer) = client.get("/version").await.map_err(|error| failed(error.to_string()))?;
    server_version_supported(status, &answer).map_err(failed)?;
    let body = serde_json::json!({ "uri": uri, "force": true }).to_string();
    let (status, answer) = client.post_json("/deployments", body).await.map_err(|error| failed(error.to_string()))?;
    if !(200..300).contains(&status) {
        let text = String::from_utf8_lossy(&answer[..answer.len().min(500)]).trim().to_string();
        return Err(failed(format!("HTTP {status}: {text}")));
    }
    let answer: serde_json::Value = serde_json::from_slice(&answer).unwrap_or_default();
    let id = answer.get("id").and_then(|id| id.as_str()).unwrap_or("?");
    let services: Vec<&str> = answer
        .get("services")
        .and_then(|list| list.as_array())
        .map(|list| list.iter().filter_map(|service| service.get("name").and_then(|name| name.as_str())).collect())
        .unwrap_or_default();
    eprintln!("registered {uri} with {admin}: deployment {id}, services {}", services.join(", "));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_1_x_servers_are_supported() {
        assert_eq!(server_version_supported(200, br#"{"version":"1.7.12","min_admin_api_version":2}"#), Ok(()));
    }

    #[test]
    fn a_server_of_another_major_version_is_refused_naming_both() {
        assert_eq!(
            server_version_supported(200, br#"{"version":"2.0.1"}"#),
            Err("the server is restate-server 2.0.1; this Baton works with restate-server 1.x (tested with 1.7.12)"
                .to_string())
        );
    }

    #[test]
    fn an_answer_that_is_not_the_admin_apis_is_named() {
        assert_eq!(
            server_version_supported(404, b"<html>\n<body>Not Found</body></html>"),
            Err("it does not look like a Restate admin API (GET /version answered HTTP 404: `<html> <body>Not \
                 Found</body></html>`); --register takes the server's admin URL (port 9070 by default)"
                .to_string())
        );
    }
}
