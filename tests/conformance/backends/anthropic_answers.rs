//! [`Answer`]s as rules of the fake Anthropic API, which both Claude Code and pi
//! (through a provider with `api: anthropic-messages`) talk to.

use std::sync::Arc;

use super::answer_rules::{AnswerFormat, answer_rules};
use super::{Answer, FakeModel};
use crate::support::fake_anthropic::{FakeAnthropic, Reply as ApiReply, Rule, ToolUse};

/// The name each CLI gives its shell tool: Claude Code's `Bash`, pi's `bash`.
#[derive(Clone, Copy)]
pub(super) struct ShellTool(pub(super) &'static str);

pub(super) fn rules(answers: Vec<Answer>, shell: ShellTool) -> Vec<Rule> {
    answers.into_iter().flat_map(|answer| rule(answer, shell)).collect()
}

fn rule(answer: Answer, shell: ShellTool) -> Vec<Rule> {
    let call_shell =
        |rule: Rule, command: &str| rule.reply_tool_use(ToolUse::new(shell.0, serde_json::json!({"command": command})));
    answer_rules(
        answer,
        &AnswerFormat {
            shell: &call_shell,
            api_error: || ApiReply::http_error(400, "invalid_request_error: the fake refuses this turn"),
            usage_limit: || ApiReply::http_error(400, "You've hit your limit · resets 3pm (America/Chicago)"),
        },
    )
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
