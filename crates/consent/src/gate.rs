//! The gate (docs/contract.md §5 gate posture, §6.4): writing markers, and
//! combining the marker with the auto-arm decision into "should this
//! session accept pushes now". Only a marker whose owner is `alive` counts;
//! anything else counts as "no".
//!
//! Withdrawing consent always wins. An arm is written under the registry
//! lock; a disarm waits for the lock only briefly and is written without
//! it when another process holds it (an `flock` works on a read-only
//! descriptor, so any process that can read the registry can hold the
//! lock for ever): a marker is written whole by a rename either way, and
//! a disarm can only close consent, never open it. An arm that finds a
//! disarm written while it waited for the lock gives way to it.

use std::path::{Path, PathBuf};
use std::time::Duration;

use owner_liveness::{OwnerIdentity, SystemFacts};
use registry_core::{
    Durability, RecordName, RosterDir, Timestamp, remove_entry, write_atomically, write_atomically_as,
};

use crate::config::Decision;
use crate::error::{Error, Result};
use crate::marker::{Marker, MarkerState};
use crate::marker_entry::{ConsentState, MarkerEntry, MarkerFinding, read_marker, read_marker_entry};
use crate::prune::{MarkerPruneReport, prune_markers};

/// What `arm` and `disarm` wrote, and how many dead markers they reaped.
#[derive(Clone, Debug)]
pub struct WrittenMarker {
    pub marker: Marker,
    pub path: PathBuf,
    /// Nothing when the marker was written without the registry lock: the
    /// next writer or prune reaps the dead markers.
    pub reaped: MarkerPruneReport,
}

/// How long a disarm waits for the registry lock before it writes its
/// marker without it. Long enough for the lock's ordinary holders (a
/// registration, a prune of a few records) to finish, so that a disarm
/// usually reaps dead markers too; short enough that withdrawing consent
/// takes effect at once whoever holds the lock, and fits in a session-end
/// hook's budget.
pub const DISARM_LOCK_WAIT: Duration = Duration::from_millis(250);

/// The verdict of the gate: should the session accept pushes now, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Effective {
    pub should_arm: bool,
    pub reason: String,
}

/// The consent state of the session owned by `pid` as the gate counts it:
/// its marker's state while the marker's owner is alive, else `None`.
/// Never fails: a marker that cannot be read or believed is `None`. What
/// `roster-list` shows in its consent column.
pub fn live_consent_state(roster: &RosterDir, name: RecordName, facts: &impl SystemFacts) -> ConsentState {
    read_marker(roster, name, facts).counted_state()
}

/// Why a marker may not be written for an owner (docs/contract.md §6.4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MarkerWriteRefusal {
    /// Whether the owner is the writer or one of its ancestors could not
    /// be told (its ancestry could not be read): why.
    AncestryUnreadable(String),
    /// The owner is neither the writer nor one of its ancestors: a session
    /// may only consent for itself.
    NotTheSessionItself,
}

/// Whether a marker of `state` may be written for an owner: arming only by
/// the session itself (the owner is the writer or one of its ancestors),
/// disarming by anyone, since it grants nothing.
pub fn may_write_marker(
    state: MarkerState,
    owner_is_writer_or_ancestor: bool,
    ancestry_unreadable: Option<&str>,
) -> std::result::Result<(), MarkerWriteRefusal> {
    if state == MarkerState::Disarmed || owner_is_writer_or_ancestor {
        return Ok(());
    }
    match ancestry_unreadable {
        Some(why) => Err(MarkerWriteRefusal::AncestryUnreadable(why.to_owned())),
        None => Err(MarkerWriteRefusal::NotTheSessionItself),
    }
}

/// Writes the marker of the owner `identity` (which the caller captured
/// from a live, and for `armed` verified, owner) atomically, then reaps the
/// markers of dead owners, each re-read under the registry lock before it
/// goes. A marker of any age or kind at the same name is replaced: the
/// session speaks for itself.
///
/// An arm waits for the lock as every writer does (`LOCK_WAIT`), and gives
/// way (`Error::DisarmedMeanwhile`) to a disarm of the same owner written
/// while it waited. A disarm waits at most `DISARM_LOCK_WAIT`, then writes
/// its marker without the lock (`write_disarmed_marker_without_lock`).
///
/// The reaping scans `consent/`: markers are one per session that ever
/// armed or disarmed, and writes are rare, interactive commands.
pub fn write_marker(
    roster: &RosterDir,
    identity: &OwnerIdentity,
    state: MarkerState,
    cwd: &Path,
    facts: &impl SystemFacts,
) -> Result<WrittenMarker> {
    let name = RecordName::of_identity(identity).file_name();
    let lock = match state {
        MarkerState::Armed => {
            let disarm_before = disarm_written_at(roster, &name, identity, facts);
            let lock = roster.lock()?;
            let disarm_now = disarm_written_at(roster, &name, identity, facts);
            if disarm_now.is_some() && disarm_now != disarm_before {
                return Err(Error::DisarmedMeanwhile { path: roster.entry_path(roster.consent(), &name) });
            }
            lock
        }
        MarkerState::Disarmed => match roster.lock_within(DISARM_LOCK_WAIT) {
            Ok(lock) => lock,
            Err(registry_core::Error::Busy { .. }) => {
                return write_disarmed_marker_without_lock(roster, identity, cwd, facts);
            }
            Err(error) => return Err(error.into()),
        },
    };
    let marker = Marker::new(identity, state, cwd, Timestamp::from_system_time(facts.now()));
    write_atomically(roster, roster.consent(), &name, &marker.to_bytes())?;
    // This owner's marker under the name an older roster gave it: the one
    // just written takes its place. Another world's, at the same number,
    // stays.
    let legacy = RecordName::legacy(identity.pid).file_name();
    if let Some(entry) = read_marker_entry(roster, &legacy, facts)
        && let MarkerFinding::Judged { marker: old, .. } = &entry.finding
        && old.owner.is_same_owner(identity)
    {
        remove_entry(roster, roster.consent(), &legacy)?;
    }
    let reaped = prune_markers(roster, &lock, None, false, facts)?;
    Ok(WrittenMarker { path: roster.entry_path(roster.consent(), &name), marker, reaped })
}

/// Withdraws the consent of the owner `identity` without the registry
/// lock: its `disarmed` marker is written atomically (a temporary renamed
/// over the name), which readers see whole or not at all, and which closes
/// consent whatever the lock's holder does, since no writer ever opens
/// consent without the lock. What a disarm does when another process holds
/// the lock, and a session end that cannot have it. An older roster's
/// `<pid>.json` of the owner is left in place (the marker under the
/// record's name is read first) and dead markers are left to the next
/// writer or prune.
///
/// The write does not wait for the disk: a disarm matters only while its
/// owner runs, and a power loss that could lose the marker ends the owner
/// with it (a marker of a dead owner is as good as none). Waiting cost a
/// session-end hook a tenth of its budget and more on a disk busy with
/// other writes.
pub fn write_disarmed_marker_without_lock(
    roster: &RosterDir,
    identity: &OwnerIdentity,
    cwd: &Path,
    facts: &impl SystemFacts,
) -> Result<WrittenMarker> {
    let name = RecordName::of_identity(identity).file_name();
    let marker = Marker::new(identity, MarkerState::Disarmed, cwd, Timestamp::from_system_time(facts.now()));
    write_atomically_as(roster, roster.consent(), &name, &marker.to_bytes(), Durability::Unsynced)?;
    let path = roster.entry_path(roster.consent(), &name);
    Ok(WrittenMarker { path, marker, reaped: MarkerPruneReport::default() })
}

/// When the marker at `name` is a disarm of the owner `identity`: its
/// `written_at`, which tells one disarm from the next.
fn disarm_written_at(
    roster: &RosterDir,
    name: &str,
    identity: &OwnerIdentity,
    facts: &impl SystemFacts,
) -> Option<String> {
    let entry = read_marker_entry(roster, name, facts)?;
    match entry.finding {
        MarkerFinding::Judged { marker, .. }
            if marker.state == MarkerState::Disarmed && marker.owner.is_same_owner(identity) =>
        {
            Some(marker.written_at)
        }
        _ => None,
    }
}

/// Should the session accept pushes now (docs/contract.md §6.4)? Yes for a live
/// `armed` marker; no for a live `disarmed` one (an explicit off beats
/// `auto_arm`); no while a marker is present that cannot be believed
/// (fail closed); otherwise what the auto-arm decision says. A marker of a
/// dead owner is as good as none.
pub fn effective_should_arm(marker: &MarkerEntry, auto_arm: &Decision) -> Effective {
    let decided = crate::decision::decide_running(marker, auto_arm, &crate::config::ConfigOutcome::Absent);
    Effective { should_arm: decided.should_arm, reason: decided.reason }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_session_itself_may_arm_and_anyone_may_disarm() {
        assert_eq!(may_write_marker(MarkerState::Armed, true, None), Ok(()));
        assert_eq!(
            may_write_marker(MarkerState::Armed, false, None),
            Err(MarkerWriteRefusal::NotTheSessionItself)
        );
        assert_eq!(
            may_write_marker(MarkerState::Armed, false, Some("/proc/7 unreadable")),
            Err(MarkerWriteRefusal::AncestryUnreadable("/proc/7 unreadable".into()))
        );
        assert_eq!(may_write_marker(MarkerState::Disarmed, false, None), Ok(()));
        assert_eq!(may_write_marker(MarkerState::Disarmed, false, Some("unreadable")), Ok(()));
    }
}
