//! The OTLP observer (issue 23) against an in-process OTLP/HTTP receiver
//! (`support::otlp_receiver`, over HTTP or HTTPS) and an OTLP/gRPC one
//! (`support::otlp_grpc_receiver`): the span tree of a run, its GenAI and Baton
//! attributes, the `TRACEPARENT` a prompt step's CLI gets, a resumed run's
//! trace, collectors that are down, refusing, hanging, untrusted or speaking the
//! other scheme, and settings or certificate files Baton cannot use — each a
//! warning, never a failed run.

use crate::support::fake_claude::{FakeClaude, Reply};
use crate::support::otlp_grpc_receiver::OtlpGrpcReceiver;
use crate::support::otlp_receiver::{Behaviour, OtlpReceiver, ReceivedSpan};
use crate::support::{Outcome, Test};

/// A prompt state (the fake Claude CLI) that goes to a script state, which ends the run.
fn prompt_then_script(receiver_endpoint: &str) -> Test {
    let test = Test::new().with_fake_claude().env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver_endpoint);
    FakeClaude::at(test.root()).rule("plan", "PLAN", Reply::text("planned\n<goto>NEXT.sh</goto>").cost(0.25));
    test.file("START.md", "PLAN the work").file("NEXT.sh", "echo '<result>done</result>'\n")
}

fn run_spans(outcome: &Outcome, receiver: &OtlpReceiver) -> Vec<ReceivedSpan> {
    outcome.status(0).stdout("done\n");
    assert_eq!(outcome.stderr_normalized().matches("warning").count(), 0, "{}", outcome.stderr);
    receiver.spans()
}

#[test]
fn a_run_is_one_trace_of_run_agent_and_step_spans_with_genai_attributes() {
    let receiver = OtlpReceiver::start(Behaviour::Accept);
    let outcome = prompt_then_script(&receiver.endpoint()).run_workflow(&["--model", "sonnet"]);
    let spans = run_spans(&outcome, &receiver);
    assert_eq!(spans.len(), 4, "{spans:#?}");
    let trace = &spans[0].trace_id;
    assert!(spans.iter().all(|span| &span.trace_id == trace), "one trace: {spans:#?}");

    let run = receiver.span("workflow wf");
    assert_eq!(run.parent_span_id, "", "the run span is the root");
    assert_eq!(run.attribute("baton.run_id"), Some("test"));
    assert_eq!(run.attribute("baton.status"), Some("completed"));
    assert_eq!(run.attribute("baton.cost_usd"), Some("0.25"));
    assert_eq!(run.status, 1);
    assert_eq!(run.resource.get("service.name").map(String::as_str), Some("baton"));

    let agent = receiver.span("invoke_agent main");
    assert_eq!(agent.parent_span_id, run.span_id);
    assert_eq!(agent.attribute("gen_ai.operation.name"), Some("invoke_agent"));

    let prompt = receiver.span("START.md");
    assert_eq!(prompt.parent_span_id, agent.span_id);
    for (key, value) in [
        ("gen_ai.operation.name", "chat"),
        ("gen_ai.system", "anthropic"),
        ("gen_ai.provider.name", "anthropic"),
        ("gen_ai.request.model", "sonnet"),
        ("gen_ai.usage.input_tokens", "100"),
        ("gen_ai.usage.output_tokens", "20"),
        ("baton.run_id", "test"),
        ("baton.state", "START.md"),
        ("baton.state_type", "markdown"),
        ("baton.transition", "goto"),
        ("baton.next_state", "NEXT.sh"),
        ("baton.cost_usd", "0.25"),
        ("baton.retries", "0"),
        ("baton.reminders", "0"),
    ] {
        assert_eq!(prompt.attribute(key), Some(value), "{key} in {prompt:#?}");
    }
    assert_eq!(prompt.status, 1);

    let script = receiver.span("NEXT.sh");
    assert_eq!(script.parent_span_id, agent.span_id);
    assert_eq!(script.attribute("baton.state_type"), Some("script"));
    assert_eq!(script.attribute("baton.transition"), Some("result"));
    assert_eq!(script.attribute("gen_ai.system"), None);

    // The prompt step's CLI was handed the step's span as its parent, sampled,
    // and Claude Code's telemetry switches, sending where Baton sends.
    let calls = FakeClaude::at(outcome.root()).calls();
    let env = &calls[0].env;
    assert_eq!(env.get("TRACEPARENT"), Some(&format!("00-{}-{}-01", prompt.trace_id, prompt.span_id)));
    assert_eq!(env.get("CLAUDE_CODE_ENABLE_TELEMETRY").map(String::as_str), Some("1"));
    assert_eq!(env.get("CLAUDE_CODE_ENHANCED_TELEMETRY_BETA").map(String::as_str), Some("1"));
    assert_eq!(env.get("OTEL_TRACES_EXPORTER").map(String::as_str), Some("otlp"));
    assert_eq!(env.get("OTEL_EXPORTER_OTLP_ENDPOINT"), Some(&receiver.endpoint()));
}

#[test]
fn without_an_endpoint_nothing_is_exported_and_no_traceparent_is_set() {
    let test = Test::new().with_fake_claude();
    FakeClaude::at(test.root()).rule("plan", "PLAN", Reply::text("<result>done</result>"));
    let outcome = test.file("START.md", "PLAN").run_workflow(&[]);
    outcome.status(0).stdout("done\n");
    let calls = FakeClaude::at(outcome.root()).calls();
    assert_eq!(calls[0].env.get("TRACEPARENT"), None);
    assert_eq!(calls[0].env.get("CLAUDE_CODE_ENABLE_TELEMETRY"), None);
}

#[test]
fn the_users_own_claude_telemetry_settings_stand() {
    let receiver = OtlpReceiver::start(Behaviour::Accept);
    let test = prompt_then_script(&receiver.endpoint()).env("CLAUDE_CODE_ENABLE_TELEMETRY", "0");
    let outcome = test.run_workflow(&[]);
    run_spans(&outcome, &receiver);
    let calls = FakeClaude::at(outcome.root()).calls();
    assert_eq!(calls[0].env.get("CLAUDE_CODE_ENABLE_TELEMETRY").map(String::as_str), Some("0"));
    assert!(calls[0].env.contains_key("TRACEPARENT"));
}

#[test]
fn the_flag_and_the_config_file_turn_export_on_too_and_http_json_is_spoken() {
    let receiver = OtlpReceiver::start(Behaviour::Accept);
    let test = Test::new().file("START.sh", "echo '<result>done</result>'\n");
    let outcome = test.run_workflow(&["--otel", &receiver.endpoint()]);
    run_spans(&outcome, &receiver);
    assert_eq!(receiver.spans().len(), 3);

    let receiver = OtlpReceiver::start(Behaviour::Accept);
    let test = Test::new()
        .write(".baton/config.toml", &format!("[otel]\nendpoint = \"{}\"\n", receiver.endpoint()))
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
        .env("OTEL_SERVICE_NAME", "nightly-agents")
        .file("START.sh", "echo '<result>done</result>'\n");
    let outcome = test.run_workflow(&[]);
    let spans = run_spans(&outcome, &receiver);
    assert_eq!(spans.len(), 3);
    assert!(receiver.content_types().iter().all(|kind| kind == "application/json"), "{:?}", receiver.content_types());
    assert_eq!(spans[0].resource.get("service.name").map(String::as_str), Some("nightly-agents"));
}

#[test]
fn a_resumed_run_continues_its_trace_with_a_new_run_span() {
    let receiver = OtlpReceiver::start(Behaviour::Accept);
    let test = Test::new()
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &receiver.endpoint())
        .file("START.sh", "echo '<goto>TWO.sh</goto>'\n")
        .file("TWO.sh", "echo '<result>done</result>'\n");
    let first = test.run_workflow(&["--max-steps", "1"]);
    first.status(3);
    let paused = receiver.spans();
    let first_run = paused.iter().find(|span| span.name == "workflow wf").expect("the first run span").clone();
    assert_eq!(first_run.attribute("baton.status"), Some("paused"));
    let resumed = first.rerun(["resume", "test", "--max-steps", "10"]);
    resumed.status(0).stdout("done\n");
    let spans = receiver.spans();
    let runs: Vec<&ReceivedSpan> = spans.iter().filter(|span| span.name == "workflow wf").collect();
    assert_eq!(runs.len(), 2, "{spans:#?}");
    assert_ne!(runs[0].span_id, runs[1].span_id);
    assert_eq!(runs[1].attribute("baton.resumed"), Some("true"));
    assert!(spans.iter().all(|span| span.trace_id == first_run.trace_id), "one trace across the resume");
    let two = spans.iter().find(|span| span.name == "TWO.sh").expect("the resumed step");
    let agent = spans.iter().find(|span| span.span_id == two.parent_span_id).expect("its agent span");
    assert_eq!(agent.parent_span_id, runs[1].span_id, "the resumed steps hang from the second run span");
}

#[test]
fn an_unsampled_run_exports_nothing_and_hands_out_an_unsampled_parent() {
    let receiver = OtlpReceiver::start(Behaviour::Accept);
    let test = prompt_then_script(&receiver.endpoint()).env("OTEL_TRACES_SAMPLER", "always_off");
    let outcome = test.run_workflow(&[]);
    outcome.status(0).stdout("done\n");
    assert_eq!(receiver.requests(), 0);
    let calls = FakeClaude::at(outcome.root()).calls();
    let parent = calls[0].env.get("TRACEPARENT").expect("a TRACEPARENT");
    assert!(parent.ends_with("-00"), "{parent}");
    assert_eq!(calls[0].env.get("CLAUDE_CODE_ENABLE_TELEMETRY"), None);
}

#[test]
fn a_step_that_fails_is_a_span_in_error_with_its_error_event() {
    let receiver = OtlpReceiver::start(Behaviour::Accept);
    let test = Test::new()
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &receiver.endpoint())
        .file("START.sh", "echo 'broken' >&2\nexit 1\n");
    let outcome = test.run_workflow(&[]);
    outcome.status(1);
    let step = receiver.span("START.sh");
    assert_eq!(step.status, 2, "{step:#?}");
    assert!(step.status_message.contains("START.sh"), "{step:#?}");
    assert!(step.events.iter().any(|event| event == "error"), "{step:#?}");
    let run = receiver.span("workflow wf");
    assert_eq!((run.status, run.attribute("baton.status")), (2, Some("failed")), "{run:#?}");
}

/// The end of a run whose collector lost `lost` of its spans, as the warning says it.
fn lost_warning(outcome: &Outcome, endpoint: &str, why: &str) {
    outcome.status(0).stdout("done\n");
    outcome.stderr_contains(&format!(
        "warning: 3 of 3 OpenTelemetry spans were not delivered to {endpoint}/v1/traces ({why}); \
         the run itself is unaffected\n"
    ));
}

#[test]
fn a_collector_that_refuses_costs_one_warning() {
    let receiver = OtlpReceiver::start(Behaviour::Refuse(400));
    let test = Test::new()
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &receiver.endpoint())
        .file("START.sh", "echo '<result>done</result>'\n");
    let outcome = test.run_workflow(&[]);
    lost_warning(&outcome, &receiver.endpoint(), "HTTP export failed with status code: 400");
}

#[test]
fn a_collector_that_is_down_costs_one_warning() {
    let port = crate::support::loopback::free_port();
    let endpoint = format!("http://127.0.0.1:{port}");
    let test =
        Test::new().env("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint).file("START.sh", "echo '<result>done</result>'\n");
    let outcome = test.run_workflow(&[]);
    lost_warning(&outcome, &endpoint, "HTTP export failed: network error: Connection refused (os error 111)");
}

#[test]
fn a_collector_that_hangs_costs_the_export_timeout_and_one_warning() {
    let receiver = OtlpReceiver::start(Behaviour::Hang);
    let test = Test::new()
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &receiver.endpoint())
        .env("OTEL_EXPORTER_OTLP_TIMEOUT", "300")
        .file("START.sh", "echo '<result>done</result>'\n");
    let started = std::time::Instant::now();
    let outcome = test.run_workflow(&[]);
    outcome.status(0).stdout("done\n");
    outcome.stderr_contains(&format!(
        "warning: 3 of 3 OpenTelemetry spans were not delivered to {}/v1/traces (",
        receiver.endpoint()
    ));
    assert!(started.elapsed() < std::time::Duration::from_secs(8), "took {:?}", started.elapsed());
}

/// The variables, the arguments, and the warnings they make.
type Case = (&'static [(&'static str, &'static str)], &'static [&'static str], &'static str);

#[test]
fn settings_baton_cannot_use_are_named_and_the_run_goes_on() {
    let cases: [Case; 4] = [
        (
            &[],
            &["--otel", "not a url"],
            "warning: --otel `not a url` is not an OTLP endpoint (not a URL); the run's spans are not exported\n",
        ),
        (
            &[("OTEL_EXPORTER_OTLP_ENDPOINT", "ftp://api.example.com")],
            &[],
            "warning: OTEL_EXPORTER_OTLP_ENDPOINT `ftp://api.example.com` is not an OTLP endpoint (only http:// and \
             https:// URLs are exported to); the run's spans are not exported\n",
        ),
        (
            &[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317"), ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc/json")],
            &[],
            "warning: OTEL_EXPORTER_OTLP_PROTOCOL `grpc/json` is not a protocol Baton exports with (http/protobuf, \
             http/json, grpc); the run's spans are not exported\n",
        ),
        (&[("OTEL_SDK_DISABLED", "true"), ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")], &[], ""),
    ];
    for (env, args, expected) in cases {
        let mut test = Test::new().file("START.sh", "echo '<result>done</result>'\n");
        for (key, value) in env {
            test = test.env(key, value);
        }
        let outcome = test.run_workflow(args);
        outcome.status(0).stdout("done\n");
        let warnings: String =
            outcome.stderr.lines().filter(|line| line.starts_with("warning")).map(|line| format!("{line}\n")).collect();
        assert_eq!(warnings, expected, "{env:?} {args:?}");
    }

    let receiver = OtlpReceiver::start(Behaviour::Accept);
    let test = Test::new()
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &receiver.endpoint())
        .env("OTEL_EXPORTER_OTLP_TIMEOUT", "soon")
        .env("OTEL_TRACES_SAMPLER", "sometimes")
        .file("START.sh", "echo '<result>done</result>'\n");
    let outcome = test.run_workflow(&[]);
    outcome.status(0).stdout("done\n");
    outcome.stderr_contains(
        "warning: OTEL_EXPORTER_OTLP_TIMEOUT `soon` is not a number of milliseconds; the default, 10000, is used\n\
         warning: OTEL_TRACES_SAMPLER `sometimes` is not a sampler (always_on, always_off, traceidratio, \
         parentbased_always_on, parentbased_always_off, parentbased_traceidratio); parentbased_always_on is used\n",
    );
    assert_eq!(receiver.spans().len(), 3, "the run was exported with the defaults");
}

/// A script-only run exporting to `endpoint` with the extra variables `env`.
fn script_run(endpoint: &str, env: &[(&str, &str)]) -> Outcome {
    let mut test =
        Test::new().env("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint).file("START.sh", "echo '<result>done</result>'\n");
    for (key, value) in env {
        test = test.env(key, value);
    }
    test.run_workflow(&[])
}

/// The lines of stderr that are warnings.
fn warnings(outcome: &Outcome) -> String {
    outcome.stderr.lines().filter(|line| line.starts_with("warning")).map(|line| format!("{line}\n")).collect()
}

#[test]
fn an_https_collector_trusted_through_the_certificate_variable_gets_the_trace() {
    let receiver = OtlpReceiver::start_tls(Behaviour::Accept);
    let ca = receiver.ca_file().display().to_string();
    let outcome = script_run(&receiver.endpoint(), &[("OTEL_EXPORTER_OTLP_CERTIFICATE", &ca)]);
    let spans = run_spans(&outcome, &receiver);
    assert_eq!(spans.len(), 3, "{spans:#?}");
    assert_eq!(receiver.span("START.sh").parent_span_id, receiver.span("invoke_agent main").span_id);

    // The traces variable wins over the general one, here naming a file that is not there.
    let receiver = OtlpReceiver::start_tls(Behaviour::Accept);
    let ca = receiver.ca_file().display().to_string();
    let outcome = script_run(
        &receiver.endpoint(),
        &[
            ("OTEL_EXPORTER_OTLP_CERTIFICATE", "/nonexistent/ca.pem"),
            ("OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", &ca),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
        ],
    );
    assert_eq!(run_spans(&outcome, &receiver).len(), 3);
}

#[test]
fn an_https_collector_baton_does_not_trust_costs_one_warning_that_names_the_tls_failure() {
    let receiver = OtlpReceiver::start_tls(Behaviour::Accept);
    let outcome = script_run(&receiver.endpoint(), &[]);
    outcome.status(0).stdout("done\n");
    assert_eq!(
        warnings(&outcome),
        format!(
            "warning: 3 of 3 OpenTelemetry spans were not delivered to {}/v1/traces (HTTP export failed: network \
             error: TLS: invalid peer certificate: UnknownIssuer; OTEL_EXPORTER_OTLP_CERTIFICATE names the CA \
             certificates to trust); the run itself is unaffected\n",
            receiver.endpoint()
        )
    );
    assert_eq!(receiver.spans().len(), 0);
}

#[test]
fn a_certificate_file_baton_cannot_use_is_named_and_nothing_is_sent() {
    let receiver = OtlpReceiver::start_tls(Behaviour::Accept);
    let dir = tempfile::tempdir().expect("a temp dir");
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "not a certificate\n").expect("write");
    let missing = dir.path().join("missing.pem");
    let url = format!("{}/v1/traces", receiver.endpoint());
    for (path, why) in [
        (&text, "holds no PEM certificate".to_string()),
        (&missing, "cannot be read: No such file or directory (os error 2)".to_string()),
    ] {
        let outcome =
            script_run(&receiver.endpoint(), &[("OTEL_EXPORTER_OTLP_CERTIFICATE", &path.display().to_string())]);
        outcome.status(0).stdout("done\n");
        assert_eq!(
            warnings(&outcome),
            format!(
                "warning: cannot export the run's spans to {url}: OTEL_EXPORTER_OTLP_CERTIFICATE `{}` {why}; the \
                 run's spans are not exported\n",
                path.display()
            )
        );
    }
    assert_eq!(receiver.requests(), 0);
}

#[test]
fn http_spoken_to_an_https_port_and_https_to_an_http_port_cost_one_warning() {
    let https = OtlpReceiver::start_tls(Behaviour::Accept);
    let outcome = script_run(&https.wrong_scheme_endpoint(), &[]);
    outcome.status(0).stdout("done\n");
    assert_eq!(
        warnings(&outcome),
        format!(
            "warning: 3 of 3 OpenTelemetry spans were not delivered to {}/v1/traces (HTTP export failed: network \
             error: protocol: http parse fail: invalid HTTP version; is the collector's port https://?); the run \
             itself is unaffected\n",
            https.wrong_scheme_endpoint()
        )
    );
    assert_eq!(https.spans().len(), 0);

    let http = OtlpReceiver::start(Behaviour::Accept);
    let outcome = script_run(&http.wrong_scheme_endpoint(), &[]);
    outcome.status(0).stdout("done\n");
    assert_eq!(
        warnings(&outcome),
        format!(
            "warning: 3 of 3 OpenTelemetry spans were not delivered to {}/v1/traces (HTTP export failed: network \
             error: TLS: received corrupt message of type InvalidContentType; is the collector's port plain \
             http://?); the run itself is unaffected\n",
            http.wrong_scheme_endpoint()
        )
    );
    assert_eq!(http.spans().len(), 0);

    // A port that closes the connection unanswered.
    let endpoint = format!("https://127.0.0.1:{}", OtlpReceiver::closing_port());
    let outcome = script_run(&endpoint, &[]);
    outcome.status(0).stdout("done\n");
    assert_eq!(
        warnings(&outcome),
        format!(
            "warning: 3 of 3 OpenTelemetry spans were not delivered to {endpoint}/v1/traces (HTTP export failed: \
             network error: unexpected end of file during the TLS handshake; is the collector's port plain \
             http://?); the run itself is unaffected\n"
        )
    );
}

#[test]
fn grpc_sends_the_runs_span_tree_to_an_otlp_grpc_receiver() {
    let receiver = OtlpGrpcReceiver::start();
    let test = prompt_then_script(&receiver.endpoint()).env("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc");
    let outcome = test.run_workflow(&[]);
    outcome.status(0).stdout("done\n");
    assert_eq!(warnings(&outcome), "", "{}", outcome.stderr);
    let spans = receiver.spans();
    assert_eq!(spans.len(), 4, "{spans:#?}");
    assert!(spans.iter().all(|span| span.trace_id == spans[0].trace_id), "one trace: {spans:#?}");
    let run = receiver.span("workflow wf");
    let agent = receiver.span("invoke_agent main");
    let prompt = receiver.span("START.md");
    let script = receiver.span("NEXT.sh");
    assert_eq!(run.parent_span_id, "");
    assert_eq!(agent.parent_span_id, run.span_id);
    assert_eq!(
        (prompt.parent_span_id.as_str(), script.parent_span_id.as_str()),
        (agent.span_id.as_str(), agent.span_id.as_str())
    );
    assert_eq!(prompt.attribute("gen_ai.usage.output_tokens"), Some("20"));
    // Claude Code is told to send the same way.
    let calls = FakeClaude::at(outcome.root()).calls();
    assert_eq!(calls[0].env.get("OTEL_EXPORTER_OTLP_PROTOCOL").map(String::as_str), Some("grpc"));
    assert_eq!(calls[0].env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"), Some(&receiver.endpoint()));
}

#[test]
fn a_grpc_collector_that_is_down_costs_one_warning() {
    let port = crate::support::loopback::free_port();
    let endpoint = format!("http://127.0.0.1:{port}");
    let outcome = script_run(&endpoint, &[("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")]);
    outcome.status(0).stdout("done\n");
    assert_eq!(
        warnings(&outcome),
        format!(
            "warning: 3 of 3 OpenTelemetry spans were not delivered to {endpoint} (TonicTracesClient export failed \
             with gRPC code: Unavailable: transport error: tcp connect error: tcp connect error: Connection refused \
             (os error 111)); the run itself is unaffected\n"
        )
    );
}

#[test]
fn grpc_over_tls_trusts_the_certificate_variable_and_names_an_untrusted_collector() {
    let receiver = OtlpGrpcReceiver::start_tls();
    let ca = receiver.ca_file().display().to_string();
    let outcome = script_run(
        &receiver.endpoint(),
        &[("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"), ("OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", &ca)],
    );
    outcome.status(0).stdout("done\n");
    assert_eq!(warnings(&outcome), "", "{}", outcome.stderr);
    assert_eq!(receiver.spans().len(), 3);

    let receiver = OtlpGrpcReceiver::start_tls();
    let outcome = script_run(&receiver.endpoint(), &[("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")]);
    outcome.status(0).stdout("done\n");
    assert_eq!(
        warnings(&outcome),
        format!(
            "warning: 3 of 3 OpenTelemetry spans were not delivered to {} (TonicTracesClient export failed with gRPC \
             code: Unavailable: transport error: invalid peer certificate: UnknownIssuer: invalid peer certificate: \
             UnknownIssuer); the run itself is unaffected\n",
            receiver.endpoint()
        )
    );
    assert_eq!(receiver.spans().len(), 0);
}

#[test]
fn a_collector_that_asks_for_a_client_certificate_gets_the_one_the_variables_name() {
    let receiver = OtlpReceiver::start_mutual_tls(Behaviour::Accept);
    let ca = receiver.ca_file().display().to_string();
    let (chain, key) = receiver.client_files();
    let (chain, key) = (chain.display().to_string(), key.display().to_string());
    let outcome = script_run(
        &receiver.endpoint(),
        &[
            ("OTEL_EXPORTER_OTLP_CERTIFICATE", &ca),
            ("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", &chain),
            ("OTEL_EXPORTER_OTLP_CLIENT_KEY", &key),
        ],
    );
    assert_eq!(run_spans(&outcome, &receiver).len(), 3);

    // Without it the collector refuses the handshake: the client reads the
    // collector's alert (CertificateRequired, named with the variables to set) or,
    // when it was still writing, a broken pipe, by chance.
    let receiver = OtlpReceiver::start_mutual_tls(Behaviour::Accept);
    let ca = receiver.ca_file().display().to_string();
    let outcome = script_run(&receiver.endpoint(), &[("OTEL_EXPORTER_OTLP_CERTIFICATE", &ca)]);
    outcome.status(0).stdout("done\n");
    let warning = warnings(&outcome);
    assert!(
        warning.starts_with(&format!(
            "warning: 3 of 3 OpenTelemetry spans were not delivered to {}/v1/traces (HTTP export failed: network \
             error: ",
            receiver.endpoint()
        )) && warning.ends_with("; the run itself is unaffected\n")
            && warning.lines().count() == 1,
        "{warning}"
    );
    // With half of it, nothing is sent.
    let outcome = script_run(
        &receiver.endpoint(),
        &[("OTEL_EXPORTER_OTLP_CERTIFICATE", &ca), ("OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY", &key)],
    );
    outcome.status(0).stdout("done\n");
    assert_eq!(
        warnings(&outcome),
        format!(
            "warning: cannot export the run's spans to {}/v1/traces: OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY is set but \
             OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE is not: a client certificate needs both; the run's spans are not \
             exported\n",
            receiver.endpoint()
        )
    );
    // A key file that holds no key.
    let outcome = script_run(
        &receiver.endpoint(),
        &[
            ("OTEL_EXPORTER_OTLP_CERTIFICATE", &ca),
            ("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", &chain),
            ("OTEL_EXPORTER_OTLP_CLIENT_KEY", &chain),
        ],
    );
    outcome.status(0).stdout("done\n");
    assert_eq!(
        warnings(&outcome),
        format!(
            "warning: cannot export the run's spans to {}/v1/traces: OTEL_EXPORTER_OTLP_CLIENT_KEY `{chain}` holds no \
             PEM private key; the run's spans are not exported\n",
            receiver.endpoint()
        )
    );
    assert_eq!(receiver.spans().len(), 0);
}
