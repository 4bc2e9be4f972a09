//! The W3C trace context of a run (issue 23): which trace its spans belong to and
//! which span each step is, known *before* the step's process starts.
//!
//! The OpenTelemetry observer (`observers::otel`) only hears about a step through
//! the bus, and events may be held until the store is durable (`events::bus`); a
//! step's child process cannot wait for that to learn its parent span. So the ids
//! are not drawn at random by the exporter but derived here, from the run and the
//! step, and both sides compute the same ones: the executor hands the step's
//! `TRACEPARENT` to the agent CLI, the observer gives the step's span that id.
//!
//! The trace id is a function of the run id: a resumed run continues its trace
//! with nothing new to store, and runs written before this issue have one too.
//! Span ids also take a random id of this invocation, so a step re-run after a
//! resume never repeats a span id of the invocation that was interrupted.

use std::collections::BTreeMap;

use sha2::{Digest, Sha256};

use crate::ids::{AgentId, RunId};

/// The trace of one invocation of a run (`run`, `resume`, `rerun`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RunTrace {
    trace_id: [u8; 16],
    invocation: [u8; 8],
    /// The sampler's decision for the run: the `sampled` flag of every context
    /// handed out (Claude Code exports nothing under an unsampled parent).
    sampled: bool,
}

impl RunTrace {
    /// The trace of `run_id` for an invocation with a fresh random id.
    pub(crate) fn new(run_id: &RunId, sampled: bool) -> RunTrace {
        let random = uuid::Uuid::new_v4();
        let mut invocation = [0u8; 8];
        invocation.copy_from_slice(&random.as_bytes()[..8]);
        RunTrace::with_invocation(run_id, invocation, sampled)
    }

    /// The trace of `run_id` for invocation `invocation` (tests pick it).
    pub(crate) fn with_invocation(run_id: &RunId, invocation: [u8; 8], sampled: bool) -> RunTrace {
        RunTrace { trace_id: trace_id_of(run_id), invocation, sampled }
    }

    pub(crate) fn trace_id(&self) -> [u8; 16] {
        self.trace_id
    }

    pub(crate) fn sampled(&self) -> bool {
        self.sampled
    }

    /// This invocation's run span.
    pub(crate) fn run_span(&self) -> [u8; 8] {
        self.span_id(&["run"])
    }

    /// The span of `agent` in this invocation.
    pub(crate) fn agent_span(&self, agent: &AgentId) -> [u8; 8] {
        self.span_id(&["agent", &**agent])
    }

    /// The span of `agent`'s step `step` (its retries included).
    pub(crate) fn step_span(&self, agent: &AgentId, step: u64) -> [u8; 8] {
        self.span_id(&["step", &**agent, &step.to_string()])
    }

    /// The `TRACEPARENT` value that makes a process a child of `agent`'s step `step`.
    pub(crate) fn traceparent(&self, agent: &AgentId, step: u64) -> String {
        format!(
            "00-{}-{}-{}",
            hex(&self.trace_id),
            hex(&self.step_span(agent, step)),
            if self.sampled { "01" } else { "00" }
        )
    }

    fn span_id(&self, parts: &[&str]) -> [u8; 8] {
        let mut hasher = Sha256::new();
        hasher.update(b"baton span\0");
        hasher.update(self.trace_id);
        hasher.update(self.invocation);
        for part in parts {
            hasher.update(part.as_bytes());
            hasher.update([0]);
        }
        let digest = hasher.finalize();
        let mut id = [0u8; 8];
        id.copy_from_slice(&digest[..8]);
        nonzero(id)
    }
}

/// What every step's process of an exporting run gets: the run's trace and
/// the exporter's settings as the standard `OTEL_EXPORTER_OTLP_*` variables, for
/// agent CLIs that export their own spans (Claude Code).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RunTelemetry {
    pub(crate) trace: RunTrace,
    pub(crate) export_env: BTreeMap<String, String>,
}

impl RunTelemetry {
    /// What `agent`'s step `step` hands its process.
    pub(crate) fn for_step(&self, agent: &AgentId, step: u64) -> StepTelemetry {
        StepTelemetry { traceparent: self.trace.traceparent(agent, step), export_env: self.export_env.clone() }
    }
}

/// One step's trace context and where its CLI may send its own spans.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct StepTelemetry {
    /// `TRACEPARENT` for the step's process: its parent is the step's span.
    pub(crate) traceparent: String,
    /// `OTEL_EXPORTER_OTLP_*` as Baton exports with them.
    pub(crate) export_env: BTreeMap<String, String>,
}

impl StepTelemetry {
    /// Whether the step's span is sampled (a CLI exports nothing under one that is not).
    pub(crate) fn sampled(&self) -> bool {
        self.traceparent.ends_with("-01")
    }
}

/// The trace id of run `run_id`: the first 16 bytes of a SHA-256 of it.
pub(crate) fn trace_id_of(run_id: &RunId) -> [u8; 16] {
    let digest = Sha256::new().chain_update(b"baton trace\0").chain_update(run_id.to_string()).finalize();
    let mut id = [0u8; 16];
    id.copy_from_slice(&digest[..16]);
    nonzero(id)
}

/// An all-zero id is invalid in W3C trace context: one bit set instead.
fn nonzero<const N: usize>(mut id: [u8; N]) -> [u8; N] {
    if id.iter().all(|byte| *byte == 0) {
        id[N - 1] = 1;
    }
    id
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run() -> RunId {
        RunId::parse("20260101-120000-abc123").expect("a valid run id")
    }

    #[test]
    fn a_run_keeps_its_trace_id_across_invocations_and_span_ids_differ_between_them() {
        let first = RunTrace::with_invocation(&run(), [1; 8], true);
        let second = RunTrace::with_invocation(&run(), [2; 8], true);
        assert_eq!(first.trace_id(), second.trace_id());
        assert_ne!(first.run_span(), second.run_span());
        let main = AgentId::main();
        assert_ne!(first.step_span(&main, 1), second.step_span(&main, 1));
        assert_ne!(first.step_span(&main, 1), first.step_span(&main, 2));
        assert_ne!(first.agent_span(&main), first.run_span());
    }

    #[test]
    fn the_traceparent_names_the_step_span_and_the_sampling_decision() {
        let trace = RunTrace::with_invocation(&run(), [7; 8], true);
        let main = AgentId::main();
        let parent = trace.traceparent(&main, 3);
        assert_eq!(parent, format!("00-{}-{}-01", hex(&trace.trace_id()), hex(&trace.step_span(&main, 3))));
        assert!(RunTrace::with_invocation(&run(), [7; 8], false).traceparent(&main, 3).ends_with("-00"));
    }
}
