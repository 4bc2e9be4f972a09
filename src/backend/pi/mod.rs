//! The pi backend (`@mariozechner/pi-coding-agent`): a markdown state as one
//! `pi --mode json` process, its JSON events read into text, a session, tokens
//! and the cost pi reports (`docs/backends.md`).
//!
//! Split by concern: `options` reads a state's pi options (raymond's
//! `backend.options` keys, R13.1), `command` builds the argv, `stream_reader`
//! interprets the `--mode json` events, `transcript` lays them out for
//! `baton logs --step`, `version` checks which pi is installed,
//! and `backend` runs the CLI (`backend::jsonl_process`) behind the
//! [`crate::backend::Backend`] trait. Nothing outside this folder knows pi's
//! flags or events.

pub(crate) mod backend;
pub(crate) mod command;
pub(crate) mod options;
pub(crate) mod session_files;
pub(crate) mod stream_reader;
pub(crate) mod transcript;
mod version;

use crate::backend::options::{OptionError, OptionValues};
use crate::backend::profile::{Capabilities, Profile};
use crate::ids::BackendName;

/// `--thinking` levels.
pub(crate) const THINKING_LEVELS: [&str; 6] = ["off", "minimal", "low", "medium", "high", "xhigh"];

pub(crate) static PROFILE: Profile = Profile {
    name: BackendName::Pi,
    cli: "pi",
    program: "pi",
    install: "npm install -g @mariozechner/pi-coding-agent@0.73.1",
    option_keys: &options::OPTION_KEYS,
    check_options,
    // R5.21: pi chooses its own default model.
    default_model: "",
    is_model,
    claims_models: false,
    model_examples: "a pi model pattern such as `sonnet` or `anthropic/claude-sonnet-4-5`",
    efforts: &THINKING_LEVELS,
    capabilities: Capabilities {
        fork_session: true,
        continue_latest: false,
        reported_cost: true,
        usage_limit: false,
        max_turns: false,
        output_schema: false,
    },
};

/// pi matches `--model` against every provider's models, so any name may be one.
fn is_model(model: &str) -> bool {
    !model.trim().is_empty()
}

fn check_options(values: &OptionValues) -> Result<(), OptionError> {
    options::PiOptions::from_values(values).map(drop)
}
