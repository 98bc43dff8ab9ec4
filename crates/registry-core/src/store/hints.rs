//! Hint files: small files any value of which is harmless (the reaping
//! cursor), written in place without the lock and read like any entry.

use std::fs::File;
use std::io::Write;

use nix::errno::Errno;
use nix::fcntl::{OFlag, openat};
use nix::sys::stat::Mode;
use owner_liveness::retry_interrupted;

use crate::store::directory::SubDir;
use crate::store::files::{io_errno, read_entry};

/// Overwrites a small hint file in place, with one write at its start (no
/// temporary, no truncation, no fsync): for data any value of which is
/// harmless, such as the reaping cursor. Writers may race without the lock:
/// Linux lets one write to a file at a time, so when they all write the
/// same length the file holds one writer's bytes, never a mix of lengths;
/// a reader racing a write may see bytes of two. Whatever followed the
/// written bytes (a longer file put there by anything else) is cut off
/// after the write, so it cannot make the hint unreadable for good. Never
/// follows a symlink, never blocks on a FIFO put in its place.
pub fn write_hint(directory: SubDir<'_>, name: &str, bytes: &[u8]) -> std::result::Result<(), Errno> {
    let flags = OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC;
    let fd = retry_interrupted(|| openat(directory.fd, name, flags, Mode::S_IRUSR | Mode::S_IWUSR))?;
    let mut file = File::from(fd);
    file.write_all(bytes).map_err(|error| io_errno(&error))?;
    file.set_len(bytes.len() as u64).map_err(|error| io_errno(&error))
}

/// Reads a small hint file written by `write_hint`; `None` when absent,
/// untrusted or unreadable.
pub fn read_hint(directory: SubDir<'_>, name: &str) -> Option<Vec<u8>> {
    read_entry(directory, name).ok().map(|contents| contents.bytes)
}
