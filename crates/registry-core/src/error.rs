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
    /// message, not a `source`, so a `{:#}` report names it once:
    /// `writing /run/user/1000/roster/sessions/4711.json: No space left on device`.
    #[error("{} {path}: {}", operation_in_words(operation), cause_in_words(cause))]
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

    /// A record that is not provably this caller's, or not provably gone,
    /// stands where the caller would write or remove one: another world's
    /// session, or a process at the pid that cannot be told apart (exit 3).
    #[error("{path}: {why}")]
    NotOurs { path: PathBuf, why: String },

    /// A session's message queue holds as many pending messages as it
    /// may (exit 1: the send may succeed once the session has read them).
    #[error(
        "the message queue {path} is full: {limit} messages wait for delivery; wait until the session has \
         read them (or they expire), then send again"
    )]
    QueueFull { path: PathBuf, limit: usize },

    /// A session's message queue stayed locked past a queue's bounded
    /// wait (exit 1). Roster holds a queue's lock only for the few writes
    /// of a send, a delivery or an expiry, so whatever held it this long is
    /// another process, not a queue's ordinary traffic.
    #[error(
        "message queue {path}: another process holds its lock{held_by} and kept it for {waited_ms} ms; \
         find it with `fuser {path}`",
        held_by = holder.map(|pid| format!(" (pid {pid})")).unwrap_or_default()
    )]
    QueueLocked { path: PathBuf, waited_ms: u128, holder: Option<u32> },

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
            Error::UntrustedDirectory { .. } | Error::SessionIdConflict { .. } | Error::NotOurs { .. } => 3,
            Error::BadInput(_) | Error::NoHome => 2,
            Error::Busy { .. } | Error::Io { .. } | Error::QueueFull { .. } | Error::QueueLocked { .. } => 1,
        }
    }

    pub(crate) fn io(operation: &'static str, path: impl Into<PathBuf>, cause: io::Error) -> Error {
        Error::Io { operation, path: path.into(), cause }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What was being done, as a message says it: `write` is "writing",
/// `fsync directory of` is "syncing the directory of".
fn operation_in_words(operation: &str) -> String {
    let (verb, rest) = operation.split_once(' ').unwrap_or((operation, ""));
    let words = match verb {
        "fsync" => "syncing".to_owned(),
        "stat" => "examining".to_owned(),
        "chmod" => "setting the mode of".to_owned(),
        "lock" => "locking".to_owned(),
        verb if verb.ends_with('e') => format!("{}ing", &verb[..verb.len() - 1]),
        verb => format!("{verb}ing"),
    };
    match (verb, rest) {
        (_, "") => words,
        ("fsync", "directory of") => "syncing the directory of".to_owned(),
        ("chmod", mode) => format!("setting mode {mode} on"),
        (_, rest) if ["of", "to", "into place"].iter().any(|tail| rest.ends_with(tail)) => {
            format!("{words} {rest}")
        }
        (_, rest) => format!("{words} the {rest}"),
    }
}

/// The OS error's text without the `(os error 28)` that follows it.
fn cause_in_words(cause: &io::Error) -> String {
    let text = cause.to_string();
    match text.rfind(" (os error ") {
        Some(start) if text.ends_with(')') => text[..start].to_owned(),
        _ => text,
    }
}

/// Whether an I/O error says that a path given is unusable — missing, not
/// a directory, a symlink loop, a name too long, not yours to enter — which
/// the caller fixes by naming another path (bad input), rather than that
/// the system failed while looking (out of space, an I/O error, out of
/// memory), which is an error of its own.
pub fn is_unusable_path(error: &io::Error) -> bool {
    use io::ErrorKind::{InvalidFilename, NotADirectory, NotFound, PermissionDenied};
    matches!(error.kind(), NotFound | NotADirectory | InvalidFilename | PermissionDenied)
        || error.raw_os_error() == Some(nix::libc::ELOOP)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_errors_say_what_was_done_to_which_path() {
        let check = |operation: &'static str, expect: &str| {
            let error = Error::io(operation, "/r/sessions/4711.json", io::Error::from_raw_os_error(28));
            assert_eq!(error.to_string(), format!("{expect} /r/sessions/4711.json: No space left on device"));
        };
        check("write", "writing");
        check("create", "creating");
        check("fsync", "syncing");
        check("fsync directory of", "syncing the directory of");
        check("rename into place", "renaming into place");
        check("append to", "appending to");
        check("create index entry", "creating the index entry");
        check("chmod 600", "setting mode 600 on");
        check("stat", "examining");
        check("open", "opening");
    }
}
