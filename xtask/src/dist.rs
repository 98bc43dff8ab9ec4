//! `cargo xtask dist`: a release build and the tarball
//! `target/dist/roster-<version>-<target triple>.tar.gz`. The tarball holds
//! one directory laid out like an installation (`bin/`, `share/man/man1`,
//! `share/man/man7`, the completions where each shell looks under
//! `share/`), plus the README and both licence texts, so unpacking it and
//! copying `bin` and `share` into a prefix is a complete install.

use std::fs;
use std::path::Path;

use anyhow::{Context, bail};
use xshell::{Shell, cmd};

use crate::install;
use ::tests::workspace::{Profile, build_binaries, target_directory, workspace_root};

/// Files from the repository root that ship at the top of the tarball.
const DOCUMENTS: [&str; 3] = ["README.md", "LICENSE-MIT", "LICENSE-APACHE"];

/// Builds the release binaries and packs the tarball.
pub fn run() -> anyhow::Result<()> {
    let root = workspace_root();
    for document in DOCUMENTS {
        if !root.join(document).is_file() {
            bail!("{document} is missing from the repository root; the tarball ships it");
        }
    }
    let binaries_directory = build_binaries(Profile::Release, &crate::codegen::BINARY_NAMES)?;
    let version = release_version()?;
    let target_triple = host_target_triple()?;
    let package_name = format!("roster-{version}-{target_triple}");
    let dist_directory = target_directory()?.join("dist");
    let staging_directory = dist_directory.join(&package_name);

    if staging_directory.exists() {
        fs::remove_dir_all(&staging_directory)
            .with_context(|| format!("cannot remove the old {}", staging_directory.display()))?;
    }
    fs::create_dir_all(&staging_directory)
        .with_context(|| format!("cannot create {}", staging_directory.display()))?;
    install::write_installation_files(
        &staging_directory,
        // Unpacked anywhere: systemd finds a bare name in /usr/local/bin and /usr/bin.
        &install::installation_files(&binaries_directory, "roster-notify")?,
    )?;
    for document in DOCUMENTS {
        let destination = staging_directory.join(document);
        fs::copy(root.join(document), &destination)
            .with_context(|| format!("cannot copy {document} to {}", destination.display()))?;
    }

    let tarball = dist_directory.join(format!("{package_name}.tar.gz"));
    pack_tarball(&dist_directory, &package_name, &tarball)?;
    println!("wrote {}", tarball.display());
    Ok(())
}

/// The version the binaries report, which is the workspace's version.
pub fn release_version() -> anyhow::Result<String> {
    roster_list::command()
        .get_version()
        .map(str::to_owned)
        .context("roster-list has no version; add `version` to its #[command]")
}

/// The `host:` line of `rustc -vV`, the triple the release was built for.
fn host_target_triple() -> anyhow::Result<String> {
    let shell = Shell::new()?;
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let version_output = cmd!(shell, "{rustc} -vV").read()?;
    version_output
        .lines()
        .find_map(|line| line.strip_prefix("host: "))
        .map(|triple| triple.trim().to_owned())
        .context("rustc -vV printed no host line")
}

/// Packs `dist_directory/package_name` into `tarball`, with entries sorted
/// and owned by root so the archive does not depend on who built it.
fn pack_tarball(dist_directory: &Path, package_name: &str, tarball: &Path) -> anyhow::Result<()> {
    let shell = Shell::new()?;
    cmd!(
        shell,
        "tar --create --gzip --file {tarball} --directory {dist_directory} --sort=name --owner=0 --group=0 --numeric-owner {package_name}"
    )
    .run()?;
    Ok(())
}
