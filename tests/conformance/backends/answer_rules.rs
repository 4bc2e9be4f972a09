//! [`Answer`]s as rules of a fake API in any wire format: the conditions
//! (prompt, history has/lacks) and the replies every format words alike (text,
//! a slow answer) are built here once; an [`AnswerFormat`] gives the rest.

use std::time::Duration;

use super::{Answer, Reply};
use crate::support::fake_api::{Rule, WireFormat};

/// The replies a wire format words its own way.
pub(super) struct AnswerFormat<'a, W: WireFormat> {
    /// Make `rule` call the CLI's shell tool with `command`.
    pub(super) shell: &'a dyn Fn(Rule<W>, &str) -> Rule<W>,
    /// An API error that refuses the turn.
    pub(super) api_error: fn() -> W::Reply,
    /// The provider's "usage limit reached".
    pub(super) usage_limit: fn() -> W::Reply,
}

/// The rules that give `answer`: one, or two for a shell call (round 0 calls
/// it, round 1 answers `then`).
pub(super) fn answer_rules<W: WireFormat>(answer: Answer, format: &AnswerFormat<'_, W>) -> Vec<Rule<W>> {
    let base = || {
        let mut rule = Rule::when_prompt(answer.prompt);
        if let Some(text) = answer.history_has {
            rule = rule.history_contains(text);
        }
        if let Some(text) = answer.history_lacks {
            rule = rule.history_lacks(text);
        }
        rule
    };
    match answer.reply {
        Reply::Text(text) => vec![base().reply_text(text)],
        Reply::Bash { command, then } => {
            vec![(format.shell)(base().on_round(0), command), base().on_round(1).reply_text(then)]
        }
        Reply::ApiError => vec![base().reply((format.api_error)())],
        Reply::UsageLimit => vec![base().reply((format.usage_limit)())],
        Reply::Slow => vec![base().times(1).delay(Duration::from_secs(60)).reply_text("late")],
    }
}
