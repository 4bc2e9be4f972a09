//! One minimal failing workflow per check id, with its exact diagnostic.

use super::golden;

const DONE: (&str, &str) = ("DONE.md", "Finish with <result>done</result>.\n");

#[test]
fn a_clean_workflow_yields_nothing() {
    golden(&[("START.md", "Work, then <goto>DONE</goto>.\n"), DONE], 0, "wf: no issues found\n");
}

#[test]
fn no_entry_point() {
    golden(
        &[DONE],
        1,
        "wf: error[no-entry-point]: workflow `wf` has no entry point: expected a `1_START` or `START` state \
         (1_START.md, 1_START.sh, START.md or START.sh)\nwf: 1 error\n",
    );
}

#[test]
fn ambiguous_entry_point() {
    golden(
        &[("1_START.md", "<goto>DONE</goto>\n"), ("START.md", "<goto>DONE</goto>\n"), DONE],
        1,
        "wf: error[ambiguous-entry-point]: workflow `wf` has an ambiguous entry point: both 1_START.md and START.md exist\nwf: 1 error\n",
    );
}

#[test]
fn frontmatter_parse_error() {
    golden(
        &[("START.md", "---\nallowed_transitions: [\n---\n<goto>DONE</goto>\n"), DONE],
        1,
        "wf/START.md:3:1: error[frontmatter-parse-error]: Invalid YAML frontmatter: while parsing a node, did not find expected node content\nwf: 1 error\n",
    );
}

#[test]
fn invalid_model() {
    golden(
        &[("START.md", "---\nmodel: sonet\n---\n<goto>DONE</goto>\n"), DONE],
        1,
        "wf/START.md:2:1: error[invalid-model]: model `sonet` is not a Claude Code model (an alias such as opus, sonnet or haiku, or a full name such as `claude-sonnet-4-5`); did you mean `sonnet`?\nwf: 1 error\n",
    );
}

#[test]
fn invalid_model_accepts_full_model_names() {
    golden(
        &[("START.md", "---\nmodel: claude-sonnet-4-5-20250929[1m]\neffort: xhigh\n---\n<goto>DONE</goto>\n"), DONE],
        0,
        "wf: no issues found\n",
    );
}

#[test]
fn invalid_model_in_fallback_model() {
    golden(
        &[("START.md", "---\nmodel: opus\nfallback_model: haiku, sonet\n---\n<goto>DONE</goto>\n"), DONE],
        1,
        "wf/START.md:3:1: error[invalid-model]: fallback model `sonet` is not a Claude Code model (an alias such as opus, sonnet or haiku, or a full name such as `claude-sonnet-4-5`); did you mean `sonnet`?\nwf: 1 error\n",
    );
}

#[test]
fn claude_options_are_known_fields() {
    let frontmatter = "---\npermission_mode: plan\ntools: [Read, Grep]\nallowed_tools: [Read]\ndisallowed_tools: Bash\n\
                       max_turns: 3\nfallback_model: haiku\nappend_system_prompt: Be brief.\nmcp_config: mcp.json\n\
                       settings: {model: haiku}\nadd_dirs: [../shared]\noutput_schema: {type: object}\n---\n";
    golden(&[("START.md", &format!("{frontmatter}<goto>DONE</goto>\n")), DONE], 0, "wf: no issues found\n");
}

#[test]
fn unknown_field_suggests_a_claude_option() {
    golden(
        &[("START.md", "---\npermision_mode: plan\n---\n<goto>DONE</goto>\n"), DONE],
        0,
        "wf/START.md:2:1: warning[unknown-field]: unknown field `permision_mode`, ignored at run time; did you mean `permission_mode`?\nwf: 1 warning\n",
    );
}

#[test]
fn frontmatter_parse_error_at_a_claude_option() {
    golden(
        &[("START.md", "---\nmodel: opus\npermission_mode: readonly\n---\n<goto>DONE</goto>\n"), DONE],
        1,
        "wf/START.md:3:1: error[frontmatter-parse-error]: Invalid YAML frontmatter: `permission_mode` must be one of acceptEdits, auto, bypassPermissions, manual, dontAsk, plan, found the text \"readonly\"\nwf: 1 error\n",
    );
}

#[test]
fn invalid_effort() {
    golden(
        &[("START.md", "---\neffort: hgh\n---\n<goto>DONE</goto>\n"), DONE],
        1,
        "wf/START.md:2:1: error[invalid-effort]: effort `hgh` is not a Claude Code effort level (low, medium, high, xhigh, max); did you mean `high`?\nwf: 1 error\n",
    );
}

#[test]
fn missing_target() {
    golden(
        &[("START.md", "Review it, then\n  <goto>REVEIW</goto>\n"), ("REVIEW.md", "<result>ok</result>\n")],
        1,
        "wf/REVIEW.md:1:1: warning[unreachable-state]: no transition leads to `REVIEW.md` from `START.md`; it never runs\nwf/START.md:2:3: error[missing-target]: `<goto>` target `REVEIW` is not a state of this workflow; did you mean `REVIEW.md`?\nwf: 1 error, 1 warning\n",
    );
}

#[test]
fn missing_target_in_ask_timeout_next_and_fork_next() {
    golden(
        &[
            (
                "START.md",
                "<ask next=\"DONE\" timeout=\"60\" timeout_next=\"GONE\">Go?</ask>\n<fork next=\"JOIN\">DONE</fork>\n",
            ),
            DONE,
        ],
        1,
        "wf/START.md:1:1: error[missing-target]: `<ask>` timeout_next=\"GONE\" is not a state of this workflow; did you mean `DONE.md`?\nwf/START.md:2:1: error[missing-target]: `<fork>` next=\"JOIN\" is not a state of this workflow\nwf: 2 errors\n",
    );
}

#[test]
fn missing_return() {
    golden(
        &[("START.md", "<call>SUB</call>\n<call return=\"BACK\">SUB</call>\n"), ("SUB.md", "<result>x</result>\n")],
        1,
        "wf/START.md:1:1: error[missing-return]: `<call>` has no `return` attribute: the state the `<result>` of `SUB` comes back to\nwf/START.md:2:1: error[missing-return]: `<call>` return=\"BACK\" is not a state of this workflow\nwf: 2 errors\n",
    );
}

#[test]
fn missing_fork_next() {
    golden(
        &[("START.md", "<fork>WORKER</fork>\n"), ("WORKER.md", "<result>x</result>\n")],
        1,
        "wf/START.md:1:1: error[missing-fork-next]: `<fork>` has no `next` attribute and the state shows no `<goto>` or `<join>`: the forking agent has nowhere to continue\nwf: 1 error\n",
    );
}

#[test]
fn ambiguous_state_resolution() {
    golden(
        &[
            ("START.md", "<goto>POLL</goto>\n"),
            ("POLL.md", "<result>x</result>\n"),
            ("POLL.sh", "echo '<result>x</result>'\n"),
        ],
        1,
        "wf/START.md:1:1: error[ambiguous-state-resolution]: `<goto>` target `POLL` is ambiguous: both POLL.md and POLL.sh exist; write the file name with its extension\nwf: 1 error\n",
    );
}

#[test]
fn force_implicit_invalid() {
    golden(
        &[
            (
                "START.md",
                "---\nforce_implicit: true\nallowed_transitions:\n  - {tag: goto, target: DONE}\n  - {tag: result}\n---\n<goto>DONE</goto> or <result>x</result>\n",
            ),
            DONE,
        ],
        1,
        "wf/START.md:2:1: error[force-implicit-invalid]: `force_implicit: true` needs exactly one `allowed_transitions` entry that is a `result` with a `payload` or another tag (not `ask`) with a `target`; this state has 2 entries\nwf: 1 error\n",
    );
}

/// Issue 19, item 7: under `force_implicit` the output is never parsed (R5.14), so
/// the tags a prompt shows as examples are no transitions; lint reported
/// `missing-target` for raymond's `force_implicit_ok` fixture, and `baton run` refused it.
#[test]
fn r5_14_lint_refused_example_tags_in_a_force_implicit_prompt() {
    const START: &str = "---\nallowed_transitions:\n  - tag: goto\n    target: DONE\nforce_implicit: true\n---\nDiscuss things; tag examples like <goto>X</goto> will be ignored.\n";
    golden(&[("1_START.md", START), ("DONE.md", "<result></result>\n")], 0, "wf: no issues found\n");
}

/// Every check that reads a body tag leaves a `force_implicit` prompt's tags alone:
/// a malformed tag, a fork without `next`, a call without `return`, an unknown
/// workflow, and a state only the examples name (which is unreachable).
#[test]
fn r5_14_no_check_reads_the_body_tags_of_a_force_implicit_prompt() {
    let start = "---\nallowed_transitions:\n  - {tag: goto, target: DONE}\nforce_implicit: true\n---\nTags look like \
                 <goto>a/b</goto>, <fork>W</fork>, <call>SUB</call>, <ask>no next</ask>, \
                 <call-workflow>../nowhere/</call-workflow>, <reset task=\"old\">ORPHAN</reset>.\n";
    golden(
        &[("START.md", start), DONE, ("ORPHAN.md", "<result>x</result>\n")],
        0,
        "wf/ORPHAN.md:1:1: warning[unreachable-state]: no transition leads to `ORPHAN.md` from `START.md`; it never runs\nwf: 1 warning\n",
    );
}

#[test]
fn invalid_task_value() {
    golden(
        &[("START.md", "<fork next=\"DONE\" task=\"old\">DONE</fork>\n"), DONE],
        1,
        "wf/START.md:1:1: error[invalid-task-value]: `<fork>` has task=\"old\"; expected `new` or `inherit`\nwf: 1 error\n",
    );
}

#[test]
fn invalid_isolation_value() {
    golden(
        &[("START.md", "<fork next=\"DONE\" isolation=\"worktre\">DONE</fork>\n"), DONE],
        1,
        "wf/START.md:1:1: error[invalid-isolation-value]: `<fork>` has isolation=\"worktre\"; expected `worktree` \
         (or `none`); did you mean `worktree`?\nwf: 1 error\n",
    );
}

#[test]
fn unsupported_task_attribute() {
    golden(
        &[("START.md", "<goto task=\"new\">MID</goto>\n"), ("MID.md", "<reset task=\"inherit\">DONE</reset>\n"), DONE],
        1,
        "wf/MID.md:1:1: error[unsupported-task-attribute]: `<reset>` does not take task=\"inherit\": a reset keeps its task folder already\nwf/START.md:1:1: error[unsupported-task-attribute]: `<goto>` does not take a `task` attribute; only reset, fork and their -workflow forms do\nwf: 2 errors\n",
    );
}

#[test]
fn missing_ask_next() {
    golden(
        &[
            (
                "START.md",
                "---\nallowed_transitions:\n  - tag: ask\n  - {tag: goto, target: DONE}\n---\nAsk <ask>Which one?</ask> or <goto>DONE</goto>\n",
            ),
            DONE,
        ],
        1,
        "wf/START.md:3:5: error[missing-ask-next]: `allowed_transitions` entry 1 (`tag: ask`) has no `next`: the state the agent goes to once answered\nwf/START.md:6:5: error[missing-ask-next]: <ask> needs a non-empty `next` attribute; a run stops if the agent emits this `<ask>`\nwf: 2 errors\n",
    );
}

/// An `ask` entry is the example the agent copies: its timeout is checked too.
#[test]
fn invalid_ask_timeout_in_a_policy_entry() {
    golden(
        &[
            (
                "START.md",
                "---\nallowed_transitions:\n  - {tag: ask, next: DONE, timeout: soon}\n---\nAsk, then DONE.\n",
            ),
            DONE,
        ],
        1,
        "wf/START.md:3:28: error[invalid-ask-timeout]: `allowed_transitions` entry 1 (`tag: ask`): <ask> `timeout` `soon` is not a duration; expected a number of seconds or a duration such as 90s, 30m, 24h or 7d\nwf: 1 error\n",
    );
}

/// Issue 19: `<ask timeout="banana">` passed lint and never timed out.
#[test]
fn invalid_ask_timeout() {
    golden(
        &[
            (
                "START.md",
                "Ask <ask next=\"DONE\" timeout=\"banana\">Ready?</ask>\n<ask next=\"DONE\" timeout=\"1h\" timeout_next=\"../DONE\">Sure?</ask>\nOr <goto>DONE</goto>\n",
            ),
            DONE,
        ],
        1,
        "wf/START.md:1:5: error[invalid-ask-timeout]: <ask> `timeout` `banana` is not a duration; expected a number of seconds or a duration such as 90s, 30m, 24h or 7d; a run stops if the agent emits this `<ask>`\nwf/START.md:2:1: error[invalid-ask-timeout]: <ask> `timeout_next` value `../DONE` contains a path separator; expected a bare state name in the same workflow; a run stops if the agent emits this `<ask>`\nwf: 2 errors\n",
    );
}

#[test]
fn unsupported_cd_attribute() {
    golden(
        &[("START.md", "<ask next=\"DONE\" cd=\"sub\">Ready?</ask>\n"), DONE],
        1,
        "wf/START.md:1:1: error[unsupported-cd-attribute]: `<ask>` does not take a `cd` attribute: the agent stays where it is\nwf: 1 error\n",
    );
}

#[test]
fn invalid_tag() {
    golden(
        &[
            (
                "START.md",
                "---\nallowed_transitions:\n  - {tag: goot, target: DONE}\n  - {tag: goto, target: DONE}\n---\n<goto>DONE</goto> <goto>a/b</goto>\n",
            ),
            DONE,
        ],
        1,
        "wf/START.md:3:6: error[invalid-tag]: `allowed_transitions` entry 1 has `tag: goot`, which is no transition tag; did you mean `goto`?\nwf/START.md:6:19: error[invalid-tag]: <goto> target `a/b` contains a path separator; targets are bare state names in the same workflow; a run stops if the agent emits this `<goto>`\nwf: 2 errors\n",
    );
}

#[test]
fn fork_next_mismatch() {
    golden(
        &[
            ("START.md", "<fork next=\"DONE\">W</fork>\n<fork next=\"JOIN\">W</fork>\n"),
            ("W.md", "<result>x</result>\n"),
            ("JOIN.md", "<result>x</result>\n"),
            DONE,
        ],
        0,
        "wf/START.md:2:1: warning[fork-next-mismatch]: the fork tags disagree on `next`: `JOIN` here, `DONE` at line 1; the forking agent continues at one state\nwf: 1 warning\n",
    );
}

#[test]
fn unused_allowed_transition() {
    golden(
        &[
            (
                "START.md",
                "---\nallowed_transitions:\n  - {tag: goto, target: DONE}\n  - {tag: goto, target: REVIEW}\n---\nWhen finished, go to DONE.\n",
            ),
            DONE,
            ("REVIEW.md", "<goto>DONE</goto>\n"),
        ],
        0,
        "wf/START.md:4:17: warning[unused-allowed-transition]: `allowed_transitions` entry 2 allows `<goto>` to `REVIEW`, but the prompt never mentions `REVIEW`\nwf: 1 warning\n",
    );
}

#[test]
fn unreachable_state() {
    golden(
        &[("START.md", "<goto>DONE</goto>\n"), DONE, ("ORPHAN.md", "<goto>DONE</goto>\n")],
        0,
        "wf/ORPHAN.md:1:1: warning[unreachable-state]: no transition leads to `ORPHAN.md` from `START.md`; it never runs\nwf: 1 warning\n",
    );
}

#[test]
fn dead_end_state() {
    golden(
        &[("START.md", "<goto>STUCK</goto>\n"), ("STUCK.md", "Think about it.\n")],
        0,
        "wf/STUCK.md:1:1: warning[dead-end-state]: the prompt shows no transition tag and has no `allowed_transitions`: the agent has no way to leave this state\nwf: 1 warning\n",
    );
}

#[test]
fn call_without_result_path() {
    golden(
        &[
            ("START.md", "<call return=\"DONE\">SUB</call>\n"),
            ("SUB.md", "<goto>LOOP</goto>\n"),
            ("LOOP.md", "<goto>SUB</goto>\n"),
            DONE,
        ],
        0,
        "wf/START.md:1:1: warning[call-without-result-path]: `<call>` to `SUB` never returns: no state the callee reaches from `SUB.md` emits `<result>`\nwf: 1 warning\n",
    );
}

#[test]
fn unknown_field() {
    golden(
        &[
            ("START.md", "---\nforce_implcit: true\nallowed_transitions:\n  - {tag: goto, target: DONE}\n---\nGo.\n"),
            DONE,
        ],
        0,
        "wf/START.md:2:1: warning[unknown-field]: unknown field `force_implcit`, ignored at run time; did you mean `force_implicit`?\nwf/START.md:3:1: info[implicit-transition]: the only allowed transition, `<goto>DONE</goto>`, is taken when the agent emits no tag\nwf: 1 warning, 1 info\n",
    );
}

#[test]
fn implicit_transition() {
    golden(
        &[("START.md", "---\nallowed_transitions:\n  - {tag: goto, target: DONE}\n---\nDo the work.\n"), DONE],
        0,
        "wf/START.md:2:1: info[implicit-transition]: the only allowed transition, `<goto>DONE</goto>`, is taken when the agent emits no tag\nwf: 1 info\n",
    );
}

#[test]
fn script_state_no_static_analysis() {
    golden(
        &[
            ("START.sh", "#!/bin/bash\n# <goto>NOT_A_TAG</goto> in a comment\necho \"<goto>$NEXT</goto>\"\n"),
            ("PICK.sh", "cat decision.txt\n"),
        ],
        0,
        "wf/PICK.sh:1:1: warning[unreachable-state]: no transition leads to `PICK.sh` from `START.sh`; it never runs\nwf/PICK.sh:1:1: info[script-state-no-static-analysis]: the script prints no transition tag literally; where it goes is decided at run time and cannot be checked\nwf/START.sh:3:7: info[script-state-no-static-analysis]: `<goto>$NEXT</goto>` is built at run time; its target cannot be checked before the script runs\nwf: 1 warning, 2 info\n",
    );
}

#[test]
fn script_literal_tags_are_checked() {
    golden(
        &[
            (
                "START.sh",
                "#!/bin/bash\nif make; then\n  echo \"<goto next=\\\"X\\\">DONE</goto>\"\nelse\n  echo '<goto>FIXX</goto>'\nfi\n",
            ),
            ("FIX.md", "<goto>START</goto>\n"),
            DONE,
        ],
        1,
        "wf/FIX.md:1:1: warning[unreachable-state]: no transition leads to `FIX.md` from `START.sh`; it never runs\nwf/START.sh:5:9: error[missing-target]: `<goto>` target `FIXX` is not a state of this workflow; did you mean `FIX.md`?\nwf: 1 error, 1 warning\n",
    );
}

#[test]
fn unreadable_state() {
    let test =
        crate::support::Test::new().file("START.md", "<goto>BAD</goto> or <goto>DONE</goto>\n").file(DONE.0, DONE.1);
    std::fs::write(test.root().join("wf/BAD.md"), b"caf\xe9 <result>x</result>\n").expect("write");
    let outcome = test.args(["lint", "wf"]).run();
    outcome.status(1).stdout(
        "wf/BAD.md:1:1: error[unreadable-state]: cannot read state `BAD.md`: it is not UTF-8 text (first invalid \
         byte at offset 3)\nwf: 1 error\n",
    );
}

#[test]
fn invalid_manifest_lint_passed_a_workflow_yaml_the_run_refuses() {
    golden(
        &[("START.sh", "echo '<result>ok</result>'\n"), ("workflow.yaml", "id: wf\ninput: [not, a, mapping\n")],
        1,
        "wf/workflow.yaml: error[invalid-manifest]: manifest: invalid YAML: while parsing a flow sequence, expected ',' \
         or ']' at byte 31 line 3 column 1\nwf: 1 error\n",
    );
}

/// Issue 19: `input: required` (a string where a mapping belongs) was read as no
/// `input` at all, so lint passed and a run went ahead without the input the
/// author asked for. It is now an invalid manifest, for lint and run alike.
#[test]
fn invalid_manifest_input_that_is_not_a_mapping_is_refused() {
    golden(
        &[("START.sh", "echo '<result>ok</result>'\n"), ("workflow.yaml", "id: wf\ninput: required\n")],
        1,
        "wf/workflow.yaml: error[invalid-manifest]: manifest: `input` must be a mapping (`input: {mode: required}`)\nwf: \
         1 error\n",
    );
    let outcome = crate::support::Test::new()
        .file("START.sh", "echo '<result>ok</result>'\n")
        .file("workflow.yaml", "id: wf\ninput: required\n")
        .run_workflow(&[]);
    outcome.status(1);
    assert_eq!(
        outcome.error_message(),
        "error: manifest `[ROOT]/wf/workflow.yaml`: `input` must be a mapping (`input: {mode: required}`)"
    );
}

#[test]
fn unknown_backend_at_the_states_line_with_did_you_mean() {
    golden(
        &[("START.md", "---\nbackend: codx\n---\n<goto>DONE</goto>\n"), DONE],
        1,
        "wf/START.md:2:1: error[unknown-backend]: `backend`: unknown backend `codx`: expected one of claude, pi, \
         codex; did you mean `codex`?\nwf: 1 error\n",
    );
}

#[test]
fn invalid_model_of_another_backend_names_its_owner() {
    golden(
        &[("START.md", "---\nmodel: gpt-5\n---\n<goto>DONE</goto>\n"), DONE],
        1,
        "wf/START.md:2:1: error[invalid-model]: model `gpt-5` is not a Claude Code model (an alias such as opus, \
         sonnet or haiku, or a full name such as `claude-sonnet-4-5`); it is a Codex model: `backend: codex`?\n\
         wf: 1 error\n",
    );
}

#[test]
fn invalid_model_a_claude_model_on_a_codex_state_names_claude() {
    golden(
        &[("START.md", "---\nbackend: codex\nmodel: sonnet\n---\n<result>done</result>\n")],
        1,
        "wf/START.md:3:1: error[invalid-model]: model `sonnet` is not a Codex model; expected an OpenAI model such \
         as `gpt-5-codex` or `gpt-5` (it is a Claude Code model: `backend: claude`?)\nwf: 1 error\n",
    );
}

#[test]
fn invalid_manifest_backend_option_no_backend_takes_is_reported_once() {
    golden(
        &[
            ("workflow.yaml", "id: x\nbackend: {name: pi, options: {bogus: 1}}\n"),
            ("START.md", "<goto>DONE</goto>\n"),
            DONE,
        ],
        1,
        "wf/workflow.yaml: error[invalid-manifest]: manifest: `backend.options` has `bogus`, which no backend takes; \
         pi takes provider, thinking, tools, no_builtin_tools, no_tools, no_extensions, no_skills, extensions, \
         skills, session_dir, append_system_prompt\nwf: 1 error\n",
    );
}

#[test]
fn invalid_manifest_backend_option_value_is_reported_once() {
    golden(
        &[
            ("workflow.yaml", "id: x\nbackend:\n  name: pi\n  options: {thinking: huge}\n"),
            ("START.md", "<goto>DONE</goto>\n"),
            DONE,
        ],
        1,
        "wf/workflow.yaml: error[invalid-manifest]: manifest: `backend.options`: `thinking` must be one of off, \
         minimal, low, medium, high, xhigh, found the text \"huge\"\nwf: 1 error\n",
    );
}

#[test]
fn session_crosses_backend_on_a_goto_each_way() {
    golden(
        &[
            ("START.md", "---\nbackend: codex\n---\nImplement, then <goto>REVIEW</goto>.\n"),
            ("REVIEW.md", "Review: <goto>START</goto> or <goto>DONE</goto>.\n"),
            DONE,
        ],
        0,
        "wf/REVIEW.md:1:9: info[session-crosses-backend]: a session never crosses backends: `<goto>` from REVIEW.md \
         (claude) to START.md (codex) starts a fresh Codex conversation\n\
         wf/START.md:4:17: info[session-crosses-backend]: a session never crosses backends: `<goto>` from START.md \
         (codex) to REVIEW.md (claude) starts a fresh Claude Code conversation\nwf: 2 info\n",
    );
}

#[test]
fn session_crosses_backend_when_a_call_returns_to_another_backend() {
    golden(
        &[
            ("START.md", "Plan, then <call return=\"REVIEW\">WORK</call>.\n"),
            ("WORK.md", "Work, then <result>done</result>.\n"),
            ("REVIEW.md", "---\nbackend: pi\n---\nReview, then <goto>DONE</goto>.\n"),
            ("DONE.md", "---\nbackend: pi\n---\nFinish with <result>done</result>.\n"),
        ],
        0,
        "wf/START.md:1:12: info[session-crosses-backend]: a session never crosses backends: `<call>` from START.md \
         (claude) returns to REVIEW.md (pi), which starts a fresh pi conversation\nwf: 1 info\n",
    );
}

#[test]
fn session_crosses_backend_is_silent_for_a_manifest_backend_every_state_shares() {
    golden(
        &[("workflow.yaml", "id: x\nbackend: codex\n"), ("START.md", "Work, then <goto>DONE</goto>.\n"), DONE],
        0,
        "wf: no issues found\n",
    );
}
