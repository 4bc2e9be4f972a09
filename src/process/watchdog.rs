//! Child process groups never outlive Baton, even when Baton is SIGKILLed.
//!
//! A killed process cannot clean up after itself, so cleanup lives in a second,
//! tiny process: a fork of Baton made before its first thread starts (no `exec`,
//! so it costs a tenth of starting a program: no loading, no relocations), in its
//! own process group, reading a pipe. Baton writes `run ID` and `inputs DIR` once
//! it knows them, and keeps its live step process groups in a table in memory it
//! shares with the watchdog ([`LiveGroups`]: one store when a group starts, one
//! when it is done; `+PGID` and `-PGID` lines on the pipe only if the table is
//! full or could not be mapped). When the pipe closes — which the kernel does when
//! Baton exits for any reason — the watchdog kills every group still listed,
//! unless Baton said `exit` first because it already stopped them. So the watchdog
//! sleeps through the whole run, and a step costs no system call for it.
//!
//! Registration happens just after the spawn returns, so a Baton killed in that
//! instant would leave a group the watchdog never heard of. To close that window
//! without giving up `posix_spawn` (forking Baton for a pre-exec hook costs about a
//! millisecond per step), the watchdog also sweeps `/proc` when Baton dies: every
//! process-group leader in its session whose environment holds
//! `BATON_WORKFLOW_ID=<run id>` — which every script of the run has — and which is an
//! orphan (the nearest ancestor without that variable is not a running `baton`:
//! a resumed run may already be starting new steps) is killed with its group. It
//! sweeps twice, 100 ms apart, to catch a child that was still between fork and exec.

use std::collections::BTreeSet;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::FromRawFd;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::process::live_groups::{LiveGroups, Slot};
use crate::process::proc_stat::ProcStat;

/// Baton's end of the watchdog.
pub(crate) struct Watchdog {
    child: Mutex<Option<(libc::pid_t, File)>>,
    /// The live groups the watchdog reads when Baton is gone (`None`: every group
    /// goes over the pipe).
    table: Option<LiveGroups>,
    /// Every group ever watched, for tests that cannot see a group's id otherwise.
    #[cfg(test)]
    seen: Mutex<Vec<u32>>,
}

/// How a group was made known to the watchdog, so that [`Watchdog::release`] takes
/// it back the same way.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Registration {
    Slot(Slot),
    Line(u32),
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Watchdog {
    /// Fork the watchdog. Must be called while Baton has one thread (the child of a
    /// multi-threaded fork may only make async-signal-safe calls, and the watchdog
    /// allocates): `cli` calls it before it builds the runtime. Failure is logged and
    /// tolerated: the run still works, it only loses the guarantee for the SIGKILL case.
    pub(crate) fn fork() -> Watchdog {
        let mut fds = [0; 2];
        // SAFETY: `fds` has room for the two descriptors pipe2 writes.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            tracing::warn!(error = %std::io::Error::last_os_error(), "cannot start the process watchdog");
            return Watchdog::absent();
        }
        // Mapped before the fork, so that the watchdog shares it.
        let table = LiveGroups::map();
        let [reader, writer] = fds;
        // SAFETY: Baton is single-threaded here (see above), so the child may do anything.
        match unsafe { libc::fork() } {
            0 => {
                // SAFETY: the child owns its copies of the descriptors; it leaves the
                // terminal's process group (a Ctrl-C is Baton's to handle) and lets go of
                // Baton's stdio, so nothing waiting for Baton's output waits for it too.
                unsafe {
                    libc::setpgid(0, 0);
                    libc::close(writer);
                    let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
                    if null >= 0 {
                        for stdio in 0..3 {
                            libc::dup2(null, stdio);
                        }
                    }
                    let code = serve(BufReader::new(File::from_raw_fd(reader)), table.as_ref());
                    libc::_exit(code)
                }
            }
            -1 => {
                tracing::warn!(error = %std::io::Error::last_os_error(), "cannot start the process watchdog");
                // SAFETY: closing the pipe this function just made.
                unsafe {
                    libc::close(reader);
                    libc::close(writer);
                }
                Watchdog::absent()
            }
            pid => {
                // SAFETY: the parent's read end is unused; the write end is ours alone.
                let writer = unsafe {
                    libc::close(reader);
                    File::from_raw_fd(writer)
                };
                Watchdog::with(Some((pid, writer)), table)
            }
        }
    }

    fn absent() -> Watchdog {
        Watchdog::with(None, None)
    }

    fn with(child: Option<(libc::pid_t, File)>, table: Option<LiveGroups>) -> Watchdog {
        Watchdog {
            child: Mutex::new(child),
            table,
            #[cfg(test)]
            seen: Mutex::default(),
        }
    }

    /// A watchdog with its table and no process, for tests of what registers groups.
    #[cfg(test)]
    pub(crate) fn unforked() -> Watchdog {
        Watchdog::with(None, LiveGroups::map())
    }

    /// The groups in the table now.
    #[cfg(test)]
    pub(crate) fn registered(&self) -> Vec<u32> {
        self.table.as_ref().map_or_else(Vec::new, |table| table.groups().collect())
    }

    /// Every group ever watched, in order.
    #[cfg(test)]
    pub(crate) fn seen(&self) -> Vec<u32> {
        lock(&self.seen).clone()
    }

    /// The run the watchdog guards: its id (for the `/proc` sweep) and its input
    /// files' directory (removed if Baton dies, `executor::script`).
    pub(crate) fn guard(&self, run_id: &str, inputs_dir: &Path) {
        self.send(&format!("run {run_id}\ninputs {}\n", inputs_dir.display()));
    }

    fn send(&self, line: &str) {
        let mut guard = lock(&self.child);
        if let Some((_, stdin)) = guard.as_mut()
            && let Err(error) = stdin.write_all(line.as_bytes())
        {
            tracing::warn!(%error, "the process watchdog stopped listening");
            *guard = None;
        }
    }

    /// A step's process group started.
    pub(crate) fn watch(&self, process_group: u32) -> Registration {
        #[cfg(test)]
        lock(&self.seen).push(process_group);
        if let Some(slot) = self.table.as_ref().and_then(|table| table.insert(process_group)) {
            return Registration::Slot(slot);
        }
        self.send(&format!("+{process_group}\n"));
        Registration::Line(process_group)
    }

    /// A step's process group is gone (or Baton killed it itself).
    pub(crate) fn release(&self, registration: Registration) {
        match (registration, &self.table) {
            (Registration::Slot(slot), Some(table)) => table.remove(slot),
            (Registration::Slot(_), None) => {}
            (Registration::Line(process_group), _) => self.send(&format!("-{process_group}\n")),
        }
    }

    /// Baton is exiting normally: tell the watchdog not to kill anything. It reads
    /// `exit` before the pipe's end, so nobody needs to wait for it (Baton exits
    /// next, and init reaps it).
    pub(crate) fn disarm(&self) {
        self.send("exit\n");
        let mut guard = lock(&self.child);
        if let Some((pid, writer)) = guard.take() {
            drop(writer);
            // SAFETY: reaping our own child if it is already done; never blocks.
            unsafe {
                libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG);
            }
        }
    }
}

fn read_environment(pid: i32) -> Option<Vec<u8>> {
    std::fs::read(format!("/proc/{pid}/environ")).ok()
}

fn has_variable(environment: &[u8], variable: &[u8]) -> bool {
    environment.split(|byte| *byte == 0).any(|entry| entry == variable)
}

/// The parent pid of `pid`.
fn parent_of(pid: i32) -> Option<i32> {
    ProcStat::read(pid).map(|stat| stat.parent)
}

/// Whether `pid`, a process of the run, has lost the `baton` that started it: walk up
/// through the run's processes to the first ancestor outside the run, and check
/// whether that is a `baton` (same executable as this watchdog).
fn is_orphan(pid: i32, marker: &[u8], own_exe: &Path) -> bool {
    let mut current = pid;
    for _ in 0..64 {
        let Some(parent) = parent_of(current) else { return false };
        if parent <= 1 {
            return true;
        }
        match read_environment(parent) {
            Some(environment) if has_variable(&environment, marker) => current = parent,
            _ => return std::fs::read_link(format!("/proc/{parent}/exe")).map_or(true, |exe| exe != own_exe),
        }
    }
    false
}

/// Kill the orphaned step process groups of run `run_id` in this session.
fn sweep(run_id: &str) {
    let marker = format!("BATON_WORKFLOW_ID={run_id}");
    let Ok(own_exe) = std::env::current_exe() else { return };
    // SAFETY: getsid(0)/getpid have no preconditions.
    let (own_session, own_pid) = unsafe { (libc::getsid(0), libc::getpid()) };
    let Ok(entries) = std::fs::read_dir("/proc") else { return };
    for entry in entries.filter_map(Result::ok) {
        let Some(pid) = entry.file_name().to_str().and_then(|name| name.parse::<i32>().ok()) else { continue };
        // SAFETY: getsid/getpgid on any pid are harmless; they fail for processes that are gone.
        let (session, group) = unsafe { (libc::getsid(pid), libc::getpgid(pid)) };
        if pid == own_pid || session != own_session || group != pid {
            continue;
        }
        let Some(environment) = read_environment(pid) else { continue };
        if has_variable(&environment, marker.as_bytes()) && is_orphan(pid, marker.as_bytes(), &own_exe) {
            // SAFETY: signalling a process group of our own session.
            unsafe {
                libc::killpg(pid, libc::SIGKILL);
            }
        }
    }
}

/// The watchdog process itself: read commands until the pipe closes, then kill the
/// groups listed on it and in `table`.
fn serve(input: impl BufRead, table: Option<&LiveGroups>) -> i32 {
    let mut groups = BTreeSet::new();
    let mut run_id: Option<String> = None;
    let mut inputs_dir: Option<PathBuf> = None;
    for line in input.lines() {
        let Ok(line) = line else { break };
        if line == "exit" {
            return 0;
        }
        if let Some(id) = line.strip_prefix("run ") {
            run_id = Some(id.to_string());
            continue;
        }
        if let Some(dir) = line.strip_prefix("inputs ") {
            inputs_dir = Some(PathBuf::from(dir));
            continue;
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
    // Baton is gone: nothing writes the table any more.
    groups.extend(table.into_iter().flat_map(LiveGroups::groups).filter_map(|group| i32::try_from(group).ok()));
    for group in groups {
        // SAFETY: signalling a process group; a stale id fails with ESRCH.
        unsafe {
            libc::killpg(group, libc::SIGKILL);
        }
    }
    if let Some(run_id) = run_id.as_deref() {
        sweep(run_id);
        std::thread::sleep(std::time::Duration::from_millis(100));
        sweep(run_id);
    }
    // A killed run's input files (in memory under /dev/shm) are its alone: each
    // invocation makes its own directory. Only such a directory is removed.
    if let Some(dir) = inputs_dir.filter(|dir| dir.starts_with("/dev/shm")) {
        let _ = std::fs::remove_dir_all(dir);
    }
    0
}

#[cfg(test)]
mod tests {
    use std::process::{Child, Command};
    use std::time::{Duration, Instant};

    use super::*;

    fn exited(child: &mut Child) -> bool {
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if child.try_wait().ok().flatten().is_some() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    }

    #[test]
    fn a_closed_pipe_kills_registered_groups() {
        use std::os::unix::process::CommandExt;
        let mut child = Command::new("sleep").arg("30").process_group(0).spawn().expect("sleep");
        let input = format!("+{}\n", child.id());
        serve(input.as_bytes(), None);
        assert!(exited(&mut child), "the registered group was killed");
    }

    #[test]
    fn a_closed_pipe_kills_the_groups_in_the_shared_table_and_not_released_ones() {
        use std::os::unix::process::CommandExt;
        let table = LiveGroups::map().expect("mapping");
        let mut live = Command::new("sleep").arg("30").process_group(0).spawn().expect("sleep");
        let mut released = Command::new("sleep").arg("30").process_group(0).spawn().expect("sleep");
        table.insert(live.id()).expect("slot");
        let slot = table.insert(released.id()).expect("slot");
        table.remove(slot);
        serve(&b""[..], Some(&table));
        assert!(exited(&mut live), "the registered group was killed");
        assert!(!exited_within(&mut released, Duration::from_millis(200)), "the released one was not");
        let _ = released.kill();
        let _ = released.wait();
    }

    #[test]
    fn exit_disarms_the_watchdog() {
        use std::os::unix::process::CommandExt;
        let mut child = Command::new("sleep").arg("30").process_group(0).spawn().expect("sleep");
        let input = format!("+{}\nexit\n", child.id());
        serve(input.as_bytes(), None);
        assert!(!exited_within(&mut child, Duration::from_millis(200)));
        let _ = child.kill();
        let _ = child.wait();
    }

    fn exited_within(child: &mut Child, limit: Duration) -> bool {
        std::thread::sleep(limit);
        child.try_wait().ok().flatten().is_some()
    }

    /// Start `sleep 30` as an orphaned process-group leader (its shell exits at once)
    /// with `BATON_WORKFLOW_ID=run_id`; returns its pid.
    fn orphan(run_id: &str) -> i32 {
        let output = Command::new("bash")
            .args(["-c", "set -m; sleep 30 > /dev/null 2>&1 & echo $!"])
            .env("BATON_WORKFLOW_ID", run_id)
            .output()
            .expect("bash");
        String::from_utf8_lossy(&output.stdout).trim().parse().expect("a pid")
    }

    fn gone(pid: i32) -> bool {
        let deadline = Instant::now() + Duration::from_secs(5);
        // SAFETY: signal 0 only checks that the process exists.
        while Instant::now() < deadline {
            if unsafe { libc::kill(pid, 0) } != 0 {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        false
    }

    #[test]
    fn the_sweep_kills_orphans_of_the_run_only() {
        let run_id = format!("sweep-test-{}", std::process::id());
        let ours = orphan(&run_id);
        let other = orphan(&format!("{run_id}-other"));
        // A live process of the run (its parent, this test, is alive): left alone.
        let mut live = Command::new("sleep").arg("30").env("BATON_WORKFLOW_ID", &run_id).spawn().expect("sleep");
        // Never registered: only the sweep can find the orphan.
        serve(format!("run {run_id}\n").as_bytes(), None);
        assert!(gone(ours), "the run's orphaned group was killed");
        // SAFETY: signal 0 only checks that the process exists.
        assert_eq!(unsafe { libc::kill(other, 0) }, 0, "another run's orphan was left alone");
        assert!(live.try_wait().expect("wait").is_none(), "a process whose baton is alive was left alone");
        // SAFETY: cleaning up our own test processes.
        unsafe {
            libc::killpg(other, libc::SIGKILL);
        }
        let _ = live.kill();
        let _ = live.wait();
    }
}
