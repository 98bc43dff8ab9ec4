//! The JSON rows of `roster-list` and `roster-register` (docs/contract.md §3, §6.1,
//! §6.2): the stable contract scripts rely on. Every row carries every
//! record key (null where absent) plus `liveness`, `liveness_reason`,
//! `problem`, `consent` and `path`, whatever the row is: alive, dead,
//! unknown or a problem. Also the order and the filters of the listing,
//! and the count of messages waiting for each session.

use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;
use tests::{
    Owner, RECORD_KEYS, Sandbox, boot_id, missing_row_keys, own_namespace_inode, parse_rfc3339, row_named,
    rows_for_pid, set_mtime, unix_nanos,
};

fn start_ticks_of(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after_name = &stat[stat.rfind(')').unwrap() + 1..];
    // Field 3 (state) is the first after the name; field 22 is 19 later.
    after_name.split_whitespace().nth(19).unwrap().parse().unwrap()
}

fn only_row_for(rows: &[Value], pid: u32) -> Value {
    let found = rows_for_pid(rows, pid);
    assert_eq!(found.len(), 1, "expected one row for pid {pid} in {rows:#?}");
    found[0].clone()
}

fn assert_all_keys(row: &Value, what: &str) {
    let missing = missing_row_keys(row);
    assert!(missing.is_empty(), "{what} row lacks {missing:?}: {row:#}");
}

#[test]
fn alive_row_has_every_key_and_the_recorded_identity() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    let app = sandbox.home().join("src/app");
    std::fs::create_dir_all(&app).unwrap();
    let before = unix_nanos(SystemTime::now());
    let registered = sandbox.register(
        owner.pid(),
        &[
            "--agent",
            "wren",
            "--session-id",
            "s-1",
            "--harness",
            "claude-code",
            "--cwd",
            app.to_str().unwrap(),
        ],
    );
    let after = unix_nanos(SystemTime::now());
    assert_all_keys(&registered, "register's");

    let listed = only_row_for(&sandbox.list(&[]), owner.pid());
    assert_all_keys(&listed, "list's alive");
    for key in RECORD_KEYS.iter().chain(&["problem", "path", "consent"]) {
        assert_eq!(registered[key], listed[key], "register and list disagree on {key}");
    }

    let pid = owner.pid();
    let path = sandbox.record_path(pid);
    let expect = [
        ("format", Value::from(2)),
        ("session_pid", Value::from(pid)),
        ("session_pid_source", Value::from("flag")),
        // `sleep` is neither this command nor one of its ancestors.
        ("session_pid_verified", Value::from(false)),
        ("owner_uid", Value::from(nix::unistd::geteuid().as_raw())),
        ("start_ticks", Value::from(start_ticks_of(pid))),
        ("boot_id", Value::from(boot_id())),
        ("pid_ns", Value::from(own_namespace_inode("pid"))),
        ("time_ns", Value::from(own_namespace_inode("time"))),
        ("machine", Value::from(owner_liveness::read_machine().expect("this machine can be named"))),
        ("harness", Value::from("claude-code")),
        ("harness_version", Value::Null),
        ("agent", Value::from("wren")),
        ("session_id", Value::from("s-1")),
        ("transcript_path", Value::Null),
        ("socket", Value::Null),
        ("cwd", Value::from(app.to_str().unwrap())),
        ("liveness", Value::from("alive")),
        ("problem", Value::Null),
        ("consent", Value::from("none")),
        ("path", Value::from(path.to_str().unwrap())),
    ];
    for (key, value) in expect {
        assert_eq!(listed[key], value, "key {key} of {listed:#}");
    }
    assert!(
        listed["pidfs_ino"].is_null() || listed["pidfs_ino"].is_u64(),
        "pidfs_ino: {}",
        listed["pidfs_ino"]
    );
    assert!(listed["registrar_pid"].as_u64().is_some_and(|registrar| registrar != u64::from(pid)));
    assert!(listed["liveness_reason"].as_str().is_some_and(|reason| !reason.is_empty()));
    for key in ["registered_at", "refreshed_at"] {
        let text = listed[key].as_str().unwrap_or_else(|| panic!("{key} is not a string"));
        let at = parse_rfc3339(text).unwrap_or_else(|| panic!("{key} {text:?} is not RFC 3339"));
        assert!(text.ends_with('Z'), "{key} {text:?} is not UTC");
        assert!((before..=after).contains(&at), "{key} {text:?} is not the time of registration");
    }

    // The file itself: mode 0600, JSON with every required key, and the
    // optional ones omitted rather than null (docs/contract.md §3).
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o600, "record mode");
    let file = sandbox.record(pid);
    for key in RECORD_KEYS {
        let optional =
            ["pidfs_ino", "harness_version", "agent", "session_id", "transcript_path", "socket", "location"]
                .contains(&key);
        match file.get(key) {
            Some(Value::Null) => panic!("the file holds {key}: null; absent optional keys are omitted"),
            // The row's location adds what checking it found to the keys
            // the file holds.
            Some(Value::Object(recorded)) if key == "location" => {
                for (name, value) in recorded {
                    assert_eq!(value, &listed[key][name], "file and row disagree on location.{name}");
                }
            }
            Some(value) => assert_eq!(value, &listed[key], "file and row disagree on {key}"),
            None => assert!(optional, "the file lacks the required key {key}"),
        }
    }
}

#[test]
fn json_flag_equals_format_json() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    sandbox.register(owner.pid(), &["--agent", "wren"]);
    let short = sandbox.run("roster-list", &["--json"]).json();
    let long = sandbox.run("roster-list", &["--format", "json"]).json();
    assert_eq!(short, long);
    let row = sandbox.run("roster-register", &["--pid", &owner.pid().to_string(), "--format", "json"]).json();
    assert_all_keys(&row, "register --format json");
}

#[test]
fn anonymous_agent_is_null() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    sandbox.register(owner.pid(), &[]);
    let row = only_row_for(&sandbox.list(&[]), owner.pid());
    assert_eq!(row["agent"], Value::Null);
    assert_eq!(row["session_id"], Value::Null);
}

#[test]
fn dead_row_is_hidden_by_default_and_complete_with_all() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    sandbox.register(owner.pid(), &["--agent", "wren"]);
    let pid = owner.kill();
    assert!(rows_for_pid(&sandbox.list(&[]), pid).is_empty(), "a dead row is listed without --all");
    let row = only_row_for(&sandbox.list_all(), pid);
    assert_all_keys(&row, "dead");
    assert_eq!(row["liveness"], "dead");
    assert_eq!(row["problem"], Value::Null);
    assert_eq!(row["agent"], "wren");
    let reason = row["liveness_reason"].as_str().unwrap();
    assert!(reason.contains(&pid.to_string()), "the reason does not name the pid: {reason:?}");
}

#[test]
fn other_namespace_row_is_unknown_and_listed_by_default() {
    let sandbox = Sandbox::new();
    // Only the pid namespace: start ticks are recorded on the initial time
    // namespace's clock, so a time namespace changes nothing (see
    // tests/tests/registry/worlds.rs).
    let owner = Owner::spawn();
    sandbox.register(owner.pid(), &[]);
    sandbox.edit_record(owner.pid(), |record| {
        let current = record["pid_ns"].as_u64().unwrap();
        record.insert("pid_ns".into(), Value::from(current + 1));
    });
    let row = only_row_for(&sandbox.list(&[]), owner.pid());
    assert_all_keys(&row, "unknown");
    assert_eq!(row["liveness"], "unknown", "a record from another pid namespace must be unknown: {row:#}");
    assert_eq!(row["problem"], Value::Null);
    assert!(row["liveness_reason"].as_str().is_some_and(|reason| !reason.is_empty()));
}

#[test]
fn earlier_boot_row_is_dead() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    sandbox.register(owner.pid(), &[]);
    sandbox.edit_record(owner.pid(), |record| {
        record.insert("boot_id".into(), Value::from("00000000-0000-4000-8000-000000000000"));
    });
    let row = only_row_for(&sandbox.list_all(), owner.pid());
    assert_eq!(row["liveness"], "dead", "{row:#}");
}

#[test]
fn problem_rows_have_every_key_the_file_pid_and_mtime() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    sandbox.register(owner.pid(), &[]);
    let valid = std::fs::read(sandbox.record_path(owner.pid())).unwrap();
    let mut newer: Value = serde_json::from_slice(&valid).unwrap();
    newer["format"] = Value::from(3);
    newer["session_pid"] = Value::from(31003);
    newer["something_new"] = Value::from(true);

    let mtime = UNIX_EPOCH + Duration::new(981_173_106, 500_000_000); // 2001-02-03T04:05:06.5Z
    let cases: [(&str, Vec<u8>, &str, Option<u32>); 5] = [
        ("31001.json", b"not json at all".to_vec(), "malformed", Some(31001)),
        ("31002.json", valid.clone(), "untrusted", Some(31002)),
        ("31003.json", serde_json::to_vec(&newer).unwrap(), "unsupported-format", Some(31003)),
        ("0031004.json", b"{}".to_vec(), "malformed", None),
        ("notes.txt", b"hello".to_vec(), "malformed", None),
    ];
    for (name, bytes, _, _) in &cases {
        let path = sandbox.sessions().join(name);
        tests::write_file_0600(&path, bytes);
        if *name == "31002.json" {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o620)).unwrap();
        }
        set_mtime(&path, mtime);
    }
    let rows = sandbox.list(&[]);
    for (name, _, kind, pid) in cases {
        let row = row_named(&rows, name).unwrap_or_else(|| panic!("{name} is not listed: {rows:#?}"));
        assert_all_keys(row, kind);
        assert_eq!(row["problem"], kind, "{name}: {row:#}");
        assert_eq!(row["liveness"], "unknown", "{name}: {row:#}");
        assert_eq!(row["consent"], "none", "{name}: {row:#}");
        assert_eq!(row["session_pid"], pid.map_or(Value::Null, Value::from), "{name}: {row:#}");
        let registered_at =
            row["registered_at"].as_str().unwrap_or_else(|| panic!("{name}: no registered_at"));
        assert_eq!(
            parse_rfc3339(registered_at),
            Some(unix_nanos(mtime)),
            "{name}: registered_at is not the mtime"
        );
        assert_eq!(row["path"], sandbox.sessions().join(name).to_str().unwrap(), "{name}");
        assert!(
            row["liveness_reason"].as_str().is_some_and(|reason| !reason.is_empty()),
            "{name}: no reason"
        );
    }
    // A problem never hides the good row next to it.
    assert_eq!(only_row_for(&rows, owner.pid())["liveness"], "alive");
}

#[test]
fn rows_are_newest_first_compared_as_times_ties_by_pid() {
    let sandbox = Sandbox::new();
    let owners: Vec<Owner> = (0..6).map(|_| Owner::spawn()).collect();
    for owner in &owners {
        sandbox.register(owner.pid(), &[]);
    }
    let set = |owner: &Owner, at: &str| {
        sandbox.edit_record(owner.pid(), |record| {
            record.insert("registered_at".into(), Value::from(at));
        });
    };
    // As strings, "…00Z" sorts after "…00.5Z" and "…00.5Z" after "…00.50001Z";
    // as times it is the other way round.
    set(&owners[0], "2020-01-01T00:00:00Z");
    set(&owners[1], "2020-01-01T00:00:00.5Z");
    set(&owners[2], "2020-01-01T00:00:00.50001Z");
    let (low, high) =
        if owners[3].pid() < owners[4].pid() { (&owners[3], &owners[4]) } else { (&owners[4], &owners[3]) };
    set(high, "2019-06-01T12:00:00.000000001Z");
    set(low, "2019-06-01T12:00:00.000000001Z");
    set(&owners[5], "2018-01-01T00:00:00.000000000Z");
    // A problem row sorts by its mtime.
    let problem = sandbox.sessions().join("31999.json");
    tests::write_file_0600(&problem, b"garbage");
    set_mtime(&problem, UNIX_EPOCH + Duration::from_secs(1_546_300_800)); // 2019-01-01

    let rows = sandbox.list(&[]);
    let order: Vec<Value> = rows.iter().map(|row| row["session_pid"].clone()).collect();
    let expected: Vec<Value> =
        [owners[2].pid(), owners[1].pid(), owners[0].pid(), low.pid(), high.pid(), 31999, owners[5].pid()]
            .into_iter()
            .map(Value::from)
            .collect();
    assert_eq!(order, expected, "rows: {rows:#?}");
}

#[test]
fn filters_select_rows() {
    let sandbox = Sandbox::new();
    let app = sandbox.home().join("src/app");
    let deep = app.join("deep/er");
    let application = sandbox.home().join("src/application");
    for dir in [&deep, &application] {
        std::fs::create_dir_all(dir).unwrap();
    }
    let (a, b, c) = (Owner::spawn(), Owner::spawn(), Owner::spawn());
    sandbox.register(
        a.pid(),
        &["--agent", "wren", "--harness", "codex", "--cwd", app.to_str().unwrap(), "--session-id", "sa"],
    );
    sandbox.register(
        b.pid(),
        &["--agent", "robin", "--harness", "claude-code", "--cwd", deep.to_str().unwrap()],
    );
    sandbox.register(
        c.pid(),
        &["--agent", "wren", "--harness", "claude-code", "--cwd", application.to_str().unwrap()],
    );
    let problem = sandbox.sessions().join("31998.json");
    tests::write_file_0600(&problem, b"{}");

    let pids = |args: &[&str]| tests::row_pids(&sandbox.list(args));
    let set = |owners: &[&Owner]| owners.iter().map(|owner| u64::from(owner.pid())).collect();
    assert_eq!(pids(&["--agent", "wren"]), set(&[&a, &c]));
    assert_eq!(pids(&["--harness", "claude-code"]), set(&[&b, &c]));
    assert_eq!(pids(&["--session-id", "sa"]), set(&[&a]));
    // Below the directory counts; a sibling sharing the prefix does not.
    assert_eq!(pids(&["--cwd", app.to_str().unwrap()]), set(&[&a, &b]));
    // The filter's directory is canonicalized: reach it through a symlink.
    let link = sandbox.base().join("link-to-src");
    std::os::unix::fs::symlink(sandbox.home().join("src"), &link).unwrap();
    assert_eq!(pids(&["--cwd", link.join("app").to_str().unwrap()]), set(&[&a, &b]));
    assert_eq!(pids(&["--agent", "wren", "--harness", "codex"]), set(&[&a]));
}

#[test]
fn consent_column_follows_the_live_marker_only() {
    let sandbox = Sandbox::new();
    let me = std::process::id();
    sandbox.run("roster-register", &["--pid", "parent", "--quiet"]).expect_code(0);
    let consent = |pid: u32, extra: &[&str]| only_row_for(&sandbox.list(extra), pid)["consent"].clone();
    assert_eq!(consent(me, &[]), "none");
    sandbox.run("roster-consent", &["arm", "--pid", "parent", "--quiet"]).expect_code(0);
    assert_eq!(consent(me, &[]), "armed");
    sandbox.run("roster-consent", &["disarm", "--pid", "parent", "--quiet"]).expect_code(0);
    assert_eq!(consent(me, &[]), "disarmed");
    // A marker counts only while its owner lives.
    let gone = sandbox.session_of_an_exited_shell();
    assert!(
        sandbox.consent().join(tests::record_file_name_here(gone)).exists(),
        "the ended session left no marker"
    );
    assert_eq!(consent(gone, &["--all"]), "none", "a dead owner's marker still counts");
}

/// `messages_pending` counts the messages waiting for a session, on every
/// row: 0 for a session never sent one and for a problem entry. The text
/// table shows MSGS only while a row shown has messages waiting.
#[test]
fn every_row_counts_the_messages_waiting_and_the_table_shows_them_only_then() {
    let sandbox = Sandbox::new();
    let project = sandbox.home().join("src/app");
    std::fs::create_dir_all(&project).unwrap();
    let armed = tests::ArmedOwner::spawn(sandbox.root(), sandbox.home(), &project);
    sandbox.register(armed.pid(), &["--cwd", project.to_str().unwrap(), "--harness", "claude-code"]);
    let quiet = Owner::spawn();
    sandbox.register(quiet.pid(), &[]);
    tests::write_file_0600(&sandbox.sessions().join("31005.json"), b"not json at all");
    let table = sandbox.run("roster-list", &[]);
    table.expect_code(0);
    assert!(!table.stdout_text().contains("MSGS"), "{table}");

    let to = armed.pid().to_string();
    for text in ["first", "second"] {
        sandbox.run("roster-send", &["-q", "--to", &to, text]).expect_code(0);
    }
    let rows = sandbox.list(&[]);
    for row in &rows {
        assert_all_keys(row, "a listed");
        assert!(row["messages_pending"].is_u64(), "{row:#}");
    }
    assert_eq!(only_row_for(&rows, armed.pid())["messages_pending"], 2);
    assert_eq!(only_row_for(&rows, quiet.pid())["messages_pending"], 0);
    assert_eq!(row_named(&rows, "31005.json").expect("the problem row")["messages_pending"], 0);

    let table = sandbox.run("roster-list", &[]);
    table.expect_code(0);
    let text = table.stdout_text();
    let lines: Vec<&str> = text.lines().collect();
    let header: Vec<&str> = lines[0].split_whitespace().collect();
    // REASON, last, is there because a problem row (31005.json) is listed.
    assert_eq!(
        header,
        [
            "PID", "HARNESS", "AGENT", "LIVENESS", "STATE", "CONSENT", "MSGS", "AGE", "CWD", "SESSION",
            "REASON"
        ]
    );
    let msgs_at = lines[0].find("MSGS").unwrap();
    let cell_of = |pid: u32| {
        let first =
            |line: &&&str| line.split_whitespace().next().map(|cell| cell.trim_end_matches('?').to_owned());
        let line = lines.iter().find(|line| first(line) == Some(pid.to_string())).expect("the pid's line");
        line[msgs_at..].split_whitespace().next().unwrap().to_owned()
    };
    assert_eq!(cell_of(armed.pid()), "2", "{text}");
    assert_eq!(cell_of(quiet.pid()), "-", "{text}");
}
