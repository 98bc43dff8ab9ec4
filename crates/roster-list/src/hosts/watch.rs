//! `roster-list --watch --host …` (docs/contract.md §6.7): one event stream
//! of many machines. Each host runs its own `roster-list --watch --format
//! json` (through ssh; `local` as a child of this process), a thread each
//! reads it, and every event gets its `host`. A host whose stream ends is
//! reported (`host-lost`, with why) and asked again with a backoff (0.5 s
//! doubling to 30 s); when it is back, a `resync` for it, then its
//! `listed` rows. SIGINT, SIGTERM or a closed stdout end the watch with
//! exit 0, and the ssh children with it.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cli_support::{Colour, OutputFormat, escape_for_terminal, local_clock, paint, push_table_line};
use registry_core::Timestamp;
use session_events::{EVENT_SCHEMA, Event, EventKind, EventRow};

use super::answer::{HostNote, host_notes_json_line};
use super::query::Query;
use super::rows::{ContractDifference, row_with_host, text_cells};
use super::ssh::{REMOTE_PROGRAM, failure_of, last_words, ssh_call};
use super::target::{Host, Place};
use crate::listing::ListArgs;
use crate::table::{HEADERS, LIMITS};

/// The first wait before a lost host is asked again, and the longest.
const FIRST_BACKOFF: Duration = Duration::from_millis(500);
const LONGEST_BACKOFF: Duration = Duration::from_secs(30);

/// The line the remote shell prints once it found roster-list and is
/// about to run it: the host is back (its watch may list nothing at all).
const CONNECTED_MARK: &str = "roster-list-connected";

/// How often ssh checks that a quiet connection is still there, and how
/// many unanswered checks end it: a host cut off the network is lost
/// within a minute, not when TCP gives up.
const SERVER_ALIVE: [&str; 4] = ["-o", "ServerAliveInterval=15", "-o", "ServerAliveCountMax=3"];

/// The columns of a text event line before the listing's: time and event.
const TIME_WIDTH: usize = 12;
const EVENT_WIDTH: usize = 15;
const CWD_WIDTH: usize = 24;

/// What a host's thread hands the printer.
enum Report {
    Event(Box<Event>),
    Note(HostNote),
}

/// What the host threads share with the printer: where to send, how to
/// wake it, whether the watch is over, and each host's running child (to
/// kill at the end).
struct Shared {
    reports: Sender<Report>,
    wake: OwnedFd,
    stopping: AtomicBool,
    children: Mutex<Vec<Option<Child>>>,
}

impl Shared {
    fn send(&self, report: Report) {
        if self.reports.send(report).is_ok() {
            let _ = nix::unistd::write(&self.wake, b"w");
        }
    }
}

/// Watches every host until SIGINT, SIGTERM or a closed stdout.
pub fn watch_hosts(args: &ListArgs, hosts: &[Host], query: &Query) -> anyhow::Result<()> {
    use anyhow::Context;
    use nix::sys::signal::{SigSet, Signal};
    use nix::sys::signalfd::{SfdFlags, SignalFd};
    // Blocked before any thread starts, so every thread inherits the mask
    // and the signals reach only the signalfd.
    let mut signals = SigSet::empty();
    signals.add(Signal::SIGINT);
    signals.add(Signal::SIGTERM);
    signals.thread_block().context("blocking SIGINT and SIGTERM")?;
    let signal_fd =
        SignalFd::with_flags(&signals, SfdFlags::SFD_CLOEXEC | SfdFlags::SFD_NONBLOCK).context("signalfd")?;
    let (wake_read, wake_write) =
        nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC | nix::fcntl::OFlag::O_NONBLOCK).context("pipe")?;
    let (sender, receiver) = mpsc::channel();
    let shared = Arc::new(Shared {
        reports: sender,
        wake: wake_write,
        stopping: AtomicBool::new(false),
        children: Mutex::new(hosts.iter().map(|_| None).collect()),
    });
    for (index, host) in hosts.iter().enumerate() {
        let follower = Follower {
            index,
            host: host.clone(),
            command: host_command(host, query, args)?,
            shared: Arc::clone(&shared),
        };
        std::thread::Builder::new()
            .name(format!("host {}", host.given))
            .spawn(move || follower.follow())
            .context("starting a thread per host")?;
    }
    let mut printer = Printer::new(args, hosts);
    let ended = printer.print_until_stopped(&receiver, &signal_fd, &wake_read);
    shared.stopping.store(true, Ordering::SeqCst);
    let mut children = shared.children.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    for child in children.iter_mut().filter_map(Option::take) {
        end_child(child);
    }
    ended
}

/// The command that runs a host's watch: ssh to it, which checks that
/// roster-list is there, says so (`CONNECTED_MARK`) and runs it; for
/// `local`, this very program.
fn host_command(host: &Host, query: &Query, args: &ListArgs) -> anyhow::Result<Command> {
    match &host.place {
        Place::Local => {
            let mut command = Command::new(std::env::current_exe()?);
            command.args(["--watch", "--format", "json"]).args(&query.forwarded);
            if let Some(dir) = &args.common.dir {
                command.arg("--dir").arg(dir);
            }
            command.stdin(Stdio::null());
            Ok(command)
        }
        Place::Remote { destination, port } => {
            let line = format!(
                "command -v {REMOTE_PROGRAM} >/dev/null || exit 127; echo {CONNECTED_MARK}; exec {}",
                query.remote_line(true)
            );
            let mut ssh = query.ssh.clone();
            ssh.extend(SERVER_ALIVE.map(str::to_owned));
            Ok(ssh_call(&ssh, destination, *port, query.connect_timeout, &line))
        }
    }
}

/// Kills a host's child and reaps it.
fn end_child(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

/// One host's thread: runs its watch, passes its events on, and asks
/// again when it ends.
struct Follower {
    index: usize,
    host: Host,
    command: Command,
    shared: Arc<Shared>,
}

impl Follower {
    fn follow(mut self) {
        let mut backoff = FIRST_BACKOFF;
        let mut lost = false;
        let mut difference = ContractDifference::default();
        let mut newer_schema_said = false;
        while !self.shared.stopping.load(Ordering::SeqCst) {
            self.command.stdout(Stdio::piped()).stderr(Stdio::piped());
            let mut child = match self.command.spawn() {
                Ok(child) => child,
                Err(error) => {
                    if !lost {
                        self.event(EventKind::HostLost, &format!("could not start its watch: {error}"));
                        lost = true;
                    }
                    std::thread::sleep(backoff);
                    backoff = (backoff * 2).min(LONGEST_BACKOFF);
                    continue;
                }
            };
            let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
                end_child(child);
                return;
            };
            let stderr = std::thread::spawn(move || last_of_stderr(stderr));
            {
                let mut children =
                    self.shared.children.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                if self.shared.stopping.load(Ordering::SeqCst) {
                    end_child(child);
                    return;
                }
                children[self.index] = Some(child);
            }
            let mut connected = matches!(self.host.place, Place::Local);
            if connected && lost {
                self.resync();
                lost = false;
            }
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if !connected {
                    if line == CONNECTED_MARK {
                        connected = true;
                        backoff = FIRST_BACKOFF;
                        if lost {
                            self.resync();
                            lost = false;
                        }
                    }
                    continue;
                }
                self.pass_on(&line, &mut difference, &mut newer_schema_said);
            }
            let child = self.shared.children.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
                [self.index]
                .take();
            let status = child.and_then(|mut child| child.wait().ok()).map(|status| status.code());
            if self.shared.stopping.load(Ordering::SeqCst) {
                return;
            }
            let stderr = stderr.join().unwrap_or_default();
            if !lost {
                self.event(EventKind::HostLost, &why_lost(status, &stderr, connected));
                lost = true;
            }
            std::thread::sleep(backoff);
            backoff = (backoff * 2).min(LONGEST_BACKOFF);
        }
    }

    /// One line of the host's stream, with `host` added to the event and
    /// its row (which gets every current key, `null` where the host's
    /// roster has none); a row of another contract is said once.
    fn pass_on(&self, line: &str, difference: &mut ContractDifference, newer_schema_said: &mut bool) {
        let Some(mut event) = Event::from_line(line) else {
            self.note("host-unreadable", &format!("printed a line that is not an event: {line:?}"));
            return;
        };
        if event.schema > u64::from(EVENT_SCHEMA) && !*newer_schema_said {
            *newer_schema_said = true;
            self.note(
                "host-newer-contract",
                &format!(
                    "a newer roster: its events are of schema {}, this one reads schema {EVENT_SCHEMA}; upgrade \
                     roster here",
                    event.schema
                ),
            );
        }
        if let Some(EventRow::Remote(row)) = event.row.take() {
            if difference.add_row(&row) {
                for (kind, message) in [
                    ("host-older-contract", difference.older_note(&self.host.given)),
                    ("host-newer-contract", difference.newer_note(&self.host.given)),
                ] {
                    if let Some(message) = message {
                        self.shared.send(Report::Note(HostNote {
                            host: self.host.given.clone(),
                            kind: kind.to_owned(),
                            message,
                        }));
                    }
                }
            }
            event.row = Some(EventRow::Remote(row_with_host(row, &self.host.given)));
        }
        event.host = Some(self.host.given.clone());
        self.shared.send(Report::Event(Box::new(event)));
    }

    fn resync(&self) {
        self.event(EventKind::Resync, "the host is back: its current rows follow as listed");
    }

    /// An event about the host itself: `host-lost` or `resync`.
    fn event(&self, kind: EventKind, reason: &str) {
        let event = Event {
            host: Some(self.host.given.clone()),
            ..Event::about_the_stream(kind, Timestamp::now(), Some(reason))
        };
        self.shared.send(Report::Event(Box::new(event)));
    }

    fn note(&self, kind: &str, what: &str) {
        self.shared.send(Report::Note(HostNote {
            host: self.host.given.clone(),
            kind: kind.to_owned(),
            message: format!("{}: {}", escape_for_terminal(&self.host.given), escape_for_terminal(what)),
        }));
    }
}

/// Why a host's stream ended, in a `host-lost` event's words.
fn why_lost(status: Option<Option<i32>>, stderr: &str, connected: bool) -> String {
    let said = last_words(stderr).map(|words| format!(": {words}")).unwrap_or_default();
    let exit = match status {
        Some(Some(code)) => format!("exit {code}"),
        Some(None) => "killed by a signal".to_owned(),
        None => "ended".to_owned(),
    };
    let code = status.flatten();
    if connected {
        return format!("its watch ended ({exit}{said}); asking again");
    }
    let failure = failure_of(code, stderr);
    format!("{} ({exit}{said}); {}; asking again", failure.kind(), failure.advice())
}

/// The last few KiB a child said on stderr, read to its end.
fn last_of_stderr(mut stderr: impl Read) -> String {
    const KEPT: usize = 8 * 1024;
    let mut kept = Vec::new();
    let mut buffer = [0_u8; 4096];
    while let Ok(read) = stderr.read(&mut buffer) {
        if read == 0 {
            break;
        }
        kept.extend_from_slice(&buffer[..read]);
        if kept.len() > KEPT {
            kept.drain(..kept.len() - KEPT);
        }
    }
    String::from_utf8_lossy(&kept).into_owned()
}

/// Writes the events as they come: NDJSON, or lines for people in the
/// listing's columns after the time, the host and the event.
struct Printer {
    json: bool,
    quiet: bool,
    colour: bool,
    colour_on_stderr: bool,
    widths: Vec<usize>,
}

impl Printer {
    fn new(args: &ListArgs, hosts: &[Host]) -> Printer {
        let host_width = hosts.iter().map(|host| host.given.chars().count()).max().unwrap_or(4).max(4);
        let mut widths = vec![TIME_WIDTH, host_width, EVENT_WIDTH];
        for (header, limit) in HEADERS.iter().zip(LIMITS) {
            widths.push(limit.unwrap_or(if *header == "CWD" { CWD_WIDTH } else { header.len() }));
        }
        Printer {
            json: args.common.output_format() == OutputFormat::Json,
            quiet: args.common.quiet,
            colour: args.common.colour_on_stdout(),
            colour_on_stderr: args.common.colour_on_stderr(),
            widths,
        }
    }

    /// Prints what the hosts report until a signal or a closed stdout.
    fn print_until_stopped(
        &mut self,
        reports: &Receiver<Report>,
        signal_fd: &nix::sys::signalfd::SignalFd,
        wake: &OwnedFd,
    ) -> anyhow::Result<()> {
        use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
        let stdout = std::io::stdout();
        let mut out = stdout.lock();
        if !self.json && !self.quiet && std::io::IsTerminal::is_terminal(&std::io::stdout()) {
            let headers: Vec<&str> = ["TIME", "HOST", "EVENT"].into_iter().chain(HEADERS).collect();
            let mut line = String::new();
            push_table_line(&mut line, &self.widths, &mut headers.into_iter(), &|_, cell| cell.into());
            out.write_all(line.as_bytes())?;
            out.flush()?;
        }
        let stdout_fd = std::io::stdout().as_fd().try_clone_to_owned()?;
        loop {
            let mut fds = [
                PollFd::new(signal_fd.as_fd(), PollFlags::POLLIN),
                PollFd::new(wake.as_fd(), PollFlags::POLLIN),
                PollFd::new(stdout_fd.as_fd(), PollFlags::empty()),
            ];
            match poll(&mut fds, PollTimeout::NONE) {
                Ok(_) | Err(nix::errno::Errno::EINTR) => {}
                Err(errno) => return Err(anyhow::anyhow!("poll: {}", errno.desc())),
            }
            let ready =
                |fd: &PollFd<'_>, flags: PollFlags| fd.revents().is_some_and(|got| got.intersects(flags));
            if ready(&fds[0], PollFlags::POLLIN) || ready(&fds[2], PollFlags::POLLERR | PollFlags::POLLHUP) {
                return Ok(());
            }
            let mut drained = [0_u8; 512];
            while nix::unistd::read(wake.as_fd(), &mut drained).is_ok_and(|read| read > 0) {}
            let mut text = String::new();
            while let Ok(report) = reports.try_recv() {
                match report {
                    Report::Event(event) => text.push_str(&self.event_line(&event)),
                    Report::Note(note) => self.say_note(&note),
                }
            }
            if self.quiet {
                continue;
            }
            match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
                Ok(()) => {}
                Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => return Ok(()),
                Err(error) => return Err(error.into()),
            }
        }
    }

    fn event_line(&self, event: &Event) -> String {
        if self.json {
            return event.to_line();
        }
        let (kind, at) = (event.kind.as_str(), event.at);
        let host = event.host.as_deref().unwrap_or("?");
        let colour = match event.kind {
            EventKind::Died | EventKind::HostLost => Colour::Red,
            EventKind::Removed | EventKind::Unmatched => Colour::Dim,
            EventKind::Listed | EventKind::Registered | EventKind::Refreshed => Colour::Green,
            _ => Colour::Yellow,
        };
        let enabled = self.colour;
        let paint_event: &cli_support::PaintCell<'_> =
            &|column, cell| if column == 2 { paint(cell, colour, enabled).into() } else { cell.into() };
        let head = [local_clock(at), escape_for_terminal(host).into_owned(), kind.to_owned()];
        let mut line = String::new();
        match &event.row {
            Some(row) => {
                let cells = text_cells(&row.to_json(), at);
                let mut all = head.iter().chain(&cells[1..]).map(String::as_str);
                push_table_line(&mut line, &self.widths, &mut all, paint_event);
            }
            None => {
                let reason = escape_for_terminal(event.reason.as_deref().unwrap_or_default()).into_owned();
                let mut all = head.iter().chain(std::iter::once(&reason)).map(String::as_str);
                push_table_line(&mut line, &self.widths[..4], &mut all, paint_event);
            }
        }
        line
    }

    /// A note about a host, on stderr: one JSON line of notes for a
    /// script, a line for people.
    fn say_note(&self, note: &HostNote) {
        if self.quiet {
            return;
        }
        let line = if self.json {
            host_notes_json_line(std::slice::from_ref(note))
        } else {
            paint(&note.message, Colour::Dim, self.colour_on_stderr)
        };
        let _ = writeln!(std::io::stderr().lock(), "{line}");
    }
}
