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
    #[error("session directory {path}: {source}; pass an existing directory with --cwd")]
    SessionDirectory { path: PathBuf, source: io::Error },

    /// The session's directory is not known: no `--cwd`, and no record of
    /// the running owner to take it from (exit 2: the caller must say it).
    #[error(
        "cannot tell pid {pid}'s directory: {why}; pass the session's directory with --cwd DIR, \
         or register the session with roster-register"
    )]
    NoSessionDirectory { pid: owner_liveness::Pid, why: String },
}

impl Error {
    /// The exit code this error deserves (docs/contract.md §6).
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Registry(inner) => inner.exit_code(),
            Error::SessionDirectory { .. } | Error::NoSessionDirectory { .. } => 2,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
