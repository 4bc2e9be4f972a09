//! The headless-Chromium driver (`support::browser`) against a tiny page served
//! over real HTTP on 127.0.0.1: loading, evaluating, clicking and waiting,
//! screenshots, and the page's errors. The web UI's tests build on the driver;
//! when one of them fails, these say whether the driver or the UI is at fault.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Duration;

use axum::Router;
use axum::response::Html;
use axum::routing::get;

use crate::support::browser::{Browser, artifact_dir};

/// A page with a button whose effect comes late, so waiting really polls.
const PAGE: &str = r#"<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>driver test</title><link rel="icon" href="data:,"></head>
<body style="background: #fafafa">
<h1>Hello, browser</h1>
<button id="more">More</button>
<p id="count">0</p>
<script>
  document.getElementById('more').addEventListener('click', () => {
    setTimeout(() => {
      const count = document.getElementById('count');
      count.textContent = String(Number(count.textContent) + 1);
    }, 100);
  });
</script>
</body>
</html>
"#;

/// A page that fails in every way the driver reports.
const BROKEN: &str = r#"<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>broken</title><link rel="icon" href="data:,"></head>
<body>
<button id="explode" onclick="throw new TypeError('clicked into a wall')">Explode</button>
<img src="/missing.png" alt="">
<script>
  console.log('fine');
  console.error('something is off', 42);
  Promise.reject(new Error('nobody catches me'));
  throw new Error('boom at load');
</script>
</body>
</html>
"#;

/// The two pages on `http://127.0.0.1:<free port>`, served until dropped.
struct Site {
    url: String,
    _runtime: tokio::runtime::Runtime,
}

impl Site {
    fn start() -> Site {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("browser-driver-site")
            .enable_all()
            .build()
            .expect("site runtime");
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind the site");
        let url = format!("http://{}", listener.local_addr().expect("site address"));
        listener.set_nonblocking(true).expect("non-blocking listener");
        let listener = {
            let _context = runtime.enter();
            tokio::net::TcpListener::from_std(listener).expect("tokio listener")
        };
        let app = Router::new().route("/", get(Html(PAGE))).route("/broken", get(Html(BROKEN)));
        runtime.spawn(async move {
            if let Err(error) = axum::serve(listener, app).await {
                eprintln!("the test site stopped: {error}");
            }
        });
        Site { url, _runtime: runtime }
    }
}

/// The panic message of `run`, which must panic.
fn panic_message(run: impl FnOnce()) -> String {
    let payload = catch_unwind(AssertUnwindSafe(run)).expect_err("this was to panic");
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|text| (*text).to_owned()))
        .unwrap_or_default()
}

#[test]
fn loads_a_page_evaluates_clicks_and_waits() {
    let site = Site::start();
    let mut browser = Browser::launch();
    browser.goto(&format!("{}/", site.url));

    assert_eq!(browser.eval("document.title"), "driver test");
    assert_eq!(browser.eval("document.querySelector('h1').textContent"), "Hello, browser");
    assert_eq!(browser.eval("[innerWidth, innerHeight]"), serde_json::json!([1280, 900]));
    assert_eq!(browser.eval("document.visibilityState"), "visible", "timers and animations run at full speed");
    assert_eq!(browser.eval("new Promise(resolve => setTimeout(() => resolve({ answer: 42 }), 10))")["answer"], 42);
    assert_eq!(browser.eval("undefined"), serde_json::Value::Null);

    browser.eval("document.getElementById('more').click()");
    let count = browser.wait_for(
        "document.getElementById('count').textContent === '1' && document.getElementById('count').textContent",
        Duration::from_secs(5),
    );
    assert_eq!(count, "1");

    // Until its element exists, a predicate that throws is just not true yet.
    browser.eval("setTimeout(() => document.body.insertAdjacentHTML('beforeend', '<p id=late>late</p>'), 100)");
    assert_eq!(browser.wait_for("document.getElementById('late').textContent", Duration::from_secs(5)), "late");

    // The failures say what went wrong.
    let thrown = panic_message(|| {
        browser.eval("null.nothing");
    });
    assert!(thrown.contains("TypeError") && thrown.contains("null.nothing"), "{thrown}");
    let timed_out = panic_message(|| {
        browser.wait_for("document.getElementById('count').textContent === '2'", Duration::from_millis(200));
    });
    assert!(timed_out.contains("textContent === '2'"), "the predicate is named: {timed_out}");
    assert!(timed_out.contains("Hello, browser"), "the page's text is shown: {timed_out}");

    // A dialog would block the page: it is accepted and recorded.
    assert_eq!(browser.eval("confirm('Stop the run?')"), true);
    assert_eq!(browser.dialogs(), ["confirm: Stop the run?"]);

    // A page with a document of its own is loaded again; a fragment is not.
    browser.goto(&format!("{}/?again", site.url));
    assert_eq!(browser.eval("document.getElementById('count').textContent"), "0");
    browser.goto(&format!("{}/?again#part", site.url));
    assert_eq!(browser.eval("location.hash"), "#part");

    assert_eq!(browser.console_errors(), Vec::<String>::new(), "a clean page reports nothing");
}

#[test]
fn screenshots_are_png_files_of_the_viewport() {
    let site = Site::start();
    let mut browser = Browser::launch();
    browser.goto(&format!("{}/", site.url));
    let path = artifact_dir().join("browser_driver").join("page.png");
    let _ = std::fs::remove_file(&path);

    browser.screenshot(&path);

    let png = std::fs::read(&path).expect("the screenshot file");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "a PNG signature");
    // The IHDR chunk comes first: width and height, big-endian, at bytes 16..24.
    let size = |at: usize| u32::from_be_bytes(png[at..at + 4].try_into().expect("four bytes"));
    assert_eq!((size(16), size(20)), (1280, 900), "the whole 1280×900 viewport");
}

#[test]
fn exceptions_console_errors_and_failed_loads_are_collected() {
    let site = Site::start();
    let mut browser = Browser::launch();
    browser.goto(&format!("{}/broken", site.url));
    browser.eval("document.getElementById('explode').click()");
    // Errors arrive as events, read during the next call.
    browser.eval("new Promise(resolve => setTimeout(resolve, 50))");

    let errors = browser.console_errors();
    let has = |needle: &str| errors.iter().any(|error| error.contains(needle));
    assert!(has("Uncaught Error: boom at load"), "{errors:#?}");
    assert!(has("Uncaught (in promise) Error: nobody catches me"), "{errors:#?}");
    assert!(has("console.error: something is off 42"), "{errors:#?}");
    assert!(has("TypeError: clicked into a wall"), "{errors:#?}");
    assert!(has("404") && has("/missing.png"), "the failed image load: {errors:#?}");
    assert!(!has("fine"), "console.log is not an error: {errors:#?}");
}
