//! raymond's command line, so that scripts that call `ray` keep working when `ray`
//! is a link to `baton`: `ray WORKFLOW [flags]`, `ray --resume ID`, `ray --list`,
//! `ray --recover`, `ray --status ID`, `ray --init-config`.
//!
//! raymond has no subcommands for these: its root command takes the workflow and
//! the flags pick the action. The form is rewritten into Baton's subcommands before
//! parsing, so there is one parser and one set of messages. Flags that only rename
//! (`--workflow-id` for `--run-id`, `-v`/`--verbose`, `--on-ask`, `--name`) are
//! accepted by the subcommands themselves.

use std::ffi::{OsStr, OsString};

/// The words that start Baton's own form.
const SUBCOMMANDS: &[&str] = &[
    "run",
    "resume",
    "answer",
    "rerun",
    "list",
    "gc",
    "status",
    "report",
    "logs",
    "repair",
    "init-config",
    "completion",
    "test",
    "new",
    "convert",
    "lint",
    "diagram",
    "schema",
    "serve",
    "worker",
    "help",
];

/// raymond's action flags that take a value: the Baton subcommand each becomes.
const ACTIONS_WITH_VALUE: &[(&str, &str)] = &[("--resume", "resume"), ("--status", "status")];

/// raymond's action flags without a value.
const ACTIONS: &[(&str, &str)] = &[("--list", "list"), ("--recover", "list"), ("--init-config", "init-config")];

/// Flags (before any subcommand) that Baton's parser understands as they are.
const BATON_GLOBAL: &[&str] = &["-h", "--help", "-V", "--version"];

/// `args` (program name first) in Baton's form: unchanged when they already are.
pub(crate) fn translate(args: Vec<OsString>) -> Vec<OsString> {
    let Some((program, rest)) = args.split_first() else { return args };
    let mut words = rest.iter().map(|arg| arg.to_string_lossy());
    let first_word = loop {
        match words.next() {
            Some(word) if word == "--baton-dir" => {
                words.next();
            }
            Some(word) if word.starts_with("--baton-dir=") => {}
            other => break other,
        }
    };
    match first_word.as_deref() {
        None => return args,
        Some(word) if SUBCOMMANDS.contains(&word) || BATON_GLOBAL.contains(&word) => return args,
        _ => {}
    }
    let mut rest: Vec<OsString> = rest.to_vec();
    let mut translated = vec![program.clone()];
    for (flag, subcommand) in ACTIONS_WITH_VALUE {
        if let Some(value) = take_flag_value(&mut rest, flag) {
            translated.push(OsString::from(subcommand));
            translated.push(value);
            translated.extend(rest);
            return translated;
        }
    }
    for (flag, subcommand) in ACTIONS {
        if let Some(index) = rest.iter().position(|arg| arg == OsStr::new(flag)) {
            rest.remove(index);
            translated.push(OsString::from(subcommand));
            translated.extend(rest);
            return translated;
        }
    }
    translated.push(OsString::from("run"));
    translated.extend(rest);
    translated
}

/// Remove `FLAG VALUE` or `FLAG=VALUE` from `args` and return the value. A flag
/// with nothing after it is left for the parser to report.
fn take_flag_value(args: &mut Vec<OsString>, flag: &str) -> Option<OsString> {
    let with_equals = format!("{flag}=");
    for index in 0..args.len() {
        let arg = args[index].to_string_lossy().into_owned();
        if arg == flag && index + 1 < args.len() {
            let value = args.remove(index + 1);
            args.remove(index);
            return Some(value);
        }
        if let Some(value) = arg.strip_prefix(&with_equals) {
            let value = OsString::from(value);
            args.remove(index);
            return Some(value);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<OsString> {
        line.split_whitespace().map(OsString::from).collect()
    }

    fn translated(line: &str) -> String {
        translate(words(line)).iter().map(|arg| arg.to_string_lossy().into_owned()).collect::<Vec<_>>().join(" ")
    }

    #[test]
    fn baton_form_is_left_alone() {
        for line in
            ["baton run wf", "baton resume r1", "baton --version", "baton -h", "baton", "baton --baton-dir d list"]
        {
            assert_eq!(translated(line), line);
        }
    }

    #[test]
    fn a_workflow_without_a_subcommand_is_run() {
        assert_eq!(translated("ray wf/ --budget 5 --workflow-id w1"), "ray run wf/ --budget 5 --workflow-id w1");
        assert_eq!(translated("ray --quiet wf.yaml"), "ray run --quiet wf.yaml");
    }

    #[test]
    fn raymonds_action_flags_become_subcommands() {
        assert_eq!(translated("ray --resume w1 --input yes"), "ray resume w1 --input yes");
        assert_eq!(translated("ray --resume=w1"), "ray resume w1");
        assert_eq!(translated("ray --status w1"), "ray status w1");
        assert_eq!(translated("ray --list"), "ray list");
        assert_eq!(translated("ray --recover"), "ray list");
        assert_eq!(translated("ray --init-config"), "ray init-config");
        assert_eq!(translated("ray --baton-dir d --list"), "ray list --baton-dir d");
    }
}
