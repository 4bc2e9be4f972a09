//! What a run cost the orchestrator itself: CPU, peak memory, and time and bytes
//! spent making state durable. Reported in the `WorkflowCompleted` event so traces
//! and benchmarks read the same numbers Baton measured.

use std::time::Duration;

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct RunMetrics {
    /// Baton's own peak resident memory (not its children's).
    pub(crate) peak_rss_kb: u64,
    /// Baton's own CPU time, user and system, for this invocation.
    pub(crate) cpu_user_ms: u64,
    pub(crate) cpu_system_ms: u64,
    /// Journal commits and snapshots written by this invocation, and their cost.
    pub(crate) commits: u64,
    pub(crate) snapshots: u64,
    pub(crate) persistence_us: u64,
    pub(crate) persisted_bytes: u64,
}

/// Counters the persistence layer updates.
#[derive(Clone, Debug, Default)]
pub(crate) struct PersistenceCounters {
    pub(crate) commits: u64,
    pub(crate) snapshots: u64,
    pub(crate) time: Duration,
    pub(crate) bytes: u64,
}

impl RunMetrics {
    /// Read the process's own resource usage and combine it with `persistence`.
    pub(crate) fn measure(persistence: &PersistenceCounters) -> RunMetrics {
        // SAFETY: getrusage fills the zero-initialised struct we pass; nothing else is touched.
        let usage = unsafe {
            let mut usage: libc::rusage = std::mem::zeroed();
            libc::getrusage(libc::RUSAGE_SELF, &mut usage);
            usage
        };
        let millis = |time: libc::timeval| (time.tv_sec as u64) * 1000 + (time.tv_usec as u64) / 1000;
        RunMetrics {
            peak_rss_kb: usage.ru_maxrss.max(0) as u64,
            cpu_user_ms: millis(usage.ru_utime),
            cpu_system_ms: millis(usage.ru_stime),
            commits: persistence.commits,
            snapshots: persistence.snapshots,
            persistence_us: persistence.time.as_micros() as u64,
            persisted_bytes: persistence.bytes,
        }
    }
}
