//! Placeholder substitution in prompt bodies (R6.1–R6.4).
//!
//! Prompts are written for raymond, whose "templates" are a handful of global
//! string replacements, not a template language: `{{name}}` exactly, no
//! whitespace, no escaping, no filters. Anything smarter would change prompts that
//! already work, so this module reproduces the replacement order too (longest key
//! first, each over the text produced so far), including its quirk that a value
//! inserted earlier may itself contain a shorter placeholder that is then replaced.
//! Equal-length keys are taken in key order, so the output is deterministic even
//! where raymond's is not.

use std::collections::BTreeMap;

/// Replaces every `{{key}}` of `variables` in `body` (R6.1, R6.3, R6.4).
///
/// Keys are applied longest first (ties by key), each as a global literal replace
/// over the evolving text. Placeholders whose key is missing stay as they are.
pub(crate) fn render(body: &str, variables: &BTreeMap<String, String>) -> String {
    let mut pairs: Vec<(&String, &String)> = variables.iter().collect();
    // Stable sort over the BTreeMap's key order: equal lengths stay in key order.
    pairs.sort_by_key(|(key, _)| std::cmp::Reverse(key.len()));
    let mut text = body.to_string();
    for (key, value) in pairs {
        let placeholder = format!("{{{{{key}}}}}");
        if text.contains(&placeholder) {
            text = text.replace(&placeholder, value);
        }
    }
    text
}

/// What a state's template can see (R6.2, R3.41).
#[derive(Clone, Copy, Debug)]
pub(crate) struct TemplateInputs<'a> {
    /// The pending result; `Some("")` still defines `{{input}}` (as empty).
    pub(crate) input: Option<&'a str>,
    /// The pending ask id; defines `{{ask_id}}` only when non-empty.
    pub(crate) ask_id: Option<&'a str>,
    /// A fork worker's attributes (first state only).
    pub(crate) fork_attributes: &'a BTreeMap<String, String>,
    pub(crate) workflow_id: &'a str,
    pub(crate) agent_id: &'a str,
    pub(crate) task_folder: &'a str,
}

/// The variables for a markdown body, set in R6.2 order so that later ones win:
/// `input` (and its alias `result`), `ask_id`, the fork attributes, then the
/// built-ins `workflow_id`, `agent_id`, `task_folder`.
pub(crate) fn variables(inputs: &TemplateInputs) -> BTreeMap<String, String> {
    let mut variables = BTreeMap::new();
    if let Some(input) = inputs.input {
        variables.insert("input".to_string(), input.to_string());
        // Baton accepts `{{result}}` as an alias of `{{input}}` (the Python-era name).
        // It is set before the fork attributes on purpose: raymond has no `result`
        // variable, so a workflow whose fork passes `result="…"` sees that value under
        // raymond, and must see the same value here.
        variables.insert("result".to_string(), input.to_string());
    }
    if let Some(ask_id) = inputs.ask_id.filter(|id| !id.is_empty()) {
        variables.insert("ask_id".to_string(), ask_id.to_string());
    }
    for (key, value) in inputs.fork_attributes {
        variables.insert(key.clone(), value.clone());
    }
    variables.insert("workflow_id".to_string(), inputs.workflow_id.to_string());
    variables.insert("agent_id".to_string(), inputs.agent_id.to_string());
    variables.insert("task_folder".to_string(), inputs.task_folder.to_string());
    variables
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    fn inputs<'a>(input: Option<&'a str>, fork_attributes: &'a BTreeMap<String, String>) -> TemplateInputs<'a> {
        TemplateInputs {
            input,
            ask_id: None,
            fork_attributes,
            workflow_id: "wf_1",
            agent_id: "main",
            task_folder: "/tmp/task",
        }
    }

    #[test]
    fn r6_1_placeholder_is_replaced_everywhere() {
        assert_eq!(render("a {{x}} b {{x}}{{x}}", &vars(&[("x", "1")])), "a 1 b 11");
    }

    #[test]
    fn r6_1_spaces_inside_braces_not_substituted() {
        let v = vars(&[("input", "X")]);
        assert_eq!(render("{{ input }} {{input }} { {input}} {{input}}", &v), "{{ input }} {{input }} { {input}} X");
    }

    #[test]
    fn r6_1_no_escaping_and_no_recursion_into_the_same_key() {
        assert_eq!(render("{{{x}}}", &vars(&[("x", "1")])), "{1}");
        assert_eq!(render("{{x}}", &vars(&[("x", "{{x}}")])), "{{x}}");
    }

    #[test]
    fn r6_3_missing_keys_stay_literal() {
        assert_eq!(render("{{item}} and {{input}}", &vars(&[("input", "i")])), "{{item}} and i");
        assert_eq!(render("{{item}}", &BTreeMap::new()), "{{item}}");
    }

    #[test]
    fn r6_4_longest_key_first() {
        // `task_folder` (11) is applied before `input` (5): its value's `{{input}}` is then replaced.
        let v = vars(&[("input", "IN"), ("task_folder", "/t/{{input}}")]);
        assert_eq!(render("{{task_folder}}", &v), "/t/IN");
        // The other way round, `input`'s value is inserted after `item` ran, so it stays.
        let v = vars(&[("input", "{{item}}"), ("items", "x")]);
        assert_eq!(render("{{input}}", &v), "{{item}}");
        let v = vars(&[("input", "{{item}}"), ("item", "x")]);
        assert_eq!(render("{{input}}", &v), "x");
    }

    #[test]
    fn r6_4_equal_lengths_apply_in_key_order() {
        // `ab` runs before `ba`: the `{{ba}}` it inserts is replaced next.
        let v = vars(&[("ab", "{{ba}}"), ("ba", "{{ab}}")]);
        assert_eq!(render("{{ab}}|{{ba}}", &v), "{{ab}}|{{ab}}");
    }

    #[test]
    fn r6_2_input_present_only_when_pending_result_exists() {
        let none = BTreeMap::new();
        let v = variables(&inputs(None, &none));
        assert_eq!(v, vars(&[("workflow_id", "wf_1"), ("agent_id", "main"), ("task_folder", "/tmp/task")]));
        let v = variables(&inputs(Some(""), &none));
        assert_eq!(v.get("input").map(String::as_str), Some(""));
        assert_eq!(v.get("result").map(String::as_str), Some(""));
    }

    #[test]
    fn r6_2_ask_id_only_when_non_empty() {
        let none = BTreeMap::new();
        let mut i = inputs(None, &none);
        i.ask_id = Some("");
        assert!(!variables(&i).contains_key("ask_id"));
        i.ask_id = Some("ask-7");
        assert_eq!(variables(&i).get("ask_id").map(String::as_str), Some("ask-7"));
    }

    #[test]
    fn r6_2_builtins_override_fork_attributes_which_override_input() {
        let fork = vars(&[("item", "a"), ("agent_id", "forged"), ("input", "from fork"), ("result", "fork result")]);
        let mut i = inputs(Some("pending"), &fork);
        i.ask_id = Some("q1");
        let v = variables(&i);
        assert_eq!(
            v,
            vars(&[
                ("input", "from fork"),
                ("result", "fork result"),
                ("ask_id", "q1"),
                ("item", "a"),
                ("workflow_id", "wf_1"),
                ("agent_id", "main"),
                ("task_folder", "/tmp/task"),
            ])
        );
    }

    #[test]
    fn result_is_an_alias_of_input() {
        let none = BTreeMap::new();
        let v = variables(&inputs(Some("42"), &none));
        assert_eq!(render("{{result}}={{input}}", &v), "42=42");
    }

    #[test]
    fn s16_20_markdown_body_substitution() {
        let none = BTreeMap::new();
        let body = "in={{input}} sp={{ input }} wf={{workflow_id}} ag={{agent_id}} tf={{task_folder}}";
        assert_eq!(
            render(body, &variables(&inputs(None, &none))),
            "in={{input}} sp={{ input }} wf=wf_1 ag=main tf=/tmp/task"
        );
        assert_eq!(
            render(body, &variables(&inputs(Some("x"), &none))),
            "in=x sp={{ input }} wf=wf_1 ag=main tf=/tmp/task"
        );
    }

    #[test]
    fn s16_27_fork_attribute_is_visible_and_others_stay_literal() {
        let fork = vars(&[("item", "a")]);
        let v = variables(&inputs(Some("i"), &fork));
        assert_eq!(render("{{item}} {{input}} {{cd}} {{next}}", &v), "a i {{cd}} {{next}}");
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn render_never_panics(
                body in any::<String>(),
                variables in proptest::collection::btree_map(any::<String>(), any::<String>(), 0..6),
            ) {
                let _ = render(&body, &variables);
            }

            #[test]
            fn render_without_braces_is_identity(body in "[^{}]*", variables in proptest::collection::btree_map("[a-z]{0,4}", ".*", 0..4)) {
                prop_assert_eq!(render(&body, &variables), body);
            }
        }
    }
}
