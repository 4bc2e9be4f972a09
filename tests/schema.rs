//! `baton schema`: the JSON Schemas accept the project's own workflows and refuse
//! what Baton refuses (checked with the `jsonschema` crate, no network).

use serde_json::{Map, Value};
use yaml_rust2::{Yaml, YamlLoader};

use crate::support::Test;

fn schema(kind: &str) -> Value {
    let outcome = Test::new().args(["schema", kind]).run();
    outcome.status(0);
    serde_json::from_str(&outcome.stdout).expect("a JSON schema")
}

/// YAML (as `baton` reads it) as JSON, for the validator.
fn json_of(yaml: &Yaml) -> Value {
    match yaml {
        Yaml::Hash(map) => {
            let object: Map<String, Value> = map
                .iter()
                .map(|(key, value)| (key.as_str().map(str::to_string).unwrap_or_default(), json_of(value)))
                .collect();
            Value::Object(object)
        }
        Yaml::Array(items) => Value::Array(items.iter().map(json_of).collect()),
        Yaml::String(text) => Value::String(text.clone()),
        Yaml::Integer(number) => Value::from(*number),
        Yaml::Real(text) => text.parse::<f64>().map_or(Value::Null, Value::from),
        Yaml::Boolean(flag) => Value::Bool(*flag),
        _ => Value::Null,
    }
}

fn document(yaml: &str) -> Value {
    json_of(&YamlLoader::load_from_str(yaml).expect("YAML")[0])
}

#[test]
fn the_frontmatter_schema_accepts_the_samples_and_refuses_mistakes() {
    let validator = jsonschema::validator_for(&schema("frontmatter")).expect("a valid schema");
    for state in ["START.md", "IMPLEMENT.md", "REVIEW.md"] {
        let text =
            std::fs::read_to_string(format!("{}/states/review-loop/{state}", env!("CARGO_MANIFEST_DIR"))).unwrap();
        let frontmatter = text.split("---\n").nth(1).expect("frontmatter");
        assert!(validator.is_valid(&document(frontmatter)), "{state}");
    }
    assert!(!validator.is_valid(&document("allowed_transitions:\n  - {target: X}\n")), "an entry needs its tag");
    assert!(!validator.is_valid(&document("allowed_transitions:\n  - {tag: jump}\n")), "no such tag");
    assert!(!validator.is_valid(&document("force_implicit: \"yes\"\n")));
}

#[test]
fn the_frontmatter_schema_knows_the_claude_options() {
    let validator = jsonschema::validator_for(&schema("frontmatter")).expect("a valid schema");
    let good = "permission_mode: plan\ntools: ''\nallowed_tools: [Read, 'Bash(git diff:*)']\ndisallowed_tools: WebFetch\n\
                max_turns: 3\nfallback_model: haiku\nappend_system_prompt: Be brief.\n\
                mcp_config: [mcp.json, {mcpServers: {}}]\nsettings: {model: haiku}\nadd_dirs: ../shared\n\
                output_schema: {type: object}\n";
    assert!(validator.is_valid(&document(good)));
    for bad in [
        "permission_mode: readonly\n",
        "max_turns: 0\n",
        "max_turns: two\n",
        "tools: {Read: true}\n",
        "mcp_config: 3\n",
        "settings: [a.json]\n",
        "add_dirs: {a: b}\n",
        "output_schema: object\n",
    ] {
        assert!(!validator.is_valid(&document(bad)), "{bad}");
    }
}

#[test]
fn the_yaml_workflow_schema_states_what_baton_enforces() {
    let validator = jsonschema::validator_for(&schema("yaml-workflow")).expect("a valid schema");
    let good = "id: demo\nstates:\n  START:\n    prompt: Go\n    allowed_transitions: [{tag: goto, target: CHECK}]\n  \
                CHECK:\n    sh: echo '<result>ok</result>'\n    timeout: 30\n";
    assert!(validator.is_valid(&document(good)));
    let options = "states:\n  START:\n    prompt: Go\n    permission_mode: plan\n    allowed_tools: [Read]\n    \
                   settings: {model: haiku}\n";
    assert!(validator.is_valid(&document(options)));
    for bad in [
        "states:\n  A:\n    prompt: x\n    permission_mode: plna\n",
        "states:\n  A:\n    sh: x\n    allowed_tools: [Read]\n",
        "id: x\n",
        "states: {}\n",
        "states:\n  A:\n    prompt: x\n    sh: y\n",
        "states:\n  A:\n    promt: x\n",
        "states:\n  A:\n    sh: x\n    model: opus\n",
        "states:\n  A:\n    prompt: x\n    timeout: -1\n",
    ] {
        assert!(!validator.is_valid(&document(bad)), "{bad}");
    }
}

#[test]
fn the_test_schema_accepts_every_sample_test_and_refuses_mistakes() {
    let validator = jsonschema::validator_for(&schema("test")).expect("a valid schema");
    let states = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("states");
    let mut checked = 0;
    for workflow in std::fs::read_dir(states).unwrap().filter_map(Result::ok) {
        for test in std::fs::read_dir(workflow.path().join("tests")).into_iter().flatten().filter_map(Result::ok) {
            let text = std::fs::read_to_string(test.path()).unwrap();
            assert!(validator.is_valid(&document(&text)), "{}", test.path().display());
            checked += 1;
        }
    }
    assert!(checked >= 4, "every sample has tests");
    for bad in [
        "replys: {}\n",
        "replies: {START: \"<goto>X</goto>\"}\n",
        "replies: {START: [{cost_usd: 1}]}\n",
        "replies: {START: [{text: x, backend: gemini}]}\n",
        "replies: {START: [{text: x, backend: 3}]}\n",
        "scripts: {TEST: {exit_code: 300}}\n",
        "expect: {outcome: done}\n",
        "max_steps: 0\n",
    ] {
        assert!(!validator.is_valid(&document(bad)), "{bad}");
    }
}
