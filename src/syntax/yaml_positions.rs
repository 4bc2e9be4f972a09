//! Where each key of a YAML document is written, by its path.
//!
//! The YAML loaders hand back values without positions, but a message about a
//! workflow is only useful with a line to go to: a YAML workflow's mistakes, a
//! frontmatter entry `baton lint` points at. This walks the parser's marked
//! events once and remembers the line and column of every mapping key, with
//! sequence items named by their index (`["allowed_transitions", "0", "target"]`).

use std::collections::HashMap;

use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::Marker;

/// A place in a text, both counted from 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Position {
    pub(crate) line: usize,
    pub(crate) column: usize,
}

/// The position of each key up to a depth, by path, and the keys written twice.
#[derive(Debug, Default)]
pub(crate) struct KeyPositions {
    positions: HashMap<Vec<String>, Position>,
    /// Each repeated key: its path, where it was first written and where again.
    pub(crate) duplicates: Vec<(Vec<String>, Position, Position)>,
}

impl KeyPositions {
    pub(crate) fn get<S: AsRef<str>>(&self, path: &[S]) -> Option<Position> {
        let path: Vec<String> = path.iter().map(|key| key.as_ref().to_string()).collect();
        self.positions.get(&path).copied()
    }
}

/// The keys of `text` at most `max_depth` levels deep. A syntax error ends the
/// walk: what was read before it is kept, and the loader reports the error.
pub(crate) fn key_positions(text: &str, max_depth: usize) -> KeyPositions {
    let mut walker = KeyWalker { stack: Vec::new(), max_depth, result: KeyPositions::default() };
    let _ = Parser::new_from_str(text).load(&mut walker, false);
    walker.result
}

/// A mapping or sequence being read: a mapping knows its current key while the
/// key's value is read, a sequence the index of its current item.
enum Container {
    Map { key: Option<String> },
    Seq { index: usize },
}

struct KeyWalker {
    stack: Vec<Container>,
    max_depth: usize,
    result: KeyPositions,
}

impl KeyWalker {
    /// The keys and indexes leading to the current position.
    fn path(&self) -> Option<Vec<String>> {
        self.stack
            .iter()
            .map(|container| match container {
                Container::Map { key } => key.clone(),
                Container::Seq { index } => Some(index.to_string()),
            })
            .collect()
    }

    /// A value was read: the enclosing mapping expects a key next, the enclosing
    /// sequence its next item.
    fn value_done(&mut self) {
        match self.stack.last_mut() {
            Some(Container::Map { key }) => *key = None,
            Some(Container::Seq { index }) => *index += 1,
            None => {}
        }
    }

    fn key(&mut self, name: String, mark: Marker) {
        if let Some(Container::Map { key }) = self.stack.last_mut() {
            *key = Some(name);
        }
        let Some(path) = self.path().filter(|path| path.len() <= self.max_depth) else { return };
        let here = Position { line: mark.line(), column: mark.col() + 1 };
        match self.result.positions.get(&path) {
            Some(first) => self.result.duplicates.push((path, *first, here)),
            None => {
                self.result.positions.insert(path, here);
            }
        }
    }
}

impl MarkedEventReceiver for KeyWalker {
    fn on_event(&mut self, event: Event, mark: Marker) {
        let expecting_key = matches!(self.stack.last(), Some(Container::Map { key: None }));
        match event {
            Event::Scalar(value, ..) if expecting_key => self.key(value, mark),
            Event::Scalar(..) | Event::Alias(_) => self.value_done(),
            Event::MappingStart(..) => self.stack.push(Container::Map { key: None }),
            Event::SequenceStart(..) => self.stack.push(Container::Seq { index: 0 }),
            Event::MappingEnd | Event::SequenceEnd => {
                self.stack.pop();
                self.value_done();
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_of_mappings_inside_sequences_are_found_by_index() {
        let text = "model: opus\nallowed_transitions:\n  - tag: goto\n    target: A\n  - {tag: result, payload: ok}\n";
        let positions = key_positions(text, 3);
        assert_eq!(positions.get(&["model"]), Some(Position { line: 1, column: 1 }));
        assert_eq!(positions.get(&["allowed_transitions", "0", "target"]), Some(Position { line: 4, column: 5 }));
        assert_eq!(positions.get(&["allowed_transitions", "1", "payload"]), Some(Position { line: 5, column: 19 }));
        assert_eq!(positions.get(&["allowed_transitions", "2", "tag"]), None);
    }

    #[test]
    fn a_key_written_twice_is_reported_with_both_positions() {
        let positions = key_positions("states:\n  A: {sh: x}\n  A: {sh: y}\n", 2);
        let (path, first, second) = &positions.duplicates[0];
        assert_eq!(path, &["states", "A"]);
        assert_eq!((first.line, second.line), (2, 3));
    }

    #[test]
    fn keys_deeper_than_the_limit_are_not_kept() {
        let positions = key_positions("a:\n  b:\n    c: 1\n", 2);
        assert!(positions.get(&["a", "b"]).is_some());
        assert!(positions.get(&["a", "b", "c"]).is_none());
    }
}
