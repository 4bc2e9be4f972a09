//! A synchronous publish/subscribe bus (seed §2).
//!
//! Emission is inline and synchronous: observers do quick, local I/O, and running
//! them in order keeps the trace in the order things happened. The one promise the
//! bus makes is that an observer can never hurt the run: a handler that returns an
//! error *or panics* is logged with `tracing` and the next handler still runs.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, RwLock};

use crate::events::Event;

/// An observer callback. Errors are reported, never propagated.
pub(crate) type Handler = Arc<dyn Fn(&Event) -> Result<(), HandlerError> + Send + Sync>;

/// What a failing handler reports.
pub(crate) type HandlerError = Box<dyn std::error::Error + Send + Sync>;

#[derive(Default)]
pub(crate) struct EventBus {
    handlers: RwLock<Vec<Handler>>,
}

impl EventBus {
    pub(crate) fn new() -> EventBus {
        EventBus::default()
    }

    /// Call `handler` for every event; observers pick the events they care about.
    pub(crate) fn on_all(&self, handler: Handler) {
        self.handlers.write().unwrap_or_else(|poisoned| poisoned.into_inner()).push(handler);
    }

    /// Deliver `event` to every matching handler, in subscription order.
    pub(crate) fn emit(&self, event: Event) {
        let kind = event.kind();
        let handlers: Vec<Handler> = {
            let handlers = self.handlers.read().unwrap_or_else(|poisoned| poisoned.into_inner());
            handlers.iter().map(Arc::clone).collect()
        };
        for handler in handlers {
            match catch_unwind(AssertUnwindSafe(|| handler(&event))) {
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
    fn emit_with_no_handlers_is_fine() {
        EventBus::new().emit(event());
    }
}
