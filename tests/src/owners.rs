//! Stand-in session owners for the benchmark and the soak: child processes
//! that do nothing but `pause()`, so a record can name a live process without
//! a real harness. They are forked, not spawned, because ten thousand
//! `exec`s would take longer than the measurements themselves.

use std::time::Duration;

use anyhow::Context;
use nix::errno::Errno;
use nix::libc;
use nix::sys::signal::{Signal, kill};
use nix::sys::wait::{WaitStatus, waitpid};
use nix::unistd::{ForkResult, Pid as NixPid, fork, getpid};
use owner_liveness::{OwnerIdentity, Pid, capture_identity};

/// One forked owner. It dies with this process (parent-death signal) even
/// when the caller forgets it, and is killed and reaped by `kill_and_reap`.
#[derive(Debug)]
pub struct PausedOwner {
    pid: Pid,
}

/// Many owners, killed and reaped together when dropped.
#[derive(Debug, Default)]
pub struct OwnerPool {
    owners: Vec<PausedOwner>,
}

impl PausedOwner {
    /// Forks a child that closes every descriptor and pauses until killed.
    ///
    /// Must be called from a thread that outlives the child: the kernel
    /// sends the parent-death signal when the forking *thread* exits.
    pub fn fork() -> anyhow::Result<PausedOwner> {
        let parent = getpid();
        // SAFETY: the child only makes async-signal-safe system calls
        // (prctl, getppid, setsid, close_range, pause, _exit) and never returns into
        // Rust code, so forking from a process that may have other threads
        // is sound.
        match unsafe { fork() }.context("fork an owner process")? {
            ForkResult::Child => unsafe { paused_child(parent) },
            ForkResult::Parent { child } => {
                let raw = u32::try_from(child.as_raw()).expect("fork returns a positive pid");
                Ok(PausedOwner { pid: Pid::new(raw).expect("fork returns a non-zero pid") })
            }
        }
    }

    pub fn pid(&self) -> Pid {
        self.pid
    }

    /// The owner's identity, captured as `roster-register` captures one.
    pub fn identity(&self) -> anyhow::Result<OwnerIdentity> {
        capture_identity(self.pid).with_context(|| format!("capture the identity of owner {}", self.pid))
    }

    fn nix_pid(&self) -> NixPid {
        NixPid::from_raw(self.pid.as_raw())
    }
}

impl Drop for PausedOwner {
    fn drop(&mut self) {
        let pid = self.nix_pid();
        let _ = kill(pid, Signal::SIGKILL);
        reap(pid);
    }
}

fn reap(pid: NixPid) {
    loop {
        match waitpid(pid, None) {
            Err(Errno::EINTR) => continue,
            Ok(WaitStatus::StillAlive) => std::thread::sleep(Duration::from_millis(1)),
            _ => return,
        }
    }
}

/// The body of a forked owner.
///
/// # Safety
/// Only to be called in the child right after `fork`.
unsafe fn paused_child(parent: NixPid) -> ! {
    let _ = nix::sys::prctl::set_pdeathsig(Signal::SIGKILL);
    // The parent may have died before the prctl took effect. `_exit`, not
    // `exit`: nothing of the parent's Rust state may run in this child.
    if nix::unistd::getppid() != parent {
        // SAFETY: `_exit` takes an integer and never returns.
        unsafe { libc::_exit(0) };
    }
    // A session of its own, without a controlling terminal, wherever the
    // tests or the bench run: what reads an owner's terminal (a session's
    // location) sees the same everywhere.
    let _ = nix::unistd::setsid();
    // Inherited descriptors would keep pipes of concurrently spawned tools
    // open for as long as this owner lives, and hang their readers (nix has
    // no close_range).
    // SAFETY: a plain system call with integer arguments.
    unsafe { libc::syscall(libc::SYS_close_range, 0 as libc::c_uint, libc::c_uint::MAX, 0 as libc::c_uint) };
    loop {
        nix::unistd::pause();
    }
}

impl OwnerPool {
    /// Forks `count` owners.
    pub fn fork(count: usize) -> anyhow::Result<OwnerPool> {
        let mut pool = OwnerPool { owners: Vec::with_capacity(count) };
        for _ in 0..count {
            pool.owners.push(PausedOwner::fork()?);
        }
        Ok(pool)
    }

    /// Every owner's identity, in fork order.
    pub fn identities(&self) -> anyhow::Result<Vec<OwnerIdentity>> {
        self.owners.iter().map(PausedOwner::identity).collect()
    }

    pub fn pids(&self) -> impl Iterator<Item = Pid> + '_ {
        self.owners.iter().map(PausedOwner::pid)
    }

    pub fn count(&self) -> usize {
        self.owners.len()
    }

    pub fn get(&self, index: usize) -> Pid {
        self.owners[index].pid
    }

    /// Kills every owner now (see `Drop`).
    pub fn kill_all(self) {
        drop(self);
    }
}

impl Drop for OwnerPool {
    /// Kills every owner first and reaps them afterwards, which is much
    /// faster than one kill-and-wait round trip per owner.
    fn drop(&mut self) {
        let owners = std::mem::take(&mut self.owners);
        for owner in &owners {
            let _ = kill(owner.nix_pid(), Signal::SIGKILL);
        }
        for owner in owners {
            let pid = owner.nix_pid();
            std::mem::forget(owner);
            reap(pid);
        }
    }
}
