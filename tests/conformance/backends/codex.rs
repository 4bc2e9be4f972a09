//! Codex 0.169.0 against the fake OpenAI Responses API (`support::fake_openai`).

use std::sync::Arc;

use super::answer_rules::{AnswerFormat, answer_rules};
use super::{Answer, Can, FakeModel, Harness};
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
    answer_rules(
        answer,
        &AnswerFormat {
            shell: &|rule: Rule, command: &str| rule.reply_command(command),
            api_error: || {
                fake_openai::Reply::http_error(
                    400,
                    r#"{"error": {"message": "the fake refuses this turn", "type": "invalid_request_error"}}"#,
                )
            },
            usage_limit: || fake_openai::Reply::usage_limit(1_795_900_000),
        },
    )
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
