//! Copilot CLI's marks of its live sessions, `~/.copilot/session-state/<session
//! id>/inuse.<pid>.lock`, read as claims and judged by roster (docs/contract.md
//! §6.5); what its files say is the harness crate's
//! (`harness::session_files::copilot`). The file holds only a pid, with no
//! start time and no namespace; what proves the session is the `flock` its
//! process holds on `inuse.<pid>.hold` beside it while it lives, read from
//! `/proc/locks` (never taken: roster never locks a harness's file). A lock
//! not held is a dead session only where every holder would be seen: in the
//! initial pid namespace, on a local filesystem. Read only: nothing here
//! writes, locks, renames or removes.

use std::collections::HashMap;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;

use harness::session_files::copilot::{
    EVENTS_FILE, SIDE_FILE_LIMIT, WORKSPACE_FILE, Workspace, hold_file_name, lock_file_pid,
    version_of_first_event,
};
use nix::errno::Errno;
use nix::fcntl::{AtFlags, OFlag, openat};
use nix::sys::stat::{Mode, SFlag, fstat, fstatat};
use owner_liveness::{
    Liveness, OwnerIdentity, Pid, ProcessFacts, SystemFacts, Verdict, judge, retry_interrupted,
};

use crate::record::session_record::Record;
use crate::record::timestamp::Timestamp;
use crate::record::values::{
    HarnessName, HarnessVersion, RecordedTime, SessionDirectoryPath, SessionId, SessionPidSource,
};
use crate::session_row::{Origin, ProblemKind, SessionRow};
use crate::store::directory::SubDir;
use crate::store::directory_entries::{EntryKind, read_directory};
use crate::store::files::{ReadProblem, entry_mtime, read_entry_for_row, read_stamped_entry_of_kind};
use crate::store::ownership::effective_uid;

/// The `session_pid_source` of an adopted Copilot CLI row: the process
/// named its own pid in its lock file.
pub const COPILOT_FILE_SOURCE: &str = "copilot-lock-file";

/// What an adopted Copilot CLI row's `file_name` starts with
/// (`copilot/<session id>/inuse.4711.lock`).
pub const COPILOT_ROW_PREFIX: &str = "copilot/";

/// The inode of the initial pid namespace (`PROC_PID_INIT_INO`): a reader
/// there sees every process of the machine, and so every lock's holder.
const INITIAL_PID_NAMESPACE: u64 = 0xEFFF_FFFC;

/// How long after writing its lock file a session may take to lock its
/// hold file: a claim younger than this that holds nothing is starting
/// (Copilot CLI 1.0.102 locks it within a millisecond).
pub const COPILOT_STARTING_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// How much later than its lock file's time a process may seem to have
/// started and still be the file's writer: start times are rebuilt from
/// the boot clock and the wall clock, which may have been stepped since.
const CLOCK_MARGIN: std::time::Duration = std::time::Duration::from_secs(60);

/// Filesystems whose locks may be held from another machine, where this
/// one's `/proc/locks` cannot see them: NFS, SMB/CIFS, 9p, FUSE (sshfs,
/// virtiofs), Ceph, AFS, Coda, OCFS2, GFS2, Lustre, GPFS.
const NETWORK_FILESYSTEMS: [i64; 13] = [
    0x6969,
    0x517B,
    0xFF53_4D42_u32 as i64,
    0xFE53_4D42_u32 as i64,
    0x0102_1997,
    0x6573_5546,
    0x00C3_6400,
    0x5346_414F,
    0x6B41_4653,
    0x7375_7245,
    0x7461_636F,
    0x0116_1970,
    0x0BD0_0BD0,
];

/// Who holds `flock`s, by inode number, as `/proc/locks` showed them once:
/// the pids are in the reader's pid namespace; a holder the reader cannot
/// see is not listed by the kernel at all.
#[derive(Debug, Default)]
pub(crate) struct HeldLocks {
    holders_by_inode: HashMap<u64, Vec<u32>>,
}

impl HeldLocks {
    /// `/proc/locks` now; `None` when it cannot be read (nothing is then
    /// judged dead for want of a lock).
    pub(crate) fn read() -> Option<HeldLocks> {
        let text = std::fs::read_to_string("/proc/locks").ok()?;
        Some(HeldLocks::parse(&text))
    }

    /// `1: FLOCK  ADVISORY  WRITE 4711 00:2a:1234 0 EOF`; waiters (`->`)
    /// and POSIX locks are not holders of an `flock`.
    fn parse(text: &str) -> HeldLocks {
        let mut holders_by_inode: HashMap<u64, Vec<u32>> = HashMap::new();
        for line in text.lines() {
            let mut fields = line.split_whitespace().skip(1);
            if fields.next() != Some("FLOCK") {
                continue;
            }
            let (Some(pid), Some(device_inode)) = (fields.nth(2), fields.next()) else { continue };
            let (Ok(pid), Some(Ok(inode))) =
                (pid.parse::<u32>(), device_inode.rsplit(':').next().map(str::parse::<u64>))
            else {
                continue;
            };
            holders_by_inode.entry(inode).or_default().push(pid);
        }
        HeldLocks { holders_by_inode }
    }

    /// Who holds an `flock` on an inode of this number (on any device: a
    /// coincidence of numbers can only keep a session from being judged
    /// dead, never make one dead).
    fn holders(&self, inode: u64) -> &[u32] {
        self.holders_by_inode.get(&inode).map_or(&[], Vec::as_slice)
    }
}

/// Every `<session id>/inuse.<pid>.lock` of the session-state directory,
/// its session directories (every session Copilot CLI ever kept) read on
/// every core.
pub(crate) fn lock_file_names(directory: SubDir<'_>) -> Result<Vec<String>, Errno> {
    let sessions: Vec<String> = read_directory(directory)?
        .into_iter()
        .filter(|entry| matches!(entry.kind, EntryKind::Directory | EntryKind::Unknown))
        .filter_map(|entry| entry.name.into_string().ok())
        .filter(|session| !session.starts_with('.'))
        .collect();
    let locks_of = |session: &String| -> Vec<String> {
        let Ok(Some(session_directory)) = open_session_directory(directory, session) else {
            return Vec::new();
        };
        let path = directory.path().join(session);
        let listed = SubDir { fd: session_directory.as_fd(), path: &path };
        let Ok(entries) = read_directory(listed) else { return Vec::new() };
        entries
            .into_iter()
            .filter_map(|entry| entry.name.into_string().ok())
            .filter(|name| lock_file_pid(name).is_some())
            .map(|name| format!("{session}/{name}"))
            .collect()
    };
    Ok(crate::parallel::map_in_parallel(&sessions, locks_of).into_iter().flatten().collect())
}

/// A session's directory, opened without following a symlink; `Ok(None)`
/// when it is gone.
fn open_session_directory(directory: SubDir<'_>, session: &str) -> Result<Option<OwnedFd>, String> {
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    match retry_interrupted(|| openat(directory.fd, session, flags, Mode::empty())) {
        Ok(fd) => Ok(Some(fd)),
        Err(Errno::ENOENT) => Ok(None),
        Err(Errno::ELOOP | Errno::ENOTDIR) => Err("a symlink or not a directory".to_owned()),
        Err(errno) => Err(format!("cannot open: {}", errno.desc())),
    }
}

/// Reads and judges `<session id>/inuse.<pid>.lock` of the session-state
/// directory; `None` when it is gone or is not such a name.
pub(crate) fn read_copilot_row(
    directory: SubDir<'_>,
    name: &str,
    locks: Option<&HeldLocks>,
    facts: &impl SystemFacts,
) -> Option<SessionRow> {
    let (session, lock_name) = name.split_once('/')?;
    let file_pid = lock_file_pid(lock_name).and_then(Pid::new)?;
    if session.starts_with('.') || session.contains('/') {
        return None;
    }
    let session_path = directory.path().join(session);
    let path = session_path.join(lock_name);
    let row_name = format!("{COPILOT_ROW_PREFIX}{name}");
    let problem_row = |kind: ProblemKind, detail: String, mtime: Option<Timestamp>| {
        SessionRow::of_problem(
            row_name.clone(),
            path.clone(),
            Some(file_pid),
            Origin::Copilot,
            (kind, detail),
            mtime,
        )
    };
    let session_fd = match open_session_directory(directory, session) {
        Ok(Some(fd)) => fd,
        Ok(None) => return None,
        Err(why) => {
            let mtime = entry_mtime(directory, session.as_ref());
            return Some(problem_row(
                ProblemKind::Untrusted,
                format!("{}: {why}", session_path.display()),
                mtime,
            ));
        }
    };
    if let Err(why) = trusted_directory(&session_fd) {
        let mtime = entry_mtime(directory, session.as_ref());
        return Some(problem_row(
            ProblemKind::Untrusted,
            format!("{}: {why}", session_path.display()),
            mtime,
        ));
    }
    let session_directory = SubDir { fd: session_fd.as_fd(), path: &session_path };
    let contents = match read_entry_for_row(session_directory, lock_name, EntryKind::Unknown)? {
        Ok((read, _)) => read,
        Err(untrusted) => {
            return Some(problem_row(ProblemKind::Untrusted, untrusted.detail, untrusted.mtime));
        }
    };
    // Written before it is filled: an empty one is a session starting.
    if contents.bytes.is_empty() {
        return None;
    }
    let said = String::from_utf8_lossy(&contents.bytes);
    if said.trim().parse::<u32>().ok() != Some(file_pid.get()) {
        let detail = format!("holds {:?}, not the file name's pid {file_pid}", said.trim());
        return Some(problem_row(ProblemKind::Malformed, detail, Some(contents.mtime)));
    }
    let workspace = match read_workspace(session_directory) {
        Ok(workspace) => workspace,
        Err(detail) => return Some(problem_row(ProblemKind::Malformed, detail, Some(contents.mtime))),
    };
    if workspace.id.as_deref().is_some_and(|id| id != session) {
        let detail = format!("workspace.yaml names session {:?}, not its directory's", workspace.id);
        return Some(problem_row(ProblemKind::Malformed, detail, Some(contents.mtime)));
    }
    let hold = hold_inode(session_directory, file_pid);
    let claim = Claim { pid: file_pid, written: contents.mtime, hold, session_path: &session_path };
    let (identity, verdict) = judge_claim(&claim, locks, facts);
    let record = match adopted_record(session, &workspace, session_directory, identity, contents.mtime) {
        Ok(record) => record,
        Err(detail) => return Some(problem_row(ProblemKind::Malformed, detail, Some(contents.mtime))),
    };
    Some(SessionRow {
        file_name: row_name,
        path,
        pid: Some(file_pid),
        registered_at: contents.mtime,
        state: None,
        record: Some(record),
        problem: None,
        verdict,
        origin: Origin::Copilot,
        messages_pending: 0,
        location_check: None,
    })
}

/// A session directory is believed as roster's own are: yours, writable by
/// nobody else.
fn trusted_directory(fd: &OwnedFd) -> Result<(), String> {
    let stat =
        retry_interrupted(|| fstat(fd.as_fd())).map_err(|errno| format!("cannot stat: {}", errno.desc()))?;
    if stat.st_uid != effective_uid() {
        return Err(format!("owned by uid {}, not by you", stat.st_uid));
    }
    if stat.st_mode & 0o022 != 0 {
        return Err("writable by group or others".to_owned());
    }
    Ok(())
}

/// The inode of `inuse.<pid>.hold`, when it is a regular file of yours.
fn hold_inode(directory: SubDir<'_>, pid: Pid) -> Option<u64> {
    let name = hold_file_name(pid.get());
    let stat =
        retry_interrupted(|| fstatat(directory.fd, Path::new(&name), AtFlags::AT_SYMLINK_NOFOLLOW)).ok()?;
    (is_regular(&stat) && stat.st_uid == effective_uid()).then_some(stat.st_ino)
}

fn is_regular(stat: &nix::sys::stat::FileStat) -> bool {
    SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT == SFlag::S_IFREG
}

/// What one lock file claims.
struct Claim<'a> {
    pid: Pid,
    /// When the lock file was written: its process started before.
    written: Timestamp,
    hold: Option<u64>,
    session_path: &'a Path,
}

/// The owner a claim stands for and its verdict. The pid alone proves
/// nothing; the `flock` on the hold file, held by that very pid in this
/// pid namespace, does. A lock not held is a dead session only where no
/// holder could hide.
fn judge_claim(
    claim: &Claim<'_>,
    locks: Option<&HeldLocks>,
    facts: &impl SystemFacts,
) -> (OwnerIdentity, Verdict) {
    let pid = claim.pid;
    let mut identity = claimed_identity(pid, facts);
    let unknown = |reason: String| Verdict { liveness: Liveness::Unknown, reason };
    let Some(locks) = locks else {
        return (
            identity,
            unknown("/proc/locks cannot be read: the lock that proves the session is not seen".into()),
        );
    };
    let holders = claim.hold.map_or(&[][..], |inode| locks.holders(inode));
    let started = started_at(pid, facts);
    if holders.contains(&pid.get())
        && let Some((ticks, _)) = started
    {
        // The pid held the lock when `/proc/locks` was read, and a process
        // runs at it now. Read again, after the process was found: a lock
        // still held by that pid is held by this very process (a reused
        // pid cannot hold a lock its predecessor's exit released). No
        // clock is compared: a stepped clock never makes it dead.
        let still_held = claim.hold.is_some_and(|inode| {
            HeldLocks::read().is_some_and(|again| again.holders(inode).contains(&pid.get()))
        });
        if still_held {
            identity.start_ticks = ticks;
            let verdict = judge(&identity, None, facts);
            return (identity, verdict);
        }
    }
    if let Some(holder) = holders.iter().find(|holder| **holder != pid.get()) {
        return (
            identity,
            unknown(format!(
                "inuse.{pid}.hold is locked by pid {holder}, not {pid}: a session of another pid namespace"
            )),
        );
    }
    (identity, unheld_verdict(claim, started, facts))
}

/// The owner a Copilot CLI lock file names: its pid in this reader's
/// world, with no start tick until its lock proves it.
fn claimed_identity(pid: Pid, facts: &impl SystemFacts) -> OwnerIdentity {
    let namespaces = facts.own_namespaces().ok();
    OwnerIdentity {
        pid,
        uid: effective_uid(),
        start_ticks: 0,
        pidfs_ino: None,
        boot_id: facts.boot_id().map(|id| id.into_owned()).unwrap_or_default(),
        machine: facts.machine().ok().map(|machine| machine.into_owned()),
        pid_ns: namespaces.map_or(0, |namespaces| namespaces.pid_ns),
        time_ns: namespaces.map_or(0, |namespaces| namespaces.time_ns),
        user_ns: namespaces.map(|namespaces| namespaces.user_ns),
        chain: Vec::new(),
    }
}

/// The verdict of a claim whose hold file no process this reader sees
/// holds: unknown wherever a holder could hide or the session may be
/// starting or ending, dead only where none could.
fn unheld_verdict(claim: &Claim<'_>, started: Option<(u64, Timestamp)>, facts: &impl SystemFacts) -> Verdict {
    let pid = claim.pid;
    let namespaces = facts.own_namespaces().ok();
    let unknown = |reason: String| Verdict { liveness: Liveness::Unknown, reason };
    let dead = |reason: String| Verdict {
        liveness: Liveness::Dead,
        reason: format!("{reason}; Copilot CLI removes its files, roster never does"),
    };
    if claim.hold.is_none() {
        return unknown(format!("no inuse.{pid}.hold beside the lock file: starting, or ending"));
    }
    // Not held. A session takes its lock within moments of writing the
    // file: a young claim is starting (maybe in a pid namespace this
    // reader cannot see into), never dead.
    let age_nanos = Timestamp::from_system_time(facts.now()).unix_nanos() - claim.written.unix_nanos();
    if age_nanos < COPILOT_STARTING_GRACE.as_nanos() as i128 {
        return unknown(format!("inuse.{pid}.hold is not locked yet: a session starting"));
    }
    // The pid lives, and could have written the file (it started before,
    // with a wide margin for a clock stepped since): starting, ending, or
    // another pid namespace's pid.
    let could_be_writer = started.is_some_and(|(_, at)| {
        at.unix_nanos() <= claim.written.unix_nanos() + CLOCK_MARGIN.as_nanos() as i128
    });
    if could_be_writer {
        return unknown(format!(
            "pid {pid} lives but does not hold inuse.{pid}.hold: starting, ending, or another pid namespace's pid"
        ));
    }
    let initial_namespace = namespaces.is_some_and(|namespaces| namespaces.pid_ns == INITIAL_PID_NAMESPACE);
    if !initial_namespace {
        return unknown(format!(
            "nobody this pid namespace sees holds inuse.{pid}.hold; a holder in another pid namespace could not be seen"
        ));
    }
    if on_network_filesystem(claim.session_path) {
        return unknown(format!(
            "{} is on a network filesystem, whose locks another machine may hold unseen",
            claim.session_path.display()
        ));
    }
    let after = if started.is_some() {
        format!("pid {pid} started after its lock file was written")
    } else {
        format!("no process has pid {pid}")
    };
    dead(format!("nobody holds inuse.{pid}.hold and {after}"))
}

/// The start ticks of the process at `pid` and when it started, when one
/// runs there as you.
fn started_at(pid: Pid, facts: &impl SystemFacts) -> Option<(u64, Timestamp)> {
    let process = facts.open_process(pid).ok()?;
    let identity = process.proc_identity().ok()?;
    if identity.uid != effective_uid() || process.has_exited().unwrap_or(true) || process_is_exiting(pid) {
        return None;
    }
    let offset = facts.boottime_offset_ticks().unwrap_or(0);
    let ticks_since_boot = i128::from(identity.start_ticks) - i128::from(offset);
    let boot = super::this_boot::this_boot_began(facts)?.unix_nanos();
    let ticks_per_second = i128::from(nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK).ok()??);
    Some((
        identity.start_ticks,
        Timestamp::from_unix_nanos(boot + ticks_since_boot * 1_000_000_000 / ticks_per_second),
    ))
}

/// Whether the process at `pid` is on its way out (`PF_EXITING` in the
/// flags of `/proc/<pid>/stat`): its descriptors, and the lock with them,
/// go before it is gone, and it holds nothing any more.
pub fn process_is_exiting(pid: Pid) -> bool {
    const PF_EXITING: u64 = 0x4;
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return true };
    let flags =
        stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(6)?.parse::<u64>().ok());
    flags.is_none_or(|flags| flags & PF_EXITING != 0)
}

fn on_network_filesystem(path: &Path) -> bool {
    // When it cannot be told, it may be one.
    nix::sys::statfs::statfs(path).map_or(true, |stats| {
        #[allow(clippy::unnecessary_cast)]
        let kind = stats.filesystem_type().0 as i64;
        NETWORK_FILESYSTEMS.contains(&kind)
    })
}

fn read_workspace(directory: SubDir<'_>) -> Result<Workspace, String> {
    let contents = match read_stamped_entry_of_kind(directory, WORKSPACE_FILE, EntryKind::Unknown) {
        Ok((read, _)) => read,
        Err(ReadProblem::Missing) => {
            return Err("no workspace.yaml beside the lock file: its cwd is not known".into());
        }
        Err(ReadProblem::Untrusted { reason, .. }) => return Err(format!("workspace.yaml: {reason}")),
        Err(ReadProblem::Failed(why)) => return Err(format!("workspace.yaml unreadable: {why}")),
    };
    let text = std::str::from_utf8(&contents.bytes[..contents.bytes.len().min(SIDE_FILE_LIMIT)])
        .map_err(|_| "workspace.yaml is not UTF-8".to_owned())?;
    Ok(Workspace::parse(text))
}

/// The Copilot CLI version of the session's `events.jsonl` first line
/// (`session.start`'s `copilotVersion`), when it says one.
fn copilot_version(directory: SubDir<'_>) -> Option<HarnessVersion> {
    use std::io::Read;
    let flags = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC | OFlag::O_NONBLOCK;
    let fd = retry_interrupted(|| openat(directory.fd, EVENTS_FILE, flags, Mode::empty())).ok()?;
    let stat = fstat(fd.as_fd()).ok()?;
    if !is_regular(&stat) || stat.st_uid != effective_uid() {
        return None;
    }
    let mut first = Vec::new();
    std::fs::File::from(fd).take(SIDE_FILE_LIMIT as u64).read_to_end(&mut first).ok()?;
    HarnessVersion::parse(&version_of_first_event(&first)?).ok()
}

/// The record an adopted Copilot CLI session stands for.
fn adopted_record(
    session: &str,
    workspace: &Workspace,
    directory: SubDir<'_>,
    identity: OwnerIdentity,
    written: Timestamp,
) -> Result<Record, String> {
    let session_id = SessionId::parse(session).map_err(|error| format!("session directory name: {error}"))?;
    let cwd = workspace.cwd.as_deref().ok_or("workspace.yaml has no cwd")?;
    let cwd = SessionDirectoryPath::parse(cwd).map_err(|error| format!("workspace.yaml cwd: {error}"))?;
    Ok(Record {
        format: 0,
        owner: (&identity).into(),
        session_pid_source: SessionPidSource::parse(COPILOT_FILE_SOURCE).expect("a valid source"),
        session_pid_verified: true,
        harness: HarnessName::parse(harness::Harness::Copilot.as_str()).expect("a valid harness name"),
        harness_version: copilot_version(directory),
        agent: None,
        session_id: Some(session_id),
        transcript_path: None,
        socket: None,
        location: crate::record::location_of_adopted(identity.pid.get(), None),
        cwd,
        registrar_pid: 0,
        registered_at: RecordedTime::from(written),
        refreshed_at: RecordedTime::from(written),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_locks_lines_give_flock_holders_by_inode() {
        let text = "1: FLOCK  ADVISORY  WRITE 29666 00:2a:1234 0 EOF\n\
                    1: -> FLOCK  ADVISORY  WRITE 300 00:2a:1234 0 EOF\n\
                    2: POSIX  ADVISORY  WRITE 400 08:01:99 0 EOF\n\
                    3: FLOCK  ADVISORY  READ 500 fd:00:99 0 EOF\n\
                    garbage\n";
        let locks = HeldLocks::parse(text);
        assert_eq!(locks.holders(1234), &[29666]);
        assert_eq!(locks.holders(99), &[500], "a POSIX lock is not an flock; a waiter holds nothing");
        assert!(locks.holders(7).is_empty());
    }
}
