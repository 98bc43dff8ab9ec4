//! Retrying a system call that a signal interrupted (`EINTR`): its own
//! module because the directory, its files and its listing all need it, and
//! none of them should reach into another for it.

use nix::errno::Errno;

/// Retries an `std` file operation while it fails with `EINTR`
/// (`ErrorKind::Interrupted`): a signal interrupted it, which means
/// nothing about the file. `std` retries some calls itself (open, read,
/// write), not all (stat, canonicalize, create_dir).
pub fn retry_interrupted<T>(mut call: impl FnMut() -> std::io::Result<T>) -> std::io::Result<T> {
    loop {
        match call() {
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

/// Retries `call` while it fails with `EINTR`: a signal interrupted it, and
/// that means nothing about the file.
pub(crate) fn retry_on_interrupt<T>(mut call: impl FnMut() -> nix::Result<T>) -> nix::Result<T> {
    loop {
        match call() {
            Err(Errno::EINTR) => continue,
            other => return other,
        }
    }
}
