//! An in-process OTLP/gRPC receiver for the export tests (issue 23): the
//! `opentelemetry-proto` trace service served by tonic on loopback, on a tokio
//! runtime of its own, keeping the spans as [`ReceivedSpan`]s; over TLS with
//! [`OtlpGrpcReceiver::start_tls`].

#![allow(dead_code)] // A toolkit: each test uses part of it.

use std::sync::{Arc, Mutex};

use opentelemetry_proto::tonic::collector::trace::v1::trace_service_server::{TraceService, TraceServiceServer};
use opentelemetry_proto::tonic::collector::trace::v1::{ExportTraceServiceRequest, ExportTraceServiceResponse};

use crate::support::otlp_receiver::{ReceivedSpan, TestCertificates, flatten};

#[derive(Clone, Default)]
struct Collector {
    spans: Arc<Mutex<Vec<ReceivedSpan>>>,
}

#[tonic::async_trait]
impl TraceService for Collector {
    async fn export(
        &self,
        request: tonic::Request<ExportTraceServiceRequest>,
    ) -> Result<tonic::Response<ExportTraceServiceResponse>, tonic::Status> {
        self.spans.lock().expect("receiver lock").extend(flatten(request.into_inner()));
        Ok(tonic::Response::new(ExportTraceServiceResponse { partial_success: None }))
    }
}

pub(crate) struct OtlpGrpcReceiver {
    port: u16,
    collector: Collector,
    /// Keeps the server's runtime (and so the server) alive for the test.
    _runtime: tokio::runtime::Runtime,
    tls: Option<TestCertificates>,
}

impl OtlpGrpcReceiver {
    pub(crate) fn start() -> OtlpGrpcReceiver {
        OtlpGrpcReceiver::serve(None)
    }

    /// Over TLS, with a certificate from a CA made now ([`OtlpGrpcReceiver::ca_file`]).
    pub(crate) fn start_tls() -> OtlpGrpcReceiver {
        OtlpGrpcReceiver::serve(Some(TestCertificates::make()))
    }

    fn serve(tls: Option<TestCertificates>) -> OtlpGrpcReceiver {
        let mut server = tonic::transport::Server::builder();
        if let Some(made) = &tls {
            let identity = tonic::transport::Identity::from_pem(made.certificate.pem(), made.key.serialize_pem());
            server = server
                .tls_config(tonic::transport::ServerTlsConfig::new().identity(identity))
                .expect("the server's TLS config");
        }
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("the receiver's runtime");
        let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).expect("bind the gRPC receiver");
        let port = listener.local_addr().expect("its address").port();
        let collector = Collector::default();
        let service = TraceServiceServer::new(collector.clone());
        runtime.spawn(async move {
            let incoming = tokio_stream::wrappers::TcpListenerStream::new(listener);
            let _ = server.add_service(service).serve_with_incoming(incoming).await;
        });
        OtlpGrpcReceiver { port, collector, _runtime: runtime, tls }
    }

    /// The endpoint, as `OTEL_EXPORTER_OTLP_ENDPOINT` takes it with `grpc`.
    pub(crate) fn endpoint(&self) -> String {
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        format!("{scheme}://127.0.0.1:{}", self.port)
    }

    /// TLS: the PEM file of the CA that signed the receiver's certificate.
    pub(crate) fn ca_file(&self) -> std::path::PathBuf {
        self.tls.as_ref().map(TestCertificates::ca_file).expect("a TLS receiver")
    }

    pub(crate) fn spans(&self) -> Vec<ReceivedSpan> {
        self.collector.spans.lock().expect("receiver lock").clone()
    }

    /// The one span named `name`.
    pub(crate) fn span(&self, name: &str) -> ReceivedSpan {
        let spans = self.spans();
        let found: Vec<&ReceivedSpan> = spans.iter().filter(|span| span.name == name).collect();
        assert_eq!(found.len(), 1, "one span named {name}: {spans:#?}");
        found[0].clone()
    }
}
