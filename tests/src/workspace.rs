//! Where the workspace and its build output are, and building the binaries
//! the benchmark, the soak, the fault table and the e2e run, through the
//! same cargo that runs them; and running `cargo xtask` for the tests of
//! what it makes.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

/// The binaries roster ships, as the tests name them; xtask's list
/// (`xtask/src/codegen/binaries.rs`), from which every page, package and
/// installation is made, passes its own to [`build_binaries`]. The tooling
/// test `every_binary_crate_is_in_every_list_of_the_tools` holds both to
/// the workspace's binary crates.
pub const ROSTER_BINARIES: [&str; 11] = [
    "roster-register",
    "roster-list",
    "roster-prune",
    "roster-consent",
    "roster-hooks",
    "roster-state",
    "roster-send",
    "roster-focus",
    "roster-resume",
    "roster-top",
    "roster-notify",
];

/// Which cargo profile to build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    Release,
    Debug,
}

/// The workspace root (this crate lives one directory below it).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate lives one directory below the workspace root")
        .to_owned()
}

/// The cargo that runs us, so a pinned toolchain builds with the same one.
pub fn cargo_program() -> OsString {
    std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"))
}

fn cargo() -> Command {
    let mut command = Command::new(cargo_program());
    command.current_dir(workspace_root());
    command
}

/// `cargo xtask ARGUMENTS` run from the workspace root, as a person runs
/// it: the tests of what xtask makes (generated files, the installation,
/// the Debian package) drive the real verb and check what it leaves.
pub fn xtask<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(arguments: I) -> Command {
    let mut command = cargo();
    command.arg("xtask").args(arguments);
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

/// Builds the roster binaries `binaries` in `profile` (`cargo build
/// --locked`, as CI builds them) and returns the directory they are in.
///
/// A release build is what roster ships (installed, packaged, benchmarked),
/// and on a glibc target it is linked statically: a session-start hook runs
/// under the harness's time budget, and the dynamic loader alone (libc and
/// libgcc_s mapped and relocated) costs more than `/bin/true` takes in all.
/// The target is named so that cargo gives the static flag to the binaries
/// only, not to the proc macros and build scripts it runs on the host.
pub fn build_binaries(profile: Profile, binaries: &[&str]) -> anyhow::Result<PathBuf> {
    let mut command = cargo();
    command.args(["build", "--locked"]);
    for tool in binaries {
        command.args(["--bin", tool]);
    }
    let directory = build_for(&mut command, profile)?;
    eprintln!("building: {}", crate::describe(&command));
    let status = command.status().context("run cargo build")?;
    if !status.success() {
        bail!("cargo build of the roster binaries failed ({status})");
    }
    for tool in binaries {
        let path = directory.join(tool);
        if !path.is_file() {
            bail!("{} was not built", path.display());
        }
    }
    Ok(directory)
}

/// Builds the example `example` of `package` as `build_binaries` builds
/// the tools for `profile`; its path.
pub fn build_example(profile: Profile, package: &str, example: &str) -> anyhow::Result<PathBuf> {
    let mut command = cargo();
    command.args(["build", "--locked", "--package", package, "--example", example]);
    let directory = build_for(&mut command, profile)?;
    eprintln!("building: {}", crate::describe(&command));
    let status = command.status().context("run cargo build")?;
    if !status.success() {
        bail!("cargo build of the example {example} failed ({status})");
    }
    let path = directory.join("examples").join(example);
    if !path.is_file() {
        bail!("{} was not built", path.display());
    }
    Ok(path)
}

/// Makes `command` (a `cargo build`) build for `profile`, as the package
/// ships for release (statically linked on glibc); the directory its
/// outputs go to.
fn build_for(command: &mut Command, profile: Profile) -> anyhow::Result<PathBuf> {
    Ok(match profile {
        Profile::Release => {
            let host = host_triple()?;
            command.args(["--release", "--target", &host]);
            if host.ends_with("-linux-gnu") {
                command
                    .arg("--config")
                    .arg(format!(r#"target.{host}.rustflags=["-C", "target-feature=+crt-static"]"#));
            }
            target_directory()?.join(host).join("release")
        }
        Profile::Debug => target_directory()?.join("debug"),
    })
}

/// The target triple of this machine, as the rustc that cargo runs names it.
fn host_triple() -> anyhow::Result<String> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| OsString::from("rustc"));
    let output =
        Command::new(&rustc).arg("-vV").current_dir(workspace_root()).output().context("run rustc -vV")?;
    if !output.status.success() {
        bail!("rustc -vV failed: {}", String::from_utf8_lossy(&output.stderr).trim());
    }
    let description =
        String::from_utf8(output.stdout).context("rustc -vV printed something other than UTF-8")?;
    description
        .lines()
        .find_map(|line| line.strip_prefix("host: "))
        .map(str::to_owned)
        .context("rustc -vV names no host")
}
