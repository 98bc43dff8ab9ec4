//! `cargo xtask fuzz [SECONDS]`: runs every cargo-fuzz target in `fuzz/`
//! for a bounded time, one after the other, and fails on the first crash.
//!
//! The committed seeds in `fuzz/corpus/<target>/` are only read: what the
//! fuzzer learns goes to a working corpus under the target directory, so a
//! run never adds thousands of files to the repository. Crash inputs land
//! in `<target dir>/fuzz/artifacts/<target>/`; each one found so far is a
//! regression test in the crate that owns the parser.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, bail};

use ::tests::workspace::{target_directory, workspace_root};

/// The targets, in the order they run (names of `fuzz/fuzz_targets/*.rs`).
pub const FUZZ_TARGETS: [&str; 6] =
    ["record", "hook_payload", "consent_config", "consent_marker", "proc_stat", "timestamp"];

pub fn run(seconds: u64) -> anyhow::Result<()> {
    if seconds == 0 {
        bail!("give each target at least one second");
    }
    check_tools()?;
    let fuzz_directory = workspace_root().join("fuzz");
    let work = target_directory()?.join("fuzz");
    for target in FUZZ_TARGETS {
        let corpus = work.join("corpus").join(target);
        let artifacts = work.join("artifacts").join(target);
        std::fs::create_dir_all(&corpus).with_context(|| format!("create {}", corpus.display()))?;
        std::fs::create_dir_all(&artifacts).with_context(|| format!("create {}", artifacts.display()))?;
        let seeds = fuzz_directory.join("corpus").join(target);
        eprintln!(
            "fuzz: {target} for {seconds} s (seeds {}, crashes to {})",
            seeds.display(),
            artifacts.display()
        );
        let status = Command::new("cargo")
            .current_dir(&fuzz_directory)
            .args(["+nightly", "fuzz", "run", target])
            .arg(&corpus)
            .arg(&seeds)
            .arg("--")
            .arg(format!("-max_total_time={seconds}"))
            .arg(format!("-artifact_prefix={}/", artifacts.display()))
            .arg("-print_final_stats=1")
            .status()
            .context("run cargo +nightly fuzz")?;
        if !status.success() {
            bail!(
                "fuzz target {target} failed ({status}); the input is in {}: add it as a regression test \
                 to the crate that owns the parser, then fix the parser",
                artifacts.display()
            );
        }
    }
    Ok(())
}

/// cargo-fuzz and a nightly toolchain, with a message that says how to get
/// whichever is missing.
fn check_tools() -> anyhow::Result<()> {
    let nightly = Command::new("cargo").args(["+nightly", "--version"]).output();
    if !nightly.is_ok_and(|output| output.status.success()) {
        bail!("fuzzing needs a nightly toolchain: `rustup toolchain install nightly`");
    }
    let fuzz = Command::new("cargo").args(["+nightly", "fuzz", "--version"]).output();
    if !fuzz.is_ok_and(|output| output.status.success()) {
        bail!("fuzzing needs cargo-fuzz: `cargo install cargo-fuzz`");
    }
    if !Path::new(&workspace_root()).join("fuzz/Cargo.toml").is_file() {
        bail!("fuzz/Cargo.toml is missing");
    }
    Ok(())
}
