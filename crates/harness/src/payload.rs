//! Hook mode's input (docs/contract.md §8.2): reading a harness's hook payload from
//! stdin without ever hanging the harness, parsing the few keys roster
//! needs from each harness's dialect, and deciding which harness called.

use std::os::fd::BorrowedFd;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use owner_liveness::AncestorStep;
use serde_json::{Map, Value};

use crate::detect::{Harness, nearest_harness};
use crate::exports::{EnvLookup, harness_from_env};

/// The largest hook payload accepted (docs/contract.md §8.2).
pub const MAX_PAYLOAD_BYTES: usize = 1 << 20;

/// How long reading the payload may take in total (docs/contract.md §8.2).
pub const PAYLOAD_READ_DEADLINE: Duration = Duration::from_secs(2);

/// The value of `--hook`: which harness's payload to expect.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HookTarget {
    /// Recognise the harness from the payload, the ancestry, the env.
    Auto,
    /// The harness the hook configuration named; believed over all else.
    Named(Harness),
}

/// What one hook payload says. Every field is optional because each
/// harness sends a different subset (a Copilot payload has no event name,
/// an opencode `session.idle` event no directory).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HookPayload {
    /// The harness the payload itself reveals by a key only it sends:
    /// `cursor_version`, `conversation_id` or `workspace_roots` → Cursor,
    /// `sessionId` → Copilot, `working_dir` → Goose, an opencode plugin
    /// event → opencode. `None` for the shared Claude Code shape that
    /// Codex and Gemini CLI send too.
    pub harness: Option<Harness>,
    pub session_id: Option<String>,
    pub cwd: Option<PathBuf>,
    pub transcript_path: Option<String>,
    /// `hook_event_name` (`SessionStart`, …), `hookEventName`, or an
    /// opencode event's `type` (`session.created`).
    pub event: Option<String>,
    /// Why a session started (`startup`, `resume`, `new`, …).
    pub source: Option<String>,
    /// Why a session ended (`exit`, `other`, `complete`, …).
    pub reason: Option<String>,
    /// `cursor_version`, or the `version` of an opencode session.
    pub harness_version: Option<String>,
}

/// The session-end reason with which a harness (Claude Code) announces a
/// `/clear`: a new session in the same owner, not an ended owner.
const SESSION_END_REASON_CLEAR: &str = "clear";

impl HookPayload {
    /// Whether this session end ends only the conversation and not its
    /// owner (`/clear`): the session start that follows refreshes the same
    /// record with a new session id, so a session-end hook must leave the
    /// record (removing it in between would lose its `registered_at`).
    pub fn ends_only_the_conversation(&self) -> bool {
        self.reason.as_deref() == Some(SESSION_END_REASON_CLEAR)
    }
}

/// Why a hook payload could not be read or understood. Every kind is bad
/// input (exit 2, docs/contract.md §6); in hook mode it becomes one line of
/// `hook-errors.log`, so each message names what was wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PayloadError {
    #[error("stdin is a terminal, expected the hook payload; pipe the harness's JSON into the command")]
    Terminal,
    #[error("cannot read the hook payload from stdin: {0}")]
    Read(Errno),
    #[error("hook payload is over {}", describe_size(*max_bytes))]
    TooLarge { max_bytes: usize },
    #[error("no end of hook payload within {}; the writer kept stdin open", describe_duration(*deadline))]
    Deadline { deadline: Duration },
    #[error("hook payload is empty, expected a JSON object")]
    Empty,
    #[error("hook payload is not valid UTF-8 (byte {valid_up_to})")]
    NotUtf8 { valid_up_to: usize },
    #[error("hook payload is not valid JSON: {message}")]
    NotJson { message: String },
    #[error("hook payload is not a JSON object but {found}")]
    NotObject { found: &'static str },
    #[error("hook payload key `{key}` is {found}, expected {expected}")]
    WrongType { key: String, expected: &'static str, found: &'static str },
}

impl PayloadError {
    /// The exit code of a command that fails on this payload outside hook
    /// mode: bad input.
    pub fn exit_code(&self) -> i32 {
        2
    }
}

impl HookTarget {
    /// Parses `--hook`'s value: `auto`, a harness name as records spell it,
    /// or one of the short aliases `claude`, `gemini`, `cursor` (the names
    /// people type for those three).
    pub fn parse(text: &str) -> Option<HookTarget> {
        match text {
            "auto" => Some(HookTarget::Auto),
            "claude" => Some(HookTarget::Named(Harness::ClaudeCode)),
            "gemini" => Some(HookTarget::Named(Harness::GeminiCli)),
            "cursor" => Some(HookTarget::Named(Harness::CursorAgent)),
            name => Harness::parse(name).map(HookTarget::Named),
        }
    }
}

/// Whether `bytes` hold exactly one complete JSON object (with white space
/// around it).
fn is_whole_json_object(bytes: &[u8]) -> bool {
    let trimmed = bytes.trim_ascii();
    trimmed.first() == Some(&b'{')
        && trimmed.last() == Some(&b'}')
        && serde_json::from_slice::<serde::de::IgnoredAny>(trimmed).is_ok()
}

/// Reads a hook payload from `fd` until end of file.
///
/// Never blocks past `deadline` in total, even when the writer keeps the
/// pipe open and sends nothing: every read is preceded by a `poll` bounded
/// by the time left. Stops reading at `max_bytes + 1` bytes and refuses the
/// payload, so a runaway writer costs at most that much memory. A terminal
/// is refused at once: nobody is going to type the payload. Pipes, regular
/// files and `/dev/null` (an empty payload) all work.
pub fn read_payload(
    fd: BorrowedFd<'_>,
    max_bytes: usize,
    deadline: Duration,
) -> Result<Vec<u8>, PayloadError> {
    read_payload_within(fd, max_bytes, || deadline)
}

/// `read_payload`, asking how long it may wait (`deadline`, counted from
/// the call) only once the payload is not there whole at the first look:
/// a harness writes it before the hook runs, and in hook mode the answer
/// costs a read of `/proc`.
pub fn read_payload_within(
    fd: BorrowedFd<'_>,
    max_bytes: usize,
    deadline: impl FnOnce() -> Duration,
) -> Result<Vec<u8>, PayloadError> {
    let is_terminal = loop {
        match nix::unistd::isatty(fd) {
            Err(Errno::EINTR) => continue,
            other => break other.map_err(PayloadError::Read)?,
        }
    };
    if is_terminal {
        return Err(PayloadError::Terminal);
    }
    let started = Instant::now();
    let limit = max_bytes.saturating_add(1);
    let mut payload = Vec::new();
    let mut asked = Some(deadline);
    let mut deadline = None;
    let mut first_look = true;
    loop {
        // The first look does not wait; every later one waits what is left.
        let wait = if std::mem::take(&mut first_look) {
            Duration::ZERO
        } else {
            let deadline = *deadline.get_or_insert_with(|| asked.take().map_or(Duration::ZERO, |ask| ask()));
            let remaining = deadline.saturating_sub(started.elapsed());
            if remaining.is_zero() {
                return Err(PayloadError::Deadline { deadline });
            }
            remaining
        };
        let mut poll_fds = [PollFd::new(fd, PollFlags::POLLIN)];
        match poll(&mut poll_fds, poll_timeout(wait)) {
            Ok(0) if wait.is_zero() => continue,
            Ok(0) => return Err(PayloadError::Deadline { deadline: deadline.unwrap_or(wait) }),
            Ok(_) => {}
            Err(Errno::EINTR) => continue,
            Err(errno) => return Err(PayloadError::Read(errno)),
        }
        // POLLHUP and POLLERR also wake poll; the read below then reports
        // end of file or the error itself.
        if poll_fds[0].revents().is_some_and(|events| events.contains(PollFlags::POLLNVAL)) {
            return Err(PayloadError::Read(Errno::EBADF));
        }
        // Read straight into the payload's own room, grown with what came:
        // a 64 KiB buffer zeroed on every run cost sixteen page faults,
        // more than reading a usual payload of a few hundred bytes.
        let filled = payload.len();
        let room = filled.clamp(LEAST_READ_ROOM, MOST_READ_ROOM).min(limit - filled);
        payload.resize(filled + room, 0);
        let read = nix::unistd::read(fd, &mut payload[filled..]);
        payload.truncate(filled + read.as_ref().map_or(0, |count| *count));
        match read {
            Ok(0) => return Ok(payload),
            Ok(_) => {
                if payload.len() > max_bytes {
                    return Err(PayloadError::TooLarge { max_bytes });
                }
                // A harness that writes its payload and keeps stdin open
                // has said all it will: a whole JSON object is the end.
                if is_whole_json_object(&payload) {
                    return Ok(payload);
                }
            }
            // A non-blocking stdin can report readable and then have
            // nothing; poll again within the same deadline.
            Err(Errno::EINTR | Errno::EAGAIN) => continue,
            Err(errno) => return Err(PayloadError::Read(errno)),
        }
    }
}

/// The room one read of a payload is given grows with what came so far,
/// from the least (a usual payload, a session start's few hundred bytes,
/// fits in one page) to the most a pipe hands over at once.
pub(crate) const LEAST_READ_ROOM: usize = 4 * 1024;
pub(crate) const MOST_READ_ROOM: usize = 64 * 1024;

/// Parses a hook payload in any harness's dialect (docs/contract.md §8.2).
///
/// Unknown keys are ignored (harnesses add fields every release), missing
/// keys are fine, and `null` counts as missing. A known key of the wrong
/// type is an error naming the key, even when another key would have
/// supplied the value: a harness that changed a key's type has changed
/// its meaning too.
pub fn parse_payload(bytes: &[u8]) -> Result<HookPayload, PayloadError> {
    let text = std::str::from_utf8(bytes)
        .map_err(|error| PayloadError::NotUtf8 { valid_up_to: error.valid_up_to() })?;
    if text.trim().is_empty() {
        return Err(PayloadError::Empty);
    }
    let value: Value =
        serde_json::from_str(text).map_err(|error| PayloadError::NotJson { message: error.to_string() })?;
    let Value::Object(object) = value else {
        return Err(PayloadError::NotObject { found: json_kind(&value) });
    };
    if let Some(event) = opencode_plugin_event(&object)? {
        return Ok(event);
    }
    let keys = PayloadKeys { object: &object, prefix: "" };

    // Read every known key first so that a wrongly typed one is reported
    // even when an earlier alternative is present.
    let session_id = keys.string("session_id")?;
    let copilot_session_id = keys.string("sessionId")?;
    let cursor_conversation_id = keys.string("conversation_id")?;
    let cwd = keys.string("cwd")?;
    let goose_working_dir = keys.string("working_dir")?;
    let cursor_workspace_root = keys.first_string_of_array("workspace_roots")?;
    let transcript_path = keys.string("transcript_path")?;
    let copilot_transcript_path = keys.string("transcriptPath")?;
    let event = keys.string("hook_event_name")?;
    let camel_case_event = keys.string("hookEventName")?;
    let source = keys.string("source")?;
    let reason = keys.string("reason")?;
    let cursor_version = keys.string("cursor_version")?;

    let harness = if cursor_version.is_some()
        || cursor_conversation_id.is_some()
        || object.get("workspace_roots").is_some_and(|roots| !roots.is_null())
    {
        Some(Harness::CursorAgent)
    } else if copilot_session_id.is_some() {
        Some(Harness::Copilot)
    } else if goose_working_dir.is_some() {
        Some(Harness::Goose)
    } else {
        None
    };

    Ok(HookPayload {
        harness,
        // Cursor sends `session_id` on newer events and `conversation_id`
        // on all; they name the same conversation, and `session_id` is the
        // key it shares with the Claude Code hooks it also runs.
        session_id: session_id.or(copilot_session_id).or(cursor_conversation_id),
        cwd: cwd.or(goose_working_dir).or(cursor_workspace_root).map(PathBuf::from),
        transcript_path: transcript_path.or(copilot_transcript_path),
        event: event.or(camel_case_event),
        source,
        reason,
        harness_version: cursor_version,
    })
}

/// Which harness sent a hook: the named one; else (`auto`) what the
/// payload itself reveals (Cursor runs Claude Code's hooks too, but its
/// payload carries `cursor_version`), then the nearest harness process in
/// the ancestry, then the environment's weak hints.
pub fn detect_hook_harness(
    target: HookTarget,
    payload: &HookPayload,
    ancestry: &[AncestorStep],
    env: EnvLookup<'_>,
) -> Option<Harness> {
    match target {
        // Cursor runs Claude Code's hooks too: a claude-code hook whose
        // payload carries Cursor's keys was sent by Cursor.
        HookTarget::Named(Harness::ClaudeCode) if payload.harness == Some(Harness::CursorAgent) => {
            Some(Harness::CursorAgent)
        }
        HookTarget::Named(harness) => Some(harness),
        HookTarget::Auto => {
            payload.harness.or_else(|| nearest_harness(ancestry)).or_else(|| harness_from_env(env))
        }
    }
}

/// opencode has no shell hooks; a plugin forwards its bus events, which
/// look like `{"type": "session.created", "properties": {"sessionID": …,
/// "info": {"directory": …, "version": …}}}`. `None` when the payload is
/// not such an event.
fn opencode_plugin_event(object: &Map<String, Value>) -> Result<Option<HookPayload>, PayloadError> {
    let is_session_event =
        object.get("type").and_then(Value::as_str).is_some_and(|kind| kind.starts_with("session."))
            && object.get("properties").is_some_and(Value::is_object)
            && !object.contains_key("hook_event_name");
    if !is_session_event {
        return Ok(None);
    }
    let keys = PayloadKeys { object, prefix: "" };
    let Some(properties) = keys.object("properties")? else { return Ok(None) };
    let properties = PayloadKeys { object: properties, prefix: "properties." };
    let info =
        properties.object("info")?.map(|info| PayloadKeys { object: info, prefix: "properties.info." });
    let info_session_id = match &info {
        Some(info) => info.string("id")?,
        None => None,
    };
    let (directory, version) = match &info {
        Some(info) => (info.string("directory")?, info.string("version")?),
        None => (None, None),
    };
    Ok(Some(HookPayload {
        harness: Some(Harness::Opencode),
        session_id: properties.string("sessionID")?.or(info_session_id),
        cwd: directory.map(PathBuf::from),
        transcript_path: None,
        event: keys.string("type")?,
        source: None,
        reason: None,
        harness_version: version,
    }))
}

/// Typed access to one JSON object's keys; `prefix` makes error messages
/// name nested keys in full (`properties.info.directory`).
struct PayloadKeys<'a> {
    object: &'a Map<String, Value>,
    prefix: &'static str,
}

impl<'a> PayloadKeys<'a> {
    fn string(&self, key: &str) -> Result<Option<String>, PayloadError> {
        match self.object.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => Ok(Some(text.clone())),
            Some(other) => Err(self.wrong_type(key, "a string", other)),
        }
    }

    fn object(&self, key: &str) -> Result<Option<&'a Map<String, Value>>, PayloadError> {
        match self.object.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Object(object)) => Ok(Some(object)),
            Some(other) => Err(self.wrong_type(key, "an object", other)),
        }
    }

    /// The first entry of an array of strings (`workspace_roots[0]`).
    fn first_string_of_array(&self, key: &str) -> Result<Option<String>, PayloadError> {
        match self.object.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Array(entries)) => match entries.first() {
                None => Ok(None),
                Some(Value::String(text)) => Ok(Some(text.clone())),
                Some(other) => Err(self.wrong_type(&format!("{key}[0]"), "a string", other)),
            },
            Some(other) => Err(self.wrong_type(key, "an array of strings", other)),
        }
    }

    fn wrong_type(&self, key: &str, expected: &'static str, found: &Value) -> PayloadError {
        PayloadError::WrongType { key: format!("{}{key}", self.prefix), expected, found: json_kind(found) }
    }
}

/// How a JSON value's kind reads in a message: "a string", "null".
pub(crate) fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Rounds up to whole milliseconds so a poll never wakes just before the
/// deadline and spins; saturates far beyond any sane deadline.
fn poll_timeout(remaining: Duration) -> PollTimeout {
    let milliseconds = remaining.as_nanos().div_ceil(1_000_000);
    PollTimeout::try_from(milliseconds).unwrap_or(PollTimeout::MAX)
}

/// `1 MiB`, `64 KiB` or `1000 bytes`, as a message would say it.
fn describe_size(bytes: usize) -> String {
    const KIB: usize = 1 << 10;
    const MIB: usize = 1 << 20;
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else if bytes >= KIB && bytes.is_multiple_of(KIB) {
        format!("{} KiB", bytes / KIB)
    } else {
        format!("{bytes} bytes")
    }
}

/// `2 s` or `200 ms`, as a message would say it.
fn describe_duration(duration: Duration) -> String {
    if duration.subsec_nanos() == 0 {
        format!("{} s", duration.as_secs())
    } else {
        format!("{} ms", duration.as_millis())
    }
}

#[cfg(test)]
mod tests {

    /// A `/clear` ends the conversation, not the owner: the session-end
    /// hook must leave the record for the session start that follows.
    #[test]
    fn a_clear_ends_only_the_conversation() {
        let clear =
            parse_payload(br#"{"session_id":"a","hook_event_name":"SessionEnd","reason":"clear"}"#).unwrap();
        assert!(clear.ends_only_the_conversation());
        for other in [r#"{"reason":"exit"}"#, r#"{"reason":"logout"}"#, r#"{"session_id":"a"}"#] {
            assert!(!parse_payload(other.as_bytes()).unwrap().ends_only_the_conversation(), "{other}");
        }
    }

    use super::*;

    #[test]
    fn messages_say_sizes_and_durations_as_people_do() {
        assert_eq!(
            PayloadError::TooLarge { max_bytes: MAX_PAYLOAD_BYTES }.to_string(),
            "hook payload is over 1 MiB"
        );
        assert_eq!(
            PayloadError::TooLarge { max_bytes: 64 * 1024 }.to_string(),
            "hook payload is over 64 KiB"
        );
        assert_eq!(PayloadError::TooLarge { max_bytes: 1000 }.to_string(), "hook payload is over 1000 bytes");
        assert_eq!(
            PayloadError::Deadline { deadline: PAYLOAD_READ_DEADLINE }.to_string(),
            "no end of hook payload within 2 s; the writer kept stdin open"
        );
        assert_eq!(
            PayloadError::Deadline { deadline: Duration::from_millis(200) }.to_string(),
            "no end of hook payload within 200 ms; the writer kept stdin open"
        );
    }

    #[test]
    fn poll_timeouts_round_up() {
        assert_eq!(i32::from(poll_timeout(Duration::from_nanos(1))), 1);
        assert_eq!(i32::from(poll_timeout(Duration::from_millis(200))), 200);
        assert_eq!(i32::from(poll_timeout(Duration::from_secs(u64::MAX))), i32::MAX);
    }
}
