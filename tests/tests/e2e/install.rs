//! Installs each harness at its pinned version from npm under target/e2e/npm, once, and
//! says which version runs and whether its node engine fits the node here.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Context, ensure};
use serde_json::Value;

use super::real_harnesses::{InstalledHarness, RealHarness};

/// Installs `harness` at its pinned version under `prefix` with npm, unless an earlier run
/// did; delete the prefix to reinstall. Says which version runs, and whether the package's
/// node engine excludes the node here.
pub(super) fn install_harness(
    npm: &Path,
    node: &Path,
    prefix: &Path,
    harness: RealHarness,
) -> anyhow::Result<InstalledHarness> {
    let executable = prefix.join("node_modules").join(".bin").join(harness.command);
    let spec = format!("{}@{}", harness.package, harness.pinned_version);
    if executable.exists() {
        eprintln!("using {spec} installed under {} (delete it to reinstall)", prefix.display());
    } else {
        fs::create_dir_all(prefix)?;
        eprintln!("installing {spec} from npm under {} (this can take minutes)", prefix.display());
        let status = Command::new(npm)
            .current_dir(prefix)
            .args(["install", "--prefix"])
            .arg(prefix)
            .args(["--no-audit", "--no-fund", "--loglevel=error", &spec])
            .status()
            .context("running npm install")?;
        ensure!(status.success(), "npm install {spec} failed ({status})");
        ensure!(executable.exists(), "npm installed {spec} but not {}", executable.display());
    }
    let manifest = prefix.join("node_modules").join(harness.package).join("package.json");
    let manifest: Value = serde_json::from_slice(
        &fs::read(&manifest).with_context(|| format!("reading {}", manifest.display()))?,
    )
    .context("parsing the package's package.json")?;
    let version = manifest["version"].as_str().context("package.json has no version")?.to_owned();
    ensure!(
        version == harness.pinned_version,
        "{} holds {} {version}, not the pinned {}; delete it to reinstall",
        prefix.display(),
        harness.package,
        harness.pinned_version
    );
    let help_arguments: &[&str] = if harness.name == "codex" { &["exec", "--help"] } else { &["--help"] };
    let help = command_text(&executable, help_arguments);
    let reported = command_text(&executable, &["--version"]);
    let running_version = reported
        .split(|character: char| character.is_whitespace())
        .find(|word| word.contains(harness.pinned_version))
        .map(|_| harness.pinned_version.to_owned())
        .unwrap_or_else(|| reported.lines().next().unwrap_or("unknown").trim().to_owned());
    ensure!(
        running_version == harness.pinned_version,
        "the pinned {spec} is installed but `{} --version` says {reported:?}",
        harness.command
    );
    let node_version = command_text(node, &["--version"]).trim().to_owned();
    let engine_warning = manifest["engines"]["node"].as_str().and_then(|range| {
        let satisfied = node_satisfies(&node_version, range)?;
        (!satisfied).then(|| {
            format!(
                "{spec} asks for node {range}, this machine has node {node_version}: npm installed the pinned \
                 version anyway (EBADENGINE) and {} {running_version} is what ran (its launcher does not need \
                 node). An unpinned `npm install {}` here picks an older release that fits node {node_version}",
                harness.command, harness.package
            )
        })
    });
    Ok(InstalledHarness {
        harness,
        executable,
        prefix: prefix.to_path_buf(),
        running_version,
        engine_warning,
        help,
    })
}

/// Stdout and stderr of a short command, empty when it cannot run.
pub(super) fn command_text(program: &Path, arguments: &[&str]) -> String {
    Command::new(program)
        .args(arguments)
        .stdin(Stdio::null())
        .output()
        .map(|output| {
            format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
        })
        .unwrap_or_default()
}

/// Whether node `version` (`v20.20.2`) satisfies `range` when it has the one form the
/// harnesses use (`>=22.0.0`, `>=18`); `None` for any other form, which is not judged.
pub(super) fn node_satisfies(version: &str, range: &str) -> Option<bool> {
    let parse = |text: &str| -> Option<Vec<u64>> {
        text.trim().trim_start_matches('v').split('.').map(|part| part.parse().ok()).collect()
    };
    let have = parse(version)?;
    let want = parse(range.trim().strip_prefix(">=")?)?;
    Some(have >= want)
}
