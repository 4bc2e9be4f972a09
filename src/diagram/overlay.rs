//! `--run RUN`: what a run did, drawn over the diagram — how often each state
//! started (the `StateStarted` events of the run's trace, first attempts only,
//! so a retried step counts once) and where each live agent is now (the run's
//! state, its journal replayed).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::diagram::Diagram;
use crate::inspect::trace_file::{TRACE_FILE, read_complete};
use crate::store::runs::{RunStore, StoreError};

#[derive(Debug, Default)]
pub(crate) struct Overlay {
    /// Steps started, by state file.
    pub(crate) visits: BTreeMap<String, u64>,
    /// The state files live agents are at.
    pub(crate) current: BTreeSet<String>,
}

impl Overlay {
    /// What run `run_id` of `store` did. An unknown run is the store's error; a
    /// missing or torn trace only loses counts.
    pub(crate) fn load(store: &RunStore, run_id: &str) -> Result<Overlay, StoreError> {
        let state = store.load(run_id)?;
        let current = state.agents.iter().map(|agent| agent.current_state.to_string()).collect();
        let visits = visits(&store.run_dir(run_id).join(TRACE_FILE));
        Ok(Overlay { visits, current })
    }

    pub(crate) fn apply(&self, diagram: &mut Diagram) {
        for node in &mut diagram.nodes {
            let Some(file) = &node.file else { continue };
            node.visits = Some(self.visits.get(file).copied().unwrap_or(0));
            node.current = self.current.contains(file);
        }
    }
}

fn visits(trace: &Path) -> BTreeMap<String, u64> {
    let mut visits = BTreeMap::new();
    let lines = read_complete(trace).unwrap_or_default();
    for line in lines.lines() {
        let Ok(event) = serde_json::from_str::<serde_json::Value>(line) else { continue };
        if event.get("type").and_then(serde_json::Value::as_str) != Some("StateStarted") {
            continue;
        }
        let first_attempt = event.get("attempt").and_then(serde_json::Value::as_u64).is_none_or(|attempt| attempt <= 1);
        if let (true, Some(state)) = (first_attempt, event.get("state").and_then(serde_json::Value::as_str)) {
            *visits.entry(state.to_string()).or_insert(0) += 1;
        }
    }
    visits
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visits_count_first_attempts_and_skip_torn_lines() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let trace = dir.path().join("events.jsonl");
        let lines = [
            r#"{"type":"StateStarted","state":"TICK.sh","attempt":1}"#,
            r#"{"type":"StateStarted","state":"TICK.sh","attempt":2}"#,
            r#"{"type":"StateCompleted","state":"TICK.sh"}"#,
            r#"{"type":"StateStarted","state":"TICK.sh","attempt":1}"#,
            r#"{"type":"StateStarted","state":"START.sh"}"#,
            r#"{"type":"StateStar"#,
        ];
        std::fs::write(&trace, lines.join("\n")).expect("the trace is written");
        let counted = visits(&trace);
        assert_eq!(counted.get("TICK.sh"), Some(&2));
        assert_eq!(counted.get("START.sh"), Some(&1));
        assert!(visits(&dir.path().join("none")).is_empty());
    }
}
