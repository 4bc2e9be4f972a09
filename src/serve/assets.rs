//! The web run inspector's files, built into the binary (no CDN, no build step),
//! served with headers that keep a page showing untrusted text safe: a content
//! security policy that runs only these files' own scripts, no sniffing, no
//! referrer, no framing.

use axum::Router;
use axum::extract::Path;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

const INDEX: &str = include_str!("assets/index.html");
const STYLE: &str = include_str!("assets/style.css");

/// The page's ES modules, one per view, loaded by the browser as they are (no
/// bundler): `main.js` mounts the views and imports the rest. A name not listed
/// here is not served.
const MODULES: &[(&str, &str)] = &[
    ("main.js", include_str!("assets/main.js")),
    ("dom.js", include_str!("assets/dom.js")),
    ("api.js", include_str!("assets/api.js")),
    ("live.js", include_str!("assets/live.js")),
    ("router.js", include_str!("assets/router.js")),
    ("home.js", include_str!("assets/home.js")),
    ("run.js", include_str!("assets/run.js")),
    ("timeline-model.js", include_str!("assets/timeline-model.js")),
    ("timeline.js", include_str!("assets/timeline.js")),
    ("graph.js", include_str!("assets/graph.js")),
    ("step.js", include_str!("assets/step.js")),
    ("asks.js", include_str!("assets/asks.js")),
    ("stepping.js", include_str!("assets/stepping.js")),
];

pub(crate) const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; \
     frame-ancestors 'none'";

fn asset(content_type: &'static str, body: &'static str) -> Response {
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// Headers every answer gets, pages and API alike.
pub(crate) fn secure(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CONTENT_SECURITY_POLICY));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    response
}

pub(crate) fn router<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route("/", get(|| async { asset("text/html; charset=utf-8", INDEX) }))
        .route("/assets/style.css", get(|| async { asset("text/css; charset=utf-8", STYLE) }))
        .route("/assets/{module}", get(module))
}

async fn module(Path(name): Path<String>) -> Response {
    match MODULES.iter().find(|(module, _)| *module == name) {
        Some((_, body)) => asset("text/javascript; charset=utf-8", body),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}
