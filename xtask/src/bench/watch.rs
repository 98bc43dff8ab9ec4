//! The live view's figures: how soon `roster-list --watch` reports an
//! owner killed with SIGKILL (`died`) and a registration (`registered`)
//! while it watches a large registry, and how many system calls it makes
//! over five idle seconds (none, by design).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::Value;

use ::tests::measure::{Samples, milliseconds};

/// The latency target of both events, p99.
pub const EVENT_LATENCY_LIMIT: Duration = Duration::from_millis(100);
/// How long the idle watcher is traced.
pub const IDLE_TRACE: Duration = Duration::from_secs(5);

/// What was measured.
pub struct WatchFigures {
    /// Sessions the watcher listed at its start (each with a pidfd).
    pub watched: usize,
    /// From the start of the watcher to its last `listed` event.
    pub startup: Duration,
    pub died: Samples,
    pub registered: Samples,
    /// System calls strace counted over `IDLE_TRACE` of an idle watcher.
    pub idle_syscalls: u64,
}

impl WatchFigures {
    pub fn targets_met(&self) -> bool {
        self.died.percentile(0.99) <= EVENT_LATENCY_LIMIT
            && self.registered.percentile(0.99) <= EVENT_LATENCY_LIMIT
            && self.idle_syscalls == 0
    }

    pub fn render(&self) -> String {
        let verdict = |met: bool| if met { "met" } else { "MISSED" };
        let line = |name: &str, samples: &Samples| {
            let p99 = samples.percentile(0.99);
            format!(
                "watch: {name:<10} p50 {:>7.2} ms  p99 {:>7.2} ms  worst {:>7.2} ms  ({} events; limit p99 {} ms: {})",
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
            line("died", &self.died),
            line("registered", &self.registered),
            format!(
                "watch: system calls over {} idle seconds: {} (limit 0: {})",
                IDLE_TRACE.as_secs(),
                self.idle_syscalls,
                verdict(self.idle_syscalls == 0)
            ),
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

fn stamp_lines(stdout: ChildStdout) -> Receiver<(Instant, String)> {
    let (sender, receiver) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if sender.send((Instant::now(), line)).is_err() {
                break;
            }
        }
    });
    receiver
}

/// Watches `registry` (already holding `present` live records), then
/// times `rounds` registrations and SIGKILLs of fresh owners, and traces
/// the idle watcher.
pub fn measure_watch(
    list: &Path,
    register: &Path,
    registry: &Path,
    work_directory: &Path,
    present: usize,
    rounds: usize,
) -> anyhow::Result<WatchFigures> {
    let started = Instant::now();
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
    let startup = started.elapsed();

    let mut died = Samples::default();
    let mut registered = Samples::default();
    for round in 0..rounds {
        let mut owner =
            Command::new("sleep").arg("100000").stdin(Stdio::null()).spawn().context("spawn an owner")?;
        let pid = owner.id();
        let before = Instant::now();
        let status = Command::new(register)
            .arg("--dir")
            .arg(registry)
            .args(["--pid", &pid.to_string(), "--quiet", "--session-id"])
            .arg(format!("watch-{round}"))
            .arg("--cwd")
            .arg(work_directory)
            .status()
            .context("run roster-register")?;
        if !status.success() {
            bail!("roster-register failed: {status}");
        }
        registered.push(watcher.wait_for("registered", pid)?.saturating_duration_since(before));
        let killed = Instant::now();
        owner.kill().context("SIGKILL the owner")?;
        died.push(watcher.wait_for("died", pid)?.saturating_duration_since(killed));
        owner.wait().context("reap the owner")?;
    }

    let idle_syscalls = ::tests::strace::calls_over(watcher.child.id(), IDLE_TRACE)?;
    Ok(WatchFigures { watched, startup, died, registered, idle_syscalls })
}
