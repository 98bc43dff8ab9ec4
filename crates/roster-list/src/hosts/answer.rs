//! What one host answered `roster-list --host` (docs/contract.md §6.7): its
//! rows, or why it gave none, and its notes, each naming the host; and the
//! one JSON line of notes a script reads on stderr.

use serde_json::{Map, Value};

/// A note about one host: one of its own notes (`dead-hidden`, …) or one
/// about reaching it (`host-unreachable`, …).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostNote {
    pub host: String,
    pub kind: String,
    pub message: String,
}

/// What a host answered: its rows as its roster printed them, and its notes.
#[derive(Debug, Default)]
pub struct Answered {
    pub rows: Vec<Map<String, Value>>,
    pub notes: Vec<HostNote>,
}

/// Why a host gave no rows: the note that says so (its kind one of
/// `host-unreachable`, `host-without-roster`, `host-older-contract`,
/// `host-unreadable`).
#[derive(Debug)]
pub struct Unanswered {
    pub note: HostNote,
}

/// The notes as one JSON line, `{"notes":[{"kind","message","host"}]}`.
pub fn host_notes_json_line(notes: &[HostNote]) -> String {
    let notes: Vec<Value> = notes
        .iter()
        .map(|note| serde_json::json!({ "kind": note.kind, "message": note.message, "host": note.host }))
        .collect();
    serde_json::json!({ "notes": notes }).to_string()
}

/// The notes a host's `roster-list --format json` printed on stderr (its
/// one `{"notes":[...]}` line), each given the host's name.
pub fn notes_of_stderr(stderr: &str, host: &str) -> Vec<HostNote> {
    stderr
        .lines()
        .filter(|line| line.starts_with("{\"notes\""))
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .flat_map(|line| match line.get("notes") {
            Some(Value::Array(notes)) => notes.clone(),
            _ => Vec::new(),
        })
        .filter_map(|note| {
            Some(HostNote {
                host: host.to_owned(),
                kind: note.get("kind")?.as_str()?.to_owned(),
                message: note.get("message")?.as_str()?.to_owned(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hosts_notes_line_is_read_and_named() {
        let stderr = "warning: something\n{\"notes\":[{\"kind\":\"dead-hidden\",\"message\":\"1 dead\"}]}\n";
        let notes = notes_of_stderr(stderr, "box");
        assert_eq!(
            notes,
            [HostNote {
                host: "box".to_owned(),
                kind: "dead-hidden".to_owned(),
                message: "1 dead".to_owned()
            }]
        );
        let line: Value = serde_json::from_str(&host_notes_json_line(&notes)).expect("JSON");
        assert_eq!(line["notes"][0]["host"], "box");
        assert_eq!(line["notes"][0]["kind"], "dead-hidden");
    }
}
