//! A message as roster shows it outside its queue (docs/contract.md §6.6,
//! §6.7): the answer of `roster-send` when it queued one, its `--status`,
//! and the `message` of a watch's event. One type with one serializer and
//! reader, never the text; each of the three takes the keys it promises,
//! always in the one order the fields have here.

use serde::{Deserialize, Deserializer, Serialize};

use super::format::{Message, Outcome, Recipient, Sender};

/// What one output shows of a message. A key of type `Option<Option<_>>`
/// is absent (`None`) or present, `null` where the message has no value
/// (`Some(None)`).
///
/// A key it does not know is refused when read: a newer roster's view is
/// then carried as it came rather than read without it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MessageView {
    pub id: String,
    pub seq: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<Recipient>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<Sender>,
    pub queued_at: String,
    pub expires_at: String,
    /// `queued` when it was just queued; its state word at `--status`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// The outcome whole (a watch's event).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    pub outcome: Option<Option<Outcome>>,
    /// The outcome's time, event and reason apart (`--status`).
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    pub at: Option<Option<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    pub event: Option<Option<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "present")]
    pub reason: Option<Option<String>>,
    /// The length of its text (a watch's event).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<usize>,
}

impl MessageView {
    /// The answer of a send that queued `message`: `{id, seq, to,
    /// queued_at, expires_at, status: "queued"}`.
    pub fn queued(message: &Message) -> MessageView {
        MessageView {
            to: Some(message.to.clone()),
            status: Some("queued".to_owned()),
            ..MessageView::bare(message)
        }
    }

    /// `roster-send --status`: `{id, seq, to, from, queued_at, expires_at,
    /// status, at, event, reason}`, the last three `null` while pending.
    pub fn status(message: &Message) -> MessageView {
        let outcome = message.outcome.as_ref();
        MessageView {
            to: Some(message.to.clone()),
            from: Some(message.from.clone()),
            status: Some(message.state_word().to_owned()),
            at: Some(outcome.map(|outcome| outcome.at.clone())),
            event: Some(outcome.and_then(|outcome| outcome.event.clone())),
            reason: Some(outcome.and_then(|outcome| outcome.reason.clone())),
            ..MessageView::bare(message)
        }
    }

    /// The `message` of a watch's event: `{id, seq, from, queued_at,
    /// expires_at, outcome, bytes}`.
    pub fn in_event(message: &Message) -> MessageView {
        MessageView {
            from: Some(message.from.clone()),
            outcome: Some(message.outcome.clone()),
            bytes: Some(message.text.len()),
            ..MessageView::bare(message)
        }
    }

    /// The keys every output has.
    fn bare(message: &Message) -> MessageView {
        MessageView {
            id: message.id.clone(),
            seq: message.seq,
            to: None,
            from: None,
            queued_at: message.queued_at.clone(),
            expires_at: message.expires_at.clone(),
            status: None,
            outcome: None,
            at: None,
            event: None,
            reason: None,
            bytes: None,
        }
    }
}

/// A key that is there, `null` or not: `Some(None)` for `null`, where
/// serde alone reads `null` as absent.
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    deserializer: D,
) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(deserializer).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messages::OutcomeKind;

    fn message() -> Message {
        let text = r#"{"format":2,"id":"01JX","seq":3,
            "to":{"record":"4242@w","pid":4242,"start_ticks":870,"session_id":null,"addressed_by":"pid"},
            "from":{"pid":40,"agent":"robin","harness":"codex","session_id":null},"text":"hello there",
            "queued_at":"2026-12-05T01:00:00.000000001Z","expires_at":"2026-12-05T02:00:00.000000001Z",
            "outcome":null}"#;
        serde_json::from_str(text).expect("a message")
    }

    fn keys(view: &MessageView) -> Vec<String> {
        let value = serde_json::to_value(view).expect("serializes");
        value.as_object().expect("an object").keys().cloned().collect()
    }

    #[test]
    fn each_output_has_the_keys_it_promises_in_one_order() {
        let message = message();
        assert_eq!(
            keys(&MessageView::queued(&message)),
            ["id", "seq", "to", "queued_at", "expires_at", "status"]
        );
        assert_eq!(
            keys(&MessageView::status(&message)),
            ["id", "seq", "to", "from", "queued_at", "expires_at", "status", "at", "event", "reason"]
        );
        assert_eq!(
            keys(&MessageView::in_event(&message)),
            ["id", "seq", "from", "queued_at", "expires_at", "outcome", "bytes"]
        );
    }

    #[test]
    fn a_pending_message_shows_null_where_it_has_no_outcome_and_never_its_text() {
        let message = message();
        let status = serde_json::to_value(MessageView::status(&message)).expect("serializes");
        assert_eq!(
            (status["status"].as_str(), &status["at"], &status["reason"]),
            (Some("pending"), &serde_json::Value::Null, &serde_json::Value::Null)
        );
        let event = serde_json::to_value(MessageView::in_event(&message)).expect("serializes");
        assert_eq!((&event["outcome"], &event["bytes"]), (&serde_json::Value::Null, &serde_json::json!(11)));
        assert!(!event.to_string().contains("hello"), "{event}");
    }

    #[test]
    fn a_view_reads_back_as_written_nulls_included() {
        let pending = message();
        let settled =
            pending.settled(OutcomeKind::Expired, crate::Timestamp::from_unix_nanos(0), "time ran out");
        for message in [&pending, &settled] {
            for view in
                [MessageView::queued(message), MessageView::status(message), MessageView::in_event(message)]
            {
                let text = serde_json::to_string(&view).expect("serializes");
                let read: MessageView = serde_json::from_str(&text).expect("reads back");
                assert_eq!(read, view, "{text}");
            }
        }
    }
}
