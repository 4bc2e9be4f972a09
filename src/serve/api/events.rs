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
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::{broadcast, mpsc, watch};
use tokio_stream::wrappers::ReceiverStream;

use crate::serve::api::runs::summary;
use crate::serve::api::{ApiError, App, Shared, known_run};
use crate::serve::feed::Start;

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
    let (mut live, start) = tokio::task::block_in_place(|| feed.subscribe(app.feeds.store(), after));
    let (sender, receiver) = mpsc::channel(256);
    let mut stopping = app.shutdown.subscribe();
    tokio::spawn(async move {
        let mut sent = after;
        match start {
            Start::Replay(lines) => {
                for line in lines {
                    sent = line.seq;
                    let event = Event::default().id(line.seq.to_string()).event(&line.kind).data(&line.text);
                    if sender.send(Ok(event)).await.is_err() {
                        return;
                    }
                }
            }
            Start::Resync(seq) => {
                sent = seq;
                let event = Event::default().event("resync").data(json!({"trace_seq": seq}).to_string());
                if sender.send(Ok(event)).await.is_err() {
                    return;
                }
            }
        }
        loop {
            tokio::select! {
                line = live.recv() => match line {
                    Ok(line) if line.seq <= sent => {}
                    Ok(line) => {
                        sent = line.seq;
                        let event = Event::default().id(line.seq.to_string()).event(&line.kind).data(&line.text);
                        if sender.send(Ok(event)).await.is_err() {
                            return;
                        }
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        // Fell behind the live buffer: say so, and go on from now.
                        let seq = feed.last_seq();
                        sent = seq;
                        let event = Event::default().event("resync").data(json!({"trace_seq": seq}).to_string());
                        if sender.send(Ok(event)).await.is_err() {
                            return;
                        }
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                },
                () = stopped(&mut stopping) => return,
                () = sender.closed() => return,
            }
        }
    });
    Ok(stream(receiver))
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
        Arc::new(DaemonEvents { sender, recent: Mutex::new(Kept { last: 0, events: VecDeque::new() }) })
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

fn daemon_event(event: &DaemonEvent) -> Event {
    Event::default().id(event.id.to_string()).event(&event.kind).data(&event.data)
}

pub(super) async fn daemon_events(
    State(app): State<Shared>,
    Query(query): Query<After>,
    headers: HeaderMap,
) -> SseStream {
    let after = resume_point(&headers, &query);
    let (mut live, replay, last) = app.daemon_events.subscribe(after);
    let (sender, receiver) = mpsc::channel(256);
    let mut stopping = app.shutdown.subscribe();
    tokio::spawn(async move {
        let mut sent = if after == 0 || after > last { last } else { after };
        match replay {
            Some(events) => {
                for event in events {
                    sent = event.id;
                    if sender.send(Ok(daemon_event(&event))).await.is_err() {
                        return;
                    }
                }
            }
            None => {
                sent = last;
                let event = Event::default().event("resync").data(json!({"id": last}).to_string());
                if sender.send(Ok(event)).await.is_err() {
                    return;
                }
            }
        }
        loop {
            tokio::select! {
                event = live.recv() => match event {
                    Ok(event) if event.id <= sent => {}
                    Ok(event) => {
                        sent = event.id;
                        if sender.send(Ok(daemon_event(&event))).await.is_err() {
                            return;
                        }
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        let event = Event::default().event("resync").data("{}");
                        if sender.send(Ok(event)).await.is_err() {
                            return;
                        }
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                },
                () = stopped(&mut stopping) => return,
                () = sender.closed() => return,
            }
        }
    });
    stream(receiver)
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
