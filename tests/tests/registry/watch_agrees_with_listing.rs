//! The watch and the listing agree at every moment (docs/contract.md §6.2, §6.5):
//! whatever mix of roster records and Claude Code's own session files there is, the rows
//! a reader of `roster-list --watch` holds (each row by its path, as the last event about
//! it left it) are the rows `roster-list` lists, through a hand registration of a session
//! Claude Code lists, its `roster-prune --current`, its owner's death, and the prune of a
//! dead record.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::Value;
use tests::{Owner, Sandbox};

use crate::adopted_sessions::{session_file, write_session};
use crate::watch::Watcher;

/// How long the watch may take to catch up with one step.
const CATCH_UP: Duration = Duration::from_secs(10);

/// What a row is, as both sides must agree on it.
type Seen = (u64, String, String);

fn seen(row: &Value) -> Seen {
    (
        row["session_pid"].as_u64().unwrap_or_default(),
        row["origin"].as_str().unwrap_or_default().to_owned(),
        row["liveness"].as_str().unwrap_or_default().to_owned(),
    )
}

/// A watcher, and the rows its events have told so far.
struct Reader {
    watcher: Watcher,
    rows: BTreeMap<String, Seen>,
}

impl Reader {
    fn start(sandbox: &Sandbox) -> Reader {
        Reader { watcher: Watcher::start(sandbox, &["--all"]), rows: BTreeMap::new() }
    }

    /// Takes in one event: `removed` forgets its row, any other event about a row sets it.
    fn fold(&mut self, event: &Value) {
        let Some(path) = event["row"]["path"].as_str() else { return };
        match event["event"].as_str() {
            Some("removed") => {
                self.rows.remove(path);
            }
            _ => {
                self.rows.insert(path.to_owned(), seen(&event["row"]));
            }
        }
    }

    /// Reads events until the rows they tell are the listing's, and returns the events
    /// read; fails the test when the watch has not caught up within `CATCH_UP`.
    #[track_caller]
    fn agrees_with_listing(&mut self, sandbox: &Sandbox, step: &str) -> Vec<Value> {
        let listed: BTreeMap<String, Seen> = sandbox
            .list_all()
            .iter()
            .map(|row| (row["path"].as_str().expect("a path").to_owned(), seen(row)))
            .collect();
        let deadline = Instant::now() + CATCH_UP;
        let mut events = Vec::new();
        while self.rows != listed {
            let left = deadline.saturating_duration_since(Instant::now());
            let Ok(line) = self.watcher.lines.recv_timeout(left) else {
                panic!(
                    "{step}: the watch tells {:#?}\nwhile the listing shows {listed:#?}\nafter {events:#?}",
                    self.rows
                );
            };
            let event: Value = serde_json::from_str(&line).expect("an event is JSON");
            self.fold(&event);
            events.push(event);
        }
        // Nothing more follows that would part them again.
        while let Ok(line) = self.watcher.lines.recv_timeout(Duration::from_millis(300)) {
            let event: Value = serde_json::from_str(&line).expect("an event is JSON");
            self.fold(&event);
            events.push(event);
        }
        assert_eq!(self.rows, listed, "{step}: the watch went on to tell otherwise: {events:#?}");
        events
    }
}

fn kinds_for(events: &[Value], pid: u32) -> Vec<(String, String)> {
    events
        .iter()
        .filter(|event| event["row"]["session_pid"] == pid)
        .map(|event| {
            (
                event["event"].as_str().unwrap_or_default().to_owned(),
                event["row"]["origin"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

fn pair(event: &str, origin: &str) -> (String, String) {
    (event.to_owned(), origin.to_owned())
}

/// Regression: after a hand registration of a session Claude Code lists, `roster-prune
/// --current` made the watch print `removed` while the listing still showed the session
/// alive from Claude Code's file, and the owner's SIGKILL then printed no `died`.
#[test]
fn the_watch_tells_the_rows_the_listing_shows_through_every_mix_of_records_and_harness_files() {
    let sandbox = Sandbox::new();
    let cwd = sandbox.project().to_string_lossy().into_owned();
    let mut reader = Reader::start(&sandbox);
    reader.agrees_with_listing(&sandbox, "an empty registry");

    // A session Claude Code lists, which roster was never told about.
    let first = Owner::spawn();
    let pid = first.pid();
    write_session(&sandbox, &format!("{pid}.json"), &session_file(pid, "s-first", &cwd));
    let events = reader.agrees_with_listing(&sandbox, "Claude Code's file written");
    assert_eq!(kinds_for(&events, pid), [pair("registered", "claude-code")]);

    // Registered by hand: one session, roster's row.
    sandbox.run("roster-register", &["--pid", &pid.to_string(), "--agent", "heron"]).expect_code(0);
    let events = reader.agrees_with_listing(&sandbox, "registered by hand");
    assert_eq!(kinds_for(&events, pid), [pair("removed", "claude-code"), pair("registered", "roster")]);

    // Its record removed on request: the session is Claude Code's row again.
    sandbox
        .run_with_env("roster-prune", &["--current"], &[("ROSTER_SESSION_PID", &pid.to_string())])
        .expect_code(0);
    let events = reader.agrees_with_listing(&sandbox, "prune --current");
    assert_eq!(kinds_for(&events, pid), [pair("removed", "roster"), pair("registered", "claude-code")]);

    // Its owner killed: died, from Claude Code's file, whose owner the watch follows.
    first.kill();
    let events = reader.agrees_with_listing(&sandbox, "SIGKILL of the harness's session");
    assert_eq!(kinds_for(&events, pid), [pair("died", "claude-code")]);

    // A registered session that dies, then is pruned: its record goes, its file stays.
    let second = Owner::spawn();
    let pid = second.pid();
    write_session(&sandbox, &format!("{pid}.json"), &session_file(pid, "s-second", &cwd));
    reader.agrees_with_listing(&sandbox, "a second file written");
    sandbox.run("roster-register", &["--pid", &pid.to_string(), "--agent", "wren"]).expect_code(0);
    reader.agrees_with_listing(&sandbox, "the second registered by hand");
    second.kill();
    let events = reader.agrees_with_listing(&sandbox, "SIGKILL of the registered session");
    assert_eq!(kinds_for(&events, pid), [pair("died", "roster")]);
    sandbox.run("roster-prune", &[]).expect_code(0);
    let events = reader.agrees_with_listing(&sandbox, "the dead record pruned");
    assert_eq!(kinds_for(&events, pid), [pair("removed", "roster"), pair("registered", "claude-code")]);
}

/// The listing takes a harness's file into the roster record of the same session before
/// it filters, as the watch does: a record a filter leaves out never lets its session
/// show up again as the harness's row.
#[test]
fn a_filter_that_leaves_a_record_out_leaves_its_harness_file_out_too() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    let pid = owner.pid();
    let cwd = sandbox.project().to_string_lossy().into_owned();
    write_session(&sandbox, &format!("{pid}.json"), &session_file(pid, "s-filtered", &cwd));
    sandbox.run("roster-register", &["--pid", &pid.to_string(), "--agent", "heron"]).expect_code(0);
    for filter in [["--agent", ""], ["--agent", "wren"], ["--harness", "codex"]] {
        let rows = sandbox.list(&filter);
        assert!(rows.is_empty(), "{filter:?} shows {rows:#?}");
    }
    let rows = sandbox.list(&["--agent", "heron"]);
    assert_eq!(
        rows.iter().map(seen).collect::<Vec<_>>(),
        [(u64::from(pid), "roster".into(), "alive".into())]
    );
}
