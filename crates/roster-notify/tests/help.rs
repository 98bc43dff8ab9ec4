//! The built `roster-notify` binary answers `--help` and `--version` as the
//! house style says. Having an integration test here also makes
//! `cargo test --workspace` build this binary, which the black-box crate
//! in `tests/` drives.

use std::path::Path;

const BINARY: &str = env!("CARGO_BIN_EXE_roster-notify");

#[test]
fn help_names_every_flag_and_exits_0() {
    tests::help::check_help(Path::new(BINARY), &roster_notify::command());
}

#[test]
fn version_names_the_tool_and_exits_0() {
    tests::help::check_version(Path::new(BINARY), "roster-notify", env!("CARGO_PKG_VERSION"));
}
