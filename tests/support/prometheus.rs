//! A real Prometheus (issue 23) scraping `baton serve`'s `/metrics`: Debian's
//! `prometheus` package (`tests/run` installs it with apt-get, as it installs
//! haproxy), started on a free loopback port with a one-second scrape of one
//! target and the daemon's token, in a temporary storage directory, killed when
//! dropped. `BATON_TEST_PROMETHEUS_BIN` names another executable.

#![allow(dead_code)] // A toolkit: each test uses part of it.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::loopback::{free_port, http_get, kill_child, log_tail, wait_until};

/// The executable: `BATON_TEST_PROMETHEUS_BIN`, `prometheus` on `PATH`, `/usr/bin/prometheus`.
pub(crate) fn prometheus_binary() -> PathBuf {
    if let Some(path) = std::env::var_os("BATON_TEST_PROMETHEUS_BIN").filter(|value| !value.is_empty()) {
        return PathBuf::from(path);
    }
    let on_path = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|dir| dir.join("prometheus"))
        .find(|path| path.is_file());
    let binary = on_path.unwrap_or_else(|| PathBuf::from("/usr/bin/prometheus"));
    assert!(
        binary.is_file(),
        "the metrics test needs Prometheus: run tests/run (it installs Debian's `prometheus`), or set \
         BATON_TEST_PROMETHEUS_BIN"
    );
    binary
}

pub(crate) struct Prometheus {
    child: Child,
    port: u16,
    dir: tempfile::TempDir,
}

impl Prometheus {
    /// Scrape `target` (`HOST:PORT`) every second with bearer token `token`.
    pub(crate) fn scraping(target: &str, token: &str) -> Prometheus {
        let dir = tempfile::Builder::new().prefix("baton-prometheus-").tempdir().expect("a temp dir");
        let config = dir.path().join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global: {{scrape_interval: 1s}}\nscrape_configs:\n  - job_name: baton\n    \
                 static_configs: [{{targets: [\"{target}\"]}}]\n    authorization: {{credentials: \"{token}\"}}\n"
            ),
        )
        .expect("write the config");
        let port = free_port();
        let log = dir.path().join("prometheus.log");
        let output = std::fs::File::create(&log).expect("the log file");
        let errors = output.try_clone().expect("the log file again");
        let mut child = Command::new(prometheus_binary())
            .arg(format!("--config.file={}", config.display()))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .arg(format!("--storage.tsdb.path={}", dir.path().join("data").display()))
            .stdin(Stdio::null())
            .stdout(output)
            .stderr(errors)
            .spawn()
            .expect("start Prometheus");
        let ready = format!("http://127.0.0.1:{port}/-/ready");
        wait_until("prometheus", &mut child, &log, || http_get(&ready).is_ok_and(|(status, _)| status == 200));
        Prometheus { child, port, dir }
    }

    /// The value of instant query `query` once it has one (the first scrapes take a second or two).
    pub(crate) fn value(&self, query: &str) -> f64 {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let url = format!("http://127.0.0.1:{}/api/v1/query?query={query}", self.port);
            let value = http_get(&url).ok().and_then(|(_, body)| {
                let answer: Value = serde_json::from_str(&body).ok()?;
                answer["data"]["result"][0]["value"][1].as_str()?.parse::<f64>().ok()
            });
            if let Some(value) = value {
                return value;
            }
            assert!(
                Instant::now() < deadline,
                "Prometheus has no value for {query}; its targets: {:?}\n{}",
                http_get(&format!("http://127.0.0.1:{}/api/v1/targets", self.port)),
                log_tail(&self.dir.path().join("prometheus.log"), 20)
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        kill_child(&mut self.child);
    }
}
