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
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind loopback");
    let url = format!("http://{}", listener.local_addr().expect("address"));
    let served = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&served);
    std::thread::spawn(move || {
        for stream in listener.incoming().take(16) {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().expect("clone"));
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|read| read > 2) {
                line.clear();
            }
            count.fetch_add(1, Ordering::SeqCst);
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
fn r13_15_specifiers_relative_to_a_url_say_they_are_not_supported_yet() {
    let bytes = archive(&[
        ("START.sh", &emit(r#"<call-workflow return="DONE">../other/</call-workflow>"#)),
        ("DONE.sh", &emit("<result>x</result>")),
    ]);
    let sha = sha256(&bytes);
    let (base, _) = serve(bytes);
    let outcome = Test::new().args(["run", &format!("{base}/flow-{sha}.zip"), "--run-id", RUN]).run();
    outcome.status(3);
    let main = &state(&outcome)["agents"][0];
    assert_eq!(
        str_of(&main["error"]),
        "script `START.sh`: call-workflow: `../other/`: this workflow was fetched from a URL, and specifiers relative \
         to a URL are not supported by this version of baton yet"
    );
}
