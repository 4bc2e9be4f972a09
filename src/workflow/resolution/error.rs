//! Why a state name did not resolve, worded the way a workflow author needs
//! it: the scope, the name, what exists, and a did-you-mean.

use super::Platform;

/// Why a state name could not be turned into a state file.
///
/// `scope` is always the scope label (for a directory, its path as given), so a
/// message names the workflow it is about even when several are in play.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ResolveError {
    /// No file matches. `looked_for` holds the file names that were tried.
    #[error(
        "state `{name}` not found in workflow `{scope}` (looked for {}){}",
        .looked_for.join(", "),
        suggestion_suffix(.suggestion.as_deref())
    )]
    NotFound { scope: String, name: String, looked_for: Vec<String>, suggestion: Option<String> },

    /// Several files match an abstract name (R1.12, R1.13).
    #[error(
        "state `{name}` is ambiguous in workflow `{scope}`: {} {} exist; use an explicit extension",
        join_with_and(.files),
        if .files.len() > 2 { "all" } else { "both" }
    )]
    Ambiguous { scope: String, name: String, files: Vec<String> },

    /// An abstract name exists only as scripts for the other platform.
    #[error(
        "state `{name}` in workflow `{scope}` exists only as {}, which cannot run on {platform}",
        join_with_and(.files)
    )]
    Platform { scope: String, name: String, files: Vec<String>, platform: Platform },

    /// An explicit name has the extension of the other platform's scripts (R1.8).
    #[error("state `{name}` cannot run on {platform}: {}", .platform.foreign_script_rule())]
    ForeignExtension { scope: String, name: String, platform: Platform },

    /// An explicit name whose extension is no state kind at all (`notes.txt`,
    /// `run.py`): raymond would send it to the model as a prompt; Baton refuses it.
    #[error(
        "`{name}` in workflow `{scope}` is not a state file: a state is {}, not `{extension}`",
        .platform.state_kinds()
    )]
    UnknownKind { scope: String, name: String, extension: String, platform: Platform },

    /// The name contains `/` or `\` (R1.9).
    #[error("state name `{name}` contains a path separator; states are bare file names inside the workflow directory")]
    PathSeparator { scope: String, name: String },

    /// The name is the empty string.
    #[error("empty state name")]
    Empty { scope: String },

    /// Neither `1_START` nor `START` exists (R1.17).
    #[error(
        "workflow `{scope}` has no entry point: expected a `1_START` or `START` state ({})",
        entry_point_files(*.platform)
    )]
    NoEntryPoint { scope: String, platform: Platform },

    /// An entry-point candidate exists but cannot be used (ambiguous, wrong platform).
    #[error("workflow `{scope}` has no usable entry point: {cause}")]
    UnusableEntryPoint { scope: String, cause: Box<ResolveError> },

    /// Both `1_START` and `START` resolve (R1.17).
    #[error("workflow `{scope}` has an ambiguous entry point: both {first} and {second} exist")]
    AmbiguousEntryPoint { scope: String, first: String, second: String },

    /// The scope directory could not be listed.
    #[error("cannot read workflow `{scope}`: {reason}")]
    ScopeUnreadable { scope: String, reason: String },

    /// A YAML workflow that cannot be read or is invalid; `message` says where.
    #[error("{message}")]
    InvalidScope { scope: String, message: String },
}

fn suggestion_suffix(suggestion: Option<&str>) -> String {
    suggestion.map_or_else(String::new, |s| format!("; did you mean `{s}`?"))
}

/// `a`, `a and b`, `a, b and c`.
fn join_with_and(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [only] => only.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// The files that would make an entry point, for the "no entry point" message.
fn entry_point_files(platform: Platform) -> String {
    let extensions: &[&str] = match platform {
        Platform::Unix => &[".md", ".sh"],
        Platform::Windows => &[".md", ".ps1", ".bat"],
    };
    let files: Vec<String> =
        ["1_START", "START"].iter().flat_map(|stem| extensions.iter().map(move |ext| format!("{stem}{ext}"))).collect();
    match files.split_last() {
        Some((last, init)) => format!("{} or {last}", init.join(", ")),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn join_with_and_forms() {
        let items = |xs: &[&str]| xs.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(join_with_and(&items(&[])), "");
        assert_eq!(join_with_and(&items(&["a"])), "a");
        assert_eq!(join_with_and(&items(&["a", "b"])), "a and b");
        assert_eq!(join_with_and(&items(&["a", "b", "c"])), "a, b and c");
    }
}
