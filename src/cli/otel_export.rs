//! Whether this invocation of a run exports its trace over OTLP (issue 23), and
//! what it says about it: the settings' problems before the run, what did not
//! arrive after it. Nothing is built, no thread started, when no endpoint is
//! configured.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::cli::config::Config;
use crate::events::trace_context::RunTelemetry;
use crate::ids::RunId;
use crate::observers::otel::OtelObserver;
use crate::observers::otel::settings::{self, ENDPOINT_VAR, OtelSettings, TRACES_ENDPOINT_VAR};

/// The observer to attach and what the steps' processes get, or neither.
pub(crate) fn start(flag: Option<&str>, config: &Config, run_id: &RunId) -> Option<(Arc<OtelObserver>, RunTelemetry)> {
    let endpoint = config.otel.as_ref().and_then(|table| table.endpoint.as_deref());
    let resolved = settings::resolve(flag, endpoint, &|name| std::env::var(name).ok());
    for problem in &resolved.problems {
        eprintln!("warning: {problem}");
    }
    let settings = resolved.settings?;
    match OtelObserver::start(&settings, run_id) {
        Ok((observer, trace)) => Some((Arc::new(observer), RunTelemetry { trace, export_env: export_env(&settings) })),
        Err(error) => {
            eprintln!("warning: {error}");
            None
        }
    }
}

/// The end of the invocation: the last spans sent, and a warning when some did
/// not arrive.
pub(crate) fn finish(observer: &OtelObserver) {
    let report = observer.close();
    if report.lost() > 0 {
        eprintln!("warning: {report}");
    }
}

/// Where an agent CLI that exports its own spans sends them: where Baton does.
fn export_env(settings: &OtelSettings) -> BTreeMap<String, String> {
    let mut env = BTreeMap::new();
    if let Some(base) = &settings.base_url {
        env.insert(ENDPOINT_VAR.to_string(), base.clone());
    }
    env.insert(TRACES_ENDPOINT_VAR.to_string(), settings.traces_url.clone());
    env.insert("OTEL_EXPORTER_OTLP_PROTOCOL".to_string(), settings.protocol.as_str().to_string());
    env
}
