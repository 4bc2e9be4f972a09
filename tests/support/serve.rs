//! A real `baton serve` for tests: started on 127.0.0.1 with port 0 in a test
//! project, its URL read from its first stdout line and its token from
//! `.baton/serve/token`; plain HTTP calls with or without the token; and a
//! server-sent-events reader over a raw socket (chunked encoding decoded by hand,
//! so a test sees exactly what a browser would).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::Test;

/// A project whose workflow `wf` makes a run of 10,002 steps: four workers of 2,500
/// script steps, forked by START and joined by DONE (the long run page's test and
/// bench, `cargo bench --bench serve_render`).
pub(crate) fn ten_thousand_steps() -> Test {
    Test::new()
        .file("START.sh", &format!("{}echo '<join>DONE</join>'\n", "echo '<fork input=\"2500\">TICK</fork>'\n".repeat(4)))
        .file(
            "TICK.sh",
            "n=$BATON_INPUT\nif [ \"$n\" -le 1 ]; then echo '<result>done</result>'; else echo \"<goto input=\\\"$((n - 1))\\\">TICK</goto>\"; fi\n",
        )
        .file("DONE.sh", "echo '<result>all done</result>'\n")
}

pub(crate) struct Daemon {
    child: Option<Child>,
    /// `http://127.0.0.1:PORT` (no trailing slash).
    pub(crate) url: String,
    pub(crate) token: String,
    /// The first line the daemon printed (the URL, with the token when it showed it).
    pub(crate) printed: String,
    agent: ureq::Agent,
}

/// An answer: status, headers (lower-case names) and body.
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: String,
}

impl Reply {
    pub(crate) fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|error| panic!("not JSON ({error}): {}", self.body))
    }

    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str())
    }
}

impl Daemon {
    /// `baton serve --bind 127.0.0.1:0 --root <project root>` plus `extra`.
    pub(crate) fn start(test: &Test, extra: &[&str]) -> Daemon {
        Daemon::start_at(test, "127.0.0.1:0", extra)
    }

    /// `baton serve --bind ADDRESS --root <project root>` plus `extra`.
    pub(crate) fn start_at(test: &Test, address: &str, extra: &[&str]) -> Daemon {
        let mut args: Vec<String> = vec!["serve".into(), "--bind".into(), address.into()];
        args.push("--root".into());
        args.push(test.root().display().to_string());
        args.extend(extra.iter().map(|arg| arg.to_string()));
        let mut child = test
            .command(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::from(std::fs::File::create(test.root().join("serve.stderr")).expect("daemon stderr file")))
            .spawn()
            .expect("start baton serve");
        let stdout = child.stdout.take().expect("stdout piped");
        let mut first = String::new();
        BufReader::new(stdout).read_line(&mut first).expect("read the daemon's URL");
        let url = first.trim().split('#').next().unwrap_or_default().trim_end_matches('/').to_string();
        // A daemon bound to every interface is reached on loopback all the same.
        let url = url.replace("http://0.0.0.0:", "http://127.0.0.1:");
        assert!(
            url.starts_with("http://127.0.0.1:"),
            "baton serve printed `{first}`; stderr: {}",
            std::fs::read_to_string(test.root().join("serve.stderr")).unwrap_or_default()
        );
        let token =
            std::fs::read_to_string(test.root().join(".baton/serve/token")).expect("token file").trim().to_string();
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(60)))
            .build()
            .into();
        Daemon { child: Some(child), url, token, printed: first.trim().to_string(), agent }
    }

    fn reply(response: Result<ureq::http::Response<ureq::Body>, ureq::Error>) -> Reply {
        let mut response = response.expect("HTTP request");
        let status = response.status().as_u16();
        let headers = response
            .headers()
            .iter()
            .map(|(name, value)| (name.as_str().to_string(), value.to_str().unwrap_or_default().to_string()))
            .collect();
        let body = response.body_mut().read_to_string().unwrap_or_default();
        Reply { status, headers, body }
    }

    /// `GET path` with the token.
    pub(crate) fn get(&self, path: &str) -> Reply {
        self.get_with(path, &[("Authorization", &format!("Bearer {}", self.token))])
    }

    /// `GET path` with exactly these headers.
    pub(crate) fn get_with(&self, path: &str, headers: &[(&str, &str)]) -> Reply {
        let mut request = self.agent.get(format!("{}{path}", self.url));
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        Daemon::reply(request.call())
    }

    /// `POST path` with a JSON body and the token.
    pub(crate) fn post(&self, path: &str, body: &Value) -> Reply {
        self.post_with(path, body, &[("Authorization", &format!("Bearer {}", self.token))])
    }

    pub(crate) fn post_with(&self, path: &str, body: &Value, headers: &[(&str, &str)]) -> Reply {
        let mut request = self.agent.post(format!("{}{path}", self.url)).content_type("application/json");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        Daemon::reply(request.send(body.to_string()))
    }

    /// `POST path` with a `multipart/form-data` body: text fields, then files
    /// (field name, file name, contents), each `application/octet-stream`.
    pub(crate) fn post_form(&self, path: &str, fields: &[(&str, &str)], files: &[(&str, &str, &[u8])]) -> Reply {
        let typed: Vec<(&str, &str, &str, &[u8])> = files
            .iter()
            .map(|(name, file_name, contents)| (*name, *file_name, "application/octet-stream", *contents))
            .collect();
        self.post_form_typed(path, fields, &typed)
    }

    /// [`post_form`] with each file's media type given.
    pub(crate) fn post_form_typed(
        &self,
        path: &str,
        fields: &[(&str, &str)],
        files: &[(&str, &str, &str, &[u8])],
    ) -> Reply {
        let boundary = "----baton-test-boundary-7MA4YWxkTrZu0gW";
        let mut body: Vec<u8> = Vec::new();
        for (name, value) in fields {
            body.extend(
                format!("--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n").bytes(),
            );
        }
        for (name, file_name, content_type, contents) in files {
            body.extend(
                format!(
                    "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"; filename=\"{file_name}\"\r\n\
                     Content-Type: {content_type}\r\n\r\n"
                )
                .bytes(),
            );
            body.extend_from_slice(contents);
            body.extend(b"\r\n");
        }
        body.extend(format!("--{boundary}--\r\n").bytes());
        let request = self
            .agent
            .post(format!("{}{path}", self.url))
            .content_type(format!("multipart/form-data; boundary={boundary}"))
            .header("Authorization", format!("Bearer {}", self.token));
        Daemon::reply(request.send(&body[..]))
    }

    pub(crate) fn delete(&self, path: &str) -> Reply {
        let request =
            self.agent.delete(format!("{}{path}", self.url)).header("Authorization", format!("Bearer {}", self.token));
        Daemon::reply(request.call())
    }

    /// Start run of workflow `workflow` with `body`'s other fields; its run id.
    pub(crate) fn start_run(&self, workflow: &str, mut body: Value) -> String {
        body["workflow"] = Value::from(workflow);
        let reply = self.post("/api/v1/runs", &body);
        assert_eq!(reply.status, 201, "start {workflow}: {}", reply.body);
        reply.json()["run_id"].as_str().expect("run_id").to_string()
    }

    /// Wait until `GET /api/v1/runs/{run_id}` satisfies `done`; its last answer.
    pub(crate) fn wait_for_run(&self, run_id: &str, what: &str, done: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let reply = self.get(&format!("/api/v1/runs/{run_id}"));
            if reply.status == 200 {
                let value = reply.json();
                if done(&value) {
                    return value;
                }
                assert!(Instant::now() < deadline, "run {run_id} never got {what}: {}", reply.body);
            } else {
                assert!(Instant::now() < deadline, "run {run_id}: {} {}", reply.status, reply.body);
            }
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// Wait until an agent of run `run_id` asks; the first waiting ask
    /// (`GET …/asks`).
    pub(crate) fn first_ask(&self, run_id: &str) -> Value {
        self.wait_for_run(run_id, "an ask", |run| {
            run["run"]["agents"].as_array().into_iter().flatten().any(|agent| agent["status"] == "asking")
        });
        self.get(&format!("/api/v1/runs/{run_id}/asks")).json()["asks"][0].clone()
    }

    /// Wait until run `run_id` has completed and no process drives it, however long
    /// it takes up to `limit` (a long run; `wait_for_run` gives a minute); how long it took.
    pub(crate) fn wait_for_long_run(&self, run_id: &str, limit: Duration) -> Duration {
        let started = Instant::now();
        loop {
            let run = self.get(&format!("/api/v1/runs/{run_id}")).json();
            if run["run"]["status"] == "completed" && run["live"] == false {
                return started.elapsed();
            }
            // Completed but still live: its baton has written the end and not exited yet.
            assert!(run["run"]["status"] == "running" || run["run"]["status"] == "completed", "the run stopped: {run}");
            assert!(started.elapsed() < limit, "run {run_id} did not complete in {limit:?}");
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Wait until run `run_id` has `status` and no process drives it.
    pub(crate) fn wait_for_status(&self, run_id: &str, status: &str) -> Value {
        self.wait_for_run(run_id, &format!("status {status}"), |value| {
            value["run"]["status"] == status && value["live"] == false
        })
    }

    /// Open an event stream at `path` (with the token, and `Last-Event-ID` when given).
    pub(crate) fn events(&self, path: &str, last_event_id: Option<u64>) -> EventStream {
        let address = self.url.trim_start_matches("http://").to_string();
        let mut stream = TcpStream::connect(&address).expect("connect for events");
        stream.set_read_timeout(Some(Duration::from_secs(30))).expect("read timeout");
        let mut request = format!(
            "GET {path} HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {}\r\nAccept: text/event-stream\r\n",
            self.token
        );
        if let Some(id) = last_event_id {
            request.push_str(&format!("Last-Event-ID: {id}\r\n"));
        }
        request.push_str("\r\n");
        stream.write_all(request.as_bytes()).expect("send events request");
        let mut reader = BufReader::new(stream);
        let mut status_line = String::new();
        reader.read_line(&mut status_line).expect("status line");
        let mut chunked = false;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).expect("header line");
            if line.trim().is_empty() {
                break;
            }
            if line.to_ascii_lowercase().starts_with("transfer-encoding:") && line.contains("chunked") {
                chunked = true;
            }
        }
        EventStream { reader, chunked, status_line, pending: String::new() }
    }

    /// Stop the daemon as a person would (SIGTERM) and wait for it; its exit code.
    pub(crate) fn stop(mut self) -> i32 {
        self.terminate()
    }

    fn terminate(&mut self) -> i32 {
        let Some(mut child) = self.child.take() else { return -1 };
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(status) = child.try_wait().expect("wait for the daemon") {
                return status.code().unwrap_or(-1);
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("baton serve did not stop within 60 s of SIGTERM");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGKILL the daemon (its children live on, as after a crash).
    pub(crate) fn kill(mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if self.child.is_some() && !std::thread::panicking() {
            self.terminate();
        } else if let Some(mut child) = self.child.take() {
            // SAFETY: kill(2) on our own child's pid.
            unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
            let _ = child.wait();
        }
    }
}

/// One server-sent event.
#[derive(Debug, Default, Clone)]
pub(crate) struct SseEvent {
    pub(crate) id: Option<String>,
    pub(crate) event: String,
    pub(crate) data: String,
}

pub(crate) struct EventStream {
    reader: BufReader<TcpStream>,
    chunked: bool,
    pub(crate) status_line: String,
    pending: String,
}

impl EventStream {
    /// More of the body (one chunk); empty at its end.
    fn more(&mut self) -> String {
        if !self.chunked {
            let mut buffer = [0u8; 4096];
            let read = self.reader.read(&mut buffer).unwrap_or(0);
            return String::from_utf8_lossy(&buffer[..read]).into_owned();
        }
        let mut size_line = String::new();
        if self.reader.read_line(&mut size_line).unwrap_or(0) == 0 {
            return String::new();
        }
        let size = usize::from_str_radix(size_line.trim(), 16).unwrap_or(0);
        if size == 0 {
            return String::new();
        }
        let mut chunk = vec![0u8; size + 2];
        self.reader.read_exact(&mut chunk).expect("chunk");
        chunk.truncate(size);
        String::from_utf8_lossy(&chunk).into_owned()
    }

    /// The next event (comments skipped); `None` when the stream ended.
    pub(crate) fn next_event(&mut self) -> Option<SseEvent> {
        loop {
            if let Some(end) = self.pending.find("\n\n") {
                let block: String = self.pending.drain(..end + 2).collect();
                let mut event = SseEvent::default();
                let mut data = Vec::new();
                for line in block.lines() {
                    if let Some(value) = line.strip_prefix("id:") {
                        event.id = Some(value.trim().to_string());
                    } else if let Some(value) = line.strip_prefix("event:") {
                        event.event = value.trim().to_string();
                    } else if let Some(value) = line.strip_prefix("data:") {
                        data.push(value.strip_prefix(' ').unwrap_or(value).to_string());
                    }
                }
                if data.is_empty() && event.id.is_none() && event.event.is_empty() {
                    continue;
                }
                event.data = data.join("\n");
                return Some(event);
            }
            let more = self.more();
            if more.is_empty() {
                return None;
            }
            self.pending.push_str(&more);
        }
    }

    /// Events until one satisfies `last` (that one included).
    pub(crate) fn until(&mut self, last: impl Fn(&SseEvent) -> bool) -> Vec<SseEvent> {
        let mut seen = Vec::new();
        while let Some(event) = self.next_event() {
            let done = last(&event);
            seen.push(event);
            if done {
                return seen;
            }
        }
        panic!("the stream ended first; saw {seen:?}");
    }
}
