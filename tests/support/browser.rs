//! A headless Chromium driven over the DevTools protocol, for tests of pages that
//! only a real browser can judge (`baton serve`'s web UI: its scripts, layout and
//! errors).
//!
//! Each [`Browser`] is its own Chromium with its own temporary profile, so tests
//! run in parallel without sharing state. Chromium picks a free DevTools port
//! (`--remote-debugging-port=0`) and writes it to `<profile>/DevToolsActivePort`;
//! the driver opens a fresh tab there (`PUT /json/new`) and talks to it over that
//! tab's own websocket. Every call is synchronous: send `{id, method, params}`,
//! then read messages until the reply with that `id`, handling the events read on
//! the way (console errors are collected, dialogs are accepted, page lifecycle
//! events are kept for [`Browser::goto`]). Every wait has a deadline and panics
//! with what it saw, so a broken page fails a test instead of hanging it.
//!
//! The page reaches loopback only: there is no proxy, and every host but
//! `localhost`, `127.0.0.1` and `[::1]` resolves to nothing (Chromium's resolver
//! rules cover IP addresses too), so a test serves its pages on `127.0.0.1`.
//! Chromium's own log (stderr) goes to `<profile>/chromium.log`; its tail is in
//! the panic messages when the browser fails.
//!
//! ```ignore
//! use support::browser::{Browser, artifact_dir};
//!
//! let mut browser = Browser::launch();
//! browser.goto(&format!("{url}/runs"));
//! browser.eval("document.querySelector('#refresh').click()");
//! browser.wait_for("document.querySelectorAll('.run').length === 2", Duration::from_secs(5));
//! browser.screenshot(&artifact_dir().join("serve/runs.png"));
//! assert_eq!(browser.console_errors(), Vec::<String>::new());
//! ```

#![allow(dead_code)] // A toolkit: each test uses part of it.

use std::collections::VecDeque;
use std::fs;
use std::io::ErrorKind;
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::{Value, json};
use tungstenite::protocol::WebSocketConfig;
use tungstenite::{Message, WebSocket};

/// How long Chromium may take to open its DevTools port and first tab.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// How long one DevTools call may take to be answered.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);
/// How long [`Browser::goto`] waits for the page's load event.
const LOAD_TIMEOUT: Duration = Duration::from_secs(30);
/// The pause between two evaluations of a [`Browser::wait_for`] predicate.
const POLL_INTERVAL: Duration = Duration::from_millis(50);
/// How long one socket read blocks before the caller's deadline is checked again.
const READ_SLICE: Duration = Duration::from_millis(200);
/// How much of the page's text a [`Browser::wait_for`] timeout shows.
const BODY_TEXT_LIMIT: usize = 2000;
/// Page events kept for [`Browser::goto`] at most; older ones are dropped.
const EVENT_BUFFER_LIMIT: usize = 1000;

/// The Chromium to run: `$BATON_CHROMIUM`, else `chromium` on `PATH`, else
/// `/usr/bin/chromium` (Debian's, which `tests/run` installs). A test that needs
/// it fails without it rather than pass without checking anything.
pub(crate) fn chromium_path() -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let candidates = std::env::var_os("BATON_CHROMIUM")
        .map(PathBuf::from)
        .into_iter()
        .chain(std::env::split_paths(&path).map(|dir| dir.join("chromium")))
        .chain([PathBuf::from("/usr/bin/chromium")]);
    for candidate in candidates {
        if candidate.is_file() {
            return candidate;
        }
    }
    panic!(
        "browser tests need a headless Chromium: install it (`tests/run` does: `apt-get install chromium`) \
         or set BATON_CHROMIUM to its path"
    );
}

/// `target/test-artifacts/` in the crate, created on demand: where tests put what
/// a person may want to look at after a run (screenshots).
pub(crate) fn artifact_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target").join("test-artifacts");
    fs::create_dir_all(&dir).unwrap_or_else(|error| panic!("create {}: {error}", dir.display()));
    dir
}

/// One headless Chromium with one tab under the test's control; the browser is
/// killed and its profile removed when this is dropped.
pub(crate) struct Browser {
    process: Process,
    socket: WebSocket<TcpStream>,
    next_id: u64,
    /// `Page.*` events read while waiting for something else, oldest first.
    page_events: VecDeque<Value>,
    console_errors: Vec<String>,
    dialogs: Vec<String>,
    profile: tempfile::TempDir,
}

impl Browser {
    /// Start Chromium with an empty tab whose viewport is 1280×900.
    pub(crate) fn launch() -> Browser {
        Browser::launch_with_viewport(1280, 900)
    }

    /// Start Chromium with an empty tab whose viewport (`innerWidth`,
    /// `innerHeight`, screenshots) is `width`×`height` CSS pixels at scale 1.
    pub(crate) fn launch_with_viewport(width: u32, height: u32) -> Browser {
        let profile =
            tempfile::Builder::new().prefix("baton-chromium-").tempdir().expect("a temporary Chromium profile");
        let log = fs::File::create(profile.path().join("chromium.log")).expect("create chromium.log");
        let chromium = chromium_path();
        let child = Command::new(&chromium)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--disable-component-update",
                "--disable-background-networking",
                "--disable-sync",
                "--disable-default-apps",
                "--disable-breakpad",
                "--metrics-recording-only",
                "--password-store=basic",
                "--use-mock-keychain",
                "--mute-audio",
                "--hide-scrollbars",
                "--force-color-profile=srgb",
                "--no-proxy-server",
                "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1, EXCLUDE [::1]",
                "--remote-debugging-port=0",
            ])
            .arg(format!("--window-size={width},{height}"))
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg("about:blank")
            // With --disable-dev-shm-usage Chromium keeps its shared memory in
            // TMPDIR, and leaves an `org.chromium.Chromium.*` directory there when it is
            // killed: in the profile, it goes with the test.
            .env("TMPDIR", profile.path())
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("share chromium.log"))
            .stderr(log)
            .spawn()
            .unwrap_or_else(|error| panic!("start {}: {error}", chromium.display()));
        let mut process = Process { child, stopped: false };

        let port = devtools_port(&mut process, profile.path());
        let page_socket = new_tab(port).unwrap_or_else(|error| panic!("{error}{}", log_tail(profile.path())));
        let socket = connect(port, &page_socket).unwrap_or_else(|error| panic!("{error}{}", log_tail(profile.path())));
        let mut browser = Browser {
            process,
            socket,
            next_id: 0,
            page_events: VecDeque::new(),
            console_errors: Vec::new(),
            dialogs: Vec::new(),
            profile,
        };
        browser.call("Page.enable", json!({}));
        browser.call("Page.setLifecycleEventsEnabled", json!({ "enabled": true }));
        browser.call("Runtime.enable", json!({}));
        browser.call("Log.enable", json!({}));
        // The window alone does not fix the viewport: headless Chromium keeps
        // room for the browser's own toolbars out of it.
        browser.call(
            "Emulation.setDeviceMetricsOverride",
            json!({ "width": width, "height": height, "deviceScaleFactor": 1, "mobile": false }),
        );
        browser
    }

    /// Open `url` in the tab and wait (30 s at most) for its load event; panics
    /// if the navigation fails (refused connection, unknown host, …). A change of
    /// only the fragment does not load a document and returns at once.
    pub(crate) fn goto(&mut self, url: &str) {
        self.page_events.clear();
        let navigated = self.call("Page.navigate", json!({ "url": url }));
        if let Some(error) = navigated.get("errorText").and_then(Value::as_str).filter(|error| !error.is_empty()) {
            panic!("could not open {url}: {error}");
        }
        // A new document has a loader; its load event is the one waited for,
        // not a late one from the page being left.
        let Some(loader) = navigated.get("loaderId").and_then(Value::as_str).map(str::to_owned) else {
            return;
        };
        let deadline = Instant::now() + LOAD_TIMEOUT;
        let what = format!("waiting for the load event of {url}");
        loop {
            let loaded = self.page_events.iter().any(|event| {
                event["method"] == "Page.lifecycleEvent"
                    && event["params"]["name"] == "load"
                    && event["params"]["loaderId"] == loader.as_str()
            });
            if loaded {
                self.page_events.clear();
                return;
            }
            let message = self.next_message(deadline, &what);
            self.on_event(message);
        }
    }

    /// The value of the JavaScript expression `js` in the page, as JSON; a
    /// promise is awaited. `undefined` (and `NaN`, `Infinity`, which JSON cannot
    /// hold) come back as `null`, DOM nodes as `{}`. Panics with the exception's
    /// text if `js` throws or its promise rejects.
    pub(crate) fn eval(&mut self, js: &str) -> Value {
        self.try_eval(js).unwrap_or_else(|error| panic!("evaluating in the page failed: {error}\n  script: {js}"))
    }

    /// Evaluate `js_predicate` every 50 ms until its value is truthy (as
    /// JavaScript sees it), and return that value. An evaluation that throws
    /// counts as not yet (`document.querySelector('#x').textContent` before `#x`
    /// exists); the last error is in the timeout's message, with the page's URL,
    /// its console errors and the start of its text.
    pub(crate) fn wait_for(&mut self, js_predicate: &str, timeout: Duration) -> Value {
        let deadline = Instant::now() + timeout;
        let last = loop {
            let last = match self.try_eval(js_predicate) {
                Ok(value) if truthy(&value) => return value,
                Ok(value) => format!("its last value: {value}"),
                Err(error) => format!("its last evaluation failed: {error}"),
            };
            if Instant::now() >= deadline {
                break last;
            }
            std::thread::sleep(POLL_INTERVAL);
        };
        let url = match self.try_eval("location.href") {
            Ok(Value::String(url)) => url,
            Ok(other) => other.to_string(),
            Err(error) => format!("(unknown: {error})"),
        };
        let text = match self.try_eval("document.body ? document.body.innerText : '(the page has no body)'") {
            Ok(Value::String(text)) => truncate(&text, BODY_TEXT_LIMIT),
            Ok(other) => other.to_string(),
            Err(error) => format!("(unreadable: {error})"),
        };
        panic!(
            "timed out after {timeout:?} waiting for `{js_predicate}`; {last}\n  page: {url}\n  console errors: \
             {:#?}\n  body text:\n{text}",
            self.console_errors
        );
    }

    /// A PNG of the viewport, written to `path` (its parent directories are
    /// created); put screenshots under [`artifact_dir`].
    pub(crate) fn screenshot(&mut self, path: &Path) {
        let shot = self.call("Page.captureScreenshot", json!({ "format": "png" }));
        let data = shot.get("data").and_then(Value::as_str).expect("Page.captureScreenshot answers base64 `data`");
        let png = base64::engine::general_purpose::STANDARD.decode(data).expect("the screenshot is valid base64");
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).unwrap_or_else(|error| panic!("create {}: {error}", parent.display()));
        }
        fs::write(path, png).unwrap_or_else(|error| panic!("write {}: {error}", path.display()));
    }

    /// The page's errors so far, oldest first: uncaught exceptions and rejected
    /// promises (`Uncaught Error: …` with the stack), `console.error` calls
    /// (`console.error: …`) and the browser's own error entries, such as failed
    /// resource loads (`network: Failed to load resource: … (URL)`). Events are
    /// read during calls, so an error thrown after the last call shows up after
    /// the next one (a [`Browser::wait_for`] or [`Browser::eval`]).
    pub(crate) fn console_errors(&self) -> Vec<String> {
        self.console_errors.clone()
    }

    /// The dialogs the page opened so far, as `alert: …`, `confirm: …`,
    /// `prompt: …` or `beforeunload: …`. Each was accepted at once (a confirm
    /// answers true, a prompt its default text), so none blocks the page.
    pub(crate) fn dialogs(&self) -> Vec<String> {
        self.dialogs.clone()
    }

    fn try_eval(&mut self, js: &str) -> Result<Value, String> {
        let evaluated = self.try_call(
            "Runtime.evaluate",
            json!({ "expression": js, "returnByValue": true, "awaitPromise": true, "userGesture": true }),
        )?;
        if let Some(details) = evaluated.get("exceptionDetails") {
            return Err(exception_text(details));
        }
        Ok(evaluated.get("result").and_then(|result| result.get("value")).cloned().unwrap_or(Value::Null))
    }

    /// Call `method`; panics if Chromium answers with an error.
    fn call(&mut self, method: &str, params: Value) -> Value {
        self.try_call(method, params).unwrap_or_else(|error| panic!("{error}"))
    }

    /// Call `method` and read until its reply, handling the events before it:
    /// the reply's `result`, or its `error` as text. Panics if the connection
    /// fails or no reply comes within [`CALL_TIMEOUT`].
    fn try_call(&mut self, method: &str, params: Value) -> Result<Value, String> {
        self.next_id += 1;
        let id = self.next_id;
        let request = json!({ "id": id, "method": method, "params": params });
        if let Err(error) = self.socket.send(Message::text(request.to_string())) {
            panic!("sending {method} to Chromium failed: {error}{}", self.log_tail());
        }
        let deadline = Instant::now() + CALL_TIMEOUT;
        let what = format!("waiting for the answer to {method}");
        loop {
            let message = self.next_message(deadline, &what);
            if message.get("id").and_then(Value::as_u64) == Some(id) {
                return match message.get("error") {
                    Some(error) => Err(format!("{method} failed: {error}")),
                    None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
                };
            }
            self.on_event(message);
        }
    }

    /// The next DevTools message; panics when `deadline` passes (`what` says what
    /// was awaited) or the connection fails.
    fn next_message(&mut self, deadline: Instant, what: &str) -> Value {
        loop {
            if Instant::now() >= deadline {
                panic!("Chromium did not answer in time, {what}{}", self.log_tail());
            }
            match self.socket.read() {
                Ok(Message::Text(text)) => {
                    return serde_json::from_str(text.as_str()).unwrap_or_else(|error| {
                        panic!("Chromium sent a message that is not JSON ({error}): {}", truncate(text.as_str(), 500))
                    });
                }
                Ok(Message::Close(frame)) => {
                    panic!("Chromium closed the DevTools connection ({frame:?}), {what}{}", self.log_tail())
                }
                Ok(_) => {}
                Err(tungstenite::Error::Io(error))
                    if matches!(error.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                Err(error) => panic!("the DevTools connection failed ({error}), {what}{}", self.log_tail()),
            }
        }
    }

    /// Record an error the page reports, accept a dialog it opens, keep a page
    /// event for [`Browser::goto`], drop the rest.
    fn on_event(&mut self, message: Value) {
        let method = message.get("method").and_then(Value::as_str).unwrap_or_default();
        let params = &message["params"];
        match method {
            "Runtime.exceptionThrown" => self.console_errors.push(exception_text(&params["exceptionDetails"])),
            "Runtime.consoleAPICalled" if matches!(params["type"].as_str(), Some("error" | "assert")) => {
                let args = params["args"].as_array().map(Vec::as_slice).unwrap_or_default();
                let text: Vec<String> = args.iter().map(remote_object_text).collect();
                self.console_errors.push(format!(
                    "console.{}: {}",
                    params["type"].as_str().unwrap_or("error"),
                    text.join(" ")
                ));
            }
            "Log.entryAdded" if params["entry"]["level"] == "error" => {
                let entry = &params["entry"];
                let mut text = format!(
                    "{}: {}",
                    entry["source"].as_str().unwrap_or("browser"),
                    entry["text"].as_str().unwrap_or_default()
                );
                if let Some(url) = entry["url"].as_str().filter(|url| !url.is_empty()) {
                    text.push_str(&format!(" ({url})"));
                }
                self.console_errors.push(text);
            }
            "Page.javascriptDialogOpening" => {
                let kind = params["type"].as_str().unwrap_or("dialog");
                self.dialogs.push(format!("{kind}: {}", params["message"].as_str().unwrap_or_default()));
                // An open dialog blocks the page, and with it every evaluation;
                // the answer's reply is read and dropped like any unknown id.
                self.next_id += 1;
                let accept = json!({
                    "id": self.next_id,
                    "method": "Page.handleJavaScriptDialog",
                    "params": { "accept": true },
                });
                if let Err(error) = self.socket.send(Message::text(accept.to_string())) {
                    panic!("answering a {kind} dialog failed: {error}{}", self.log_tail());
                }
            }
            _ if method.starts_with("Page.") => {
                if self.page_events.len() == EVENT_BUFFER_LIMIT {
                    self.page_events.pop_front();
                }
                self.page_events.push_back(message);
            }
            _ => {}
        }
    }

    fn log_tail(&self) -> String {
        log_tail(self.profile.path())
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        self.process.stop();
        // Chromium's helper processes outlive it by some milliseconds and may
        // still write into the profile while it is being removed.
        for _ in 0..40 {
            match fs::remove_dir_all(self.profile.path()) {
                Err(error) if error.kind() != ErrorKind::NotFound => std::thread::sleep(Duration::from_millis(25)),
                _ => break,
            }
        }
    }
}

/// The Chromium process; killed when dropped, so a launch that fails halfway
/// leaves nothing running. It stays in the test's process group, so an
/// interrupted `cargo test` (Ctrl-C) stops it too.
struct Process {
    child: Child,
    stopped: bool,
}

impl Process {
    /// Kill Chromium and reap it. Its helper processes (zygotes, renderers)
    /// exit on their own once the browser process is gone.
    fn stop(&mut self) {
        if std::mem::replace(&mut self.stopped, true) {
            return;
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Wait for Chromium to write its DevTools port into the profile.
fn devtools_port(process: &mut Process, profile: &Path) -> u16 {
    let port_file = profile.join("DevToolsActivePort");
    let deadline = Instant::now() + STARTUP_TIMEOUT;
    loop {
        // The first line is the port; the file is complete once the second is there.
        if let Ok(text) = fs::read_to_string(&port_file)
            && let Some((port, _)) = text.split_once('\n')
            && let Ok(port) = port.trim().parse::<u16>()
        {
            return port;
        }
        if let Some(status) = process.child.try_wait().expect("check on chromium") {
            panic!("Chromium exited ({status}) before opening its DevTools port{}", log_tail(profile));
        }
        if Instant::now() >= deadline {
            panic!("Chromium did not open its DevTools port within {STARTUP_TIMEOUT:?}{}", log_tail(profile));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Open a new empty tab and return its websocket URL.
fn new_tab(port: u16) -> Result<String, String> {
    let agent = ureq::Agent::config_builder()
        .proxy(None)
        .timeout_global(Some(STARTUP_TIMEOUT))
        .http_status_as_error(false)
        .build()
        .new_agent();
    let url = format!("http://127.0.0.1:{port}/json/new?about:blank");
    let mut response = agent.put(&url).send_empty().map_err(|error| format!("PUT {url} failed: {error}"))?;
    let status = response.status();
    let body = response.body_mut().read_to_string().map_err(|error| format!("PUT {url}: reading the body: {error}"))?;
    if !status.is_success() {
        return Err(format!("PUT {url} answered {status}: {body}"));
    }
    let target: Value = serde_json::from_str(&body)
        .map_err(|error| format!("PUT {url} answered something other than JSON ({error}): {body}"))?;
    target
        .get("webSocketDebuggerUrl")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| format!("PUT {url} answered no webSocketDebuggerUrl: {body}"))
}

/// Connect to the tab's websocket; reads then time out every [`READ_SLICE`] so
/// the callers' deadlines are checked.
fn connect(port: u16, url: &str) -> Result<WebSocket<TcpStream>, String> {
    let address = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let stream = TcpStream::connect_timeout(&address, STARTUP_TIMEOUT)
        .map_err(|error| format!("connect to Chromium's DevTools at {address}: {error}"))?;
    stream.set_nodelay(true).map_err(|error| format!("TCP_NODELAY: {error}"))?;
    stream.set_read_timeout(Some(STARTUP_TIMEOUT)).map_err(|error| format!("read timeout: {error}"))?;
    stream.set_write_timeout(Some(CALL_TIMEOUT)).map_err(|error| format!("write timeout: {error}"))?;
    // Full-page screenshots are large, single messages.
    let config = WebSocketConfig::default().max_message_size(Some(512 << 20)).max_frame_size(Some(512 << 20));
    let (socket, _) = tungstenite::client::client_with_config(url, stream, Some(config))
        .map_err(|error| format!("websocket handshake with {url} failed: {error}"))?;
    socket.get_ref().set_read_timeout(Some(READ_SLICE)).map_err(|error| format!("read timeout: {error}"))?;
    Ok(socket)
}

/// The last lines of Chromium's log, for panic messages.
fn log_tail(profile: &Path) -> String {
    let log = fs::read_to_string(profile.join("chromium.log")).unwrap_or_default();
    let lines: Vec<&str> = log.lines().collect();
    let tail = lines[lines.len().saturating_sub(30)..].join("\n");
    format!("\n--- the end of chromium.log ---\n{tail}")
}

/// An exception as DevTools describes it: `Uncaught Error: boom` and the stack.
fn exception_text(details: &Value) -> String {
    let text = details["text"].as_str().unwrap_or("exception");
    match details["exception"].get("description").and_then(Value::as_str) {
        Some(description) => format!("{text} {description}"),
        None => match details["exception"].get("value") {
            Some(value) => format!("{text} {value}"),
            None => text.to_owned(),
        },
    }
}

/// A `console.*` argument as the console shows it.
fn remote_object_text(object: &Value) -> String {
    match object.get("value") {
        Some(Value::String(text)) => text.clone(),
        Some(value) => value.to_string(),
        None => object
            .get("description")
            .or_else(|| object.get("unserializableValue"))
            .and_then(Value::as_str)
            .unwrap_or_else(|| object["type"].as_str().unwrap_or("?"))
            .to_owned(),
    }
}

/// Whether JavaScript would take `value` as true.
fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(value) => *value,
        Value::Number(number) => number.as_f64().is_some_and(|number| number != 0.0),
        Value::String(text) => !text.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

/// `text` cut to `limit` characters, saying how much was left out.
fn truncate(text: &str, limit: usize) -> String {
    match text.char_indices().nth(limit) {
        Some((at, _)) => format!("{}… ({} more characters)", &text[..at], text[at..].chars().count()),
        None => text.to_owned(),
    }
}
