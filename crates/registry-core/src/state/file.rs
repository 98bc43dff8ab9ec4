//! The state file's format (docs/contract.md §3.2): one JSON object naming the
//! owner it describes, the activity, since when, what set it, and the
//! order of the last event applied. Read strictly: anything else is no
//! state at all, never a guess.

use harness::Activity;
use serde::{Deserialize, Serialize};

use crate::record::session_record::Record;
use crate::record::timestamp::Timestamp;

/// A session's state as a listing shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionState {
    pub activity: Activity,
    /// What a `waiting` session waits for (`permission`, `input`, or the
    /// harness's own word); `None` otherwise.
    pub waiting_for: Option<String>,
    /// When the activity last changed.
    pub since: Timestamp,
    /// The event that changed it: `<harness>:<event>`.
    pub source: String,
}

impl SessionState {
    /// The words of the `state` key for a row: the activity, or `unknown`
    /// when no event has said (or the owner is not alive).
    pub fn word(state: Option<&SessionState>) -> &'static str {
        state.map_or(UNKNOWN_STATE, |state| state.activity.as_str())
    }
}

/// The `state` of a row no event has described, or whose owner is not
/// known to be alive.
pub const UNKNOWN_STATE: &str = "unknown";

/// The state file format this roster writes and reads.
pub const STATE_FORMAT: u64 = 1;

/// The longest `waiting_for` and `state_source` a state file may hold.
const WAITING_FOR_LIMIT: usize = 64;
const SOURCE_LIMIT: usize = 128;

/// The keys of a state file, in file order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StateFile {
    pub format: u64,
    /// The owner the state describes: its pid and start ticks, as its
    /// record holds them.
    pub session_pid: u32,
    pub start_ticks: u64,
    pub state: String,
    pub waiting_for: Option<String>,
    pub state_since: String,
    pub state_source: String,
    /// When the last event applied was sent, and its place among the
    /// session's events: nanoseconds of the boot's clock
    /// (`CLOCK_BOOTTIME`), which never goes back within the boot the
    /// record's name holds. An event older than it changes nothing.
    pub last_event_at: String,
    pub last_event_order: u64,
}

impl StateFile {
    /// The file's bytes parsed and checked; `None` for anything roster
    /// would not have written.
    pub fn parse(bytes: &[u8]) -> Option<StateFile> {
        let file: StateFile = serde_json::from_slice(bytes).ok()?;
        let words_ok = |text: &str, limit: usize, extra: &[u8]| {
            !text.is_empty()
                && text.len() <= limit
                && text.bytes().all(|byte| byte.is_ascii_alphanumeric() || extra.contains(&byte))
        };
        let valid = file.format == STATE_FORMAT
            && Activity::parse(&file.state).is_some()
            && (Activity::parse(&file.state) == Some(Activity::Waiting)) == file.waiting_for.is_some()
            && file.waiting_for.as_deref().is_none_or(|word| words_ok(word, WAITING_FOR_LIMIT, b"_-"))
            && words_ok(&file.state_source, SOURCE_LIMIT, b"_-.:/")
            && Timestamp::parse(&file.state_since).is_some()
            && Timestamp::parse(&file.last_event_at).is_some();
        valid.then_some(file)
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = serde_json::to_vec(self).expect("state files serialize");
        bytes.push(b'\n');
        bytes
    }

    /// Whether the file describes `record`'s owner (and not an earlier
    /// owner of the same name).
    pub fn describes(&self, record: &Record) -> bool {
        self.session_pid == record.owner.pid.get() && self.start_ticks == record.owner.start_ticks.0
    }

    /// Whether the file describes the owner `pid` started at `start_ticks`.
    pub(crate) fn describes_owner(&self, pid: u32, start_ticks: u64) -> bool {
        self.session_pid == pid && self.start_ticks == start_ticks
    }

    pub fn into_state(self) -> SessionState {
        SessionState {
            activity: Activity::parse(&self.state).expect("checked when parsed"),
            waiting_for: self.waiting_for,
            since: Timestamp::parse(&self.state_since).expect("checked when parsed"),
            source: self.state_source,
        }
    }

    /// Whether `waiting_for` and `source` are words a state file may hold.
    pub(crate) fn accepts(waiting_for: Option<&str>, source: &str) -> bool {
        let probe = StateFile {
            format: STATE_FORMAT,
            session_pid: 1,
            start_ticks: 1,
            state: if waiting_for.is_some() { "waiting" } else { "working" }.to_owned(),
            waiting_for: waiting_for.map(str::to_owned),
            state_since: Timestamp::from_unix_nanos(0).to_string(),
            state_source: source.to_owned(),
            last_event_at: Timestamp::from_unix_nanos(0).to_string(),
            last_event_order: 0,
        };
        StateFile::parse(&probe.to_bytes()).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> StateFile {
        StateFile {
            format: STATE_FORMAT,
            session_pid: 4242,
            start_ticks: 870,
            state: "waiting".into(),
            waiting_for: Some("permission".into()),
            state_since: "2026-12-03T06:00:00.000000001Z".into(),
            state_source: "claude-code:PermissionRequest".into(),
            last_event_at: "2026-12-03T06:00:00.000000001Z".into(),
            last_event_order: 17,
        }
    }

    #[test]
    fn a_written_state_reads_back_the_same() {
        assert_eq!(StateFile::parse(&sample().to_bytes()), Some(sample()));
    }

    #[test]
    fn anything_roster_would_not_write_is_no_state() {
        type Change = fn(&mut StateFile);
        let cases: [(&str, Change); 8] = [
            ("newer format", |file| file.format = 2),
            ("unknown state", |file| file.state = "unknown".into()),
            ("waiting without what for", |file| file.waiting_for = None),
            ("working waiting for something", |file| file.state = "working".into()),
            ("control character", |file| file.waiting_for = Some("perm\u{1b}[2J".into())),
            ("overlong", |file| file.state_source = "x".repeat(SOURCE_LIMIT + 1)),
            ("empty source", |file| file.state_source = String::new()),
            ("bad time", |file| file.state_since = "yesterday".into()),
        ];
        for (what, change) in cases {
            let mut file = sample();
            change(&mut file);
            assert_eq!(StateFile::parse(&file.to_bytes()), None, "{what}");
        }
        assert_eq!(StateFile::parse(b"{\"format\":1}"), None);
        let mut extra = serde_json::to_value(sample()).unwrap();
        extra["surprise"] = 1.into();
        assert_eq!(StateFile::parse(extra.to_string().as_bytes()), None, "unknown key");
    }
}
