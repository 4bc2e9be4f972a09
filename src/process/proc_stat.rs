//! The few fields of `/proc/<pid>/stat` Baton needs. The process name is in
//! parentheses and may itself hold spaces and parentheses, so fields are counted
//! from the last `)`.

use crate::process::pid_window::Candidates;

/// State, parent and process group of one process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ProcStat {
    /// `R`, `S`, `D`, `Z` (zombie: exited, not yet reaped), …
    pub(crate) state: char,
    pub(crate) parent: i32,
    pub(crate) group: i32,
}

impl ProcStat {
    /// One `open`, one `read`, one `close`: the fields needed come right after the
    /// name (at most 15 bytes), so the start of the file is enough, and a scan of
    /// processes (`group_has_live_process`, at the end of each CLI turn whose
    /// group still holds a process) costs a third of the system calls
    /// `read_to_string` made (its size probe and its reads to the end).
    pub(crate) fn read(pid: i32) -> Option<ProcStat> {
        use std::io::Read;
        let mut start = [0u8; 256];
        let count = std::fs::File::open(format!("/proc/{pid}/stat")).ok()?.read(&mut start).ok()?;
        ProcStat::parse(&String::from_utf8_lossy(&start[..count]))
    }

    #[cfg(test)]
    fn read_whole(pid: i32) -> Option<ProcStat> {
        ProcStat::parse(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
    }

    fn parse(stat: &str) -> Option<ProcStat> {
        let mut fields = stat.rsplit_once(')')?.1.split_whitespace();
        let state = fields.next()?.chars().next()?;
        let parent = fields.next()?.parse().ok()?;
        let group = fields.next()?.parse().ok()?;
        Some(ProcStat { state, parent, group })
    }

    /// Exited but not reaped: it holds no resources and can run no more code.
    pub(crate) fn is_zombie(&self) -> bool {
        self.state == 'Z'
    }
}

/// Whether any process of group `group` is still running (zombies do not count:
/// an orphan's zombie lingers until init reaps it, which can take a while). Only
/// the processes `candidates` allows are read (`PidWindow`).
pub(crate) fn group_has_live_process(group: i32, candidates: Candidates) -> bool {
    let live = |stat: ProcStat| stat.group == group && !stat.is_zombie();
    if let Some(few) = candidates.few() {
        return few.filter_map(ProcStat::read).any(live);
    }
    let Ok(entries) = std::fs::read_dir("/proc") else { return false };
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| candidates.may_hold(*pid))
        .filter_map(ProcStat::read)
        .any(live)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_with_spaces_and_parentheses_are_skipped() {
        let stat = "42 (a (b) c) S 7 42 42 0 -1 4194560";
        assert_eq!(ProcStat::parse(stat), Some(ProcStat { state: 'S', parent: 7, group: 42 }));
        assert_eq!(ProcStat::parse("garbage"), None);
    }

    #[test]
    fn the_start_of_the_file_reads_as_the_whole_file_for_every_process() {
        let pids: Vec<i32> = std::fs::read_dir("/proc")
            .expect("/proc")
            .filter_map(Result::ok)
            .filter_map(|entry| entry.file_name().to_str()?.parse().ok())
            .collect();
        assert!(pids.len() > 1);
        for pid in pids {
            let (start, whole) = (ProcStat::read(pid), ProcStat::read_whole(pid));
            // A process may end between the two reads; one that is there reads alike.
            if let (Some(start), Some(whole)) = (start, whole) {
                assert_eq!((start.parent, start.group), (whole.parent, whole.group), "pid {pid}");
            }
        }
    }

    #[test]
    fn this_process_is_read() {
        let own = ProcStat::read(std::process::id() as i32).expect("own stat");
        assert!(!own.is_zombie());
        assert!(group_has_live_process(own.group, Candidates::All));
    }
}
