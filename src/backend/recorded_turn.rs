//! A finished turn read back from its stream as the trace kept it
//! (`ClaudeStreamOutput` events): the model's answer, as the backend that ran
//! the turn reads its own stream (`baton test --record`, docs/testing.md).
//! Each CLI's stream format stays in its folder; this only picks the reader.

use serde_json::Value;

use crate::backend::stream::StreamRead;
use crate::backend::{claude, codex, pi};
use crate::ids::BackendName;

/// The answer of a turn `backend` ran whose stream objects were `objects`, or
/// `None` when the stream never reached its end (no `result`, `agent_end` or
/// `turn.completed`: the turn was cut short, or its output is not on disk).
pub(crate) fn answer(backend: BackendName, objects: &[Value]) -> Option<String> {
    match backend {
        BackendName::Claude => {
            let summary = read(claude::stream_reader::StreamReader::new(), objects);
            summary.saw_result.then_some(summary.text)
        }
        BackendName::Pi => {
            let summary = read(pi::stream_reader::StreamReader::new(), objects);
            summary.saw_agent_end.then_some(summary.text)
        }
        BackendName::Codex => {
            let summary = read(codex::stream_reader::StreamReader::new(), objects);
            summary.completed.then_some(summary.text)
        }
    }
}

fn read<R: StreamRead>(mut reader: R, objects: &[Value]) -> R::Summary {
    for object in objects {
        reader.push(object);
    }
    reader.finish()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_claude_turn_answers_its_result_and_a_cut_one_nothing() {
        let objects = [
            json!({"type": "system", "subtype": "init", "session_id": "s"}),
            json!({"type": "result", "subtype": "success", "is_error": false, "result": "<goto>B</goto>", "session_id": "s"}),
        ];
        assert_eq!(answer(BackendName::Claude, &objects).as_deref(), Some("<goto>B</goto>"));
        assert_eq!(answer(BackendName::Claude, &objects[..1]), None);
    }
}
