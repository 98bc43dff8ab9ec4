//! The built `roster-hooks` binary answers `--help` (and each subcommand's)
//! and `--version` as the house style says. Having an integration test here
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
