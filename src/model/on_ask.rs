//! `--on-ask`: what a run does when an agent asks a person (`<ask>`, §11). Kept in
//! the run's launch parameters, so a resume does what the launch chose unless told
//! otherwise (A10).

use std::fmt;

use serde::{Deserialize, Serialize};

/// What an `<ask>` does. Stable strings: they are the flag's values and are persisted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum OnAsk {
    /// The agent pauses (`ask_rejected`, R11.3); a launch of a workflow that can ask
    /// is refused (R11.2).
    #[default]
    Reject,
    /// The run drains and exits 2 with the ask on stdout (R11.4).
    Pause,
    /// Asked at the terminal while the run goes on; as `Pause` without a terminal.
    Prompt,
    /// Answered by JSON control lines on stdin while the run goes on, for a
    /// supervisor such as `baton serve` (`run::control`); as `Pause` once stdin ends.
    Json,
}

impl OnAsk {
    /// Every mode, in the order the help lists them.
    pub(crate) const ALL: [OnAsk; 4] = [OnAsk::Reject, OnAsk::Pause, OnAsk::Prompt, OnAsk::Json];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            OnAsk::Reject => "reject",
            OnAsk::Pause => "pause",
            OnAsk::Prompt => "prompt",
            OnAsk::Json => "json",
        }
    }

    /// Whether a workflow may ask at all: every mode but `reject`.
    pub(crate) fn lets_agents_ask(self) -> bool {
        self != OnAsk::Reject
    }
}

impl fmt::Display for OnAsk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_are_persisted_as_their_flag_values() {
        for mode in OnAsk::ALL {
            let json = serde_json::to_string(&mode).unwrap();
            assert_eq!(json, format!("\"{mode}\""));
            assert_eq!(serde_json::from_str::<OnAsk>(&json).unwrap(), mode);
        }
    }
}
