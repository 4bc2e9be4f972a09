//! Codex 0.169.0 against the fake OpenAI Responses API (`support::fake_openai`).

use std::sync::Arc;
use std::time::Duration;

use super::{Answer, Can, FakeModel, Harness, Reply};
use crate::codex_e2e::with_real_codex;
use crate::support::Test;
use crate::support::fake_openai::{self, FakeOpenAi, Rule};

pub(super) struct Codex;

impl Harness for Codex {
    fn name(&self) -> &'static str {
        "codex"
    }

    fn can(&self) -> Can {
        Can { usage_limit: true }
    }

    fn cli(&self) -> &'static str {
        "Codex"
    }

    fn prepare(&self, test: Test, answers: Vec<Answer>) -> (Test, Box<dyn FakeModel>) {
        let fake = Arc::new(FakeOpenAi::start(answers.into_iter().flat_map(rule).collect()));
        let test = with_real_codex(test, &fake);
        (test, Box::new(OpenAiModel(fake)))
    }
}

fn rule(answer: Answer) -> Vec<Rule> {
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
            vec![base().on_round(0).reply_command(command), base().on_round(1).reply_text(then)]
        }
        Reply::ApiError => vec![base().http_error(
            400,
            r#"{"error": {"message": "the fake refuses this turn", "type": "invalid_request_error"}}"#,
        )],
        Reply::UsageLimit => vec![base().reply(fake_openai::Reply::usage_limit(1_795_900_000))],
        Reply::Slow => vec![base().times(1).delay(Duration::from_secs(60)).reply_text("late")],
    }
}

struct OpenAiModel(Arc<FakeOpenAi>);

impl FakeModel for OpenAiModel {
    fn requests_for(&self, prompt: &str) -> usize {
        self.0.requests().iter().filter(|request| request.view.prompt.contains(prompt)).count()
    }

    fn push(&self, answer: Answer) {
        for rule in rule(answer) {
            self.0.push_rule(rule);
        }
    }

    fn summary(&self) -> String {
        self.0.summary()
    }
}
