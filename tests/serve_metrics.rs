//! `GET /metrics` of `baton serve` (issue 23): behind the token, and parsed by
//! the Prometheus project's own Python parser (`prometheus_client`, from the
//! Phoenix venv `tests/run` installs): runs by status, live agents, steps and
//! cost, the step-duration histogram, event-stream clients, requests.

use std::collections::BTreeMap;

use serde_json::json;

use crate::support::Test;
use crate::support::phoenix::phoenix_python;
use crate::support::prometheus::Prometheus;
use crate::support::serve::Daemon;

/// `prometheus_client`'s OpenMetrics parser over `text`: every sample as
/// `name{label="value",…}` → value.
fn parse(text: &str) -> BTreeMap<String, f64> {
    let script = r#"
import json, sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families
samples = {}
for family in text_string_to_metric_families(sys.stdin.read()):
    for sample in family.samples:
        labels = ",".join(f'{k}="{v}"' for k, v in sorted(sample.labels.items()))
        samples[f"{sample.name}{{{labels}}}" if labels else sample.name] = sample.value
print(json.dumps(samples))
"#;
    let mut child = std::process::Command::new(phoenix_python())
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start the parser");
    use std::io::Write;
    child.stdin.take().expect("stdin").write_all(text.as_bytes()).expect("send the metrics");
    let output = child.wait_with_output().expect("the parser ends");
    assert!(output.status.success(), "the parser refused it: {}\n{text}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).expect("the parser's JSON")
}

#[test]
fn metrics_need_the_token_and_parse_as_prometheus_text() {
    let test =
        Test::new().file("START.sh", "echo '<goto>TWO.sh</goto>'\n").file("TWO.sh", "echo '<result>ok</result>'\n");
    let daemon = Daemon::start(&test, &[]);
    let refused = daemon.get_with("/metrics", &[]);
    assert_eq!(refused.status, 401, "{}", refused.body);

    let run_id = daemon.start_run("wf", json!({}));
    daemon.wait_for_status(&run_id, "completed");
    let _stream = daemon.events("/api/v1/events", None);

    let scraped = daemon.get("/metrics");
    assert_eq!(scraped.status, 200, "{}", scraped.body);
    assert!(scraped.header("content-type").unwrap_or_default().starts_with("application/openmetrics-text"));
    let samples = parse(&scraped.body);
    let value = |name: &str| samples.get(name).copied().unwrap_or_else(|| panic!("no {name} in {samples:#?}"));
    assert_eq!(value(r#"baton_runs{status="completed"}"#), 1.0);
    assert_eq!(value("baton_live_agents"), 0.0);
    assert_eq!(value("baton_steps_total"), 2.0);
    assert_eq!(value("baton_cost_usd_total"), 0.0);
    assert_eq!(value("baton_step_duration_seconds_count"), 2.0);
    assert_eq!(value(r#"baton_step_duration_seconds_bucket{le="+Inf"}"#), 2.0);
    assert_eq!(value("baton_sse_clients"), 1.0);
    assert!(value(r#"baton_http_requests_total{code="401",method="GET"}"#) >= 1.0);
    assert!(value(r#"baton_http_requests_total{code="200",method="GET"}"#) >= 1.0);
}

#[test]
fn a_real_prometheus_scrapes_the_daemon_with_its_token() {
    let test =
        Test::new().file("START.sh", "echo '<goto>TWO.sh</goto>'\n").file("TWO.sh", "echo '<result>ok</result>'\n");
    let daemon = Daemon::start(&test, &[]);
    let run_id = daemon.start_run("wf", json!({}));
    daemon.wait_for_status(&run_id, "completed");
    let prometheus =
        Prometheus::scraping(daemon.url.trim_start_matches("http://").trim_end_matches('/'), &daemon.token);
    assert_eq!(prometheus.value("baton_steps_total"), 2.0);
    assert_eq!(prometheus.value("up"), 1.0);
}
