//! An answer to a request whose body was not read to its end says `Connection: close`.
//!
//! hyper keeps a connection for the next request only if it can drain what is left
//! of this one's body at once; when the body's bytes come in a packet after the
//! headers, it closes the connection after the answer, without saying so. A client
//! that was not told reuses the connection for its next request and reads an end of
//! file instead of an answer. Handlers that need no body (`POST
//! /api/v1/workflows/rescan`, `POST /api/v1/shutdown`, a `DELETE`, a refusal in the
//! guard) never read one, so
//! every answer is checked here, outermost: a body not seen to its end closes the
//! connection and the client knows to open another
//! (`serve_api::a_foreign_origin_cannot_change_anything_and_a_foreign_host_is_refused`
//! failed so in CI twice: once at a refused POST, once at the `GET` after a rescan).
//! A request without a body (every `GET` here) is ended from the start.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::Request;
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::Response;
use http_body::{Frame, SizeHint};

pub(crate) async fn close_if_unread(request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let ended = Arc::new(AtomicBool::new(body.is_end_stream()));
    let watched = Body::new(Watched { inner: body, ended: Arc::clone(&ended) });
    let mut response = next.run(Request::from_parts(parts, watched)).await;
    if !ended.load(Ordering::Acquire) {
        response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// A request body that notes when it was read to its end.
struct Watched {
    inner: Body,
    ended: Arc<AtomicBool>,
}

impl HttpBody for Watched {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if matches!(polled, Poll::Ready(None)) || self.inner.is_end_stream() {
            self.ended.store(true, Ordering::Release);
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::Router;
    use axum::routing::post;
    use http_body_util::BodyExt;
    use tower::ServiceExt;

    fn app() -> Router {
        Router::new()
            .route("/ignores", post(|| async { "ignored" }))
            .route("/reads", post(|body: Bytes| async move { format!("{} bytes", body.len()) }))
            .layer(axum::middleware::from_fn(close_if_unread))
    }

    async fn connection_header(path: &str, body: Body) -> Option<String> {
        let request = Request::post(path).body(body).expect("request");
        let response = app().oneshot(request).await.expect("response");
        let connection =
            response.headers().get(header::CONNECTION).map(|value| value.to_str().unwrap_or_default().to_string());
        let _ = response.into_body().collect().await;
        connection
    }

    /// A body still arriving when the handler answers, as a packet after the headers.
    fn streamed(text: &'static str) -> Body {
        Body::from_stream(tokio_stream::iter([Ok::<_, std::io::Error>(Bytes::from_static(text.as_bytes()))]))
    }

    #[tokio::test]
    async fn a_body_the_handler_never_read_closes_the_connection() {
        assert_eq!(connection_header("/ignores", streamed("{}")).await.as_deref(), Some("close"));
    }

    #[tokio::test]
    async fn a_body_read_to_its_end_or_no_body_keeps_the_connection() {
        assert_eq!(connection_header("/reads", streamed("{}")).await, None);
        assert_eq!(connection_header("/ignores", Body::empty()).await, None);
    }
}
