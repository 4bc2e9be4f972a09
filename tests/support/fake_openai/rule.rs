//! The Responses API's rules: [`fake_api::Rule`](super::super::fake_api::Rule)
//! with the builder methods of this format's reply (shell commands, cached
//! tokens).

use super::super::fake_api;
use super::OpenAi;

/// A scripted answer of the fake OpenAI API.
pub(crate) type Rule = fake_api::Rule<OpenAi>;

impl fake_api::Rule<OpenAi> {
    /// Append a shell command call to the reply (see
    /// [`Reply::with_command`](super::Reply::with_command)).
    pub(crate) fn reply_command(self, command: &str) -> Rule {
        self.edit_reply(|reply| reply.with_command(command))
    }

    /// See [`Reply::cached`](super::Reply::cached).
    pub(crate) fn cached(self, cached_tokens: u64) -> Rule {
        self.edit_reply(|reply| reply.cached(cached_tokens))
    }
}
