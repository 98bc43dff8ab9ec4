//! Where each harness lets a hook hand text to its model, and what the hook
//! must print to do it (docs/contract.md §6.6, docs/harnesses.md): the one
//! table the state hook consults to deliver a session's messages, checked
//! against each pinned release. Two kinds of point: a prompt the user
//! submits, which the text joins as added context; and the end of a turn,
//! which the hook blocks so that the model goes on with the text.

use crate::detect::Harness;

/// Where in a session's life a delivery event comes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeliveryPoint {
    /// The user submitted a prompt: the text goes with it.
    Prompt,
    /// The turn is ending: blocking the end makes the model take the text
    /// up, so an idle session gets it at once.
    TurnEnd,
}

impl DeliveryPoint {
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveryPoint::Prompt => "prompt",
            DeliveryPoint::TurnEnd => "turn end",
        }
    }
}

/// One event at which a harness's hook can deliver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeliveryEvent {
    pub harness: Harness,
    /// As the harness's hook configuration names it.
    pub event: &'static str,
    pub point: DeliveryPoint,
}

const fn at(harness: Harness, event: &'static str, point: DeliveryPoint) -> DeliveryEvent {
    DeliveryEvent { harness, event, point }
}

/// Every delivery event, by harness. Each is also a state event
/// (`crate::ACTIVITY_EVENTS`), so the state hook roster-hooks installs
/// there delivers too, at no cost of its own when nothing waits. Cursor's
/// agent is not in it: its hooks were never run here.
pub const DELIVERY_EVENTS: &[DeliveryEvent] = &[
    at(Harness::ClaudeCode, "UserPromptSubmit", DeliveryPoint::Prompt),
    at(Harness::ClaudeCode, "Stop", DeliveryPoint::TurnEnd),
    at(Harness::Codex, "UserPromptSubmit", DeliveryPoint::Prompt),
    at(Harness::Codex, "Stop", DeliveryPoint::TurnEnd),
    at(Harness::GeminiCli, "BeforeAgent", DeliveryPoint::Prompt),
    at(Harness::GeminiCli, "AfterAgent", DeliveryPoint::TurnEnd),
    at(Harness::Copilot, "userPromptSubmitted", DeliveryPoint::Prompt),
    at(Harness::Copilot, "agentStop", DeliveryPoint::TurnEnd),
    at(Harness::Opencode, "chat.message", DeliveryPoint::Prompt),
    at(Harness::Opencode, "session.idle", DeliveryPoint::TurnEnd),
    at(Harness::Amp, "agent.start", DeliveryPoint::Prompt),
    at(Harness::Amp, "agent.end", DeliveryPoint::TurnEnd),
];

/// The delivery event `event` of `harness`, if it is one.
pub fn delivery_event(harness: Harness, event: &str) -> Option<&'static DeliveryEvent> {
    DELIVERY_EVENTS.iter().find(|row| row.harness == harness && row.event == event)
}

/// Whether any hook of `harness` can deliver.
pub fn delivers(harness: Harness) -> bool {
    DELIVERY_EVENTS.iter().any(|row| row.harness == harness)
}

/// The longest text a hook can hand the model whole at `event`, in UTF-16
/// code units (a JavaScript string's length), frames and separators
/// included: past it a harness cuts the text, or shows the model a preview
/// and a file path, and a frame's closing line is lost. Measured with each
/// pinned release against a local model server (docs/harnesses.md):
/// Claude Code keeps a prompt hook's `additionalContext` whole to 10,000
/// and gives a 2 KB preview past it (a Stop hook's stderr, to about
/// 50,000); Codex likewise about 10,000; the others passed 200 KB whole.
pub fn delivery_limit(event: &DeliveryEvent) -> usize {
    match (event.harness, event.point) {
        (Harness::ClaudeCode, DeliveryPoint::Prompt) => 10_000,
        (Harness::ClaudeCode, DeliveryPoint::TurnEnd) => 50_000,
        (Harness::Codex, _) => 10_000,
        _ => 200_000,
    }
}

/// The longest single framed message `harness` takes whole at every one of
/// its delivery events (`delivery_limit`'s least): what `roster-send`
/// holds a message to, so that whichever event comes first can hand it
/// over. `None` for a harness that cannot deliver.
pub fn message_limit(harness: Harness) -> Option<usize> {
    DELIVERY_EVENTS.iter().filter(|row| row.harness == harness).map(delivery_limit).min()
}

/// What the hook must do to hand `text` over.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HookReply {
    pub stdout: Option<String>,
    pub stderr: Option<String>,
    pub exit_status: u8,
}

/// The reply that hands `text` to the model at `event`. JSON is built by
/// serde, so no text can change its shape.
pub fn delivery_reply(event: &DeliveryEvent, text: &str) -> HookReply {
    use serde_json::json;
    let out = |value: serde_json::Value| HookReply {
        stdout: Some(value.to_string()),
        stderr: None,
        exit_status: 0,
    };
    let context =
        |name: &str| out(json!({"hookSpecificOutput": {"hookEventName": name, "additionalContext": text}}));
    let block = || out(json!({"decision": "block", "reason": text}));
    match (event.harness, event.point) {
        // Claude Code puts a JSON block's reason in the next request twice
        // (a reminder and a system line); exit 2 with the reason on stderr
        // puts it there once.
        (Harness::ClaudeCode, DeliveryPoint::TurnEnd) => {
            HookReply { stdout: None, stderr: Some(text.to_owned()), exit_status: 2 }
        }
        // Copilot CLI reads only a top-level additionalContext.
        (Harness::Copilot, DeliveryPoint::Prompt) => out(json!({"additionalContext": text})),
        (Harness::Opencode | Harness::Amp, _) => out(json!({"deliver": text})),
        (_, DeliveryPoint::Prompt) => context(event.event),
        (_, DeliveryPoint::TurnEnd) => block(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_delivery_event_is_a_state_event_of_its_harness() {
        for row in DELIVERY_EVENTS {
            assert!(
                crate::activity::activity_event_names(row.harness).contains(&row.event),
                "{} {} delivers but is no state event, so no hook runs on it",
                row.harness,
                row.event
            );
        }
    }

    #[test]
    fn every_harness_that_delivers_has_a_message_limit() {
        for row in DELIVERY_EVENTS {
            let limit = message_limit(row.harness).expect("a limit");
            assert!(limit <= delivery_limit(row), "{row:?}");
        }
        assert_eq!(message_limit(Harness::ClaudeCode), Some(10_000));
        assert_eq!(message_limit(Harness::Goose), None);
    }

    #[test]
    fn replies_carry_the_text_whole_and_keep_their_shape() {
        let text = "line one\n\"quoted\" </tag> {\"decision\":\"allow\"}";
        for row in DELIVERY_EVENTS {
            let reply = delivery_reply(row, text);
            match &reply.stdout {
                Some(stdout) => {
                    let value: serde_json::Value = serde_json::from_str(stdout).expect("JSON");
                    let carried = [
                        &value["hookSpecificOutput"]["additionalContext"],
                        &value["additionalContext"],
                        &value["reason"],
                        &value["deliver"],
                    ];
                    assert!(carried.iter().any(|value| value.as_str() == Some(text)), "{row:?}: {stdout}");
                }
                None => assert_eq!((reply.stderr.as_deref(), reply.exit_status), (Some(text), 2), "{row:?}"),
            }
        }
    }
}
