//! Which record a state event is about: the record the payload's session
//! id names (through the session-id index, checked against the record),
//! else (found by the caller, through `find_session_row`) the record of the
//! calling session's owner in this world. An event for a session roster
//! holds no record of changes nothing.

use crate::error::{Error, Result};
use crate::record::session_record::{Parsed, Record, parse_record};
use crate::record::values::SessionId;
use crate::store::directory::RosterDir;
use crate::store::files::{ReadProblem, read_entry};
use crate::store::session_index::checked_indexed_holder;

/// The record a state event applies to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StateTarget {
    /// The record's file name in `sessions/`, which the state file shares.
    pub file_name: String,
    pub session_pid: u32,
    pub start_ticks: u64,
    /// The record as it was read to find the target: a delivery judges it
    /// rather than read it again.
    pub record: Record,
}

impl StateTarget {
    /// The target of the record `record`, read from `file_name`.
    pub fn of(file_name: String, record: &Record) -> StateTarget {
        StateTarget {
            file_name,
            session_pid: record.owner.pid.get(),
            start_ticks: record.owner.start_ticks.0,
            record: record.clone(),
        }
    }

    /// The record holding `session_id`, found through the index and
    /// believed only when the record carries that very id. `Ok(None)` when
    /// no record holds it (no entry, no record, an untrusted one, another
    /// id); an entry or record that could not be read is an error, never
    /// taken for none.
    pub fn of_session_id(roster: &RosterDir, session_id: &str) -> Result<Option<StateTarget>> {
        let Ok(session_id) = SessionId::parse(session_id) else { return Ok(None) };
        let Some(holder) = checked_indexed_holder(roster, &session_id)? else { return Ok(None) };
        let file_name = holder.file_name();
        let contents = match read_entry(roster.sessions(), &file_name) {
            Ok(contents) => contents,
            Err(ReadProblem::Missing | ReadProblem::Untrusted { .. }) => return Ok(None),
            Err(ReadProblem::Failed(why)) => {
                let path = roster.entry_path(roster.sessions(), &file_name);
                return Err(Error::io("read", path, std::io::Error::other(why)));
            }
        };
        let Parsed::Record(record) = parse_record(&contents.bytes, holder.pid) else { return Ok(None) };
        let holds_it = record.session_id.as_deref() == Some(session_id.as_str());
        Ok(holds_it.then(|| StateTarget::of(file_name, &record)))
    }
}
