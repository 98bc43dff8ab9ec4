//! Entry point of `roster-prune`: everything lives in the library so xtask can render its help.

#![no_main]
#![forbid(unsafe_code)]

/// One row per record, on every core: see the workspace's dependencies.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

cli_support::tool_main!(roster_prune::main);
