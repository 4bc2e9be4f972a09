//! What a script sees: its environment and working directory (R3.7, R3.38, R7.3,
//! R7.6; §16 items 17, 18, 21).

use super::common::{RUN, emit, norm, say, state, str_of, transitions};
use crate::support::Test;

/// One line per variable: `NAME=[value]`, or `NAME unset`.
fn report_vars(names: &[&str]) -> String {
    names
        .iter()
        .map(|name| {
            format!("if [ -n \"${{{name}+set}}\" ]; then echo \"{name}=[${name}]\"; else echo \"{name} unset\"; fi\n")
        })
        .collect()
}

/// A state that appends the given variables to `log.txt` in its cwd, under a heading.
fn log_vars(heading: &str, names: &[&str]) -> String {
    format!("{{\necho '# {heading}'\n{}}} >> log.txt\n", report_vars(names))
}

#[test]
fn r7_6_ids_and_task_folder_are_set_under_both_prefixes() {
    let names = [
        "BATON_WORKFLOW_ID",
        "BATON_AGENT_ID",
        "BATON_TASK_FOLDER",
        "RAYMOND_WORKFLOW_ID",
        "RAYMOND_AGENT_ID",
        "RAYMOND_TASK_FOLDER",
    ];
    let outcome = Test::new()
        .file("START.sh", &format!("{}echo '<result>ok</result>'\n", log_vars("START", &names)))
        .run_workflow(&[]);
    outcome.status(0).stdout("ok\n");
    let log = std::fs::read_to_string(outcome.root().join("log.txt")).unwrap();
    assert_eq!(
        norm(&outcome, &log),
        "# START\n\
         BATON_WORKFLOW_ID=[test]\n\
         BATON_AGENT_ID=[main]\n\
         BATON_TASK_FOLDER=[[ROOT]/.baton/tasks/test/main]\n\
         RAYMOND_WORKFLOW_ID=[test]\n\
         RAYMOND_AGENT_ID=[main]\n\
         RAYMOND_TASK_FOLDER=[[ROOT]/.baton/tasks/test/main]\n"
    );
    assert!(outcome.root().join(".baton/tasks/test/main").is_dir(), "the task folder is created");
    // The step's meta file records exactly the variables Baton set.
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(outcome.run_dir(RUN).join("main_START_001.meta.json")).unwrap())
            .unwrap();
    assert_eq!(meta["exit_code"], 0);
    let mut keys: Vec<&String> = meta["env_vars"].as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "BATON_AGENT_ID",
            "BATON_TASK_FOLDER",
            "BATON_WORKFLOW_ID",
            "RAYMOND_AGENT_ID",
            "RAYMOND_TASK_FOLDER",
            "RAYMOND_WORKFLOW_ID"
        ]
    );
}

#[test]
fn r7_6_input_is_unset_without_input_and_empty_after_an_empty_result() {
    let inputs = ["BATON_INPUT", "RAYMOND_INPUT"];
    let outcome = Test::new()
        .file(
            "START.sh",
            &format!("{}{}", log_vars("START", &inputs), emit(r#"<function return="AFTER">EMPTY</function>"#)),
        )
        .file("EMPTY.sh", &emit("<result></result>"))
        .file("AFTER.sh", &format!("{}{}", log_vars("AFTER", &inputs), emit("<result>done</result>")))
        .run_workflow(&[]);
    outcome.status(0).stdout("done\n");
    let log = std::fs::read_to_string(outcome.root().join("log.txt")).unwrap();
    assert_eq!(log, "# START\nBATON_INPUT unset\nRAYMOND_INPUT unset\n# AFTER\nBATON_INPUT=[]\nRAYMOND_INPUT=[]\n");
}

#[test]
fn r6_7_cli_empty_input_is_an_empty_input() {
    let report = say("<result>[${BATON_INPUT-unset}] [${RAYMOND_INPUT-unset}]</result>");
    Test::new().file("START.sh", &report).run_workflow(&["--input", ""]).status(0).stdout("[] []\n");
    Test::new().file("START.sh", &report).run_workflow(&[]).status(0).stdout("[unset] [unset]\n");
    Test::new()
        .file("START.sh", &report)
        .run_workflow(&["--input", "two words"])
        .status(0)
        .stdout("[two words] [two words]\n");
}

#[test]
fn r3_1_input_lasts_exactly_one_state() {
    let outcome = Test::new()
        .file("START.sh", &emit(r#"<goto input="for B">B</goto>"#))
        .file("B.sh", &say("<goto input=\"B saw ${BATON_INPUT-unset}\">C</goto>"))
        .file("C.sh", &say("<goto>D</goto>"))
        .file("D.sh", &say("<result>D saw ${BATON_INPUT-unset}</result>"))
        .run_workflow(&[]);
    outcome.status(0).stdout("D saw unset\n");
    let metadata: Vec<String> =
        outcome.events_of(RUN, "TransitionOccurred").iter().map(|event| str_of(&event["metadata"]["input"])).collect();
    assert_eq!(metadata, ["for B", "B saw for B", "", ""]);
}

#[test]
fn r7_3_script_runs_in_the_agent_cwd_not_the_scope_dir() {
    let outcome = Test::new().file("START.sh", &say("<result>$(pwd -P)</result>")).run_workflow(&[]);
    outcome.status(0);
    assert_eq!(norm(&outcome, &outcome.stdout), "[ROOT]\n");
}

#[test]
fn r7_6_claudecode_is_removed_from_the_environment() {
    Test::new()
        .file("START.sh", &say("<result>CLAUDECODE=${CLAUDECODE-unset} OTHER=${OTHER_VAR-unset}</result>"))
        .env("CLAUDECODE", "1")
        .env("OTHER_VAR", "kept")
        .run_workflow(&[])
        .status(0)
        .stdout("CLAUDECODE=unset OTHER=kept\n");
}

#[test]
fn r3_7_reset_cd_relative_to_the_current_cwd() {
    let outcome = Test::new()
        .write("sub/.keep", "")
        .file("START.sh", &emit(r#"<reset cd="sub">HERE</reset>"#))
        .file("HERE.sh", &say("<result>$(pwd -P)</result>"))
        .run_workflow(&[]);
    outcome.status(0);
    assert_eq!(norm(&outcome, &outcome.stdout), "[ROOT]/sub\n");
}

#[test]
fn r3_38_reset_cd_chain_with_dot_dot() {
    let outcome = Test::new()
        .write("sub/.keep", "")
        .write("x/y/.keep", "")
        .file("START.sh", &emit(r#"<reset cd="sub">HERE</reset>"#))
        .file("HERE.sh", &format!("pwd -P > at_here.txt\n{}", emit(r#"<reset cd="../x">THERE</reset>"#)))
        .file("THERE.sh", &emit(r#"<reset cd="./y/../y">LAST</reset>"#))
        .file("LAST.sh", &say("<result>$(pwd -P)</result>"))
        .run_workflow(&[]);
    outcome.status(0);
    assert_eq!(norm(&outcome, &outcome.stdout), "[ROOT]/x/y\n");
    let at_here = std::fs::read_to_string(outcome.root().join("sub/at_here.txt")).unwrap();
    assert_eq!(norm(&outcome, &at_here), "[ROOT]/sub\n");
    assert_eq!(
        transitions(&outcome),
        [
            "main:START.sh -reset-> HERE.sh",
            "main:HERE.sh -reset-> THERE.sh",
            "main:THERE.sh -reset-> LAST.sh",
            "main:LAST.sh -result-> -",
        ]
    );
}

#[test]
fn r3_38_cwd_is_recorded_cleaned_and_absolute() {
    // The state file keeps the cleaned absolute cwd while the agent is there.
    let outcome = Test::new()
        .write("a/b/.keep", "")
        .file("START.sh", &emit(r#"<reset cd="a/./b/../b">HERE</reset>"#))
        .file("HERE.sh", "exit 4\n")
        .run_workflow(&[]);
    outcome.status(1);
    let saved = state(&outcome);
    assert_eq!(norm(&outcome, &str_of(&saved["agents"][0]["cwd"])), "[ROOT]/a/b");
    assert_eq!(saved["agents"][0]["current_state"], "HERE.sh");
}

#[test]
fn r3_5_empty_input_attribute_is_no_input() {
    Test::new()
        .file("START.sh", &emit(r#"<goto input="">B</goto>"#))
        .file("B.sh", &say("<result>[${BATON_INPUT-unset}]</result>"))
        .run_workflow(&[])
        .status(0)
        .stdout("[unset]\n");
}

#[test]
fn r3_8_reset_task_new_gives_a_fresh_task_folder() {
    let outcome = Test::new()
        .file("START.sh", &emit(r#"<reset task="new">B</reset>"#))
        .file("B.sh", &say("<result>$BATON_TASK_FOLDER</result>"))
        .run_workflow(&[]);
    outcome.status(0);
    assert_eq!(norm(&outcome, &outcome.stdout), "[ROOT]/.baton/tasks/test/main_task1\n");
    assert!(outcome.root().join(".baton/tasks/test/main_task1").is_dir());
}

#[test]
fn r7_1_script_runs_with_bash_whatever_its_shebang_and_mode() {
    // Not executable, and a shebang that would fail: bash runs it by absolute path.
    let outcome = Test::new()
        .file("START.sh", &format!("#!/bin/false\n{}", say("<result>$0 ${BASH_VERSION:+bash}</result>")))
        .run_workflow(&[]);
    outcome.status(0);
    assert_eq!(norm(&outcome, &outcome.stdout), "[ROOT]/wf/START.sh bash\n");
}

/// R7.11 through the real binary: every step has its three files; the empty
/// `stderr.txt` files after the first are links to it (`docs/trace-format.md`), and a
/// step's stderr with output is a file of its own.
#[test]
fn r7_11_empty_stderr_files_are_links_and_read_empty() {
    use std::os::unix::fs::MetadataExt;
    let outcome = Test::new()
        .file("START.sh", "echo '<goto>A.sh</goto>'\n")
        .file("A.sh", "echo warned >&2\necho '<goto>B.sh</goto>'\n")
        .file("B.sh", "echo '<result>ok</result>'\n")
        .run_workflow(&[]);
    outcome.status(0).stdout("ok\n");
    let file = |name: &str| outcome.run_dir(RUN).join(name);
    for step in ["START_001", "A_002", "B_003"] {
        for suffix in ["stdout.txt", "stderr.txt", "meta.json"] {
            assert!(file(&format!("main_{step}.{suffix}")).is_file(), "main_{step}.{suffix}");
        }
    }
    let (start, a, b) = (
        std::fs::metadata(file("main_START_001.stderr.txt")).unwrap(),
        std::fs::metadata(file("main_A_002.stderr.txt")).unwrap(),
        std::fs::metadata(file("main_B_003.stderr.txt")).unwrap(),
    );
    assert_eq!((start.ino(), start.nlink(), b.len()), (b.ino(), 2, 0), "B's empty stderr links to START's");
    assert_eq!(std::fs::read_to_string(file("main_A_002.stderr.txt")).unwrap(), "warned\n");
    assert_eq!(a.nlink(), 1);
}
