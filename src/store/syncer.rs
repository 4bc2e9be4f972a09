//! The journal's `fdatasync`, run beside the next steps instead of before them.
//!
//! Two crashes matter, and they need different things. A killed Baton (SIGKILL, a
//! panic, the OOM killer) loses nothing the kernel already has: a journal entry is
//! safe from it once its `write` returns, so the loop may start the next steps right
//! after writing. A power loss also loses what the kernel had not flushed; against it
//! the entry must be synced before anything *tells* someone about the step (an event
//! on the console or in the trace, the run's end). So the loop writes, hands the sync
//! to this thread, and keeps going; events wait for the sync
//! (`events::bus::EventBus::hold_until`). While one sync runs, later entries pile up
//! and the next sync covers all of them: one `fdatasync` per loop turn at most, and
//! fewer under load (group commit).
//!
//! Entries are counted by a sequence number that only grows (it survives the
//! journal being emptied by a compaction). Other files can join a round: a new
//! run's first snapshot and directories are synced here too, so the first step
//! does not wait for them either (`Syncer::written_with`).

use std::fs::File;
use std::io;
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use tokio::sync::watch;

use crate::store::failpoint;

/// How far the journal is durable, as the loop watches it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Synced {
    /// Every entry up to this sequence number is durable.
    UpTo(u64),
    /// A sync failed: nothing written from now on will be known durable.
    Failed,
}

#[derive(Default)]
struct Progress {
    /// The last entry written.
    written: u64,
    /// The last entry known durable.
    synced: u64,
    /// The first sync error; once set, nothing is synced any more.
    failed: Option<(io::ErrorKind, String)>,
    /// Files (or directories) to `fsync` in the next round, before the journal.
    files: Vec<PathBuf>,
    closing: bool,
}

struct Shared {
    progress: Mutex<Progress>,
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Progress> {
        self.progress.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

pub(crate) struct Syncer {
    shared: Arc<Shared>,
    updates: watch::Receiver<Synced>,
    thread: Option<JoinHandle<()>>,
}

impl Syncer {
    /// Sync `file` in a background thread whenever entries are written.
    pub(crate) fn start(file: Arc<File>) -> io::Result<Syncer> {
        let shared = Arc::new(Shared { progress: Mutex::new(Progress::default()), changed: Condvar::new() });
        let worker = Arc::clone(&shared);
        let (sender, updates) = watch::channel(Synced::UpTo(0));
        let thread = std::thread::Builder::new()
            .name("baton-journal-sync".into())
            .spawn(move || sync_loop(&worker, &file, &sender))?;
        Ok(Syncer { shared, updates, thread: Some(thread) })
    }

    /// Follow how far the journal is durable.
    pub(crate) fn updates(&self) -> watch::Receiver<Synced> {
        self.updates.clone()
    }

    /// Entry `seq` (and every one before it) has been written.
    pub(crate) fn written(&self, seq: u64) {
        self.written_with(seq, Vec::new());
    }

    /// Like `written`, and `files` must be synced too before `seq` counts as durable.
    pub(crate) fn written_with(&self, seq: u64, files: Vec<PathBuf>) {
        let mut progress = self.shared.lock();
        progress.written = progress.written.max(seq);
        progress.files.extend(files);
        self.shared.changed.notify_all();
    }

    /// Block until every entry written so far is durable, or a sync failed.
    pub(crate) fn wait(&self) -> io::Result<()> {
        let mut progress = self.shared.lock();
        loop {
            if let Some((kind, message)) = &progress.failed {
                return Err(io::Error::new(*kind, message.clone()));
            }
            if progress.synced >= progress.written {
                return Ok(());
            }
            progress = self.shared.changed.wait(progress).unwrap_or_else(|poisoned| poisoned.into_inner());
        }
    }

    /// The sync error, if one happened (without waiting).
    pub(crate) fn failure(&self) -> Option<io::Error> {
        self.shared.lock().failed.as_ref().map(|(kind, message)| io::Error::new(*kind, message.clone()))
    }
}

impl Drop for Syncer {
    fn drop(&mut self) {
        self.shared.lock().closing = true;
        self.shared.changed.notify_all();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn sync_loop(shared: &Shared, file: &File, updates: &watch::Sender<Synced>) {
    loop {
        let target = {
            let mut progress = shared.lock();
            while progress.failed.is_none() && progress.synced >= progress.written && !progress.closing {
                progress = shared.changed.wait(progress).unwrap_or_else(|poisoned| poisoned.into_inner());
            }
            if progress.failed.is_some() || progress.synced >= progress.written {
                return;
            }
            (progress.written, std::mem::take(&mut progress.files))
        };
        let (target, files) = target;
        failpoint::hit("before_journal_sync");
        let synced = files
            .iter()
            .try_for_each(|path| File::open(path).and_then(|opened| opened.sync_all()))
            .and_then(|()| file.sync_data());
        updates.send_replace(if synced.is_ok() { Synced::UpTo(target) } else { Synced::Failed });
        failpoint::hit("after_journal_sync");
        let mut progress = shared.lock();
        match synced {
            Ok(()) => progress.synced = target,
            Err(error) => progress.failed = Some((error.kind(), error.to_string())),
        }
        shared.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    #[test]
    fn wait_returns_once_every_written_entry_is_synced_and_reported() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = Arc::new(File::create(dir.path().join("j")).expect("create"));
        let syncer = Syncer::start(Arc::clone(&file)).expect("thread");
        let updates = syncer.updates();
        for seq in 1..=3 {
            (&*file).write_all(b"entry\n").expect("write");
            syncer.written(seq);
        }
        syncer.wait().expect("synced");
        assert_eq!(*updates.borrow(), Synced::UpTo(3));
        assert!(syncer.failure().is_none());
    }

    #[test]
    fn files_joining_a_round_are_synced_and_a_missing_one_fails_it() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = Arc::new(File::create(dir.path().join("j")).expect("create"));
        let syncer = Syncer::start(file).expect("thread");
        syncer.written_with(1, vec![dir.path().to_path_buf(), dir.path().join("j")]);
        syncer.wait().expect("the directory and the file synced");
        syncer.written_with(2, vec![dir.path().join("missing")]);
        assert!(syncer.wait().is_err());
        assert_eq!(*syncer.updates().borrow(), Synced::Failed);
    }

    #[test]
    fn nothing_written_means_nothing_to_wait_for() {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = Arc::new(File::create(dir.path().join("j")).expect("create"));
        let syncer = Syncer::start(file).expect("thread");
        syncer.wait().expect("nothing pending");
    }
}
