//! The checks `baton lint` makes, by the ids raymond's `ray lint` gives them
//! (spec §15), so a team can move between the two and keep its scripts; Baton's
//! own additions say what raymond's checks cannot (`invalid-tag`, `invalid-ask-timeout`,
//! `unreadable-state`).

use std::fmt;

use serde::Serialize;

/// How bad a finding is. `Error`: the run would fail or go wrong; `Warning`: it
/// probably does not do what was meant; `Info`: worth knowing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Severity {
    Error,
    Warning,
    Info,
}

impl Severity {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One check. Its id is stable: it appears in text and JSON output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Check {
    NoEntryPoint,
    AmbiguousEntryPoint,
    FrontmatterParseError,
    InvalidModel,
    UnknownBackend,
    BackendOptionIgnored,
    InvalidEffort,
    MissingTarget,
    MissingReturn,
    MissingForkNext,
    AmbiguousStateResolution,
    ForceImplicitInvalid,
    InvalidTaskValue,
    InvalidIsolationValue,
    UnsupportedTaskAttribute,
    MissingAskNext,
    InvalidAskTimeout,
    UnsupportedCdAttribute,
    InvalidTag,
    UnreadableState,
    InvalidManifest,
    ForkNextMismatch,
    UnusedAllowedTransition,
    UnreachableState,
    DeadEndState,
    CallWithoutResultPath,
    UnknownField,
    ImplicitTransition,
    ScriptStateNoStaticAnalysis,
    SessionCrossesBackend,
}

impl Check {
    #[cfg(test)]
    pub(crate) const ALL: [Check; 30] = [
        Check::NoEntryPoint,
        Check::AmbiguousEntryPoint,
        Check::FrontmatterParseError,
        Check::InvalidModel,
        Check::UnknownBackend,
        Check::BackendOptionIgnored,
        Check::InvalidEffort,
        Check::MissingTarget,
        Check::MissingReturn,
        Check::MissingForkNext,
        Check::AmbiguousStateResolution,
        Check::ForceImplicitInvalid,
        Check::InvalidTaskValue,
        Check::InvalidIsolationValue,
        Check::UnsupportedTaskAttribute,
        Check::MissingAskNext,
        Check::InvalidAskTimeout,
        Check::UnsupportedCdAttribute,
        Check::InvalidTag,
        Check::UnreadableState,
        Check::InvalidManifest,
        Check::ForkNextMismatch,
        Check::UnusedAllowedTransition,
        Check::UnreachableState,
        Check::DeadEndState,
        Check::CallWithoutResultPath,
        Check::UnknownField,
        Check::ImplicitTransition,
        Check::ScriptStateNoStaticAnalysis,
        Check::SessionCrossesBackend,
    ];

    pub(crate) fn id(self) -> &'static str {
        match self {
            Check::NoEntryPoint => "no-entry-point",
            Check::AmbiguousEntryPoint => "ambiguous-entry-point",
            Check::FrontmatterParseError => "frontmatter-parse-error",
            Check::InvalidModel => "invalid-model",
            Check::UnknownBackend => "unknown-backend",
            Check::BackendOptionIgnored => "backend-option-ignored",
            Check::InvalidEffort => "invalid-effort",
            Check::MissingTarget => "missing-target",
            Check::MissingReturn => "missing-return",
            Check::MissingForkNext => "missing-fork-next",
            Check::AmbiguousStateResolution => "ambiguous-state-resolution",
            Check::ForceImplicitInvalid => "force-implicit-invalid",
            Check::InvalidTaskValue => "invalid-task-value",
            Check::InvalidIsolationValue => "invalid-isolation-value",
            Check::UnsupportedTaskAttribute => "unsupported-task-attribute",
            Check::MissingAskNext => "missing-ask-next",
            Check::InvalidAskTimeout => "invalid-ask-timeout",
            Check::UnsupportedCdAttribute => "unsupported-cd-attribute",
            Check::InvalidTag => "invalid-tag",
            Check::UnreadableState => "unreadable-state",
            Check::InvalidManifest => "invalid-manifest",
            Check::ForkNextMismatch => "fork-next-mismatch",
            Check::UnusedAllowedTransition => "unused-allowed-transition",
            Check::UnreachableState => "unreachable-state",
            Check::DeadEndState => "dead-end-state",
            Check::CallWithoutResultPath => "call-without-result-path",
            Check::UnknownField => "unknown-field",
            Check::ImplicitTransition => "implicit-transition",
            Check::ScriptStateNoStaticAnalysis => "script-state-no-static-analysis",
            Check::SessionCrossesBackend => "session-crosses-backend",
        }
    }

    pub(crate) fn severity(self) -> Severity {
        match self {
            Check::ForkNextMismatch
            | Check::UnusedAllowedTransition
            | Check::UnreachableState
            | Check::DeadEndState
            | Check::CallWithoutResultPath
            | Check::UnknownField
            | Check::BackendOptionIgnored => Severity::Warning,
            Check::ImplicitTransition | Check::ScriptStateNoStaticAnalysis | Check::SessionCrossesBackend => {
                Severity::Info
            }
            _ => Severity::Error,
        }
    }
}

impl fmt::Display for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

impl Serialize for Check {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.id())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_check_is_documented_with_its_severity() {
        let docs = include_str!("../../docs/lint.md");
        for check in Check::ALL {
            let row = format!("| `{}` | {} |", check.id(), check.severity());
            assert!(docs.contains(&row), "docs/lint.md lacks the row starting {row}");
        }
    }
}
