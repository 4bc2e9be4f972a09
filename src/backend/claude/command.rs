//! The `claude` command line (R12.1–R12.2, decision A12).
//!
//! The prompt is not an argument: it goes to stdin, which is then closed (A12), so
//! its size is not bounded by the OS argument limit and Claude does not wait 3 s
//! for more input.
//!
//! A state's Claude options (`docs/claude.md`) add flags after R12.1's: its
//! `permission_mode` takes the place of the run's permission choice, its
//! `disallowed_tools` join Baton's in the one `--disallowed-tools`, and the rest
//! follow in this order: `--tools`, `--allowed-tools`, `--max-turns`,
//! `--fallback-model`, `--append-system-prompt`, `--mcp-config … --strict-mcp-config`,
//! `--settings`, `--add-dir` (one per directory), `--json-schema`.

use crate::backend::SessionMode;
use crate::backend::claude::options::{ClaudeOptions, ConfigSource};
use crate::ids::SessionId;

/// Tools Baton never lets Claude use: they would wait for a human or change modes.
pub(crate) const DISALLOWED_TOOLS: &str = "EnterPlanMode,ExitPlanMode,AskUserQuestion,NotebookEdit";

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ClaudeCommand {
    /// `--dangerously-skip-permissions`, else `--permission-mode acceptEdits` (R12.2).
    pub(crate) skip_permissions: bool,
    pub(crate) model: String,
    pub(crate) effort: Option<String>,
    pub(crate) session: SessionMode,
    /// `--session-id`: the id of the conversation a fresh or forked turn starts,
    /// chosen by Baton (issue 13.4).
    pub(crate) new_session_id: Option<SessionId>,
    /// The state's options; paths already absolute.
    pub(crate) options: ClaudeOptions,
}

impl ClaudeCommand {
    /// The arguments after the program name, in R12.1's order.
    pub(crate) fn arguments(&self) -> Vec<String> {
        let mut arguments: Vec<String> =
            ["-p", "--output-format", "stream-json", "--verbose"].into_iter().map(String::from).collect();
        let options = &self.options;
        if let Some(mode) = &options.permission_mode {
            // The state's mode wins over the run's, in both directions (docs/decisions.md).
            arguments.extend(["--permission-mode".into(), mode.clone()]);
        } else if self.skip_permissions {
            arguments.push("--dangerously-skip-permissions".into());
        } else {
            arguments.extend(["--permission-mode".into(), "acceptEdits".into()]);
        }
        arguments.extend(["--model".into(), self.model.clone()]);
        if let Some(effort) = &self.effort {
            arguments.extend(["--effort".into(), effort.clone()]);
        }
        match &self.session {
            SessionMode::Fresh => {}
            SessionMode::Resume(session) => arguments.extend(["--resume".into(), session.to_string()]),
            SessionMode::ForkFrom(session) => {
                arguments.extend(["--resume".into(), session.to_string(), "--fork-session".into()]);
            }
            SessionMode::ForkAt(session, message) => arguments.extend([
                "--resume".into(),
                session.to_string(),
                "--resume-session-at".into(),
                message.clone(),
                "--fork-session".into(),
            ]),
            SessionMode::ContinueAndFork => arguments.extend(["-c".into(), "--fork-session".into()]),
        }
        // A new conversation (fresh or a fork) takes the id Baton chose and journalled.
        if let (Some(id), false) = (&self.new_session_id, matches!(self.session, SessionMode::Resume(_))) {
            arguments.extend(["--session-id".into(), id.to_string()]);
        }
        let mut disallowed: Vec<&str> = DISALLOWED_TOOLS.split(',').collect();
        for tool in &options.disallowed_tools {
            if !disallowed.contains(&tool.as_str()) {
                disallowed.push(tool);
            }
        }
        arguments.extend(["--disallowed-tools".into(), disallowed.join(",")]);
        if let Some(tools) = &options.tools {
            arguments.extend(["--tools".into(), tools.join(",")]);
        }
        if !options.allowed_tools.is_empty() {
            arguments.extend(["--allowed-tools".into(), options.allowed_tools.join(",")]);
        }
        if let Some(turns) = options.max_turns {
            arguments.extend(["--max-turns".into(), turns.to_string()]);
        }
        if let Some(model) = &options.fallback_model {
            arguments.extend(["--fallback-model".into(), model.clone()]);
        }
        if let Some(prompt) = &options.append_system_prompt {
            arguments.extend(["--append-system-prompt".into(), prompt.clone()]);
        }
        if !options.mcp_config.is_empty() {
            arguments.push("--mcp-config".into());
            arguments.extend(options.mcp_config.iter().map(|source| config_argument(source).to_string()));
            arguments.push("--strict-mcp-config".into());
        }
        if let Some(settings) = &options.settings {
            arguments.extend(["--settings".into(), config_argument(settings).to_string()]);
        }
        for dir in &options.add_dirs {
            arguments.extend(["--add-dir".into(), dir.clone()]);
        }
        if let Some(schema) = &options.output_schema {
            arguments.extend(["--json-schema".into(), schema.clone()]);
        }
        arguments
    }
}

/// A path or inline JSON, as Claude Code takes either.
fn config_argument(source: &ConfigSource) -> &str {
    match source {
        ConfigSource::Path(path) | ConfigSource::Json(path) => path,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(command: ClaudeCommand) -> String {
        command.arguments().join(" ")
    }

    #[test]
    fn r12_1_fresh_haiku_high_without_skip_permissions() {
        let command = ClaudeCommand {
            skip_permissions: false,
            model: "haiku".into(),
            effort: Some("high".into()),
            session: SessionMode::Fresh,
            new_session_id: None,
            options: ClaudeOptions::default(),
        };
        assert_eq!(
            line(command),
            "-p --output-format stream-json --verbose --permission-mode acceptEdits --model haiku --effort high \
             --disallowed-tools EnterPlanMode,ExitPlanMode,AskUserQuestion,NotebookEdit"
        );
    }

    #[test]
    fn r12_1_resume() {
        let command = ClaudeCommand {
            skip_permissions: true,
            model: "sonnet".into(),
            effort: None,
            session: SessionMode::Resume("s-1".into()),
            new_session_id: None,
            options: ClaudeOptions::default(),
        };
        assert_eq!(
            line(command),
            "-p --output-format stream-json --verbose --dangerously-skip-permissions --model sonnet --resume s-1 \
             --disallowed-tools EnterPlanMode,ExitPlanMode,AskUserQuestion,NotebookEdit"
        );
    }

    #[test]
    fn r3_13_call_child_forks_the_callers_session() {
        let command = ClaudeCommand {
            skip_permissions: true,
            model: "opus".into(),
            effort: None,
            session: SessionMode::ForkFrom("caller".into()),
            new_session_id: None,
            options: ClaudeOptions::default(),
        };
        assert_eq!(
            line(command),
            "-p --output-format stream-json --verbose --dangerously-skip-permissions --model opus --resume caller \
             --fork-session --disallowed-tools EnterPlanMode,ExitPlanMode,AskUserQuestion,NotebookEdit"
        );
    }

    #[test]
    fn a_rerun_forks_a_borrowed_session_cut_back_at_a_message() {
        let command = ClaudeCommand {
            skip_permissions: true,
            model: "opus".into(),
            effort: None,
            session: SessionMode::ForkAt("original".into(), "msg_3".into()),
            new_session_id: None,
            options: ClaudeOptions::default(),
        };
        assert_eq!(
            line(command),
            "-p --output-format stream-json --verbose --dangerously-skip-permissions --model opus --resume original \
             --resume-session-at msg_3 --fork-session --disallowed-tools \
             EnterPlanMode,ExitPlanMode,AskUserQuestion,NotebookEdit"
        );
    }

    #[test]
    fn continue_session_never_emits_resume() {
        let command = ClaudeCommand {
            skip_permissions: true,
            model: "sonnet".into(),
            effort: None,
            session: SessionMode::ContinueAndFork,
            new_session_id: None,
            options: ClaudeOptions::default(),
        };
        let arguments = command.arguments();
        assert!(arguments.windows(2).any(|pair| pair == ["-c", "--fork-session"]));
        assert!(!arguments.contains(&"--resume".to_string()));
    }

    fn with_new_session(session: SessionMode) -> String {
        line(ClaudeCommand {
            skip_permissions: true,
            model: "sonnet".into(),
            effort: None,
            session,
            new_session_id: Some("0b9e2d4e-7c7e-4f5e-9d55-3b1f1e1f1a01".into()),
            options: ClaudeOptions::default(),
        })
    }

    #[test]
    fn a_new_conversation_takes_the_id_baton_chose_and_a_resumed_one_keeps_its_own() {
        let id = "--session-id 0b9e2d4e-7c7e-4f5e-9d55-3b1f1e1f1a01";
        let head = "-p --output-format stream-json --verbose --dangerously-skip-permissions --model sonnet";
        assert_eq!(with_new_session(SessionMode::Fresh), format!("{head} {id} {BATON_DISALLOWED}"));
        assert_eq!(
            with_new_session(SessionMode::ForkFrom("caller".into())),
            format!("{head} --resume caller --fork-session {id} {BATON_DISALLOWED}")
        );
        assert_eq!(
            with_new_session(SessionMode::Resume("s-1".into())),
            format!("{head} --resume s-1 {BATON_DISALLOWED}")
        );
    }

    /// A fresh sonnet turn in a run with skip-permissions, with `options`.
    fn with_options(options: ClaudeOptions) -> String {
        fresh_arguments(options).join(" ")
    }

    fn fresh_arguments(options: ClaudeOptions) -> Vec<String> {
        ClaudeCommand {
            skip_permissions: true,
            model: "sonnet".into(),
            effort: None,
            session: SessionMode::Fresh,
            new_session_id: None,
            options,
        }
        .arguments()
    }

    const HEAD: &str = "-p --output-format stream-json --verbose";
    const BATON_DISALLOWED: &str = "--disallowed-tools EnterPlanMode,ExitPlanMode,AskUserQuestion,NotebookEdit";

    #[test]
    fn permission_mode_replaces_skip_permissions() {
        let options = ClaudeOptions { permission_mode: Some("plan".into()), ..ClaudeOptions::default() };
        assert_eq!(with_options(options), format!("{HEAD} --permission-mode plan --model sonnet {BATON_DISALLOWED}"));
    }

    #[test]
    fn permission_mode_replaces_accept_edits() {
        let command = ClaudeCommand {
            skip_permissions: false,
            model: "haiku".into(),
            effort: Some("low".into()),
            session: SessionMode::Resume("s-1".into()),
            new_session_id: None,
            options: ClaudeOptions { permission_mode: Some("bypassPermissions".into()), ..ClaudeOptions::default() },
        };
        assert_eq!(
            line(command),
            format!(
                "{HEAD} --permission-mode bypassPermissions --model haiku --effort low --resume s-1 {BATON_DISALLOWED}"
            )
        );
    }

    #[test]
    fn tools_become_one_comma_joined_argument() {
        let options = ClaudeOptions { tools: Some(vec!["Read".into(), "Grep".into()]), ..ClaudeOptions::default() };
        assert_eq!(
            with_options(options),
            format!("{HEAD} --dangerously-skip-permissions --model sonnet {BATON_DISALLOWED} --tools Read,Grep")
        );
    }

    #[test]
    fn no_tools_is_an_empty_argument() {
        let options = ClaudeOptions { tools: Some(Vec::new()), ..ClaudeOptions::default() };
        let arguments = fresh_arguments(options);
        assert_eq!(arguments[arguments.len() - 2..], ["--tools".to_string(), String::new()]);
    }

    #[test]
    fn allowed_tools() {
        let options =
            ClaudeOptions { allowed_tools: vec!["Read".into(), "Bash(git diff:*)".into()], ..ClaudeOptions::default() };
        let arguments = fresh_arguments(options);
        assert_eq!(arguments[arguments.len() - 2..], ["--allowed-tools".to_string(), "Read,Bash(git diff:*)".into()]);
    }

    #[test]
    fn disallowed_tools_join_batons_without_repeats() {
        let options = ClaudeOptions {
            disallowed_tools: vec!["Bash".into(), "NotebookEdit".into(), "WebFetch".into()],
            ..ClaudeOptions::default()
        };
        assert_eq!(
            with_options(options),
            format!("{HEAD} --dangerously-skip-permissions --model sonnet {BATON_DISALLOWED},Bash,WebFetch")
        );
    }

    #[test]
    fn max_turns_fallback_model_and_appended_system_prompt() {
        let options = ClaudeOptions {
            max_turns: Some(5),
            fallback_model: Some("haiku".into()),
            append_system_prompt: Some("Be brief.".into()),
            ..ClaudeOptions::default()
        };
        assert_eq!(
            with_options(options),
            format!(
                "{HEAD} --dangerously-skip-permissions --model sonnet {BATON_DISALLOWED} --max-turns 5 \
                 --fallback-model haiku --append-system-prompt Be brief."
            )
        );
    }

    #[test]
    fn mcp_configs_are_strict_and_settings_take_a_path_or_json() {
        let options = ClaudeOptions {
            mcp_config: vec![
                ConfigSource::Path("/w/mcp.json".into()),
                ConfigSource::Json(r#"{"mcpServers":{}}"#.into()),
            ],
            settings: Some(ConfigSource::Json(r#"{"model":"haiku"}"#.into())),
            ..ClaudeOptions::default()
        };
        assert_eq!(
            with_options(options),
            format!(
                r#"{HEAD} --dangerously-skip-permissions --model sonnet {BATON_DISALLOWED} --mcp-config /w/mcp.json {{"mcpServers":{{}}}} --strict-mcp-config --settings {{"model":"haiku"}}"#
            )
        );
        let options =
            ClaudeOptions { settings: Some(ConfigSource::Path("/w/s.json".into())), ..ClaudeOptions::default() };
        assert!(with_options(options).ends_with(" --settings /w/s.json"));
    }

    #[test]
    fn one_add_dir_per_directory_then_the_json_schema() {
        let options = ClaudeOptions {
            add_dirs: vec!["/a".into(), "/b c".into()],
            output_schema: Some(r#"{"type":"object"}"#.into()),
            ..ClaudeOptions::default()
        };
        let arguments = fresh_arguments(options);
        let tail: Vec<&str> = arguments[arguments.len() - 6..].iter().map(String::as_str).collect();
        assert_eq!(tail, ["--add-dir", "/a", "--add-dir", "/b c", "--json-schema", r#"{"type":"object"}"#]);
    }

    #[test]
    fn every_option_in_the_documented_order() {
        let options = ClaudeOptions {
            permission_mode: Some("dontAsk".into()),
            tools: Some(vec!["Read".into()]),
            allowed_tools: vec!["Read".into()],
            disallowed_tools: vec!["Bash".into()],
            max_turns: Some(2),
            fallback_model: Some("haiku".into()),
            append_system_prompt: Some("x".into()),
            mcp_config: vec![ConfigSource::Path("/m.json".into())],
            settings: Some(ConfigSource::Path("/s.json".into())),
            add_dirs: vec!["/d".into()],
            output_schema: Some("{}".into()),
        };
        assert_eq!(
            with_options(options),
            format!(
                "{HEAD} --permission-mode dontAsk --model sonnet {BATON_DISALLOWED},Bash --tools Read --allowed-tools Read \
                 --max-turns 2 --fallback-model haiku --append-system-prompt x --mcp-config /m.json --strict-mcp-config \
                 --settings /s.json --add-dir /d --json-schema {{}}"
            )
        );
    }
}
