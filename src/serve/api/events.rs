//! Server-sent events: each run's trace lines live (`GET …/runs/{id}/events`,
//! ids = the trace's `seq`), and the daemon's own stream of run changes
//! (`GET /api/v1/events`). Both resume from `Last-Event-ID`; a client too far
//! behind gets `event: resync` and reloads with the REST calls. Every stream ends
//! when the daemon stops, so a shutdown never waits on an open browser tab.

use std::collections::{HashMap, VecDeque};
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};

use crate::serve::metrics::SseClient;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::{broadcast, mpsc, watch};
use tokio_stream::wrappers::ReceiverStream;

use crate::serve::api::runs::summary;
use crate::serve::api::{ApiError, App, Shared, known_run};
use crate::serve::feed::{Start, TraceLine};

/// Daemon events kept for reconnecting clients.
const DAEMON_RECENT: usize = 1000;
/// How often the runs are looked at for changes.
const WATCH: Duration = Duration::from_millis(250);

type SseStream = Sse<axum::response::sse::KeepAliveStream<ReceiverStream<Result<Event, Infallible>>>>;

#[derive(Deserialize)]
pub(super) struct After {
    after: Option<u64>,
}

/// Where a reconnecting client left off: `Last-Event-ID`, else `?after=`.
fn resume_point(headers: &HeaderMap, query: &After) -> u64 {
    headers
        .get("last-event-id")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.trim().parse().ok())
        .or(query.after)
        .unwrap_or(0)
}

fn stream(receiver: mpsc::Receiver<Result<Event, Infallible>>) -> SseStream {
    Sse::new(ReceiverStream::new(receiver))
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)).text("keep-alive"))
}

pub(super) async fn run_events(
    State(app): State<Shared>,
    Path(run_id): Path<String>,
    Query(query): Query<After>,
    headers: HeaderMap,
) -> Result<SseStream, ApiError> {
    known_run(&app.store, &run_id)?;
    let after = resume_point(&headers, &query);
    let feed = app.feeds.feed(&run_id);
    let (live, start) = tokio::task::block_in_place(|| feed.subscribe(app.feeds.store(), after));
    let opening = match start {
        Start::Replay(lines) => Opening::Replay(lines),
        Start::Resync(seq) => Opening::Resync(seq, json!({"trace_seq": seq})),
    };
    let lagged = move || {
        let seq = feed.last_seq();
        (seq, json!({"trace_seq": seq}))
    };
    Ok(follow(live, opening, after, lagged, app.shutdown.subscribe(), app.metrics.sse_client()))
}

/// What can be sent on an event stream: an id to resume after, and the event.
trait Streamed: Send + Sync + 'static {
    fn id(&self) -> u64;
    fn event(&self) -> Event;
}

impl Streamed for TraceLine {
    fn id(&self) -> u64 {
        self.seq
    }

    fn event(&self) -> Event {
        Event::default().id(self.seq.to_string()).event(&self.kind).data(&self.text)
    }
}

/// What a new client is sent first: what it missed, or a `resync` (the id to
/// follow from, and its data).
enum Opening<T> {
    Replay(Vec<Arc<T>>),
    Resync(u64, Value),
}

/// A stream that sends `opening`, then every live item after the last one sent;
/// a client that falls behind the live buffer gets a `resync` (`lagged` says from
/// where). It ends when the client goes or the daemon stops.
fn follow<T: Streamed>(
    mut live: broadcast::Receiver<Arc<T>>,
    opening: Opening<T>,
    after: u64,
    lagged: impl Fn() -> (u64, Value) + Send + 'static,
    mut stopping: watch::Receiver<bool>,
    client: SseClient,
) -> SseStream {
    let (sender, receiver) = mpsc::channel(256);
    tokio::spawn(async move {
        // Counted (`/metrics`) for as long as this task serves the client.
        let _client = client;
        let mut sent = after;
        let first: Vec<Event> = match opening {
            Opening::Replay(items) => {
                sent = items.last().map_or(sent, |item| item.id());
                items.iter().map(|item| item.event()).collect()
            }
            Opening::Resync(id, data) => {
                sent = id;
                vec![Event::default().event("resync").data(data.to_string())]
            }
        };
        for event in first {
            if sender.send(Ok(event)).await.is_err() {
                return;
            }
        }
        loop {
            let event = tokio::select! {
                item = live.recv() => match item {
                    Ok(item) if item.id() <= sent => continue,
                    Ok(item) => {
                        sent = item.id();
                        item.event()
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        let (id, data) = lagged();
                        sent = id;
                        Event::default().event("resync").data(data.to_string())
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                },
                () = stopped(&mut stopping) => return,
                () = sender.closed() => return,
            };
            if sender.send(Ok(event)).await.is_err() {
                return;
            }
        }
    });
    stream(receiver)
}

/// One event of the daemon's own stream.
struct DaemonEvent {
    id: u64,
    kind: String,
    data: String,
}

/// The events kept for reconnecting clients, and the last id given.
struct Kept {
    last: u64,
    events: VecDeque<Arc<DaemonEvent>>,
}

/// A new client's receiver, what it missed (`None`: more than is kept), the last id.
type DaemonSubscription = (broadcast::Receiver<Arc<DaemonEvent>>, Option<Vec<Arc<DaemonEvent>>>, u64);

/// The daemon's own events: run changes and rescans, numbered by the daemon.
pub(crate) struct DaemonEvents {
    sender: broadcast::Sender<Arc<DaemonEvent>>,
    recent: Mutex<Kept>,
}

impl DaemonEvents {
    pub(crate) fn new() -> Arc<DaemonEvents> {
        let (sender, _) = broadcast::channel(DAEMON_RECENT);
        // Ids count on from the start time in microseconds, not from 1: an id a
        // client kept from an earlier daemon is then always older than this one's
        // (a `resync`), and an id past the end is one to wait for, never a restart.
        let start = u64::try_from(jiff::Timestamp::now().as_microsecond()).unwrap_or(0);
        Arc::new(DaemonEvents { sender, recent: Mutex::new(Kept { last: start, events: VecDeque::new() }) })
    }

    fn last_id(&self) -> u64 {
        self.recent.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).last
    }

    pub(crate) fn publish(&self, kind: &str, data: Value) {
        let mut recent = self.recent.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        recent.last += 1;
        let event = Arc::new(DaemonEvent { id: recent.last, kind: kind.to_string(), data: data.to_string() });
        if recent.events.len() == DAEMON_RECENT {
            recent.events.pop_front();
        }
        recent.events.push_back(Arc::clone(&event));
        let _ = self.sender.send(event);
    }

    /// Subscribe after event `after` (0: from now): the kept events since, or
    /// `None` when some of them are no longer kept; and the last event's id.
    fn subscribe(&self, after: u64) -> DaemonSubscription {
        let recent = self.recent.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let receiver = self.sender.subscribe();
        let last = recent.last;
        if after == 0 || after >= last {
            return (receiver, Some(Vec::new()), last);
        }
        let first = recent.events.front().map_or(last + 1, |event| event.id);
        let replay =
            (after + 1 >= first).then(|| recent.events.iter().filter(|event| event.id > after).cloned().collect());
        (receiver, replay, last)
    }
}

impl Streamed for DaemonEvent {
    fn id(&self) -> u64 {
        self.id
    }

    fn event(&self) -> Event {
        Event::default().id(self.id.to_string()).event(&self.kind).data(&self.data)
    }
}

pub(super) async fn daemon_events(
    State(app): State<Shared>,
    Query(query): Query<After>,
    headers: HeaderMap,
) -> SseStream {
    let after = resume_point(&headers, &query);
    let (live, replay, last) = app.daemon_events.subscribe(after);
    let opening = match replay {
        Some(events) => Opening::Replay(events),
        None => Opening::Resync(last, json!({"id": last})),
    };
    let events = Arc::clone(&app.daemon_events);
    let lagged = move || {
        let last = events.last_id();
        (last, json!({"id": last}))
    };
    // No id: from now. An id past the last one: the events after it, when they come.
    let after = if after == 0 { last } else { after };
    follow(live, opening, after, lagged, app.shutdown.subscribe(), app.metrics.sse_client())
}

/// What changes when a run changes: its files' sizes and times, and its lock.
type Signature = (Option<(u64, SystemTime)>, Option<(u64, SystemTime)>, bool);

fn signature(app: &App, run_id: &str) -> Signature {
    let dir = app.store.run_dir(run_id);
    let look =
        |name: &str| std::fs::metadata(dir.join(name)).ok().and_then(|meta| Some((meta.len(), meta.modified().ok()?)));
    (look("state.json"), look("journal.jsonl"), crate::store::lock::RunLock::holder(&dir).is_some())
}

/// Publish a `run` event whenever a run is created or changes (at most one per
/// run per look), until the daemon stops.
pub(crate) async fn watch_runs(app: Shared, mut stopping: watch::Receiver<bool>) {
    let mut known: HashMap<String, Signature> = HashMap::new();
    let mut first = true;
    let mut children = app.supervisor.changes();
    loop {
        let runs = app.store.run_ids();
        for run_id in &runs {
            let now = signature(&app, run_id);
            if known.get(run_id) == Some(&now) {
                continue;
            }
            known.insert(run_id.clone(), now);
            if first {
                continue;
            }
            if let Ok(run) = app.store.load(run_id) {
                app.daemon_events.publish("run", summary(&app, &run));
            }
        }
        known.retain(|run_id, _| runs.contains(run_id));
        first = false;
        tokio::select! {
            () = tokio::time::sleep(WATCH) => {}
            _ = children.recv() => {}
            () = stopped(&mut stopping) => return,
        }
    }
}

/// Until the daemon stops.
async fn stopped(stopping: &mut watch::Receiver<bool>) {
    let _ = stopping.wait_for(|stop| *stop).await;
}
