//! Where a session works, for its consent (docs/contract.md §6.4, §7): the directory
//! whose nearest `.roster.toml` may auto-arm it. It is the session's own
//! directory, never the caller's: an orchestrator that asks about a session
//! from `/`, or from a repository of its own, must get the session's answer.

use std::path::{Path, PathBuf};

use owner_liveness::{Liveness, OwnerIdentity, Pid, SystemFacts};
use registry_core::{RosterDir, SessionRow, find_session_row, same_owner};

use crate::config_files::canonical_session_directory;
use crate::error::{Error, Result};

/// Where a session's directory was taken from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionDirectorySource {
    /// `--cwd DIR`: the caller said it.
    CwdFlag,
    /// The `cwd` of the session's record, written when it registered.
    Record,
    /// The caller's current directory. Only `arm` and `disarm` fall back
    /// to it, for the marker's `cwd`, which decides nothing.
    CurrentDirectory,
}

impl SessionDirectorySource {
    /// `"--cwd"`, `"record"` or `"current-directory"`, as `status` shows it.
    pub fn as_str(self) -> &'static str {
        match self {
            SessionDirectorySource::CwdFlag => "--cwd",
            SessionDirectorySource::Record => "record",
            SessionDirectorySource::CurrentDirectory => "current-directory",
        }
    }
}

/// A session's directory (canonical) and where it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionDirectory {
    pub path: PathBuf,
    pub source: SessionDirectorySource,
}

/// The directory of the session whose owner runs at `pid`: `cwd_flag` when
/// given; else the `cwd` of the session's record, but only when that record
/// is believed and its owner is the very process running at `pid` now
/// (`owner` is its identity as captured, `None` when it could not be), or,
/// for an owner that exited, while another process of its recorded chain
/// runs (the record's verdict is alive).
/// A dead or reused pid's record, an untrusted or malformed one, or none at
/// all is an error that says which, never a guess from the caller's
/// directory. `roster` is `None` when the registry at `roster_path` does
/// not exist.
pub fn session_directory(
    roster: Option<&RosterDir>,
    roster_path: &Path,
    pid: Pid,
    owner: Option<&OwnerIdentity>,
    cwd_flag: Option<&Path>,
    facts: &impl SystemFacts,
) -> Result<SessionDirectory> {
    if let Some(directory) = cwd_flag {
        let path = canonical_session_directory(directory)?;
        return Ok(SessionDirectory { path, source: SessionDirectorySource::CwdFlag });
    }
    let unknown = |why: String| Error::NoSessionDirectory { pid, why };
    let Some(roster) = roster else {
        return Err(unknown(format!(
            "it has no record, since the registry {} does not exist",
            roster_path.display()
        )));
    };
    let Some(row) = find_session_row(roster, pid, facts) else {
        let name = crate::marker_entry::marker_name_in_reader_world(pid, facts);
        let expected = roster.entry_path(roster.sessions(), &name.file_name());
        return Err(unknown(format!("it has no record ({} does not exist)", expected.display())));
    };
    session_directory_of_row(&row, pid, owner)
}

/// `session_directory` from the session's row, found and judged already
/// (by a caller that had just read it, or above).
pub(crate) fn session_directory_of_row(
    row: &SessionRow,
    pid: Pid,
    owner: Option<&OwnerIdentity>,
) -> Result<SessionDirectory> {
    let unknown = |why: String| Error::NoSessionDirectory { pid, why };
    let record_path = row.path.clone();
    if let Some(problem) = &row.problem {
        return Err(unknown(format!(
            "its record {} is {} ({}) and is not believed",
            record_path.display(),
            problem.kind.as_str(),
            problem.detail
        )));
    }
    let Some(record) = &row.record else {
        return Err(unknown(format!("its record {} could not be read", record_path.display())));
    };
    match row.liveness() {
        Liveness::Alive => {}
        Liveness::Dead => {
            return Err(unknown(format!(
                "its record {} belongs to a process that is gone ({})",
                record_path.display(),
                row.verdict.reason
            )));
        }
        Liveness::Unknown => {
            return Err(unknown(format!(
                "its record {} cannot be matched to the process running now ({})",
                record_path.display(),
                row.verdict.reason
            )));
        }
    }
    // An owner that could not be captured (it exited) while its record is
    // alive is a chain's loader whose session runs on in another member:
    // the verdict just proved that member is the recorded process.
    let runs_on_in_chain = owner.is_none() && !record.owner.chain.is_empty();
    if !runs_on_in_chain && !owner.is_some_and(|identity| same_owner(record, identity)) {
        return Err(unknown(format!(
            "its record {} was written by another process than the one running at pid {pid} now",
            record_path.display()
        )));
    }
    let path = canonical_session_directory(Path::new(&record.cwd))?;
    Ok(SessionDirectory { path, source: SessionDirectorySource::Record })
}
