//! The built `roster-prune` binary answers `--help` and `--version` as the
//! house style says. Having an integration test here also makes
//! `cargo test --workspace` build this binary, which the black-box crate
//! in `tests/` drives.

use std::process::Command;

fn run(argument: &str) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_roster-prune")).arg(argument).output().expect("the binary runs")
}

#[test]
fn help_names_every_flag_and_exits_0() {
    let output = run("--help");
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8(output.stdout).unwrap();
    let command = roster_prune::command();
    for argument in command.get_arguments() {
        if let Some(long) = argument.get_long() {
            assert!(text.contains(&format!("--{long}")), "--help does not show --{long}:\n{text}");
        }
    }
    assert!(text.contains("Examples:"), "--help has no examples:\n{text}");
    let first = text.lines().next().unwrap_or("");
    assert!(!first.ends_with('.'), "the first help line ends with a period: {first:?}");
}

#[test]
fn version_names_the_tool_and_exits_0() {
    let output = run("--version");
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8(output.stdout).unwrap();
    assert_eq!(text.trim(), format!("roster-prune {}", env!("CARGO_PKG_VERSION")));
}
