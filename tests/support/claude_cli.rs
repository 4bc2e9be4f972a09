//! The real Claude Code CLI for end-to-end tests, pinned to one version and
//! installed from npm on first use, and the environment that points it at a
//! [`FakeAnthropic`](super::fake_anthropic::FakeAnthropic) server instead of
//! any real host.
//!
//! The CLI is cached in `<target dir>/claude-code/` (`tests/run` installs the
//! same pinned version there before `cargo test`, reading the version from
//! [`CLAUDE_CODE_VERSION`]). `BATON_TEST_CLAUDE_BIN` overrides it. Parallel
//! tests and test binaries share one installation: a `OnceLock` per process
//! and an `flock` on `<target dir>/claude-code/.install.lock` across processes.

#![allow(dead_code)] // A toolkit: each test uses part of it.

use super::npm_cli::{NpmCli, VersionCheck};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

/// The Claude Code version every end-to-end test runs (also read by `tests/run`).
pub(crate) const CLAUDE_CODE_VERSION: &str = "2.1.330";

/// Overrides the installed CLI with this executable.
pub(crate) const CLAUDE_BIN_VAR: &str = "BATON_TEST_CLAUDE_BIN";

/// The pinned CLI; `--version` prints `<CLAUDE_CODE_VERSION> (Claude Code)`.
/// npm may skip the package's postinstall, which puts the native binary in
/// place of `bin/claude.exe`; it is then run by hand.
pub(crate) static CLAUDE: NpmCli = NpmCli {
    package: "@anthropic-ai/claude-code",
    version: CLAUDE_CODE_VERSION,
    binary: "claude",
    dir_name: "claude-code",
    override_var: CLAUDE_BIN_VAR,
    version_check: VersionCheck::Output { word: 0, env: &[("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")] },
    postinstall: Some("node_modules/@anthropic-ai/claude-code/install.cjs"),
    installed: OnceLock::new(),
};

/// Variables to remove from a claude process's environment: they would make
/// it authenticate differently, use another provider or model, or believe it
/// runs inside Claude Code.
pub(crate) const CLAUDE_ENV_REMOVE: &[&str] = &[
    "CLAUDECODE",
    "CLAUDE_CODE_ENTRYPOINT",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_MODEL",
    "ANTHROPIC_DEFAULT_SONNET_MODEL",
    "ANTHROPIC_DEFAULT_OPUS_MODEL",
    "ANTHROPIC_DEFAULT_HAIKU_MODEL",
    "ANTHROPIC_SMALL_FAST_MODEL",
    "ANTHROPIC_CUSTOM_HEADERS",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
    "CLAUDE_CODE_USE_FOUNDRY",
    "CLAUDE_CODE_MAX_RETRIES",
];

/// The pinned CLI (or `BATON_TEST_CLAUDE_BIN`), installed on first use (see
/// [`NpmCli::binary_path`]).
pub(crate) fn claude_binary() -> PathBuf {
    CLAUDE.binary_path()
}

/// `<CARGO_TARGET_DIR or the target dir of this build>/claude-code`.
pub(crate) fn install_dir() -> PathBuf {
    CLAUDE.install_dir()
}

/// The environment a claude process (or Baton, which spawns it) needs to talk
/// to the fake API at `server_url` and nothing else: the fake as base URL, a
/// dummy API key, root allowed to skip permissions, no telemetry or update
/// traffic, `NO_PROXY` for 127.0.0.1, the server's own `CLAUDE_CONFIG_DIR`
/// (sessions isolated per test and removed with the server), and the CLI's
/// directory first on `PATH`. Also remove [`CLAUDE_ENV_REMOVE`]. A test that
/// expects API errors should add `CLAUDE_CODE_MAX_RETRIES` (Claude Code
/// otherwise retries 10 times over about 3 minutes).
pub(crate) fn claude_env(server_url: &str) -> Vec<(String, String)> {
    let binary = claude_binary();
    let mut path = binary.parent().map(Path::to_path_buf).into_iter().collect::<Vec<_>>();
    path.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
    let path = std::env::join_paths(path).expect("PATH");
    [
        ("ANTHROPIC_BASE_URL", server_url.to_string()),
        ("ANTHROPIC_API_KEY", "sk-test".to_string()),
        ("IS_SANDBOX", "1".to_string()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".to_string()),
        ("DISABLE_AUTOUPDATER", "1".to_string()),
        ("NO_PROXY", "127.0.0.1,localhost".to_string()),
        ("no_proxy", "127.0.0.1,localhost".to_string()),
        ("CLAUDE_CONFIG_DIR", config_dir(server_url).to_string_lossy().into_owned()),
        ("PATH", path.to_string_lossy().into_owned()),
    ]
    .into_iter()
    .map(|(key, value)| (key.to_string(), value))
    .collect()
}

/// A `claude` command for the fake at `server_url`: [`claude_env`] set,
/// [`CLAUDE_ENV_REMOVE`] removed. The caller adds arguments, cwd and stdio.
pub(crate) fn claude_command(server_url: &str) -> Command {
    let mut command = Command::new(claude_binary());
    for key in CLAUDE_ENV_REMOVE {
        command.env_remove(key);
    }
    command.envs(claude_env(server_url));
    command
}

/// Config dirs by server URL: a live fake's own temp dir, or (for a URL no
/// fake registered) a dir under the target's tmp dir that is kept.
static CONFIG_DIRS: Mutex<Option<HashMap<String, PathBuf>>> = Mutex::new(None);

pub(super) fn register_config_dir(server_url: &str, dir: &Path) {
    CONFIG_DIRS.lock().expect("config dirs").get_or_insert_default().insert(server_url.to_string(), dir.to_path_buf());
}

pub(super) fn unregister_config_dir(server_url: &str) {
    CONFIG_DIRS.lock().expect("config dirs").get_or_insert_default().remove(server_url);
}

pub(super) fn config_dir(server_url: &str) -> PathBuf {
    let mut dirs = CONFIG_DIRS.lock().expect("config dirs");
    dirs.get_or_insert_default()
        .entry(server_url.to_string())
        .or_insert_with(|| {
            let parent = Path::new(env!("CARGO_TARGET_TMPDIR")).join("claude-config");
            std::fs::create_dir_all(&parent).expect("claude config parent");
            tempfile::Builder::new().tempdir_in(parent).expect("claude config dir").keep()
        })
        .clone()
}
