//! Zip workflows: a workflow directory shipped as one archive (R1.3, R1.4, R1.15).
//!
//! The archive is read, never extracted: its state files are listed and read in
//! memory, so a hostile entry name (`../x`, `/etc/x`) could not write anywhere, and
//! is refused anyway so that a broken archive is reported as such. A file name that
//! holds a 64-character hex run pins the archive's SHA-256 (`review-<sha256>.zip`):
//! it is checked every time the archive is opened, before anything in it runs.
//!
//! An archive is untrusted input that can inflate a thousandfold, so every size
//! is bounded (`docs/format.md`, "Zip workflows"): the archive file, the number of
//! entries and the uncompressed size of each entry and of all of them, which are
//! checked against the central directory when the archive is opened and again
//! while an entry is inflated (a header can lie). Opening lists the entries from
//! the central directory and inflates nothing; an entry is inflated when a step
//! first reads it. An opened archive is kept for as long as its file is unchanged
//! (same size, times and inode), so a run reads it once, not once per step; a
//! changed file is opened, and its pinned hash checked, again.

use std::collections::{HashMap, HashSet};
use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use sha2::{Digest, Sha256};

use crate::bounded_read::{read_at_most, read_file_at_most};
use crate::workflow::kept::{KeptByPath, Stamp};

const MIB: u64 = 1024 * 1024;
/// The largest uncompressed entry: far more than any state file needs.
pub(crate) const MAX_ENTRY_BYTES: u64 = 4 * MIB;
/// The largest uncompressed archive, every entry together.
pub(crate) const MAX_TOTAL_BYTES: u64 = 32 * MIB;
/// The most entries, directories included.
pub(crate) const MAX_ENTRIES: u64 = 10_000;
/// The largest archive file: the uncompressed total plus room for the headers
/// of every entry (stored entries do not shrink).
pub(crate) const MAX_ARCHIVE_BYTES: u64 = MAX_TOTAL_BYTES + 4 * MIB;
/// How many opened archives are kept: a run calls few, and the daemon's listing
/// need not keep every archive under its roots in memory.
const KEPT_ARCHIVES: usize = 4;

/// An opened, checked zip workflow: its files by name (the single top folder, if
/// any, stripped), inflated when first read.
#[derive(Debug)]
pub(crate) struct ZipWorkflow {
    path: PathBuf,
    /// The archive over the file's bytes, as read (and hash-checked) once.
    archive: zip::ZipArchive<Cursor<Arc<[u8]>>>,
    /// The names in the workflow, in archive order, made once for `listing` (a
    /// run lists at every step).
    names: Arc<[String]>,
    /// Each name's index in the archive.
    by_name: HashMap<String, usize>,
    /// The entries inflated so far, and their bytes together.
    inflated: Mutex<Inflated>,
}

#[derive(Debug, Default)]
struct Inflated {
    texts: HashMap<usize, Result<Arc<str>, ZipError>>,
    bytes: u64,
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
    #[error("zip workflow `{}` is {size} bytes; an archive may be at most {} MiB", .path.display(), MAX_ARCHIVE_BYTES / MIB)]
    ArchiveTooLarge { path: PathBuf, size: u64 },
    #[error("zip workflow `{}` holds {count} entries; an archive may hold at most {MAX_ENTRIES}", .path.display())]
    TooManyEntries { path: PathBuf, count: u64 },
    #[error(
        "zip workflow `{}`: entry `{entry}` is larger than {} MiB uncompressed, the most one entry may hold",
        .path.display(), MAX_ENTRY_BYTES / MIB
    )]
    EntryTooLarge { path: PathBuf, entry: String },
    #[error(
        "zip workflow `{}`: its entries are larger than {} MiB uncompressed together, the most an archive may hold",
        .path.display(), MAX_TOTAL_BYTES / MIB
    )]
    TotalTooLarge { path: PathBuf },
    #[error("zip workflow `{}`: entry `{entry}` appears twice", .path.display())]
    DuplicateEntry { path: PathBuf, entry: String },
    #[error("zip workflow `{}`: entry `{entry}` is not UTF-8 text", .path.display())]
    NotText { path: PathBuf, entry: String },
}

/// The archives opened in this process, by path, while their files are unchanged.
static OPENED: LazyLock<KeptByPath<Stamp, Arc<ZipWorkflow>>> = LazyLock::new(|| KeptByPath::new(KEPT_ARCHIVES));

impl ZipWorkflow {
    /// Open `path`: check its size and the pinned hash (R1.4), then its entries
    /// and layout (R1.3). An unchanged archive opened before is not read again.
    pub(crate) fn open(path: &Path) -> Result<Arc<ZipWorkflow>, ZipError> {
        let read_error = |error: std::io::Error| ZipError::Read { path: path.to_path_buf(), reason: error.to_string() };
        let stamp = Stamp::of(&std::fs::metadata(path).map_err(read_error)?);
        if let Some(workflow) = OPENED.find(path, |seen, _| *seen == stamp) {
            return Ok(workflow);
        }
        let workflow = Arc::new(ZipWorkflow::load(path, stamp.len())?);
        OPENED.keep(path, stamp, Arc::clone(&workflow));
        Ok(workflow)
    }

    /// Read and check `path`, `len` bytes long when looked at.
    fn load(path: &Path, len: u64) -> Result<ZipWorkflow, ZipError> {
        let read_error = |error: std::io::Error| ZipError::Read { path: path.to_path_buf(), reason: error.to_string() };
        let too_large = |size: u64| ZipError::ArchiveTooLarge { path: path.to_path_buf(), size };
        if len > MAX_ARCHIVE_BYTES {
            return Err(too_large(len));
        }
        let bytes = std::fs::File::open(path)
            .and_then(|file| read_file_at_most(file, MAX_ARCHIVE_BYTES))
            .map_err(read_error)?
            .ok_or_else(|| too_large(MAX_ARCHIVE_BYTES + 1))?;
        if let Some(expected) = pinned_hash(path)? {
            let actual = sha256_hex(&bytes);
            if actual != expected {
                return Err(ZipError::HashMismatch { path: path.to_path_buf(), expected, actual });
            }
        }
        let layout = |reason: String| ZipError::Layout { path: path.to_path_buf(), reason };
        if let Some(count) = declared_entries(&bytes)
            && count > MAX_ENTRIES
        {
            return Err(ZipError::TooManyEntries { path: path.to_path_buf(), count });
        }
        let bytes: Arc<[u8]> = bytes.into();
        let mut archive = zip::ZipArchive::new(Cursor::new(Arc::clone(&bytes)))
            .map_err(|error| layout(format!("not a readable zip archive ({error})")))?;
        if let Some(entry) = first_duplicate(&bytes, archive.central_directory_start()) {
            return Err(ZipError::DuplicateEntry { path: path.to_path_buf(), entry });
        }
        let mut entries = Vec::new();
        let mut total: u64 = 0;
        for index in 0..archive.len() {
            let entry = archive
                .by_index_raw(index)
                .map_err(|error| layout(format!("entry {index} is unreadable ({error})")))?;
            let name = entry.name().to_string();
            if entry.enclosed_name().is_none() || name.starts_with('/') || name.contains('\\') {
                return Err(layout(format!("entry `{name}` points outside the archive; it is refused")));
            }
            if name.chars().any(char::is_control) {
                // Printed as it is, a name could move the cursor or recolour the
                // terminal of whoever lists the workflow.
                let shown = name.escape_debug();
                return Err(layout(format!("entry `{shown}` has a control character in its name; it is refused")));
            }
            if entry.is_dir() {
                continue;
            }
            if entry.size() > MAX_ENTRY_BYTES {
                return Err(ZipError::EntryTooLarge { path: path.to_path_buf(), entry: name });
            }
            total = total.saturating_add(entry.size());
            if total > MAX_TOTAL_BYTES {
                return Err(ZipError::TotalTooLarge { path: path.to_path_buf() });
            }
            entries.push((name, index));
        }
        let files = strip_layout(entries).map_err(layout)?;
        let names = files.iter().map(|(name, _)| name.clone()).collect();
        let mut by_name = HashMap::with_capacity(files.len());
        for (name, index) in files {
            // The first of two names that decode alike (duplicates are refused by
            // their bytes) is the one read, as a search in archive order would.
            by_name.entry(name).or_insert(index);
        }
        Ok(ZipWorkflow { path: path.to_path_buf(), archive, names, by_name, inflated: Mutex::default() })
    }

    /// The state files' names (R1.15 resolves over them).
    pub(crate) fn listing(&self) -> Arc<[String]> {
        Arc::clone(&self.names)
    }

    /// The contents of file `name`, as text: inflated when first asked for, never
    /// past the limits whatever the headers say.
    pub(crate) fn text(&self, name: &str) -> Option<Result<Arc<str>, ZipError>> {
        let index = *self.by_name.get(name)?;
        let mut inflated = self.inflated.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(text) = inflated.texts.get(&index) {
            return Some(text.clone());
        }
        let text = self.inflate(index, &mut inflated.bytes);
        inflated.texts.insert(index, text.clone());
        Some(text)
    }

    /// Entry `index` inflated, counted into `total`.
    fn inflate(&self, index: usize, total: &mut u64) -> Result<Arc<str>, ZipError> {
        let mut archive = self.archive.clone();
        let entry_name = archive.name_for_index(index).unwrap_or_default().to_string();
        let unreadable = |error: &dyn std::fmt::Display| ZipError::Layout {
            path: self.path.clone(),
            reason: format!("entry `{entry_name}` is unreadable ({error})"),
        };
        let mut entry = archive.by_index(index).map_err(|error| unreadable(&error))?;
        let Some(contents) = read_at_most(&mut entry, MAX_ENTRY_BYTES).map_err(|error| unreadable(&error))? else {
            return Err(ZipError::EntryTooLarge { path: self.path.clone(), entry: entry_name });
        };
        let size = contents.len() as u64;
        if total.saturating_add(size) > MAX_TOTAL_BYTES {
            return Err(ZipError::TotalTooLarge { path: self.path.clone() });
        }
        *total += size;
        String::from_utf8(contents)
            .map(Arc::from)
            .map_err(|_| ZipError::NotText { path: self.path.clone(), entry: entry_name })
    }
}

/// The number of entries the end-of-central-directory record declares (its
/// ZIP64 form when the short one overflows), read before the directory itself
/// so that a huge count is refused before anything is allocated for it.
fn declared_entries(bytes: &[u8]) -> Option<u64> {
    const RECORD: &[u8] = b"PK\x05\x06";
    let last = bytes.len().checked_sub(22)?;
    let first = last.saturating_sub(u16::MAX as usize);
    let at = (first..=last).rev().find(|&at| bytes.get(at..at + 4) == Some(RECORD))?;
    let short = u16::from_le_bytes(bytes.get(at + 10..at + 12)?.try_into().ok()?);
    if short != u16::MAX {
        return Some(u64::from(short));
    }
    let locator = bytes.get(at.checked_sub(20)?..at)?;
    if &locator[..4] != b"PK\x06\x07" {
        return Some(u64::from(short));
    }
    let record_at = usize::try_from(u64::from_le_bytes(locator[8..16].try_into().ok()?)).ok()?;
    let record = bytes.get(record_at..record_at.checked_add(40)?)?;
    if &record[..4] != b"PK\x06\x06" {
        return Some(u64::from(short));
    }
    Some(u64::from_le_bytes(record[32..40].try_into().ok()?))
}

/// The first file name the central directory at `start` lists twice. The zip
/// library keeps one entry per name, so the directory's records are read here.
fn first_duplicate(bytes: &[u8], start: u64) -> Option<String> {
    const HEADER: &[u8] = b"PK\x01\x02";
    let field =
        |at: usize| -> Option<usize> { Some(u16::from_le_bytes(bytes.get(at..at + 2)?.try_into().ok()?).into()) };
    let mut at = usize::try_from(start).ok()?;
    let mut seen = HashSet::new();
    while bytes.get(at..at + 4) == Some(HEADER) {
        let (name_len, extra_len, comment_len) = (field(at + 28)?, field(at + 30)?, field(at + 32)?);
        let name = bytes.get(at + 46..at + 46 + name_len)?;
        if !name.ends_with(b"/") && !seen.insert(name) {
            return Some(String::from_utf8_lossy(name).into_owned());
        }
        at += 46 + name_len + extra_len + comment_len;
    }
    None
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
fn strip_layout<T>(entries: Vec<(String, T)>) -> Result<Vec<(String, T)>, String> {
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
        .map(|(name, value)| (name.split_once('/').map_or(name.clone(), |(_, rest)| rest.to_string()), value))
        .collect())
}

#[cfg(test)]
pub(crate) mod tests {
    use std::io::{Read, Write};

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

    /// Open `bytes` as an archive named `name`; messages name it as `name`, not
    /// by its temporary path.
    fn load(name: &str, bytes: &[u8]) -> Result<Arc<ZipWorkflow>, String> {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).expect("write");
        ZipWorkflow::open(&path).map_err(|error| error.to_string().replace(&format!("{}/", dir.path().display()), ""))
    }

    /// An archive of `name` holding `size` zero bytes, deflated (a few KiB).
    fn zeros(name: &str, size: u64) -> Vec<u8> {
        let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Deflated)
            .large_file(size >= u64::from(u32::MAX));
        writer.start_file(name, options).expect("start");
        std::io::copy(&mut std::io::repeat(0).take(size), &mut writer).expect("write");
        writer.finish().expect("finish").into_inner()
    }

    /// `bytes` with every central-directory record's uncompressed size set to
    /// `size`: a header that lies.
    fn declaring(mut bytes: Vec<u8>, size: u32) -> Vec<u8> {
        let records: Vec<usize> =
            bytes.windows(4).enumerate().filter(|(_, w)| w == b"PK\x01\x02").map(|(at, _)| at).collect();
        for at in records {
            bytes[at + 24..at + 28].copy_from_slice(&size.to_le_bytes());
        }
        bytes
    }

    /// `bytes` with every occurrence of `from` replaced by `to` (same length).
    fn renamed(bytes: Vec<u8>, from: &str, to: &str) -> Vec<u8> {
        let (from, to) = (from.as_bytes(), to.as_bytes());
        let mut out = bytes;
        let mut at = 0;
        while let Some(found) = out[at..].windows(from.len()).position(|w| w == from) {
            out[at + found..at + found + to.len()].copy_from_slice(to);
            at += found + to.len();
        }
        out
    }

    #[test]
    fn r1_3_flat_and_single_folder_layouts_list_the_same_states() {
        let flat = load("w.zip", &archive(&[("START.md", "go"), ("CHECK.sh", "echo")])).expect("flat");
        assert_eq!(flat.listing().to_vec(), ["START.md", "CHECK.sh"]);
        let folder =
            load("w.zip", &archive(&[("wf/", ""), ("wf/START.md", "go"), ("wf/CHECK.sh", "echo")])).expect("folder");
        assert_eq!(folder.listing().to_vec(), ["START.md", "CHECK.sh"]);
        assert_eq!(folder.text("START.md"), Some(Ok(Arc::from("go"))));
        assert_eq!(folder.text("NOPE.md"), None);
    }

    #[test]
    fn every_name_of_a_large_archive_reads_its_own_entry_and_the_listing_is_made_once() {
        // `text` looks a name up in a map made when the archive is opened; a
        // linear search over every entry ran at each step before.
        let files: Vec<(String, String)> = (0..500).map(|n| (format!("wf/S{n}.md"), format!("state {n}"))).collect();
        let files: Vec<(&str, &str)> = files.iter().map(|(name, text)| (name.as_str(), text.as_str())).collect();
        let workflow = load("w.zip", &archive(&files)).expect("valid");
        assert!(Arc::ptr_eq(&workflow.listing(), &workflow.listing()), "the names are made once");
        assert_eq!(workflow.listing().len(), 500);
        for n in [0, 1, 250, 499] {
            assert_eq!(workflow.text(&format!("S{n}.md")), Some(Ok(Arc::from(format!("state {n}").as_str()))));
        }
        assert_eq!(workflow.text("wf/S1.md"), None, "names are the stripped ones");
    }

    #[test]
    fn r1_3_bad_layouts_are_refused_with_the_reason() {
        let message = |files: &[(&str, &str)]| load("w.zip", &archive(files)).unwrap_err();
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

    #[test]
    fn an_entry_declared_larger_than_the_limit_is_refused_when_the_archive_is_opened() {
        assert!(load("w.zip", &zeros("START.md", MAX_ENTRY_BYTES)).is_ok(), "the limit itself is allowed");
        assert_eq!(
            load("w.zip", &zeros("START.md", MAX_ENTRY_BYTES + 1)).unwrap_err(),
            "zip workflow `w.zip`: entry `START.md` is larger than 4 MiB uncompressed, the most one entry may hold"
        );
    }

    #[test]
    fn an_entry_whose_header_lies_is_cut_off_while_it_is_inflated() {
        let workflow =
            load("w.zip", &declaring(zeros("START.md", MAX_ENTRY_BYTES + 1), 10)).expect("the header says 10");
        let error = workflow.text("START.md").expect("listed").unwrap_err();
        assert_eq!(
            error.to_string().replace(&format!("{}", workflow.path.display()), "w.zip"),
            "zip workflow `w.zip`: entry `START.md` is larger than 4 MiB uncompressed, the most one entry may hold"
        );
    }

    #[test]
    fn entries_declared_larger_than_the_total_limit_are_refused() {
        let files: Vec<(String, &str)> = (0..9).map(|n| (format!("S{n}.md"), "x")).collect();
        let files: Vec<(&str, &str)> = files.iter().map(|(name, text)| (name.as_str(), *text)).collect();
        let four_mib = u32::try_from(MAX_ENTRY_BYTES).expect("small");
        assert_eq!(
            load("w.zip", &declaring(archive(&files), four_mib)).unwrap_err(),
            "zip workflow `w.zip`: its entries are larger than 32 MiB uncompressed together, the most an archive may hold"
        );
    }

    #[test]
    fn an_archive_declaring_too_many_entries_is_refused_before_they_are_read() {
        let mut bytes = archive(&[("START.md", "go")]);
        let end = bytes.len() - 22;
        assert_eq!(&bytes[end..end + 4], b"PK\x05\x06");
        bytes[end + 8..end + 12].copy_from_slice(&[0x11, 0x27, 0x11, 0x27]);
        assert_eq!(
            load("w.zip", &bytes).unwrap_err(),
            "zip workflow `w.zip` holds 10001 entries; an archive may hold at most 10000"
        );
    }

    #[test]
    fn an_archive_file_larger_than_the_limit_is_refused_unread() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("w.zip");
        std::fs::File::create(&path).and_then(|file| file.set_len(MAX_ARCHIVE_BYTES + 1)).expect("sparse file");
        assert_eq!(
            ZipWorkflow::open(&path).unwrap_err(),
            ZipError::ArchiveTooLarge { path: path.clone(), size: MAX_ARCHIVE_BYTES + 1 }
        );
        assert_eq!(
            ZipWorkflow::open(&path).unwrap_err().to_string(),
            format!("zip workflow `{}` is 37748737 bytes; an archive may be at most 36 MiB", path.display())
        );
    }

    #[test]
    fn zip_entries_with_duplicate_names_are_refused() {
        let bytes = renamed(archive(&[("START.md", "one"), ("STARX.md", "two")]), "STARX.md", "START.md");
        assert_eq!(load("w.zip", &bytes).unwrap_err(), "zip workflow `w.zip`: entry `START.md` appears twice");
        let bytes = renamed(archive(&[("wf/START.md", "one"), ("wf/STARX.md", "two")]), "STARX.md", "START.md");
        assert_eq!(load("w.zip", &bytes).unwrap_err(), "zip workflow `w.zip`: entry `wf/START.md` appears twice");
    }

    #[test]
    fn an_unchanged_archive_is_opened_once_and_a_changed_one_again() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("w.zip");
        std::fs::write(&path, archive(&[("START.md", "one")])).expect("write");
        let first = ZipWorkflow::open(&path).expect("open");
        let again = ZipWorkflow::open(&path).expect("open");
        assert!(Arc::ptr_eq(&first, &again), "the same archive, not read again");
        std::fs::write(&path, archive(&[("START.md", "two!")])).expect("rewrite");
        let changed = ZipWorkflow::open(&path).expect("open");
        assert!(!Arc::ptr_eq(&first, &changed));
        assert_eq!(changed.text("START.md"), Some(Ok(Arc::from("two!"))));
    }
}
