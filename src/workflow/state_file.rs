//! A state's contents, wherever the state lives: a file in a workflow directory,
//! or a virtual file of a YAML workflow (R1.5, R13.7). The executors read states
//! only through here, so they need not know which kind of workflow they run.

use std::path::{Path, PathBuf};

use crate::syntax::frontmatter::{PromptFile, PromptFileError, load_prompt, parse_prompt};
use crate::workflow::yaml_scope::{VirtualFile, YamlWorkflow, is_yaml_scope};

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
    /// A YAML workflow's `sh:` text, to be written to a file before it runs.
    Inline(String),
}

/// Find script state `state` of the workflow `scope`; the error is a sentence.
pub(crate) fn script_source(scope: &Path, state: &str) -> Result<ScriptSource, String> {
    if !is_yaml_scope(scope) {
        let path = scope.join(state);
        if !path.is_file() {
            return Err(format!("script `{state}` not found in workflow `{}`", scope.display()));
        }
        return Ok(ScriptSource::File(path));
    }
    let workflow = YamlWorkflow::load(scope).map_err(|error| error.to_string())?;
    match workflow.file(state) {
        Some(VirtualFile::Script(source)) => Ok(ScriptSource::Inline(source.to_string())),
        _ => Err(format!("YAML workflow `{}` has no script state `{state}`", scope.display())),
    }
}
