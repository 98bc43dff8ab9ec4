//! The session-id index: one symlink per session id, `session-ids/<hash>`,
//! whose target text names the record holding that id: its stem,
//! `<pid>@<world>` (`RecordName`), or a bare pid in entries written before
//! records named their world. It makes "one live
//! owner per session id" an O(1) check instead of a scan of the registry.
//!
//! It heals itself rather than needing to be crash-consistent: an entry is
//! only a hint, believed only when the record it points at exists and
//! carries the same session id; a stale or dangling entry counts as "no
//! holder" and is overwritten. The index is written *before* the record,
//! so a crash in between leaves a hint without a record, never a record
//! the index cannot find.
//!
//! The entries have a directory of their own so that removing a session's
//! record and its index entry takes two different directory locks in the
//! kernel: pruning many sessions removes both kinds on two cores at once.
//! Registries written before kept the entries in `sessions/` as
//! `.sid-<hash>`; those are still read and removed, never written.

use std::borrow::Cow;

use nix::errno::Errno;
use nix::fcntl::{readlinkat, renameat};
use nix::unistd::{UnlinkatFlags, symlinkat, unlinkat};

use crate::error::{Error, Result};
use crate::record::name::RecordName;
use crate::record::stable_hash::fnv1a_64;
use crate::record::values::SessionId;
use crate::store::directory::{RosterDir, SubDir};
use crate::store::files::TEMP_PREFIX;
use crate::store::lock::RegistryLock;
use owner_liveness::retry_interrupted;

/// Prefix of the index entries older registries kept in `sessions/`
/// (dotfiles there: never listed).
pub const LEGACY_INDEX_PREFIX: &str = ".sid-";

/// The index entry's name for a session id, in `session-ids/`.
pub fn index_entry_name(session_id: &SessionId) -> String {
    format!("{:016x}", fnv1a_64(session_id.as_str().as_bytes()))
}

/// Where a session id's entry is, or was in an older registry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum IndexPlace {
    SessionIds,
    /// `sessions/.sid-<hash>`, as older registries kept it.
    Legacy,
}

impl IndexPlace {
    fn directory(self, roster: &RosterDir) -> SubDir<'_> {
        match self {
            IndexPlace::SessionIds => roster.session_ids(),
            IndexPlace::Legacy => roster.sessions(),
        }
    }

    fn entry_name(self, key: &IndexKey) -> Cow<'_, str> {
        match self {
            IndexPlace::SessionIds => Cow::Borrowed(&key.0),
            IndexPlace::Legacy => Cow::Owned(format!("{LEGACY_INDEX_PREFIX}{}", key.0)),
        }
    }

    /// The record this place's entry names; `None` when there is no entry
    /// (or it names no record).
    fn holder(self, roster: &RosterDir, key: &IndexKey) -> Option<RecordName> {
        self.checked_holder(roster, key).ok().flatten()
    }

    /// `holder`, with a failure to read an entry that is there said:
    /// `Ok(None)` only when there is no entry, or one that is no symlink
    /// or names no record.
    fn checked_holder(self, roster: &RosterDir, key: &IndexKey) -> Result<Option<RecordName>> {
        let directory = self.directory(roster);
        let name = self.entry_name(key);
        match retry_interrupted(|| readlinkat(directory.fd(), name.as_ref())) {
            Ok(target) => Ok(target.to_str().and_then(RecordName::parse_stem)),
            Err(Errno::ENOENT | Errno::EINVAL) => Ok(None),
            Err(errno) => {
                Err(Error::io("read index entry", roster.entry_path(directory, &name), errno.into()))
            }
        }
    }

    fn remove(self, roster: &RosterDir, key: &IndexKey) -> Result<()> {
        let directory = self.directory(roster);
        let name = self.entry_name(key);
        match retry_interrupted(|| unlinkat(directory.fd(), name.as_ref(), UnlinkatFlags::NoRemoveDir)) {
            Ok(()) | Err(Errno::ENOENT) => Ok(()),
            Err(errno) => Err(Error::io("remove", roster.entry_path(directory, &name), errno.into())),
        }
    }
}

/// A session id's entry name, worked out once for every place it is
/// looked for and removed from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct IndexKey(String);

impl IndexKey {
    pub(crate) fn of(session_id: &SessionId) -> IndexKey {
        IndexKey(index_entry_name(session_id))
    }
}

/// The places an entry is looked for, the current one first: where it
/// has an entry, an older place is not looked at.
const PLACES: [IndexPlace; 2] = [IndexPlace::SessionIds, IndexPlace::Legacy];

/// The record the index names for a session id, if any (unchecked hint).
pub fn indexed_holder(roster: &RosterDir, session_id: &SessionId) -> Option<RecordName> {
    let key = IndexKey::of(session_id);
    PLACES.iter().find_map(|place| place.holder(roster, &key))
}

/// `indexed_holder`, saying why an entry could not be read rather than
/// taking it for no entry.
pub fn checked_indexed_holder(roster: &RosterDir, session_id: &SessionId) -> Result<Option<RecordName>> {
    let key = IndexKey::of(session_id);
    for place in PLACES {
        if let Some(holder) = place.checked_holder(roster, &key)? {
            return Ok(Some(holder));
        }
    }
    Ok(None)
}

/// Points the session id's entry at the record `holder`, atomically
/// (symlink + rename), and removes an entry an older registry kept for it.
pub fn point_index_at(roster: &RosterDir, session_id: &SessionId, holder: RecordName) -> Result<()> {
    let directory = roster.session_ids();
    let key = IndexKey::of(session_id);
    let name = &key.0;
    let temp = format!("{TEMP_PREFIX}{name}.{}", crate::store::files::own_pid());
    let shown = roster.entry_path(directory, name);
    let target = holder.to_string();
    // A session id seen for the first time has no entry yet: the link is
    // made under its name at once, as atomically as a rename would put it
    // there. An entry already there is replaced through a temporary.
    match retry_interrupted(|| symlinkat(target.as_str(), directory.fd(), name.as_str())) {
        Ok(()) => return IndexPlace::Legacy.remove(roster, &key),
        Err(Errno::EEXIST) => {}
        Err(errno) => return Err(Error::io("create index entry", &shown, errno.into())),
    }
    let _ = retry_interrupted(|| unlinkat(directory.fd(), temp.as_str(), UnlinkatFlags::NoRemoveDir));
    retry_interrupted(|| symlinkat(target.as_str(), directory.fd(), temp.as_str()))
        .map_err(|errno| Error::io("create index entry", &shown, errno.into()))?;
    retry_interrupted(|| renameat(directory.fd(), temp.as_str(), directory.fd(), name.as_str())).map_err(
        |errno| {
            let _ = unlinkat(directory.fd(), temp.as_str(), UnlinkatFlags::NoRemoveDir);
            Error::io("rename index entry", &shown, errno.into())
        },
    )?;
    // Shadowed by the entry just written, so only tidied away.
    IndexPlace::Legacy.remove(roster, &key)
}

/// Removes the session id's entry when it still names the record `holder`.
pub fn remove_index_if_pointing_at(
    roster: &RosterDir,
    session_id: &SessionId,
    holder: RecordName,
) -> Result<()> {
    remove_index_entry_if_pointing_at(roster, &IndexKey::of(session_id), holder)
}

/// `remove_index_if_pointing_at` for a session id whose key is known.
pub(crate) fn remove_index_entry_if_pointing_at(
    roster: &RosterDir,
    key: &IndexKey,
    holder: RecordName,
) -> Result<()> {
    for place in PLACES {
        match place.holder(roster, key) {
            Some(named) if named == holder => return place.remove(roster, key),
            // Another session holds the id now: its entry stays.
            Some(_) => return Ok(()),
            None => {}
        }
    }
    Ok(())
}

/// Removes the entries of `session-ids/` (their `names`) that name no
/// existing record, and returns how many went. Register writes an entry and
/// its record under the lock the caller holds, so such an entry is what a
/// prune killed between removing records and their entries left behind.
/// An entry that cannot be read, or whose record cannot be looked at, stays.
pub(crate) fn remove_orphaned_entries(
    roster: &RosterDir,
    _lock: &RegistryLock,
    names: &[std::ffi::OsString],
) -> Result<usize> {
    let directory = roster.session_ids();
    let mut removed = 0;
    for name in names {
        if name.to_str().is_none_or(|name| name.starts_with(TEMP_PREFIX)) {
            continue;
        }
        let Ok(target) = retry_interrupted(|| readlinkat(directory.fd(), name.as_os_str())) else {
            continue;
        };
        let Some(holder) = target.to_str().and_then(RecordName::parse_stem) else {
            continue;
        };
        let record = holder.file_name();
        let looked = retry_interrupted(|| {
            nix::sys::stat::fstatat(
                roster.sessions().fd(),
                record.as_str(),
                nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW,
            )
        });
        if looked != Err(Errno::ENOENT) {
            continue;
        }
        match retry_interrupted(|| unlinkat(directory.fd(), name.as_os_str(), UnlinkatFlags::NoRemoveDir)) {
            Ok(()) => removed += 1,
            Err(Errno::ENOENT) => {}
            Err(errno) => {
                return Err(Error::io(
                    "remove",
                    roster.entry_path(directory, &name.to_string_lossy()),
                    errno.into(),
                ));
            }
        }
    }
    Ok(removed)
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
        assert_eq!(index_entry_name(&SessionId::parse("a").unwrap()), "af63dc4c8601ec8c");
    }

    fn holder(pid: u32) -> RecordName {
        RecordName::legacy(owner_liveness::Pid::new(pid).unwrap())
    }

    #[test]
    fn point_read_and_remove() {
        let temp = tempfile::tempdir().unwrap();
        let roster = RosterDir::open_or_create(&temp.path().join("roster")).unwrap();
        let id = SessionId::parse("abc").unwrap();
        assert_eq!(indexed_holder(&roster, &id), None);
        point_index_at(&roster, &id, holder(42)).unwrap();
        assert_eq!(indexed_holder(&roster, &id), Some(holder(42)));
        point_index_at(&roster, &id, holder(43)).unwrap();
        assert_eq!(indexed_holder(&roster, &id), Some(holder(43)));
        remove_index_if_pointing_at(&roster, &id, holder(42)).unwrap();
        assert_eq!(indexed_holder(&roster, &id), Some(holder(43)));
        remove_index_if_pointing_at(&roster, &id, holder(43)).unwrap();
        assert_eq!(indexed_holder(&roster, &id), None);
    }

    /// An entry is a symlink in `session-ids/`, and nothing of the index
    /// is left among the records (where each entry cost a directory entry
    /// the listing read and the pruning removed under the same lock).
    #[test]
    fn entries_live_in_their_own_directory() {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path().join("roster");
        let roster = RosterDir::open_or_create(&root).unwrap();
        let id = SessionId::parse("7c660e54-2e19-4577-b46a-16f46484eaf4").unwrap();
        point_index_at(&roster, &id, holder(42)).unwrap();
        let entry = root.join("session-ids").join(index_entry_name(&id));
        assert_eq!(std::fs::read_link(&entry).unwrap(), std::path::Path::new("42"));
        assert_eq!(std::fs::read_dir(root.join("sessions")).unwrap().count(), 0);
        assert_eq!(std::fs::read_dir(root.join("session-ids")).unwrap().count(), 1);
    }

    /// A registry written before the index had its own directory keeps
    /// its entries as `sessions/.sid-<hash>`: they are still believed,
    /// removed with their record, and superseded (and tidied away) by a
    /// new entry for the same id.
    #[test]
    fn entries_of_an_older_registry_are_read_removed_and_superseded() {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path().join("roster");
        let roster = RosterDir::open_or_create(&root).unwrap();
        let id = SessionId::parse("abc").unwrap();
        let legacy = root.join("sessions").join(format!(".sid-{}", index_entry_name(&id)));
        std::os::unix::fs::symlink("42", &legacy).unwrap();
        assert_eq!(indexed_holder(&roster, &id), Some(holder(42)));
        // Another pid's removal leaves it; its own removes it.
        remove_index_if_pointing_at(&roster, &id, holder(43)).unwrap();
        assert!(legacy.symlink_metadata().is_ok());
        remove_index_if_pointing_at(&roster, &id, holder(42)).unwrap();
        assert!(legacy.symlink_metadata().is_err());
        assert_eq!(indexed_holder(&roster, &id), None);

        std::os::unix::fs::symlink("42", &legacy).unwrap();
        point_index_at(&roster, &id, holder(44)).unwrap();
        assert_eq!(indexed_holder(&roster, &id), Some(holder(44)));
        assert!(legacy.symlink_metadata().is_err(), "the older entry is tidied away");
    }
}
