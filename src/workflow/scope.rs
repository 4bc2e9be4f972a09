//! A workflow's scope, resolved once: a directory, a YAML file or a zip archive
//! (R1.1). Every reader of a workflow's files — a prompt, a script's source, the
//! listing resolution searches, the manifest, a state's declared timeout, the
//! directory relative paths start from, lint, the diagram and the daemon's
//! registry — goes through [`Scope`], and each of them is one exhaustive `match`
//! on [`Contents`] here, so a new kind, or a reader that forgets one, does not
//! compile. (A zip's prompt states once failed because one reader treated the
//! archive as a directory.)
//!
//! Opening is cheap where it can be: a directory is not read until asked, a zip
//! archive is listed from its central directory and kept while its file is
//! unchanged (`zip_scope`); a YAML workflow is read at every opening, as R13.8
//! asks, and validated again when its text changed (`yaml_scope`).

use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock};

use crate::bounded_read::read_file_at_most;
use crate::syntax::yaml_limits::{MAX_YAML_BYTES, YamlLimitError};
use crate::text::state_name;
use crate::workflow::kept::{KeptByPath, Stamp};
use crate::workflow::manifest::MANIFEST_FILE;
use crate::workflow::yaml_scope::{LoadedYaml, VirtualFile, YamlError, YamlWorkflow};
use crate::workflow::zip_scope::{ZipError, ZipWorkflow};

/// Which kind of workflow a path names, by its name alone (R1.1: `.yaml`/`.yml`
/// and `.zip`, any case; anything else is a directory).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ScopeKind {
    Directory,
    Yaml,
    Zip,
}

impl ScopeKind {
    pub(crate) fn of(path: &Path) -> ScopeKind {
        let extension = state_name::extension(path.to_str().unwrap_or_default()).to_ascii_lowercase();
        match extension.as_str() {
            ".yaml" | ".yml" => ScopeKind::Yaml,
            ".zip" => ScopeKind::Zip,
            _ => ScopeKind::Directory,
        }
    }

    /// How messages name a workflow of this kind.
    pub(crate) fn label(self) -> &'static str {
        match self {
            ScopeKind::Directory => "workflow",
            ScopeKind::Yaml => "YAML workflow",
            ScopeKind::Zip => "zip workflow",
        }
    }

    /// A workflow packed in one file, whose states are not files of their own.
    pub(crate) fn is_packed(self) -> bool {
        match self {
            ScopeKind::Directory => false,
            ScopeKind::Yaml | ScopeKind::Zip => true,
        }
    }
}

/// An opened workflow.
#[derive(Debug)]
pub(crate) struct Scope {
    path: PathBuf,
    contents: Contents,
}

#[derive(Debug)]
enum Contents {
    Directory,
    /// The workflow and the text it was read from (lint points into it).
    Yaml(Arc<LoadedYaml>),
    Zip(Arc<ZipWorkflow>),
}

/// Why a YAML or zip workflow cannot be opened; the message names the file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ScopeError {
    #[error(transparent)]
    Yaml(#[from] YamlError),
    #[error(transparent)]
    Zip(#[from] ZipError),
}

/// Why one file of a scope cannot be read as text.
#[derive(Debug, thiserror::Error)]
pub(crate) enum TextError {
    /// A directory's file could not be read (it may be mid-edit).
    #[error("cannot read it: {0}")]
    Unreadable(std::io::Error),
    #[error("it is not UTF-8 text (first invalid byte at offset {offset})")]
    NotUtf8 { offset: usize },
    /// The YAML workflow or the archive has no such file.
    #[error("it is not in the {0}")]
    Missing(&'static str),
    /// The archive refused to inflate it (too large, not text).
    #[error(transparent)]
    Archive(ZipError),
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

/// Where a workflow's manifest is (R13.1).
pub(crate) enum ManifestText {
    /// A `workflow.yaml` beside the states (a directory or an archive's entry).
    Beside { path: PathBuf, text: String },
    /// A YAML workflow's own file, whose manifest keys sit beside `states`.
    InWorkflow { path: PathBuf, text: String },
}

impl Scope {
    /// Open the workflow at `path`: read and check a YAML file or a zip archive;
    /// a directory is read when asked.
    pub(crate) fn open(path: &Path) -> Result<Scope, ScopeError> {
        let contents = match ScopeKind::of(path) {
            ScopeKind::Directory => Contents::Directory,
            ScopeKind::Yaml => Contents::Yaml(YamlWorkflow::open(path)?),
            ScopeKind::Zip => Contents::Zip(ZipWorkflow::open(path)?),
        };
        Ok(Scope { path: path.to_path_buf(), contents })
    }

    /// The path the scope was opened from (a directory, or the YAML or zip file).
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn kind(&self) -> ScopeKind {
        match self.contents {
            Contents::Directory => ScopeKind::Directory,
            Contents::Yaml(_) => ScopeKind::Yaml,
            Contents::Zip(_) => ScopeKind::Zip,
        }
    }

    /// A YAML workflow and its text, for the places (lines, keys) only it has.
    pub(crate) fn yaml(&self) -> Option<(&YamlWorkflow, &str)> {
        match &self.contents {
            Contents::Yaml(yaml) => Some((&yaml.workflow, &yaml.text)),
            Contents::Directory | Contents::Zip(_) => None,
        }
    }

    /// The names of its state files (and other files): a directory's regular
    /// files (or symlinks to them; names that are not UTF-8 are skipped), a YAML
    /// workflow's virtual files (R1.5), an archive's files (R1.15).
    pub(crate) fn listing(&self) -> Result<Arc<[String]>, std::io::Error> {
        match &self.contents {
            Contents::Directory => list_directory(&self.path),
            Contents::Yaml(yaml) => Ok(yaml.workflow.listing()),
            Contents::Zip(workflow) => Ok(workflow.listing()),
        }
    }

    /// The directory a workflow's relative paths (a state's `mcp_config`,
    /// `settings`) are relative to: the workflow directory itself, or the
    /// directory holding a YAML or zip workflow's file (files inside a zip cannot
    /// be handed to another program).
    pub(crate) fn workflow_dir(&self) -> &Path {
        match self.contents {
            Contents::Directory => &self.path,
            Contents::Yaml(_) | Contents::Zip(_) => self.path.parent().unwrap_or(&self.path),
        }
    }

    /// The path a person is shown for file `name` of the workflow.
    pub(crate) fn file_path(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    /// The text of file `name`, as written.
    pub(crate) fn text(&self, name: &str) -> Result<String, TextError> {
        match &self.contents {
            Contents::Directory => {
                let bytes = std::fs::read(self.path.join(name)).map_err(TextError::Unreadable)?;
                String::from_utf8(bytes)
                    .map_err(|error| TextError::NotUtf8 { offset: error.utf8_error().valid_up_to() })
            }
            Contents::Yaml(yaml) => match yaml.workflow.file(name) {
                Some(VirtualFile::Prompt(text) | VirtualFile::Script(text)) => Ok(text.to_string()),
                None => Err(TextError::Missing("workflow")),
            },
            Contents::Zip(workflow) => match workflow.text(name) {
                Some(text) => text.map(|text| text.to_string()).map_err(TextError::Archive),
                None => Err(TextError::Missing("archive")),
            },
        }
    }

    /// The source of script state `state`; the error is a sentence.
    pub(crate) fn script(&self, state: &str) -> Result<ScriptSource, String> {
        let missing = || format!("script `{state}` not found in workflow `{}`", self.path.display());
        match &self.contents {
            Contents::Directory => {
                let path = self.path.join(state);
                if path.is_file() { Ok(ScriptSource::File(path)) } else { Err(missing()) }
            }
            Contents::Yaml(yaml) => match yaml.workflow.file(state) {
                Some(VirtualFile::Script(source)) => Ok(ScriptSource::Inline(source.to_string())),
                Some(VirtualFile::Prompt(_)) | None => Err(missing()),
            },
            Contents::Zip(workflow) => match workflow.text(state) {
                Some(text) => {
                    text.map(|text| ScriptSource::Inline(text.to_string())).map_err(|error| error.to_string())
                }
                None => Err(missing()),
            },
        }
    }

    /// The `timeout` the workflow gives state `state`, in seconds (R13.6): only a
    /// YAML workflow can; a directory's or archive's states take the run's.
    pub(crate) fn declared_timeout(&self, state: &str) -> Option<f64> {
        match &self.contents {
            Contents::Yaml(yaml) => yaml.workflow.timeout(state),
            Contents::Directory | Contents::Zip(_) => None,
        }
    }

    /// The text of its manifest, if it has one (R13.1); the error is a sentence
    /// and the path it is about.
    pub(crate) fn manifest_text(&self) -> Result<Option<ManifestText>, (PathBuf, String)> {
        match &self.contents {
            Contents::Directory => {
                let path = self.path.join(MANIFEST_FILE);
                match read_yaml_text(&path) {
                    Ok(text) => Ok(Some(ManifestText::Beside { path, text })),
                    Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
                    Err(error) => Err((path, error.to_string())),
                }
            }
            Contents::Yaml(yaml) => {
                Ok(Some(ManifestText::InWorkflow { path: self.path.clone(), text: yaml.text.clone() }))
            }
            Contents::Zip(workflow) => match workflow.text(MANIFEST_FILE) {
                None => Ok(None),
                Some(Ok(text)) => {
                    Ok(Some(ManifestText::Beside { path: self.path.join(MANIFEST_FILE), text: text.to_string() }))
                }
                Some(Err(error)) => Err((self.path.clone(), error.to_string())),
            },
        }
    }
}

/// The text of the YAML file at `path`, read no further than one byte past the
/// size `yaml_limits` takes: `x.yaml` or a `workflow.yaml` that is (or links to)
/// `/dev/zero` was read until memory ran out, before the limit was checked.
pub(crate) fn read_yaml_text(path: &Path) -> std::io::Result<String> {
    let Some(bytes) = read_file_at_most(std::fs::File::open(path)?, MAX_YAML_BYTES as u64)? else {
        // A regular file's size is known; a device or a pipe has none.
        let message = match std::fs::metadata(path) {
            Ok(metadata) if metadata.is_file() => {
                let bytes = usize::try_from(metadata.len()).unwrap_or(usize::MAX).max(MAX_YAML_BYTES + 1);
                YamlLimitError::Large { bytes }.to_string()
            }
            _ => format!("the YAML is longer than the limit of {MAX_YAML_BYTES} bytes (1 MiB)"),
        };
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, message));
    };
    String::from_utf8(bytes)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "stream did not contain valid UTF-8"))
}

/// The directories listed in this process, by path, while they are unchanged: a
/// step's target is resolved in its workflow's listing, and reading a directory
/// at every step cost more than checking that it did not change (issue 22,
/// thirteenth round).
static LISTED: LazyLock<KeptByPath<Stamp, Arc<[String]>>> = LazyLock::new(|| KeptByPath::new(KEPT_LISTINGS));

/// How many listings are kept: a run has few workflows, the daemon many.
const KEPT_LISTINGS: usize = 64;

/// A directory's regular files and links to them. The listing is kept while the
/// directory's stamp is unchanged, and only when that is proof enough: the
/// directory last changed long enough ago that a later change must give it a new
/// time ([`Stamp::settled`]), and it holds no link, whose target can change
/// without changing the directory.
fn list_directory(dir: &Path) -> Result<Arc<[String]>, std::io::Error> {
    list_directory_at(dir, std::time::SystemTime::now())
}

/// [`list_directory`], `now` being the time it is.
fn list_directory_at(dir: &Path, now: std::time::SystemTime) -> Result<Arc<[String]>, std::io::Error> {
    let stamp = Stamp::of(&std::fs::metadata(dir)?);
    if let Some(names) = LISTED.find(dir, |seen, _| *seen == stamp) {
        return Ok(names);
    }
    let settled = stamp.settled(now);
    let (names, links) = read_directory(dir)?;
    let names: Arc<[String]> = names.into();
    if settled && !links {
        LISTED.keep(dir, stamp, Arc::clone(&names));
    }
    Ok(names)
}

/// A directory's regular files and links to them, and whether it holds a link.
fn read_directory(dir: &Path) -> Result<(Vec<String>, bool), std::io::Error> {
    let mut names = Vec::new();
    let mut links = false;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let kind = entry.file_type();
        links |= kind.as_ref().is_ok_and(std::fs::FileType::is_symlink);
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        let regular = match kind {
            Ok(kind) if kind.is_symlink() => std::fs::metadata(entry.path()).is_ok_and(|m| m.is_file()),
            Ok(kind) => kind.is_file(),
            Err(_) => false,
        };
        if regular {
            names.push(name);
        }
    }
    Ok((names, links))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r1_1_the_kind_is_read_from_the_name() {
        assert_eq!(ScopeKind::of(Path::new("/w/flow.yaml")), ScopeKind::Yaml);
        assert_eq!(ScopeKind::of(Path::new("/w/flow.YML")), ScopeKind::Yaml);
        assert_eq!(ScopeKind::of(Path::new("/w/flow.Zip")), ScopeKind::Zip);
        assert_eq!(ScopeKind::of(Path::new("/w/flow")), ScopeKind::Directory);
        assert!(!ScopeKind::Directory.is_packed());
        assert!(ScopeKind::Zip.is_packed() && ScopeKind::Yaml.is_packed());
    }

    #[test]
    fn a_zip_scope_reads_prompts_scripts_and_its_manifest_from_the_archive() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("wf.zip");
        let bytes = crate::workflow::zip_scope::tests::archive(&[
            ("START.md", "Say <result>hi</result>"),
            ("CHECK.sh", "echo ok"),
            ("workflow.yaml", "id: wf"),
        ]);
        std::fs::write(&path, bytes).expect("write");
        let scope = Scope::open(&path).expect("open");
        assert_eq!(scope.kind(), ScopeKind::Zip);
        assert_eq!(scope.workflow_dir(), dir.path());
        assert_eq!(scope.text("START.md").expect("prompt"), "Say <result>hi</result>");
        assert_eq!(scope.script("CHECK.sh"), Ok(ScriptSource::Inline("echo ok".into())));
        assert!(matches!(scope.manifest_text(), Ok(Some(ManifestText::Beside { .. }))));
        assert!(matches!(scope.text("NOPE.md"), Err(TextError::Missing("archive"))));
    }

    /// A time by which a directory made by a test has settled.
    fn later() -> std::time::SystemTime {
        std::time::SystemTime::now() + std::time::Duration::from_secs(3600)
    }

    /// Give `dir` the times of one that last changed an hour ago (as far as its
    /// modification goes; the change time, which cannot be set, is now): a change
    /// made after this gets a new time whatever the clock's tick.
    fn age(dir: &Path) {
        let an_hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        std::fs::File::open(dir).and_then(|dir| dir.set_modified(an_hour_ago)).expect("aged");
    }

    fn sorted(mut names: Vec<String>) -> Vec<String> {
        names.sort();
        names
    }

    #[test]
    fn a_settled_directory_is_listed_once_and_a_file_added_later_is_still_seen() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("A.sh"), "").expect("write");
        age(dir.path());
        assert_eq!(list_directory_at(dir.path(), later()).expect("listed").to_vec(), ["A.sh"]);
        assert!(LISTED.holds(dir.path()), "a settled directory's listing is kept");
        std::fs::write(dir.path().join("B.sh"), "").expect("write");
        assert_eq!(sorted(list_directory_at(dir.path(), later()).expect("listed").to_vec()), ["A.sh", "B.sh"]);
        age(dir.path());
        assert_eq!(sorted(list_directory_at(dir.path(), later()).expect("listed").to_vec()), ["A.sh", "B.sh"]);
        std::fs::remove_file(dir.path().join("A.sh")).expect("remove");
        assert_eq!(list_directory_at(dir.path(), later()).expect("listed").to_vec(), ["B.sh"]);
    }

    #[test]
    fn a_directory_changed_just_now_is_listed_again_at_every_look() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("A.sh"), "").expect("write");
        assert_eq!(list_directory(dir.path()).expect("listed").to_vec(), ["A.sh"]);
        assert!(!LISTED.holds(dir.path()), "a change in the same clock tick could keep every time as it was");
    }

    #[test]
    fn a_directory_holding_a_link_is_listed_again_at_every_look() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("target"), "").expect("write");
        std::os::unix::fs::symlink(dir.path().join("elsewhere"), dir.path().join("A.sh")).expect("link");
        assert_eq!(list_directory_at(dir.path(), later()).expect("listed").to_vec(), ["target"]);
        assert!(!LISTED.holds(dir.path()), "a link's target can change without changing the directory");
        std::fs::write(dir.path().join("elsewhere"), "").expect("write");
        assert_eq!(
            sorted(list_directory_at(dir.path(), later()).expect("listed").to_vec()),
            ["A.sh", "elsewhere", "target"]
        );
    }

    #[test]
    fn a_directory_replaced_by_another_is_listed_again() {
        let parent = tempfile::tempdir().expect("temp dir");
        let (dir, other) = (parent.path().join("wf"), parent.path().join("other"));
        std::fs::create_dir(&dir).expect("dir");
        std::fs::create_dir(&other).expect("dir");
        std::fs::write(dir.join("A.sh"), "").expect("write");
        std::fs::write(other.join("B.sh"), "").expect("write");
        age(&dir);
        age(&other);
        assert_eq!(list_directory_at(&dir, later()).expect("listed").to_vec(), ["A.sh"]);
        std::fs::remove_file(dir.join("A.sh")).expect("remove");
        std::fs::remove_dir(&dir).expect("remove");
        std::fs::rename(&other, &dir).expect("rename");
        assert_eq!(list_directory_at(&dir, later()).expect("listed").to_vec(), ["B.sh"]);
    }
}
