//! The verdict (docs/contract.md §5): is the recorded owner still the process running at
//! its pid? One function over a small trait of OS facts, so each rule is a
//! table test, and `LinuxFacts`, the real implementation.

use std::fmt;
use std::io;
use std::path::Path;

use nix::errno::Errno;

use crate::identity::{
    Namespaces, OwnerIdentity, ProcIdentity, ProcReadError, SocketIdentity, mtime_ns, own_namespaces,
    read_boot_id, read_proc_identity, read_user_namespace,
};
use crate::pid::Pid;
use crate::pidfd::PidFd;

/// The three answers. `Dead` is only said on positive evidence.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Liveness {
    Alive,
    Unknown,
    Dead,
}

impl Liveness {
    pub fn as_str(self) -> &'static str {
        match self {
            Liveness::Alive => "alive",
            Liveness::Unknown => "unknown",
            Liveness::Dead => "dead",
        }
    }
}

impl fmt::Display for Liveness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A liveness with the one-line reason that says what was seen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    pub liveness: Liveness,
    pub reason: String,
}

impl Verdict {
    fn new(liveness: Liveness, reason: impl Into<String>) -> Verdict {
        Verdict { liveness, reason: reason.into() }
    }
}

/// The OS facts the verdict reads.
pub trait SystemFacts {
    type Process: ProcessFacts;
    fn boot_id(&self) -> io::Result<String>;
    fn own_namespaces(&self) -> io::Result<Namespaces>;
    /// Opens a handle on the process at `pid` (a pidfd on Linux).
    fn open_process(&self, pid: Pid) -> Result<Self::Process, OpenProcessError>;
    fn stat_socket(&self, path: &Path) -> io::Result<SocketIdentity>;
}

/// Facts about one process, read through a handle that cannot change meaning.
pub trait ProcessFacts {
    fn pidfs_inode(&self) -> Option<u64>;
    fn proc_identity(&self) -> Result<ProcIdentity, ProcReadError>;
    fn has_exited(&self) -> io::Result<bool>;
    /// Inode of the process's user namespace, when it may be read.
    fn user_namespace(&self) -> Option<u64>;
}

/// Why no handle could be opened on a pid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OpenProcessError {
    /// ESRCH: no process has this pid.
    Gone,
    /// ENOENT or EINVAL: the pid names no thread-group leader, only a thread
    /// of some other process (or, before Linux 6.15, a process in the middle
    /// of being reaped). The recorded owner was a process, so it is no
    /// longer at this pid.
    NotAProcess,
    Other(String),
}

/// Judges a recorded identity (and socket, if any) against the system now.
/// Rules run in the order of docs/contract.md §5; any dead makes the verdict dead, else any
/// unknown makes it unknown, else alive.
pub fn judge<F: SystemFacts>(
    identity: &OwnerIdentity,
    socket: Option<&SocketIdentity>,
    facts: &F,
) -> Verdict {
    let pid = identity.pid;
    let mut unknowns: Vec<String> = Vec::new();

    // 1. Boot.
    match facts.boot_id() {
        Ok(boot_id) if boot_id != identity.boot_id => {
            return Verdict::new(Liveness::Dead, "recorded in an earlier boot");
        }
        Ok(_) => {}
        Err(error) => unknowns.push(format!("boot id unreadable: {error}")),
    }

    // 2. Namespaces: pids and start times mean other things elsewhere, so
    // nothing below could be trusted. (A user namespace changes only what
    // uids look like; rule 4 deals with it.)
    let own = match facts.own_namespaces() {
        Ok(own) if own.pid_ns != identity.pid_ns => {
            return Verdict::new(Liveness::Unknown, "recorded in another pid namespace");
        }
        Ok(own) if own.time_ns != identity.time_ns => {
            return Verdict::new(Liveness::Unknown, "recorded in another time namespace");
        }
        Ok(own) => own,
        Err(error) => {
            return Verdict::new(Liveness::Unknown, format!("own namespaces unreadable: {error}"));
        }
    };

    // 3 to 5. The process itself. A handle that cannot be opened for a
    // reason other than the pid's absence leaves the process unexamined,
    // but the socket below may still prove death.
    let mut running_since = None;
    match facts.open_process(pid) {
        Ok(process) => match judge_process(identity, own.user_ns, &process, &mut unknowns) {
            ProcessFinding::Dead(reason) => return Verdict::new(Liveness::Dead, reason),
            ProcessFinding::RunningSince(ticks) => running_since = ticks,
        },
        Err(OpenProcessError::Gone) => return Verdict::new(Liveness::Dead, format!("pid {pid} is gone")),
        Err(OpenProcessError::NotAProcess) => {
            return Verdict::new(
                Liveness::Dead,
                format!("pid {pid} is not a process now (a thread of another process, or one being reaped)"),
            );
        }
        Err(OpenProcessError::Other(why)) => unknowns.push(format!("pid {pid} cannot be opened: {why}")),
    }

    // 6. The harness's socket, when one was recorded.
    if let Some(socket) = socket {
        let path = socket.path.display();
        match facts.stat_socket(&socket.path) {
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                return Verdict::new(Liveness::Dead, format!("socket {path} is gone"));
            }
            Err(error) => unknowns.push(format!("socket {path} unreadable: {error}")),
            Ok(now) => {
                let replaced = if socket.ino != 0 || socket.dev != 0 {
                    (now.dev, now.ino) != (socket.dev, socket.ino)
                } else {
                    now.mtime_ns != socket.mtime_ns
                };
                if replaced {
                    return Verdict::new(Liveness::Dead, format!("socket {path} was replaced"));
                }
            }
        }
    }

    if !unknowns.is_empty() {
        return unknown(unknowns);
    }
    let since = running_since.map(|ticks| format!(" since tick {ticks}")).unwrap_or_default();
    Verdict::new(Liveness::Alive, format!("pid {pid} running{since}"))
}

enum ProcessFinding {
    Dead(String),
    /// Not proven dead; the start tick when `/proc` could be read.
    RunningSince(Option<u64>),
}

/// Rules 4 and 5 on an open handle. `/proc` is read before the exit check on
/// purpose: if the handle's process exits and the pid is reused meanwhile,
/// `/proc` may describe the newcomer, but the exit check then says dead.
fn judge_process<P: ProcessFacts>(
    identity: &OwnerIdentity,
    own_user_ns: u64,
    process: &P,
    unknowns: &mut Vec<String>,
) -> ProcessFinding {
    let pid = identity.pid;

    // 4. Is it the same process?
    let pidfs_agrees = match (identity.pidfs_ino, process.pidfs_inode()) {
        (Some(recorded), Some(now)) if recorded != now => {
            return ProcessFinding::Dead(format!(
                "pid {pid} now names another process (pidfs inode {now}, not {recorded})"
            ));
        }
        (Some(_), Some(_)) => true,
        _ => false,
    };
    let mut running_since = None;
    match process.proc_identity() {
        Ok(ProcIdentity { start_ticks, .. }) if start_ticks != identity.start_ticks => {
            return ProcessFinding::Dead(format!(
                "pid {pid} now names a process started at tick {start_ticks}, not {}",
                identity.start_ticks
            ));
        }
        Ok(ProcIdentity { uid, start_ticks }) => match uid_frame(identity, own_user_ns, process) {
            UidFrame::Shared if uid == identity.uid => running_since = Some(start_ticks),
            UidFrame::Shared if own_user_ns == INITIAL_USER_NS_INODE => {
                return ProcessFinding::Dead(format!(
                    "pid {pid} now belongs to uid {uid}, not {}",
                    identity.uid
                ));
            }
            // Only the initial user namespace's inode is never reused; any
            // other one may be a new namespace with the inode of a gone one,
            // where the same owner shows another uid.
            UidFrame::Shared => unknowns.push(format!(
                "pid {pid} now shows uid {uid}, not {}, but in user namespace {own_user_ns}, whose \
                 inode may have been reused, that proves nothing",
                identity.uid
            )),
            // The uid is translated here, so it proves nothing either way;
            // the pidfs inode and the start tick must prove the identity.
            UidFrame::Foreign(_) if pidfs_agrees => running_since = Some(start_ticks),
            UidFrame::Foreign(why) => unknowns.push(format!(
                "pid {pid} started at tick {start_ticks} as recorded, but its uid cannot be compared \
                 ({why}) and no pidfs inode proves it is the same process"
            )),
        },
        // The pid exists (the handle opened), so a missing /proc entry is a
        // hidden one, never proof of death.
        Err(why) => unknowns.push(format!("/proc/{pid} unreadable: {why}")),
    }

    // 5. Exited and awaiting its reaper? A pidfd polls readable only once
    // the whole thread group is gone, so a leader that exited while its
    // threads run is not taken for dead.
    match process.has_exited() {
        Ok(true) => return ProcessFinding::Dead(format!("pid {pid} has exited (zombie)")),
        Ok(false) => {}
        Err(error) => unknowns.push(format!("pid {pid} cannot be polled: {error}")),
    }
    ProcessFinding::RunningSince(running_since)
}

/// The inode of the initial user namespace (the kernel's
/// `PROC_USER_INIT_INO`): fixed, and never given to another namespace.
pub const INITIAL_USER_NS_INODE: u64 = 0xEFFF_FFFD;

/// Whether the recorded uid and the one `/proc` shows now are in the same
/// user namespace, so that comparing them means anything.
enum UidFrame {
    Shared,
    /// Not comparable, and why.
    Foreign(String),
}

fn uid_frame<P: ProcessFacts>(identity: &OwnerIdentity, own_user_ns: u64, process: &P) -> UidFrame {
    match identity.user_ns {
        Some(recorded) if recorded == own_user_ns => UidFrame::Shared,
        Some(recorded) => UidFrame::Foreign(format!(
            "recorded in user namespace {recorded}, read from user namespace {own_user_ns}"
        )),
        // An older record does not say which user namespace its uid is
        // in; its registrar ran in the session, so the owner's own user
        // namespace stands for it.
        None => match process.user_namespace() {
            Some(owner) if owner == own_user_ns => UidFrame::Shared,
            Some(owner) => UidFrame::Foreign(format!(
                "the owner is in user namespace {owner}, read from user namespace {own_user_ns}"
            )),
            None => UidFrame::Foreign(format!(
                "the owner's user namespace cannot be read from user namespace {own_user_ns}"
            )),
        },
    }
}

fn unknown(reasons: Vec<String>) -> Verdict {
    Verdict::new(Liveness::Unknown, reasons.join("; "))
}

/// The real system, through `/proc` and pidfds.
#[derive(Clone, Copy, Debug, Default)]
pub struct LinuxFacts;

/// A pidfd and the pid it was opened for.
#[derive(Debug)]
pub struct LinuxProcess {
    pid: Pid,
    pidfd: PidFd,
}

impl SystemFacts for LinuxFacts {
    type Process = LinuxProcess;

    fn boot_id(&self) -> io::Result<String> {
        read_boot_id()
    }

    fn own_namespaces(&self) -> io::Result<Namespaces> {
        own_namespaces()
    }

    fn open_process(&self, pid: Pid) -> Result<LinuxProcess, OpenProcessError> {
        match PidFd::open(pid) {
            Ok(pidfd) => Ok(LinuxProcess { pid, pidfd }),
            Err(Errno::ESRCH) => Err(OpenProcessError::Gone),
            // With a positive pid and no flags, both mean that no thread-group
            // leader has this pid: Linux 6.15 and later say ENOENT for a pid
            // that names a thread, earlier kernels EINVAL (pidfd_open(2)).
            Err(Errno::ENOENT | Errno::EINVAL) => Err(OpenProcessError::NotAProcess),
            Err(other) => Err(OpenProcessError::Other(other.desc().to_owned())),
        }
    }

    fn stat_socket(&self, path: &Path) -> io::Result<SocketIdentity> {
        let metadata = std::fs::metadata(path)?;
        use std::os::unix::fs::MetadataExt;
        Ok(SocketIdentity {
            path: path.to_owned(),
            dev: metadata.dev(),
            ino: metadata.ino(),
            mtime_ns: mtime_ns(&metadata),
        })
    }
}

impl ProcessFacts for LinuxProcess {
    fn pidfs_inode(&self) -> Option<u64> {
        self.pidfd.pidfs_inode()
    }

    fn proc_identity(&self) -> Result<ProcIdentity, ProcReadError> {
        read_proc_identity(self.pid)
    }

    fn has_exited(&self) -> io::Result<bool> {
        self.pidfd.has_exited()
    }

    fn user_namespace(&self) -> Option<u64> {
        read_user_namespace(self.pid)
    }
}

/// Judges against the real system.
pub fn judge_now(identity: &OwnerIdentity, socket: Option<&SocketIdentity>) -> Verdict {
    judge(identity, socket, &LinuxFacts)
}
