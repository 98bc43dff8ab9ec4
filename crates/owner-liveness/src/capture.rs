//! Capturing the identity of a live process (docs/contract.md §4.2): the
//! pidfd first, `/proc` next, the pidfd again, so a process that exits
//! meanwhile is refused rather than mistaken for the newcomer at its pid.

use nix::errno::Errno;

use crate::facts::{LinuxFacts, SystemFacts};
use crate::identity::{BOOT_ID_PATH, CaptureError, OwnerIdentity, read_proc_identity};
use crate::pid::Pid;
use crate::pidfd::PidFd;
use crate::world::ticks_in_initial_time;

/// Captures the identity of the live process `pid`, reading the boot id and
/// this process's namespaces afresh (`capture_identity_with` takes them
/// from facts that were read once).
pub fn capture_identity(pid: Pid) -> Result<OwnerIdentity, CaptureError> {
    capture_identity_with(pid, &LinuxFacts)
}

/// Captures the identity of the live process `pid`, with the boot id and
/// the capturing process's namespaces as `facts` give them: a registrar
/// that judges records too reads them once for both. The pidfd is opened
/// first and checked again after `/proc` was read: if the process exited
/// meanwhile, `/proc` may already describe a newcomer at the same pid, so
/// the capture is refused rather than trusted.
pub(crate) fn capture_identity_with(
    pid: Pid,
    facts: &impl SystemFacts,
) -> Result<OwnerIdentity, CaptureError> {
    capture_identity_seeing_terminal(pid, facts).map(|(identity, _)| identity)
}

/// `capture_identity_with`, with the controlling terminal the process had
/// when its stat was read (the kernel's `tty_nr`, 0 for none), so that a
/// caller recording where the session shows need not read the stat again.
pub(crate) fn capture_identity_seeing_terminal(
    pid: Pid,
    facts: &impl SystemFacts,
) -> Result<(OwnerIdentity, u64), CaptureError> {
    let pidfd = PidFd::open(pid).map_err(|errno| match errno {
        // ENOENT (EINVAL before Linux 6.15): the pid names a thread, not a
        // process; no process runs at it.
        Errno::ESRCH | Errno::ENOENT | Errno::EINVAL => CaptureError::NotRunning(pid),
        other => CaptureError::System { what: format!("pidfd_open({pid})"), why: other.desc().to_owned() },
    })?;
    let exited = |pidfd: &PidFd| {
        pidfd.has_exited().map_err(|error| CaptureError::System {
            what: format!("poll pidfd of {pid}"),
            why: error.to_string(),
        })
    };
    if exited(&pidfd)? {
        return Err(CaptureError::NotRunning(pid));
    }
    let proc = read_proc_identity(pid, pidfd.effective_uid())
        .map_err(|why| CaptureError::ProcUnreadable { pid, why })?;
    let pidfs_ino = pidfd.pidfs_inode();
    let offset = facts.boottime_offset_ticks().map_err(|error| CaptureError::System {
        what: crate::world::TIME_OFFSETS_PATH.to_owned(),
        why: error.to_string(),
    })?;
    let start_ticks =
        ticks_in_initial_time(proc.start_ticks, offset).ok_or_else(|| CaptureError::System {
            what: format!("/proc/{pid}/stat"),
            why: format!(
                "start tick {} is before this time namespace's offset of {offset} ticks",
                proc.start_ticks
            ),
        })?;
    let machine = facts.machine().map_err(|error| CaptureError::System {
        what: "this machine's identity".to_owned(),
        why: error.to_string(),
    })?;
    let boot_id = facts
        .boot_id()
        .map_err(|error| CaptureError::System { what: BOOT_ID_PATH.to_owned(), why: error.to_string() })?;
    let namespaces = facts
        .own_namespaces()
        .map_err(|error| CaptureError::System { what: "/proc/self/ns".to_owned(), why: error.to_string() })?;
    if exited(&pidfd)? {
        return Err(CaptureError::ExitedDuringCapture(pid));
    }
    let identity = OwnerIdentity {
        pid,
        uid: proc.uid,
        start_ticks,
        pidfs_ino,
        boot_id: boot_id.into_owned(),
        machine: Some(machine.into_owned()),
        pid_ns: namespaces.pid_ns,
        time_ns: namespaces.time_ns,
        user_ns: Some(namespaces.user_ns),
        chain: Vec::new(),
    };
    Ok((identity, proc.terminal))
}
