//! Where the events come from: this machine's watch in-process (the
//! `session-events` library, on a thread of its own, stopped through a
//! pipe), or, with `--host`, the merged stream of the hosts asked as
//! `roster-list --watch --format json --host …` (its ssh and reconnecting
//! live there), read back with the library's one reader. Either way each
//! event reaches the main loop as its JSON (the one serializer's), so one
//! path turns events into observations.

use std::io::{BufRead, BufReader};
use std::os::fd::OwnedFd;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::Sender;
use std::thread::JoinHandle;

use registry_core::{ListFilter, StopWhen};
use session_events::{Event, EventKind, SessionWatch, WatchConfig};

use crate::args::NotifyArgs;
use crate::settings::Settings;
use crate::workers::Log;

/// What the main loop is woken by.
pub(crate) enum Input {
    /// One event, as its JSON.
    Event(serde_json::Value),
    /// This machine's watch is up: every session present was handed
    /// over (how many), changes follow.
    Watching(usize),
    /// The stream ended, and why.
    StreamEnded(String),
    /// SIGINT or SIGTERM.
    Stop,
}

/// A running stream of events.
pub(crate) enum EventStream {
    Local { stop: OwnedFd, thread: Option<JoinHandle<()>> },
    Hosts { child: Child },
}

impl EventStream {
    pub(crate) fn start(
        args: &NotifyArgs,
        settings: &Settings,
        inputs: &Sender<Input>,
        log: &Log,
    ) -> anyhow::Result<EventStream> {
        if settings.hosts.is_empty() && settings.hosts_file.is_none() {
            start_local(args, inputs, log)
        } else {
            start_hosts(args, settings, inputs)
        }
    }

    /// Ends it, and waits for its thread or child.
    pub(crate) fn stop(self) {
        match self {
            EventStream::Local { stop, thread } => {
                let _ = nix::unistd::write(&stop, b"x");
                if let Some(thread) = thread {
                    let _ = thread.join();
                }
            }
            EventStream::Hosts { mut child } => {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }
}

/// This machine's watch, in-process.
fn start_local(args: &NotifyArgs, inputs: &Sender<Input>, log: &Log) -> anyhow::Result<EventStream> {
    let path = cli_support::roster_directory_choice(&args.common)?.path;
    let (stop_read, stop_write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?;
    let inputs = inputs.clone();
    let log = log.clone();
    let thread = std::thread::Builder::new().name("notify-watch".to_owned()).spawn(move || {
        let config = WatchConfig {
            path,
            filter: ListFilter { adopt: cli_support::harness_session_sources(true), ..ListFilter::default() },
            // Consent changes no notice.
            follows_consent: false,
            env: cli_support::process_env_os,
            stop_when: StopWhen { readable: vec![stop_read], hung_up: vec![] },
        };
        let sink_inputs = inputs.clone();
        let sink_log = log.clone();
        let sink = NoticeSink { inputs: sink_inputs, log: sink_log };
        let outcome = SessionWatch::start(config, sink).and_then(|(mut watch, listed)| {
            let count = listed.len();
            for event in listed {
                if inputs.send(Input::Event(event.to_json())).is_err() {
                    return Ok(());
                }
            }
            if inputs.send(Input::Watching(count)).is_err() {
                return Ok(());
            }
            watch.run()
        });
        let why = match outcome {
            Ok(()) => "it stopped".to_owned(),
            Err(error) => format!("{error:#}"),
        };
        let _ = inputs.send(Input::StreamEnded(why));
    })?;
    Ok(EventStream::Local { stop: stop_write, thread: Some(thread) })
}

/// Hands each event of the local watch to the main loop; the watch's own
/// troubles go to the log.
struct NoticeSink {
    inputs: Sender<Input>,
    log: Log,
}

impl session_events::Sink for NoticeSink {
    fn event(&mut self, event: Event) -> std::io::Result<()> {
        self.inputs
            .send(Input::Event(event.to_json()))
            .map_err(|_| std::io::Error::other("the notifier stopped reading events"))
    }

    fn notice(&mut self, notice: session_events::Notice) {
        let said = match notice {
            session_events::Notice::OwnersUnwatched { owner, why, watched } => format!(
                "the watch follows {watched} owners and no more ({why}): the exit of pid {owner} and later ones \
                 are seen at the registry's next change"
            ),
            session_events::Notice::ConsentUnfollowed { path, why } => {
                format!("the watch cannot follow {}: {why}", path.display())
            }
            session_events::Notice::RegistryUnopenable { why } => {
                format!("the registry cannot be opened: {why}")
            }
        };
        (self.log)(&said);
    }
}

/// `roster-list --watch --format json --host …`, read line by line.
fn start_hosts(
    args: &NotifyArgs,
    settings: &Settings,
    inputs: &Sender<Input>,
) -> anyhow::Result<EventStream> {
    let program = cli_support::sibling_tool("roster-list");
    let mut command = Command::new(&program);
    // Not --quiet: that silences the events too.
    command.args(["--watch", "--format", "json"]);
    if let Some(directory) = &args.common.dir {
        command.arg("--dir").arg(directory);
    }
    for host in &settings.hosts {
        command.arg("--host").arg(host);
    }
    if let Some(file) = &settings.hosts_file {
        command.arg("--hosts-file").arg(file);
    }
    let mut child =
        command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::inherit()).spawn().map_err(
            |error| anyhow::anyhow!("the watch ({}) could not be started: {error}", program.display()),
        )?;
    let stdout = child.stdout.take().expect("stdout is piped");
    let inputs = inputs.clone();
    std::thread::Builder::new().name("notify-hosts".to_owned()).spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            // A kind a newer roster reports is none of ours.
            let Some(event) =
                Event::from_line(&line).filter(|event| !matches!(event.kind, EventKind::Newer(_)))
            else {
                continue;
            };
            if inputs.send(Input::Event(event.to_json())).is_err() {
                return;
            }
        }
        let _ = inputs.send(Input::StreamEnded("the hosts' watch ended".to_owned()));
    })?;
    Ok(EventStream::Hosts { child })
}
