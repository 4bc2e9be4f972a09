//! The `claude` command line (R12.1–R12.2, decision A12).
//!
//! The prompt is not an argument: it goes to stdin, which is then closed (A12), so
//! its size is not bounded by the OS argument limit and Claude does not wait 3 s
//! for more input.

use crate::backend::SessionMode;

/// Tools Baton never lets Claude use: they would wait for a human or change modes.
pub(crate) const DISALLOWED_TOOLS: &str = "EnterPlanMode,ExitPlanMode,AskUserQuestion,NotebookEdit";

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ClaudeCommand {
    /// `--dangerously-skip-permissions`, else `--permission-mode acceptEdits` (R12.2).
    pub(crate) skip_permissions: bool,
    pub(crate) model: String,
    pub(crate) effort: Option<String>,
    pub(crate) session: SessionMode,
}

impl ClaudeCommand {
    /// The arguments after the program name, in R12.1's order.
    pub(crate) fn arguments(&self) -> Vec<String> {
        let mut arguments: Vec<String> =
            ["-p", "--output-format", "stream-json", "--verbose"].into_iter().map(String::from).collect();
        if self.skip_permissions {
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
        arguments.extend(["--disallowed-tools".into(), DISALLOWED_TOOLS.into()]);
        arguments
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
        };
        let arguments = command.arguments();
        assert!(arguments.windows(2).any(|pair| pair == ["-c", "--fork-session"]));
        assert!(!arguments.contains(&"--resume".to_string()));
    }
}
