//! The run journal: an append-only, fdatasync'd log of what each step changed.
//!
//! A full snapshot per step costs time proportional to the number of live agents
//! (hundreds of agents → hundreds of kilobytes rewritten per step). A journal entry
//! holds only what one step touched — the agents it replaced, added or removed and
//! the run's counters — so its cost does not grow with the run. `state.json` is
//! compacted from time to time and records the last commit it includes; recovery
//! loads it and replays the later entries (`docs/state-format.md`). Until the
//! first compaction there is no `state.json`: a new run's first snapshot is the
//! journal's first line (`store::runs`, `RunStore::create`).
//!
//! Entries are written with one `write` each, so a killed process never leaves a
//! torn line; after a power loss the last line may be torn, and replay drops it.
//! The `fdatasync` runs on its own thread (`store::syncer`), beside the next steps.
//!
//! The file is **preallocated**: written full of zero bytes ahead of the entries
//! (16 KiB, doubled when it fills), and entries overwrite the zeros in place. An
//! `fdatasync` of a file whose size and blocks did not change flushes its data and
//! nothing else; an append that grows the file also changes its size, which ext4
//! can only make durable with a commit of its own journal, and that commit waits
//! for whatever else the machine wrote (issue 22: 2.5–3× the cost on average with
//! another writer). So readers stop at the first zero byte (no entry holds one:
//! JSON escapes it), a compaction zeroes the entries it folded instead of
//! truncating, and a resume zeroes a torn tail.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::ids::{AgentId, StateName};
use crate::model::agent::Agent;
use crate::model::bound::Bound;
use crate::model::run_state::{RunState, RunStatus, TerminatedAgent};
use crate::store::disk_full::DiskFull;
use crate::store::failpoint;
use crate::store::failure_note::{self, FailureNote, NOTE_SPACE};
use crate::store::syncer::{Synced, Syncer};

pub(crate) const JOURNAL_FILE: &str = "journal.jsonl";

/// The run-level fields every entry carries (they are small, so always complete).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct RunFields {
    pub(crate) status: RunStatus,
    pub(crate) total_cost_usd: f64,
    pub(crate) steps_completed: u64,
    #[serde(default)]
    pub(crate) elapsed_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) paused_by: Option<Bound>,
    /// When the commit was made (absent from older entries).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub(crate) updated_at: String,
}

impl RunFields {
    pub(crate) fn of(state: &RunState) -> RunFields {
        RunFields {
            status: state.status,
            total_cost_usd: state.total_cost_usd,
            steps_completed: state.steps_completed,
            elapsed_ms: state.elapsed_ms,
            error: state.error.clone(),
            paused_by: state.paused_by,
            updated_at: state.updated_at.clone(),
        }
    }

    fn apply(self, state: &mut RunState) {
        state.status = self.status;
        state.total_cost_usd = self.total_cost_usd;
        state.steps_completed = self.steps_completed;
        state.elapsed_ms = self.elapsed_ms;
        state.error = self.error;
        state.paused_by = self.paused_by;
        if !self.updated_at.is_empty() {
            state.updated_at = self.updated_at;
        }
    }
}

/// What a completed step did, kept so a resumed run can restore a trace line that
/// a crash prevented from being written (`docs/trace-format.md`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct StepSummary {
    pub(crate) agent_id: AgentId,
    pub(crate) from_state: StateName,
    pub(crate) to_state: Option<StateName>,
    pub(crate) transition_type: String,
    #[serde(default)]
    pub(crate) metadata: BTreeMap<String, String>,
}

/// An agent as a journal entry records it. A stack changes only at its top within a
/// step, so the entry keeps the bottom `stack_keep` frames of the agent as it was and
/// carries only the frames above them: a deep call stack costs O(1) per step, not
/// O(depth). Without `stack_keep` the stack is complete (a new agent).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct AgentUpsert {
    #[serde(flatten)]
    pub(crate) agent: Agent,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) stack_keep: Option<usize>,
}

impl AgentUpsert {
    /// The entry for `agent`, whose bottom `keep` frames are unchanged since the last commit.
    pub(crate) fn new(agent: &Agent, keep: Option<usize>) -> AgentUpsert {
        let keep = keep.map(|keep| keep.min(agent.stack.len()));
        let mut recorded = Agent { stack: Vec::new(), ..agent.clone() };
        recorded.stack = agent.stack[keep.unwrap_or(0)..].to_vec();
        AgentUpsert { agent: recorded, stack_keep: keep }
    }
}

/// One journal entry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct Commit {
    /// 1, 2, 3, … over the whole run; `state.json` records the last one it includes.
    pub(crate) commit: u64,
    pub(crate) run: RunFields,
    /// Agents replaced in place (same id) or appended (new id), in run order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) upsert: Vec<AgentUpsert>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) remove: Vec<AgentId>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) terminated: Vec<TerminatedAgent>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) fork_counters: BTreeMap<AgentId, u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) step: Option<StepSummary>,
}

impl Commit {
    /// Apply this entry to `state` (removals first, then replacements and additions).
    pub(crate) fn apply(self, state: &mut RunState) {
        // The loop removes an agent by moving the last one into its place; so does
        // the replay, so both keep the agents in the same order.
        for id in &self.remove {
            if let Some(index) = state.agents.iter().position(|agent| &agent.id == id) {
                state.agents.swap_remove(index);
            }
        }
        for AgentUpsert { mut agent, stack_keep } in self.upsert {
            match state.agents.iter_mut().find(|existing| existing.id == agent.id) {
                Some(existing) => {
                    if let Some(keep) = stack_keep {
                        let mut stack = std::mem::take(&mut existing.stack);
                        stack.truncate(keep);
                        stack.append(&mut agent.stack);
                        agent.stack = stack;
                    }
                    *existing = agent;
                }
                None => state.agents.push(agent),
            }
        }
        state.terminated.extend(self.terminated);
        state.fork_counters.extend(self.fork_counters);
        self.run.apply(state);
        state.journal_commit = self.commit;
        if let Some(step) = self.step {
            state.last_step = Some((self.commit, step));
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum JournalError {
    #[error("cannot read the journal {path}: {source}")]
    Read { path: PathBuf, source: io::Error },
    #[error(
        "the journal {path} is damaged at line {line}: {reason}; the entries before it are intact: `baton repair \
         {}` keeps them (with a backup of the whole journal) so the run can resume",
        run_of(.path)
    )]
    Damaged { path: PathBuf, line: usize, reason: String },
    #[error("cannot write the journal {path}: {source}")]
    Write { path: PathBuf, source: io::Error },
    #[error("cannot write the journal {path}: {full}")]
    DiskFull { path: PathBuf, full: DiskFull },
}

/// The run a journal belongs to: the name of its directory.
fn run_of(journal: &Path) -> String {
    journal.parent().and_then(Path::file_name).map(|name| name.to_string_lossy().into_owned()).unwrap_or_default()
}

/// What reading a journal found.
#[derive(Debug)]
pub(crate) struct JournalScan {
    /// The snapshot a new run's journal begins with (its first line, `{"snapshot":
    /// STATE}`), as the JSON of the state: such a run has no `state.json` until its
    /// first compaction (`docs/state-format.md`).
    pub(crate) snapshot: Option<Vec<u8>>,
    /// The entries after the snapshot's commit, up to the first problem.
    pub(crate) entries: Vec<Commit>,
    /// Bytes of the journal before the first problem (a torn last line is not one).
    pub(crate) intact: u64,
    /// Lines in the intact prefix.
    pub(crate) intact_lines: usize,
    /// The first damaged line, or the first entry out of sequence: its line and why.
    pub(crate) problem: Option<(usize, String)>,
}

/// How the line holding a new run's first snapshot starts.
const SNAPSHOT_PREFIX: &[u8] = b"{\"snapshot\":";

/// The journal line that holds `snapshot`, the JSON of a run's state (one line:
/// compact JSON escapes every newline and zero byte).
pub(crate) fn snapshot_line(snapshot: &[u8]) -> Vec<u8> {
    let mut line = Vec::with_capacity(SNAPSHOT_PREFIX.len() + snapshot.len() + 2);
    line.extend_from_slice(SNAPSHOT_PREFIX);
    line.extend_from_slice(snapshot);
    line.extend_from_slice(b"}\n");
    line
}

/// The state's JSON in a snapshot line, if `line` (newline included) is one.
fn snapshot_in(line: &[u8]) -> Option<&[u8]> {
    line.strip_prefix(SNAPSHOT_PREFIX)?.strip_suffix(b"}\n")
}

/// The commit a snapshot includes, read from its JSON without the rest of it.
fn snapshot_commit(snapshot: &[u8]) -> Result<u64, serde_json::Error> {
    #[derive(Deserialize)]
    struct Commit {
        #[serde(default)]
        journal_commit: u64,
    }
    serde_json::from_slice::<Commit>(snapshot).map(|commit| commit.journal_commit)
}

/// Read the journal at `path` for a snapshot that includes commit `after`, or, with
/// `None`, for the snapshot on its own first line (a run without `state.json`). A
/// missing file is empty; a final line without its newline (or unparsable at the
/// very end) is a write a crash cut short, not damage. Entries are numbered, so
/// one missing in the middle is found: those after `after` must count up by one.
/// A first-line snapshot is skipped when `after` is given: `state.json` is newer
/// (a compaction that stopped before it emptied the journal).
pub(crate) fn scan_journal(path: &Path, after: Option<u64>) -> Result<JournalScan, JournalError> {
    let mut scan = JournalScan { snapshot: None, entries: Vec::new(), intact: 0, intact_lines: 0, problem: None };
    let file = match File::open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == io::ErrorKind::NotFound => return Ok(scan),
        Err(source) => return Err(JournalError::Read { path: path.to_path_buf(), source }),
    };
    let mut after = after;
    let mut reader = BufReader::new(file);
    let mut line = Vec::new();
    let mut number = 0;
    loop {
        line.clear();
        // The preallocated zeros after the last entry: the end of the journal.
        let ahead = reader.fill_buf().map_err(|source| JournalError::Read { path: path.to_path_buf(), source })?;
        if ahead.first() == Some(&0) {
            break;
        }
        let read = reader
            .read_until(b'\n', &mut line)
            .map_err(|source| JournalError::Read { path: path.to_path_buf(), source })?;
        // No newline, or zeros inside the line: a write a crash cut short.
        if read == 0 || line.last() != Some(&b'\n') || line.contains(&0) {
            break;
        }
        number += 1;
        if let Some(snapshot) = snapshot_in(&line) {
            if number > 1 {
                scan.problem = Some((number, "a snapshot after the first line".to_string()));
                break;
            }
            if after.is_none() {
                match snapshot_commit(snapshot) {
                    Ok(commit) => after = Some(commit),
                    Err(error) => {
                        scan.problem = Some((number, format!("the run's first snapshot is not valid: {error}")));
                        break;
                    }
                }
                scan.snapshot = Some(snapshot.to_vec());
            }
            scan.intact += read as u64;
            scan.intact_lines = number;
            continue;
        }
        let after = after.unwrap_or(0);
        match serde_json::from_slice::<Commit>(&line) {
            Ok(entry) => {
                let expected = scan.entries.last().map_or(after, |last| last.commit) + 1;
                if entry.commit > after && entry.commit != expected {
                    let reason = format!("entry {} follows entry {}: entries are missing", entry.commit, expected - 1);
                    scan.problem = Some((number, reason));
                    break;
                }
                scan.intact += read as u64;
                scan.intact_lines = number;
                if entry.commit > after {
                    scan.entries.push(entry);
                }
            }
            Err(error) => {
                // An unparsable last line is a torn write after a power loss.
                if !reader.fill_buf().map(|rest| rest.is_empty() || rest[0] == 0).unwrap_or(false) {
                    scan.problem = Some((number, error.to_string()));
                }
                break;
            }
        }
    }
    Ok(scan)
}

/// What one append did.
pub(crate) struct Appended {
    pub(crate) bytes: u64,
    /// The sequence number to wait for before the entry is durable; `None` when
    /// there is nothing to wait for.
    pub(crate) pending: Option<u64>,
}

/// Whether `file` lives on a file system in memory (tmpfs, ramfs). Such a journal is
/// not synced unless `BATON_SYNC_IN_MEMORY` is set (the crash tests set it, so that
/// they exercise the syncer wherever their temp dir is).
fn in_memory(file: &File) -> bool {
    use std::os::fd::AsRawFd;
    const TMPFS_MAGIC: i64 = 0x0102_1994;
    const RAMFS_MAGIC: i64 = 0x8584_58f6;
    // SAFETY: `stats` is plain data, valid zeroed; the descriptor is open for the call.
    unsafe {
        let mut stats: libc::statfs = std::mem::zeroed();
        libc::fstatfs(file.as_raw_fd(), &mut stats) == 0 && matches!(stats.f_type as i64, TMPFS_MAGIC | RAMFS_MAGIC)
    }
}

/// The open journal of a live run.
pub(crate) struct Journal {
    path: PathBuf,
    file: Arc<File>,
    /// `None` on a file system in memory (tmpfs, ramfs): a power loss takes
    /// everything there, so a sync would buy nothing and only cost a thread handoff.
    syncer: Option<Syncer>,
    entries: u64,
    /// Entries written by this invocation, compactions included: the syncer's count.
    written: u64,
    /// Bytes of complete entries: where the next one is written.
    length: u64,
    /// Bytes of the file, entries and zeros: how far entries fit without growing it.
    capacity: u64,
    /// How far the file's blocks are held past its end (`failure_note::hold`): entries
    /// stop [`NOTE_SPACE`] short of it, so that a failure note always fits.
    held_to: u64,
}

/// The zeros a new journal starts with, and the least it grows by. Small, because
/// they are written before the first step starts: 16 KiB took 31 µs on this
/// project's ext4 where 64 KiB took 64 (and 357 at the 90th percentile); a short
/// run needs a few KiB, and a long one doubles them in a few growths.
const PREALLOCATED: u64 = 16 * 1024;

/// The most a full journal grows by at once (it doubles up to this).
const MOST_GROWTH: u64 = 8 * 1024 * 1024;

/// How far past the note's space a journal in memory holds its blocks at a time: a
/// few dozen entries between two `fallocate`s, and little memory kept by a run that
/// ended (its held blocks stay with the file).
const HELD_AHEAD_IN_MEMORY: u64 = 8 * 1024;

/// Write zeros over `from..to` of `file`.
fn zero(file: &File, from: u64, to: u64) -> io::Result<()> {
    const CHUNK: u64 = 64 * 1024;
    let zeros = vec![0u8; CHUNK.min(to.saturating_sub(from)) as usize];
    let mut at = from;
    while at < to {
        let length = CHUNK.min(to - at) as usize;
        file.write_all_at(&zeros[..length], at)?;
        at += length as u64;
    }
    Ok(())
}

/// Whether `file` holds anything but zeros from `from` on.
fn written_after(file: &File, from: u64, to: u64) -> io::Result<bool> {
    let mut buffer = vec![0u8; 64 * 1024];
    let mut at = from;
    while at < to {
        let length = (buffer.len() as u64).min(to - at) as usize;
        let read = file.read_at(&mut buffer[..length], at)?;
        if read == 0 {
            return Ok(false);
        }
        if buffer[..read].iter().any(|byte| *byte != 0) {
            return Ok(true);
        }
        at += read as u64;
    }
    Ok(false)
}

impl Journal {
    /// Open for appending after the `intact_length` bytes of entries: a new journal
    /// is preallocated, and a torn tail is zeroed. Nothing here is synced: the
    /// first sync covers it. A file system in memory is not preallocated (nothing is
    /// synced there), nor a full disk (best effort: entries then grow the file).
    pub(crate) fn open(path: &Path, intact_length: u64) -> Result<Journal, JournalError> {
        Journal::open_with(path, intact_length, None)
    }

    /// `open`, synced (and so preallocated) or not as `synced` says, else as the
    /// file system says.
    fn open_with(path: &Path, intact_length: u64, synced: Option<bool>) -> Result<Journal, JournalError> {
        let write_error = |source| JournalError::Write { path: path.to_path_buf(), source };
        let file =
            OpenOptions::new().create(true).read(true).write(true).truncate(false).open(path).map_err(write_error)?;
        let size = file.metadata().map_err(write_error)?.len();
        if size > intact_length && written_after(&file, intact_length, size).map_err(write_error)? {
            zero(&file, intact_length, size).map_err(write_error)?;
        }
        let file = Arc::new(file);
        let synced = synced.unwrap_or_else(|| !in_memory(&file) || std::env::var_os("BATON_SYNC_IN_MEMORY").is_some());
        let syncer = if synced { Some(Syncer::start(Arc::clone(&file)).map_err(write_error)?) } else { None };
        let mut journal = Journal {
            path: path.to_path_buf(),
            file,
            syncer,
            entries: 0,
            written: 0,
            length: intact_length,
            capacity: size.max(intact_length),
            held_to: 0,
        };
        // Best effort: a disk already full holds nothing, and the first entry says so.
        let _ = journal.reserve(1);
        Ok(journal)
    }

    /// Make room for `more` bytes of entries with a failure note's space held after
    /// them. A synced journal doubles its zeros (up to [`MOST_GROWTH`] at once), or
    /// more if one entry needs it; where the zeros do not fit, the entry grows the
    /// file itself. A journal in memory holds [`HELD_AHEAD_IN_MEMORY`] more at a time. Fails
    /// only when the note's space after the entry cannot be held: the entry must not
    /// take the space the note of its own failure needs.
    fn reserve(&mut self, more: u64) -> io::Result<()> {
        let needed = self.length + more;
        if self.syncer.is_some() && needed > self.capacity {
            let grown = self.capacity + self.capacity.clamp(PREALLOCATED, MOST_GROWTH);
            let capacity = grown.max(needed.div_ceil(PREALLOCATED) * PREALLOCATED);
            // The blocks first, so that the zeros need no new space.
            if failure_note::hold(&self.file, self.capacity, capacity + NOTE_SPACE).is_ok() {
                self.held_to = self.held_to.max(capacity + NOTE_SPACE);
                if zero(&self.file, self.capacity, capacity).is_ok() {
                    self.capacity = capacity;
                }
            }
        }
        let end = needed.max(self.capacity);
        if end + NOTE_SPACE <= self.held_to {
            return Ok(());
        }
        let ahead = if self.syncer.is_some() { 0 } else { HELD_AHEAD_IN_MEMORY };
        self.held_to = match failure_note::hold(&self.file, self.length, end + NOTE_SPACE + ahead) {
            Ok(()) => end + NOTE_SPACE + ahead,
            Err(_) if ahead > 0 => {
                failure_note::hold(&self.file, self.length, end + NOTE_SPACE)?;
                end + NOTE_SPACE
            }
            Err(error) => return Err(error),
        };
        Ok(())
    }

    /// Write `note` at the end of the file, into the space held for it, and make it
    /// durable (`store::failure_note`).
    pub(crate) fn note_failure(&self, note: &FailureNote) -> io::Result<()> {
        let bytes = failure_note::encode(note)?;
        let end = self.file.metadata()?.len();
        self.file.write_all_at(&bytes, end)?;
        self.file.sync_data()
    }

    /// Append `entry` with one `write` and start making it durable; returns the bytes
    /// written and the entry's sequence number (`Journal::updates` says when it is
    /// durable). A killed process cannot lose it once this returns.
    pub(crate) fn append(&mut self, entry: &Commit) -> Result<Appended, JournalError> {
        if let Some(source) = self.syncer.as_ref().and_then(Syncer::failure) {
            return Err(JournalError::Write { path: self.path.clone(), source });
        }
        let mut line = serde_json::to_vec(entry)
            .map_err(|error| JournalError::Write { path: self.path.clone(), source: io::Error::other(error) })?;
        line.push(b'\n');
        let bytes = line.len() as u64;
        let written = if failpoint::fails("journal_append_fails") {
            Err((io::Error::from_raw_os_error(libc::ENOSPC), bytes))
        } else {
            match self.reserve(bytes) {
                Ok(()) => self.file.write_all_at(&line, self.length).map_err(|error| (error, bytes)),
                Err(error) => Err((error, bytes + NOTE_SPACE)),
            }
        };
        let end = self.length + bytes;
        if let Err((source, needed)) = written {
            // Leave no partial line behind for a later append to run into. Zeros,
            // not a shorter file: cutting the file would free the note's space.
            let size = self.file.metadata().map_or(end, |metadata| metadata.len());
            let _ = zero(&self.file, self.length, end.min(size));
            return Err(match DiskFull::of(&source, &self.path, needed) {
                Some(full) => JournalError::DiskFull { path: self.path.clone(), full },
                None => JournalError::Write { path: self.path.clone(), source },
            });
        }
        self.entries += 1;
        self.written += 1;
        self.length = end;
        self.capacity = self.capacity.max(end);
        let pending = self.syncer.as_ref().map(|syncer| syncer.written(self.written)).map(|()| self.written);
        Ok(Appended { bytes, pending })
    }

    /// Have `files` synced in the background like an entry; returns the sequence
    /// number that says when they are durable.
    /// `None` when there is nothing to wait for (a file system in memory).
    pub(crate) fn sync_files(&mut self, files: Vec<PathBuf>) -> Option<u64> {
        let syncer = self.syncer.as_ref()?;
        self.written += 1;
        syncer.written_with(self.written, files);
        Some(self.written)
    }

    /// Block until every entry appended so far is durable.
    pub(crate) fn sync(&self) -> Result<(), JournalError> {
        let Some(syncer) = &self.syncer else { return Ok(()) };
        syncer.wait().map_err(|source| JournalError::Write { path: self.path.clone(), source })
    }

    /// Follow how far the appended entries are durable (a channel that never
    /// changes, closed at once, when nothing is ever synced).
    pub(crate) fn updates(&self) -> tokio::sync::watch::Receiver<Synced> {
        match &self.syncer {
            Some(syncer) => syncer.updates(),
            None => tokio::sync::watch::channel(Synced::UpTo(0)).1,
        }
    }

    /// The sequence number of the last entry appended.
    pub(crate) fn written(&self) -> u64 {
        self.written
    }

    /// Entries appended since the journal was last emptied.
    pub(crate) fn len(&self) -> u64 {
        self.entries
    }

    /// Empty the journal once a snapshot includes every entry: its entries become
    /// zeros again (the file keeps its size, so the next syncs stay data-only).
    pub(crate) fn clear(&mut self) -> Result<(), JournalError> {
        let write_error = |source| JournalError::Write { path: self.path.clone(), source };
        if self.syncer.is_some() {
            zero(&self.file, 0, self.length).map_err(write_error)?;
        } else {
            // This frees the note's space too; it is held again below.
            self.file.set_len(0).map_err(write_error)?;
            self.capacity = 0;
            self.held_to = 0;
        }
        self.file.sync_data().map_err(write_error)?;
        self.entries = 0;
        self.length = 0;
        let _ = self.reserve(0);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;
    use crate::model::agent::Frame;

    fn frame(state: &str) -> Frame {
        Frame {
            session: None,
            session_backend: None,
            session_message: None,
            state: state.into(),
            scope_dir: PathBuf::from("/wf"),
            scope_url: None,
            cwd: PathBuf::from("/"),
            nesting_depth: 0,
            task_folder: PathBuf::from("/t"),
        }
    }

    fn agent_with(stack: &[&str]) -> Agent {
        let mut agent = Agent::main("A.sh".into(), PathBuf::from("/wf"), PathBuf::from("/"), PathBuf::from("/t"));
        agent.stack = stack.iter().map(|state| frame(state)).collect();
        agent
    }

    fn replay(existing: &Agent, upsert: AgentUpsert) -> Agent {
        let mut state: RunState =
            serde_json::from_str(include_str!("../../fixtures/state-v1/state.json")).expect("fixture parses");
        state.agents = vec![existing.clone()];
        let entry = Commit {
            commit: 1,
            run: RunFields::of(&state),
            upsert: vec![upsert],
            remove: Vec::new(),
            terminated: Vec::new(),
            fork_counters: BTreeMap::new(),
            step: None,
        };
        let line = serde_json::to_string(&entry).expect("serialises");
        let parsed: Commit = serde_json::from_str(&line).expect("round-trips");
        parsed.apply(&mut state);
        state.agents.remove(0)
    }

    #[test]
    fn a_push_records_only_the_new_frame() {
        let before = agent_with(&["R1", "R2"]);
        let after = agent_with(&["R1", "R2", "R3"]);
        let upsert = AgentUpsert::new(&after, Some(2));
        assert_eq!(upsert.agent.stack.len(), 1);
        assert_eq!(replay(&before, upsert), after);
    }

    #[test]
    fn a_pop_records_no_frame() {
        let before = agent_with(&["R1", "R2", "R3"]);
        let after = agent_with(&["R1", "R2"]);
        let upsert = AgentUpsert::new(&after, Some(2));
        assert!(upsert.agent.stack.is_empty());
        assert_eq!(replay(&before, upsert), after);
    }

    #[test]
    fn a_pop_then_push_replaces_the_top() {
        let before = agent_with(&["R1", "R2"]);
        let after = agent_with(&["R1", "X"]);
        assert_eq!(replay(&before, AgentUpsert::new(&after, Some(1))), after);
    }

    #[test]
    fn without_keep_the_stack_is_complete() {
        let after = agent_with(&["R1", "R2"]);
        let upsert = AgentUpsert::new(&after, None);
        assert_eq!(upsert.agent.stack.len(), 2);
        assert_eq!(replay(&agent_with(&["old"]), upsert), after);
    }

    fn entry(commit: u64) -> Commit {
        let state: RunState =
            serde_json::from_str(include_str!("../../fixtures/state-v1/state.json")).expect("fixture parses");
        Commit {
            commit,
            run: RunFields::of(&state),
            upsert: Vec::new(),
            remove: Vec::new(),
            terminated: Vec::new(),
            fork_counters: BTreeMap::new(),
            step: None,
        }
    }

    fn commits(path: &Path, after: u64) -> Vec<u64> {
        let scan = scan_journal(path, Some(after)).expect("reads");
        assert_eq!(scan.problem, None);
        scan.entries.iter().map(|entry| entry.commit).collect()
    }

    /// Issue 22: a journal on disk is written full of zeros ahead of its entries, so
    /// an append changes neither its size nor its blocks and its `fdatasync` needs no
    /// commit of the file system's own journal.
    #[test]
    fn a_new_journal_is_preallocated_and_read_up_to_its_zeros() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join(JOURNAL_FILE);
        let mut journal = Journal::open_with(&path, 0, Some(true)).expect("opens");
        assert_eq!(std::fs::metadata(&path).expect("exists").len(), PREALLOCATED);
        for commit in 1..=3 {
            journal.append(&entry(commit)).expect("appends");
        }
        journal.sync().expect("synced");
        assert_eq!(std::fs::metadata(&path).expect("exists").len(), PREALLOCATED, "the size stayed put");
        assert_eq!(commits(&path, 0), [1, 2, 3]);
        assert_eq!(commits(&path, 2), [3]);
    }

    #[test]
    fn a_full_preallocation_grows_and_every_entry_is_read() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join(JOURNAL_FILE);
        let mut journal = Journal::open_with(&path, 0, Some(true)).expect("opens");
        let mut commit = 0;
        while std::fs::metadata(&path).expect("exists").len() < 3 * PREALLOCATED {
            commit += 1;
            journal.append(&entry(commit)).expect("appends");
        }
        assert_eq!(commits(&path, 0), (1..=commit).collect::<Vec<_>>());
    }

    #[test]
    fn a_compaction_zeroes_the_entries_and_the_next_ones_start_over() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join(JOURNAL_FILE);
        let mut journal = Journal::open_with(&path, 0, Some(true)).expect("opens");
        for commit in 1..=5 {
            journal.append(&entry(commit)).expect("appends");
        }
        journal.clear().expect("clears");
        assert_eq!(std::fs::metadata(&path).expect("exists").len(), PREALLOCATED);
        assert_eq!(commits(&path, 5), Vec::<u64>::new());
        journal.append(&entry(6)).expect("appends");
        assert_eq!(commits(&path, 5), [6], "nothing of the entries before the compaction is read");
    }

    #[test]
    fn a_torn_entry_before_the_zeros_is_dropped_and_zeroed_on_open() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join(JOURNAL_FILE);
        let mut journal = Journal::open_with(&path, 0, Some(true)).expect("opens");
        journal.append(&entry(1)).expect("appends");
        let intact = journal.length;
        drop(journal);
        // A power loss kept half of the next entry's write.
        let file = OpenOptions::new().write(true).open(&path).expect("opens");
        file.write_all_at(b"{\"commit\":2,\"run\":{\"sta", intact).expect("writes");
        let scan = scan_journal(&path, Some(0)).expect("reads");
        assert_eq!((scan.entries.len(), scan.intact, scan.problem), (1, intact, None));
        let mut journal = Journal::open_with(&path, scan.intact, Some(true)).expect("reopens");
        journal.append(&entry(2)).expect("appends");
        assert_eq!(commits(&path, 0), [1, 2]);
    }

    #[test]
    fn a_journal_written_without_zeros_is_read_and_continued() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join(JOURNAL_FILE);
        let mut line = serde_json::to_vec(&entry(1)).expect("serialises");
        line.push(b'\n');
        std::fs::write(&path, &line).expect("writes");
        let scan = scan_journal(&path, Some(0)).expect("reads");
        let mut journal = Journal::open_with(&path, scan.intact, Some(true)).expect("opens");
        journal.append(&entry(2)).expect("appends");
        assert_eq!(commits(&path, 0), [1, 2]);
    }

    /// Whether the blocks of `path` reach `NOTE_SPACE` past its end: the note's
    /// space. Asked only where the file system counts the blocks fallocate holds.
    fn note_space_is_held(path: &Path) -> bool {
        use std::os::unix::fs::MetadataExt;
        let metadata = std::fs::metadata(path).expect("exists");
        metadata.blocks() * 512 >= metadata.len() + NOTE_SPACE
    }

    /// Issue 22: the failure note moved from the run's `lock` file into the
    /// journal, past its end, on both kinds of journal.
    #[test]
    fn a_failure_note_fits_past_the_entries_is_read_and_is_gone_once_reopened() {
        for (synced, dir) in [
            (true, tempfile::tempdir().expect("temp dir")),
            (false, tempfile::tempdir_in("/dev/shm").expect("/dev/shm")),
        ] {
            let path = dir.path().join(JOURNAL_FILE);
            let mut journal = Journal::open_with(&path, 0, Some(synced)).expect("opens");
            assert!(note_space_is_held(&path), "synced {synced}: held on open");
            let mut commit = 0;
            // Past the first preallocation, and past many holds in memory.
            while journal.length < 3 * PREALLOCATED {
                commit += 1;
                journal.append(&entry(commit)).expect("appends");
                assert!(note_space_is_held(&path), "synced {synced}: held after entry {commit}");
            }
            let note = FailureNote { commit, error: "the disk is full".into() };
            journal.note_failure(&note).expect("noted");
            assert_eq!(failure_note::read(dir.path()), Some(note), "synced {synced}");
            assert_eq!(commits(&path, 0), (1..=commit).collect::<Vec<_>>(), "synced {synced}: entries stop before it");
            let scan = scan_journal(&path, Some(0)).expect("reads");
            assert_eq!(scan.problem, None);
            drop(journal);
            let mut journal = Journal::open_with(&path, scan.intact, Some(synced)).expect("reopens");
            assert_eq!(failure_note::read(dir.path()), None, "synced {synced}: the next invocation starts clean");
            journal.append(&entry(commit + 1)).expect("appends");
            assert_eq!(commits(&path, 0), (1..=commit + 1).collect::<Vec<_>>());
        }
    }

    #[test]
    fn a_journal_in_memory_holds_the_note_space_again_after_a_compaction() {
        let dir = tempfile::tempdir_in("/dev/shm").expect("/dev/shm");
        let path = dir.path().join(JOURNAL_FILE);
        let mut journal = Journal::open_with(&path, 0, Some(false)).expect("opens");
        journal.append(&entry(1)).expect("appends");
        journal.clear().expect("clears");
        assert!(note_space_is_held(&path));
    }

    #[test]
    fn a_journal_in_memory_is_recognised() {
        let shm = tempfile::tempfile_in("/dev/shm").expect("/dev/shm");
        assert!(in_memory(&shm));
        let proc = File::open("/proc/self/status").expect("/proc");
        assert!(!in_memory(&proc));
    }
}
