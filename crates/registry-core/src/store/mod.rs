//! The roster directory on disk (docs/contract.md §2): its trust checks,
//! listing, safe reads and atomic writes, the lock every mutation takes, the
//! hint files written without it, the session-id index, the hook error log,
//! and the list of every name the directory holds.

pub(crate) mod directory;
pub(crate) mod directory_entries;
pub(crate) mod files;
pub(crate) mod hints;
pub(crate) mod hook_log;
pub(crate) mod layout;
pub(crate) mod lock;
pub(crate) mod ownership;
pub(crate) mod session_index;
