//! How hard the run is stopping its running steps. The workflow loop raises the
//! level through a `watch` channel; every process runner (scripts, Claude) reacts
//! by signalling its child's process group. It lives with the processes because
//! that is the layer that acts on it; the loop only publishes it.

/// How hard running steps are being stopped (clean shutdown, issue of `--grace`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum StopLevel {
    /// Keep running.
    #[default]
    Run,
    /// Ask politely: SIGTERM to the step's process group.
    Terminate,
    /// Stop now: SIGKILL to the step's process group.
    Kill,
}
