//! File operations inside the verified directory: safe reads that never
//! follow, block or trust what they should not (docs/contract.md §2), and
//! atomic writes that leave the old file or the new one and never a torn
//! one. The lock they are done under is in `lock`, the hint files written
//! without it in `hints`.

use std::ffi::OsStr;
use std::fs::File;
use std::io::Write;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use nix::errno::Errno;
use nix::fcntl::{AtFlags, OFlag, RenameFlags, openat, renameat, renameat2};
use nix::sys::stat::{Mode, fchmod, fstat, fstatat};
use nix::unistd::{UnlinkatFlags, unlinkat};

use crate::error::{Error, Result};
use crate::record::timestamp::Timestamp;
use crate::store::directory::{RosterDir, SubDir};
use crate::store::directory_entries::{
    DirectoryEntry, DirectorySlice, EntryKind, read_directory, read_directory_slice,
};
use crate::store::ownership::effective_uid;
use owner_liveness::retry_interrupted;

/// The most bytes any roster file may hold; more makes the entry untrusted.
pub const MAX_ENTRY_BYTES: u64 = 64 * 1024;
/// Prefix of atomic-write temporaries; dotfiles are never listed.
pub const TEMP_PREFIX: &str = ".tmp-";
/// Temporaries older than this are leftovers of a crashed writer.
pub const TEMP_MAX_AGE: std::time::Duration = std::time::Duration::from_secs(3600);

/// An entry's bytes and the facts of the handle they were read through.
#[derive(Clone, Debug)]
pub struct EntryContents {
    pub bytes: Vec<u8>,
    pub mtime: Timestamp,
}

/// Why an entry is not believed, or not there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadProblem {
    /// The name does not exist (any more).
    Missing,
    /// It exists but fails a trust check; the text says which.
    Untrusted { reason: String, mtime: Option<Timestamp> },
    /// The read itself failed.
    Failed(String),
}

/// Which file a name pointed at, and its state: equal stamps taken at two
/// instants mean the same inode, unchanged in between (a rename puts a new
/// inode there; a write in place moves the change time).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FileStamp {
    device: u64,
    inode: u64,
    size: i64,
    change_seconds: i64,
    change_nanoseconds: i64,
}

impl FileStamp {
    /// The file's size in bytes when it was stamped.
    pub(crate) fn size(&self) -> u64 {
        u64::try_from(self.size).unwrap_or(0)
    }

    fn of(stat: &nix::sys::stat::FileStat) -> FileStamp {
        FileStamp {
            device: stat.st_dev,
            inode: stat.st_ino,
            size: stat.st_size,
            change_seconds: stat.st_ctime,
            change_nanoseconds: stat.st_ctime_nsec,
        }
    }
}

/// The stamp of what `name` names now, without following a symlink.
pub(crate) fn entry_stamp(directory: SubDir<'_>, name: &str) -> Option<FileStamp> {
    retry_interrupted(|| fstatat(directory.fd, name, AtFlags::AT_SYMLINK_NOFOLLOW))
        .ok()
        .map(|stat| FileStamp::of(&stat))
}

/// Reads `name` in `directory` safely: the type is checked before opening
/// (so no FIFO or device is ever opened), the open does not follow
/// symlinks, the handle is checked again (regular file, same inode, owned
/// by the effective uid, no group/other write bit, one link, at most
/// `MAX_ENTRY_BYTES`), and at most that many bytes are read.
pub fn read_entry(directory: SubDir<'_>, name: &str) -> std::result::Result<EntryContents, ReadProblem> {
    read_stamped_entry(directory, name).map(|(contents, _)| contents)
}

/// `read_entry`, also returning the stamp of the handle the bytes came from.
pub(crate) fn read_stamped_entry(
    directory: SubDir<'_>,
    name: &str,
) -> std::result::Result<(EntryContents, FileStamp), ReadProblem> {
    read_stamped_entry_of_kind(directory, name, EntryKind::Unknown)
}

/// `read_stamped_entry` for a name whose type the directory listing told:
/// an entry listed as a regular file is opened without a `stat` first (the
/// listing was the type check; the handle is checked after opening as
/// always), anything else is looked at before it is opened.
pub(crate) fn read_stamped_entry_of_kind(
    directory: SubDir<'_>,
    name: &str,
    listed_as: EntryKind,
) -> std::result::Result<(EntryContents, FileStamp), ReadProblem> {
    // Readers take no lock, so a writer may replace or remove the name
    // between the stat and the open, or right after the open. That is the
    // registry working, not an entry to distrust: look again, a few times.
    let mut listed_as = listed_as;
    for _ in 0..READ_ATTEMPTS {
        match read_entry_once(directory, name, listed_as)? {
            Some(read) => return Ok(read),
            // Whatever the listing said may be stale now.
            None => listed_as = EntryKind::Unknown,
        }
    }
    let mtime = entry_mtime(directory, name.as_ref());
    Err(ReadProblem::Untrusted { reason: "kept being replaced while being read".into(), mtime })
}

/// Why a listed entry is shown as an untrusted row rather than read: it
/// fails a trust check or cannot be read. `mtime` is its time, where known.
pub(crate) struct UntrustedEntry {
    pub(crate) detail: String,
    pub(crate) mtime: Option<Timestamp>,
}

/// `read_stamped_entry_of_kind` for a listing's row: `None` when the entry
/// is gone, `Some(Err)` when it is to be shown as untrusted (a failed read
/// as `unreadable: WHY`, with the mtime looked at beside it).
pub(crate) fn read_entry_for_row(
    directory: SubDir<'_>,
    name: &str,
    listed_as: EntryKind,
) -> Option<std::result::Result<(EntryContents, FileStamp), UntrustedEntry>> {
    match read_stamped_entry_of_kind(directory, name, listed_as) {
        Ok(read) => Some(Ok(read)),
        Err(ReadProblem::Missing) => None,
        Err(ReadProblem::Untrusted { reason, mtime }) => Some(Err(UntrustedEntry { detail: reason, mtime })),
        Err(ReadProblem::Failed(why)) => Some(Err(UntrustedEntry {
            detail: format!("unreadable: {why}"),
            mtime: entry_mtime(directory, name.as_ref()),
        })),
    }
}

/// How often a read starts over when a writer replaced the entry under it.
/// Each start-over costs only while a writer races the reader; on a loaded
/// machine a reader may be descheduled across several replacements, and
/// four attempts were seen to run out.
const READ_ATTEMPTS: usize = 16;

/// One attempt of `read_stamped_entry`; `None` when the name was replaced or
/// removed while it was being opened, and the read should start over.
fn read_entry_once(
    directory: SubDir<'_>,
    name: &str,
    listed_as: EntryKind,
) -> std::result::Result<Option<(EntryContents, FileStamp)>, ReadProblem> {
    // The type is known before anything is opened, so no FIFO or device is
    // ever opened: from the listing when it said "regular file", else from
    // a stat of the name.
    let before = if listed_as == EntryKind::Regular {
        None
    } else {
        let stat = match retry_interrupted(|| fstatat(directory.fd, name, AtFlags::AT_SYMLINK_NOFOLLOW)) {
            Ok(stat) => stat,
            Err(Errno::ENOENT) => return Err(ReadProblem::Missing),
            Err(errno) => return Err(ReadProblem::Failed(format!("stat: {}", errno.desc()))),
        };
        // No link left: the name was looked up, then replaced or removed
        // before the stat read the inode.
        if stat.st_nlink == 0 {
            return Ok(None);
        }
        if let Some(reason) = untrusted_reason(&stat) {
            return Err(ReadProblem::Untrusted { reason, mtime: Some(stat_mtime(&stat)) });
        }
        Some(stat)
    };
    let mtime = before.as_ref().map(stat_mtime);
    let fd = match open_entry_for_reading(directory, name) {
        Ok(fd) => fd,
        Err(Errno::ENOENT) => return Err(ReadProblem::Missing),
        Err(Errno::ELOOP) => return Err(ReadProblem::Untrusted { reason: "is a symlink".into(), mtime }),
        Err(errno) => return Err(ReadProblem::Failed(format!("open: {}", errno.desc()))),
    };
    let after = retry_interrupted(|| fstat(&fd))
        .map_err(|errno| ReadProblem::Failed(format!("fstat: {}", errno.desc())))?;
    // Another inode under the name: replaced between the stat and the open.
    // No link left: replaced or removed right after the open.
    let replaced =
        before.is_some_and(|before| (after.st_dev, after.st_ino) != (before.st_dev, before.st_ino));
    if replaced || after.st_nlink == 0 {
        return Ok(None);
    }
    if let Some(reason) = untrusted_reason(&after) {
        return Err(ReadProblem::Untrusted { reason, mtime: Some(stat_mtime(&after)) });
    }
    let bytes = read_to_limit(fd.as_fd(), after.st_size, MAX_ENTRY_BYTES as usize + 1)
        .map_err(|errno| ReadProblem::Failed(format!("read: {}", errno.desc())))?;
    if bytes.len() as u64 > MAX_ENTRY_BYTES {
        return Err(ReadProblem::Untrusted { reason: "grew past 64 KiB while being read".into(), mtime });
    }
    Ok(Some((EntryContents { bytes, mtime: stat_mtime(&after) }, FileStamp::of(&after))))
}

/// Opens an entry for reading without following a symlink, blocking on a
/// FIFO or taking a terminal, and without updating its access time (a
/// listing would otherwise dirty every record it reads). The kernel allows
/// `O_NOATIME` only on one's own files; any other is opened without it (and
/// then found untrusted by its owner).
fn open_entry_for_reading(directory: SubDir<'_>, name: &str) -> nix::Result<OwnedFd> {
    let flags = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_NOCTTY | OFlag::O_CLOEXEC;
    match retry_interrupted(|| openat(directory.fd, name, flags | OFlag::O_NOATIME, Mode::empty())) {
        Err(Errno::EPERM) => retry_interrupted(|| openat(directory.fd, name, flags, Mode::empty())),
        other => other,
    }
}

/// Reads a regular file of `size` bytes (as `fstat` said), at most `limit`
/// bytes in all: a limit one byte past the largest file wanted tells a
/// file that grew past it. A read that returns less than asked is the end
/// of a regular file, so a file of the size `fstat` said costs one `read`.
pub(crate) fn read_to_limit(fd: BorrowedFd<'_>, size: i64, limit: usize) -> nix::Result<Vec<u8>> {
    let mut bytes = vec![0u8; (size.max(0) as usize).saturating_add(1).min(limit)];
    let mut filled = 0;
    while filled < bytes.len() {
        let read = retry_interrupted(|| nix::unistd::read(fd, &mut bytes[filled..]))?;
        if read == 0 {
            break;
        }
        filled += read;
        if filled < bytes.len() {
            break;
        }
        if bytes.len() < limit {
            bytes.resize((bytes.len() * 2).min(limit), 0);
        }
    }
    bytes.truncate(filled);
    Ok(bytes)
}

fn untrusted_reason(stat: &nix::sys::stat::FileStat) -> Option<String> {
    if let Some(reason) = untrusted_whatever_its_size(stat) {
        return Some(reason);
    }
    if stat.st_size as u64 > MAX_ENTRY_BYTES {
        return Some(format!("is {} bytes, over the 64 KiB limit", stat.st_size));
    }
    None
}

/// Why a file is not one to trust whatever it holds: not a regular file of
/// this user's, or writable by others, or linked elsewhere too.
pub(crate) fn untrusted_whatever_its_size(stat: &nix::sys::stat::FileStat) -> Option<String> {
    let kind = stat.st_mode & nix::libc::S_IFMT;
    let kind_name = match kind {
        nix::libc::S_IFREG => None,
        nix::libc::S_IFLNK => Some("is a symlink"),
        nix::libc::S_IFIFO => Some("is a FIFO"),
        nix::libc::S_IFCHR => Some("is a character device"),
        nix::libc::S_IFBLK => Some("is a block device"),
        nix::libc::S_IFDIR => Some("is a directory"),
        nix::libc::S_IFSOCK => Some("is a socket"),
        _ => Some("is not a regular file"),
    };
    if let Some(kind_name) = kind_name {
        return Some(kind_name.to_owned());
    }
    let euid = effective_uid();
    if stat.st_uid != euid {
        return Some(format!("is owned by uid {}, not {euid}", stat.st_uid));
    }
    if stat.st_mode & 0o022 != 0 {
        return Some(format!("is writable by group or others (mode {:04o})", stat.st_mode & 0o7777));
    }
    if stat.st_nlink != 1 {
        return Some(format!("has {} hard links", stat.st_nlink));
    }
    None
}

fn stat_mtime(stat: &nix::sys::stat::FileStat) -> Timestamp {
    Timestamp::from_unix_nanos(i128::from(stat.st_mtime) * 1_000_000_000 + i128::from(stat.st_mtime_nsec))
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A temporary name no other writer can pick: pid, a counter and the clock.
pub(crate) fn temp_name(target: &str) -> String {
    let count = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = Timestamp::now().unix_nanos() as u64;
    format!("{TEMP_PREFIX}{target}.{}.{count}.{nanos:x}", own_pid())
}

/// This process's pid, asked of the kernel once: a prune that keeps a
/// thousand ended sessions names a temporary for each. No roster process
/// forks without exec, so the pid cannot change under it.
pub(crate) fn own_pid() -> u32 {
    static OWN_PID: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *OWN_PID.get_or_init(std::process::id)
}

/// Writes `bytes` to `name` atomically: a `0600` temporary in the same
/// directory (whatever the umask), written, fsynced, renamed over the
/// target, then the directory fsynced. On any failure the temporary is
/// removed and the old file, if any, is untouched.
pub fn write_atomically(roster: &RosterDir, directory: SubDir<'_>, name: &str, bytes: &[u8]) -> Result<()> {
    write_atomically_as(roster, directory, name, bytes, Durability::Synced)
}

/// Whether a write waits for the disk: `Synced` survives a power loss;
/// `Unsynced` is as atomic for every process (a rename is), but a power
/// loss may lose it, and it never waits on a disk that stalls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Durability {
    Synced,
    Unsynced,
}

/// `write_atomically`, with the fsyncs only when `durability` asks.
pub fn write_atomically_as(
    roster: &RosterDir,
    directory: SubDir<'_>,
    name: &str,
    bytes: &[u8],
    durability: Durability,
) -> Result<()> {
    let temp = temp_name(name);
    let result = write_temp_and_rename(directory, &temp, name, bytes, durability);
    if let Err((operation, errno)) = result {
        let _ = unlinkat(directory.fd, temp.as_str(), UnlinkatFlags::NoRemoveDir);
        return Err(Error::io(operation, roster.entry_path(directory, name), errno.into()));
    }
    if durability == Durability::Unsynced {
        return Ok(());
    }
    sync_directory(directory)
        .map_err(|errno| Error::io("fsync directory of", roster.entry_path(directory, name), errno.into()))
}

fn write_temp_and_rename(
    directory: SubDir<'_>,
    temp: &str,
    name: &str,
    bytes: &[u8],
    durability: Durability,
) -> std::result::Result<(), (&'static str, Errno)> {
    let flags = OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let fd = retry_interrupted(|| openat(directory.fd, temp, flags, Mode::S_IRUSR | Mode::S_IWUSR))
        .map_err(|errno| ("create", errno))?;
    // The umask may have removed bits; it can never have added any, but a
    // restrictive umask could leave the owner unable to read, so set 0600.
    retry_interrupted(|| fchmod(&fd, Mode::S_IRUSR | Mode::S_IWUSR)).map_err(|errno| ("chmod 600", errno))?;
    let mut file = File::from(fd);
    file.write_all(bytes).map_err(|error| ("write", io_errno(&error)))?;
    if durability == Durability::Synced {
        file.sync_all().map_err(|error| ("fsync", io_errno(&error)))?;
    }
    drop(file);
    retry_interrupted(|| renameat(directory.fd, temp, directory.fd, name))
        .map_err(|errno| ("rename into place", errno))
}

pub(crate) fn io_errno(error: &std::io::Error) -> Errno {
    Errno::from_raw(error.raw_os_error().unwrap_or(nix::libc::EIO))
}

/// fsyncs a directory so a rename or unlink in it survives a crash.
pub fn sync_directory(directory: SubDir<'_>) -> std::result::Result<(), Errno> {
    retry_interrupted(|| nix::unistd::fsync(directory.fd))
}

/// Removes `name`; `Ok(false)` when it was already gone.
/// A directory is never removed (roster never makes one there): `Ok(false)`.
pub fn remove_entry(
    roster: &RosterDir,
    directory: SubDir<'_>,
    name: &(impl AsRef<OsStr> + ?Sized),
) -> Result<bool> {
    let name = name.as_ref();
    match retry_interrupted(|| unlinkat(directory.fd, name, UnlinkatFlags::NoRemoveDir)) {
        Ok(()) => Ok(true),
        Err(Errno::ENOENT | Errno::EISDIR) => Ok(false),
        Err(errno) => {
            Err(Error::io("remove", roster.entry_path(directory, &name.to_string_lossy()), errno.into()))
        }
    }
}

/// Removes `name` only if what it holds at the instant of removal still
/// passes `still_to_go` (given its contents as `read_entry` reads them):
/// the entry is moved aside to a temporary name first (a rename, atomic),
/// read and judged there, then removed, or else put back, by a rename that
/// never replaces: when a newer file has taken the name meanwhile, the
/// newer one wins and the moved one goes. So a remover that judged a file
/// under the lock never removes one a writer without the lock (a disarm,
/// docs/contract.md §6.4) put in its place since; at worst the name is
/// empty for the instant between the two renames. `Ok(false)` when
/// nothing was removed. A directory is put back, never removed.
pub fn remove_entry_if_still(
    roster: &RosterDir,
    directory: SubDir<'_>,
    name: &str,
    still_to_go: impl FnOnce(std::result::Result<EntryContents, ReadProblem>) -> bool,
) -> Result<bool> {
    let aside = temp_name(name);
    match retry_interrupted(|| renameat(directory.fd, name, directory.fd, aside.as_str())) {
        Ok(()) => {}
        Err(Errno::ENOENT) => return Ok(false),
        Err(errno) => return Err(Error::io("rename", roster.entry_path(directory, name), errno.into())),
    }
    if still_to_go(read_entry(directory, &aside)) {
        match retry_interrupted(|| unlinkat(directory.fd, aside.as_str(), UnlinkatFlags::NoRemoveDir)) {
            Ok(()) => return Ok(true),
            Err(Errno::EISDIR) => {}
            Err(errno) => {
                return Err(Error::io("remove", roster.entry_path(directory, &aside), errno.into()));
            }
        }
    }
    let put_back =
        || renameat2(directory.fd, aside.as_str(), directory.fd, name, RenameFlags::RENAME_NOREPLACE);
    match retry_interrupted(put_back) {
        Ok(()) => Ok(false),
        Err(Errno::EEXIST) => {
            let _ = unlinkat(directory.fd, aside.as_str(), UnlinkatFlags::NoRemoveDir);
            Ok(false)
        }
        Err(errno) => Err(Error::io("rename into place", roster.entry_path(directory, name), errno.into())),
    }
}

/// The names in a directory, `.` and `..` left out, in directory order.
pub fn list_names(roster: &RosterDir, directory: SubDir<'_>) -> Result<Vec<std::ffi::OsString>> {
    Ok(list_entries(roster, directory)?.into_iter().map(|entry| entry.name).collect())
}

/// The entries of a directory with the type the directory tells for each.
pub fn list_entries(roster: &RosterDir, directory: SubDir<'_>) -> Result<Vec<DirectoryEntry>> {
    read_directory(directory)
        .map_err(|errno| Error::io("read", roster.entry_path(directory, ""), errno.into()))
}

/// The mtime of an entry without following it, if it exists.
pub fn entry_mtime(directory: SubDir<'_>, name: &OsStr) -> Option<Timestamp> {
    retry_interrupted(|| fstatat(directory.fd, Path::new(name), AtFlags::AT_SYMLINK_NOFOLLOW))
        .ok()
        .map(|stat| stat_mtime(&stat))
}

/// Reads at most `limit` names of a directory starting at `cursor` (a
/// position an earlier call returned, or 0 for the start), and returns them,
/// each with the position after it, and the position after the last one
/// (`None` at the end). Bounded work on a directory of any size: what
/// opportunistic reaping needs.
pub fn read_names_from(
    directory: SubDir<'_>,
    cursor: i64,
    limit: usize,
) -> std::result::Result<DirectorySlice, Errno> {
    read_directory_slice(directory, cursor, limit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    /// Regression: a reader that lost a race with an atomic replacement
    /// (the name held a new inode by the time it was opened) or with a
    /// removal (the opened file had no link left) called a live record
    /// "untrusted", so `roster-list` showed it as a problem row. Found by
    /// the soak. A reader must see the old file, the new one, or nothing;
    /// never a problem.
    #[test]
    fn reads_racing_with_replacements_and_removals_never_see_an_untrusted_entry() {
        let temp = tempfile::tempdir().unwrap();
        let roster = RosterDir::open_or_create(&temp.path().join("roster")).unwrap();
        let stop = AtomicBool::new(false);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                let sessions = roster.sessions();
                let mut round = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    round += 1;
                    write_atomically(&roster, sessions, "7.json", format!("{round}").as_bytes()).unwrap();
                    if round.is_multiple_of(3) {
                        remove_entry(&roster, sessions, "7.json").unwrap();
                    }
                }
            });
            let mut problems = Vec::new();
            for _ in 0..20_000 {
                match read_entry(roster.sessions(), "7.json") {
                    Ok(_) | Err(ReadProblem::Missing) => {}
                    Err(problem) => problems.push(problem),
                }
            }
            stop.store(true, Ordering::Relaxed);
            assert!(
                problems.is_empty(),
                "{} reads saw a problem, e.g. {:?}",
                problems.len(),
                problems.first()
            );
        });
    }

    fn contents_of(roster: &RosterDir, name: &str) -> Option<Vec<u8>> {
        read_entry(roster.consent(), name).ok().map(|contents| contents.bytes)
    }

    fn holds(judged: &'static [u8]) -> impl FnOnce(std::result::Result<EntryContents, ReadProblem>) -> bool {
        move |now| now.is_ok_and(|contents| contents.bytes == judged)
    }

    /// What a reaper that judged a dead marker under the lock does when a
    /// disarm, written without the lock, replaced it before the removal:
    /// the disarm stays. And a newer file that takes the name while the
    /// judged one is aside wins over the one put back.
    #[test]
    fn a_removal_takes_only_the_file_it_judged_and_never_a_newer_one() {
        let temp = tempfile::tempdir().unwrap();
        let roster = RosterDir::open_or_create(&temp.path().join("roster")).unwrap();
        let consent = roster.consent();
        let check = |name: &str| contents_of(&roster, name);

        write_atomically(&roster, consent, "1.json", b"dead").unwrap();
        assert!(remove_entry_if_still(&roster, consent, "1.json", holds(b"dead")).unwrap());
        assert_eq!(check("1.json"), None);
        assert!(!remove_entry_if_still(&roster, consent, "1.json", holds(b"dead")).unwrap(), "none there");

        write_atomically(&roster, consent, "2.json", b"dead").unwrap();
        write_atomically(&roster, consent, "2.json", b"disarmed").unwrap();
        assert!(!remove_entry_if_still(&roster, consent, "2.json", holds(b"dead")).unwrap());
        assert_eq!(check("2.json").as_deref(), Some(&b"disarmed"[..]), "the replacement was removed");

        write_atomically(&roster, consent, "3.json", b"dead").unwrap();
        let newer_meanwhile = |_| {
            write_atomically(&roster, consent, "3.json", b"newer").unwrap();
            false
        };
        assert!(!remove_entry_if_still(&roster, consent, "3.json", newer_meanwhile).unwrap());
        assert_eq!(check("3.json").as_deref(), Some(&b"newer"[..]), "the file put back beat a newer one");

        let mut left = list_names(&roster, consent).unwrap();
        left.sort();
        assert_eq!(left, ["2.json", "3.json"], "a file moved aside was left behind");
    }
}
