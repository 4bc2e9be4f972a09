//! A prompt state read and parsed, wherever it lives: a file of a workflow
//! directory, a virtual file of a YAML workflow (R1.5, R13.7) or an entry of a zip
//! archive (R1.15). The text comes from [`Scope::text`]; `syntax::frontmatter`
//! parses it, and never reads a file itself.

use std::path::PathBuf;

use crate::syntax::frontmatter::{FrontmatterError, PromptFile, parse_prompt};
use crate::workflow::scope::{Scope, TextError};

/// Why a prompt file could not be loaded. A file that cannot be read may be
/// mid-edit and is retried; the others would fail the same way again
/// (`docs/decisions.md`).
#[derive(Debug, thiserror::Error)]
pub(crate) enum PromptFileError {
    #[error("cannot read prompt file `{}`: {source}", .path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("prompt file `{}` is not valid UTF-8 text (first invalid byte at offset {offset})", .path.display())]
    NotUtf8 { path: PathBuf, offset: usize },
    /// Positions are the file's: the frontmatter's first line is the file's second.
    #[error("prompt file `{}`{}: {}", .path.display(), .source.file_position(), .source.message_without_position())]
    Frontmatter { path: PathBuf, source: FrontmatterError },
    /// The workflow holding the state is broken (an invalid YAML workflow, an
    /// archive entry too large), or has no such prompt.
    #[error("{message}")]
    Workflow { message: String },
}

impl PromptFileError {
    /// Whether loading again, unchanged, could succeed.
    pub(crate) fn is_transient(&self) -> bool {
        matches!(self, PromptFileError::Read { .. })
    }
}

/// Read and parse prompt state `state` of `scope`.
pub(crate) fn read_prompt(scope: &Scope, state: &str) -> Result<PromptFile, PromptFileError> {
    let path = scope.file_path(state);
    let text = scope.text(state).map_err(|error| match error {
        TextError::Unreadable(source) => PromptFileError::Read { path: path.clone(), source },
        TextError::NotUtf8 { offset } => PromptFileError::NotUtf8 { path: path.clone(), offset },
        TextError::Missing(_) => PromptFileError::Workflow {
            message: format!("{} `{}` has no prompt state `{state}`", scope.kind().label(), scope.path().display()),
        },
        TextError::Archive(error) => PromptFileError::Workflow { message: error.to_string() },
    })?;
    parse_prompt(&text).map_err(|source| PromptFileError::Frontmatter { path, source })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn directory_prompt(dir: &std::path::Path, state: &str) -> Result<PromptFile, PromptFileError> {
        read_prompt(&Scope::open(dir).expect("a directory opens"), state)
    }

    #[test]
    fn a_directory_prompt_is_read_and_split() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        std::fs::write(dir.path().join("START.md"), "---\r\nmodel: Haiku\r\n---\r\nDo it.\r\n")?;
        let prompt = directory_prompt(dir.path(), "START.md")?;
        assert_eq!(prompt.body, "Do it.\n");
        assert_eq!(prompt.frontmatter.model.as_deref(), Some("haiku"));
        Ok(())
    }

    #[test]
    fn prompt_file_error_messages() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let message =
            |state: &str| directory_prompt(dir.path(), state).err().map(|e| e.to_string()).unwrap_or_default();

        let missing = dir.path().join("MISSING.md");
        assert_eq!(
            message("MISSING.md"),
            format!("cannot read prompt file `{}`: No such file or directory (os error 2)", missing.display())
        );

        let binary = dir.path().join("BINARY.md");
        std::fs::write(&binary, b"ok\xff\xfe")?;
        assert_eq!(
            message("BINARY.md"),
            format!("prompt file `{}` is not valid UTF-8 text (first invalid byte at offset 2)", binary.display())
        );

        let invalid = dir.path().join("BAD.md");
        std::fs::write(&invalid, "---\n- a\n---\nbody")?;
        let error = directory_prompt(dir.path(), "BAD.md");
        assert!(matches!(error, Err(PromptFileError::Frontmatter { .. })), "{error:?}");
        assert_eq!(
            message("BAD.md"),
            format!(
                "prompt file `{}`: Invalid YAML frontmatter: expected `key: value` fields at the top level, found a list",
                invalid.display()
            )
        );
        Ok(())
    }

    #[test]
    fn a_zip_prompt_is_read_from_the_archive() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("wf.zip");
        std::fs::write(&path, crate::workflow::zip_scope::tests::archive(&[("START.md", "Say <result>hi</result>")]))?;
        let scope = Scope::open(&path)?;
        assert_eq!(read_prompt(&scope, "START.md")?.body, "Say <result>hi</result>");
        assert_eq!(
            read_prompt(&scope, "OTHER.md").err().map(|e| e.to_string()).unwrap_or_default(),
            format!("zip workflow `{}` has no prompt state `OTHER.md`", path.display())
        );
        Ok(())
    }
}
