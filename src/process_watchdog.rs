//! Child process groups never outlive Baton, even when Baton is SIGKILLed.
//!
//! A killed process cannot clean up after itself, so cleanup lives in a second,
//! tiny process: `baton __watchdog`, started once per run in its own process group
//! with a pipe as its stdin. Baton writes `+PGID` when a step's process group
//! starts and `-PGID` when it is done. When the pipe closes — which the kernel does
//! when Baton exits for any reason — the watchdog kills every group still listed,
//! unless Baton said `exit` first because it already stopped them. The cost per
//! step is two short pipe writes.

use std::collections::BTreeSet;
use std::io::{BufRead, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Mutex;

/// Baton's end of the watchdog.
pub struct Watchdog {
    child: Mutex<Option<(Child, ChildStdin)>>,
}

impl Watchdog {
    /// Start `baton __watchdog`. Failure to start it is logged and tolerated: the run
    /// still works, it only loses the guarantee for the SIGKILL case.
    pub fn spawn() -> Watchdog {
        let spawned = std::env::current_exe().and_then(|exe| {
            use std::os::unix::process::CommandExt;
            Command::new(exe)
                .arg("__watchdog")
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .process_group(0)
                .spawn()
        });
        let child = match spawned {
            Ok(mut child) => child.stdin.take().map(|stdin| (child, stdin)),
            Err(error) => {
                tracing::warn!(%error, "cannot start the process watchdog; scripts may outlive a killed baton");
                None
            }
        };
        Watchdog { child: Mutex::new(child) }
    }

    fn send(&self, line: &str) {
        let mut guard = self.child.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some((_, stdin)) = guard.as_mut()
            && let Err(error) = stdin.write_all(line.as_bytes())
        {
            tracing::warn!(%error, "the process watchdog stopped listening");
            *guard = None;
        }
    }

    /// A step's process group started.
    pub fn watch(&self, process_group: u32) {
        self.send(&format!("+{process_group}\n"));
    }

    /// A step's process group is gone (or Baton killed it itself).
    pub fn release(&self, process_group: u32) {
        self.send(&format!("-{process_group}\n"));
    }

    /// Baton is exiting normally: tell the watchdog not to kill anything and reap it.
    pub fn disarm(&self) {
        self.send("exit\n");
        let mut guard = self.child.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some((mut child, stdin)) = guard.take() {
            drop(stdin);
            let _ = child.wait();
        }
    }
}

/// The watchdog process itself: read commands until the pipe closes.
pub fn serve(input: impl BufRead) -> i32 {
    let mut groups = BTreeSet::new();
    for line in input.lines() {
        let Ok(line) = line else { break };
        if line == "exit" {
            return 0;
        }
        let (sign, number) = line.split_at(line.len().min(1));
        let Ok(group) = number.parse::<i32>() else { continue };
        match sign {
            "+" if group > 1 => {
                groups.insert(group);
            }
            "-" => {
                groups.remove(&group);
            }
            _ => {}
        }
    }
    for group in groups {
        // SAFETY: signalling a process group; a stale id fails with ESRCH.
        unsafe {
            libc::killpg(group, libc::SIGKILL);
        }
    }
    0
}
