//! Rows made up for the unit tests of the event logic: a record as
//! roster writes it, read by roster's reader, with the verdict a test
//! chooses instead of one judged against the running system.

use std::path::PathBuf;

use harness::Activity;
use owner_liveness::{Liveness, Pid, Verdict};
use registry_core::state::SessionState;
use registry_core::{Origin, Parsed, Record, SessionRow, Timestamp};

/// The record of owner `pid`, started at `start_ticks`, named `agent`.
pub(crate) fn record_of(pid: u32, start_ticks: u64, agent: &str) -> Record {
    let text = format!(
        r#"{{"format":1,"session_pid":{pid},"session_pid_source":"ancestor","session_pid_verified":true,
        "owner_uid":1000,"start_ticks":{start_ticks},"pidfs_ino":12345,
        "boot_id":"0f0e0d0c-0b0a-0908-0706-050403020100","pid_ns":4026531836,"time_ns":4026531834,
        "user_ns":4026531837,"machine":"machine-id:3d1219c7c4c5404aaa1f6d2a48adfda4","harness":"claude-code",
        "harness_version":"2.1.328","agent":"{agent}","session_id":"7c660e54-2e19-4577-b46a-16f46484eaf4",
        "transcript_path":null,"socket":null,"location":null,"cwd":"/home/dev/src/app","registrar_pid":4300,
        "registered_at":"2026-11-30T02:03:05.123456789Z","refreshed_at":"2026-11-30T02:03:05.123456789Z"}}"#
    );
    let pid = Pid::new(pid).expect("a pid");
    match registry_core::parse_record_by_serde(text.as_bytes(), pid) {
        Parsed::Record(record) => *record,
        other => panic!("the made-up record does not parse: {other:?}"),
    }
}

/// The row of `record`, judged `liveness`.
pub(crate) fn row_of(record: Record, liveness: Liveness) -> SessionRow {
    let file_name = format!("{}.json", record.owner.pid);
    SessionRow {
        path: PathBuf::from("/roster/sessions").join(&file_name),
        file_name,
        pid: Some(record.owner.pid),
        registered_at: Timestamp::from_unix_nanos(0),
        record: Some(record),
        problem: None,
        verdict: Verdict { liveness, reason: "made up".to_owned() },
        state: None,
        origin: Origin::Roster,
        messages_pending: 0,
        location_check: None,
    }
}

/// A state of `activity`, said by a made-up event.
pub(crate) fn state(activity: Activity) -> SessionState {
    SessionState {
        activity,
        waiting_for: None,
        since: Timestamp::from_unix_nanos(0),
        source: "claude-code:Stop".to_owned(),
    }
}
