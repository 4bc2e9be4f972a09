//! A workflow as `baton lint` reads it: its state files' text, wherever they
//! live, and how a place in that text maps to a place a person can open — a line
//! of a state file, or of the YAML workflow that holds the state.

use std::path::{Path, PathBuf};

use crate::lint::diagnostic::Location;
use crate::syntax::frontmatter;
use crate::syntax::yaml_positions::{Position, key_positions};
use crate::text::state_name;
use crate::workflow::manifest::{Manifest, ManifestError};
use crate::workflow::resolution::{Platform, ResolveError};
use crate::workflow::scope::{Scope, ScopeKind};

/// How deep frontmatter keys are looked up: `allowed_transitions.N.target`.
const FRONTMATTER_DEPTH: usize = 3;

pub(crate) struct LintedWorkflow {
    /// The scope, as resolution and specifiers use it.
    pub(crate) scope: PathBuf,
    /// The scope as shown: as given, or relative to the current directory.
    pub(crate) label: String,
    /// The state files that run on this platform, in listing order.
    pub(crate) listing: Vec<String>,
    /// Every file, which targets are resolved among (so that a name of another
    /// platform's script is reported as such).
    pub(crate) all_files: Vec<String>,
    /// The workflow, opened once: every state's text is read through it.
    workflow: Scope,
}

/// A state file's text, CRLF normalised (which keeps its lines and columns).
pub(crate) struct StateText {
    pub(crate) file: String,
    pub(crate) text: String,
    /// Where a prompt's body starts (after the frontmatter); 0 for a script.
    pub(crate) body_start: usize,
    /// The frontmatter's YAML, if the prompt has a block.
    pub(crate) frontmatter: Option<String>,
}

impl StateText {
    pub(crate) fn body(&self) -> &str {
        &self.text[self.body_start..]
    }
}

impl LintedWorkflow {
    pub(crate) fn open(scope: &Path, label: String) -> Result<LintedWorkflow, ResolveError> {
        let workflow = Scope::open(scope)
            .map_err(|error| ResolveError::InvalidScope { scope: label.clone(), message: error.to_string() })?;
        let mut all_files = workflow
            .listing()
            .map_err(|error| ResolveError::ScopeUnreadable {
                scope: scope.display().to_string(),
                reason: error.to_string(),
            })?
            .to_vec();
        match workflow.kind() {
            // A directory lists in no useful order; a YAML workflow's and an archive's is the author's.
            ScopeKind::Directory => all_files.sort(),
            ScopeKind::Yaml | ScopeKind::Zip => {}
        }
        // Other files (notes, data) and the other platform's scripts are no states here.
        let runs_here = |file: &String| {
            let extension = state_name::extension(file);
            state_name::is_state_extension(extension) && !Platform::CURRENT.rejects_extension(extension)
        };
        let listing = all_files.iter().filter(|file| runs_here(file)).cloned().collect();
        Ok(LintedWorkflow { scope: scope.to_path_buf(), label, listing, all_files, workflow })
    }

    pub(crate) fn is_yaml(&self) -> bool {
        self.workflow.kind() == ScopeKind::Yaml
    }

    /// The text of state file `file`, or why it cannot be read.
    pub(crate) fn read(&self, file: &str) -> Result<StateText, String> {
        // An archive's error is its own sentence, naming the archive and the entry.
        let raw = self.workflow.text(file).map_err(|error| error.to_string())?;
        let text = raw.replace("\r\n", "\n");
        if state_name::is_script(file) {
            return Ok(StateText { file: file.to_string(), text, body_start: 0, frontmatter: None });
        }
        let (frontmatter, body) = frontmatter::split(&text);
        let body_start = text.len() - body.len();
        Ok(StateText { file: file.to_string(), text, body_start, frontmatter })
    }

    /// The file a person opens to fix state `file`.
    pub(crate) fn file_of(&self, file: &str) -> String {
        match self.workflow.kind() {
            ScopeKind::Yaml => self.label.clone(),
            ScopeKind::Directory | ScopeKind::Zip => format!("{}/{file}", self.label.trim_end_matches('/')),
        }
    }

    /// The backend `frontmatter`'s state runs on and its options, as a run on
    /// Claude would choose them (lint knows no `--backend`).
    pub(crate) fn backend_of(
        &self,
        frontmatter: &frontmatter::StateFrontmatter,
    ) -> Result<(crate::ids::BackendName, crate::backend::options::OptionValues), String> {
        crate::workflow::manifest::BackendChoice::for_state(
            frontmatter,
            &self.workflow,
            crate::ids::BackendName::Claude,
        )
    }

    /// Why the workflow's manifest (`workflow.yaml`, or a YAML workflow's own keys)
    /// would stop a run, if it would: where, and the reason (which names its line).
    pub(crate) fn manifest_problem(&self) -> Option<(Location, String)> {
        match Manifest::of_scope(&self.workflow).err()? {
            ManifestError::Invalid { path, message } => {
                let name = path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
                Some((Location::file(self.file_of(&name)), message))
            }
            ManifestError::Workflow(message) => Some((self.whole(), message)),
        }
    }

    /// The workflow as a whole.
    pub(crate) fn whole(&self) -> Location {
        Location::file(self.label.clone())
    }

    /// State `file` as a whole: its file, or its key in a YAML workflow.
    pub(crate) fn at_state(&self, file: &str) -> Location {
        match self.workflow.yaml() {
            Some((workflow, _)) => {
                let stem = state_name::strip_state_extension(file);
                located(self.file_of(file), workflow.position(&["states", stem]))
            }
            None => Location::at(self.file_of(file), 1, 1),
        }
    }

    /// The place of byte `offset` of `state`'s text.
    pub(crate) fn at_offset(&self, state: &StateText, offset: usize) -> Location {
        match self.workflow.yaml() {
            Some((workflow, text)) => {
                let stem = state_name::strip_state_extension(&state.file);
                let key = if state_name::is_script(&state.file) {
                    state_name::extension(&state.file).trim_start_matches('.').to_string()
                } else {
                    "prompt".to_string()
                };
                let value_key = workflow.position(&["states", stem, &key]);
                match value_key.and_then(|at| find_in_yaml(text, at, state, offset)) {
                    Some(found) => Location::at(self.file_of(&state.file), found.line, found.column),
                    None => located(self.file_of(&state.file), value_key.or(workflow.position(&["states", stem]))),
                }
            }
            None => {
                let position = position_of(&state.text, offset);
                Location::at(self.file_of(&state.file), position.line, position.column)
            }
        }
    }

    /// The place of frontmatter key `path` (`["allowed_transitions", "0", "target"]`)
    /// of prompt `state`; the state itself when the key cannot be found.
    pub(crate) fn at_key(&self, state: &StateText, path: &[&str]) -> Location {
        match self.workflow.yaml() {
            Some((workflow, _)) => {
                let stem = state_name::strip_state_extension(&state.file);
                let full: Vec<&str> = ["states", stem].into_iter().chain(path.iter().copied()).collect();
                located(self.file_of(&state.file), workflow.position(&full).or(workflow.position(&full[..2])))
            }
            None => {
                let found =
                    state.frontmatter.as_deref().and_then(|yaml| key_positions(yaml, FRONTMATTER_DEPTH).get(path));
                match found {
                    // The block starts on the file's second line.
                    Some(at) => Location::at(self.file_of(&state.file), at.line + 1, at.column),
                    None => self.at_state(&state.file),
                }
            }
        }
    }

    /// The keys of a YAML workflow's state that are no state key, with their places.
    pub(crate) fn unknown_state_keys(&self, file: &str) -> Option<Vec<(String, Location)>> {
        let (workflow, _) = self.workflow.yaml()?;
        let stem = state_name::strip_state_extension(file);
        let keys = workflow.unknown_keys(file).iter().map(|key| {
            let at = located(self.file_of(file), workflow.position(&["states", stem, key]));
            (key.clone(), at)
        });
        Some(keys.collect())
    }
}

fn located(file: String, position: Option<Position>) -> Location {
    match position {
        Some(at) => Location::at(file, at.line, at.column),
        None => Location::file(file),
    }
}

/// Line and column (in characters) of byte `offset` of `text`.
pub(crate) fn position_of(text: &str, offset: usize) -> Position {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line_start = before.rfind('\n').map_or(0, |newline| newline + 1);
    Position { line: before.matches('\n').count() + 1, column: before[line_start..].chars().count() + 1 }
}

/// Where the text at `offset` of a YAML state's virtual file is written in the
/// YAML file: the same occurrence of the same words after the state's value key.
/// Quoted YAML strings can escape characters, so this may find nothing.
fn find_in_yaml(yaml: &str, key: Position, state: &StateText, offset: usize) -> Option<Position> {
    let rest = state.text.get(offset..)?;
    let needle = rest.lines().next()?.chars().take(40).collect::<String>();
    if needle.is_empty() {
        return None;
    }
    let occurrence = state.text.get(state.body_start..offset)?.matches(needle.as_str()).count();
    let key_start: usize = yaml.split_inclusive('\n').take(key.line.saturating_sub(1)).map(str::len).sum();
    let (found, _) = yaml.get(key_start..)?.match_indices(needle.as_str()).nth(occurrence)?;
    Some(position_of(yaml, key_start + found))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_lines_and_characters_from_one() {
        let text = "ab\ncé<goto>";
        assert_eq!(position_of(text, 0), Position { line: 1, column: 1 });
        assert_eq!(position_of(text, text.find('<').unwrap_or(0)), Position { line: 2, column: 3 });
    }
}
