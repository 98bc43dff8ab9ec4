//! The checks between a judged row and its removal, shared by prune and by
//! register's reaping of a few dead records: whether a dead verdict holds
//! for good, the re-check under the lock, and the session-id index entry
//! that goes with the record.

use owner_liveness::{Liveness, SystemFacts};

use crate::record::name::RecordName;
use crate::session_row::{SessionRow, read_session_row};
use crate::store::directory::RosterDir;
use crate::store::files::{FileStamp, entry_stamp};
use crate::store::session_index::IndexKey;

/// A dead verdict that still holds for as long as its file is unchanged:
/// the identity it judged can never come back to life (a new process at
/// the pid has another start tick and pidfs inode, and a boot never comes
/// back). A recorded socket is left out, because a path that vanished
/// may be created again.
pub(crate) fn dead_for_good(row: &SessionRow) -> bool {
    row.liveness() == Liveness::Dead && row.record.as_ref().is_some_and(|record| record.socket.is_none())
}

/// Re-checks under the lock a row judged before it was taken: the row as
/// it stands now, `None` when its file is gone.
///
/// The re-check of a row that is dead for good is a stat: when the name
/// still holds the very file judged (same inode, same change time), the
/// verdict stands, and reading and judging it again would double the cost
/// for nothing. Anything else is read and judged again.
pub(crate) fn recheck(
    roster: &RosterDir,
    judged: SessionRow,
    stamp_when_judged: Option<FileStamp>,
    facts: &impl SystemFacts,
) -> Option<SessionRow> {
    let unchanged = stamp_when_judged
        .is_some_and(|stamp| entry_stamp(roster.sessions(), &judged.file_name) == Some(stamp));
    if unchanged { Some(judged) } else { read_session_row(roster, &judged.file_name, facts) }
}

/// The session-id index entry a row's record may hold: its key and the
/// record name the entry must still name to be the record's.
pub(crate) fn index_entry_of(row: &SessionRow) -> Option<(IndexKey, RecordName)> {
    let record = row.record.as_ref()?;
    let name = RecordName::parse_file_name(&row.file_name)?;
    Some((IndexKey::of(record.session_id.as_ref()?), name))
}
