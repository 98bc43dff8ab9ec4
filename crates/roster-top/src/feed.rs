//! Where the view's events come from: this machine's watch
//! (`session_events::SessionWatch`, in a thread of its own), and with
//! `--host` each host's watch read from a `roster-list --watch --format
//! json --host …` child (the ssh and reconnection machinery lives there),
//! line by line into `Event`s. Every event goes through one channel, and a
//! byte on a pipe wakes the view's epoll: nothing here polls.

use std::collections::HashMap;
use std::io::BufRead;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc::Sender;

use location::Verifier;
use owner_liveness::Liveness;
use registry_core::record::{LocationCheck, LocationStatus};
use registry_core::{ListFilter, SessionRow, StopWhen};
use session_events::{Event, EventKind, EventRow, Notice, SessionWatch, Sink, WatchConfig};

/// What a feed sends the view.
pub enum Fed {
    Event(Box<Event>),
    /// A feed's own trouble, said once in the status line.
    Notice(String),
    /// A feed ended: why, when it failed.
    Ended(Option<String>),
}

/// The sending end every feed shares: the channel, and the pipe whose
/// byte wakes the view.
#[derive(Clone)]
pub struct Wake {
    sender: Sender<Fed>,
    pipe: std::sync::Arc<OwnedFd>,
}

impl Wake {
    pub fn new(sender: Sender<Fed>, pipe: OwnedFd) -> Wake {
        Wake { sender, pipe: std::sync::Arc::new(pipe) }
    }

    /// Sends and wakes; false when the view is gone.
    fn send(&self, fed: Fed) -> bool {
        if self.sender.send(fed).is_err() {
            return false;
        }
        // The pipe is non-blocking: a full one already wakes the view.
        let _ = nix::unistd::write(&*self.pipe, b"x");
        true
    }
}

/// This machine's sessions: a watch in a thread, each row's location
/// checked when the session appears or registers again.
pub fn start_local(path: PathBuf, wake: Wake) {
    std::thread::spawn(move || {
        let outcome = run_local(path, wake.clone());
        wake.send(Fed::Ended(outcome.err().map(|error| format!("{error:#}"))));
    });
}

fn run_local(path: PathBuf, wake: Wake) -> anyhow::Result<()> {
    // Nothing stops this watch but the process's end.
    let (stop_read, stop_write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
    let config = WatchConfig {
        path,
        filter: ListFilter { adopt: cli_support::harness_session_sources(true), ..ListFilter::default() },
        follows_consent: true,
        env: cli_support::process_env_os,
        stop_when: StopWhen { readable: vec![stop_read], hung_up: vec![] },
    };
    let sink = LocalSink { wake: wake.clone(), checked: HashMap::new() };
    let (mut watch, listed) = SessionWatch::start(config, sink)?;
    for event in listed {
        watch.sink_mut().event(event)?;
    }
    watch.run()?;
    drop(stop_write);
    Ok(())
}

/// Checks locations and hands events over.
struct LocalSink {
    wake: Wake,
    /// Each session's checked location, by record path: checked again
    /// when it (re)registers, kept through its state changes.
    checked: HashMap<PathBuf, LocationCheck>,
}

impl Sink for LocalSink {
    fn event(&mut self, mut event: Event) -> std::io::Result<()> {
        if let Some(EventRow::Local { row, .. }) = &mut event.row {
            self.check_location(&event.kind, row);
        }
        if self.wake.send(Fed::Event(Box::new(event))) {
            Ok(())
        } else {
            Err(std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the view is gone"))
        }
    }

    fn notice(&mut self, notice: Notice) {
        let text = match notice {
            Notice::OwnersUnwatched { owner, why, .. } => {
                format!(
                    "owner {owner} and later ones are watched without a pidfd ({why}): their ends show late"
                )
            }
            Notice::ConsentUnfollowed { path, why } => {
                format!("cannot follow {} for consent ({why})", path.display())
            }
            Notice::RegistryUnopenable { why } => why,
        };
        self.wake.send(Fed::Notice(text));
    }
}

impl LocalSink {
    fn check_location(&mut self, kind: &EventKind, row: &mut SessionRow) {
        let Some(location) = row.record.as_ref().and_then(|record| record.location.as_ref()) else { return };
        let fresh = matches!(kind, EventKind::Listed | EventKind::Registered | EventKind::Refreshed);
        let check = match (row.liveness(), row.pid) {
            (Liveness::Alive, Some(pid)) => match self.checked.get(&row.path) {
                Some(check) if !fresh => check.clone(),
                _ => Verifier::new().check(location, pid),
            },
            _ => LocationCheck {
                status: LocationStatus::Stale,
                reason: "the session is not running".to_owned(),
                shown: location.recorded_shown(),
            },
        };
        if matches!(kind, EventKind::Removed) {
            self.checked.remove(&row.path);
        } else {
            self.checked.insert(row.path.clone(), check.clone());
        }
        row.location_check = Some(check);
    }
}

/// Every host's sessions: `roster-list --watch --format json` with the
/// hosts, as a child whose lines are the hosts' events (`host-lost` when
/// one stops answering, its rows kept).
pub fn start_hosts(roster_list: PathBuf, hosts: Vec<String>, extra: Vec<String>, wake: Wake) {
    std::thread::spawn(move || {
        let outcome = run_hosts(&roster_list, &hosts, &extra, &wake);
        wake.send(Fed::Ended(outcome.err().map(|error| format!("{error:#}"))));
    });
}

fn run_hosts(roster_list: &PathBuf, hosts: &[String], extra: &[String], wake: &Wake) -> anyhow::Result<()> {
    use anyhow::Context;
    let mut command = Command::new(roster_list);
    command.args(["--watch", "--format", "json"]);
    for host in hosts {
        command.args(["--host", host]);
    }
    command.args(extra).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::null());
    let mut child = command.spawn().with_context(|| format!("starting {}", roster_list.display()))?;
    let stdout = child.stdout.take().context("the watch's stdout")?;
    for line in std::io::BufReader::new(stdout).lines() {
        let line = line?;
        let Some(event) = Event::from_line(&line) else { continue };
        // This machine's own rows come from the local watch.
        if event.host.is_none() {
            continue;
        }
        if !wake.send(Fed::Event(Box::new(event))) {
            break;
        }
    }
    let _ = child.kill();
    let status = child.wait()?;
    anyhow::bail!("the hosts' watch (roster-list --watch --host) ended: {status}")
}
