//! Sessions roster was never told about, read from a harness's own registry
//! of live sessions and judged by roster's verdict (docs/contract.md §6.5).
//! Claude Code is the one harness that keeps such a registry (the others'
//! releases checked are named in docs/harnesses.md). Read only, always: a
//! harness's files are its own, and roster never writes, locks, renames or
//! removes one.

mod claude_code;

pub use claude_code::{CLAUDE_CODE_FILE_SOURCE, CLAUDE_CODE_ROW_PREFIX, read_adopted_row};

use claude_code::read_listed_adopted_row;

use std::ffi::OsString;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{OFlag, open};
use nix::sys::stat::{Mode, fstat};
use owner_liveness::{SystemFacts, retry_interrupted};

use crate::session_row::SessionRow;
use crate::store::directory::SubDir;
use crate::store::directory_entries::{EntryKind, read_directory};

/// When `row` is roster's record of the owner `adopted` names (same pid,
/// start ticks and pid namespace), the two are one session: `row` stands,
/// taking the harness's state when it is the fresher of the two and says
/// something else. Whether they were one.
pub fn merge_adopted(row: &mut SessionRow, adopted: &SessionRow) -> bool {
    let (Some(ours), Some(theirs)) = (&row.record, &adopted.record) else { return false };
    let same_owner = theirs.owner.pid == ours.owner.pid
        && theirs.owner.start_ticks == ours.owner.start_ticks
        && theirs.owner.pid_ns == ours.owner.pid_ns;
    if !same_owner {
        return false;
    }
    // The harness's state when it says something else and is the fresher;
    // when both say the same, roster's, whose source names the event.
    if let Some(their_state) = &adopted.state
        && row.state.as_ref().is_none_or(|our_state| {
            let same = our_state.activity == their_state.activity
                && our_state.waiting_for == their_state.waiting_for;
            !same && their_state.since > our_state.since
        })
    {
        row.state = Some(their_state.clone());
    }
    true
}

/// Where Claude Code keeps its live sessions: `$CLAUDE_CONFIG_DIR/sessions`,
/// else `~/.claude/sessions`. `None` without either variable.
pub fn claude_code_sessions_directory(env: &dyn Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    let absolute = |value: OsString| Some(PathBuf::from(value)).filter(|path| path.is_absolute());
    match env("CLAUDE_CONFIG_DIR").and_then(absolute) {
        Some(config) => Some(config.join("sessions")),
        None => env("HOME").and_then(absolute).map(|home| home.join(".claude").join("sessions")),
    }
}

/// A harness's sessions directory, opened and checked as roster checks its
/// own: a real directory (not a symlink), owned by you, writable by
/// nobody else.
#[derive(Debug)]
pub struct AdoptedDirectory {
    path: PathBuf,
    fd: OwnedFd,
}

impl AdoptedDirectory {
    /// Opens `path`; `Ok(None)` when it does not exist (the harness never
    /// ran, or runs with another configuration directory); `Err` says why
    /// it is not believed.
    pub fn open(path: &Path) -> Result<Option<AdoptedDirectory>, String> {
        let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let fd = match retry_interrupted(|| open(path, flags, Mode::empty())) {
            Ok(fd) => fd,
            Err(Errno::ENOENT) => return Ok(None),
            Err(Errno::ELOOP | Errno::ENOTDIR) => {
                return Err(format!(
                    "{} is a symlink or not a directory; its sessions are not read",
                    path.display()
                ));
            }
            Err(errno) => return Err(format!("cannot open {}: {}", path.display(), errno.desc())),
        };
        let stat = retry_interrupted(|| fstat(fd.as_fd()))
            .map_err(|errno| format!("cannot stat {}: {}", path.display(), errno.desc()))?;
        let euid = nix::unistd::geteuid().as_raw();
        if stat.st_uid != euid {
            return Err(format!(
                "{} is owned by uid {}, not by you (uid {euid}); its sessions are not read",
                path.display(),
                stat.st_uid
            ));
        }
        if stat.st_mode & 0o022 != 0 {
            return Err(format!(
                "{} is writable by group or others; its sessions are not read (chmod go-w it)",
                path.display()
            ));
        }
        Ok(Some(AdoptedDirectory { path: path.to_owned(), fd }))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn subdir(&self) -> SubDir<'_> {
        SubDir { fd: self.fd.as_fd(), path: &self.path }
    }

    /// Every session file of the directory as a row (problem rows for the
    /// files that are not believed), read and judged on every core; `Err`
    /// says why the directory could not be listed.
    pub fn rows(&self, facts: &(impl SystemFacts + Sync)) -> Result<Vec<SessionRow>, String> {
        let entries = read_directory(self.subdir())
            .map_err(|errno| format!("cannot list {}: {}", self.path.display(), errno.desc()))?;
        let files: Vec<(String, EntryKind)> = entries
            .into_iter()
            .filter_map(|entry| Some((entry.name.into_string().ok()?, entry.kind)))
            .filter(|(name, _)| !name.starts_with('.') && name.ends_with(".json"))
            .collect();
        let read =
            |(name, kind): &(String, EntryKind)| read_listed_adopted_row(self.subdir(), name, *kind, facts);
        Ok(crate::parallel::map_in_parallel(&files, read).into_iter().flatten().collect())
    }

    /// The row of `name`, read and judged now; `None` when it is gone.
    pub fn row(&self, name: &str, facts: &impl SystemFacts) -> Option<SessionRow> {
        read_adopted_row(self.subdir(), name, facts)
    }

    /// The session files' names, for a watch that looks at them again.
    pub fn names(&self) -> Vec<String> {
        read_directory(self.subdir())
            .map(|entries| {
                entries
                    .into_iter()
                    .filter_map(|entry| entry.name.into_string().ok())
                    .filter(|name| !name.starts_with('.') && name.ends_with(".json"))
                    .collect()
            })
            .unwrap_or_default()
    }
}
