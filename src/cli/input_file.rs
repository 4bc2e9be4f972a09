//! `--input-file PATH` on `run`, `resume`, `answer` and `rerun`: input (or an
//! answer) read from a file, or from stdin with `-`. A command-line argument
//! cannot carry every text a person can type: one argument is capped by the
//! kernel (128 KiB on Linux, "Argument list too long"), and one that starts with
//! `-` reads as a flag unless given as `--input=-x`. A file carries any text
//! unchanged; `baton serve` hands its requests' input to its children this way.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::bounded_read::read_at_most;
use crate::model::on_ask::OnAsk;

/// The most `--input-file` reads: 32 MiB, more than any request body `baton serve`
/// takes, so the daemon never hands a child an input it refuses. Without a cap
/// `--input-file /dev/zero` (or a runaway pipe on `-`) read until memory ran out.
pub(crate) const MAX_INPUT_FILE_BYTES: u64 = 32 * 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub(crate) enum InputFileError {
    #[error("cannot read --input-file {}: {source}", .path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error(
        "--input-file {} is larger than {MAX_INPUT_FILE_BYTES} bytes (32 MiB), the most baton reads as input",
        .path.display()
    )]
    TooLarge { path: PathBuf },
    #[error("--input-file {} is not UTF-8 text (byte {at} is not)", .path.display())]
    NotText { path: PathBuf, at: usize },
    #[error(
        "--input-file - reads stdin, which --on-ask json keeps for its control lines; write the input to a file \
         and give its path"
    )]
    StdinTaken,
}

/// Fill `input` from `file` when one is given (clap keeps the two apart).
pub(crate) fn take_input_file(
    input: &mut Option<String>,
    file: Option<&Path>,
    on_ask: Option<OnAsk>,
) -> Result<(), InputFileError> {
    let Some(path) = file else { return Ok(()) };
    let bytes = if path == Path::new("-") {
        if on_ask == Some(OnAsk::Json) {
            return Err(InputFileError::StdinTaken);
        }
        read_capped(std::io::stdin().lock(), path)?
    } else {
        let file =
            std::fs::File::open(path).map_err(|source| InputFileError::Read { path: path.to_path_buf(), source })?;
        read_capped(file, path)?
    };
    let text = String::from_utf8(bytes)
        .map_err(|error| InputFileError::NotText { path: path.to_path_buf(), at: error.utf8_error().valid_up_to() })?;
    *input = Some(text);
    Ok(())
}

/// Read at most [`MAX_INPUT_FILE_BYTES`]; one byte more is an error.
fn read_capped(reader: impl Read, path: &Path) -> Result<Vec<u8>, InputFileError> {
    read_at_most(reader, MAX_INPUT_FILE_BYTES)
        .map_err(|source| InputFileError::Read { path: path.to_path_buf(), source })?
        .ok_or_else(|| InputFileError::TooLarge { path: path.to_path_buf() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_gives_its_text_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("in.txt");
        std::fs::write(&path, "-y\n--input\n").unwrap();
        let mut input = None;
        take_input_file(&mut input, Some(&path), None).unwrap();
        assert_eq!(input.as_deref(), Some("-y\n--input\n"));
    }

    #[test]
    fn stdin_is_refused_where_json_control_lines_need_it() {
        let mut input = None;
        let error = take_input_file(&mut input, Some(Path::new("-")), Some(OnAsk::Json)).unwrap_err();
        assert!(error.to_string().starts_with("--input-file - reads stdin"));
    }
}
