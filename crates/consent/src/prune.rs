//! Reaping consent markers in the reaper posture (docs/contract.md §5, §6.3): markers
//! of dead owners go, unknown and problem entries go only past an explicit
//! age, live ones never. `roster-prune` calls these with the registry lock
//! held; `write_marker` calls `prune_markers` after each write.

use std::time::Duration;

use owner_liveness::{Liveness, SystemFacts};
use registry_core::{
    CurrentSession, RecordName, RegistryLock, RosterDir, Timestamp, World, list_names, remove_entry,
    remove_entry_if_still,
};

use crate::error::Result;
use crate::marker::{ParsedMarker, parse_marker};
use crate::marker_entry::{MarkerEntry, MarkerFinding, read_marker_entry};

/// What `prune_markers` removed (or, with `dry_run`, would remove).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MarkerPruneReport {
    /// How many entries were removed: `dead_removed + unknown_removed`.
    pub removed: usize,
    /// Each removed entry as it was read just before it went.
    pub removed_entries: Vec<MarkerEntry>,
    /// Markers whose owner was dead.
    pub dead_removed: usize,
    /// Markers of unknown liveness and problem entries, past `older_than`.
    pub unknown_removed: usize,
    /// Entries looked at and kept (live markers, young unknown ones,
    /// directories and names that are not UTF-8).
    pub kept: usize,
}

/// Removes, from `consent/`, every marker whose owner is dead, and, when
/// `older_than` is given, every marker of unknown liveness and every
/// malformed, untrusted or unsupported-format entry whose `written_at` (or
/// mtime) is older than that. A live marker is never removed. Dotfiles
/// (temporaries) are left to registry-core's temporary sweep.
///
/// `lock` is the registry lock, held by the caller for the whole call, so
/// no writer that takes it can replace an entry between the read that
/// judges it and its removal: each entry is read and judged under the lock
/// immediately before it is removed. A disarm does not always take it
/// (§6.4), so an entry goes only if the file at its name is still the one
/// judged at the instant it goes (`remove_entry_if_still`). A directory is never removed (roster never makes one
/// there). With `dry_run`, nothing is removed and the report says what
/// would be.
pub fn prune_markers(
    roster: &RosterDir,
    _lock: &RegistryLock,
    older_than: Option<Duration>,
    dry_run: bool,
    facts: &impl SystemFacts,
) -> Result<MarkerPruneReport> {
    let now = Timestamp::from_system_time(facts.now());
    let mut report = MarkerPruneReport::default();
    for name in list_names(roster, roster.consent())? {
        let Some(name) = name.to_str() else {
            report.kept += 1;
            continue;
        };
        let Some(entry) = read_marker_entry(roster, name, facts) else { continue };
        if !removable(&entry, older_than, now) || is_directory(&entry) {
            report.kept += 1;
            continue;
        }
        if !dry_run
            && !remove_entry_if_still(roster, roster.consent(), name, |now| holds_as_judged(&entry, now))?
        {
            continue;
        }
        match entry.liveness() {
            Some(Liveness::Dead) => report.dead_removed += 1,
            _ => report.unknown_removed += 1,
        }
        report.removed += 1;
        report.removed_entries.push(entry);
    }
    Ok(report)
}

/// Removes the calling session's own marker whatever its state (what
/// `roster-prune --current` does at session end), with the registry `lock`
/// held by the caller, and returns how many went (or, with `dry_run`,
/// would go). Only its own: a marker at its pid in this world, or an older
/// roster's `<pid>.json`, whose recorded owner is the session's owner by
/// identity; with the owner gone, only a marker of a dead owner. Another
/// world's marker at the same number, a newer process's, or a problem
/// entry stays.
pub fn remove_marker(
    roster: &RosterDir,
    _lock: &RegistryLock,
    current: &CurrentSession<'_>,
    dry_run: bool,
    facts: &impl SystemFacts,
) -> Result<usize> {
    let names = match World::of_reader(facts) {
        Some(world) => RecordName::candidates(current.pid, world).to_vec(),
        None => vec![RecordName::legacy(current.pid)],
    };
    let mut removed = 0;
    for name in names {
        let Some(entry) = read_marker_entry(roster, &name.file_name(), facts) else { continue };
        let MarkerFinding::Judged { marker, verdict } = &entry.finding else { continue };
        let own = match current.identity {
            Some(identity) => marker.owner.is_same_owner(identity),
            None => verdict.liveness == Liveness::Dead,
        };
        if own && (dry_run || remove_entry(roster, roster.consent(), &entry.file_name)?) {
            removed += 1;
        }
    }
    Ok(removed)
}

/// Whether the file at a marker's name, read at the instant of its
/// removal, is still the entry judged removable: the very marker (a
/// marker's `written_at` tells one write from the next), or for a problem
/// entry, still no marker. A disarm is written without the registry lock
/// when another process holds it (§6.4), so the file judged under the lock
/// may have been replaced since, and the disarm must not go with it.
fn holds_as_judged(
    entry: &MarkerEntry,
    now: std::result::Result<registry_core::EntryContents, registry_core::ReadProblem>,
) -> bool {
    let parsed = |pid, bytes: &[u8]| parse_marker(bytes, pid);
    match (&entry.finding, now) {
        (MarkerFinding::Judged { marker, .. }, Ok(contents)) => {
            matches!(parsed(marker.pid(), &contents.bytes), ParsedMarker::Marker(read) if read == *marker)
        }
        (MarkerFinding::Problem(_), Ok(contents)) => {
            entry.pid.is_none_or(|pid| !matches!(parsed(pid, &contents.bytes), ParsedMarker::Marker(_)))
        }
        (MarkerFinding::Problem(_), Err(_)) => true,
        (MarkerFinding::Judged { .. } | MarkerFinding::Absent, _) => false,
    }
}

fn removable(entry: &MarkerEntry, older_than: Option<Duration>, now: Timestamp) -> bool {
    match entry.liveness() {
        None | Some(Liveness::Alive) => false,
        Some(Liveness::Dead) => true,
        Some(Liveness::Unknown) => {
            older_than.is_some_and(|age| entry.written_at.is_some_and(|written_at| written_at.age(now) > age))
        }
    }
}

fn is_directory(entry: &MarkerEntry) -> bool {
    std::fs::symlink_metadata(&entry.path).is_ok_and(|metadata| metadata.is_dir())
}
