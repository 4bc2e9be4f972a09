//! The model and effort names Claude Code accepts (`claude --help`, model
//! configuration docs), for checks made before anything runs: `baton lint`, the
//! command line, config. Claude Code itself is the final judge; these lists only
//! have to avoid refusing what it accepts and catch what is plainly a typo.

/// Aliases `claude --model` takes, each also with the `[1m]` long-context suffix
/// where Claude Code offers it.
pub(crate) const MODEL_ALIASES: [&str; 10] =
    ["default", "best", "opus", "sonnet", "haiku", "fable", "opusplan", "opus[1m]", "sonnet[1m]", "fable[1m]"];

/// `claude --effort` levels.
pub(crate) const EFFORTS: [&str; 5] = ["low", "medium", "high", "xhigh", "max"];

/// Whether Claude Code could accept `model` (already trimmed and lowercased, as
/// frontmatter values are): an alias, a full model name (`claude-sonnet-4-5`,
/// Bedrock's `us.anthropic.claude-…`, Vertex's `claude-…@2025…`, each maybe with
/// `[1m]`), or a Bedrock ARN. Gateways and Foundry deployments can use other names;
/// those are the price of catching `sonet`.
pub(crate) fn is_model(model: &str) -> bool {
    MODEL_ALIASES.contains(&model) || model.contains("claude") || model.starts_with("arn:")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_and_full_names_are_models() {
        for model in ["opus", "sonnet[1m]", "opusplan", "claude-opus-4-1", "claude-sonnet-4-5-20250929[1m]"] {
            assert!(is_model(model), "{model}");
        }
        assert!(is_model("us.anthropic.claude-3-7-sonnet-20250219-v1:0"));
        assert!(is_model("arn:aws:bedrock:us-east-1:123:application-inference-profile/x"));
    }

    #[test]
    fn typos_are_not_models() {
        for model in ["sonet", "opus4", "gpt-4o", ""] {
            assert!(!is_model(model), "{model}");
        }
    }
}
