//! What this process keeps of a workflow read from disk, by path, while the file
//! (or directory) it came from is unchanged: a YAML workflow validated once, a zip
//! archive's central directory, a directory's listing. A run opens its workflow
//! at every step (R13.8 asks that an edit be seen by the next step), and reading
//! and checking it again each time cost more than the rest of a step's
//! bookkeeping. Each kind decides what "unchanged" means (the same text, the same
//! [`Stamp`]); this module holds the entries and drops the least recently used.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, SystemTime};

/// What identifies one version of a file or directory without reading it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
    /// Inode, device and change time: a rewrite that keeps the size and resets
    /// the modification time still changes these.
    #[cfg(unix)]
    identity: (u64, u64, i64, i64),
}

impl Stamp {
    /// The file's length when it was looked at.
    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    pub(crate) fn of(metadata: &std::fs::Metadata) -> Stamp {
        #[cfg(unix)]
        use std::os::unix::fs::MetadataExt;
        Stamp {
            len: metadata.len(),
            modified: metadata.modified().ok(),
            #[cfg(unix)]
            identity: (metadata.dev(), metadata.ino(), metadata.ctime(), metadata.ctime_nsec()),
        }
    }

    /// Whether a change made from `now` on is sure to give a different stamp: the
    /// last change (its modification or, for a time set by `touch -d` or `rsync
    /// -t`, its inode's change) is older than [`SETTLED`]. A file system's clock
    /// for its times is coarse (a kernel tick, up to 10 ms; some file systems keep
    /// whole seconds), so a change made in the same tick as the last one, right
    /// after it was looked at, can leave every time as it was (git's "racy"
    /// entries).
    pub(crate) fn settled(&self, now: SystemTime) -> bool {
        let Some(last) = self.modified.into_iter().chain(self.changed()).max() else {
            return false;
        };
        now.duration_since(last).is_ok_and(|age| age >= SETTLED)
    }

    /// When the inode last changed, where the platform says.
    fn changed(&self) -> Option<SystemTime> {
        #[cfg(unix)]
        {
            let (_, _, seconds, nanoseconds) = self.identity;
            let since_epoch = Duration::new(u64::try_from(seconds).ok()?, u32::try_from(nanoseconds).ok()?);
            SystemTime::UNIX_EPOCH.checked_add(since_epoch)
        }
        #[cfg(not(unix))]
        None
    }
}

/// How long ago a directory must have changed for its listing to be kept.
const SETTLED: Duration = Duration::from_secs(2);

/// Entries by path, each with the key that says whether it is still current and
/// the use that last found it; more than `capacity` and the least recently used
/// goes.
pub(crate) struct KeptByPath<K, V> {
    capacity: usize,
    entries: Mutex<HashMap<PathBuf, (K, V, u64)>>,
    uses: AtomicU64,
}

impl<K, V: Clone> KeptByPath<K, V> {
    pub(crate) fn new(capacity: usize) -> KeptByPath<K, V> {
        KeptByPath { capacity, entries: Mutex::default(), uses: AtomicU64::new(0) }
    }

    /// The value kept for `path`, if `current` says it still holds (given its key
    /// and itself).
    pub(crate) fn find(&self, path: &Path, current: impl FnOnce(&K, &V) -> bool) -> Option<V> {
        let use_number = self.uses.fetch_add(1, Ordering::Relaxed);
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        let (key, value, used) = entries.get_mut(path)?;
        if !current(key, value) {
            return None;
        }
        *used = use_number;
        Some(value.clone())
    }

    /// Keep `value` for `path`, replacing what was kept for it.
    pub(crate) fn keep(&self, path: &Path, key: K, value: V) {
        let use_number = self.uses.fetch_add(1, Ordering::Relaxed);
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if entries.len() >= self.capacity && !entries.contains_key(path) {
            let oldest = entries.iter().min_by_key(|(_, (_, _, used))| *used).map(|(path, _)| path.clone());
            if let Some(oldest) = oldest {
                entries.remove(&oldest);
            }
        }
        entries.insert(path.to_path_buf(), (key, value, use_number));
    }

    #[cfg(test)]
    pub(crate) fn holds(&self, path: &Path) -> bool {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner).contains_key(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_least_recently_used_entry_goes_first() {
        let kept = KeptByPath::<u32, &str>::new(2);
        kept.keep(Path::new("/a"), 1, "a");
        kept.keep(Path::new("/b"), 1, "b");
        assert_eq!(kept.find(Path::new("/a"), |key, _| *key == 1), Some("a"));
        kept.keep(Path::new("/c"), 1, "c");
        assert!(kept.holds(Path::new("/a")) && kept.holds(Path::new("/c")));
        assert!(!kept.holds(Path::new("/b")), "/b was used least recently");
    }

    #[test]
    fn a_key_that_no_longer_holds_finds_nothing() {
        let kept = KeptByPath::<u32, &str>::new(2);
        kept.keep(Path::new("/a"), 1, "a");
        assert_eq!(kept.find(Path::new("/a"), |key, _| *key == 2), None);
        assert_eq!(kept.find(Path::new("/b"), |_, _| true), None);
    }

    #[test]
    fn a_stamp_is_settled_only_once_its_last_change_is_old_enough() {
        let dir = tempfile::tempdir().unwrap();
        let stamp = Stamp::of(&std::fs::metadata(dir.path()).unwrap());
        let now = SystemTime::now();
        assert!(!stamp.settled(now), "just created");
        assert!(stamp.settled(now + SETTLED + Duration::from_millis(1)));
    }
}
