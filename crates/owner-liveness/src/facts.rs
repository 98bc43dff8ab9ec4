//! The facts the verdict and a capture read from the running system: two
//! small traits, so every rule can be tested against made-up facts, and
//! `LinuxFacts`, the real implementation through `/proc` and pidfds.

use std::borrow::Cow;
use std::io;
use std::path::Path;

use nix::errno::Errno;

use crate::glance::{ProcGlance, glance_at_process};
use crate::identity::{
    Namespaces, ProcIdentity, ProcReadError, SocketIdentity, own_namespaces, read_boot_id,
    read_proc_identity, read_proc_start_ticks, read_user_namespace,
};
use crate::pid::Pid;
use crate::pidfd::PidFd;
use crate::world::{read_boottime_offset_ticks, read_machine};

/// The OS facts the verdict reads, and the clock the rules around it read
/// (a record's age, the time a file is written): the one way roster looks
/// at the running system, so every rule can be tested against made-up
/// facts.
pub trait SystemFacts {
    type Process: ProcessFacts;
    /// Borrowed where the facts hold it already: judging ten thousand
    /// records compares it ten thousand times.
    fn boot_id(&self) -> io::Result<Cow<'_, str>>;
    fn own_namespaces(&self) -> io::Result<Namespaces>;
    /// This machine (`world::read_machine`): asked only when a record's
    /// boot id is not this boot's, and by a capture.
    fn machine(&self) -> io::Result<Cow<'_, str>>;
    /// The reader's time-namespace boot-time offset in ticks
    /// (`world::read_boottime_offset_ticks`): what it adds to every start
    /// tick it reads.
    fn boottime_offset_ticks(&self) -> io::Result<i64>;
    /// A glance at the process at `pid` without a handle (`glance.rs`):
    /// what the verdict proves alive an owner without a pidfs inode by, in
    /// half the system calls; `None` when there is nothing to go by, and
    /// the verdict judges through a handle.
    fn glance_at_process(&self, pid: Pid) -> Option<ProcGlance>;
    /// Opens a handle on the process at `pid` (a pidfd on Linux).
    fn open_process(&self, pid: Pid) -> Result<Self::Process, OpenProcessError>;
    fn stat_socket(&self, path: &Path) -> io::Result<SocketIdentity>;
    /// The time now; the system clock unless the facts are made up.
    fn now(&self) -> std::time::SystemTime {
        std::time::SystemTime::now()
    }
}

/// Facts about one process, read through a handle that cannot change meaning.
pub trait ProcessFacts {
    fn pidfs_inode(&self) -> Option<u64>;
    fn proc_identity(&self) -> Result<ProcIdentity, ProcReadError>;
    /// The start ticks alone, where the uid is not needed (an agreeing
    /// pidfs inode already proves the process); cheaper where the uid costs
    /// a system call of its own.
    fn proc_start_ticks(&self) -> Result<u64, ProcReadError> {
        self.proc_identity().map(|identity| identity.start_ticks)
    }
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

    fn boot_id(&self) -> io::Result<Cow<'_, str>> {
        read_boot_id().map(Cow::Owned)
    }

    fn own_namespaces(&self) -> io::Result<Namespaces> {
        own_namespaces()
    }

    fn machine(&self) -> io::Result<Cow<'_, str>> {
        read_machine().map(Cow::Owned)
    }

    fn boottime_offset_ticks(&self) -> io::Result<i64> {
        read_boottime_offset_ticks(own_namespaces()?.time_ns)
    }

    fn glance_at_process(&self, pid: Pid) -> Option<ProcGlance> {
        glance_at_process(pid)
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
        SocketIdentity::capture(path)
    }
}

impl ProcessFacts for LinuxProcess {
    fn pidfs_inode(&self) -> Option<u64> {
        self.pidfd.pidfs_inode()
    }

    fn proc_identity(&self) -> Result<ProcIdentity, ProcReadError> {
        read_proc_identity(self.pid, self.pidfd.effective_uid())
    }

    fn proc_start_ticks(&self) -> Result<u64, ProcReadError> {
        read_proc_start_ticks(self.pid)
    }

    fn has_exited(&self) -> io::Result<bool> {
        self.pidfd.has_exited()
    }

    fn user_namespace(&self) -> Option<u64> {
        read_user_namespace(self.pid)
    }
}
