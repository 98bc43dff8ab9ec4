//! A pidfd: a handle on one process that, unlike a pid, can never come to
//! mean another process. Used to capture identities and to judge them.

use std::io;
use std::os::fd::{AsFd, FromRawFd, OwnedFd};
use std::sync::OnceLock;

use nix::errno::Errno;
use nix::libc;
use nix::poll::{PollFd, PollFlags, PollTimeout};

use crate::interrupted::retry_interrupted;
use crate::pid::Pid;

/// `PID_FS_MAGIC` from `<linux/magic.h>`: pidfds live on pidfs (Linux 6.9+),
/// where the inode number is unique for the life of the boot.
const PID_FS_MAGIC: i64 = 0x5049_4446;

/// The device number of pidfs when pidfds live there, `None` when they do
/// not; unset until the first pidfd was examined.
static PIDFS_DEVICE: OnceLock<Option<u64>> = OnceLock::new();

/// An open pidfd, closed on drop and never inherited.
#[derive(Debug)]
pub struct PidFd(OwnedFd);

impl AsFd for PidFd {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.0.as_fd()
    }
}

impl PidFd {
    /// `pidfd_open(2)`; `Err(Errno::ESRCH)` means no process has this pid.
    pub fn open(pid: Pid) -> Result<PidFd, Errno> {
        // SAFETY: pidfd_open takes a pid and flags and returns a new fd or -1;
        // no memory is passed.
        let raw = retry_interrupted(|| {
            let raw = unsafe { libc::syscall(libc::SYS_pidfd_open, pid.as_raw(), 0 as libc::c_uint) };
            if raw < 0 { Err(Errno::last()) } else { Ok(raw) }
        })?;
        // SAFETY: the kernel just returned this fd to us and nothing else owns it.
        // pidfds are always close-on-exec.
        Ok(PidFd(unsafe { OwnedFd::from_raw_fd(raw as i32) }))
    }

    /// The pidfs inode of the process, or `None` where the kernel's pidfds
    /// do not live on pidfs (anonymous inodes share one inode number).
    ///
    /// Which filesystem pidfds live on cannot change while the system runs,
    /// so it is asked once (`fstatfs`) and remembered as the device number:
    /// every later pidfd costs one `fstat`, which a listing makes per record.
    pub(crate) fn pidfs_inode(&self) -> Option<u64> {
        let stat = retry_interrupted(|| nix::sys::stat::fstat(self.0.as_fd())).ok()?;
        let pidfs_device = match PIDFS_DEVICE.get() {
            Some(known) => *known,
            None => {
                // Not remembered on failure: one failed call must not take
                // the pidfs inode away from every later verdict.
                let fs = retry_interrupted(|| nix::sys::statfs::fstatfs(self.0.as_fd())).ok()?;
                // The magic's integer type is the C library's (`i64` with
                // glibc on 64-bit targets, another width elsewhere): the
                // cast is a no-op only here.
                #[allow(clippy::unnecessary_cast)]
                let device = (fs.filesystem_type().0 as i64 == PID_FS_MAGIC).then_some(stat.st_dev);
                *PIDFS_DEVICE.get_or_init(|| device)
            }
        };
        (pidfs_device == Some(stat.st_dev)).then_some(stat.st_ino)
    }

    /// Whether the process has exited (a zombie awaiting its reaper, or
    /// already reaped). A pidfd polls readable only when the whole thread
    /// group is gone, so a leader that exited while threads run is not exited.
    pub fn has_exited(&self) -> io::Result<bool> {
        let mut poll = [PollFd::new(self.0.as_fd(), PollFlags::POLLIN)];
        let ready = retry_interrupted(|| nix::poll::poll(&mut poll, PollTimeout::ZERO))?;
        let revents = poll[0].revents().unwrap_or(PollFlags::empty());
        Ok(ready > 0 && revents.intersects(PollFlags::POLLIN | PollFlags::POLLHUP))
    }
}
