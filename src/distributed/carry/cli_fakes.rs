//! The fake model APIs of the integration tests (`tests/support/fake_api`,
//! `fake_anthropic`, `fake_openai`), compiled into the library's tests so the
//! real CLIs can be driven against them through `pub(crate)` functions the
//! integration binary cannot reach. The two helpers those fakes call in their
//! own crate (registering a config dir, making a `CODEX_HOME`) are stood in
//! for here.

#![allow(dead_code)]

#[allow(unused_imports)]
#[path = "../../../tests/support/fake_anthropic/mod.rs"]
pub(crate) mod fake_anthropic;
#[path = "../../../tests/support/fake_api/mod.rs"]
pub(crate) mod fake_api;
#[allow(unused_imports)]
#[path = "../../../tests/support/fake_openai/mod.rs"]
pub(crate) mod fake_openai;

/// `fake_anthropic` registers its config dir for `claude_env`, which these
/// tests do not use: each "machine" has its own.
pub(crate) mod claude_cli {
    pub(crate) fn register_config_dir(_server_url: &str, _dir: &std::path::Path) {}
    pub(crate) fn unregister_config_dir(_server_url: &str) {}
}

/// `fake_openai` makes a `CODEX_HOME` whose `config.toml` points at it; these
/// tests make one per machine with [`codex_config`](codex_cli::codex_config).
pub(crate) mod codex_cli {
    pub(crate) fn new_codex_home(server_url: &str) -> tempfile::TempDir {
        let home = tempfile::Builder::new().prefix("codex-home-").tempdir().expect("codex home");
        std::fs::write(home.path().join("config.toml"), codex_config(server_url)).expect("codex config");
        home
    }

    pub(crate) fn forget_codex_home(_server_url: &str) {}

    /// As `tests/support/codex_cli.rs` writes it.
    pub(crate) fn codex_config(server_url: &str) -> String {
        format!(
            "model_provider = \"fake\"\nmodel = \"gpt-5-codex\"\ncheck_for_update_on_startup = false\n\n\
             [analytics]\nenabled = false\n\n[feedback]\nenabled = false\n\n\
             [model_providers.fake]\nname = \"fake\"\nbase_url = \"{server_url}/v1\"\nenv_key = \"OPENAI_API_KEY\"\n\
             wire_api = \"responses\"\nrequest_max_retries = 0\nstream_max_retries = 0\n"
        )
    }
}
