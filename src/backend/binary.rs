//! Finding a backend's CLI: a flag, an environment variable, config, then `PATH`.
//! Resolved once per run, when the first prompt state needs it (`LazyBinary`): a
//! missing CLI fails only that state, and a workflow that never uses a backend
//! never looks for its CLI (a script-only run used to walk `PATH` three times).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::backend::profile::Profile;
use crate::process::executable::{find_on_path, is_executable};

/// Where a CLI's binary comes from, in precedence order.
#[derive(Clone, Debug, Default)]
pub(crate) struct BinarySources {
    /// `--claude-bin`, `--pi-bin`, `--codex-bin`.
    pub(crate) flag: Option<PathBuf>,
    /// `BATON_CLAUDE_BIN`, `BATON_PI_BIN`, `BATON_CODEX_BIN`.
    pub(crate) environment: Option<PathBuf>,
    /// `claude_bin`, `pi_bin`, `codex_bin` in `.baton/config.toml`.
    pub(crate) config: Option<PathBuf>,
}

/// A backend's binary, looked for the first time it is asked for.
pub(crate) struct LazyBinary {
    sources: BinarySources,
    profile: &'static Profile,
    resolved: OnceLock<Result<PathBuf, BinaryError>>,
}

impl LazyBinary {
    pub(crate) fn new(sources: BinarySources, profile: &'static Profile) -> LazyBinary {
        LazyBinary { sources, profile, resolved: OnceLock::new() }
    }

    pub(crate) fn get(&self) -> Result<&Path, &BinaryError> {
        self.resolved.get_or_init(|| self.sources.resolve(self.profile)).as_ref().map(PathBuf::as_path)
    }
}

/// Why no usable binary was found.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum BinaryError {
    #[error("{origin} names `{}`, which does not exist", .path.display())]
    Missing { origin: String, path: PathBuf },
    #[error("{origin} names `{}`, which is not an executable file", .path.display())]
    NotExecutable { origin: String, path: PathBuf },
    #[error(
        "cannot find the {cli} CLI: give --{program}-bin, set BATON_{upper}_BIN, set {program}_bin in \
         .baton/config.toml, or put `{program}` on PATH ({install})",
        upper = .program.to_ascii_uppercase()
    )]
    NotFound { cli: &'static str, program: &'static str, install: &'static str },
}

impl BinarySources {
    /// `flag` and `config` for `profile`'s CLI, with its `BATON_<PROGRAM>_BIN` as this
    /// process sees it.
    pub(crate) fn with_environment(profile: &Profile, flag: Option<PathBuf>, config: Option<PathBuf>) -> BinarySources {
        let variable = format!("BATON_{}_BIN", profile.program.to_ascii_uppercase());
        BinarySources { flag, environment: std::env::var_os(variable).map(Into::into), config }
    }

    /// The flag, then the environment variable, then config, then `PATH`.
    pub(crate) fn resolve(&self, profile: &Profile) -> Result<PathBuf, BinaryError> {
        let program = profile.program;
        let named = [
            (format!("--{program}-bin"), &self.flag),
            (format!("BATON_{}_BIN", program.to_ascii_uppercase()), &self.environment),
            (format!("{program}_bin in .baton/config.toml"), &self.config),
        ];
        for (origin, path) in named {
            if let Some(path) = path {
                return if is_executable(path) {
                    Ok(path.clone())
                } else if !path.exists() {
                    Err(BinaryError::Missing { origin, path: path.clone() })
                } else {
                    Err(BinaryError::NotExecutable { origin, path: path.clone() })
                };
            }
        }
        find_on_path(program).ok_or(BinaryError::NotFound { cli: profile.cli, program, install: profile.install })
    }
}
