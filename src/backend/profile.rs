//! What each backend says about itself before anything runs: its CLI's name, its
//! model and effort vocabulary, the options it reads, what it can do. Lint, the
//! command line, the markdown executor and the conformance suite ask here; the
//! facts themselves live in each backend's own folder (`claude::PROFILE`, …).

use crate::backend::options::{OptionError, OptionSort, OptionValues};
use crate::ids::BackendName;

/// What a backend can honour. A tag or option a backend cannot honour is a
/// declared gap that lint reports and the conformance suite checks, never a
/// silent difference.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Capabilities {
    /// A `<call>` child (and a cross-workflow call) starts from a copy of the
    /// caller's conversation, leaving the caller's own as it was.
    pub(crate) fork_session: bool,
    /// `--continue-session`: start from the newest conversation of the directory.
    pub(crate) continue_latest: bool,
    /// The CLI reports a turn's cost in USD; otherwise it is priced from tokens.
    pub(crate) reported_cost: bool,
    /// Usage limits are recognised and pause the agent until they reset.
    pub(crate) usage_limit: bool,
    /// `max_turns` bounds a turn's tool rounds.
    pub(crate) max_turns: bool,
    /// `output_schema` constrains the result.
    pub(crate) output_schema: bool,
}

pub(crate) struct Profile {
    pub(crate) name: BackendName,
    /// The CLI's name in messages: `Claude Code`, `pi`, `Codex`.
    pub(crate) cli: &'static str,
    /// The program looked up on `PATH`.
    pub(crate) program: &'static str,
    /// How to install the CLI, for the message when it is missing.
    pub(crate) install: &'static str,
    /// The option keys this backend reads.
    pub(crate) option_keys: &'static [&'static str],
    /// Read `values` as this backend would before a turn; keys it does not take are skipped.
    pub(crate) check_options: fn(&OptionValues) -> Result<(), OptionError>,
    /// The model when neither the state nor the run names one; empty lets the CLI choose.
    pub(crate) default_model: &'static str,
    /// Whether the CLI could accept `model` (trimmed and lowercased).
    pub(crate) is_model: fn(&str) -> bool,
    /// Whether a model its `is_model` takes is named as this backend's in another
    /// backend's messages (pi takes any provider's model, so it never claims one).
    pub(crate) claims_models: bool,
    /// What a model name looks like, for messages.
    pub(crate) model_examples: &'static str,
    /// The effort (reasoning, thinking) levels it takes.
    pub(crate) efforts: &'static [&'static str],
    pub(crate) capabilities: Capabilities,
}

/// The profile of backend `name`.
pub(crate) fn profile(name: BackendName) -> &'static Profile {
    match name {
        BackendName::Claude => &crate::backend::claude::PROFILE,
        BackendName::Pi => &crate::backend::pi::PROFILE,
        BackendName::Codex => &crate::backend::codex::PROFILE,
    }
}

impl Profile {
    /// Which of `values`' keys this backend ignores: another backend's options it
    /// has no equivalent for, and keys no backend knows.
    pub(crate) fn sort_options(&self, values: &OptionValues) -> OptionSort {
        let mut sort = OptionSort::default();
        for key in values.keys() {
            if self.option_keys.contains(&key.as_str()) {
                continue;
            }
            let others: Vec<&str> = BackendName::ALL
                .into_iter()
                .filter(|other| profile(*other).option_keys.contains(&key.as_str()))
                .map(|other| profile(other).cli)
                .collect();
            if others.is_empty() {
                sort.unknown.push(key.clone());
            } else {
                let why =
                    format!("an option of {}; {} has no equivalent, so it is ignored", others.join(" and "), self.cli);
                sort.ignored.push((key.clone(), why));
            }
        }
        sort
    }

    /// Why `model` is not one of this backend's, naming the backend it belongs to
    /// when it is another's.
    pub(crate) fn model_problem(&self, model: &str) -> Option<String> {
        if (self.is_model)(model) {
            return None;
        }
        let owner = self
            .owner_of(model)
            .map(|other| format!(" (it is a {} model: `backend: {other}`?)", profile(other).cli))
            .unwrap_or_default();
        Some(format!("model `{model}` is not a {} model; expected {}{owner}", self.cli, self.model_examples))
    }

    /// The other backend whose model `model` is, when one claims it.
    pub(crate) fn owner_of(&self, model: &str) -> Option<BackendName> {
        BackendName::ALL
            .into_iter()
            .filter(|other| *other != self.name && profile(*other).claims_models)
            .find(|other| (profile(*other).is_model)(model))
    }

    /// Why `effort` is not one of this backend's levels.
    pub(crate) fn effort_problem(&self, effort: &str) -> Option<String> {
        (!self.efforts.contains(&effort)).then(|| {
            format!("effort `{effort}` is not a {} level; expected one of {}", self.cli, self.efforts.join(", "))
        })
    }
}

/// Every option key of every backend: what a YAML workflow's prompt state may
/// carry besides Baton's own keys.
pub(crate) fn all_option_keys() -> impl Iterator<Item = &'static str> {
    let mut keys: Vec<&'static str> =
        BackendName::ALL.into_iter().flat_map(|name| profile(name).option_keys.iter().copied()).collect();
    keys.sort_unstable();
    keys.dedup();
    keys.into_iter()
}
