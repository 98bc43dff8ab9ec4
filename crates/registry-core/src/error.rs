//! The registry's typed errors. Each kind knows its exit code (docs/contract.md §6) and
//! its message names the path or value it is about and, where there is one,
//! the fix.

use std::io;
use std::path::PathBuf;

/// Everything that can go wrong in the registry.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The roster directory is not one roster may trust (exit 3).
    #[error("roster directory {path} {problem}; {fix}")]
    UntrustedDirectory { path: PathBuf, problem: String, fix: String },

    /// The lock stayed held past the bounded wait (exit 1).
    #[error(
        "registry busy: {path} stayed locked for {waited_ms} ms{held_by}; retry, or find the process holding it with `fuser {path}`",
        held_by = holder.map(|pid| format!(" by pid {pid}")).unwrap_or_default()
    )]
    Busy { path: PathBuf, waited_ms: u128, holder: Option<u32> },

    /// An operating-system call failed (exit 1). The cause is part of the
    /// message, not a `source`, so a `{:#}` report names it once.
    #[error("{operation} {path}: {cause}")]
    Io { operation: &'static str, path: PathBuf, cause: io::Error },

    /// Another live (or unknown) session holds the session id (exit 3).
    #[error(
        "session id {session_id:?} is held by pid {holder} ({holder_path}, {liveness}: {reason}); \
         a session id belongs to one live owner, so end that session or pick another id"
    )]
    SessionIdConflict {
        session_id: String,
        holder: u32,
        holder_path: PathBuf,
        liveness: String,
        reason: String,
    },

    /// A value from a flag, the environment or a payload is invalid (exit 2).
    #[error("{0}")]
    BadInput(String),

    /// No home directory to put the default roster directory in (exit 2).
    #[error("cannot locate the roster directory: neither --dir, ROSTER_DIR, XDG_STATE_HOME nor HOME is set")]
    NoHome,
}

impl Error {
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::UntrustedDirectory { .. } | Error::SessionIdConflict { .. } => 3,
            Error::BadInput(_) | Error::NoHome => 2,
            Error::Busy { .. } | Error::Io { .. } => 1,
        }
    }

    pub(crate) fn io(operation: &'static str, path: impl Into<PathBuf>, cause: io::Error) -> Error {
        Error::Io { operation, path: path.into(), cause }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
