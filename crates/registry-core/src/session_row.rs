//! One entry of `sessions/` as roster presents it: a record with its
//! verdict, or a problem (malformed, untrusted, unsupported-format) that is
//! listed but never believed. Used by list, prune and register alike.

use std::path::PathBuf;

use owner_liveness::{Liveness, Pid, Verdict, judge_now};

use crate::directory::RosterDir;
use crate::files::{ReadProblem, read_entry};
use crate::record::{Parsed, Record, parse_record, pid_of_file_name};
use crate::timestamp::Timestamp;

/// The kinds of entry that are listed but not believed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProblemKind {
    Malformed,
    Untrusted,
    UnsupportedFormat,
}

impl ProblemKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ProblemKind::Malformed => "malformed",
            ProblemKind::Untrusted => "untrusted",
            ProblemKind::UnsupportedFormat => "unsupported-format",
        }
    }
}

/// A problem and what exactly is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    pub kind: ProblemKind,
    pub detail: String,
}

/// One listed entry.
#[derive(Clone, Debug)]
pub struct SessionRow {
    pub file_name: String,
    pub path: PathBuf,
    /// From the record, else from a canonical file name.
    pub pid: Option<Pid>,
    pub record: Option<Record>,
    pub problem: Option<Problem>,
    pub verdict: Verdict,
    /// The record's `registered_at`, or the file's mtime for a problem.
    pub registered_at: Timestamp,
}

impl SessionRow {
    pub fn liveness(&self) -> Liveness {
        self.verdict.liveness
    }
}

/// Reads and judges one entry of `sessions/`; `None` when the name is a
/// roster dotfile or no longer exists.
pub fn read_session_row(roster: &RosterDir, file_name: &str) -> Option<SessionRow> {
    if file_name.starts_with('.') {
        return None;
    }
    let sessions = roster.sessions();
    let path = roster.entry_path(sessions, file_name);
    let file_pid = pid_of_file_name(file_name);
    let problem_row = |kind: ProblemKind, detail: String, mtime: Option<Timestamp>| SessionRow {
        file_name: file_name.to_owned(),
        path: path.clone(),
        pid: file_pid,
        record: None,
        verdict: Verdict { liveness: Liveness::Unknown, reason: format!("{}: {detail}", kind.as_str()) },
        problem: Some(Problem { kind, detail }),
        registered_at: mtime.unwrap_or(Timestamp::from_unix_nanos(0)),
    };
    let contents = match read_entry(sessions, file_name) {
        Ok(contents) => contents,
        Err(ReadProblem::Missing) => return None,
        Err(ReadProblem::Untrusted { reason, mtime }) => {
            return Some(problem_row(ProblemKind::Untrusted, reason, mtime));
        }
        Err(ReadProblem::Failed(why)) => {
            let mtime = crate::files::entry_mtime(sessions, file_name.as_ref());
            return Some(problem_row(ProblemKind::Untrusted, format!("unreadable: {why}"), mtime));
        }
    };
    let Some(file_pid) = file_pid else {
        return Some(problem_row(
            ProblemKind::Malformed,
            "name is not <pid>.json with the pid in canonical decimal".into(),
            Some(contents.mtime),
        ));
    };
    match parse_record(&contents.bytes, file_pid) {
        Parsed::Record(record) => {
            let verdict = judge_now(&record.identity(), record.socket_identity().as_ref());
            Some(SessionRow {
                file_name: file_name.to_owned(),
                path,
                pid: Some(record.pid()),
                registered_at: record.registered_at(),
                record: Some(*record),
                problem: None,
                verdict,
            })
        }
        Parsed::Malformed(detail) => Some(problem_row(ProblemKind::Malformed, detail, Some(contents.mtime))),
        Parsed::UnsupportedFormat(format) => Some(problem_row(
            ProblemKind::UnsupportedFormat,
            format!("format {format} was written by a newer roster"),
            Some(contents.mtime),
        )),
    }
}

/// Every key a JSON row carries (SPEC §6.2), in output order: the record's
/// keys, then the verdict, problem, consent and path.
pub const ROW_KEYS: [&str; 25] = [
    "format",
    "session_pid",
    "session_pid_source",
    "session_pid_verified",
    "owner_uid",
    "start_ticks",
    "pidfs_ino",
    "boot_id",
    "pid_ns",
    "time_ns",
    "harness",
    "harness_version",
    "agent",
    "session_id",
    "transcript_path",
    "socket",
    "cwd",
    "registrar_pid",
    "registered_at",
    "refreshed_at",
    "liveness",
    "liveness_reason",
    "problem",
    "consent",
    "path",
];

impl SessionRow {
    /// The row as the JSON contract has it: every key present, `null`
    /// where absent. `consent` is the live marker state the caller found.
    pub fn to_json(&self, consent: &str) -> serde_json::Value {
        let record =
            self.record.as_ref().map(|record| serde_json::to_value(record).expect("records serialize"));
        let mut row = serde_json::Map::new();
        for key in ROW_KEYS {
            let value = match key {
                "session_pid" => self.pid.map_or(serde_json::Value::Null, |pid| pid.get().into()),
                "registered_at" => self.registered_at.to_string().into(),
                "liveness" => self.verdict.liveness.as_str().into(),
                "liveness_reason" => self.verdict.reason.clone().into(),
                "problem" => self
                    .problem
                    .as_ref()
                    .map_or(serde_json::Value::Null, |problem| problem.kind.as_str().into()),
                "consent" => consent.into(),
                "path" => self.path.to_string_lossy().into_owned().into(),
                _ => record
                    .as_ref()
                    .and_then(|record| record.get(key).cloned())
                    .unwrap_or(serde_json::Value::Null),
            };
            row.insert(key.to_owned(), value);
        }
        serde_json::Value::Object(row)
    }
}
