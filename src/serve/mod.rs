//! `baton serve`: a local daemon with an HTTP API, live event streams and a web
//! run inspector (`docs/serve.md`).
//!
//! The data flows as everywhere else in Baton, with the daemon as one more front
//! end: requests become `baton run/resume/rerun` child processes
//! (`supervisor`), which write the run's store and trace as the CLI does; the API
//! reads that store and trace back (`api`, `timeline`, `step_detail`), and the
//! event streams follow the trace as it grows (`feed`). Nothing about a run lives
//! only in the daemon, so it can stop, crash or restart without losing a step.
//!
//! Safe by default (`guard`, `token`, `assets`): loopback only, a bearer token on
//! every API call, no CORS, foreign origins refused, names instead of paths.

mod api;
mod assets;
mod connections;
mod daemon_lock;
mod error;
mod feed;
mod guard;
pub(crate) mod handoff;
mod metrics;
mod registry;
mod step_detail;
mod supervisor;
mod timeline;
mod token;
mod unread_body;

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use axum::middleware;
use tokio::sync::watch;

pub(crate) use error::ServeError;

use crate::exit_code;
use crate::serve::api::App;
use crate::serve::daemon_lock::DaemonLock;
use crate::serve::guard::Guard;
use crate::serve::registry::Registry;
use crate::serve::supervisor::Supervisor;
use crate::serve::token::Token;
use crate::store::runs::RunStore;

/// How `baton serve` was asked to serve (its command line).
pub(crate) struct ServeOptions {
    pub(crate) bind: std::net::SocketAddr,
    pub(crate) allow_remote: bool,
    pub(crate) roots: Vec<PathBuf>,
    pub(crate) open: bool,
    pub(crate) rotate_token: bool,
}

/// Serve until stopped; the exit code.
pub(crate) async fn serve(cwd: PathBuf, store: RunStore, arguments: ServeOptions) -> Result<i32, ServeError> {
    if !arguments.bind.ip().is_loopback() && !arguments.allow_remote {
        return Err(ServeError::RemoteBind { addr: arguments.bind });
    }
    let roots = roots(&cwd, &arguments.roots)?;
    // Before anyone can know the address: a stop that comes right after it is printed
    // must find the handlers in place, or the signal's default would kill the daemon
    // with its children unstopped.
    let signals = Signals::install();
    let serve_dir = store.baton_dir().join("serve");
    crate::store::baton_dir::create_baton_dir(store.baton_dir())
        .map_err(|source| ServeError::Write { path: store.baton_dir().to_path_buf(), source })?;
    // One daemon per project, before anything is touched: a second one must not
    // rotate the token, resume the first one's runs or take its address file.
    let mut daemon_lock = DaemonLock::acquire(&serve_dir)?;
    let token = Token::load_or_create(&serve_dir, arguments.rotate_token)?;
    let listener = tokio::net::TcpListener::bind(arguments.bind)
        .await
        .map_err(|source| ServeError::Bind { addr: arguments.bind, source })?;
    let bound = listener.local_addr().map_err(|source| ServeError::Bind { addr: arguments.bind, source })?;
    let registry = tokio::task::block_in_place(|| Registry::scan(roots.clone()));
    let supervisor = Arc::new(Supervisor::new(store.clone())?);
    let (shutdown, stopping) = watch::channel(false);
    let workflows = registry.list().len();
    let app = Arc::new(App::new(store, cwd, registry, Arc::clone(&supervisor), shutdown.clone()));
    let guard = Arc::new(Guard { token: token.token.clone(), bound, allow_remote: arguments.allow_remote });
    let router = api::router(Arc::clone(&app))
        .merge(assets::router())
        .fallback(api::no_such_path)
        .layer(middleware::map_response(api::errors_as_json))
        .layer(middleware::map_response(|response| async { assets::secure(response) }))
        .layer(middleware::from_fn_with_state(guard, guard::guard))
        .layer(middleware::from_fn_with_state(Arc::clone(&app.metrics), metrics::count_requests))
        .layer(middleware::from_fn(unread_body::close_if_unread));

    let url = format!("http://{bound}/");
    let where_roots: Vec<String> = roots.iter().map(|root| root.display().to_string()).collect();
    eprintln!(
        "baton serve: {} under {}",
        crate::text::count::count(workflows, "workflow", "workflows"),
        where_roots.join(", ")
    );
    eprintln!("baton serve: token in {} (mode 0600)", token.path.display());
    let recovering = supervisor.recover();
    if recovering > 0 {
        eprintln!(
            "baton serve: resuming {} the last daemon left running",
            crate::text::count::count(recovering, "run", "runs")
        );
    }
    // How `baton answer` finds this daemon; gone again when it stops.
    let address_file = serve_dir.join(handoff::ADDRESS_FILE);
    std::fs::write(&address_file, format!("http://{bound}\n"))
        .map_err(|source| ServeError::Write { path: address_file.clone(), source })?;
    daemon_lock.record(Some(&format!("http://{bound}")))?;
    let shown = if token.fresh || arguments.open { format!("{url}#token={}", token.token.as_str()) } else { url };
    {
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "{shown}");
        let _ = stdout.flush();
    }
    if arguments.open {
        open_in_browser(&shown);
    }

    tokio::spawn(api::watch_runs(Arc::clone(&app), stopping.clone()));
    tokio::spawn(signals.stop(shutdown.clone()));
    connections::serve(listener, router, connections::Limits::from_env(), stopping.clone())
        .await
        .map_err(|source| ServeError::Serve { source })?;
    let _ = std::fs::remove_file(&address_file);
    eprintln!(
        "baton serve: stopping; {} drain and save",
        crate::text::count::count(supervisor.live_count(), "run", "runs")
    );
    supervisor.shutdown().await;
    drop(daemon_lock);
    Ok(exit_code::COMPLETED)
}

/// The roots, absolute; each must be a directory.
fn roots(cwd: &std::path::Path, given: &[PathBuf]) -> Result<Vec<PathBuf>, ServeError> {
    if given.is_empty() {
        return Ok(vec![cwd.to_path_buf()]);
    }
    given
        .iter()
        .map(|root| {
            let path = crate::workflow::target::clean_lexically(&cwd.join(root));
            if path.is_dir() {
                Ok(path)
            } else {
                Err(ServeError::Root { path: root.clone(), reason: "not a directory".to_string() })
            }
        })
        .collect()
}

/// SIGINT and SIGTERM, caught from the daemon's start.
struct Signals {
    interrupt: Option<tokio::signal::unix::Signal>,
    terminate: Option<tokio::signal::unix::Signal>,
}

impl Signals {
    fn install() -> Signals {
        use tokio::signal::unix::{SignalKind, signal};
        Signals { interrupt: signal(SignalKind::interrupt()).ok(), terminate: signal(SignalKind::terminate()).ok() }
    }

    /// Stop the daemon at the first of them.
    async fn stop(mut self, shutdown: watch::Sender<bool>) {
        let interrupt = async {
            match self.interrupt.as_mut() {
                Some(signal) => signal.recv().await,
                None => std::future::pending().await,
            }
        };
        let terminate = async {
            match self.terminate.as_mut() {
                Some(signal) => signal.recv().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = interrupt => {}
            _ = terminate => {}
        }
        let _ = shutdown.send(true);
    }
}

/// Open `url` in the desktop's browser, when there is a desktop.
fn open_in_browser(url: &str) {
    let desktop = std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some();
    if !desktop {
        return;
    }
    let _ = std::process::Command::new("xdg-open")
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
}
