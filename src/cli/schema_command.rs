//! `baton schema frontmatter|yaml-workflow|test`: JSON Schemas for editors, so a
//! prompt's frontmatter, a YAML workflow and a test file (`docs/testing.md`) can be
//! validated and completed as they are typed.
//! The YAML workflow schema states R13.4–R13.6, which `YamlWorkflow` enforces.

use std::io::Write;

use clap::ValueEnum;
use serde_json::Value;

use crate::cli::CliError;
use crate::exit_code;

const FRONTMATTER: &str = include_str!("../../schemas/frontmatter.schema.json");
const YAML_WORKFLOW: &str = include_str!("../../schemas/yaml-workflow.schema.json");
const TEST: &str = include_str!("../../schemas/test.schema.json");

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum SchemaKind {
    /// A prompt state's frontmatter.
    Frontmatter,
    /// A YAML workflow file.
    YamlWorkflow,
    /// A test file of `baton test`.
    Test,
}

/// The schema, self-contained: the YAML workflow schema gets the policy and
/// Claude option definitions from the frontmatter schema, so the two cannot drift apart.
pub(crate) fn schema(kind: SchemaKind) -> Value {
    let parse = |text: &str| serde_json::from_str::<Value>(text).unwrap_or(Value::Null);
    let frontmatter = parse(FRONTMATTER);
    match kind {
        SchemaKind::Frontmatter => frontmatter,
        SchemaKind::YamlWorkflow => {
            let mut workflow = parse(YAML_WORKFLOW);
            if let Some(defs) = workflow.get_mut("$defs").and_then(Value::as_object_mut) {
                // The policy and the Claude options, so the two schemas cannot drift apart.
                if let Some(shared) = frontmatter["$defs"].as_object() {
                    for (name, definition) in shared {
                        defs.entry(name.clone()).or_insert_with(|| definition.clone());
                    }
                }
            }
            workflow
        }
        SchemaKind::Test => parse(TEST),
    }
}

pub(crate) fn print_schema(kind: SchemaKind) -> Result<i32, CliError> {
    let text = serde_json::to_string_pretty(&schema(kind)).unwrap_or_default();
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{text}").map_err(|source| CliError::Stdout { source })?;
    Ok(exit_code::COMPLETED)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_schema_parses_and_the_workflow_one_carries_the_policy() {
        assert_eq!(schema(SchemaKind::Frontmatter)["type"], "object");
        let workflow = schema(SchemaKind::YamlWorkflow);
        assert_eq!(workflow["$defs"]["policy"]["type"], "array");
        assert_eq!(schema(SchemaKind::Test)["properties"]["expect"]["type"], "object");
    }

    /// Regression: the schemas knew only Claude's options, so an editor flagged a
    /// pi or Codex state's valid keys.
    #[test]
    fn the_schemas_know_every_backends_options() {
        let frontmatter = schema(SchemaKind::Frontmatter);
        let workflow = schema(SchemaKind::YamlWorkflow);
        let prompt_state = &workflow["$defs"]["state"]["oneOf"][0]["properties"];
        for key in crate::backend::profile::all_option_keys().chain(["backend"]) {
            assert!(frontmatter["properties"].get(key).is_some(), "the frontmatter schema lacks `{key}`");
            assert!(prompt_state.get(key).is_some(), "the YAML workflow schema's prompt state lacks `{key}`");
        }
    }
}
