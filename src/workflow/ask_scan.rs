//! Does a workflow ask a person? The launch-time check of R11.2: under
//! `--on-ask reject` a workflow that can ask is refused before it starts, instead of
//! pausing at its first `<ask>`.
//!
//! A manifest's `requires_human_input` decides when it is `true` or `false`. Else
//! (`auto`, or no manifest) the prompt states' frontmatter is read: a policy entry for
//! `ask` means the workflow asks, and the workflows its `call-workflow` /
//! `function-workflow` entries name are read the same way (each once: cycles stop).
//! Only frontmatter is read, never prompt bodies, so a workflow without policies is
//! not found out (it pauses at its first ask instead).

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::workflow::manifest::{HumanInput, Manifest};
use crate::workflow::scope::Scope;
use crate::workflow::specifier::{Caller, resolve_specifier};
use crate::workflow::state_file::read_prompt;

/// Where an ask was found: the workflow and the state whose policy allows it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct AskFound {
    pub(crate) workflow: PathBuf,
    /// `None` when the manifest says so rather than a state.
    pub(crate) state: Option<String>,
}

/// The first sign that the workflow `scope` can ask, if any.
pub(crate) fn find_ask(scope: &Path) -> Option<AskFound> {
    scan(scope, &mut HashSet::new())
}

fn scan(scope: &Path, seen: &mut HashSet<PathBuf>) -> Option<AskFound> {
    if !seen.insert(scope.to_path_buf()) {
        return None;
    }
    let workflow = Scope::open(scope).ok()?;
    match Manifest::of_scope(&workflow).ok().flatten().map(|manifest| manifest.requires_human_input) {
        Some(HumanInput::Yes) => return Some(AskFound { workflow: scope.to_path_buf(), state: None }),
        Some(HumanInput::No) => return None,
        Some(HumanInput::Auto) | None => {}
    }
    let files = workflow.listing().ok()?;
    let mut callees = Vec::new();
    for file in files.iter().filter(|file| file.to_ascii_lowercase().ends_with(".md")) {
        let Ok(prompt) = read_prompt(&workflow, file) else { continue };
        let Some(policy) = prompt.frontmatter.policy else { continue };
        for entry in &policy.entries {
            match entry.tag() {
                "ask" => return Some(AskFound { workflow: scope.to_path_buf(), state: Some(file.clone()) }),
                "call-workflow" | "function-workflow" => callees.extend(entry.get("target").map(str::to_string)),
                _ => {}
            }
        }
    }
    // Targets that do not resolve are skipped (R11.2).
    callees
        .iter()
        .filter_map(|target| resolve_specifier(target, Caller::local(scope)).ok())
        .find_map(|entry| scan(&entry.scope_dir, seen))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, file: &str, text: &str) {
        let path = root.join(file);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    }

    #[test]
    fn r11_2_a_policy_ask_is_found_through_called_workflows_and_cycles_stop() {
        let root = tempfile::tempdir().expect("temp dir");
        let root = root.path();
        write(
            root,
            "main/START.md",
            "---\nallowed_transitions:\n  - {tag: call-workflow, target: ../lib/, return: START}\n---\nx",
        );
        write(
            root,
            "lib/START.md",
            "---\nallowed_transitions:\n  - {tag: call-workflow, target: ../main/, return: Q}\n  - {tag: goto, target: Q}\n---\nx",
        );
        write(root, "lib/Q.md", "---\nallowed_transitions:\n  - {tag: ask, next: START}\n---\nx");
        let found = find_ask(&root.join("main")).expect("found in lib");
        assert_eq!(found, AskFound { workflow: root.join("lib"), state: Some("Q.md".into()) });
        // A manifest that says no wins over the states.
        write(root, "lib/workflow.yaml", "id: lib\nrequires_human_input: \"false\"\n");
        assert_eq!(find_ask(&root.join("main")), None);
    }
}
