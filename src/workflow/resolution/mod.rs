//! Turning a state name into the concrete state file of a workflow (R1.6–R1.17).
//!
//! Every transition target, every cross-workflow entry and the run's first state go
//! through here, so this is where a workflow author learns that `REVIEW` is
//! ambiguous, missing or cannot run on this machine. The rules are raymond's, so a
//! workflow behaves the same under both programs:
//!
//! - an *explicit* name (one with an extension, R1.11) is only checked: platform,
//!   then existence, and it is returned unchanged;
//! - an *abstract* name is searched with the platform's preference order (R1.12 on
//!   Unix, R1.13 on Windows), and collisions are errors rather than silent picks;
//! - the entry point is `1_START` or `START`, never both (R1.17).
//!
//! The decisions are made by a pure core over the list of file names in the scope
//! ([`resolve_in_listing`], [`entry_point_in_listing`]). The directory functions
//! read the directory once and delegate to it; zip and YAML scopes will feed the
//! same core with their own listings (R1.15, R1.16). File names are matched
//! exactly (byte for byte), like a stat on a case-sensitive file system; only the
//! platform check of an explicit extension ignores case (R1.6).
//!
//! Names containing `/` or `\` and empty names are refused before any I/O (R1.9).

mod error;
mod platform;

use std::path::Path;
use std::sync::Arc;

use crate::ids::StateName;
use crate::text::state_name;
use crate::text::suggestion::did_you_mean;
use crate::workflow::scope::{Scope as Workflow, ScopeKind};

pub(crate) use error::ResolveError;
pub(crate) use platform::Platform;

/// Resolve `name` (abstract like `REVIEW` or explicit like `REVIEW.md`) in
/// `scope_dir`, for the platform this binary runs on.
pub(crate) fn resolve_state(scope_dir: &Path, name: &str) -> Result<String, ResolveError> {
    resolve_state_on(scope_dir, name, Platform::CURRENT)
}

/// Each of `names` (breakpoints, named as a tag names a state; spaces around a name
/// are ignored) resolved in the workflow at `scope_dir`, or the first name as given
/// that does not resolve, with why. The CLI, the run's control lines and the daemon
/// resolve breakpoints alike through it.
pub(crate) fn resolve_states(scope_dir: &Path, names: &[String]) -> Result<Vec<StateName>, (String, ResolveError)> {
    names
        .iter()
        .map(|name| resolve_state(scope_dir, name.trim()).map(StateName::from).map_err(|error| (name.clone(), error)))
        .collect()
}

/// [`resolve_state`] for an explicit platform.
pub(crate) fn resolve_state_on(scope_dir: &Path, name: &str, platform: Platform) -> Result<String, ResolveError> {
    let label = scope_label(scope_dir);
    if ScopeKind::of(scope_dir) != ScopeKind::Yaml {
        check_name(&label, name, platform)?;
    }
    resolve_in_workflow(&open(scope_dir)?, name, platform)
}

/// [`resolve_state`] in a workflow already opened.
pub(crate) fn resolve_in_workflow(workflow: &Workflow, name: &str, platform: Platform) -> Result<String, ResolveError> {
    let label = scope_label(workflow.path());
    let name = match workflow.kind() {
        // R1.16: an extension is dropped and the name searched like an abstract one.
        ScopeKind::Yaml => state_name::strip_state_extension(name),
        ScopeKind::Directory | ScopeKind::Zip => name,
    };
    resolve_in_listing(&list(workflow)?, &label, name, platform)
}

/// Resolve `name` among the file names of a scope. `listing` holds the state
/// files present (bare names); `scope_label` names the scope in messages.
pub(crate) fn resolve_in_listing(
    listing: &[String],
    scope_label: &str,
    name: &str,
    platform: Platform,
) -> Result<String, ResolveError> {
    check_name(scope_label, name, platform)?;
    let scope = Scope { listing, label: scope_label };
    if state_name::extension(name).is_empty() {
        resolve_abstract(&scope, name, platform)
    } else {
        resolve_explicit(&scope, name, platform)
    }
}

/// The entry point of the workflow directory `scope_dir` (R1.17).
pub(crate) fn entry_point(scope_dir: &Path) -> Result<String, ResolveError> {
    entry_point_on(scope_dir, Platform::CURRENT)
}

/// [`entry_point`] for an explicit platform.
pub(crate) fn entry_point_on(scope_dir: &Path, platform: Platform) -> Result<String, ResolveError> {
    let listing = list_scope(scope_dir)?;
    entry_point_in_listing(&listing, &scope_label(scope_dir), platform)
}

/// The entry point among the file names of a scope: `1_START` and `START` are
/// resolved independently; exactly one of them must succeed (R1.17).
pub(crate) fn entry_point_in_listing(
    listing: &[String],
    scope_label: &str,
    platform: Platform,
) -> Result<String, ResolveError> {
    let numbered = resolve_in_listing(listing, scope_label, "1_START", platform);
    let plain = resolve_in_listing(listing, scope_label, "START", platform);
    match (numbered, plain) {
        (Ok(first), Ok(second)) => {
            Err(ResolveError::AmbiguousEntryPoint { scope: scope_label.to_string(), first, second })
        }
        (Ok(found), Err(_)) | (Err(_), Ok(found)) => Ok(found),
        (Err(numbered), Err(plain)) => Err(no_entry_point(scope_label, platform, numbered, plain)),
    }
}

/// Neither candidate resolved. When one of them exists but is unusable, that is
/// the real problem and is reported (the `1_START` one first); otherwise the
/// workflow simply has no entry point.
fn no_entry_point(scope_label: &str, platform: Platform, numbered: ResolveError, plain: ResolveError) -> ResolveError {
    let unusable = [numbered, plain].into_iter().find(|error| !matches!(error, ResolveError::NotFound { .. }));
    match unusable {
        Some(cause) => ResolveError::UnusableEntryPoint { scope: scope_label.to_string(), cause: Box::new(cause) },
        None => ResolveError::NoEntryPoint { scope: scope_label.to_string(), platform },
    }
}

/// The checks that need no listing: empty name, path separators (R1.9), and the
/// platform of an explicit extension (R1.8, R1.11 checks it before existence).
fn check_name(scope: &str, name: &str, platform: Platform) -> Result<(), ResolveError> {
    if name.is_empty() {
        return Err(ResolveError::Empty { scope: scope.to_string() });
    }
    if state_name::has_path_separator(name) {
        return Err(ResolveError::PathSeparator { scope: scope.to_string(), name: name.to_string() });
    }
    let extension = state_name::extension(name);
    if platform.rejects_extension(extension) {
        return Err(ResolveError::ForeignExtension { scope: scope.to_string(), name: name.to_string(), platform });
    }
    Ok(())
}

/// An existing file whose extension is no state kind (`notes.txt`, `run.py`):
/// raymond would send it to the model as a prompt; Baton refuses it.
fn check_kind(scope: &str, name: &str, platform: Platform) -> Result<(), ResolveError> {
    let extension = state_name::extension(name);
    if extension.is_empty() || state_name::is_state_extension(extension) {
        return Ok(());
    }
    let extension = extension.to_string();
    Err(ResolveError::UnknownKind { scope: scope.to_string(), name: name.to_string(), extension, platform })
}

/// Whether `name`, an existing file named directly (`baton run wf/START.md`), is a
/// state that can run here: a prompt or one of this platform's script kinds.
pub(crate) fn check_state_file(scope_dir: &Path, name: &str) -> Result<(), ResolveError> {
    let label = scope_label(scope_dir);
    check_name(&label, name, Platform::CURRENT)?;
    check_kind(&label, name, Platform::CURRENT)
}

/// A scope's file names together with the label used in messages.
struct Scope<'a> {
    listing: &'a [String],
    label: &'a str,
}

impl Scope<'_> {
    fn contains(&self, file: &str) -> bool {
        self.listing.iter().any(|present| present == file)
    }

    fn not_found(&self, name: &str, looked_for: Vec<String>) -> ResolveError {
        let state_files = self
            .listing
            .iter()
            .map(String::as_str)
            .filter(|file| state_name::is_state_extension(state_name::extension(file)));
        ResolveError::NotFound {
            scope: self.label.to_string(),
            name: name.to_string(),
            looked_for,
            suggestion: did_you_mean(name, state_files).map(str::to_string),
        }
    }
}

/// R1.11: an explicit name must exist as written; it is returned unchanged.
/// An explicit name is only checked: it must exist, and be a kind of state.
fn resolve_explicit(scope: &Scope<'_>, name: &str, platform: Platform) -> Result<String, ResolveError> {
    if !scope.contains(name) {
        return Err(scope.not_found(name, vec![name.to_string()]));
    }
    check_kind(scope.label, name, platform)?;
    Ok(name.to_string())
}

/// Which of the four candidate files exist for an abstract name.
#[derive(Clone, Copy)]
struct Present {
    md: bool,
    sh: bool,
    ps1: bool,
    bat: bool,
}

/// What the platform rule decides for an abstract name; extensions only.
enum Decision {
    Found(&'static str),
    Ambiguous(Vec<&'static str>),
    Incompatible(Vec<&'static str>),
    NotFound,
}

/// R1.12 / R1.13 applied to the files present in the scope.
fn resolve_abstract(scope: &Scope<'_>, name: &str, platform: Platform) -> Result<String, ResolveError> {
    let present = Present {
        md: scope.contains(&format!("{name}.md")),
        sh: scope.contains(&format!("{name}.sh")),
        ps1: scope.contains(&format!("{name}.ps1")),
        bat: scope.contains(&format!("{name}.bat")),
    };
    let decision = match platform {
        Platform::Unix => decide_unix(present),
        Platform::Windows => decide_windows(present),
    };
    let files =
        |extensions: Vec<&str>| -> Vec<String> { extensions.iter().map(|ext| format!("{name}{ext}")).collect() };
    match decision {
        Decision::Found(ext) => Ok(format!("{name}{ext}")),
        Decision::Ambiguous(extensions) => Err(ResolveError::Ambiguous {
            scope: scope.label.to_string(),
            name: name.to_string(),
            files: files(extensions),
        }),
        Decision::Incompatible(extensions) => Err(ResolveError::Platform {
            scope: scope.label.to_string(),
            name: name.to_string(),
            files: files(extensions),
            platform,
        }),
        Decision::NotFound => Err(scope.not_found(name, files(platform.searched_extensions().to_vec()))),
    }
}

/// The `.ps1`/`.bat` files among `present`, in that order.
fn windows_scripts(present: Present) -> Vec<&'static str> {
    [(present.ps1, ".ps1"), (present.bat, ".bat")]
        .into_iter()
        .filter_map(|(exists, ext)| exists.then_some(ext))
        .collect()
}

/// R1.12: `.md` and `.sh` compete; Windows scripts only explain a failure.
fn decide_unix(present: Present) -> Decision {
    match present {
        Present { md: true, sh: true, .. } => Decision::Ambiguous(vec![".md", ".sh"]),
        Present { md: true, .. } => Decision::Found(".md"),
        Present { sh: true, .. } => Decision::Found(".sh"),
        _ if present.ps1 || present.bat => Decision::Incompatible(windows_scripts(present)),
        _ => Decision::NotFound,
    }
}

/// R1.13: `.md`, `.ps1` and `.bat` compete; `.sh` only explains a failure.
fn decide_windows(present: Present) -> Decision {
    let scripts = windows_scripts(present);
    if present.md && !scripts.is_empty() {
        return Decision::Ambiguous([vec![".md"], scripts].concat());
    }
    match (present.md, scripts.as_slice()) {
        (true, _) => Decision::Found(".md"),
        (false, [only]) => Decision::Found(only),
        (false, [_, _, ..]) => Decision::Ambiguous(scripts),
        (false, []) if present.sh => Decision::Incompatible(vec![".sh"]),
        (false, []) => Decision::NotFound,
    }
}

fn scope_label(scope_dir: &Path) -> String {
    scope_dir.display().to_string()
}

/// The file names a workflow's states can resolve to (for scans over a workflow).
pub(crate) fn state_files(scope: &Path) -> Result<Arc<[String]>, ResolveError> {
    list_scope(scope)
}

/// The state files of `scope`: a directory's files, a YAML workflow's virtual
/// files (read and validated again, R13.8), or a zip archive's files (its hash and
/// layout checked again if the file changed, R1.4).
fn list_scope(scope: &Path) -> Result<Arc<[String]>, ResolveError> {
    list(&open(scope)?)
}

/// Open the workflow at `scope`; a broken YAML or zip workflow is an invalid scope.
pub(crate) fn open(scope: &Path) -> Result<Workflow, ResolveError> {
    Workflow::open(scope)
        .map_err(|error| ResolveError::InvalidScope { scope: scope_label(scope), message: error.to_string() })
}

fn list(workflow: &Workflow) -> Result<Arc<[String]>, ResolveError> {
    workflow.listing().map_err(|error| ResolveError::ScopeUnreadable {
        scope: scope_label(workflow.path()),
        reason: error.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::path::PathBuf;
    use tempfile::TempDir;

    const SCOPE: &str = "/wf/review";

    impl ResolveError {
        /// The class of the error, so property tests can compare outcomes.
        fn kind(&self) -> &'static str {
            match self {
                ResolveError::NotFound { .. } => "not_found",
                ResolveError::Ambiguous { .. } => "ambiguous",
                ResolveError::Platform { .. } | ResolveError::ForeignExtension { .. } => "platform",
                ResolveError::UnknownKind { .. } => "unknown_kind",
                ResolveError::PathSeparator { .. } => "path_separator",
                ResolveError::Empty { .. } => "empty",
                ResolveError::NoEntryPoint { .. } | ResolveError::UnusableEntryPoint { .. } => "no_entry_point",
                ResolveError::AmbiguousEntryPoint { .. } => "ambiguous_entry_point",
                ResolveError::ScopeUnreadable { .. } => "scope_unreadable",
                ResolveError::InvalidScope { .. } => "invalid_scope",
            }
        }
    }

    fn listing(files: &[&str]) -> Vec<String> {
        files.iter().map(|f| f.to_string()).collect()
    }

    fn resolve(files: &[&str], name: &str, platform: Platform) -> Result<String, ResolveError> {
        resolve_in_listing(&listing(files), SCOPE, name, platform)
    }

    fn message(result: Result<String, ResolveError>) -> String {
        match result {
            Ok(found) => panic!("expected an error, resolved to {found}"),
            Err(error) => error.to_string(),
        }
    }

    fn workflow_dir(files: &[&str]) -> TempDir {
        let dir = tempfile::tempdir().expect("create temp dir");
        for file in files {
            fs::write(dir.path().join(file), "x").expect("write state file");
        }
        dir
    }

    /// (files present, Unix outcome, Windows outcome); `Ok(ext)` or `Err(kind)`.
    type Row = (&'static [&'static str], Result<&'static str, &'static str>, Result<&'static str, &'static str>);

    /// R1.14, plus the "nothing present" row.
    const REFERENCE_TABLE: [Row; 12] = [
        (&[".md"], Ok(".md"), Ok(".md")),
        (&[".sh"], Ok(".sh"), Err("platform")),
        (&[".bat"], Err("platform"), Ok(".bat")),
        (&[".ps1"], Err("platform"), Ok(".ps1")),
        (&[".sh", ".bat"], Ok(".sh"), Ok(".bat")),
        (&[".sh", ".ps1"], Ok(".sh"), Ok(".ps1")),
        (&[".bat", ".ps1"], Err("platform"), Err("ambiguous")),
        (&[".md", ".sh"], Err("ambiguous"), Ok(".md")),
        (&[".md", ".bat"], Ok(".md"), Err("ambiguous")),
        (&[".md", ".ps1"], Ok(".md"), Err("ambiguous")),
        (&[".sh", ".bat", ".ps1"], Ok(".sh"), Err("ambiguous")),
        (&[], Err("not_found"), Err("not_found")),
    ];

    fn check_reference_table(platform: Platform) {
        for (extensions, unix, windows) in REFERENCE_TABLE {
            let files: Vec<String> = extensions.iter().map(|ext| format!("S{ext}")).collect();
            let expected = match platform {
                Platform::Unix => unix,
                Platform::Windows => windows,
            };
            let actual = resolve_in_listing(&files, SCOPE, "S", platform);
            match (expected, &actual) {
                (Ok(ext), Ok(found)) => assert_eq!(found, &format!("S{ext}"), "{extensions:?}"),
                (Err(kind), Err(error)) => assert_eq!(error.kind(), kind, "{extensions:?}"),
                _ => panic!("{platform} {extensions:?}: expected {expected:?}, got {actual:?}"),
            }
        }
    }

    #[test]
    fn r1_14_reference_table_unix() {
        check_reference_table(Platform::Unix);
    }

    #[test]
    fn r1_14_reference_table_windows() {
        check_reference_table(Platform::Windows);
    }

    #[test]
    fn r1_14_reference_table_holds_on_disk() {
        for platform in [Platform::Unix, Platform::Windows] {
            for (extensions, unix, windows) in REFERENCE_TABLE {
                let files: Vec<String> = extensions.iter().map(|ext| format!("S{ext}")).collect();
                let names: Vec<&str> = files.iter().map(String::as_str).collect();
                let dir = workflow_dir(&names);
                let expected = match platform {
                    Platform::Unix => unix,
                    Platform::Windows => windows,
                };
                let actual = resolve_state_on(dir.path(), "S", platform);
                let actual = actual.as_ref().map(String::as_str).map_err(ResolveError::kind);
                let expected = expected.map(|ext| format!("S{ext}"));
                assert_eq!(actual, expected.as_deref().map_err(|kind| *kind), "{platform} {extensions:?}");
            }
        }
    }

    #[test]
    fn r1_11_explicit_name_returned_unchanged() {
        // Even with an ambiguous abstract form, an explicit name is just checked.
        let files = ["REVIEW.md", "REVIEW.sh", "NOTES.txt"];
        assert_eq!(resolve(&files, "REVIEW.sh", Platform::Unix).as_deref(), Ok("REVIEW.sh"));
        assert_eq!(resolve(&files, "REVIEW.md", Platform::Windows).as_deref(), Ok("REVIEW.md"));
        assert_eq!(
            message(resolve(&files, "NOTES.txt", Platform::Unix)),
            "`NOTES.txt` in workflow `/wf/review` is not a state file: a state is a prompt (`.md`) or a script \
             (`.sh`), not `.txt`"
        );
    }

    #[test]
    fn r1_11_explicit_name_is_not_searched() {
        let files = ["REVIEW.sh"];
        assert_eq!(
            message(resolve(&files, "REVIEW.md", Platform::Unix)),
            "state `REVIEW.md` not found in workflow `/wf/review` (looked for REVIEW.md); \
             did you mean `REVIEW.sh`?"
        );
    }

    #[test]
    fn r1_11_v1_2_counts_as_explicit() {
        // `v1.2` has extension `.2`, so `v1.2.md` is not looked for.
        assert_eq!(
            message(resolve(&["v1.2.md"], "v1.2", Platform::Unix)),
            "state `v1.2` not found in workflow `/wf/review` (looked for v1.2); \
             did you mean `v1.2.md`?"
        );
        // A file named `v1.2` exists but is no kind of state (`docs/decisions.md`).
        assert_eq!(
            message(resolve(&["v1.2"], "v1.2", Platform::Unix)),
            "`v1.2` in workflow `/wf/review` is not a state file: a state is a prompt (`.md`) or a script (`.sh`), \
             not `.2`"
        );
    }

    #[test]
    fn r1_8_explicit_extension_is_checked_case_insensitively() {
        assert_eq!(
            message(resolve(&["P.PS1"], "P.PS1", Platform::Unix)),
            "state `P.PS1` cannot run on Unix: `.bat` and `.ps1` scripts run only on Windows"
        );
        assert_eq!(
            message(resolve(&["P.bat"], "P.bat", Platform::Unix)),
            "state `P.bat` cannot run on Unix: `.bat` and `.ps1` scripts run only on Windows"
        );
        assert_eq!(
            message(resolve(&["P.Sh"], "P.Sh", Platform::Windows)),
            "state `P.Sh` cannot run on Windows: `.sh` scripts run only on Unix"
        );
        assert_eq!(resolve(&["P.Sh"], "P.Sh", Platform::Unix).as_deref(), Ok("P.Sh"));
    }

    #[test]
    fn r1_11_platform_is_checked_before_existence() {
        let error = resolve(&[], "P.ps1", Platform::Unix).unwrap_err();
        assert_eq!(error.kind(), "platform");
    }

    #[test]
    fn r1_12_not_found_message_unix() {
        assert_eq!(
            message(resolve(&["START.md"], "DEPLOY", Platform::Unix)),
            "state `DEPLOY` not found in workflow `/wf/review` (looked for DEPLOY.md, DEPLOY.sh)"
        );
    }

    #[test]
    fn r1_13_not_found_message_windows() {
        assert_eq!(
            message(resolve(&["START.md"], "DEPLOY", Platform::Windows)),
            "state `DEPLOY` not found in workflow `/wf/review` \
             (looked for DEPLOY.md, DEPLOY.ps1, DEPLOY.bat, DEPLOY.sh)"
        );
    }

    #[test]
    fn not_found_message_suggests_a_close_state_file() {
        let files = ["REVIEW.md", "START.md"];
        assert_eq!(
            message(resolve(&files, "REVEIW", Platform::Unix)),
            "state `REVEIW` not found in workflow `/wf/review` \
             (looked for REVEIW.md, REVEIW.sh); did you mean `REVIEW.md`?"
        );
    }

    #[test]
    fn suggestions_come_only_from_state_files() {
        let files = ["REVIEW.txt", "REVIEW.md~"];
        assert_eq!(
            message(resolve(&files, "REVIEW", Platform::Unix)),
            "state `REVIEW` not found in workflow `/wf/review` (looked for REVIEW.md, REVIEW.sh)"
        );
    }

    #[test]
    fn abstract_lookup_matches_the_extension_exactly() {
        // Like a stat on a case-sensitive file system: `REVIEW.MD` is not `REVIEW.md`.
        assert_eq!(
            message(resolve(&["REVIEW.MD"], "REVIEW", Platform::Unix)),
            "state `REVIEW` not found in workflow `/wf/review` \
             (looked for REVIEW.md, REVIEW.sh); did you mean `REVIEW.MD`?"
        );
    }

    #[test]
    fn r1_12_ambiguous_message_unix() {
        let error = resolve(&["B.md", "B.sh"], "B", Platform::Unix).unwrap_err();
        assert_eq!(error.kind(), "ambiguous");
        assert_eq!(
            error.to_string(),
            "state `B` is ambiguous in workflow `/wf/review`: B.md and B.sh both exist; \
             use an explicit extension"
        );
    }

    #[test]
    fn r1_13_ambiguous_message_lists_every_colliding_file() {
        let files = ["B.md", "B.ps1", "B.bat", "B.sh"];
        assert_eq!(
            message(resolve(&files, "B", Platform::Windows)),
            "state `B` is ambiguous in workflow `/wf/review`: B.md, B.ps1 and B.bat all exist; \
             use an explicit extension"
        );
        assert_eq!(
            message(resolve(&["B.bat", "B.ps1"], "B", Platform::Windows)),
            "state `B` is ambiguous in workflow `/wf/review`: B.ps1 and B.bat both exist; \
             use an explicit extension"
        );
    }

    #[test]
    fn r1_12_platform_message_unix() {
        let error = resolve(&["P.bat", "P.ps1"], "P", Platform::Unix).unwrap_err();
        assert_eq!(error.kind(), "platform");
        assert_eq!(
            error.to_string(),
            "state `P` in workflow `/wf/review` exists only as P.ps1 and P.bat, \
             which cannot run on Unix"
        );
    }

    #[test]
    fn r1_13_platform_message_windows() {
        assert_eq!(
            message(resolve(&["P.sh"], "P", Platform::Windows)),
            "state `P` in workflow `/wf/review` exists only as P.sh, which cannot run on Windows"
        );
    }

    #[test]
    fn r1_9_path_separator_refused_without_io() {
        // The scope does not exist: any I/O would produce `scope_unreadable`.
        let missing = PathBuf::from("/definitely/not/a/workflow/dir");
        for name in ["sub/X.md", "..\\X", "/X"] {
            let error = resolve_state_on(&missing, name, Platform::Unix).unwrap_err();
            assert_eq!(error.kind(), "path_separator", "{name}");
        }
        assert_eq!(
            resolve_state_on(&missing, "sub/X.md", Platform::Unix).unwrap_err().to_string(),
            "state name `sub/X.md` contains a path separator; \
             states are bare file names inside the workflow directory"
        );
    }

    #[test]
    fn empty_name_refused_without_io() {
        let missing = PathBuf::from("/definitely/not/a/workflow/dir");
        let error = resolve_state_on(&missing, "", Platform::Unix).unwrap_err();
        assert_eq!(error.kind(), "empty");
        assert_eq!(error.to_string(), "empty state name");
    }

    #[test]
    fn unreadable_scope_is_reported() {
        let dir = workflow_dir(&[]);
        let missing = dir.path().join("gone");
        let error = resolve_state_on(&missing, "START", Platform::Unix).unwrap_err();
        assert_eq!(error.kind(), "scope_unreadable");
        let prefix = format!("cannot read workflow `{}`: ", missing.display());
        assert!(error.to_string().starts_with(&prefix), "{error}");
    }

    #[test]
    fn dot_names_are_not_states() {
        let dir = workflow_dir(&["START.md"]);
        for name in [".", ".."] {
            let error = resolve_state_on(dir.path(), name, Platform::Unix).unwrap_err();
            assert_eq!(error.kind(), "not_found", "{name}");
        }
    }

    #[test]
    fn directories_are_not_state_files() {
        let dir = workflow_dir(&[]);
        fs::create_dir(dir.path().join("REVIEW.md")).expect("create dir");
        let error = resolve_state_on(dir.path(), "REVIEW", Platform::Unix).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "state `REVIEW` not found in workflow `{}` (looked for REVIEW.md, REVIEW.sh)",
                dir.path().display()
            )
        );
    }

    #[test]
    fn directory_message_uses_the_scope_path_and_suggests() {
        let dir = workflow_dir(&["REVIEW.md", "START.md"]);
        let error = resolve_state_on(dir.path(), "REVEIW", Platform::Unix).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "state `REVEIW` not found in workflow `{}` (looked for REVEIW.md, REVEIW.sh); \
                 did you mean `REVIEW.md`?",
                dir.path().display()
            )
        );
    }

    #[test]
    fn resolve_state_uses_the_current_platform() {
        let dir = workflow_dir(&["B.sh", "B.ps1"]);
        let expected = match Platform::CURRENT {
            Platform::Unix => "B.sh",
            Platform::Windows => "B.ps1",
        };
        assert_eq!(resolve_state(dir.path(), "B").as_deref(), Ok(expected));
    }

    #[cfg(unix)]
    #[test]
    fn symlinked_state_files_count() {
        let dir = workflow_dir(&["real.md"]);
        std::os::unix::fs::symlink(dir.path().join("real.md"), dir.path().join("LINK.md")).expect("symlink");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), dir.path().join("DANGLING.md")).expect("symlink");
        assert_eq!(resolve_state_on(dir.path(), "LINK", Platform::Unix).as_deref(), Ok("LINK.md"));
        let error = resolve_state_on(dir.path(), "DANGLING", Platform::Unix).unwrap_err();
        assert_eq!(error.kind(), "not_found");
    }

    #[test]
    fn r1_17_start_md_only() {
        assert_eq!(
            entry_point_in_listing(&listing(&["START.md", "B.md"]), SCOPE, Platform::Unix).as_deref(),
            Ok("START.md")
        );
        let dir = workflow_dir(&["START.md"]);
        assert_eq!(entry_point_on(dir.path(), Platform::Unix).as_deref(), Ok("START.md"));
        assert_eq!(entry_point(dir.path()).as_deref(), Ok("START.md"));
    }

    #[test]
    fn r1_17_numbered_start_only() {
        let files = listing(&["1_START.sh", "2_NEXT.md"]);
        assert_eq!(entry_point_in_listing(&files, SCOPE, Platform::Unix).as_deref(), Ok("1_START.sh"));
    }

    #[test]
    fn r1_17_ambiguous_entry_point() {
        let dir = workflow_dir(&["1_START.md", "START.sh"]);
        let error = entry_point_on(dir.path(), Platform::Unix).unwrap_err();
        assert_eq!(error.kind(), "ambiguous_entry_point");
        assert_eq!(
            error.to_string(),
            format!(
                "workflow `{}` has an ambiguous entry point: both 1_START.md and START.sh exist",
                dir.path().display()
            )
        );
    }

    #[test]
    fn r1_17_no_entry_point_unix() {
        let error = entry_point_in_listing(&listing(&["B.md"]), SCOPE, Platform::Unix).unwrap_err();
        assert_eq!(error.kind(), "no_entry_point");
        assert_eq!(
            error.to_string(),
            "workflow `/wf/review` has no entry point: expected a `1_START` or `START` state \
             (1_START.md, 1_START.sh, START.md or START.sh)"
        );
    }

    #[test]
    fn r1_17_no_entry_point_windows() {
        let error = entry_point_in_listing(&[], SCOPE, Platform::Windows).unwrap_err();
        assert_eq!(
            error.to_string(),
            "workflow `/wf/review` has no entry point: expected a `1_START` or `START` state \
             (1_START.md, 1_START.ps1, 1_START.bat, START.md, START.ps1 or START.bat)"
        );
    }

    #[test]
    fn r1_17_unusable_numbered_start_is_reported() {
        let files = listing(&["1_START.md", "1_START.sh"]);
        let error = entry_point_in_listing(&files, SCOPE, Platform::Unix).unwrap_err();
        assert_eq!(error.kind(), "no_entry_point");
        assert_eq!(
            error.to_string(),
            "workflow `/wf/review` has no usable entry point: state `1_START` is ambiguous in \
             workflow `/wf/review`: 1_START.md and 1_START.sh both exist; use an explicit extension"
        );
    }

    #[test]
    fn r1_17_unusable_plain_start_is_reported() {
        let files = listing(&["START.bat"]);
        assert_eq!(
            entry_point_in_listing(&files, SCOPE, Platform::Unix).unwrap_err().to_string(),
            "workflow `/wf/review` has no usable entry point: state `START` in workflow \
             `/wf/review` exists only as START.bat, which cannot run on Unix"
        );
    }

    #[test]
    fn r1_17_one_usable_candidate_wins_over_a_broken_one() {
        // 1_START is ambiguous, START resolves: R1.17 takes the one that succeeds.
        let files = listing(&["1_START.md", "1_START.sh", "START.md"]);
        assert_eq!(entry_point_in_listing(&files, SCOPE, Platform::Unix).as_deref(), Ok("START.md"));
    }

    #[test]
    fn r1_17_platform_decides_the_entry_point() {
        let files = listing(&["START.sh", "1_START.ps1"]);
        assert_eq!(entry_point_in_listing(&files, SCOPE, Platform::Unix).as_deref(), Ok("START.sh"));
        assert_eq!(entry_point_in_listing(&files, SCOPE, Platform::Windows).as_deref(), Ok("1_START.ps1"));
    }
}
