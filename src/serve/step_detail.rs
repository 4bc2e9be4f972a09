//! One step in full for the page's step inspector: the prompt of each turn,
//! Claude's transcript as structured entries (text, each tool call with its input,
//! each result), a script's stdout, stderr and exit code, the output the tags were
//! read from, and the transition. The same events `baton logs --step` renders as
//! text (`inspect::transcript`), given as JSON so the page can fold tool calls.

use serde::Serialize;
use serde_json::{Value, json};

use crate::backend::claude::stream_reader::invocation_cost;
use crate::events::{Event, StateType};
use crate::inspect::transcript::{StepCollector, content, tool_result_text};

#[derive(Debug, Default, Serialize)]
pub(crate) struct StepDetail {
    pub(crate) agent: String,
    pub(crate) step: u64,
    pub(crate) state: String,
    pub(crate) kind: &'static str,
    /// A prompt step's backend and the model asked for (empty: the CLI's own);
    /// null for a script.
    pub(crate) backend: Option<crate::ids::BackendName>,
    pub(crate) model: Option<String>,
    /// The `baton worker` that ran the step (`--engine restate`); null for a local step.
    pub(crate) worker: Option<String>,
    pub(crate) prompts: Vec<Value>,
    pub(crate) transcript: Vec<Value>,
    pub(crate) script: Option<Value>,
    pub(crate) output: Option<String>,
    pub(crate) transition: Option<Value>,
    pub(crate) cost_usd: f64,
    pub(crate) duration_ms: Option<u64>,
    pub(crate) attempts: u32,
    pub(crate) errors: Vec<String>,
}

/// Step `step` of `agent` from the events `collector` gathered.
pub(crate) fn detail(collector: &StepCollector, agent: &str, step: u64) -> StepDetail {
    let mut detail = StepDetail { agent: agent.to_string(), step, ..StepDetail::default() };
    for event in collector.events() {
        match event {
            Event::StateStarted { state, state_type, attempt, .. } => {
                detail.state = state.to_string();
                detail.kind = match state_type {
                    StateType::Markdown => "markdown",
                    StateType::Script => "script",
                };
                detail.attempts = detail.attempts.max(*attempt);
            }
            Event::ClaudeInvocationStarted { backend, model, is_reminder: false, .. } => {
                detail.backend = Some(*backend);
                detail.model = Some(model.clone());
            }
            Event::StepRanOn { worker, .. } => detail.worker = Some(worker.clone()),
            Event::PromptRendered { reminder, prompt, .. } => {
                detail.prompts.push(json!({"reminder": reminder, "text": prompt}));
            }
            Event::ClaudeStreamOutput { json, .. } => {
                if let Some(result) = transcript_entries(json, &mut detail.transcript) {
                    detail.output = Some(result);
                }
            }
            Event::ScriptOutput { stdout, stderr, exit_code, execution_time_ms, .. } => {
                detail.script = Some(json!({
                    "stdout": stdout, "stderr": stderr, "exit_code": exit_code, "execution_time_ms": execution_time_ms,
                }));
                detail.output = Some(stdout.clone());
            }
            Event::StateCompleted { cost_usd, duration_ms, .. } => {
                detail.cost_usd += cost_usd;
                detail.duration_ms = Some(*duration_ms);
            }
            Event::ErrorOccurred { message, .. } => detail.errors.push(message.clone()),
            Event::TransitionOccurred { to_state, transition_type, metadata, commit, .. } => {
                detail.transition = Some(json!({
                    "tag": transition_type, "target": to_state, "attributes": metadata, "commit": commit,
                }));
            }
            _ => {}
        }
    }
    detail
}

/// Add what one stream-json object says; returns a final result's text.
fn transcript_entries(object: &Value, entries: &mut Vec<Value>) -> Option<String> {
    match object.get("type").and_then(Value::as_str) {
        Some("assistant") => {
            for item in content(object) {
                match item.get("type").and_then(Value::as_str) {
                    Some("text") => entries.push(json!({"role": "assistant", "text": item.get("text")})),
                    Some("thinking") => entries.push(json!({"role": "thinking", "text": item.get("thinking")})),
                    Some("tool_use") => entries.push(json!({
                        "role": "tool_use", "name": item.get("name"), "id": item.get("id"), "input": item.get("input"),
                    })),
                    _ => {}
                }
            }
            None
        }
        Some("user") => {
            for item in content(object).filter(|item| item.get("type").and_then(Value::as_str) == Some("tool_result")) {
                entries.push(json!({
                    "role": "tool_result", "id": item.get("tool_use_id"), "text": tool_result_text(item),
                    "is_error": item.get("is_error").and_then(Value::as_bool).unwrap_or(false),
                }));
            }
            None
        }
        Some("result") => {
            let result = object.get("result").and_then(Value::as_str).unwrap_or_default().to_string();
            entries.push(json!({
                "role": "result", "text": result, "cost_usd": invocation_cost(object),
                "is_error": object.get("is_error"), "num_turns": object.get("num_turns"),
            }));
            Some(result)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prompt_step_names_its_backend_and_model_and_a_script_none() {
        let trace = [
            r#"{"v":1,"seq":1,"ts":"t","type":"StateStarted","agent_id":"main","state":"R.md","state_type":"markdown","step":1,"attempt":1}"#,
            r#"{"v":1,"seq":2,"ts":"t","type":"ClaudeInvocationStarted","agent_id":"main","state":"R.md","backend":"pi","model":"","session_id":null,"is_fork":false,"is_reminder":false,"reminder_attempt":0}"#,
            r#"{"v":1,"seq":3,"ts":"t","type":"StateStarted","agent_id":"main","state":"S.sh","state_type":"script","step":2,"attempt":1}"#,
        ];
        let of = |step: u64| {
            let mut collector = StepCollector::new("main", step);
            for line in trace {
                collector.add(line);
            }
            let detail = serde_json::to_value(detail(&collector, "main", step)).expect("JSON");
            (detail["backend"].clone(), detail["model"].clone())
        };
        assert_eq!(of(1), (json!("pi"), json!("")));
        assert_eq!(of(2), (Value::Null, Value::Null));
    }

    #[test]
    fn a_distributed_step_names_its_worker_and_a_local_one_none() {
        let trace = [
            r#"{"v":1,"seq":1,"ts":"t","type":"StateStarted","agent_id":"main","state":"S.sh","state_type":"script","step":1,"attempt":1}"#,
            r#"{"v":1,"seq":2,"ts":"t","type":"StepRanOn","agent_id":"main","state":"S.sh","step":1,"worker":"w3"}"#,
            r#"{"v":1,"seq":3,"ts":"t","type":"StateStarted","agent_id":"main","state":"T.sh","state_type":"script","step":2,"attempt":1}"#,
        ];
        let worker_of = |step: u64| {
            let mut collector = StepCollector::new("main", step);
            for line in trace {
                collector.add(line);
            }
            serde_json::to_value(detail(&collector, "main", step)).expect("JSON")["worker"].clone()
        };
        assert_eq!(worker_of(1), json!("w3"));
        assert_eq!(worker_of(2), Value::Null);
    }
}
