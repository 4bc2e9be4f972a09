//! Live trace lines for the event streams. One tailer per watched run reads the
//! run's `events.jsonl` as it grows (whoever drives the run: a child of this
//! daemon or a `baton run` in a terminal) and hands each new line to every client
//! of that run through one broadcast channel, keeping the last lines for clients
//! that reconnect with `Last-Event-ID`. A run with no client is not read at all.
//!
//! Reading the file rather than hooking into the engine keeps the run's own
//! process free of any work for the clients: twenty browsers cost the run nothing
//! but the daemon's share of the CPU.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Deserialize;
use tokio::sync::broadcast;

use crate::inspect::trace_file::{TraceTail, trace_path};
use crate::store::runs::RunStore;

/// Lines kept for reconnecting clients.
const RECENT: usize = 4096;
/// A client further behind than this is told to reload instead
/// (`BATON_SERVE_REPLAY_LIMIT` changes it, for tests).
const MAX_REPLAY: u64 = 10_000;

fn max_replay() -> u64 {
    std::env::var("BATON_SERVE_REPLAY_LIMIT").ok().and_then(|limit| limit.parse().ok()).unwrap_or(MAX_REPLAY)
}
/// How often a watched trace is read.
const POLL: Duration = Duration::from_millis(100);
/// A tailer with no client for this long stops.
const IDLE: Duration = Duration::from_secs(30);

#[derive(Debug)]
pub(crate) struct TraceLine {
    pub(crate) seq: u64,
    pub(crate) kind: String,
    pub(crate) text: String,
}

#[derive(Deserialize)]
struct Head<'a> {
    seq: u64,
    #[serde(rename = "type", borrow)]
    kind: std::borrow::Cow<'a, str>,
}

/// The `seq` and `type` of a trace line (`None` for a line that is not one).
pub(crate) fn head(line: &str) -> Option<(u64, String)> {
    serde_json::from_str::<Head>(line).ok().map(|head| (head.seq, head.kind.into_owned()))
}

struct Recent {
    lines: VecDeque<Arc<TraceLine>>,
    last_seq: u64,
}

pub(crate) struct RunFeed {
    run_id: String,
    sender: broadcast::Sender<Arc<TraceLine>>,
    recent: Mutex<Recent>,
}

/// Where a new client starts.
pub(crate) enum Start {
    /// These lines, then the live ones.
    Replay(Vec<Arc<TraceLine>>),
    /// Too far behind: reload, then follow from `seq`.
    Resync(u64),
}

impl RunFeed {
    /// Subscribe a client that has seen the lines up to `after`.
    pub(crate) fn subscribe(&self, store: &RunStore, after: u64) -> (broadcast::Receiver<Arc<TraceLine>>, Start) {
        let recent = self.recent.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let receiver = self.sender.subscribe();
        let last = recent.last_seq;
        if after >= last {
            return (receiver, Start::Replay(Vec::new()));
        }
        if last - after > max_replay() {
            return (receiver, Start::Resync(last));
        }
        let first_kept = recent.lines.front().map_or(u64::MAX, |line| line.seq);
        if after + 1 >= first_kept {
            let lines = recent.lines.iter().filter(|line| line.seq > after).cloned().collect();
            return (receiver, Start::Replay(lines));
        }
        // Older than what is kept: from the file, up to what was broadcast already.
        let text =
            crate::inspect::trace_file::read_complete(&trace_path(&store.run_dir(&self.run_id))).unwrap_or_default();
        let lines = text
            .lines()
            .filter_map(|line| {
                let (seq, kind) = head(line)?;
                (seq > after && seq <= last).then(|| Arc::new(TraceLine { seq, kind, text: line.to_string() }))
            })
            .collect();
        (receiver, Start::Replay(lines))
    }

    pub(crate) fn last_seq(&self) -> u64 {
        self.recent.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).last_seq
    }

    /// Take in what the trace gained; returns whether it gained anything.
    fn add(&self, text: &str) -> bool {
        let mut recent = self.recent.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let mut added = false;
        for line in text.lines() {
            let Some((seq, kind)) = head(line) else { continue };
            let line = Arc::new(TraceLine { seq, kind, text: line.to_string() });
            recent.last_seq = recent.last_seq.max(seq);
            if recent.lines.len() == RECENT {
                recent.lines.pop_front();
            }
            recent.lines.push_back(Arc::clone(&line));
            // Sent under the lock, so a subscriber sees each line once: in its
            // replay or on its receiver.
            let _ = self.sender.send(line);
            added = true;
        }
        added
    }
}

pub(crate) struct Feeds {
    store: RunStore,
    feeds: Mutex<HashMap<String, Arc<RunFeed>>>,
}

impl Feeds {
    pub(crate) fn new(store: RunStore) -> Arc<Feeds> {
        Arc::new(Feeds { store, feeds: Mutex::new(HashMap::new()) })
    }

    pub(crate) fn store(&self) -> &RunStore {
        &self.store
    }

    /// The feed of run `run_id`, started (and caught up with the trace) if needed.
    pub(crate) fn feed(self: &Arc<Self>, run_id: &str) -> Arc<RunFeed> {
        let mut feeds = self.feeds.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(feed) = feeds.get(run_id) {
            return Arc::clone(feed);
        }
        let (sender, _) = broadcast::channel(RECENT);
        let feed = Arc::new(RunFeed {
            run_id: run_id.to_string(),
            sender,
            recent: Mutex::new(Recent { lines: VecDeque::new(), last_seq: 0 }),
        });
        let mut tail = TraceTail::new(trace_path(&self.store.run_dir(run_id)));
        feed.add(&tail.read_new().unwrap_or_default());
        feeds.insert(run_id.to_string(), Arc::clone(&feed));
        let feeds = Arc::clone(self);
        let tailed = Arc::clone(&feed);
        tokio::spawn(async move {
            let mut idle_since = tokio::time::Instant::now();
            loop {
                tokio::time::sleep(POLL).await;
                tailed.add(&tail.read_new().unwrap_or_default());
                if tailed.sender.receiver_count() > 0 {
                    idle_since = tokio::time::Instant::now();
                    continue;
                }
                if idle_since.elapsed() >= IDLE {
                    let mut map = feeds.feeds.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                    // A client may have come in the meantime.
                    if tailed.sender.receiver_count() == 0 {
                        map.remove(&tailed.run_id);
                        return;
                    }
                }
            }
        });
        feed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(seq: u64) -> String {
        format!("{{\"v\":1,\"seq\":{seq},\"ts\":\"2026-11-22T00:00:00Z\",\"type\":\"StateStarted\"}}\n")
    }

    #[tokio::test]
    async fn a_client_is_replayed_what_it_missed_then_follows_and_one_far_behind_resyncs() {
        let dir = tempfile::tempdir().expect("temp dir");
        let store = RunStore::new(dir.path().to_path_buf());
        std::fs::create_dir_all(store.run_dir("r")).expect("mkdir");
        let trace = trace_path(&store.run_dir("r"));
        std::fs::write(&trace, (1..=5).map(line).collect::<String>()).expect("write");
        let feeds = Feeds::new(store.clone());
        let feed = feeds.feed("r");
        assert_eq!(feed.last_seq(), 5);
        let (mut receiver, start) = feed.subscribe(&store, 3);
        let Start::Replay(lines) = start else { panic!("expected a replay") };
        assert_eq!(lines.iter().map(|line| line.seq).collect::<Vec<_>>(), [4, 5]);
        feed.add(&line(6));
        assert_eq!(receiver.recv().await.expect("live line").seq, 6);
        feed.add(&(7..=10_020).map(line).collect::<String>());
        let (_, start) = feed.subscribe(&store, 2);
        assert!(matches!(start, Start::Resync(10_020)));
        // Older than the kept lines but within reach: read from the file.
        std::fs::write(&trace, (1..=10_020).map(line).collect::<String>()).expect("write");
        let (_, start) = feed.subscribe(&store, 5_000);
        let Start::Replay(lines) = start else { panic!("expected a replay") };
        assert_eq!(lines.first().map(|line| line.seq), Some(5_001));
        assert_eq!(lines.len(), 5_020);
    }
}
