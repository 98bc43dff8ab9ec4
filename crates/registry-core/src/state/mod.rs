//! What each session is doing (docs/contract.md §3.2): one small file per session
//! beside its record, `states/<record name>`, written by the state hook on
//! every event the harness sends and read by list and watch.
//!
//! The state lives apart from the record so that the hot path never takes
//! the registry lock and never rewrites a record: an update is one read
//! and one rename in `states/`, ordered among the session's own updates by
//! an `flock` on the state file itself (`update.rs`). A state file names
//! the owner it describes (pid and start ticks) and is believed only for
//! a record of that very owner; a state is shown only while its owner is
//! alive. A state written between a crash and the next event may be lost
//! (no fsync on the hot path): the next event writes it anew.

mod file;
mod target;
mod update;

pub use file::{STATE_FORMAT, SessionState, StateFile, UNKNOWN_STATE};
pub use target::StateTarget;
pub use update::{StateChange, StateEvent, record_state_event};

use crate::record::session_record::Record;
use crate::store::directory::RosterDir;
use crate::store::files::read_entry;

/// The state file of the record `record_file_name`, when it describes that
/// record's owner: `None` when there is none, when it is not trusted or
/// not understood, or when it describes an earlier owner of the name.
pub fn read_state(roster: &RosterDir, record_file_name: &str, record: &Record) -> Option<SessionState> {
    let contents = read_entry(roster.states(), record_file_name).ok()?;
    let file = StateFile::parse(&contents.bytes)?;
    file.describes(record).then(|| file.into_state())
}
