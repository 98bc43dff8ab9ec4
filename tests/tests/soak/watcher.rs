//! A `roster-list --watch --format json` running through the whole soak:
//! it must keep up with every write, kill and full disk, print only valid
//! events, see owners die, and keep its memory flat while the registry
//! churns (measured from a quarter of the run to its end).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::Context;

use super::invariants::InvariantResult;

/// How much the watcher's resident memory may grow from a quarter of the
/// run to its end: room for the registry's live rows, not for a leak that
/// grows with every event.
const RSS_GROWTH_LIMIT_KIB: u64 = 2048;

/// The running watcher and what its output showed.
pub struct SoakWatcher {
    child: Child,
    events: Arc<AtomicUsize>,
    died_events: Arc<AtomicUsize>,
    invalid_lines: Arc<Mutex<Vec<String>>>,
    early_rss_kib: Option<u64>,
}

impl SoakWatcher {
    pub fn start(mut command: Command) -> anyhow::Result<SoakWatcher> {
        command
            .args(["--watch", "--format", "json"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = command.spawn().context("start roster-list --watch")?;
        let stdout = child.stdout.take().context("piped stdout")?;
        let events = Arc::new(AtomicUsize::new(0));
        let died_events = Arc::new(AtomicUsize::new(0));
        let invalid_lines = Arc::new(Mutex::new(Vec::new()));
        let (counted, died, invalid) = (events.clone(), died_events.clone(), invalid_lines.clone());
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                counted.fetch_add(1, Ordering::Relaxed);
                match serde_json::from_str::<serde_json::Value>(&line) {
                    Ok(event) if event["schema"] == 1 && event["event"].is_string() => {
                        if event["event"] == "died" {
                            died.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    _ => invalid.lock().expect("one writer").push(line),
                }
            }
        });
        Ok(SoakWatcher { child, events, died_events, invalid_lines, early_rss_kib: None })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The memory the watcher used once it had warmed up.
    pub fn set_early_memory(&mut self, kib: Option<u64>) {
        self.early_rss_kib = kib;
    }

    /// Checks the watcher and stops it.
    pub fn finish(mut self) -> InvariantResult {
        let late_rss_kib = resident_kib(self.child.id());
        let still_running = matches!(self.child.try_wait(), Ok(None));
        let _ = self.child.kill();
        let _ = self.child.wait();
        let invalid = self.invalid_lines.lock().expect("the reader is done or idle").clone();
        let events = self.events.load(Ordering::Relaxed);
        let died = self.died_events.load(Ordering::Relaxed);
        let mut problems = Vec::new();
        if !still_running {
            problems.push("the watcher ended during the soak".to_owned());
        }
        problems.extend(invalid.iter().take(4).map(|line| format!("not an event: {line}")));
        if events == 0 || died == 0 {
            problems.push(format!("the watcher saw {events} events, {died} of them died"));
        }
        let growth = match (self.early_rss_kib, late_rss_kib) {
            (Some(early), Some(late)) => {
                let growth = late.saturating_sub(early);
                if growth > RSS_GROWTH_LIMIT_KIB {
                    problems.push(format!("its memory grew from {early} KiB to {late} KiB"));
                }
                format!("resident memory {early} KiB at a quarter of the run, {late} KiB at its end")
            }
            _ => {
                problems.push("its memory could not be read".to_owned());
                String::new()
            }
        };
        InvariantResult {
            name: "roster-list --watch keeps up: valid events only, owners' deaths seen, memory flat",
            held: problems.is_empty(),
            detail: if problems.is_empty() {
                format!("{events} events ({died} died); {growth}")
            } else {
                problems.join("; ")
            },
        }
    }
}

/// `VmRSS` of a process, in KiB.
pub fn resident_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
