//! roster-list's text fits the width it is read in: the table and a
//! watch's lines fit `--width N`, else `COLUMNS`, else the terminal's width
//! (a pipe has no limit): long cells are cut, ending in `…`, and columns
//! left out are named on stderr; session ids are shortened to the shortest
//! prefix that tells the rows apart (whole in JSON and with `--wide`);
//! `--columns` chooses the columns; a problem entry's reason goes in the
//! REASON column, last, never into CWD.
//!
//! Regression: the table was about 130 columns wide (mostly the full session
//! UUID), watch lines about 190, a problem row about 250 (its reason in the
//! CWD column): in an 80-column pane every line wrapped, and there was no way
//! to choose the columns or shorten the id.

use std::process::Stdio;

use serde_json::Value;
use tests::{Owner, Sandbox};

use crate::watch::Watcher;

/// The terminal columns `line` takes: the CJK characters these tests use
/// take two, every other one.
fn terminal_columns(line: &str) -> usize {
    line.chars().map(|character| if ('\u{3040}'..='\u{9fff}').contains(&character) { 2 } else { 1 }).sum()
}

const LONG_ID: &str = "0191e1c2-5d1e-7a3b-9c4d-0123456789ab";
const SIMILAR_ID: &str = "0191e1c2-5d1f-7a3b-9c4d-0123456789ab";

/// A registry with the rows that made the table wide: full session UUIDs
/// (two sharing their first 12 characters), a deep directory, a CJK agent
/// name and a problem entry with a long reason.
fn wide_registry() -> (Sandbox, Vec<Owner>) {
    let sandbox = Sandbox::new();
    let deep = sandbox.home().join("src/github.com/someone/a-rather-long-repository-name/crates/inner");
    std::fs::create_dir_all(&deep).unwrap();
    let owners: Vec<Owner> = (0..3).map(|_| Owner::spawn()).collect();
    let deep = deep.to_str().unwrap();
    sandbox.register(
        owners[0].pid(),
        &["--harness", "claude-code", "--session-id", LONG_ID, "--agent", "heron", "--cwd", deep],
    );
    sandbox.register(
        owners[1].pid(),
        &["--harness", "codex", "--session-id", SIMILAR_ID, "--agent", "日本語の名前"],
    );
    sandbox.register(owners[2].pid(), &["--harness", "gemini-cli", "--session-id", "short-1"]);
    tests::write_file_0600(&sandbox.sessions().join("31005.json"), &[b'x'; 300]);
    (sandbox, owners)
}

fn listing(sandbox: &Sandbox, args: &[&str], env: &[(&str, &str)]) -> (String, String) {
    let outcome = sandbox.run_with_env("roster-list", args, env);
    outcome.expect_code(0);
    (outcome.stdout_text(), outcome.stderr.clone())
}

#[test]
fn the_table_fits_the_width_and_says_what_it_left_out() {
    let (sandbox, owners) = wide_registry();
    let (whole, _) = listing(&sandbox, &["--no-legend"], &[]);
    assert!(whole.lines().any(|line| terminal_columns(line) > 120), "the rows are not wide:\n{whole}");

    for (args, env, width) in [
        (vec!["--no-legend"], vec![("COLUMNS", "80")], 80),
        (vec!["--no-legend", "--width", "60"], vec![("COLUMNS", "200")], 60),
        (vec!["--no-legend", "--width", "40"], vec![], 40),
    ] {
        let (table, notes) = listing(&sandbox, &args, &env);
        for line in table.lines() {
            assert!(terminal_columns(line) <= width, "wider than {width}: {line:?}\n{table}");
        }
        assert_eq!(table.lines().count(), 5, "a header and four rows:\n{table}");
        let pids_shown = owners.iter().filter(|owner| table.contains(&format!("{}?", owner.pid()))).count();
        assert_eq!(pids_shown, 3, "every row keeps its pid:\n{table}");
        assert!(table.contains('…'), "nothing marked as cut:\n{table}");
        let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
        let left_out: Vec<&str> =
            ["HARNESS", "AGE", "CONSENT"].into_iter().filter(|h| !header.contains(h)).collect();
        assert!(!left_out.is_empty(), "{width}: no column left out:\n{table}");
        let said =
            notes.lines().find(|line| line.contains("left out to fit")).unwrap_or_else(|| panic!("{notes}"));
        assert!(said.contains(&format!("to fit {width} columns")), "{said}");
        for column in left_out {
            assert!(said.contains(column), "{column} left out unsaid: {said}");
        }
    }
    // A pipe, no COLUMNS: nothing cut but the ids, and nothing left out.
    assert!(whole.contains("/crates/inner"), "{whole}");
    let header: Vec<&str> = whole.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(
        header,
        ["PID", "HARNESS", "AGENT", "LIVENESS", "STATE", "CONSENT", "AGE", "CWD", "SESSION", "REASON"],
        "{whole}"
    );
}

#[test]
fn session_ids_are_shortened_to_a_unique_prefix_and_whole_with_wide_and_in_json() {
    let (sandbox, owners) = wide_registry();
    let (table, _) = listing(&sandbox, &[], &[]);
    // The two UUIDs share 12 characters: 13 tell them apart.
    assert!(table.contains("0191e1c2-5d1e…") && table.contains("0191e1c2-5d1f…"), "{table}");
    assert!(!table.contains(LONG_ID), "{table}");
    assert!(table.contains("short-1"), "a short id stays whole:\n{table}");

    let (wide, _) = listing(&sandbox, &["--wide"], &[("COLUMNS", "80")]);
    assert!(wide.contains(LONG_ID) && wide.contains(SIMILAR_ID), "{wide}");
    assert!(wide.contains("a-rather-long-repository-name/crates/inner"), "--wide cut the directory:\n{wide}");

    let rows: Vec<Value> = sandbox.run_with_env("roster-list", &["--json"], &[("COLUMNS", "40")]).rows();
    let ids: Vec<&str> = rows.iter().filter_map(|row| row["session_id"].as_str()).collect();
    assert!(ids.contains(&LONG_ID) && ids.contains(&SIMILAR_ID), "{ids:?}");

    // Only one of the similar ids shown: 8 characters tell it apart.
    let (one, _) = listing(&sandbox, &["--agent", "heron"], &[]);
    assert!(one.contains("0191e1c2…") && !one.contains("0191e1c2-"), "{one}");
    drop(owners);
}

#[test]
fn a_problem_reason_goes_last_and_never_widens_the_directory_column() {
    let (sandbox, _owners) = wide_registry();
    let (table, _) = listing(&sandbox, &["--no-legend"], &[]);
    let header = table.lines().next().unwrap();
    let reason_at = header.find("REASON").unwrap_or_else(|| panic!("no REASON column:\n{table}"));
    assert!(header.trim_end().ends_with("REASON"), "REASON is not last:\n{table}");
    let problem = table.lines().find(|line| line.contains("malformed: 31005.json")).expect("the problem row");
    let detail = problem.find("not a JSON object").unwrap_or_else(|| panic!("{problem}"));
    assert_eq!(
        terminal_columns(&problem[..detail]),
        terminal_columns(&header[..reason_at]),
        "the reason is not in its column:\n{table}"
    );
    let cwd_width = header.find("SESSION").unwrap() - header.find("CWD").unwrap();
    let deep_cwd = "~/src/github.com/someone/a-rather-long-repository-name/crates/inner";
    assert_eq!(
        cwd_width,
        deep_cwd.len() + 2,
        "the directory column is wider than its widest directory:\n{table}"
    );

    // Without a problem row, no REASON column at all.
    std::fs::remove_file(sandbox.sessions().join("31005.json")).unwrap();
    let (clean, _) = listing(&sandbox, &[], &[]);
    assert!(!clean.contains("REASON"), "{clean}");
}

#[test]
fn columns_chooses_the_columns_and_an_unknown_one_is_bad_input_naming_the_valid_ones() {
    let (sandbox, _owners) = wide_registry();
    let (table, _) = listing(&sandbox, &["--columns", "pid,Agent,session"], &[]);
    let header: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["PID", "AGENT", "SESSION"], "{table}");
    let (short, _) = listing(&sandbox, &["-c", "cwd,pid"], &[]);
    assert_eq!(short.lines().next().unwrap().split_whitespace().collect::<Vec<_>>(), ["CWD", "PID"]);

    let refused = sandbox.run("roster-list", &["--columns", "pid,sesion"]);
    refused.expect_code(2);
    assert!(refused.stdout.is_empty(), "{}", refused.stdout_text());
    assert!(
        refused.stderr.contains("\"sesion\"")
            && refused.stderr.contains(
                "pid, harness, agent, liveness, state, consent, msgs, location, age, cwd, session, reason"
            ),
        "{}",
        refused.stderr
    );
}

#[test]
fn watch_lines_fit_the_width_too() {
    let id = "9f3c2a1b-0000-4000-8000-aaaaaaaaaaaa";
    for (width, keeps_the_session) in [("140", true), ("80", false)] {
        let (sandbox, _owners) = wide_registry();
        let mut command = sandbox.command_in_root("roster-list", &["--watch", "--color", "never"]);
        command.env("COLUMNS", width).stderr(Stdio::null());
        let watcher = Watcher::spawn(command);
        let mut lines: Vec<String> = (0..4).map(|_| watcher.next_line()).collect();
        let newcomer = Owner::spawn();
        sandbox.register(newcomer.pid(), &["--session-id", id, "--agent", "wren"]);
        lines.push(watcher.next_line());
        let width: usize = width.parse().unwrap();
        for line in &lines {
            assert!(terminal_columns(line) <= width, "wider than {width}: {line:?}\n{lines:#?}");
        }
        let registered = lines.last().unwrap();
        assert!(
            registered.contains(" registered ") && registered.contains(&newcomer.pid().to_string()),
            "{registered}"
        );
        assert!(!registered.contains(id), "the id is whole: {registered}");
        // Shortened as the ids at the start were, to 13 characters: the
        // watch's columns are fixed when it starts.
        assert_eq!(registered.contains("9f3c2a1b-0000…"), keeps_the_session, "{width}: {registered}");
    }
}

/// Without a width to keep to (into a pipe, or `--wide`), a watch's later
/// event whose directory or session id is longer than any at the start is
/// shown whole, the columns after it shifted, never cut.
#[test]
fn a_watch_without_a_width_cuts_no_later_id_or_directory() {
    let sandbox = Sandbox::new();
    let first = Owner::spawn();
    sandbox.register(first.pid(), &[]);
    let mut command = sandbox.command_in_root("roster-list", &["--watch", "--wide", "--color", "never"]);
    command.stderr(Stdio::null());
    let watcher = Watcher::spawn(command);
    watcher.next_line();
    let deep = sandbox.home().join("src/github.com/someone/a-rather-long-repository-name/crates/inner");
    std::fs::create_dir_all(&deep).unwrap();
    let newcomer = Owner::spawn();
    sandbox.register(newcomer.pid(), &["--session-id", LONG_ID, "--cwd", deep.to_str().unwrap()]);
    let registered = watcher.next_line();
    assert!(registered.contains(LONG_ID), "{registered}");
    assert!(registered.contains("a-rather-long-repository-name/crates/inner "), "{registered}");
    assert!(!registered.contains('…'), "{registered}");
}
