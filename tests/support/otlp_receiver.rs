//! An in-process OTLP/HTTP receiver for the export tests (issue 23): a loopback
//! HTTP/1.1 server on its own thread that decodes each `POST /v1/traces` body
//! with the `opentelemetry-proto` messages (protobuf or JSON as the request's
//! content type says) and keeps the spans, or answers as a broken collector
//! would ([`Behaviour`]). [`OtlpReceiver::start_tls`] serves the same over
//! HTTPS, with a certificate for 127.0.0.1 from a CA made for the test.

#![allow(dead_code)] // A toolkit: each test uses part of it.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::KeyValue;
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use prost::Message;

/// How the receiver answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Behaviour {
    /// 200 and an empty `ExportTraceServiceResponse`.
    Accept,
    /// This status, every time.
    Refuse(u16),
    /// Reads the request and never answers (until the test ends).
    Hang,
}

/// A CA made for the test (its PEM in `dir/ca.pem`) and a server certificate
/// it signed for 127.0.0.1 and localhost.
pub(crate) struct TestCertificates {
    pub(crate) dir: tempfile::TempDir,
    pub(crate) certificate: rcgen::Certificate,
    pub(crate) key: rcgen::KeyPair,
    ca: rcgen::CertifiedIssuer<'static, rcgen::KeyPair>,
}

impl TestCertificates {
    pub(crate) fn make() -> TestCertificates {
        let ca_params = {
            let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("CA params");
            params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
            params.distinguished_name.push(rcgen::DnType::CommonName, "Baton test CA");
            params
        };
        let ca_key = rcgen::KeyPair::generate().expect("a CA key");
        let ca = rcgen::CertifiedIssuer::self_signed(ca_params, ca_key).expect("the CA");
        let key = rcgen::KeyPair::generate().expect("a server key");
        let params = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()])
            .expect("server params");
        let certificate = params.signed_by(&key, &ca).expect("the server certificate");
        let dir = tempfile::tempdir().expect("a dir for the CA");
        std::fs::write(dir.path().join("ca.pem"), ca.pem()).expect("write the CA");
        TestCertificates { dir, certificate, key, ca }
    }

    /// A client certificate the CA signed, and its key: `(dir/client.pem, dir/client.key)`.
    pub(crate) fn client_files(&self) -> (PathBuf, PathBuf) {
        let key = rcgen::KeyPair::generate().expect("a client key");
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("client params");
        params.distinguished_name.push(rcgen::DnType::CommonName, "baton");
        let certificate = params.signed_by(&key, &self.ca).expect("the client certificate");
        let (chain, secret) = (self.dir.path().join("client.pem"), self.dir.path().join("client.key"));
        std::fs::write(&chain, certificate.pem()).expect("write the client certificate");
        std::fs::write(&secret, key.serialize_pem()).expect("write the client key");
        (chain, secret)
    }

    pub(crate) fn ca_file(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }
}

/// What Go's net/http (the OpenTelemetry Collector's) answers a request it cannot parse.
const GO_BAD_REQUEST: &[u8] =
    b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n400 Bad Request";

/// One received span, flattened.
#[derive(Clone, Debug)]
pub(crate) struct ReceivedSpan {
    pub(crate) trace_id: String,
    pub(crate) span_id: String,
    pub(crate) parent_span_id: String,
    pub(crate) name: String,
    pub(crate) attributes: BTreeMap<String, String>,
    /// Event names, in order.
    pub(crate) events: Vec<String>,
    /// 0 unset, 1 ok, 2 error.
    pub(crate) status: i32,
    pub(crate) status_message: String,
    /// The resource's attributes.
    pub(crate) resource: BTreeMap<String, String>,
}

impl ReceivedSpan {
    pub(crate) fn attribute(&self, key: &str) -> Option<&str> {
        self.attributes.get(key).map(String::as_str)
    }
}

#[derive(Default)]
struct Received {
    spans: Vec<ReceivedSpan>,
    requests: usize,
    content_types: Vec<String>,
}

/// Accept connections on a free loopback port, each handled on a thread of its own
/// by `handle` with what the receiver has received so far.
fn listen(
    handle: impl Fn(std::net::TcpStream, Arc<Mutex<Received>>) + Send + Sync + 'static,
) -> (u16, Arc<Mutex<Received>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind the receiver");
    let port = listener.local_addr().expect("its address").port();
    let received = Arc::new(Mutex::new(Received::default()));
    let shared = Arc::clone(&received);
    let handle = Arc::new(handle);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let (shared, handle) = (Arc::clone(&shared), Arc::clone(&handle));
            std::thread::spawn(move || handle(stream, shared));
        }
    });
    (port, received)
}

pub(crate) struct OtlpReceiver {
    port: u16,
    received: Arc<Mutex<Received>>,
    /// HTTPS: the CA and the receiver's certificate.
    tls: Option<TestCertificates>,
}

impl OtlpReceiver {
    pub(crate) fn start(behaviour: Behaviour) -> OtlpReceiver {
        let (port, received) = listen(move |stream, shared| serve(stream, behaviour, &shared));
        OtlpReceiver { port, received, tls: None }
    }

    /// The same receiver over HTTPS: a CA made now signs a certificate for
    /// 127.0.0.1 and localhost; [`OtlpReceiver::ca_file`] is the CA's PEM.
    pub(crate) fn start_tls(behaviour: Behaviour) -> OtlpReceiver {
        OtlpReceiver::serve_tls(behaviour, false)
    }

    /// Over HTTPS, and asking for a client certificate signed by the same CA
    /// ([`OtlpReceiver::client_files`]).
    pub(crate) fn start_mutual_tls(behaviour: Behaviour) -> OtlpReceiver {
        OtlpReceiver::serve_tls(behaviour, true)
    }

    fn serve_tls(behaviour: Behaviour, mutual: bool) -> OtlpReceiver {
        let made = TestCertificates::make();
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = rustls::ServerConfig::builder_with_provider(Arc::clone(&provider))
            .with_safe_default_protocol_versions()
            .expect("TLS versions");
        let builder = if mutual {
            let mut roots = rustls::RootCertStore::empty();
            roots.add(made.ca.der().clone()).expect("the CA as a root");
            let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                .build()
                .expect("a client verifier");
            builder.with_client_cert_verifier(verifier)
        } else {
            builder.with_no_client_auth()
        };
        let config = builder
            .with_single_cert(
                vec![made.certificate.der().clone()],
                rustls::pki_types::PrivateKeyDer::Pkcs8(made.key.serialize_der().into()),
            )
            .expect("the server's TLS config");
        let config = Arc::new(config);
        let (port, received) = listen(move |stream, shared| {
            // A failed handshake (a client that does not trust the CA) ends the connection.
            if let Ok(connection) = rustls::ServerConnection::new(Arc::clone(&config)) {
                serve(rustls::StreamOwned::new(connection, stream), behaviour, &shared);
            }
        });
        OtlpReceiver { port, received, tls: Some(made) }
    }

    /// The base endpoint, as `OTEL_EXPORTER_OTLP_ENDPOINT` takes it.
    pub(crate) fn endpoint(&self) -> String {
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        format!("{scheme}://127.0.0.1:{}", self.port)
    }

    /// HTTPS: the PEM file of the CA that signed the receiver's certificate.
    pub(crate) fn ca_file(&self) -> PathBuf {
        self.tls.as_ref().map(TestCertificates::ca_file).expect("an HTTPS receiver")
    }

    /// HTTPS: a client certificate and key the receiver's CA signed.
    pub(crate) fn client_files(&self) -> (PathBuf, PathBuf) {
        self.tls.as_ref().map(TestCertificates::client_files).expect("an HTTPS receiver")
    }

    /// A loopback port that takes a connection and closes it unanswered.
    ///
    /// It reads what the client sent before closing, and closes only its
    /// sending half first: a socket closed with unread bytes in it answers
    /// with a reset instead of an end of file, so dropping the connection at
    /// once made the client see either, by timing (CI saw the reset).
    pub(crate) fn closing_port() -> u16 {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the closing port");
        let port = listener.local_addr().expect("its address").port();
        std::thread::spawn(move || {
            for mut stream in listener.incoming().flatten() {
                let mut greeting = [0u8; 64 * 1024];
                let _ = stream.read(&mut greeting);
                let _ = stream.shutdown(std::net::Shutdown::Write);
                let _ = stream.set_read_timeout(Some(std::time::Duration::from_secs(10)));
                while matches!(stream.read(&mut greeting), Ok(read) if read > 0) {}
            }
        });
        port
    }

    /// The same port spoken to with the other scheme.
    pub(crate) fn wrong_scheme_endpoint(&self) -> String {
        let scheme = if self.tls.is_some() { "http" } else { "https" };
        format!("{scheme}://127.0.0.1:{}", self.port)
    }

    pub(crate) fn spans(&self) -> Vec<ReceivedSpan> {
        self.received.lock().expect("receiver lock").spans.clone()
    }

    pub(crate) fn requests(&self) -> usize {
        self.received.lock().expect("receiver lock").requests
    }

    pub(crate) fn content_types(&self) -> Vec<String> {
        self.received.lock().expect("receiver lock").content_types.clone()
    }

    /// The one span named `name`.
    pub(crate) fn span(&self, name: &str) -> ReceivedSpan {
        let spans = self.spans();
        let found: Vec<&ReceivedSpan> = spans.iter().filter(|span| span.name == name).collect();
        assert_eq!(found.len(), 1, "one span named {name}: {:#?}", names(&spans));
        found[0].clone()
    }
}

fn names(spans: &[ReceivedSpan]) -> Vec<String> {
    spans.iter().map(|span| span.name.clone()).collect()
}

fn serve<S: Read + Write>(stream: S, behaviour: Behaviour, received: &Mutex<Received>) {
    let mut reader = BufReader::new(stream);
    loop {
        let mut request_line = Vec::new();
        if reader.read_until(b'\n', &mut request_line).unwrap_or(0) == 0 {
            return;
        }
        if !request_line.ends_with(b"HTTP/1.1\r\n") {
            // Not HTTP (a TLS handshake on the plain port): answered as the
            // collector's Go HTTP server answers it.
            let stream = reader.get_mut();
            let _ = stream.write_all(GO_BAD_REQUEST).and_then(|()| stream.flush());
            return;
        }
        let mut length = 0usize;
        let mut content_type = String::new();
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':') {
                match name.trim().to_ascii_lowercase().as_str() {
                    "content-length" => length = value.trim().parse().unwrap_or(0),
                    "content-type" => content_type = value.trim().to_string(),
                    _ => {}
                }
            }
        }
        let mut body = vec![0u8; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        {
            let mut received = received.lock().expect("receiver lock");
            received.requests += 1;
            received.content_types.push(content_type.clone());
        }
        match behaviour {
            Behaviour::Hang => {
                std::thread::park();
                return;
            }
            Behaviour::Refuse(status) => {
                let answer = format!("HTTP/1.1 {status} Refused\r\ncontent-length: 0\r\n\r\n");
                let stream = reader.get_mut();
                if stream.write_all(answer.as_bytes()).and_then(|()| stream.flush()).is_err() {
                    return;
                }
            }
            Behaviour::Accept => {
                let request = if content_type.contains("json") {
                    serde_json::from_slice::<ExportTraceServiceRequest>(&body).expect("an OTLP/JSON request")
                } else {
                    ExportTraceServiceRequest::decode(body.as_slice()).expect("an OTLP/protobuf request")
                };
                received.lock().expect("receiver lock").spans.extend(flatten(request));
                let (answer_type, answer) = if content_type.contains("json") {
                    ("application/json", b"{}".to_vec())
                } else {
                    ("application/x-protobuf", Vec::new())
                };
                let head = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: {answer_type}\r\ncontent-length: {}\r\n\r\n",
                    answer.len()
                );
                let stream = reader.get_mut();
                let written = stream.write_all(head.as_bytes()).and_then(|()| stream.write_all(&answer));
                if written.and_then(|()| stream.flush()).is_err() {
                    return;
                }
            }
        }
    }
}

pub(crate) fn flatten(request: ExportTraceServiceRequest) -> Vec<ReceivedSpan> {
    let mut spans = Vec::new();
    for resource_spans in request.resource_spans {
        let resource = resource_spans.resource.map(|resource| map(&resource.attributes)).unwrap_or_default();
        for scope in resource_spans.scope_spans {
            for span in scope.spans {
                let status = span.status.clone().unwrap_or_default();
                spans.push(ReceivedSpan {
                    trace_id: hex(&span.trace_id),
                    span_id: hex(&span.span_id),
                    parent_span_id: hex(&span.parent_span_id),
                    name: span.name.clone(),
                    attributes: map(&span.attributes),
                    events: span.events.iter().map(|event| event.name.clone()).collect(),
                    status: status.code,
                    status_message: status.message,
                    resource: resource.clone(),
                });
            }
        }
    }
    spans
}

fn map(attributes: &[KeyValue]) -> BTreeMap<String, String> {
    attributes
        .iter()
        .map(|attribute| {
            let value = match attribute.value.as_ref().and_then(|value| value.value.clone()) {
                Some(AnyValue::StringValue(text)) => text,
                Some(AnyValue::BoolValue(flag)) => flag.to_string(),
                Some(AnyValue::IntValue(number)) => number.to_string(),
                Some(AnyValue::DoubleValue(number)) => number.to_string(),
                other => format!("{other:?}"),
            };
            (attribute.key.clone(), value)
        })
        .collect()
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}
