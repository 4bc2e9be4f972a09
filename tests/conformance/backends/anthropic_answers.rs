//! [`Answer`]s as rules of the fake Anthropic API, which both Claude Code and pi
//! (through a provider with `api: anthropic-messages`) talk to.

use std::sync::Arc;
use std::time::Duration;

use super::{Answer, FakeModel, Reply};
use crate::support::fake_anthropic::{FakeAnthropic, Rule, ToolUse};

/// The name each CLI gives its shell tool: Claude Code's `Bash`, pi's `bash`.
#[derive(Clone, Copy)]
pub(super) struct ShellTool(pub(super) &'static str);

pub(super) fn rules(answers: Vec<Answer>, shell: ShellTool) -> Vec<Rule> {
    answers.into_iter().flat_map(|answer| rule(answer, shell)).collect()
}

fn rule(answer: Answer, shell: ShellTool) -> Vec<Rule> {
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
            let tool = ToolUse::new(shell.0, serde_json::json!({"command": command}));
            vec![base().on_round(0).reply_tool_use(tool), base().on_round(1).reply_text(then)]
        }
        Reply::ApiError => vec![base().http_error(400, "invalid_request_error: the fake refuses this turn")],
        Reply::UsageLimit => vec![base().http_error(400, "You've hit your limit · resets 3pm (America/Chicago)")],
        Reply::Slow => vec![base().times(1).delay(Duration::from_secs(60)).reply_text("late")],
    }
}

/// The fake Anthropic API as a cell's [`FakeModel`].
pub(super) struct AnthropicModel(pub(super) Arc<FakeAnthropic>, pub(super) ShellTool);

impl FakeModel for AnthropicModel {
    fn requests_for(&self, prompt: &str) -> usize {
        self.0.requests().iter().filter(|request| request.view.prompt.contains(prompt)).count()
    }

    fn push(&self, answer: Answer) {
        for rule in rule(answer, self.1) {
            self.0.push_rule(rule);
        }
    }

    fn summary(&self) -> String {
        self.0.summary()
    }
}
