//! Reading the names in a roster subdirectory with `getdents64` directly:
//! a whole directory in a few large reads (glibc's `readdir` reads 32 KiB
//! at a time, twenty calls for ten thousand records and their index
//! entries), a bounded slice from a saved position in one small read (what
//! the reaper of every register needs, so its cost does not grow with the
//! registry), and each entry's type as the directory tells it, so a reader
//! need not `stat` an entry to know it is a regular file.

use std::ffi::OsString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;

use nix::errno::Errno;
use nix::fcntl::{OFlag, openat};
use nix::libc;
use nix::sys::stat::Mode;

use crate::store::directory::SubDir;
use owner_liveness::retry_interrupted;

/// What the directory says an entry is (`d_type`); `Unknown` where the
/// filesystem does not say, and the reader must look for itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryKind {
    Regular,
    Symlink,
    Directory,
    /// FIFO, socket or device.
    Special,
    Unknown,
}

/// One name in a directory (`.` and `..` left out).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirectoryEntry {
    pub name: OsString,
    pub kind: EntryKind,
}

/// The first read of a whole directory: room for about a hundred entries
/// in two pages (a larger buffer, zeroed on every listing, cost a page
/// fault a page). A read that fills more than half its buffer is followed
/// by one twice as large, up to `LARGEST_READ`: a large registry costs a
/// handful of large reads.
const FIRST_READ: usize = 8 * 1024;
const LARGEST_READ: usize = 1024 * 1024;

/// One read of a bounded slice: room for about a hundred entries.
const SLICE_READ: usize = 4 * 1024;

fn open_for_listing(directory: SubDir<'_>) -> nix::Result<OwnedFd> {
    retry_interrupted(|| {
        openat(directory.fd, ".", OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC, Mode::empty())
    })
}

/// Every entry of `directory`, in directory order.
pub fn read_directory(directory: SubDir<'_>) -> nix::Result<Vec<DirectoryEntry>> {
    let fd = open_for_listing(directory)?;
    let mut buffer = vec![0u8; FIRST_READ];
    let mut entries = Vec::new();
    loop {
        let filled = getdents64(&fd, &mut buffer)?;
        if filled == 0 {
            return Ok(entries);
        }
        for (entry, _) in parse_entries(&buffer[..filled]) {
            entries.extend(entry);
        }
        if filled > buffer.len() / 2 && buffer.len() < LARGEST_READ {
            buffer = vec![0u8; buffer.len() * 2];
        }
    }
}

/// A run of a directory's entries, each with the position after it, and
/// the position after the last one (`None` at the end of the directory).
pub type DirectorySlice = (Vec<(DirectoryEntry, i64)>, Option<i64>);

/// At most `limit` entries of `directory` from `cursor` (0 for the start,
/// else a position an earlier call returned), each with the position after
/// it (so that a walk that stops early can go on from there), and the
/// position after the last one returned (`None` at the end of the
/// directory).
pub fn read_directory_slice(directory: SubDir<'_>, cursor: i64, limit: usize) -> nix::Result<DirectorySlice> {
    let fd = open_for_listing(directory)?;
    if cursor != 0 {
        nix::unistd::lseek(&fd, cursor, nix::unistd::Whence::SeekSet)?;
    }
    let mut buffer = [0u8; SLICE_READ];
    let mut entries = Vec::new();
    loop {
        let filled = getdents64(&fd, &mut buffer)?;
        if filled == 0 {
            return Ok((entries, None));
        }
        for (entry, next) in parse_entries(&buffer[..filled]) {
            entries.extend(entry.map(|entry| (entry, next)));
            if entries.len() == limit {
                return Ok((entries, Some(next)));
            }
        }
    }
}

fn getdents64(fd: &OwnedFd, buffer: &mut [u8]) -> nix::Result<usize> {
    retry_interrupted(|| {
        // SAFETY: the kernel writes at most `buffer.len()` bytes into the
        // buffer, which lives for the whole call.
        let read =
            unsafe { libc::syscall(libc::SYS_getdents64, fd.as_raw_fd(), buffer.as_mut_ptr(), buffer.len()) };
        if read < 0 { Err(Errno::last()) } else { Ok(read as usize) }
    })
}

/// The entries of one `getdents64` result, each with the position after
/// it (`d_off`); `None` for `.` and `..`. A record the kernel could not
/// have written ends the parse.
fn parse_entries(bytes: &[u8]) -> impl Iterator<Item = (Option<DirectoryEntry>, i64)> + '_ {
    // struct linux_dirent64 { u64 d_ino; i64 d_off; u16 d_reclen; u8 d_type; char d_name[]; }
    const NAME_OFFSET: usize = 19;
    let mut offset = 0;
    std::iter::from_fn(move || {
        let header = bytes.get(offset..offset + NAME_OFFSET)?;
        let next = i64::from_ne_bytes(header[8..16].try_into().ok()?);
        let record_length = usize::from(u16::from_ne_bytes(header[16..18].try_into().ok()?));
        let record = bytes.get(offset..offset + record_length).filter(|_| record_length > NAME_OFFSET)?;
        let name_bytes = &record[NAME_OFFSET..];
        let name = &name_bytes[..name_bytes.iter().position(|&byte| byte == 0)?];
        offset += record_length;
        if name == b"." || name == b".." {
            return Some((None, next));
        }
        let kind = match header[18] {
            libc::DT_REG => EntryKind::Regular,
            libc::DT_LNK => EntryKind::Symlink,
            libc::DT_DIR => EntryKind::Directory,
            libc::DT_UNKNOWN => EntryKind::Unknown,
            _ => EntryKind::Special,
        };
        Some((Some(DirectoryEntry { name: std::ffi::OsStr::from_bytes(name).to_owned(), kind }), next))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::directory::RosterDir;

    #[test]
    fn whole_directories_and_slices_list_every_entry_once_with_its_kind() {
        let temp = tempfile::tempdir().unwrap();
        let roster = RosterDir::open_or_create(&temp.path().join("roster")).unwrap();
        let sessions = temp.path().join("roster/sessions");
        // Enough entries for several reads of either kind.
        let mut expected = Vec::new();
        for index in 0..3000 {
            let name = format!("{index}.json-with-a-longer-name-to-fill-the-buffers-sooner");
            std::fs::write(sessions.join(&name), b"{}").unwrap();
            expected.push(name);
        }
        std::os::unix::fs::symlink("1", sessions.join(".sid-link")).unwrap();
        std::fs::create_dir(sessions.join("a-directory")).unwrap();
        expected.extend([".sid-link".to_owned(), "a-directory".to_owned()]);
        expected.sort();

        let whole = read_directory(roster.sessions()).unwrap();
        let mut names: Vec<String> = whole.iter().map(|entry| entry.name.to_string_lossy().into()).collect();
        names.sort();
        assert_eq!(names, expected);
        let kind_of = |name: &str| whole.iter().find(|entry| entry.name == name).unwrap().kind;
        assert_eq!(kind_of("0.json-with-a-longer-name-to-fill-the-buffers-sooner"), EntryKind::Regular);
        assert_eq!(kind_of(".sid-link"), EntryKind::Symlink);
        assert_eq!(kind_of("a-directory"), EntryKind::Directory);

        let mut sliced = Vec::new();
        let mut cursor = 0;
        loop {
            let (entries, next) = read_directory_slice(roster.sessions(), cursor, 7).unwrap();
            assert!(entries.len() <= 7);
            if let (Some((_, after_last)), Some(next)) = (entries.last(), next) {
                assert_eq!(*after_last, next, "the slice ends where its last entry does");
            }
            sliced.extend(entries.into_iter().map(|(entry, _)| entry.name.to_string_lossy().into_owned()));
            match next {
                Some(next) => cursor = next,
                None => break,
            }
        }
        sliced.sort();
        assert_eq!(sliced, expected);
    }

    /// Entries with the longest names a file system allows: a read fits
    /// only a few dozen of them, and every one is still listed once.
    #[test]
    fn a_directory_of_longest_names_is_listed_whole() {
        let temp = tempfile::tempdir().unwrap();
        let roster = RosterDir::open_or_create(&temp.path().join("roster")).unwrap();
        let sessions = temp.path().join("roster/sessions");
        let mut expected = Vec::new();
        for index in 0..1500 {
            let name = format!("{index:05}{}", "n".repeat(250));
            std::fs::write(sessions.join(&name), b"").unwrap();
            expected.push(name);
        }
        expected.sort();
        let mut names: Vec<String> = read_directory(roster.sessions())
            .unwrap()
            .into_iter()
            .map(|entry| entry.name.to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, expected);
    }
}
