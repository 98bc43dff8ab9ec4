//! Prune (docs/contract.md §6.3) in the reaper posture: dead records go, unknown and
//! problem entries go only past an explicit age, alive ones never. Each
//! candidate is re-read and re-judged under the lock just before removal.

use std::time::Duration;

use owner_liveness::{Liveness, Pid, SystemFacts};

use crate::directory::{RosterDir, SubDir};
use crate::directory_entries::DirectoryEntry;
use crate::error::Result;
use crate::files::{
    FileStamp, RegistryLock, TEMP_PREFIX, entry_mtime, entry_stamp, list_entries, list_names, remove_entry,
};
use crate::parallel::map_in_parallel;
use crate::record::record_file_name;
use crate::record_values::SessionId;
use crate::session_index::remove_index_if_pointing_at;
use crate::session_row::{SessionRow, non_utf8_name_row, read_listed_session_row, read_session_row};
use crate::timestamp::Timestamp;

/// Temporaries older than this are leftovers of a crashed writer.
pub const TEMP_MAX_AGE: Duration = Duration::from_secs(3600);

/// What prune may remove.
#[derive(Clone, Copy, Debug, Default)]
pub struct PruneOptions {
    /// Also remove unknown and problem entries older than this.
    pub older_than: Option<Duration>,
    pub dry_run: bool,
}

/// What prune removed (or, with `dry_run`, would remove).
#[derive(Clone, Debug, Default)]
pub struct PruneReport {
    pub removed: Vec<SessionRow>,
    pub dead_removed: usize,
    pub unknown_removed: usize,
    /// Entries looked at and kept.
    pub kept: usize,
    pub temp_removed: usize,
}

/// Why a row may go, if it may.
fn removable(row: &SessionRow, options: &PruneOptions, now: Timestamp) -> bool {
    match row.liveness() {
        Liveness::Dead => true,
        Liveness::Alive => false,
        Liveness::Unknown => options.older_than.is_some_and(|age| row.registered_at.age(now) > age),
    }
}

/// A dead verdict that still holds for as long as its file is unchanged:
/// the identity it judged can never come back to life (a new process at
/// the pid has another start tick and pidfs inode, and a boot never comes
/// back). A recorded socket is left out, because a path that vanished
/// may be created again.
fn dead_for_good(row: &SessionRow) -> bool {
    row.liveness() == Liveness::Dead && row.record.as_ref().is_some_and(|record| record.socket.is_none())
}

/// What prune found without the lock: the entries that may go, judged,
/// for [`PrunePlan::carry_out`] to re-check and remove under it.
#[derive(Debug)]
pub struct PrunePlan {
    options: PruneOptions,
    now: Timestamp,
    /// Entries whose names are not UTF-8 and that may go (as problems).
    undecodable: Vec<(std::ffi::OsString, SessionRow)>,
    /// Rows that may go, with the file's stamp when their verdict is dead
    /// for good.
    candidates: Vec<(SessionRow, Option<FileStamp>)>,
    /// The temporaries of `sessions/`, found by the same listing.
    session_temporaries: Vec<String>,
    /// Entries looked at and kept already.
    kept: usize,
}

/// Judges every entry of `sessions/` without the lock, then takes the lock
/// and re-checks each candidate just before removing it (see
/// [`PrunePlan::carry_out`]). A caller with more to do under the same lock
/// (roster-prune reaps consent markers too) calls [`plan_prune`], takes the
/// lock once and carries the plan out itself.
pub fn prune_sessions(
    roster: &RosterDir,
    options: &PruneOptions,
    facts: &(impl SystemFacts + Sync),
) -> Result<PruneReport> {
    let plan = plan_prune(roster, options, facts)?;
    let lock = roster.lock()?;
    plan.carry_out(roster, &lock, facts)
}

/// Judges every entry of `sessions/` without the lock: what may go.
pub fn plan_prune(
    roster: &RosterDir,
    options: &PruneOptions,
    facts: &(impl SystemFacts + Sync),
) -> Result<PrunePlan> {
    let now = Timestamp::from_system_time(facts.now());
    let mut plan = PrunePlan {
        options: *options,
        now,
        undecodable: Vec::new(),
        candidates: Vec::new(),
        session_temporaries: Vec::new(),
        kept: 0,
    };
    let entries = list_entries(roster, roster.sessions())?;
    // Reading and judging is most of the work and needs no lock: on every core.
    let looked_at = map_in_parallel(&entries, |entry| look_at_entry(roster, entry, options, now, facts));
    for (entry, looked) in entries.into_iter().zip(looked_at) {
        match looked {
            LookedAt::Gone => {}
            LookedAt::Kept => plan.kept += 1,
            LookedAt::Temporary(name) => plan.session_temporaries.push(name),
            LookedAt::Candidate(row, stamp) => plan.candidates.push((row, stamp)),
            LookedAt::Undecodable(row) => plan.undecodable.push((entry.name, row)),
        }
    }
    Ok(plan)
}

impl PrunePlan {
    /// Under the registry `lock`, re-checks each candidate just before
    /// removing it, keeping any that is no longer removable (it came alive,
    /// or was replaced by a live one), then removes old temporaries.
    ///
    /// The re-check of a candidate that is dead for good is a stat: when the
    /// name still holds the very file judged (same inode, same change time),
    /// the verdict stands, and reading and judging it again would double the
    /// cost of pruning for nothing. Anything else is read and judged again.
    pub fn carry_out(
        self,
        roster: &RosterDir,
        lock: &RegistryLock,
        facts: &(impl SystemFacts + Sync),
    ) -> Result<PruneReport> {
        let PrunePlan { options, now, undecodable, candidates, session_temporaries, kept } = self;
        let options = &options;
        let mut report = PruneReport { kept, ..PruneReport::default() };
        for (name, row) in undecodable {
            if options.dry_run || remove_entry(roster, roster.sessions(), &name)? {
                report.unknown_removed += 1;
                report.removed.push(row);
            } else {
                report.kept += 1;
            }
        }
        // Each candidate is checked once more and removed on every core
        // (the kernel orders the unlinks in one directory itself); the
        // outcomes come back in order.
        let outcomes = map_in_parallel(&candidates, |(judged, stamp_when_judged)| {
            recheck_and_remove(roster, lock, judged, *stamp_when_judged, options, now, facts)
        });
        for (outcome, (judged, _)) in outcomes.into_iter().zip(candidates) {
            let row = match outcome? {
                Removal::Gone => continue,
                Removal::Kept => {
                    report.kept += 1;
                    continue;
                }
                Removal::RemovedAsJudged => judged,
                Removal::Removed(row) => *row,
            };
            match row.liveness() {
                Liveness::Dead => report.dead_removed += 1,
                _ => report.unknown_removed += 1,
            }
            report.removed.push(row);
        }
        for directory in [roster.root(), roster.consent(), roster.session_ids()] {
            report.temp_removed += remove_old_temporaries(roster, lock, directory, now, options.dry_run)?;
        }
        report.temp_removed +=
            remove_temporaries_if_old(roster, roster.sessions(), session_temporaries, now, options.dry_run)?;
        Ok(report)
    }
}

/// What the unlocked pass made of one entry of `sessions/`.
enum LookedAt {
    /// Not there any more, or a dotfile that is not a temporary.
    Gone,
    Kept,
    Temporary(String),
    /// Removable as judged; with the file's stamp when its verdict is dead
    /// for good (`dead_for_good`).
    Candidate(SessionRow, Option<FileStamp>),
    /// A name that is not UTF-8 (no roster wrote it: malformed), removable
    /// like any problem entry, only past --older-than.
    Undecodable(SessionRow),
}

fn look_at_entry(
    roster: &RosterDir,
    entry: &DirectoryEntry,
    options: &PruneOptions,
    now: Timestamp,
    facts: &impl SystemFacts,
) -> LookedAt {
    let Some(name) = entry.name.to_str() else {
        let row = non_utf8_name_row(roster, &entry.name);
        return if removable(&row, options, now) { LookedAt::Undecodable(row) } else { LookedAt::Kept };
    };
    if name.starts_with(TEMP_PREFIX) {
        return LookedAt::Temporary(name.to_owned());
    }
    let Some((row, stamp)) = read_listed_session_row(roster, name, entry.kind, facts) else {
        return LookedAt::Gone;
    };
    if removable(&row, options, now) {
        let stamp = stamp.filter(|_| dead_for_good(&row));
        LookedAt::Candidate(row, stamp)
    } else {
        LookedAt::Kept
    }
}

/// What the locked pass did with one candidate.
enum Removal {
    Gone,
    Kept,
    /// Removed, the file being the very one judged.
    RemovedAsJudged,
    /// Removed after it was read and judged again.
    Removed(Box<SessionRow>),
}

/// Re-checks a candidate under the lock and removes it if it is still
/// removable (with `dry_run`, only says so).
fn recheck_and_remove(
    roster: &RosterDir,
    lock: &RegistryLock,
    judged: &SessionRow,
    stamp_when_judged: Option<FileStamp>,
    options: &PruneOptions,
    now: Timestamp,
    facts: &impl SystemFacts,
) -> Result<Removal> {
    let unchanged = stamp_when_judged
        .is_some_and(|stamp| entry_stamp(roster.sessions(), &judged.file_name) == Some(stamp));
    let reread = if unchanged {
        None
    } else {
        let Some(row) = read_session_row(roster, &judged.file_name, facts) else { return Ok(Removal::Gone) };
        Some(row)
    };
    let row = reread.as_ref().unwrap_or(judged);
    if !removable(row, options, now) {
        return Ok(Removal::Kept);
    }
    if !options.dry_run && !remove_session_row(roster, lock, row)? {
        return Ok(Removal::Gone);
    }
    Ok(match reread {
        Some(row) => Removal::Removed(Box::new(row)),
        None => Removal::RemovedAsJudged,
    })
}

/// Removes one row's file and its session-id index entry; `false` when the
/// file was already gone.
pub fn remove_session_row(roster: &RosterDir, _lock: &RegistryLock, row: &SessionRow) -> Result<bool> {
    let removed = remove_entry(roster, roster.sessions(), &row.file_name)?;
    if let Some(record) = &row.record
        && let Some(id) = record.session_id.as_deref().and_then(|id| SessionId::parse(id).ok())
    {
        remove_index_if_pointing_at(roster, &id, record.pid())?;
    }
    Ok(removed)
}

/// Removes the record of `pid` whatever its verdict (a session-end hook's
/// `prune --current`), returning the row that was removed.
pub fn remove_current(
    roster: &RosterDir,
    lock: &RegistryLock,
    pid: Pid,
    dry_run: bool,
    facts: &impl SystemFacts,
) -> Result<Option<SessionRow>> {
    let Some(row) = read_session_row(roster, &record_file_name(pid), facts) else { return Ok(None) };
    if !dry_run && !remove_session_row(roster, lock, &row)? {
        return Ok(None);
    }
    Ok(Some(row))
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
