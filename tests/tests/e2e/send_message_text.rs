//! A message the send proof queues: its nonce, its length at the harness's limit, and where
//! a model call carried it (once, inside roster's frame, or not at all).

use std::fs;
use std::io::Read;
use std::time::Duration;

use serde_json::Value;

use super::fake_model_server::ModelCall;

/// A message queued by the run.
pub(super) struct Queued {
    pub(super) id: String,
    pub(super) nonce: String,
    /// How long `roster-send` took.
    pub(super) took: Duration,
    /// For a message sent at its harness's limit: how long its text was.
    pub(super) length: Option<String>,
}

/// Checks that `call` holds the message once, inside roster's frame; says where it was.
pub(super) fn check_carried(call: &ModelCall, queued: &Queued, problems: &mut Vec<String>) -> String {
    let count = call.body.matches(&queued.nonce).count();
    let places = locate(call, &queued.nonce);
    if count != 1 {
        problems.push(format!(
            "the request ({}) holds {} {count} times, not once: {}",
            call.request,
            queued.nonce,
            if places.is_empty() { "nowhere".to_owned() } else { places.join(", ") }
        ));
    }
    let head = format!("[roster message {} from ", queued.id);
    let tail = format!("[end of roster message {}]", queued.id);
    if count > 0
        && !(call.body.contains(&head)
            && call.body.contains(&tail)
            && call.body.contains("your user did not type it"))
    {
        problems.push(format!("the request has the nonce without roster's frame ({head}…{tail})"));
    }
    format!("{} once in {}", queued.nonce, places.join(", "))
}

/// Where in `call`'s JSON body `nonce` is: each string holding it, by its path, with the
/// role of the message it is in (`messages[3].content[1].text (role user)`).
pub(super) fn locate(call: &ModelCall, nonce: &str) -> Vec<String> {
    fn walk(value: &Value, path: &str, role: Option<&str>, nonce: &str, found: &mut Vec<String>) {
        match value {
            Value::String(text) if text.contains(nonce) => {
                let role = role.map(|role| format!(" (role {role})")).unwrap_or_default();
                let count = text.matches(nonce).count();
                let times = if count > 1 { format!(" ×{count}") } else { String::new() };
                found.push(format!("{path}{role}{times}"));
            }
            Value::Array(items) => {
                for (index, item) in items.iter().enumerate() {
                    walk(item, &format!("{path}[{index}]"), role, nonce, found);
                }
            }
            Value::Object(fields) => {
                let role = fields.get("role").and_then(Value::as_str).or(role);
                for (key, item) in fields {
                    let path = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
                    walk(item, &path, role, nonce, found);
                }
            }
            _ => {}
        }
    }
    let body: Value = serde_json::from_str(&call.body).unwrap_or(Value::Null);
    let mut found = Vec::new();
    walk(&body, "", None, nonce, &mut found);
    found
}

/// What pads a message to its harness's limit: characters each measure counts differently.
pub(super) const LIMIT_PADDING: &str = "limit é ";

/// Roster-send's own bound on a message's text (16 KiB), less room for the nonce.
pub(super) const LONGEST_TEXT_BYTES: usize = 16 * 1024 - 64;

/// From roster-send's refusal of a text too long, how much to shorten it by and in which
/// measure: "…; shorten it by N or more…" after a length in the harness's unit, or the
/// bytes over its own 16 KiB bound.
pub(super) fn shorten_by(refusal: &str) -> Option<(usize, harness::TextMeasure)> {
    use harness::TextMeasure;
    if let Some(rest) = refusal.split("shorten it by ").nth(1) {
        let over = rest.split_whitespace().next()?.parse().ok()?;
        let measure = [TextMeasure::JsonBytes, TextMeasure::Utf8Bytes, TextMeasure::Utf16Units]
            .into_iter()
            .find(|measure| refusal.contains(measure.unit()))?;
        return Some((over, measure));
    }
    let bytes: usize =
        refusal.split("the message is ").nth(1)?.split(" bytes, over the 16 KiB").next()?.parse().ok()?;
    Some((bytes.saturating_sub(16 * 1024), harness::TextMeasure::Utf8Bytes))
}

/// `ROSTER-E2E-<16 hex digits>`, fresh from /dev/urandom.
pub(super) fn new_nonce() -> anyhow::Result<String> {
    let mut bytes = [0u8; 8];
    fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(format!("ROSTER-E2E-{}", bytes.iter().map(|byte| format!("{byte:02x}")).collect::<String>()))
}
