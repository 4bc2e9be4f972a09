//! What the fake model APIs have in common, whatever their wire format: rules
//! matched against a reduced view of each request ([`Rule`]), the server's
//! shared state (rules with how often each fired, the request log with the
//! rule that answered, the requests to other paths), and the axum server on a
//! tokio runtime of its own, so plain synchronous `#[test]`s use it and it
//! stops when dropped.
//!
//! A [`WireFormat`] says what differs: the path served, how a JSON body
//! becomes a view ([`RequestFacts`]), and how a reply ([`FakeReply`]) is
//! streamed as SSE. `fake_anthropic` (Messages API) and `fake_openai`
//! (Responses API) each keep only their format.

#![allow(dead_code)] // A toolkit: each test uses part of it.

mod rule;
mod server;

pub(crate) use rule::Rule;
pub(crate) use server::{FakeServer, NO_RULE_MATCHED, Recorded, json_response, plain_response};

use std::fmt::Debug;
use std::time::Duration;

use axum::http::{HeaderMap, Method, Uri};
use axum::response::Response;
use serde_json::Value;

/// One wire format of a fake model API.
pub(crate) trait WireFormat: Send + Sync + 'static {
    /// A request reduced to the facts rules match on.
    type View: RequestFacts + Clone + Debug + Send + Sync + 'static;
    /// What a rule answers.
    type Reply: FakeReply;
    /// The one path served with `POST`, e.g. `/v1/messages`.
    const PATH: &'static str;
    /// For the runtime's thread names and error lines, e.g. `fake-anthropic`.
    const NAME: &'static str;
    /// The `content-type` of a streamed reply.
    const SSE_CONTENT_TYPE: &'static str;
    /// The response header that carries `req_fake_<serial>`.
    const REQUEST_ID_HEADER: &'static str;

    /// The view of a request body (already parsed as JSON) and its headers.
    fn view(body: &Value, headers: &HeaderMap) -> Self::View;

    /// The id of the `count`th reply of a server started at `started_nanos`
    /// (message and response ids are made of it).
    fn serial(started_nanos: u64, count: u64) -> String;

    /// `reply` as the format's SSE stream, for the request seen as `view`.
    fn sse(reply: &Self::Reply, view: &Self::View, serial: &str) -> String;

    /// The answer to any request but `POST` [`Self::PATH`].
    fn other_request(method: &Method, uri: &Uri) -> Response;
}

/// The facts of a request that [`Rule`]s match on and summaries show.
pub(crate) trait RequestFacts {
    /// The latest user text.
    fn prompt(&self) -> &str;
    /// Tool rounds since the prompt (0 = the first call of a turn).
    fn round(&self) -> usize;
    /// No earlier messages.
    fn is_fresh(&self) -> bool;
    /// An earlier message contains `needle`.
    fn history_contains(&self, needle: &str) -> bool;
    /// The model id sent.
    fn model(&self) -> &str;
    /// The session or thread, as `session=…` or `thread=…` for summaries.
    fn conversation(&self) -> String;
}

/// What every format's reply can do; the format's own builder methods (tool
/// calls, thinking, cached tokens, …) live on its type.
pub(crate) trait FakeReply: Clone + Send + Sync + 'static {
    /// A message with no content.
    fn blank() -> Self;
    /// Append assistant text.
    fn add_text(self, text: &str) -> Self;
    /// Tokens reported for this call.
    fn set_usage(self, input_tokens: u64, output_tokens: u64) -> Self;
    /// Wait this long before answering.
    fn set_delay(self, delay: Duration) -> Self;
    /// Add a response header.
    fn add_header(self, name: &str, value: &str) -> Self;
    /// HTTP `status` with the format's error for `text`.
    fn error(status: u16, text: &str) -> Self;
    /// The wait before answering.
    fn pause(&self) -> Duration;
    /// The HTTP status answered.
    fn status(&self) -> u16;
    /// The JSON body of an HTTP error, `None` for a stream.
    fn error_json(&self) -> Option<String>;
    /// Extra response headers.
    fn extra_headers(&self) -> &[(String, String)];
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    User,
    Assistant,
}

/// One earlier message of the conversation, as its visible text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Turn {
    pub(crate) role: Role,
    pub(crate) text: String,
}

/// `history` as `user: …` / `assistant: …` lines, for assertion messages.
pub(crate) fn history_text(history: &[Turn]) -> String {
    history
        .iter()
        .map(|turn| {
            let role = match turn.role {
                Role::User => "user",
                Role::Assistant => "assistant",
            };
            format!("{role}: {}", turn.text)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Implements [`FakeReply`] for a format's `Reply` that has the usual builder
/// methods (`empty`, `with_text`, `usage`, `delay`, `header`, `http_error`) and
/// accessors (`http_status`, `error_body`, fields `delay` and `headers`), as
/// both formats' do. Use where `FakeReply` and `Duration` are in scope.
macro_rules! fake_reply_for {
    ($reply:ty) => {
        impl FakeReply for $reply {
            fn blank() -> Self {
                <$reply>::empty()
            }

            fn add_text(self, text: &str) -> Self {
                self.with_text(text)
            }

            fn set_usage(self, input_tokens: u64, output_tokens: u64) -> Self {
                self.usage(input_tokens, output_tokens)
            }

            fn set_delay(self, delay: Duration) -> Self {
                self.delay(delay)
            }

            fn add_header(self, name: &str, value: &str) -> Self {
                self.header(name, value)
            }

            fn error(status: u16, text: &str) -> Self {
                <$reply>::http_error(status, text)
            }

            fn pause(&self) -> Duration {
                self.delay
            }

            fn status(&self) -> u16 {
                self.http_status()
            }

            fn error_json(&self) -> Option<String> {
                self.error_body()
            }

            fn extra_headers(&self) -> &[(String, String)] {
                &self.headers
            }
        }
    };
}
pub(crate) use fake_reply_for;

/// Implements [`RequestFacts`] for a format's `RequestView` with fields
/// `prompt`, `round`, `model`, methods `is_fresh` and `history_contains`, and
/// the session or thread in field `$conversation`, shown as `$label=…`. Use
/// where `RequestFacts` is in scope.
macro_rules! request_facts_for {
    ($view:ty, $conversation:ident, $label:literal) => {
        impl RequestFacts for $view {
            fn prompt(&self) -> &str {
                &self.prompt
            }

            fn round(&self) -> usize {
                self.round
            }

            fn is_fresh(&self) -> bool {
                <$view>::is_fresh(self)
            }

            fn history_contains(&self, needle: &str) -> bool {
                <$view>::history_contains(self, needle)
            }

            fn model(&self) -> &str {
                &self.model
            }

            fn conversation(&self) -> String {
                format!(concat!($label, "={:?}"), self.$conversation)
            }
        }
    };
}
pub(crate) use request_facts_for;
