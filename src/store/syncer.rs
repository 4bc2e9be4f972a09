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
//!
//! A caller that must wait for the sync (`Syncer::wait`: the run's end, a
//! compaction) runs the round itself when this thread has not started it yet.
//! Handing it over would cost two wake-ups across threads, each of which waits for
//! a free core on a busy machine; at the end of a one-state run that was a quarter
//! of a millisecond of nothing (`docs/benchmarks.md`, issue 22's eleventh round).

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
    /// A round is running (on the syncer's thread or a waiting caller's).
    syncing: bool,
    closing: bool,
}

impl Progress {
    /// Entries are written that no round has made durable yet, and none failed.
    fn due(&self) -> bool {
        self.failed.is_none() && self.synced < self.written
    }

    /// Claim the next round if one is due and none runs: what it must make durable.
    fn claim(&mut self) -> Option<(u64, Vec<PathBuf>)> {
        if self.syncing || !self.due() {
            return None;
        }
        self.syncing = true;
        Some((self.written, std::mem::take(&mut self.files)))
    }
}

impl crate::idle_wake::Wake for Shared {
    fn wake(&self) {
        self.changed.notify_all();
    }
}

struct Shared {
    progress: Mutex<Progress>,
    changed: Condvar,
    file: Arc<File>,
    updates: watch::Sender<Synced>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Progress> {
        self.progress.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Run one claimed round: `files`, then the journal, durable up to `target`.
    /// Returns the lock, with the round's outcome recorded and announced.
    fn run(&self, (target, files): (u64, Vec<PathBuf>)) -> MutexGuard<'_, Progress> {
        failpoint::hit("before_journal_sync");
        let synced = files
            .iter()
            .try_for_each(|path| File::open(path).and_then(|opened| opened.sync_all()))
            .and_then(|()| self.file.sync_data());
        self.updates.send_replace(if synced.is_ok() { Synced::UpTo(target) } else { Synced::Failed });
        failpoint::hit("after_journal_sync");
        let mut progress = self.lock();
        progress.syncing = false;
        match synced {
            Ok(()) => progress.synced = target,
            Err(error) => progress.failed = Some((error.kind(), error.to_string())),
        }
        self.changed.notify_all();
        progress
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
        let mut syncer = Syncer::without_thread(file);
        let worker = Arc::clone(&syncer.shared);
        let thread = std::thread::Builder::new().name("baton-journal-sync".into()).spawn(move || sync_loop(&worker))?;
        syncer.thread = Some(thread);
        Ok(syncer)
    }

    /// A syncer whose rounds only a waiting caller runs, until a thread is given it.
    fn without_thread(file: Arc<File>) -> Syncer {
        let (sender, updates) = watch::channel(Synced::UpTo(0));
        let shared = Arc::new(Shared {
            progress: Mutex::new(Progress::default()),
            changed: Condvar::new(),
            file,
            updates: sender,
        });
        Syncer { shared, updates, thread: None }
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
    /// The syncer's thread is woken when this one next waits (`idle_wake`).
    pub(crate) fn written_with(&self, seq: u64, files: Vec<PathBuf>) {
        let mut progress = self.shared.lock();
        progress.written = progress.written.max(seq);
        progress.files.extend(files);
        drop(progress);
        crate::idle_wake::wake_when_idle(&self.shared);
    }

    /// Block until every entry written so far is durable, or a sync failed. A round
    /// the syncer's thread has not started is run here, on the caller's thread.
    pub(crate) fn wait(&self) -> io::Result<()> {
        let mut progress = self.shared.lock();
        loop {
            if let Some((kind, message)) = &progress.failed {
                return Err(io::Error::new(*kind, message.clone()));
            }
            if progress.synced >= progress.written {
                return Ok(());
            }
            progress = match progress.claim() {
                Some(round) => {
                    drop(progress);
                    self.shared.run(round)
                }
                None => self.shared.changed.wait(progress).unwrap_or_else(|poisoned| poisoned.into_inner()),
            };
        }
    }

    /// The sync error, if one happened (without waiting).
    pub(crate) fn failure(&self) -> Option<io::Error> {
        self.shared.lock().failed.as_ref().map(|(kind, message)| io::Error::new(*kind, message.clone()))
    }
}

impl Drop for Syncer {
    /// The thread ends once nothing is left to sync. It is joined only while a round
    /// is due or running: an idle one ends by itself, and waiting for it to wake up
    /// only to return would delay every run's exit.
    fn drop(&mut self) {
        let busy = {
            let mut progress = self.shared.lock();
            progress.closing = true;
            progress.syncing || progress.due()
        };
        self.shared.changed.notify_all();
        if let Some(thread) = self.thread.take()
            && busy
        {
            let _ = thread.join();
        }
    }
}

fn sync_loop(shared: &Shared) {
    let mut progress = shared.lock();
    loop {
        if let Some(round) = progress.claim() {
            drop(progress);
            progress = shared.run(round);
        } else if progress.closing && !progress.syncing {
            return;
        } else {
            progress = shared.changed.wait(progress).unwrap_or_else(|poisoned| poisoned.into_inner());
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    /// An empty journal in a directory of its own (kept alive by the first value).
    fn journal() -> (tempfile::TempDir, Arc<File>) {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = Arc::new(File::create(dir.path().join("j")).expect("create"));
        (dir, file)
    }

    /// Append entries `seqs` to `file` and tell `syncer` of each.
    fn append(file: &File, syncer: &Syncer, seqs: std::ops::RangeInclusive<u64>) {
        for seq in seqs {
            let mut writer = file;
            writer.write_all(b"entry\n").expect("write");
            syncer.written(seq);
        }
    }

    #[test]
    fn wait_returns_once_every_written_entry_is_synced_and_reported() {
        let (_dir, file) = journal();
        let syncer = Syncer::start(Arc::clone(&file)).expect("thread");
        let updates = syncer.updates();
        append(&file, &syncer, 1..=3);
        syncer.wait().expect("synced");
        assert_eq!(*updates.borrow(), Synced::UpTo(3));
        assert!(syncer.failure().is_none());
    }

    #[test]
    fn files_joining_a_round_are_synced_and_a_missing_one_fails_it() {
        let (dir, file) = journal();
        let syncer = Syncer::start(file).expect("thread");
        syncer.written_with(1, vec![dir.path().to_path_buf(), dir.path().join("j")]);
        syncer.wait().expect("the directory and the file synced");
        syncer.written_with(2, vec![dir.path().join("missing")]);
        assert!(syncer.wait().is_err());
        assert_eq!(*syncer.updates().borrow(), Synced::Failed);
    }

    #[test]
    fn a_caller_waiting_for_a_round_nobody_started_runs_it_itself() {
        let (dir, file) = journal();
        let syncer = Syncer::without_thread(Arc::clone(&file));
        append(&file, &syncer, 1..=1);
        syncer.written_with(1, vec![dir.path().to_path_buf()]);
        let (done, finished) = std::sync::mpsc::channel();
        let updates = syncer.updates();
        std::thread::spawn(move || done.send(syncer.wait().map_err(|error| error.to_string())));
        let waited = finished.recv_timeout(std::time::Duration::from_secs(10));
        assert_eq!(waited, Ok(Ok(())), "wait() ran the round on its own thread");
        assert_eq!(*updates.borrow(), Synced::UpTo(1));
    }

    #[test]
    fn a_round_due_when_the_syncer_is_dropped_still_runs() {
        let (_dir, file) = journal();
        let syncer = Syncer::start(Arc::clone(&file)).expect("thread");
        let updates = syncer.updates();
        append(&file, &syncer, 1..=50);
        drop(syncer);
        assert_eq!(*updates.borrow(), Synced::UpTo(50));
    }

    #[test]
    fn on_the_runs_thread_the_sync_starts_once_its_runtime_waits() {
        let (_dir, file) = journal();
        let syncer = Syncer::start(Arc::clone(&file)).expect("thread");
        let mut updates = syncer.updates();
        let synced = crate::idle_wake::block_on(async {
            append(&file, &syncer, 1..=1);
            let wait = updates.wait_for(|synced| *synced == Synced::UpTo(1));
            tokio::time::timeout(std::time::Duration::from_secs(30), wait).await.map(|seen| seen.is_ok())
        })
        .expect("runtime");
        assert_eq!(synced, Ok(true), "the park woke the syncer's thread");
    }

    #[test]
    fn only_one_round_runs_at_a_time_and_it_takes_the_files() {
        let mut progress = Progress { written: 2, files: vec![PathBuf::from("d")], ..Progress::default() };
        assert_eq!(progress.claim(), Some((2, vec![PathBuf::from("d")])));
        progress.written = 3;
        assert_eq!(progress.claim(), None, "a round is running");
        progress.syncing = false;
        progress.synced = 2;
        assert_eq!(progress.claim(), Some((3, Vec::new())));
    }

    #[test]
    fn nothing_written_means_nothing_to_wait_for() {
        let (_dir, file) = journal();
        let syncer = Syncer::start(file).expect("thread");
        syncer.wait().expect("nothing pending");
    }
}
