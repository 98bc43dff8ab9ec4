//! The running system as registry-core and consent see it: the one value of
//! `SystemFacts` production passes to register, list, prune and the consent
//! decision, so their rules can be table-tested with made-up facts.

use std::borrow::Cow;
use std::io;
use std::path::Path;

use std::sync::OnceLock;

use owner_liveness::{
    LinuxFacts, LinuxProcess, Namespaces, OpenProcessError, Pid, ProcGlance, SocketIdentity, SystemFacts,
    own_namespaces, read_boot_id, read_boottime_offset_ticks, read_machine,
};

/// A failed read, kept to be given to every caller that asks.
type Remembered<T> = Result<T, (io::ErrorKind, String)>;

fn remembered(error: io::Error) -> (io::ErrorKind, String) {
    (error.kind(), error.to_string())
}

fn given_back<T: Clone>(value: &Remembered<T>) -> io::Result<T> {
    value.clone().map_err(|(kind, message)| io::Error::new(kind, message))
}

/// The running system, with the facts that cannot change while this process
/// runs read once, when it is made: the boot id, and the process's own pid and time
/// namespaces (`/proc/self/ns/{pid,time}` name the namespaces the process
/// lives in, which neither `setns` nor `unshare` changes; those only affect
/// its children). Re-reading them for each of ten thousand records made
/// them a third of a listing's system calls.
/// What production passes wherever registry-core and consent take
/// `&impl SystemFacts`; tests pass made-up facts instead.
#[derive(Debug)]
pub struct RunningSystem {
    boot_id: Remembered<String>,
    namespaces: Remembered<Namespaces>,
    /// The time namespace's boot-time offset: no system call at all in the
    /// initial time namespace.
    boottime_offset_ticks: Remembered<i64>,
    /// Read on first use: a listing asks only for a record of another boot.
    machine: OnceLock<Remembered<String>>,
}

impl RunningSystem {
    /// Reads the boot id and this process's namespaces now; a failure is
    /// kept and given to every verdict that asks.
    pub fn read() -> RunningSystem {
        let namespaces = own_namespaces().map_err(remembered);
        let boottime_offset_ticks = match &namespaces {
            Ok(namespaces) => read_boottime_offset_ticks(namespaces.time_ns).map_err(remembered),
            Err(error) => Err(error.clone()),
        };
        RunningSystem {
            boot_id: read_boot_id().map_err(remembered),
            namespaces,
            boottime_offset_ticks,
            machine: OnceLock::new(),
        }
    }
}

impl SystemFacts for RunningSystem {
    type Process = LinuxProcess;

    fn boot_id(&self) -> io::Result<Cow<'_, str>> {
        match &self.boot_id {
            Ok(boot_id) => Ok(Cow::Borrowed(boot_id)),
            Err((kind, message)) => Err(io::Error::new(*kind, message.clone())),
        }
    }

    fn own_namespaces(&self) -> io::Result<Namespaces> {
        given_back(&self.namespaces)
    }

    fn machine(&self) -> io::Result<Cow<'_, str>> {
        match self.machine.get_or_init(|| read_machine().map_err(remembered)) {
            Ok(machine) => Ok(Cow::Borrowed(machine)),
            Err((kind, message)) => Err(io::Error::new(*kind, message.clone())),
        }
    }

    fn boottime_offset_ticks(&self) -> io::Result<i64> {
        given_back(&self.boottime_offset_ticks)
    }

    fn glance_at_process(&self, pid: Pid) -> Option<ProcGlance> {
        LinuxFacts.glance_at_process(pid)
    }

    fn open_process(&self, pid: Pid) -> Result<LinuxProcess, OpenProcessError> {
        LinuxFacts.open_process(pid)
    }

    fn stat_socket(&self, path: &Path) -> io::Result<SocketIdentity> {
        LinuxFacts.stat_socket(path)
    }
}
