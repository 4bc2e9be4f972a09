//! `cd` attribute resolution (R3.38): absolute paths are cleaned, relative ones are
//! joined to the agent's current directory. Purely lexical: the file system is not
//! consulted, so a transition never fails because a directory does not exist yet.

use std::path::{Component, Path, PathBuf};

/// Resolve `cd` against `base` (an absolute directory) and clean the result.
pub(crate) fn resolve_cd(cd: &str, base: &Path) -> PathBuf {
    let joined = if Path::new(cd).is_absolute() { PathBuf::from(cd) } else { base.join(cd) };
    clean(&joined)
}

/// Lexically normalise a path: drop `.`, fold `..` into its parent, collapse
/// doubled separators. `..` at the root stays at the root.
pub(crate) fn clean(path: &Path) -> PathBuf {
    let mut cleaned = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !cleaned.pop() && !path.is_absolute() {
                    cleaned.push("..");
                }
            }
            other => cleaned.push(other.as_os_str()),
        }
    }
    if cleaned.as_os_str().is_empty() {
        cleaned.push(".");
    }
    cleaned
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r3_38_relative_cd_joins_the_agent_cwd() {
        assert_eq!(resolve_cd("sub", Path::new("/work/a")), PathBuf::from("/work/a/sub"));
        assert_eq!(resolve_cd("../b/./c", Path::new("/work/a")), PathBuf::from("/work/b/c"));
    }

    #[test]
    fn r3_38_absolute_cd_is_cleaned() {
        assert_eq!(resolve_cd("/x//y/../z", Path::new("/work")), PathBuf::from("/x/z"));
        assert_eq!(resolve_cd("/../..", Path::new("/work")), PathBuf::from("/"));
    }

    #[test]
    fn r3_7_empty_cd_keeps_the_directory() {
        assert_eq!(resolve_cd("", Path::new("/work/a")), PathBuf::from("/work/a"));
    }
}
