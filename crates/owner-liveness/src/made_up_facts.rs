//! Made-up system facts for tests: one `SystemFacts` whose every answer a
//! test sets by hand (the boot, the namespaces, the machine, what runs at
//! each pid, the socket, the clock), so the verdict and every rule built on
//! it can be tested as tables, with no real process having to die. Built
//! only with the `made-up-facts` feature, which the crates whose tests need
//! it enable as a dev-dependency.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io;
use std::path::Path;
use std::time::SystemTime;

use crate::facts::{OpenProcessError, ProcessFacts, SystemFacts};
use crate::glance::ProcGlance;
use crate::identity::{Namespaces, ProcIdentity, ProcReadError, SocketIdentity};
use crate::pid::Pid;

/// What a made-up system answers. `io::Error` is not `Clone`, so errors
/// are kept as kinds and built on each call.
pub struct MadeUpFacts {
    pub boot_id: Result<String, io::ErrorKind>,
    pub namespaces: Result<Namespaces, io::ErrorKind>,
    pub machine: Result<String, io::ErrorKind>,
    /// What this reader's time namespace adds to every start tick it reads.
    pub boottime_offset_ticks: i64,
    /// What opening each pid gives; a pid not here has no process.
    pub processes: HashMap<u32, Result<MadeUpProcess, OpenProcessError>>,
    /// Threads of other processes at these ids, as `/proc/<tid>` shows them
    /// to a glance (no leader there); no handle opens on them, so the pid
    /// should be `Err(NotAProcess)` in `processes` too.
    pub threads: HashMap<u32, ProcIdentity>,
    /// What stat-ing any socket path gives.
    pub socket: Result<SocketIdentity, io::ErrorKind>,
    pub now: SystemTime,
    /// Whether a glance at a pid (`SystemFacts::glance_at_process`) shows
    /// what opening it would: its `/proc` identity and whether it exited.
    /// Off, every verdict goes through the handle; a rule's outcome must be
    /// the same either way.
    pub glances: bool,
    /// Runs whenever a process is looked at (glanced at or opened):
    /// something happening elsewhere at that instant (another process
    /// rewriting a record).
    pub meanwhile: Option<Box<dyn Fn(Pid) + Send + Sync>>,
}

/// What a made-up process answers through its handle.
#[derive(Clone, Debug)]
pub struct MadeUpProcess {
    pub pidfs_inode: Option<u64>,
    pub proc: Result<ProcIdentity, ProcReadError>,
    pub exited: Result<bool, io::ErrorKind>,
    pub user_namespace: Option<u64>,
}

impl MadeUpFacts {
    /// A system of `boot_id` and `namespaces` on `machine`, its clock at
    /// `now`, where nothing runs yet, no time namespace shifts a tick, and
    /// a socket cannot be looked at (an error that proves nothing).
    pub fn new(boot_id: &str, namespaces: Namespaces, machine: &str, now: SystemTime) -> MadeUpFacts {
        MadeUpFacts {
            boot_id: Ok(boot_id.to_owned()),
            namespaces: Ok(namespaces),
            machine: Ok(machine.to_owned()),
            boottime_offset_ticks: 0,
            processes: HashMap::new(),
            threads: HashMap::new(),
            socket: Err(io::ErrorKind::Unsupported),
            now,
            glances: true,
            meanwhile: None,
        }
    }
}

impl SystemFacts for MadeUpFacts {
    type Process = MadeUpProcess;

    fn boot_id(&self) -> io::Result<Cow<'_, str>> {
        self.boot_id.as_deref().map(Cow::Borrowed).map_err(|kind| io::Error::from(*kind))
    }

    fn own_namespaces(&self) -> io::Result<Namespaces> {
        self.namespaces.map_err(io::Error::from)
    }

    fn machine(&self) -> io::Result<Cow<'_, str>> {
        self.machine.as_deref().map(Cow::Borrowed).map_err(|kind| io::Error::from(*kind))
    }

    fn boottime_offset_ticks(&self) -> io::Result<i64> {
        Ok(self.boottime_offset_ticks)
    }

    fn glance_at_process(&self, pid: Pid) -> Option<ProcGlance> {
        if let Some(meanwhile) = &self.meanwhile {
            meanwhile(pid);
        }
        if !self.glances {
            return None;
        }
        if let Some(thread) = self.threads.get(&pid.get()) {
            return Some(ProcGlance {
                uid: thread.uid,
                start_ticks: thread.start_ticks,
                terminal: thread.terminal,
                exited: false,
                leader: false,
            });
        }
        let process = self.processes.get(&pid.get())?.as_ref().ok()?;
        let identity = process.proc.as_ref().ok()?;
        Some(ProcGlance {
            uid: identity.uid,
            start_ticks: identity.start_ticks,
            terminal: identity.terminal,
            exited: (*process.exited.as_ref().ok()?),
            leader: true,
        })
    }

    fn open_process(&self, pid: Pid) -> Result<MadeUpProcess, OpenProcessError> {
        if let Some(meanwhile) = &self.meanwhile {
            meanwhile(pid);
        }
        self.processes.get(&pid.get()).cloned().unwrap_or(Err(OpenProcessError::Gone))
    }

    fn stat_socket(&self, _path: &Path) -> io::Result<SocketIdentity> {
        self.socket.clone().map_err(io::Error::from)
    }

    fn now(&self) -> SystemTime {
        self.now
    }
}

impl ProcessFacts for MadeUpProcess {
    fn pidfs_inode(&self) -> Option<u64> {
        self.pidfs_inode
    }

    fn proc_identity(&self) -> Result<ProcIdentity, ProcReadError> {
        self.proc.clone()
    }

    fn has_exited(&self) -> io::Result<bool> {
        self.exited.map_err(io::Error::from)
    }

    fn user_namespace(&self) -> Option<u64> {
        self.user_namespace
    }
}
