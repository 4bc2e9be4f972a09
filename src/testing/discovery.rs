//! Which test files `baton test` runs (`docs/testing.md`, "Where tests live").
//!
//! A directory workflow `wf/` keeps its tests in `wf/tests/*.yaml`; a YAML or zip
//! workflow `flow.yaml` in `flow.tests/*.yaml` beside it. Neither is a state: a
//! workflow's states are the regular files directly in its directory (R1.6). With
//! no argument, every workflow directly under `.` and `./states/` that has tests is
//! tested. A directory argument that is no workflow (no entry point, no `tests/`) is
//! a directory *of* workflows: every workflow under it that has tests is tested, at
//! any depth, so `baton test states/` means what it says. The walk skips what is
//! never a workflow and may be huge (`.git`, `.baton`, `node_modules`, `target`,
//! hidden directories) and does not follow symbolic links into directories, so a
//! link cycle cannot trap it.

use std::path::{Path, PathBuf};

use crate::workflow::resolution::{ResolveError, entry_point};
use crate::workflow::target::{clean_lexically, is_url};

/// Directories a walk for workflows never enters.
const SKIPPED_DIRECTORIES: [&str; 4] = [".baton", ".git", "node_modules", "target"];

/// One test file, as shown in messages, and the workflow it tests.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TestFile {
    /// The path as the user would write it (relative to the current directory).
    pub(crate) shown: String,
    pub(crate) path: PathBuf,
    /// The workflow under test.
    pub(crate) scope: PathBuf,
}

/// What an argument named: its test files, or why none can run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Found {
    Test(TestFile),
    /// An argument that names nothing to test, shown as it was written.
    Problem {
        shown: String,
        message: String,
    },
}

/// The test files of every argument, in order (a workflow's tests sorted by name);
/// with no argument, those of the workflows [`discover`] finds.
pub(crate) fn find_tests(arguments: &[String], cwd: &Path) -> Vec<Found> {
    let arguments = if arguments.is_empty() { discover(cwd) } else { arguments.to_vec() };
    arguments.iter().flat_map(|argument| tests_of(argument, cwd)).collect()
}

/// Every workflow directly under `cwd` or `cwd/states` that has a test directory.
pub(crate) fn discover(cwd: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for base in [".", "states"] {
        let Ok(entries) = std::fs::read_dir(cwd.join(base)) else { continue };
        let mut names: Vec<String> = entries.filter_map(|entry| entry.ok()?.file_name().into_string().ok()).collect();
        names.sort();
        for name in names {
            let shown = if base == "." { name } else { format!("{base}/{name}") };
            let path = cwd.join(&shown);
            if tests_dir(&path).is_some_and(|dir| !test_files_in(&dir).is_empty()) {
                found.push(shown);
            }
        }
    }
    found
}

/// Whether the directory `dir` is a workflow (an entry point, even a broken one, or
/// tests of its own) rather than a directory of workflows.
fn is_workflow_dir(dir: &Path) -> bool {
    dir.join("tests").is_dir() || !matches!(entry_point(dir), Err(ResolveError::NoEntryPoint { .. }))
}

/// The workflows under the directory `dir` (shown as `shown`) that have tests, in
/// path order: directories with `tests/*.yaml`, YAML and zip files with
/// `NAME.tests/*.yaml` beside them.
fn workflows_under(dir: &Path, shown: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut entries: Vec<(String, std::fs::FileType)> = entries
        .filter_map(|entry| {
            let entry = entry.ok()?;
            Some((entry.file_name().into_string().ok()?, entry.file_type().ok()?))
        })
        .collect();
    entries.sort_by(|(a, _), (b, _)| a.cmp(b));
    let mut found = Vec::new();
    for (name, file_type) in entries {
        if name.starts_with('.') || SKIPPED_DIRECTORIES.contains(&name.as_str()) || name == "tests" {
            continue;
        }
        let path = dir.join(&name);
        let shown = shown.join(&name);
        if tests_dir(&path).is_some_and(|tests| !test_files_in(&tests).is_empty()) {
            found.push(shown.display().to_string());
        }
        if file_type.is_dir() && !name.ends_with(".tests") {
            found.extend(workflows_under(&path, &shown));
        }
    }
    found
}

/// Where the tests of the workflow at `path` live, if it is a workflow that can have any.
fn tests_dir(path: &Path) -> Option<PathBuf> {
    if path.is_dir() {
        return Some(path.join("tests"));
    }
    let extension = path.extension()?.to_str()?.to_ascii_lowercase();
    if !path.is_file() || !matches!(extension.as_str(), "yaml" | "yml" | "zip") {
        return None;
    }
    let stem = path.file_stem()?.to_str()?;
    Some(path.with_file_name(format!("{stem}.tests")))
}

/// The `*.yaml` and `*.yml` files of `dir`, sorted.
fn test_files_in(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|entry| Some(entry.ok()?.path()))
        .filter(|path| path.is_file() && is_yaml_name(path))
        .collect();
    files.sort();
    files
}

fn is_yaml_name(path: &Path) -> bool {
    path.extension()
        .and_then(|extension| extension.to_str())
        .is_some_and(|extension| extension.eq_ignore_ascii_case("yaml") || extension.eq_ignore_ascii_case("yml"))
}

/// The workflow a test file `path` belongs to: the parent of its `tests/`, or the
/// `X.yaml`/`X.yml`/`X.zip` beside its `X.tests/`.
fn workflow_of_test(path: &Path) -> Option<PathBuf> {
    let dir = path.parent()?;
    let name = dir.file_name()?.to_str()?;
    if name == "tests" {
        return dir.parent().map(Path::to_path_buf);
    }
    let stem = name.strip_suffix(".tests")?;
    ["yaml", "yml", "zip"]
        .iter()
        .map(|extension| dir.with_file_name(format!("{stem}.{extension}")))
        .find(|path| path.is_file())
}

fn tests_of(argument: &str, cwd: &Path) -> Vec<Found> {
    let problem = |message: String| vec![Found::Problem { shown: argument.to_string(), message }];
    if is_url(argument) {
        return problem(
            "a remote workflow needs the network, and `baton test` runs offline; download it and test the local copy"
                .to_string(),
        );
    }
    let path = clean_lexically(&cwd.join(argument));
    // One test file named directly.
    if path.is_file()
        && is_yaml_name(&path)
        && let Some(scope) = workflow_of_test(&path)
    {
        return vec![Found::Test(TestFile { shown: argument.to_string(), path, scope })];
    }
    if !path.exists() {
        return problem("no such workflow or test file".to_string());
    }
    if path.is_dir() && !is_workflow_dir(&path) {
        let workflows = workflows_under(&path, Path::new(argument));
        if workflows.is_empty() {
            return problem(
                "no tests: no workflow under it has any (a workflow `WF/` keeps them in `WF/tests/*.yaml`, a \
                 `FLOW.yaml` in `FLOW.tests/*.yaml`)"
                    .to_string(),
            );
        }
        return workflows.iter().flat_map(|workflow| tests_of(workflow, cwd)).collect();
    }
    let Some(dir) = tests_dir(&path) else {
        return problem("not a workflow (a directory, a YAML or a zip file) or a test file".to_string());
    };
    let shown_dir = if path.is_dir() {
        Path::new(argument).join("tests")
    } else {
        Path::new(argument).with_file_name(dir.file_name().unwrap_or_default())
    };
    let files = test_files_in(&dir);
    if files.is_empty() {
        return problem(format!("no tests (expected test files in {}/*.yaml)", shown_dir.display()));
    }
    files
        .into_iter()
        .map(|file| {
            let shown = shown_dir.join(file.file_name().unwrap_or_default()).display().to_string();
            Found::Test(TestFile { shown, path: file, scope: path.clone() })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(found: &[Found]) -> Vec<String> {
        found
            .iter()
            .map(|found| match found {
                Found::Test(test) => format!("{} -> {}", test.shown, test.scope.file_name().unwrap().to_string_lossy()),
                Found::Problem { shown, message } => format!("{shown}: {message}"),
            })
            .collect()
    }

    /// Writes `x` to `path` under `root`, with its folders.
    fn write_file(root: &Path, path: &str) {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "x").unwrap();
    }

    #[test]
    fn tests_live_beside_their_workflow_and_are_found_without_arguments() {
        let root = tempfile::tempdir().unwrap();
        let write = |path: &str| write_file(root.path(), path);
        write("wf/START.md");
        write("wf/tests/b.yaml");
        write("wf/tests/a.yml");
        write("wf/tests/notes.txt");
        write("states/flow.yaml");
        write("states/flow.tests/one.yaml");
        write("states/bare/START.md");
        assert_eq!(discover(root.path()), ["wf", "states/flow.yaml"]);
        assert_eq!(
            shown(&find_tests(&[], root.path())),
            ["wf/tests/a.yml -> wf", "wf/tests/b.yaml -> wf", "states/flow.tests/one.yaml -> flow.yaml"]
        );
        let arguments = ["wf/tests/b.yaml".to_string(), "states/bare".to_string(), "https://x.test/a.zip".to_string()];
        assert_eq!(
            shown(&find_tests(&arguments, root.path())),
            [
                "wf/tests/b.yaml -> wf",
                "states/bare: no tests (expected test files in states/bare/tests/*.yaml)",
                "https://x.test/a.zip: a remote workflow needs the network, and `baton test` runs offline; download it \
                 and test the local copy"
            ]
        );
    }

    #[test]
    fn a_directory_of_workflows_is_searched_at_any_depth() {
        let root = tempfile::tempdir().unwrap();
        let write = |path: &str| write_file(root.path(), path);
        write("flows/b/START.sh");
        write("flows/b/tests/one.yaml");
        write("flows/a.yaml");
        write("flows/a.tests/one.yaml");
        write("flows/deeper/still/c/START.md");
        write("flows/deeper/still/c/tests/two.yml");
        write("flows/untested/START.sh");
        write("flows/node_modules/d/START.sh");
        write("flows/node_modules/d/tests/no.yaml");
        write("flows/.hidden/e/tests/no.yaml");
        write("empty/README.md");
        let arguments = ["flows/".to_string(), "empty".to_string(), "flows/untested".to_string()];
        assert_eq!(
            shown(&find_tests(&arguments, root.path())),
            [
                "flows/a.tests/one.yaml -> a.yaml",
                "flows/b/tests/one.yaml -> b",
                "flows/deeper/still/c/tests/two.yml -> c",
                "empty: no tests: no workflow under it has any (a workflow `WF/` keeps them in `WF/tests/*.yaml`, a \
                 `FLOW.yaml` in `FLOW.tests/*.yaml`)",
                "flows/untested: no tests (expected test files in flows/untested/tests/*.yaml)",
            ]
        );
    }
}
