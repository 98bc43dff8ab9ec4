//! `roster-list --host` (docs/contract.md §6.7) against real OpenSSH
//! servers on 127.0.0.1, each its own host with its own registry: rows of
//! every host with their `host`, filters forwarded, a hosts file; a host
//! without roster, a host that accepts and never speaks, a host whose
//! roster is older; and the merged watch across a host killed and started
//! again, each of its events checked against the schema the contract
//! documents.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::Value;
use tests::sshd::{SshClient, SshHost, descendants};
use tests::{Outcome, Owner, Sandbox, binary, record_file_name_here, run_with_deadline, wait_with_deadline};

/// How long a test waits for one event before calling it missing; a host
/// started again is asked within the watch's longest backoff so far.
const EVENT_WAIT: Duration = Duration::from_secs(30);

/// Where the built binaries are, for a host's PATH.
fn binaries_directory() -> String {
    binary("roster-list").parent().expect("a directory").to_string_lossy().into_owned()
}

/// A host whose sessions find the built roster on their PATH.
fn host_with_roster(client: &SshClient) -> SshHost {
    SshHost::start(client, &format!("{}:/usr/bin:/bin", binaries_directory()))
}

/// `roster-register --dir <registry> --pid <owner> --agent <agent>`.
fn register(registry: &Path, owner: &Owner, agent: &str) {
    let outcome = run_with_deadline(
        Command::new(binary("roster-register")).arg("--dir").arg(registry).args([
            "--pid",
            &owner.pid().to_string(),
            "--agent",
            agent,
            "-q",
        ]),
        Duration::from_secs(30),
    );
    outcome.expect_code(0);
}

/// `roster-list ARGS` from this machine, reaching the hosts through the
/// client's key.
fn list(sandbox: &Sandbox, client: &SshClient, args: &[&str]) -> Outcome {
    let mut command = sandbox.command("roster-list");
    command.arg("--dir").arg(sandbox.root()).args(args).env("ROSTER_SSH_COMMAND", client.ssh_command());
    run_with_deadline(&mut command, Duration::from_secs(60))
}

fn rows_of(outcome: &Outcome) -> Vec<Value> {
    match serde_json::from_slice(&outcome.stdout) {
        Ok(Value::Array(rows)) => rows,
        _ => panic!("stdout is not a JSON array\n{outcome}"),
    }
}

/// The notes line on stderr (`{"notes":[...]}`), as (host, kind, message).
fn notes_of(outcome: &Outcome) -> Vec<(String, String, String)> {
    let line = outcome.stderr.lines().find(|line| line.starts_with("{\"notes\"")).unwrap_or_else(|| {
        panic!("no notes line on stderr\n{outcome}");
    });
    let notes: Value = serde_json::from_str(line).expect("the notes line is JSON");
    notes["notes"]
        .as_array()
        .expect("notes")
        .iter()
        .map(|note| {
            let text = |key: &str| note[key].as_str().unwrap_or_else(|| panic!("{key} in {note}")).to_owned();
            (text("host"), text("kind"), text("message"))
        })
        .collect()
}

fn field<'a>(rows: &'a [Value], key: &str) -> Vec<&'a str> {
    rows.iter().map(|row| row[key].as_str().unwrap_or("-")).collect()
}

#[test]
fn rows_of_every_host_carry_their_host_in_the_order_given() {
    let client = SshClient::new();
    let first = host_with_roster(&client);
    let second = host_with_roster(&client);
    let sandbox = Sandbox::new();
    let owners: Vec<Owner> = (0..4).map(|_| Owner::spawn()).collect();
    register(&first.registry(), &owners[0], "ann");
    register(&first.registry(), &owners[1], "bob");
    register(&second.registry(), &owners[2], "cy");
    register(sandbox.root(), &owners[3], "dee");
    let (one, two) = (first.address(), second.address());

    let outcome =
        list(&sandbox, &client, &["--format", "json", "--host", &two, "--host", &one, "--host", "local"]);
    outcome.expect_code(0);
    let rows = rows_of(&outcome);
    assert_eq!(field(&rows, "host"), [two.as_str(), &one, &one, "local"], "{outcome}");
    // Each host's rows as it sorts them: newest first.
    assert_eq!(field(&rows, "agent"), ["cy", "bob", "ann", "dee"], "{outcome}");
    for row in &rows {
        let keys: Vec<&String> = row.as_object().expect("a row is an object").keys().collect();
        assert_eq!(keys[0], "host", "{row}");
        assert_eq!(row["liveness"], "alive", "{row}");
    }

    // The filters reach every host.
    let outcome = list(&sandbox, &client, &["--json", "--agent", "bob", "--host", &one, "--host", &two]);
    outcome.expect_code(0);
    assert_eq!(field(&rows_of(&outcome), "agent"), ["bob"], "{outcome}");

    // A hosts file: comments and blank lines skipped, its order kept.
    let file = sandbox.base().join("hosts");
    std::fs::write(&file, format!("# the fleet\n\n{two}\n   {one}  \n")).expect("write the hosts file");
    let outcome = list(&sandbox, &client, &["--json", "--hosts-file", &file.to_string_lossy()]);
    outcome.expect_code(0);
    assert_eq!(field(&rows_of(&outcome), "host"), [two.as_str(), &one, &one], "{outcome}");
    std::fs::write(&file, format!("{one}\nnot a host\n")).expect("write the hosts file");
    let outcome = list(&sandbox, &client, &["--hosts-file", &file.to_string_lossy()]);
    outcome.expect_code(2);
    assert!(outcome.stderr.contains("line 2") && outcome.stderr.contains("hosts"), "{outcome}");

    // People: a HOST column first.
    let outcome = list(&sandbox, &client, &["--host", &one, "--host", "local"]);
    outcome.expect_code(0);
    let text = outcome.stdout_text();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("HOST ") && lines[0].contains("LIVENESS"), "{outcome}");
    assert!(lines[1].starts_with(&one) && lines[1].contains("bob"), "{outcome}");
    assert!(lines[3].starts_with("local") && lines[3].contains("dee"), "{outcome}");
}

#[test]
fn a_host_without_roster_is_named_once_and_the_others_still_answer() {
    let client = SshClient::new();
    let with_roster = host_with_roster(&client);
    let without = SshHost::start(&client, "/usr/bin:/bin");
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    register(&with_roster.registry(), &owner, "ann");
    let (good, bare) = (with_roster.address(), without.address());

    let outcome = list(&sandbox, &client, &["--format", "json", "--host", &bare, "--host", &good]);
    outcome.expect_code(6);
    assert_eq!(field(&rows_of(&outcome), "agent"), ["ann"], "{outcome}");
    let notes = notes_of(&outcome);
    let about_bare: Vec<_> = notes.iter().filter(|(host, _, _)| *host == bare).collect();
    assert_eq!(about_bare.len(), 1, "{outcome}");
    assert_eq!(about_bare[0].1, "host-without-roster", "{outcome}");
    assert!(about_bare[0].2.contains("install roster there"), "{outcome}");

    let outcome = list(&sandbox, &client, &["--host", &bare, "--host", &good]);
    outcome.expect_code(6);
    let said: Vec<&str> = outcome.stderr.lines().filter(|line| line.contains(&bare)).collect();
    assert_eq!(said.len(), 2, "one line for the host, one for the exit status\n{outcome}");
    assert!(said[0].starts_with(&format!("{bare}: no roster-list there (exit 127")), "{outcome}");
    assert!(said[1].starts_with("roster-list: 1 of 2 hosts did not answer"), "{outcome}");
    assert!(outcome.stdout_text().contains("ann"), "{outcome}");
}

#[test]
fn a_host_that_accepts_and_never_speaks_ends_within_the_connect_timeout() {
    let client = SshClient::new();
    let answering = host_with_roster(&client);
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    register(&answering.registry(), &owner, "ann");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("listen");
    let silent = format!("127.0.0.1:{}", listener.local_addr().expect("address").port());
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming() {
            held.push(stream);
        }
    });

    let started = Instant::now();
    let outcome = list(
        &sandbox,
        &client,
        &["--json", "--connect-timeout", "2", "--host", &silent, "--host", &answering.address()],
    );
    let elapsed = started.elapsed();
    outcome.expect_code(6);
    assert!(elapsed < Duration::from_secs(2 + 5), "took {elapsed:?}\n{outcome}");
    assert!(elapsed >= Duration::from_secs(2), "gave up before the timeout: {elapsed:?}\n{outcome}");
    assert_eq!(field(&rows_of(&outcome), "agent"), ["ann"], "{outcome}");
    let notes = notes_of(&outcome);
    assert!(notes.iter().any(|(host, kind, _)| *host == silent && kind == "host-unreachable"), "{outcome}");
}

#[test]
fn rows_of_an_older_roster_are_shown_with_what_they_have() {
    let client = SshClient::new();
    let current = host_with_roster(&client);
    let placeholder = tempfile::tempdir().expect("a temp dir");
    // The older roster: a roster-list whose rows lack the keys added since.
    let older_bin = placeholder.path().join("bin");
    std::fs::create_dir(&older_bin).expect("mkdir");
    let script = older_bin.join("roster-list");
    std::fs::write(
        &script,
        "#!/bin/sh\nprintf '%s\\n' '[{\"format\":2,\"session_pid\":4242,\"harness\":\"codex\",\"agent\":\"old\",\
         \"cwd\":\"/srv/app\",\"liveness\":\"alive\",\"registered_at\":\"2024-01-01T00:00:00Z\"}]'\n",
    )
    .expect("write the older roster-list");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let older = SshHost::start(&client, &format!("{}:/usr/bin:/bin", older_bin.display()));
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    register(&current.registry(), &owner, "new");
    let (new_host, old_host) = (current.address(), older.address());

    let outcome = list(&sandbox, &client, &["--json", "--host", &new_host, "--host", &old_host]);
    outcome.expect_code(0);
    let rows = rows_of(&outcome);
    assert_eq!(field(&rows, "host"), [new_host.as_str(), &old_host], "{outcome}");
    let old = &rows[1];
    assert_eq!(old["agent"], "old", "{old}");
    assert_eq!(old["session_pid"], 4242, "{old}");
    for missing in ["state", "consent", "should_arm", "origin", "session_id"] {
        assert!(old.get(missing).is_some_and(Value::is_null), "{missing} is not null: {old}");
    }
    assert_eq!(rows[0].as_object().map(|row| row.len()), old.as_object().map(|row| row.len()));
    let notes = notes_of(&outcome);
    let older_notes: Vec<_> = notes.iter().filter(|(_, kind, _)| kind == "host-older-contract").collect();
    assert_eq!(older_notes.len(), 1, "{outcome}");
    assert_eq!(older_notes[0].0, old_host, "{outcome}");
    assert!(older_notes[0].2.contains("state"), "{outcome}");

    let outcome = list(&sandbox, &client, &["--host", &old_host]);
    outcome.expect_code(0);
    let line = outcome.stdout_text().lines().nth(1).unwrap_or_default().to_owned();
    let cells: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(cells[..7], [old_host.as_str(), "4242", "codex", "old", "alive", "-", "-"], "{outcome}");
    assert!(outcome.stderr.contains("an older roster"), "{outcome}");
}

/// A running `roster-list --watch --format json --host …` and its events.
struct Watcher {
    child: std::process::Child,
    lines: Receiver<String>,
}

impl Watcher {
    fn start(client: &SshClient, sandbox: &Sandbox, hosts: &[&str]) -> Watcher {
        let mut command = sandbox.command("roster-list");
        command.args(["--watch", "--format", "json"]).env("ROSTER_SSH_COMMAND", client.ssh_command());
        for host in hosts {
            command.args(["--host", host]);
        }
        command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::inherit());
        let mut child = command.spawn().expect("start the watch");
        let stdout = child.stdout.take().expect("piped");
        let (sender, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        Watcher { child, lines }
    }

    #[track_caller]
    fn next(&self) -> Value {
        match self.lines.recv_timeout(EVENT_WAIT) {
            Ok(line) => serde_json::from_str(&line).unwrap_or_else(|error| panic!("{line:?}: {error}")),
            Err(RecvTimeoutError::Timeout) => panic!("no event within {EVENT_WAIT:?}"),
            Err(RecvTimeoutError::Disconnected) => panic!("the watch ended its output"),
        }
    }

    /// The next event, which must be `kind` from `host`.
    #[track_caller]
    fn expect(&self, kind: &str, host: &str) -> Value {
        let event = self.next();
        assert_eq!((event["event"].as_str(), event["host"].as_str()), (Some(kind), Some(host)), "{event}");
        event
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The event schema docs/contract.md §6.7 documents: each key's table row
/// (`| `key` | … |`) and each kind's (`| `kind` | row: object|null … |`).
struct DocumentedSchema {
    keys: BTreeSet<String>,
    kinds_with_row: BTreeSet<String>,
    kinds_without_row: BTreeSet<String>,
}

fn documented_schema() -> DocumentedSchema {
    let contract = std::fs::read_to_string(tests::workspace::workspace_root().join("docs/contract.md"))
        .expect("read docs/contract.md");
    let section = contract
        .split("<!-- event schema -->")
        .nth(1)
        .expect("docs/contract.md marks the event schema with <!-- event schema -->");
    let cells = |line: &str| -> Vec<String> {
        line.trim_matches('|').split('|').map(|cell| cell.trim().trim_matches('`').to_owned()).collect()
    };
    let mut schema = DocumentedSchema {
        keys: BTreeSet::new(),
        kinds_with_row: BTreeSet::new(),
        kinds_without_row: BTreeSet::new(),
    };
    let mut table = 0;
    for line in section.lines() {
        if line.starts_with("| key") {
            table = 1;
        } else if line.starts_with("| event") {
            table = 2;
        } else if line.starts_with("| `") {
            let cells = cells(line);
            match table {
                1 => {
                    schema.keys.insert(cells[0].clone());
                }
                2 if cells[1].starts_with("null") => {
                    schema.kinds_without_row.insert(cells[0].clone());
                }
                2 => {
                    schema.kinds_with_row.insert(cells[0].clone());
                }
                _ => {}
            }
        }
    }
    assert!(
        schema.keys.contains("schema") && schema.kinds_with_row.contains("listed"),
        "the tables were not found"
    );
    schema
}

/// Checks an event of a `--watch --host` stream against the schema.
#[track_caller]
fn check_against_schema(schema: &DocumentedSchema, event: &Value) {
    let object = event.as_object().unwrap_or_else(|| panic!("not an object: {event}"));
    for key in object.keys() {
        assert!(schema.keys.contains(key), "key {key} is not documented: {event}");
    }
    assert_eq!(event["schema"], 1, "{event}");
    assert!(tests::parse_rfc3339(event["at"].as_str().unwrap_or_default()).is_some(), "{event}");
    assert!(event["host"].is_string(), "{event}");
    let kind = event["event"].as_str().unwrap_or_else(|| panic!("no event: {event}"));
    if schema.kinds_with_row.contains(kind) {
        let row = event["row"].as_object().unwrap_or_else(|| panic!("no row: {event}"));
        assert_eq!(row.get("host"), Some(&event["host"]), "{event}");
        assert!(row.contains_key("liveness") && row.contains_key("origin"), "{event}");
    } else {
        assert!(schema.kinds_without_row.contains(kind), "event {kind} is not documented: {event}");
        assert!(event["row"].is_null(), "{event}");
        assert!(event["reason"].is_string(), "{event}");
    }
}

#[test]
fn the_watch_merges_the_hosts_and_follows_one_through_a_restart() {
    let schema = documented_schema();
    let client = SshClient::new();
    let steady = host_with_roster(&client);
    let mut restarted = host_with_roster(&client);
    let sandbox = Sandbox::new();
    let first = Owner::spawn();
    let second = Owner::spawn();
    register(&steady.registry(), &first, "ann");
    register(&restarted.registry(), &second, "bob");
    let (one, two) = (steady.address(), restarted.address());
    let watcher = Watcher::start(&client, &sandbox, &[&one, &two]);
    let mut seen = BTreeSet::new();
    let mut check = |event: Value| {
        check_against_schema(&schema, &event);
        seen.insert(event["event"].as_str().unwrap_or_default().to_owned());
        event
    };

    let listed: BTreeSet<(String, String)> = (0..2)
        .map(|_| check(watcher.next()))
        .map(|event| {
            assert_eq!(event["event"], "listed", "{event}");
            (event["host"].as_str().unwrap_or_default().to_owned(), event["row"]["agent"].to_string())
        })
        .collect();
    assert_eq!(
        listed,
        BTreeSet::from([(one.clone(), "\"ann\"".to_owned()), (two.clone(), "\"bob\"".to_owned())])
    );

    restarted.kill();
    let lost = check(watcher.expect("host-lost", &two));
    assert!(lost["reason"].as_str().is_some_and(|reason| !reason.is_empty()), "{lost}");

    // The other host goes on: registered, refreshed, problem, died, removed.
    let third = Owner::spawn();
    register(&steady.registry(), &third, "cy");
    check(watcher.expect("registered", &one));
    register(&steady.registry(), &third, "cyd");
    check(watcher.expect("refreshed", &one));
    let malformed = steady.registry().join("sessions").join(record_file_name_here(4_000_000));
    // Put in place whole, so that it is one change, not an empty file first.
    tests::write_file_atomically(&malformed, b"{ not json");
    check(watcher.expect("problem", &one));
    drop(first);
    let died = check(watcher.expect("died", &one));
    assert_eq!(died["row"]["agent"], "ann", "{died}");

    restarted.restart();
    check(watcher.expect("resync", &two));
    let back = check(watcher.expect("listed", &two));
    assert_eq!(back["row"]["agent"], "bob", "{back}");
    assert_eq!(
        seen,
        ["died", "host-lost", "listed", "problem", "refreshed", "registered", "resync"]
            .map(str::to_owned)
            .into_iter()
            .collect()
    );

    // SIGTERM ends the watch with 0, and its ssh children with it.
    let children = descendants(watcher.child.id());
    assert!(children.len() >= 2, "one ssh per host: {children:?}");
    let mut watcher = watcher;
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(watcher.child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .expect("SIGTERM");
    let status = wait_with_deadline(&mut watcher.child, Duration::from_secs(10)).expect("the watch ended");
    assert_eq!(status.code(), Some(0), "{status:?}");
    for child in children {
        assert!(!Path::new(&format!("/proc/{child}")).exists(), "ssh child {child} outlived the watch");
    }
}
