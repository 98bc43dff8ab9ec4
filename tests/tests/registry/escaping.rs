//! Text output for people (docs/contract.md §6, §6.2): every printed field is escaped,
//! so a cwd, an agent name or a file name holding escape sequences or
//! newlines can never reach a terminal raw — the table keeps one line per
//! row and JSON keeps the exact value. Also the table's header and footer.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use tests::{Outcome, Owner, Sandbox, ago, os_str, raw_controls, row_named, set_mtime, write_file_0600};

/// A directory name that clears the screen, sets the title, turns text
/// red, breaks the line and sends a C1 CSI — everything a terminal obeys.
const HOSTILE: &str = "evil\u{1b}]0;pwned\u{7}\u{1b}[31mred\nline2\u{9b}2J\rcr\u{7f}end";

fn assert_clean(outcome: &Outcome, what: &str) {
    let found = raw_controls(&outcome.stdout);
    assert!(
        found.is_empty(),
        "{what}: raw control characters {found:?} reached stdout:\n{}",
        outcome.stdout_text()
    );
    let found = raw_controls(outcome.stderr.as_bytes());
    assert!(
        found.is_empty(),
        "{what}: raw control characters {found:?} reached stderr: {:?}",
        outcome.stderr
    );
}

fn hostile_dir(sandbox: &Sandbox) -> PathBuf {
    let dir = sandbox.home().join(HOSTILE);
    std::fs::create_dir(&dir).unwrap();
    dir
}

#[test]
fn hostile_cwd_is_escaped_in_text_and_exact_in_json() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    let dir = hostile_dir(&sandbox);
    let pid = owner.pid().to_string();

    let registered =
        sandbox.run("roster-register", &["--pid", &pid, "--agent", "wren", "--cwd", dir.to_str().unwrap()]);
    registered.expect_code(0);
    assert_clean(&registered, "roster-register");
    assert_eq!(
        registered.stdout_text().lines().count(),
        1,
        "register's line was split: {:?}",
        registered.stdout_text()
    );

    let listed = sandbox.run("roster-list", &[]);
    listed.expect_code(0);
    assert_clean(&listed, "roster-list");
    let text = listed.stdout_text();
    let row_line = text
        .lines()
        // An owner named with --pid is unverified: its pid carries the `?` mark.
        .find(|line| {
            line.split_whitespace().next().map(|first| first.trim_end_matches('?')) == Some(pid.as_str())
        })
        .unwrap_or_else(|| panic!("no line starts with pid {pid}:\n{text}"));
    // The part after the newline stays on the row's own line.
    assert!(
        row_line.contains("line2") && row_line.contains("end"),
        "the cwd was split across lines:\n{text}"
    );

    let rows = sandbox.list(&[]);
    assert_eq!(rows[0]["cwd"], dir.to_str().unwrap(), "JSON must carry the exact cwd");
}

#[test]
fn hostile_names_in_records_and_file_names_are_escaped() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    sandbox.register(owner.pid(), &[]);
    // A record a hand (or a foreign tool) wrote, with an agent name no
    // roster would accept and a cwd full of escapes.
    sandbox.edit_record(owner.pid(), |record| {
        record.insert("agent".into(), Value::from("\u{1b}[2Jwren\nx"));
        record.insert("cwd".into(), Value::from(format!("/tmp/{HOSTILE}")));
    });
    // File names that are escape sequences themselves, one not even UTF-8.
    for name in [&b"\x1b[2J.json"[..], b"a\nb.json", b"\xff\x9b31m.json", b"\xc2\x9b2J.json"] {
        write_file_0600(&sandbox.sessions().join(os_str(name)), b"{}");
    }

    let rows = sandbox.list(&[]);
    let row = &tests::rows_for_pid(&rows, owner.pid());
    let row = row.first().copied().or_else(|| row_named(&rows, &tests::record_file_name_here(owner.pid())));
    let row = row.unwrap_or_else(|| panic!("the hand-written record is not listed: {rows:#?}"));
    assert_eq!(
        row["problem"], "malformed",
        "an agent name with control characters breaks the record: {row:#}"
    );
    assert_eq!(rows.len(), 5, "every bad name is listed: {rows:#?}");

    for args in [&[][..], &["--all"]] {
        let listed = sandbox.run("roster-list", args);
        listed.expect_code(0);
        assert_clean(&listed, "roster-list");
    }
    for name in std::fs::read_dir(sandbox.sessions()).unwrap() {
        set_mtime(&name.unwrap().path(), ago(Duration::from_secs(2 * 86400)));
    }
    let pruned = sandbox.run("roster-prune", &["--older-than", "1d"]);
    pruned.expect_code(0);
    assert_clean(&pruned, "roster-prune");
    assert!(!pruned.stdout.is_empty(), "prune reported nothing of its removals");
}

#[test]
fn error_messages_are_escaped_too() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    let pid = owner.pid().to_string();
    let missing = sandbox.home().join(HOSTILE).join("missing");
    let outcome = sandbox.run("roster-register", &["--pid", &pid, "--cwd", missing.to_str().unwrap()]);
    assert_ne!(outcome.code(), 0);
    assert_clean(&outcome, "register with a hostile --cwd");
    assert_eq!(outcome.stderr.lines().count(), 1, "the error was split: {:?}", outcome.stderr);
    let outcome = sandbox.run("roster-register", &["--pid", &pid, "--agent", "\u{1b}[31mred\u{7}"]);
    outcome.expect_code(2);
    assert_clean(&outcome, "register with a hostile --agent");
    let outcome = sandbox.run("roster-list", &["--agent", HOSTILE]);
    assert_clean(&outcome, "list filtered by a hostile agent name");
    // A hostile roster directory path in an error.
    let bad_dir = sandbox.base().join(HOSTILE);
    std::fs::create_dir(&bad_dir).unwrap();
    std::fs::set_permissions(&bad_dir, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let mut command = sandbox.command("roster-list");
    command.arg("--dir").arg(&bad_dir);
    let outcome = tests::run_with_deadline(&mut command, tests::COMMAND_DEADLINE);
    outcome.expect_code(3);
    assert_clean(&outcome, "list of a hostile, untrusted directory");
}

#[test]
fn table_has_the_header_and_a_footer_naming_what_to_act_on() {
    let sandbox = Sandbox::new();
    let alive = Owner::spawn();
    let unknown = Owner::spawn();
    let doomed = Owner::spawn();
    for owner in [&alive, &unknown, &doomed] {
        sandbox.register(owner.pid(), &["--agent", "wren"]);
    }
    sandbox.edit_record(unknown.pid(), |record| {
        let namespace = record["pid_ns"].as_u64().unwrap();
        record.insert("pid_ns".into(), Value::from(namespace + 1));
    });
    let dead = doomed.kill();
    let listed = sandbox.run("roster-list", &[]);
    listed.expect_code(0);
    let text = listed.stdout_text();
    // Owners named with --pid are unverified: their pids carry the `?` mark.
    let first_word =
        |line: &str| line.split_whitespace().next().map(|first| first.trim_end_matches('?').to_owned());
    let has_row = |pid: u32| text.lines().any(|line| first_word(line) == Some(pid.to_string()));
    assert!(has_row(alive.pid()) && has_row(unknown.pid()), "{text}");
    assert!(!has_row(dead), "a dead row is shown without --all:\n{text}");
    assert!(text.contains("~"), "the cwd under home is not shown with ~:\n{text}");
    // The notes, on stderr: hidden dead rows, and unknown rows only --older-than removes.
    assert_eq!(text.lines().count(), 3, "stdout holds the table only:\n{text}");
    let notes = listed.stderr.clone();
    assert!(notes.contains("1 dead session hidden"), "no note of the hidden dead row:\n{notes}");
    assert!(notes.contains("--older-than"), "no note of how unknown rows go:\n{notes}");
    let all = sandbox.run("roster-list", &["--all"]).stdout_text();
    assert!(all.lines().any(|line| first_word(line) == Some(dead.to_string())), "{all}");
    let header: Vec<&str> = text.lines().next().unwrap_or("").split_whitespace().collect();
    // The columns of docs/contract.md §6.2, CONSENT among them.
    assert_eq!(
        header,
        ["PID", "HARNESS", "AGENT", "LIVENESS", "STATE", "CONSENT", "AGE", "CWD", "SESSION"],
        "the header of docs/contract.md §6.2:\n{text}"
    );
}

/// Unicode format characters a terminal obeys without showing them: the
/// bidi controls U+061C ARABIC LETTER MARK, U+202E RIGHT-TO-LEFT OVERRIDE and
/// U+2066 LEFT-TO-RIGHT ISOLATE reorder what follows, U+200B ZERO WIDTH
/// SPACE and U+FEFF ZERO WIDTH NO-BREAK SPACE hide. Each is general
/// category Cf; an agent name may hold them (they are not controls).
const INVISIBLE: [char; 5] = ['\u{61c}', '\u{202e}', '\u{2066}', '\u{200b}', '\u{feff}'];

/// Fails when `bytes` hold one of `INVISIBLE` raw, or a control character.
fn assert_no_invisible(bytes: &[u8], what: &str) {
    let text = String::from_utf8_lossy(bytes);
    let found: Vec<String> = text
        .chars()
        .filter(|character| INVISIBLE.contains(character))
        .map(|character| format!("U+{:04X}", u32::from(character)))
        .collect();
    assert!(found.is_empty(), "{what}: {found:?} reached the terminal raw:\n{text}");
    let controls = raw_controls(bytes);
    assert!(controls.is_empty(), "{what}: raw control characters {controls:?}:\n{text}");
}

/// The escaped forms of `INVISIBLE`, each of which `text` must show.
fn assert_shows_escaped(text: &str, what: &str) {
    for character in INVISIBLE {
        let escaped = format!("\\u{{{:x}}}", u32::from(character));
        assert!(text.contains(&escaped), "{what}: {escaped} is not shown:\n{text}");
    }
}

/// Regression: U+061C, a bidi control, and the format characters outside
/// the bidi controls (U+200B, U+FEFF, …) reached the terminal raw from an
/// agent name or a directory name. Register's line, the table, the watch
/// lines and consent's status show them escaped; JSON keeps them exact.
#[test]
fn format_characters_and_bidi_controls_are_escaped_in_every_text_output() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    let pid = owner.pid().to_string();
    let hidden: String = INVISIBLE.iter().collect();
    let agent = format!("wren{hidden}x");
    let dir = sandbox.home().join(format!("src{hidden}app"));
    std::fs::create_dir(&dir).unwrap();

    let registered = sandbox.run(
        "roster-register",
        &["--pid", &pid, "--agent", &agent, "--cwd", dir.to_str().unwrap(), "--session-id", "s-1"],
    );
    registered.expect_code(0);
    assert_no_invisible(&registered.stdout, "roster-register");
    assert_no_invisible(registered.stderr.as_bytes(), "roster-register's stderr");
    assert_shows_escaped(&registered.stdout_text(), "roster-register");

    let listed = sandbox.run("roster-list", &[]);
    listed.expect_code(0);
    assert_no_invisible(&listed.stdout, "roster-list");
    assert_no_invisible(listed.stderr.as_bytes(), "roster-list's stderr");
    let row_line = listed
        .stdout_text()
        .lines()
        .find(|line| line.starts_with(&pid))
        .unwrap_or_else(|| panic!("no row for pid {pid}:\n{}", listed.stdout_text()))
        .to_owned();
    // Both the AGENT and the CWD column.
    assert_eq!(row_line.matches("\\u{61c}").count(), 2, "{row_line}");
    assert_shows_escaped(&row_line, "roster-list");

    let rows = sandbox.list(&[]);
    assert_eq!(rows[0]["agent"], agent.as_str(), "JSON must carry the exact agent name");
    assert_eq!(rows[0]["cwd"], dir.to_str().unwrap(), "JSON must carry the exact cwd");

    let mut watch = sandbox.command_in_root("roster-list", &["--watch"]);
    watch.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut watcher = watch.spawn().expect("start roster-list --watch");
    let stdout = watcher.stdout.take().expect("piped stdout");
    let (sender, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        loop {
            let mut line = Vec::new();
            if reader.read_until(b'\n', &mut line).unwrap_or(0) == 0 || sender.send(line).is_err() {
                break;
            }
        }
    });
    // The watch shows each row as a `listed` event first, then one line per
    // event, in the table's columns: the refresh below is one.
    let next_line = || {
        let line: Vec<u8> = lines.recv_timeout(Duration::from_secs(10)).expect("the watch printed no line");
        assert_no_invisible(&line, "roster-list --watch");
        String::from_utf8_lossy(&line).into_owned()
    };
    let unverified_pid = format!("{pid}?");
    while !next_line().split_whitespace().any(|word| word == unverified_pid) {}
    sandbox
        .run("roster-register", &["--pid", &pid, "--cwd", dir.to_str().unwrap(), "--session-id", "s-2"])
        .expect_code(0);
    let event_line = loop {
        let line = next_line();
        if line.contains("refreshed") {
            break line;
        }
    };
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(watcher.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .expect("stop the watch");
    let status = tests::wait_with_deadline(&mut watcher, Duration::from_secs(10)).expect("the watch hung");
    assert_eq!(status.code(), Some(0));
    assert!(event_line.contains(&pid), "{event_line}");
    assert_shows_escaped(&event_line, "roster-list --watch");

    let status = sandbox.run("roster-consent", &["status", "--pid", &pid]);
    status.expect_code(0);
    assert_no_invisible(&status.stdout, "roster-consent status");
    assert_no_invisible(status.stderr.as_bytes(), "roster-consent status's stderr");
    let directory_line = status
        .stdout_text()
        .lines()
        .find(|line| line.starts_with("directory"))
        .unwrap_or_else(|| panic!("no directory line:\n{}", status.stdout_text()))
        .to_owned();
    assert_shows_escaped(&directory_line, "roster-consent status");
}

#[test]
fn a_long_agent_name_is_cut_between_escapes_never_inside_one() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    // Every cut of the AGENT column falls somewhere in these escapes.
    let agent = format!("lead{}", "\u{202e}\u{2028}x".repeat(15));
    sandbox.register(owner.pid(), &["--agent", &agent]);
    let listed = sandbox.run("roster-list", &[]);
    let line = listed.stdout_text().lines().nth(1).expect("a row").to_owned();
    let cell = line.split_whitespace().nth(2).expect("the AGENT cell");
    assert!(cell.ends_with('…'), "the name was cut: {line}");
    let shown = cell.trim_end_matches('…');
    assert_eq!(shown.matches("\\u{").count(), shown.matches('}').count(), "an escape cut in half: {cell}");
    assert!(format!("lead{}", "\\u{202e}\\u{2028}x".repeat(15)).starts_with(shown), "{cell}");
}
