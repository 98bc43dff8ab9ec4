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

/// How a harness counts the text a hook hands it, where it cuts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextMeasure {
    /// UTF-16 code units, a JavaScript string's length (never fewer than
    /// the text's characters).
    Utf16Units,
    /// UTF-8 bytes.
    Utf8Bytes,
    /// UTF-8 bytes once written as a JSON string (quotes left out): what
    /// a harness that reads the hook's JSON output in fixed-size chunks
    /// counts.
    JsonBytes,
}

impl TextMeasure {
    /// The length of `text` in this measure. Each measure adds up over a
    /// concatenation: the length of `a + b` is that of `a` plus that of `b`.
    pub fn length(self, text: &str) -> usize {
        match self {
            TextMeasure::Utf16Units => text.encode_utf16().count(),
            TextMeasure::Utf8Bytes => text.len(),
            TextMeasure::JsonBytes => text.chars().map(json_escaped_bytes).sum(),
        }
    }

    /// The unit, in words.
    pub fn unit(self) -> &'static str {
        match self {
            TextMeasure::Utf16Units => "characters (UTF-16 units)",
            TextMeasure::Utf8Bytes => "bytes (UTF-8)",
            TextMeasure::JsonBytes => "bytes (UTF-8, as a JSON string)",
        }
    }
}

/// How many bytes `character` takes inside a JSON string as serde_json
/// writes it: the two-character escapes, `\u00XX` for the other controls,
/// and the rest as UTF-8.
fn json_escaped_bytes(character: char) -> usize {
    match character {
        '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
        '\0'..='\u{1f}' => 6,
        other => other.len_utf8(),
    }
}

/// The longest text a hook can hand the model whole at one event, in the
/// measure its harness counts in (frames and separators included): past
/// it a harness cuts the text, shows the model a preview and a file path,
/// or garbles it, and a frame's closing line is lost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeliveryLimit {
    pub measure: TextMeasure,
    pub max: usize,
}

impl DeliveryLimit {
    /// The length of `text` as this limit counts it.
    pub fn length(&self, text: &str) -> usize {
        self.measure.length(text)
    }
}

/// The most a Gemini CLI hook's whole JSON output may take: Gemini CLI
/// decodes a hook's stdout chunk by chunk, and a character split across
/// its first 64 KiB boundary arrives garbled.
const GEMINI_OUTPUT_CHUNK: usize = 64 * 1024;

/// What Gemini CLI's reply wraps the text in, at most (the JSON around
/// the text of `delivery_reply`, its newline, and room to spare).
const GEMINI_REPLY_WRAPPING: usize = 512;

/// The limit at `event`, measured with each pinned release against a
/// local model server (docs/harnesses.md): Claude Code keeps a prompt
/// hook's `additionalContext` whole to 10,000 UTF-16 units and gives a
/// 2 KB preview past it; its Stop hook's stderr, with the
/// `[<hook command>]: ` prefix it adds, to 51,024 (50,000 leaves 1,024 for
/// that prefix); Codex keeps 10,000 bytes and cuts out the middle past
/// them; Gemini CLI garbles multi-byte characters once its hook's output
/// passes 64 KiB; Copilot CLI (a token budget, over 400,000 characters),
/// opencode (over 1,000,000) and Amp (not measurable offline) are held to
/// 200,000.
pub fn delivery_limit(event: &DeliveryEvent) -> DeliveryLimit {
    let (measure, max) = match (event.harness, event.point) {
        (Harness::ClaudeCode, DeliveryPoint::Prompt) => (TextMeasure::Utf16Units, 10_000),
        (Harness::ClaudeCode, DeliveryPoint::TurnEnd) => (TextMeasure::Utf16Units, 50_000),
        (Harness::Codex, _) => (TextMeasure::Utf8Bytes, 10_000),
        (Harness::GeminiCli, _) => (TextMeasure::JsonBytes, GEMINI_OUTPUT_CHUNK - GEMINI_REPLY_WRAPPING),
        _ => (TextMeasure::Utf16Units, 200_000),
    };
    DeliveryLimit { measure, max }
}

/// Each delivery event of `harness` with its limit: a message must fit
/// every one, whichever comes first hands it over. Empty for a harness
/// that cannot deliver.
pub fn delivery_limits(harness: Harness) -> impl Iterator<Item = (&'static DeliveryEvent, DeliveryLimit)> {
    DELIVERY_EVENTS.iter().filter(move |row| row.harness == harness).map(|row| (row, delivery_limit(row)))
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
    fn every_harness_that_delivers_has_its_limits() {
        for row in DELIVERY_EVENTS {
            assert!(delivery_limits(row.harness).any(|(event, _)| event == row), "{row:?}");
        }
        let claude: Vec<_> = delivery_limits(Harness::ClaudeCode).map(|(_, limit)| limit.max).collect();
        assert_eq!(claude, [10_000, 50_000]);
        assert_eq!(delivery_limits(Harness::Goose).count(), 0);
    }

    /// Each measure counts as its harness does, and adds up over a
    /// concatenation (what a delivery joining framed messages relies on).
    #[test]
    fn each_measure_counts_as_its_harness_does() {
        let text = "a\u{e9}\u{1f600}\"\\\n\u{1}";
        assert_eq!(TextMeasure::Utf16Units.length(text), 1 + 1 + 2 + 1 + 1 + 1 + 1);
        assert_eq!(TextMeasure::Utf8Bytes.length(text), 1 + 2 + 4 + 1 + 1 + 1 + 1);
        let json = serde_json::to_string(text).unwrap();
        assert_eq!(TextMeasure::JsonBytes.length(text), json.len() - 2);
        for measure in [TextMeasure::Utf16Units, TextMeasure::Utf8Bytes, TextMeasure::JsonBytes] {
            assert_eq!(measure.length(&format!("{text}{text}")), 2 * measure.length(text));
        }
    }

    /// A Gemini CLI reply at its limit stays within the 64 KiB its
    /// harness reads whole, whatever the text's characters.
    #[test]
    fn a_gemini_reply_at_its_limit_fits_its_first_chunk() {
        for row in DELIVERY_EVENTS.iter().filter(|row| row.harness == Harness::GeminiCli) {
            let limit = delivery_limit(row);
            for unit in ["a", "\u{e9}", "\u{1f600}", "\u{1}", "\n"] {
                let unit_length = limit.length(unit);
                let text = unit.repeat(limit.max / unit_length);
                assert!(limit.length(&text) <= limit.max && limit.length(&text) + unit_length > limit.max);
                let reply = delivery_reply(row, &text);
                let output = reply.stdout.expect("stdout").len() + 1;
                assert!(output <= GEMINI_OUTPUT_CHUNK, "{row:?} {unit:?}: {output} bytes");
            }
        }
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
