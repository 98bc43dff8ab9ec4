//! Prune (docs/contract.md §6.3) in the reaper posture: dead records go, unknown and
//! problem entries go only past an explicit age, alive ones never. Nothing
//! goes that was not judged, or re-checked, under the registry lock.
//! `removals` removes what was judged, in parallel with the judging.

mod outcome;
mod removals;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use owner_liveness::{Liveness, OwnerIdentity, Pid, SystemFacts};

use crate::ended::{HowEnded, keep_ended};
use crate::error::{Error, Result};
use crate::messages::removal::{remove_orphaned_queues, remove_queue_of};
use crate::parallel::threads_for;
use crate::prune::outcome::{EntryOutcome, Judged};
use crate::prune::removals::judge_and_remove;
use crate::record::name::{RecordName, World};
use crate::record::session_record::{continues_chain, same_owner};
use crate::record::timestamp::Timestamp;
use crate::record::values::SessionId;
use crate::removal_checks::{dead_for_good, index_entry_of, recheck};
use crate::session_row::{SessionRow, non_utf8_name_row, read_listed_session_row, read_session_row};
use crate::store::directory::{RosterDir, SubDir};
use crate::store::directory_entries::DirectoryEntry;
use crate::store::files::{TEMP_PREFIX, entry_mtime, list_entries, list_names, remove_entry};
use crate::store::lock::RegistryLock;
use crate::store::session_index::{remove_index_entry_if_pointing_at, remove_orphaned_entries};

pub use crate::store::files::TEMP_MAX_AGE;

/// What prune may remove.
#[derive(Clone, Copy, Debug, Default)]
pub struct PruneOptions {
    /// Also remove unknown and problem entries older than this.
    pub older_than: Option<Duration>,
    pub dry_run: bool,
}

/// What prune removed (or, with `dry_run`, would remove).
#[derive(Debug, Default)]
pub struct PruneReport {
    /// Boxed: ten thousand rows moved into the report one by one cost more
    /// than the pointers to them.
    pub removed: Vec<Box<SessionRow>>,
    pub dead_removed: usize,
    pub unknown_removed: usize,
    /// Removed because the caller asked for its own session
    /// (`prune --current`), whatever its verdict: a live session's end is
    /// neither dead nor unknown.
    pub current_removed: usize,
    /// Entries kept: for a prune, those looked at and kept; for
    /// `prune --current`, the other entries of `sessions/` left in place
    /// (`listed_entry_count`).
    pub kept: usize,
    pub temp_removed: usize,
    /// Why the ended sessions of the records removed could not be kept
    /// (best effort: the records went all the same).
    pub ended_not_kept: Option<Error>,
}

/// Why a row may go, if it may.
fn removable(row: &SessionRow, options: &PruneOptions, now: Timestamp) -> bool {
    match row.liveness() {
        Liveness::Dead => true,
        Liveness::Alive => false,
        Liveness::Unknown => options.older_than.is_some_and(|age| row.registered_at.age(now) > age),
    }
}

/// The registry lock of one prune, taken when the first entry that may go
/// is found (or at the end, when none is) and held from then on. Entries
/// read before it was taken are re-checked under it before they go;
/// entries read after are judged under it already.
struct LockOnFirstNeed<'r> {
    roster: &'r RosterDir,
    held: OnceLock<RegistryLock>,
    /// One attempt to take it at a time; the first failure is kept here and
    /// every later attempt fails at once instead of waiting again.
    attempt: Mutex<Option<Error>>,
    failed: AtomicBool,
}

/// Taking the lock failed; the error is kept by [`LockOnFirstNeed`].
struct LockFailed;

impl<'r> LockOnFirstNeed<'r> {
    fn new(roster: &'r RosterDir) -> Self {
        LockOnFirstNeed {
            roster,
            held: OnceLock::new(),
            attempt: Mutex::new(None),
            failed: AtomicBool::new(false),
        }
    }

    fn is_held(&self) -> bool {
        self.held.get().is_some()
    }

    fn take(&self) -> std::result::Result<&RegistryLock, LockFailed> {
        if let Some(lock) = self.held.get() {
            return Ok(lock);
        }
        let mut failure = self.attempt.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(lock) = self.held.get() {
            return Ok(lock);
        }
        if self.failed.load(Ordering::Acquire) {
            return Err(LockFailed);
        }
        match self.roster.lock() {
            Ok(lock) => Ok(self.held.get_or_init(|| lock)),
            Err(error) => {
                *failure = Some(error);
                self.failed.store(true, Ordering::Release);
                Err(LockFailed)
            }
        }
    }

    /// The lock, still held, for the rest of the prune and the caller.
    fn into_lock(self) -> Result<RegistryLock> {
        let failure = self.attempt.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
        match (self.held.into_inner(), failure) {
            (Some(lock), _) => Ok(lock),
            (None, Some(error)) => Err(error),
            (None, None) => self.roster.lock(),
        }
    }
}

/// Prunes `sessions/` and returns what it did with the registry lock,
/// still held, so that a caller with more to remove (roster-prune reaps
/// consent markers too) does it under the same hold. Unless `dry_run`, an
/// entry of `ended/` is kept for each record removed (docs/contract.md
/// §2), ended as `HowEnded::of_removed` says; failing that is said in the
/// report, not failed on.
///
/// Every entry is read and judged on every core. The lock is taken when
/// the first entry that may go is found, and kept: removing then goes on
/// alongside judging, one thread per directory (`removals`), instead
/// of after it. An entry
/// judged before the lock was taken is re-checked under it just before it
/// goes (`recheck`); one read after is removed as judged, since
/// nobody can have rewritten it in between. A registry with nothing to
/// remove is judged without holding the lock at all.
pub fn prune_sessions(
    roster: &RosterDir,
    options: &PruneOptions,
    facts: &(impl SystemFacts + Sync),
) -> Result<(PruneReport, RegistryLock)> {
    let now = Timestamp::from_system_time(facts.now());
    let entries = list_entries(roster, roster.sessions())?;
    let lock = LockOnFirstNeed::new(roster);
    let judge = |entry: &DirectoryEntry| judge_entry(roster, entry, &lock, options, now, facts);
    let this_boot = facts.boot_id().ok();
    let keep_ended = |removed: &[&SessionRow]| -> Result<()> {
        let Some(held) = lock.held.get().filter(|_| !options.dry_run && !removed.is_empty()) else {
            return Ok(());
        };
        let how = |row: &SessionRow| HowEnded::of_removed(row, this_boot.as_deref());
        keep_ended(roster, held, removed, how, Timestamp::from_system_time(facts.now()))
    };
    let threads = threads_for(entries.len());
    let (outcomes, ended) = if threads > 1 {
        judge_and_remove(roster, &entries, threads, judge, roster.ended_bounds().kept_most, keep_ended)
    } else {
        let outcomes: Vec<Result<EntryOutcome>> = entries
            .iter()
            .map(|entry| match judge(entry)? {
                Judged::Done(outcome) => Ok(outcome),
                Judged::Remove(row, held) => Ok(if remove_session_row(roster, held, &row)? {
                    EntryOutcome::Removed(row)
                } else {
                    EntryOutcome::Gone
                }),
            })
            .collect();
        let removed: Vec<&SessionRow> = outcomes
            .iter()
            .filter_map(|outcome| match outcome {
                Ok(EntryOutcome::Removed(row)) => Some(&**row),
                _ => None,
            })
            .collect();
        let ended = keep_ended(&removed);
        (outcomes, ended)
    };
    let lock = lock.into_lock()?;
    let mut report = PruneReport { ended_not_kept: ended.err(), ..PruneReport::default() };
    let removable_count = outcomes
        .iter()
        .filter(|outcome| matches!(outcome, Ok(EntryOutcome::Removed(_) | EntryOutcome::Undecodable(_))))
        .count();
    report.removed.reserve_exact(removable_count);
    let mut session_temporaries = Vec::new();
    for (entry, outcome) in entries.iter().zip(outcomes) {
        let row = match outcome? {
            EntryOutcome::Gone => continue,
            EntryOutcome::Kept => {
                report.kept += 1;
                continue;
            }
            EntryOutcome::Temporary(name) => {
                session_temporaries.push(name);
                continue;
            }
            EntryOutcome::Removed(row) => row,
            EntryOutcome::Undecodable(row) => {
                // Removable like any problem entry, only past --older-than;
                // nothing but its name was read, so nothing to re-check.
                if !options.dry_run && !remove_entry(roster, roster.sessions(), &entry.name)? {
                    report.kept += 1;
                    continue;
                }
                row
            }
        };
        match row.liveness() {
            Liveness::Dead => report.dead_removed += 1,
            _ => report.unknown_removed += 1,
        }
        report.removed.push(row);
    }
    for directory in [roster.root(), roster.consent()] {
        report.temp_removed += remove_old_temporaries(roster, &lock, directory, now, options.dry_run)?;
    }
    let index_names = list_names(roster, roster.session_ids())?;
    let index_temporaries: Vec<String> = index_names
        .iter()
        .filter_map(|name| name.to_str())
        .filter(|name| name.starts_with(TEMP_PREFIX))
        .map(str::to_owned)
        .collect();
    // More index entries than records kept means some name a record that
    // is gone (a prune killed between removing records and their entries);
    // a run that was not killed leaves at most one entry per record.
    if !options.dry_run && index_names.len() - index_temporaries.len() > report.kept {
        remove_orphaned_entries(roster, &lock, &index_names)?;
    }
    report.temp_removed +=
        remove_temporaries_if_old(roster, roster.session_ids(), index_temporaries, now, options.dry_run)?;
    report.temp_removed +=
        remove_temporaries_if_old(roster, roster.sessions(), session_temporaries, now, options.dry_run)?;
    report.temp_removed += remove_orphaned_states(roster, &lock, now, options.dry_run)?;
    remove_orphaned_queues(roster, &lock, options.dry_run)?;
    Ok((report, lock))
}

/// Removes the state files whose record is gone (removed above, by a
/// session's end, or before a late state event wrote one), and the
/// temporaries of state writes older than an hour. A live session's
/// record never leaves its name (it is only ever replaced), so a state
/// file without one describes no session. Returns the temporaries removed.
fn remove_orphaned_states(
    roster: &RosterDir,
    lock: &RegistryLock,
    now: Timestamp,
    dry_run: bool,
) -> Result<usize> {
    let names: Vec<String> =
        list_names(roster, roster.states())?.into_iter().filter_map(|name| name.into_string().ok()).collect();
    let (temporaries, states): (Vec<String>, Vec<String>) =
        names.into_iter().partition(|name| name.starts_with(TEMP_PREFIX));
    if !dry_run {
        for name in states.iter().filter(|name| !name.starts_with('.')) {
            if crate::store::files::entry_stamp(roster.sessions(), name).is_none() {
                remove_state_of(roster, lock, name)?;
            }
        }
    }
    remove_temporaries_if_old(roster, roster.states(), temporaries, now, dry_run)
}

/// Removes the state file of the record named `record_file_name`.
pub(crate) fn remove_state_of(
    roster: &RosterDir,
    _lock: &RegistryLock,
    record_file_name: &str,
) -> Result<bool> {
    remove_entry(roster, roster.states(), record_file_name)
}

/// Reads and judges one entry and, when it may go, takes the lock (if
/// nobody has yet) and says to remove it (with `dry_run`, that it was).
fn judge_entry<'l>(
    roster: &RosterDir,
    entry: &DirectoryEntry,
    lock: &'l LockOnFirstNeed<'_>,
    options: &PruneOptions,
    now: Timestamp,
    facts: &impl SystemFacts,
) -> Result<Judged<'l>> {
    let judged_under_lock = lock.is_held();
    let Some(name) = entry.name.to_str() else {
        let row = non_utf8_name_row(roster, &entry.name);
        let removable = removable(&row, options, now);
        return Ok(Judged::Done(if removable {
            EntryOutcome::Undecodable(Box::new(row))
        } else {
            EntryOutcome::Kept
        }));
    };
    if name.starts_with(TEMP_PREFIX) {
        return Ok(Judged::Done(EntryOutcome::Temporary(name.to_owned())));
    }
    let Some((row, stamp)) = read_listed_session_row(roster, name, entry.kind, facts) else {
        return Ok(Judged::Done(EntryOutcome::Gone));
    };
    if !removable(&row, options, now) {
        return Ok(Judged::Done(EntryOutcome::Kept));
    }
    let Ok(held) = lock.take() else {
        // The lock could not be taken: the error is reported once, for
        // the whole prune; nothing is removed without it.
        return Ok(Judged::Done(EntryOutcome::Kept));
    };
    let row = if judged_under_lock {
        row
    } else {
        let stamp = stamp.filter(|_| dead_for_good(&row));
        match recheck(roster, row, stamp, facts) {
            Some(row) => row,
            None => return Ok(Judged::Done(EntryOutcome::Gone)),
        }
    };
    if !removable(&row, options, now) {
        return Ok(Judged::Done(EntryOutcome::Kept));
    }
    if options.dry_run {
        return Ok(Judged::Done(EntryOutcome::Removed(Box::new(row))));
    }
    Ok(Judged::Remove(Box::new(row), held))
}

/// Removes one row's file and its session-id index entry; `false` when the
/// file was already gone.
pub fn remove_session_row(roster: &RosterDir, _lock: &RegistryLock, row: &SessionRow) -> Result<bool> {
    let removed = remove_entry(roster, roster.sessions(), &row.file_name)?;
    if let Some((key, pid)) = index_entry_of(row) {
        remove_index_entry_if_pointing_at(roster, &key, pid)?;
    }
    Ok(removed)
}

/// How many entries of `sessions/` a listing shows, records and problem
/// entries alike (dotfiles are roster's own and never listed): what
/// `prune --current`, which looks at one record only, reports as kept.
pub fn listed_entry_count(roster: &RosterDir) -> Result<usize> {
    use std::os::unix::ffi::OsStrExt;
    let names = list_names(roster, roster.sessions())?;
    Ok(names.iter().filter(|name| !name.as_bytes().starts_with(b".")).count())
}

/// The session `prune --current` was asked to end: its owner as resolved
/// (docs/contract.md §4.1), the owner's identity when it could be captured
/// (it still runs), and the session id a hook payload named.
#[derive(Clone, Debug)]
pub struct CurrentSession<'a> {
    pub pid: Pid,
    pub identity: Option<&'a OwnerIdentity>,
    /// As the payload wrote it: one that is no valid session id still
    /// differs from the record's, so it never passes for it.
    pub payload_session_id: Option<&'a str>,
}

/// What `remove_current` found.
#[derive(Clone, Debug)]
pub enum CurrentOutcome {
    /// The session's own record, removed (or, dry, to be removed).
    Removed(Box<SessionRow>),
    /// No record of this session.
    NotFound,
    /// A record at the session's pid that is not provably its own, kept:
    /// why. `callers_owner`: the record's owner is the caller's own, in
    /// another session (the payload named another session id), so the
    /// owner's consent marker is that session's and stays too.
    Kept { row: Box<SessionRow>, why: String, callers_owner: bool },
}

/// Removes the calling session's own record whatever its verdict (a
/// session-end hook's `prune --current`), and only its own: the record at
/// its pid in this world (`RecordName`), or an older roster's `<pid>.json`,
/// counts only when its recorded owner is the caller's owner by identity
/// (pid namespace, start tick, pidfs inode) and, where a hook payload and
/// the record both carry a session id, they agree. With the owner gone (no
/// identity to compare), only a dead record is its own. A record at the pid
/// that fails these is kept and said why: another world's session, a
/// newer process at the pid, another session. A session found again below
/// its exited outer processes (its record names the owner's chain) is
/// found through the payload's session id.
pub fn remove_current(
    roster: &RosterDir,
    lock: &RegistryLock,
    current: &CurrentSession<'_>,
    dry_run: bool,
    facts: &impl SystemFacts,
) -> Result<CurrentOutcome> {
    // Without its own world this process cannot tell its record from
    // another world's: it removes nothing, and says why.
    let own_world = match (facts.boot_id(), facts.own_namespaces()) {
        (Ok(boot_id), Ok(namespaces)) => World::new(namespaces.pid_ns, &boot_id),
        (Err(error), _) => return Err(Error::io("read", owner_liveness::BOOT_ID_PATH, error)),
        (_, Err(error)) => return Err(Error::io("read", "/proc/self/ns", error)),
    };
    let names = RecordName::candidates(current.pid, own_world);
    let mut kept = None;
    let mut removed = None;
    // Both names may hold this owner's record (a crash between writing the
    // new one and removing the older): every one of its own goes.
    for name in names {
        let Some(row) = read_session_row(roster, &name.file_name(), facts) else { continue };
        match whose(&row, current, own_world) {
            Ok(()) => {
                if let CurrentOutcome::Removed(row) = remove_own(roster, lock, row, dry_run)? {
                    removed.get_or_insert(row);
                }
            }
            Err(refusal) => {
                kept.get_or_insert((row, refusal));
            }
        }
    }
    if let Some(row) = removed {
        return Ok(CurrentOutcome::Removed(row));
    }
    // The session continued below its owner: the record of its session id
    // names the caller's owner among its chain.
    if let (Some(identity), Some(session_id)) =
        (current.identity, current.payload_session_id.and_then(|id| SessionId::parse(id).ok()))
        && let Some(holder) = crate::store::session_index::indexed_holder(roster, &session_id)
        && holder.pid != current.pid
        && let Some(row) = read_session_row(roster, &holder.file_name(), facts)
        && let Some(record) = &row.record
        && record.session_id.as_ref() == Some(&session_id)
        && continues_chain(record, identity)
    {
        return remove_own(roster, lock, row, dry_run);
    }
    if kept.is_none() {
        kept = another_worlds_record_at(roster, current, own_world, facts)?;
    }
    Ok(match kept {
        Some((row, refusal)) => CurrentOutcome::Kept {
            row: Box::new(row),
            why: refusal.why,
            callers_owner: refusal.callers_owner,
        },
        None => CurrentOutcome::NotFound,
    })
}

/// Why a record at the caller's pid is not its own.
#[derive(Clone, Debug)]
struct Refusal {
    why: String,
    /// The record's owner is the caller's, in another session.
    callers_owner: bool,
}

impl Refusal {
    fn of_another_owner(why: String) -> Refusal {
        Refusal { why, callers_owner: false }
    }
}

/// A record of another world whose pid is the caller's number, when the
/// caller has none of its own: it is kept, and the caller told so (a
/// container's session end next to a host session with its number). Read
/// only when the caller's own record is missing, so a session end that
/// finds its record costs no listing.
fn another_worlds_record_at(
    roster: &RosterDir,
    current: &CurrentSession<'_>,
    own_world: World,
    facts: &impl SystemFacts,
) -> Result<Option<(SessionRow, Refusal)>> {
    let prefix = format!("{}@", current.pid);
    for name in list_names(roster, roster.sessions())? {
        let Some(name) = name.to_str().filter(|name| name.starts_with(&prefix)) else { continue };
        let Some(row) = read_session_row(roster, name, facts) else { continue };
        if let Err(refusal) = whose(&row, current, own_world) {
            return Ok(Some((row, refusal)));
        }
    }
    Ok(None)
}

fn remove_own(
    roster: &RosterDir,
    lock: &RegistryLock,
    row: SessionRow,
    dry_run: bool,
) -> Result<CurrentOutcome> {
    if !dry_run && !remove_session_row(roster, lock, &row)? {
        return Ok(CurrentOutcome::NotFound);
    }
    if !dry_run {
        remove_state_of(roster, lock, &row.file_name)?;
        remove_queue_of(roster, lock, &row.file_name)?;
    }
    Ok(CurrentOutcome::Removed(Box::new(row)))
}

/// Whether `row` is the record of `current`: `Err` says why not.
fn whose(
    row: &SessionRow,
    current: &CurrentSession<'_>,
    own_world: World,
) -> std::result::Result<(), Refusal> {
    let pid = current.pid;
    let refuse = |why: String| Err(Refusal::of_another_owner(why));
    let Some(record) = &row.record else {
        let problem = row.problem.as_ref().map_or("unreadable", |problem| problem.kind.as_str());
        return refuse(format!("the entry at pid {pid} is {problem}, not a record of this session"));
    };
    let recorded_world = World::new(record.owner.pid_ns, record.owner.boot_id.as_str());
    if own_world != recorded_world {
        return refuse(format!(
            "the record at pid {pid} belongs to a process of another world ({}): {}",
            describe_world(record),
            row.verdict.reason
        ));
    }
    match current.identity {
        Some(identity) if !same_owner(record, identity) => {
            return refuse(format!(
                "the record at pid {pid} names another process than this session's owner ({})",
                row.verdict.reason
            ));
        }
        Some(_) => {}
        None if row.liveness() != Liveness::Dead => {
            return refuse(format!(
                "the owner {pid} is not running, so it cannot be proven the recorded process, which is {} ({})",
                row.liveness(),
                row.verdict.reason
            ));
        }
        None => {}
    }
    if let (Some(payload), Some(recorded)) = (current.payload_session_id, &record.session_id)
        && payload != recorded.as_str()
    {
        return Err(Refusal {
            why: format!(
                "the hook payload's session id {payload:?} is not the record's {recorded}, so it ends another \
                 session of this owner"
            ),
            callers_owner: true,
        });
    }
    Ok(())
}

/// Where a record was written, for a message: its pid namespace, boot and
/// machine.
fn describe_world(record: &crate::record::session_record::Record) -> String {
    let machine = record.owner.machine.as_ref().map_or(String::new(), |machine| format!(", {machine}"));
    format!("pid namespace {}, boot {}{machine}", record.owner.pid_ns, record.owner.boot_id)
}

/// Removes `.tmp-*` entries older than `TEMP_MAX_AGE` from one directory.
pub fn remove_old_temporaries(
    roster: &RosterDir,
    _lock: &RegistryLock,
    directory: SubDir<'_>,
    now: Timestamp,
    dry_run: bool,
) -> Result<usize> {
    let temporaries = list_names(roster, directory)?
        .into_iter()
        .filter_map(|name| name.into_string().ok())
        .filter(|name| name.starts_with(TEMP_PREFIX));
    remove_temporaries_if_old(roster, directory, temporaries, now, dry_run)
}

/// Removes those of the temporaries `names` that are older than
/// `TEMP_MAX_AGE` (the caller holds the lock).
fn remove_temporaries_if_old(
    roster: &RosterDir,
    directory: SubDir<'_>,
    names: impl IntoIterator<Item = String>,
    now: Timestamp,
    dry_run: bool,
) -> Result<usize> {
    let mut removed = 0;
    for name in names {
        let name = name.as_str();
        let old = entry_mtime(directory, name.as_ref()).is_some_and(|mtime| mtime.age(now) > TEMP_MAX_AGE);
        if old && (dry_run || remove_entry(roster, directory, name)?) {
            removed += 1;
        }
    }
    Ok(removed)
}
