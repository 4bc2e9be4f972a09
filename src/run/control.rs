//! The control lines of `--on-ask json`: how a supervisor such as `baton serve`,
//! driving a run as its child, answers the run's asks and cancels its agents while
//! the run goes on. One JSON object a line, on stdin:
//!
//! - `{"answer": {"ask_id": "ask_main_…", "text": "yes"}}` answers that ask, whichever
//!   of the waiting asks it is, exactly as an answer typed at a terminal (R3.26);
//! - `{"cancel_agent": "main_worker1"}` cancels that agent (`run::cancel`);
//! - `{"continue_agent": {"agent_id": "main", "input": "…", "goto": "S", "prompt": "…"}}`
//!   edits that paused agent (every field but `agent_id` optional) and runs it on
//!   (`run::breakpoint`, `run::edit`);
//! - `{"breakpoints": {"before": ["S"], "after": [], "step": false}}` replaces the run's
//!   breakpoints, saved before any agent reaches them.
//!
//! Answers name their ask instead of going to "the question shown": a supervisor relays
//! answers from several people, in any order, and an answer that arrives after its ask
//! was answered, timed out or cancelled must not answer another one.
//!
//! A line is obeyed or ignored, never an error: nothing on stdin can stop the run or
//! make it fail. An ignored line (not JSON, another shape, an ask that does not wait,
//! an agent that cannot be cancelled) is traced as `ControlIgnored` with the reason,
//! since the trace is the one thing the supervisor reads back. Blank lines are skipped.

use serde::Deserialize;

use crate::events::Event;
use crate::ids::AgentId;
use crate::run::workflow_loop::WorkflowLoop;

/// How much of an ignored line its `ControlIgnored` event keeps, in characters.
const IGNORED_LINE_CHARS: usize = 200;

/// One control line.
#[derive(Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum Control {
    /// Answer the ask `ask_id` with `text`.
    Answer(Answer),
    /// Cancel this agent.
    CancelAgent(AgentId),
    /// Edit this paused agent (stopped at a breakpoint) and run it on (`run::edit`).
    ContinueAgent(ContinueAgent),
    /// Replace the run's breakpoints (`model::breakpoints`): saved before the line
    /// is acknowledged by its effect.
    Breakpoints(BreakpointLine),
}

#[derive(Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ContinueAgent {
    pub(crate) agent_id: AgentId,
    #[serde(default)]
    pub(crate) input: Option<String>,
    #[serde(default)]
    pub(crate) goto: Option<String>,
    #[serde(default)]
    pub(crate) prompt: Option<String>,
    /// Who edits, for the trace (`serve`); `control` when absent.
    #[serde(default)]
    pub(crate) by: Option<String>,
    #[serde(default)]
    pub(crate) user: Option<String>,
}

#[derive(Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct BreakpointLine {
    #[serde(default)]
    pub(crate) before: Vec<String>,
    #[serde(default)]
    pub(crate) after: Vec<String>,
    #[serde(default)]
    pub(crate) step: bool,
}

#[derive(Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Answer {
    pub(crate) ask_id: String,
    pub(crate) text: String,
}

/// Read one control line; `Err` says why it is none.
pub(crate) fn parse(line: &[u8]) -> Result<Control, String> {
    let value: serde_json::Value = serde_json::from_slice(line).map_err(|error| format!("not JSON: {error}"))?;
    if value.as_object().is_none_or(|object| object.len() != 1) {
        return Err(
            "not a control line: expected an object with one key, `answer`, `cancel_agent`, `continue_agent` or \
             `breakpoints`"
                .to_string(),
        );
    }
    serde_json::from_value(value).map_err(|error| format!("not a control line: {error}"))
}

/// The first characters of `line`, for its `ControlIgnored` event.
fn excerpt(line: &[u8]) -> String {
    String::from_utf8_lossy(line).chars().take(IGNORED_LINE_CHARS).collect()
}

impl WorkflowLoop {
    /// Obey one control line, or trace why not.
    pub(super) fn obey(&mut self, line: &[u8]) {
        if line.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        let obeyed = match parse(line) {
            Ok(Control::Answer(Answer { ask_id, text })) => self.answer_ask(&ask_id, text),
            Ok(Control::CancelAgent(agent_id)) => self.cancel_agent(&agent_id),
            Ok(Control::ContinueAgent(line)) => self.continue_agent(line),
            Ok(Control::Breakpoints(line)) => self.set_breakpoints(line),
            Err(reason) => Err(reason),
        };
        if let Err(reason) = obeyed {
            self.context.bus.emit(Event::ControlIgnored { line: excerpt(line), reason });
        }
    }

    /// Answer the waiting ask `ask_id` (R3.26).
    fn answer_ask(&mut self, ask_id: &str, text: String) -> Result<(), String> {
        let Some(agent_id) = self.questions.take_ask(ask_id) else {
            return Err(format!("no ask `{ask_id}` waits for an answer"));
        };
        self.answer(&agent_id, text);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_names_its_ask() {
        let line = br#"{"answer": {"ask_id": "ask_main_123", "text": "yes\nand more"}}"#;
        assert_eq!(
            parse(line),
            Ok(Control::Answer(Answer { ask_id: "ask_main_123".into(), text: "yes\nand more".into() }))
        );
        assert_eq!(
            parse(br#"{"answer":{"text":"","ask_id":"a"}}"#),
            Ok(Control::Answer(Answer { ask_id: "a".into(), text: String::new() }))
        );
    }

    #[test]
    fn a_cancel_names_its_agent() {
        assert_eq!(parse(br#"{"cancel_agent": "main_worker1"}"#), Ok(Control::CancelAgent("main_worker1".into())));
    }

    #[test]
    fn anything_else_is_no_control_line_and_says_why() {
        let refused = |line: &[u8]| parse(line).expect_err("not a control line");
        assert_eq!(refused(b"yes"), "not JSON: expected value at line 1 column 1");
        assert_eq!(refused(br#"{"cancel_agent": "a"} trailing"#), "not JSON: trailing characters at line 1 column 23");
        assert!(refused(b"{\"cancel_agent\": \"\xff\"}").starts_with("not JSON: invalid unicode"));
        assert!(refused(b"").starts_with("not JSON"));
        let one_key = "not a control line: expected an object with one key, `answer`, `cancel_agent`, \
                       `continue_agent` or `breakpoints`";
        assert_eq!(refused(br#"{"cancel_agent": "a", "answer": {"ask_id": "a", "text": "t"}}"#), one_key);
        assert_eq!(refused(br#"["cancel_agent", "a"]"#), one_key);
        assert_eq!(refused(br#"{}"#), one_key);
        assert_eq!(refused(br#""cancel_agent""#), one_key);
        assert_eq!(
            refused(br#"{"stop": true}"#),
            "not a control line: unknown variant `stop`, expected one of `answer`, `cancel_agent`, `continue_agent`, \
             `breakpoints`"
        );
        assert_eq!(refused(br#"{"answer": {"ask_id": "a"}}"#), "not a control line: missing field `text`");
        assert!(refused(br#"{"answer": {"ask_id": "a", "text": "t", "by": "me"}}"#).contains("unknown field `by`"));
        assert!(refused(br#"{"answer": "yes"}"#).contains("invalid type: string"));
        assert!(refused(br#"{"cancel_agent": 7}"#).contains("invalid type: integer `7`"));
    }

    #[test]
    fn an_ignored_line_is_kept_to_its_first_200_characters() {
        let long = "é".repeat(300);
        assert_eq!(excerpt(long.as_bytes()).chars().count(), 200);
        assert_eq!(excerpt(b"\xffok"), "\u{fffd}ok");
    }
}
