//! One event of a watch (docs/contract.md §6.7) as a typed value, and its
//! one serializer and reader: the NDJSON line `roster-list --watch --format
//! json` prints, which the many-host watch reads back from every host and
//! a collector reads from either. Schema 1 only gains keys and kinds, so a
//! reader keeps what a newer roster added (`EventKind::Newer`,
//! `Event::newer_keys`) and writes it out again as it came.

use consent::SessionConsent;
use registry_core::messages::{MessageView, OutcomeKind};
use registry_core::{SessionRow, Timestamp};
use serde_json::{Map, Value};

/// The version of the event objects; it changes only when a key changes
/// meaning or goes away.
pub const EVENT_SCHEMA: u32 = 1;

/// The key naming the host an event (and its row) came from, under
/// `--host`.
pub const HOST_KEY: &str = "host";

/// What happened.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum EventKind {
    /// A row present when the watch started.
    Listed,
    /// A new session (or a new owner at a pid).
    Registered,
    /// The same owner wrote its record again (a new session id after
    /// `/clear`, a new directory, …).
    Refreshed,
    /// The session's consent decision changed.
    ConsentChanged,
    /// The owner exited (its record may still be on disk).
    Died,
    /// The record is gone (pruned, or the session ended).
    Removed,
    /// An entry that cannot be believed appeared or changed.
    Problem,
    /// Events may have been lost; everything was read again (or a host
    /// is back).
    Resync,
    /// A row that passed the field filters no longer does (re-registered
    /// under another agent name, moved out of `--cwd`, …): reported once,
    /// then nothing more about it while it does not match.
    Unmatched,
    /// A live session's state changed: it started working, went idle, or
    /// began waiting for its user (or waits for something else now).
    StateChanged,
    /// A message was queued for the session (`roster-send`).
    MessageQueued,
    /// A message for the session was handed to it by its delivery hook.
    MessageDelivered,
    /// A message for the session expired: its time to live ran out, or
    /// the session ended first.
    MessageExpired,
    /// A message for the session was refused at delivery: the session no
    /// longer accepted messages.
    MessageRefused,
    /// A message for the session was claimed by a delivery hook that
    /// stopped before it confirmed the hand-over.
    MessageUnconfirmed,
    /// A host's stream ended or could not start (`--host`); it is asked
    /// again.
    HostLost,
    /// A kind a newer roster reports, as it named it.
    Newer(String),
}

impl EventKind {
    /// Every kind this schema names, in the contract's order.
    pub const KNOWN: [EventKind; 16] = [
        EventKind::Listed,
        EventKind::Registered,
        EventKind::Refreshed,
        EventKind::ConsentChanged,
        EventKind::StateChanged,
        EventKind::Died,
        EventKind::Removed,
        EventKind::Problem,
        EventKind::Unmatched,
        EventKind::Resync,
        EventKind::HostLost,
        EventKind::MessageQueued,
        EventKind::MessageDelivered,
        EventKind::MessageExpired,
        EventKind::MessageRefused,
        EventKind::MessageUnconfirmed,
    ];

    pub fn as_str(&self) -> &str {
        match self {
            EventKind::Listed => "listed",
            EventKind::Registered => "registered",
            EventKind::Refreshed => "refreshed",
            EventKind::ConsentChanged => "consent-changed",
            EventKind::Died => "died",
            EventKind::Removed => "removed",
            EventKind::Problem => "problem",
            EventKind::Resync => "resync",
            EventKind::Unmatched => "unmatched",
            EventKind::StateChanged => "state-changed",
            EventKind::MessageQueued => "message-queued",
            EventKind::MessageDelivered => "message-delivered",
            EventKind::MessageExpired => "message-expired",
            EventKind::MessageRefused => "message-refused",
            EventKind::MessageUnconfirmed => "message-unconfirmed",
            EventKind::HostLost => "host-lost",
            EventKind::Newer(name) => name,
        }
    }

    /// The kind named `name`; one this schema does not name is `Newer`.
    pub fn from_name(name: &str) -> EventKind {
        EventKind::KNOWN
            .into_iter()
            .find(|kind| kind.as_str() == name)
            .unwrap_or_else(|| EventKind::Newer(name.to_owned()))
    }

    /// The event of a message's news: queued when it has no outcome yet,
    /// else settled as its outcome says.
    pub fn of_message(outcome: Option<OutcomeKind>) -> EventKind {
        match outcome {
            None => EventKind::MessageQueued,
            Some(OutcomeKind::Delivered) => EventKind::MessageDelivered,
            Some(OutcomeKind::Expired) => EventKind::MessageExpired,
            Some(OutcomeKind::Refused) => EventKind::MessageRefused,
            Some(OutcomeKind::Unconfirmed) => EventKind::MessageUnconfirmed,
        }
    }
}

/// The session an event is about.
#[derive(Clone, Debug)]
pub enum EventRow {
    /// A row of this machine, read and judged here, with its consent.
    Local { row: Box<SessionRow>, consent: SessionConsent },
    /// A JSON row of §6.2 as another roster printed it (`--host`).
    Remote(Map<String, Value>),
}

impl EventRow {
    /// The row as the event's `row` key holds it.
    pub fn to_json(&self) -> Value {
        match self {
            EventRow::Local { row, consent } => row.to_json(consent.row_consent()),
            EventRow::Remote(row) => Value::Object(row.clone()),
        }
    }
}

/// One event: `{"schema", "event", "at", "row", ["reason"], ["message"],
/// ["host"]}`.
#[derive(Clone, Debug)]
pub struct Event {
    /// `EVENT_SCHEMA` for the events of this roster; a host's own.
    pub schema: u64,
    pub kind: EventKind,
    /// When the watcher saw it.
    pub at: Timestamp,
    /// `None` for an event about the stream itself (`resync`, `host-lost`).
    pub row: Option<EventRow>,
    /// Why, in words for people: `resync`, `host-lost`.
    pub reason: Option<String>,
    /// The message a `message-*` event is about.
    pub message: Option<MessageView>,
    /// The host it came from, under `--host`.
    pub host: Option<String>,
    /// Keys a newer roster added (or a `message` this one cannot read),
    /// kept as they came and written after the known ones.
    pub newer_keys: Map<String, Value>,
}

impl Event {
    /// An event about a session of this machine.
    pub fn about_session(
        kind: EventKind,
        at: Timestamp,
        row: &SessionRow,
        consent: &SessionConsent,
    ) -> Event {
        Event {
            row: Some(EventRow::Local { row: Box::new(row.clone()), consent: consent.clone() }),
            ..Event::about_the_stream(kind, at, None)
        }
    }

    /// An event about no session: a `resync`, a `host-lost`.
    pub fn about_the_stream(kind: EventKind, at: Timestamp, reason: Option<&str>) -> Event {
        Event {
            schema: u64::from(EVENT_SCHEMA),
            kind,
            at,
            row: None,
            reason: reason.map(str::to_owned),
            message: None,
            host: None,
            newer_keys: Map::new(),
        }
    }

    /// The event as its JSON object.
    pub fn to_json(&self) -> Value {
        let mut event = Map::new();
        event.insert("schema".to_owned(), self.schema.into());
        event.insert("event".to_owned(), self.kind.as_str().into());
        event.insert("at".to_owned(), self.at.to_rfc3339_millis().into());
        event.insert("row".to_owned(), self.row.as_ref().map_or(Value::Null, EventRow::to_json));
        if let Some(reason) = &self.reason {
            event.insert("reason".to_owned(), reason.as_str().into());
        }
        if let Some(message) = &self.message {
            event.insert("message".to_owned(), serde_json::to_value(message).unwrap_or(Value::Null));
        }
        for (key, value) in &self.newer_keys {
            event.insert(key.clone(), value.clone());
        }
        if let Some(host) = &self.host {
            event.insert(HOST_KEY.to_owned(), host.as_str().into());
        }
        Value::Object(event)
    }

    /// The event as one NDJSON line, with its newline.
    pub fn to_line(&self) -> String {
        format!("{}\n", self.to_json())
    }

    /// Reads one NDJSON line of a watch, this roster's or another's;
    /// `None` for anything that is not an event (no `schema`, `event` or
    /// RFC 3339 `at`).
    pub fn from_line(line: &str) -> Option<Event> {
        let Ok(Value::Object(mut event)) = serde_json::from_str::<Value>(line) else { return None };
        let schema = event.shift_remove("schema")?.as_u64()?;
        let kind = EventKind::from_name(event.shift_remove("event")?.as_str()?);
        let at = Timestamp::parse(event.shift_remove("at")?.as_str()?)?;
        let row = match event.shift_remove("row") {
            Some(Value::Object(row)) => Some(EventRow::Remote(row)),
            _ => None,
        };
        let reason = match event.shift_remove("reason") {
            Some(Value::String(reason)) => Some(reason),
            Some(other) => {
                event.insert("reason".to_owned(), other);
                None
            }
            None => None,
        };
        let message = match event.shift_remove("message") {
            Some(message) => match serde_json::from_value::<MessageView>(message.clone()) {
                Ok(summary) => Some(summary),
                Err(_) => {
                    event.insert("message".to_owned(), message);
                    None
                }
            },
            None => None,
        };
        let host = match event.shift_remove(HOST_KEY) {
            Some(Value::String(host)) => Some(host),
            _ => None,
        };
        Some(Event { schema, kind, at, row, reason, message, host, newer_keys: event })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use registry_core::messages::Sender;

    #[test]
    fn every_known_kind_is_read_back_as_itself_and_an_unknown_one_as_newer() {
        for kind in EventKind::KNOWN {
            assert_eq!(EventKind::from_name(kind.as_str()), kind);
        }
        assert_eq!(EventKind::from_name("woke-up"), EventKind::Newer("woke-up".to_owned()));
        assert_eq!(EventKind::Newer("woke-up".to_owned()).as_str(), "woke-up");
    }

    #[test]
    fn a_message_outcome_names_its_event() {
        assert_eq!(EventKind::of_message(None), EventKind::MessageQueued);
        assert_eq!(EventKind::of_message(Some(OutcomeKind::Delivered)), EventKind::MessageDelivered);
        assert_eq!(EventKind::of_message(Some(OutcomeKind::Expired)), EventKind::MessageExpired);
        assert_eq!(EventKind::of_message(Some(OutcomeKind::Refused)), EventKind::MessageRefused);
        assert_eq!(EventKind::of_message(Some(OutcomeKind::Unconfirmed)), EventKind::MessageUnconfirmed);
    }

    #[test]
    fn an_event_about_the_stream_is_written_in_the_contract_order() {
        let at = Timestamp::parse("2026-12-05T01:02:03.456Z").expect("a time");
        let event = Event::about_the_stream(EventKind::Resync, at, Some("the registry directory appeared"));
        assert_eq!(
            event.to_line(),
            "{\"schema\":1,\"event\":\"resync\",\"at\":\"2026-12-05T01:02:03.456Z\",\"row\":null,\"reason\":\
             \"the registry directory appeared\"}\n"
        );
    }

    #[test]
    fn a_line_of_a_newer_roster_is_written_again_with_what_it_added() {
        let line = r#"{"schema":1,"event":"woke-up","at":"2026-12-05T01:02:03.456Z","row":{"pid":7,"x":1},"mood":"calm","message":{"id":"m","novel":true}}"#;
        let mut event = Event::from_line(line).expect("an event");
        assert_eq!(event.kind, EventKind::Newer("woke-up".to_owned()));
        assert!(matches!(&event.row, Some(EventRow::Remote(row)) if row["x"] == 1));
        assert!(event.message.is_none(), "a message of another shape is carried, not read");
        event.host = Some("far".to_owned());
        assert_eq!(
            event.to_json(),
            serde_json::json!({"schema": 1, "event": "woke-up", "at": "2026-12-05T01:02:03.456Z",
                "row": {"pid": 7, "x": 1}, "mood": "calm", "message": {"id": "m", "novel": true}, "host": "far"})
        );
    }

    #[test]
    fn a_message_event_reads_back_as_it_was_written() {
        let message = MessageView {
            id: "01J".to_owned(),
            seq: 3,
            to: None,
            from: Some(Sender { pid: 40, agent: Some("wren".to_owned()), harness: None, session_id: None }),
            queued_at: "2026-12-05T01:02:03.000000001Z".to_owned(),
            expires_at: "2026-12-05T02:02:03.000000001Z".to_owned(),
            status: None,
            outcome: Some(None),
            at: None,
            event: None,
            reason: None,
            bytes: Some(12),
        };
        let at = Timestamp::parse("2026-12-05T01:02:03.456Z").expect("a time");
        let event = Event {
            message: Some(message.clone()),
            ..Event::about_the_stream(EventKind::MessageQueued, at, None)
        };
        let line = event.to_line();
        let read = Event::from_line(line.trim_end()).expect("an event");
        assert_eq!(read.message, Some(message));
        assert_eq!(read.to_line(), line);
        let newer = line.replace("\"bytes\":12", "\"bytes\":12,\"mood\":\"calm\"");
        let carried = Event::from_line(newer.trim_end()).expect("an event");
        assert!(carried.message.is_none(), "a message with a key this roster does not know is carried");
        assert_eq!(carried.to_line(), newer);
    }

    #[test]
    fn what_is_not_an_event_is_not_read_as_one() {
        for line in [
            "",
            "[]",
            "{}",
            r#"{"event":"listed","at":"2026-12-05T01:02:03.456Z"}"#,
            r#"{"schema":1,"event":"listed","at":"yesterday"}"#,
            "roster-list-connected",
        ] {
            assert!(Event::from_line(line).is_none(), "{line}");
        }
    }
}
