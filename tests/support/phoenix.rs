//! A real Arize Phoenix (issue 23): the OTLP receiver the export tests send a
//! run's spans to and read them back from, pinned to one version, installed
//! from PyPI into `<target dir>/phoenix` (a venv; `tests/run` installs it there
//! before `cargo test`, reading [`PHOENIX_VERSION`]), started offline on free
//! loopback ports in a temporary working directory, killed when dropped.
//!
//! Phoenix binds its gRPC port on every interface whatever `PHOENIX_HOST` says;
//! it is started through a few lines of Python that make that bind loopback
//! too, so nothing a test starts listens beyond this machine.
//! `BATON_TEST_PHOENIX_PYTHON` names another venv's Python with Phoenix installed.

#![allow(dead_code)] // A toolkit: each test uses part of it.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::loopback::{free_ports, http_get, kill_child, log_tail};

/// The Phoenix version the export tests run (also read by `tests/run`).
pub(crate) const PHOENIX_VERSION: &str = "20.26.1";

/// Overrides the installed venv's Python.
pub(crate) const PHOENIX_PYTHON_VAR: &str = "BATON_TEST_PHOENIX_PYTHON";

/// Phoenix starts in 10–25 s on a busy two-core machine.
const START_DEADLINE: Duration = Duration::from_secs(120);

/// `phoenix serve`, with the gRPC receiver's bind moved to loopback.
const LAUNCHER: &str = r#"
import sys
import grpc.aio._server as server
bind = server.Server.add_insecure_port
server.Server.add_insecure_port = lambda self, address: bind(self, address.replace("[::]:", "127.0.0.1:"))
from phoenix.server.main import main
sys.argv = ["phoenix", "serve"]
sys.exit(main())
"#;

/// The venv's Python: `BATON_TEST_PHOENIX_PYTHON`, else `<target dir>/phoenix/bin/python3`.
pub(crate) fn phoenix_python() -> PathBuf {
    if let Some(python) = std::env::var_os(PHOENIX_PYTHON_VAR).filter(|value| !value.is_empty()) {
        return PathBuf::from(python);
    }
    let target = match std::env::var_os("CARGO_TARGET_DIR").filter(|value| !value.is_empty()) {
        Some(target) => PathBuf::from(target),
        None => Path::new(env!("CARGO_TARGET_TMPDIR")).parent().expect("target dir").to_path_buf(),
    };
    let python = target.join("phoenix/bin/python3");
    assert!(
        python.is_file(),
        "no Phoenix at {}: run tests/run (it installs arize-phoenix {PHOENIX_VERSION} there), or set \
         {PHOENIX_PYTHON_VAR} to a Python with it",
        python.display()
    );
    python
}

pub(crate) struct Phoenix {
    child: Child,
    port: u16,
    dir: tempfile::TempDir,
}

impl Phoenix {
    pub(crate) fn start() -> Phoenix {
        let dir = tempfile::Builder::new().prefix("baton-phoenix-").tempdir().expect("a temp dir");
        let log = dir.path().join("phoenix.log");
        let ports = free_ports(2);
        let output = std::fs::File::create(&log).expect("the log file");
        let errors = output.try_clone().expect("the log file again");
        let child = Command::new(phoenix_python())
            .args(["-c", LAUNCHER])
            .env("PHOENIX_HOST", "127.0.0.1")
            .env("PHOENIX_PORT", ports[0].to_string())
            .env("PHOENIX_GRPC_PORT", ports[1].to_string())
            .env("PHOENIX_WORKING_DIR", dir.path())
            .env("PHOENIX_TELEMETRY_ENABLED", "false")
            .env("PHOENIX_ALLOW_EXTERNAL_RESOURCES", "false")
            .stdin(Stdio::null())
            .stdout(output)
            .stderr(errors)
            .spawn()
            .expect("start Phoenix");
        let mut phoenix = Phoenix { child, port: ports[0], dir };
        let deadline = Instant::now() + START_DEADLINE;
        loop {
            if http_get(&format!("{}/healthz", phoenix.url())).is_ok_and(|(status, _)| status == 200) {
                return phoenix;
            }
            if let Ok(Some(status)) = phoenix.child.try_wait() {
                panic!("Phoenix exited ({status}) before it was ready; its log ends:\n{}", log_tail(&log, 40));
            }
            assert!(
                Instant::now() < deadline,
                "Phoenix was not ready after {START_DEADLINE:?}; its log ends:\n{}",
                log_tail(&log, 40)
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Its HTTP address: the UI, the REST API, and OTLP/HTTP at `/v1/traces`.
    pub(crate) fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub(crate) fn log(&self) -> String {
        log_tail(&self.dir.path().join("phoenix.log"), 40)
    }

    /// The spans of project `project` as its REST API lists them, once at
    /// least `at_least` have been ingested (Phoenix stores them in the background).
    pub(crate) fn spans(&self, project: &str, at_least: usize) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(90);
        loop {
            let url = format!("{}/v1/projects/{project}/spans?limit=1000", self.url());
            let spans = match http_get(&url) {
                Ok((200, body)) => serde_json::from_str::<Value>(&body)
                    .ok()
                    .and_then(|page| page["data"].as_array().cloned())
                    .unwrap_or_default(),
                _ => Vec::new(),
            };
            if spans.len() >= at_least {
                return spans;
            }
            assert!(
                Instant::now() < deadline,
                "Phoenix holds {} spans of {project}, not {at_least}: {spans:#?}\n{}",
                spans.len(),
                self.log()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for Phoenix {
    fn drop(&mut self) {
        kill_child(&mut self.child);
    }
}
