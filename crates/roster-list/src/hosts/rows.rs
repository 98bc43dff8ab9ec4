//! Rows that came from another machine (docs/contract.md §6.7): which JSON
//! contract they follow, told by their key set against `ROW_KEYS` (an
//! older roster's rows lack keys, a newer one's carry more), each row
//! given its `host` and every current key (`null` where its roster had
//! none), and its cells for the table, from the JSON alone: a row is shown
//! with what it has and never misread.

use std::collections::BTreeSet;

use cli_support::{escape_for_terminal, format_age};
use registry_core::{ROW_KEYS, Timestamp};
use serde_json::{Map, Value};
use session_events::HOST_KEY;

/// How a host's rows differ from this roster's contract: the current keys
/// none of its rows has, and the keys this roster does not know.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ContractDifference {
    pub missing: BTreeSet<String>,
    pub unknown: BTreeSet<String>,
}

impl ContractDifference {
    /// Compares every row's keys with `ROW_KEYS` (`host` is this side's).
    pub fn of_rows<'a>(rows: impl IntoIterator<Item = &'a Map<String, Value>>) -> ContractDifference {
        let mut difference = ContractDifference::default();
        for row in rows {
            difference.add_row(row);
        }
        difference
    }

    /// Adds what one row lacks or carries beyond the contract; returns
    /// whether that changed what is known of the host.
    pub fn add_row(&mut self, row: &Map<String, Value>) -> bool {
        let mut changed = false;
        for key in ROW_KEYS {
            if !row.contains_key(key) {
                changed |= self.missing.insert(key.to_owned());
            }
        }
        for key in row.keys() {
            if key != HOST_KEY && !ROW_KEYS.contains(&key.as_str()) {
                changed |= self.unknown.insert(key.clone());
            }
        }
        changed
    }

    /// The note an older host calls for: what its rows lack.
    pub fn older_note(&self, host: &str) -> Option<String> {
        (!self.missing.is_empty()).then(|| {
            format!(
                "{}: an older roster: its rows lack {} (null in JSON, - in the table); upgrade roster there",
                escape_for_terminal(host),
                escape_for_terminal(&joined(&self.missing))
            )
        })
    }

    /// The note a newer host calls for: the keys passed on unread.
    pub fn newer_note(&self, host: &str) -> Option<String> {
        (!self.unknown.is_empty()).then(|| {
            format!(
                "{}: a newer roster: keys this one does not know ({}) are passed on as they are; upgrade \
                 roster here to read them",
                escape_for_terminal(host),
                escape_for_terminal(&joined(&self.unknown))
            )
        })
    }
}

/// The row as this roster prints it: `host` first, then every key of
/// `ROW_KEYS` in order (`null` where the host's roster had none), then the
/// keys it does not know, as they came.
pub fn row_with_host(row: Map<String, Value>, host: &str) -> Map<String, Value> {
    let mut row = row;
    let mut shown = Map::with_capacity(ROW_KEYS.len() + 1);
    shown.insert(HOST_KEY.to_owned(), Value::from(host));
    for key in ROW_KEYS {
        shown.insert(key.to_owned(), row.remove(key).unwrap_or(Value::Null));
    }
    row.remove(HOST_KEY);
    shown.extend(row);
    shown
}

/// The rows of a `roster-list --format json` answer: a JSON array of
/// objects, or why not.
pub fn parse_rows(stdout: &[u8]) -> Result<Vec<Map<String, Value>>, String> {
    let value: Value = serde_json::from_slice(stdout).map_err(|error| format!("not JSON ({error})"))?;
    let Value::Array(rows) = value else { return Err("JSON, but not an array of rows".to_owned()) };
    rows.into_iter()
        .map(|row| match row {
            Value::Object(row) => Ok(row),
            _ => Err("an array holding something other than rows".to_owned()),
        })
        .collect()
}

/// The cells of a row in the table's columns (HOST first), from its JSON:
/// a key its roster did not have is `-`.
pub fn text_cells(row: &Value, now: Timestamp) -> Vec<String> {
    let text = |key: &str| row.get(key).and_then(Value::as_str).filter(|value| !value.is_empty());
    let shown =
        |key: &str| text(key).map_or_else(|| "-".to_owned(), |value| escape_for_terminal(value).into_owned());
    let liveness = text("liveness");
    let alive = liveness == Some("alive");
    let problem = text("problem");
    let pid = match row.get("session_pid").and_then(Value::as_u64) {
        Some(pid) if row.get("session_pid_verified") == Some(&Value::Bool(false)) => format!("{pid}?"),
        Some(pid) => pid.to_string(),
        None => "-".to_owned(),
    };
    let state = match text("state") {
        Some(state @ ("working" | "idle" | "waiting")) if alive => {
            let age = text("state_since")
                .and_then(Timestamp::parse)
                .map(|since| format!(" {}", format_age(since.age(now))))
                .unwrap_or_default();
            match text("waiting_for") {
                Some(what) => format!("{state}: {}{age}", escape_for_terminal(what)),
                None => format!("{state}{age}"),
            }
        }
        _ => "-".to_owned(),
    };
    let consent = match (text("consent"), row.get("should_arm").and_then(Value::as_bool)) {
        _ if !alive || problem.is_some() => "-",
        (Some("armed"), _) => "armed",
        (Some("disarmed"), _) => "off (disarmed)",
        (_, Some(true)) => "armed (repo)",
        (_, Some(false)) => "off",
        _ => "-",
    };
    let age = text("registered_at")
        .and_then(Timestamp::parse)
        .map_or_else(|| "-".to_owned(), |at| format_age(at.age(now)));
    let cwd = match problem {
        Some(problem) => format!("{}: {}", escape_for_terminal(problem), shown("path")),
        None => shown("cwd"),
    };
    vec![
        shown(HOST_KEY),
        pid,
        shown("harness"),
        shown("agent"),
        liveness.map_or_else(|| "-".to_owned(), |liveness| escape_for_terminal(liveness).into_owned()),
        state,
        consent.to_owned(),
        age,
        cwd,
        shown("session_id"),
    ]
}

fn joined(keys: &BTreeSet<String>) -> String {
    keys.iter().map(String::as_str).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            other => panic!("not an object: {other}"),
        }
    }

    #[test]
    fn an_older_row_gets_every_current_key_as_null_and_a_note() {
        let row = object(serde_json::json!({"format": 2, "session_pid": 7, "liveness": "alive"}));
        let difference = ContractDifference::of_rows([&row]);
        assert!(difference.missing.contains("state") && difference.missing.contains("origin"));
        assert!(difference.unknown.is_empty());
        let note = difference.older_note("box").expect("an older host is named");
        assert!(note.starts_with("box: an older roster") && note.contains("state"), "{note}");
        let shown = Value::Object(row_with_host(row, "box"));
        let keys: Vec<&str> = shown.as_object().expect("object").keys().map(String::as_str).collect();
        assert_eq!(keys[0], "host");
        assert_eq!(keys[1..], ROW_KEYS);
        assert_eq!(shown["state"], Value::Null);
        assert_eq!(shown["session_pid"], 7);
        let cells = text_cells(&shown, Timestamp::now());
        assert_eq!(cells[..5], ["box", "7", "-", "-", "alive"]);
        assert_eq!(cells[5], "-");
    }

    #[test]
    fn a_newer_row_keeps_the_keys_this_roster_does_not_know() {
        let mut row = Map::new();
        for key in ROW_KEYS {
            row.insert(key.to_owned(), Value::Null);
        }
        row.insert("galaxy".to_owned(), Value::from(42));
        let difference = ContractDifference::of_rows([&row]);
        assert!(difference.missing.is_empty());
        assert_eq!(difference.unknown.iter().collect::<Vec<_>>(), ["galaxy"]);
        assert!(difference.newer_note("box").is_some_and(|note| note.contains("galaxy")));
        let shown = row_with_host(row, "box");
        assert_eq!(shown["galaxy"], 42);
        assert_eq!(shown.keys().next_back().map(String::as_str), Some("galaxy"));
    }

    #[test]
    fn only_an_array_of_objects_is_rows() {
        assert_eq!(parse_rows(b"[]"), Ok(Vec::new()));
        assert!(parse_rows(b"[{\"a\":1}]").is_ok());
        for answer in [&b"{}"[..], b"[1]", b"hello", b""] {
            assert!(parse_rows(answer).is_err(), "{answer:?}");
        }
    }
}
