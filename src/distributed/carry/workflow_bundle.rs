//! A run's workflow files, packed for a worker that does not share the
//! coordinator's disk (`docs/distributed-files.md`, "Workflow files").
//!
//! Every kind of scope travels the same way, as entries of one in-memory zip:
//! a directory as its regular files (recursively: scripts may read files of
//! their own), a YAML workflow as its text, a zip workflow as its bytes. The
//! workflows a step can reach with cross-workflow tags travel too: the same
//! reading `baton lint` does (each state's prompt, `allowed_transitions` and
//! the tags its script prints literally) names them, and they are followed
//! as lint follows them. Each scope keeps its path relative to a common root —
//! the deepest folder holding all of them — because a specifier is a path
//! relative to its caller (`../review/`) and a forked worker's id is made from
//! a workflow's name, so both must read on the worker as on the coordinator.
//!
//! The zip is made the same way every time (entries sorted, one fixed time),
//! so its SHA-256 names its contents: the worker unpacks a bundle once into
//! `<worker dir>/workflows/<hash>/`, through a temporary folder renamed into
//! place, so a step never sees half a tree and two steps that bring the same
//! bundle at once both end up with one copy. Paths travel both ways through a
//! [`PathMap`]: the step's scope to the worker's copy, and a scope a step's
//! transition names back to the coordinator's.
//!
//! Limits: a bundle is at most [`MAX_BUNDLE_BYTES`] uncompressed and
//! `zip_scope::MAX_ENTRIES` entries; a symbolic link to a file travels as the
//! file it names, one to a directory is refused. A workflow only a model's
//! output or a script's computed tag names (no literal tag anywhere) is not
//! found, and cannot be reached on the worker.

use std::collections::BTreeSet;
use std::io::{Cursor, Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::lint::source::LintedWorkflow;
use crate::lint::transitions::analyse;
use crate::workflow::scope::ScopeKind;
use crate::workflow::specifier::{Caller, resolve_specifier};
use crate::workflow::target::clean_lexically;
use crate::workflow::zip_scope::MAX_ENTRIES;

const MIB: u64 = 1024 * 1024;
/// The most a bundle's files may hold together, uncompressed.
pub(crate) const MAX_BUNDLE_BYTES: u64 = 16 * MIB;
/// At most this many workflows are followed from the run's (lint's guard).
const MAX_WORKFLOWS: usize = 64;

/// A run's workflows, packed: what a step request carries.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct WorkflowBundle {
    /// SHA-256 of `zip`, lowercase hex: the worker's cache key.
    pub(crate) hash: String,
    /// The deepest folder holding every scope, on the coordinator.
    pub(crate) root: PathBuf,
    /// Each scope's path under `root` (`/`-separated), the run's first.
    pub(crate) scopes: Vec<String>,
    #[serde(with = "crate::backend::session_files::base64_bytes")]
    pub(crate) zip: Vec<u8>,
}

/// Why a workflow cannot be packed or unpacked.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BundleError {
    #[error(
        "the workflow files a step needs ({scopes}) are {size} bytes, more than the {} MiB a step may carry to a \
         worker; run with `--files shared` and give the workers the same paths (NFS, or one machine)",
        MAX_BUNDLE_BYTES / MIB
    )]
    TooLarge { scopes: String, size: u64 },
    #[error("the workflow files a step needs ({scopes}) are more than {MAX_ENTRIES} files; run with `--files shared`")]
    TooManyFiles { scopes: String },
    #[error(
        "{} is a symbolic link to a directory, which a step cannot carry to a worker; make it a directory, or run with \
         `--files shared`",
        .path.display()
    )]
    LinkedDirectory { path: PathBuf },
    #[error("cannot read {}: {reason}", .path.display())]
    Unreadable { path: PathBuf, reason: String },
    #[error("the workflow bundle does not match its SHA-256: expected {expected}, found {actual}")]
    HashMismatch { expected: String, actual: String },
    #[error("the workflow bundle is damaged: {reason}")]
    Damaged { reason: String },
    #[error("cannot unpack the workflow bundle into {}: {reason}", .path.display())]
    Unpack { path: PathBuf, reason: String },
}

/// Where a bundle's root is on each side.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PathMap {
    pub(crate) coordinator_root: PathBuf,
    pub(crate) worker_root: PathBuf,
}

impl PathMap {
    /// A coordinator's path (a scope, a state file) as the worker has it;
    /// `None` outside the bundle.
    pub(crate) fn to_worker(&self, path: &Path) -> Option<PathBuf> {
        path.strip_prefix(&self.coordinator_root).ok().map(|rest| self.worker_root.join(rest))
    }

    /// A worker's path (a scope a transition resolved to) as the coordinator
    /// has it; `None` outside the bundle.
    pub(crate) fn to_coordinator(&self, path: &Path) -> Option<PathBuf> {
        path.strip_prefix(&self.worker_root).ok().map(|rest| self.coordinator_root.join(rest))
    }
}

/// Pack the workflow at `scope` and every workflow its literal cross-workflow
/// tags reach.
pub(crate) fn pack(scope: &Path) -> Result<WorkflowBundle, BundleError> {
    let scopes = reachable(&absolute(scope));
    let root = common_root(&scopes);
    let shown = || describe(&scopes);
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    for scope in &scopes {
        let relative = relative_name(scope, &root);
        match ScopeKind::of(scope) {
            ScopeKind::Directory => collect_directory(scope, &relative, &mut files)?,
            ScopeKind::Yaml | ScopeKind::Zip => files.push((relative, scope.clone())),
        }
        if files.len() as u64 > MAX_ENTRIES {
            return Err(BundleError::TooManyFiles { scopes: shown() });
        }
    }
    files.sort();
    files.dedup_by(|a, b| a.0 == b.0);
    let mut total: u64 = 0;
    for (_, path) in &files {
        let metadata = std::fs::metadata(path).map_err(|error| unreadable(path, error))?;
        total = total.saturating_add(metadata.len());
    }
    if total > MAX_BUNDLE_BYTES {
        return Err(BundleError::TooLarge { scopes: shown(), size: total });
    }
    let zip = write_zip(&files)?;
    let hash = hex(&Sha256::digest(&zip));
    let scopes = scopes.iter().map(|scope| relative_name(scope, &root)).collect();
    Ok(WorkflowBundle { hash, root, scopes, zip })
}

/// Unpack `bundle` on a worker into `<worker_dir>/workflows/<hash>/` (once:
/// an unpacked bundle is used as it is) and say where its root is.
pub(crate) fn unpack(bundle: &WorkflowBundle, worker_dir: &Path) -> Result<PathMap, BundleError> {
    let actual = hex(&Sha256::digest(&bundle.zip));
    if actual != bundle.hash || !is_hex_hash(&bundle.hash) {
        return Err(BundleError::HashMismatch { expected: bundle.hash.clone(), actual });
    }
    let cache = worker_dir.join("workflows");
    let target = cache.join(&bundle.hash);
    let map = PathMap { coordinator_root: bundle.root.clone(), worker_root: target.clone() };
    if target.is_dir() {
        return Ok(map);
    }
    let failed = |path: &Path, error: std::io::Error| BundleError::Unpack {
        path: path.to_path_buf(),
        reason: error.to_string(),
    };
    std::fs::create_dir_all(&cache).map_err(|error| failed(&cache, error))?;
    let incoming =
        tempfile::Builder::new().prefix(".incoming-").tempdir_in(&cache).map_err(|error| failed(&cache, error))?;
    extract(&bundle.zip, incoming.path())?;
    match std::fs::rename(incoming.path(), &target) {
        Ok(()) => {
            // Renamed away: nothing left for the guard to remove.
            let _ = incoming.keep();
            Ok(map)
        }
        // Another step unpacked the same bundle first; its copy is the same.
        Err(_) if target.is_dir() => Ok(map),
        Err(error) => Err(failed(&target, error)),
    }
}

/// The run's scope and the workflows reachable from it through literal
/// cross-workflow tags, each once, the run's first.
fn reachable(scope: &Path) -> Vec<PathBuf> {
    let mut found = vec![scope.to_path_buf()];
    let mut seen: BTreeSet<PathBuf> = found.iter().cloned().collect();
    let mut next = 0;
    while next < found.len() && found.len() < MAX_WORKFLOWS {
        let current = found[next].clone();
        next += 1;
        let Ok(workflow) = LintedWorkflow::open(&current, current.display().to_string()) else { continue };
        for file in &workflow.listing {
            let Ok(text) = workflow.read(file) else { continue };
            for transition in analyse(text).transitions.iter().filter(|transition| transition.kind.is_cross_workflow())
            {
                let Ok(entry) = resolve_specifier(&transition.target, Caller::local(&current)) else { continue };
                if entry.url.is_none() && seen.insert(entry.scope_dir.clone()) {
                    found.push(entry.scope_dir);
                }
            }
        }
    }
    found
}

/// The deepest folder holding every scope (a scope is never its own root: its
/// name must travel).
fn common_root(scopes: &[PathBuf]) -> PathBuf {
    let parents: Vec<&Path> = scopes.iter().map(|scope| scope.parent().unwrap_or(Path::new("/"))).collect();
    let mut root = parents.first().map_or_else(|| PathBuf::from("/"), |parent| parent.to_path_buf());
    while !parents.iter().all(|parent| parent.starts_with(&root)) {
        if !root.pop() {
            break;
        }
    }
    root
}

fn relative_name(path: &Path, root: &Path) -> String {
    let relative = path.strip_prefix(root).unwrap_or(path);
    relative.components().map(|part| part.as_os_str().to_string_lossy().into_owned()).collect::<Vec<_>>().join("/")
}

fn describe(scopes: &[PathBuf]) -> String {
    let first = scopes.first().map(|scope| format!("`{}`", scope.display())).unwrap_or_default();
    match scopes.len() {
        0 | 1 => first,
        2 => format!("{first} and 1 workflow it calls"),
        count => format!("{first} and {} workflows it calls", count - 1),
    }
}

/// Every regular file under `dir` (symlinks to files followed; `.git` and
/// `.baton` folders left out), as (`prefix/…`, path).
fn collect_directory(dir: &Path, prefix: &str, files: &mut Vec<(String, PathBuf)>) -> Result<(), BundleError> {
    let mut pending = vec![(dir.to_path_buf(), prefix.to_string())];
    while let Some((dir, prefix)) = pending.pop() {
        for entry in std::fs::read_dir(&dir).map_err(|error| unreadable(&dir, error))? {
            let entry = entry.map_err(|error| unreadable(&dir, error))?;
            let path = entry.path();
            let Some(name) = entry.file_name().to_str().map(str::to_string) else { continue };
            let name = format!("{prefix}/{name}");
            let kind = entry.file_type().map_err(|error| unreadable(&path, error))?;
            let followed = if kind.is_symlink() {
                match std::fs::metadata(&path) {
                    Ok(target) if target.is_dir() => return Err(BundleError::LinkedDirectory { path }),
                    Ok(target) => target.file_type(),
                    // A dangling link: a local run could not read it either.
                    Err(_) => continue,
                }
            } else {
                kind
            };
            if followed.is_dir() {
                // A workflow kept at a project's top: its repository and runs are no workflow files.
                if !matches!(entry.file_name().to_str(), Some(".git" | ".baton")) {
                    pending.push((path, name));
                }
            } else if followed.is_file() {
                files.push((name, path));
            }
            if files.len() as u64 > MAX_ENTRIES {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// The zip of `files` (sorted by name), the same bytes for the same contents.
fn write_zip(files: &[(String, PathBuf)]) -> Result<Vec<u8>, BundleError> {
    let damaged = |reason: String| BundleError::Damaged { reason };
    let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for (name, path) in files {
        let bytes = std::fs::read(path).map_err(|error| unreadable(path, error))?;
        let mode = executable_mode(path);
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .last_modified_time(zip::DateTime::default())
            .unix_permissions(mode);
        writer.start_file(name.as_str(), options).map_err(|error| damaged(error.to_string()))?;
        writer.write_all(&bytes).map_err(|error| damaged(error.to_string()))?;
    }
    let cursor = writer.finish().map_err(|error| damaged(error.to_string()))?;
    Ok(cursor.into_inner())
}

#[cfg(unix)]
fn executable_mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path).map(|metadata| metadata.permissions().mode()).unwrap_or(0o644);
    if mode & 0o111 != 0 { 0o755 } else { 0o644 }
}

#[cfg(not(unix))]
fn executable_mode(_path: &Path) -> u32 {
    0o644
}

/// Extract `zip` into `dir`, within the bounds packing keeps (a bundle comes
/// over the network: its entries' names and sizes are checked again).
fn extract(zip: &[u8], dir: &Path) -> Result<(), BundleError> {
    let damaged = |reason: String| BundleError::Damaged { reason };
    let mut archive = zip::ZipArchive::new(Cursor::new(zip)).map_err(|error| damaged(error.to_string()))?;
    if archive.len() as u64 > MAX_ENTRIES {
        return Err(damaged(format!("{} entries, more than {MAX_ENTRIES}", archive.len())));
    }
    let mut total: u64 = 0;
    for index in 0..archive.len() {
        let mut entry = archive.by_index(index).map_err(|error| damaged(error.to_string()))?;
        let Some(relative) = entry.enclosed_name() else {
            return Err(damaged(format!("entry `{}` points outside the bundle", entry.name().escape_debug())));
        };
        let path = dir.join(relative);
        let failed = |error: std::io::Error| BundleError::Unpack { path: path.clone(), reason: error.to_string() };
        if entry.is_dir() {
            std::fs::create_dir_all(&path).map_err(failed)?;
            continue;
        }
        let left = MAX_BUNDLE_BYTES.saturating_sub(total);
        let mut bytes = Vec::new();
        (&mut entry).take(left + 1).read_to_end(&mut bytes).map_err(|error| damaged(error.to_string()))?;
        total += bytes.len() as u64;
        if total > MAX_BUNDLE_BYTES {
            return Err(damaged(format!("more than {} MiB uncompressed", MAX_BUNDLE_BYTES / MIB)));
        }
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(failed)?;
        }
        std::fs::write(&path, &bytes).map_err(failed)?;
        #[cfg(unix)]
        if let Some(mode) = entry.unix_mode() {
            use std::os::unix::fs::PermissionsExt;
            let mode = if mode & 0o111 != 0 { 0o755 } else { 0o644 };
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).map_err(failed)?;
        }
    }
    Ok(())
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).map_or_else(|_| path.to_path_buf(), |path| clean_lexically(&path))
}

fn unreadable(path: &Path, error: std::io::Error) -> BundleError {
    BundleError::Unreadable { path: path.to_path_buf(), reason: error.to_string() }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

fn is_hex_hash(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|byte| byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte))
}

#[cfg(test)]
mod tests;
