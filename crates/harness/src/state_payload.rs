//! The payload of a state event (docs/contract.md §8.2): the few keys the state hook
//! needs — the session id, the event's name and its kind — read from
//! payloads that may carry a whole tool's output. The bytes are read to
//! the end (so the harness never writes into a closed pipe) and parsed
//! once, with every other value skipped unread.

use std::borrow::Cow;
use std::os::fd::BorrowedFd;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use serde::Deserialize;

use crate::payload::{LEAST_READ_ROOM, MOST_READ_ROOM, PayloadError};

/// The most bytes of a state event's payload kept: a tool's output can be
/// large, the keys roster needs come in the first few hundred bytes. A
/// larger payload is read to its end and dropped, and the event is then
/// matched to its session by the process tree alone.
pub const MAX_STATE_PAYLOAD_BYTES: usize = 16 << 20;

/// What a state event's payload says.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StatePayload {
    pub session_id: Option<String>,
    /// `hook_event_name`, `hookEventName`, or a plugin event's `type`.
    pub event: Option<String>,
    /// The kind of the event, where it has kinds: `notification_type`, or
    /// an opencode `session.status` event's `properties.status.type`.
    pub kind: Option<String>,
    /// Whether a stop hook already made this turn go on (`stop_hook_active`
    /// in Claude Code's, Codex's and Gemini CLI's turn-end payloads,
    /// `stopHookActive` where a harness writes camel case): a turn-end
    /// delivery then blocks nothing, so a turn is made to go on once.
    pub stop_hook_active: bool,
}

#[derive(Deserialize)]
struct Keys<'a> {
    #[serde(borrow, default)]
    session_id: Option<Cow<'a, str>>,
    #[serde(borrow, default, rename = "sessionId")]
    camel_session_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    conversation_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    hook_event_name: Option<Cow<'a, str>>,
    #[serde(borrow, default, rename = "hookEventName")]
    camel_event: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    notification_type: Option<Cow<'a, str>>,
    #[serde(borrow, default, rename = "type")]
    plugin_event: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    properties: Option<PluginProperties<'a>>,
    #[serde(default)]
    stop_hook_active: Option<bool>,
    #[serde(default, rename = "stopHookActive")]
    camel_stop_hook_active: Option<bool>,
}

#[derive(Deserialize)]
struct PluginProperties<'a> {
    #[serde(borrow, default, rename = "sessionID")]
    session_id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    status: Option<PluginStatus<'a>>,
}

#[derive(Deserialize)]
struct PluginStatus<'a> {
    #[serde(borrow, default, rename = "type")]
    kind: Option<Cow<'a, str>>,
}

/// Parses a state event's payload: unknown keys skipped, `null` as
/// missing, a known key of another type an error naming it.
pub fn parse_state_payload(bytes: &[u8]) -> Result<StatePayload, PayloadError> {
    if bytes.trim_ascii().is_empty() {
        return Err(PayloadError::Empty);
    }
    // serde would read an array into the keys' struct by position: a
    // payload is an object, nothing else.
    if bytes.trim_ascii_start().first() != Some(&b'{') {
        return Err(match serde_json::from_slice::<serde::de::IgnoredAny>(bytes) {
            Ok(_) => PayloadError::NotObject { found: "another JSON value" },
            Err(error) => PayloadError::NotJson { message: error.to_string() },
        });
    }
    let keys: Keys<'_> = serde_json::from_slice(bytes).map_err(|error| {
        if error.is_data() && bytes.trim_ascii_start().first() != Some(&b'{') {
            PayloadError::NotObject { found: "another JSON value" }
        } else {
            PayloadError::NotJson { message: error.to_string() }
        }
    })?;
    let owned = |text: Option<Cow<'_, str>>| text.map(Cow::into_owned).filter(|text| !text.is_empty());
    let properties = keys.properties;
    let (plugin_session, plugin_kind) = match properties {
        Some(properties) => (properties.session_id, properties.status.and_then(|status| status.kind)),
        None => (None, None),
    };
    Ok(StatePayload {
        session_id: owned(keys.session_id)
            .or_else(|| owned(keys.camel_session_id))
            .or_else(|| owned(keys.conversation_id))
            .or_else(|| owned(plugin_session)),
        event: owned(keys.hook_event_name)
            .or_else(|| owned(keys.camel_event))
            .or_else(|| owned(keys.plugin_event)),
        kind: owned(keys.notification_type).or_else(|| owned(plugin_kind)),
        stop_hook_active: keys.stop_hook_active.or(keys.camel_stop_hook_active).unwrap_or(false),
    })
}

/// Reads a state event's payload from `fd` to its end, within the wait
/// allowed: at least `least` (known without measuring anything), exactly
/// what `exact` tells, counted from when it is asked, which is asked only
/// once `least` has run out (in hook mode it costs a read of `/proc`; a
/// harness writes the payload and closes the pipe long before). The time
/// is checked before every read, so a writer that never stops ends at the
/// deadline too. `Ok(None)` when it was larger than
/// `MAX_STATE_PAYLOAD_BYTES` (read to the end all the same, and dropped).
pub fn read_state_payload(
    fd: BorrowedFd<'_>,
    least: Duration,
    exact: impl FnOnce() -> Duration,
) -> Result<Option<Vec<u8>>, PayloadError> {
    if nix::unistd::isatty(fd).unwrap_or(false) {
        return Err(PayloadError::Terminal);
    }
    let mut wait = PayloadWait::starting_now(least, exact);
    let mut payload = Vec::with_capacity(FIRST_CAPACITY);
    let mut overflowed = false;
    // Each look first does not wait; one that finds nothing waits what is
    // left.
    let mut look = Duration::ZERO;
    loop {
        if wait.left().is_zero() {
            return Err(PayloadError::Deadline { deadline: wait.allowed() });
        }
        let mut poll_fds = [PollFd::new(fd, PollFlags::POLLIN)];
        let timeout = PollTimeout::try_from(look).unwrap_or(PollTimeout::MAX);
        match poll(&mut poll_fds, timeout) {
            Ok(0) => {
                look = wait.left();
                continue;
            }
            Ok(_) => look = Duration::ZERO,
            Err(Errno::EINTR) => continue,
            Err(errno) => return Err(PayloadError::Read(errno)),
        }
        // Read straight into the payload's own room: a separate buffer the
        // size of the largest read was zeroed on every run, and its pages
        // cost more than reading a usual payload does.
        let filled = payload.len();
        let room = if overflowed { MOST_READ_ROOM } else { filled.clamp(LEAST_READ_ROOM, MOST_READ_ROOM) };
        payload.resize(filled + room, 0);
        let read = nix::unistd::read(fd, &mut payload[filled..]);
        payload.truncate(filled + read.as_ref().map_or(0, |count| *count));
        match read {
            Ok(0) => return Ok((!overflowed).then_some(payload)),
            Ok(_) if overflowed || payload.len() > MAX_STATE_PAYLOAD_BYTES => {
                overflowed = true;
                payload = Vec::new();
            }
            Ok(_) => {}
            Err(Errno::EINTR | Errno::EAGAIN) => continue,
            Err(errno) => return Err(PayloadError::Read(errno)),
        }
    }
}

/// How long a payload may still be waited for: until `least` from the
/// start without asking, then until what `exact` tells (asked once).
struct PayloadWait<Exact> {
    started: Instant,
    least_ends: Instant,
    exact: Option<Exact>,
    ends: Option<Instant>,
}

impl<Exact: FnOnce() -> Duration> PayloadWait<Exact> {
    fn starting_now(least: Duration, exact: Exact) -> PayloadWait<Exact> {
        let started = Instant::now();
        PayloadWait { started, least_ends: started + least, exact: Some(exact), ends: None }
    }

    /// The time left now; zero once it has run out.
    fn left(&mut self) -> Duration {
        let now = Instant::now();
        if now < self.least_ends {
            return self.least_ends - now;
        }
        let ends =
            *self.ends.get_or_insert_with(|| now + self.exact.take().map_or(Duration::ZERO, |ask| ask()));
        ends.saturating_duration_since(now)
    }

    /// The whole wait allowed, as far as it is known.
    fn allowed(&self) -> Duration {
        self.ends.unwrap_or(self.least_ends).saturating_duration_since(self.started)
    }
}

/// The payload buffer's first size: most payloads fit, and the end of
/// file is read into what is left of it.
const FIRST_CAPACITY: usize = 16 * 1024;

#[cfg(test)]
mod tests {
    use super::*;

    /// The reader fills the payload's own room read by read: whatever the
    /// size, the bytes come back whole, and a payload over the limit is
    /// read to its end and dropped.
    #[test]
    fn a_payload_comes_back_whole_across_reads_and_one_too_large_is_dropped() {
        use std::io::Write;
        use std::os::fd::AsFd;
        for size in [0, 3_000, 200_000, MAX_STATE_PAYLOAD_BYTES + 1] {
            let bytes: Vec<u8> = (0..size).map(|index| (index % 251) as u8).collect();
            let (reader, writer) = nix::unistd::pipe().unwrap();
            let sent = bytes.clone();
            let feeder = std::thread::spawn(move || std::fs::File::from(writer).write_all(&sent).unwrap());
            let read =
                read_state_payload(reader.as_fd(), Duration::from_secs(30), || Duration::from_secs(30))
                    .unwrap();
            feeder.join().unwrap();
            let expected = (size <= MAX_STATE_PAYLOAD_BYTES).then_some(bytes);
            assert!(read == expected, "{size} bytes");
        }
    }

    #[test]
    fn the_keys_of_each_dialect_are_found_and_the_rest_skipped() {
        let claude = br#"{"session_id":"s-1","hook_event_name":"Notification","notification_type":"permission_prompt","tool_response":{"stdout":"x"}}"#;
        let parsed = parse_state_payload(claude).unwrap();
        assert_eq!(parsed.session_id.as_deref(), Some("s-1"));
        assert_eq!(parsed.event.as_deref(), Some("Notification"));
        assert_eq!(parsed.kind.as_deref(), Some("permission_prompt"));
        let copilot = br#"{"sessionId":"c-2","timestamp":1,"toolName":"bash"}"#;
        assert_eq!(parse_state_payload(copilot).unwrap().session_id.as_deref(), Some("c-2"));
        let opencode =
            br#"{"type":"session.status","properties":{"sessionID":"ses_3","status":{"type":"busy"}}}"#;
        let parsed = parse_state_payload(opencode).unwrap();
        assert_eq!(
            (parsed.session_id.as_deref(), parsed.event.as_deref(), parsed.kind.as_deref()),
            (Some("ses_3"), Some("session.status"), Some("busy"))
        );
    }

    #[test]
    fn nulls_and_empty_values_are_missing_and_wrong_types_are_errors() {
        let parsed = parse_state_payload(br#"{"session_id":null,"hook_event_name":""}"#).unwrap();
        assert_eq!(parsed, StatePayload::default());
        assert!(matches!(parse_state_payload(br#"{"session_id":7}"#), Err(PayloadError::NotJson { .. })));
        assert!(matches!(parse_state_payload(b"[1]"), Err(PayloadError::NotObject { .. })));
        assert_eq!(parse_state_payload(b"  "), Err(PayloadError::Empty));
    }

    /// A stdin that never runs dry (`/dev/zero`, or any writer faster than
    /// the reader) still ends at the deadline: the time is checked before
    /// every read, not only when nothing is there.
    #[test]
    fn an_endless_payload_ends_at_the_deadline() {
        use std::os::fd::AsFd;
        let (done, finished) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let zero = std::fs::File::open("/dev/zero").unwrap();
            let started = Instant::now();
            let result =
                read_state_payload(zero.as_fd(), Duration::from_millis(100), || Duration::from_millis(100));
            let _ = done.send((matches!(result, Err(PayloadError::Deadline { .. })), started.elapsed()));
        });
        let (at_deadline, took) =
            finished.recv_timeout(Duration::from_secs(10)).expect("still reading after 10 s");
        assert!(at_deadline, "an endless payload did not end at its deadline");
        assert!(took < Duration::from_secs(5), "took {took:?} for a deadline of 200 ms at most");
    }

    /// A payload written whole and its pipe closed is read without asking
    /// for the exact wait (in hook mode a read of `/proc`); one that keeps
    /// the pipe open with nothing more waits past the least wait, asks
    /// once, and ends at what it was told.
    #[test]
    fn the_exact_wait_is_asked_only_once_the_least_has_run_out() {
        use std::io::Write;
        use std::os::fd::AsFd;
        let asked = std::cell::Cell::new(0);
        let exact = || {
            asked.set(asked.get() + 1);
            Duration::from_millis(150)
        };
        let (reader, writer) = nix::unistd::pipe().unwrap();
        std::fs::File::from(writer).write_all(b"{\"session_id\":\"s\"}").unwrap();
        let read = read_state_payload(reader.as_fd(), Duration::from_millis(50), exact).unwrap();
        assert_eq!(read.as_deref(), Some(&b"{\"session_id\":\"s\"}"[..]));
        assert_eq!(asked.get(), 0, "asked for the exact wait with nothing to wait for");

        let (reader, writer) = nix::unistd::pipe().unwrap();
        let started = Instant::now();
        let result = read_state_payload(reader.as_fd(), Duration::from_millis(50), exact);
        let took = started.elapsed();
        drop(writer);
        assert!(matches!(result, Err(PayloadError::Deadline { .. })), "{result:?}");
        assert_eq!(asked.get(), 1);
        assert!(took >= Duration::from_millis(150), "ended after {took:?}, before the exact wait");
    }
}
