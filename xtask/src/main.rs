//! xtask: the project's automation as plain Rust (`cargo xtask <verb>`), so
//! nothing depends on make, shell scripts or tools a newcomer lacks. The
//! long test runs (soak, fault table, e2e) are test binaries of the `tests`
//! crate; the benchmark shares their harness from that crate's library.

#![forbid(unsafe_code)]

mod bench;
mod codegen;
mod deb;
mod dist;
mod fuzz;
mod install;
mod systemd_unit;
mod tidy;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// Automate roster's chores
#[derive(Debug, Parser)]
#[command(name = "cargo xtask", about = "Automate roster's chores")]
struct Xtask {
    #[command(subcommand)]
    verb: Verb,
}

#[derive(Debug, Subcommand)]
enum Verb {
    /// Generate man pages into man/
    Man,
    /// Generate shell completions into completions/
    Completions,
    /// Generate man pages and completions; with --check, fail when the committed ones drift
    Codegen {
        /// Compare with the committed files instead of writing them
        #[arg(long)]
        check: bool,
    },
    /// Build release binaries and a tarball under target/dist/
    Dist,
    /// Build release binaries and the Debian package target/debian/roster_<version>_<arch>.deb
    Deb {
        /// Write the package into DIR instead of target/debian
        #[arg(long, value_name = "DIR")]
        out_dir: Option<PathBuf>,
    },
    /// Install binaries, man pages and completions under a prefix
    Install {
        /// Install under DIR (default: ~/.local)
        #[arg(long, value_name = "DIR")]
        prefix: Option<PathBuf>,
    },
    /// Remove what install put under a prefix, as its manifest lists it
    Uninstall {
        /// Uninstall from under DIR (default: ~/.local)
        #[arg(long, value_name = "DIR")]
        prefix: Option<PathBuf>,
    },
    /// Measure the speed targets of docs/contract.md §9 and fail when one is missed
    Bench(bench::BenchArgs),
    /// Run each cargo-fuzz target for a bounded time
    Fuzz {
        /// Seconds per target
        #[arg(default_value_t = 60)]
        seconds: u64,
    },
}

fn main() -> anyhow::Result<()> {
    match Xtask::parse().verb {
        Verb::Man => codegen::write_man_pages(),
        Verb::Completions => codegen::write_completions(),
        Verb::Codegen { check: false } => codegen::write_all(),
        Verb::Codegen { check: true } => codegen::check_all(),
        Verb::Dist => dist::run(),
        Verb::Deb { out_dir } => deb::run(out_dir),
        Verb::Install { prefix } => install::run(prefix),
        Verb::Uninstall { prefix } => install::uninstall(prefix),
        Verb::Bench(args) => bench::run(args),
        Verb::Fuzz { seconds } => fuzz::run(seconds),
    }
}
