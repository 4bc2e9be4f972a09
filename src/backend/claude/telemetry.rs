//! Claude Code's own spans under the step's (issue 23). Claude Code 2.1.331
//! exports spans only with `CLAUDE_CODE_ENABLE_TELEMETRY=1` and
//! `CLAUDE_CODE_ENHANCED_TELEMETRY_BETA=1`, an OTLP traces exporter and
//! endpoint, and a sampled `TRACEPARENT`; it then makes its
//! `claude_code.interaction` span a child of that parent. When the run is
//! exported, Baton turns this on for its Claude turns, sending where Baton sends,
//! except for each variable the user set: in the manifest's `environment` or in
//! Baton's own environment, the user's value stands (`CLAUDE_CODE_ENABLE_TELEMETRY=0`
//! keeps Claude Code's telemetry off).

use std::collections::BTreeMap;

use crate::events::trace_context::StepTelemetry;

/// The switches Claude Code needs to export spans, besides the endpoint.
const SWITCHES: [(&str, &str); 3] = [
    ("CLAUDE_CODE_ENABLE_TELEMETRY", "1"),
    ("CLAUDE_CODE_ENHANCED_TELEMETRY_BETA", "1"),
    ("OTEL_TRACES_EXPORTER", "otlp"),
];

/// `env` with what Claude Code needs to export its spans under the step's span,
/// each variable only where neither `env` nor the inherited environment
/// (`inherited`) sets it. Unsampled steps get nothing: Claude Code would export nothing.
pub(crate) fn with_telemetry(
    mut env: BTreeMap<String, String>,
    telemetry: &StepTelemetry,
    inherited: &dyn Fn(&str) -> Option<String>,
) -> BTreeMap<String, String> {
    if !telemetry.sampled() {
        return env;
    }
    let wanted = SWITCHES
        .iter()
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .chain(telemetry.export_env.iter().map(|(name, value)| (name.clone(), value.clone())));
    for (name, value) in wanted {
        if !env.contains_key(&name) && inherited(&name).is_none() {
            env.insert(name, value);
        }
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    fn telemetry(flags: &str) -> StepTelemetry {
        StepTelemetry {
            traceparent: format!("00-{}-{}-{flags}", "a".repeat(32), "b".repeat(16)),
            export_env: BTreeMap::from([(
                "OTEL_EXPORTER_OTLP_ENDPOINT".to_string(),
                "http://127.0.0.1:4318".to_string(),
            )]),
        }
    }

    #[test]
    fn export_is_turned_on_where_the_user_said_nothing() {
        let env = with_telemetry(BTreeMap::new(), &telemetry("01"), &|_| None);
        assert_eq!(env.get("CLAUDE_CODE_ENABLE_TELEMETRY").map(String::as_str), Some("1"));
        assert_eq!(env.get("CLAUDE_CODE_ENHANCED_TELEMETRY_BETA").map(String::as_str), Some("1"));
        assert_eq!(env.get("OTEL_TRACES_EXPORTER").map(String::as_str), Some("otlp"));
        assert_eq!(env.get("OTEL_EXPORTER_OTLP_ENDPOINT").map(String::as_str), Some("http://127.0.0.1:4318"));
    }

    #[test]
    fn the_users_own_values_stand_and_unsampled_steps_get_nothing() {
        let manifest = BTreeMap::from([("CLAUDE_CODE_ENABLE_TELEMETRY".to_string(), "0".to_string())]);
        let inherited = |name: &str| (name == "OTEL_EXPORTER_OTLP_ENDPOINT").then(|| "http://elsewhere".to_string());
        let env = with_telemetry(manifest, &telemetry("01"), &inherited);
        assert_eq!(env.get("CLAUDE_CODE_ENABLE_TELEMETRY").map(String::as_str), Some("0"));
        assert_eq!(env.get("OTEL_EXPORTER_OTLP_ENDPOINT"), None);
        assert!(with_telemetry(BTreeMap::new(), &telemetry("00"), &|_| None).is_empty());
    }
}
