//! A state's contents, wherever the state lives: a file in a workflow directory,
//! a virtual file of a YAML workflow (R1.5, R13.7), or a file in a zip archive
//! (R1.15). The executors and the resolver read workflows only through here, so
//! they need not know which kind they run.

use std::path::{Path, PathBuf};

use crate::syntax::frontmatter::{PromptFile, PromptFileError, load_prompt, parse_prompt};
use crate::workflow::yaml_scope::{VirtualFile, YamlWorkflow, is_yaml_scope};
use crate::workflow::zip_scope::{ZipWorkflow, is_zip_scope};

/// A workflow packed in one file, whose states are not files of their own.
pub(crate) enum PackedWorkflow {
    Yaml(YamlWorkflow),
    Zip(ZipWorkflow),
}

impl PackedWorkflow {
    /// Open `scope` if it is a YAML or zip workflow (`None` for a directory); the
    /// error is a sentence naming the file.
    pub(crate) fn open(scope: &Path) -> Option<Result<PackedWorkflow, String>> {
        if is_yaml_scope(scope) {
            Some(YamlWorkflow::load(scope).map(PackedWorkflow::Yaml).map_err(|error| error.to_string()))
        } else if is_zip_scope(scope) {
            Some(ZipWorkflow::load(scope).map(PackedWorkflow::Zip).map_err(|error| error.to_string()))
        } else {
            None
        }
    }

    /// Its state files' names.
    pub(crate) fn listing(&self) -> Vec<String> {
        match self {
            PackedWorkflow::Yaml(workflow) => workflow.listing(),
            PackedWorkflow::Zip(workflow) => workflow.listing(),
        }
    }
}

/// The directory a workflow's relative paths (a state's `mcp_config`, `settings`)
/// are relative to: the workflow directory itself, or the directory holding a YAML
/// or zip workflow's file (files inside a zip cannot be handed to another program).
pub(crate) fn workflow_dir(scope: &Path) -> &Path {
    if is_yaml_scope(scope) || is_zip_scope(scope) { scope.parent().unwrap_or(scope) } else { scope }
}

/// Read and parse prompt state `state` of the workflow `scope`.
pub(crate) fn read_prompt(scope: &Path, state: &str) -> Result<PromptFile, PromptFileError> {
    let path = scope.join(state);
    if !is_yaml_scope(scope) {
        return load_prompt(&path);
    }
    let workflow =
        YamlWorkflow::load(scope).map_err(|error| PromptFileError::Workflow { message: error.to_string() })?;
    match workflow.file(state) {
        Some(VirtualFile::Prompt(text)) => {
            parse_prompt(text).map_err(|source| PromptFileError::Frontmatter { path, source })
        }
        _ => Err(PromptFileError::Workflow {
            message: format!("YAML workflow `{}` has no prompt state `{state}`", scope.display()),
        }),
    }
}

/// The `timeout` a YAML workflow gives state `state`, in seconds (R13.6); none for
/// a workflow directory, whose states take the run's.
pub(crate) fn declared_timeout(scope: &Path, state: &str) -> Option<f64> {
    if !is_yaml_scope(scope) {
        return None;
    }
    YamlWorkflow::load(scope).ok()?.timeout(state)
}

/// Where a script state's source is.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ScriptSource {
    /// A file of a workflow directory.
    File(PathBuf),
    /// A YAML workflow's `sh:` text or a zip workflow's file, to be written to a
    /// file before it runs.
    Inline(String),
}

/// Find script state `state` of the workflow `scope`; the error is a sentence.
pub(crate) fn script_source(scope: &Path, state: &str) -> Result<ScriptSource, String> {
    let missing = || format!("script `{state}` not found in workflow `{}`", scope.display());
    let Some(packed) = PackedWorkflow::open(scope) else {
        let path = scope.join(state);
        return if path.is_file() { Ok(ScriptSource::File(path)) } else { Err(missing()) };
    };
    match packed? {
        PackedWorkflow::Yaml(workflow) => match workflow.file(state) {
            Some(VirtualFile::Script(source)) => Ok(ScriptSource::Inline(source.to_string())),
            _ => Err(missing()),
        },
        PackedWorkflow::Zip(workflow) => Ok(ScriptSource::Inline(workflow.text(state).ok_or_else(missing)??)),
    }
}
