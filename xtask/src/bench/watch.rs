//! The live view's figures: how soon `roster-list --watch` reports an
//! owner killed with SIGKILL (`died`), a registration (`registered`) and a
//! state hook's update (`state-changed`) while it watches a large
//! registry, how many system calls it makes over five idle seconds
//! (none, by design), and, on the same registry, how soon roster-notify
//! hands a waiting session's notice to its backend (`notify.rs`).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::Value;

use super::processes::{SleepingOwner, stamp_lines};
use ::tests::measure::{Samples, milliseconds};

/// The latency target of every event, p99.
pub const EVENT_LATENCY_LIMIT: Duration = Duration::from_millis(100);
/// How long the idle watcher is traced.
pub const IDLE_TRACE: Duration = Duration::from_secs(5);

/// The session whose state the hooks change.
const STATE_SESSION_ID: &str = "watch-state";
/// Claude Code's events that set working and idle, taking turns.
const STATE_EVENTS: [&str; 2] = ["PreToolUse", "Stop"];

/// The binaries the figures run.
pub struct WatchedTools {
    pub list: PathBuf,
    pub register: PathBuf,
    pub state: PathBuf,
    pub notify: PathBuf,
    pub prune: PathBuf,
    /// What roster-notify's `exec` backend runs for each notice.
    pub exec: PathBuf,
}

/// What was measured.
pub struct WatchFigures {
    /// Sessions the watcher listed at its start (each with a pidfd).
    pub watched: usize,
    /// From the start of the watcher to its last `listed` event.
    pub startup: Duration,
    pub died: Samples,
    pub registered: Samples,
    /// From the start of a state hook to the watcher's `state-changed`.
    pub state_changed: Samples,
    /// System calls strace counted over `IDLE_TRACE` of an idle watcher.
    pub idle_syscalls: u64,
    /// From the start of a state hook that makes a session wait to
    /// roster-notify's `show` line: the notice is with every backend.
    pub notice_handed: Samples,
}

impl WatchFigures {
    pub fn targets_met(&self) -> bool {
        [&self.died, &self.registered, &self.state_changed, &self.notice_handed]
            .iter()
            .all(|samples| samples.percentile(0.99) <= EVENT_LATENCY_LIMIT)
            && self.idle_syscalls == 0
    }

    pub fn render(&self) -> String {
        let verdict = |met: bool| if met { "met" } else { "MISSED" };
        let line = |tool: &str, name: &str, samples: &Samples| {
            let p99 = samples.percentile(0.99);
            format!(
                "{tool}: {name:<13} p50 {:>7.2} ms  p99 {:>7.2} ms  worst {:>7.2} ms  ({} events; limit p99 {} ms: {})",
                milliseconds(samples.median()),
                milliseconds(p99),
                milliseconds(samples.max()),
                samples.durations.len(),
                EVENT_LATENCY_LIMIT.as_millis(),
                verdict(p99 <= EVENT_LATENCY_LIMIT)
            )
        };
        [
            format!(
                "watch: {} sessions watched (a pidfd each), started in {:.2} ms",
                self.watched,
                milliseconds(self.startup)
            ),
            line("watch", "died", &self.died),
            line("watch", "registered", &self.registered),
            line("watch", "state-changed", &self.state_changed),
            format!(
                "watch: system calls over {} idle seconds: {} (limit 0: {})",
                IDLE_TRACE.as_secs(),
                self.idle_syscalls,
                verdict(self.idle_syscalls == 0)
            ),
            line("notify", "notice-handed", &self.notice_handed),
        ]
        .join("\n")
    }
}

/// A running watcher and its event lines, each stamped when read.
struct Watcher {
    child: Child,
    lines: Receiver<(Instant, String)>,
}

impl Watcher {
    fn next_event(&self, wait: Duration) -> anyhow::Result<(Instant, Value)> {
        let (at, line) = self.lines.recv_timeout(wait).context("the watcher printed no event in time")?;
        Ok((at, serde_json::from_str(&line).with_context(|| format!("not an event: {line}"))?))
    }

    /// Reads until an event of `kind` for `pid`; returns when it was read.
    fn wait_for(&self, kind: &str, pid: u32) -> anyhow::Result<Instant> {
        loop {
            let (at, event) = self.next_event(Duration::from_secs(30))?;
            if event["event"] == kind && event["row"]["session_pid"] == pid {
                return Ok(at);
            }
        }
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `roster-list --watch` on `registry` and reads its first
/// `present` events, which must each be `listed`; how many it listed.
fn start_watcher(list: &Path, registry: &Path, present: usize) -> anyhow::Result<(Watcher, usize)> {
    let mut child = Command::new(list)
        .arg("--dir")
        .arg(registry)
        .args(["--watch", "--format", "json"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .context("start roster-list --watch")?;
    let lines = stamp_lines(child.stdout.take().context("piped stdout")?);
    let watcher = Watcher { child, lines };
    let mut watched = 0;
    while watched < present {
        let (_, event) = watcher.next_event(Duration::from_secs(60))?;
        if event["event"] != "listed" {
            bail!("expected {present} listed events first, got {event}");
        }
        watched += 1;
    }
    Ok((watcher, watched))
}

/// Watches `registry` (already holding `present` live records), then
/// times `rounds` registrations and SIGKILLs of fresh owners, and as many
/// state hooks of one registered session, its events taking turns between
/// working (PreToolUse) and idle (Stop) so that each changes its state;
/// then traces the idle watcher. The hooks' payloads go to `scratch`.
pub fn measure_watch(
    tools: &WatchedTools,
    registry: &Path,
    work_directory: &Path,
    scratch: &Path,
    present: usize,
    rounds: usize,
) -> anyhow::Result<WatchFigures> {
    let started = Instant::now();
    let (watcher, watched) = start_watcher(&tools.list, registry, present)?;
    let startup = started.elapsed();

    let register = |owner: &SleepingOwner, session_id: &str| -> anyhow::Result<()> {
        let status = Command::new(&tools.register)
            .arg("--dir")
            .arg(registry)
            .args(["--pid", &owner.pid().to_string(), "--quiet", "--session-id", session_id])
            .arg("--cwd")
            .arg(work_directory)
            .status()
            .context("run roster-register")?;
        if !status.success() {
            bail!("roster-register failed: {status}");
        }
        Ok(())
    };
    let busy_session = SleepingOwner::spawn()?;
    register(&busy_session, STATE_SESSION_ID)?;
    watcher.wait_for("registered", busy_session.pid())?;
    let payloads = STATE_EVENTS
        .iter()
        .map(|event| write_state_payload(scratch, event, work_directory))
        .collect::<anyhow::Result<Vec<_>>>()?;

    let mut died = Samples::default();
    let mut registered = Samples::default();
    let mut state_changed = Samples::default();
    for round in 0..rounds {
        let mut owner = SleepingOwner::spawn()?;
        let pid = owner.pid();
        let before = Instant::now();
        register(&owner, &format!("watch-{round}"))?;
        registered.push(watcher.wait_for("registered", pid)?.saturating_duration_since(before));
        let killed = Instant::now();
        owner.child.kill().context("SIGKILL the owner")?;
        died.push(watcher.wait_for("died", pid)?.saturating_duration_since(killed));
        owner.child.wait().context("reap the owner")?;

        let event = round % STATE_EVENTS.len();
        let before = Instant::now();
        let status = Command::new(&tools.state)
            .args(["--hook", "claude-code", "--event", STATE_EVENTS[event], "--dir"])
            .arg(registry)
            .stdin(File::open(&payloads[event]).context("open a state payload")?)
            .stdout(Stdio::null())
            .status()
            .context("run roster-state")?;
        if !status.success() {
            bail!("roster-state failed: {status}");
        }
        let shown = watcher.wait_for("state-changed", busy_session.pid()).with_context(|| {
            format!("after {}; see {}/hook-errors.log", STATE_EVENTS[event], registry.display())
        })?;
        state_changed.push(shown.saturating_duration_since(before));
    }
    // Its death is reported before the trace, which then sees an idle watcher.
    let busy_pid = busy_session.pid();
    drop(busy_session);
    watcher.wait_for("died", busy_pid)?;

    let idle_syscalls = ::tests::strace::calls_over(watcher.child.id(), IDLE_TRACE)?;
    drop(watcher);

    let notifier_tools = super::notify::NotifierTools {
        notify: &tools.notify,
        register: &tools.register,
        state: &tools.state,
        prune: &tools.prune,
        exec: &tools.exec,
    };
    let notice_handed =
        super::notify::measure_notices(&notifier_tools, registry, work_directory, scratch, present, rounds)?;
    Ok(WatchFigures { watched, startup, died, registered, state_changed, idle_syscalls, notice_handed })
}

/// A Claude Code payload of `event` for `STATE_SESSION_ID`, written to a
/// file in `scratch` for the hook's stdin.
fn write_state_payload(scratch: &Path, event: &str, work_directory: &Path) -> anyhow::Result<PathBuf> {
    let payload = serde_json::json!({
        "session_id": STATE_SESSION_ID,
        "transcript_path": format!("/home/dev/.claude/projects/-home-dev-src-app/{STATE_SESSION_ID}.jsonl"),
        "cwd": work_directory,
        "permission_mode": "default",
        "hook_event_name": event,
    });
    let path = scratch.join(format!("watch-{event}.json"));
    std::fs::write(&path, serde_json::to_vec(&payload)?)
        .with_context(|| format!("write {}", path.display()))?;
    Ok(path)
}
