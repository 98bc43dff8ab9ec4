//! One entry of `consent/` as the gate and the reaper see it (docs/contract.md §5,
//! §6.4): a marker read safely with its owner's verdict, or a problem that is
//! listed but never believed. Both the gate and the marker reaping read
//! entries this way, so it sits below both.

use std::path::{Path, PathBuf};

use owner_liveness::{Liveness, Pid, SystemFacts, Verdict, judge};
use registry_core::{
    NOT_A_RECORD_NAME, ProblemKind, ReadProblem, RecordName, RosterDir, Timestamp, World, read_entry,
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
    /// The read itself failed (an I/O error, no memory): the marker may be
    /// a good one that a later read believes, so what it says is unknown
    /// rather than untrusted.
    pub read_failed: bool,
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
    pub fn absent(roster_path: &Path, name: RecordName) -> MarkerEntry {
        let file_name = name.file_name();
        MarkerEntry {
            path: roster_path.join(registry_core::CONSENT).join(&file_name),
            file_name,
            pid: Some(name.pid),
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

/// The marker name of the session whose owner is `pid` in the caller's
/// own world (`RecordName`): what `--pid` names.
pub fn marker_name_in_reader_world(pid: Pid, facts: &impl SystemFacts) -> RecordName {
    match World::of_reader(facts) {
        Some(world) => RecordName::new(pid, world),
        None => RecordName::legacy(pid),
    }
}

/// Reads and judges the marker of the session whose record is called
/// `name` (a marker is called as its session's record is). Where there is
/// none, the marker an older roster wrote as `<pid>.json` stands in, when
/// it is a problem (never believed, so it closes the gate) or a marker of
/// this world: another world's marker at the same number is not this
/// session's.
pub fn read_marker(roster: &RosterDir, name: RecordName, facts: &impl SystemFacts) -> MarkerEntry {
    if let Some(entry) = read_marker_entry(roster, &name.file_name(), facts) {
        return entry;
    }
    let legacy = RecordName::legacy(name.pid);
    if let Some(world) = name.world
        && let Some(entry) = read_marker_entry(roster, &legacy.file_name(), facts)
        && marker_is_of_world(&entry, world)
    {
        return entry;
    }
    MarkerEntry::absent(roster.path(), name)
}

/// Whether a marker entry could be a marker of `world`'s session: a
/// problem entry, or a marker recorded in that world.
pub(crate) fn marker_is_of_world(entry: &MarkerEntry, world: World) -> bool {
    match &entry.finding {
        MarkerFinding::Judged { marker, .. } => {
            World::new(marker.owner.pid_ns, marker.owner.boot_id.as_str()) == world
        }
        MarkerFinding::Problem(_) => true,
        MarkerFinding::Absent => false,
    }
}

/// The file name of the record in `sessions/` of the session a marker of
/// `consent/` named `marker_file_name` belongs to: the same name.
pub fn record_file_name_of_marker(marker_file_name: &str) -> &str {
    marker_file_name
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
    let name = RecordName::parse_file_name(file_name);
    let file_pid = name.map(|name| name.pid);
    let problem_of =
        |kind: ProblemKind, detail: String, mtime: Option<Timestamp>, read_failed: bool| MarkerEntry {
            file_name: file_name.to_owned(),
            path: path.clone(),
            pid: file_pid,
            finding: MarkerFinding::Problem(MarkerProblem { kind, detail, read_failed }),
            written_at: mtime,
        };
    let problem =
        |kind: ProblemKind, detail: String, mtime: Option<Timestamp>| problem_of(kind, detail, mtime, false);
    let contents = match read_entry(consent, file_name) {
        Ok(contents) => contents,
        Err(ReadProblem::Missing) => return None,
        Err(ReadProblem::Untrusted { reason, mtime }) => {
            return Some(problem(ProblemKind::Untrusted, reason, mtime));
        }
        Err(ReadProblem::Failed(why)) => {
            let mtime = mtime_without_following(&path);
            return Some(problem_of(ProblemKind::Untrusted, format!("unreadable: {why}"), mtime, true));
        }
    };
    let Some(name) = name else {
        return Some(problem(ProblemKind::Malformed, NOT_A_RECORD_NAME.into(), Some(contents.mtime)));
    };
    let file_pid = name.pid;
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
