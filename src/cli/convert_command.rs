//! `baton convert PATH --to yaml|dir [--output PATH] [--force]`: a workflow
//! directory as one YAML file, or back (`workflow::convert`). Nothing is
//! overwritten without `--force`.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::ValueEnum;

use crate::cli::CliError;
use crate::exit_code;
use crate::text::state_name;
use crate::workflow::convert::{directory_to_yaml, yaml_to_directory};
use crate::workflow::resolution::state_files;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Form {
    /// One YAML file (`states:`).
    Yaml,
    /// A directory of state files.
    Dir,
}

pub(crate) fn convert(cwd: &Path, path: &str, to: Form, output: Option<&str>, force: bool) -> Result<i32, CliError> {
    let source = cwd.join(path.trim_end_matches('/'));
    let failed = |reason: String| CliError::Convert { path: source.clone(), reason };
    let target = output.map_or_else(|| default_target(&source, to), |output| cwd.join(output));
    if target.exists() && !force {
        return Err(CliError::ConvertTargetExists { path: target });
    }
    let written = match to {
        Form::Yaml => {
            if !source.is_dir() {
                return Err(failed("is not a workflow directory (use --to dir for a YAML file)".into()));
            }
            if !holds_states(&source) {
                return Err(failed("holds no state files (`.md`, `.sh`, `.ps1`, `.bat`); nothing to convert".into()));
            }
            let text = directory_to_yaml(&source).map_err(failed)?;
            std::fs::write(&target, text)
        }
        Form::Dir => {
            let files = yaml_to_directory(&source).map_err(failed)?;
            std::fs::create_dir_all(&target).and_then(|()| write_all(&target, &files))
        }
    };
    written.map_err(|source| CliError::ConvertWrite { path: target.clone(), source })?;
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "Converted {} to {}", source.display(), target.display())
        .map_err(|source| CliError::Stdout { source })?;
    Ok(exit_code::COMPLETED)
}

/// Whether the directory `dir` has a state file to convert.
fn holds_states(dir: &Path) -> bool {
    state_files(dir)
        .is_ok_and(|files| files.iter().any(|file| state_name::is_state_extension(state_name::extension(file))))
}

fn write_all(dir: &Path, files: &[(String, String)]) -> std::io::Result<()> {
    files.iter().try_for_each(|(name, text)| std::fs::write(dir.join(name), text))
}

/// Where `convert` writes without `--output`: beside the source.
fn default_target(source: &Path, to: Form) -> PathBuf {
    match to {
        Form::Yaml => source.with_extension("yaml"),
        Form::Dir => source.with_extension(""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_sit_beside_the_source() {
        assert_eq!(default_target(Path::new("/w/flow"), Form::Yaml), PathBuf::from("/w/flow.yaml"));
        assert_eq!(default_target(Path::new("/w/flow.yaml"), Form::Dir), PathBuf::from("/w/flow"));
    }
}
