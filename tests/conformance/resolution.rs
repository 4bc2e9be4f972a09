//! State-name resolution and entry points (R1.8, R1.11, R1.12, R1.17; §16 items 1, 2, 4).

use super::common::{RUN, assert_fatal, emit, started, transitions};
use crate::support::Test;
use crate::support::fake_claude::{FakeClaude, Reply};

const DONE_B_SH: &str = "echo '<result>ran B.sh</result>'\n";

#[test]
fn r1_12_abstract_target_resolves_to_sh() {
    let outcome = Test::new().file("START.sh", &emit("<goto>B</goto>")).file("B.sh", DONE_B_SH).run_workflow(&[]);
    outcome.status(0).stdout("ran B.sh\n");
    assert_eq!(transitions(&outcome)[0], "main:START.sh -goto-> B.sh");
}

#[test]
fn r1_12_abstract_target_resolves_to_md() {
    // Only B.md exists: the goto resolves to it, and the prompt runs (through the fake Claude CLI).
    let test = Test::new().with_fake_claude().file("START.sh", &emit("<goto>B</goto>")).file("B.md", "Say hi.\n");
    FakeClaude::at(test.root()).rule("a", "Say hi.", Reply::text("<result>ran B.md</result>"));
    let outcome = test.run_workflow(&[]);
    outcome.status(0).stdout("ran B.md\n");
    assert_eq!(transitions(&outcome)[0], "main:START.sh -goto-> B.md");
}

#[test]
fn r1_12_ambiguous_md_and_sh_is_fatal() {
    let outcome = Test::new()
        .file("START.sh", &emit("<goto>B</goto>"))
        .file("B.md", "prompt\n")
        .file("B.sh", DONE_B_SH)
        .run_workflow(&["--no-lint"]);
    assert_fatal(
        &outcome,
        "main",
        "START.sh",
        "TargetResolutionError",
        "script `START.sh`: cannot resolve its transition target: state `B` is ambiguous in workflow `[ROOT]/wf`: \
         B.md and B.sh both exist; use an explicit extension",
    );
    assert_eq!(started(&outcome), ["main:START.sh"]);
}

#[test]
fn r1_11_explicit_extension_avoids_the_ambiguity() {
    let outcome = Test::new()
        .file("START.sh", &emit("<goto>B.sh</goto>"))
        .file("B.md", "prompt\n")
        .file("B.sh", DONE_B_SH)
        .run_workflow(&[]);
    outcome.status(0).stdout("ran B.sh\n");
}

#[test]
fn r1_12_only_windows_script_is_not_compatible_with_this_platform() {
    let outcome = Test::new()
        .file("START.sh", &emit("<goto>P</goto>"))
        .file("P.bat", "@echo <result>windows</result>\r\n")
        .run_workflow(&["--no-lint"]);
    assert_fatal(
        &outcome,
        "main",
        "START.sh",
        "TargetResolutionError",
        "script `START.sh`: cannot resolve its transition target: state `P` in workflow `[ROOT]/wf` exists only as P.bat, \
         which cannot run on Unix",
    );
}

#[test]
fn r1_8_explicit_ps1_target_is_a_platform_error() {
    let outcome = Test::new()
        .file("START.sh", &emit("<goto>P.ps1</goto>"))
        .file("P.ps1", "Write-Output '<result>windows</result>'\n")
        .run_workflow(&["--no-lint"]);
    assert_fatal(
        &outcome,
        "main",
        "START.sh",
        "TargetResolutionError",
        "script `START.sh`: cannot resolve its transition target: state `P.ps1` cannot run on Unix: `.bat` and `.ps1` scripts \
         run only on Windows",
    );
    assert_eq!(started(&outcome), ["main:START.sh"]);
}

#[test]
fn r1_17_ambiguous_entry_point() {
    let outcome = Test::new()
        .file("1_START.md", "prompt\n")
        .file("START.sh", &emit("<result>should not run</result>"))
        .run_workflow(&[]);
    outcome.status(1).stdout("");
    assert_eq!(
        outcome.error_message(),
        "error: workflow `[ROOT]/wf` has an ambiguous entry point: both 1_START.md and START.sh exist"
    );
    assert!(!outcome.run_dir(RUN).exists(), "no run is created");
}

#[test]
fn r1_17_single_start_is_the_entry_point() {
    let outcome = Test::new().file("START.sh", &emit("<result>from START.sh</result>")).run_workflow(&[]);
    outcome.status(0).stdout("from START.sh\n");
    assert_eq!(started(&outcome), ["main:START.sh"]);
    assert_eq!(outcome.state(RUN)["initial_state"], "START.sh");
}

#[test]
fn r1_17_numbered_start_is_the_entry_point() {
    let outcome = Test::new()
        .file("1_START.sh", &emit("<result>from 1_START.sh</result>"))
        .file("OTHER.sh", &emit("<result>other</result>"))
        .run_workflow(&[]);
    outcome.status(0).stdout("from 1_START.sh\n");
    assert_eq!(started(&outcome), ["main:1_START.sh"]);
}

#[test]
fn r1_17_no_entry_point() {
    let outcome = Test::new().file("BEGIN.sh", &emit("<result>never</result>")).run_workflow(&[]);
    outcome.status(1).stdout("");
    assert_eq!(
        outcome.error_message(),
        "error: workflow `[ROOT]/wf` has no entry point: expected a `1_START` or `START` state \
         (1_START.md, 1_START.sh, START.md or START.sh)"
    );
}
