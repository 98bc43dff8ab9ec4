//! The temporary world a session runs in: HOME, project, roster directory, the environment
//! every process starts from, roster's tools and hooks installed there, and the records
//! the session leaves.

use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, ensure};
use serde_json::Value;

use super::hook_shim::HookShim;
use super::real_harnesses::{InstalledHarness, RealHarness};
use super::session_run::SessionReport;

/// A temporary world for one session: HOME, a project directory, and the roster directory
/// the installed hooks use by default (`~/.local/state/roster`).
pub(super) struct SessionWorld {
    pub(super) root: PathBuf,
    pub(super) home: PathBuf,
    pub(super) project: PathBuf,
    pub(super) roster: PathBuf,
}

impl SessionWorld {
    /// Under the system temp directory, never inside this repository: the harnesses read
    /// instructions and settings from every parent directory of their project.
    pub(super) fn create(harness: &str, label: &str) -> anyhow::Result<SessionWorld> {
        let root = std::env::temp_dir().join(format!("roster-e2e-{harness}-{label}-{}", std::process::id()));
        if root.exists() {
            fs::remove_dir_all(&root).with_context(|| format!("clearing {}", root.display()))?;
        }
        let home = root.join("home");
        let project = home.join("src").join("app");
        fs::create_dir_all(&project).with_context(|| format!("creating {}", project.display()))?;
        let root = fs::canonicalize(&root)?;
        let home = root.join("home");
        let project = home.join("src").join("app");
        let roster = home.join(".local").join("state").join("roster");
        Ok(SessionWorld { root, home, project, roster })
    }

    /// The record of owner `pid`: `sessions/<pid>@<world>.json` (an older roster's
    /// `<pid>.json` too); the world is always this machine's here.
    pub(super) fn record(&self, pid: u32) -> Option<Value> {
        let Ok(entries) = fs::read_dir(self.roster.join("sessions")) else { return None };
        let path = entries
            .filter_map(|entry| entry.ok())
            .find(|entry| record_file_pid(&entry.file_name().to_string_lossy()) == Some(pid))?
            .path();
        serde_json::from_slice(&fs::read(path).ok()?).ok()
    }

    pub(super) fn record_pids(&self) -> Vec<u32> {
        let Ok(entries) = fs::read_dir(self.roster.join("sessions")) else { return Vec::new() };
        entries
            .filter_map(|entry| entry.ok())
            .filter_map(|entry| record_file_pid(&entry.file_name().to_string_lossy()))
            .collect()
    }

    pub(super) fn hook_errors(&self) -> Vec<String> {
        fs::read_to_string(self.roster.join("hook-errors.log"))
            .map(|text| text.lines().map(str::to_owned).collect())
            .unwrap_or_default()
    }

    /// Where a harness started by `spawn_harness` writes its output.
    pub(super) fn harness_output(&self) -> PathBuf {
        self.root.join("harness-output.txt")
    }

    /// Starts the installed harness in this world (its project directory,
    /// the world's environment and the harness's own, a process group of
    /// its own), its output going to `harness_output`.
    pub(super) fn spawn_harness(
        &self,
        installed: &InstalledHarness,
        arguments: &[String],
        node: &Path,
        model_base_url: &str,
    ) -> anyhow::Result<std::process::Child> {
        let output = fs::File::create(self.harness_output())?;
        Command::new(&installed.executable)
            .args(arguments)
            .env_clear()
            .envs(self.base_environment(node))
            .envs(installed.harness.environment(model_base_url))
            .current_dir(&self.project)
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(output.try_clone()?)
            .stderr(output)
            .spawn()
            .with_context(|| format!("starting {} {}", installed.executable.display(), arguments.join(" ")))
    }

    /// The environment every process of the world starts from: nothing of this process's
    /// own (which may itself run inside a harness) but PATH, HOME and a plain locale.
    pub(super) fn base_environment(&self, node: &Path) -> Vec<(String, String)> {
        let node_directory =
            node.parent().map(|directory| directory.display().to_string()).unwrap_or_default();
        vec![
            ("PATH".to_owned(), format!("{node_directory}:/usr/local/bin:/usr/bin:/bin")),
            ("HOME".to_owned(), self.home.display().to_string()),
            ("LANG".to_owned(), "C.UTF-8".to_owned()),
            ("TERM".to_owned(), "dumb".to_owned()),
            ("NO_COLOR".to_owned(), "1".to_owned()),
        ]
    }

    pub(super) fn roster_tool(&self, binaries: &Path, tool: &str, node: &Path) -> Command {
        let mut command = Command::new(binaries.join(tool));
        command.env_clear().envs(self.base_environment(node)).current_dir(&self.project).stdin(Stdio::null());
        command
    }
}

/// `roster-hooks install` for the harness, its hooks calling roster's tools through the shim.
pub(super) fn install_hooks(
    world: &SessionWorld,
    harness: RealHarness,
    shim: &HookShim,
    binaries: &Path,
    node: &Path,
    report: &mut SessionReport,
) -> anyhow::Result<()> {
    let mut install = world.roster_tool(binaries, "roster-hooks", node);
    install.args(["install", harness.name, "--bin-dir"]).arg(&shim.bin_dir);
    if let Some(scope) = harness.install_scope() {
        install.args(["--scope", scope]);
    }
    let installation = install.output().context("running roster-hooks install")?;
    ensure!(
        installation.status.success(),
        "roster-hooks install {} failed: {}",
        harness.name,
        String::from_utf8_lossy(&installation.stderr).trim()
    );
    let status = world.roster_tool(binaries, "roster-hooks", node).args(["status", harness.name]).output()?;
    let status = String::from_utf8_lossy(&status.stdout).into_owned();
    for line in status.lines().filter(|line| line.contains("installed") || line.contains("untrusted")) {
        report.note(format!("roster-hooks status: {}", line.trim()));
    }
    Ok(())
}

/// The owner pid a record's file name names: `<pid>@<world>.json`, or an older
/// roster's `<pid>.json`; `None` for any other file (a temporary file of a write).
pub(super) fn record_file_pid(file_name: &str) -> Option<u32> {
    let stem = file_name.strip_suffix(".json")?;
    stem.split_once('@').map_or(stem, |(pid, _world)| pid).parse().ok()
}

pub(super) fn last_lines(path: &Path, count: usize) -> Vec<String> {
    let text = fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<String> = text.lines().map(str::to_owned).collect();
    lines[lines.len().saturating_sub(count)..].to_vec()
}
