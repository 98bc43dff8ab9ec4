//! What records and rows hold: the keys of a record and of a JSON row, a
//! record's file name in this world, and helpers to find and edit rows.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

/// The three registry binaries every contract test runs.
pub const REGISTRY_TOOLS: [&str; 3] = ["roster-register", "roster-list", "roster-prune"];

/// Every key of a record (docs/contract.md §3); a JSON row carries each, null where absent.
pub const RECORD_KEYS: [&str; 23] = [
    "format",
    "session_pid",
    "session_pid_source",
    "session_pid_verified",
    "owner_uid",
    "start_ticks",
    "pidfs_ino",
    "boot_id",
    "pid_ns",
    "time_ns",
    "user_ns",
    "machine",
    "harness",
    "harness_version",
    "agent",
    "session_id",
    "transcript_path",
    "socket",
    "location",
    "cwd",
    "registrar_pid",
    "registered_at",
    "refreshed_at",
];

/// The keys a JSON row adds to the record's (docs/contract.md §6.2).
pub const ROW_EXTRA_KEYS: [&str; 13] = [
    "liveness",
    "liveness_reason",
    "state",
    "waiting_for",
    "state_since",
    "state_source",
    "problem",
    "consent",
    "should_arm",
    "consent_reason",
    "path",
    "origin",
    "messages_pending",
];

/// The file name of `pid`'s record (and consent marker) when it is
/// registered from this process's world: `<pid>@<pid namespace>-<boot
/// hash>.json` (docs/contract.md §2).
pub fn record_file_name_here(pid: u32) -> String {
    let pid = owner_liveness::Pid::new(pid).expect("a non-zero pid");
    let world = registry_core::World::new(own_namespace_inode("pid"), &boot_id());
    registry_core::RecordName::new(pid, world).file_name()
}

/// The inode of one of this process's namespaces (`pid`, `time`, …).
pub fn own_namespace_inode(kind: &str) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(format!("/proc/self/ns/{kind}")).expect("stat /proc/self/ns").ino()
}

/// The current boot id.
pub fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id").expect("read boot_id").trim().to_owned()
}

/// Checks that a JSON row has every record key and every row key; returns
/// the missing ones.
pub fn missing_row_keys(row: &Value) -> Vec<&'static str> {
    let Some(object) = row.as_object() else {
        return RECORD_KEYS.iter().chain(&ROW_EXTRA_KEYS).copied().collect();
    };
    RECORD_KEYS.iter().chain(&ROW_EXTRA_KEYS).copied().filter(|key| !object.contains_key(*key)).collect()
}

/// The row whose `path` ends in `sessions/<name>`.
pub fn row_named<'a>(rows: &'a [Value], name: &str) -> Option<&'a Value> {
    let suffix = format!("/sessions/{name}");
    rows.iter().find(|row| row["path"].as_str().is_some_and(|path| path.ends_with(&suffix)))
}

/// The rows for `pid`.
pub fn rows_for_pid(rows: &[Value], pid: u32) -> Vec<&Value> {
    rows.iter().filter(|row| row["session_pid"].as_u64() == Some(u64::from(pid))).collect()
}

/// The pids of rows, as a set.
pub fn row_pids(rows: &[Value]) -> BTreeSet<u64> {
    rows.iter().filter_map(|row| row["session_pid"].as_u64()).collect()
}

/// Edits a record so it names another process at the same pid: a later
/// start tick and, where recorded, another pidfs inode. Every identity
/// signal then says "not this process", so the verdict is dead however the
/// signals are weighed (docs/contract.md §5 step 4).
pub fn make_identity_stale(record: &mut Map<String, Value>) {
    let ticks = record["start_ticks"].as_u64().expect("start_ticks is a number");
    record.insert("start_ticks".into(), Value::from(ticks + 1));
    if let Some(inode) = record.get("pidfs_ino").and_then(Value::as_u64) {
        record.insert("pidfs_ino".into(), Value::from(inode + 1));
    }
}
