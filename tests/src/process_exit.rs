//! Waiting for a process to exit through a pidfd (owner-liveness's
//! `PidFd`, the one pidfd helper of the workspace): a pidfd names exactly
//! one process, so a wait or a kill decided on it can never reach a reused
//! pid, and a deadline is a kernel wait, not a sleep loop.

use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use owner_liveness::{Pid, PidFd};

/// A pidfd on `pid`; `None` when no process has that pid.
pub fn pidfd_of(pid: u32) -> Option<PidFd> {
    let pid = Pid::new(pid)?;
    PidFd::open(pid).ok()
}

/// Whether `pid` has exited as a whole: no process at the pid, or a pidfd
/// on it polls readable (every thread is gone; it awaits its parent). A `Z`
/// in `/proc/<pid>/stat` is not enough: a leader that exited shows it while
/// its other threads still run.
pub fn has_exited(pid: u32) -> bool {
    pidfd_of(pid).is_none_or(|pidfd| pidfd.has_exited().unwrap_or(true))
}

/// Whether the process behind `pidfd` exits within `timeout` (sleeping in
/// `poll` until it does or the time is up).
pub fn exits_within(pidfd: &PidFd, timeout: Duration) -> std::io::Result<bool> {
    let deadline = Instant::now() + timeout;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        // poll sleeps whole milliseconds; a sub-millisecond deadline rounds
        // up, which for a random kill instant is as random as the delay.
        let milliseconds = left.as_nanos().div_ceil(1_000_000);
        let timeout = PollTimeout::try_from(milliseconds).unwrap_or(PollTimeout::MAX);
        let mut fds = [PollFd::new(std::os::fd::AsFd::as_fd(pidfd), PollFlags::POLLIN)];
        match poll(&mut fds, timeout) {
            Ok(0) => return Ok(false),
            Ok(_) => return Ok(true),
            Err(Errno::EINTR) => continue,
            Err(errno) => return Err(errno.into()),
        }
    }
}
