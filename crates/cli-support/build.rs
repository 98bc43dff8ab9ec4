//! Does nothing: it exists so that cargo resolves cli-support's
//! build-dependencies (see its Cargo.toml), which only line up how the
//! proc-macros are built with the workspace's build.

fn main() {}
