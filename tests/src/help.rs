//! The help-style checks: the built binary answers `--help` and
//! `--version` as the house style says. One place, so the five tools are
//! held to the same rules (each binary crate's `tests/help.rs` calls it).

use std::path::Path;
use std::process::Command;

/// Runs `binary --help` and checks it: exit 0, every long flag of
/// `command` shown, an `Examples:` section, no period ending the first line.
pub fn check_help(binary: &Path, command: &clap::Command) {
    let output = Command::new(binary).arg("--help").output().expect("the binary runs");
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8(output.stdout).expect("help is UTF-8");
    for argument in command.get_arguments() {
        if let Some(long) = argument.get_long() {
            assert!(text.contains(&format!("--{long}")), "--help does not show --{long}:\n{text}");
        }
    }
    assert!(text.contains("Examples:"), "--help has no examples:\n{text}");
    let first = text.lines().next().unwrap_or("");
    assert!(!first.ends_with('.'), "the first help line ends with a period: {first:?}");
}

/// Runs `binary --version` and checks it prints `<name> <version>`.
pub fn check_version(binary: &Path, name: &str, version: &str) {
    let output = Command::new(binary).arg("--version").output().expect("the binary runs");
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8(output.stdout).expect("version is UTF-8");
    assert_eq!(text.trim(), format!("{name} {version}"));
}
