//! Retrying a system call that a signal interrupted (`EINTR`): the one
//! home of that retry for the whole workspace, in the crate every other
//! crate stands on, for `std` and `nix` calls alike.

use nix::errno::Errno;

/// An error that may say "a signal interrupted the call" (`EINTR`), which
/// says nothing about the file or process the call was about.
pub trait MaybeInterrupted {
    /// Whether the call failed only because a signal interrupted it.
    fn is_interrupted(&self) -> bool;
}

impl MaybeInterrupted for std::io::Error {
    fn is_interrupted(&self) -> bool {
        self.kind() == std::io::ErrorKind::Interrupted
    }
}

impl MaybeInterrupted for Errno {
    fn is_interrupted(&self) -> bool {
        *self == Errno::EINTR
    }
}

/// Retries `call` while it fails with `EINTR`: a signal interrupted it,
/// which means nothing about the file. `std` retries some calls itself
/// (open, read, write), not all (stat, canonicalize, create_dir), and
/// `nix` retries none.
pub fn retry_interrupted<T, E: MaybeInterrupted>(mut call: impl FnMut() -> Result<T, E>) -> Result<T, E> {
    loop {
        match call() {
            Err(error) if error.is_interrupted() => continue,
            other => return other,
        }
    }
}
