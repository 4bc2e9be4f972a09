//! The OTLP observer (issue 23): the run's trace sent to an OpenTelemetry
//! collector (Phoenix, Jaeger, Tempo, Langfuse, Honeycomb's collector, …) while
//! it runs, as the trace and console observers write theirs.
//!
//! Never in the way: nothing here is built unless an endpoint is configured
//! (`settings`); spans go through the SDK's batch processor, whose bounded queue
//! and own thread keep the export off the run's path; a collector that is down,
//! slow or refusing costs the run one warning at its end, which counts the spans
//! that did not arrive ([`ExportReport`]); the last export is waited for at most
//! the export timeout.
//!
//! OTLP/HTTP (protobuf or JSON) goes through Baton's own client (`client`),
//! OTLP/gRPC through the exporter's tonic on a runtime of its own
//! ([`GrpcRuntime`]); `https://` endpoints of either through rustls with ring
//! (`tls`).

pub(crate) mod client;
pub(crate) mod settings;
pub(crate) mod spans;
pub(crate) mod tls;

use std::fmt;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use opentelemetry::KeyValue;
use opentelemetry::trace::{SpanKind, TraceId};
use opentelemetry_otlp::{WithExportConfig, WithHttpConfig, WithTonicConfig};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::trace::{
    BatchConfigBuilder, BatchSpanProcessor, Config, SamplingDecision, SpanData, SpanExporter, SpanProcessor,
};

use crate::events::Event;
use crate::events::bus::EventBus;
use crate::events::trace_context::RunTrace;
use crate::ids::RunId;
use client::{Failures, UreqClient};
use settings::{OtelSettings, Protocol};
use spans::SpanTree;

/// The exporter could not be built (nothing was sent, the run goes on).
#[derive(Debug, thiserror::Error)]
#[error("cannot export the run's spans to {url}: {reason}; the run's spans are not exported")]
pub(crate) struct OtelError {
    url: String,
    reason: String,
}

/// What reached the collector, said at the end of the run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ExportReport {
    pub(crate) url: String,
    /// Spans handed to the exporter.
    pub(crate) ended: u64,
    /// Spans the collector took.
    pub(crate) delivered: u64,
    /// The first failed export, as the exporter worded it.
    pub(crate) first_error: Option<String>,
}

impl ExportReport {
    /// Spans that never arrived: refused, timed out, dropped from a full queue,
    /// or still waiting when the run ended.
    pub(crate) fn lost(&self) -> u64 {
        self.ended.saturating_sub(self.delivered)
    }
}

impl fmt::Display for ExportReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let why = self.first_error.as_deref().unwrap_or("the collector did not answer in time");
        write!(
            f,
            "{} of {} OpenTelemetry spans were not delivered to {} ({why}); the run itself is unaffected",
            self.lost(),
            self.ended,
            self.url
        )
    }
}

/// Counts kept by the exporter's thread.
#[derive(Debug, Default)]
struct ExportCounts {
    delivered: AtomicU64,
    first_error: Mutex<Option<String>>,
    /// What the HTTP client saw go wrong on the wire.
    transport: Arc<Failures>,
}

/// The OTLP exporter, counting what it delivered and keeping its first error.
#[derive(Debug)]
struct CountingExporter {
    inner: opentelemetry_otlp::SpanExporter,
    counts: Arc<ExportCounts>,
}

impl SpanExporter for CountingExporter {
    fn export(&self, batch: Vec<SpanData>) -> impl Future<Output = OTelSdkResult> + Send {
        let size = batch.len() as u64;
        let exported = self.inner.export(batch);
        let counts = Arc::clone(&self.counts);
        async move {
            let result = exported.await;
            match &result {
                Ok(()) => {
                    counts.delivered.fetch_add(size, Ordering::Relaxed);
                }
                Err(error) => {
                    let text = match counts.transport.take() {
                        Some(detail) => format!("{}: {detail}", error_text(error)),
                        None => error_text(error),
                    };
                    let mut first = counts.first_error.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                    first.get_or_insert(text);
                }
            }
            result
        }
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

/// The exporter's error without the SDK's `Operation failed:` lead.
fn error_text(error: &OTelSdkError) -> String {
    match error {
        OTelSdkError::InternalFailure(message) => message.clone(),
        OTelSdkError::Timeout(after) => format!("no answer within {} ms", after.as_millis()),
        other => other.to_string(),
    }
}

pub(crate) struct OtelObserver {
    tree: Mutex<SpanTree>,
    processor: BatchSpanProcessor,
    counts: Arc<ExportCounts>,
    /// Spans handed to the processor.
    ended: AtomicU64,
    /// Unsampled runs build their tree (their children need its ids) but send nothing.
    sampled: bool,
    url: String,
    timeout: Duration,
    /// gRPC: the runtime the channel's connection lives on; last, so that it
    /// outlives the processor when the observer is dropped without `close`.
    _grpc_runtime: Option<GrpcRuntime>,
}

impl OtelObserver {
    /// Build the exporter for `settings` and decide whether run `run_id` is
    /// sampled (`OTEL_TRACES_SAMPLER`); the returned trace hands the same ids to
    /// the steps' processes.
    pub(crate) fn start(settings: &OtelSettings, run_id: &RunId) -> Result<(OtelObserver, RunTrace), OtelError> {
        let failed = |reason: String| OtelError { url: settings.traces_url.clone(), reason };
        let https = settings.traces_url.starts_with("https://");
        let transport = Arc::new(Failures::default());
        let mut grpc_runtime = None;
        let exporter = match settings.protocol {
            Protocol::HttpProtobuf | Protocol::HttpJson => {
                let tls = match https {
                    true => Some(tls::config(&settings.tls).map_err(|error| failed(error.to_string()))?),
                    false => None,
                };
                let client = UreqClient::new(settings.timeout, tls, Arc::clone(&transport));
                opentelemetry_otlp::SpanExporter::builder()
                    .with_http()
                    .with_http_client(client)
                    .with_endpoint(settings.traces_url.clone())
                    .with_timeout(settings.timeout)
                    .with_protocol(match settings.protocol {
                        Protocol::HttpJson => opentelemetry_otlp::Protocol::HttpJson,
                        _ => opentelemetry_otlp::Protocol::HttpBinary,
                    })
                    .build()
            }
            Protocol::Grpc => {
                let tls = match https {
                    true => Some(tls::grpc_config(&settings.tls).map_err(|error| failed(error.to_string()))?),
                    false => None,
                };
                let runtime = GrpcRuntime::start().map_err(|error| failed(error.to_string()))?;
                // tonic's channel spawns its connection's task where it is built.
                let _inside = runtime.enter();
                let mut builder = opentelemetry_otlp::SpanExporter::builder()
                    .with_tonic()
                    .with_endpoint(settings.traces_url.clone())
                    .with_timeout(settings.timeout)
                    .with_protocol(opentelemetry_otlp::Protocol::Grpc);
                if let Some(tls) = tls {
                    builder = builder.with_tls_config(tls);
                }
                let built = builder.build();
                grpc_runtime = Some(runtime);
                built
            }
        }
        .map_err(|error| failed(error.to_string()))?;
        let counts = Arc::new(ExportCounts { transport, ..ExportCounts::default() });
        let exporter = CountingExporter { inner: exporter, counts: Arc::clone(&counts) };
        let mut processor =
            BatchSpanProcessor::builder(exporter).with_batch_config(BatchConfigBuilder::default().build()).build();
        processor.set_resource(&resource());
        let trace_id = crate::events::trace_context::trace_id_of(run_id);
        // The SDK's sampler as `OTEL_TRACES_SAMPLER` chooses it, asked once for the
        // run's root span: the whole trace follows its decision.
        let decision = Config::default()
            .sampler
            .should_sample(None, TraceId::from_bytes(trace_id), "workflow", &SpanKind::Internal, &[], &[])
            .decision;
        let sampled = decision == SamplingDecision::RecordAndSample;
        let trace = RunTrace::new(run_id, sampled);
        let observer = OtelObserver {
            tree: Mutex::new(SpanTree::new(trace.clone(), run_id)),
            processor,
            counts,
            ended: AtomicU64::new(0),
            sampled,
            url: settings.traces_url.clone(),
            timeout: settings.timeout,
            _grpc_runtime: grpc_runtime,
        };
        Ok((observer, trace))
    }

    pub(crate) fn attach(self: Arc<Self>, bus: &EventBus) {
        bus.on_all(Arc::new(move |event: &Event| {
            self.on_event(event);
            Ok(())
        }));
    }

    fn on_event(&self, event: &Event) {
        let finished =
            self.tree.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).on_event(event, SystemTime::now());
        self.send(finished);
    }

    fn send(&self, spans: Vec<SpanData>) {
        if !self.sampled {
            return;
        }
        for span in spans {
            self.ended.fetch_add(1, Ordering::Relaxed);
            self.processor.on_end(span);
        }
    }

    /// End what is still open, wait for the last export (at most the export
    /// timeout), and say what arrived.
    pub(crate) fn close(&self) -> ExportReport {
        let rest = self.tree.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).close(SystemTime::now());
        self.send(rest);
        // A timeout or a failure here is counted below as spans not delivered.
        let _ = self.processor.shutdown_with_timeout(self.timeout + Duration::from_millis(500));
        ExportReport {
            url: self.url.clone(),
            ended: self.ended.load(Ordering::Relaxed),
            delivered: self.counts.delivered.load(Ordering::Relaxed),
            first_error: self.counts.first_error.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone(),
        }
    }
}

/// A one-thread tokio runtime of the OTLP/gRPC channel alone: the batch
/// processor exports from its own thread, outside Baton's runtime, and tonic's
/// channel needs a runtime to carry its connection; one of its own also keeps the
/// export independent of how Baton's runtime ends. Only started for `grpc`.
struct GrpcRuntime(Option<tokio::runtime::Runtime>);

impl GrpcRuntime {
    fn start() -> std::io::Result<GrpcRuntime> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("baton-otlp-grpc")
            .enable_all()
            .build()?;
        Ok(GrpcRuntime(Some(runtime)))
    }

    fn enter(&self) -> Option<tokio::runtime::EnterGuard<'_>> {
        self.0.as_ref().map(tokio::runtime::Runtime::enter)
    }
}

impl Drop for GrpcRuntime {
    /// Dropped from Baton's own runtime, a runtime must not block: its thread
    /// is left to end on its own.
    fn drop(&mut self) {
        if let Some(runtime) = self.0.take() {
            runtime.shutdown_background();
        }
    }
}

/// The resource of Baton's spans: `OTEL_SERVICE_NAME` and
/// `OTEL_RESOURCE_ATTRIBUTES` as the SDK reads them, with `baton` as the service
/// when neither names one.
fn resource() -> Resource {
    let resource = Resource::builder().build();
    let named = resource
        .get(&opentelemetry::Key::from_static_str("service.name"))
        .is_some_and(|name| !name.as_str().starts_with("unknown_service"));
    if named {
        resource
    } else {
        Resource::builder()
            .with_service_name("baton")
            .with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")))
            .build()
    }
}
