//! Headless Chromium for the tests that need a real browser.

use std::path::PathBuf;

/// The Chromium to run: `$BATON_CHROMIUM`, else `chromium` on `PATH`, else
/// `/usr/bin/chromium` (Debian's, which `.ci/run` installs). A test that needs
/// it fails without it rather than pass without checking anything.
pub(crate) fn chromium_path() -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let candidates = std::env::var_os("BATON_CHROMIUM")
        .map(PathBuf::from)
        .into_iter()
        .chain(std::env::split_paths(&path).map(|dir| dir.join("chromium")))
        .chain([PathBuf::from("/usr/bin/chromium")]);
    for candidate in candidates {
        if candidate.is_file() {
            return candidate;
        }
    }
    panic!(
        "browser tests need a headless Chromium: install it (`apt-get install chromium`, as .ci/run does) \
         or set BATON_CHROMIUM to its path"
    );
}
