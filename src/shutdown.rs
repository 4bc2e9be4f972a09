//! Turning SIGINT and SIGTERM into a value the workflow loop can select on.
//!
//! Steps run in their own process groups, so a terminal's Ctrl-C reaches only
//! Baton; Baton then stops the groups itself, saves, and exits 130 or 143 (A7).

use tokio::signal::unix::{SignalKind, signal};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShutdownSignal {
    Interrupt,
    Terminate,
}

impl ShutdownSignal {
    /// The conventional exit code: 128 + the signal number.
    pub fn exit_code(self) -> i32 {
        match self {
            ShutdownSignal::Interrupt => 130,
            ShutdownSignal::Terminate => 143,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ShutdownSignal::Interrupt => "SIGINT",
            ShutdownSignal::Terminate => "SIGTERM",
        }
    }
}

/// Resolves at the first SIGINT or SIGTERM. If the handlers cannot be installed
/// the future never resolves, and the default signal behaviour applies.
pub async fn wait_for_shutdown_signal() -> ShutdownSignal {
    let (Ok(mut interrupt), Ok(mut terminate)) = (signal(SignalKind::interrupt()), signal(SignalKind::terminate()))
    else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = interrupt.recv() => ShutdownSignal::Interrupt,
        _ = terminate.recv() => ShutdownSignal::Terminate,
    }
}
