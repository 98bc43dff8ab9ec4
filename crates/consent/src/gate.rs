//! The gate (docs/contract.md §5 gate posture, §6.4): writing markers under the lock,
//! and combining the marker with the auto-arm decision into "should this
//! session accept pushes now". Only a marker whose owner is `alive` counts;
//! anything else counts as "no".

use std::path::{Path, PathBuf};

use owner_liveness::{OwnerIdentity, SystemFacts};
use registry_core::{RecordName, RosterDir, Timestamp, remove_entry, write_atomically};

use crate::config::Decision;
use crate::error::Result;
use crate::marker::{Marker, MarkerState};
use crate::marker_entry::{ConsentState, MarkerEntry, MarkerFinding, read_marker, read_marker_entry};
use crate::prune::{MarkerPruneReport, prune_markers};

/// What `arm` and `disarm` wrote, and how many dead markers they reaped.
#[derive(Clone, Debug)]
pub struct WrittenMarker {
    pub marker: Marker,
    pub path: PathBuf,
    pub reaped: MarkerPruneReport,
}

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
/// from a live, and for `armed` verified, owner) atomically under the
/// registry lock, then reaps the markers of dead owners, each re-read
/// under the same lock before it goes. A marker of any age or kind at the
/// same name is replaced: the session speaks for itself.
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
    let marker = Marker::new(identity, state, cwd, Timestamp::from_system_time(facts.now()));
    let name = RecordName::of_identity(identity).file_name();
    let lock = roster.lock()?;
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
