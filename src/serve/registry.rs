//! The workflows a daemon offers: each `--root`'s direct children that are
//! workflows — a directory holding states (with or without `workflow.yaml`), a
//! YAML workflow, a zip workflow (R13.3, which Baton widens to directories without
//! a manifest: `docs/serve.md`). Each is named by its manifest `id`, else by its
//! file name without extension; requests name workflows by that id only, so no
//! request can point the daemon at a path outside its roots.
//!
//! A scan also lints each workflow, so the page can show what `baton run` would
//! refuse before anyone starts it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::RwLock;

use serde::Serialize;

use crate::lint::diagnostic::Summary;
use crate::text::state_name;
use crate::workflow::manifest::{HumanInput, InputMode, Manifest, ManifestError};
use crate::workflow::scope::{Scope, ScopeKind};

#[derive(Clone, Debug, Serialize)]
pub(crate) struct WorkflowEntry {
    pub(crate) id: String,
    pub(crate) name: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) path: PathBuf,
    pub(crate) kind: &'static str,
    pub(crate) input: InputInfo,
    pub(crate) default_budget: Option<f64>,
    pub(crate) requires_human_input: &'static str,
    /// Where its runs start (the manifest's `working_directory`), if it says.
    pub(crate) working_directory: Option<String>,
    /// The names of the variables its manifest sets for its runs (not their values).
    pub(crate) environment: Vec<String>,
    pub(crate) lint: Summary,
    /// Why the manifest could not be read, when it could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) manifest_error: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub(crate) struct InputInfo {
    pub(crate) mode: &'static str,
    pub(crate) label: Option<String>,
    pub(crate) description: Option<String>,
}

pub(crate) struct Registry {
    roots: Vec<PathBuf>,
    entries: RwLock<Vec<WorkflowEntry>>,
}

impl WorkflowEntry {
    /// A workflow no root offers (a run the CLI started elsewhere), for drawing it.
    pub(crate) fn unlisted(path: &Path, label: &str) -> WorkflowEntry {
        WorkflowEntry {
            id: label.to_string(),
            name: None,
            description: None,
            path: path.to_path_buf(),
            kind: "directory",
            input: InputInfo { mode: "optional", label: None, description: None },
            default_budget: None,
            requires_human_input: "auto",
            working_directory: None,
            environment: Vec::new(),
            lint: Summary::default(),
            manifest_error: None,
        }
    }
}

impl Registry {
    pub(crate) fn scan(roots: Vec<PathBuf>) -> Registry {
        let entries = scan(&roots);
        Registry { roots, entries: RwLock::new(entries) }
    }

    pub(crate) fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    pub(crate) fn rescan(&self) -> Vec<WorkflowEntry> {
        let entries = scan(&self.roots);
        *self.entries.write().unwrap_or_else(|poisoned| poisoned.into_inner()) = entries.clone();
        entries
    }

    pub(crate) fn list(&self) -> Vec<WorkflowEntry> {
        self.entries.read().unwrap_or_else(|poisoned| poisoned.into_inner()).clone()
    }

    pub(crate) fn get(&self, id: &str) -> Option<WorkflowEntry> {
        self.list().into_iter().find(|entry| entry.id == id)
    }

    /// The id of the workflow at `path`, if it is one of these.
    pub(crate) fn id_of(&self, path: &Path) -> Option<String> {
        self.list().into_iter().find(|entry| entry.path == path).map(|entry| entry.id)
    }
}

fn scan(roots: &[PathBuf]) -> Vec<WorkflowEntry> {
    let mut by_id: BTreeMap<String, WorkflowEntry> = BTreeMap::new();
    for root in roots {
        let Ok(children) = std::fs::read_dir(root) else { continue };
        let mut paths: Vec<PathBuf> = children.filter_map(Result::ok).map(|child| child.path()).collect();
        paths.sort();
        for path in paths {
            let Some(entry) = entry(&path) else { continue };
            // The first root wins a clash of ids, as a PATH does.
            if let Some(kept) = by_id.get(&entry.id) {
                eprintln!(
                    "baton serve: {} has the id `{}` of {} already; it is not offered",
                    path.display(),
                    entry.id,
                    kept.path.display()
                );
                continue;
            }
            by_id.insert(entry.id.clone(), entry);
        }
    }
    by_id.into_values().collect()
}

/// The workflow at `path`, if it is one.
fn entry(path: &Path) -> Option<WorkflowEntry> {
    let file_name = path.file_name()?.to_str()?;
    if file_name.starts_with('.') {
        return None;
    }
    let kind = if path.is_dir() {
        if !holds_states(path) {
            return None;
        }
        "directory"
    } else {
        match ScopeKind::of(path) {
            ScopeKind::Directory => return None,
            ScopeKind::Yaml => {
                let text = std::fs::read_to_string(path).ok()?;
                if !text.lines().any(|line| line.starts_with("states:")) {
                    return None;
                }
                "yaml"
            }
            ScopeKind::Zip => "zip",
        }
    };
    let manifest = match Scope::open(path) {
        Ok(scope) => Manifest::of_scope(&scope),
        Err(error) => Err(ManifestError::Workflow(error.to_string())),
    };
    let (manifest, manifest_error) = match manifest {
        Ok(manifest) => (manifest, None),
        Err(error) => (None, Some(error.to_string())),
    };
    let stem = if kind == "directory" { file_name.to_string() } else { state_name::stem(file_name).to_string() };
    let id = manifest.as_ref().map(|manifest| manifest.id.clone()).filter(|id| !id.is_empty()).unwrap_or(stem);
    let input = InputInfo {
        mode: match manifest.as_ref().map(|manifest| manifest.input_mode).unwrap_or_default() {
            InputMode::Required => "required",
            InputMode::Optional => "optional",
            InputMode::None => "none",
        },
        label: manifest.as_ref().and_then(|manifest| manifest.input_label.clone()),
        description: manifest.as_ref().and_then(|manifest| manifest.input_description.clone()),
    };
    let requires_human_input = match manifest.as_ref().map(|manifest| manifest.requires_human_input).unwrap_or_default()
    {
        HumanInput::Auto => "auto",
        HumanInput::Yes => "true",
        HumanInput::No => "false",
    };
    Some(WorkflowEntry {
        id,
        name: manifest.as_ref().and_then(|manifest| manifest.name.clone()),
        description: manifest.as_ref().and_then(|manifest| manifest.description.clone()),
        path: path.to_path_buf(),
        kind,
        input,
        default_budget: manifest.as_ref().and_then(|manifest| manifest.default_budget),
        requires_human_input,
        working_directory: manifest.as_ref().and_then(|manifest| manifest.working_directory.clone()),
        environment: manifest
            .as_ref()
            .map(|manifest| manifest.environment.keys().cloned().collect())
            .unwrap_or_default(),
        lint: lint_counts(path, file_name),
        manifest_error,
    })
}

/// Whether the directory has a state file (or a manifest) at its top.
fn holds_states(dir: &Path) -> bool {
    let Ok(children) = std::fs::read_dir(dir) else { return false };
    children.filter_map(Result::ok).any(|child| {
        let name = child.file_name().to_string_lossy().to_ascii_lowercase();
        name == "workflow.yaml" || [".md", ".sh", ".ps1", ".bat"].iter().any(|extension| name.ends_with(extension))
    })
}

fn lint_counts(path: &Path, label: &str) -> Summary {
    match crate::lint::lint(path, label) {
        Ok(diagnostics) => Summary::of(&diagnostics),
        // A workflow that cannot be read at all is one error.
        Err(_) => Summary { errors: 1, ..Summary::default() },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_yaml_and_zip_children_are_workflows_and_the_rest_is_not() {
        let root = tempfile::tempdir().expect("temp dir");
        let dir = root.path();
        std::fs::create_dir_all(dir.join("plain")).expect("mkdir");
        std::fs::write(dir.join("plain/START.sh"), "echo '<result>x</result>'\n").expect("write");
        std::fs::create_dir_all(dir.join("named")).expect("mkdir");
        std::fs::write(dir.join("named/START.md"), "Say <result>x</result>\n").expect("write");
        std::fs::write(dir.join("named/workflow.yaml"), "id: review\nname: Review\ninput:\n  mode: required\n")
            .expect("write");
        std::fs::write(dir.join("flow.yaml"), "states:\n  START:\n    sh: echo '<result>x</result>'\n").expect("write");
        std::fs::create_dir_all(dir.join("empty")).expect("mkdir");
        std::fs::create_dir_all(dir.join(".hidden")).expect("mkdir");
        std::fs::write(dir.join(".hidden/START.sh"), "echo\n").expect("write");
        std::fs::write(dir.join("notes.txt"), "not a workflow").expect("write");
        std::fs::write(dir.join("config.yaml"), "key: value\n").expect("write");
        let registry = Registry::scan(vec![dir.to_path_buf()]);
        let ids: Vec<String> = registry.list().into_iter().map(|entry| entry.id).collect();
        assert_eq!(ids, ["flow", "plain", "review"]);
        let review = registry.get("review").expect("review");
        assert_eq!(review.name.as_deref(), Some("Review"));
        assert_eq!(review.input.mode, "required");
        assert_eq!(review.kind, "directory");
        assert_eq!(registry.get("flow").expect("flow").kind, "yaml");
        assert_eq!(registry.id_of(&dir.join("plain")).as_deref(), Some("plain"));
    }

    #[test]
    fn a_clash_of_ids_keeps_the_first_root() {
        let (first, second) = (tempfile::tempdir().expect("temp"), tempfile::tempdir().expect("temp"));
        for root in [first.path(), second.path()] {
            std::fs::create_dir_all(root.join("flow")).expect("mkdir");
            std::fs::write(root.join("flow/START.sh"), "echo '<result>x</result>'\n").expect("write");
        }
        let registry = Registry::scan(vec![first.path().to_path_buf(), second.path().to_path_buf()]);
        assert_eq!(registry.list().len(), 1);
        assert_eq!(registry.get("flow").expect("flow").path, first.path().join("flow"));
    }
}
