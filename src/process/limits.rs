//! Process-wide resource limits Baton sets for itself before running steps.

/// Raise the soft limit on open files to the hard limit: every running script
/// holds two pipes, and a 1,000-worker fan-out would exhaust the common default
/// of 1,024. Failure is harmless (the old limit stays).
pub(crate) fn raise_open_file_limit() {
    // SAFETY: get/setrlimit on our own process with a struct we own.
    unsafe {
        let mut limit: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
}
