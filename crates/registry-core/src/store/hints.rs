//! Hint files: small files any value of which is harmless (the reaping
//! cursor), read and written in place without the lock through one handle.

use std::fs::File;
use std::os::unix::fs::FileExt;

use nix::errno::Errno;
use nix::fcntl::{OFlag, openat};
use nix::sys::stat::{Mode, fstat};
use nix::unistd::{UnlinkatFlags, unlinkat};
use owner_liveness::retry_interrupted;

use crate::store::directory::SubDir;
use crate::store::files::{io_errno, untrusted_whatever_its_size};

/// The most of a hint that is read: a hint is a few bytes, and whatever
/// is longer is no hint anyone wrote.
const LARGEST_HINT: usize = 64;

/// A small hint file, opened once (created if missing) to be read and then
/// overwritten: for data any value of which is harmless, such as the
/// reaping cursor. Never follows a symlink, never blocks on a FIFO put in
/// its place, and reads and writes only a regular file of this user's
/// that only they can write, as every roster file.
pub struct Hint {
    file: File,
    /// Its size when opened: what a write of fewer bytes has to cut off.
    size_when_opened: u64,
}

impl Hint {
    /// Opens `name` in `directory`, creating it `0600` when missing. What
    /// is there and is not a file to trust (a symlink, a FIFO, a hard link,
    /// another user's file, one others may write, one that cannot be opened
    /// for writing) is replaced by a new one: it is only a hint, in
    /// roster's own directory, and a hint that could never be written
    /// would keep every walk at its start. One too long to be a hint is
    /// opened all the same: it reads as none, and the next write cuts it
    /// back. `None` when no hint can be had (a directory in its place, a
    /// directory that cannot be written).
    pub fn open(directory: SubDir<'_>, name: &str) -> Option<Hint> {
        Hint::open_trusted(directory, name).or_else(|| {
            match retry_interrupted(|| unlinkat(directory.fd, name, UnlinkatFlags::NoRemoveDir)) {
                Ok(()) | Err(Errno::ENOENT) => Hint::open_trusted(directory, name),
                Err(_) => None,
            }
        })
    }

    /// `open`, without replacing anything.
    fn open_trusted(directory: SubDir<'_>, name: &str) -> Option<Hint> {
        let flags = OFlag::O_RDWR
            | OFlag::O_CREAT
            | OFlag::O_NOFOLLOW
            | OFlag::O_NONBLOCK
            | OFlag::O_NOCTTY
            | OFlag::O_CLOEXEC;
        let fd =
            retry_interrupted(|| openat(directory.fd, name, flags, Mode::S_IRUSR | Mode::S_IWUSR)).ok()?;
        let stat = retry_interrupted(|| fstat(&fd)).ok()?;
        let size_when_opened = u64::try_from(stat.st_size).unwrap_or(u64::MAX);
        untrusted_whatever_its_size(&stat).is_none().then(|| Hint { file: File::from(fd), size_when_opened })
    }

    /// What the hint holds (empty when it was just made); `None` when it
    /// cannot be read or is longer than any hint.
    pub fn read(&self) -> Option<Vec<u8>> {
        let mut bytes = vec![0u8; LARGEST_HINT + 1];
        let read =
            retry_interrupted(|| self.file.read_at(&mut bytes, 0).map_err(|error| io_errno(&error))).ok()?;
        (read <= LARGEST_HINT).then(|| {
            bytes.truncate(read);
            bytes
        })
    }

    /// Overwrites the hint with `bytes`, with one write at its start (no
    /// temporary, no fsync). Writers may race without the lock: Linux lets
    /// one write to a file at a time, so when they all write the same
    /// length the file holds one writer's bytes, never a mix of lengths; a
    /// reader racing a write may see bytes of two. Whatever followed the
    /// written bytes (a longer file put there by anything else) is cut off
    /// after the write, so it cannot make the hint unreadable for good; a
    /// file that was no longer when opened is not cut (one writer of
    /// another length meanwhile leaves it to the next write).
    pub fn write(&self, bytes: &[u8]) -> std::result::Result<(), Errno> {
        self.file.write_all_at(bytes, 0).map_err(|error| io_errno(&error))?;
        let written = bytes.len() as u64;
        if self.size_when_opened > written {
            self.file.set_len(written).map_err(|error| io_errno(&error))?;
        }
        Ok(())
    }
}
