//! Completion tests: every binary's generated scripts, installed the way
//! `cargo xtask install` lays them out, completing subcommands, flags and
//! values in real bash, zsh and fish. A shell that is missing fails the
//! test (CI installs them).

use std::collections::BTreeSet;
use std::path::Path;

use super::shell_completion::{CompletionDirectories, TestedShell, complete_lines};
use super::{BINARY_NAMES, generate_completion_scripts};
use crate::install::completion_destination;

/// What completing one line must give.
#[derive(Clone, Copy)]
enum Expect<'a> {
    /// Exactly these candidates: a fixed set of values.
    Exactly(&'a [&'a str]),
    /// At least these candidates: flags and subcommands, where shells differ
    /// in what else they offer (bash lists flags beside subcommands).
    Includes(&'a [&'a str]),
}

const HARNESSES: &[&str] =
    &["aider", "amp", "claude-code", "codex", "copilot", "cursor-agent", "gemini-cli", "goose", "opencode"];
const HOOK_TARGETS: &[&str] = &[
    "aider",
    "amp",
    "auto",
    "claude-code",
    "codex",
    "copilot",
    "cursor-agent",
    "gemini-cli",
    "goose",
    "opencode",
];
const HOOK_HARNESSES: &[&str] =
    &["amp", "claude-code", "codex", "copilot", "cursor-agent", "gemini-cli", "opencode"];

/// Lines a user types before TAB, and what every shell must offer. The
/// `roster-consent` and `roster-hooks` lines after a subcommand are the
/// ones clap-rs/clap#6421 broke in bash.
const CASES: &[(&str, Expect)] = &[
    ("roster-register --", Expect::Includes(&["--pid", "--agent", "--harness", "--hook", "--format"])),
    ("roster-register --harness ", Expect::Exactly(HARNESSES)),
    ("roster-register --hook ", Expect::Exactly(HOOK_TARGETS)),
    ("roster-register --format ", Expect::Exactly(&["json", "text"])),
    ("roster-list --", Expect::Includes(&["--all", "--agent", "--harness", "--session-id", "--cwd"])),
    ("roster-list --harness c", Expect::Exactly(&["claude-code", "codex", "copilot", "cursor-agent"])),
    ("roster-prune --", Expect::Includes(&["--older-than", "--dry-run", "--current", "--pid", "--hook"])),
    ("roster-prune --current --hook ", Expect::Exactly(HOOK_TARGETS)),
    ("roster-consent ", Expect::Includes(&["arm", "disarm", "status", "should-arm"])),
    ("roster-consent arm --", Expect::Includes(&["--pid", "--cwd", "--dir", "--format"])),
    ("roster-consent should-arm --p", Expect::Exactly(&["--pid"])),
    ("roster-consent status --format ", Expect::Exactly(&["json", "text"])),
    ("roster-hooks ", Expect::Includes(&["print", "install", "uninstall", "status"])),
    // bash offers the flags beside a positional value, as clap_complete writes it.
    ("roster-hooks install ", Expect::Includes(HOOK_HARNESSES)),
    ("roster-hooks install cl", Expect::Exactly(&["claude-code"])),
    ("roster-hooks install codex --", Expect::Includes(&["--bin-dir", "--scope", "--dir"])),
    ("roster-hooks install claude-code --scope ", Expect::Exactly(&["project", "user"])),
    ("roster-hooks status --scope ", Expect::Exactly(&["project", "user"])),
];

/// Lines whose value is a pid: `parent` and the live pids must be offered.
const PID_LINES: &[&str] = &[
    "roster-register --pid ",
    "roster-prune --current --pid ",
    "roster-consent arm --pid ",
    "roster-consent should-arm --pid ",
];

/// Writes every generated script where `cargo xtask install` puts it under
/// `prefix`, with a stand-in for each binary in `prefix/bin` (the scripts
/// do not run the binaries), and returns the directories each shell searches.
fn install_generated_completions(prefix: &Path) -> CompletionDirectories {
    use std::os::unix::fs::PermissionsExt;
    for script in generate_completion_scripts() {
        let path = prefix.join(completion_destination(script.shell, script.binary, &script.file_name));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &script.script).unwrap();
    }
    let commands = prefix.join("bin");
    std::fs::create_dir_all(&commands).unwrap();
    for binary in BINARY_NAMES {
        let stand_in = commands.join(binary);
        std::fs::write(&stand_in, "#!/bin/sh\nexit 0\n").unwrap();
        std::fs::set_permissions(&stand_in, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    CompletionDirectories {
        bash: prefix.join("share/bash-completion/completions"),
        zsh: prefix.join("share/zsh/site-functions"),
        fish: prefix.join("share/fish/vendor_completions.d"),
        commands,
    }
}

/// Checks `lines` against what every shell offers, collecting every
/// mismatch so one run shows them all.
fn check_completions(directories: &CompletionDirectories, cases: &[(&str, Expect)]) {
    // One thread per shell: the shells start a process per line, and zsh a terminal.
    let problems: Vec<String> = std::thread::scope(|scope| {
        let checks: Vec<_> = TestedShell::ALL
            .into_iter()
            .map(|shell| scope.spawn(move || completion_problems(shell, directories, cases)))
            .collect();
        checks
            .into_iter()
            .flat_map(|check| check.join().expect("a completion check does not panic"))
            .collect()
    });
    assert!(problems.is_empty(), "completion is wrong:\n  {}", problems.join("\n  "));
}

/// What `shell` offers wrongly for `cases`.
fn completion_problems(
    shell: TestedShell,
    directories: &CompletionDirectories,
    cases: &[(&str, Expect)],
) -> Vec<String> {
    let lines: Vec<&str> = cases.iter().map(|(line, _)| *line).collect();
    let answers = complete_lines(shell, directories, &lines);
    let mut problems = Vec::new();
    for ((line, expect), offered) in cases.iter().zip(answers) {
        let offered_set: BTreeSet<&str> = offered.iter().map(String::as_str).collect();
        match expect {
            Expect::Exactly(expected) => {
                let expected: BTreeSet<&str> = expected.iter().copied().collect();
                if offered_set != expected {
                    problems.push(format!("{shell:?} {line:?}: offered {offered:?}, expected {expected:?}"));
                }
            }
            Expect::Includes(expected) => {
                let missing: Vec<&&str> =
                    expected.iter().filter(|candidate| !offered_set.contains(**candidate)).collect();
                if !missing.is_empty() {
                    problems.push(format!("{shell:?} {line:?}: {missing:?} missing from {offered:?}"));
                }
            }
        }
    }
    problems
}

#[test]
fn every_binary_completes_subcommands_flags_and_values_in_bash_zsh_and_fish() {
    let prefix = tempfile::tempdir().unwrap();
    let directories = install_generated_completions(prefix.path());
    check_completions(&directories, CASES);
}

#[test]
fn pid_flags_complete_parent_and_live_pids_but_never_init() {
    let prefix = tempfile::tempdir().unwrap();
    let directories = install_generated_completions(prefix.path());
    let mut live = std::process::Command::new("sleep").arg("600").spawn().expect("sleep runs");
    let live_pid = live.id().to_string();
    let mut problems = Vec::new();
    for shell in TestedShell::ALL {
        for (line, offered) in PID_LINES.iter().zip(complete_lines(shell, &directories, PID_LINES)) {
            for wanted in ["parent", live_pid.as_str()] {
                if !offered.iter().any(|candidate| candidate == wanted) {
                    problems
                        .push(format!("{shell:?} {line:?}: {wanted} missing ({} offered)", offered.len()));
                }
            }
            if offered.iter().any(|candidate| candidate == "1") {
                problems.push(format!("{shell:?} {line:?}: offers pid 1, which is never an owner"));
            }
            if let Some(odd) = offered.iter().find(|candidate| {
                *candidate != "parent" && !candidate.chars().all(|character| character.is_ascii_digit())
            }) {
                problems.push(format!("{shell:?} {line:?}: offers {odd:?}, neither a pid nor parent"));
            }
        }
    }
    let _ = live.kill();
    let _ = live.wait();
    assert!(problems.is_empty(), "pid completion is wrong:\n  {}", problems.join("\n  "));
}
