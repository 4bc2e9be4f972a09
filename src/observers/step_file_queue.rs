//! The per-step files on their way to the trace's writer thread.
//!
//! A channel wakes its receiver at every send: a `futex` call on the run's
//! thread and a context switch at every step, 9 µs of the 0.37 ms of CPU that a
//! script step costs that thread (issue 22, thirteenth round). Here the writer,
//! once it has written what it found, waits a moment ([`GATHER`]) for the next
//! steps' files without being woken for them; only a writer that found nothing and
//! sleeps is woken, by the next step. A run that steps faster than that wakes its
//! writer on its own timer, never on the run's thread. The files land up to
//! [`GATHER`] later; closing the queue ends the wait at once.

use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

/// How long the writer waits, after a batch, for more before it looks again.
const GATHER: Duration = Duration::from_millis(5);

pub(crate) struct StepFileQueue<T> {
    state: Mutex<State<T>>,
    ready: Condvar,
    /// [`GATHER`], but in tests.
    gather_for: Duration,
}

struct State<T> {
    waiting: Vec<T>,
    /// The writer found nothing and sleeps until it is woken.
    idle: bool,
    closed: bool,
    /// How many times a push woke the writer.
    wakes: u64,
}

impl<T> StepFileQueue<T> {
    pub(crate) fn new() -> StepFileQueue<T> {
        StepFileQueue::gathering_for(GATHER)
    }

    fn gathering_for(gather_for: Duration) -> StepFileQueue<T> {
        let state = State { waiting: Vec::new(), idle: false, closed: false, wakes: 0 };
        StepFileQueue { state: Mutex::new(state), ready: Condvar::new(), gather_for }
    }

    fn lock(&self) -> MutexGuard<'_, State<T>> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Hand `item` to the writer, or give it back once the queue is closed.
    pub(crate) fn push(&self, item: T) -> Result<(), T> {
        let mut state = self.lock();
        if state.closed {
            return Err(item);
        }
        state.waiting.push(item);
        let wake = std::mem::take(&mut state.idle);
        state.wakes += u64::from(wake);
        drop(state);
        if wake {
            self.ready.notify_one();
        }
        Ok(())
    }

    /// On the writer's thread: everything waiting, in the order it came, after
    /// sleeping until there is some; `None` once the queue is closed and empty.
    pub(crate) fn take(&self) -> Option<Vec<T>> {
        let mut state = self.lock();
        loop {
            if !state.waiting.is_empty() {
                state.idle = false;
                return Some(std::mem::take(&mut state.waiting));
            }
            if state.closed {
                return None;
            }
            state.idle = true;
            state = self.ready.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// On the writer's thread, after a batch: let the next steps' files gather
    /// for [`GATHER`], unless the queue is closed meanwhile.
    pub(crate) fn gather(&self) {
        let state = self.lock();
        let waited = self.ready.wait_timeout_while(state, self.gather_for, |state| !state.closed);
        drop(waited.unwrap_or_else(PoisonError::into_inner));
    }

    /// No more pushes: the writer takes what is left, then ends.
    pub(crate) fn close(&self) {
        self.lock().closed = true;
        self.ready.notify_all();
    }

    /// Close the queue when what this returns is dropped: a writer that ends for
    /// any reason (a panic too) lets the run write its files itself instead of
    /// queueing them for no one.
    pub(crate) fn closed_on_drop(&self) -> ClosedOnDrop<'_, T> {
        ClosedOnDrop(self)
    }

    #[cfg(test)]
    fn wakes(&self) -> u64 {
        self.lock().wakes
    }

    #[cfg(test)]
    fn idle(&self) -> bool {
        self.lock().idle
    }
}

pub(crate) struct ClosedOnDrop<'a, T>(&'a StepFileQueue<T>);

impl<T> Drop for ClosedOnDrop<'_, T> {
    fn drop(&mut self) {
        self.0.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn what_is_pushed_is_taken_in_order_and_a_closed_queue_gives_pushes_back() {
        let queue = StepFileQueue::new();
        for item in 1..=3 {
            queue.push(item).expect("open");
        }
        queue.close();
        assert_eq!(queue.push(4), Err(4));
        assert_eq!(queue.take(), Some(vec![1, 2, 3]));
        assert_eq!(queue.take(), None);
    }

    #[test]
    fn only_a_writer_that_found_nothing_is_woken() {
        let queue = Arc::new(StepFileQueue::new());
        for item in 0..100 {
            queue.push(item).expect("open");
        }
        assert_eq!(queue.wakes(), 0, "a writer that is busy, or gathering, is not woken");
        assert_eq!(queue.take().map(|batch| batch.len()), Some(100));
        let writer = {
            let queue = Arc::clone(&queue);
            std::thread::spawn(move || queue.take())
        };
        while !queue.idle() {
            std::thread::yield_now();
        }
        queue.push(100).expect("open");
        queue.push(101).expect("open");
        assert_eq!(queue.wakes(), 1, "the first push woke the sleeping writer, the second found it awake");
        let first = writer.join().expect("joined").expect("a batch");
        let rest = if first.len() == 2 { Vec::new() } else { queue.take().expect("the second push") };
        assert_eq!([first, rest].concat(), [100, 101]);
    }

    #[test]
    fn closing_ends_a_gathering_writer_wait_at_once_and_it_takes_what_is_left() {
        // A day's gathering: were closing not to end it, the test would hang.
        let queue = Arc::new(StepFileQueue::gathering_for(Duration::from_secs(86_400)));
        queue.push(1).expect("open");
        let writer = {
            let queue = Arc::clone(&queue);
            std::thread::spawn(move || {
                queue.gather();
                (queue.take(), queue.take())
            })
        };
        queue.close();
        assert_eq!(writer.join().expect("joined"), (Some(vec![1]), None));
    }

    #[test]
    fn a_writer_that_panics_closes_the_queue() {
        let queue = Arc::new(StepFileQueue::new());
        let writer = {
            let queue = Arc::clone(&queue);
            std::thread::spawn(move || {
                let _closed = queue.closed_on_drop();
                panic!("the writer failed");
            })
        };
        assert!(writer.join().is_err());
        assert_eq!(queue.push(1), Err(1), "the run writes its files itself");
    }
}
