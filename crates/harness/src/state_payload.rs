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
/// `deadline` tells (counted from the call), asked only once something is
/// not there at the first look. `Ok(None)` when it was larger than
/// `MAX_STATE_PAYLOAD_BYTES` (read to the end all the same, and dropped).
pub fn read_state_payload(
    fd: BorrowedFd<'_>,
    deadline: impl FnOnce() -> Duration,
) -> Result<Option<Vec<u8>>, PayloadError> {
    if nix::unistd::isatty(fd).unwrap_or(false) {
        return Err(PayloadError::Terminal);
    }
    let started = Instant::now();
    let mut payload = Vec::with_capacity(FIRST_CAPACITY);
    let mut overflowed = false;
    let mut asked = Some(deadline);
    let mut deadline = None;
    // Every look first does not wait: a harness writes the payload and
    // closes the pipe before the hook gets far, so the wait allowed (in
    // hook mode a read of `/proc`) is asked only when something is not
    // there yet.
    let mut wait = Duration::ZERO;
    loop {
        let mut poll_fds = [PollFd::new(fd, PollFlags::POLLIN)];
        let timeout = PollTimeout::try_from(wait).unwrap_or(PollTimeout::MAX);
        match poll(&mut poll_fds, timeout) {
            Ok(0) => {
                let deadline =
                    *deadline.get_or_insert_with(|| asked.take().map_or(Duration::ZERO, |ask| ask()));
                wait = deadline.saturating_sub(started.elapsed());
                if wait.is_zero() {
                    return Err(PayloadError::Deadline { deadline });
                }
                continue;
            }
            Ok(_) => wait = Duration::ZERO,
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
            let read = read_state_payload(reader.as_fd(), || Duration::from_secs(30)).unwrap();
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
}
