//! Bus events into OpenTelemetry spans (issue 23): one trace per run, a span for
//! this invocation of the run, one per agent under it, one per step under its
//! agent, with the GenAI semantic conventions where a step is a model turn
//! (`docs/observability.md` lists every name).
//!
//! This is pure bookkeeping: [`SpanTree::on_event`] takes an event and the time
//! it was heard and returns the spans it finished, ready for the exporter. The
//! ids come from [`RunTrace`], so a step's span is the parent its agent CLI was
//! handed in `TRACEPARENT`. What one span keeps is bounded: events past
//! [`MAX_EVENTS`] are counted as dropped, texts are cut to [`MAX_TEXT`] bytes.

use std::borrow::Cow;
use std::collections::HashMap;
use std::time::SystemTime;

use opentelemetry::trace::{SpanContext, SpanId, SpanKind, Status, TraceFlags, TraceId, TraceState};
use opentelemetry::{InstrumentationScope, KeyValue};
use opentelemetry_sdk::trace::{SpanData, SpanEvents, SpanLinks};

use crate::events::trace_context::RunTrace;
use crate::events::{Event, StateType};
use crate::ids::{AgentId, BackendName, RunId};
use crate::text::excerpt::head;

/// Events one span keeps (asks, forks, errors, …); more are counted, not kept.
pub(crate) const MAX_EVENTS: usize = 128;
/// The longest text (a prompt, an error, a result) kept in an attribute.
pub(crate) const MAX_TEXT: usize = 1024;

/// A span still open.
struct OpenSpan {
    span_id: SpanId,
    parent: SpanId,
    name: String,
    kind: SpanKind,
    start: SystemTime,
    attributes: Vec<KeyValue>,
    events: SpanEvents,
    status: Status,
}

impl OpenSpan {
    fn new(span_id: [u8; 8], parent: SpanId, name: String, kind: SpanKind, start: SystemTime) -> OpenSpan {
        OpenSpan {
            span_id: SpanId::from_bytes(span_id),
            parent,
            name,
            kind,
            start,
            attributes: Vec::new(),
            events: SpanEvents::default(),
            status: Status::Unset,
        }
    }

    /// Set `key` (replacing an earlier value).
    fn set(&mut self, attribute: KeyValue) {
        match self.attributes.iter_mut().find(|existing| existing.key == attribute.key) {
            Some(existing) => *existing = attribute,
            None => self.attributes.push(attribute),
        }
    }

    fn add_event(&mut self, name: &'static str, at: SystemTime, attributes: Vec<KeyValue>) {
        if self.events.events.len() >= MAX_EVENTS {
            self.events.dropped_count += 1;
        } else {
            self.events.events.push(opentelemetry::trace::Event::new(name, at, attributes, 0));
        }
    }

    fn fail(&mut self, message: &str) {
        self.status = Status::error(head(message, MAX_TEXT));
    }
}

/// A step's span and what it learns before it ends.
struct OpenStep {
    span: OpenSpan,
    step: u64,
    input_tokens: u64,
    output_tokens: u64,
}

/// The spans of one invocation of a run.
pub(crate) struct SpanTree {
    trace: RunTrace,
    /// `baton.run_id` on every span, so a backend filters a run's spans by it.
    run_id: String,
    scope: InstrumentationScope,
    run: Option<OpenSpan>,
    agents: HashMap<AgentId, OpenSpan>,
    steps: HashMap<AgentId, OpenStep>,
}

impl SpanTree {
    pub(crate) fn new(trace: RunTrace, run_id: &RunId) -> SpanTree {
        let scope = InstrumentationScope::builder("baton").with_version(env!("CARGO_PKG_VERSION")).build();
        SpanTree { trace, run_id: run_id.to_string(), scope, run: None, agents: HashMap::new(), steps: HashMap::new() }
    }

    /// The spans `event`, heard at `now`, finished.
    pub(crate) fn on_event(&mut self, event: &Event, now: SystemTime) -> Vec<SpanData> {
        let mut done = Vec::new();
        match event {
            Event::WorkflowStarted { run_id, scope_dir, initial_state, resumed, .. } => {
                let workflow = scope_dir.file_name().map_or_else(String::new, |name| name.to_string_lossy().into());
                let mut run = OpenSpan::new(
                    self.trace.run_span(),
                    SpanId::INVALID,
                    format!("workflow {workflow}"),
                    SpanKind::Internal,
                    now,
                );
                run.set(KeyValue::new("baton.run_id", run_id.to_string()));
                run.set(KeyValue::new("baton.workflow", scope_dir.display().to_string()));
                run.set(KeyValue::new("baton.initial_state", initial_state.to_string()));
                run.set(KeyValue::new("baton.resumed", *resumed));
                run.set(KeyValue::new("gen_ai.operation.name", "invoke_workflow"));
                self.run = Some(run);
            }
            Event::AgentSpawned { parent_agent_id, new_agent_id, initial_state } => {
                let parent = self.agent(parent_agent_id, now);
                parent.add_event(
                    "fork",
                    now,
                    vec![
                        KeyValue::new("baton.child_agent_id", new_agent_id.to_string()),
                        KeyValue::new("baton.initial_state", initial_state.to_string()),
                    ],
                );
                let child = self.agent(new_agent_id, now);
                child.set(KeyValue::new("baton.parent_agent_id", parent_agent_id.to_string()));
            }
            Event::StateStarted { agent_id, state, state_type, step, attempt } => {
                let agent_span = self.agent(agent_id, now).span_id;
                if let Some(open) = self.steps.get_mut(agent_id)
                    && open.step == *step
                {
                    open.span.set(KeyValue::new("baton.retries", i64::from(attempt.saturating_sub(1))));
                    open.span.add_event("retry", now, vec![KeyValue::new("baton.attempt", i64::from(*attempt))]);
                    return done;
                }
                if let Some(previous) = self.steps.remove(agent_id) {
                    done.push(self.finish_step(previous, now));
                }
                let mut span = OpenSpan::new(
                    self.trace.step_span(agent_id, *step),
                    agent_span,
                    state.to_string(),
                    SpanKind::Internal,
                    now,
                );
                span.set(KeyValue::new("baton.run_id", self.run_id.clone()));
                span.set(KeyValue::new("baton.agent_id", agent_id.to_string()));
                span.set(KeyValue::new("baton.state", state.to_string()));
                span.set(KeyValue::new(
                    "baton.state_type",
                    match state_type {
                        StateType::Markdown => "markdown",
                        StateType::Script => "script",
                    },
                ));
                span.set(KeyValue::new("baton.step", i64::try_from(*step).unwrap_or(i64::MAX)));
                span.set(KeyValue::new("baton.retries", i64::from(attempt.saturating_sub(1))));
                if *state_type == StateType::Script {
                    span.set(KeyValue::new("gen_ai.operation.name", "execute_tool"));
                }
                self.steps.insert(agent_id.clone(), OpenStep { span, step: *step, input_tokens: 0, output_tokens: 0 });
            }
            Event::ClaudeInvocationStarted { agent_id, backend, model, session_id, reminder_attempt, .. } => {
                if let Some(open) = self.steps.get_mut(agent_id) {
                    let span = &mut open.span;
                    span.set(KeyValue::new("gen_ai.operation.name", "chat"));
                    span.set(KeyValue::new("gen_ai.system", provider(*backend)));
                    span.set(KeyValue::new("gen_ai.provider.name", provider(*backend)));
                    span.set(KeyValue::new("baton.backend", backend.as_str()));
                    if !model.is_empty() {
                        span.set(KeyValue::new("gen_ai.request.model", model.clone()));
                    }
                    if let Some(session) = session_id {
                        span.set(KeyValue::new("gen_ai.conversation.id", session.to_string()));
                    }
                    span.set(KeyValue::new("baton.reminders", i64::from(*reminder_attempt)));
                    if *reminder_attempt > 0 {
                        span.add_event(
                            "reminder",
                            now,
                            vec![KeyValue::new("baton.reminder", i64::from(*reminder_attempt))],
                        );
                    }
                }
            }
            Event::ClaudeStreamOutput { agent_id, json, .. } => {
                if let Some(open) = self.steps.get_mut(agent_id) {
                    read_stream_object(open, json);
                }
            }
            Event::StateCompleted { agent_id, cost_usd, session_id, tokens, .. } => {
                if let Some(open) = self.steps.get_mut(agent_id) {
                    open.span.set(KeyValue::new("baton.cost_usd", *cost_usd));
                    if let Some(session) = session_id {
                        open.span.set(KeyValue::new("gen_ai.conversation.id", session.to_string()));
                    }
                    if let Some(tokens) = tokens {
                        open.input_tokens = tokens.input_tokens;
                        open.output_tokens = tokens.output_tokens;
                    }
                }
            }
            Event::StepRanOn { agent_id, worker, .. } => {
                if let Some(open) = self.steps.get_mut(agent_id) {
                    open.span.set(KeyValue::new("baton.worker", worker.clone()));
                }
            }
            Event::TransitionOccurred { agent_id, to_state, transition_type, commit, recovered: false, .. } => {
                if let Some(mut open) = self.steps.remove(agent_id) {
                    open.span.set(KeyValue::new("baton.transition", transition_type.clone()));
                    if let Some(next) = to_state {
                        open.span.set(KeyValue::new("baton.next_state", next.to_string()));
                    }
                    open.span.set(KeyValue::new("baton.commit", i64::try_from(*commit).unwrap_or(i64::MAX)));
                    if open.span.status == Status::Unset {
                        open.span.status = Status::Ok;
                    }
                    done.push(self.finish_step(open, now));
                }
            }
            Event::ErrorOccurred { agent_id, error_type, message, is_retryable, retry_count, max_retries, .. } => {
                let kind = serde_json::to_value(error_type)
                    .ok()
                    .and_then(|value| value.as_str().map(str::to_string))
                    .unwrap_or_default();
                let attributes = vec![
                    KeyValue::new("error.type", kind),
                    KeyValue::new("exception.message", head(message, MAX_TEXT)),
                    KeyValue::new("baton.retryable", *is_retryable),
                    KeyValue::new("baton.retry_count", i64::from(*retry_count)),
                    KeyValue::new("baton.max_retries", i64::from(*max_retries)),
                ];
                match self.steps.get_mut(agent_id) {
                    Some(open) => open.span.add_event("error", now, attributes),
                    None => self.agent(agent_id, now).add_event("error", now, attributes),
                }
            }
            Event::AgentPaused { agent_id, reason, message, .. } => {
                let text = format!("{reason}: {message}");
                if let Some(mut open) = self.steps.remove(agent_id) {
                    open.span.fail(&text);
                    done.push(self.finish_step(open, now));
                }
                let agent = self.agent(agent_id, now);
                agent.add_event("paused", now, vec![KeyValue::new("baton.reason", head(&text, MAX_TEXT))]);
                agent.fail(&text);
            }
            Event::AgentAsking { agent_id, ask_id, prompt, next_state } => {
                let attributes = vec![
                    KeyValue::new("baton.ask_id", ask_id.clone()),
                    KeyValue::new("baton.prompt", head(prompt, MAX_TEXT)),
                    KeyValue::new("baton.next_state", next_state.to_string()),
                ];
                self.agent(agent_id, now).add_event("ask", now, attributes);
            }
            Event::JoinWaiting { agent_id, workers, next_state, .. } => {
                let workers: Vec<String> = workers.iter().map(ToString::to_string).collect();
                let attributes = vec![
                    KeyValue::new("baton.workers", head(&workers.join(","), MAX_TEXT)),
                    KeyValue::new("baton.next_state", next_state.to_string()),
                ];
                self.agent(agent_id, now).add_event("join.waiting", now, attributes);
            }
            Event::JoinCompleted { agent_id, next_state, workers, timed_out } => {
                let attributes = vec![
                    KeyValue::new("baton.workers", i64::try_from(workers.len()).unwrap_or(i64::MAX)),
                    KeyValue::new("baton.next_state", next_state.to_string()),
                    KeyValue::new("baton.timed_out", *timed_out),
                ];
                self.agent(agent_id, now).add_event("join", now, attributes);
            }
            Event::AgentTerminated { agent_id, result } => {
                if let Some(open) = self.steps.remove(agent_id) {
                    done.push(self.finish_step(open, now));
                }
                let mut agent = match self.agents.remove(agent_id) {
                    Some(agent) => agent,
                    None => new_agent_span(&self.trace, self.run_span(), &self.run_id, agent_id, now),
                };
                agent.set(KeyValue::new("baton.result", head(result, MAX_TEXT)));
                if agent.status == Status::Unset {
                    agent.status = Status::Ok;
                }
                done.push(self.finish(agent, now));
            }
            Event::RunFailed { agent_id, error, .. } => {
                if let Some(agent_id) = agent_id
                    && let Some(mut open) = self.steps.remove(agent_id)
                {
                    open.span.fail(error);
                    done.push(self.finish_step(open, now));
                }
                if let Some(run) = &mut self.run {
                    run.add_event("error", now, vec![KeyValue::new("exception.message", head(error, MAX_TEXT))]);
                    run.fail(error);
                }
                done.extend(self.finish_all("failed", now));
            }
            Event::WorkflowCompleted { total_cost_usd, steps, .. } => {
                if let Some(run) = &mut self.run {
                    run.set(KeyValue::new("baton.cost_usd", *total_cost_usd));
                    run.set(KeyValue::new("baton.steps", i64::try_from(*steps).unwrap_or(i64::MAX)));
                    run.status = Status::Ok;
                }
                done.extend(self.finish_all("completed", now));
            }
            Event::WorkflowPaused { total_cost_usd, paused_agent_count, .. } => {
                if let Some(run) = &mut self.run {
                    run.set(KeyValue::new("baton.cost_usd", *total_cost_usd));
                    run.set(KeyValue::new("baton.paused_agents", i64::try_from(*paused_agent_count).unwrap_or(0)));
                }
                done.extend(self.finish_all("paused", now));
            }
            Event::WorkflowAsking { ask_id, pending_count, .. } => {
                if let Some(run) = &mut self.run {
                    run.add_event(
                        "ask",
                        now,
                        vec![
                            KeyValue::new("baton.ask_id", ask_id.clone()),
                            KeyValue::new("baton.pending", i64::try_from(*pending_count).unwrap_or(0)),
                        ],
                    );
                }
                done.extend(self.finish_all("asking", now));
            }
            Event::WorkflowInterrupted { signal, .. } => {
                if let Some(run) = &mut self.run {
                    run.fail(&format!("interrupted by {signal}"));
                }
                done.extend(self.finish_all("interrupted", now));
            }
            _ => {}
        }
        done
    }

    /// Everything still open, ended now (the end of the invocation).
    pub(crate) fn close(&mut self, now: SystemTime) -> Vec<SpanData> {
        self.finish_all("ended", now)
    }

    fn finish_all(&mut self, status: &'static str, now: SystemTime) -> Vec<SpanData> {
        let mut done = Vec::new();
        let steps: Vec<OpenStep> = self.steps.drain().map(|(_, step)| step).collect();
        for step in steps {
            done.push(self.finish_step(step, now));
        }
        let agents: Vec<OpenSpan> = self.agents.drain().map(|(_, agent)| agent).collect();
        for agent in agents {
            done.push(self.finish(agent, now));
        }
        if let Some(mut run) = self.run.take() {
            run.set(KeyValue::new("baton.status", status));
            done.push(self.finish(run, now));
        }
        done
    }

    /// The run span's id (none before `WorkflowStarted`: the agents hang from
    /// this invocation's run span all the same).
    fn run_span(&self) -> SpanId {
        SpanId::from_bytes(self.trace.run_span())
    }

    /// `agent_id`'s span, opened now if it has none yet (the main agent, or an
    /// agent resumed in this invocation).
    fn agent(&mut self, agent_id: &AgentId, now: SystemTime) -> &mut OpenSpan {
        let (trace, run, run_id) = (&self.trace, self.run_span(), &self.run_id);
        self.agents.entry(agent_id.clone()).or_insert_with(|| new_agent_span(trace, run, run_id, agent_id, now))
    }

    fn finish_step(&self, mut open: OpenStep, now: SystemTime) -> SpanData {
        if open.input_tokens > 0 || open.output_tokens > 0 {
            open.span.set(KeyValue::new("gen_ai.usage.input_tokens", saturating(open.input_tokens)));
            open.span.set(KeyValue::new("gen_ai.usage.output_tokens", saturating(open.output_tokens)));
        }
        self.finish(open.span, now)
    }

    fn finish(&self, span: OpenSpan, now: SystemTime) -> SpanData {
        let flags = if self.trace.sampled() { TraceFlags::SAMPLED } else { TraceFlags::default() };
        SpanData {
            span_context: SpanContext::new(
                TraceId::from_bytes(self.trace.trace_id()),
                span.span_id,
                flags,
                false,
                TraceState::default(),
            ),
            parent_span_id: span.parent,
            parent_span_is_remote: false,
            span_kind: span.kind,
            name: Cow::Owned(span.name),
            start_time: span.start,
            end_time: now.max(span.start),
            attributes: span.attributes,
            dropped_attributes_count: 0,
            events: span.events,
            links: SpanLinks::default(),
            status: span.status,
            instrumentation_scope: self.scope.clone(),
        }
    }
}

fn new_agent_span(trace: &RunTrace, run: SpanId, run_id: &str, agent_id: &AgentId, now: SystemTime) -> OpenSpan {
    let mut span =
        OpenSpan::new(trace.agent_span(agent_id), run, format!("invoke_agent {agent_id}"), SpanKind::Internal, now);
    span.set(KeyValue::new("gen_ai.operation.name", "invoke_agent"));
    span.set(KeyValue::new("gen_ai.agent.name", agent_id.to_string()));
    span.set(KeyValue::new("baton.run_id", run_id.to_string()));
    span.set(KeyValue::new("baton.agent_id", agent_id.to_string()));
    span
}

fn saturating(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// `gen_ai.provider.name` of a backend: whose models it runs.
fn provider(backend: BackendName) -> &'static str {
    match backend {
        BackendName::Claude => "anthropic",
        BackendName::Codex => "openai",
        // pi runs any provider's models; the CLI is what Baton knows.
        BackendName::Pi => "pi",
    }
}

/// What a Claude Code stream object tells the step's span: the model that
/// answered (`system`/`init`) and the tokens of the turn (`result`; its input
/// counts cache reads and writes too).
fn read_stream_object(open: &mut OpenStep, json: &serde_json::Value) {
    match json.get("type").and_then(serde_json::Value::as_str) {
        Some("system") => {
            if let Some(model) = json.get("model").and_then(serde_json::Value::as_str) {
                open.span.set(KeyValue::new("gen_ai.response.model", head(model, MAX_TEXT)));
            }
        }
        Some("result") => {
            let Some(usage) = json.get("usage") else { return };
            let count = |key: &str| usage.get(key).and_then(serde_json::Value::as_u64).unwrap_or(0);
            open.input_tokens = open.input_tokens.saturating_add(
                count("input_tokens")
                    .saturating_add(count("cache_read_input_tokens"))
                    .saturating_add(count("cache_creation_input_tokens")),
            );
            open.output_tokens = open.output_tokens.saturating_add(count("output_tokens"));
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::ids::StateName;

    fn tree() -> SpanTree {
        let run = RunId::parse("r1").expect("a run id");
        SpanTree::new(RunTrace::with_invocation(&run, [3; 8], true), &run)
    }

    fn at(seconds: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(seconds)
    }

    #[test]
    fn a_fork_is_an_event_on_its_parent_and_the_child_hangs_from_the_run() {
        let mut tree = tree();
        let main = AgentId::main();
        let child = AgentId::from("main_w1");
        let spawned = Event::AgentSpawned {
            parent_agent_id: main.clone(),
            new_agent_id: child.clone(),
            initial_state: StateName::from("W.md"),
        };
        assert!(tree.on_event(&spawned, at(1)).is_empty());
        let done = tree.close(at(2));
        let parent = done.iter().find(|span| span.name == "invoke_agent main").expect("the parent");
        assert_eq!(parent.events.events[0].name, "fork");
        let worker = done.iter().find(|span| span.name == "invoke_agent main_w1").expect("the child");
        assert_eq!(worker.parent_span_id, SpanId::from_bytes(tree.trace.run_span()));
        assert!(worker.attributes.contains(&KeyValue::new("baton.parent_agent_id", "main")));
    }

    #[test]
    fn a_span_keeps_a_bounded_number_of_events_and_counts_the_rest() {
        let mut tree = tree();
        let main = AgentId::main();
        for n in 0..(MAX_EVENTS + 5) {
            let ask = Event::AgentAsking {
                agent_id: main.clone(),
                ask_id: format!("a{n}"),
                prompt: "x".repeat(MAX_TEXT * 4),
                next_state: StateName::from("NEXT.md"),
            };
            tree.on_event(&ask, at(1));
        }
        let done = tree.close(at(2));
        let agent = &done[0];
        assert_eq!(agent.events.events.len(), MAX_EVENTS);
        assert_eq!(agent.events.dropped_count, 5);
        let prompt = agent.events.events[0].attributes.iter().find(|kv| kv.key.as_str() == "baton.prompt");
        assert!(prompt.is_some_and(|kv| kv.value.as_str().len() <= MAX_TEXT + 4), "cut to MAX_TEXT");
    }
}
