//! Where the workspace and its build output are, and building the binaries
//! the benchmark and the soak run, through the same cargo that runs xtask.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

/// The binaries the benchmark and the soak cannot do without.
pub const REQUIRED_TOOLS: [&str; 3] = ["roster-register", "roster-list", "roster-prune"];

/// Which cargo profile to build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    Release,
    Debug,
}

/// The workspace root (xtask lives one directory below it).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives one directory below the workspace root")
        .to_owned()
}

fn cargo() -> Command {
    let mut command = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    command.current_dir(workspace_root());
    command
}

/// The target directory cargo uses here (honours `CARGO_TARGET_DIR`).
pub fn target_directory() -> anyhow::Result<PathBuf> {
    let output = cargo()
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .output()
        .context("run cargo metadata")?;
    if !output.status.success() {
        bail!("cargo metadata failed: {}", String::from_utf8_lossy(&output.stderr).trim());
    }
    let metadata: serde_json::Value =
        serde_json::from_slice(&output.stdout).context("parse cargo metadata")?;
    let directory =
        metadata["target_directory"].as_str().context("cargo metadata names no target_directory")?;
    Ok(PathBuf::from(directory))
}

/// Builds every binary of the workspace in `profile` and returns the
/// directory they are in.
pub fn build_binaries(profile: Profile) -> anyhow::Result<PathBuf> {
    let mut command = cargo();
    command.args(["build", "--bins"]);
    if profile == Profile::Release {
        command.arg("--release");
    }
    eprintln!("building: cargo build --bins{}", if profile == Profile::Release { " --release" } else { "" });
    let status = command.status().context("run cargo build")?;
    if !status.success() {
        bail!("cargo build --bins failed ({status})");
    }
    let directory = target_directory()?.join(if profile == Profile::Release { "release" } else { "debug" });
    for tool in REQUIRED_TOOLS {
        let path = directory.join(tool);
        if !path.is_file() {
            bail!("{} was not built", path.display());
        }
    }
    Ok(directory)
}
