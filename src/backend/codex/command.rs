//! The `codex exec` command line.
//!
//! `codex exec --json [flags] -` reads the prompt from stdin (`-`), so its size
//! is not bounded by the OS argument limit; a turn that continues a thread puts
//! the subcommand last: `codex exec --json [flags] resume <thread> -` (goto,
//! reminders, a result returning to its caller) or `… fork <thread> -` (a
//! `<call>` child, which starts a new thread holding the caller's history and
//! leaves the caller's thread as it was). Every flag goes before the subcommand:
//! Codex 0.169 takes `-s`, `--add-dir` and the rest there for `resume` and `fork`
//! too, while `resume` and `fork` themselves lack `-s` and `--add-dir`.
//!
//! Order: `exec --json --skip-git-repo-check`, `-m`, the effort as
//! `-c model_reasoning_effort=…`, the permissions
//! (`--dangerously-bypass-approvals-and-sandbox`, or `-s MODE -c
//! approval_policy="never"`: nobody is there to approve), `--add-dir` per
//! directory, `--output-schema FILE`, the state's `codex_config` as `-c
//! key=value`, then the session and `-`.
//!
//! `--skip-git-repo-check` is always given. Without it Codex 0.169 refuses to run
//! in a directory it does not trust unless that is inside a git repository by
//! its own test (`git` itself: an empty `.git` directory fails it), and only in
//! sandboxed modes. The check decides whether Codex runs at all, not what it may
//! do, and Baton chooses the sandbox itself, so a workflow's agent directory
//! need not be a repository (`docs/decisions.md`).

use std::path::PathBuf;

use crate::backend::SessionMode;
use crate::backend::codex::options::CodexOptions;

/// How Codex may touch the machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Permissions {
    /// `--dangerously-bypass-approvals-and-sandbox`.
    Bypass,
    /// `-s MODE` with approvals never asked for.
    Sandbox(&'static str),
}

impl Permissions {
    /// The state's `sandbox`, else its Claude `permission_mode` mapped (`plan`
    /// reads only, `bypassPermissions` bypasses, the rest write the workspace),
    /// else the run's `--dangerously-skip-permissions` (bypass, else
    /// `workspace-write`).
    pub(crate) fn choose(options: &CodexOptions, skip_permissions: bool) -> Permissions {
        if let Some(sandbox) = &options.sandbox {
            return match sandbox.as_str() {
                "read-only" => Permissions::Sandbox("read-only"),
                "danger-full-access" => Permissions::Sandbox("danger-full-access"),
                _ => Permissions::Sandbox("workspace-write"),
            };
        }
        match options.permission_mode.as_deref() {
            Some("plan") => Permissions::Sandbox("read-only"),
            Some("bypassPermissions") => Permissions::Bypass,
            Some(_) => Permissions::Sandbox("workspace-write"),
            None if skip_permissions => Permissions::Bypass,
            None => Permissions::Sandbox("workspace-write"),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CodexCommand {
    pub(crate) permissions: Permissions,
    /// Empty: Codex's own configured model.
    pub(crate) model: String,
    pub(crate) effort: Option<String>,
    pub(crate) session: SessionMode,
    /// The state's options; `add_dirs` already absolute.
    pub(crate) options: CodexOptions,
    /// Where the state's `output_schema` was written.
    pub(crate) schema_file: Option<PathBuf>,
}

impl CodexCommand {
    /// The arguments after the program name.
    pub(crate) fn arguments(&self) -> Vec<String> {
        let mut arguments: Vec<String> = vec!["exec".into(), "--json".into(), "--skip-git-repo-check".into()];
        if !self.model.is_empty() {
            arguments.extend(["-m".into(), self.model.clone()]);
        }
        if let Some(effort) = &self.effort {
            arguments.extend(["-c".into(), format!("model_reasoning_effort={}", toml_string(effort))]);
        }
        match self.permissions {
            Permissions::Bypass => arguments.push("--dangerously-bypass-approvals-and-sandbox".into()),
            Permissions::Sandbox(mode) => {
                arguments.extend(["-s".into(), mode.into(), "-c".into(), "approval_policy=\"never\"".into()]);
            }
        }
        for dir in &self.options.add_dirs {
            arguments.extend(["--add-dir".into(), dir.clone()]);
        }
        if let Some(file) = &self.schema_file {
            arguments.extend(["--output-schema".into(), file.to_string_lossy().into_owned()]);
        }
        for (key, value) in &self.options.config {
            arguments.extend(["-c".into(), format!("{key}={value}")]);
        }
        match &self.session {
            // `--continue-session` is refused before a turn for Codex (its profile
            // cannot continue the latest thread), so it never gets here.
            SessionMode::Fresh | SessionMode::ContinueAndFork => {}
            SessionMode::Resume(thread) => arguments.extend(["resume".into(), thread.to_string()]),
            // Codex forks a whole thread: a fork at a message forks all of it (docs/backends.md).
            SessionMode::ForkFrom(thread) | SessionMode::ForkAt(thread, _) => {
                arguments.extend(["fork".into(), thread.to_string()]);
            }
        }
        arguments.push("-".into());
        arguments
    }
}

/// `text` as a TOML basic string (JSON's escapes are TOML's).
pub(crate) fn toml_string(text: &str) -> String {
    serde_json::Value::String(text.to_string()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command(session: SessionMode) -> CodexCommand {
        CodexCommand {
            permissions: Permissions::Bypass,
            model: String::new(),
            effort: None,
            session,
            options: CodexOptions::default(),
            schema_file: None,
        }
    }

    fn line(command: &CodexCommand) -> String {
        command.arguments().join(" ")
    }

    #[test]
    fn a_fresh_turn_reads_its_prompt_from_stdin() {
        assert_eq!(
            line(&command(SessionMode::Fresh)),
            "exec --json --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox -"
        );
    }

    #[test]
    fn r3_15_goto_resumes_the_thread_and_call_forks_it() {
        assert_eq!(
            line(&command(SessionMode::Resume("t-1".into()))),
            "exec --json --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox resume t-1 -"
        );
        assert_eq!(
            line(&command(SessionMode::ForkFrom("t-1".into()))),
            "exec --json --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox fork t-1 -"
        );
        assert_eq!(
            line(&command(SessionMode::ForkAt("t-1".into(), "m-9".into()))),
            "exec --json --skip-git-repo-check --dangerously-bypass-approvals-and-sandbox fork t-1 -"
        );
    }

    #[test]
    fn every_option_goes_before_the_subcommand() {
        let mut options = CodexOptions {
            sandbox: Some("read-only".into()),
            add_dirs: vec!["/data".into(), "/more".into()],
            ..CodexOptions::default()
        };
        options.config.insert("model_verbosity".into(), "\"low\"".into());
        let command = CodexCommand {
            permissions: Permissions::choose(&options, true),
            model: "gpt-5.5".into(),
            effort: Some("high".into()),
            session: SessionMode::Resume("t-2".into()),
            options,
            schema_file: Some("/tmp/schema.json".into()),
        };
        assert_eq!(
            line(&command),
            "exec --json --skip-git-repo-check -m gpt-5.5 -c model_reasoning_effort=\"high\" -s read-only -c \
             approval_policy=\"never\" --add-dir /data --add-dir /more --output-schema /tmp/schema.json -c \
             model_verbosity=\"low\" resume t-2 -"
        );
    }

    #[test]
    fn the_sandbox_comes_from_the_state_then_claudes_permission_mode_then_the_run() {
        let with = |sandbox: Option<&str>, mode: Option<&str>| CodexOptions {
            sandbox: sandbox.map(String::from),
            permission_mode: mode.map(String::from),
            ..CodexOptions::default()
        };
        assert_eq!(
            Permissions::choose(&with(Some("danger-full-access"), Some("plan")), false),
            Permissions::Sandbox("danger-full-access")
        );
        assert_eq!(Permissions::choose(&with(None, Some("plan")), true), Permissions::Sandbox("read-only"));
        assert_eq!(Permissions::choose(&with(None, Some("bypassPermissions")), false), Permissions::Bypass);
        assert_eq!(
            Permissions::choose(&with(None, Some("acceptEdits")), true),
            Permissions::Sandbox("workspace-write")
        );
        assert_eq!(Permissions::choose(&with(None, None), true), Permissions::Bypass);
        assert_eq!(Permissions::choose(&with(None, None), false), Permissions::Sandbox("workspace-write"));
    }

    #[test]
    fn the_effort_is_a_quoted_toml_string() {
        assert_eq!(toml_string("x\"y"), "\"x\\\"y\"");
    }
}
