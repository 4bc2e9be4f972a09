//! PLACEHOLDER until the codex helper lands: replaced by the real backend.

use std::path::PathBuf;

use tokio::sync::watch;

use crate::backend::binary::BinaryError;
use crate::backend::{Backend, BackendError, BackendEvent, BackendFuture, BackendRequest};
use crate::process::stop_level::StopLevel;
use crate::process::watchdog::Watchdog;

pub(crate) struct CodexBackend {
    binary: Result<PathBuf, BinaryError>,
}

impl CodexBackend {
    pub(crate) fn new(binary: Result<PathBuf, BinaryError>, _skip_permissions: bool) -> CodexBackend {
        CodexBackend { binary }
    }
}

impl Backend for CodexBackend {
    fn invoke<'a>(
        &'a self,
        _request: BackendRequest,
        _stop: watch::Receiver<StopLevel>,
        _watchdog: Option<&'a Watchdog>,
        _on_event: &'a mut (dyn FnMut(BackendEvent) + Send),
    ) -> BackendFuture<'a> {
        Box::pin(async move {
            let _binary = self.binary.clone().map_err(|error| BackendError::NotAvailable(error.to_string()))?;
            Err(BackendError::NotAvailable("not built yet".into()))
        })
    }
}
