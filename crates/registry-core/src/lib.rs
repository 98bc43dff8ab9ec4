//! registry-core is the roster directory and everything done to it: the
//! trust checks, safe reads, atomic writes and the lock (docs/contract.md §2), the
//! record format (§3), and register, list and prune (§6.1–6.3) as library
//! calls the binaries wrap. It stands on owner-liveness for every verdict.

mod canonical_record;
mod directory;
mod directory_entries;
mod error;
mod files;
mod hook_log;
mod layout;
mod list;
mod malformed;
mod ownership;
mod parallel;
mod prune;
mod prune_removals;
mod record;
mod record_name;
mod record_values;
mod recorded_owner;
mod register;
mod running_system;
mod session_index;
mod session_row;
mod stable_hash;
mod timestamp;
mod watch;

pub use directory::{
    CONSENT, DirectoryChoice, DirectorySource, RosterDir, SESSION_IDS, SESSIONS, SubDir, choose_directory,
};
pub use directory_entries::{DirectoryEntry, EntryKind};
pub use error::{Error, Result, is_unusable_path};
pub use files::{
    EntryContents, LOCK_NAME, LOCK_WAIT, LOCK_WAIT_NOTICE, MAX_ENTRY_BYTES, ReadProblem, RegistryLock,
    TEMP_PREFIX, list_entries, list_names, read_entry, remove_entry, write_atomically,
};
pub use hook_log::{
    HOOK_LOG_LINES, HOOK_LOG_NAME, RecentHookErrors, append_hook_error, append_hook_error_within,
    recent_hook_errors,
};
pub use layout::{LayoutEntry, NOTES_SHOWN_NAME, REAP_CURSOR_NAME, registry_layout};
pub use list::{
    ListFilter, Listing, ListingSummary, PresentedListing, list_sessions, list_sessions_presented,
    sort_newest_first,
};
pub use malformed::{Field, FieldError, FieldLimit, FieldProblem, LengthUnit, Malformed};
pub use ownership::{UNPROVABLE_OWNER, caller_uid_is_unmapped, owned_by_caller};
pub use parallel::map_in_parallel;
pub use prune::{
    CurrentOutcome, CurrentSession, PruneOptions, PruneReport, TEMP_MAX_AGE, listed_entry_count,
    prune_sessions, remove_current, remove_old_temporaries, remove_session_row,
};
pub use record::{
    FormatProblem, Parsed, RECORD_FORMAT, Record, SocketRecord, Versioned, check_field_limits,
    continues_chain, parse_record, parse_record_by_serde, parse_versioned, pid_of_file_name, same_owner,
};
pub use record_name::{RecordName, World};
pub use record_values::{
    AGENT_NAME_LIMIT, AgentName, BOOT_ID_LIMIT, BootId, CWD_LIMIT, FIELD_LIMITS, HARNESS_LIMIT,
    HARNESS_VERSION_LIMIT, HarnessName, HarnessVersion, MACHINE_LIMIT, MachineName, RecordedTime,
    SESSION_ID_LIMIT, SESSION_PID_SOURCE_LIMIT, SOCKET_PATH_LIMIT, SessionDirectoryPath, SessionId,
    SessionPidSource, SocketPath, StartTicks, TRANSCRIPT_PATH_LIMIT, TranscriptPath,
};
pub use recorded_owner::{
    AbsentKeys, ChainMemberRecord, KeyName, OwnerKeys, RecordedOwner, UncheckedOwner, check_chain,
    check_session_pid, read_once, required,
};
pub use register::{AgentChoice, REAP_EXAMINE, REAP_REMOVE, Registered, Registration, register};
pub use running_system::RunningSystem;
pub use session_index::{LEGACY_INDEX_PREFIX, index_entry_name, indexed_holder};
pub use session_row::{
    NOT_A_RECORD_NAME, Problem, ProblemKind, ROW_KEYS, RowConsent, RowJson, SessionRow, find_session_row,
    read_session_row,
};
pub use timestamp::Timestamp;
pub use watch::{Change, FollowOutcome, RegistryWatch, raise_open_file_limit};
