//! Where a run stops for its author (issue 24, `docs/inspecting.md` "Step by
//! step"): before a state runs, after a state ran, or after every step.
//!
//! Breakpoints are launch parameters (`LaunchParams::breakpoints`): the snapshot a
//! run or resume writes before its first step holds them, so a crash keeps them,
//! and a resume reuses them unless it sets or clears them. The stop itself is an
//! agent's pause (`PauseReason::Breakpoint`), journalled with the agent like any
//! other pause.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::ids::StateName;

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Breakpoints {
    /// An agent about to run one of these states stops first (`--break-before`).
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub(crate) before: BTreeSet<StateName>,
    /// An agent that completed a step at one of these states stops before its
    /// next one (`--break-after`).
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub(crate) after: BTreeSet<StateName>,
    /// Every agent stops after each of its steps (`--step`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) step: bool,
}

/// Why an agent stopped at a breakpoint: its pause message (`baton status`,
/// `AgentPaused`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum BreakpointHit {
    Before(StateName),
    After(StateName),
    Step(StateName),
}

impl BreakpointHit {
    pub(crate) fn message(&self) -> String {
        match self {
            BreakpointHit::Before(state) => format!("stopped before {state} (--break-before)"),
            BreakpointHit::After(state) => format!("stopped after {state} (--break-after)"),
            BreakpointHit::Step(state) => format!("stopped after {state} (--step)"),
        }
    }
}

impl Breakpoints {
    pub(crate) fn is_empty(&self) -> bool {
        self.before.is_empty() && self.after.is_empty() && !self.step
    }

    /// An agent about to run `state`: does it stop first?
    pub(crate) fn before(&self, state: &StateName) -> Option<BreakpointHit> {
        self.before.contains(state).then(|| BreakpointHit::Before(state.clone()))
    }

    /// An agent that just completed a step at `state`: does it stop before its next?
    pub(crate) fn after(&self, state: &StateName) -> Option<BreakpointHit> {
        if self.after.contains(state) {
            Some(BreakpointHit::After(state.clone()))
        } else {
            self.step.then(|| BreakpointHit::Step(state.clone()))
        }
    }

    /// The breakpoints as the command line sets them (`baton status`).
    pub(crate) fn described(&self) -> String {
        let mut parts = Vec::new();
        let names = |set: &BTreeSet<StateName>| set.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(",");
        if !self.before.is_empty() {
            parts.push(format!("--break-before {}", names(&self.before)));
        }
        if !self.after.is_empty() {
            parts.push(format!("--break-after {}", names(&self.after)));
        }
        if self.step {
            parts.push("--step".to_string());
        }
        parts.join(" ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_stops_after_every_state_and_an_after_breakpoint_names_its_own() {
        let mut breakpoints = Breakpoints::default();
        assert!(breakpoints.is_empty());
        assert_eq!(breakpoints.after(&"PLAN.md".into()), None);
        breakpoints.after.insert("PLAN.md".into());
        breakpoints.step = true;
        assert_eq!(breakpoints.after(&"PLAN.md".into()), Some(BreakpointHit::After("PLAN.md".into())));
        assert_eq!(breakpoints.after(&"JUDGE.md".into()), Some(BreakpointHit::Step("JUDGE.md".into())));
        assert_eq!(breakpoints.described(), "--break-after PLAN.md --step");
    }

    #[test]
    fn breakpoints_survive_a_round_trip_and_are_absent_when_empty() {
        let mut breakpoints = Breakpoints::default();
        assert_eq!(serde_json::to_string(&breakpoints).unwrap(), "{}");
        breakpoints.before.insert("JUDGE.md".into());
        let text = serde_json::to_string(&breakpoints).unwrap();
        assert_eq!(text, r#"{"before":["JUDGE.md"]}"#);
        assert_eq!(serde_json::from_str::<Breakpoints>(&text).unwrap(), breakpoints);
    }
}
