//! The HTTP client that carries the OTLP exports (issue 23): ureq, on the batch
//! processor's own thread, over TLS for an `https://` collector (`tls`).
//!
//! Baton brings its own client rather than the exporter's reqwest so that
//! `https://` works with the rustls and ring already in Baton (ureq's), and so
//! that the end-of-run warning can say what went wrong on the wire: the
//! exporter reports every transport failure as `network error`, which does not
//! tell an untrusted certificate from a collector that is down. Each failure's
//! wording is kept in [`Failures`] for [`super::CountingExporter`].

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};
use ureq::tls::TlsConfig;

/// The most of a collector's answer that is read (the exporter's own clients' limit).
const MAX_ANSWER_BYTES: u64 = 4 * 1024 * 1024;

/// The wording of the last transport failure, taken by the exporter's counter.
#[derive(Debug, Default)]
pub(crate) struct Failures(Mutex<Option<String>>);

impl Failures {
    fn record(&self, text: String) {
        *self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(text);
    }

    /// The last failure, forgotten once taken.
    pub(crate) fn take(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).take()
    }
}

#[derive(Debug)]
pub(crate) struct UreqClient {
    agent: ureq::Agent,
    /// `https://`: a TLS failure's wording says which side spoke what.
    tls: bool,
    failures: Arc<Failures>,
}

impl UreqClient {
    pub(crate) fn new(timeout: Duration, tls: Option<TlsConfig>, failures: Arc<Failures>) -> UreqClient {
        let mut config = ureq::Agent::config_builder().http_status_as_error(false).timeout_global(Some(timeout));
        let secure = tls.is_some();
        if let Some(tls) = tls {
            config = config.tls_config(tls);
        }
        UreqClient { agent: config.build().into(), tls: secure, failures }
    }

    fn send(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let answer = self.agent.run(request.map(|body| body.to_vec())).and_then(|response| {
            let (parts, body) = response.into_parts();
            let bytes = body.into_with_config().limit(MAX_ANSWER_BYTES).read_to_vec()?;
            Ok(Response::from_parts(parts, Bytes::from(bytes)))
        });
        answer.map_err(|error| {
            self.failures.record(describe(&error, self.tls));
            Box::new(error) as HttpError
        })
    }
}

impl HttpClient for UreqClient {
    fn send_bytes<'client, 'future>(
        &'client self,
        request: Request<Bytes>,
    ) -> Pin<Box<dyn Future<Output = Result<Response<Bytes>, HttpError>> + Send + 'future>>
    where
        'client: 'future,
        Self: 'future,
    {
        // Blocking is right here: the batch processor's thread waits on this future alone.
        Box::pin(async move { self.send(request) })
    }
}

/// A transport failure as the warning says it, with what to check when the
/// certificate was not trusted or the two sides did not speak the same protocol.
fn describe(error: &ureq::Error, tls: bool) -> String {
    let tls_error = match error {
        ureq::Error::Rustls(inner) => Some(inner),
        ureq::Error::Io(io) => io.get_ref().and_then(|inner| inner.downcast_ref::<rustls::Error>()),
        _ => None,
    };
    match (tls_error, error) {
        (Some(inner @ rustls::Error::InvalidCertificate(_)), _) => {
            format!("TLS: {inner}; OTEL_EXPORTER_OTLP_CERTIFICATE names the CA certificates to trust")
        }
        (Some(inner @ rustls::Error::AlertReceived(rustls::AlertDescription::CertificateRequired)), _) => {
            format!(
                "TLS: {inner}; OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and OTEL_EXPORTER_OTLP_CLIENT_KEY name the \
                 client certificate"
            )
        }
        (Some(inner @ rustls::Error::InvalidMessage(_)), _) => {
            format!("TLS: {inner}; is the collector's port plain http://?")
        }
        (Some(inner), _) => format!("TLS: {inner}"),
        (None, ureq::Error::Protocol(_)) if !tls => format!("{error}; is the collector's port https://?"),
        (None, ureq::Error::Io(io)) if tls && io.kind() == std::io::ErrorKind::UnexpectedEof => {
            format!("{io} during the TLS handshake; is the collector's port plain http://?")
        }
        (None, ureq::Error::Io(io)) => io.to_string(),
        (None, other) => other.to_string(),
    }
}
