//! roster-list's notes (dead rows hidden, unknown and untrusted entries,
//! hook failures): on stderr, never among the rows; for people once per
//! cause rather than on every call for a day; for scripts every call, as
//! one JSON line `{"notes":[...]}` on stderr while stdout stays the array
//! of rows; and none at all with `-q`.
//!
//! Regression: notes went to stdout after the table, repeated the same hook
//! failure on every call for 24 hours, were missing from JSON output, and
//! `roster-list -q` still printed them.

use std::time::SystemTime;

use serde_json::Value;
use tests::{Owner, Sandbox, rfc3339, write_file_0600};

/// Appends one hook failure, logged now, the way hook mode logs it.
fn log_hook_failure(sandbox: &Sandbox, message: &str) {
    let log = sandbox.root().join("hook-errors.log");
    let mut text = std::fs::read_to_string(&log).unwrap_or_default();
    text.push_str(&format!("{} roster-register: hook: {message}\n", rfc3339(SystemTime::now())));
    write_file_0600(&log, text.as_bytes());
}

fn list_stderr(sandbox: &Sandbox, args: &[&str]) -> String {
    let outcome = sandbox.run("roster-list", args);
    outcome.expect_code(0);
    outcome.stderr
}

#[test]
fn each_note_is_said_once_per_cause_on_stderr() {
    let sandbox = Sandbox::new();
    let alive = Owner::spawn();
    let doomed = Owner::spawn();
    let doomed_later = Owner::spawn();
    for owner in [&alive, &doomed, &doomed_later] {
        sandbox.register(owner.pid(), &[]);
    }
    doomed.kill();
    log_hook_failure(&sandbox, "payload is not JSON");

    let first = sandbox.run("roster-list", &[]);
    first.expect_code(0);
    let rows = first.stdout_text();
    assert_eq!(rows.lines().count(), 3, "stdout holds the header and the live rows only:\n{rows}");
    assert!(first.stderr.contains("1 dead session hidden"), "{}", first.stderr);
    assert!(first.stderr.contains("1 hook failure in the last day"), "{}", first.stderr);
    assert!(first.stderr.contains("payload is not JSON"), "{}", first.stderr);

    let again = list_stderr(&sandbox, &[]);
    assert!(!again.contains("dead session") && !again.contains("hook failure"), "said again:\n{again}");

    doomed_later.kill();
    log_hook_failure(&sandbox, "registry busy");
    let changed = list_stderr(&sandbox, &[]);
    assert!(changed.contains("2 dead sessions hidden"), "a new cause is said:\n{changed}");
    assert!(
        changed.contains("2 hook failures in the last day"),
        "every failure of the last day counts, shown before or not:\n{changed}"
    );
    assert!(changed.contains("registry busy") && !changed.contains("payload is not JSON"), "{changed}");

    sandbox.run("roster-prune", &[]).expect_code(0);
    let gone = list_stderr(&sandbox, &[]);
    assert!(!gone.contains("dead session"), "{gone}");
    let another = Owner::spawn();
    sandbox.register(another.pid(), &[]);
    another.kill();
    let back = list_stderr(&sandbox, &[]);
    assert!(
        back.contains("1 dead session hidden"),
        "a cause that went away and came back is said again:\n{back}"
    );
}

#[test]
fn quiet_silences_the_notes_and_leaves_them_for_later() {
    let sandbox = Sandbox::new();
    let doomed = Owner::spawn();
    sandbox.register(doomed.pid(), &[]);
    doomed.kill();
    log_hook_failure(&sandbox, "payload is not JSON");
    assert_eq!(list_stderr(&sandbox, &["-q"]), "");
    let later = list_stderr(&sandbox, &[]);
    assert!(later.contains("1 dead session hidden") && later.contains("1 hook failure"), "{later}");
}

#[test]
fn json_output_keeps_its_array_and_carries_every_note_on_stderr() {
    let sandbox = Sandbox::new();
    let doomed = Owner::spawn();
    sandbox.register(doomed.pid(), &[]);
    doomed.kill();
    log_hook_failure(&sandbox, "payload is not JSON");
    sandbox.write_entry("77.json", b"garbage");

    for round in 0..2 {
        let outcome = sandbox.run("roster-list", &["--format", "json"]);
        outcome.expect_code(0);
        let rows: Value = serde_json::from_slice(&outcome.stdout).expect("stdout is the JSON array of rows");
        assert!(rows.is_array(), "{rows}");
        let lines: Vec<&str> = outcome.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "round {round}: one JSON line of notes: {:?}", outcome.stderr);
        let notes: Value = serde_json::from_str(lines[0]).unwrap();
        let kinds: Vec<&str> =
            notes["notes"].as_array().unwrap().iter().map(|note| note["kind"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["dead-hidden", "unknown", "hook-failures"], "round {round}: {notes}");
        assert!(notes["notes"][2]["message"].as_str().unwrap().contains("payload is not JSON"), "{notes}");
    }
    let quiet = sandbox.run("roster-list", &["--json", "-q"]);
    quiet.expect_code(0);
    assert_eq!(quiet.stderr, "");
    assert!(serde_json::from_slice::<Value>(&quiet.stdout).unwrap().is_array());
}

#[test]
fn an_untrusted_entry_says_why() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    sandbox.register(owner.pid(), &[]);
    let copy = sandbox.sessions().join("99.json");
    std::fs::copy(sandbox.record_path(owner.pid()), &copy).unwrap();
    std::fs::set_permissions(&copy, std::os::unix::fs::PermissionsExt::from_mode(0o660)).unwrap();
    let notes = list_stderr(&sandbox, &[]);
    assert!(
        notes.contains("1 untrusted entry is never believed (99.json: ")
            && notes.contains("writable by group or others"),
        "{notes}"
    );
}

/// Regression: after four hook failures, `hook-errors.log` held four lines
/// and `roster-list --json` said 4, while the text note said "2 hook
/// failures in the last day" (it counted only those after the newest one
/// a note had shown). One count, one meaning: the failures of the last
/// day, in text and JSON, whether or not a note was shown in between.
#[test]
fn the_hook_failure_count_is_the_last_days_in_text_and_json() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    sandbox.register(owner.pid(), &[]);
    let json_message = |sandbox: &Sandbox| {
        let outcome = sandbox.run("roster-list", &["--json"]);
        outcome.expect_code(0);
        let notes: Value = serde_json::from_str(outcome.stderr.trim()).expect("one JSON line of notes");
        notes["notes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|note| note["kind"] == "hook-failures")
            .map(|note| note["message"].as_str().unwrap().to_owned())
            .unwrap_or_default()
    };

    log_hook_failure(&sandbox, "first");
    log_hook_failure(&sandbox, "second");
    let text = list_stderr(&sandbox, &[]);
    assert!(text.contains("2 hook failures in the last day"), "{text}");
    log_hook_failure(&sandbox, "third");
    log_hook_failure(&sandbox, "fourth");
    let log = std::fs::read_to_string(sandbox.root().join("hook-errors.log")).unwrap();
    assert_eq!(log.lines().count(), 4, "{log}");
    assert!(
        json_message(&sandbox).starts_with("4 hook failures in the last day"),
        "{}",
        json_message(&sandbox)
    );
    let text = list_stderr(&sandbox, &[]);
    assert!(text.contains("4 hook failures in the last day") && text.contains("fourth"), "{text}");
    // Nothing new since: nothing said, and the count stays the same for scripts.
    let text = list_stderr(&sandbox, &[]);
    assert!(!text.contains("hook failure"), "said again with nothing new:\n{text}");
    assert!(json_message(&sandbox).starts_with("4 hook failures in the last day"));
}

/// Regression: a dead Claude Code session, whose file is Claude Code's own,
/// was counted among "N dead sessions hidden: ... `roster-prune` removes
/// them", and the prune advised removed nothing (`removed 0 dead`). Each
/// note's advice, followed, now does what it says.
#[test]
fn each_dead_session_note_gives_advice_that_works_when_followed() {
    use crate::adopted_sessions::{session_file, write_session};
    let sandbox = Sandbox::new();
    let recorded = Owner::spawn();
    sandbox.register(recorded.pid(), &[]);
    let adopted = Owner::spawn();
    let cwd = sandbox.project().to_string_lossy().into_owned();
    let adopted_file = write_session(
        &sandbox,
        &format!("{}.json", adopted.pid()),
        &session_file(adopted.pid(), "12d99b59-dead", &cwd),
    );
    let adopted_pid = u64::from(adopted.pid());
    recorded.kill();
    adopted.kill();

    let said = list_stderr(&sandbox, &[]);
    let line_of = |needle: &str| {
        said.lines().find(|line| line.contains(needle)).unwrap_or_else(|| panic!("no {needle:?}:\n{said}"))
    };
    let records_note = line_of("1 dead session hidden");
    assert!(records_note.contains("`roster-prune` removes them"), "{said}");
    let adopted_note = line_of("1 dead Claude Code session hidden");
    assert!(
        !adopted_note.contains("`roster-prune` removes"),
        "prune advised for a file it never removes:\n{said}"
    );
    assert!(adopted_note.contains("delete it by hand"), "{said}");

    // Followed: the prune removes the record, and only the record, and
    // says why it leaves the harness's file.
    let pruned = sandbox.run("roster-prune", &[]);
    pruned.expect_code(0);
    let pruned = pruned.stdout_text();
    assert!(pruned.contains("removed 1 dead"), "{pruned}");
    assert!(
        pruned.contains(
            "left 1 dead Claude Code session: a harness's own files, which roster-prune never removes"
        ),
        "{pruned}"
    );
    let rows = sandbox.run("roster-list", &["--all", "--json"]).rows();
    assert_eq!(pids_of(&rows), [adopted_pid], "{rows:?}");
    assert_eq!(rows[0]["path"], adopted_file.to_string_lossy().as_ref(), "the path the note points to");
    let again = list_stderr(&sandbox, &[]);
    assert!(!again.contains("1 dead session hidden"), "the pruned record is still counted:\n{again}");

    // Followed: the file deleted by hand, nothing is left to say.
    std::fs::remove_file(&adopted_file).unwrap();
    let json = sandbox.run("roster-list", &["--json"]);
    json.expect_code(0);
    assert!(!json.stderr.contains("dead"), "{}", json.stderr);
}

fn pids_of(rows: &[Value]) -> Vec<u64> {
    rows.iter().filter_map(|row| row["session_pid"].as_u64()).collect()
}

/// Regression: the hook-failure note quoted the log line as written,
/// `last: 2026-12-04T20:32:25.272870736Z roster-register: ...`: raw UTC with
/// nanoseconds. It now says the local time to the second.
#[test]
fn the_hook_failure_note_says_its_time_in_local_time() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    sandbox.register(owner.pid(), &[]);
    let logged = SystemTime::now();
    log_hook_failure(&sandbox, "payload is not JSON");
    // Three hours east of UTC, with no daylight saving: one answer all year.
    let outcome = sandbox.run_with_env("roster-list", &[], &[("TZ", "EAST-3")]);
    outcome.expect_code(0);
    let note =
        outcome.stderr.lines().find(|line| line.contains("hook failure")).expect("the note").to_owned();
    let local = rfc3339(logged + std::time::Duration::from_secs(3 * 3600));
    let shown =
        format!("last, at {} {}: roster-register: hook: payload is not JSON", &local[..10], &local[11..19]);
    assert!(note.ends_with(&shown), "{note:?} does not end with {shown:?}");
    assert!(!note.contains(&rfc3339(logged)[..19]), "the raw UTC time is still there: {note}");
}
