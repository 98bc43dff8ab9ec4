//! A pidfd: a handle on one process that, unlike a pid, can never come to
//! mean another process. Used to capture identities and to judge them.

use std::io;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

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

/// What `PIDFD_GET_INFO` (Linux 6.13+) fills in: `struct pidfd_info` of
/// `<linux/pidfd.h>` in its first version, the one every later kernel
/// still accepts (the kernel copies no more than the size the request
/// names). Only the credentials are read here.
#[repr(C)]
#[derive(Default)]
struct PidfdInfo {
    mask: u64,
    cgroupid: u64,
    pid: u32,
    tgid: u32,
    ppid: u32,
    ruid: u32,
    rgid: u32,
    euid: u32,
    egid: u32,
    suid: u32,
    sgid: u32,
    fsuid: u32,
    fsgid: u32,
    exit_code: i32,
}

/// `PIDFD_INFO_CREDS`: the kernel filled in the uids and gids.
const PIDFD_INFO_CREDS: u64 = 1 << 1;

/// `PIDFD_GET_INFO`, `_IOWR(PIDFS_IOCTL_MAGIC, 11, struct pidfd_info)`, in
/// the request layout of the architectures that share the generic one
/// (direction in the top two bits, then fourteen of size, type and number).
#[cfg(any(
    target_arch = "x86_64",
    target_arch = "x86",
    target_arch = "aarch64",
    target_arch = "arm",
    target_arch = "riscv64",
    target_arch = "s390x",
    target_arch = "loongarch64"
))]
const PIDFD_GET_INFO: Option<u64> =
    Some((3 << 30) | ((std::mem::size_of::<PidfdInfo>() as u64) << 16) | (0xFF << 8) | 11);
#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "x86",
    target_arch = "aarch64",
    target_arch = "arm",
    target_arch = "riscv64",
    target_arch = "s390x",
    target_arch = "loongarch64"
)))]
const PIDFD_GET_INFO: Option<u64> = None;

/// Set once a kernel answered `PIDFD_GET_INFO` as one without it does
/// (before Linux 6.13, or pidfds not on pidfs): it is not asked again.
static PIDFD_INFO_UNSUPPORTED: AtomicBool = AtomicBool::new(false);

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

    /// The process's effective uid, as the calling process's user namespace
    /// shows it, when the kernel tells it through the pidfd
    /// (`PIDFD_GET_INFO`); `None` when it does not, for whatever reason (an
    /// older kernel, a process gone or outside this pid namespace's view),
    /// and the caller asks `/proc` instead. It is the owner `/proc/<pid>`
    /// shows (the directory always shows the effective uid, mapped the same
    /// way), read without a path lookup, and from the very process the
    /// pidfd holds.
    pub(crate) fn effective_uid(&self) -> Option<u32> {
        let request = PIDFD_GET_INFO?;
        if PIDFD_INFO_UNSUPPORTED.load(Ordering::Relaxed) {
            return None;
        }
        let mut info = PidfdInfo::default();
        let answer = retry_interrupted(|| {
            // SAFETY: the request names the size of `info`, which the
            // kernel writes at most; `info` lives through the call.
            let result =
                unsafe { libc::ioctl(self.0.as_raw_fd(), request as _, std::ptr::from_mut(&mut info)) };
            if result < 0 { Err(Errno::last()) } else { Ok(()) }
        });
        match answer {
            Ok(()) if info.mask & PIDFD_INFO_CREDS != 0 => Some(info.euid),
            Ok(()) => None,
            Err(Errno::ENOTTY | Errno::EINVAL | Errno::EOPNOTSUPP) => {
                PIDFD_INFO_UNSUPPORTED.store(true, Ordering::Relaxed);
                None
            }
            Err(_) => None,
        }
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

#[cfg(test)]
mod tests {
    use std::os::unix::fs::MetadataExt;

    use nix::sys::signal::{Signal, kill};
    use nix::sys::wait::waitpid;
    use nix::unistd::{ForkResult, Uid, fork, pipe, read, setresuid, write};

    use super::*;

    /// The uid `/proc/<pid>` shows as its owner.
    fn directory_uid(pid: u32) -> u32 {
        std::fs::metadata(format!("/proc/{pid}")).expect("stat /proc/<pid>").uid()
    }

    /// Whether this kernel predates `PIDFD_GET_INFO` (Linux 6.13).
    fn kernel_predates_pidfd_info() -> bool {
        let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").expect("read the kernel release");
        let mut numbers = release.trim().split(['.', '-']).map(|part| part.parse::<u32>().unwrap_or(0));
        (numbers.next().unwrap_or(0), numbers.next().unwrap_or(0)) < (6, 13)
    }

    #[test]
    fn the_uid_a_pidfd_tells_is_the_owner_proc_shows_for_the_process() {
        // A child that takes other uids, its real one unlike its effective
        // one, and makes itself non-dumpable: the files in its /proc
        // directory then show root, the directory still its effective uid.
        let (ready_read, ready_write) = pipe().expect("a pipe");
        let nobody = 65_534;
        // SAFETY: the child makes only async-signal-safe system calls
        // (setresuid, prctl, write, pause, _exit) and never returns.
        let child = match unsafe { fork() }.expect("fork") {
            ForkResult::Child => {
                let (real, effective) = (Uid::from_raw(4_321), Uid::from_raw(nobody));
                let ready =
                    setresuid(real, effective, real).is_ok() && nix::sys::prctl::set_dumpable(false).is_ok();
                let _ = write(&ready_write, if ready { b"y" } else { b"n" });
                loop {
                    nix::unistd::pause();
                }
            }
            ForkResult::Parent { child } => child,
        };
        drop(ready_write);
        let mut answer = [0u8; 1];
        let said = read(&ready_read, &mut answer);
        let child_pid = Pid::new(child.as_raw() as u32).expect("a pid");
        let outcome = std::panic::catch_unwind(|| {
            assert_eq!(said.ok(), Some(1), "the child said nothing");
            assert_eq!(&answer, b"y", "the child could not take uid {nobody} (run as root)");
            let stat_owner = std::fs::metadata(format!("/proc/{child_pid}/stat")).unwrap().uid();
            assert_eq!(stat_owner, 0, "a non-dumpable process's /proc files show root");
            let own = Pid::new(std::process::id()).unwrap();
            for (pid, expected) in [(own, directory_uid(own.get())), (child_pid, nobody)] {
                assert_eq!(directory_uid(pid.get()), expected);
                let told = PidFd::open(pid).expect("pidfd_open").effective_uid();
                match told {
                    Some(uid) => assert_eq!(uid, expected, "pid {pid}"),
                    None => assert!(kernel_predates_pidfd_info(), "a kernel with PIDFD_GET_INFO told no uid"),
                }
            }
        });
        let _ = kill(child, Signal::SIGKILL);
        let _ = waitpid(child, None);
        if let Err(panic) = outcome {
            std::panic::resume_unwind(panic);
        }
    }
}
