//! The consent library's typed errors. Each kind knows its exit code
//! (docs/contract.md §6) and its message names the path it is about and the fix.

use std::io;
use std::path::PathBuf;

/// Everything the consent library can fail with. Reading consent never
/// fails for a bad marker or config file: those are findings, reported by
/// `status` and counted as "no". Errors are what stops a command.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The roster directory, its lock or a marker write failed.
    #[error(transparent)]
    Registry(#[from] registry_core::Error),

    /// The session's working directory does not resolve (exit 2).
    #[error("session directory {path}: {cause}; pass an existing directory with --cwd")]
    SessionDirectory { path: PathBuf, cause: io::Error },

    /// The system failed while resolving the session's working directory
    /// (out of space, an I/O error): not the caller's path at fault (exit 1).
    #[error("resolving session directory {path}: {cause}")]
    SessionDirectoryUnreadable { path: PathBuf, cause: io::Error },

    /// The session's directory is not known: no `--cwd`, and no record of
    /// the running owner to take it from (exit 2: the caller must say it).
    #[error(
        "cannot tell pid {pid}'s directory: {why}; pass the session's directory with --cwd DIR, \
         or register the session with roster-register"
    )]
    NoSessionDirectory { pid: owner_liveness::Pid, why: String },

    /// The session disarmed itself while an arm waited for the registry
    /// lock (exit 1): withdrawing consent wins, so the arm wrote nothing.
    #[error(
        "not armed: {path} was disarmed while this arm waited for the registry lock, and a disarm wins; \
         arm again to accept messages"
    )]
    DisarmedMeanwhile { path: PathBuf },
}

impl Error {
    /// The error for a session directory that could not be resolved: the
    /// caller's mistake when the path is unusable, else the system's.
    pub fn session_directory(path: &std::path::Path, cause: io::Error) -> Error {
        if registry_core::is_unusable_path(&cause) {
            Error::SessionDirectory { path: path.to_owned(), cause }
        } else {
            Error::SessionDirectoryUnreadable { path: path.to_owned(), cause }
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
