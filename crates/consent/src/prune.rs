//! Reaping consent markers in the reaper posture (docs/contract.md §5, §6.3): markers
//! of dead owners go, unknown and problem entries go only past an explicit
//! age, live ones never. `roster-prune` calls these with the registry lock
//! held; `write_marker` calls `prune_markers` after each write.

use std::time::Duration;

use owner_liveness::{Liveness, Pid, SystemFacts};
use registry_core::{RegistryLock, RosterDir, Timestamp, list_names, remove_entry};

use crate::error::Result;
use crate::marker_entry::{MarkerEntry, consent_file_name, read_marker_entry};

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
/// no writer can replace an entry between the read that judges it and its
/// removal: each entry is read and judged under the lock immediately before
/// it is removed. A directory is never removed (roster never makes one
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
        if !dry_run && !remove_entry(roster, roster.consent(), name)? {
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

/// Removes the marker of the session owned by `pid` whatever its verdict
/// (what `roster-prune --current` does at session end), with the registry
/// `lock` held by the caller. `Ok(true)` when a file was there and was
/// removed (or, with `dry_run`, would be); `Ok(false)` when there was none
/// or it is a directory, which roster never removes.
pub fn remove_marker(roster: &RosterDir, _lock: &RegistryLock, pid: Pid, dry_run: bool) -> Result<bool> {
    let name = consent_file_name(pid);
    let path = roster.entry_path(roster.consent(), &name);
    match std::fs::symlink_metadata(&path) {
        Ok(metadata) if metadata.is_dir() => return Ok(false),
        Ok(_) if dry_run => return Ok(true),
        Ok(_) => {}
        Err(_) if dry_run => return Ok(false),
        // Let the unlink itself say what is wrong, or that nothing is there.
        Err(_) => {}
    }
    Ok(remove_entry(roster, roster.consent(), &name)?)
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
