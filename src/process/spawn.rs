//! Starting a step's process without holding up the other steps.
//!
//! `posix_spawn` returns only once the child has called `exec` (glibc clones with
//! `CLONE_VFORK`), and the child may first have to wait for a core: with 100 scripts
//! on two cores, each spawn held its thread 1.2 ms (the median under `strace -T`). A
//! run's loop and its steps' tasks share one thread (`cli::block_on`), so while other
//! steps are live, a spawn there would keep all of them from reading their output and
//! the loop from starting the next step. So a spawn made while another step's process
//! runs is made on the blocking pool's thread instead. A lone spawn (a chain of steps,
//! a one-state run) is made in place: nothing else could run meanwhile, and the
//! hand-off to a pool thread and back would only add to it.

use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::process::{Child, Command};

/// How many steps' processes Baton has started and not yet seen end.
static LIVE: AtomicUsize = AtomicUsize::new(0);

/// One live step process, counted until it is dropped.
pub(crate) struct LiveProcess(());

impl Drop for LiveProcess {
    fn drop(&mut self) {
        LIVE.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Start `command`; keep the [`LiveProcess`] until the process has ended.
pub(crate) async fn spawn(mut command: Command) -> io::Result<(Child, LiveProcess)> {
    let others = LIVE.fetch_add(1, Ordering::Relaxed);
    let live = LiveProcess(());
    let child = if others == 0 {
        command.spawn()?
    } else {
        // The pool's threads run inside the runtime, where a child's pipes and exit are
        // registered with its driver, as they would be here.
        tokio::task::spawn_blocking(move || command.spawn())
            .await
            .map_err(|error| io::Error::other(format!("the thread starting the process failed: {error}")))??
    };
    Ok((child, live))
}

#[cfg(test)]
mod tests {
    use std::process::Stdio;

    use super::*;

    fn echo(word: &str) -> Command {
        let mut command = Command::new("sh");
        command.args(["-c", &format!("echo {word}")]).stdout(Stdio::piped());
        command
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_spawn_beside_a_live_process_reads_its_output_like_a_lone_one() {
        let (lone, first) = spawn(echo("lone")).await.expect("lone spawn");
        let (beside, second) = spawn(echo("beside")).await.expect("spawn on the pool");
        let (lone, beside) = (lone.wait_with_output().await.unwrap(), beside.wait_with_output().await.unwrap());
        assert_eq!((lone.stdout.as_slice(), beside.stdout.as_slice()), (&b"lone\n"[..], &b"beside\n"[..]));
        drop((first, second));
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_spawn_that_fails_on_the_pool_says_why() {
        let (_child, _live) = spawn(echo("x")).await.expect("lone spawn");
        let error = spawn(Command::new("/nonexistent/baton-test")).await.err().expect("no such program");
        assert_eq!(error.kind(), io::ErrorKind::NotFound);
    }
}
