//! Which scripts can run here (R1.8) and the order abstract names are searched
//! in on each platform (R1.12, R1.13).

use std::fmt;

/// The operating-system family whose scripts can run (R1.8).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Platform {
    Unix,
    Windows,
}

impl Platform {
    /// The platform this binary was built for.
    pub(crate) const CURRENT: Platform = if cfg!(windows) { Platform::Windows } else { Platform::Unix };

    /// The extensions an abstract name is looked up with, in the order reported
    /// to the user when none exists (R1.12, R1.13).
    pub(super) fn searched_extensions(self) -> &'static [&'static str] {
        match self {
            Platform::Unix => &[".md", ".sh"],
            Platform::Windows => &[".md", ".ps1", ".bat", ".sh"],
        }
    }

    /// Whether a state with extension `ext` (any case) cannot run here (R1.8).
    pub(crate) fn rejects_extension(self, ext: &str) -> bool {
        let foreign: &[&str] = match self {
            Platform::Unix => &[".bat", ".ps1"],
            Platform::Windows => &[".sh"],
        };
        foreign.iter().any(|known| known.eq_ignore_ascii_case(ext))
    }

    /// The kinds of state file that run here, for messages.
    pub(super) fn state_kinds(self) -> &'static str {
        match self {
            Platform::Unix => "a prompt (`.md`) or a script (`.sh`)",
            Platform::Windows => "a prompt (`.md`) or a script (`.ps1`, `.bat`)",
        }
    }

    /// Why an explicit name with a foreign extension is refused.
    pub(super) fn foreign_script_rule(self) -> &'static str {
        match self {
            Platform::Unix => "`.bat` and `.ps1` scripts run only on Windows",
            Platform::Windows => "`.sh` scripts run only on Unix",
        }
    }
}

impl fmt::Display for Platform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Platform::Unix => "Unix",
            Platform::Windows => "Windows",
        })
    }
}
