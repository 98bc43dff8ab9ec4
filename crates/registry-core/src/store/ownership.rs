//! Whether a file belongs to the caller. Normally its uid says so. But in
//! a user namespace that maps no uid to the caller (`unshare -U` without a
//! map), the caller's own uid and every other user's show as the same
//! overflow uid, so there the uid proves nothing and the kernel is asked
//! instead: only a file's owner may change its mode, so a chmod to the mode
//! it already has succeeds on the caller's files and fails on anyone else's.

use std::os::fd::BorrowedFd;
use std::sync::OnceLock;

use nix::sys::stat::{Mode, fchmod};

/// The effective uid of this process, asked of the kernel once: roster
/// never changes its uid, and a listing compares it with every entry.
pub(crate) fn effective_uid() -> u32 {
    static EUID: OnceLock<u32> = OnceLock::new();
    *EUID.get_or_init(|| nix::unistd::geteuid().as_raw())
}

/// Whether the caller's effective uid has no mapping in its user
/// namespace, where file owners cannot be told apart by uid.
pub fn caller_uid_is_unmapped() -> bool {
    static UNMAPPED: OnceLock<bool> = OnceLock::new();
    *UNMAPPED.get_or_init(|| {
        // The initial user namespace maps every uid: its map need not be
        // read (an open and three calls more on every open of a registry).
        if owner_liveness::runs_in_initial_user_namespace() {
            return false;
        }
        let euid = effective_uid();
        match read_uid_map() {
            Ok(map) => !uid_is_mapped(&map, euid),
            // No user namespaces (or no /proc): uids are what they say.
            Err(_) => false,
        }
    })
}

/// `/proc/self/uid_map`, read to its end into room for a typical map at
/// once: an open, a read, the read that finds the end, a close. (std's
/// `read_to_string` asks the file's size and position first, which a
/// `/proc` file does not know: two calls more on every registration.)
fn read_uid_map() -> std::io::Result<String> {
    use std::io::Read;
    let mut file = std::fs::File::open("/proc/self/uid_map")?;
    let mut map = Vec::with_capacity(4096);
    loop {
        if map.len() == map.capacity() {
            map.reserve(4096);
        }
        let filled = map.len();
        let room = map.capacity() - filled;
        map.resize(filled + room, 0);
        match file.read(&mut map[filled..]) {
            Ok(0) => {
                map.truncate(filled);
                break;
            }
            Ok(read) => map.truncate(filled + read),
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => map.truncate(filled),
            Err(error) => return Err(error),
        }
    }
    String::from_utf8(map).map_err(|error| std::io::Error::new(std::io::ErrorKind::InvalidData, error))
}

/// Whether `uid` falls in one of `/proc/self/uid_map`'s ranges (`inside
/// outside length` per line).
fn uid_is_mapped(map: &str, uid: u32) -> bool {
    map.lines().any(|line| {
        let fields: Vec<u64> = line.split_whitespace().filter_map(|field| field.parse().ok()).collect();
        matches!(fields[..], [inside, _, length] if (inside..inside.saturating_add(length)).contains(&u64::from(uid)))
    })
}

/// Whether the file behind `fd`, whose stat showed `uid` and `mode`,
/// belongs to the caller.
pub fn owned_by_caller(fd: BorrowedFd<'_>, uid: u32, mode: u32) -> bool {
    if uid != effective_uid() {
        return false;
    }
    if !caller_uid_is_unmapped() {
        return true;
    }
    fchmod(fd, Mode::from_bits_truncate(mode & 0o7777)).is_ok()
}

/// Why a file whose uid looks like the caller's is still not provably
/// the caller's, for messages.
pub const UNPROVABLE_OWNER: &str = "this user namespace maps no uid to you, so every other user's files \
    look like yours, and the kernel refuses to let you change its mode: it is not yours";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mapped_ranges() {
        assert!(uid_is_mapped("         0          0 4294967295\n", 1000));
        assert!(uid_is_mapped("         0       1000          1\n", 0));
        assert!(!uid_is_mapped("         0       1000          1\n", 1));
        assert!(uid_is_mapped("      1000          0          1\n", 1000));
        assert!(!uid_is_mapped("", 65534));
    }
}
