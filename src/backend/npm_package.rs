//! The npm package an agent CLI's binary belongs to. npm's `.bin/NAME` links to
//! a script inside the package, whose `package.json` says its version at once,
//! where asking the CLI (`--version`) starts Node and loads the whole CLI. pi and
//! Codex read their version here once per run.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The `version` of the package, named as `is_package` accepts, that holds the
/// script `binary` resolves to (its `package.json` up to four folders above),
/// with that `package.json`'s path; `None` outside such a package.
pub(crate) fn package_version(binary: &Path, is_package: impl Fn(&str) -> bool) -> Option<(String, PathBuf)> {
    let script = std::fs::canonicalize(binary).ok()?;
    script.ancestors().skip(1).take(4).find_map(|dir| {
        let path = dir.join("package.json");
        let package: Value = serde_json::from_str(&std::fs::read_to_string(&path).ok()?).ok()?;
        if !is_package(package.get("name")?.as_str()?) {
            return None;
        }
        Some((package.get("version")?.as_str()?.to_string(), path))
    })
}
