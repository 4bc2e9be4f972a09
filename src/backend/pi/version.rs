//! Which pi Baton runs: the version is read from the npm package the `pi`
//! binary belongs to, once per run, instead of asking `pi --version`, which
//! starts Node and loads pi (1–2 s, as long as a whole turn against a local
//! model). A binary outside such a package (a wrapper script, a test double) is
//! not checked.
//!
//! Baton reads the `--mode json` stream of pi 0.73 (the pinned
//! `@mariozechner/pi-coding-agent@0.73.1`); the same events continue in the
//! `@earendil-works/pi-coding-agent` 1.x line. Older releases and a major
//! version past 1 are refused before any turn runs.

use std::path::Path;

use crate::backend::npm_package::package_version;

/// The oldest pi Baton reads, as (major, minor).
const OLDEST: (u64, u64) = (0, 73);
/// The first major Baton does not know.
const UNKNOWN_MAJOR: u64 = 2;

/// `Err` with the message when the pi at `binary` is a version Baton cannot read.
pub(crate) fn check_version(binary: &Path) -> Result<(), String> {
    let pi = |name: &str| name.ends_with("/pi-coding-agent");
    let Some((version, package)) = package_version(binary, pi) else { return Ok(()) };
    match parse(&version) {
        Some((major, minor)) if (major, minor) >= OLDEST && major < UNKNOWN_MAJOR => Ok(()),
        _ => Err(format!(
            "pi {version} (`{}`) is not supported: Baton reads the `--mode json` events of pi 0.73 up to 1.x; \
             install the tested release with `npm install -g @mariozechner/pi-coding-agent@0.73.1`",
            package.display()
        )),
    }
}

/// (major, minor) of `0.73.1`-like text.
fn parse(version: &str) -> Option<(u64, u64)> {
    let mut parts = version.trim().split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn package(name: &str, version: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("pkg/dist")).unwrap();
        std::fs::write(
            dir.path().join("pkg/package.json"),
            serde_json::json!({"name": name, "version": version}).to_string(),
        )
        .unwrap();
        std::fs::write(dir.path().join("pkg/dist/cli.js"), "").unwrap();
        std::fs::create_dir_all(dir.path().join("bin")).unwrap();
        let link = dir.path().join("bin/pi");
        std::os::unix::fs::symlink(dir.path().join("pkg/dist/cli.js"), &link).unwrap();
        (dir, link)
    }

    #[test]
    fn the_pinned_and_later_releases_pass() {
        for version in ["0.73.1", "0.80.0", "1.5.2"] {
            let (_dir, binary) = package("@mariozechner/pi-coding-agent", version);
            assert_eq!(check_version(&binary), Ok(()), "{version}");
        }
    }

    #[test]
    fn an_older_or_unknown_major_is_refused_naming_the_package() {
        let (dir, binary) = package("@earendil-works/pi-coding-agent", "2.0.0");
        let manifest = std::fs::canonicalize(dir.path()).unwrap().join("pkg/package.json");
        assert_eq!(
            check_version(&binary).unwrap_err(),
            format!(
                "pi 2.0.0 (`{}`) is not supported: Baton reads the `--mode json` events of pi 0.73 up to 1.x; \
                 install the tested release with `npm install -g @mariozechner/pi-coding-agent@0.73.1`",
                manifest.display()
            )
        );
        let (_dir, binary) = package("@mariozechner/pi-coding-agent", "0.60.3");
        assert!(check_version(&binary).unwrap_err().starts_with("pi 0.60.3 ("));
    }

    #[test]
    fn a_binary_outside_a_pi_package_is_not_checked() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("pi");
        std::fs::write(&script, "#!/bin/sh\n").unwrap();
        assert_eq!(check_version(&script), Ok(()));
        let (_dir, binary) = package("some-other-package", "9.9.9");
        assert_eq!(check_version(&binary), Ok(()));
    }
}
