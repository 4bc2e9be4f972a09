//! The Claude Code command line (R12.1–R12.2, R5.21–R5.22; §16 item 54) and where
//! its model and effort come from: frontmatter > `--model`/`--effort` > config > default.

use super::common::emit;
use super::{calls, calls_for, fake, with_frontmatter};
use crate::support::Test;
use crate::support::fake_claude::Reply;

const DISALLOWED: &str = "EnterPlanMode,ExitPlanMode,AskUserQuestion,NotebookEdit";

fn argv(words: &str) -> Vec<String> {
    words.split(' ').map(String::from).collect()
}

#[test]
fn r12_1_fresh_state_with_model_and_effort_without_skip_permissions() {
    let test =
        Test::new().with_fake_claude().file("START.md", &with_frontmatter("model: haiku\neffort: high", "[[START]]\n"));
    fake(&test).rule("a", "", Reply::text("<result>ok</result>"));
    let outcome = test.run_workflow(&["--dangerously-skip-permissions=false"]);
    outcome.status(0).stdout("ok\n");
    let calls = calls(&outcome);
    assert_eq!(calls.len(), 1);
    assert_eq!(
        calls[0].argv,
        argv(&format!(
            "-p --output-format stream-json --verbose --permission-mode acceptEdits --model haiku --effort high \
             --session-id <uuid> --disallowed-tools {DISALLOWED}"
        ))
    );
    // A12: the prompt is on stdin, never in argv.
    assert_eq!(calls[0].prompt, "[[START]]\n");
    assert!(!calls[0].argv.iter().any(|arg| arg.contains("[[START]]")));
    // Claude runs in the agent's cwd: the directory `baton run` started in.
    let root = outcome.root().canonicalize().unwrap();
    assert_eq!(std::path::Path::new(&calls[0].cwd).canonicalize().unwrap(), root);
}

#[test]
fn r12_1_resume_and_fork_argv_with_the_defaults() {
    let test = Test::new()
        .with_fake_claude()
        .file("START.md", "[[START]]\n")
        .file("NEXT.md", "[[NEXT]]\n")
        .file("C.md", "[[C]]\n");
    fake(&test)
        .rule("a", "[[START]]", Reply::text("<goto>NEXT</goto>"))
        .rule("b", "[[NEXT]]", Reply::text(r#"<call return="START">C</call>"#).times(1))
        .rule("c", "[[C]]", Reply::text("<result>c</result>"))
        .rule("d", "[[NEXT]]", Reply::text("<result>done</result>"));
    // START → NEXT → (call) C → START again (the return state) → NEXT again.
    let outcome = test.run_workflow(&[]);
    outcome.status(0).stdout("done\n");
    let calls = calls(&outcome);
    let common = "-p --output-format stream-json --verbose --dangerously-skip-permissions --model sonnet";
    // A new conversation (fresh, or a fork for the call) takes the id Baton chose
    // and journalled at launch; a resumed one keeps its own.
    assert_eq!(calls[0].argv, argv(&format!("{common} --session-id <uuid> --disallowed-tools {DISALLOWED}")));
    assert_eq!(calls[1].argv, argv(&format!("{common} --resume fake-session-1 --disallowed-tools {DISALLOWED}")));
    assert_eq!(
        calls[2].argv,
        argv(&format!(
            "{common} --resume fake-session-1 --fork-session --session-id <uuid> --disallowed-tools {DISALLOWED}"
        ))
    );
    assert_eq!(calls[3].argv, argv(&format!("{common} --resume fake-session-1 --disallowed-tools {DISALLOWED}")));
    assert_eq!(calls.len(), 5);
}

/// The `--model` and `--effort` (or "-") of the calls for `[[A]]` and `[[B]]`.
fn models(outcome: &crate::support::Outcome) -> Vec<String> {
    ["[[A]]", "[[B]]"]
        .iter()
        .map(|marker| {
            let call = &calls_for(outcome, marker)[0];
            format!("{} {}", call.flag("--model").unwrap_or("-"), call.flag("--effort").unwrap_or("-"))
        })
        .collect()
}

/// A has `model: " Opus "` and `effort: MEDIUM` in its frontmatter; B has none.
fn two_states() -> Test {
    let test = Test::new()
        .with_fake_claude()
        .file("START.md", &with_frontmatter("model: \" Opus \"\neffort: MEDIUM", "[[A]]\n"))
        .file("B.md", "[[B]]\n");
    fake(&test).rule("a", "[[A]]", Reply::text("<goto>B</goto>")).rule("b", "[[B]]", Reply::text("<result>b</result>"));
    test
}

#[test]
fn r5_21_default_model_is_sonnet_and_effort_is_omitted() {
    let outcome = two_states().run_workflow(&[]);
    outcome.status(0).stdout("b\n");
    assert_eq!(models(&outcome), ["opus medium", "sonnet -"]);
}

#[test]
fn r5_21_flags_apply_to_states_without_frontmatter_values() {
    let outcome = two_states().run_workflow(&["--model", "HAIKU", "--effort", "low"]);
    outcome.status(0).stdout("b\n");
    assert_eq!(models(&outcome), ["opus medium", "haiku low"]);
}

#[test]
fn r5_21_config_applies_below_the_flags() {
    let config = "model = \"haiku\"\neffort = \"high\"\n";
    let outcome = two_states().write(".baton/config.toml", config).run_workflow(&[]);
    outcome.status(0).stdout("b\n");
    assert_eq!(models(&outcome), ["opus medium", "haiku high"]);
    let outcome = two_states().write(".baton/config.toml", config).run_workflow(&["--model", "sonnet"]);
    outcome.status(0).stdout("b\n");
    assert_eq!(models(&outcome), ["opus medium", "sonnet high"]);
}

#[test]
fn r8_12_model_flag_is_kept_on_resume() {
    // The run is launched with --model haiku; the state after a script pause resumes with it.
    let test = Test::new().with_fake_claude().file("START.sh", &emit("<goto>B</goto>")).file("B.md", "[[B]]\n");
    fake(&test).rule("a", "[[B]]", Reply::api_error("API Error: 529 Overloaded").times(1)).rule(
        "b",
        "[[B]]",
        Reply::text("<result>b</result>"),
    );
    let first = test.run_workflow(&["--model", "haiku", "--attempts", "1"]);
    first.status(3);
    let resumed = first.rerun(["resume", "test"]);
    resumed.status(0).stdout("b\n");
    let models: Vec<String> =
        calls(&resumed).iter().map(|call| call.flag("--model").unwrap_or("-").to_string()).collect();
    assert_eq!(models, ["haiku", "haiku"]);
}

#[test]
fn r12_2_skip_permissions_false_from_config() {
    let test = Test::new()
        .with_fake_claude()
        .write(".baton/config.toml", "dangerously_skip_permissions = false\n")
        .file("START.md", "[[START]]\n");
    fake(&test).rule("a", "", Reply::text("<result>ok</result>"));
    let outcome = test.run_workflow(&[]);
    outcome.status(0);
    let call = &calls(&outcome)[0];
    assert_eq!(call.flag("--permission-mode"), Some("acceptEdits"));
    assert!(!call.has("--dangerously-skip-permissions"));
    // The flag beats the config.
    let again = outcome.rerun(["run", "wf", "--run-id", "again", "--dangerously-skip-permissions"]);
    again.status(0);
    let call = &calls(&again)[1];
    assert!(call.has("--dangerously-skip-permissions"));
    assert_eq!(call.flag("--permission-mode"), None);
}

#[test]
fn r5_22_invalid_model_flag_is_refused_with_the_valid_ones() {
    let test = Test::new().with_fake_claude().file("START.md", "[[START]]\n");
    let outcome = test.run_workflow(&["--model", "gpt"]);
    outcome.status(1).stdout("");
    assert_eq!(
        outcome.error_message(),
        "error: invalid value `gpt` for --model: expected one of opus, sonnet, haiku (`gpt` is a Codex model: `--backend codex`?)"
    );
    assert!(calls(&outcome).is_empty());
    assert!(!outcome.run_dir("test").exists(), "no run is created");
}

#[test]
fn r5_22_invalid_effort_flag_is_refused_with_the_valid_ones() {
    let outcome = Test::new().with_fake_claude().file("START.md", "[[START]]\n").run_workflow(&["--effort", "huge"]);
    outcome.status(1).stdout("");
    assert_eq!(
        outcome.error_message(),
        "error: invalid value `huge` for --effort: expected one of low, medium, high, xhigh, max"
    );
}

#[test]
fn config_unknown_key_is_refused_with_did_you_mean() {
    let outcome = Test::new()
        .with_fake_claude()
        .write(".baton/config.toml", "modle = \"opus\"\n")
        .file("START.md", "[[START]]\n")
        .run_workflow(&[]);
    outcome.status(1).stdout("");
    assert_eq!(
        outcome.error_message(),
        "error: [ROOT]/.baton/config.toml: unknown key `modle`; did you mean `model`? (valid keys: backend, model, \
         effort, dangerously_skip_permissions, claude_bin, pi_bin, codex_bin, budget, timeout, no_wait, no_debug, \
         verbose, name, engine, otel)"
    );
    assert!(calls(&outcome).is_empty());
}

#[test]
fn config_invalid_model_is_refused() {
    let outcome = Test::new()
        .with_fake_claude()
        .write(".baton/config.toml", "model = \"gpt\"\n")
        .file("START.md", "[[START]]\n")
        .run_workflow(&[]);
    outcome.status(1).stdout("");
    assert_eq!(
        outcome.error_message(),
        "error: [ROOT]/.baton/config.toml: invalid model `gpt`: expected one of opus, sonnet, haiku (`gpt` is a Codex model: `backend: codex`?)"
    );
}

#[test]
fn r5_22_frontmatter_model_is_passed_through_without_validation() {
    let test = Test::new()
        .with_fake_claude()
        .file("START.md", &with_frontmatter("model: claude-opus-4-1\neffort: extreme", "[[START]]\n"));
    fake(&test).rule("a", "", Reply::text("<result>ok</result>"));
    let outcome = test.run_workflow(&["--no-lint"]);
    outcome.status(0).stdout("ok\n");
    let call = &calls(&outcome)[0];
    assert_eq!(call.flag("--model"), Some("claude-opus-4-1"));
    assert_eq!(call.flag("--effort"), Some("extreme"));
}

#[test]
fn r3_15_continue_session_first_markdown_attempt_uses_c_fork_session() {
    // §16 item 54, R3.15 and R12.1: `--continue-session` makes the main agent's first
    // markdown turn `-c --fork-session` (no --resume); later turns resume as usual.
    let test = Test::new().with_fake_claude().file("START.md", "[[START]]\n").file("NEXT.md", "[[NEXT]]\n");
    fake(&test).rule("a", "[[START]]", Reply::text("<goto>NEXT</goto>")).rule(
        "b",
        "[[NEXT]]",
        Reply::text("<result>done</result>"),
    );
    let outcome = test.run_workflow(&["--continue-session"]);
    outcome.status(0).stdout("done\n");
    let calls = calls(&outcome);
    let common = "-p --output-format stream-json --verbose --dangerously-skip-permissions --model sonnet";
    assert_eq!(
        calls[0].argv,
        argv(&format!("{common} -c --fork-session --session-id <uuid> --disallowed-tools {DISALLOWED}"))
    );
    assert_eq!(calls[1].argv, argv(&format!("{common} --resume fake-session-1 --disallowed-tools {DISALLOWED}")));
}

/// The arguments after Baton's `--disallowed-tools …` (where a state's Claude options go).
fn after_disallowed(call: &crate::support::fake_claude::Call) -> Vec<String> {
    let at = call.argv.iter().position(|arg| arg == "--disallowed-tools").expect("--disallowed-tools");
    call.argv[at + 2..].to_vec()
}

#[test]
fn claude_options_from_frontmatter_become_exactly_these_arguments() {
    let frontmatter = "permission_mode: plan\ntools: [Read, Grep]\nallowed_tools: 'Read, Bash(git diff:*)'\n\
                       disallowed_tools: [WebFetch, NotebookEdit]\nmax_turns: 7\nfallback_model: Haiku\n\
                       append_system_prompt: Stay read-only.\nmcp_config: [mcp.json, {mcpServers: {}}]\n\
                       settings: conf/settings.json\nadd_dirs: [../shared, /abs/dir]\n\
                       output_schema: {type: object, properties: {verdict: {type: string}}}";
    let test = Test::new()
        .with_fake_claude()
        .file("START.md", &with_frontmatter(frontmatter, "[[START]]\n"))
        .file("mcp.json", "{\"mcpServers\": {}}\n")
        .file("conf/settings.json", "{}\n");
    fake(&test).rule("a", "", Reply::text("<result>ok</result>"));
    let outcome = test.run_workflow(&[]);
    outcome.status(0).stdout("ok\n");
    let calls = calls(&outcome);
    let call = &calls[0];
    let wf = std::path::Path::new(call.flag("--mcp-config").expect("--mcp-config")).parent().unwrap().to_path_buf();
    assert_eq!(wf.canonicalize().unwrap(), outcome.root().join("wf").canonicalize().unwrap());
    let cwd = std::path::Path::new(&call.cwd);
    let (mcp, settings, shared) = (
        wf.join("mcp.json").to_string_lossy().into_owned(),
        wf.join("conf/settings.json").to_string_lossy().into_owned(),
        cwd.join("../shared").to_string_lossy().into_owned(),
    );
    let disallowed = format!("{DISALLOWED},WebFetch");
    let expected = [
        "-p",
        "--output-format",
        "stream-json",
        "--verbose",
        "--permission-mode",
        "plan",
        "--model",
        "sonnet",
        "--session-id",
        "<uuid>",
        "--disallowed-tools",
        &disallowed,
        "--tools",
        "Read,Grep",
        "--allowed-tools",
        "Read,Bash(git diff:*)",
        "--max-turns",
        "7",
        "--fallback-model",
        "haiku",
        "--append-system-prompt",
        "Stay read-only.",
        "--mcp-config",
        &mcp,
        r#"{"mcpServers":{}}"#,
        "--strict-mcp-config",
        "--settings",
        &settings,
        "--add-dir",
        &shared,
        "--add-dir",
        "/abs/dir",
        "--json-schema",
        r#"{"properties":{"verdict":{"type":"string"}},"type":"object"}"#,
    ];
    assert_eq!(call.argv, expected);
}

#[test]
fn a_states_permission_mode_wins_over_the_runs_choice_in_both_directions() {
    let test = Test::new()
        .with_fake_claude()
        .file("START.md", &with_frontmatter("permission_mode: plan", "[[A]] <goto>B</goto>\n"))
        .file("B.md", &with_frontmatter("permission_mode: bypassPermissions", "[[B]]\n"))
        .file("C.md", "[[C]]\n");
    fake(&test)
        .rule("a", "[[A]]", Reply::text("<goto>B</goto>"))
        .rule("b", "[[B]]", Reply::text("<goto>C</goto>"))
        .rule("c", "[[C]]", Reply::text("<result>ok</result>"));
    let permissions = |outcome: &crate::support::Outcome| -> Vec<String> {
        ["[[A]]", "[[B]]", "[[C]]"]
            .iter()
            .map(|marker| {
                let call = &calls_for(outcome, marker)[0];
                match call.flag("--permission-mode") {
                    Some(mode) => mode.to_string(),
                    None if call.has("--dangerously-skip-permissions") => "skip".to_string(),
                    None => "-".to_string(),
                }
            })
            .collect()
    };
    let skipping = test.run_workflow(&[]);
    skipping.status(0).stdout("ok\n");
    assert_eq!(permissions(&skipping), ["plan", "bypassPermissions", "skip"]);
    for call in calls(&skipping).iter().take(2) {
        assert!(!call.has("--dangerously-skip-permissions"), "{:?}", call.argv);
    }
    let careful = skipping.rerun(["run", "wf", "--run-id", "careful", "--dangerously-skip-permissions=false"]);
    careful.status(0).stdout("ok\n");
    let all = calls(&careful);
    let modes: Vec<&str> = all[3..].iter().map(|call| call.flag("--permission-mode").unwrap_or("-")).collect();
    assert_eq!(modes, ["plan", "bypassPermissions", "acceptEdits"]);
}

#[test]
fn no_tools_is_passed_as_an_empty_argument() {
    let test = Test::new().with_fake_claude().file("START.md", &with_frontmatter("tools: ''", "[[START]]\n"));
    fake(&test).rule("a", "", Reply::text("<result>ok</result>"));
    let outcome = test.run_workflow(&[]);
    outcome.status(0).stdout("ok\n");
    assert_eq!(after_disallowed(&calls(&outcome)[0]), ["--tools", ""]);
}

#[test]
fn a_yaml_workflows_prompt_state_takes_the_same_options_relative_to_the_files_directory() {
    let yaml = "states:\n  START:\n    prompt: '[[START]]'\n    allowed_tools: [Read]\n    max_turns: 3\n    \
                settings: flow-settings.json\n";
    let test = Test::new().with_fake_claude().write("flow.yaml", yaml).write("flow-settings.json", "{}\n");
    fake(&test).rule("a", "", Reply::text("<result>ok</result>"));
    let outcome = test.args(["run", "flow.yaml", "--run-id", "test"]).run();
    outcome.status(0).stdout("ok\n");
    let call = &calls(&outcome)[0];
    let settings = outcome.root().join("flow-settings.json").canonicalize().unwrap();
    let tail = after_disallowed(call);
    assert_eq!(tail[..4], ["--allowed-tools", "Read", "--max-turns", "3"]);
    assert_eq!(tail[4], "--settings");
    assert_eq!(std::path::Path::new(&tail[5]).canonicalize().unwrap(), settings);
}

#[test]
fn a_missing_mcp_config_file_pauses_the_agent_before_any_turn() {
    let test =
        Test::new().with_fake_claude().file("START.md", &with_frontmatter("mcp_config: servers.json", "[[START]]\n"));
    fake(&test).rule("a", "", Reply::text("<result>ok</result>"));
    let outcome = test.run_workflow(&[]);
    outcome.status(3);
    assert!(calls(&outcome).is_empty());
    let state = outcome.state("test");
    assert_eq!(state["agents"][0]["pause_reason"], "prompt_error");
    let error = state["agents"][0]["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("`mcp_config` names `servers.json`, which is no file") && error.contains("workflow's directory"),
        "{error}"
    );
}
