//! Shared by the capture-driven tests: reads the real harness captures
//! (process ancestries, environments, payloads) into the types the crate
//! works with, so every test looks at exactly what a real harness showed.

#![allow(dead_code)] // Each test crate uses a different part of this module.

use std::collections::HashMap;

use owner_liveness::{ARGV_ENTRIES_KEPT, AncestorStep, Pid};

/// The captures' folder, inside the repository.
pub const CAPTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/harness-captures");

/// The text of one capture file, e.g. `read_capture("codex/env.txt")`.
pub fn read_capture(relative_path: &str) -> String {
    let path = format!("{CAPTURES}/{relative_path}");
    std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("cannot read {path}: {error}"))
}

/// Parses an `ancestry*.txt` capture, caller (the hook) first.
///
/// Two line formats occur, after `#` comments:
/// - `PID COMM ARGV…` (Claude Code's capture): no ppid, so each step's
///   parent is the next line's pid; no exe.
/// - `PID COMM ppid=PPID exe=PATH ARGV…`, where the topmost line may read
///   `PID COMM (the test runner)`: a process whose argv was not recorded.
///
/// argv is cut to `ARGV_ENTRIES_KEPT` entries as the real walk does.
pub fn parse_ancestry(text: &str) -> Vec<AncestorStep> {
    let lines: Vec<&str> =
        text.lines().map(str::trim).filter(|line| !line.is_empty() && !line.starts_with('#')).collect();
    let parsed: Vec<(AncestorStep, bool)> = lines.iter().map(|line| parse_ancestry_line(line)).collect();
    let next_pids: Vec<Option<Pid>> =
        parsed.iter().skip(1).map(|(step, _)| Some(step.pid)).chain([None]).collect();
    parsed
        .into_iter()
        .zip(next_pids)
        .map(|((mut step, says_its_parent), next_pid)| {
            // Lines in the short format have their parent on the next line.
            if !says_its_parent {
                step.parent = next_pid;
            }
            step
        })
        .collect()
}

/// One line as a step, and whether the line itself settles the parent
/// (a `ppid=` field, or the long format's unrecorded topmost process).
fn parse_ancestry_line(line: &str) -> (AncestorStep, bool) {
    let mut tokens = line.split_whitespace().peekable();
    let pid = tokens.next().and_then(|text| text.parse().ok()).and_then(Pid::new);
    let pid = pid.unwrap_or_else(|| panic!("no pid in ancestry line {line:?}"));
    let comm = tokens.next().unwrap_or_else(|| panic!("no comm in ancestry line {line:?}")).to_owned();
    let parent = tokens
        .next_if(|token| token.starts_with("ppid="))
        .map(|token| token["ppid=".len()..].parse().unwrap_or_else(|_| panic!("bad ppid in {line:?}")))
        .and_then(Pid::new);
    let exe_basename = tokens
        .next_if(|token| token.starts_with("exe="))
        .map(|token| token.rsplit('/').next().unwrap_or(token).to_owned());
    let unrecorded = tokens.peek().is_some_and(|token| token.starts_with('('));
    let argv =
        if unrecorded { Vec::new() } else { tokens.take(ARGV_ENTRIES_KEPT).map(str::to_owned).collect() };
    let says_its_parent = parent.is_some() || unrecorded;
    (AncestorStep::with_names(pid, parent, comm, argv, exe_basename), says_its_parent)
}

/// Parses an `env*.txt` capture (`NAME=value` lines).
pub fn parse_env(text: &str) -> HashMap<String, String> {
    text.lines()
        .filter(|line| !line.trim().is_empty() && !line.starts_with('#'))
        .map(|line| {
            let (name, value) = line.split_once('=').unwrap_or_else(|| panic!("no `=` in env line {line:?}"));
            (name.to_owned(), value.to_owned())
        })
        .collect()
}

/// A step built by hand for synthetic trees.
pub fn step(pid: u32, parent: u32, comm: &str, argv: &[&str], exe_basename: Option<&str>) -> AncestorStep {
    AncestorStep::with_names(
        Pid::new(pid).expect("test pids are positive"),
        Pid::new(parent),
        comm.to_owned(),
        argv.iter().take(ARGV_ENTRIES_KEPT).map(|entry| (*entry).to_owned()).collect(),
        exe_basename.map(str::to_owned),
    )
}
