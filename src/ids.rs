//! Identities that would otherwise be bare strings: which agent, which state,
//! which run, which Claude conversation. Each is a distinct type so that one can
//! never be passed where another is expected; each is serialised as the plain
//! string (`#[serde(transparent)]`), so `state.json`, the journal and the trace
//! read exactly as before.

use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;

use serde::{Deserialize, Serialize};

use crate::text::excerpt::Excerpt;

macro_rules! string_id {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(transparent)]
        pub(crate) struct $name(String);

        impl Deref for $name {
            type Target = str;

            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<String> for $name {
            fn from(value: String) -> $name {
                $name(value)
            }
        }

        impl From<&str> for $name {
            fn from(value: &str) -> $name {
                $name(value.to_string())
            }
        }

        impl From<$name> for String {
            fn from(value: $name) -> String {
                value.0
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }

        impl PartialEq<$name> for &str {
            fn eq(&self, other: &$name) -> bool {
                *self == other.0
            }
        }
    };
}

string_id!(
    /// An agent of a run: `main`, or a worker id such as `main_worker1` (R3.22).
    AgentId
);

string_id!(
    /// A state's resolved file name within its scope (`REVIEW.md`, `BUILD.sh`).
    StateName
);

string_id!(
    /// A run, and the name of its directory under `.baton/runs/`.
    RunId
);

string_id!(
    /// A Claude Code conversation (`--resume`, `--fork-session`).
    SessionId
);

impl AsRef<std::path::Path> for StateName {
    fn as_ref(&self) -> &std::path::Path {
        std::path::Path::new(&self.0)
    }
}

/// The longest run id: a run id names a directory and files (`<id>.json`,
/// `<id>.log`), so it stays well under the 255-byte name limit of file systems,
/// with room for a `_1` suffix.
pub(crate) const MAX_RUN_ID_LEN: usize = 128;

/// Why a text cannot name a run: the one message the CLI and the daemon give.
#[derive(Debug, thiserror::Error)]
#[error("invalid run id `{shown}`{length}: use only letters, digits, `_` and `-`, at most {MAX_RUN_ID_LEN} of them")]
pub(crate) struct InvalidRunId {
    shown: String,
    length: String,
}

impl RunId {
    /// A run id from a person, a request or a file name: 1 to [`MAX_RUN_ID_LEN`]
    /// of `[A-Za-z0-9_-]` (R8.7), so it names one directory under `.baton/runs`
    /// and nothing else (never `.`, `..` or a path).
    pub(crate) fn parse(text: &str) -> Result<RunId, InvalidRunId> {
        let well_formed = !text.is_empty()
            && text.len() <= MAX_RUN_ID_LEN
            && text.bytes().all(|byte| byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'-');
        if well_formed {
            return Ok(RunId(text.to_string()));
        }
        let characters = text.chars().count();
        let (max_chars, length) =
            if characters > 64 { (40, format!(" ({characters} characters)")) } else { (characters, String::new()) };
        Err(InvalidRunId { shown: Excerpt { text, max_chars }.to_string(), length })
    }
}

impl AgentId {
    /// The first agent of every run.
    pub(crate) fn main() -> AgentId {
        AgentId(String::from("main"))
    }

    pub(crate) fn is_main(&self) -> bool {
        self.0 == "main"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_serialise_as_plain_strings() {
        assert_eq!(serde_json::to_string(&AgentId::main()).unwrap(), "\"main\"");
        let state: StateName = serde_json::from_str("\"REVIEW.md\"").unwrap();
        assert_eq!(state, "REVIEW.md");
        let counters: std::collections::BTreeMap<AgentId, u64> = serde_json::from_str("{\"main\":2}").unwrap();
        assert_eq!(counters.get("main"), Some(&2));
    }

    #[test]
    fn run_ids_are_checked_once_for_charset_and_length() {
        assert!(RunId::parse("my-run_1").is_ok());
        assert!(RunId::parse(&"a".repeat(MAX_RUN_ID_LEN)).is_ok());
        for bad in ["", ".", "..", "../x", "a b", "a/b", "é"] {
            assert!(RunId::parse(bad).is_err(), "{bad:?} was taken");
        }
        assert_eq!(
            RunId::parse("../x").unwrap_err().to_string(),
            "invalid run id `../x`: use only letters, digits, `_` and `-`, at most 128 of them"
        );
        assert_eq!(
            RunId::parse(&"a".repeat(300)).unwrap_err().to_string(),
            format!(
                "invalid run id `{}…` (300 characters): use only letters, digits, `_` and `-`, at most 128 of them",
                "a".repeat(40)
            )
        );
    }
}

/// The agent CLI a prompt state runs on (`backend:` in `workflow.yaml`, in a state's
/// frontmatter, `--backend`, config). A name, not the backend itself: what each one
/// does lives under `backend/<name>/`, and this is what the run's state, the trace
/// and every message record.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum BackendName {
    #[default]
    Claude,
    Pi,
    Codex,
}

/// A backend name Baton does not know.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown backend `{found}`: expected one of claude, pi, codex{}",
    .suggestion.map_or_else(String::new, |known| format!("; did you mean `{known}`?"))
)]
pub(crate) struct UnknownBackend {
    /// As written, cut to a readable length.
    pub(crate) found: String,
    pub(crate) suggestion: Option<&'static str>,
}

impl BackendName {
    pub(crate) const ALL: [BackendName; 3] = [BackendName::Claude, BackendName::Pi, BackendName::Codex];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            BackendName::Claude => "claude",
            BackendName::Pi => "pi",
            BackendName::Codex => "codex",
        }
    }

    /// `claude`, `pi` or `codex`, in any letter case and with blanks around it;
    /// `claude-code` is Claude too.
    pub(crate) fn parse(text: &str) -> Result<BackendName, UnknownBackend> {
        let wanted = text.trim().to_ascii_lowercase();
        match wanted.as_str() {
            "claude" | "claude-code" | "claude_code" => Ok(BackendName::Claude),
            "pi" => Ok(BackendName::Pi),
            "codex" => Ok(BackendName::Codex),
            _ => Err(UnknownBackend {
                found: Excerpt { text: text.trim(), max_chars: 40 }.to_string(),
                suggestion: crate::text::suggestion::did_you_mean(&wanted, BackendName::ALL.map(BackendName::as_str)),
            }),
        }
    }
}

impl fmt::Display for BackendName {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

#[cfg(test)]
mod backend_name_tests {
    use super::*;

    #[test]
    fn names_parse_in_any_case_and_typos_get_a_hint() {
        assert_eq!(BackendName::parse(" Codex "), Ok(BackendName::Codex));
        assert_eq!(BackendName::parse("claude-code"), Ok(BackendName::Claude));
        assert_eq!(
            BackendName::parse("codx").unwrap_err().to_string(),
            "unknown backend `codx`: expected one of claude, pi, codex; did you mean `codex`?"
        );
        assert_eq!(
            BackendName::parse("gemini").unwrap_err().to_string(),
            "unknown backend `gemini`: expected one of claude, pi, codex"
        );
    }
}
