//! Being written: see main.rs for the entry points this module provides.
#[derive(Debug, clap::Args)]
pub struct BenchArgs {}
