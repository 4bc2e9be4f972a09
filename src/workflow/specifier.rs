//! Cross-workflow specifiers: what `<call-workflow>`, `<function-workflow>`,
//! `<fork-workflow>` and `<reset-workflow>` name (R13.9–R13.12).
//!
//! A specifier is a path, relative to the *caller's workflow* (never its cwd, so a
//! workflow can be moved or shared as a whole), to another workflow directory, to a
//! state file, or to a state inside another workflow (`../review/CHECK`). It
//! resolves to a scope, the state to start at, and the abbreviation that names
//! forked workers (`main_review1`).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::ids::StateName;
use crate::text::state_name::{self, abbreviation};
use crate::workflow::remote::{self, REGISTRY_DIR, RemoteError, is_fetched_copy};
use crate::workflow::resolution::{ResolveError, entry_point, resolve_state};
use crate::workflow::scope::ScopeKind;
use crate::workflow::target::{clean_lexically, is_url};

/// Where a cross-workflow tag leads.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct WorkflowEntry {
    /// The workflow's directory, absolute and lexically cleaned.
    pub(crate) scope_dir: PathBuf,
    /// The state to start at, resolved to its file name.
    pub(crate) state: StateName,
    /// Lowercase, at most 6 bytes: the middle of a forked worker's id (R13.12).
    pub(crate) abbrev: String,
    /// The URL the workflow was fetched from, when it was (R13.15).
    pub(crate) url: Option<String>,
}

/// Who resolves a specifier: its workflow, the URL that came from (if fetched), and
/// the `.baton` directory, whose registry keeps fetched workflows.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Caller<'a> {
    pub(crate) scope: &'a Path,
    pub(crate) url: Option<&'a str>,
    pub(crate) baton_dir: &'a Path,
}

impl<'a> Caller<'a> {
    /// A caller whose workflow is on disk, not fetched.
    pub(crate) fn local(scope: &'a Path) -> Caller<'a> {
        Caller { scope, url: None, baton_dir: Path::new("") }
    }
}

/// Why a specifier names no workflow.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SpecifierError {
    #[error("empty workflow specifier; name a workflow directory, e.g. `../review/`")]
    Empty,
    #[error("`{spec}`: remote workflows (URLs) are not supported by this version of baton yet")]
    Remote { spec: String },
    #[error(
        "`{spec}`: this workflow was fetched from a URL, and where that URL is was not recorded (a run from an \
         older Baton); name the other workflow by its full path"
    )]
    FromRemote { spec: String },
    #[error("`{spec}`: a workflow fetched from a URL names others relative to it, not by absolute URL (R13.15)")]
    AbsoluteUrl { spec: String },
    #[error("`{spec}`: {reason}")]
    RemoteFailed { spec: String, reason: String },
    #[error("`{spec}`: a state inside a YAML or zip workflow is written without a trailing `/`")]
    TrailingSlash { spec: String },
    #[error("`{spec}`: {} does not exist", .path.display())]
    NotFound { spec: String, path: PathBuf },
    #[error("`{spec}`: cannot read {}: {reason}", .path.display())]
    Unreadable { spec: String, path: PathBuf, reason: String },
    #[error("`{spec}`: {source}")]
    Resolve { spec: String, source: ResolveError },
}

/// Resolve `spec` (a tag's content) for `caller`.
pub(crate) fn resolve_specifier(spec: &str, caller: Caller<'_>) -> Result<WorkflowEntry, SpecifierError> {
    let spec = spec.trim();
    if spec.is_empty() {
        return Err(SpecifierError::Empty);
    }
    if let Some(base) = caller.url {
        return resolve_in_url_space(spec, base, &caller.baton_dir.join(REGISTRY_DIR));
    }
    let caller_scope = caller.scope;
    if is_url(spec) {
        return Err(SpecifierError::Remote { spec: spec.to_string() });
    }
    if is_fetched_copy(caller_scope) && !Path::new(spec).is_absolute() {
        return Err(SpecifierError::FromRemote { spec: spec.to_string() });
    }
    let path = clean_lexically(&scope_base(caller_scope).join(spec));
    let resolve_error = |source| SpecifierError::Resolve { spec: spec.to_string(), source };
    let extension = state_name::extension(path.to_str().unwrap_or_default()).to_ascii_lowercase();
    if is_packed(&path) {
        // A YAML or zip workflow: its entry point; abbreviated by the file's stem (R13.11).
        let state = entry_point(&path).map_err(resolve_error)?;
        let abbrev = abbreviation(state_name::stem(&file_name(&path)));
        return Ok(WorkflowEntry { scope_dir: path, state: state.into(), abbrev, url: None });
    }
    if extension == ".md" {
        // A state file named directly: its directory is the scope (R13.11).
        if !path.is_file() {
            return Err(SpecifierError::NotFound { spec: spec.to_string(), path });
        }
        let (scope_dir, state) = split_file(&path);
        let abbrev = abbreviation(state_name::stem(&state));
        return Ok(WorkflowEntry { scope_dir, state: state.into(), abbrev, url: None });
    }
    match fs::metadata(&path) {
        Ok(metadata) if metadata.is_dir() => {
            let state = entry_point(&path).map_err(resolve_error)?;
            let abbrev = abbreviation(&file_name(&path));
            Ok(WorkflowEntry { scope_dir: path, state: state.into(), abbrev, url: None })
        }
        // A state inside another workflow: the last component names it.
        Ok(_) => state_in_parent(spec, &path),
        Err(error) if matches!(error.kind(), io::ErrorKind::NotFound | io::ErrorKind::NotADirectory) => {
            state_in_parent(spec, &path)
        }
        Err(error) => Err(SpecifierError::Unreadable { spec: spec.to_string(), path, reason: error.to_string() }),
    }
}

/// R13.15: a caller fetched from a URL resolves relative to it. The specifier is
/// split at its first `.zip/` into an archive and an inner state; the archive is
/// named relative to the caller's URL, must be pinned like any remote workflow, and
/// is fetched (or found in the registry).
fn resolve_in_url_space(spec: &str, base: &str, registry: &Path) -> Result<WorkflowEntry, SpecifierError> {
    let remote_error =
        |error: RemoteError| SpecifierError::RemoteFailed { spec: spec.to_string(), reason: error.to_string() };
    if is_url(spec) {
        return Err(SpecifierError::AbsoluteUrl { spec: spec.to_string() });
    }
    let lower = spec.to_ascii_lowercase();
    let (archive, inner) = match lower.find(".zip/") {
        Some(at) => (&spec[..at + 4], Some(&spec[at + 5..])),
        None => (spec, None),
    };
    let url = join_url(base, archive);
    let copy = remote::fetch(&url, registry).map_err(remote_error)?;
    let resolve_error = |source| SpecifierError::Resolve { spec: spec.to_string(), source };
    let state = match inner.map(str::trim).filter(|inner| !inner.is_empty()) {
        None => entry_point(&copy).map_err(resolve_error)?,
        Some(inner) if inner.ends_with('/') => return Err(SpecifierError::TrailingSlash { spec: spec.to_string() }),
        Some(inner) => resolve_state(&copy, inner).map_err(resolve_error)?,
    };
    let name = url.rsplit('/').next().unwrap_or_default();
    let abbrev = abbreviation(state_name::stem(name));
    Ok(WorkflowEntry { scope_dir: copy, state: state.into(), abbrev, url: Some(url) })
}

/// `relative` joined to the URL `base` as a path below it (R13.15: `base + "/"`), with
/// `.` and `..` folded (never above the host).
fn join_url(base: &str, relative: &str) -> String {
    let (origin, path) = match base.find("://").map(|at| at + 3) {
        Some(start) => match base[start..].find('/') {
            Some(slash) => base.split_at(start + slash),
            None => (base, ""),
        },
        None => ("", base),
    };
    let mut parts: Vec<&str> = path.split('/').filter(|part| !part.is_empty()).collect();
    for part in relative.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    format!("{origin}/{}", parts.join("/"))
}

/// `DIR/STATE` or `FILE.yaml/STATE`: resolve `STATE` in that workflow.
fn state_in_parent(spec: &str, path: &Path) -> Result<WorkflowEntry, SpecifierError> {
    let (scope_dir, name) = split_file(path);
    let packed = is_packed(&scope_dir);
    if packed && spec.ends_with('/') {
        return Err(SpecifierError::TrailingSlash { spec: spec.to_string() });
    }
    if packed && !scope_dir.is_file() || !packed && !scope_dir.is_dir() {
        return Err(SpecifierError::NotFound { spec: spec.to_string(), path: scope_dir });
    }
    let state = resolve_state(&scope_dir, &name)
        .map_err(|source| SpecifierError::Resolve { spec: spec.to_string(), source })?;
    let parent = file_name(&scope_dir);
    let abbrev = abbreviation(if packed { state_name::stem(&parent) } else { &parent });
    Ok(WorkflowEntry { scope_dir, state: state.into(), abbrev, url: None })
}

/// What a relative specifier is joined to: the caller's directory, or for a YAML or
/// zip scope the file's path without its extension (`/wf/a.zip` → `/wf/a`, R13.10).
fn scope_base(caller_scope: &Path) -> PathBuf {
    let text = caller_scope.to_str().unwrap_or_default();
    let extension = state_name::extension(text);
    if is_packed(caller_scope) {
        PathBuf::from(&text[..text.len() - extension.len()])
    } else {
        caller_scope.to_path_buf()
    }
}

/// A YAML or zip workflow: one file.
fn is_packed(path: &Path) -> bool {
    ScopeKind::of(path).is_packed()
}

fn split_file(path: &Path) -> (PathBuf, String) {
    let parent = path.parent().map_or_else(|| PathBuf::from("/"), Path::to_path_buf);
    (parent, file_name(path))
}

fn file_name(path: &Path) -> String {
    path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use tempfile::TempDir;

    use super::*;

    /// `root/caller/START.sh`, `root/review/START.md`, `root/review/CHECK.sh`,
    /// `root/bs_worker/1_START.md`.
    fn workflows() -> TempDir {
        let root = tempfile::tempdir().expect("temp dir");
        for file in ["caller/START.sh", "review/START.md", "review/CHECK.sh", "bs_worker/1_START.md"] {
            let path = root.path().join(file);
            fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            fs::write(path, "x").expect("write");
        }
        root
    }

    fn resolve(root: &TempDir, spec: &str) -> Result<WorkflowEntry, SpecifierError> {
        resolve_specifier(spec, Caller::local(&root.path().join("caller")))
    }

    #[test]
    fn r13_10_a_relative_directory_is_joined_to_the_callers_scope_and_uses_its_entry_point() {
        let root = workflows();
        let entry = resolve(&root, "../review/").expect("resolves");
        assert_eq!(entry.scope_dir, root.path().join("review"));
        assert_eq!(entry.state, "START.md");
        assert_eq!(entry.abbrev, "review");
        let entry = resolve(&root, " ../bs_worker ").expect("resolves, trimmed");
        assert_eq!((&*entry.state, entry.abbrev.as_str()), ("1_START.md", "bs_wor"));
    }

    #[test]
    fn r13_11_a_state_inside_another_workflow_is_resolved_there() {
        let root = workflows();
        let entry = resolve(&root, "../review/CHECK").expect("resolves");
        assert_eq!((&*entry.state, entry.abbrev.as_str()), ("CHECK.sh", "review"));
        assert_eq!(entry.scope_dir, root.path().join("review"));
    }

    #[test]
    fn r13_11_an_md_file_names_its_directory_and_its_stem_is_the_abbreviation() {
        let root = workflows();
        let entry = resolve(&root, "../review/START.md").expect("resolves");
        assert_eq!((&*entry.state, entry.abbrev.as_str()), ("START.md", "start"));
    }

    #[test]
    fn r13_10_an_absolute_specifier_ignores_the_caller() {
        let root = workflows();
        let spec = root.path().join("review").display().to_string();
        let entry = resolve_specifier(&spec, Caller::local(Path::new("/elsewhere"))).expect("resolves");
        assert_eq!(entry.scope_dir, root.path().join("review"));
    }

    #[test]
    fn r13_10_a_yaml_or_zip_callers_base_drops_the_extension() {
        assert_eq!(scope_base(Path::new("/wf/a.zip")), PathBuf::from("/wf/a"));
        assert_eq!(scope_base(Path::new("/wf/a.YAML")), PathBuf::from("/wf/a"));
        assert_eq!(scope_base(Path::new("/wf/dir")), PathBuf::from("/wf/dir"));
    }

    #[test]
    fn r13_11_a_yaml_workflow_and_a_state_inside_it() {
        let root = workflows();
        fs::write(root.path().join("Flows.yaml"), "states:\n  START:\n    prompt: x\n  CHECK:\n    sh: y\n")
            .expect("write");
        let entry = resolve(&root, "../Flows.yaml").expect("the entry point");
        assert_eq!((&*entry.state, entry.abbrev.as_str()), ("START.md", "flows"));
        assert_eq!(entry.scope_dir, root.path().join("Flows.yaml"));
        let entry = resolve(&root, "../Flows.yaml/CHECK").expect("an inner state");
        assert_eq!((&*entry.state, entry.abbrev.as_str()), ("CHECK.sh", "flows"));
        assert_eq!(
            resolve(&root, "../Flows.yaml/CHECK/").unwrap_err().to_string(),
            "`../Flows.yaml/CHECK/`: a state inside a YAML or zip workflow is written without a trailing `/`"
        );
    }

    #[test]
    fn r13_15_urls_are_joined_below_the_callers_url() {
        let base = "https://h.test/flows/a-1.zip";
        assert_eq!(join_url(base, "../b-2.zip"), "https://h.test/flows/b-2.zip");
        assert_eq!(join_url(base, "../../x/c.zip"), "https://h.test/x/c.zip");
        assert_eq!(join_url(base, "../../../../c.zip"), "https://h.test/c.zip");
        assert_eq!(join_url("http://h.test", "a.zip"), "http://h.test/a.zip");
    }

    #[test]
    fn bad_specifiers_say_what_is_wrong() {
        let root = workflows();
        let message = |spec: &str| resolve(&root, spec).unwrap_err().to_string();
        assert_eq!(message("  "), "empty workflow specifier; name a workflow directory, e.g. `../review/`");
        assert_eq!(
            message("../nowhere/START.md"),
            format!("`../nowhere/START.md`: {} does not exist", root.path().join("nowhere/START.md").display())
        );
        assert_eq!(
            message("../nowhere/X"),
            format!("`../nowhere/X`: {} does not exist", root.path().join("nowhere").display())
        );
        assert!(message("../review/NOPE").starts_with("`../review/NOPE`: state `NOPE` not found in workflow"));
        assert!(message("../other.zip").starts_with("`../other.zip`: cannot read zip workflow"));
        assert_eq!(
            message("https://example.com/w.zip"),
            "`https://example.com/w.zip`: remote workflows (URLs) are not supported by this version of baton yet"
        );
    }
}
