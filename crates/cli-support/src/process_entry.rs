//! The tools' process entry (`tool_main!`), in place of std's runtime start:
//! what that start does which a tool relies on, and nothing else. std's
//! start also finds the main thread's stack by reading `/proc/self/maps` and
//! maps an alternate signal stack for its stack-overflow message: 44 µs of a
//! hook's run before its first step, a tenth of what a state hook adds to the
//! harness's turn. A stack overflow still ends the process (by SIGSEGV,
//! without std's one-line message).

use std::os::fd::{AsFd, BorrowedFd};
use std::process::ExitCode;

/// Defines the binary's `main` (the crate must say `#![no_main]`): runs
/// `$main`, a `fn() -> ExitCode`, through `enter`. `argc` and `argv` are
/// left to std, which on glibc (the only C library the tools are built
/// for) reads them itself before `main`.
#[macro_export]
macro_rules! tool_main {
    ($main:path) => {
        #[unsafe(no_mangle)]
        extern "C" fn main(
            _argc: ::std::os::raw::c_int,
            _argv: *const *const ::std::os::raw::c_char,
        ) -> ::std::os::raw::c_int {
            $crate::enter($main)
        }
    };
}

/// Runs a tool's `main` as std's start would: standard streams that are
/// closed are opened on `/dev/null` first (so that no file the tool opens
/// takes the place of stdout), SIGPIPE is ignored (a closed pipe is an
/// error the tool reports, not a silent death), a panic ends with status
/// 101, and stdout is flushed on the way out. Children keep the default
/// SIGPIPE: std's process spawning restores it.
pub fn enter(main: fn() -> ExitCode) -> ! {
    keep_standard_streams_open();
    // SAFETY: SIG_IGN installs no handler; no code runs on the signal.
    let _ = unsafe {
        nix::sys::signal::signal(nix::sys::signal::Signal::SIGPIPE, nix::sys::signal::SigHandler::SigIgn)
    };
    let status = match std::panic::catch_unwind(main) {
        Ok(code) => status_of(code),
        Err(_) => PANIC_STATUS,
    };
    // Runs std's cleanup, which flushes stdout.
    std::process::exit(status)
}

/// The status a panic ends a process with, as std's start ends it.
const PANIC_STATUS: i32 = 101;

/// The status `code` stands for: std keeps it private (its
/// `ExitCode::exit_process` is not stable yet), and every status a tool
/// ends with is made from a `u8`.
fn status_of(code: ExitCode) -> i32 {
    (0..=u8::MAX).find(|&status| ExitCode::from(status) == code).map_or(1, i32::from)
}

/// Opens `/dev/null` on each of fds 0, 1 and 2 that is closed, as std's
/// start does; aborts when that fails, as it does.
fn keep_standard_streams_open() {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    // SAFETY: only borrowed for the poll; a closed fd is reported as POLLNVAL.
    let streams = [0, 1, 2].map(|fd| unsafe { BorrowedFd::borrow_raw(fd) });
    let mut polled = streams.map(|fd| PollFd::new(fd, PollFlags::empty()));
    let closed: Vec<usize> = loop {
        match poll(&mut polled, PollTimeout::ZERO) {
            Ok(_) => {
                break (0..3)
                    .filter(|&index| {
                        polled[index].revents().is_some_and(|events| events.contains(PollFlags::POLLNVAL))
                    })
                    .collect();
            }
            Err(nix::errno::Errno::EINTR) => continue,
            // poll unusable (a sandbox that forbids it): ask each fd.
            Err(_) => {
                break (0..3)
                    .filter(|&index| {
                        nix::fcntl::fcntl(streams[index].as_fd(), nix::fcntl::FcntlArg::F_GETFD)
                            == Err(nix::errno::Errno::EBADF)
                    })
                    .collect();
            }
        }
    };
    for _ in closed {
        // The lowest free fd is the closed stream's.
        match nix::fcntl::open("/dev/null", nix::fcntl::OFlag::O_RDWR, nix::sys::stat::Mode::empty()) {
            Ok(fd) => std::mem::forget(fd),
            Err(_) => std::process::abort(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_a_tool_ends_with_is_told_back() {
        for status in 0..=u8::MAX {
            assert_eq!(status_of(ExitCode::from(status)), i32::from(status));
        }
        assert_eq!(status_of(ExitCode::SUCCESS), 0);
        assert_eq!(status_of(ExitCode::FAILURE), 1);
    }
}
