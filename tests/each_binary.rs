//! The one test target every binary crate names in its Cargo.toml
//! (`[[test]] name = "built"`): it makes `cargo test --workspace` build
//! the crate's binary, which the black-box tests in `tests/tests/` drive,
//! and checks that the binary built names itself and its version. How
//! every binary's help reads is checked once, over the list of tools
//! (`tests/tests/tooling/help_style.rs`), instead of in a copy per crate.

use std::path::Path;

#[test]
fn the_built_binary_names_itself_and_its_version() {
    let binary = env!(concat!("CARGO_BIN_EXE_", env!("CARGO_PKG_NAME")));
    tests::help::check_version(Path::new(binary), env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION"));
}
