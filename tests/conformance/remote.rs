//! Remote, hash-pinned zip workflows (R13.14) served by a test server on 127.0.0.1.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::common::{RUN, archive, emit, sha256, state, str_of};
use crate::support::Test;

/// Serve `body` (status 200) to every request on 127.0.0.1; returns the base URL and
/// a count of the requests served.
fn serve(body: Vec<u8>) -> (String, Arc<AtomicUsize>) {
    serve_files(vec![(String::new(), body)])
}

/// Serve each body at the paths ending in its name (the first for any other path).
fn serve_files(files: Vec<(String, Vec<u8>)>) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    let url = format!("http://{}", listener.local_addr().expect("address"));
    let served = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&served);
    std::thread::spawn(move || {
        for stream in listener.incoming().take(16) {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().expect("clone"));
            let mut request = String::new();
            let _ = reader.read_line(&mut request);
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|read| read > 2) {
                line.clear();
            }
            count.fetch_add(1, Ordering::SeqCst);
            let path = request.split_whitespace().nth(1).unwrap_or_default().to_string();
            let body = files
                .iter()
                .find(|(name, _)| !name.is_empty() && path.ends_with(name.as_str()))
                .or_else(|| files.first())
                .map(|(_, body)| body.clone())
                .unwrap_or_default();
            let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len());
            let _ = stream.write_all(head.as_bytes()).and_then(|()| stream.write_all(&body));
        }
    });
    (url, served)
}

#[test]
fn r13_14_a_pinned_zip_url_is_fetched_once_checked_and_run() {
    let bytes = archive(&[("wf/START.sh", &emit("<result>remote hello</result>"))]);
    let sha = sha256(&bytes);
    let (base, served) = serve(bytes);
    let url = format!("{base}/flows/hello-{sha}.zip");
    let test = Test::new();
    let outcome = test.args(["run", &url, "--run-id", RUN, "-q"]).run();
    outcome.status(0).stdout("remote hello\n");
    assert_eq!(str_of(&state(&outcome)["scope_url"]), url);
    assert!(outcome.root().join(".baton/registry").join(format!("{sha}.zip")).is_file());
    // The second run uses the copy: the server is not asked again.
    let again = outcome.rerun(["run", &url, "--run-id", "again", "-q"]);
    again.status(0).stdout("remote hello\n");
    assert_eq!(served.load(Ordering::SeqCst), 1);
}

#[test]
fn r13_14_a_download_that_does_not_match_its_pin_is_refused() {
    let bytes = archive(&[("START.sh", &emit("<result>x</result>"))]);
    let wrong = "0".repeat(64);
    let (base, _) = serve(bytes.clone());
    let url = format!("{base}/hello-{wrong}.zip");
    let outcome = Test::new().args(["run", &url, "--run-id", RUN]).run();
    outcome.status(1);
    assert_eq!(
        outcome.error_message(),
        format!("error: {url}: its SHA-256 is {}, not the {wrong} its name pins; it was not used", sha256(&bytes))
    );
    assert!(!outcome.root().join(".baton/registry").join(format!("{wrong}.zip")).exists());
}

#[test]
fn r13_14_an_unpinned_url_is_refused_before_any_fetch() {
    let outcome = Test::new().args(["run", "http://127.0.0.1:9/hello.zip", "--run-id", RUN]).run();
    outcome.status(1);
    assert_eq!(
        outcome.error_message(),
        "error: http://127.0.0.1:9/hello.zip: a remote workflow is a zip whose file name carries its SHA-256, like \
         `review-<64 hex digits>.zip`"
    );
}

#[test]
fn r13_15_a_fetched_workflow_calls_others_relative_to_its_url() {
    let lib = archive(&[
        ("START.sh", "echo \"<result>lib got $BATON_INPUT</result>\"\n"),
        ("HALF.sh", "echo \"<result>half of $BATON_INPUT</result>\"\n"),
    ]);
    let lib_name = format!("lib-{}.zip", sha256(&lib));
    let main = archive(&[
        ("START.sh", &emit(&format!(r#"<call-workflow return="NEXT" input="1">../{lib_name}</call-workflow>"#))),
        (
            "NEXT.sh",
            &format!(
                "echo \"<call-workflow return=\\\"DONE\\\" input=\\\"$BATON_INPUT\\\">../{lib_name}/HALF</call-workflow>\"\n"
            ),
        ),
        ("DONE.sh", "echo \"<result>$BATON_INPUT</result>\"\n"),
    ]);
    let main_name = format!("flows/main-{}.zip", sha256(&main));
    let (base, _) = serve_files(vec![(main_name.clone(), main), (lib_name.clone(), lib)]);
    let outcome = Test::new().args(["run", &format!("{base}/{main_name}"), "--run-id", RUN, "-q"]).run();
    outcome.status(0).stdout("half of lib got 1\n");
}

#[test]
fn r13_15_an_absolute_or_unpinned_specifier_from_a_fetched_workflow_pauses_the_agent() {
    for (tag, expected) in [
        (
            r#"<call-workflow return="DONE">https://example.test/x.zip</call-workflow>"#,
            "`https://example.test/x.zip`: a workflow fetched from a URL names others relative to it, not by absolute \
             URL (R13.15)",
        ),
        (r#"<call-workflow return="DONE">../other/</call-workflow>"#, "a remote workflow is a zip whose file name"),
    ] {
        let bytes = archive(&[("START.sh", &emit(tag)), ("DONE.sh", &emit("<result>x</result>"))]);
        let sha = sha256(&bytes);
        let (base, _) = serve(bytes);
        let outcome = Test::new().args(["run", &format!("{base}/flow-{sha}.zip"), "--run-id", RUN]).run();
        outcome.status(3);
        let error = str_of(&state(&outcome)["agents"][0]["error"]);
        assert!(error.contains(expected), "{error}");
    }
}
