//! A scripted answer: conditions on a [`RequestView`] plus the [`Reply`] to
//! send. The builder methods that shape the reply (`reply_text`, `usage`, …)
//! forward to the rule's [`Reply`].

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::reply::Reply;
use super::request_view::RequestView;

type ReplyFunction = Arc<dyn Fn(&RequestView) -> Reply + Send + Sync>;

#[derive(Clone)]
enum Responder {
    Fixed(Reply),
    Computed(ReplyFunction),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Session {
    Fresh,
    Resumed,
}

#[derive(Clone)]
pub(crate) struct Rule {
    name: String,
    prompt_contains: Vec<String>,
    round: Option<usize>,
    session: Option<Session>,
    history_contains: Vec<String>,
    history_lacks: Vec<String>,
    model_contains: Option<String>,
    times: Option<usize>,
    responder: Responder,
}

impl fmt::Debug for Rule {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.debug_struct("Rule").field("name", &self.name).finish_non_exhaustive()
    }
}

impl Rule {
    /// Matches every request (add conditions with the `on_*`/`fresh`/… methods).
    /// Named `any` unless renamed with [`Rule::named`].
    pub(crate) fn any() -> Rule {
        Rule {
            name: "any".to_string(),
            prompt_contains: Vec::new(),
            round: None,
            session: None,
            history_contains: Vec::new(),
            history_lacks: Vec::new(),
            model_contains: None,
            times: None,
            responder: Responder::Fixed(Reply::empty()),
        }
    }

    /// Matches requests whose latest user text contains `needle`. Named after
    /// `needle` unless renamed with [`Rule::named`].
    pub(crate) fn when_prompt(needle: &str) -> Rule {
        Rule { name: needle.to_string(), ..Rule::any() }.and_prompt(needle)
    }

    /// The name [`FakeOpenAi::fired`](super::FakeOpenAi::fired) counts by.
    pub(crate) fn named(mut self, name: &str) -> Rule {
        self.name = name.to_string();
        self
    }

    /// Also require `needle` in the latest user text.
    pub(crate) fn and_prompt(mut self, needle: &str) -> Rule {
        self.prompt_contains.push(needle.to_string());
        self
    }

    /// Only when `round` command results follow the prompt (0 = first call
    /// of the turn, 1 = after one command, …).
    pub(crate) fn on_round(mut self, round: usize) -> Rule {
        self.round = Some(round);
        self
    }

    /// Only for a new thread (no earlier messages).
    pub(crate) fn fresh(mut self) -> Rule {
        self.session = Some(Session::Fresh);
        self
    }

    /// Only for a resumed (or forked) thread (earlier messages present).
    pub(crate) fn resumed(mut self) -> Rule {
        self.session = Some(Session::Resumed);
        self
    }

    /// Only when an earlier message contains `needle`.
    pub(crate) fn history_contains(mut self, needle: &str) -> Rule {
        self.history_contains.push(needle.to_string());
        self
    }

    /// Only when no earlier message contains `needle`.
    pub(crate) fn history_lacks(mut self, needle: &str) -> Rule {
        self.history_lacks.push(needle.to_string());
        self
    }

    /// Only when the model Codex sent contains `needle`.
    pub(crate) fn model_contains(mut self, needle: &str) -> Rule {
        self.model_contains = Some(needle.to_string());
        self
    }

    /// Match only the first `times` matching requests; later ones fall through
    /// to the next rule (e.g. "529 twice, then the next rule answers").
    pub(crate) fn times(mut self, times: usize) -> Rule {
        self.times = Some(times);
        self
    }

    /// Answer with `reply` (replacing what was scripted so far).
    pub(crate) fn reply(mut self, reply: Reply) -> Rule {
        self.responder = Responder::Fixed(reply);
        self
    }

    /// Answer with whatever `function` builds from the request.
    pub(crate) fn reply_with(mut self, function: impl Fn(&RequestView) -> Reply + Send + Sync + 'static) -> Rule {
        self.responder = Responder::Computed(Arc::new(function));
        self
    }

    /// Append an assistant message to the reply.
    pub(crate) fn reply_text(self, text: &str) -> Rule {
        self.edit_reply(|reply| reply.with_text(text))
    }

    /// Append a shell command call to the reply (see [`Reply::with_command`]).
    pub(crate) fn reply_command(self, command: &str) -> Rule {
        self.edit_reply(|reply| reply.with_command(command))
    }

    /// See [`Reply::usage`].
    pub(crate) fn usage(self, input_tokens: u64, output_tokens: u64) -> Rule {
        self.edit_reply(|reply| reply.usage(input_tokens, output_tokens))
    }

    /// See [`Reply::cached`].
    pub(crate) fn cached(self, cached_tokens: u64) -> Rule {
        self.edit_reply(|reply| reply.cached(cached_tokens))
    }

    /// See [`Reply::delay`].
    pub(crate) fn delay(self, delay: Duration) -> Rule {
        self.edit_reply(|reply| reply.delay(delay))
    }

    /// Answer with HTTP `status` and `body` (see [`Reply::http_error`]).
    pub(crate) fn http_error(self, status: u16, body: &str) -> Rule {
        self.reply(Reply::http_error(status, body))
    }

    /// See [`Reply::header`].
    pub(crate) fn header(self, name: &str, value: &str) -> Rule {
        self.edit_reply(|reply| reply.header(name, value))
    }

    pub(super) fn name(&self) -> &str {
        &self.name
    }

    pub(super) fn matches(&self, view: &RequestView, fired: usize) -> bool {
        self.times.is_none_or(|times| fired < times)
            && self.prompt_contains.iter().all(|needle| view.prompt.contains(needle.as_str()))
            && self.round.is_none_or(|round| view.round == round)
            && match self.session {
                Some(Session::Fresh) => view.is_fresh(),
                Some(Session::Resumed) => !view.is_fresh(),
                None => true,
            }
            && self.history_contains.iter().all(|needle| view.history_contains(needle))
            && !self.history_lacks.iter().any(|needle| view.history_contains(needle))
            && self.model_contains.as_ref().is_none_or(|needle| view.model.contains(needle.as_str()))
    }

    pub(super) fn reply_for(&self, view: &RequestView) -> Reply {
        match &self.responder {
            Responder::Fixed(reply) => reply.clone(),
            Responder::Computed(function) => function(view),
        }
    }

    #[track_caller]
    fn edit_reply(mut self, edit: impl FnOnce(Reply) -> Reply) -> Rule {
        let Responder::Fixed(reply) = self.responder else {
            panic!("rule `{}`: `reply_with` computes the whole reply; shape it there", self.name);
        };
        self.responder = Responder::Fixed(edit(reply));
        self
    }
}
