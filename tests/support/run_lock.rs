//! Who drives a run, as the kernel says: the pid `/proc/locks` lists for the `flock`
//! on the run's journal, which `baton run` and `resume` hold while they drive it.
//! Read directly, without a `baton` process, so that a test can act the instant the
//! lock is taken.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// The pid that holds the lock of the run in `run_dir`, if any.
pub(crate) fn holder(run_dir: &Path) -> Option<u32> {
    let metadata = std::fs::metadata(run_dir.join("journal.jsonl")).ok()?;
    let device = metadata.dev();
    let key = format!("{:02x}:{:02x}:{}", libc::major(device), libc::minor(device), metadata.ino());
    let locks = std::fs::read_to_string("/proc/locks").expect("read /proc/locks");
    locks.lines().find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        (fields.get(1) == Some(&"FLOCK") && fields.get(5) == Some(&key.as_str()))
            .then(|| fields.get(4)?.parse().ok())
            .flatten()
    })
}
