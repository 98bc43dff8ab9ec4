//! The running system as registry-core and consent see it: the one value of
//! `SystemFacts` production passes to register, list, prune and the consent
//! decision, so their rules can be table-tested with made-up facts.

use std::borrow::Cow;
use std::io;
use std::path::Path;

use owner_liveness::{
    LinuxFacts, LinuxProcess, Namespaces, OpenProcessError, Pid, SocketIdentity, SystemFacts, own_namespaces,
    read_boot_id,
};

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
    boot_id: Result<String, (io::ErrorKind, String)>,
    namespaces: Result<Namespaces, (io::ErrorKind, String)>,
}

impl RunningSystem {
    /// Reads the boot id and this process's namespaces now; a failure is
    /// kept and given to every verdict that asks.
    pub fn read() -> RunningSystem {
        let remembered = |error: io::Error| (error.kind(), error.to_string());
        RunningSystem {
            boot_id: read_boot_id().map_err(remembered),
            namespaces: own_namespaces().map_err(remembered),
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
        self.namespaces.clone().map_err(|(kind, message)| io::Error::new(kind, message))
    }

    fn open_process(&self, pid: Pid) -> Result<LinuxProcess, OpenProcessError> {
        LinuxFacts.open_process(pid)
    }

    fn stat_socket(&self, path: &Path) -> io::Result<SocketIdentity> {
        LinuxFacts.stat_socket(path)
    }
}
