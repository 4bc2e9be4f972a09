//! The Messages API's rules: [`fake_api::Rule`](super::super::fake_api::Rule)
//! with the builder methods of this format's reply (thinking, tool_use, stop
//! reason).

use super::super::fake_api;
use super::Anthropic;
use super::reply::ToolUse;

/// A scripted answer of the fake Anthropic API.
pub(crate) type Rule = fake_api::Rule<Anthropic>;

impl fake_api::Rule<Anthropic> {
    /// Append a thinking block to the reply.
    pub(crate) fn reply_thinking(self, thinking: &str) -> Rule {
        self.edit_reply(|reply| reply.with_thinking(thinking))
    }

    /// Append a tool_use block to the reply.
    pub(crate) fn reply_tool_use(self, tool_use: ToolUse) -> Rule {
        self.edit_reply(|reply| reply.with_tool_use(tool_use))
    }

    /// See [`Reply::stop_reason`](super::Reply::stop_reason).
    pub(crate) fn stop_reason(self, stop_reason: &str) -> Rule {
        self.edit_reply(|reply| reply.stop_reason(stop_reason))
    }
}
