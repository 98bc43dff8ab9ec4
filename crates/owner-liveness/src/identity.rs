//! `OwnerIdentity` and its `ChainMember`s: what proves that the process at a pid today is the one
//! that registered (docs/contract.md §4.2), and the readers of its parts in `/proc`.

use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use nix::errno::Errno;

use crate::interrupted::retry_interrupted;
use crate::pid::Pid;
use crate::proc_read::{STAT_BUFFER_BYTES, read_small_file};
use crate::proc_stat::parse_proc_stat;

/// Where the kernel tells the current boot.
pub const BOOT_ID_PATH: &str = "/proc/sys/kernel/random/boot_id";

/// The recorded identity of an owner process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnerIdentity {
    pub pid: Pid,
    /// Owner of `/proc/<pid>` at capture: the process's effective uid.
    pub uid: u32,
    /// Field 22 of `/proc/<pid>/stat`; where `machine` is known, taken back
    /// to the initial time namespace's clock (`world.rs`), so that a reader
    /// in any time namespace compares the same number.
    pub start_ticks: u64,
    /// pidfs inode of a pidfd on the process, where the kernel has pidfs.
    pub pidfs_ino: Option<u64>,
    pub boot_id: String,
    /// The machine the identity was captured on (`machine-id:…` or
    /// `hostname:…`, `world::read_machine`). `None` in records written
    /// before roster recorded it; those keep the rules of their time: start
    /// ticks as their registrar's time namespace saw them.
    pub machine: Option<String>,
    /// Inodes of the capturing process's pid and time namespaces; 0 where
    /// the kernel has no time namespaces.
    pub pid_ns: u64,
    pub time_ns: u64,
    /// Inode of the user namespace `uid` is expressed in: the capturing
    /// process's own (`/proc/self/ns/user`). Inside a user namespace the
    /// kernel shows every uid translated (an unmapped one as the overflow
    /// uid, usually 65534), so a uid means something only to a reader in
    /// the same user namespace. `None` in records written before roster
    /// recorded it.
    pub user_ns: Option<u64>,
    /// The other harness processes of the owner's chain (`chain.rs`),
    /// outermost first, innermost last; empty for a single process. Boot
    /// id and namespaces above are shared by every member.
    pub chain: Vec<ChainMember>,
}

/// The most processes an owner chain holds: the outermost (the owner whose
/// pid names the record) and at most three below it.
pub const MAX_CHAIN_MEMBERS: usize = 4;

/// One process of an owner chain below the outermost: its own identity.
/// Boot id and namespaces are the owner's (captured by the same registrar).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ChainMember {
    pub pid: Pid,
    /// Owner of `/proc/<pid>` at capture, in the owner's `user_ns`.
    pub uid: u32,
    /// Field 22 of `/proc/<pid>/stat`.
    pub start_ticks: u64,
    /// pidfs inode of a pidfd on the process, where the kernel has pidfs.
    pub pidfs_ino: Option<u64>,
}

impl OwnerIdentity {
    /// The outermost process of the chain as a member (the owner itself).
    pub fn outermost(&self) -> ChainMember {
        ChainMember { pid: self.pid, uid: self.uid, start_ticks: self.start_ticks, pidfs_ino: self.pidfs_ino }
    }

    /// Every member, outermost first, innermost last.
    pub fn members(&self) -> impl Iterator<Item = ChainMember> + '_ {
        std::iter::once(self.outermost()).chain(self.chain.iter().copied())
    }
}

/// The capturing or judging process's own namespaces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Namespaces {
    pub pid_ns: u64,
    pub time_ns: u64,
    /// Inode of `/proc/self/ns/user`.
    pub user_ns: u64,
}

/// What `/proc/<pid>` says about a process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcIdentity {
    pub uid: u32,
    pub start_ticks: u64,
    /// Its controlling terminal's device number (field 7 of `stat`,
    /// `tty_nr`); 0 without one.
    pub terminal: u64,
}

/// Why `/proc/<pid>` could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ProcReadError {
    /// ENOENT: gone, or hidden by `hidepid=invisible`.
    #[error("not found")]
    NotFound,
    #[error("permission denied")]
    PermissionDenied,
    #[error("{0}")]
    Other(String),
}

/// Why an identity could not be captured.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CaptureError {
    #[error("pid {0} is not running")]
    NotRunning(Pid),
    #[error("pid {0} exited while its identity was being read")]
    ExitedDuringCapture(Pid),
    #[error("/proc/{pid} unreadable: {why}")]
    ProcUnreadable { pid: Pid, why: ProcReadError },
    #[error("{what}: {why}")]
    System { what: String, why: String },
}

/// The identity of a socket file a harness listens on (docs/contract.md §3 `socket`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SocketIdentity {
    pub path: PathBuf,
    pub dev: u64,
    pub ino: u64,
    pub mtime_ns: i128,
}

impl SocketIdentity {
    /// Stats `path` (following links, as a client connecting would).
    pub fn capture(path: &Path) -> io::Result<SocketIdentity> {
        let metadata = std::fs::metadata(path)?;
        Ok(SocketIdentity {
            path: path.to_owned(),
            dev: metadata.dev(),
            ino: metadata.ino(),
            mtime_ns: mtime_ns(&metadata),
        })
    }
}

pub(crate) fn mtime_ns(metadata: &std::fs::Metadata) -> i128 {
    i128::from(metadata.mtime()) * 1_000_000_000 + i128::from(metadata.mtime_nsec())
}

/// Reads the uid (owner of `/proc/<pid>`) and start ticks of a process.
///
/// The uid comes from the directory on purpose: the kernel gives the files
/// inside it (`stat`, `status`, …) to root once a process makes itself
/// non-dumpable, but the directory keeps the effective uid, so a live owner
/// that hardens itself is not mistaken for another user's process.
///
/// `known_uid` is that uid when it was told already (by the pidfd, which
/// tells the same one): the directory is then not looked up.
pub(crate) fn read_proc_identity(pid: Pid, known_uid: Option<u32>) -> Result<ProcIdentity, ProcReadError> {
    let uid = match known_uid {
        Some(uid) => uid,
        None => read_proc_identity_uid(pid)?,
    };
    let stat = read_proc_stat(pid)?;
    Ok(ProcIdentity { uid, start_ticks: stat.start_ticks, terminal: stat.tty_nr })
}

/// The uid `/proc/<pid>` belongs to: the process's effective uid, where
/// its pidfd cannot tell it.
pub(crate) fn read_proc_identity_uid(pid: Pid) -> Result<u32, ProcReadError> {
    let directory = format!("/proc/{pid}");
    Ok(retry_interrupted(|| nix::sys::stat::stat(directory.as_str()))
        .map_err(|errno| classify_proc_error(errno.into()))?
        .st_uid)
}

/// Reads only the start ticks of a process, from `/proc/<pid>/stat`: what a
/// verdict needs once an agreeing pidfs inode has made the uid moot.
pub(crate) fn read_proc_start_ticks(pid: Pid) -> Result<u64, ProcReadError> {
    read_proc_stat(pid).map(|stat| stat.start_ticks)
}

/// `/proc/<pid>/stat`, parsed, read in one read.
pub fn read_proc_stat(pid: Pid) -> Result<crate::proc_stat::ProcStat, ProcReadError> {
    let mut buffer = [0u8; STAT_BUFFER_BYTES];
    let stat_bytes =
        read_small_file(&format!("/proc/{pid}/stat"), &mut buffer).map_err(classify_proc_error)?;
    parse_proc_stat(stat_bytes).map_err(|error| ProcReadError::Other(error.to_string()))
}

/// What a failed read of `/proc/<pid>` means for a verdict.
fn classify_proc_error(error: io::Error) -> ProcReadError {
    match error.kind() {
        io::ErrorKind::NotFound => ProcReadError::NotFound,
        io::ErrorKind::PermissionDenied => ProcReadError::PermissionDenied,
        _ if error.raw_os_error() == Some(libc_esrch()) => ProcReadError::NotFound,
        _ => ProcReadError::Other(error.to_string()),
    }
}

fn libc_esrch() -> i32 {
    Errno::ESRCH as i32
}

/// The current boot id, trimmed.
pub fn read_boot_id() -> io::Result<String> {
    let mut buffer = [0u8; 128];
    let bytes = read_small_file(BOOT_ID_PATH, &mut buffer)?;
    let text =
        std::str::from_utf8(bytes).map_err(|_| io::Error::other(format!("{BOOT_ID_PATH} is not UTF-8")))?;
    Ok(text.trim().to_owned())
}

/// The calling process's pid, time and user namespace inodes; a kernel
/// without time namespaces (before 5.6) reports 0 for that one.
///
/// Each is read as the link `/proc/self/ns/<kind>` names it
/// (`pid:[4026531836]`, the namespace's inode number, the very one a stat
/// through the link shows), through one handle on `/proc/self/ns`: reading
/// a link does not open the namespace's own inode, as a stat through it
/// does, and a third of the time of three stats goes on every hook run.
pub fn own_namespaces() -> io::Result<Namespaces> {
    let directory = crate::interrupted::retry_interrupted(|| {
        nix::fcntl::open(
            "/proc/self/ns",
            nix::fcntl::OFlag::O_RDONLY | nix::fcntl::OFlag::O_DIRECTORY | nix::fcntl::OFlag::O_CLOEXEC,
            nix::sys::stat::Mode::empty(),
        )
    })
    .map_err(io::Error::from)?;
    let pid_ns = namespace_inode(&directory, "pid")?;
    let time_ns = match namespace_inode(&directory, "time") {
        Ok(inode) => inode,
        Err(error) if error.kind() == io::ErrorKind::NotFound => 0,
        Err(error) => return Err(error),
    };
    let user_ns = namespace_inode(&directory, "user")?;
    Ok(Namespaces { pid_ns, time_ns, user_ns })
}

/// The inode number of the namespace the link `kind` in the namespace
/// directory `directory` names: `<kind>:[<inode>]`.
fn namespace_inode(directory: &std::os::fd::OwnedFd, kind: &str) -> io::Result<u64> {
    use std::os::fd::AsFd;
    let target = crate::interrupted::retry_interrupted(|| nix::fcntl::readlinkat(directory.as_fd(), kind))
        .map_err(io::Error::from)?;
    parse_namespace_link(kind, target.as_encoded_bytes()).ok_or_else(|| {
        io::Error::other(format!("/proc/self/ns/{kind} names {target:?}, not a {kind} namespace's inode"))
    })
}

/// The inode number of the initial user namespace, the one that maps
/// every uid: a constant of the kernel's (`PROC_USER_INIT_INO`, since
/// Linux 3.8); every other user namespace gets a number of its own.
pub const INITIAL_USER_NAMESPACE: u64 = 0xEFFF_FFFD;

/// Whether this process runs in the initial user namespace, read as the
/// link `/proc/self/ns/user` names it (one call, where reading the uid map
/// takes four); `false` when the link cannot be read.
pub fn runs_in_initial_user_namespace() -> bool {
    let Ok(target) = crate::interrupted::retry_interrupted(|| std::fs::read_link("/proc/self/ns/user"))
    else {
        return false;
    };
    parse_namespace_link("user", target.as_os_str().as_encoded_bytes()) == Some(INITIAL_USER_NAMESPACE)
}

/// The inode in a namespace link's target, `<kind>:[<decimal inode>]`.
fn parse_namespace_link(kind: &str, target: &[u8]) -> Option<u64> {
    let digits = target.strip_prefix(kind.as_bytes())?.strip_prefix(b":[")?.strip_suffix(b"]")?;
    if digits.is_empty() || digits.len() > 20 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(digits).ok()?.parse().ok()
}

/// The inode of the user namespace process `pid` lives in, when this
/// process may look (reading another process's namespace links needs
/// ptrace-read access, which a reader inside a user namespace lacks for
/// processes outside it).
pub(crate) fn read_user_namespace(pid: Pid) -> Option<u64> {
    let target = std::fs::read_link(format!("/proc/{pid}/ns/user")).ok()?;
    parse_namespace_link("user", target.as_os_str().as_encoded_bytes())
}

#[cfg(test)]
mod namespace_tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    /// The inodes read from the links are those a stat through each link
    /// shows.
    #[test]
    fn own_namespaces_are_the_inodes_a_stat_shows() {
        let read = own_namespaces().unwrap();
        let stat =
            |kind: &str| std::fs::metadata(format!("/proc/self/ns/{kind}")).map(|metadata| metadata.ino());
        assert_eq!(read.pid_ns, stat("pid").unwrap());
        assert_eq!(read.user_ns, stat("user").unwrap());
        assert_eq!(read.time_ns, stat("time").unwrap_or(0));
    }

    /// The initial user namespace is told by its fixed number, the one a
    /// stat through the link shows there; a new user namespace is not it.
    #[test]
    fn the_initial_user_namespace_is_told_by_its_number() {
        let initial = std::fs::metadata("/proc/self/ns/user").unwrap().ino() == INITIAL_USER_NAMESPACE;
        assert_eq!(runs_in_initial_user_namespace(), initial);
        // SAFETY: the child only unshares, reads a link and exits.
        match unsafe { nix::unistd::fork() }.unwrap() {
            nix::unistd::ForkResult::Child => {
                let code = match nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWUSER) {
                    Err(_) => 2,
                    Ok(()) if runs_in_initial_user_namespace() => 1,
                    Ok(()) => 0,
                };
                unsafe { nix::libc::_exit(code) };
            }
            nix::unistd::ForkResult::Parent { child } => {
                let status = nix::sys::wait::waitpid(child, None).unwrap();
                assert_eq!(
                    status,
                    nix::sys::wait::WaitStatus::Exited(child, 0),
                    "in a new user namespace (exit 1: taken for the initial one; 2: unshare failed)"
                );
            }
        }
    }

    #[test]
    fn a_namespace_link_is_read_strictly() {
        assert_eq!(parse_namespace_link("pid", b"pid:[4026531836]"), Some(4026531836));
        for bad in [
            &b"user:[4026531836]"[..],
            b"pid:[]",
            b"pid:[12a]",
            b"pid:[-1]",
            b"pid:[4026531836",
            b"pid:4026531836]",
            b"pid:[99999999999999999999999]",
            b"",
        ] {
            assert_eq!(parse_namespace_link("pid", bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }
}
