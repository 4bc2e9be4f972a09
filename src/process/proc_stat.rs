//! The few fields of `/proc/<pid>/stat` Baton needs. The process name is in
//! parentheses and may itself hold spaces and parentheses, so fields are counted
//! from the last `)`.

/// State, parent and process group of one process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ProcStat {
    /// `R`, `S`, `D`, `Z` (zombie: exited, not yet reaped), …
    pub(crate) state: char,
    pub(crate) parent: i32,
    pub(crate) group: i32,
}

impl ProcStat {
    pub(crate) fn read(pid: i32) -> Option<ProcStat> {
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
/// an orphan's zombie lingers until init reaps it, which can take a while).
pub(crate) fn group_has_live_process(group: i32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else { return false };
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(ProcStat::read)
        .any(|stat| stat.group == group && !stat.is_zombie())
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
    fn this_process_is_read() {
        let own = ProcStat::read(std::process::id() as i32).expect("own stat");
        assert!(!own.is_zombie());
        assert!(group_has_live_process(own.group));
    }
}
