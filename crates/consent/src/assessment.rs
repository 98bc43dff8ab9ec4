//! The assessment of one session's consent: everything `roster-consent
//! status` shows and `should-arm` decides on (the owner's condition, the
//! session's directory, its marker, the configuration), brought together
//! here so that every tool asking "should this session accept pushes?"
//! asks the same question, and `decide` answers it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use owner_liveness::{CaptureError, Liveness, OwnerIdentity, Pid, SystemFacts};
use registry_core::{RosterDir, SessionRow, find_session_row};

use crate::config::ConfigOutcome;
use crate::config_files::{AutoArmInputs, canonical_session_directory, load_auto_arm_inputs};
use crate::decision::{OwnerCondition, SessionConsent, decide};
use crate::error::Result;
use crate::marker_entry::{MarkerEntry, MarkerFinding, marker_name_in_reader_world, read_marker};
use crate::session_directory::{
    SessionDirectory, SessionDirectorySource, session_directory, session_directory_of_row,
};

/// What `assess` found: a session that runs, assessed, or one that ended.
#[derive(Debug)]
pub enum SessionStatus {
    Assessed(Box<Assessment>),
    Ended(Box<EndedSession>),
}

impl SessionStatus {
    /// Should the session accept pushes now? One that ended accepts
    /// nothing.
    pub fn should_arm(&self) -> bool {
        match self {
            SessionStatus::Assessed(assessment) => assessment.should_arm(),
            SessionStatus::Ended(_) => false,
        }
    }
}

/// A session whose owner is not running, nor any other process of its
/// recorded chain: it has ended and accepts nothing. Nothing is decided
/// for it; what is left of it (its record, its marker) says what it last
/// was.
#[derive(Debug)]
pub struct EndedSession {
    pub pid: Pid,
    /// Why its owner's identity could not be captured: it is not running.
    pub owner_gone: CaptureError,
    /// The record left at its pid in this world, if any: its path and
    /// verdict, and the directory the session worked in.
    pub record: Option<SessionRow>,
    /// Its marker: the state it last chose, when one was left.
    pub marker: MarkerEntry,
    /// `--cwd` when given, else the directory its record names, as recorded
    /// (it may be gone too); `None` when neither is known.
    pub directory: Option<SessionDirectory>,
    /// The decision: none, and why.
    pub consent: SessionConsent,
}

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
    /// The roster at `roster_path`, when the caller has it open already
    /// (a delivery hook, a send): it is not opened and checked again.
    pub opened_roster: Option<&'a RosterDir>,
    /// The session's row in that roster, when the caller has just read and
    /// judged it (a delivery hook): its record is not read again. Used only
    /// for the pid asked about, and still held to the owner captured now.
    pub known_row: Option<&'a SessionRow>,
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

    /// Why: the decision's reason first, then the configuration's. What
    /// the decision's reason says already (`not armed by hand, and
    /// auto-arm is off`) is not said again by the configuration's
    /// conclusion (`auto-arm is off`).
    /// Why this assessment could not decide, when a file it rests on (the
    /// session's marker, the repository's or the user's configuration)
    /// could not be read: the answer may differ once it can be, so a
    /// message neither goes out nor is refused for good on it.
    pub fn undecided_because(&self) -> Option<String> {
        if let MarkerFinding::Problem(problem) = &self.marker.finding
            && problem.read_failed
        {
            return Some(format!("its consent marker {} {}", self.marker.path.display(), problem.detail));
        }
        [&self.inputs.repo, &self.inputs.user].into_iter().find_map(|input| match &input.outcome {
            ConfigOutcome::Unreadable(why) => Some(match &input.path {
                Some(path) => format!("{} is unreadable: {why}", path.display()),
                None => format!("a configuration file is unreadable: {why}"),
            }),
            _ => None,
        })
    }

    pub fn reasons(&self) -> Vec<String> {
        let decided = &self.consent.reason;
        let mut reasons = vec![decided.clone()];
        reasons.extend(
            self.inputs.decision.reasons.iter().filter(|reason| !decided.contains(reason.as_str())).cloned(),
        );
        reasons
    }
}

/// Assesses the consent of the session `request` names, judging owners
/// against `facts`: a session whose owner (and every other process of its
/// chain) is not running has ended, and is described, not assessed.
pub fn assess(request: AssessmentRequest<'_>, facts: &impl SystemFacts) -> Result<SessionStatus> {
    let AssessmentRequest { pid, owner_identity, roster_path, opened_roster, known_row, cwd_flag, env } =
        request;
    let opened_here = match opened_roster {
        Some(_) => None,
        None => RosterDir::open_existing(roster_path)?,
    };
    let roster = opened_roster.or(opened_here.as_ref());
    let marker_name = marker_name_in_reader_world(pid, facts);
    let marker = match roster {
        Some(roster) => read_marker(roster, marker_name, facts),
        None => MarkerEntry::absent(roster_path, marker_name),
    };
    let condition = match &owner_identity {
        Ok(_) => OwnerCondition::Running,
        Err(_) if session_runs_on_in_its_chain(roster, pid, &marker, facts) => OwnerCondition::Running,
        Err(error) => OwnerCondition::NotRunning(owner_condition(error)),
    };
    if let (OwnerCondition::NotRunning(why), Err(owner_gone)) = (&condition, &owner_identity)
        && owner_has_ended(owner_gone)
    {
        let record = roster.and_then(|roster| find_session_row(roster, pid, facts));
        let directory = match cwd_flag {
            Some(given) => Some(SessionDirectory {
                path: canonical_session_directory(given)?,
                source: SessionDirectorySource::CwdFlag,
            }),
            None => directory_left_in(record.as_ref()),
        };
        let consent = SessionConsent::of_ended_session(marker.counted_state(), why);
        let owner_gone = owner_gone.clone();
        let ended = EndedSession { pid, owner_gone, record, marker, directory, consent };
        return Ok(SessionStatus::Ended(Box::new(ended)));
    }
    let directory = match known_row.filter(|row| cwd_flag.is_none() && row.pid == Some(pid)) {
        Some(row) => session_directory_of_row(row, pid, owner_identity.as_ref().ok())?,
        None => session_directory(roster, roster_path, pid, owner_identity.as_ref().ok(), cwd_flag, facts)?,
    };
    let inputs = load_auto_arm_inputs(&directory.path, env);
    let consent = decide(&condition, &marker, &inputs.decision, &inputs.repo.outcome);
    let assessment = Assessment { pid, owner_identity, directory, marker, inputs, consent };
    Ok(SessionStatus::Assessed(Box::new(assessment)))
}

/// Whether the session `request` names accepts messages now, as
/// `roster-consent should-arm` decides it (the same assessment): `Err`
/// says why not. Every error is a no (fail closed), its message the
/// reason.
pub fn accepts_messages(
    request: AssessmentRequest<'_>,
    facts: &impl SystemFacts,
) -> std::result::Result<(), NotAccepted> {
    match assess(request, facts) {
        Ok(status) if status.should_arm() => Ok(()),
        Ok(SessionStatus::Assessed(assessment)) => match assessment.undecided_because() {
            Some(why) => Err(NotAccepted::Undecided(format!("its consent could not be decided now: {why}"))),
            None => Err(NotAccepted::Refuses(assessment.reasons().join("; "))),
        },
        Ok(SessionStatus::Ended(ended)) => Err(NotAccepted::Refuses(ended.consent.reason)),
        Err(error) => Err(NotAccepted::Undecided(format!("its consent could not be decided now: {error}"))),
    }
}

/// Why a session does not take a message now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotAccepted {
    /// It does not accept messages: a message for it is refused.
    Refuses(String),
    /// Its consent could not be decided (a file it rests on could not be
    /// read, the owner could not be examined): nothing goes out and
    /// nothing is queued, and a queued message waits for a later event
    /// rather than being refused on a passing fault.
    Undecided(String),
}

impl NotAccepted {
    /// The reason, in words.
    pub fn reason(&self) -> &str {
        match self {
            NotAccepted::Refuses(reason) | NotAccepted::Undecided(reason) => reason,
        }
    }
}

/// Whether a failed capture proves the owner gone (it is not running, or
/// exited while it was read), rather than that it could not be examined.
fn owner_has_ended(error: &CaptureError) -> bool {
    matches!(error, CaptureError::NotRunning(_) | CaptureError::ExitedDuringCapture(_))
}

/// The directory an ended session's record names, as recorded: only a
/// record that is believed and whose owner is provably gone is the
/// session's own (one of unknown liveness may be another world's).
fn directory_left_in(record: Option<&SessionRow>) -> Option<SessionDirectory> {
    let row = record?;
    let record = row.record.as_ref().filter(|_| row.liveness() == Liveness::Dead)?;
    Some(SessionDirectory { path: PathBuf::from(&*record.cwd), source: SessionDirectorySource::Record })
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
