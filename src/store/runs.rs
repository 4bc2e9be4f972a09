//! Where runs live on disk and how they are read back.
//!
//! `.baton/` is found like raymond's `.raymond/` (R8.1): walk up from the working
//! directory, stop at the first directory holding `.git`, and create it there (or
//! in the working directory) when none exists. Each run owns
//! `.baton/runs/<run_id>/`: a snapshot `state.json`, replaced atomically — temp file
//! in the same directory, fsync, rename, fsync of the directory — so a crash leaves
//! the old snapshot or the new one, never a torn file (R8.2); and `journal.jsonl`,
//! the steps committed since that snapshot (`journal.rs`). Loading a run is always
//! snapshot + replay, whether for `resume`, `status` or `list`.
//!
//! A new run's first snapshot is the first line of its journal instead, and
//! `state.json` appears with the first compaction: most runs never have one. That
//! saves creating, syncing and renaming a file on every run (issue 22: on a disk
//! where other programs delete files, each creation costs about a millisecond),
//! and a run is on disk as soon as one `write` put its journal there.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::model::run_state::{BATON_VERSION, RunState, RunStatus, STATE_VERSION};
use crate::store::disk_full::DiskFull;
use crate::store::failpoint;
use crate::store::failure_note;
use crate::store::journal::{JOURNAL_FILE, JournalError, JournalScan, StepSummary, scan_journal, snapshot_line};

pub(crate) const STATE_FILE: &str = "state.json";

#[derive(Debug, thiserror::Error)]
pub(crate) enum StoreError {
    #[error("run `{run_id}` not found in {runs_dir}{suggestion}")]
    NotFound { run_id: String, runs_dir: PathBuf, suggestion: String },
    #[error("run `{run_id}` already exists; use `baton resume {run_id}` to continue it")]
    AlreadyExists { run_id: String },
    #[error(transparent)]
    InvalidRunId(#[from] crate::ids::InvalidRunId),
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: io::Error },
    #[error("{path} is not a valid run state file: {source}")]
    Corrupt { path: PathBuf, source: serde_json::Error },
    #[error(
        "{path} is in state format {version}, newer than this Baton {BATON_VERSION} reads (formats 1 to \
         {STATE_VERSION}); {}",
        upgrade_advice(.written_by)
    )]
    TooNew { path: PathBuf, version: u32, written_by: Option<String> },
    #[error("cannot write {path}: {source}")]
    Write { path: PathBuf, source: io::Error },
    #[error("cannot write {path}: {full}")]
    DiskFull { path: PathBuf, full: DiskFull },
    #[error(transparent)]
    Journal(#[from] JournalError),
    #[error(
        "{path} does not begin with the run's snapshot, and the run has no {STATE_FILE}: nothing can rebuild the run \
         (a baton was stopped as it created it, or the file was damaged); `baton gc --unreadable` deletes it"
    )]
    NoSnapshot { path: PathBuf },
}

impl StoreError {
    /// A failed write of `bytes` bytes to `path`: a full disk says how full.
    fn writing(path: &Path, source: io::Error, bytes: u64) -> StoreError {
        match DiskFull::of(&source, path, bytes) {
            Some(full) => StoreError::DiskFull { path: path.to_path_buf(), full },
            None => StoreError::Write { path: path.to_path_buf(), source },
        }
    }

    /// Whether the run's own files are damaged (a snapshot that is no JSON, a file
    /// that cannot be read, a broken journal): such a run can be removed as
    /// unreadable. A run in a newer format is not damaged; a newer Baton reads it.
    pub(crate) fn is_damage(&self) -> bool {
        matches!(
            self,
            StoreError::Read { .. }
                | StoreError::Corrupt { .. }
                | StoreError::Journal(_)
                | StoreError::NoSnapshot { .. }
        )
    }
}

/// What `repair_journal` did: entries kept after the snapshot, the last commit
/// the run now has, and where the journal was cut, if it was.
#[derive(Debug)]
pub(crate) struct JournalRepair {
    pub(crate) kept: usize,
    pub(crate) last_commit: u64,
    pub(crate) cut: Option<JournalCut>,
}

#[derive(Debug)]
pub(crate) struct JournalCut {
    /// The first line dropped, and why it could not be kept.
    pub(crate) line: usize,
    pub(crate) reason: String,
    /// A copy of the whole journal as it was.
    pub(crate) backup: PathBuf,
}

/// A run read back from disk: the snapshot with the journal replayed onto it.
#[derive(Debug)]
pub(crate) struct LoadedRun {
    pub(crate) state: RunState,
    /// Bytes of the journal that are intact (a torn tail after them is dropped on resume).
    pub(crate) journal_intact: u64,
    /// The steps the journal replayed, with their commits: a resume re-publishes
    /// those the trace lacks (a crash or a full disk may have kept them out of it).
    pub(crate) replayed_steps: Vec<(u64, StepSummary)>,
}

/// Find (or choose) the `.baton` directory for `cwd` (R8.1).
pub(crate) fn discover_baton_dir(cwd: &Path) -> PathBuf {
    let mut project_root = None;
    for directory in cwd.ancestors() {
        let candidate = directory.join(".baton");
        if candidate.is_dir() {
            return candidate;
        }
        if directory.join(".git").exists() {
            project_root = Some(directory);
            break;
        }
    }
    project_root.unwrap_or(cwd).join(".baton")
}

#[derive(Clone, Debug)]
pub(crate) struct RunStore {
    baton_dir: PathBuf,
}

impl RunStore {
    pub(crate) fn new(baton_dir: PathBuf) -> RunStore {
        RunStore { baton_dir }
    }

    pub(crate) fn baton_dir(&self) -> &Path {
        &self.baton_dir
    }

    /// Create the `.baton` directory if it is not there, ignored by git (`baton_dir.rs`).
    pub(crate) fn create_baton_dir(&self) -> Result<(), StoreError> {
        crate::store::baton_dir::create_baton_dir(&self.baton_dir)
            .map_err(|source| StoreError::Write { path: self.baton_dir.clone(), source })
    }

    pub(crate) fn runs_dir(&self) -> PathBuf {
        self.baton_dir.join("runs")
    }

    pub(crate) fn run_dir(&self, run_id: &str) -> PathBuf {
        self.runs_dir().join(run_id)
    }

    pub(crate) fn exists(&self, run_id: &str) -> bool {
        holds_run(&self.run_dir(run_id))
    }

    /// A fresh id from the local time (R8.7), made unique with `_1`, `_2`, ….
    pub(crate) fn new_run_id(&self) -> String {
        let base = format!("workflow_{}", local_now().strftime("%Y-%m-%d_%H-%M-%S-%6f"));
        let mut candidate = base.clone();
        let mut suffix = 0;
        while self.run_dir(&candidate).exists() {
            suffix += 1;
            candidate = format!("{base}_{suffix}");
        }
        candidate
    }

    /// Create the run directory and write the first snapshot, as the first line of
    /// the run's journal; refuses an existing run. Returns what still needs an
    /// `fsync` (the directories holding the journal: the journal's own sync covers
    /// the snapshot) and where the journal's entries start. The run's journal syncer
    /// does that sync beside its first step (`RunPersistence::sync_files`), and
    /// nothing about the run is reported before.
    pub(crate) fn create(&self, state: &RunState) -> Result<CreatedRun, StoreError> {
        crate::ids::RunId::parse(&state.run_id)?;
        if self.exists(&state.run_id) {
            return Err(StoreError::AlreadyExists { run_id: state.run_id.to_string() });
        }
        let run_dir = self.run_dir(&state.run_id);
        self.create_baton_dir()?;
        fs::create_dir_all(&run_dir).map_err(|source| StoreError::Write { path: run_dir.clone(), source })?;
        let path = run_dir.join(JOURNAL_FILE);
        let json = serde_json::to_vec(state)
            .map_err(|source| StoreError::Write { path: path.clone(), source: io::Error::other(source) })?;
        let line = snapshot_line(&json);
        // A journal left by a run killed before its snapshot was written holds no run:
        // `exists` said so, and it is replaced.
        fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .and_then(|mut file| file.write_all(&line))
            .map_err(|source| StoreError::writing(&path, source, line.len() as u64))?;
        Ok(CreatedRun { unsynced: vec![run_dir, self.runs_dir()], journal_intact: line.len() as u64 })
    }

    /// Atomically replace the run's snapshot; returns the bytes written.
    pub(crate) fn write_snapshot(&self, state: &RunState) -> Result<u64, StoreError> {
        failpoint::hit("before_snapshot");
        let path = self.run_dir(&state.run_id).join(STATE_FILE);
        let mut json = serde_json::to_vec_pretty(state)
            .map_err(|source| StoreError::Write { path: path.clone(), source: io::Error::other(source) })?;
        json.push(b'\n');
        write_atomically(&path, &json)?;
        failpoint::hit("after_snapshot");
        Ok(json.len() as u64)
    }

    /// The run's current state: snapshot plus journal.
    pub(crate) fn load(&self, run_id: &str) -> Result<RunState, StoreError> {
        self.load_run(run_id).map(|loaded| loaded.state)
    }

    pub(crate) fn journal_path(&self, run_id: &str) -> PathBuf {
        self.run_dir(run_id).join(JOURNAL_FILE)
    }

    /// The run's snapshot with its journal replayed, plus what recovery needs.
    pub(crate) fn load_run(&self, run_id: &str) -> Result<LoadedRun, StoreError> {
        load_run_at(&self.existing_run_dir(run_id)?)
    }

    /// The directory of run `run_id`, which must exist (else a did-you-mean).
    pub(crate) fn existing_run_dir(&self, run_id: &str) -> Result<PathBuf, StoreError> {
        crate::ids::RunId::parse(run_id)?;
        let run_dir = self.run_dir(run_id);
        if !holds_run(&run_dir) {
            let known = self.run_ids();
            let suggestion = crate::text::suggestion::did_you_mean(run_id, known.iter().map(String::as_str))
                .map(|id| format!("; did you mean `{id}`?"))
                .unwrap_or_else(|| String::from("; `baton list` shows the runs there are"));
            return Err(StoreError::NotFound { run_id: run_id.to_string(), runs_dir: self.runs_dir(), suggestion });
        }
        Ok(run_dir)
    }

    /// Cut a damaged journal back to its intact entries so the run can resume from
    /// them, keeping a copy of the whole file first. The caller holds the run's lock.
    pub(crate) fn repair_journal(&self, run_dir: &Path) -> Result<JournalRepair, StoreError> {
        let (snapshot, scan) = read_run_files(run_dir)?;
        let path = run_dir.join(JOURNAL_FILE);
        let last_commit = scan.entries.last().map_or(snapshot.journal_commit, |entry| entry.commit);
        let Some((line, reason)) = scan.problem else {
            return Ok(JournalRepair { kept: scan.entries.len(), last_commit, cut: None });
        };
        let backup = run_dir.join(format!("{JOURNAL_FILE}.damaged-{}", jiff::Timestamp::now().as_second()));
        let write_error = |source| StoreError::Write { path: path.clone(), source };
        fs::copy(&path, &backup).map_err(|source| StoreError::Write { path: backup.clone(), source })?;
        let file = fs::OpenOptions::new().write(true).open(&path).map_err(write_error)?;
        file.set_len(scan.intact).and_then(|()| file.sync_all()).map_err(write_error)?;
        Ok(JournalRepair { kept: scan.entries.len(), last_commit, cut: Some(JournalCut { line, reason, backup }) })
    }

    /// Ids of every run directory that holds a run (`holds_run`), sorted.
    pub(crate) fn run_ids(&self) -> Vec<String> {
        let Ok(entries) = fs::read_dir(self.runs_dir()) else {
            return Vec::new();
        };
        let mut ids: Vec<String> = entries
            .filter_map(Result::ok)
            .filter(|entry| holds_run(&entry.path()))
            .filter_map(|entry| entry.file_name().into_string().ok())
            .collect();
        ids.sort();
        ids
    }

    /// Every run with its id, in id order; unreadable ones are returned as errors.
    pub(crate) fn list(&self) -> Vec<(String, Result<RunState, StoreError>)> {
        self.run_ids()
            .into_iter()
            .map(|id| {
                let loaded = load_run_at(&self.run_dir(&id)).map(|loaded| loaded.state);
                (id, loaded)
            })
            .collect()
    }

    /// The runs, readable ones oldest first (ties by id), unreadable ones after
    /// them by id.
    pub(crate) fn list_in_order(&self) -> Vec<(String, Result<RunState, StoreError>)> {
        let (mut readable, unreadable): (Vec<_>, Vec<_>) = self.list().into_iter().partition(|(_, run)| run.is_ok());
        readable.sort_by(|(a_id, a), (b_id, b)| {
            let created =
                |run: &Result<RunState, _>| run.as_ref().map(|run| run.created_at.clone()).unwrap_or_default();
            created(a).cmp(&created(b)).then_with(|| a_id.cmp(b_id))
        });
        readable.into_iter().chain(unreadable).collect()
    }
}

/// What `RunStore::create` left to do: sync `unsynced`, and append after the
/// journal's first `journal_intact` bytes (the snapshot).
#[derive(Debug)]
pub(crate) struct CreatedRun {
    pub(crate) unsynced: Vec<PathBuf>,
    pub(crate) journal_intact: u64,
}

/// Whether `run_dir` holds a run: a `state.json`, or a journal with something in
/// it (a new run's first `write` puts its snapshot there; a journal still empty is
/// a run killed before that write, which never started).
fn holds_run(run_dir: &Path) -> bool {
    run_dir.join(STATE_FILE).is_file() || fs::metadata(run_dir.join(JOURNAL_FILE)).is_ok_and(|meta| meta.len() > 0)
}

/// The run's snapshot (`state.json`, else the first line of its journal) and its
/// journal read after that snapshot (read-only).
pub(crate) fn read_run_files(run_dir: &Path) -> Result<(RunState, JournalScan), StoreError> {
    let journal = run_dir.join(JOURNAL_FILE);
    let state_path = run_dir.join(STATE_FILE);
    match fs::read(&state_path) {
        Ok(bytes) => {
            let state = parse_state(&bytes, &state_path)?;
            let scan = scan_journal(&journal, Some(state.journal_commit))?;
            Ok((state, scan))
        }
        Err(error) if error.kind() == io::ErrorKind::NotFound => {
            // Without its snapshot no entry can be replayed, nor repaired.
            let mut scan = scan_journal(&journal, None)?;
            match scan.snapshot.take() {
                Some(bytes) => Ok((parse_state(&bytes, &journal)?, scan)),
                None => Err(StoreError::NoSnapshot { path: journal }),
            }
        }
        Err(source) => Err(StoreError::Read { path: state_path, source }),
    }
}

/// The local time now. `jiff::Zoned::now()` would do, but finding the system's zone
/// makes jiff list `/usr/share/zoneinfo` (about a millisecond of every start);
/// `localtime_r` only reads `/etc/localtime` (or `TZ`).
fn local_now() -> jiff::Zoned {
    let now = jiff::Timestamp::now();
    let seconds = now.as_second() as libc::time_t;
    // SAFETY: `tm` is plain data, valid when zeroed; both pointers are valid for the
    // call, and `localtime_r` is the thread-safe form.
    let offset = unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&seconds, &mut tm).is_null() { 0 } else { tm.tm_gmtoff }
    };
    let offset = jiff::tz::Offset::from_seconds(i32::try_from(offset).unwrap_or(0)).unwrap_or(jiff::tz::Offset::UTC);
    now.to_zoned(jiff::tz::TimeZone::fixed(offset))
}

/// Snapshot + journal replay for the run directory `run_dir`.
pub(crate) fn load_run_at(run_dir: &Path) -> Result<LoadedRun, StoreError> {
    let (mut state, scan) = read_run_files(run_dir)?;
    if let Some((line, reason)) = scan.problem {
        return Err(JournalError::Damaged { path: run_dir.join(JOURNAL_FILE), line, reason }.into());
    }
    let journal_intact = scan.intact;
    let mut replayed_steps = Vec::new();
    for entry in scan.entries {
        if let Some(step) = &entry.step {
            replayed_steps.push((entry.commit, step.clone()));
        }
        entry.apply(&mut state);
    }
    // A failure that could not be saved left a note; no later commit outdates it.
    if let Some(note) = failure_note::read(run_dir)
        && note.commit >= state.journal_commit
    {
        state.status = RunStatus::Failed;
        state.error = Some(note.error);
    }
    Ok(LoadedRun { state, journal_intact, replayed_steps })
}

/// A snapshot's JSON, read from `path`, as a run's state.
fn parse_state(bytes: &[u8], path: &Path) -> Result<RunState, StoreError> {
    let too_new = |version: u32, written_by: Option<String>| StoreError::TooNew {
        path: path.to_path_buf(),
        version,
        written_by: written_by.filter(|writer| !writer.is_empty()),
    };
    match serde_json::from_slice::<RunState>(bytes) {
        Ok(state) if state.version <= STATE_VERSION => Ok(state),
        Ok(state) => Err(too_new(state.version, Some(state.written_by))),
        Err(source) => {
            // A newer format need not fit this build's schema: say so rather than
            // call the file corrupt.
            #[derive(serde::Deserialize)]
            struct Header {
                version: u32,
                written_by: Option<String>,
            }
            match serde_json::from_slice::<Header>(bytes) {
                Ok(header) if header.version > STATE_VERSION => Err(too_new(header.version, header.written_by)),
                _ => Err(StoreError::Corrupt { path: path.to_path_buf(), source }),
            }
        }
    }
}

/// Which Baton to use for a file in a newer format: the one that wrote it, when the
/// file says.
fn upgrade_advice(written_by: &Option<String>) -> String {
    match written_by {
        Some(version) => format!("it was written by Baton {version}: resume it with that version or newer"),
        None => "resume it with the newer Baton that wrote it".to_string(),
    }
}

/// Replace `path` with `bytes` through a temporary file and a rename, so a crash
/// leaves the old contents or the new, and durable on return (file, then directory).
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), StoreError> {
    let write_error = |source: io::Error| StoreError::writing(path, source, bytes.len() as u64);
    let directory = path.parent().unwrap_or(Path::new("."));
    let mut temp =
        tempfile::Builder::new().prefix(".state-").suffix(".tmp").tempfile_in(directory).map_err(write_error)?;
    temp.write_all(bytes).map_err(write_error)?;
    temp.as_file().sync_all().map_err(write_error)?;
    temp.persist(path).map_err(|error| write_error(error.error))?;
    fs::File::open(directory).and_then(|dir| dir.sync_all()).map_err(write_error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_now_has_the_system_zones_offset() {
        let ours = local_now();
        assert_eq!(ours.offset(), jiff::Zoned::now().offset());
        assert!((jiff::Timestamp::now() - ours.timestamp()).get_seconds().abs() < 5);
    }

    #[test]
    fn r8_1_discovery_stops_at_the_git_root() {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path();
        fs::create_dir_all(root.join("project/.git")).unwrap();
        fs::create_dir_all(root.join("project/a/b")).unwrap();
        assert_eq!(discover_baton_dir(&root.join("project/a/b")), root.join("project/.baton"));
        fs::create_dir_all(root.join("project/a/.baton")).unwrap();
        assert_eq!(discover_baton_dir(&root.join("project/a/b")), root.join("project/a/.baton"));
    }

    #[test]
    fn r8_7_run_id_validation() {
        let store = RunStore::new(PathBuf::from("/nowhere/.baton"));
        assert!(matches!(store.existing_run_dir("../x"), Err(StoreError::InvalidRunId(_))));
        assert!(matches!(store.existing_run_dir(&"a".repeat(300)), Err(StoreError::InvalidRunId(_))));
    }

    #[test]
    fn atomic_write_replaces_content_and_leaves_no_temp_files() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("state.json");
        write_atomically(&path, b"one").unwrap();
        write_atomically(&path, b"two").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
        assert_eq!(fs::read_dir(temp.path()).unwrap().count(), 1);
    }
}

#[cfg(test)]
mod property_tests {
    use proptest::prelude::*;

    use super::*;

    /// A valid snapshot to mutate.
    const VALID: &str = r#"{"version":1,"run_id":"r","scope_dir":"/wf","initial_state":"START.sh",
"launch_cwd":"/","status":"running","created_at":"t","updated_at":"t","total_cost_usd":0.5,
"agents":[{"id":"main","current_state":"A.sh","session_id":null,"stack":null,"cwd":"/",
"scope_dir":"/wf","task_folder":"/t","fork_attributes":{"k":"v"}}],"fork_counters":{"main":2}}"#;

    fn load(bytes: &[u8]) -> Result<RunState, StoreError> {
        parse_state(bytes, Path::new(STATE_FILE))
    }

    #[test]
    fn r8_5_null_stack_and_missing_optional_keys_are_accepted() {
        let state = load(VALID.as_bytes()).expect("valid snapshot loads");
        assert!(state.agents[0].stack.is_empty());
        assert_eq!(state.fork_counters.get("main"), Some(&2));
    }

    proptest! {
        #[test]
        fn loading_arbitrary_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let _ = load(&bytes);
        }

        #[test]
        fn loading_a_mutated_snapshot_never_panics(cut in 0..VALID.len(), insert in ".{0,8}", remove in 0usize..16) {
            let mut text = VALID.to_string();
            let mut at = cut;
            while !text.is_char_boundary(at) { at -= 1; }
            let end = (at + remove).min(text.len());
            let mut end_at = end;
            while !text.is_char_boundary(end_at) { end_at -= 1; }
            text.replace_range(at..end_at, &insert);
            let _ = load(text.as_bytes());
        }
    }
}

#[cfg(test)]
mod first_snapshot_tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::model::agent::Agent;
    use crate::model::run_state::{LaunchParams, NewRun};
    use crate::store::journal::{Commit, RunFields};
    use crate::store::persistence::RunPersistence;

    fn new_run(store: &RunStore, id: &str) -> (RunState, CreatedRun) {
        let main = Agent::main("START.sh".into(), PathBuf::from("/wf"), PathBuf::from("/"), PathBuf::from("/t"));
        let state = RunState::new(NewRun {
            run_id: id.into(),
            scope_dir: PathBuf::from("/wf"),
            scope_url: None,
            initial_state: "START.sh".into(),
            launch_cwd: PathBuf::from("/"),
            budget_usd: 0.0,
            main,
            launch_params: LaunchParams::default(),
        });
        let created = store.create(&state).expect("the run is created");
        (state, created)
    }

    /// One step's commit, applied to `state` as the loop would.
    fn step(state: &mut RunState) -> Commit {
        state.steps_completed += 1;
        state.journal_commit += 1;
        Commit {
            commit: state.journal_commit,
            run: RunFields::of(state),
            upsert: Vec::new(),
            remove: Vec::new(),
            terminated: Vec::new(),
            fork_counters: BTreeMap::new(),
            step: None,
        }
    }

    fn files(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .expect("read the run directory")
            .filter_map(Result::ok)
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_new_run_keeps_its_first_snapshot_in_its_journal_until_a_compaction() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = RunStore::new(dir.path().join(".baton"));
        let (mut state, created) = new_run(&store, "r");
        let run_dir = store.run_dir("r");
        assert_eq!(files(&run_dir), ["journal.jsonl"], "no state.json, no temporary file");
        assert_eq!(created.unsynced, [run_dir.clone(), store.runs_dir()]);
        let journal = fs::read(run_dir.join(JOURNAL_FILE)).expect("journal");
        assert!(journal.starts_with(b"{\"snapshot\":{\"version\":"), "{}", String::from_utf8_lossy(&journal));
        assert_eq!(journal.len() as u64, created.journal_intact);
        assert!(store.exists("r"));
        assert_eq!(store.run_ids(), ["r"]);
        let loaded = store.load_run("r").expect("loads from the journal alone");
        assert_eq!((loaded.state.run_id.to_string(), loaded.state.journal_commit), ("r".to_string(), 0));
        assert_eq!(loaded.journal_intact, created.journal_intact);

        let mut persistence = RunPersistence::begin(store.clone(), &state, created.journal_intact).expect("begin");
        for _ in 0..2 {
            let commit = step(&mut state);
            persistence.commit(&commit).expect("commit");
        }
        persistence.settle().expect("durable");
        let loaded = store.load_run("r").expect("snapshot line, then two entries");
        assert_eq!((loaded.state.steps_completed, loaded.state.journal_commit), (2, 2));
        assert_eq!(loaded.replayed_steps.len(), 0, "the commits recorded no steps");

        persistence.compact(&state).expect("compact");
        assert!(run_dir.join(STATE_FILE).is_file());
        let loaded = store.load_run("r").expect("state.json, and an empty journal");
        assert_eq!((loaded.state.steps_completed, loaded.journal_intact), (2, 0));
        let commit = step(&mut state);
        persistence.commit(&commit).expect("commit after the compaction");
        persistence.settle().expect("durable");
        assert_eq!(store.load_run("r").expect("loads").state.steps_completed, 3);
    }

    /// A compaction writes `state.json`, then empties the journal; a crash between
    /// the two leaves the first snapshot and entries `state.json` already holds.
    #[test]
    fn a_compaction_cut_short_before_it_emptied_the_journal_loads_from_state_json() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = RunStore::new(dir.path().join(".baton"));
        let (mut state, created) = new_run(&store, "r");
        let mut persistence = RunPersistence::begin(store.clone(), &state, created.journal_intact).expect("begin");
        for _ in 0..3 {
            let commit = step(&mut state);
            persistence.commit(&commit).expect("commit");
        }
        persistence.settle().expect("durable");
        drop(persistence);
        state.steps_completed = 2;
        state.journal_commit = 2;
        store.write_snapshot(&state).expect("the snapshot of commit 2");
        let loaded = store.load_run("r").expect("state.json, then entry 3 of the journal");
        assert_eq!((loaded.state.steps_completed, loaded.state.journal_commit), (3, 3));
        let repair = store.repair_journal(&store.run_dir("r")).expect("nothing to repair");
        assert_eq!((repair.kept, repair.last_commit, repair.cut.is_none()), (1, 3, true));
    }

    /// A `baton` killed between creating the journal and writing the snapshot into it
    /// leaves an empty file: no run, and the id can be used again.
    #[test]
    fn an_empty_journal_left_by_a_killed_create_is_no_run() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = RunStore::new(dir.path().join(".baton"));
        fs::create_dir_all(store.run_dir("r")).expect("run dir");
        fs::write(store.journal_path("r"), b"").expect("empty journal");
        assert!(!store.exists("r"));
        assert!(store.run_ids().is_empty());
        assert!(matches!(store.load_run("r"), Err(StoreError::NotFound { .. })));
        new_run(&store, "r");
        assert_eq!(store.load("r").expect("created over it").journal_commit, 0);
    }

    #[test]
    fn a_journal_without_its_first_snapshot_and_no_state_json_is_damage_gc_can_remove() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = RunStore::new(dir.path().join(".baton"));
        let (mut state, _) = new_run(&store, "r");
        let entry = serde_json::to_string(&step(&mut state)).expect("entry");
        fs::write(store.journal_path("r"), format!("{entry}\n")).expect("journal without its snapshot");
        assert_eq!(store.run_ids(), ["r"], "listed, as unreadable");
        let error = store.load("r").expect_err("no snapshot");
        assert!(error.is_damage());
        assert_eq!(
            error.to_string(),
            format!(
                "{} does not begin with the run's snapshot, and the run has no state.json: nothing can rebuild the \
                 run (a baton was stopped as it created it, or the file was damaged); `baton gc --unreadable` \
                 deletes it",
                store.journal_path("r").display()
            )
        );
        assert!(
            matches!(store.repair_journal(&store.run_dir("r")), Err(StoreError::NoSnapshot { .. })),
            "repair says the same: it has nothing to keep"
        );
        // Damage after the missing snapshot changes nothing: no entry can be replayed.
        fs::write(store.journal_path("r"), format!("{entry}\n{{garbage\n{entry}\n")).expect("journal");
        assert!(matches!(store.load("r"), Err(StoreError::NoSnapshot { .. })));
        // A snapshot that is not a run's state is a damaged first line.
        fs::write(store.journal_path("r"), "{\"snapshot\":[1]}\n").expect("journal");
        let error = store.load("r").expect_err("not a state");
        assert!(error.is_damage(), "{error}");
        assert!(error.to_string().contains("journal.jsonl is not a valid run state file"), "{error}");
    }
}
