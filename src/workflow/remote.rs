//! Remote zip workflows, pinned by their hash (R13.14):
//! `baton run https://host/path/name-<sha256>.zip`.
//!
//! The file name must carry the archive's SHA-256 (one 64-character lowercase hex
//! run), so what runs is exactly what was published. It is fetched once into
//! `.baton/registry/<sha256>.zip` (HTTP 200 only, the hash checked before the file
//! is renamed into place) and read from there afterwards; the cached file keeps the
//! hash in its name, so every later open checks it again (`zip_scope`).

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::workflow::zip_scope::sha256_hex;

/// Where fetched workflows are kept, inside the `.baton` directory.
pub(crate) const REGISTRY_DIR: &str = "registry";

/// Whether `scope` is a fetched copy (`.baton/registry/<sha256>.zip`).
pub(crate) fn is_fetched_copy(scope: &Path) -> bool {
    let in_registry = scope.parent().and_then(Path::file_name).is_some_and(|name| name == REGISTRY_DIR);
    let stem = scope.file_stem().map(|stem| stem.to_string_lossy().into_owned()).unwrap_or_default();
    in_registry && stem.len() == 64 && stem.bytes().all(|byte| byte.is_ascii_hexdigit())
}

/// A remote archive larger than this is refused (a workflow is prompts and scripts).
const MAX_BYTES: u64 = 256 * 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub(crate) enum RemoteError {
    #[error("{url}: only http:// and https:// workflows can be fetched")]
    Scheme { url: String },
    #[error("{url}: a remote workflow is a zip whose file name carries its SHA-256, like `review-<64 hex digits>.zip`")]
    NotPinned { url: String },
    #[error("{url}: cannot fetch it: {reason}")]
    Fetch { url: String, reason: String },
    #[error("{url}: its SHA-256 is {actual}, not the {expected} its name pins; it was not used")]
    HashMismatch { url: String, expected: String, actual: String },
    #[error("cannot keep the fetched workflow in {}: {source}", .path.display())]
    Write { path: PathBuf, source: std::io::Error },
}

/// The SHA-256 `url`'s file name pins (R13.14), if it is an http(s) zip URL.
pub(crate) fn pinned_hash(url: &str) -> Result<String, RemoteError> {
    let lower = url.to_ascii_lowercase();
    if !(lower.starts_with("http://") || lower.starts_with("https://")) {
        return Err(RemoteError::Scheme { url: url.to_string() });
    }
    let path = url.split(['?', '#']).next().unwrap_or(url);
    let name = path.rsplit('/').next().unwrap_or_default();
    if !name.to_ascii_lowercase().ends_with(".zip") {
        return Err(RemoteError::NotPinned { url: url.to_string() });
    }
    let runs: Vec<&str> =
        name.split(|c: char| !(c.is_ascii_digit() || ('a'..='f').contains(&c))).filter(|run| run.len() == 64).collect();
    match runs.as_slice() {
        [one] => Ok(one.to_string()),
        _ => Err(RemoteError::NotPinned { url: url.to_string() }),
    }
}

/// The local copy of `url` in `registry`, fetched if it is not there yet.
pub(crate) fn fetch(url: &str, registry: &Path) -> Result<PathBuf, RemoteError> {
    let expected = pinned_hash(url)?;
    let path = registry.join(format!("{expected}.zip"));
    if path.is_file() {
        return Ok(path);
    }
    let failed = |reason: String| RemoteError::Fetch { url: url.to_string(), reason };
    let mut response = ureq::get(url).call().map_err(|error| failed(error.to_string()))?;
    if response.status() != 200 {
        return Err(failed(format!("HTTP {}", response.status())));
    }
    let bytes =
        response.body_mut().with_config().limit(MAX_BYTES).read_to_vec().map_err(|error| failed(error.to_string()))?;
    let actual = sha256_hex(&bytes);
    if actual != expected {
        return Err(RemoteError::HashMismatch { url: url.to_string(), expected, actual });
    }
    let write_error = |source| RemoteError::Write { path: registry.to_path_buf(), source };
    registry.parent().map_or(Ok(()), crate::store::baton_dir::create_baton_dir).map_err(write_error)?;
    std::fs::create_dir_all(registry).map_err(write_error)?;
    let mut temp = tempfile::NamedTempFile::new_in(registry).map_err(write_error)?;
    temp.write_all(&bytes).and_then(|()| temp.as_file().sync_all()).map_err(write_error)?;
    temp.persist(&path).map_err(|error| write_error(error.error))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r13_14_the_name_must_pin_one_hash() {
        let sha = "a".repeat(64);
        assert_eq!(pinned_hash(&format!("https://x.test/wf/review-{sha}.zip")).unwrap(), sha);
        assert_eq!(pinned_hash(&format!("http://x.test/{sha}.zip?download=1")).unwrap(), sha);
        for url in [
            "https://x.test/review.zip".to_string(),
            format!("https://x.test/review-{sha}.tar"),
            format!("https://x.test/{sha}-{sha}.zip"),
            format!("https://x.test/review-{}.zip", "A".repeat(64)),
        ] {
            assert!(matches!(pinned_hash(&url), Err(RemoteError::NotPinned { .. })), "{url}");
        }
        assert!(matches!(pinned_hash("ftp://x.test/a.zip"), Err(RemoteError::Scheme { .. })));
    }
}
