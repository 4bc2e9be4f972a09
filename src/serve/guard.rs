//! Every request passes here first (`docs/serve.md`, "Security"):
//!
//! - the `Host` must name this daemon (a loopback name at its port) unless
//!   `--allow-remote`: a page on another site that rebinds its DNS name to
//!   127.0.0.1 still sends its own name, and is refused;
//! - an API request needs `Authorization: Bearer TOKEN`;
//! - a request that changes something (`POST`, `PUT`, `PATCH`, `DELETE`) from a
//!   browser must come from this daemon's own page: a foreign `Origin` is refused.
//!
//! No CORS header is ever sent, so no other origin can read an answer.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::serve::api::ApiError;
use crate::serve::token::Token;

pub(crate) struct Guard {
    pub(crate) token: Token,
    pub(crate) bound: SocketAddr,
    pub(crate) allow_remote: bool,
}

impl Guard {
    /// The host names (with port) this daemon answers to.
    fn own_hosts(&self) -> Vec<String> {
        let port = self.bound.port();
        let mut hosts = vec![format!("127.0.0.1:{port}"), format!("localhost:{port}"), format!("[::1]:{port}")];
        hosts.push(self.bound.to_string());
        hosts
    }

    fn host_allowed(&self, headers: &HeaderMap) -> bool {
        if self.allow_remote {
            return true;
        }
        let Some(host) = headers.get(header::HOST).and_then(|value| value.to_str().ok()) else {
            return false;
        };
        self.own_hosts().iter().any(|own| own.eq_ignore_ascii_case(host))
    }

    /// A browser's `Origin` must be this daemon's page (`http://` + the host it was
    /// asked by). No `Origin` at all is a client that is no browser (curl), which the
    /// token alone guards.
    fn origin_allowed(&self, headers: &HeaderMap) -> bool {
        let Some(origin) = headers.get(header::ORIGIN) else { return true };
        let Ok(origin) = origin.to_str() else { return false };
        let host = headers.get(header::HOST).and_then(|value| value.to_str().ok()).unwrap_or_default();
        let mut allowed: Vec<String> = self.own_hosts().iter().map(|own| format!("http://{own}")).collect();
        if self.allow_remote && !host.is_empty() {
            allowed.push(format!("http://{host}"));
        }
        allowed.iter().any(|own| own.eq_ignore_ascii_case(origin))
    }

    fn token_given(&self, headers: &HeaderMap) -> Result<(), &'static str> {
        let Some(value) = headers.get(header::AUTHORIZATION) else {
            return Err(
                "this request needs the token: send `Authorization: Bearer TOKEN` (the token is in .baton/serve/token)",
            );
        };
        // The scheme's name is case-insensitive (RFC 9110 §11.1).
        let given = value
            .to_str()
            .ok()
            .and_then(|value| value.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token.trim());
        match given {
            Some(given) if self.token.matches(given) => Ok(()),
            _ => Err("wrong token: use the one in .baton/serve/token (`baton serve --rotate-token` makes a new one)"),
        }
    }
}

fn changes_something(method: &Method) -> bool {
    matches!(*method, Method::POST | Method::PUT | Method::PATCH | Method::DELETE)
}

/// A refusal. Its request's body is never read, so its answer says `Connection:
/// close` (`serve::unread_body`).
fn refused(status: StatusCode, message: &'static str) -> Response {
    ApiError::new(status, message).into_response()
}

pub(crate) async fn guard(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    let headers = request.headers();
    if !guard.host_allowed(headers) {
        return refused(StatusCode::FORBIDDEN, "this daemon answers only to its loopback address (Host refused)");
    }
    // `/metrics` is the API's too: what it says about runs needs the token.
    if request.uri().path().starts_with("/api/") || request.uri().path() == "/metrics" {
        if let Err(message) = guard.token_given(headers) {
            let mut response = refused(StatusCode::UNAUTHORIZED, message);
            response.headers_mut().insert(header::WWW_AUTHENTICATE, header::HeaderValue::from_static("Bearer"));
            return response;
        }
        if changes_something(request.method()) && !guard.origin_allowed(headers) {
            return refused(
                StatusCode::FORBIDDEN,
                "requests that change something must come from this daemon's own page (Origin refused)",
            );
        }
    }
    next.run(request).await
}
