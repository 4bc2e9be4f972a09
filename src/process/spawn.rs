//! Starting a script step's process without holding up the run's other steps.
//!
//! `posix_spawn` returns only once the child has called `exec` (glibc clones with
//! `CLONE_VFORK`), and the kernel first copies Baton's descriptor table into it. A
//! run's loop and its steps' tasks share one thread (`cli::block_on`), so while a
//! spawn waits, no other step reads its output and no step starts. One spawn waits
//! a few hundred microseconds; with thousands of scripts running on two cores the
//! child first waits for a core, and 10,000 one-step workers forked at once spent
//! 10.1 s of their run in `clone3` on that thread, one spawn after another
//! (`docs/benchmarks.md`, issue 22's ninth round).
//!
//! So a spawn made while other script steps are live goes to the blocking pool,
//! [`SPAWNS_IN_FLIGHT`] at a time: the run's thread goes on with the others, and
//! the pool never holds more threads than that for spawning (a thread for every
//! waiting spawn cost memory and gained nothing). A lone spawn (a chain of steps, a
//! one-state run) is made in place: nothing else could run meanwhile, and the
//! hand-off to a pool thread and back would only add to it.
//!
//! Wherever the spawn is made, the group is registered with the watchdog on that
//! thread the moment the spawn returns, so a Baton SIGKILLed after it leaves no step
//! process behind. If the step stops waiting for the pool (its future dropped), the
//! [`Watched`] comes back to nobody, and dropping it kills the group.

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::process::{Child, Command};
use tokio::sync::Semaphore;

use crate::process::group::Watched;
use crate::process::watchdog::Watchdog;

/// Spawns on the blocking pool at once, at most: two cores' worth of children
/// reaching `exec`, as the two worker threads of an earlier runtime gave.
const SPAWNS_IN_FLIGHT: usize = 2;

static SPAWNING: Semaphore = Semaphore::const_new(SPAWNS_IN_FLIGHT);

/// Script steps whose process is being started or has not been let go of.
static LIVE: AtomicUsize = AtomicUsize::new(0);

/// Counts one script step's process in [`LIVE`] until dropped.
pub(crate) struct LiveProcess(());

impl LiveProcess {
    /// Count one more; returns how many were counted before it.
    fn count() -> (LiveProcess, usize) {
        (LiveProcess(()), LIVE.fetch_add(1, Ordering::Relaxed))
    }
}

impl Drop for LiveProcess {
    fn drop(&mut self) {
        LIVE.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A started step process, the guard of its group, and its place in [`LIVE`]; keep
/// all three until the step is done with the process.
pub(crate) type Spawned = (Child, Watched, LiveProcess);

/// Start `command` (made with `process_group(0)`) and register its group with
/// `watchdog`: in place when no other script step is live, on the blocking pool
/// otherwise.
pub(crate) async fn spawn(mut command: Command, watchdog: Option<&Arc<Watchdog>>) -> io::Result<Spawned> {
    let (live, others) = LiveProcess::count();
    let watchdog = watchdog.cloned();
    if others == 0 {
        let child = command.spawn()?;
        let watched = Watched::new(watchdog, &child);
        return Ok((child, watched, live));
    }
    let permit = SPAWNING.acquire().await.map_err(io::Error::other)?;
    // The pool's threads run inside the runtime, so the child's pipes and exit are
    // registered with its driver as they would be here.
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
        let child = command.spawn()?;
        let watched = Watched::new(watchdog, &child);
        Ok((child, watched, live))
    })
    .await
    .map_err(|error| io::Error::other(format!("the thread starting the process failed: {error}")))?
}

#[cfg(test)]
mod tests {
    use std::process::Stdio;
    use std::time::{Duration, Instant};

    use super::*;
    use crate::process::proc_stat::ProcStat;

    fn echo(word: &str) -> Command {
        let mut command = Command::new("sh");
        command.args(["-c", &format!("echo {word}")]).stdout(Stdio::piped()).process_group(0);
        command
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_spawn_beside_a_live_process_reads_its_output_like_a_lone_one() {
        let (lone, mut first, _live) = spawn(echo("lone"), None).await.expect("lone spawn");
        let (beside, mut second, _also_live) = spawn(echo("beside"), None).await.expect("spawn on the pool");
        let (lone, beside) = (lone.wait_with_output().await.unwrap(), beside.wait_with_output().await.unwrap());
        assert_eq!((lone.stdout.as_slice(), beside.stdout.as_slice()), (&b"lone\n"[..], &b"beside\n"[..]));
        first.settle();
        second.settle();
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_group_started_on_the_pool_is_registered_there_and_released_when_done() {
        let watchdog = Arc::new(Watchdog::unforked());
        let (_lone, mut lone_watched, _live) = spawn(echo("lone"), None).await.expect("lone spawn");
        let mut sleeper = Command::new("sleep");
        sleeper.arg("30").process_group(0).kill_on_drop(true);
        let (child, watched, live) = spawn(sleeper, Some(&watchdog)).await.expect("spawn on the pool");
        let group = child.id().expect("running");
        assert_eq!(watchdog.registered(), [group], "registered by the thread that spawned it");
        drop((child, watched, live));
        assert!(watchdog.registered().is_empty(), "released with its guard");
        lone_watched.settle();
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_group_nobody_takes_from_the_pool_is_killed_and_released() {
        let watchdog = Arc::new(Watchdog::unforked());
        let (_lone, mut lone_watched, _live) = spawn(echo("lone"), None).await.expect("lone spawn");
        let mut sleeper = Command::new("sleep");
        sleeper.arg("30").process_group(0);
        let mut pooled = Box::pin(spawn(sleeper, Some(&watchdog)));
        // One poll hands the spawn to the pool; then the step gives up on it.
        tokio::select! {
            biased;
            _ = &mut pooled => {}
            () = std::future::ready(()) => {}
        }
        drop(pooled);
        let deadline = Instant::now() + Duration::from_secs(10);
        let group = loop {
            // The pool thread registers the group, then its guard is dropped unclaimed.
            if let Some(group) = watchdog.seen().first().copied() {
                break group;
            }
            assert!(Instant::now() < deadline, "the pool thread never registered the group");
            tokio::time::sleep(Duration::from_millis(10)).await;
        };
        while ProcStat::read(group as i32).is_some_and(|stat| !stat.is_zombie()) || !watchdog.registered().is_empty() {
            assert!(Instant::now() < deadline, "the unclaimed group {group} was killed and released");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        lone_watched.settle();
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_spawn_that_fails_on_the_pool_says_why() {
        let (_child, _watched, _live) = spawn(echo("x"), None).await.expect("lone spawn");
        let error = spawn(Command::new("/nonexistent/baton-test"), None).await.err().expect("no such program");
        assert_eq!(error.kind(), io::ErrorKind::NotFound);
    }
}
