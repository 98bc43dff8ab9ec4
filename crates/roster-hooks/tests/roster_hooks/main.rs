//! The built `roster-hooks` binary and its documents: one list of harness
//! names everywhere. Its help is checked with every tool's
//! (`tests/tests/tooling/help_style.rs`).

mod names_agree;
