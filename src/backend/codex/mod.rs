//! The Codex backend (`@openai/codex`): a markdown state as one `codex exec
//! --json` process, its JSONL events read into text, a thread, tokens, and a
//! cost from a price table (`docs/backends.md`).
//!
//! Split by concern: `options` reads a state's Codex options, `command` builds
//! the argv, `stream_reader` interprets `codex exec --json` events, `thread_usage`
//! turns a thread's cumulative token counts into one turn's, `prices` prices
//! them, `usage_limit` recognises the account's limits, `version` refuses a CLI
//! too old to fork, `transcript` lays a turn out for `baton logs --step`, and
//! `backend` runs the CLI (`backend::jsonl_process`) behind
//! the [`crate::backend::Backend`] trait.

pub(crate) mod backend;
pub(crate) mod command;
pub(crate) mod options;
pub(crate) mod prices;
pub(crate) mod session_files;
pub(crate) mod stream_reader;
pub(crate) mod thread_usage;
pub(crate) mod transcript;
pub(crate) mod usage_limit;
pub(crate) mod version;

use crate::backend::options::{OptionError, OptionValues};
use crate::backend::profile::{Capabilities, Profile};
use crate::ids::BackendName;

/// `model_reasoning_effort` levels. Codex 0.169 passes any text through to the
/// API; its model catalog names `low` … `ultra`, and older models take `none`
/// and `minimal`.
pub(crate) const REASONING_EFFORTS: [&str; 8] = ["none", "minimal", "low", "medium", "high", "xhigh", "max", "ultra"];

/// The version Baton is tested with (`tests/support/codex_cli.rs` pins the same).
pub(crate) const TESTED_VERSION: &str = "0.169.0";

pub(crate) static PROFILE: Profile = Profile {
    name: BackendName::Codex,
    cli: "Codex",
    program: "codex",
    install: "npm install -g @openai/codex@0.169.0",
    option_keys: &options::OPTION_KEYS,
    check_options,
    // Codex's own configuration chooses when the state does not.
    default_model: "",
    is_model,
    claims_models: true,
    model_examples: "an OpenAI model such as `gpt-5-codex` or `gpt-5`",
    efforts: &REASONING_EFFORTS,
    capabilities: Capabilities {
        fork_session: true,
        continue_latest: false,
        reported_cost: false,
        usage_limit: true,
        max_turns: false,
        output_schema: true,
    },
};

/// Codex takes its provider's model names, which may be anything but Claude's.
fn is_model(model: &str) -> bool {
    !model.trim().is_empty() && !crate::backend::claude::vocabulary::is_model(model)
}

fn check_options(values: &OptionValues) -> Result<(), OptionError> {
    options::CodexOptions::from_values(values).map(drop)
}
