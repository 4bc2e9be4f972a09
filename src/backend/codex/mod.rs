//! The Codex backend (`@openai/codex`): a markdown state as one `codex exec
//! --json` process, its JSONL events read into text, a thread, tokens, and a
//! cost from a price table (`docs/backends.md`).
//!
//! Split by concern: `options` reads a state's Codex options, and the rest of
//! the folder runs the CLI behind the [`crate::backend::Backend`] trait.

pub(crate) mod backend;
pub(crate) mod options;

use crate::backend::options::{OptionError, OptionValues};
use crate::backend::profile::{Capabilities, Profile};
use crate::ids::BackendName;

/// `model_reasoning_effort` levels.
pub(crate) const REASONING_EFFORTS: [&str; 5] = ["minimal", "low", "medium", "high", "xhigh"];

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
