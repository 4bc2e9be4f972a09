//! Claude Code 2.1.330 against the fake Anthropic API.

use std::sync::Arc;

use super::anthropic_answers::{AnthropicModel, ShellTool, rules};
use super::{Answer, Can, FakeModel, Harness};
use crate::claude_e2e::with_real_claude;
use crate::support::Test;
use crate::support::fake_anthropic::FakeAnthropic;

pub(super) struct Claude;

impl Harness for Claude {
    fn name(&self) -> &'static str {
        "claude"
    }

    fn can(&self) -> Can {
        Can { usage_limit: true }
    }

    fn cli(&self) -> &'static str {
        "Claude Code"
    }

    fn prepare(&self, test: Test, answers: Vec<Answer>) -> (Test, Box<dyn FakeModel>) {
        let fake = Arc::new(FakeAnthropic::start(rules(answers, ShellTool("Bash"))));
        let test = with_real_claude(test, &fake).env("CLAUDE_CODE_MAX_RETRIES", "0");
        (test, Box::new(AnthropicModel(fake, ShellTool("Bash"))))
    }
}
