//! `--files`: how a distributed run's workers get a step's files — `shared`
//! (the same paths: one machine, or NFS) or `shipped` (they travel with the
//! step; `docs/distributed-files.md`) — and `--repo`, shipped mode's git remote.

use crate::text::suggestion::did_you_mean;

const MODES: [&str; 2] = ["shared", "shipped"];

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum FilesMode {
    Shared,
    /// `repo`: `--repo`, else the working directory's `origin`.
    Shipped {
        repo: Option<String>,
    },
}

#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum FilesModeError {
    #[error("unknown files mode `{found}`: the modes are `shared` and `shipped`{}", .suggestion.map_or_else(String::new, |name| format!(" (did you mean `{name}`?)")))]
    Unknown { found: String, suggestion: Option<&'static str> },
    #[error("`--repo` names the git remote of `--files shipped`; add `--files shipped`")]
    RepoWithoutShipped,
}

impl FilesMode {
    /// `--files` (absent: shared) with `--repo`.
    pub(crate) fn parse(files: Option<&str>, repo: Option<&str>) -> Result<FilesMode, FilesModeError> {
        let repo = repo.map(str::trim).filter(|repo| !repo.is_empty()).map(str::to_string);
        match files.map(|text| text.trim().to_ascii_lowercase()).as_deref() {
            None | Some("shared") if repo.is_some() => Err(FilesModeError::RepoWithoutShipped),
            None | Some("shared") => Ok(FilesMode::Shared),
            Some("shipped") => Ok(FilesMode::Shipped { repo }),
            Some(other) => {
                Err(FilesModeError::Unknown { found: other.to_string(), suggestion: did_you_mean(other, MODES) })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_modes_and_their_mistakes() {
        assert_eq!(FilesMode::parse(None, None), Ok(FilesMode::Shared));
        assert_eq!(FilesMode::parse(Some("Shipped"), None), Ok(FilesMode::Shipped { repo: None }));
        assert_eq!(
            FilesMode::parse(Some("shipped"), Some("git@host:x.git")),
            Ok(FilesMode::Shipped { repo: Some("git@host:x.git".into()) })
        );
        assert_eq!(
            FilesMode::parse(Some("shiped"), None).unwrap_err().to_string(),
            "unknown files mode `shiped`: the modes are `shared` and `shipped` (did you mean `shipped`?)"
        );
        assert_eq!(
            FilesMode::parse(None, Some("x")).unwrap_err().to_string(),
            "`--repo` names the git remote of `--files shipped`; add `--files shipped`"
        );
    }
}
