//! An `<ask>` whose time ran out (A11): it goes to `timeout_next` with an empty
//! answer, or, with none (or one that does not resolve), its agent pauses saying so.
//! Used when a run is resumed and, under `--on-ask prompt`, while it waits.

use std::time::Duration;

use crate::model::agent::{Agent, PauseReason, PendingAsk};
use crate::text::duration::parse_duration;
use crate::workflow::resolution::resolve_state;

/// When `ask` times out, if it has a readable `timeout` and `asked_at`.
pub(crate) fn deadline(ask: &PendingAsk) -> Option<jiff::Timestamp> {
    let limit = parse_duration(ask.timeout.as_deref()?).ok()?;
    let asked_at: jiff::Timestamp = ask.asked_at.parse().ok()?;
    asked_at.checked_add(jiff::SignedDuration::try_from(limit).ok()?).ok()
}

/// How long until `ask` times out from `now` (zero once it has).
pub(crate) fn remaining(ask: &PendingAsk, now: jiff::Timestamp) -> Option<Duration> {
    let left = deadline(ask)?.duration_since(now);
    Some(Duration::try_from(left).unwrap_or(Duration::ZERO))
}

/// Time out `agent`'s ask: to `timeout_next`, or pause the agent.
pub(crate) fn time_out(agent: &mut Agent) {
    let Some(ask) = agent.ask.clone() else { return };
    let timeout = ask.timeout.clone().unwrap_or_default();
    match ask.timeout_next.as_deref().map(|next| resolve_state(&agent.scope_dir, next)) {
        Some(Ok(next)) => {
            if let Some(pending) = agent.ask.as_mut() {
                pending.next = next.into();
            }
            agent.answer(String::new());
        }
        Some(Err(error)) => {
            let message =
                format!("{} timed out after {timeout}, and its timeout_next does not resolve: {error}", ask.id);
            agent.drop_ask(PauseReason::AskTimeout, message);
        }
        None => {
            let message = format!("{} timed out after {timeout} with no answer, and has no timeout_next", ask.id);
            agent.drop_ask(PauseReason::AskTimeout, message);
        }
    }
}
