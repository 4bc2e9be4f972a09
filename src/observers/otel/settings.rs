//! Whether a run exports its trace over OTLP, and where to (issue 23): `--otel
//! URL`, the standard `OTEL_*` variables, or `[otel] endpoint` in
//! `.baton/config.toml`, in that order.
//!
//! Only the variables read here decide anything before the exporter is built;
//! headers and resource attributes are read by the OpenTelemetry crates
//! themselves, as every OTel SDK reads them. A value Baton cannot use is never
//! fatal: it is named in a warning, and the run goes on (without export when no
//! usable endpoint or protocol is left, with the default otherwise).

use std::time::Duration;

/// `OTEL_EXPORTER_OTLP_*`: the base endpoint (`/v1/traces` is appended, but for gRPC).
pub(crate) const ENDPOINT_VAR: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";
/// The traces endpoint, used as it is.
pub(crate) const TRACES_ENDPOINT_VAR: &str = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT";
const PROTOCOL_VAR: &str = "OTEL_EXPORTER_OTLP_PROTOCOL";
const TRACES_PROTOCOL_VAR: &str = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL";
const TIMEOUT_VAR: &str = "OTEL_EXPORTER_OTLP_TIMEOUT";
const TRACES_TIMEOUT_VAR: &str = "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT";
const HEADERS_VAR: &str = "OTEL_EXPORTER_OTLP_HEADERS";
const TRACES_HEADERS_VAR: &str = "OTEL_EXPORTER_OTLP_TRACES_HEADERS";
const SAMPLER_VAR: &str = "OTEL_TRACES_SAMPLER";
const SAMPLER_ARG_VAR: &str = "OTEL_TRACES_SAMPLER_ARG";
const DISABLED_VAR: &str = "OTEL_SDK_DISABLED";
/// The CA certificates (PEM) a `https://` collector's certificate is checked against.
const CERTIFICATE_VAR: &str = "OTEL_EXPORTER_OTLP_CERTIFICATE";
const TRACES_CERTIFICATE_VAR: &str = "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE";
/// The client certificate chain and its key (PEM), for collectors that ask for mTLS.
const CLIENT_CERTIFICATE_VAR: &str = "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE";
const TRACES_CLIENT_CERTIFICATE_VAR: &str = "OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE";
const CLIENT_KEY_VAR: &str = "OTEL_EXPORTER_OTLP_CLIENT_KEY";
const TRACES_CLIENT_KEY_VAR: &str = "OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY";

/// The OTel default export timeout (`OTEL_EXPORTER_OTLP_TIMEOUT`).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// The samplers `OTEL_TRACES_SAMPLER` may name that the SDK implements.
const SAMPLERS: [&str; 6] = [
    "always_on",
    "always_off",
    "traceidratio",
    "parentbased_always_on",
    "parentbased_always_off",
    "parentbased_traceidratio",
];

/// How spans travel to the collector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Protocol {
    HttpProtobuf,
    HttpJson,
    /// OTLP/gRPC (the collector's port 4317): the endpoint is used as it is.
    Grpc,
}

impl Protocol {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Protocol::HttpProtobuf => "http/protobuf",
            Protocol::HttpJson => "http/json",
            Protocol::Grpc => "grpc",
        }
    }
}

/// Where the endpoint came from, for messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum EndpointSource {
    Flag,
    Variable(&'static str),
    Config,
}

impl std::fmt::Display for EndpointSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EndpointSource::Flag => f.write_str("--otel"),
            EndpointSource::Variable(name) => f.write_str(name),
            EndpointSource::Config => f.write_str("[otel] endpoint in .baton/config.toml"),
        }
    }
}

/// A PEM file named by a variable (read when the exporter is built: `tls`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PemFile {
    pub(crate) var: &'static str,
    pub(crate) path: String,
}

/// The TLS files of an `https://` endpoint; none set: the bundled web roots.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct TlsFiles {
    /// The CA certificates to trust instead of the bundled roots.
    pub(crate) certificate: Option<PemFile>,
    pub(crate) client_certificate: Option<PemFile>,
    pub(crate) client_key: Option<PemFile>,
}

/// A run's export settings, checked.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct OtelSettings {
    /// The URL spans are POSTed to (`…/v1/traces`), or the gRPC endpoint.
    pub(crate) traces_url: String,
    /// The base endpoint, when one was given (the agent CLIs get it too).
    pub(crate) base_url: Option<String>,
    pub(crate) protocol: Protocol,
    /// How long one export may take, and the most the end of a run waits for the last.
    pub(crate) timeout: Duration,
    /// Only read for an `https://` endpoint (the OTel spec: "should only be used
    /// for a secure connection").
    pub(crate) tls: TlsFiles,
}

/// A setting Baton cannot use, as the warning words it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum SettingsProblem {
    #[error("{origin} `{value}` is not an OTLP endpoint ({reason}); the run's spans are not exported")]
    Endpoint { origin: String, value: String, reason: &'static str },
    #[error(
        "{var} `{value}` is not a protocol Baton exports with (http/protobuf, http/json, grpc); the run's spans are \
         not exported"
    )]
    Protocol { var: &'static str, value: String },
    #[error("{var} `{value}` is not a number of milliseconds; the default, 10000, is used")]
    Timeout { var: &'static str, value: String },
    #[error("{var} `{value}` is not a sampler ({}); parentbased_always_on is used", SAMPLERS.join(", "))]
    Sampler { var: &'static str, value: String },
    #[error("{var} `{value}` is not a ratio between 0 and 1; 1 is used")]
    SamplerArg { var: &'static str, value: String },
    #[error("{var}: `{entry}` is not KEY=VALUE; it is not sent")]
    Header { var: &'static str, entry: String },
}

/// What [`resolve`] found: the settings (none: no export) and what to warn about.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Resolved {
    pub(crate) settings: Option<OtelSettings>,
    pub(crate) problems: Vec<SettingsProblem>,
}

/// The run's export settings from `--otel` (`flag`), the environment (`env`) and
/// `[otel] endpoint` (`config`). Nothing is configured: `None`, and nothing else
/// is read.
pub(crate) fn resolve(flag: Option<&str>, config: Option<&str>, env: &dyn Fn(&str) -> Option<String>) -> Resolved {
    let set = |name: &str| env(name).filter(|value| !value.trim().is_empty());
    if set(DISABLED_VAR).is_some_and(|value| value.trim().eq_ignore_ascii_case("true")) {
        return Resolved::default();
    }
    let (source, value, is_base) = if let Some(url) = flag {
        (EndpointSource::Flag, url.to_string(), true)
    } else if let Some(url) = set(TRACES_ENDPOINT_VAR) {
        (EndpointSource::Variable(TRACES_ENDPOINT_VAR), url, false)
    } else if let Some(url) = set(ENDPOINT_VAR) {
        (EndpointSource::Variable(ENDPOINT_VAR), url, true)
    } else if let Some(url) = config {
        (EndpointSource::Config, url.to_string(), true)
    } else {
        return Resolved::default();
    };
    let mut problems = Vec::new();
    let value = value.trim().to_string();
    if let Err(problem) = check_url(&source, &value) {
        problems.push(problem);
        return Resolved { settings: None, problems };
    }
    let protocol = match first(&set, &[TRACES_PROTOCOL_VAR, PROTOCOL_VAR]) {
        None => Protocol::HttpProtobuf,
        Some((var, text)) => match text.trim() {
            "http/protobuf" => Protocol::HttpProtobuf,
            "http/json" => Protocol::HttpJson,
            "grpc" => Protocol::Grpc,
            _ => {
                problems.push(SettingsProblem::Protocol { var, value: text });
                return Resolved { settings: None, problems };
            }
        },
    };
    let timeout = match first(&set, &[TRACES_TIMEOUT_VAR, TIMEOUT_VAR]) {
        None => DEFAULT_TIMEOUT,
        Some((var, text)) => match text.trim().parse::<u64>() {
            Ok(ms) => Duration::from_millis(ms),
            Err(_) => {
                problems.push(SettingsProblem::Timeout { var, value: text });
                DEFAULT_TIMEOUT
            }
        },
    };
    if let Some(sampler) = set(SAMPLER_VAR)
        && !SAMPLERS.contains(&sampler.trim())
    {
        problems.push(SettingsProblem::Sampler { var: SAMPLER_VAR, value: sampler });
    }
    if let Some(arg) = set(SAMPLER_ARG_VAR)
        && !arg.trim().parse::<f64>().is_ok_and(|ratio| (0.0..=1.0).contains(&ratio))
    {
        problems.push(SettingsProblem::SamplerArg { var: SAMPLER_ARG_VAR, value: arg });
    }
    if let Some((var, headers)) = first(&set, &[TRACES_HEADERS_VAR, HEADERS_VAR]) {
        for entry in headers.split(',').filter(|entry| !entry.trim().is_empty()) {
            if entry.split_once('=').is_none_or(|(key, _)| key.trim().is_empty()) {
                problems.push(SettingsProblem::Header { var, entry: entry.trim().to_string() });
            }
        }
    }
    let tls = if value.starts_with("https://") {
        let pem = |names: &[&'static str]| {
            first(&set, names).map(|(var, path)| PemFile { var, path: path.trim().to_string() })
        };
        TlsFiles {
            certificate: pem(&[TRACES_CERTIFICATE_VAR, CERTIFICATE_VAR]),
            client_certificate: pem(&[TRACES_CLIENT_CERTIFICATE_VAR, CLIENT_CERTIFICATE_VAR]),
            client_key: pem(&[TRACES_CLIENT_KEY_VAR, CLIENT_KEY_VAR]),
        }
    } else {
        TlsFiles::default()
    };
    let base = value.trim_end_matches('/').to_string();
    // gRPC has no path: the service's name routes the call (the spec uses the
    // endpoint as it is, the base as the traces endpoint).
    let (traces_url, base_url) = match (is_base, protocol) {
        (true, Protocol::Grpc) => (base.clone(), Some(base)),
        (true, _) => (format!("{base}/v1/traces"), Some(base)),
        (false, _) => (value, None),
    };
    Resolved { settings: Some(OtelSettings { traces_url, base_url, protocol, timeout, tls }), problems }
}

/// The first of `names` that is set, with its value.
fn first(set: &dyn Fn(&str) -> Option<String>, names: &[&'static str]) -> Option<(&'static str, String)> {
    names.iter().find_map(|name| set(name).map(|value| (*name, value)))
}

/// An `http://` or `https://HOST[:PORT][/PATH]` URL.
fn check_url(source: &EndpointSource, value: &str) -> Result<(), SettingsProblem> {
    let endpoint = |reason| SettingsProblem::Endpoint { origin: source.to_string(), value: value.to_string(), reason };
    let uri: hyper::Uri = value.parse().map_err(|_| endpoint("not a URL"))?;
    match uri.scheme_str() {
        Some("http" | "https") => {}
        Some(_) => return Err(endpoint("only http:// and https:// URLs are exported to")),
        None => return Err(endpoint("expected http://HOST:PORT")),
    }
    match uri.host() {
        Some(host) if !host.is_empty() => {}
        _ => return Err(endpoint("the URL names no host")),
    }
    if uri.query().is_some() {
        return Err(endpoint("an endpoint takes no query"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn resolve_with(flag: Option<&str>, config: Option<&str>, vars: &[(&str, &str)]) -> Resolved {
        let vars: BTreeMap<String, String> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        resolve(flag, config, &|name| vars.get(name).cloned())
    }

    #[test]
    fn nothing_configured_exports_nothing() {
        assert_eq!(resolve_with(None, None, &[("OTEL_EXPORTER_OTLP_PROTOCOL", "bogus")]), Resolved::default());
    }

    #[test]
    fn the_flag_wins_over_the_variables_and_the_variables_over_the_config() {
        let env = [("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:2/")];
        let flag = resolve_with(Some("http://127.0.0.1:1"), Some("http://127.0.0.1:3"), &env);
        assert_eq!(flag.settings.expect("settings").traces_url, "http://127.0.0.1:1/v1/traces");
        let variable = resolve_with(None, Some("http://127.0.0.1:3"), &env).settings.expect("settings");
        assert_eq!(variable.traces_url, "http://127.0.0.1:2/v1/traces");
        assert_eq!(variable.base_url.as_deref(), Some("http://127.0.0.1:2"));
        let config = resolve_with(None, Some("http://127.0.0.1:3"), &[]).settings.expect("settings");
        assert_eq!(config.traces_url, "http://127.0.0.1:3/v1/traces");
        let traces = resolve_with(None, None, &[("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://h:4/x")]);
        assert_eq!(traces.settings.expect("settings").traces_url, "http://h:4/x");
    }

    #[test]
    fn sdk_disabled_turns_export_off() {
        let env = [("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:2"), ("OTEL_SDK_DISABLED", "true")];
        assert_eq!(resolve_with(None, None, &env), Resolved::default());
    }

    #[test]
    fn an_unusable_endpoint_or_protocol_is_named_and_nothing_is_exported() {
        for (value, reason) in [
            ("not a url", "not a URL"),
            ("ftp://host:1", "only http:// and https:// URLs are exported to"),
            ("localhost:4318", "expected http://HOST:PORT"),
            ("/v1/traces", "expected http://HOST:PORT"),
        ] {
            let resolved = resolve_with(Some(value), None, &[]);
            assert_eq!(resolved.settings, None, "{value}");
            assert_eq!(
                resolved.problems,
                vec![SettingsProblem::Endpoint { origin: "--otel".into(), value: value.into(), reason }],
                "{value}"
            );
        }
        let soap = resolve_with(Some("http://h:4317"), None, &[("OTEL_EXPORTER_OTLP_PROTOCOL", "soap")]);
        assert_eq!(soap.settings, None);
        assert_eq!(
            soap.problems[0].to_string(),
            "OTEL_EXPORTER_OTLP_PROTOCOL `soap` is not a protocol Baton exports with (http/protobuf, http/json, \
             grpc); the run's spans are not exported"
        );
    }

    #[test]
    fn grpc_uses_the_endpoint_as_it_is() {
        let env = [("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")];
        let base = resolve_with(Some("http://127.0.0.1:4317/"), None, &env).settings.expect("settings");
        assert_eq!((base.protocol, base.traces_url.as_str()), (Protocol::Grpc, "http://127.0.0.1:4317"));
        assert_eq!(base.base_url.as_deref(), Some("http://127.0.0.1:4317"));
        let env =
            [("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "grpc"), ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "https://h:4317")];
        let traces = resolve_with(None, None, &env).settings.expect("settings");
        assert_eq!(traces.traces_url, "https://h:4317");
    }

    #[test]
    fn an_https_endpoint_takes_the_tls_files_the_traces_variables_first() {
        let env = [
            ("OTEL_EXPORTER_OTLP_CERTIFICATE", "/all/ca.pem"),
            ("OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", " /traces/ca.pem "),
            ("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", "/all/client.pem"),
            ("OTEL_EXPORTER_OTLP_CLIENT_KEY", "/all/client.key"),
        ];
        let resolved = resolve_with(Some("https://api.honeycomb.io"), None, &env);
        assert_eq!(resolved.problems, vec![]);
        let settings = resolved.settings.expect("settings");
        assert_eq!(settings.traces_url, "https://api.honeycomb.io/v1/traces");
        let pem = |var, path: &str| Some(PemFile { var, path: path.to_string() });
        assert_eq!(
            settings.tls,
            TlsFiles {
                certificate: pem("OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", "/traces/ca.pem"),
                client_certificate: pem("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", "/all/client.pem"),
                client_key: pem("OTEL_EXPORTER_OTLP_CLIENT_KEY", "/all/client.key"),
            }
        );
        // Plain http:// reads none of them.
        let plain = resolve_with(Some("http://127.0.0.1:4318"), None, &env).settings.expect("settings");
        assert_eq!(plain.tls, TlsFiles::default());
    }

    #[test]
    fn bad_tuning_values_fall_back_to_defaults_with_a_warning() {
        let env = [
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "soon"),
            ("OTEL_TRACES_SAMPLER", "sometimes"),
            ("OTEL_TRACES_SAMPLER_ARG", "2"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "a=1,broken"),
            ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/json"),
        ];
        let resolved = resolve_with(Some("http://127.0.0.1:9"), None, &env);
        let settings = resolved.settings.expect("settings");
        assert_eq!(settings.timeout, DEFAULT_TIMEOUT);
        assert_eq!(settings.protocol, Protocol::HttpJson);
        assert_eq!(resolved.problems.len(), 4, "{:?}", resolved.problems);
        assert_eq!(
            resolved.problems[3].to_string(),
            "OTEL_EXPORTER_OTLP_HEADERS: `broken` is not KEY=VALUE; it is not sent"
        );
    }
}
