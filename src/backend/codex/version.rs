//! Refusing a Codex CLI too old for Baton, once per run.
//!
//! `codex --version` prints `codex-cli 0.169.0`: a few milliseconds for the
//! native binary, but about 120 ms through npm's Node launcher (`bin/codex.js`),
//! so for that launcher the version is read from its package's `package.json`
//! instead; the first Codex turn of a run asks. Older versions lack `codex exec fork`
//! (a `<call>`'s child thread), so they are refused with the install command;
//! newer ones are taken (their JSONL events are read leniently). Output that is
//! not a version (a wrapper script) is let through: the turn itself will say
//! what is wrong.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use crate::backend::codex::TESTED_VERSION;
use crate::backend::npm_package::package_version;

/// The oldest version with everything Baton uses (`exec fork`, `--json` events).
pub(crate) const MINIMUM_VERSION: (u64, u64, u64) = (0, 169, 0);

/// `major.minor.patch` out of `codex --version`'s output.
pub(crate) fn parse_version(output: &str) -> Option<(u64, u64, u64)> {
    let word =
        output.split_whitespace().find(|word| word.chars().next().is_some_and(|first| first.is_ascii_digit()))?;
    let core = word.split(['-', '+']).next()?;
    let mut parts = core.split('.').map(|part| part.parse::<u64>().ok());
    Some((parts.next()??, parts.next()??, parts.next().flatten().unwrap_or(0)))
}

/// The version of npm's `@openai/codex` package when `binary` is its launcher.
fn npm_package_version(binary: &Path) -> Option<(u64, u64, u64)> {
    let launcher = std::fs::canonicalize(binary).ok()?;
    if launcher.file_name()? != "codex.js" {
        return None;
    }
    let (version, _) = package_version(&launcher, |name| name == "@openai/codex")?;
    parse_version(&version)
}

/// Why `binary` cannot serve, or `None` when it can (or its version is unknown).
pub(crate) async fn check(binary: &Path) -> Option<String> {
    if let Some(version) = npm_package_version(binary) {
        return (version < MINIMUM_VERSION).then(|| too_old(binary, version));
    }
    let output = tokio::time::timeout(
        Duration::from_secs(30),
        tokio::process::Command::new(binary)
            .arg("--version")
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .output(),
    )
    .await;
    let output = match output {
        Ok(Ok(output)) => output,
        Ok(Err(error)) => return Some(format!("could not run `{} --version`: {error}", binary.display())),
        Err(_) => return Some(format!("`{} --version` did not answer within 30 seconds", binary.display())),
    };
    let text = String::from_utf8_lossy(&output.stdout);
    let version = parse_version(&text)?;
    (version < MINIMUM_VERSION).then(|| too_old(binary, version))
}

fn too_old(binary: &Path, (major, minor, patch): (u64, u64, u64)) -> String {
    let (min_major, min_minor, min_patch) = MINIMUM_VERSION;
    format!(
        "Codex {major}.{minor}.{patch} (`{}`) is too old: Baton needs codex-cli {min_major}.{min_minor}.{min_patch} or \
         newer (for `codex exec fork`); install it with `npm install -g @openai/codex@{TESTED_VERSION}`",
        binary.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_read_from_codex_clis_output() {
        assert_eq!(parse_version("codex-cli 0.169.0\n"), Some((0, 169, 0)));
        assert_eq!(parse_version("codex-cli 1.2.3-alpha.1"), Some((1, 2, 3)));
        assert_eq!(parse_version("codex-cli 0.170"), Some((0, 170, 0)));
        assert_eq!(parse_version("something else"), None);
    }

    #[test]
    fn npms_launcher_is_versioned_by_its_package() {
        let dir = tempfile::tempdir().unwrap();
        let package = dir.path().join("node_modules/@openai/codex");
        std::fs::create_dir_all(package.join("bin")).unwrap();
        std::fs::write(package.join("bin/codex.js"), "").unwrap();
        std::fs::write(package.join("package.json"), r#"{"name": "@openai/codex", "version": "0.150.2"}"#).unwrap();
        std::fs::create_dir_all(dir.path().join("node_modules/.bin")).unwrap();
        let link = dir.path().join("node_modules/.bin/codex");
        std::os::unix::fs::symlink("../@openai/codex/bin/codex.js", &link).unwrap();
        assert_eq!(npm_package_version(&link), Some((0, 150, 2)));
        assert_eq!(npm_package_version(&package.join("package.json")), None);
    }

    #[test]
    fn an_old_version_is_refused_with_the_install_command() {
        assert_eq!(
            too_old(Path::new("/usr/bin/codex"), (0, 120, 0)),
            "Codex 0.120.0 (`/usr/bin/codex`) is too old: Baton needs codex-cli 0.169.0 or newer (for `codex exec \
             fork`); install it with `npm install -g @openai/codex@0.169.0`"
        );
    }
}
