//! The Claude Code backend: how a markdown state becomes one `claude -p` process
//! and how its stream-json output becomes text, a session, a cost and events.
//!
//! Split by concern: `command` builds the argv (R12.1, A12), `options` reads a
//! state's Claude options (`docs/claude.md`), `stream_reader` interprets
//! stream-json objects (R12.4–R12.11, A15), `usage_limit` recognises limits, and
//! `backend` runs the CLI (`backend::jsonl_process`) behind the
//! [`crate::backend::Backend`] trait the markdown executor uses.

pub(crate) mod backend;
pub(crate) mod command;
pub(crate) mod options;
pub(crate) mod session_files;
pub(crate) mod stream_reader;
pub(crate) mod telemetry;
pub(crate) mod usage_limit;
pub(crate) mod vocabulary;

use crate::backend::options::{OptionError, OptionValues};
use crate::backend::profile::{Capabilities, Profile};
use crate::ids::BackendName;

pub(crate) static PROFILE: Profile = Profile {
    name: BackendName::Claude,
    cli: "Claude Code",
    program: "claude",
    install: "npm install -g @anthropic-ai/claude-code",
    option_keys: &options::OPTION_KEYS,
    check_options,
    default_model: "sonnet",
    is_model: vocabulary::is_model,
    claims_models: true,
    model_examples: "an alias such as opus, sonnet or haiku, or a full `claude-…` name",
    efforts: &vocabulary::EFFORTS,
    capabilities: Capabilities {
        fork_session: true,
        continue_latest: true,
        reported_cost: true,
        usage_limit: true,
        max_turns: true,
        output_schema: true,
    },
};

fn check_options(values: &OptionValues) -> Result<(), OptionError> {
    options::ClaudeOptions::from_values(values).map(drop)
}
