//! A scripted answer: conditions on a request's [`RequestFacts`] plus the
//! reply to send. The builder methods that shape the reply (`reply_text`,
//! `usage`, …) forward to the rule's reply; each format adds its own (tool
//! calls, thinking, …) with [`Rule::edit_reply`].

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::{FakeReply, RequestFacts, WireFormat};

type ReplyFunction<W> = Arc<dyn Fn(&<W as WireFormat>::View) -> <W as WireFormat>::Reply + Send + Sync>;

enum Responder<W: WireFormat> {
    Fixed(W::Reply),
    Computed(ReplyFunction<W>),
}

impl<W: WireFormat> Clone for Responder<W> {
    fn clone(&self) -> Responder<W> {
        match self {
            Responder::Fixed(reply) => Responder::Fixed(reply.clone()),
            Responder::Computed(function) => Responder::Computed(Arc::clone(function)),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Session {
    Fresh,
    Resumed,
}

pub(crate) struct Rule<W: WireFormat> {
    name: String,
    prompt_contains: Vec<String>,
    round: Option<usize>,
    session: Option<Session>,
    history_contains: Vec<String>,
    history_lacks: Vec<String>,
    model_contains: Option<String>,
    times: Option<usize>,
    responder: Responder<W>,
}

impl<W: WireFormat> Clone for Rule<W> {
    fn clone(&self) -> Rule<W> {
        Rule {
            name: self.name.clone(),
            prompt_contains: self.prompt_contains.clone(),
            round: self.round,
            session: self.session,
            history_contains: self.history_contains.clone(),
            history_lacks: self.history_lacks.clone(),
            model_contains: self.model_contains.clone(),
            times: self.times,
            responder: self.responder.clone(),
        }
    }
}

impl<W: WireFormat> fmt::Debug for Rule<W> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.debug_struct("Rule").field("name", &self.name).finish_non_exhaustive()
    }
}

impl<W: WireFormat> Rule<W> {
    /// Matches every request (add conditions with the `on_*`/`fresh`/… methods).
    /// Named `any` unless renamed with [`Rule::named`].
    pub(crate) fn any() -> Rule<W> {
        Rule {
            name: "any".to_string(),
            prompt_contains: Vec::new(),
            round: None,
            session: None,
            history_contains: Vec::new(),
            history_lacks: Vec::new(),
            model_contains: None,
            times: None,
            responder: Responder::Fixed(W::Reply::blank()),
        }
    }

    /// Matches requests whose latest user text contains `needle`. Named after
    /// `needle` unless renamed with [`Rule::named`].
    pub(crate) fn when_prompt(needle: &str) -> Rule<W> {
        Rule { name: needle.to_string(), ..Rule::any() }.and_prompt(needle)
    }

    /// The name [`FakeServer::fired`](super::FakeServer::fired) counts by.
    pub(crate) fn named(mut self, name: &str) -> Rule<W> {
        self.name = name.to_string();
        self
    }

    /// Also require `needle` in the latest user text.
    pub(crate) fn and_prompt(mut self, needle: &str) -> Rule<W> {
        self.prompt_contains.push(needle.to_string());
        self
    }

    /// Only on tool round `round` of the turn (0 = first call of the turn,
    /// 1 = after one tool round or command, …).
    pub(crate) fn on_round(mut self, round: usize) -> Rule<W> {
        self.round = Some(round);
        self
    }

    /// Only for a new session or thread (no earlier messages).
    pub(crate) fn fresh(mut self) -> Rule<W> {
        self.session = Some(Session::Fresh);
        self
    }

    /// Only for a resumed (or forked) session or thread (earlier messages present).
    pub(crate) fn resumed(mut self) -> Rule<W> {
        self.session = Some(Session::Resumed);
        self
    }

    /// Only when an earlier message contains `needle`.
    pub(crate) fn history_contains(mut self, needle: &str) -> Rule<W> {
        self.history_contains.push(needle.to_string());
        self
    }

    /// Only when no earlier message contains `needle`.
    pub(crate) fn history_lacks(mut self, needle: &str) -> Rule<W> {
        self.history_lacks.push(needle.to_string());
        self
    }

    /// Only when the model id sent contains `needle` (`sonnet`, `opus`, …).
    pub(crate) fn model_contains(mut self, needle: &str) -> Rule<W> {
        self.model_contains = Some(needle.to_string());
        self
    }

    /// Match only the first `times` matching requests; later ones fall through
    /// to the next rule (e.g. "529 twice, then the next rule answers").
    pub(crate) fn times(mut self, times: usize) -> Rule<W> {
        self.times = Some(times);
        self
    }

    /// Answer with `reply` (replacing what was scripted so far).
    pub(crate) fn reply(mut self, reply: W::Reply) -> Rule<W> {
        self.responder = Responder::Fixed(reply);
        self
    }

    /// Answer with whatever `function` builds from the request.
    pub(crate) fn reply_with(mut self, function: impl Fn(&W::View) -> W::Reply + Send + Sync + 'static) -> Rule<W> {
        self.responder = Responder::Computed(Arc::new(function));
        self
    }

    /// Append assistant text to the reply.
    pub(crate) fn reply_text(self, text: &str) -> Rule<W> {
        self.edit_reply(|reply| reply.add_text(text))
    }

    /// Tokens reported for this call.
    pub(crate) fn usage(self, input_tokens: u64, output_tokens: u64) -> Rule<W> {
        self.edit_reply(|reply| reply.set_usage(input_tokens, output_tokens))
    }

    /// Wait `delay` before answering.
    pub(crate) fn delay(self, delay: Duration) -> Rule<W> {
        self.edit_reply(|reply| reply.set_delay(delay))
    }

    /// Answer with HTTP `status` and the format's error for `text` (see the
    /// format's `Reply::http_error`).
    pub(crate) fn http_error(self, status: u16, text: &str) -> Rule<W> {
        self.reply(W::Reply::error(status, text))
    }

    /// Add a response header.
    pub(crate) fn header(self, name: &str, value: &str) -> Rule<W> {
        self.edit_reply(|reply| reply.add_header(name, value))
    }

    pub(super) fn name(&self) -> &str {
        &self.name
    }

    pub(super) fn matches(&self, view: &W::View, fired: usize) -> bool {
        self.times.is_none_or(|times| fired < times)
            && self.prompt_contains.iter().all(|needle| view.prompt().contains(needle.as_str()))
            && self.round.is_none_or(|round| view.round() == round)
            && match self.session {
                Some(Session::Fresh) => view.is_fresh(),
                Some(Session::Resumed) => !view.is_fresh(),
                None => true,
            }
            && self.history_contains.iter().all(|needle| view.history_contains(needle))
            && !self.history_lacks.iter().any(|needle| view.history_contains(needle))
            && self.model_contains.as_ref().is_none_or(|needle| view.model().contains(needle.as_str()))
    }

    pub(super) fn reply_for(&self, view: &W::View) -> W::Reply {
        match &self.responder {
            Responder::Fixed(reply) => reply.clone(),
            Responder::Computed(function) => function(view),
        }
    }

    /// Change the scripted reply; for the format's own builder methods.
    #[track_caller]
    pub(crate) fn edit_reply(mut self, edit: impl FnOnce(W::Reply) -> W::Reply) -> Rule<W> {
        let Responder::Fixed(reply) = self.responder else {
            panic!("rule `{}`: `reply_with` computes the whole reply; shape it there", self.name);
        };
        self.responder = Responder::Fixed(edit(reply));
        self
    }
}
