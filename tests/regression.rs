//! Regression tests, each named after the defect it pins down.

use std::os::unix::process::CommandExt;

use crate::support::Test;

/// A counting loop of `steps` steps.
fn loop_of(steps: u32) -> Test {
    Test::new().file(
        "START.sh",
        &format!(
            "n=${{BATON_INPUT:-{steps}}}\nif [ \"$n\" -le 0 ]; then echo '<result>done</result>'; else echo \"<goto input=\\\"$((n - 1))\\\">START.sh</goto>\"; fi\n"
        ),
    )
}

/// Before: a store failure printed `run r failed: agent  at : …`, an empty agent and
/// state, because the fatal error had no agent to name. The run's own failures now
/// read naturally without one.
#[test]
fn store_failure_message_has_no_empty_agent_or_state() {
    let test = loop_of(400);
    let mut command = test.command(&["run".into(), "wf".into(), "--run-id".into(), "full".into(), "--no-debug".into()]);
    // The journal outgrows a 16 KiB file-size limit after a few dozen steps; with
    // SIGXFSZ ignored the write fails with EFBIG, as it would on a full disk.
    // SAFETY: setrlimit and signal are async-signal-safe and touch only the child.
    unsafe {
        command.pre_exec(|| {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let limit = libc::rlimit { rlim_cur: 16 * 1024, rlim_max: 16 * 1024 };
            libc::setrlimit(libc::RLIMIT_FSIZE, &limit);
            Ok(())
        });
    }
    let output = command.output().expect("run baton");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    let failed = stderr.lines().find(|line| line.starts_with("error: run full failed:")).expect(&stderr);
    assert!(!failed.contains("agent  at"), "{failed}");
    assert!(failed.starts_with("error: run full failed: cannot write the journal "), "{failed}");
}
