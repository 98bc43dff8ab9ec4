//! registry-core is the roster directory and everything done to it: the
//! trust checks, safe reads, atomic writes and the lock (docs/contract.md §2), the
//! record format (§3), and register, list and prune (§6.1–6.3) as library
//! calls the binaries wrap. It stands on owner-liveness for every verdict.

pub mod adopted;
mod ended;
mod ended_bounds;
mod error;
mod list;
pub mod messages;
mod parallel;
mod prune;
pub mod record;
pub mod register;
mod removal_checks;
mod resuming;
mod running_system;
mod session_row;
pub mod state;
mod store;
mod watch;

pub use ended::{
    ENDED_FORMAT, ENDED_KEPT_DAYS_RANGE, ENDED_KEPT_FOR, ENDED_KEPT_MOST, ENDED_KEPT_MOST_RANGE, EndedBounds,
    EndedListing, EndedSession, HowEnded, ShownEndedSession, ShownResume, keep_ended, list_ended,
};
pub use error::{Error, Result, is_unusable_path};
pub use list::{ListFilter, Listing, ListingSummary, list_sessions, list_sessions_presented};
pub use parallel::map_in_parallel;
pub use prune::{
    CurrentOutcome, CurrentSession, PruneOptions, PruneReport, listed_entry_count, prune_sessions,
    remove_current,
};
pub use record::keys::RECORD_FORMAT;
pub use record::name::{RecordName, World};
pub use record::owner::RecordedOwner;
pub use record::session_record::{
    Parsed, Record, parse_record, parse_record_by_serde, pid_of_file_name, same_owner,
};
pub use record::timestamp::{Timestamp, civil_from_days};
pub use record::values::{
    AgentName, HarnessName, HarnessVersion, RecordedTime, SessionDirectoryPath, SessionId, StartTicks,
    TranscriptPath,
};
pub use register::{Registered, Registrar, Registration, register};
pub use resuming::{RESUMING_FORMAT, ResumeClaim, claim_name, running_claim, write_claim};
pub use running_system::RunningSystem;
pub use session_row::{
    NOT_A_RECORD_NAME, Origin, Problem, ProblemKind, ROW_KEYS, RowConsent, SessionRow, find_session_row,
    judged_session_row, read_session_row,
};
pub use store::directory::{
    CONSENT, DirectoryChoice, ENDED, MESSAGES, RESUMING, RosterDir, SESSION_IDS, SESSIONS, STATES,
    choose_directory,
};
pub use store::files::{
    Durability, EntryContents, ReadProblem, TEMP_PREFIX, list_names, read_entry, remove_entry,
    remove_entry_if_still, write_atomically, write_atomically_as,
};
pub use store::hook_log::{HOOK_LOG_LINES, HOOK_LOG_NAME, append_hook_error_within, recent_hook_errors};
pub use store::layout::{NOTES_SHOWN_NAME, registry_layout};
pub use store::lock::{LOCK_WAIT, RegistryLock};
pub use store::ownership::{UNPROVABLE_OWNER, owned_by_caller};
pub use store::session_index::index_entry_name;
pub use watch::{Change, RegistryWatch, StopWhen};
