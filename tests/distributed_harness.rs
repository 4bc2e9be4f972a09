//! The distributed tests' harness itself (issue 21), with no worker: the pinned
//! restate-server starts healthy on loopback and comes back on the same ports
//! with its registered deployments after a SIGKILL; haproxy starts from the
//! template `docs/distributed.md` shows and answers 503 while no worker is up.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;

use crate::support::haproxy::{Haproxy, h2_get_status, haproxy_config};
use crate::support::loopback::{http_get, is_alive};
use crate::support::restate::{RestateOptions, RestateServer, exclusive, is_node_launcher, restate_server_binary};

/// A minimal service deployment speaking HTTP/1.1: enough for Restate's
/// discovery (`GET /discover`), so a deployment can be registered without a
/// worker. Serves until the test process ends.
fn fake_deployment() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind fake deployment");
    let address = listener.local_addr().expect("address");
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().expect("clone stream"));
            let mut request_line = String::new();
            if reader.read_line(&mut request_line).is_err() {
                continue;
            }
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|read| read > 0) && line != "\r\n" {
                line.clear();
            }
            let path = request_line.split_whitespace().nth(1).unwrap_or_default();
            let (status, content_type, body) = if path.ends_with("/discover") {
                (
                    "200 OK",
                    "application/vnd.restate.endpointmanifest.v2+json",
                    r#"{"protocolMode":"REQUEST_RESPONSE","minProtocolVersion":5,"maxProtocolVersion":5,"services":[{"name":"HarnessProbe","ty":"SERVICE","handlers":[{"name":"ping"}]}]}"#,
                )
            } else {
                ("404 Not Found", "text/plain", "not found")
            };
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    format!("http://{address}")
}

fn registered_services(server: &RestateServer) -> Vec<String> {
    let (status, body) = http_get(&format!("{}/services", server.admin_url())).expect("GET /services");
    assert_eq!(status, 200, "{body}");
    let services: serde_json::Value = serde_json::from_str(&body).expect("services JSON");
    services["services"]
        .as_array()
        .expect("services")
        .iter()
        .filter_map(|service| service["name"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn the_harness_runs_the_native_restate_server_not_the_node_launcher() {
    let binary = restate_server_binary();
    assert!(!is_node_launcher(&binary), "{} is a script: a SIGKILL would not reach the server", binary.display());
}

#[test]
fn restate_server_starts_healthy_and_restarts_on_the_same_ports_keeping_a_registered_deployment() {
    let _one_at_a_time = exclusive();
    let mut server = RestateServer::start(RestateOptions::default());
    let (ingress, admin) = (server.ingress_url(), server.admin_url());
    assert_eq!(server.query("SELECT count(*) AS n FROM sys_invocation"), [serde_json::json!({"n": 0})]);

    let deployment = fake_deployment();
    let body = serde_json::json!({ "uri": deployment, "use_http_11": true }).to_string();
    let (status, answer) =
        crate::support::loopback::http_post_json(&format!("{admin}/deployments"), &body).expect("register");
    assert_eq!(status, 201, "{answer}");
    assert_eq!(registered_services(&server), ["HarnessProbe"]);

    let old_pid = server.pid().expect("running");
    server.kill();
    assert!(!is_alive(old_pid), "restate-server {old_pid} survived SIGKILL");
    assert!(http_get(&format!("{admin}/health")).is_err(), "the admin port still answers after the kill");

    server.restart();
    assert_eq!((server.ingress_url(), server.admin_url()), (ingress, admin));
    assert_eq!(registered_services(&server), ["HarnessProbe"], "the restarted server lost the deployment");
    let deployments = server.query("SELECT endpoint FROM sys_deployment");
    assert_eq!(deployments, [serde_json::json!({ "endpoint": format!("{deployment}/") })]);
}

#[test]
fn haproxy_starts_and_answers_503_while_no_worker_is_up() {
    // One backend on a port nothing listens on, and none at all.
    let nobody = TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("address");
    for backends in [vec![nobody], vec![]] {
        let haproxy = Haproxy::start(&backends);
        assert_eq!(h2_get_status(haproxy.address(), "/discover"), Ok(503), "haproxy log:\n{}", haproxy.log());
    }
}

/// The example in `docs/distributed.md` is the template the tests run, rendered
/// for the doc's three workers: a change to one must be made to the other.
#[test]
fn the_haproxy_example_in_the_docs_is_the_template_the_tests_use() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/distributed.md")).expect("doc");
    let example: String = doc
        .split("```haproxy\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("a ```haproxy block in docs/distributed.md")
        .to_string();
    let servers: Vec<(String, String)> = (1..=3).map(|n| (format!("w{n}"), format!("10.0.0.1{n}:9080"))).collect();
    assert_eq!(example, haproxy_config("*:9080", &servers));
}
