//! roster-notify's figure: how soon a session that starts waiting is
//! handed to the notifier's backend, from the state hook that writes the
//! change to disk to the `show` line roster-notify prints once every
//! backend has the notice, while it follows a large registry.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::Value;

use super::processes::{SleepingOwner, stamp_lines};
use ::tests::measure::Samples;

/// How long the backend's worker gets to run the notices of the sessions
/// already waiting at the start (a queue of 64 `/bin/true`s) before the
/// rounds begin.
const BACKLOG_SETTLES: Duration = Duration::from_secs(2);

/// The tools the figure runs.
pub struct NotifierTools<'a> {
    pub notify: &'a Path,
    pub register: &'a Path,
    pub state: &'a Path,
    pub prune: &'a Path,
    /// The program the `exec` backend runs for each notice.
    pub exec: &'a Path,
}

/// A running `roster-notify --format json`, its lines stamped when read,
/// killed when dropped.
struct Notifier {
    child: Child,
    lines: Receiver<(Instant, String)>,
}

impl Notifier {
    /// Reads until a line of `action`; when it was read, and the line.
    fn wait_for(&self, action: &str) -> anyhow::Result<(Instant, Value)> {
        loop {
            let (at, line) = self
                .lines
                .recv_timeout(Duration::from_secs(30))
                .with_context(|| format!("roster-notify printed no `{action}` line in time"))?;
            let value: Value = serde_json::from_str(&line).with_context(|| format!("not JSON: {line}"))?;
            if value["action"] == action {
                return Ok((at, value));
            }
        }
    }
}

impl Drop for Notifier {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Registers `rounds` sessions in `registry` (which holds `present` live
/// records already), starts roster-notify on it with the `exec` backend,
/// then puts each session in turn into waiting for permission with the
/// state hook, as Claude Code's `PermissionRequest` does, and times each
/// from the hook's start to the notice's `show` line. Every timed session
/// is a new one, so no flap window joins two rounds. Their records are
/// pruned at the end, their owners gone.
pub fn measure_notices(
    tools: &NotifierTools<'_>,
    registry: &Path,
    work_directory: &Path,
    scratch: &Path,
    present: usize,
    rounds: usize,
) -> anyhow::Result<Samples> {
    let mut owners = Vec::with_capacity(rounds);
    let mut payloads = Vec::with_capacity(rounds);
    for round in 0..rounds {
        let owner = SleepingOwner::spawn()?;
        let session_id = format!("notify-{round}");
        let status = Command::new(tools.register)
            .arg("--dir")
            .arg(registry)
            .args(["--pid", &owner.pid().to_string(), "--quiet", "--harness", "claude-code"])
            .args(["--session-id", &session_id, "--cwd"])
            .arg(work_directory)
            .status()
            .context("run roster-register")?;
        owners.push(owner);
        if !status.success() {
            bail!("roster-register failed: {status}");
        }
        payloads.push(write_permission_payload(scratch, &session_id, work_directory)?);
    }

    let stderr_log = scratch.join("roster-notify.stderr");
    let mut child = Command::new(tools.notify)
        .arg("--dir")
        .arg(registry)
        .args(["--format", "json", "--backend", "exec", "--triggers", "waiting", "--exec"])
        .arg(tools.exec)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        // The sessions of the registry already waiting are told of once at
        // the start, far more than a backend's queue holds: what it drops
        // is logged here, not among the bench's lines.
        .stderr(File::create(&stderr_log).with_context(|| format!("create {}", stderr_log.display()))?)
        .spawn()
        .context("start roster-notify")?;
    let lines = stamp_lines(child.stdout.take().context("piped stdout")?);
    let notifier = Notifier { child, lines };
    let (_, watching) = notifier.wait_for("watching")?;
    // Those first notices are with the backend's worker now; the rounds
    // start once it has run them, so that they time the notifier alone.
    std::thread::sleep(BACKLOG_SETTLES);
    let sessions = watching["sessions"].as_u64().unwrap_or(0);
    if sessions < (present + rounds) as u64 {
        bail!("roster-notify follows {sessions} sessions, not the {} registered", present + rounds);
    }

    let mut handed = Samples::default();
    for (round, payload) in payloads.iter().enumerate() {
        let before = Instant::now();
        let status = Command::new(tools.state)
            .args(["--hook", "claude-code", "--event", "PermissionRequest", "--dir"])
            .arg(registry)
            .stdin(File::open(payload).context("open a state payload")?)
            .stdout(Stdio::null())
            .status()
            .context("run roster-state")?;
        if !status.success() {
            bail!("roster-state failed: {status}");
        }
        let (at, line) = notifier.wait_for("show").with_context(|| {
            format!("after PermissionRequest of notify-{round}; see {}/hook-errors.log", registry.display())
        })?;
        if line["notice"]["session_id"] != format!("notify-{round}").as_str() {
            bail!("the notice named another session than notify-{round}: {line}");
        }
        handed.push(at.saturating_duration_since(before));
    }
    drop(notifier);
    drop(owners);
    let status = Command::new(tools.prune)
        .arg("--dir")
        .arg(registry)
        .arg("--quiet")
        .status()
        .context("run roster-prune")?;
    if !status.success() {
        bail!("roster-prune failed: {status}");
    }
    Ok(handed)
}

/// A Claude Code `PermissionRequest` payload of `session_id`, written to
/// a file in `scratch` for the hook's stdin.
fn write_permission_payload(
    scratch: &Path,
    session_id: &str,
    work_directory: &Path,
) -> anyhow::Result<PathBuf> {
    let payload = serde_json::json!({
        "session_id": session_id,
        "transcript_path": format!("/home/dev/.claude/projects/-home-dev-src-app/{session_id}.jsonl"),
        "cwd": work_directory,
        "permission_mode": "default",
        "hook_event_name": "PermissionRequest",
        "tool_name": "Bash",
        "tool_input": {"command": "touch approved"},
    });
    let path = scratch.join(format!("{session_id}-PermissionRequest.json"));
    std::fs::write(&path, serde_json::to_vec(&payload)?)
        .with_context(|| format!("write {}", path.display()))?;
    Ok(path)
}
