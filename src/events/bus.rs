//! A synchronous publish/subscribe bus (seed §2).
//!
//! Emission is inline and synchronous: observers do quick, local I/O, and running
//! them in order keeps the trace in the order things happened. The one promise the
//! bus makes is that an observer can never hurt the run: a handler that returns an
//! error *or panics* is logged with `tracing` and the next handler still runs.
//!
//! Events also wait for the store: once the loop has written a journal entry whose
//! sync is still running (`store::syncer`), every event emitted from then on is held
//! back, in order, until that entry is durable, so nothing anyone sees (console,
//! trace) is about a change a power loss could undo, while the next steps already run.

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

use crate::events::Event;

/// An observer callback. Errors are reported, never propagated.
pub(crate) type Handler = Arc<dyn Fn(&Event) -> Result<(), HandlerError> + Send + Sync>;

/// What a failing handler reports.
pub(crate) type HandlerError = Box<dyn std::error::Error + Send + Sync>;

#[derive(Default)]
pub(crate) struct EventBus {
    handlers: RwLock<Vec<Handler>>,
    /// A handler keeps a record of the run (see `on_all`).
    records: AtomicBool,
    gate: Mutex<Gate>,
}

/// Events held until the store is durable up to the point they were emitted at.
#[derive(Default)]
struct Gate {
    /// What an event emitted now needs durable (a journal sequence number).
    required: u64,
    /// What is durable.
    reached: u64,
    /// Stop holding: the store failed, and the run's last words must be seen.
    open: bool,
    /// Held events, each with what it needs.
    held: VecDeque<(u64, Event)>,
    /// One caller is delivering held events; new ones queue behind them.
    draining: bool,
}

impl EventBus {
    pub(crate) fn new() -> EventBus {
        EventBus::default()
    }

    /// Call `handler` for every event; observers pick the events they care about.
    /// What it writes is taken for a record of the run (a trace, an export), which a
    /// resume completes by publishing the committed steps again; so a run's end
    /// waits until its last step's events reached it ([`EventBus::keeps_records`]).
    pub(crate) fn on_all(&self, handler: Handler) {
        self.records.store(true, Ordering::Relaxed);
        self.on_all_passing(handler);
    }

    /// Like [`EventBus::on_all`], for an observer that keeps no record (the console).
    pub(crate) fn on_all_passing(&self, handler: Handler) {
        self.handlers.write().unwrap_or_else(|poisoned| poisoned.into_inner()).push(handler);
    }

    /// Whether a handler keeps a record a resume would complete.
    pub(crate) fn keeps_records(&self) -> bool {
        self.records.load(Ordering::Relaxed)
    }

    fn gate(&self) -> MutexGuard<'_, Gate> {
        self.gate.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Events emitted from now on wait until `reached(seq)` (or later) is called.
    pub(crate) fn hold_until(&self, seq: u64) {
        let mut gate = self.gate();
        gate.required = gate.required.max(seq);
    }

    /// Everything up to `seq` is durable: deliver the events that waited for it.
    pub(crate) fn reached(&self, seq: u64) {
        let mut gate = self.gate();
        gate.reached = gate.reached.max(seq);
        self.drain(gate);
    }

    /// Deliver every held event and hold none from now on.
    pub(crate) fn open(&self) {
        let mut gate = self.gate();
        gate.open = true;
        self.drain(gate);
    }

    /// Deliver held events in order, as far as they may go; other threads' events
    /// queue behind while this runs, so the order is kept.
    fn drain<'bus>(&'bus self, mut gate: MutexGuard<'bus, Gate>) {
        if gate.draining {
            return;
        }
        gate.draining = true;
        loop {
            let mut ready = Vec::new();
            while let Some((needs, _)) = gate.held.front()
                && (gate.open || *needs <= gate.reached)
            {
                ready.extend(gate.held.pop_front().map(|(_, event)| event));
            }
            if ready.is_empty() {
                gate.draining = false;
                return;
            }
            drop(gate);
            for event in ready {
                self.deliver(&event);
            }
            gate = self.gate();
        }
    }

    /// Deliver `event` to every handler, in subscription order, unless it must wait
    /// for the store (`hold_until`).
    pub(crate) fn emit(&self, event: Event) {
        {
            let mut gate = self.gate();
            if !gate.open && (gate.required > gate.reached || gate.draining || !gate.held.is_empty()) {
                let needs = gate.required;
                gate.held.push_back((needs, event));
                return;
            }
        }
        self.deliver(&event);
    }

    fn deliver(&self, event: &Event) {
        let kind = event.kind();
        let handlers: Vec<Handler> = {
            let handlers = self.handlers.read().unwrap_or_else(|poisoned| poisoned.into_inner());
            handlers.iter().map(Arc::clone).collect()
        };
        for handler in handlers {
            match catch_unwind(AssertUnwindSafe(|| handler(event))) {
                Ok(Ok(())) => {}
                Ok(Err(error)) => tracing::error!(event = ?kind, %error, "event handler failed"),
                Err(panic) => {
                    let message = panic
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "non-string panic payload".to_string());
                    tracing::error!(event = ?kind, panic = %message, "event handler panicked");
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    fn event() -> Event {
        Event::ProgressMessage { agent_id: "main".into(), message: "hi".into() }
    }

    fn recorder() -> (Arc<Mutex<Vec<String>>>, Handler) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        let handler: Handler = Arc::new(move |event: &Event| {
            sink.lock().unwrap().push(format!("{:?}", event.kind()));
            Ok(())
        });
        (seen, handler)
    }

    #[test]
    fn subscribe_and_emit() {
        let bus = EventBus::new();
        let (seen, handler) = recorder();
        bus.on_all(handler);
        bus.emit(event());
        assert_eq!(*seen.lock().unwrap(), ["ProgressMessage"]);
    }

    #[test]
    fn multiple_handlers_all_called() {
        let bus = EventBus::new();
        let (first, handler_one) = recorder();
        let (second, handler_two) = recorder();
        bus.on_all(handler_one);
        bus.on_all(handler_two);
        bus.emit(event());
        assert_eq!(first.lock().unwrap().len(), 1);
        assert_eq!(second.lock().unwrap().len(), 1);
    }

    #[test]
    fn handler_error_is_caught_and_later_handlers_run() {
        let bus = EventBus::new();
        bus.on_all(Arc::new(|_: &Event| Err("disk full".into())));
        let (seen, handler) = recorder();
        bus.on_all(handler);
        bus.emit(event());
        assert_eq!(seen.lock().unwrap().len(), 1);
    }

    #[test]
    fn handler_panic_is_caught_and_later_handlers_run() {
        let bus = EventBus::new();
        bus.on_all(Arc::new(|_: &Event| panic!("observer bug")));
        let (seen, handler) = recorder();
        bus.on_all(handler);
        bus.emit(event());
        bus.emit(event());
        assert_eq!(seen.lock().unwrap().len(), 2);
    }

    #[test]
    fn events_wait_for_the_store_and_keep_their_order() {
        let bus = EventBus::new();
        let (seen, handler) = recorder();
        bus.on_all(handler);
        let progress = |text: &str| Event::ProgressMessage { agent_id: "main".into(), message: text.into() };
        let messages = |seen: &Mutex<Vec<String>>| seen.lock().unwrap().len();
        bus.emit(progress("before any write"));
        bus.hold_until(1);
        bus.emit(progress("needs 1"));
        bus.hold_until(2);
        bus.emit(progress("needs 2"));
        assert_eq!(messages(&seen), 1);
        bus.reached(1);
        assert_eq!(messages(&seen), 2);
        // An event needing nothing new still waits behind the held one.
        bus.emit(progress("after"));
        assert_eq!(messages(&seen), 2);
        bus.reached(2);
        assert_eq!(messages(&seen), 4);
        bus.hold_until(3);
        bus.emit(progress("needs 3"));
        bus.open();
        assert_eq!(messages(&seen), 5);
        bus.emit(progress("open"));
        assert_eq!(messages(&seen), 6);
    }

    #[test]
    fn emit_with_no_handlers_is_fine() {
        EventBus::new().emit(event());
    }
}
