//! The built `roster-hooks` binary and its documents: help and version as
//! the house style says, and one list of harness names everywhere. Having an
//! integration test here also makes `cargo test --workspace` build this
//! binary, which the black-box crate in `tests/` drives.

mod help;
mod names_agree;
