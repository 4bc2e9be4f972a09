//! The daemon's bearer token: 32 random bytes in hex, made on the first start in
//! `.baton/serve/token` with mode 0600 (only the user who runs the daemon can read
//! it), and compared in constant time so a wrong guess learns nothing from timing.

use std::io::{self, Read, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::serve::ServeError;

pub(crate) const TOKEN_FILE: &str = "token";

#[derive(Clone)]
pub(crate) struct Token(String);

impl std::fmt::Debug for Token {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("Token(…)")
    }
}

/// Where the token lives, whether it was just made.
pub(crate) struct LoadedToken {
    pub(crate) token: Token,
    pub(crate) path: PathBuf,
    pub(crate) fresh: bool,
}

impl Token {
    /// The token in `serve_dir`, made (or replaced, with `rotate`) as needed. A token
    /// file others could read is narrowed to 0600.
    pub(crate) fn load_or_create(serve_dir: &Path, rotate: bool) -> Result<LoadedToken, ServeError> {
        let path = serve_dir.join(TOKEN_FILE);
        let failed = |source| ServeError::Token { path: path.clone(), source };
        if !rotate {
            match std::fs::read_to_string(&path) {
                Ok(text) if is_token(text.trim()) => {
                    let mode = std::fs::metadata(&path).map_err(failed)?.permissions().mode();
                    if mode & 0o077 != 0 {
                        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).map_err(failed)?;
                    }
                    return Ok(LoadedToken { token: Token(text.trim().to_string()), path, fresh: false });
                }
                Ok(_) => {}
                Err(error) if error.kind() == io::ErrorKind::NotFound => {}
                Err(error) => return Err(failed(error)),
            }
        }
        std::fs::create_dir_all(serve_dir).map_err(failed)?;
        let token = Token(random_hex(32).map_err(failed)?);
        // Written beside, then renamed: a reader never sees half a token, and the
        // file is never readable by others, not even for a moment.
        let partial = serve_dir.join(".token.partial");
        let _ = std::fs::remove_file(&partial);
        let mut file =
            std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&partial).map_err(failed)?;
        file.write_all(format!("{}\n", token.0).as_bytes()).and_then(|()| file.sync_all()).map_err(failed)?;
        std::fs::rename(&partial, &path).map_err(failed)?;
        Ok(LoadedToken { token, path, fresh: true })
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether `given` is the token, in time that depends only on the lengths.
    pub(crate) fn matches(&self, given: &str) -> bool {
        let (expected, given) = (self.0.as_bytes(), given.as_bytes());
        if expected.len() != given.len() {
            return false;
        }
        expected.iter().zip(given).fold(0u8, |difference, (a, b)| difference | (a ^ b)) == 0
    }
}

fn is_token(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|byte| byte.is_ascii_hexdigit())
}

/// `bytes` random bytes from the kernel, in hex.
fn random_hex(bytes: usize) -> io::Result<String> {
    let mut buffer = vec![0u8; bytes];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut buffer)?;
    Ok(buffer.iter().map(|byte| format!("{byte:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_is_made_once_with_mode_0600_and_rotated_on_request() {
        let dir = tempfile::tempdir().expect("temp dir");
        let first = Token::load_or_create(dir.path(), false).expect("create");
        assert!(first.fresh);
        assert!(is_token(first.token.as_str()));
        let mode = std::fs::metadata(&first.path).expect("metadata").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let again = Token::load_or_create(dir.path(), false).expect("load");
        assert!(!again.fresh);
        assert!(again.token.matches(first.token.as_str()));
        let rotated = Token::load_or_create(dir.path(), true).expect("rotate");
        assert!(rotated.fresh);
        assert!(!rotated.token.matches(first.token.as_str()));
    }

    #[test]
    fn a_token_file_readable_by_others_is_narrowed() {
        let dir = tempfile::tempdir().expect("temp dir");
        let made = Token::load_or_create(dir.path(), false).expect("create");
        std::fs::set_permissions(&made.path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        Token::load_or_create(dir.path(), false).expect("load");
        let mode = std::fs::metadata(&made.path).expect("metadata").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn matches_refuses_other_lengths_and_other_bytes() {
        let token = Token("ab".repeat(32));
        assert!(token.matches(&"ab".repeat(32)));
        assert!(!token.matches(&"ab".repeat(31)));
        assert!(!token.matches(&format!("{}ac", "ab".repeat(31))));
        assert!(!token.matches(""));
    }
}
