//! Where in the pid space a new process group's members can be, so that the check
//! for what a step left running need not read every process on the machine.
//!
//! Once a CLI has exited and been reaped, what is left of its group (a tool's
//! helper, or a `git` its parent never reaped, a zombie until init does) can only
//! be found by reading `/proc/<pid>/stat` for every process: no system call lists a
//! group's members. That costs about 7 µs a process, so with 1,000 processes on
//! the machine a turn that left a zombie paid 8 ms for it, more than the rest of
//! Baton's work between two turns; narrowed, 0.3 ms (a debug build, both).
//!
//! Every member of the group was created after its leader, Linux hands out pids in
//! increasing order and wraps at `pid_max`, and it never reuses the leader's pid
//! while the group exists. So, as long as fewer than `pid_max` processes were
//! created since the leader's spawn, every member's pid lies between the leader's
//! pid and the last pid handed out, going round the wrap if it happened. The
//! kernel's count of processes created since boot (`processes` in `/proc/stat`,
//! threads included) tells whether that holds: it is read before the spawn and at
//! the check, and when more than half of `pid_max` lie between them, or anything
//! cannot be read, the check reads every process as before. When the candidates
//! are few, each is opened by its pid without listing `/proc` at all — unless the
//! machine runs so few tasks that listing them is cheaper: a CLI with a hundred
//! threads, gone, leaves a hundred candidate pids that each cost an `open` that
//! fails (4 µs), where listing this machine's 120 processes costs 40 µs
//! (`docs/benchmarks.md`, issue 22's twentieth round: 0.6 to 0.9 ms of every
//! Codex turn whose `git` was left a zombie).
//!
//! A process can also join a group by `setpgid` from outside it, but only from the
//! group's own session (Baton's terminal's) and not by being started: nothing does
//! that to a step's group, and the leftover check ignores it.

/// Pids handed out since a point before a group's leader was spawned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PidWindow {
    /// Processes created since boot, read before the spawn.
    created_before: u64,
}

/// Which pids a group's members can have at one check: all, or those from the
/// group's id to the last pid handed out (round the wrap when that is lower).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Candidates {
    All,
    /// `tasks`: the processes and threads on the machine at the check.
    Since {
        group: i32,
        last: i32,
        tasks: i32,
    },
}

impl PidWindow {
    /// Read before spawning the group's leader; `None` where `/proc/stat` cannot be read.
    pub(crate) fn open() -> Option<PidWindow> {
        Some(PidWindow { created_before: processes_created()? })
    }

    /// The pids that can belong to `group` now.
    pub(crate) fn candidates(&self, group: i32) -> Candidates {
        let now = (|| Some((processes_created()?, tasks_and_last_pid()?, pid_max()?)))();
        match now {
            Some((created_now, (tasks, last), pid_max)) => {
                Candidates::between(self.created_before, created_now, group, last, tasks, pid_max)
            }
            None => Candidates::All,
        }
    }
}

impl Candidates {
    /// `created_before` and `created_now` bound the pids handed out in between;
    /// half of `pid_max` leaves a wide margin for the pids below which the kernel
    /// never wraps (300 in the first namespace) and for other namespaces' counts.
    /// `tasks`: the processes and threads on the machine now.
    fn between(created_before: u64, created_now: u64, group: i32, last: i32, tasks: i32, pid_max: i32) -> Candidates {
        let created = created_now.saturating_sub(created_before);
        let half = u64::try_from(pid_max / 2).unwrap_or(0);
        if created_now < created_before || created >= half || group <= 0 || last <= 0 {
            return Candidates::All;
        }
        Candidates::Since { group, last, tasks }
    }

    /// The candidates one by one, when they are few enough that opening each pid's
    /// `stat` (a missing one fails at once, in about 4 µs) is cheaper than listing
    /// `/proc` (about 0.3 µs a process), which on a desktop holds hundreds of
    /// processes. The machine's tasks (threads too) bound what a listing holds.
    pub(crate) fn few(&self) -> Option<std::ops::RangeInclusive<i32>> {
        match *self {
            Candidates::Since { group, last, tasks }
                if last >= group && last - group < FEW && tasks / LISTING_PER_PROBE > last - group =>
            {
                Some(group..=last)
            }
            _ => None,
        }
    }

    pub(crate) fn may_hold(&self, pid: i32) -> bool {
        match *self {
            Candidates::All => true,
            Candidates::Since { group, last, .. } if last >= group => (group..=last).contains(&pid),
            // The pids wrapped since the spawn: from the group up, and from the bottom
            // up to the last one.
            Candidates::Since { group, last, .. } => pid >= group || pid <= last,
        }
    }
}

/// Up to this many candidates are probed one by one (`Candidates::few`).
const FEW: i32 = 256;
/// Listed processes that cost what one probe of a missing pid costs, rounded down
/// (4 µs against 0.3 µs a process here), so that threads counted as tasks keep
/// the rule on the side of probing.
const LISTING_PER_PROBE: i32 = 8;

/// `processes` in `/proc/stat`: processes and threads created since boot.
fn processes_created() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    stat.lines().find_map(|line| line.strip_prefix("processes "))?.trim().parse().ok()
}

/// `/proc/loadavg`'s fourth field's total (the processes and threads on the
/// machine) and its fifth (the last pid handed out in Baton's pid namespace).
fn tasks_and_last_pid() -> Option<(i32, i32)> {
    let loadavg = std::fs::read_to_string("/proc/loadavg").ok()?;
    let mut fields = loadavg.split_whitespace().skip(3);
    let tasks = fields.next()?.split_once('/')?.1.parse().ok()?;
    let last = fields.next()?.parse().ok()?;
    Some((tasks, last))
}

fn pid_max() -> Option<i32> {
    std::fs::read_to_string("/proc/sys/kernel/pid_max").ok()?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A busy machine's tasks: few enough candidates are always probed.
    const MANY: i32 = 100_000;

    #[test]
    fn members_lie_from_the_group_to_the_last_pid() {
        let since = Candidates::between(1_000, 1_010, 500, 520, MANY, 32_768);
        assert_eq!(since, Candidates::Since { group: 500, last: 520, tasks: MANY });
        assert!(since.may_hold(500) && since.may_hold(510) && since.may_hold(520));
        assert!(!since.may_hold(499) && !since.may_hold(521) && !since.may_hold(1));
    }

    #[test]
    fn few_candidates_are_probed_one_by_one() {
        assert_eq!(Candidates::between(0, 10, 500, 520, MANY, 32_768).few(), Some(500..=520));
        assert_eq!(Candidates::between(0, 10, 500, 755, MANY, 32_768).few(), Some(500..=755));
        assert_eq!(Candidates::between(0, 10, 500, 756, MANY, 32_768).few(), None);
        assert_eq!(Candidates::between(0, 10, 32_760, 305, MANY, 32_768).few(), None, "round the wrap");
        assert_eq!(Candidates::All.few(), None);
    }

    /// A Codex turn whose `git` was left a zombie probed 140 to 190 pids, each a
    /// thread gone with the CLI, at 4 µs each, on a machine whose 120 processes a
    /// listing reads in 40 µs: 0.6 to 0.9 ms a turn.
    #[test]
    fn a_gone_clis_many_pids_are_listed_not_probed_on_a_quiet_machine() {
        let range = |tasks| Candidates::between(0, 10, 500, 660, tasks, 32_768);
        assert_eq!(range(300).few(), None, "300 tasks: listing /proc is cheaper");
        assert_eq!(range(1_289).few(), Some(500..=660), "1,289 tasks: probing 161 pids is cheaper");
        assert_eq!(Candidates::between(0, 10, 500, 505, 300, 32_768).few(), Some(500..=505));
    }

    #[test]
    fn loadavg_gives_the_tasks_and_the_last_pid() {
        let (tasks, last) = tasks_and_last_pid().expect("/proc/loadavg");
        assert!(tasks >= 1 && last >= 1, "{tasks} {last}");
    }

    #[test]
    fn members_lie_round_the_wrap_when_the_last_pid_is_lower() {
        let since = Candidates::between(1_000, 1_010, 32_760, 305, MANY, 32_768);
        assert!(since.may_hold(32_760) && since.may_hold(32_767));
        assert!(since.may_hold(300) && since.may_hold(305));
        assert!(!since.may_hold(306) && !since.may_hold(32_759));
    }

    #[test]
    fn every_pid_is_a_candidate_once_the_pids_may_have_gone_round() {
        // Half of pid_max created since the spawn: the pids may have wrapped past
        // the group's own, so nothing can be ruled out.
        assert_eq!(Candidates::between(0, 16_384, 500, 520, MANY, 32_768), Candidates::All);
        assert_eq!(
            Candidates::between(0, 16_383, 500, 520, MANY, 32_768),
            Candidates::Since { group: 500, last: 520, tasks: MANY }
        );
        // A counter that went backwards, or pids that make no sense, rule out nothing.
        assert_eq!(Candidates::between(10, 5, 500, 520, MANY, 32_768), Candidates::All);
        assert_eq!(Candidates::between(0, 5, 0, 520, MANY, 32_768), Candidates::All);
        assert_eq!(Candidates::between(0, 5, 500, 0, MANY, 32_768), Candidates::All);
        assert!(Candidates::All.may_hold(1));
    }

    #[test]
    fn a_child_spawned_after_the_window_opened_is_a_candidate() {
        let window = PidWindow::open().expect("/proc/stat");
        let mut child = std::process::Command::new("true").spawn().expect("true");
        let pid = child.id() as i32;
        child.wait().expect("wait");
        let candidates = window.candidates(pid);
        assert!(matches!(candidates, Candidates::Since { .. }), "{candidates:?}");
        assert!(candidates.may_hold(pid));
        if let Candidates::Since { group, last, .. } = candidates
            && last >= group
        {
            assert!(!candidates.may_hold(1), "init was there before");
        }
    }
}
