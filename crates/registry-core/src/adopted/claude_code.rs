//! Claude Code's own registry of live sessions, `~/.claude/sessions/<pid>.json`,
//! read as claims and judged by roster's verdict (docs/contract.md §6.5):
//! what the file says is the harness crate's
//! (`harness::session_files::claude_code`); here it is read as roster reads
//! its own files, the file's owner is its uid, and the claim is judged.
//! Read only: nothing here writes, locks, renames or removes.

use std::os::unix::fs::FileTypeExt;
use std::path::Path;

use harness::session_files::claude_code::{SESSION_FILE_STATE_SOURCE, SessionFile};
use owner_liveness::{Liveness, OwnerIdentity, Pid, SystemFacts, Verdict, judge_seeing_terminal};

use crate::record::LocationCheck;
use crate::record::session_record::{Record, SocketRecord};
use crate::record::timestamp::Timestamp;
use crate::record::values::{
    HarnessName, HarnessVersion, RecordedTime, SessionDirectoryPath, SessionId, SessionPidSource, SocketPath,
};
use crate::session_row::{Origin, ProblemKind, SessionRow};
use crate::state::SessionState;
use crate::store::directory::SubDir;
use crate::store::directory_entries::EntryKind;
use crate::store::files::read_entry_for_row;

/// The `session_pid_source` of an adopted row: the owner wrote its own pid.
pub const CLAUDE_CODE_FILE_SOURCE: &str = "claude-code-file";

/// What an adopted row's `file_name` starts with, so that it never shares a
/// name with a roster record (`claude-code/4711.json`, not `4711.json`).
pub const CLAUDE_CODE_ROW_PREFIX: &str = "claude-code/";

/// The session's state as its file says it.
fn state_of(file: &SessionFile) -> Option<SessionState> {
    let said = file.said_state()?;
    Some(SessionState {
        activity: said.activity,
        waiting_for: said.waiting_for,
        since: Timestamp::from_unix_nanos(i128::from(said.since_ms) * 1_000_000),
        source: SESSION_FILE_STATE_SOURCE.to_owned(),
    })
}

/// Why a file is not a session: the detail of its problem row.
type Rejection = String;

/// Reads and judges `name` in Claude Code's sessions directory; `None`
/// when the name is a dotfile or no longer exists.
pub fn read_adopted_row(directory: SubDir<'_>, name: &str, facts: &impl SystemFacts) -> Option<SessionRow> {
    read_listed_adopted_row(directory, name, EntryKind::Unknown, facts)
}

/// `read_adopted_row` for a name whose type the directory listing told.
pub(crate) fn read_listed_adopted_row(
    directory: SubDir<'_>,
    name: &str,
    listed_as: EntryKind,
    facts: &impl SystemFacts,
) -> Option<SessionRow> {
    if name.starts_with('.') {
        return None;
    }
    let path = directory.path().join(name);
    let file_pid = name.strip_suffix(".json").and_then(|stem| stem.parse::<u32>().ok()).and_then(Pid::new);
    let row_name = format!("{CLAUDE_CODE_ROW_PREFIX}{name}");
    let problem_row = |kind: ProblemKind, detail: String, mtime: Option<Timestamp>| {
        SessionRow::of_problem(
            row_name.clone(),
            path.clone(),
            file_pid,
            Origin::ClaudeCode,
            (kind, detail),
            mtime,
        )
    };
    let contents = match read_entry_for_row(directory, name, listed_as)? {
        Ok((read, _)) => read,
        Err(untrusted) => {
            return Some(problem_row(ProblemKind::Untrusted, untrusted.detail, untrusted.mtime));
        }
    };
    // Claude Code writes its file in place (open, write, truncate): one
    // still empty is being written, not a session yet.
    if contents.bytes.is_empty() {
        return None;
    }
    let Some(file_pid) = file_pid else {
        let detail = "name is not <pid>.json".to_owned();
        return Some(problem_row(ProblemKind::Malformed, detail, Some(contents.mtime)));
    };
    let file = match SessionFile::parse(&contents.bytes) {
        Ok(file) => file,
        Err(detail) => return Some(problem_row(ProblemKind::Malformed, detail, Some(contents.mtime))),
    };
    match adopt(&file, file_pid, crate::store::ownership::effective_uid(), facts) {
        Ok((record, verdict)) => Some(SessionRow {
            file_name: row_name,
            path,
            pid: Some(file_pid),
            registered_at: record.registered_at(),
            state: state_of(&file),
            // A terminal seen by the verdict a moment ago is not read again.
            location_check: record.location.as_ref().and_then(LocationCheck::of_terminal_seen_now),
            record: Some(record),
            problem: None,
            verdict,
            origin: Origin::ClaudeCode,
            messages_pending: 0,
        }),
        Err(detail) => Some(problem_row(ProblemKind::Malformed, detail, Some(contents.mtime))),
    }
}

/// The record a session file stands for, and its owner's verdict.
fn adopt(
    file: &SessionFile,
    file_pid: Pid,
    file_uid: u32,
    facts: &impl SystemFacts,
) -> Result<(Record, Verdict), Rejection> {
    if file.pid != file_pid.get() {
        return Err(format!("pid {} is not the file name's {file_pid}", file.pid));
    }
    let start_ticks = file.start_ticks()?;
    let (machine, pid_ns) = file.pid_domain()?;
    let session_id = SessionId::parse(&file.session_id).map_err(|error| error.to_string())?;
    let cwd = SessionDirectoryPath::parse(&file.cwd).map_err(|error| error.to_string())?;
    let harness_version = file.version.as_deref().and_then(|version| HarnessVersion::parse(version).ok());
    let started = Timestamp::from_unix_nanos(i128::from(file.started_at) * 1_000_000);
    let updated =
        file.updated_at.map_or(started, |ms| Timestamp::from_unix_nanos(i128::from(ms) * 1_000_000));
    let boot_id = facts.boot_id().map(|id| id.into_owned()).unwrap_or_default();
    let namespaces = facts.own_namespaces().ok();
    let identity = OwnerIdentity {
        pid: file_pid,
        uid: file_uid,
        start_ticks,
        pidfs_ino: None,
        boot_id,
        machine: Some(machine),
        pid_ns,
        time_ns: namespaces.map_or(0, |namespaces| namespaces.time_ns),
        // The file's owner is this reader's uid, read in the reader's own
        // user namespace (the file was trusted only as ours).
        user_ns: namespaces.map(|namespaces| namespaces.user_ns),
        chain: Vec::new(),
    };
    // A pid names a process only on its machine: another machine's file (a
    // shared home) is never judged from here.
    let on_this_machine = this_machine(&identity, facts);
    // The controlling terminal the verdict saw, for the location.
    let mut terminal = None;
    let verdict = match started_before_this_boot(started, facts) {
        _ if !on_this_machine => Verdict {
            liveness: Liveness::Unknown,
            reason: format!(
                "pid {file_pid} was recorded on another machine ({})",
                identity.machine.as_deref().unwrap_or_default()
            ),
        },
        Some(boot) => Verdict {
            liveness: Liveness::Dead,
            reason: format!(
                "pid {file_pid} started at {started}, before this boot began at {boot}; Claude Code removes its \
                 file, roster never does"
            ),
        },
        _ => {
            let seen = judge_seeing_terminal(&identity, None, facts);
            terminal = seen.terminal;
            seen.verdict
        }
    };
    let verdict = match verdict.liveness {
        Liveness::Dead if !verdict.reason.contains("Claude Code removes") => Verdict {
            liveness: Liveness::Dead,
            reason: format!("{}; Claude Code removes its file, roster never does", verdict.reason),
        },
        _ => verdict,
    };
    let socket = file.messaging_socket_path.as_deref().and_then(socket_now);
    let record = Record {
        format: 0,
        owner: (&identity).into(),
        session_pid_source: SessionPidSource::parse(CLAUDE_CODE_FILE_SOURCE).expect("a valid source"),
        session_pid_verified: true,
        harness: HarnessName::parse(harness::Harness::ClaudeCode.as_str()).expect("a valid harness name"),
        harness_version,
        agent: None,
        session_id: Some(session_id),
        transcript_path: None,
        socket,
        // Read only for a live session: a dead one shows nowhere.
        location: (verdict.liveness == Liveness::Alive)
            .then(|| crate::record::location_of_adopted(file_pid.get(), terminal))
            .flatten(),
        cwd,
        registrar_pid: 0,
        registered_at: RecordedTime::from(started),
        refreshed_at: RecordedTime::from(updated),
    };
    Ok((record, verdict))
}

/// When this boot began, if `started` is before it (with a second's slack
/// for the clock's rounding).
fn started_before_this_boot(started: Timestamp, facts: &impl SystemFacts) -> Option<Timestamp> {
    let boot = super::this_boot::this_boot_began(facts)?.unix_nanos();
    (started.unix_nanos() + 1_000_000_000 < boot).then(|| Timestamp::from_unix_nanos(boot))
}

fn this_machine(identity: &OwnerIdentity, facts: &impl SystemFacts) -> bool {
    facts.machine().is_ok_and(|machine| identity.machine.as_deref() == Some(machine.as_ref()))
}

/// The messaging socket as it is now, when `path` names one.
fn socket_now(path: &str) -> Option<SocketRecord> {
    use std::os::unix::fs::MetadataExt;
    let metadata = std::fs::symlink_metadata(Path::new(path)).ok()?;
    metadata.file_type().is_socket().then_some(())?;
    Some(SocketRecord {
        path: SocketPath::parse(path).ok()?,
        dev: metadata.dev(),
        ino: metadata.ino(),
        mtime_ns: metadata.mtime() * 1_000_000_000 + metadata.mtime_nsec(),
    })
}
