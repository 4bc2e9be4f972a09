//! The README is a contract with a newcomer: its first code block is the two
//! commands that set everything up (a sample run and the tests), CI runs exactly
//! the same test command, every command `baton --help` lists is in it, and every
//! document in `docs/` is linked from it.

use std::path::Path;

use crate::support::Test;

fn repository_file(path: &str) -> String {
    let full = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&full).unwrap_or_else(|error| panic!("read {}: {error}", full.display()))
}

/// The commands of the README's first fenced code block, comments stripped.
fn first_block_commands() -> Vec<String> {
    let readme = repository_file("README.md");
    let mut lines = readme.lines().skip_while(|line| !line.starts_with("```")).skip(1);
    let block: Vec<&str> = lines.by_ref().take_while(|line| !line.starts_with("```")).collect();
    block
        .iter()
        .map(|line| line.split(" #").next().unwrap_or_default().trim().to_string())
        .filter(|command| !command.is_empty())
        .collect()
}

#[test]
fn readme_starts_with_exactly_two_commands_a_sample_run_and_the_tests() {
    assert_eq!(first_block_commands(), ["cargo run -- run states/factorial", "tests/run"]);
}

/// Item 9 of issue 19: CI ran one command and the README showed another.
#[test]
fn ci_runs_the_readme_test_command_verbatim() {
    let commands = first_block_commands();
    let test_command = commands.get(1).expect("the README's test command");
    let ci = repository_file(".ci/run");
    assert!(
        ci.lines().any(|line| line.trim() == test_command),
        ".ci/run does not run the README's test command `{test_command}` on a line of its own:\n{ci}"
    );
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join(test_command);
    let mode = std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&script).expect("the script").permissions());
    assert_ne!(mode & 0o111, 0, "{} is not executable", script.display());
}

/// The subcommands `baton --help` lists (but `help`).
fn help_commands() -> Vec<String> {
    let outcome = Test::new().args(["--help"]).run();
    outcome.status(0);
    outcome
        .stdout
        .lines()
        .skip_while(|line| *line != "Commands:")
        .skip(1)
        .take_while(|line| !line.is_empty())
        .filter(|line| line.starts_with("  ") && !line.starts_with("   "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|command| *command != "help")
        .map(str::to_string)
        .collect()
}

/// Item 12 of issue 19: `diagram` was missing from the README's command list.
#[test]
fn every_command_of_baton_help_is_in_the_readme() {
    let readme = repository_file("README.md");
    let commands = help_commands();
    assert!(commands.len() > 15, "too few commands parsed from --help: {commands:?}");
    let missing: Vec<&String> =
        commands.iter().filter(|command| !readme.contains(&format!("\nbaton {command} "))).collect();
    assert!(missing.is_empty(), "commands of `baton --help` missing from the README's command list: {missing:?}");
}

/// Item 12 of issue 19: `inspecting.md`, `lint.md` and `diagram.md` were not listed.
#[test]
fn every_doc_is_linked_from_the_readme() {
    let readme = repository_file("README.md");
    let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(&docs).expect("docs/") {
        let name = entry.expect("entry").file_name().to_string_lossy().to_string();
        if name.ends_with(".md") && !readme.contains(&format!("](docs/{name})")) {
            missing.push(name);
        }
    }
    missing.sort();
    assert!(missing.is_empty(), "docs not linked from the README: {missing:?}");
}

/// The agent CLIs a sample's prompt states run on, as the README's samples table
/// names them: each `.md` state's `backend:` (its frontmatter, else the manifest's,
/// else Claude Code), or `none` for a script-only sample.
fn backends_of(sample: &Path) -> String {
    let backend_line =
        |text: &str| text.lines().find_map(|line| line.strip_prefix("backend:").map(|name| name.trim().to_string()));
    let manifest = std::fs::read_to_string(sample.join("workflow.yaml")).ok();
    let default = manifest.as_deref().and_then(backend_line).unwrap_or_else(|| "claude".to_string());
    let mut used = std::collections::BTreeSet::new();
    for entry in std::fs::read_dir(sample).expect("the sample").filter_map(Result::ok) {
        let path = entry.path();
        if path.extension().is_some_and(|extension| extension == "md") {
            let text = std::fs::read_to_string(&path).expect("a state");
            let frontmatter = text.strip_prefix("---\n").and_then(|rest| rest.split("\n---\n").next()).unwrap_or("");
            used.insert(backend_line(frontmatter).unwrap_or_else(|| default.clone()));
        }
    }
    let names: Vec<&str> = [("claude", "Claude Code"), ("codex", "Codex"), ("pi", "pi")]
        .into_iter()
        .filter(|(backend, _)| used.contains(*backend))
        .map(|(_, name)| name)
        .collect();
    if names.is_empty() { "none".to_string() } else { names.join(" and ") }
}

/// Issue 20, item 7: the samples table says what each sample needs installed, and
/// lists every sample in `states/`.
#[test]
fn the_samples_table_lists_every_sample_and_the_clis_it_needs() {
    let readme = repository_file("README.md");
    let rows: std::collections::BTreeMap<String, String> = readme
        .lines()
        .skip_while(|line| *line != "## Samples")
        .skip_while(|line| !line.starts_with("| sample |"))
        .take_while(|line| line.starts_with('|'))
        .filter_map(|line| {
            let cells: Vec<&str> = line.split(" | ").collect();
            let name = cells.first()?.strip_prefix("| `states/")?.strip_suffix('`')?;
            Some((name.to_string(), cells.get(2)?.to_string()))
        })
        .collect();
    let states = Path::new(env!("CARGO_MANIFEST_DIR")).join("states");
    let mut samples: Vec<_> =
        std::fs::read_dir(&states).expect("states/").filter_map(Result::ok).map(|entry| entry.path()).collect();
    samples.sort();
    for sample in samples.iter().filter(|path| path.is_dir()) {
        let name = sample.file_name().expect("a name").to_string_lossy().to_string();
        let Some(needs) = rows.get(&name) else { panic!("states/{name} has no row in the README's samples table") };
        assert_eq!(*needs, backends_of(sample), "the README's `needs installed` cell of states/{name}");
    }
    assert!(rows.len() >= 9, "{rows:?}");
}
