//! The daemon's accept loop, with the two limits `axum::serve` does not set: a
//! client must send a request's headers within `HEADER_READ_TIMEOUT` (on a new
//! connection and between the requests of a kept-alive one), and at most
//! `MAX_CONNECTIONS` connections are served at once. Without them a few hundred
//! half-open sockets would hold the daemon's memory and file descriptors for as
//! long as their clients liked (`docs/serve.md`, "Limits").
//!
//! A connection beyond the cap is answered at once with `503` and
//! `{"error": …}` and closed, rather than left waiting in the kernel's backlog:
//! the client learns why, and a browser's next try gets in as soon as another
//! connection ends. Event streams count as connections; the page opens two.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, watch};
use tokio::task::JoinSet;

/// How long a client has to send a request's headers.
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// Connections served at once.
const MAX_CONNECTIONS: usize = 256;
/// How long a refused connection is given to read its `503`.
const REFUSAL_WAIT: Duration = Duration::from_secs(1);

/// The limits in force: the constants above, unless the (undocumented, for
/// tests) `BATON_SERVE_HEADER_TIMEOUT_MS` and `BATON_SERVE_MAX_CONNECTIONS` say
/// otherwise.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    pub(crate) header_read_timeout: Duration,
    pub(crate) max_connections: usize,
}

impl Limits {
    pub(crate) fn from_env() -> Limits {
        let number = |name: &str| std::env::var(name).ok().and_then(|value| value.trim().parse::<u64>().ok());
        Limits {
            header_read_timeout: number("BATON_SERVE_HEADER_TIMEOUT_MS")
                .filter(|ms| *ms > 0)
                .map_or(HEADER_READ_TIMEOUT, Duration::from_millis),
            max_connections: number("BATON_SERVE_MAX_CONNECTIONS")
                .and_then(|count| usize::try_from(count).ok())
                .filter(|count| *count > 0)
                .unwrap_or(MAX_CONNECTIONS),
        }
    }
}

/// Serve `router` on `listener` until `stopping` turns true; then stop accepting,
/// let every connection finish its current answer, and return.
pub(crate) async fn serve(
    listener: TcpListener,
    router: Router,
    limits: Limits,
    mut stopping: watch::Receiver<bool>,
) -> std::io::Result<()> {
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    let mut connections = JoinSet::new();
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = stopped(&mut stopping) => break,
        };
        while connections.try_join_next().is_some() {}
        let stream = match accepted {
            Ok((stream, _)) => stream,
            // Out of file descriptors and the like: wait a little, as hyper's own loop does.
            Err(error) if is_transient(&error) => {
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
            Err(error) => return Err(error),
        };
        let Ok(slot) = Arc::clone(&slots).try_acquire_owned() else {
            connections.spawn(refuse(stream, limits.max_connections));
            continue;
        };
        let service = TowerToHyperService::new(router.clone());
        let mut stop = stopping.clone();
        connections.spawn(async move {
            let _slot = slot;
            let mut builder = http1::Builder::new();
            builder.timer(TokioTimer::new()).header_read_timeout(limits.header_read_timeout);
            let connection = builder.serve_connection(TokioIo::new(stream), service);
            tokio::pin!(connection);
            tokio::select! {
                _ = connection.as_mut() => {}
                () = stopped(&mut stop) => {
                    connection.as_mut().graceful_shutdown();
                    let _ = connection.as_mut().await;
                }
            }
        });
    }
    drop(listener);
    while connections.join_next().await.is_some() {}
    Ok(())
}

/// Until the daemon stops.
async fn stopped(stopping: &mut watch::Receiver<bool>) {
    let _ = stopping.wait_for(|stop| *stop).await;
}

fn is_transient(error: &std::io::Error) -> bool {
    !matches!(error.kind(), std::io::ErrorKind::InvalidInput | std::io::ErrorKind::Unsupported)
}

/// Answer a connection beyond the cap with `503` and close it.
async fn refuse(mut stream: TcpStream, max: usize) {
    let body = serde_json::json!({
        "error": format!("this daemon serves at most {max} connections at once; try again when one has closed")
    })
    .to_string();
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\
         retry-after: 1\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = tokio::time::timeout(REFUSAL_WAIT, async {
        let _ = stream.write_all(answer.as_bytes()).await;
        let _ = stream.shutdown().await;
        // Read what the client sent until it closes: closing with unread bytes
        // would reset the connection and could lose the answer.
        let mut sink = [0u8; 1024];
        while matches!(stream.read(&mut sink).await, Ok(read) if read > 0) {}
    })
    .await;
}
