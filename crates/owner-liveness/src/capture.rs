//! Capturing the identity of a live process (docs/contract.md §4.2): the
//! pidfd first, `/proc` next, the pidfd again, so a process that exits
//! meanwhile is refused rather than mistaken for the newcomer at its pid.

use nix::errno::Errno;

use crate::facts::{LinuxFacts, SystemFacts};
use crate::identity::{
    BOOT_ID_PATH, CaptureError, OwnerIdentity, ProcIdentity, read_proc_identity, read_proc_identity_uid,
};
use crate::pid::Pid;
use crate::pidfd::PidFd;
use crate::proc_stat::ProcStat;
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
    let pidfd = open_pidfd(pid)?;
    if has_exited(&pidfd, pid)? {
        return Err(CaptureError::NotRunning(pid));
    }
    let proc = read_proc_identity(pid, pidfd.effective_uid())
        .map_err(|why| CaptureError::ProcUnreadable { pid, why })?;
    identity_from(pid, &pidfd, proc, facts)
}

/// A process held by a pidfd opened before its stat was read: that stat is
/// the process's own as long as the pidfd shows it running, which its
/// capture checks last (`capture_held_identity_seeing_terminal`). What a
/// caller reads of the process before capturing it (the owner a `--pid`
/// names, its start and whether it is a kernel thread) is then the very
/// stat the capture records, read once.
#[derive(Debug)]
pub struct HeldProcess {
    pid: Pid,
    pidfd: PidFd,
    stat: ProcStat,
}

impl HeldProcess {
    /// Opens a pidfd on `pid`, then reads its stat.
    pub fn open(pid: Pid) -> Result<HeldProcess, CaptureError> {
        let pidfd = open_pidfd(pid)?;
        let stat =
            crate::identity::read_proc_stat(pid).map_err(|why| CaptureError::ProcUnreadable { pid, why })?;
        Ok(HeldProcess { pid, pidfd, stat })
    }

    pub fn pid(&self) -> Pid {
        self.pid
    }

    /// The stat read once the pidfd was open.
    pub fn stat(&self) -> &ProcStat {
        &self.stat
    }
}

/// `capture_identity_seeing_terminal` of a held process, from the stat read
/// when it was taken hold of.
pub(crate) fn capture_held_identity_seeing_terminal(
    held: &HeldProcess,
    facts: &impl SystemFacts,
) -> Result<(OwnerIdentity, u64), CaptureError> {
    let pid = held.pid;
    if has_exited(&held.pidfd, pid)? {
        return Err(CaptureError::NotRunning(pid));
    }
    let uid = match held.pidfd.effective_uid() {
        Some(uid) => uid,
        None => read_proc_identity_uid(pid).map_err(|why| CaptureError::ProcUnreadable { pid, why })?,
    };
    let proc = ProcIdentity { uid, start_ticks: held.stat.start_ticks, terminal: held.stat.tty_nr };
    identity_from(pid, &held.pidfd, proc, facts)
}

/// A pidfd on `pid`, or why no process runs there.
fn open_pidfd(pid: Pid) -> Result<PidFd, CaptureError> {
    PidFd::open(pid).map_err(|errno| match errno {
        // ENOENT (EINVAL before Linux 6.15): the pid names a thread, not a
        // process; no process runs at it.
        Errno::ESRCH | Errno::ENOENT | Errno::EINVAL => CaptureError::NotRunning(pid),
        other => CaptureError::System { what: format!("pidfd_open({pid})"), why: other.desc().to_owned() },
    })
}

/// Whether the process behind `pidfd` has exited.
fn has_exited(pidfd: &PidFd, pid: Pid) -> Result<bool, CaptureError> {
    pidfd.has_exited().map_err(|error| CaptureError::System {
        what: format!("poll pidfd of {pid}"),
        why: error.to_string(),
    })
}

/// The identity of the process behind `pidfd` from what `/proc` said of it
/// (`proc`, read after the pidfd was opened) and the capturing process's
/// facts; refused when the process exited meanwhile.
fn identity_from(
    pid: Pid,
    pidfd: &PidFd,
    proc: ProcIdentity,
    facts: &impl SystemFacts,
) -> Result<(OwnerIdentity, u64), CaptureError> {
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
    if has_exited(pidfd, pid)? {
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
