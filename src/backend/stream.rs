//! What every CLI's stream reader shares: the [`StreamSignal`]s it reports while
//! a turn runs, and format-free helpers for picking values out of its JSON
//! objects. Which objects and fields mean what stays in each CLI's own
//! `stream_reader.rs`: only what knows no wire format lives here.

use serde_json::Value;

use crate::backend::BackendEvent;

/// Something worth showing while a stream is read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum StreamSignal {
    /// Assistant text (fed to the `<print>` extractor).
    AssistantText(String),
    /// A line of progress: an assistant text's first line, or a CLI's notice.
    Progress(String),
    /// The model called a tool; `detail` is the file name or command.
    Tool { name: String, detail: String },
    /// A tool call failed; why.
    ToolError(String),
}

impl From<StreamSignal> for BackendEvent {
    fn from(signal: StreamSignal) -> BackendEvent {
        match signal {
            StreamSignal::AssistantText(text) => BackendEvent::AssistantText(text),
            StreamSignal::Progress(text) => BackendEvent::Progress(text),
            StreamSignal::Tool { name, detail } => BackendEvent::Tool { name, detail },
            StreamSignal::ToolError(text) => BackendEvent::ToolError(text),
        }
    }
}

/// A CLI's stream reader: it takes the stream one object at a time, says what
/// to show now, and sums up the turn at the end.
pub(crate) trait StreamRead {
    type Summary;

    /// Take in the next object of the stream; what to show now.
    fn push(&mut self, object: &Value) -> Vec<StreamSignal>;

    /// The summary of everything pushed.
    fn finish(self) -> Self::Summary;
}

/// `value[key]` when it is a string.
pub(crate) fn string_at<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key).and_then(Value::as_str)
}

/// `value[key]` when it is a non-negative integer, else 0.
pub(crate) fn number_at(value: &Value, key: &str) -> u64 {
    value.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// The first non-blank line of `text`, trimmed.
pub(crate) fn first_line(text: &str) -> Option<String> {
    text.lines().map(str::trim).find(|line| !line.is_empty()).map(str::to_string)
}

/// The last part of a `/`-separated path: what a tool call's detail shows.
pub(crate) fn file_name(path: &str) -> String {
    path.rsplit('/').next().unwrap_or(path).to_string()
}

/// The signals of one piece of assistant text: its first line as progress, then
/// the text itself.
pub(crate) fn text_signals(text: &str, signals: &mut Vec<StreamSignal>) {
    if let Some(line) = first_line(text) {
        signals.push(StreamSignal::Progress(line));
    }
    signals.push(StreamSignal::AssistantText(text.to_string()));
}

/// A fresh `R`'s summary of a recorded stream (`fixtures/<dir>/<name>`), and
/// every signal it gave while reading it.
#[cfg(test)]
pub(crate) fn read_fixture<R: StreamRead + Default>(dir: &str, name: &str) -> (R::Summary, Vec<StreamSignal>) {
    let mut reader = R::default();
    let signals = fixture_objects(dir, name).iter().flat_map(|object| reader.push(object)).collect();
    (reader.finish(), signals)
}

/// The JSON objects of a recorded stream (`fixtures/<dir>/<name>`), blank lines
/// skipped, for the readers' tests.
#[cfg(test)]
pub(crate) fn fixture_objects(dir: &str, name: &str) -> Vec<Value> {
    let path = format!("{}/fixtures/{dir}/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("fixture {path}: {error}"));
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).unwrap_or_else(|error| panic!("{path}: not JSON ({error}): {line}")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_gives_its_first_non_blank_line_as_progress_then_itself() {
        let mut signals = Vec::new();
        text_signals("\n  Done.  \n<result>ok</result>", &mut signals);
        text_signals("", &mut signals);
        assert_eq!(
            signals,
            [
                StreamSignal::Progress("Done.".into()),
                StreamSignal::AssistantText("\n  Done.  \n<result>ok</result>".into()),
                StreamSignal::AssistantText(String::new()),
            ]
        );
    }

    #[test]
    fn a_tool_detail_shows_a_paths_file_name() {
        assert_eq!(file_name("/work/src/main.rs"), "main.rs");
        assert_eq!(file_name("main.rs"), "main.rs");
    }
}
