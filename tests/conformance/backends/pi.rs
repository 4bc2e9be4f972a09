//! pi 0.73.1 against the fake Anthropic API, through a pi provider with
//! `api: anthropic-messages` (`support::pi_cli`).

use std::sync::Arc;

use super::anthropic_answers::{AnthropicModel, ShellTool, rules};
use super::{Answer, Can, FakeModel, Harness};
use crate::pi_e2e::with_real_pi_env;
use crate::support::Test;
use crate::support::fake_anthropic::FakeAnthropic;

pub(super) struct Pi;

impl Harness for Pi {
    fn name(&self) -> &'static str {
        "pi"
    }

    /// pi does not recognise usage limits (its profile says so): a limit is a failed turn.
    fn can(&self) -> Can {
        Can { usage_limit: false }
    }

    fn cli(&self) -> &'static str {
        "pi"
    }

    fn prepare(&self, test: Test, answers: Vec<Answer>) -> (Test, Box<dyn FakeModel>) {
        let fake = Arc::new(FakeAnthropic::start(rules(answers, ShellTool("bash"))));
        let test = with_real_pi_env(test, &fake);
        (test, Box::new(AnthropicModel(fake, ShellTool("bash"))))
    }
}
