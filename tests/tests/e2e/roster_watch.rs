//! `roster-list --watch --format json` as a process of its own in the e2e run: a thread reads
//! its events line by line and stamps each with the instant it arrived, so that the run can
//! wait for an event and time it against what it saw happen (a file written, a process
//! killed). Every event is kept, for the report.

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use serde_json::Value;

/// How often the run looks at the watch process while it waits for it to follow the
/// directories.
const FOLLOW_POLL: Duration = Duration::from_millis(10);

/// One event line as it arrived.
#[derive(Clone, Debug)]
pub struct WatchEvent {
    pub received_at: Instant,
    pub event: Value,
}

impl WatchEvent {
    pub fn kind(&self) -> &str {
        self.event["event"].as_str().unwrap_or_default()
    }

    pub fn row(&self) -> &Value {
        &self.event["row"]
    }

    /// Whether the event is one of `kinds` about the session of owner `pid`.
    pub fn is_about(&self, kinds: &[&str], pid: u32) -> bool {
        kinds.contains(&self.kind()) && self.row()["session_pid"].as_u64() == Some(u64::from(pid))
    }

    /// `registered 4711 (claude-code, alive, idle)`.
    pub fn describe(&self) -> String {
        let row = self.row();
        let word = |key: &str| row[key].as_str().unwrap_or("-").to_owned();
        format!(
            "{} {} ({}, {}, {})",
            self.kind(),
            row["session_pid"],
            word("origin"),
            word("liveness"),
            word("state")
        )
    }
}

/// A running watch and every event it printed.
pub struct RosterWatch {
    child: Child,
    lines: Receiver<(Instant, String)>,
    events: Vec<WatchEvent>,
    /// Which of `events` a wait has returned already.
    taken: Vec<bool>,
    stderr: PathBuf,
    /// Lines that were not JSON events.
    stray_lines: Vec<String>,
}

impl RosterWatch {
    /// Starts `command` (a `roster-list --watch --format json` with its environment), its
    /// stderr going to the file `stderr`.
    pub fn start(mut command: Command, stderr: &Path) -> anyhow::Result<RosterWatch> {
        let error_file =
            fs::File::create(stderr).with_context(|| format!("creating {}", stderr.display()))?;
        command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(error_file);
        let mut child = command.spawn().context("starting roster-list --watch")?;
        let stdout = child.stdout.take().context("the watch's stdout is not piped")?;
        let (sender, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send((Instant::now(), line)).is_err() {
                    break;
                }
            }
        });
        Ok(RosterWatch {
            child,
            lines,
            events: Vec::new(),
            taken: Vec::new(),
            stderr: stderr.to_path_buf(),
            stray_lines: Vec::new(),
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits until the watch holds an inotify descriptor: it follows the directories from
    /// then on (it starts following before it reads anything).
    pub fn wait_until_following(&mut self, deadline: Duration) -> anyhow::Result<()> {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait()? {
                bail!("roster-list --watch exited ({status}): {}", self.stderr_text());
            }
            let descriptors = fs::read_dir(format!("/proc/{}/fd", self.pid()))
                .map(|entries| {
                    entries
                        .filter_map(|entry| fs::read_link(entry.ok()?.path()).ok())
                        .any(|target| target.to_string_lossy().contains("inotify"))
                })
                .unwrap_or(false);
            if descriptors {
                return Ok(());
            }
            ensure!(
                started.elapsed() < deadline,
                "roster-list --watch held no inotify descriptor after {deadline:?}"
            );
            std::thread::sleep(FOLLOW_POLL);
        }
    }

    /// Takes in the lines printed so far, waiting at most `wait` for the first.
    fn receive(&mut self, wait: Duration) {
        let mut wait = wait;
        loop {
            match self.lines.recv_timeout(wait) {
                Ok((received_at, line)) => match serde_json::from_str::<Value>(&line) {
                    Ok(event) => {
                        self.events.push(WatchEvent { received_at, event });
                        self.taken.push(false);
                    }
                    Err(_) => self.stray_lines.push(line),
                },
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => return,
            }
            // The rest of what has arrived, without waiting.
            wait = Duration::ZERO;
        }
    }

    /// The first event not yet returned that satisfies `wanted`, waiting at most
    /// `deadline`; the error lists every event seen and the watch's stderr.
    pub fn wait_for(
        &mut self,
        what: &str,
        deadline: Duration,
        wanted: impl Fn(&WatchEvent) -> bool,
    ) -> anyhow::Result<WatchEvent> {
        let started = Instant::now();
        loop {
            let found =
                (0..self.events.len()).find(|index| !self.taken[*index] && wanted(&self.events[*index]));
            if let Some(index) = found {
                self.taken[index] = true;
                return Ok(self.events[index].clone());
            }
            let left = deadline.saturating_sub(started.elapsed());
            if left.is_zero() {
                bail!(
                    "roster-list --watch reported no {what} within {deadline:?}; its events: {}; its stderr: {}",
                    self.summary(),
                    self.stderr_text()
                );
            }
            self.receive(left.min(Duration::from_millis(50)));
            if let Some(status) = self.child.try_wait()? {
                self.receive(Duration::ZERO);
                if !(0..self.events.len()).any(|index| !self.taken[index] && wanted(&self.events[index])) {
                    bail!("roster-list --watch exited ({status}) before {what}: {}", self.stderr_text());
                }
            }
        }
    }

    /// Every event received so far (taking in what has arrived).
    pub fn events(&mut self) -> &[WatchEvent] {
        self.receive(Duration::ZERO);
        &self.events
    }

    /// The events so far, one short description each.
    pub fn summary(&mut self) -> String {
        let events: Vec<String> = self.events().iter().map(WatchEvent::describe).collect();
        let mut text = if events.is_empty() { "none".to_owned() } else { events.join(", ") };
        if !self.stray_lines.is_empty() {
            text.push_str(&format!("; lines that were no event: {:?}", self.stray_lines));
        }
        text
    }

    pub fn stderr_text(&self) -> String {
        let text = fs::read_to_string(&self.stderr).unwrap_or_default();
        if text.trim().is_empty() { "(empty)".to_owned() } else { text.trim().to_owned() }
    }

    /// Ends the watch with SIGTERM (its own way out) and reaps it.
    pub fn stop(&mut self) {
        super::harness_processes::signal_process(self.pid(), "TERM");
        let _ = self.child.wait();
    }
}

impl Drop for RosterWatch {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            self.stop();
        }
    }
}
