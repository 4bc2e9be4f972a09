//! Where a run's steps execute: in this process (`local`, the default) or on
//! workers behind a Restate server (`restate=INGRESS_URL`). Written as
//! `--engine`, `engine = "…"` in `.baton/config.toml`, and kept in the run's
//! launch parameters in the same text, so a plain `baton resume` keeps the
//! engine the run started with.

use std::fmt;

use crate::text::suggestion::did_you_mean;

/// The engines Baton knows, as the flag names them.
const KINDS: [&str; 2] = ["local", "restate"];

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Engine {
    Local,
    /// `ingress`: the server's ingress URL, without a trailing `/`.
    Restate {
        ingress: String,
    },
}

#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum EngineError {
    #[error("unknown engine `{kind}`{}: the engines are `local` and `restate=INGRESS_URL`", suggestion_text(.suggestion))]
    Unknown { kind: String, suggestion: Option<&'static str> },
    #[error(
        "the restate engine needs its server's ingress URL: `restate=http://HOST:8080` (the ingress port, not the admin port 9070)"
    )]
    MissingUrl,
    #[error("`{url}` is not an http:// or https:// URL; the restate engine is `restate=http://HOST:8080`")]
    NotHttp { url: String },
    #[error("the local engine takes no value: write `local`, not `{text}`")]
    LocalWithValue { text: String },
}

fn suggestion_text(suggestion: &Option<&'static str>) -> String {
    suggestion.map_or_else(String::new, |name| format!(" (did you mean `{name}`?)"))
}

impl Engine {
    pub(crate) fn parse(text: &str) -> Result<Engine, EngineError> {
        let (kind, value) = match text.split_once('=') {
            Some((kind, value)) => (kind.trim(), Some(value.trim())),
            None => (text.trim(), None),
        };
        match (kind.to_ascii_lowercase().as_str(), value) {
            ("local", None) => Ok(Engine::Local),
            ("local", Some(_)) => Err(EngineError::LocalWithValue { text: text.to_string() }),
            ("restate", None | Some("")) => Err(EngineError::MissingUrl),
            ("restate", Some(url)) => {
                let lower = url.to_ascii_lowercase();
                if !(lower.starts_with("http://") || lower.starts_with("https://")) || url.len() <= "http://".len() {
                    return Err(EngineError::NotHttp { url: url.to_string() });
                }
                Ok(Engine::Restate { ingress: url.trim_end_matches('/').to_string() })
            }
            // Only `restate` takes a value: `raft=URL` meant it, however far the spelling.
            (_, value) => Err(EngineError::Unknown {
                kind: kind.to_string(),
                suggestion: did_you_mean(kind, KINDS).or(value.map(|_| "restate")),
            }),
        }
    }

    /// `local` or `restate`.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Engine::Local => "local",
            Engine::Restate { .. } => "restate",
        }
    }

    /// How a person would name it: "the local engine", "Restate at URL".
    pub(crate) fn described(&self) -> String {
        match self {
            Engine::Local => "the local engine".to_string(),
            Engine::Restate { ingress } => format!("the restate engine ({ingress})"),
        }
    }
}

impl fmt::Display for Engine {
    /// The text `parse` reads back (what the launch parameters keep).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Engine::Local => f.write_str("local"),
            Engine::Restate { ingress } => write!(f, "restate={ingress}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engines_parse_and_print_back() {
        assert_eq!(Engine::parse("local"), Ok(Engine::Local));
        let restate = Engine::parse("restate=http://127.0.0.1:8080/").unwrap();
        assert_eq!(restate, Engine::Restate { ingress: "http://127.0.0.1:8080".into() });
        assert_eq!(Engine::parse(&restate.to_string()), Ok(restate));
    }

    #[test]
    fn a_misspelt_engine_gets_a_did_you_mean() {
        assert_eq!(
            Engine::parse("restat=http://x").unwrap_err().to_string(),
            "unknown engine `restat` (did you mean `restate`?): the engines are `local` and `restate=INGRESS_URL`"
        );
        assert_eq!(
            Engine::parse("raft=x").unwrap_err(),
            EngineError::Unknown { kind: "raft".into(), suggestion: Some("restate") }
        );
        assert!(Engine::parse("restate=").unwrap_err().to_string().contains("needs its server's ingress URL"));
        assert!(Engine::parse("restate=localhost:8080").unwrap_err().to_string().contains("is not an http://"));
    }
}
