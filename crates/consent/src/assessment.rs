//! The assessment of one session's consent: everything `roster-consent
//! status` shows and `should-arm` decides on (the owner's condition, the
//! session's directory, its marker, the configuration), brought together
//! here so that every tool asking "should this session accept pushes?"
//! asks the same question, and `decide` answers it.

use std::ffi::OsString;
use std::path::Path;

use owner_liveness::{CaptureError, Liveness, OwnerIdentity, Pid, SystemFacts};
use registry_core::{RosterDir, find_session_row};

use crate::config_files::{AutoArmInputs, load_auto_arm_inputs};
use crate::decision::{OwnerCondition, SessionConsent, decide};
use crate::error::Result;
use crate::marker_entry::{MarkerEntry, MarkerFinding, marker_name_in_reader_world, read_marker};
use crate::session_directory::{SessionDirectory, session_directory};

/// Everything `status` shows and `should-arm` decides on.
#[derive(Debug)]
pub struct Assessment {
    /// The owner the caller named or found.
    pub pid: Pid,
    /// The owner's identity, or why it could not be captured.
    pub owner_identity: std::result::Result<OwnerIdentity, CaptureError>,
    /// The session's own directory, whose `.roster.toml` may auto-arm it.
    pub directory: SessionDirectory,
    pub marker: MarkerEntry,
    pub inputs: AutoArmInputs,
    /// The decision, made by the one function every tool decides with.
    pub consent: SessionConsent,
}

/// Who asks about which session: what `assess` starts from.
pub struct AssessmentRequest<'a> {
    /// The session's owner, as the caller resolved it.
    pub pid: Pid,
    /// Its identity, captured by the caller now, or why it could not be.
    pub owner_identity: std::result::Result<OwnerIdentity, CaptureError>,
    /// The roster directory (it may not exist yet).
    pub roster_path: &'a Path,
    /// `--cwd`: the session's directory, when the caller gave it.
    pub cwd_flag: Option<&'a Path>,
    /// The environment (`XDG_CONFIG_HOME`, `HOME`) the user file is found by.
    pub env: &'a dyn Fn(&str) -> Option<OsString>,
}

impl Assessment {
    /// Should the session accept pushes now? A session whose owner is not
    /// running accepts nothing.
    pub fn should_arm(&self) -> bool {
        self.consent.should_arm
    }

    /// Why: the decision's reason first, then the configuration's.
    pub fn reasons(&self) -> Vec<String> {
        let mut reasons = vec![self.consent.reason.clone()];
        reasons.extend(self.inputs.decision.reasons.iter().cloned());
        reasons
    }
}

/// Assesses the consent of the session `request` names, judging owners
/// against `facts`.
pub fn assess(request: AssessmentRequest<'_>, facts: &impl SystemFacts) -> Result<Assessment> {
    let AssessmentRequest { pid, owner_identity, roster_path, cwd_flag, env } = request;
    let roster = RosterDir::open_existing(roster_path)?;
    let directory =
        session_directory(roster.as_ref(), roster_path, pid, owner_identity.as_ref().ok(), cwd_flag, facts)?;
    let marker_name = marker_name_in_reader_world(pid, facts);
    let marker = match &roster {
        Some(roster) => read_marker(roster, marker_name, facts),
        None => MarkerEntry::absent(roster_path, marker_name),
    };
    let inputs = load_auto_arm_inputs(&directory.path, env);
    let condition = match &owner_identity {
        Ok(_) => OwnerCondition::Running,
        Err(_) if session_runs_on_in_its_chain(roster.as_ref(), pid, &marker, facts) => {
            OwnerCondition::Running
        }
        Err(error) => OwnerCondition::NotRunning(owner_condition(error)),
    };
    let consent = decide(&condition, &marker, &inputs.decision, &inputs.repo.outcome);
    Ok(Assessment { pid, owner_identity, directory, marker, inputs, consent })
}

/// Whether the session of the owner `pid`, which is not running itself,
/// still runs in another process of its chain (docs/contract.md §5:
/// Copilot's native process after its loader was killed): its record's or
/// its marker's verdict, which judge every member, says alive. Consent
/// dies with the whole chain, not with the loader.
fn session_runs_on_in_its_chain(
    roster: Option<&RosterDir>,
    pid: Pid,
    marker: &MarkerEntry,
    facts: &impl SystemFacts,
) -> bool {
    let marker_alive = matches!(
        &marker.finding,
        MarkerFinding::Judged { marker, verdict }
            if !marker.owner.chain.is_empty() && verdict.liveness == Liveness::Alive
    );
    let record_alive = roster.and_then(|roster| find_session_row(roster, pid, facts)).is_some_and(|row| {
        row.record.as_ref().is_some_and(|record| !record.owner.chain.is_empty())
            && row.liveness() == Liveness::Alive
    });
    marker_alive || record_alive
}

/// Why an owner's identity could not be captured, as a predicate.
pub fn owner_condition(error: &CaptureError) -> String {
    match error {
        CaptureError::NotRunning(_) | CaptureError::ExitedDuringCapture(_) => {
            format!("is not running ({error})")
        }
        other => format!("cannot be examined ({other})"),
    }
}
