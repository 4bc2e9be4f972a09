//! The real Codex CLI for end-to-end tests, pinned to one version and installed
//! from npm on first use, and the environment that points it at a
//! [`FakeOpenAi`](super::fake_openai::FakeOpenAi) server instead of any real host.
//!
//! The CLI is cached in `<target dir>/codex-cli/` (`tests/run` installs the same
//! pinned version there before `cargo test`, reading the version from
//! [`CODEX_VERSION`]); npm brings the native binary in `@openai/codex-linux-x64`,
//! nothing is downloaded at run time. `BATON_TEST_CODEX_BIN` overrides it.
//! Parallel tests and test binaries share one installation: a `OnceLock` per
//! process and an `flock` on `<target dir>/codex-cli/.install.lock` across
//! processes.
//!
//! Codex never reads the user's `~/.codex`: every fake has its own `CODEX_HOME`
//! (a directory under the target's tmp dir, not `/tmp`, where Codex refuses to
//! put its helper binaries) whose `config.toml` names the fake as the only model
//! provider, with retries, update checks and analytics off.

#![allow(dead_code)] // A toolkit: each test uses part of it.

use super::npm_cli::{NpmCli, VersionCheck};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

/// The Codex version every end-to-end test runs (also read by `tests/run`).
pub(crate) const CODEX_VERSION: &str = "0.169.0";

/// Overrides the installed CLI with this executable.
pub(crate) const CODEX_BIN_VAR: &str = "BATON_TEST_CODEX_BIN";

/// The pinned CLI; `--version` prints `codex-cli <CODEX_VERSION>`.
pub(crate) static CODEX: NpmCli = NpmCli {
    package: "@openai/codex",
    version: CODEX_VERSION,
    binary: "codex",
    dir_name: "codex-cli",
    override_var: CODEX_BIN_VAR,
    version_check: VersionCheck::Output { word: 1, env: &[] },
    postinstall: None,
    installed: OnceLock::new(),
};

/// The model the fake's config names: in the built-in price table (Baton prices
/// it), but not in Codex 0.169's model catalog (each turn warns "Model metadata
/// for `gpt-5-codex` not found", which Baton must take as a warning).
pub(crate) const FAKE_MODEL: &str = "gpt-5-codex";

/// Variables to remove from a codex process's environment: they would send it
/// to another host, account or configuration.
pub(crate) const CODEX_ENV_REMOVE: &[&str] = &[
    "OPENAI_BASE_URL",
    "OPENAI_ORG_ID",
    "OPENAI_ORGANIZATION",
    "OPENAI_PROJECT",
    "CODEX_API_KEY",
    "CODEX_SANDBOX",
    "CODEX_SANDBOX_NETWORK_DISABLED",
    "CODEX_THREAD_ID",
    "RUST_LOG",
];

/// The pinned CLI (or `BATON_TEST_CODEX_BIN`), installed on first use (see
/// [`NpmCli::binary_path`]).
pub(crate) fn codex_binary() -> PathBuf {
    CODEX.binary_path()
}

/// `<CARGO_TARGET_DIR or the target dir of this build>/codex-cli`.
pub(crate) fn install_dir() -> PathBuf {
    CODEX.install_dir()
}

/// The environment a codex process (or Baton, which spawns it) needs to talk to
/// the fake at `server_url` and nothing else: the server's own `CODEX_HOME`, a
/// dummy `OPENAI_API_KEY`, `NO_PROXY` for 127.0.0.1, `TZ=UTC` (Codex words a
/// usage limit's reset in local time), and the CLI's directory first on `PATH`.
/// Also remove [`CODEX_ENV_REMOVE`].
pub(crate) fn codex_env(server_url: &str) -> Vec<(String, String)> {
    let binary = codex_binary();
    let mut path = binary.parent().map(Path::to_path_buf).into_iter().collect::<Vec<_>>();
    path.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
    let path = std::env::join_paths(path).expect("PATH");
    [
        ("CODEX_HOME", codex_home(server_url).to_string_lossy().into_owned()),
        ("OPENAI_API_KEY", "sk-test".to_string()),
        ("NO_PROXY", "127.0.0.1,localhost".to_string()),
        ("no_proxy", "127.0.0.1,localhost".to_string()),
        ("TZ", "UTC".to_string()),
        ("PATH", path.to_string_lossy().into_owned()),
    ]
    .into_iter()
    .map(|(key, value)| (key.to_string(), value))
    .collect()
}

/// A `codex` command for the fake at `server_url`: [`codex_env`] set,
/// [`CODEX_ENV_REMOVE`] removed. The caller adds arguments, cwd and stdio.
pub(crate) fn codex_command(server_url: &str) -> Command {
    let mut command = Command::new(codex_binary());
    for key in CODEX_ENV_REMOVE {
        command.env_remove(key);
    }
    command.envs(codex_env(server_url));
    command
}

/// The `config.toml` that makes the fake at `server_url` Codex's provider.
pub(crate) fn codex_config(server_url: &str) -> String {
    format!(
        "model_provider = \"fake\"\nmodel = \"{FAKE_MODEL}\"\ncheck_for_update_on_startup = false\n\n\
         [analytics]\nenabled = false\n\n[feedback]\nenabled = false\n\n\
         [model_providers.fake]\nname = \"fake\"\nbase_url = \"{server_url}/v1\"\nenv_key = \"OPENAI_API_KEY\"\n\
         wire_api = \"responses\"\nrequest_max_retries = 0\nstream_max_retries = 0\n"
    )
}

/// Homes by server URL: a live fake's own, or (for a URL no fake registered) one
/// that is kept.
static HOMES: Mutex<Option<HashMap<String, PathBuf>>> = Mutex::new(None);

/// A new `CODEX_HOME` for the fake at `server_url`, registered for [`codex_env`].
pub(super) fn new_codex_home(server_url: &str) -> tempfile::TempDir {
    let home = tempfile::Builder::new().prefix("codex-home-").tempdir_in(homes_parent()).expect("codex home");
    std::fs::write(home.path().join("config.toml"), codex_config(server_url)).expect("codex config");
    HOMES.lock().expect("homes").get_or_insert_default().insert(server_url.to_string(), home.path().to_path_buf());
    home
}

pub(super) fn forget_codex_home(server_url: &str) {
    HOMES.lock().expect("homes").get_or_insert_default().remove(server_url);
}

fn homes_parent() -> PathBuf {
    let parent = Path::new(env!("CARGO_TARGET_TMPDIR")).join("codex-homes");
    std::fs::create_dir_all(&parent).expect("codex homes parent");
    parent
}

fn codex_home(server_url: &str) -> PathBuf {
    let mut homes = HOMES.lock().expect("homes");
    homes
        .get_or_insert_default()
        .entry(server_url.to_string())
        .or_insert_with(|| {
            let home = tempfile::Builder::new().prefix("codex-home-").tempdir_in(homes_parent()).expect("home").keep();
            std::fs::write(home.join("config.toml"), codex_config(server_url)).expect("codex config");
            home
        })
        .clone()
}
