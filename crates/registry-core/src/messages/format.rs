//! The message file's format (docs/contract.md §6.6): one JSON object per
//! queued message, naming whom it is for, who sent it, its text, when it
//! was queued and expires, and, once settled, its outcome. Also the file
//! names (`<seq>-<id>.json` while pending, `<seq>-<id>.done.json` once
//! settled) and the bounds of a message's text. Read strictly: anything
//! roster would not have written is no message at all, and never
//! delivered.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::record::name::RecordName;
use crate::record::session_record::Record;
use crate::record::timestamp::Timestamp;

/// The message file format this roster writes. Format 1 (before a
/// recipient said how it was addressed) is read as addressed by pid.
pub const MESSAGE_FORMAT: u64 = 2;
/// The earlier format still read.
const MESSAGE_FORMAT_BEFORE_ADDRESSES: u64 = 1;
/// The most bytes of UTF-8 a message's text may hold, after normalisation.
pub const MAX_TEXT_BYTES: usize = 16 * 1024;
/// The most messages a session's queue holds pending; one more is refused.
pub const MAX_PENDING: usize = 64;
/// The most settled messages kept per session for `--status`; older ones
/// are removed when a new message is queued.
pub const MAX_SETTLED: usize = 256;
/// How long a message waits for delivery unless the sender says otherwise.
pub const DEFAULT_TIME_TO_LIVE: Duration = Duration::from_secs(3600);

/// The reason a message for an earlier owner of its record's name (or a
/// session that ended while it waited) is expired with.
pub const SESSION_ENDED: &str = "its session ended";
/// The reason a message whose time to live ran out is expired with.
pub const TIME_TO_LIVE_RAN_OUT: &str = "its time to live ran out";
/// The reason a message sent to a conversation by its session id is
/// expired with when the session now runs another one (`/clear`, a
/// resume): it is never handed to a conversation it was not sent to.
pub const CONVERSATION_ENDED: &str = "its conversation ended: the session now runs another one (a /clear or a resume), and a message sent \
     to a session id goes only to that conversation";
/// The reason a claimed message is settled with when the hook that
/// claimed it stopped before confirming the hand-over.
pub const HANDOVER_UNCONFIRMED: &str = "the delivery hook stopped before it could confirm that its harness \
     took the message (killed, or out of time); it is never handed over again";

/// The suffix of a pending message's file name.
const PENDING_SUFFIX: &str = ".json";
/// The suffix of a settled message's file name.
const SETTLED_SUFFIX: &str = ".done.json";
/// The suffix of a message a delivery hook has claimed and is handing
/// over (renamed from its pending name under the queue's lock).
const CLAIMED_SUFFIX: &str = ".claimed.json";
/// The longest sender field kept (agent names are 64 characters, session
/// ids 128 bytes, harness names 32 bytes in a record).
const SENDER_FIELD_LIMIT: usize = 256;
/// The longest outcome reason or event kept.
const OUTCOME_FIELD_LIMIT: usize = 1024;

/// A message's id: 32 lowercase hexadecimal digits from the kernel's
/// random source.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MessageId(String);

impl MessageId {
    /// A new id, from `/dev/urandom`.
    pub fn random() -> std::io::Result<MessageId> {
        use std::io::Read;
        let mut bytes = [0u8; 16];
        owner_liveness::retry_interrupted(|| std::fs::File::open("/dev/urandom"))?.read_exact(&mut bytes)?;
        Ok(MessageId(bytes.iter().map(|byte| format!("{byte:02x}")).collect()))
    }

    /// `text` when it is an id: 32 lowercase hexadecimal digits.
    pub fn parse(text: &str) -> Option<MessageId> {
        let valid = text.len() == 32 && text.bytes().all(|byte| matches!(byte, b'0'..=b'9' | b'a'..=b'f'));
        valid.then(|| MessageId(text.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for MessageId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A message's text, normalised and within its bounds: CRLF line ends
/// become LF, trailing line ends and blanks are dropped, and what is left
/// is not empty, at most `MAX_TEXT_BYTES` bytes, and holds no control
/// character but newline and tab.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MessageText(String);

/// Why a text cannot be a message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TextProblem {
    Empty,
    TooLong { bytes: usize },
    ControlCharacter { character: char, line: usize, column: usize },
}

impl std::fmt::Display for TextProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TextProblem::Empty => f.write_str("the message is empty; give the text to send"),
            TextProblem::TooLong { bytes } => write!(
                f,
                "the message is {bytes} bytes, over the {} KiB limit; send a shorter one, or a path to a file \
                 that holds the rest",
                MAX_TEXT_BYTES / 1024
            ),
            TextProblem::ControlCharacter { character, line, column } => write!(
                f,
                "the message holds the control character U+{:04X} at line {line}, column {column}; only \
                 newline and tab are allowed, so remove it",
                u32::from(*character)
            ),
        }
    }
}

impl std::error::Error for TextProblem {}

impl MessageText {
    /// `raw` normalised and checked.
    pub fn new(raw: &str) -> Result<MessageText, TextProblem> {
        let normalised = raw.replace("\r\n", "\n");
        let normalised = normalised.trim_end_matches([' ', '\t', '\n']);
        if normalised.trim().is_empty() {
            return Err(TextProblem::Empty);
        }
        for (index, line) in normalised.split('\n').enumerate() {
            if let Some((column, character)) =
                line.chars().enumerate().find(|(_, character)| character.is_control() && *character != '\t')
            {
                return Err(TextProblem::ControlCharacter { character, line: index + 1, column: column + 1 });
            }
        }
        if normalised.len() > MAX_TEXT_BYTES {
            return Err(TextProblem::TooLong { bytes: normalised.len() });
        }
        Ok(MessageText(normalised.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Whom a message is for: the session's record by name, and its owner as
/// the record named it when the message was queued. Only that very owner
/// is ever given it, and, when it was sent to a session id, only while
/// the owner runs that conversation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Recipient {
    /// The record's file name without `.json`: `<pid>@<world>`.
    pub record: String,
    pub pid: u32,
    pub start_ticks: u64,
    pub session_id: Option<String>,
    /// How the sender named the session: by its owner's pid (whichever
    /// conversation that process runs) or by a session id (that
    /// conversation only). Absent in format 1: by pid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub addressed_by: Option<AddressedBy>,
}

/// How a message's sender named its session.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AddressedBy {
    /// The owner's pid: whatever conversation the process runs gets it.
    Pid,
    /// A session id: only that conversation gets it.
    SessionId,
}

/// Who sent a message, as the sender found itself: its session's owner
/// and what its record says, or a process that runs in no session.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sender {
    pub pid: u32,
    pub agent: Option<String>,
    pub harness: Option<String>,
    pub session_id: Option<String>,
}

impl Recipient {
    /// The session of the record `record_file_name` (`record`): its owner
    /// as the record names it.
    pub fn of_record(record_file_name: &str, record: &Record, addressed_by: AddressedBy) -> Recipient {
        Recipient {
            record: record_file_name.strip_suffix(".json").unwrap_or(record_file_name).to_owned(),
            pid: record.owner.pid.get(),
            start_ticks: record.owner.start_ticks.0,
            session_id: record.session_id.as_ref().map(|id| id.as_str().to_owned()),
            addressed_by: Some(addressed_by),
        }
    }

    /// The conversation this message may go to only: the session id it
    /// was sent to, when it was sent to one.
    pub fn conversation(&self) -> Option<&str> {
        match self.addressed_by {
            Some(AddressedBy::SessionId) => self.session_id.as_deref(),
            Some(AddressedBy::Pid) | None => None,
        }
    }
}

impl Sender {
    /// A sender in the session of `record`: its owner, agent, harness and
    /// session id.
    pub fn of_record(record: &Record) -> Sender {
        Sender {
            pid: record.owner.pid.get(),
            agent: record.agent.as_ref().map(|agent| agent.as_str().to_owned()),
            harness: Some(record.harness.as_str().to_owned()).filter(|harness| !harness.is_empty()),
            session_id: record.session_id.as_ref().map(|id| id.as_str().to_owned()),
        }
    }

    /// A sender in no session roster knows: a process, named by its pid.
    pub fn of_process(pid: u32) -> Sender {
        Sender { pid, agent: None, harness: None, session_id: None }
    }
}

/// How a message was settled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OutcomeKind {
    /// Handed to the session by its delivery hook.
    Delivered,
    /// Not delivered in time, or its session ended first.
    Expired,
    /// The session did not accept messages when it came to deliver it.
    Refused,
    /// Claimed by a delivery hook that stopped before it confirmed the
    /// hand-over: its harness may or may not have it, and it is never
    /// handed over again.
    Unconfirmed,
}

impl OutcomeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            OutcomeKind::Delivered => "delivered",
            OutcomeKind::Expired => "expired",
            OutcomeKind::Refused => "refused",
            OutcomeKind::Unconfirmed => "unconfirmed",
        }
    }
}

/// A settled message's outcome.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Outcome {
    pub kind: OutcomeKind,
    /// RFC 3339 UTC with nanoseconds, when it was settled.
    pub at: String,
    /// For `delivered`: `<harness>:<event>`, the event that carried it.
    pub event: Option<String>,
    /// For `expired` and `refused`: why.
    pub reason: Option<String>,
}

/// One message, as its file holds it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Message {
    pub format: u64,
    pub id: String,
    /// Its place in its session's queue: delivered in this order.
    pub seq: u64,
    pub to: Recipient,
    pub from: Sender,
    pub text: String,
    pub queued_at: String,
    pub expires_at: String,
    /// `None` while pending.
    pub outcome: Option<Outcome>,
}

impl Message {
    /// The file's bytes parsed and checked; `None` for anything roster
    /// would not have written.
    pub fn parse(bytes: &[u8]) -> Option<Message> {
        let message: Message = serde_json::from_slice(bytes).ok()?;
        let bounded = |text: &Option<String>, limit: usize| {
            text.as_deref().is_none_or(|text| text.len() <= limit && !text.chars().any(char::is_control))
        };
        let outcome_valid = message.outcome.as_ref().is_none_or(|outcome| {
            Timestamp::parse(&outcome.at).is_some()
                && bounded(&outcome.event, OUTCOME_FIELD_LIMIT)
                && bounded(&outcome.reason, OUTCOME_FIELD_LIMIT)
                && match outcome.kind {
                    OutcomeKind::Delivered => outcome.event.is_some() && outcome.reason.is_none(),
                    OutcomeKind::Expired | OutcomeKind::Refused | OutcomeKind::Unconfirmed => {
                        outcome.reason.is_some() && outcome.event.is_none()
                    }
                }
        });
        let format_valid = match message.format {
            MESSAGE_FORMAT => message.to.addressed_by.is_some(),
            MESSAGE_FORMAT_BEFORE_ADDRESSES => message.to.addressed_by.is_none(),
            _ => false,
        };
        let valid = format_valid
            && MessageId::parse(&message.id).is_some()
            && message.seq > 0
            && RecordName::parse_stem(&message.to.record).is_some_and(|name| {
                name.pid.get() == message.to.pid && name.to_string() == message.to.record
            })
            && bounded(&message.to.session_id, SENDER_FIELD_LIMIT)
            && bounded(&message.from.agent, SENDER_FIELD_LIMIT)
            && bounded(&message.from.harness, SENDER_FIELD_LIMIT)
            && bounded(&message.from.session_id, SENDER_FIELD_LIMIT)
            && MessageText::new(&message.text).is_ok_and(|text| text.as_str() == message.text)
            && Timestamp::parse(&message.queued_at).is_some()
            && Timestamp::parse(&message.expires_at).is_some()
            && outcome_valid;
        valid.then_some(message)
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = serde_json::to_vec(self).expect("messages serialize");
        bytes.push(b'\n');
        bytes
    }

    /// The message's id (checked when it was parsed or made).
    pub fn message_id(&self) -> MessageId {
        MessageId(self.id.clone())
    }

    /// When it expires (checked when it was parsed or made).
    pub fn expires_at(&self) -> Timestamp {
        Timestamp::parse(&self.expires_at).unwrap_or(Timestamp::from_unix_nanos(0))
    }

    /// Whether it waits for delivery still.
    pub fn is_pending(&self) -> bool {
        self.outcome.is_none()
    }

    /// The name of its file: pending or settled.
    pub fn file_name(&self) -> String {
        message_file_name(self.seq, &self.message_id(), self.outcome.is_some())
    }

    /// The word of its state: `pending`, `delivered`, `expired`, `refused`.
    pub fn state_word(&self) -> &'static str {
        self.outcome.as_ref().map_or("pending", |outcome| outcome.kind.as_str())
    }

    /// This message settled `kind` at `at`, with the event that carried it
    /// (delivered) or the reason (expired, refused).
    pub fn settled(&self, kind: OutcomeKind, at: Timestamp, event_or_reason: &str) -> Message {
        let text = truncated(event_or_reason, OUTCOME_FIELD_LIMIT);
        let (event, reason) = match kind {
            OutcomeKind::Delivered => (Some(text), None),
            OutcomeKind::Expired | OutcomeKind::Refused | OutcomeKind::Unconfirmed => (None, Some(text)),
        };
        Message { outcome: Some(Outcome { kind, at: at.to_string(), event, reason }), ..self.clone() }
    }
}

/// At most `limit` bytes of `text`, cut at a character boundary, control
/// characters shown as spaces: an outcome's reason is a line.
fn truncated(text: &str, limit: usize) -> String {
    let mut kept = String::with_capacity(text.len().min(limit));
    for character in text.chars() {
        let character = if character.is_control() { ' ' } else { character };
        if kept.len() + character.len_utf8() > limit {
            break;
        }
        kept.push(character);
    }
    kept
}

/// A message file's name: `<seq as 16 digits>-<id>.json` while pending,
/// `….done.json` once settled, so that counting the pending messages of
/// a queue is reading its names.
pub fn message_file_name(seq: u64, id: &MessageId, settled: bool) -> String {
    let suffix = if settled { SETTLED_SUFFIX } else { PENDING_SUFFIX };
    format!("{seq:016}-{id}{suffix}")
}

/// A claimed message's name, `<seq as 16 digits>-<id>.claimed.json`: a
/// delivery hook renamed it from its pending name and is handing it over.
pub fn claimed_file_name(seq: u64, id: &MessageId) -> String {
    format!("{seq:016}-{id}{CLAIMED_SUFFIX}")
}

/// What a message file's name says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MessageFileName {
    pub seq: u64,
    pub id: MessageId,
    pub settled: bool,
    /// Claimed by a delivery hook (neither pending nor settled yet).
    pub claimed: bool,
}

impl MessageFileName {
    /// The parts of `name`, when it is a name roster gives a message file.
    pub fn parse(name: &str) -> Option<MessageFileName> {
        let (stem, settled, claimed) = if let Some(stem) = name.strip_suffix(SETTLED_SUFFIX) {
            (stem, true, false)
        } else if let Some(stem) = name.strip_suffix(CLAIMED_SUFFIX) {
            (stem, false, true)
        } else {
            (name.strip_suffix(PENDING_SUFFIX)?, false, false)
        };
        let (seq, id) = stem.split_once('-')?;
        if seq.len() != 16 || !seq.bytes().all(|byte| byte.is_ascii_digit()) {
            return None;
        }
        Some(MessageFileName { seq: seq.parse().ok()?, id: MessageId::parse(id)?, settled, claimed })
    }

    /// Whether the name is a pending message's, waiting for delivery.
    pub fn is_pending(&self) -> bool {
        !self.settled && !self.claimed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Message {
        Message {
            format: MESSAGE_FORMAT,
            id: "0123456789abcdef0123456789abcdef".into(),
            seq: 7,
            to: Recipient {
                record: "4711@4026531836-9c2e0f61a5b3d7e8".into(),
                pid: 4711,
                start_ticks: 870,
                session_id: Some("3f1c9a2e".into()),
                addressed_by: Some(AddressedBy::SessionId),
            },
            from: Sender {
                pid: 5854,
                agent: Some("wren".into()),
                harness: Some("claude-code".into()),
                session_id: None,
            },
            text: "please rebase onto main\n\tthen run the tests".into(),
            queued_at: "2026-12-03T06:00:00.000000001Z".into(),
            expires_at: "2026-12-03T07:00:00.000000001Z".into(),
            outcome: None,
        }
    }

    #[test]
    fn a_written_message_reads_back_the_same_pending_and_settled() {
        assert_eq!(Message::parse(&sample().to_bytes()), Some(sample()));
        let at = Timestamp::parse("2026-12-03T06:30:00Z").unwrap();
        for (kind, said) in [
            (OutcomeKind::Delivered, "claude-code:UserPromptSubmit"),
            (OutcomeKind::Expired, SESSION_ENDED),
            (OutcomeKind::Refused, "not armed by hand, and auto-arm is off"),
            (OutcomeKind::Unconfirmed, HANDOVER_UNCONFIRMED),
        ] {
            let settled = sample().settled(kind, at, said);
            assert_eq!(Message::parse(&settled.to_bytes()), Some(settled.clone()), "{kind:?}");
            assert_eq!(settled.state_word(), kind.as_str());
            assert!(settled.file_name().ends_with(".done.json"));
        }
    }

    #[test]
    fn a_format_1_message_reads_as_addressed_by_pid() {
        let mut old = sample();
        old.format = 1;
        old.to.addressed_by = None;
        let read = Message::parse(&old.to_bytes()).expect("format 1 is read");
        assert_eq!(read.to.conversation(), None, "a format 1 message goes to whatever conversation runs");
        assert_eq!(sample().to.conversation(), Some("3f1c9a2e"));
    }

    #[test]
    fn anything_roster_would_not_write_is_no_message() {
        type Change = fn(&mut Message);
        let cases: [(&str, Change); 12] = [
            ("newer format", |message| message.format = 3),
            ("format 1 with an address", |message| message.format = 1),
            ("format 2 without an address", |message| message.to.addressed_by = None),
            ("short id", |message| message.id = "0123".into()),
            ("upper-case id", |message| message.id = "0123456789ABCDEF0123456789ABCDEF".into()),
            ("sequence zero", |message| message.seq = 0),
            ("record of another pid", |message| message.to.pid = 4712),
            ("record name not roster's", |message| message.to.record = "../4711".into()),
            ("control character", |message| message.text = "rm -rf \u{1b}[2J".into()),
            ("empty text", |message| message.text = String::new()),
            ("bad time", |message| message.expires_at = "tomorrow".into()),
            ("delivered without its event", |message| {
                message.outcome = Some(Outcome {
                    kind: OutcomeKind::Delivered,
                    at: "2026-12-03T06:30:00Z".into(),
                    event: None,
                    reason: Some("why".into()),
                })
            }),
        ];
        for (what, change) in cases {
            let mut message = sample();
            change(&mut message);
            assert_eq!(Message::parse(&message.to_bytes()), None, "{what}");
        }
        let mut extra = serde_json::to_value(sample()).unwrap();
        extra["surprise"] = 1.into();
        assert_eq!(Message::parse(extra.to_string().as_bytes()), None, "unknown key");
        assert_eq!(Message::parse(b"{\"format\":1}"), None);
    }

    #[test]
    fn text_is_normalised_and_bounded() {
        let check = |raw: &str, expect: Result<&str, TextProblem>| {
            assert_eq!(MessageText::new(raw).as_ref().map(MessageText::as_str), expect.as_deref(), "{raw:?}");
        };
        check("hello\r\nworld\n\n", Ok("hello\nworld"));
        check("  indented\tand tabbed  \n", Ok("  indented\tand tabbed"));
        check("", Err(TextProblem::Empty));
        check(" \n\t\n", Err(TextProblem::Empty));
        check("a\nb\u{7}c", Err(TextProblem::ControlCharacter { character: '\u{7}', line: 2, column: 2 }));
        check("lone\rreturn", Err(TextProblem::ControlCharacter { character: '\r', line: 1, column: 5 }));
        check("c1 \u{9b}31m", Err(TextProblem::ControlCharacter { character: '\u{9b}', line: 1, column: 4 }));
        check("del\u{7f}", Err(TextProblem::ControlCharacter { character: '\u{7f}', line: 1, column: 4 }));
        let at_limit = "é".repeat(MAX_TEXT_BYTES / 2);
        assert_eq!(MessageText::new(&at_limit).map(|text| text.as_str().len()), Ok(MAX_TEXT_BYTES));
        let over = format!("{at_limit}x");
        check(&over, Err(TextProblem::TooLong { bytes: MAX_TEXT_BYTES + 1 }));
        // Line ends dropped by normalisation do not count.
        let with_trailing_newlines = format!("{}\r\n\r\n", "x".repeat(MAX_TEXT_BYTES));
        assert!(MessageText::new(&with_trailing_newlines).is_ok());
    }

    #[test]
    fn a_full_queue_of_longest_messages_fits_the_file_limit() {
        // Quotes and backslashes are escaped to two bytes, the worst a
        // text without control characters but newline and tab can grow.
        let mut message = sample();
        message.text = "\"\\".repeat(MAX_TEXT_BYTES / 2);
        message = message.settled(OutcomeKind::Refused, Timestamp::from_unix_nanos(0), &"x".repeat(4096));
        let bytes = message.to_bytes();
        assert!(bytes.len() as u64 <= crate::store::files::MAX_ENTRY_BYTES, "{} bytes", bytes.len());
        assert_eq!(Message::parse(&bytes), Some(message));
    }

    #[test]
    fn file_names_say_sequence_id_and_whether_settled() {
        let id = MessageId::parse("0123456789abcdef0123456789abcdef").unwrap();
        let pending = message_file_name(42, &id, false);
        assert_eq!(pending, "0000000000000042-0123456789abcdef0123456789abcdef.json");
        assert_eq!(
            MessageFileName::parse(&pending),
            Some(MessageFileName { seq: 42, id: id.clone(), settled: false, claimed: false })
        );
        let settled = message_file_name(42, &id, true);
        assert_eq!(
            MessageFileName::parse(&settled),
            Some(MessageFileName { seq: 42, id: id.clone(), settled: true, claimed: false })
        );
        let claimed = claimed_file_name(42, &id);
        assert_eq!(claimed, "0000000000000042-0123456789abcdef0123456789abcdef.claimed.json");
        assert_eq!(
            MessageFileName::parse(&claimed),
            Some(MessageFileName { seq: 42, id, settled: false, claimed: true })
        );
        for other in
            [".tmp-x", "42-0123456789abcdef0123456789abcdef.json", "notes.txt", "0000000000000042-xyz.json"]
        {
            assert_eq!(MessageFileName::parse(other), None, "{other}");
        }
        assert_ne!(MessageId::random().unwrap(), MessageId::random().unwrap());
        assert!(MessageId::parse(MessageId::random().unwrap().as_str()).is_some());
    }
}
