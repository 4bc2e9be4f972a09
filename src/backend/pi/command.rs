//! The `pi` command line (`docs/backends.md`, "pi").
//!
//! `pi --mode json -p` with no message argument reads the prompt from stdin
//! (checked with 0.73.1), so the prompt goes there as it does for Claude Code
//! (A12): its size is not bounded by the OS argument limit, and nothing in it is
//! read as a flag or an `@file`.
//!
//! After the fixed head come, in this order: `--session-dir`, the session
//! (`--session ID` continues, `--fork ID` branches a copy, nothing starts a new
//! one), `--provider`, `--model`, `--thinking`, the tool flag, `--no-extensions`,
//! one `--extension` each, `--no-skills`, one `--skill` each, and
//! `--append-system-prompt`.

use crate::backend::SessionMode;
use crate::backend::pi::options::PiOptions;

/// pi's built-in tools Baton allows when the run does not skip permissions:
/// reading and editing files, no shell (R12.5; raymond's default set).
pub(crate) const DEFAULT_TOOLS: &str = "read,edit,write,grep,find,ls";

/// Which conversation a pi turn continues: [`SessionMode`] as pi can do it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum PiSession {
    Fresh,
    /// `--session ID`.
    Continue(String),
    /// `--fork ID`: a new session holding a copy of the whole conversation.
    Fork(String),
}

impl PiSession {
    /// `None` for [`SessionMode::ContinueAndFork`], which pi cannot do: `--fork`
    /// refuses `--continue`. [`SessionMode::ForkAt`] forks the whole session: pi
    /// cannot cut a fork back to a message (`docs/backends.md`).
    pub(crate) fn of(mode: &SessionMode) -> Option<PiSession> {
        match mode {
            SessionMode::Fresh => Some(PiSession::Fresh),
            SessionMode::Resume(session) => Some(PiSession::Continue(session.to_string())),
            SessionMode::ForkFrom(session) | SessionMode::ForkAt(session, _) => {
                Some(PiSession::Fork(session.to_string()))
            }
            SessionMode::ContinueAndFork => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PiCommand {
    /// No tool flag (pi's own default tools, `bash` included) when set and the
    /// state names none; else [`DEFAULT_TOOLS`].
    pub(crate) skip_permissions: bool,
    /// Empty: pi's default model.
    pub(crate) model: String,
    /// The state's effort; the `thinking` option wins over it.
    pub(crate) effort: Option<String>,
    pub(crate) session: PiSession,
    /// The state's options; paths already absolute.
    pub(crate) options: PiOptions,
}

impl PiCommand {
    /// The arguments after the program name, in the order of the module doc.
    pub(crate) fn arguments(&self) -> Vec<String> {
        let options = &self.options;
        let mut arguments: Vec<String> = ["--mode", "json", "-p"].into_iter().map(String::from).collect();
        let mut flag = |name: &str, value: &str| arguments.extend([name.to_string(), value.to_string()]);
        if let Some(dir) = &options.session_dir {
            flag("--session-dir", dir);
        }
        match &self.session {
            PiSession::Fresh => {}
            PiSession::Continue(session) => flag("--session", session),
            PiSession::Fork(session) => flag("--fork", session),
        }
        if let Some(provider) = &options.provider {
            flag("--provider", provider);
        }
        if !self.model.is_empty() {
            flag("--model", &self.model);
        }
        if let Some(thinking) = options.thinking.as_ref().or(self.effort.as_ref()) {
            flag("--thinking", thinking);
        }
        if options.no_tools {
            arguments.push("--no-tools".into());
        } else if options.no_builtin_tools {
            arguments.push("--no-builtin-tools".into());
        } else if let Some(tools) = &options.tools {
            if tools.is_empty() {
                arguments.push("--no-tools".into());
            } else {
                arguments.extend(["--tools".into(), tools.join(",")]);
            }
        } else if !self.skip_permissions {
            arguments.extend(["--tools".into(), DEFAULT_TOOLS.into()]);
        }
        if options.no_extensions {
            arguments.push("--no-extensions".into());
        }
        for extension in &options.extensions {
            arguments.extend(["--extension".into(), extension.clone()]);
        }
        if options.no_skills {
            arguments.push("--no-skills".into());
        }
        for skill in &options.skills {
            arguments.extend(["--skill".into(), skill.clone()]);
        }
        if let Some(prompt) = &options.append_system_prompt {
            arguments.extend(["--append-system-prompt".into(), prompt.clone()]);
        }
        arguments
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(session: PiSession, options: PiOptions) -> PiCommand {
        PiCommand { skip_permissions: false, model: String::new(), effort: None, session, options }
    }

    fn line(command: PiCommand) -> String {
        command.arguments().join(" ")
    }

    #[test]
    fn r12_5_a_fresh_turn_gets_the_default_tools_and_pis_own_model() {
        assert_eq!(
            line(command(PiSession::Fresh, PiOptions::default())),
            "--mode json -p --tools read,edit,write,grep,find,ls"
        );
    }

    #[test]
    fn r12_5_skip_permissions_leaves_pis_own_tools() {
        let command = PiCommand { skip_permissions: true, ..command(PiSession::Fresh, PiOptions::default()) };
        assert_eq!(line(command), "--mode json -p");
    }

    #[test]
    fn r3_15_goto_continues_and_call_forks_the_session() {
        assert_eq!(
            line(command(PiSession::Continue("s-1".into()), PiOptions::default())),
            "--mode json -p --session s-1 --tools read,edit,write,grep,find,ls"
        );
        assert_eq!(
            line(command(PiSession::Fork("s-1".into()), PiOptions::default())),
            "--mode json -p --fork s-1 --tools read,edit,write,grep,find,ls"
        );
    }

    #[test]
    fn session_modes_map_to_pi_sessions() {
        assert_eq!(PiSession::of(&SessionMode::Fresh), Some(PiSession::Fresh));
        assert_eq!(PiSession::of(&SessionMode::Resume("a".into())), Some(PiSession::Continue("a".into())));
        assert_eq!(PiSession::of(&SessionMode::ForkFrom("a".into())), Some(PiSession::Fork("a".into())));
        // pi cannot cut a fork back: the whole session is forked.
        assert_eq!(PiSession::of(&SessionMode::ForkAt("a".into(), "m".into())), Some(PiSession::Fork("a".into())));
        assert_eq!(PiSession::of(&SessionMode::ContinueAndFork), None);
    }

    #[test]
    fn model_and_effort_become_model_and_thinking() {
        let command = PiCommand {
            model: "fake/fake-model".into(),
            effort: Some("high".into()),
            ..command(PiSession::Fresh, PiOptions::default())
        };
        assert_eq!(
            line(command),
            "--mode json -p --model fake/fake-model --thinking high --tools read,edit,write,grep,find,ls"
        );
    }

    #[test]
    fn the_thinking_option_wins_over_the_effort() {
        let options = PiOptions { thinking: Some("minimal".into()), ..PiOptions::default() };
        let command = PiCommand { effort: Some("high".into()), ..command(PiSession::Fresh, options) };
        assert_eq!(line(command), "--mode json -p --thinking minimal --tools read,edit,write,grep,find,ls");
    }

    #[test]
    fn the_tool_options_replace_the_default_tools() {
        let tools = |options: PiOptions| {
            let arguments = command(PiSession::Fresh, options).arguments();
            arguments[3..].join(" ")
        };
        assert_eq!(
            tools(PiOptions { tools: Some(vec!["read".into(), "bash".into()]), ..PiOptions::default() }),
            "--tools read,bash"
        );
        assert_eq!(tools(PiOptions { tools: Some(Vec::new()), ..PiOptions::default() }), "--no-tools");
        assert_eq!(tools(PiOptions { no_tools: true, ..PiOptions::default() }), "--no-tools");
        assert_eq!(tools(PiOptions { no_builtin_tools: true, ..PiOptions::default() }), "--no-builtin-tools");
    }

    #[test]
    fn every_option_in_the_documented_order() {
        let options = PiOptions {
            provider: Some("fake".into()),
            thinking: Some("low".into()),
            tools: Some(vec!["read".into()]),
            no_builtin_tools: false,
            no_tools: false,
            no_extensions: true,
            no_skills: true,
            extensions: vec!["/w/ext.ts".into(), "npm:pi-ext".into()],
            skills: vec!["/w/skills".into()],
            session_dir: Some("/w/sessions".into()),
            append_system_prompt: Some("Be brief.".into()),
        };
        let command = PiCommand { model: "m".into(), ..command(PiSession::Continue("s".into()), options) };
        assert_eq!(
            command.arguments(),
            [
                "--mode",
                "json",
                "-p",
                "--session-dir",
                "/w/sessions",
                "--session",
                "s",
                "--provider",
                "fake",
                "--model",
                "m",
                "--thinking",
                "low",
                "--tools",
                "read",
                "--no-extensions",
                "--extension",
                "/w/ext.ts",
                "--extension",
                "npm:pi-ext",
                "--no-skills",
                "--skill",
                "/w/skills",
                "--append-system-prompt",
                "Be brief.",
            ]
        );
    }
}
