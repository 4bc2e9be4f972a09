//! Zip workflows: a workflow directory shipped as one archive (R1.3, R1.4, R1.15).
//!
//! The archive is read, never extracted: its state files are listed and read in
//! memory, so a hostile entry name (`../x`, `/etc/x`) could not write anywhere, and
//! is refused anyway so that a broken archive is reported as such. A file name that
//! holds a 64-character hex run pins the archive's SHA-256 (`review-<sha256>.zip`):
//! it is checked every time the archive is opened, before anything in it runs.

use std::io::{Cursor, Read};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::workflow::state_name;

/// Whether `scope` names a zip workflow (R1.1: by extension, any case).
pub(crate) fn is_zip_scope(scope: &Path) -> bool {
    state_name::extension(scope.to_str().unwrap_or_default()).eq_ignore_ascii_case(".zip")
}

/// An opened, checked zip workflow: its files by name (the single top folder, if
/// any, stripped) and their contents.
#[derive(Debug)]
pub(crate) struct ZipWorkflow {
    files: Vec<(String, Vec<u8>)>,
}

/// Why a zip workflow cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ZipError {
    #[error("cannot read zip workflow `{}`: {reason}", .path.display())]
    Read { path: PathBuf, reason: String },
    #[error(
        "zip workflow `{}` does not match the SHA-256 in its name: expected {expected}, found {actual}; \
         the file was changed or damaged",
        .path.display()
    )]
    HashMismatch { path: PathBuf, expected: String, actual: String },
    #[error("zip workflow `{}`: its name is ambiguous: {reason}", .path.display())]
    AmbiguousName { path: PathBuf, reason: String },
    #[error("zip workflow `{}`: {reason}", .path.display())]
    Layout { path: PathBuf, reason: String },
}

impl ZipWorkflow {
    /// Open `path`: check the pinned hash (R1.4), then the layout (R1.3).
    pub(crate) fn load(path: &Path) -> Result<ZipWorkflow, ZipError> {
        let bytes = std::fs::read(path)
            .map_err(|error| ZipError::Read { path: path.to_path_buf(), reason: error.to_string() })?;
        if let Some(expected) = pinned_hash(path)? {
            let actual = sha256_hex(&bytes);
            if actual != expected {
                return Err(ZipError::HashMismatch { path: path.to_path_buf(), expected, actual });
            }
        }
        let layout = |reason: String| ZipError::Layout { path: path.to_path_buf(), reason };
        let mut archive = zip::ZipArchive::new(Cursor::new(bytes))
            .map_err(|error| layout(format!("not a readable zip archive ({error})")))?;
        let mut entries = Vec::new();
        for index in 0..archive.len() {
            let mut entry =
                archive.by_index(index).map_err(|error| layout(format!("entry {index} is unreadable ({error})")))?;
            let name = entry.name().to_string();
            if entry.enclosed_name().is_none() || name.starts_with('/') || name.contains('\\') {
                return Err(layout(format!("entry `{name}` points outside the archive; it is refused")));
            }
            if entry.is_dir() {
                continue;
            }
            let mut contents = Vec::new();
            entry
                .read_to_end(&mut contents)
                .map_err(|error| layout(format!("entry `{name}` is unreadable ({error})")))?;
            entries.push((name, contents));
        }
        Ok(ZipWorkflow { files: strip_layout(entries).map_err(layout)? })
    }

    /// The state files' names (R1.15 resolves over them).
    pub(crate) fn listing(&self) -> Vec<String> {
        self.files.iter().map(|(name, _)| name.clone()).collect()
    }

    /// The contents of file `name`, as text.
    pub(crate) fn text(&self, name: &str) -> Option<Result<String, String>> {
        let (_, bytes) = self.files.iter().find(|(file, _)| file == name)?;
        Some(String::from_utf8(bytes.clone()).map_err(|_| format!("`{name}` in the archive is not UTF-8 text")))
    }
}

/// The SHA-256 of `bytes` in lowercase hex, as file names pin it.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|byte| format!("{byte:02x}")).collect()
}

/// R1.4: the SHA-256 a file name pins, if any: the one lowercase-hex run of exactly
/// 64 characters in its basename.
fn pinned_hash(path: &Path) -> Result<Option<String>, ZipError> {
    let name = path.file_name().map(|name| name.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    let runs: Vec<&str> = name.split(|c: char| !c.is_ascii_hexdigit()).filter(|run| !run.is_empty()).collect();
    let ambiguous = |reason: String| ZipError::AmbiguousName { path: path.to_path_buf(), reason };
    if runs.iter().any(|run| run.len() > 64) {
        return Err(ambiguous("a hex run longer than 64 characters cannot be a SHA-256".into()));
    }
    let pins: Vec<&&str> = runs.iter().filter(|run| run.len() == 64).collect();
    match pins.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(one.to_string())),
        _ => Err(ambiguous("it holds two 64-character hex runs; which is the SHA-256?".into())),
    }
}

/// R1.3: flat (every file at the root) or single-folder (every file one level
/// inside one folder, which is stripped).
fn strip_layout(entries: Vec<(String, Vec<u8>)>) -> Result<Vec<(String, Vec<u8>)>, String> {
    if entries.is_empty() {
        return Err("the archive holds no files".into());
    }
    let depth = |name: &str| name.matches('/').count();
    if entries.iter().all(|(name, _)| depth(name) == 0) {
        return Ok(entries);
    }
    if entries.iter().any(|(name, _)| depth(name) == 0) {
        return Err("files at the root are mixed with a folder; put every file at the root or in one folder".into());
    }
    if let Some((deep, _)) = entries.iter().find(|(name, _)| depth(name) > 1) {
        return Err(format!("`{deep}` is nested more than one folder deep; states sit at the root or in one folder"));
    }
    let folder = |name: &str| name.split('/').next().unwrap_or_default().to_string();
    let first = folder(&entries[0].0);
    if let Some((other, _)) = entries.iter().find(|(name, _)| folder(name) != first) {
        return Err(format!("more than one top-level folder (`{first}/` and `{}/`); use one", folder(other)));
    }
    Ok(entries
        .into_iter()
        .map(|(name, contents)| (name.split_once('/').map_or(name.clone(), |(_, rest)| rest.to_string()), contents))
        .collect())
}

#[cfg(test)]
pub(crate) mod tests {
    use std::io::Write;

    use super::*;

    /// A zip archive holding `files` (name, contents), stored.
    pub(crate) fn archive(files: &[(&str, &str)]) -> Vec<u8> {
        let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
        for (name, contents) in files {
            if name.ends_with('/') {
                writer.add_directory(name.trim_end_matches('/'), options).expect("directory");
            } else {
                writer.start_file(*name, options).expect("start");
                writer.write_all(contents.as_bytes()).expect("write");
            }
        }
        writer.finish().expect("finish").into_inner()
    }

    fn load(name: &str, bytes: &[u8]) -> Result<ZipWorkflow, ZipError> {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).expect("write");
        ZipWorkflow::load(&path).map_err(|error| match error {
            // Keep messages independent of the temp dir.
            ZipError::Layout { reason, .. } => ZipError::Layout { path: PathBuf::from(name), reason },
            ZipError::HashMismatch { expected, actual, .. } => {
                ZipError::HashMismatch { path: PathBuf::from(name), expected, actual }
            }
            ZipError::AmbiguousName { reason, .. } => ZipError::AmbiguousName { path: PathBuf::from(name), reason },
            other => other,
        })
    }

    #[test]
    fn r1_3_flat_and_single_folder_layouts_list_the_same_states() {
        let flat = load("w.zip", &archive(&[("START.md", "go"), ("CHECK.sh", "echo")])).expect("flat");
        assert_eq!(flat.listing(), ["START.md", "CHECK.sh"]);
        let folder =
            load("w.zip", &archive(&[("wf/", ""), ("wf/START.md", "go"), ("wf/CHECK.sh", "echo")])).expect("folder");
        assert_eq!(folder.listing(), ["START.md", "CHECK.sh"]);
        assert_eq!(folder.text("START.md"), Some(Ok("go".to_string())));
        assert_eq!(folder.text("NOPE.md"), None);
    }

    #[test]
    fn r1_3_bad_layouts_are_refused_with_the_reason() {
        let message = |files: &[(&str, &str)]| load("w.zip", &archive(files)).unwrap_err().to_string();
        assert_eq!(message(&[("d/", "")]), "zip workflow `w.zip`: the archive holds no files");
        assert_eq!(
            message(&[("a/START.md", "x"), ("b/X.md", "y")]),
            "zip workflow `w.zip`: more than one top-level folder (`a/` and `b/`); use one"
        );
        assert_eq!(
            message(&[("START.md", "x"), ("a/X.md", "y")]),
            "zip workflow `w.zip`: files at the root are mixed with a folder; put every file at the root or in one folder"
        );
        assert_eq!(
            message(&[("a/b/START.md", "x")]),
            "zip workflow `w.zip`: `a/b/START.md` is nested more than one folder deep; states sit at the root or in one \
             folder"
        );
        assert_eq!(
            message(&[("../START.md", "x")]),
            "zip workflow `w.zip`: entry `../START.md` points outside the archive; it is refused"
        );
        assert!(
            load("w.zip", b"not a zip")
                .unwrap_err()
                .to_string()
                .starts_with("zip workflow `w.zip`: not a readable zip archive")
        );
    }

    #[test]
    fn r1_4_a_pinned_hash_is_checked() {
        let bytes = archive(&[("START.md", "go")]);
        let good = sha256_hex(&bytes);
        assert!(load(&format!("review-{good}.zip"), &bytes).is_ok());
        assert!(load(&format!("review-{}.zip", good.to_uppercase()), &bytes).is_ok(), "any case in the name");
        let wrong = "0".repeat(64);
        assert_eq!(
            load(&format!("review-{wrong}.zip"), &bytes).unwrap_err().to_string(),
            format!(
                "zip workflow `review-{wrong}.zip` does not match the SHA-256 in its name: expected {wrong}, found {good}; \
                 the file was changed or damaged"
            )
        );
        assert!(load(&format!("x-{wrong}-{wrong}.zip"), &bytes).unwrap_err().to_string().contains("two 64-character"));
        assert!(load(&format!("x-{wrong}0.zip"), &bytes).unwrap_err().to_string().contains("longer than 64"));
        assert!(load("review-abc123.zip", &bytes).is_ok(), "a short hex run pins nothing");
    }
}
