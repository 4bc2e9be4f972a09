//! The environment a benchmark's processes start in, made like a user's shell.
//!
//! `cargo bench` points the dynamic loader at its build directories
//! (`LD_LIBRARY_PATH`); a user's shell does not, and with it every `baton`, script
//! and CLI a benchmark starts would first look for its libraries in some 190
//! places that hold none of them (strace), which a user's run never pays.

/// Drop what `cargo` added to the environment for its own builds. Call it first in
/// a benchmark's `main`, before any thread is started.
pub(crate) fn drop_cargo_loader_path() {
    // SAFETY: called before the benchmark starts any thread (its only caller is
    // the first statement of each benchmark's `main`), so nothing reads the
    // environment concurrently.
    unsafe { std::env::remove_var("LD_LIBRARY_PATH") };
}
