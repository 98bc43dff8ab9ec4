//! One entry of `sessions/` as roster presents it: a record with its
//! verdict, or a problem (malformed, untrusted, unsupported-format) that is
//! listed but never believed. Used by list, prune and register alike.

use std::path::PathBuf;

use serde::Serialize;
use serde::ser::SerializeMap;

use owner_liveness::{Liveness, Pid, SystemFacts, Verdict, judge};

use crate::record::name::{RecordName, World};
use crate::record::owner::{AbsentKeys, OwnerKeys, concat_keys, write_chain_key, write_identity_keys};
use crate::record::session_record::{Parsed, Record, parse_record, pid_of_file_name};
use crate::record::timestamp::Timestamp;
use crate::state::SessionState;
use crate::store::directory::RosterDir;
use crate::store::directory_entries::EntryKind;
use crate::store::files::{FileStamp, read_entry_for_row};

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

/// Where a row comes from: roster's own record, or a harness's own
/// registry of live sessions (docs/contract.md §6.5), read only.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Origin {
    #[default]
    Roster,
    ClaudeCode,
    Copilot,
}

impl Origin {
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Roster => "roster",
            Origin::ClaudeCode => "claude-code",
            Origin::Copilot => "copilot",
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
    /// What the session's last event said it does (`state`), when a
    /// listing read it; shown only while the owner is alive
    /// (`shown_state`).
    pub state: Option<SessionState>,
    /// Roster's record, or a harness's file (`adopted`).
    pub origin: Origin,
    /// How many messages wait in the session's queue (docs/contract.md
    /// §6.6), when a listing counted them (`read_messages`); 0 for a row
    /// that is no roster record.
    pub messages_pending: usize,
    /// Its recorded `location`, checked against its multiplexer when a
    /// listing did (the `location` crate); `None` when none is recorded or
    /// it was not checked.
    pub location_check: Option<crate::record::LocationCheck>,
}

impl SessionRow {
    /// The row of an entry that is not believed: listed, its verdict
    /// `unknown` with the problem as its reason, its mtime (when known) as
    /// its age.
    pub(crate) fn of_problem(
        file_name: String,
        path: PathBuf,
        pid: Option<Pid>,
        origin: Origin,
        (kind, detail): (ProblemKind, String),
        mtime: Option<Timestamp>,
    ) -> SessionRow {
        SessionRow {
            file_name,
            path,
            pid,
            record: None,
            verdict: Verdict { liveness: Liveness::Unknown, reason: format!("{}: {detail}", kind.as_str()) },
            problem: Some(Problem { kind, detail }),
            registered_at: mtime.unwrap_or(Timestamp::from_unix_nanos(0)),
            state: None,
            origin,
            messages_pending: 0,
            location_check: None,
        }
    }

    pub fn liveness(&self) -> Liveness {
        self.verdict.liveness
    }

    /// The state a listing shows: the one read, while the owner is alive;
    /// a dead or unknown owner's last state is no longer what it does.
    pub fn shown_state(&self) -> Option<&SessionState> {
        self.state.as_ref().filter(|_| self.liveness() == Liveness::Alive)
    }

    /// Reads the session's state file into the row, when its owner is alive
    /// and `states` (the names in `states/`, when listed) has one for it.
    pub fn read_state(&mut self, roster: &RosterDir, states: Option<&std::collections::HashSet<String>>) {
        if self.liveness() != Liveness::Alive {
            return;
        }
        let Some(record) = &self.record else { return };
        if states.is_some_and(|names| !names.contains(&self.file_name)) {
            return;
        }
        self.state = crate::state::read_state(roster, &self.file_name, record);
    }

    /// Counts the messages waiting for the session (`messages_pending`),
    /// when the row is a roster record and `queues` (the names in
    /// `messages/`, when listed) has a queue for it: one directory read,
    /// and none for a session that was never sent anything.
    pub fn read_messages(&mut self, roster: &RosterDir, queues: Option<&std::collections::HashSet<String>>) {
        if self.record.is_none() || self.origin != Origin::Roster {
            return;
        }
        let queue = crate::messages::queue_name(&self.file_name);
        if queues.is_some_and(|names| !names.contains(queue)) {
            return;
        }
        self.messages_pending = crate::messages::pending_count(roster, &self.file_name);
    }

    /// The row with its owner judged again now, through the identity its
    /// record holds (a problem row stays as it is): what was true when the
    /// row was read may not be by the time it is reported.
    pub fn judged_again(&self, facts: &impl SystemFacts) -> SessionRow {
        let mut row = self.clone();
        // A Copilot CLI claim is proven only by a lock roster cannot read
        // again from the record: a live one is judged by its owner, as
        // any; a dead or unknown one stays what its lock said.
        let unproven_claim = self.origin == Origin::Copilot && self.liveness() != Liveness::Alive;
        if let Some(record) = &self.record
            && !unproven_claim
        {
            row.verdict = judge(&record.identity(), record.socket_identity().as_ref(), facts);
        }
        row
    }
}

/// Reads and judges one entry of `sessions/`; `None` when the name is a
/// roster dotfile or no longer exists.
pub fn read_session_row(roster: &RosterDir, file_name: &str, facts: &impl SystemFacts) -> Option<SessionRow> {
    read_stamped_session_row(roster, file_name, facts).map(|(row, _)| row)
}

/// The entry of the session whose owner is `pid` in the caller's own world:
/// the record named for this world, else an older roster's `<pid>.json`
/// when it is a problem entry or a record of this world. Another world's
/// record at the same number is not this pid's: `None`.
pub fn find_session_row(roster: &RosterDir, pid: Pid, facts: &impl SystemFacts) -> Option<SessionRow> {
    let world = World::of_reader(facts);
    if let Some(world) = world
        && let Some(row) = read_session_row(roster, &RecordName::new(pid, world).file_name(), facts)
    {
        return Some(row);
    }
    let row = read_session_row(roster, &RecordName::legacy(pid).file_name(), facts)?;
    let ours = match (&row.record, world) {
        (Some(record), Some(world)) => {
            world == World::new(record.owner.pid_ns, record.owner.boot_id.as_str())
        }
        _ => true,
    };
    ours.then_some(row)
}

/// `read_session_row`, also returning the stamp of the file the record was
/// read from (`None` for an entry that could not be read).
pub(crate) fn read_stamped_session_row(
    roster: &RosterDir,
    file_name: &str,
    facts: &impl SystemFacts,
) -> Option<(SessionRow, Option<FileStamp>)> {
    read_listed_session_row(roster, file_name, EntryKind::Unknown, facts)
}

/// `read_stamped_session_row` for a name whose type the directory listing
/// told (`read_stamped_entry_of_kind`).
pub(crate) fn read_listed_session_row(
    roster: &RosterDir,
    file_name: &str,
    listed_as: EntryKind,
    facts: &impl SystemFacts,
) -> Option<(SessionRow, Option<FileStamp>)> {
    read_session_row_knowing(roster, file_name, listed_as, None, facts)
}

/// A verdict already reached for a record file, valid while the file keeps
/// its stamp (same inode, unchanged).
pub(crate) struct KnownVerdict<'a> {
    pub stamp: FileStamp,
    pub verdict: &'a Verdict,
}

/// `read_listed_session_row`, taking `known`'s verdict instead of judging
/// the owner again when the file read is still the one it was reached for.
pub(crate) fn read_session_row_knowing(
    roster: &RosterDir,
    file_name: &str,
    listed_as: EntryKind,
    known: Option<KnownVerdict<'_>>,
    facts: &impl SystemFacts,
) -> Option<(SessionRow, Option<FileStamp>)> {
    if file_name.starts_with('.') {
        return None;
    }
    let sessions = roster.sessions();
    let path = roster.entry_path(sessions, file_name);
    let file_pid = pid_of_file_name(file_name);
    let problem_row = |kind: ProblemKind, detail: String, mtime: Option<Timestamp>| {
        SessionRow::of_problem(
            file_name.to_owned(),
            path.clone(),
            file_pid,
            Origin::Roster,
            (kind, detail),
            mtime,
        )
    };
    let (contents, stamp) = match read_entry_for_row(sessions, file_name, listed_as)? {
        Ok(read) => read,
        Err(untrusted) => {
            return Some((problem_row(ProblemKind::Untrusted, untrusted.detail, untrusted.mtime), None));
        }
    };
    let Some(file_pid) = file_pid else {
        let detail = NOT_A_RECORD_NAME.into();
        return Some((problem_row(ProblemKind::Malformed, detail, Some(contents.mtime)), Some(stamp)));
    };
    let row = match parse_record(&contents.bytes, file_pid) {
        Parsed::Record(record) => {
            let verdict = match known {
                Some(known) if known.stamp == stamp => known.verdict.clone(),
                _ => judge(&record.identity(), record.socket_identity().as_ref(), facts),
            };
            row_of_record(file_name.to_owned(), path, *record, verdict)
        }
        Parsed::Malformed(detail) => {
            problem_row(ProblemKind::Malformed, detail.to_string(), Some(contents.mtime))
        }
        Parsed::UnsupportedFormat(format) => problem_row(
            ProblemKind::UnsupportedFormat,
            format!("format {format} was written by a newer roster"),
            Some(contents.mtime),
        ),
    };
    Some((row, Some(stamp)))
}

/// The row of `record`, read a moment ago from `file_name` in `sessions/`
/// (and trusted and parsed as a listing reads it), its owner judged now:
/// for a caller that has just read the record to find it (a state hook
/// finding its session by the payload's session id), so that it is not
/// read a second time.
pub fn judged_session_row(
    roster: &RosterDir,
    file_name: &str,
    record: Record,
    facts: &impl SystemFacts,
) -> SessionRow {
    let verdict = judge(&record.identity(), record.socket_identity().as_ref(), facts);
    row_of_record(file_name.to_owned(), roster.entry_path(roster.sessions(), file_name), record, verdict)
}

/// A record's row with its verdict.
fn row_of_record(
    file_name: String,
    path: std::path::PathBuf,
    record: Record,
    verdict: Verdict,
) -> SessionRow {
    SessionRow {
        file_name,
        path,
        pid: Some(record.pid()),
        registered_at: record.registered_at(),
        record: Some(record),
        problem: None,
        verdict,
        state: None,
        origin: Origin::Roster,
        messages_pending: 0,
        location_check: None,
    }
}

/// What a malformed entry's name is not.
pub const NOT_A_RECORD_NAME: &str =
    "name is not <pid>@<pid namespace>-<boot hash>.json (or an older roster's <pid>.json) in canonical form";

/// The row of an entry whose name is not UTF-8: no roster wrote it, so it
/// is malformed without being opened; its mtime serves as its age.
pub fn non_utf8_name_row(roster: &RosterDir, name: &std::ffi::OsStr) -> SessionRow {
    let shown = name.to_string_lossy().into_owned();
    let detail = "name is not valid UTF-8".to_owned();
    SessionRow {
        path: roster.entry_path(roster.sessions(), &shown),
        file_name: shown,
        pid: None,
        record: None,
        verdict: Verdict { liveness: Liveness::Unknown, reason: format!("malformed: {detail}") },
        problem: Some(Problem { kind: ProblemKind::Malformed, detail }),
        registered_at: crate::store::files::entry_mtime(roster.sessions(), name)
            .unwrap_or(Timestamp::from_unix_nanos(0)),
        state: None,
        origin: Origin::Roster,
        messages_pending: 0,
        location_check: None,
    }
}

/// Every key a JSON row carries (docs/contract.md §6.2), in output order: the record's
/// keys, then the verdict, state, problem, consent, path, origin and the
/// count of messages waiting.
pub const ROW_KEYS: [&str; 37] = concat_keys(&[
    &["format", OwnerKeys::SESSION_PID, "session_pid_source", "session_pid_verified"],
    &OwnerKeys::IDENTITY,
    &["harness", "harness_version", "agent", "session_id", "transcript_path", "socket", "location"],
    &[OwnerKeys::CHAIN],
    &["cwd", "registrar_pid", "registered_at", "refreshed_at"],
    &["liveness", "liveness_reason"],
    &["state", "waiting_for", "state_since", "state_source"],
    &["problem", "consent", "should_arm", "consent_reason", "path", "origin", "messages_pending"],
]);

/// A row's consent keys, as the consent crate decided them: the counted
/// marker state (`consent`), the effective decision (`should_arm`) and its
/// reason (`consent_reason`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowConsent<'a> {
    pub state: &'a str,
    pub should_arm: bool,
    pub reason: &'a str,
}

impl RowConsent<'static> {
    /// The consent of a row whose record was just removed.
    pub const REMOVED: RowConsent<'static> =
        RowConsent { state: "none", should_arm: false, reason: "the session's record was removed" };

    /// The consent of a row a dry run would remove: nothing was removed.
    pub const WOULD_BE_REMOVED: RowConsent<'static> = RowConsent {
        state: "none",
        should_arm: false,
        reason: "the session's record would be removed (a dry run removed nothing)",
    };
}

/// A row as the JSON contract has it (docs/contract.md §6.2), borrowed from the row:
/// every key of `ROW_KEYS` in order, `null` where absent. Serializing it
/// writes the JSON without building a `serde_json::Value` first, which
/// was most of the user time of listing ten thousand rows. The owner's
/// keys are written by `RecordedOwner`, as in the record file.
#[derive(Debug)]
pub struct RowJson<'a> {
    row: &'a SessionRow,
    consent: RowConsent<'a>,
}

impl Serialize for RowJson<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let row = self.row;
        let record = row.record.as_ref();
        let owner = record.map(|record| &record.owner);
        let null = AbsentKeys::Null;
        let mut map = serializer.serialize_map(Some(ROW_KEYS.len()))?;
        // A harness's file has no roster format and no registrar.
        let roster_record = record.filter(|_| row.origin == Origin::Roster);
        map.serialize_entry("format", &roster_record.map(|record| record.format))?;
        map.serialize_entry(OwnerKeys::SESSION_PID, &row.pid.map(Pid::get))?;
        map.serialize_entry("session_pid_source", &record.map(|record| &record.session_pid_source))?;
        map.serialize_entry("session_pid_verified", &record.map(|record| record.session_pid_verified))?;
        write_identity_keys(owner, &mut map, null)?;
        map.serialize_entry("harness", &record.map(|record| &record.harness))?;
        map.serialize_entry("harness_version", &record.and_then(|record| record.harness_version.as_ref()))?;
        map.serialize_entry("agent", &record.and_then(|record| record.agent.as_ref()))?;
        map.serialize_entry("session_id", &record.and_then(|record| record.session_id.as_ref()))?;
        map.serialize_entry("transcript_path", &record.and_then(|record| record.transcript_path.as_ref()))?;
        map.serialize_entry("socket", &record.and_then(|record| record.socket.as_ref()))?;
        map.serialize_entry(
            "location",
            &record
                .and_then(|record| record.location.as_ref())
                .map(|location| LocationJson { location, check: row.location_check.as_ref() }),
        )?;
        write_chain_key(owner, &mut map, null)?;
        map.serialize_entry("cwd", &record.map(|record| &record.cwd))?;
        map.serialize_entry("registrar_pid", &roster_record.map(|record| record.registrar_pid))?;
        map.serialize_entry("registered_at", &AsText(&row.registered_at))?;
        map.serialize_entry("refreshed_at", &record.map(|record| &record.refreshed_at))?;
        map.serialize_entry("liveness", row.verdict.liveness.as_str())?;
        map.serialize_entry("liveness_reason", &row.verdict.reason)?;
        let state = row.shown_state();
        map.serialize_entry("state", SessionState::word(state))?;
        map.serialize_entry("waiting_for", &state.and_then(|state| state.waiting_for.as_deref()))?;
        map.serialize_entry("state_since", &state.map(|state| AsText(&state.since)))?;
        map.serialize_entry("state_source", &state.map(|state| state.source.as_str()))?;
        map.serialize_entry("problem", &row.problem.as_ref().map(|problem| problem.kind.as_str()))?;
        map.serialize_entry("consent", self.consent.state)?;
        map.serialize_entry("should_arm", &self.consent.should_arm)?;
        map.serialize_entry("consent_reason", self.consent.reason)?;
        map.serialize_entry("path", &row.path.to_string_lossy())?;
        map.serialize_entry("origin", row.origin.as_str())?;
        map.serialize_entry("messages_pending", &row.messages_pending)?;
        map.end()
    }
}

/// A value serialized as the string its `Display` writes, straight into
/// the output instead of through a `String` of its own.
struct AsText<'a, T: std::fmt::Display>(&'a T);

impl<T: std::fmt::Display> Serialize for AsText<'_, T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self.0)
    }
}

impl SessionRow {
    /// The row as the JSON contract has it: every key present, `null`
    /// where absent, with the consent the caller decided.
    pub fn to_json(&self, consent: RowConsent<'_>) -> serde_json::Value {
        serde_json::to_value(self.json_view(consent)).expect("rows serialize")
    }

    /// What `to_json` returns, as a value to serialize directly.
    pub fn json_view<'a>(&'a self, consent: RowConsent<'a>) -> RowJson<'a> {
        RowJson { row: self, consent }
    }
}

/// A row's `location`: the recorded keys, then what checking it found
/// (`status`: `current`, `stale`, `unchecked` or, when no listing checked
/// it, `unchecked`; `reason`; `shown`, as the table shows it).
struct LocationJson<'a> {
    location: &'a crate::record::ScreenLocation,
    check: Option<&'a crate::record::LocationCheck>,
}

impl Serialize for LocationJson<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let location = self.location;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("tty", &location.tty)?;
        map.serialize_entry("multiplexer", &location.multiplexer)?;
        map.serialize_entry("server", &location.server)?;
        map.serialize_entry("pane", &location.pane)?;
        map.serialize_entry("terminal", &location.terminal)?;
        let (status, reason, shown) = match self.check {
            Some(check) => (check.status.as_str(), Some(check.reason.as_str()), Some(check.shown.as_str())),
            None => ("unchecked", None, None),
        };
        map.serialize_entry("status", status)?;
        map.serialize_entry("reason", &reason)?;
        map.serialize_entry("shown", &shown)?;
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> Record {
        let text = r#"{
            "format": 1,
            "session_pid": 4242,
            "session_pid_source": "ancestor",
            "session_pid_verified": true,
            "owner_uid": 1000,
            "start_ticks": 870,
            "boot_id": "0f0e0d0c-0b0a-0908-0706-050403020100",
            "pid_ns": 4026531836,
            "time_ns": 4026531834,
            "user_ns": 4026531837,
            "harness": "claude-code",
            "agent": "wren",
            "session_id": "7c660e54-2e19-4577-b46a-16f46484eaf4",
            "socket": {"path": "/run/s.sock", "dev": 1, "ino": 2, "mtime_ns": 3},
            "cwd": "/home/dev/src/app",
            "registrar_pid": 4300,
            "registered_at": "2026-11-30T02:03:05.123456789Z",
            "refreshed_at": "2026-11-30T03:03:05.123456789+01:00"
        }"#;
        match parse_record(text.as_bytes(), Pid::new(4242).unwrap()) {
            Parsed::Record(record) => *record,
            other => panic!("{other:?}"),
        }
    }

    fn row(record: Option<Record>, problem: Option<Problem>) -> SessionRow {
        SessionRow {
            file_name: "4242.json".into(),
            path: PathBuf::from("/roster/sessions/4242.json"),
            pid: Pid::new(4242),
            registered_at: Timestamp::parse("2026-11-30T02:03:05.123456789Z").unwrap(),
            state: None,
            origin: Origin::Roster,
            messages_pending: 0,
            location_check: None,
            record,
            problem,
            verdict: Verdict { liveness: Liveness::Alive, reason: "pid 4242 running".into() },
        }
    }

    #[test]
    fn json_rows_carry_every_key_in_order_with_record_values_as_written() {
        let consent = RowConsent { state: "armed", should_arm: true, reason: "the session is armed" };
        let json = row(Some(record()), None).to_json(consent);
        let object = json.as_object().unwrap();
        assert_eq!(object.keys().map(String::as_str).collect::<Vec<_>>(), ROW_KEYS);
        let written = serde_json::to_value(record()).unwrap();
        for (key, value) in written.as_object().unwrap() {
            assert_eq!(&object[key], value, "{key}");
        }
        for absent in ["pidfs_ino", "harness_version", "transcript_path", "problem"] {
            assert_eq!(object[absent], serde_json::Value::Null, "{absent}");
        }
        assert_eq!(object["consent"], "armed");
        assert_eq!(object["should_arm"], true);
        assert_eq!(object["consent_reason"], "the session is armed");
        assert_eq!(object["liveness"], "alive");
        assert_eq!(object["path"], "/roster/sessions/4242.json");
    }

    #[test]
    fn problem_rows_carry_every_key_with_nulls_for_the_record() {
        let problem = Problem { kind: ProblemKind::Malformed, detail: "not JSON".into() };
        let json = row(None, Some(problem)).to_json(RowConsent::REMOVED);
        let object = json.as_object().unwrap();
        assert_eq!(object.keys().map(String::as_str).collect::<Vec<_>>(), ROW_KEYS);
        assert_eq!(object["problem"], "malformed");
        assert_eq!(object["session_pid"], 4242);
        assert_eq!(object["registered_at"], "2026-11-30T02:03:05.123456789Z");
        for absent in ["format", "boot_id", "cwd", "agent", "socket"] {
            assert_eq!(object[absent], serde_json::Value::Null, "{absent}");
        }
    }
}
