//! Deliberate crashes for tests: `BATON_FAILPOINT=<name>[:<n>]` makes Baton kill
//! itself with SIGKILL the `n`-th time (default: first) execution reaches the point
//! `<name>`. The crash-recovery tests use it to hit each persistence window exactly
//! instead of hoping a random kill lands there. Without the variable, a failpoint
//! costs one relaxed atomic load. The points, in the order a step reaches them:
//! `after_step_exit`, `after_journal_append` (written, not yet synced; the next
//! steps may already run), `before_journal_sync` and `after_journal_sync` (on the
//! syncer thread), `before_snapshot`, `after_snapshot`.

use std::sync::LazyLock;
use std::sync::atomic::{AtomicU64, Ordering};

struct Armed {
    name: String,
    at_hit: u64,
    hits: AtomicU64,
}

static ARMED: LazyLock<Option<Armed>> = LazyLock::new(|| {
    let value = std::env::var("BATON_FAILPOINT").ok()?;
    let (name, at_hit) = match value.split_once(':') {
        Some((name, count)) => (name, count.parse().ok()?),
        None => (value.as_str(), 1),
    };
    Some(Armed { name: name.to_string(), at_hit, hits: AtomicU64::new(0) })
});

/// Crash here if the environment asks for it.
pub(crate) fn hit(name: &str) {
    let Some(armed) = ARMED.as_ref() else { return };
    if armed.name == name && armed.hits.fetch_add(1, Ordering::Relaxed) + 1 == armed.at_hit {
        // SAFETY: signalling our own process; nothing is borrowed across the call.
        unsafe {
            libc::kill(libc::getpid(), libc::SIGKILL);
        }
    }
}

/// Whether the failure point `name` is armed and has been reached at least `n`
/// times, counting this one: from then on every call says yes.
pub(crate) fn fails(name: &str) -> bool {
    let Some(armed) = ARMED.as_ref() else { return false };
    armed.name == name && armed.hits.fetch_add(1, Ordering::Relaxed) + 1 >= armed.at_hit
}
