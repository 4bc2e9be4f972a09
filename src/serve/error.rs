//! What stops `baton serve` from starting, each said precisely (exit code 1; 4 when
//! another daemon serves the project already, `exit_code::ALREADY_SERVING`).

use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub(crate) enum ServeError {
    #[error(
        "--bind {addr} can be reached from other machines; give --allow-remote as well to serve there (every \
         request still needs the token), or bind to 127.0.0.1"
    )]
    RemoteBind { addr: SocketAddr },
    #[error("cannot listen on {addr}: {source}")]
    Bind { addr: SocketAddr, source: io::Error },
    #[error("--root {}: {reason}", .path.display())]
    Root { path: PathBuf, reason: String },
    #[error("cannot use the token file {}: {source}", .path.display())]
    Token { path: PathBuf, source: io::Error },
    #[error("cannot write {}: {source}", .path.display())]
    Write { path: PathBuf, source: io::Error },
    #[error("cannot find the baton program to run workflows with: {source}")]
    CurrentExe { source: io::Error },
    #[error(
        "another baton serve (pid {pid}, {address}) already serves the runs in {}; use that one, or stop it first \
         (`kill -TERM {pid}`)",
        .baton_dir.display()
    )]
    AlreadyServing { pid: String, address: String, baton_dir: PathBuf },
    #[error("the server stopped: {source}")]
    Serve { source: io::Error },
}
