//! Waking a helper thread once the run's thread goes idle, not while it still works.
//!
//! The run's thread hands the journal's `fdatasync` to a helper by waking it. The
//! kernel queues a woken thread on its waker's core and often runs it there at
//! once: under `perf record -e sched:sched_switch` of a 3,000-step `loop`, the run's
//! thread was preempted right after that wake-up at more than half of its steps,
//! in the middle of the step, before it started the next script, and got its core
//! back only once the helper had issued its sync and slept (issue 22, fourteenth
//! round). Nothing the helper does is needed before that spawn: the step is safe
//! from a killed Baton once its journal entry is written, and what must wait for
//! the sync (the step's events, the run's end) waits for it anyway.
//!
//! So the run's thread *defers*: while [`block_on`] runs its future, a wake-up is
//! queued, and given when the runtime is about to park ([`wake_queued`], tokio's
//! `on_thread_park`): after the next script is started, when the run's thread waits
//! for it and leaves its core to the helper. Any other thread (a test's runtime,
//! `baton serve`'s workers) wakes at once, as before. A thread that blocks without
//! parking its runtime must not wait for a helper it has not woken; the syncer's own
//! `wait` runs a round itself instead.

use std::cell::RefCell;
use std::future::Future;
use std::io;
use std::sync::Arc;

/// A helper that something on another thread may be waiting to be woken for.
pub(crate) trait Wake: Send + Sync {
    fn wake(&self);
}

thread_local! {
    /// `Some` while this thread defers: the helpers to wake when it parks.
    static QUEUED: RefCell<Option<Vec<Arc<dyn Wake>>>> = const { RefCell::new(None) };
}

/// Wake `helper` when this thread next parks, if it defers; at once otherwise.
///
/// A helper already queued is woken at once, and leaves the queue: a thread that
/// never parks (a busy runtime only polls its driver between tasks, which runs no
/// hook) would otherwise hold its helpers' work back for as long as it keeps busy.
/// So a helper waits for one hand-over at most, and a run that steps one script at
/// a time, parking between them, wakes its syncer at every park.
pub(crate) fn wake_when_idle<W: Wake + 'static>(helper: &Arc<W>) {
    let queued = QUEUED.try_with(|queued| {
        let Ok(mut queued) = queued.try_borrow_mut() else { return false };
        let Some(helpers) = queued.as_mut() else { return false };
        let address = Arc::as_ptr(helper).cast::<()>();
        match helpers.iter().position(|other| Arc::as_ptr(other).cast::<()>() == address) {
            Some(already) => {
                helpers.swap_remove(already);
                false
            }
            None => {
                helpers.push(Arc::clone(helper) as Arc<dyn Wake>);
                true
            }
        }
    });
    if queued != Ok(true) {
        helper.wake();
    }
}

/// Run `future` to its end on a runtime of this thread alone, this thread
/// deferring its wake-ups until the runtime parks. The park hook and the deferring
/// are set up together here, since either without the other would be wrong: a hook
/// with nothing queued does nothing, and queued wake-ups with no hook wait for the
/// end. The runtime is shut down without waiting for its blocking pool's threads
/// (`cli::block_on` says why).
pub(crate) fn block_on<F: Future>(future: F) -> io::Result<F::Output> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().on_thread_park(wake_queued).build()?;
    let output = deferring(|| runtime.block_on(future));
    runtime.shutdown_background();
    Ok(output)
}

/// Wake every helper this thread queued (the runtime's park hook).
fn wake_queued() {
    let helpers = QUEUED
        .try_with(|queued| queued.try_borrow_mut().ok().and_then(|mut queued| queued.as_mut().map(std::mem::take)))
        .ok()
        .flatten()
        .unwrap_or_default();
    for helper in helpers {
        helper.wake();
    }
}

/// Run `work` with this thread deferring its wake-ups; whatever it queued and
/// did not give by its end is given then, however it ends, and the thread wakes at
/// once from then on.
fn deferring<T>(work: impl FnOnce() -> T) -> T {
    QUEUED.with_borrow_mut(|queued| {
        queued.get_or_insert_with(Vec::new);
    });
    let _given = Given;
    work()
}

/// Ends a thread's deferring when dropped, waking what is still queued.
struct Given;

impl Drop for Given {
    fn drop(&mut self) {
        let helpers = QUEUED.try_with(|queued| queued.try_borrow_mut().ok().and_then(|mut queued| queued.take()));
        for helper in helpers.ok().flatten().unwrap_or_default() {
            helper.wake();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use super::*;

    #[derive(Default)]
    struct Counted(AtomicUsize);

    impl Wake for Counted {
        fn wake(&self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    impl Counted {
        fn woken(&self) -> usize {
            self.0.load(Ordering::SeqCst)
        }
    }

    #[test]
    fn a_thread_that_does_not_defer_wakes_at_once() {
        let helper = Arc::new(Counted::default());
        wake_when_idle(&helper);
        assert_eq!(helper.woken(), 1);
    }

    #[test]
    fn a_deferring_thread_wakes_its_helpers_when_it_parks_and_the_rest_at_its_end() {
        let (first, second) = (Arc::new(Counted::default()), Arc::new(Counted::default()));
        deferring(|| {
            wake_when_idle(&first);
            wake_when_idle(&second);
            assert_eq!((first.woken(), second.woken()), (0, 0), "nothing before the park");
            wake_queued();
            assert_eq!((first.woken(), second.woken()), (1, 1), "each at the park");
            wake_queued();
            assert_eq!((first.woken(), second.woken()), (1, 1), "a park gives each wake-up once");
            wake_when_idle(&first);
        });
        assert_eq!(first.woken(), 2, "what was queued after the last park is given at the end");
        wake_when_idle(&first);
        assert_eq!(first.woken(), 3, "the thread no longer defers");
    }

    #[test]
    fn a_helper_handed_work_twice_before_a_park_is_woken_at_the_second() {
        let helper = Arc::new(Counted::default());
        deferring(|| {
            wake_when_idle(&helper);
            assert_eq!(helper.woken(), 0);
            wake_when_idle(&helper);
            assert_eq!(helper.woken(), 1, "a busy thread holds a helper back one hand-over at most");
            wake_queued();
            assert_eq!(helper.woken(), 1, "and it is not queued any more");
            wake_when_idle(&helper);
        });
        assert_eq!(helper.woken(), 2);
    }

    #[test]
    fn a_deferring_thread_that_panics_still_wakes_what_it_queued() {
        let helper = Arc::new(Counted::default());
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            deferring(|| {
                wake_when_idle(&helper);
                panic!("the run failed");
            })
        }));
        assert!(outcome.is_err());
        assert_eq!(helper.woken(), 1);
    }

    /// A helper that answers on a channel when it is woken, from its own thread.
    struct Answering(std::sync::Mutex<Option<tokio::sync::oneshot::Sender<()>>>);

    impl Wake for Answering {
        fn wake(&self) {
            if let Some(answer) = self.0.lock().ok().and_then(|mut answer| answer.take()) {
                std::thread::spawn(move || answer.send(()));
            }
        }
    }

    #[test]
    fn a_runtime_with_the_park_hook_wakes_a_helper_it_then_waits_for() {
        let (answer, answered) = tokio::sync::oneshot::channel();
        let helper = Arc::new(Answering(std::sync::Mutex::new(Some(answer))));
        let outcome = block_on(async {
            wake_when_idle(&helper);
            // Without the hook the helper is never woken while this waits.
            tokio::time::timeout(Duration::from_secs(30), answered).await
        });
        assert!(matches!(outcome, Ok(Ok(Ok(())))), "the helper was woken at the park");
    }
}
