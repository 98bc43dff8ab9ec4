//! One entry of `consent/` as the gate and the reaper see it (docs/contract.md §5,
//! §6.4): a marker read safely with its owner's verdict, or a problem that is
//! listed but never believed. Both the gate and the marker reaping read
//! entries this way, so it sits below both.

use std::path::{Path, PathBuf};

use owner_liveness::{Liveness, Pid, SystemFacts, Verdict, judge};
use registry_core::{
    ProblemKind, ReadProblem, RosterDir, Timestamp, pid_of_file_name, read_entry, record_file_name,
};

use crate::marker::{Marker, MarkerState, ParsedMarker, parse_marker};

/// A session's consent as other tools see it: the state of its live
/// marker, or `None` when there is no marker that counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConsentState {
    Armed,
    Disarmed,
    None,
}

impl ConsentState {
    /// `"armed"`, `"disarmed"` or `"none"`, as JSON and text show it.
    pub fn as_str(self) -> &'static str {
        match self {
            ConsentState::Armed => "armed",
            ConsentState::Disarmed => "disarmed",
            ConsentState::None => "none",
        }
    }
}

impl From<MarkerState> for ConsentState {
    fn from(state: MarkerState) -> ConsentState {
        match state {
            MarkerState::Armed => ConsentState::Armed,
            MarkerState::Disarmed => ConsentState::Disarmed,
        }
    }
}

/// A marker file that is listed but not believed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MarkerProblem {
    pub kind: ProblemKind,
    pub detail: String,
}

/// What was found at a marker's name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MarkerFinding {
    /// No file.
    Absent,
    /// A well-formed marker and its owner's verdict; it counts only when
    /// the verdict is `alive`.
    Judged { marker: Box<Marker>, verdict: Verdict },
    /// Untrusted, malformed or of a newer format: never believed.
    Problem(MarkerProblem),
}

/// One entry of `consent/` with what it turned out to be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MarkerEntry {
    pub file_name: String,
    pub path: PathBuf,
    /// From the file name, when it is canonical.
    pub pid: Option<Pid>,
    pub finding: MarkerFinding,
    /// The marker's `written_at`, else the file's mtime, when known.
    pub written_at: Option<Timestamp>,
}

impl MarkerEntry {
    /// The entry of a session that has no marker file.
    pub fn absent(roster_path: &Path, pid: Pid) -> MarkerEntry {
        let file_name = consent_file_name(pid);
        MarkerEntry {
            path: roster_path.join(registry_core::CONSENT).join(&file_name),
            file_name,
            pid: Some(pid),
            finding: MarkerFinding::Absent,
            written_at: None,
        }
    }

    /// The state that counts (gate posture): a marker's state only while
    /// its owner's verdict is `alive`; everything else is `None`.
    pub fn counted_state(&self) -> ConsentState {
        match &self.finding {
            MarkerFinding::Judged { marker, verdict } if verdict.liveness == Liveness::Alive => {
                marker.state.into()
            }
            _ => ConsentState::None,
        }
    }

    pub fn counts(&self) -> bool {
        self.counted_state() != ConsentState::None
    }

    /// The state the file says, believed or not (`None` when there is no
    /// well-formed marker).
    pub fn written_state(&self) -> Option<MarkerState> {
        match &self.finding {
            MarkerFinding::Judged { marker, .. } => Some(marker.state),
            _ => None,
        }
    }

    /// The liveness the reaper posture acts on: the owner's verdict, and
    /// `unknown` for a problem entry; `None` for an absent one.
    pub fn liveness(&self) -> Option<Liveness> {
        match &self.finding {
            MarkerFinding::Absent => None,
            MarkerFinding::Judged { verdict, .. } => Some(verdict.liveness),
            MarkerFinding::Problem(_) => Some(Liveness::Unknown),
        }
    }

    /// A file is present that might be this session's consent but cannot
    /// be believed (an owner of unknown liveness, or a problem entry).
    /// The gate does not let auto-arm speak over it: it could be a disarm.
    pub fn holds_off_auto_arm(&self) -> bool {
        self.liveness() == Some(Liveness::Unknown)
    }

    /// One line on why the marker counts or not.
    pub fn reason(&self) -> String {
        match &self.finding {
            MarkerFinding::Absent => "no consent marker".into(),
            MarkerFinding::Judged { marker, verdict } => {
                let state = marker.state.as_str();
                match verdict.liveness {
                    Liveness::Alive => format!("the marker counts: its owner is alive ({})", verdict.reason),
                    Liveness::Dead => format!(
                        "the {state} marker is ignored: its owner is dead ({}); \
                         the next consent write or `roster-prune` removes it",
                        verdict.reason
                    ),
                    Liveness::Unknown => format!(
                        "the {state} marker is ignored: its owner's liveness is unknown ({})",
                        verdict.reason
                    ),
                }
            }
            MarkerFinding::Problem(problem) => {
                format!("the marker is ignored: {}: {}", problem.kind.as_str(), problem.detail)
            }
        }
    }
}

/// The file name of a session's marker: `<pid>.json`.
pub fn consent_file_name(pid: Pid) -> String {
    record_file_name(pid)
}

/// The file name of the record in `sessions/` of the session a marker of
/// `consent/` named `marker_file_name` belongs to: the same name.
pub fn record_file_name_of_marker(marker_file_name: &str) -> &str {
    marker_file_name
}

/// Reads and judges the marker of the session owned by `pid`.
pub fn read_marker(roster: &RosterDir, pid: Pid, facts: &impl SystemFacts) -> MarkerEntry {
    read_marker_entry(roster, &consent_file_name(pid), facts)
        .unwrap_or_else(|| MarkerEntry::absent(roster.path(), pid))
}

/// Reads and judges one entry of `consent/`; `None` when the name is a
/// roster dotfile (a temporary) or no longer exists.
pub fn read_marker_entry(
    roster: &RosterDir,
    file_name: &str,
    facts: &impl SystemFacts,
) -> Option<MarkerEntry> {
    if file_name.starts_with('.') {
        return None;
    }
    let consent = roster.consent();
    let path = roster.entry_path(consent, file_name);
    let file_pid = pid_of_file_name(file_name);
    let problem = |kind: ProblemKind, detail: String, mtime: Option<Timestamp>| MarkerEntry {
        file_name: file_name.to_owned(),
        path: path.clone(),
        pid: file_pid,
        finding: MarkerFinding::Problem(MarkerProblem { kind, detail }),
        written_at: mtime,
    };
    let contents = match read_entry(consent, file_name) {
        Ok(contents) => contents,
        Err(ReadProblem::Missing) => return None,
        Err(ReadProblem::Untrusted { reason, mtime }) => {
            return Some(problem(ProblemKind::Untrusted, reason, mtime));
        }
        Err(ReadProblem::Failed(why)) => {
            let mtime = mtime_without_following(&path);
            return Some(problem(ProblemKind::Untrusted, format!("unreadable: {why}"), mtime));
        }
    };
    let Some(file_pid) = file_pid else {
        return Some(problem(
            ProblemKind::Malformed,
            "name is not <pid>.json with the pid in canonical decimal".into(),
            Some(contents.mtime),
        ));
    };
    Some(match parse_marker(&contents.bytes, file_pid) {
        ParsedMarker::Marker(marker) => {
            let verdict = judge(&marker.identity(), None, facts);
            MarkerEntry {
                file_name: file_name.to_owned(),
                path,
                pid: Some(file_pid),
                written_at: Some(marker.written_at()),
                finding: MarkerFinding::Judged { marker, verdict },
            }
        }
        ParsedMarker::Malformed(detail) => {
            problem(ProblemKind::Malformed, detail.to_string(), Some(contents.mtime))
        }
        ParsedMarker::UnsupportedFormat(format) => problem(
            ProblemKind::UnsupportedFormat,
            format!("format {format} was written by a newer roster"),
            Some(contents.mtime),
        ),
    })
}

fn mtime_without_following(path: &Path) -> Option<Timestamp> {
    std::fs::symlink_metadata(path)
        .ok()
        .and_then(|metadata| metadata.modified().ok())
        .map(Timestamp::from_system_time)
}
