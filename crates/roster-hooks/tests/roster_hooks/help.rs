//! The built `roster-hooks` binary answers `--help` (and each subcommand's)
//! and `--version` as the house style says, from a clap definition that is
//! consistent and gives every flag a help line. Having an integration test here
//! also makes `cargo test --workspace` build this binary, which the
//! black-box crate in `tests/` drives.

use std::path::Path;
use std::process::Command;

const BINARY: &str = env!("CARGO_BIN_EXE_roster-hooks");

#[test]
fn help_names_every_flag_and_exits_0() {
    tests::help::check_help(Path::new(BINARY), &roster_hooks::command());
}

#[test]
fn every_subcommand_help_gives_an_example() {
    for subcommand in ["print", "install", "uninstall", "status"] {
        let help = Command::new(BINARY).args([subcommand, "--help"]).output().expect("the binary runs");
        assert_eq!(help.status.code(), Some(0), "{subcommand}: {help:?}");
        let text = String::from_utf8_lossy(&help.stdout);
        assert!(text.contains("Example"), "{subcommand}: {text}");
    }
}

#[test]
fn version_names_the_tool_and_exits_0() {
    tests::help::check_version(Path::new(BINARY), "roster-hooks", env!("CARGO_PKG_VERSION"));
}

#[test]
fn command_definition_is_consistent() {
    roster_hooks::command().debug_assert();
}

#[test]
fn every_flag_has_help() {
    let command = roster_hooks::command();
    for subcommand in command.get_subcommands() {
        assert!(subcommand.get_about().is_some(), "{} has no help", subcommand.get_name());
        for argument in subcommand.get_arguments() {
            assert!(
                argument.get_help().is_some(),
                "{} {} has no help",
                subcommand.get_name(),
                argument.get_id()
            );
        }
    }
}
