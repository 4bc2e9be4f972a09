//! Turning SIGINT and SIGTERM into a value the workflow loop can select on.
//!
//! Steps run in their own process groups, so a terminal's Ctrl-C reaches only
//! Baton; Baton then stops the groups itself, saves, and exits 130 or 143 (A7).

use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ShutdownSignal {
    Interrupt,
    Terminate,
}

impl ShutdownSignal {
    /// The conventional exit code: 128 + the signal number.
    pub(crate) fn exit_code(self) -> i32 {
        match self {
            ShutdownSignal::Interrupt => 130,
            ShutdownSignal::Terminate => 143,
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            ShutdownSignal::Interrupt => "SIGINT",
            ShutdownSignal::Terminate => "SIGTERM",
        }
    }
}

/// Every SIGINT and SIGTERM from now on, as a channel: the first asks for a clean
/// stop, the second for an immediate one. If the handlers cannot be installed the
/// channel stays silent and the default signal behaviour applies.
pub(crate) fn shutdown_signals() -> mpsc::UnboundedReceiver<ShutdownSignal> {
    let (sender, receiver) = mpsc::unbounded_channel();
    if let (Ok(mut interrupt), Ok(mut terminate)) = (signal(SignalKind::interrupt()), signal(SignalKind::terminate())) {
        tokio::spawn(async move {
            loop {
                let received = tokio::select! {
                    Some(()) = interrupt.recv() => ShutdownSignal::Interrupt,
                    Some(()) = terminate.recv() => ShutdownSignal::Terminate,
                    else => break,
                };
                if sender.send(received).is_err() {
                    break;
                }
            }
        });
    }
    receiver
}
