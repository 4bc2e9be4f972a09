//! `baton logs`: a run's trace shown as the console showed it while it ran.
//!
//! Each trace line is read back into its [`Event`] and worded by the console's own
//! [`ConsoleText`], so a replay says exactly what a person watching the run saw.
//! Every event goes through the same `ConsoleText`, shown or not, so agents keep the
//! colours they had and a transition still says how long its state took when only
//! part of the run is shown.
//!
//! Filters pick what an event is *about*: its agent, and the state that agent was
//! in (events that name no state, a tool call or a `<print>`, belong to the state
//! their agent last started). Run-wide events (start, end, pause, failure) are
//! always kept: they frame whatever is shown.

use std::collections::{BTreeSet, HashMap};

use crate::events::Event;
use crate::observers::console::{ConsoleText, Verbosity};
use crate::text::state_name::display_stem;

/// Which events to show.
#[derive(Clone, Debug, Default)]
pub(crate) struct Filter {
    pub(crate) agent: Option<String>,
    /// A state name, with or without its extension.
    pub(crate) state: Option<String>,
}

impl Filter {
    fn keeps(&self, place: &Place) -> bool {
        let Place::Agent { agent, state } = place else { return true };
        if self.agent.as_ref().is_some_and(|wanted| wanted != agent) {
            return false;
        }
        match (&self.state, state) {
            (None, _) => true,
            (Some(wanted), Some(state)) => same_state(wanted, state),
            (Some(_), None) => false,
        }
    }

    fn is_empty(&self) -> bool {
        self.agent.is_none() && self.state.is_none()
    }
}

/// Whether `given` (as typed, extension optional) names `state`.
pub(crate) fn same_state(given: &str, state: &str) -> bool {
    given == state || display_stem(given) == display_stem(state)
}

/// What an event is about.
#[derive(Debug, PartialEq)]
pub(crate) enum Place {
    /// The run as a whole.
    Run,
    Agent {
        agent: String,
        state: Option<String>,
    },
}

/// Where each agent is, so that events naming no state can be placed.
#[derive(Default)]
pub(crate) struct Places {
    current: HashMap<String, String>,
}

impl Places {
    /// What `event` is about; remembers the state an agent starts.
    pub(crate) fn place(&mut self, event: &Event) -> Place {
        let at = |agent: &str, state: &str| Place::Agent { agent: agent.to_string(), state: Some(state.to_string()) };
        match event {
            Event::WorkflowStarted { .. }
            | Event::WorkflowCompleted { .. }
            | Event::WorkflowAsking { .. }
            | Event::WorkflowPaused { .. }
            | Event::WorkflowStopping { .. }
            | Event::WorkflowInterrupted { .. }
            | Event::WorkflowWaiting { .. }
            | Event::WorkflowResuming { .. }
            | Event::WorkflowThrottled { .. }
            | Event::ControlIgnored { .. }
            | Event::RunFailed { .. } => Place::Run,
            Event::StateStarted { agent_id, state, .. } => {
                self.current.insert(agent_id.to_string(), state.to_string());
                at(agent_id, state)
            }
            Event::AgentSpawned { new_agent_id, initial_state, .. } => {
                self.current.insert(new_agent_id.to_string(), initial_state.to_string());
                at(new_agent_id, initial_state)
            }
            Event::StateCompleted { agent_id, state, .. }
            | Event::StepRanOn { agent_id, state, .. }
            | Event::ScriptOutput { agent_id, state, .. }
            | Event::PromptRendered { agent_id, state, .. }
            | Event::ClaudeStreamOutput { agent_id, state, .. }
            | Event::ClaudeInvocationStarted { agent_id, state, .. }
            | Event::ErrorOccurred { agent_id, state, .. }
            | Event::AgentPaused { agent_id, state, .. }
            | Event::AgentEdited { agent_id, state, .. }
            | Event::TransitionOccurred { agent_id, from_state: state, .. } => at(agent_id, state),
            Event::AgentTerminated { agent_id, .. }
            | Event::AgentAsking { agent_id, .. }
            | Event::AskWaiting { agent_id, .. }
            | Event::JoinWaiting { agent_id, .. }
            | Event::JoinCompleted { agent_id, .. }
            | Event::ToolInvocation { agent_id, .. }
            | Event::ToolError { agent_id, .. }
            | Event::ProgressMessage { agent_id, .. }
            | Event::PrintOutput { agent_id, .. } => {
                Place::Agent { agent: agent_id.to_string(), state: self.current.get(&**agent_id).cloned() }
            }
        }
    }
}

/// A trace line read back, or `None` for a line that is no event this Baton knows.
pub(crate) fn parse(line: &str) -> Option<Event> {
    serde_json::from_str(line).ok()
}

/// Whether `event` ends the run (until a resume starts it again).
pub(crate) fn ends_run(event: &Event) -> bool {
    matches!(
        event,
        Event::WorkflowCompleted { .. }
            | Event::RunFailed { .. }
            | Event::WorkflowPaused { .. }
            | Event::WorkflowAsking { .. }
            | Event::WorkflowInterrupted { .. }
    )
}

/// Turns trace lines, in order, into what `baton logs` prints.
pub(crate) struct LogView {
    text: ConsoleText,
    places: Places,
    filter: Filter,
    raw: bool,
    ended: bool,
    unreadable: u64,
    agents: BTreeSet<String>,
}

impl LogView {
    /// `raw` prints the kept lines as they are; `colour` colours agents as a terminal console does.
    pub(crate) fn new(filter: Filter, raw: bool, colour: bool) -> LogView {
        LogView {
            text: ConsoleText::new(Verbosity::Normal, colour),
            places: Places::default(),
            filter,
            raw,
            ended: false,
            unreadable: 0,
            agents: BTreeSet::new(),
        }
    }

    /// What to print for the next trace line: nothing, or lines ending in `\n`.
    pub(crate) fn line(&mut self, line: &str) -> String {
        let Some(event) = parse(line) else {
            self.unreadable += 1;
            // Raw output is the trace itself; only a filter needs to understand a line.
            return if self.raw && self.filter.is_empty() { format!("{line}\n") } else { String::new() };
        };
        if ends_run(&event) {
            self.ended = true;
        } else if matches!(event, Event::WorkflowStarted { .. }) {
            self.ended = false;
        }
        let place = self.places.place(&event);
        if let Place::Agent { agent, .. } = &place {
            self.agents.insert(agent.clone());
        }
        // Rendered even when not shown: the console remembers colours and durations.
        let rendered = self.text.render(&event);
        if !self.filter.keeps(&place) {
            return String::new();
        }
        if self.raw {
            return format!("{line}\n");
        }
        rendered.unwrap_or_default()
    }

    /// Whether the last run-wide event read ended the run.
    pub(crate) fn ended(&self) -> bool {
        self.ended
    }

    /// Lines that were no event (a foreign or newer line): skipped, or printed as they are by `--raw`.
    pub(crate) fn unreadable_lines(&self) -> u64 {
        self.unreadable
    }

    /// Every agent the trace has spoken of so far.
    pub(crate) fn agents(&self) -> &BTreeSet<String> {
        &self.agents
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines() -> Vec<String> {
        [
            r#"{"v":1,"seq":1,"ts":"t","type":"WorkflowStarted","run_id":"r","scope_dir":"/w","run_dir":"/w/.baton/runs/r","initial_state":"START.sh","resumed":false}"#,
            r#"{"v":1,"seq":2,"ts":"t","type":"StateStarted","agent_id":"main","state":"START.sh","state_type":"script","step":1,"attempt":1}"#,
            r#"{"v":1,"seq":3,"ts":"t","type":"PrintOutput","agent_id":"main","stream":"stdout","content":"hello"}"#,
            r#"{"v":1,"seq":4,"ts":"t","type":"StateCompleted","agent_id":"main","state":"START.sh","step":1,"cost_usd":0.0,"total_cost_usd":0.0,"session_id":null,"duration_ms":5}"#,
            r#"{"v":1,"seq":5,"ts":"t","type":"TransitionOccurred","agent_id":"main","from_state":"START.sh","to_state":"NEXT.sh","transition_type":"goto","metadata":{},"commit":1,"recovered":false}"#,
            r#"{"v":1,"seq":6,"ts":"t","type":"StateStarted","agent_id":"main","state":"NEXT.sh","state_type":"script","step":2,"attempt":1}"#,
            r#"{"v":1,"seq":7,"ts":"t","type":"SomethingNew","agent_id":"main"}"#,
        ]
        .map(String::from)
        .to_vec()
    }

    fn shown(filter: Filter, raw: bool) -> String {
        let mut view = LogView::new(filter, raw, false);
        lines().iter().map(|line| view.line(line)).collect()
    }

    #[test]
    fn events_read_back_are_worded_as_the_console_words_them() {
        assert_eq!(
            shown(Filter::default(), false),
            "run r started: /w (START.sh)\n[main] > START.sh\n[main] print: hello\n[main] < START.sh in 5 ms: goto -> \
             NEXT.sh\n[main] > NEXT.sh\n"
        );
    }

    #[test]
    fn a_state_filter_takes_the_name_with_or_without_extension_and_keeps_the_run_lines() {
        let filter = |state: &str| Filter { agent: None, state: Some(state.to_string()) };
        let expected = "run r started: /w (START.sh)\n[main] > START.sh\n[main] print: hello\n[main] < START.sh in 5 \
                        ms: goto -> NEXT.sh\n";
        assert_eq!(shown(filter("START"), false), expected);
        assert_eq!(shown(filter("START.sh"), false), expected);
        assert_eq!(shown(Filter { agent: Some("other".into()), state: None }, false), "run r started: /w (START.sh)\n");
    }

    #[test]
    fn raw_keeps_lines_as_they_are_and_unknown_ones_only_unfiltered() {
        assert_eq!(shown(Filter::default(), true), lines().join("\n") + "\n");
        let filtered = shown(Filter { agent: Some("main".into()), state: None }, true);
        assert_eq!(filtered, lines()[..6].join("\n") + "\n");
    }

    #[test]
    fn events_written_to_the_trace_read_back_the_same() {
        use crate::events::error_kind::ErrorKind;
        use crate::model::bound::Bound;
        let events = [
            Event::WorkflowPaused {
                run_id: "r".into(),
                total_cost_usd: 0.5,
                paused_agent_count: 1,
                bound: Some(Bound::Time { limit: std::time::Duration::from_secs(90) }),
            },
            Event::WorkflowCompleted {
                run_id: "r".into(),
                total_cost_usd: 0.0,
                steps: 3,
                duration_ms: 12,
                metrics: crate::events::metrics::RunMetrics { commits: 3, ..Default::default() },
            },
            Event::ErrorOccurred {
                agent_id: "main".into(),
                error_type: ErrorKind::ScriptError,
                message: "boom".into(),
                state: "A.sh".into(),
                is_retryable: true,
                retry_count: 1,
                max_retries: 3,
            },
            Event::PrintOutput {
                agent_id: "main".into(),
                stream: crate::events::OutputStream::Stderr,
                content: "x".into(),
            },
        ];
        for event in events {
            let line = serde_json::to_string(&event).expect("serialise");
            assert_eq!(parse(&format!("{{\"v\":1,\"seq\":9,{}", &line[1..])), Some(event));
        }
    }

    #[test]
    fn the_run_ends_at_its_last_final_event() {
        let mut view = LogView::new(Filter::default(), false, false);
        view.line(r#"{"type":"WorkflowPaused","run_id":"r","total_cost_usd":0.0,"paused_agent_count":1,"bound":null}"#);
        assert!(view.ended());
        view.line(&lines()[0].replace("false}", "true}"));
        assert!(!view.ended());
    }
}
