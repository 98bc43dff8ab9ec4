//! The running notifier: follows the watch's events (`stream.rs`: this
//! machine's in-process, or the hosts' merged), turns each event into an
//! observation of the trigger machine, and hands the notices it decides to
//! the backends' workers. SIGINT and SIGTERM stop it cleanly: the watch is
//! ended, the workers get a moment to finish what is queued, and it exits
//! 0.

use std::collections::HashMap;
use std::io::Write;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::Duration;

use cli_support::{BadInput, OutputFormat};
use location::{InFront, Verifier, in_front};
use registry_core::Timestamp;
use registry_core::record::{LocationStatus, ScreenLocation};

use crate::args::{NotifyArgs, TOOL};
use crate::notice::{Notice, SessionView, make_notice};
use crate::settings::{self, Settings};
use crate::stream::{EventStream, Input};
use crate::triggers::{Activity, Change, Decision, Millis, Observation, SessionKey, Triggers, WaitingFor};
use crate::workers::{Job, Log, Worker, WorkerSettings};

/// The wait before the watch is started again after it ended.
const RESTART_WAIT: Duration = Duration::from_secs(1);

pub fn run(args: NotifyArgs) -> anyhow::Result<()> {
    let (_, file) = consent::user_notify_config(&cli_support::process_env_os).map_err(BadInput)?;
    let settings = settings::resolve(&args, &file)?;
    let log: Log = Arc::new(|line: &str| {
        let _ = writeln!(std::io::stderr().lock(), "{TOOL}: {}", cli_support::escape_for_terminal(line));
    });
    let backends = settings::make_backends(&settings, &log)?;
    // Blocked before any thread starts, so that every thread inherits the
    // mask and only the signal thread takes them.
    let stopping = nix::sys::signal::SigSet::from_iter([
        nix::sys::signal::Signal::SIGINT,
        nix::sys::signal::Signal::SIGTERM,
    ]);
    stopping.thread_block()?;
    let worker_settings = WorkerSettings { timeout: settings.timeout, ..WorkerSettings::default() };
    let workers: Vec<Worker> =
        backends.into_iter().map(|backend| Worker::start(backend, worker_settings, log.clone())).collect();
    let (inputs, received) = channel();
    {
        let inputs = inputs.clone();
        std::thread::Builder::new().name("notify-signals".to_owned()).spawn(move || {
            if stopping.wait().is_ok() {
                let _ = inputs.send(Input::Stop);
            }
        })?;
    }
    let mut notifier = Notifier {
        machine: Triggers::new(settings.triggers.clone()),
        sessions: HashMap::new(),
        out: HashMap::new(),
        workers,
        redact: settings.redact,
        roster_dir: args.common.dir.clone(),
        format: args.common.output_format(),
        quiet: args.common.quiet,
    };
    let mut stream = Some(EventStream::start(&args, &settings, &inputs, &log)?);
    let outcome = notifier.follow(&received, &mut stream, &args, &settings, &inputs, &log);
    if let Some(stream) = stream {
        stream.stop();
    }
    for worker in notifier.workers {
        worker.finish(Duration::from_secs(1));
    }
    outcome
}

struct Notifier {
    machine: Triggers,
    /// Each session as the watch last showed it.
    sessions: HashMap<SessionKey, SessionView>,
    /// The notice out for each session, as last handed to the backends
    /// (full, and as redacted).
    out: HashMap<SessionKey, (Notice, Notice)>,
    workers: Vec<Worker>,
    redact: bool,
    /// `--dir`, which the focus command of a session of this machine
    /// needs too.
    roster_dir: Option<std::path::PathBuf>,
    format: OutputFormat,
    quiet: bool,
}

impl Notifier {
    fn follow(
        &mut self,
        received: &Receiver<Input>,
        stream: &mut Option<EventStream>,
        args: &NotifyArgs,
        settings: &Settings,
        inputs: &Sender<Input>,
        log: &Log,
    ) -> anyhow::Result<()> {
        loop {
            let wait = match self.machine.next_deadline() {
                Some(deadline) => Duration::from_millis(u64::try_from(deadline - now_millis()).unwrap_or(0)),
                None => Duration::from_secs(3600),
            };
            match received.recv_timeout(wait) {
                Ok(Input::Event(event)) => {
                    if let Some(observation) = self.observation_of(&event) {
                        let decisions = self.machine.observe(observation);
                        self.carry_out(decisions);
                    }
                }
                Ok(Input::Watching(sessions)) => self.say_watching(sessions),
                Ok(Input::StreamEnded(why)) => {
                    if let Some(ended) = stream.take() {
                        ended.stop();
                    }
                    log(&format!("the watch ended ({why}); starting it again in 1 s"));
                    if received.recv_timeout(RESTART_WAIT).is_ok_and(|input| matches!(input, Input::Stop)) {
                        return Ok(());
                    }
                    *stream = Some(EventStream::start(args, settings, inputs, log)?);
                }
                Ok(Input::Stop) => return Ok(()),
                Err(RecvTimeoutError::Timeout) => {
                    let decisions = self.machine.tick(now_millis());
                    self.carry_out(decisions);
                }
                Err(RecvTimeoutError::Disconnected) => return Ok(()),
            }
        }
    }

    /// The observation an event makes, after noting the session's row.
    fn observation_of(&mut self, event: &serde_json::Value) -> Option<Observation> {
        let kind = event["event"].as_str()?;
        let row = &event["row"];
        if !row.is_object() {
            return None;
        }
        let host = event["host"].as_str().map(str::to_owned);
        let record = row["path"]
            .as_str()
            .map(str::to_owned)
            .or_else(|| row["session_pid"].as_u64().map(|pid| pid.to_string()))?;
        let key = SessionKey { host: host.clone(), record };
        let at = event["at"].as_str().and_then(millis_of).unwrap_or_else(now_millis);
        let view = session_view(row, host, &key);
        self.sessions.insert(key.clone(), view);
        let change = match kind {
            "listed" | "registered" | "refreshed" | "state-changed" | "consent-changed" => {
                if row["liveness"].as_str() != Some("alive") {
                    return None;
                }
                let now = match (row["state"].as_str(), row["waiting_for"].as_str()) {
                    (Some("working"), _) => Activity::Working,
                    (Some("idle"), _) => Activity::Idle,
                    (Some("waiting"), Some("permission")) => Activity::Waiting(WaitingFor::Permission),
                    (Some("waiting"), Some("input")) => Activity::Waiting(WaitingFor::Input),
                    (Some("waiting"), _) => Activity::Waiting(WaitingFor::Unsaid),
                    _ => Activity::Unknown,
                };
                let since = row["state_since"].as_str().and_then(millis_of).unwrap_or(at);
                Change::State { now, since }
            }
            "died" => Change::Died { without_session_end: true },
            "removed" => Change::Removed,
            _ => return None,
        };
        Some(Observation { key, change, at })
    }

    fn carry_out(&mut self, decisions: Vec<Decision>) {
        for decision in decisions {
            match decision {
                Decision::Show { key, trigger, since } => {
                    let view = self.sessions.get(&key).cloned().unwrap_or_default();
                    let now = now_millis();
                    let mut notice = make_notice(&view, &key, trigger, since, now, false);
                    let mut redacted = if self.redact {
                        make_notice(&view, &key, trigger, since, now, true)
                    } else {
                        notice.clone()
                    };
                    if let Some(directory) = self.roster_dir.as_ref().filter(|_| view.host.is_none()) {
                        for made in [&mut notice, &mut redacted] {
                            if !made.focus_command.is_empty() {
                                let words = ["--dir".to_owned(), directory.to_string_lossy().into_owned()];
                                made.focus_command.splice(1..1, words);
                            }
                        }
                    }
                    if let Some(why) = looked_at(&view) {
                        self.say("in-front", Some(&why), &notice);
                        continue;
                    }
                    let replaces = self.out.contains_key(&key);
                    for worker in &self.workers {
                        let handed = if worker.leaves_the_machine() { &redacted } else { &notice };
                        worker.hand_over(if replaces {
                            Job::Replace(handed.clone())
                        } else {
                            Job::Show(handed.clone())
                        });
                    }
                    self.say(if replaces { "replace" } else { "show" }, None, &notice);
                    self.out.insert(key, (notice, redacted));
                }
                Decision::Withdraw { key } => {
                    let Some((notice, redacted)) = self.out.remove(&key) else { continue };
                    for worker in &self.workers {
                        let handed = if worker.leaves_the_machine() { &redacted } else { &notice };
                        worker.hand_over(Job::Withdraw(handed.clone()));
                    }
                    self.say("withdraw", None, &notice);
                }
            }
        }
    }

    /// The line that says this machine's watch is up.
    fn say_watching(&self, sessions: usize) {
        self.print_line(
            |at| serde_json::json!({"at": at, "action": "watching", "sessions": sessions}),
            |clock| format!("{clock} watching the {sessions} sessions of this machine"),
        );
    }

    /// One line on stdout per notice handed over or kept back.
    fn say(&self, action: &str, reason: Option<&str>, notice: &Notice) {
        self.print_line(
            |at| serde_json::json!({"at": at, "action": action, "reason": reason, "notice": notice}),
            |clock| {
                let why = reason.map(|why| format!(" ({why})")).unwrap_or_default();
                format!("{clock} {action} {} {}: {}{why}", notice.trigger.as_str(), notice.title, notice.body)
            },
        );
    }

    /// A line on stdout, as JSON (given the time in RFC 3339) or as text
    /// (given the local clock), unless `-q`.
    fn print_line(
        &self,
        json: impl FnOnce(String) -> serde_json::Value,
        text: impl FnOnce(String) -> String,
    ) {
        if self.quiet {
            return;
        }
        let now = Timestamp::now();
        let line = match self.format {
            OutputFormat::Json => json(now.to_rfc3339_millis()).to_string(),
            OutputFormat::Text => {
                cli_support::escape_for_terminal(&text(cli_support::local_clock(now))).into_owned()
            }
        };
        let _ = writeln!(std::io::stdout().lock(), "{line}");
    }
}

/// Why the session's pane is in front of its user now, if it is: only
/// for this machine's sessions whose location still holds.
fn looked_at(view: &SessionView) -> Option<String> {
    if view.host.as_deref().is_some_and(|host| host != "local") {
        return None;
    }
    let location: &ScreenLocation = view.location.as_ref()?;
    let owner = owner_liveness::Pid::new(view.pid?)?;
    let check = Verifier::new().check(location, owner);
    if check.status != LocationStatus::Current {
        return None;
    }
    match in_front(location) {
        InFront::Yes(why) => Some(why),
        InFront::No(_) => None,
    }
}

/// The keys of a row a notice reads.
fn session_view(row: &serde_json::Value, host: Option<String>, key: &SessionKey) -> SessionView {
    let text = |name: &str| row[name].as_str().filter(|value| !value.is_empty()).map(str::to_owned);
    let location = row["location"].as_object().map(|location| {
        let part = |name: &str| location.get(name).and_then(|value| value.as_str()).map(str::to_owned);
        ScreenLocation {
            tty: part("tty"),
            multiplexer: part("multiplexer"),
            server: part("server"),
            pane: part("pane"),
            terminal: part("terminal"),
        }
    });
    SessionView {
        key: Some(key.clone()),
        host,
        pid: row["session_pid"].as_u64().and_then(|pid| u32::try_from(pid).ok()),
        session_id: text("session_id"),
        harness: text("harness"),
        agent: text("agent"),
        cwd: text("cwd"),
        waiting_for: text("waiting_for"),
        location,
    }
}

fn millis_of(text: &str) -> Option<Millis> {
    Timestamp::parse(text).and_then(|time| i64::try_from(time.unix_nanos() / 1_000_000).ok())
}

fn now_millis() -> Millis {
    i64::try_from(Timestamp::now().unix_nanos() / 1_000_000).unwrap_or(i64::MAX)
}
