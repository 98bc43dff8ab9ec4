//! The session-id index: one symlink per session id, `sessions/.sid-<hash>`,
//! whose target text is the owner pid holding that id. It makes "one live
//! owner per session id" an O(1) check instead of a scan of the registry.
//!
//! It heals itself rather than needing to be crash-consistent: an entry is
//! only a hint, believed only when the record it points at exists and
//! carries the same session id; a stale or dangling entry counts as "no
//! holder" and is overwritten. The index is written *before* the record,
//! so a crash in between leaves a hint without a record, never a record
//! the index cannot find.

use nix::errno::Errno;
use nix::fcntl::{readlinkat, renameat};
use nix::unistd::{UnlinkatFlags, symlinkat, unlinkat};

use owner_liveness::Pid;

use crate::directory::RosterDir;
use crate::error::{Error, Result};
use crate::files::TEMP_PREFIX;
use crate::interrupted::retry_on_interrupt;
use crate::record_values::SessionId;

/// Prefix of index entries (dotfiles: never listed).
pub const INDEX_PREFIX: &str = ".sid-";

/// FNV-1a, 64 bits: stable across processes and releases, which std's
/// hasher does not promise. Collisions are harmless: the record is checked.
fn fnv1a_64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The index entry's name for a session id.
pub fn index_entry_name(session_id: &SessionId) -> String {
    format!("{INDEX_PREFIX}{:016x}", fnv1a_64(session_id.as_str().as_bytes()))
}

/// The pid the index names for a session id, if any (unchecked hint).
pub fn indexed_holder(roster: &RosterDir, session_id: &SessionId) -> Option<Pid> {
    let name = index_entry_name(session_id);
    let target = retry_on_interrupt(|| readlinkat(roster.sessions().fd(), name.as_str())).ok()?;
    Pid::parse_canonical(target.to_str()?, u32::MAX).ok()
}

/// Points the session id's entry at `pid`, atomically (symlink + rename).
pub fn point_index_at(roster: &RosterDir, session_id: &SessionId, pid: Pid) -> Result<()> {
    let sessions = roster.sessions();
    let name = index_entry_name(session_id);
    let temp = format!("{TEMP_PREFIX}{name}.{}", std::process::id());
    let shown = roster.entry_path(sessions, &name);
    let _ = retry_on_interrupt(|| unlinkat(sessions.fd(), temp.as_str(), UnlinkatFlags::NoRemoveDir));
    retry_on_interrupt(|| symlinkat(pid.to_string().as_str(), sessions.fd(), temp.as_str()))
        .map_err(|errno| Error::io("create index entry", &shown, errno.into()))?;
    retry_on_interrupt(|| renameat(sessions.fd(), temp.as_str(), sessions.fd(), name.as_str())).map_err(
        |errno| {
            let _ = unlinkat(sessions.fd(), temp.as_str(), UnlinkatFlags::NoRemoveDir);
            Error::io("rename index entry", &shown, errno.into())
        },
    )
}

/// Removes the session id's entry when it still names `pid`.
pub fn remove_index_if_pointing_at(roster: &RosterDir, session_id: &SessionId, pid: Pid) -> Result<()> {
    if indexed_holder(roster, session_id) != Some(pid) {
        return Ok(());
    }
    let name = index_entry_name(session_id);
    match retry_on_interrupt(|| unlinkat(roster.sessions().fd(), name.as_str(), UnlinkatFlags::NoRemoveDir)) {
        Ok(()) | Err(Errno::ENOENT) => Ok(()),
        Err(errno) => Err(Error::io("remove", roster.entry_path(roster.sessions(), &name), errno.into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_stable_and_distinct() {
        let a = SessionId::parse("7c660e54-2e19-4577-b46a-16f46484eaf4").unwrap();
        let b = SessionId::parse("7c660e54-2e19-4577-b46a-16f46484eaf5").unwrap();
        assert_eq!(index_entry_name(&a), index_entry_name(&a.clone()));
        assert_ne!(index_entry_name(&a), index_entry_name(&b));
        // Pinned so that a change of hash (which would orphan every entry
        // written by an older roster) cannot slip in unnoticed.
        assert_eq!(fnv1a_64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a_64(b"a"), 0xaf63_dc4c_8601_ec8c);
    }

    #[test]
    fn point_read_and_remove() {
        let temp = tempfile::tempdir().unwrap();
        let roster = RosterDir::open_or_create(&temp.path().join("roster")).unwrap();
        let id = SessionId::parse("abc").unwrap();
        assert_eq!(indexed_holder(&roster, &id), None);
        point_index_at(&roster, &id, Pid::new(42).unwrap()).unwrap();
        assert_eq!(indexed_holder(&roster, &id), Some(Pid::new(42).unwrap()));
        point_index_at(&roster, &id, Pid::new(43).unwrap()).unwrap();
        assert_eq!(indexed_holder(&roster, &id), Some(Pid::new(43).unwrap()));
        remove_index_if_pointing_at(&roster, &id, Pid::new(42).unwrap()).unwrap();
        assert_eq!(indexed_holder(&roster, &id), Some(Pid::new(43).unwrap()));
        remove_index_if_pointing_at(&roster, &id, Pid::new(43).unwrap()).unwrap();
        assert_eq!(indexed_holder(&roster, &id), None);
    }
}
