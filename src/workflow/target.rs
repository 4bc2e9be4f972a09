//! Interpreting the command-line argument that names a workflow (R1.18).
//!
//! A user starts a run with a directory (`baton wf/`, entry point from R1.17) or
//! with any existing file inside one (`baton wf/REVIEW.md`, which starts there with
//! no resolution or extension check, so even `NOTES.txt` runs as a prompt). Both
//! forms end as a scope directory plus an initial state, which is all the run
//! needs.
//!
//! The scope is stored absolute and lexically cleaned (R1.2): the run must not
//! depend on the cwd it was started from, and a lexical clean (no symlink
//! resolution) keeps the path the user wrote recognisable in messages.
//!
//! YAML and zip scopes and URLs are part of the format but not of this version;
//! they are recognised by their shape and refused with a clear message instead of
//! failing later as "not found".

use std::fs;
use std::io;
use std::path::{Component, Path, PathBuf};

use crate::text::suggestion::did_you_mean;
use crate::workflow::resolution::{self, ResolveError};
use crate::workflow::scope::ScopeKind;

/// Where a run starts: the workflow directory and the state to run first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WorkflowTarget {
    /// Absolute and lexically cleaned.
    pub(crate) scope_dir: PathBuf,
    pub(crate) initial_state: String,
}

/// Why the workflow argument cannot start a run.
#[derive(Debug, thiserror::Error)]
pub(crate) enum WorkflowTargetError {
    #[error("workflow argument is empty; name a workflow directory or a state file")]
    Empty,

    #[error("{argument}: `{state}` is not a state name (a state inside a YAML or zip workflow is `FILE.yaml/STATE`)")]
    NestedState { argument: String, state: String },

    #[error("{argument}: remote workflows (URLs) are not supported by this version of baton yet")]
    Remote { argument: String },

    #[error(
        "workflow `{argument}` not found: no such file or directory{}",
        .suggestion.as_ref().map_or_else(String::new, |s| format!("; did you mean `{s}`?"))
    )]
    NotFound { argument: String, suggestion: Option<String> },

    #[error("workflow `{argument}` cannot be read: {cause}")]
    Unreadable { argument: String, cause: io::Error },

    #[error(transparent)]
    Resolve(#[from] ResolveError),
}

/// Interpret `argument` (as typed by the user) relative to `cwd`, which should be
/// absolute (the process's current directory).
pub(crate) fn interpret(argument: &str, cwd: &Path) -> Result<WorkflowTarget, WorkflowTargetError> {
    refuse_unsupported_forms(argument)?;
    let path = clean_lexically(&cwd.join(argument));
    if let Some(target) = packed_target(argument, &path)? {
        return Ok(target);
    }
    let metadata = fs::metadata(&path).map_err(|error| missing_or_unreadable(argument, &path, error))?;
    if metadata.is_dir() {
        let initial_state = resolution::entry_point(&path)?;
        return Ok(WorkflowTarget { scope_dir: path, initial_state });
    }
    let target = file_target(&path);
    resolution::check_state_file(&target.scope_dir, &target.initial_state)?;
    Ok(target)
}

/// `X.yaml` or `X.zip` (its entry point), or `X.yaml/STATE` / `X.zip/STATE` (R1.18;
/// resolved by R1.16 / R1.15); `None` when the argument names no such workflow.
fn packed_target(argument: &str, path: &Path) -> Result<Option<WorkflowTarget>, WorkflowTargetError> {
    let components: Vec<&std::ffi::OsStr> = path.iter().collect();
    let packed = |part: &&std::ffi::OsStr| ScopeKind::of(Path::new(part)).is_packed();
    let Some(index) = components.iter().position(packed) else {
        return Ok(None);
    };
    let scope_dir: PathBuf = components[..=index].iter().collect();
    if let Err(error) = fs::metadata(&scope_dir) {
        return Err(missing_or_unreadable(argument, &scope_dir, error));
    }
    let initial_state = match &components[index + 1..] {
        [] => resolution::entry_point(&scope_dir)?,
        [state] => resolution::resolve_state(&scope_dir, &state.to_string_lossy())?,
        deeper => {
            let state = deeper.iter().map(|part| part.to_string_lossy()).collect::<Vec<_>>().join("/");
            return Err(WorkflowTargetError::NestedState { argument: argument.to_string(), state });
        }
    };
    Ok(Some(WorkflowTarget { scope_dir, initial_state }))
}

/// Arguments whose form this version cannot run, decided without touching the disk.
fn refuse_unsupported_forms(argument: &str) -> Result<(), WorkflowTargetError> {
    if argument.is_empty() {
        return Err(WorkflowTargetError::Empty);
    }
    if is_url(argument) {
        return Err(WorkflowTargetError::Remote { argument: argument.to_string() });
    }
    Ok(())
}

/// `scheme://…`, where the scheme follows RFC 3986 (a letter, then letters,
/// digits, `+`, `-`, `.`). One-letter schemes are not taken as URLs, so a Windows
/// drive (`C://x`) stays a path.
pub(crate) fn is_url(argument: &str) -> bool {
    let Some((scheme, _)) = argument.split_once("://") else {
        return false;
    };
    let mut chars = scheme.chars();
    let starts_with_letter = chars.next().is_some_and(|c| c.is_ascii_alphabetic());
    starts_with_letter && scheme.len() > 1 && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// The existing-file form: scope = the parent, initial state = the basename,
/// with no resolution (R1.18); its kind is checked by the caller.
fn file_target(path: &Path) -> WorkflowTarget {
    let scope_dir = path.parent().map_or_else(|| path.to_path_buf(), Path::to_path_buf);
    let initial_state = path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
    WorkflowTarget { scope_dir, initial_state }
}

fn missing_or_unreadable(argument: &str, path: &Path, error: io::Error) -> WorkflowTargetError {
    if is_missing(&error) {
        WorkflowTargetError::NotFound { argument: argument.to_string(), suggestion: suggest_sibling(argument, path) }
    } else {
        WorkflowTargetError::Unreadable { argument: argument.to_string(), cause: error }
    }
}

/// ENOENT, or ENOTDIR (a file used as a directory, like `REVIEW.md/x`).
fn is_missing(error: &io::Error) -> bool {
    matches!(error.kind(), io::ErrorKind::NotFound | io::ErrorKind::NotADirectory)
}

/// A close entry of the missing path's parent directory, written the way the user
/// wrote the argument (only its last component replaced).
fn suggest_sibling(argument: &str, path: &Path) -> Option<String> {
    let wanted = path.file_name()?.to_str()?;
    let siblings: Vec<String> =
        fs::read_dir(path.parent()?).ok()?.filter_map(|entry| entry.ok()?.file_name().into_string().ok()).collect();
    let sibling = did_you_mean(wanted, siblings.iter().map(String::as_str))?;
    let trimmed = argument.trim_end_matches(['/', '\\']);
    let prefix = trimmed.strip_suffix(wanted)?;
    let ends_at_component = prefix.is_empty() || prefix.ends_with(['/', '\\']);
    Some(if ends_at_component { format!("{prefix}{sibling}") } else { sibling.to_string() })
}

/// Collapse `.` and `..` without consulting the file system. `..` at the root
/// stays at the root; leading `..` of a relative path is kept.
pub(crate) fn clean_lexically(path: &Path) -> PathBuf {
    let mut cleaned = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => match cleaned.components().next_back() {
                Some(Component::Normal(_)) => {
                    cleaned.pop();
                }
                Some(Component::RootDir | Component::Prefix(_)) => {}
                Some(Component::ParentDir | Component::CurDir) | None => cleaned.push(".."),
            },
            other => cleaned.push(other),
        }
    }
    cleaned
}

#[cfg(test)]
mod tests {
    use super::*;
    use tempfile::TempDir;

    fn workflow(files: &[&str]) -> TempDir {
        let dir = tempfile::tempdir().expect("create temp dir");
        for file in files {
            fs::write(dir.path().join(file), "x").expect("write state file");
        }
        dir
    }

    fn message(result: Result<WorkflowTarget, WorkflowTargetError>) -> String {
        match result {
            Ok(target) => panic!("expected an error, got {target:?}"),
            Err(error) => error.to_string(),
        }
    }

    #[test]
    fn r1_18_directory_uses_the_entry_point() {
        let root = workflow(&[]);
        let wf = root.path().join("wf");
        fs::create_dir(&wf).expect("mkdir");
        fs::write(wf.join("START.md"), "x").expect("write");
        let target = interpret("wf/", root.path()).expect("interpret");
        assert_eq!(target, WorkflowTarget { scope_dir: wf, initial_state: "START.md".to_string() });
    }

    #[test]
    fn r1_18_existing_file_starts_there_without_resolution() {
        let root = workflow(&["REVIEW.md", "START.md"]);
        let target = interpret("REVIEW.md", root.path()).expect("interpret");
        assert_eq!(target.scope_dir, root.path());
        assert_eq!(target.initial_state, "REVIEW.md");
    }

    #[test]
    fn a_file_of_no_state_kind_is_refused_up_front() {
        let root = workflow(&["NOTES.txt", "run.py"]);
        for (file, extension) in [("NOTES.txt", ".txt"), ("run.py", ".py")] {
            assert_eq!(
                interpret(file, root.path()).unwrap_err().to_string(),
                format!(
                    "`{file}` in workflow `{}` is not a state file: a state is a prompt (`.md`) or a script (`.sh`), \
                     not `{extension}`",
                    root.path().display()
                )
            );
        }
    }

    #[test]
    fn a_file_of_the_other_platform_is_refused_up_front() {
        let root = workflow(&["P.bat", "Q.sh"]);
        assert_eq!(
            interpret("P.bat", root.path()).unwrap_err().to_string(),
            "state `P.bat` cannot run on Unix: `.bat` and `.ps1` scripts run only on Windows"
        );
        assert_eq!(interpret("Q.sh", root.path()).expect("sh").initial_state, "Q.sh");
    }

    #[test]
    fn relative_argument_is_made_absolute_and_cleaned() {
        let root = workflow(&[]);
        let wf = root.path().join("wf");
        fs::create_dir_all(wf.join("sub")).expect("mkdir");
        fs::write(wf.join("REVIEW.md"), "x").expect("write");
        let target = interpret("./wf/sub/../REVIEW.md", root.path()).expect("interpret");
        assert_eq!(target.scope_dir, wf);
        assert_eq!(target.initial_state, "REVIEW.md");
    }

    #[test]
    fn absolute_argument_ignores_cwd() {
        let root = workflow(&["START.sh"]);
        let argument = root.path().display().to_string();
        let target = interpret(&argument, Path::new("/nonexistent/cwd")).expect("interpret");
        assert_eq!(target.scope_dir, root.path());
    }

    #[test]
    fn directory_without_entry_point_is_a_resolution_error() {
        let root = workflow(&["B.md"]);
        let error = interpret(".", root.path()).unwrap_err();
        assert!(matches!(error, WorkflowTargetError::Resolve(ResolveError::NoEntryPoint { .. })));
        assert!(
            error.to_string().starts_with(&format!(
                "workflow `{}` has no entry point: expected a `1_START` or `START` state (",
                root.path().display()
            )),
            "{error}"
        );
    }

    #[test]
    fn ambiguous_entry_point_message_is_passed_through() {
        let root = workflow(&["1_START.md", "START.md"]);
        assert_eq!(
            message(interpret(".", root.path())),
            format!(
                "workflow `{}` has an ambiguous entry point: both 1_START.md and START.md exist",
                root.path().display()
            )
        );
    }

    #[test]
    fn r1_18_a_zip_file_and_a_state_inside_it() {
        let root = workflow(&[]);
        let bytes = crate::workflow::zip_scope::tests::archive(&[("wf/START.md", "go"), ("wf/CHECK.sh", "echo")]);
        fs::write(root.path().join("flow.zip"), bytes).expect("write");
        let target = interpret("flow.zip", root.path()).expect("entry point");
        assert_eq!((target.scope_dir, target.initial_state.as_str()), (root.path().join("flow.zip"), "START.md"));
        assert_eq!(interpret("flow.zip/CHECK", root.path()).expect("state").initial_state, "CHECK.sh");
    }

    #[test]
    fn r1_18_a_yaml_file_and_a_state_inside_it() {
        let root = workflow(&[]);
        let yaml = "states:\n  START:\n    prompt: go\n  CHECK:\n    sh: echo\n";
        fs::write(root.path().join("flow.yml"), yaml).expect("write");
        let target = interpret("flow.yml", root.path()).expect("entry point");
        assert_eq!((target.scope_dir, target.initial_state.as_str()), (root.path().join("flow.yml"), "START.md"));
        // R1.16: the extension written does not matter inside a YAML workflow.
        for argument in ["flow.yml/CHECK", "./flow.yml/CHECK.md"] {
            assert_eq!(interpret(argument, root.path()).expect("state").initial_state, "CHECK.sh", "{argument}");
        }
        assert_eq!(
            message(interpret("flow.yml/a/b", root.path())),
            "flow.yml/a/b: `a/b` is not a state name (a state inside a YAML or zip workflow is `FILE.yaml/STATE`)"
        );
        assert!(message(interpret("nope.yaml", root.path())).starts_with("workflow `nope.yaml` not found"));
    }

    #[test]
    fn urls_are_refused() {
        let root = workflow(&[]);
        for argument in ["https://example.com/wf-abc.zip", "http://x/y", "ftp://x/y", "git+ssh://h/r"] {
            let error = interpret(argument, root.path()).unwrap_err();
            assert!(matches!(error, WorkflowTargetError::Remote { .. }), "{argument}");
            assert_eq!(
                error.to_string(),
                format!(
                    "{argument}: remote workflows (URLs) are not supported by this version of \
                     baton yet"
                )
            );
        }
    }

    #[test]
    fn drive_letter_is_not_a_url() {
        assert!(!is_url("C://x"));
        assert!(!is_url("1a://x"));
        assert!(!is_url("wf/a://b"));
        assert!(is_url("s3://bucket/wf.zip"));
    }

    #[test]
    fn missing_workflow_is_not_found() {
        let root = workflow(&[]);
        assert_eq!(message(interpret("deploy", root.path())), "workflow `deploy` not found: no such file or directory");
    }

    #[test]
    fn missing_workflow_suggests_a_close_sibling() {
        let root = workflow(&[]);
        fs::create_dir_all(root.path().join("flows/review")).expect("mkdir");
        assert_eq!(
            message(interpret("flows/reveiw/", root.path())),
            "workflow `flows/reveiw/` not found: no such file or directory; \
             did you mean `flows/review`?"
        );
    }

    #[test]
    fn missing_file_under_a_file_is_not_found() {
        let root = workflow(&["REVIEW.md"]);
        assert_eq!(
            message(interpret("REVIEW.md/x", root.path())),
            "workflow `REVIEW.md/x` not found: no such file or directory"
        );
    }

    #[test]
    fn empty_argument_is_refused() {
        let root = workflow(&["START.md"]);
        assert_eq!(
            message(interpret("", root.path())),
            "workflow argument is empty; name a workflow directory or a state file"
        );
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_are_not_resolved_in_the_scope() {
        let root = workflow(&[]);
        let real = root.path().join("real");
        fs::create_dir(&real).expect("mkdir");
        fs::write(real.join("START.md"), "x").expect("write");
        std::os::unix::fs::symlink(&real, root.path().join("link")).expect("symlink");
        let target = interpret("link", root.path()).expect("interpret");
        assert_eq!(target.scope_dir, root.path().join("link"));
    }

    #[test]
    fn clean_lexically_collapses_dots() {
        let cases =
            [("/a/./b/../c", "/a/c"), ("/../a", "/a"), ("/a/b/../../..", "/"), ("a/../../b", "../b"), ("./a/", "a")];
        for (input, expected) in cases {
            assert_eq!(clean_lexically(Path::new(input)), PathBuf::from(expected), "{input}");
        }
    }
}
