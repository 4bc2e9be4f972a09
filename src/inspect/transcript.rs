//! `baton logs --step N`: one step in full — the console's lines for it, and what
//! the console leaves out: the prompt of every turn, Claude's turn as a readable
//! transcript (its text, each tool call with its input and its result, the final
//! result with cost and tokens), a script's stdout, stderr and exit code, and the
//! tags the transition was read from.
//!
//! A step is numbered per agent (`step` of `StateStarted`); its events are those of
//! the agent from its `StateStarted` up to the agent's next one, so retries, the
//! transition and any error in between are part of it.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;

use serde_json::Value;

use crate::backend::claude::stream_reader::invocation_cost;
use crate::backend::codex::transcript::CodexTranscript;
use crate::backend::pi::transcript::PiTranscript;
use crate::backend::transcript::Entry;
use crate::events::{Event, StateType};
use crate::ids::BackendName;
use crate::inspect::logs::parse;
use crate::observers::console::{ConsoleText, Verbosity};
use crate::syntax::scanner::scan_each;

/// Lines of a tool's input value or result shown before the rest is summed up.
const TOOL_LINES: usize = 20;
/// Characters of one such line shown.
const TOOL_LINE_WIDTH: usize = 200;

/// Collects the events of step `step` of agent `agent` from a trace's lines.
pub(crate) struct StepCollector {
    agent: String,
    step: u64,
    /// The step the agent is at, by its last `StateStarted`.
    current: Option<u64>,
    lines: Vec<(String, Event)>,
    /// Steps the agent started, and agents seen: for saying what exists.
    steps: BTreeSet<u64>,
    agents: BTreeSet<String>,
    /// Agents in the order they appeared, which is the order the console coloured them.
    appearance: Vec<String>,
}

impl StepCollector {
    pub(crate) fn new(agent: &str, step: u64) -> StepCollector {
        StepCollector {
            agent: agent.to_string(),
            step,
            current: None,
            lines: Vec::new(),
            steps: BTreeSet::new(),
            agents: BTreeSet::new(),
            appearance: Vec::new(),
        }
    }

    pub(crate) fn add(&mut self, line: &str) {
        let Some(event) = parse(line) else { return };
        if let Some(agent) = agent_of(&event)
            && self.agents.insert(agent.to_string())
        {
            self.appearance.push(agent.to_string());
        }
        if let Event::StateStarted { agent_id, step, .. } = &event
            && *agent_id == *self.agent
        {
            self.current = Some(*step);
            self.steps.insert(*step);
        }
        let belongs = match &event {
            Event::AgentSpawned { parent_agent_id, .. } => {
                **parent_agent_id == *self.agent && self.current == Some(self.step)
            }
            Event::StateStarted { agent_id, step, .. }
            | Event::StateCompleted { agent_id, step, .. }
            | Event::ScriptOutput { agent_id, step, .. }
            | Event::PromptRendered { agent_id, step, .. }
            | Event::ClaudeStreamOutput { agent_id, step, .. }
            | Event::StepRanOn { agent_id, step, .. } => **agent_id == *self.agent && *step == self.step,
            other => agent_of(other) == Some(self.agent.as_str()) && self.current == Some(self.step),
        };
        if belongs {
            self.lines.push((line.to_string(), event));
        }
    }

    /// Whether the trace holds the step.
    pub(crate) fn found(&self) -> bool {
        self.steps.contains(&self.step)
    }

    /// For a step the trace does not hold: the steps the agent has, or the agents
    /// the run has (then `how_to_pick` says how to name another).
    pub(crate) fn what_exists(&self, how_to_pick: &str) -> String {
        match (self.steps.first(), self.steps.last()) {
            (Some(first), Some(last)) if first == last => format!("its only step is {first}"),
            (Some(first), Some(last)) => format!("its steps are {first} to {last}"),
            _ if self.agents.is_empty() => "the trace has no steps".to_string(),
            _ => {
                let known = self.agents.iter().map(String::as_str).collect::<Vec<_>>().join(", ");
                format!("the run has no such agent; its agents are: {known}{how_to_pick}")
            }
        }
    }

    /// The step's events, in trace order.
    pub(crate) fn events(&self) -> impl Iterator<Item = &Event> {
        self.lines.iter().map(|(_, event)| event)
    }

    /// The step's trace lines, as they are.
    pub(crate) fn raw_lines(&self) -> impl Iterator<Item = &str> {
        self.lines.iter().map(|(line, _)| line.as_str())
    }

    /// The step in full, as text.
    pub(crate) fn render(&self, colour: bool) -> String {
        let mut text = ConsoleText::new(Verbosity::Normal, colour);
        // Each agent keeps the colour it had in the run.
        for agent in &self.appearance {
            text.agent(agent);
        }
        render_step(&mut text, &self.agent, self.step, self.lines.iter().map(|(_, event)| event))
    }
}

/// The agent an event is about (`None` for run-wide events).
fn agent_of(event: &Event) -> Option<&str> {
    let agent = match event {
        Event::AgentSpawned { new_agent_id, .. } => new_agent_id,
        Event::StateStarted { agent_id, .. }
        | Event::StateCompleted { agent_id, .. }
        | Event::ScriptOutput { agent_id, .. }
        | Event::PromptRendered { agent_id, .. }
        | Event::ClaudeStreamOutput { agent_id, .. }
        | Event::ClaudeInvocationStarted { agent_id, .. }
        | Event::StepRanOn { agent_id, .. }
        | Event::ErrorOccurred { agent_id, .. }
        | Event::AgentPaused { agent_id, .. }
        | Event::AgentEdited { agent_id, .. }
        | Event::TransitionOccurred { agent_id, .. }
        | Event::AgentTerminated { agent_id, .. }
        | Event::AgentAsking { agent_id, .. }
        | Event::AskWaiting { agent_id, .. }
        | Event::ToolInvocation { agent_id, .. }
        | Event::ToolError { agent_id, .. }
        | Event::ProgressMessage { agent_id, .. }
        | Event::PrintOutput { agent_id, .. } => agent_id,
        _ => return None,
    };
    Some(&**agent)
}

/// Step `step` of `agent` from its events.
fn render_step<'a>(text: &mut ConsoleText, agent: &str, step: u64, events: impl Iterator<Item = &'a Event>) -> String {
    let mut out = String::new();
    let mut transcript = Transcript::default();
    // Which backend's stream follows: each lays its own out.
    let mut backend = BackendName::Claude;
    let mut codex = CodexTranscript::default();
    let mut pi = PiTranscript::default();
    // The output the step's tags were read from: a script's stdout, Claude's last result.
    let mut output: Option<String> = None;
    let mut header_written = false;
    for event in events {
        if !header_written && let Event::StateStarted { state, state_type, .. } = event {
            let kind = match state_type {
                StateType::Markdown => "prompt",
                StateType::Script => "script",
            };
            let _ = writeln!(out, "{}", text.emphasis(&format!("step {step} of {agent}: {state} ({kind})"), "1"));
            header_written = true;
        }
        match event {
            Event::PromptRendered { reminder, prompt, .. } => {
                let title = if *reminder == 0 { "prompt".to_string() } else { format!("reminder {reminder} prompt") };
                section(&mut out, text, &title);
                out.push_str(&indent(prompt, 4));
            }
            Event::ClaudeStreamOutput { json, .. } if backend != BackendName::Claude => {
                let entries = if backend == BackendName::Pi { pi.add(json) } else { codex.add(json) };
                for entry in entries {
                    match entry {
                        Entry::Heading(title) => section(&mut out, text, &title),
                        Entry::Said(said) => out.push_str(&indent(&said, 4)),
                        Entry::ToolOutput(shown) => {
                            out.push_str(&indent(&first_lines(&shown, TOOL_LINES, TOOL_LINE_WIDTH), 4));
                        }
                        Entry::Answer(answer) => output = Some(answer),
                    }
                }
            }
            Event::ClaudeStreamOutput { json, .. } => {
                if let Some(result) = transcript.add(json, &mut out, text) {
                    output = Some(result);
                }
            }
            Event::ScriptOutput { stdout, stderr, exit_code, execution_time_ms, .. } => {
                section(&mut out, text, "stdout");
                out.push_str(&indent_or_none(stdout));
                section(&mut out, text, "stderr");
                out.push_str(&indent_or_none(stderr));
                let code = exit_code.map_or("none (killed by a signal)".to_string(), |code| code.to_string());
                section(&mut out, text, &format!("exit code {code} after {execution_time_ms} ms"));
                output = Some(stdout.clone());
            }
            // The transcript shows tool calls and Claude's text in full.
            Event::ToolInvocation { .. } | Event::ToolError { .. } | Event::ProgressMessage { .. } => {}
            Event::TransitionOccurred { metadata, .. } => {
                let tags = output.take().map(|output| tags(&output)).unwrap_or_default();
                for tag in tags {
                    section(&mut out, text, &format!("tag {}", first_lines(&tag, 1, TOOL_LINE_WIDTH)));
                }
                out.push_str(&text.render(event).unwrap_or_default());
                for (key, value) in metadata {
                    // The console line quotes these short; the step shows them whole.
                    if value.chars().count() > 60 || value.contains('\n') || !CONSOLE_KEYS.contains(&key.as_str()) {
                        let _ = writeln!(out, "    {key}: {}", indent(value, 8).trim());
                    }
                }
            }
            other => {
                if let Event::ClaudeInvocationStarted { backend: started, .. } = other {
                    backend = *started;
                }
                out.push_str(&text.render(other).unwrap_or_default());
            }
        }
    }
    out
}

/// The metadata keys the console shows (quoted short on the transition line; the
/// payload as the terminated agent's result).
const CONSOLE_KEYS: [&str; 4] = ["return", "workers", "input", "payload"];

/// Every transition tag in `output`, as written.
fn tags(output: &str) -> Vec<String> {
    scan_each(output).into_iter().filter_map(|found| output.get(found.span).map(str::to_string)).collect()
}

fn section(out: &mut String, text: &ConsoleText, title: &str) {
    let _ = writeln!(out, "{}", text.emphasis(&format!("--- {title}"), "1"));
}

/// `text` with every line indented by `width` spaces, ending in a newline.
fn indent(text: &str, width: usize) -> String {
    let pad = " ".repeat(width);
    let mut out = String::new();
    for line in text.trim_end_matches('\n').lines() {
        if line.is_empty() {
            out.push('\n');
        } else {
            let _ = writeln!(out, "{pad}{line}");
        }
    }
    if out.is_empty() { format!("{pad}\n") } else { out }
}

fn indent_or_none(text: &str) -> String {
    if text.is_empty() { "    (empty)\n".to_string() } else { indent(text, 4) }
}

/// The first `count` lines of `text`, each cut to `width` characters, and how many
/// lines were left out.
fn first_lines(text: &str, count: usize, width: usize) -> String {
    let lines: Vec<&str> = text.trim_end_matches('\n').lines().collect();
    let mut shown: Vec<String> = lines
        .iter()
        .take(count)
        .map(|line| {
            if line.chars().count() > width {
                format!("{}…", line.chars().take(width).collect::<String>())
            } else {
                line.to_string()
            }
        })
        .collect();
    if lines.len() > count {
        shown.push(format!("… ({} more lines)", lines.len() - count));
    }
    shown.join("\n")
}

/// Claude's turn, one stream-json object at a time.
#[derive(Default)]
struct Transcript {
    /// Each `tool_use` id's tool name, for naming its result.
    tools: HashMap<String, String>,
    /// The last assistant text, so a result that repeats it is not shown twice.
    last_text: Option<String>,
    started: bool,
}

impl Transcript {
    /// Write what `object` adds to the transcript; returns a final result's text.
    fn add(&mut self, object: &Value, out: &mut String, text: &ConsoleText) -> Option<String> {
        let kind = object.get("type").and_then(Value::as_str).unwrap_or_default();
        if !self.started && kind != "result" {
            self.started = true;
            let mut about = Vec::new();
            if let Some(session) = object.get("session_id").and_then(Value::as_str) {
                about.push(format!("session {session}"));
            }
            if let Some(model) = object.get("model").and_then(Value::as_str) {
                about.push(format!("model {model}"));
            }
            let title = if about.is_empty() { "claude".to_string() } else { format!("claude ({})", about.join(", ")) };
            section(out, text, &title);
        }
        match kind {
            "assistant" => {
                for item in content(object) {
                    self.assistant_item(item, out);
                }
                None
            }
            "user" => {
                for item in content(object) {
                    if item.get("type").and_then(Value::as_str) == Some("tool_result") {
                        self.tool_result(item, out);
                    }
                }
                None
            }
            "result" => {
                self.started = false;
                let result = object.get("result").and_then(Value::as_str).unwrap_or_default().to_string();
                section(out, text, &result_summary(object));
                if self.last_text.as_deref().map(str::trim) != Some(result.trim()) && !result.trim().is_empty() {
                    out.push_str(&indent(&result, 4));
                }
                self.last_text = None;
                Some(result)
            }
            _ => None,
        }
    }

    fn assistant_item(&mut self, item: &Value, out: &mut String) {
        match item.get("type").and_then(Value::as_str) {
            Some("text") => {
                let said = item.get("text").and_then(Value::as_str).unwrap_or_default();
                out.push_str(&indent(said, 4));
                self.last_text = Some(said.to_string());
            }
            Some("thinking") => {
                let thought = item.get("thinking").and_then(Value::as_str).unwrap_or_default();
                let _ = writeln!(out, "    (thinking)");
                out.push_str(&indent(&first_lines(thought, TOOL_LINES, TOOL_LINE_WIDTH), 6));
            }
            Some("tool_use") => {
                let name = item.get("name").and_then(Value::as_str).unwrap_or("?");
                if let Some(id) = item.get("id").and_then(Value::as_str) {
                    self.tools.insert(id.to_string(), name.to_string());
                }
                let _ = writeln!(out, "    tool {name}");
                out.push_str(&tool_input(item.get("input")));
            }
            _ => {}
        }
    }

    fn tool_result(&mut self, item: &Value, out: &mut String) {
        let id = item.get("tool_use_id").and_then(Value::as_str).unwrap_or_default();
        let name = self.tools.get(id).map_or("a tool", String::as_str);
        let failed = item.get("is_error").and_then(Value::as_bool).unwrap_or(false);
        let marker = if failed { " (error)" } else { "" };
        let _ = writeln!(out, "    result of {name}{marker}");
        let body = tool_result_text(item);
        out.push_str(&indent(&first_lines(&body, TOOL_LINES, TOOL_LINE_WIDTH), 6));
    }
}

/// What a `tool_result` content item says: its text, a block that is not text
/// named by its type (`[image]`).
pub(crate) fn tool_result_text(item: &Value) -> String {
    match item.get("content") {
        Some(Value::String(body)) => body.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .map(|block| match block.get("text").and_then(Value::as_str) {
                Some(text) => text.to_string(),
                None => format!("[{}]", block.get("type").and_then(Value::as_str).unwrap_or("block")),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Some(other) if !other.is_null() => other.to_string(),
        _ => String::new(),
    }
}

/// The content items of a stream-json `assistant` or `user` message.
pub(crate) fn content(object: &Value) -> impl Iterator<Item = &Value> {
    object.get("message").and_then(|message| message.get("content")).and_then(Value::as_array).into_iter().flatten()
}

/// A tool's input: `key: value` lines, strings as they are (cut), the rest as JSON.
fn tool_input(input: Option<&Value>) -> String {
    let mut out = String::new();
    match input {
        Some(Value::Object(fields)) => {
            for (key, value) in fields {
                let value = match value {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                };
                let shown = first_lines(&value, TOOL_LINES, TOOL_LINE_WIDTH);
                if shown.contains('\n') {
                    let _ = writeln!(out, "      {key}:");
                    out.push_str(&indent(&shown, 8));
                } else {
                    let _ = writeln!(out, "      {key}: {shown}");
                }
            }
        }
        Some(Value::Null) | None => {}
        Some(other) => out.push_str(&indent(&first_lines(&other.to_string(), TOOL_LINES, TOOL_LINE_WIDTH), 6)),
    }
    out
}

/// `result: success, 2 turns, 694 ms, $0.0003; tokens 30 in, 15 out, 0 cache read, 0 cache written`.
fn result_summary(object: &Value) -> String {
    let mut parts = Vec::new();
    let subtype = object.get("subtype").and_then(Value::as_str).unwrap_or("done");
    let failed = object.get("is_error").and_then(Value::as_bool).unwrap_or(false);
    parts.push(if failed { format!("{subtype} (error)") } else { subtype.to_string() });
    if let Some(turns) = object.get("num_turns").and_then(Value::as_u64) {
        parts.push(format!("{turns} {}", if turns == 1 { "turn" } else { "turns" }));
    }
    if let Some(ms) = object.get("duration_ms").and_then(Value::as_u64) {
        parts.push(format!("{ms} ms"));
    }
    if let Some(cost) = invocation_cost(object) {
        parts.push(format!("${cost:.4}"));
    }
    let mut summary = format!("result: {}", parts.join(", "));
    if let Some(usage) = object.get("usage") {
        let count = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
        let _ = write!(
            summary,
            "; tokens {} in, {} out, {} cache read, {} cache written",
            count("input_tokens"),
            count("output_tokens"),
            count("cache_read_input_tokens"),
            count("cache_creation_input_tokens")
        );
    }
    summary
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(json: &str) -> String {
        format!(r#"{{"type":"ClaudeStreamOutput","agent_id":"main","state":"A.md","step":1,"json":{json}}}"#)
    }

    /// Issue 19, item 8: a resumed turn's `total_cost_usd` is the session's running
    /// total (Claude Code 2.1.330); the line shows the turn's own cost.
    #[test]
    fn a_resumed_turns_result_line_shows_its_own_cost_not_the_sessions_total() {
        let result = serde_json::json!({"type": "result", "subtype": "success", "total_cost_usd": 0.0021,
            "model_usage_since_last_result": {"claude-sonnet-5-5": {"costUSD": 0.0007}}});
        assert_eq!(result_summary(&result), "result: success, $0.0007");
    }

    #[test]
    fn a_claude_turn_reads_as_a_transcript() {
        let mut collector = StepCollector::new("main", 1);
        for line in [
            r#"{"type":"StateStarted","agent_id":"main","state":"A.md","state_type":"markdown","step":1,"attempt":1}"#
                .to_string(),
            r#"{"type":"PromptRendered","agent_id":"main","state":"A.md","step":1,"reminder":0,"prompt":"Do it.\n"}"#
                .to_string(),
            stream(r#"{"type":"system","subtype":"init","session_id":"s1","model":"m"}"#),
            stream(
                r#"{"type":"assistant","message":{"content":[{"type":"text","text":"Looking."},{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"/x"}}]}}"#,
            ),
            stream(
                r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":"no such file"}]}}"#,
            ),
            stream(r#"{"type":"assistant","message":{"content":[{"type":"text","text":"<goto>B</goto>"}]}}"#),
            stream(
                r#"{"type":"result","subtype":"success","num_turns":2,"duration_ms":7,"total_cost_usd":0.5,"result":"<goto>B</goto>","usage":{"input_tokens":3,"output_tokens":4}}"#,
            ),
            r#"{"type":"ToolInvocation","agent_id":"main","tool_name":"Read","detail":"/x"}"#.to_string(),
            r#"{"type":"StateCompleted","agent_id":"main","state":"A.md","step":1,"cost_usd":0.5,"total_cost_usd":0.5,"session_id":"s1","duration_ms":9}"#.to_string(),
            r#"{"type":"TransitionOccurred","agent_id":"main","from_state":"A.md","to_state":"B.md","transition_type":"goto","metadata":{},"commit":1,"recovered":false}"#.to_string(),
            r#"{"type":"StateStarted","agent_id":"main","state":"B.md","state_type":"markdown","step":2,"attempt":1}"#
                .to_string(),
        ] {
            collector.add(&line);
        }
        assert!(collector.found());
        assert_eq!(
            collector.render(false),
            "step 1 of main: A.md (prompt)
[main] > A.md
--- prompt
    Do it.
--- claude (session s1, model m)
    Looking.
    tool Read
      file_path: /x
    result of Read (error)
      no such file
    <goto>B</goto>
--- result: success, 2 turns, 7 ms, $0.5000; tokens 3 in, 4 out, 0 cache read, 0 cache written
--- tag <goto>B</goto>
[main] < A.md in 9 ms, $0.5000: goto -> B.md
"
        );
        assert_eq!(collector.raw_lines().count(), 10);
    }

    #[test]
    fn long_tool_output_is_cut() {
        let body = (1..=30).map(|n| n.to_string()).collect::<Vec<_>>().join("\n");
        let shown = first_lines(&body, TOOL_LINES, TOOL_LINE_WIDTH);
        assert!(shown.ends_with("20\n… (10 more lines)"), "{shown}");
    }
}
