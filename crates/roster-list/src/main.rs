//! Entry point of `roster-list`: everything lives in the library so xtask can render its help.

#![forbid(unsafe_code)]

/// One row per record, on every core: see the workspace's dependencies.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    roster_list::main()
}
