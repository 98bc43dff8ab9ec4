//! Sessions roster was never told about, read from a harness's own registry
//! of live sessions and judged by roster's verdict (docs/contract.md §6.5).
//! Claude Code keeps one (a file per session, `claude_code.rs`), Copilot CLI
//! a lock file per session (`copilot.rs`); the other releases checked are
//! named in docs/harnesses.md. What those files say, and where they are,
//! is the harness crate's (`harness::session_files`); reading them as
//! roster reads its own, judging the claims and merging them with roster's
//! records is here. Read only, always: a
//! harness's files are its own, and roster never writes, locks, renames or
//! removes one.

mod claude_code;
mod copilot;
mod this_boot;

pub use claude_code::{CLAUDE_CODE_FILE_SOURCE, CLAUDE_CODE_ROW_PREFIX};
pub use copilot::{COPILOT_FILE_SOURCE, COPILOT_ROW_PREFIX, COPILOT_STARTING_GRACE, process_is_exiting};

use claude_code::{read_adopted_row, read_listed_adopted_row};
use copilot::{HeldLocks, lock_file_names, read_copilot_row};

use std::collections::HashSet;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{OFlag, open};
use nix::sys::stat::{Mode, fstat};
use owner_liveness::{Liveness, Pid, SystemFacts, retry_interrupted};

use crate::record::session_record::Record;
use crate::session_row::SessionRow;
use crate::store::directory::SubDir;
use crate::store::directory_entries::{EntryKind, read_directory};

/// A harness whose own registry of live sessions roster reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum AdoptedHarness {
    /// `~/.claude/sessions/<pid>.json`.
    ClaudeCode,
    /// `~/.copilot/session-state/<session id>/inuse.<pid>.lock`.
    Copilot,
}

impl AdoptedHarness {
    /// What the rows of its sessions are named with first.
    pub fn row_prefix(self) -> &'static str {
        match self {
            AdoptedHarness::ClaudeCode => CLAUDE_CODE_ROW_PREFIX,
            AdoptedHarness::Copilot => COPILOT_ROW_PREFIX,
        }
    }

    /// Its name for people.
    pub fn display_name(self) -> &'static str {
        match self {
            AdoptedHarness::ClaudeCode => "Claude Code",
            AdoptedHarness::Copilot => "Copilot CLI",
        }
    }
}

/// Where one harness keeps its sessions, to be read.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct AdoptedSource {
    pub harness: AdoptedHarness,
    pub path: PathBuf,
}

/// The harness and the name in its directory of an adopted row's
/// `file_name` (`claude-code/4711.json`, `copilot/<id>/inuse.4711.lock`);
/// `None` for a roster record's.
pub fn adopted_row_name(row_file_name: &str) -> Option<(AdoptedHarness, &str)> {
    [AdoptedHarness::ClaudeCode, AdoptedHarness::Copilot]
        .into_iter()
        .find_map(|harness| Some((harness, row_file_name.strip_prefix(harness.row_prefix())?)))
}

/// When `row` is roster's record of the owner `adopted` names (same pid,
/// start ticks and pid namespace), the two are one session: `row` stands,
/// taking the harness's state when it is the fresher of the two and says
/// something else. Whether they were one.
pub fn merge_adopted(row: &mut SessionRow, adopted: &SessionRow) -> bool {
    let (Some(ours), Some(theirs)) = (&row.record, &adopted.record) else { return false };
    if !same_owner(ours, theirs) && !same_live_session(row, adopted) {
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

fn same_owner(ours: &Record, theirs: &Record) -> bool {
    theirs.owner.pid == ours.owner.pid
        && theirs.owner.start_ticks == ours.owner.start_ticks
        && theirs.owner.pid_ns == ours.owner.pid_ns
}

/// Whether roster's row and a harness's are one session told by two
/// processes: Copilot CLI's lock names its native process, roster's
/// record the node loader above it. One session id, both alive, the same
/// harness: one session, as a session id is not shared by two live ones.
fn same_live_session(row: &SessionRow, adopted: &SessionRow) -> bool {
    let (Some(ours), Some(theirs)) = (&row.record, &adopted.record) else { return false };
    adopted.origin == crate::session_row::Origin::Copilot
        && ours.harness.as_str() == theirs.harness.as_str()
        && ours.session_id.is_some()
        && ours.session_id == theirs.session_id
        && row.liveness() == Liveness::Alive
        && adopted.liveness() == Liveness::Alive
        && runs_under(theirs.owner.pid, ours)
}

/// Whether the process `pid` is the record's owner, a member of its
/// chain, or runs below the owner: a session id alone could be named by any
/// process, so the claim must come from the record's own process tree.
fn runs_under(pid: owner_liveness::Pid, ours: &Record) -> bool {
    if ours.identity().members().any(|member| member.pid == pid) {
        return true;
    }
    owner_liveness::walk_ancestry_reporting(pid).steps.iter().any(|step| step.pid == ours.owner.pid)
}

/// Whether `row` and `adopted` stand for one session (`merge_adopted`'s
/// test, without merging).
pub fn is_same_session(row: &SessionRow, adopted: &SessionRow) -> bool {
    let (Some(ours), Some(theirs)) = (&row.record, &adopted.record) else { return false };
    same_owner(ours, theirs) || same_live_session(row, adopted)
}

/// Whether any roster record may stand for the same session as `adopted`
/// (`is_same_session`), when every record there is has its owner's pid in
/// `record_pids`: a harness's file without a record never does, one of
/// Claude Code only by the same owner (`same_owner`), so only a record of
/// its pid, and a Copilot CLI lock also by its session id
/// (`same_live_session`), whatever the pid. `false` is a promise: no such
/// record can take the row in, which a listing may then present at once.
pub fn may_be_same_session_as_a_record(adopted: &SessionRow, record_pids: &HashSet<Pid>) -> bool {
    let Some(theirs) = &adopted.record else { return false };
    if record_pids.is_empty() {
        return false;
    }
    adopted.origin == crate::session_row::Origin::Copilot || record_pids.contains(&theirs.owner.pid)
}

/// A harness's sessions directory, opened and checked as roster checks its
/// own: a real directory (not a symlink), owned by you, writable by
/// nobody else.
#[derive(Debug)]
pub struct AdoptedDirectory {
    harness: AdoptedHarness,
    path: PathBuf,
    fd: OwnedFd,
}

impl AdoptedDirectory {
    /// Opens the directory of `source`; `Ok(None)` when it does not exist
    /// (the harness never ran, or runs with another configuration
    /// directory); `Err` says why it is not believed.
    pub fn open(source: &AdoptedSource) -> Result<Option<AdoptedDirectory>, String> {
        let path = source.path.as_path();
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
        // Where no uid maps to the caller, every user's files show its uid;
        // roster's own files are proven by a chmod to their own mode, which
        // a harness's files must never get: they are not read.
        if crate::store::ownership::caller_uid_is_unmapped() {
            return Err(format!(
                "{} is not read: this user namespace maps no uid to you, so every user's files show your \
                 uid, and whose these are could be proven only by changing them",
                path.display()
            ));
        }
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
        Ok(Some(AdoptedDirectory { harness: source.harness, path: path.to_owned(), fd }))
    }

    pub fn harness(&self) -> AdoptedHarness {
        self.harness
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
        self.rows_made_into(facts, &|row| row)
    }

    /// `rows`, each row made into what `make` makes of it on the core that
    /// judged it, while it is at hand: a listing presents most rows there
    /// and then, instead of holding every row until all are read.
    pub fn rows_made_into<R: Send>(
        &self,
        facts: &(impl SystemFacts + Sync),
        make: &(impl Fn(SessionRow) -> R + Sync),
    ) -> Result<Vec<R>, String> {
        let unlisted = |errno: Errno| format!("cannot list {}: {}", self.path.display(), errno.desc());
        match self.harness {
            AdoptedHarness::ClaudeCode => {
                let entries = read_directory(self.subdir()).map_err(unlisted)?;
                let files: Vec<(String, EntryKind)> = entries
                    .into_iter()
                    .filter_map(|entry| Some((entry.name.into_string().ok()?, entry.kind)))
                    .filter(|(name, _)| harness::session_files::claude_code::is_session_file_name(name))
                    .collect();
                let read = |(name, kind): &(String, EntryKind)| {
                    read_listed_adopted_row(self.subdir(), name, *kind, facts).map(make)
                };
                Ok(crate::parallel::map_in_parallel(&files, read).into_iter().flatten().collect())
            }
            AdoptedHarness::Copilot => {
                let names = lock_file_names(self.subdir()).map_err(unlisted)?;
                // Who holds which lock, read once for the whole listing.
                let locks = HeldLocks::read();
                let read =
                    |name: &String| read_copilot_row(self.subdir(), name, locks.as_ref(), facts).map(make);
                Ok(crate::parallel::map_in_parallel(&names, read).into_iter().flatten().collect())
            }
        }
    }

    /// The row of `name` (a name of `names`), read and judged now; `None`
    /// when it is gone.
    pub fn row(&self, name: &str, facts: &impl SystemFacts) -> Option<SessionRow> {
        match self.harness {
            AdoptedHarness::ClaudeCode => read_adopted_row(self.subdir(), name, facts),
            AdoptedHarness::Copilot => {
                read_copilot_row(self.subdir(), name, HeldLocks::read().as_ref(), facts)
            }
        }
    }

    /// The names of its sessions' files, for a watch that looks at them
    /// again: `<pid>.json` for Claude Code, `<session id>/inuse.<pid>.lock`
    /// for Copilot CLI.
    pub fn names(&self) -> Vec<String> {
        match self.harness {
            AdoptedHarness::ClaudeCode => read_directory(self.subdir())
                .map(|entries| {
                    entries
                        .into_iter()
                        .filter_map(|entry| entry.name.into_string().ok())
                        .filter(|name| harness::session_files::claude_code::is_session_file_name(name))
                        .collect()
                })
                .unwrap_or_default(),
            AdoptedHarness::Copilot => lock_file_names(self.subdir()).unwrap_or_default(),
        }
    }

    /// The names that may stand for the same session as roster's record:
    /// the owner's `<pid>.json`, or the session directory's lock files.
    pub fn names_for(&self, record: &Record) -> Vec<String> {
        match self.harness {
            AdoptedHarness::ClaudeCode => vec![format!("{}.json", record.owner.pid)],
            AdoptedHarness::Copilot => {
                let Some(session_id) = &record.session_id else { return Vec::new() };
                let session = session_id.as_str();
                if session.starts_with('.') || session.contains('/') {
                    return Vec::new();
                }
                self.names().into_iter().filter(|name| name.split('/').next() == Some(session)).collect()
            }
        }
    }

    /// The directories a watch follows to see every change of its
    /// sessions: the directory, and for Copilot CLI each session's own.
    pub fn followed_directories(&self) -> Vec<PathBuf> {
        let mut directories = vec![self.path.clone()];
        if self.harness == AdoptedHarness::Copilot
            && let Ok(entries) = read_directory(self.subdir())
        {
            directories.extend(
                entries
                    .into_iter()
                    .filter(|entry| matches!(entry.kind, EntryKind::Directory | EntryKind::Unknown))
                    .filter_map(|entry| entry.name.into_string().ok())
                    .filter(|name| !name.starts_with('.'))
                    .map(|name| self.path.join(name)),
            );
        }
        directories
    }
}

/// Every session of every source, and why a source could not be read
/// (one line each).
pub fn read_adopted(
    sources: &[AdoptedSource],
    facts: &(impl SystemFacts + Sync),
) -> (Vec<SessionRow>, Vec<String>) {
    read_adopted_made_into(sources, facts, &|row| row)
}

/// `read_adopted`, each row made into what `make` makes of it on the core
/// that judged it (`AdoptedDirectory::rows_made_into`).
pub fn read_adopted_made_into<R: Send>(
    sources: &[AdoptedSource],
    facts: &(impl SystemFacts + Sync),
    make: &(impl Fn(SessionRow) -> R + Sync),
) -> (Vec<R>, Vec<String>) {
    let mut rows = Vec::new();
    let mut unread = Vec::new();
    for source in sources {
        match AdoptedDirectory::open(source).and_then(|directory| match directory {
            Some(directory) => directory.rows_made_into(facts, make),
            None => Ok(Vec::new()),
        }) {
            // The first source's rows are taken as they are, not copied.
            Ok(read) if rows.is_empty() => rows = read,
            Ok(read) => rows.extend(read),
            Err(why) => {
                unread.push(format!("{}'s own sessions are not listed: {why}", source.harness.display_name()))
            }
        }
    }
    (rows, unread)
}

/// The adopted rows that may stand for the same session as roster's
/// `record`, read now.
pub fn counterparts_of(
    record: &Record,
    sources: &[AdoptedSource],
    facts: &impl SystemFacts,
) -> Vec<SessionRow> {
    sources
        .iter()
        .filter_map(|source| AdoptedDirectory::open(source).ok().flatten())
        .flat_map(|directory| {
            directory
                .names_for(record)
                .into_iter()
                .filter_map(move |name| directory.row(&name, facts))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// What a harness's own registry says of the session whose owner is
/// `identity` (the same pid, start ticks and pid namespace), read as a
/// record, when one of `sources` lists it alive: what the first
/// registration of that session takes for the facts it is not given
/// (docs/contract.md §6.1). Claude Code's files name their owner; a
/// Copilot CLI lock names its native process below the loader roster
/// records, and is left out.
pub fn harness_record_of_owner(
    identity: &owner_liveness::OwnerIdentity,
    sources: &[AdoptedSource],
    facts: &impl SystemFacts,
) -> Option<Record> {
    let source = sources.iter().find(|source| source.harness == AdoptedHarness::ClaudeCode)?;
    let directory = AdoptedDirectory::open(source).ok().flatten()?;
    let row = directory.row(&format!("{}.json", identity.pid), facts)?;
    let record = row.record.filter(|_| row.problem.is_none() && row.verdict.liveness == Liveness::Alive)?;
    let same_owner = record.owner.pid == identity.pid
        && record.owner.start_ticks.0 == identity.start_ticks
        && record.owner.pid_ns == identity.pid_ns;
    same_owner.then_some(record)
}

/// The row named `row_file_name` (`claude-code/…`, `copilot/…`) read now
/// from its source; `None` when it is gone or its source is not read.
pub fn read_adopted_named(
    row_file_name: &str,
    sources: &[AdoptedSource],
    facts: &impl SystemFacts,
) -> Option<SessionRow> {
    let (harness, name) = adopted_row_name(row_file_name)?;
    let source = sources.iter().find(|source| source.harness == harness)?;
    AdoptedDirectory::open(source).ok().flatten()?.row(name, facts)
}
