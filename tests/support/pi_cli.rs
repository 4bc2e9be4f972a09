//! The real pi CLI for end-to-end tests, pinned to one version and installed
//! from npm on first use, and the environment that points it at a
//! [`FakeAnthropic`](super::fake_anthropic::FakeAnthropic) server through a pi
//! provider of its own.
//!
//! The CLI is cached in `<target dir>/pi-cli/` (`tests/run` installs the same
//! pinned version there before `cargo test`, reading the version from
//! [`PI_VERSION`]). `BATON_TEST_PI_BIN` overrides it. Parallel tests and test
//! binaries share one installation: a `OnceLock` per process and an `flock`
//! on `<target dir>/pi-cli/.install.lock` across processes.
//!
//! pi reads its models and settings from its agent directory, which
//! `PI_CODING_AGENT_DIR` relocates: [`pi_env`] gives every fake server its own,
//! inside the fake's temporary config dir, with a provider `fake` whose
//! `baseUrl` is the fake and whose API is `anthropic-messages`, made pi's
//! default model. The real `~/.pi` is never read or written.

#![allow(dead_code)] // A toolkit: each test uses part of it.

use super::npm_cli::{NpmCli, VersionCheck};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::{Value, json};

/// The pi version every end-to-end test runs (also read by `tests/run`).
/// `@mariozechner/pi-coding-agent`: the `@earendil-works` scope, where pi moved
/// at 0.74, does not install from the registry (its dependencies are missing).
pub(crate) const PI_VERSION: &str = "0.73.1";

/// The npm package of [`PI_VERSION`].
pub(crate) const PI_PACKAGE: &str = "@mariozechner/pi-coding-agent";

/// Overrides the installed CLI with this executable.
pub(crate) const PI_BIN_VAR: &str = "BATON_TEST_PI_BIN";

/// The pinned CLI; its version is read from the package's `package.json`, as
/// Baton does, because `pi --version` starts pi (1–2 s).
pub(crate) static PI: NpmCli = NpmCli {
    package: PI_PACKAGE,
    version: PI_VERSION,
    binary: "pi",
    dir_name: "pi-cli",
    override_var: PI_BIN_VAR,
    version_check: VersionCheck::PackageJson,
    postinstall: None,
    installed: OnceLock::new(),
};

/// The provider and model [`pi_env`] configures.
pub(crate) const PI_PROVIDER: &str = "fake";
pub(crate) const PI_MODEL: &str = "fake-model";

/// Variables to remove from a pi process's environment: they would move its
/// sessions or config elsewhere.
pub(crate) const PI_ENV_REMOVE: &[&str] = &["PI_CODING_AGENT_SESSION_DIR", "PI_PACKAGE_DIR", "PI_SHARE_VIEWER_URL"];

/// The pinned CLI (or `BATON_TEST_PI_BIN`), installed on first use (see
/// [`NpmCli::binary_path`]).
pub(crate) fn pi_binary() -> PathBuf {
    PI.binary_path()
}

/// `<CARGO_TARGET_DIR or the target dir of this build>/pi-cli`.
pub(crate) fn install_dir() -> PathBuf {
    PI.install_dir()
}

/// The environment pi (or Baton, which spawns it) needs to talk to the fake
/// API at `server_url` and nothing else: its own agent dir (see
/// [`agent_dir`]), no startup network traffic, `NO_PROXY` for 127.0.0.1.
/// pi's retries are off (its own, `retry.enabled`, and the provider SDK's,
/// `retry.provider.maxRetries`), so a test of an API error sees one request
/// per turn; [`pi_env_with`] sets other settings.
pub(crate) fn pi_env(server_url: &str) -> Vec<(String, String)> {
    pi_env_with(server_url, json!({"retry": {"enabled": false, "provider": {"maxRetries": 0}}}))
}

/// [`pi_env`] with `settings` merged over the default model's in `settings.json`.
pub(crate) fn pi_env_with(server_url: &str, settings: Value) -> Vec<(String, String)> {
    let dir = agent_dir(server_url);
    write_agent_dir(&dir, server_url, settings);
    [
        ("PI_CODING_AGENT_DIR", dir.to_string_lossy().into_owned()),
        ("PI_OFFLINE", "1".to_string()),
        ("PI_TELEMETRY", "0".to_string()),
        ("NO_PROXY", "127.0.0.1,localhost".to_string()),
        ("no_proxy", "127.0.0.1,localhost".to_string()),
    ]
    .into_iter()
    .map(|(key, value)| (key.to_string(), value))
    .collect()
}

/// The agent dir of the fake at `server_url`: `pi-agent/` in its config dir,
/// removed with it. Sessions are in `sessions/<mangled cwd>/<time>_<id>.jsonl`.
pub(crate) fn agent_dir(server_url: &str) -> PathBuf {
    super::claude_cli::config_dir(server_url).join("pi-agent")
}

/// A `pi` command for the fake at `server_url`, with [`pi_env`]. The caller
/// adds arguments, cwd and stdio.
pub(crate) fn pi_command(server_url: &str) -> Command {
    let mut command = Command::new(pi_binary());
    for key in PI_ENV_REMOVE {
        command.env_remove(key);
    }
    command.envs(pi_env(server_url));
    command
}

/// `models.json` with the fake as provider `fake` ($3 per million input
/// tokens, $15 per million output, like Sonnet), and `settings.json` making it
/// the default.
fn write_agent_dir(dir: &Path, server_url: &str, settings: Value) {
    std::fs::create_dir_all(dir).expect("pi agent dir");
    let models = json!({"providers": {PI_PROVIDER: {
        "baseUrl": server_url,
        "api": "anthropic-messages",
        "apiKey": "sk-test",
        "models": [{
            "id": PI_MODEL,
            "name": "Fake model",
            "reasoning": false,
            "input": ["text"],
            "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75},
            "contextWindow": 200000,
            "maxTokens": 8192,
        }],
    }}});
    std::fs::write(dir.join("models.json"), serde_json::to_string_pretty(&models).expect("models"))
        .expect("models.json");
    let mut all = json!({"defaultProvider": PI_PROVIDER, "defaultModel": PI_MODEL, "quietStartup": true});
    if let (Some(all), Value::Object(extra)) = (all.as_object_mut(), settings) {
        all.extend(extra);
    }
    std::fs::write(dir.join("settings.json"), all.to_string()).expect("settings.json");
}
