//! `roster-list --watch`: the current rows, then one event per change until
//! interrupted; `--until-gone` waits for one session to end, like `tail
//! --pid`. The events come from the `session-events` library; this file
//! owns what is the process's: SIGINT and SIGTERM, the open-file limit,
//! stdout and stderr, and how an event is printed (a line of JSON, or a
//! line in the listing's columns).

use std::io::Write;
use std::path::{Path, PathBuf};

use cli_support::{
    BadInput, Colour, CommonArgs, OutputFormat, escape_for_terminal, escape_path_for_terminal, local_clock,
    paint, process_env_os, roster_directory_choice,
};
use registry_core::{ListFilter, StopWhen, Timestamp};
use session_events::{Event, EventKind, EventRow, Notice, SessionWatch, Sink, WatchConfig};

use crate::table::{EventColumns, TableOptions, text_row};

/// What ends this process's watch: SIGINT and SIGTERM, blocked from here
/// on and read through a signalfd, and its stdout's reader going away (a
/// pipe's writing end reports an error then; a terminal or a file never
/// does, and need not).
fn stop_when() -> anyhow::Result<StopWhen> {
    use anyhow::Context;
    use nix::sys::signal::{SigSet, Signal};
    use nix::sys::signalfd::{SfdFlags, SignalFd};
    use std::os::fd::AsFd;
    let mut signals = SigSet::empty();
    signals.add(Signal::SIGINT);
    signals.add(Signal::SIGTERM);
    signals
        .thread_block()
        .map_err(|errno| anyhow::anyhow!("blocking SIGINT and SIGTERM: {}", errno.desc()))?;
    let signal_fd = SignalFd::with_flags(&signals, SfdFlags::SFD_CLOEXEC | SfdFlags::SFD_NONBLOCK)
        .map_err(|errno| anyhow::anyhow!("signalfd: {}", errno.desc()))?;
    let readable = vec![signal_fd.as_fd().try_clone_to_owned().context("duplicating the signalfd")?];
    let hung_up = std::io::stdout().as_fd().try_clone_to_owned().into_iter().collect();
    Ok(StopWhen { readable, hung_up })
}

/// Raises the soft limit of open files to the hard limit, so thousands of
/// owners can each be watched through a pidfd; returns the limit now.
fn raise_open_file_limit() -> u64 {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    match getrlimit(Resource::RLIMIT_NOFILE) {
        Ok((soft, hard)) if soft < hard => {
            if setrlimit(Resource::RLIMIT_NOFILE, hard, hard).is_ok() {
                hard
            } else {
                soft
            }
        }
        Ok((soft, _)) => soft,
        Err(_) => 0,
    }
}

/// What a watch is asked for: the common flags, `--until-gone`'s session,
/// and whether the rows present at the start are printed (`--watch`).
pub struct WatchRequest<'a> {
    pub common: &'a CommonArgs,
    pub until_gone: Option<String>,
    pub prints_listing: bool,
    pub(crate) table: TableOptions,
}

/// Runs the watch until SIGINT, SIGTERM, a closed stdout, or (with
/// `--until-gone`) the end of the session named.
pub fn run_watch(request: WatchRequest<'_>, filter: &ListFilter) -> anyhow::Result<()> {
    raise_open_file_limit();
    let common = request.common;
    let config = WatchConfig {
        path: roster_directory_choice(common)?.path,
        filter: filter.clone(),
        // Nothing is shown with `-q`: no consent to follow.
        follows_consent: !common.quiet,
        env: process_env_os,
        stop_when: stop_when()?,
    };
    let printer = Printer {
        out: std::io::stdout().lock(),
        json: common.output_format() == OutputFormat::Json,
        quiet: common.quiet,
        columns: None,
        home: process_env_os("HOME").map(PathBuf::from),
    };
    let (mut watch, listed) = SessionWatch::start(config, printer)?;
    watch.sink_mut().print_the_start(&listed, &request)?;
    if let Some(target) = &request.until_gone
        && !watch.has_live_session(target)
    {
        // A typo must not look like a session that finished.
        let target = escape_for_terminal(target);
        return Err(BadInput(format!(
            "--until-gone {target}: no running session has owner pid or session id {target} in {}; it \
             ended already or was never registered (`roster-list --all` shows the sessions registered)",
            escape_path_for_terminal(watch.path())
        ))
        .into());
    }
    while watch.next_changes()? {
        watch.sink_mut().out.flush()?;
        if request.until_gone.as_ref().is_some_and(|target| !watch.has_live_session(target)) {
            break;
        }
    }
    Ok(())
}

/// Prints the events: NDJSON, or lines for people in the listing's
/// columns, fixed when the watch starts.
struct Printer {
    out: std::io::StdoutLock<'static>,
    json: bool,
    quiet: bool,
    columns: Option<EventColumns>,
    home: Option<PathBuf>,
}

impl Printer {
    /// Lays out the text columns after the rows present at the start, and
    /// prints those rows (`listed`) when `--watch` asks for them.
    fn print_the_start(&mut self, listed: &[Event], request: &WatchRequest<'_>) -> anyhow::Result<()> {
        let common = request.common;
        let mut text = String::new();
        if !self.json {
            let now = Timestamp::now();
            let cells: Vec<Vec<String>> = listed
                .iter()
                .filter_map(|event| match &event.row {
                    Some(EventRow::Local { row, consent }) => {
                        Some(text_row(row, consent, self.home.as_deref(), now))
                    }
                    _ => None,
                })
                .collect();
            let columns = EventColumns::new(&cells, &request.table, common.colour_on_stdout());
            if !self.quiet && std::io::IsTerminal::is_terminal(&std::io::stdout()) {
                text.push_str(&columns.header());
            }
            if let Some(note) = columns.dropped_note().filter(|_| !self.quiet) {
                let _ =
                    writeln!(std::io::stderr(), "{}", paint(&note, Colour::Dim, common.colour_on_stderr()));
            }
            self.columns = Some(columns);
        }
        if request.prints_listing && !self.quiet {
            for event in listed {
                text.push_str(&self.line(event));
            }
        }
        self.out.write_all(text.as_bytes())?;
        self.out.flush()?;
        Ok(())
    }

    /// One event as printed: a line of text in the listing's columns, or
    /// a line of JSON.
    fn line(&self, event: &Event) -> String {
        match &self.columns {
            Some(columns) if !self.json => event_text(columns, event, self.home.as_deref()),
            _ => event.to_line(),
        }
    }
}

impl Sink for Printer {
    fn event(&mut self, event: Event) -> std::io::Result<()> {
        if self.quiet {
            return Ok(());
        }
        let line = self.line(&event);
        self.out.write_all(line.as_bytes())?;
        self.out.flush()
    }

    fn notice(&mut self, notice: Notice) {
        match notice {
            Notice::OwnersUnwatched { owner, why, watched } => eprintln!(
                "roster-list: watching owner {owner} and later ones without a pidfd ({why}): after {watched} \
                 owners the open-file limit is reached, so their exits are seen on the next change of the \
                 registry; raise `ulimit -n` to see them at once"
            ),
            Notice::ConsentUnfollowed { path, why } => eprintln!(
                "roster-list: cannot follow {} for consent changes ({why}), so consent is decided again on \
                 every change of the registry instead",
                path.display()
            ),
            Notice::RegistryUnopenable { why } => eprintln!(
                "roster-list: {why}; watching it as if it were absent until it changes and can be opened"
            ),
        }
    }
}

/// The colour of an event's name in a text line.
fn colour_of(kind: &EventKind) -> Colour {
    match kind {
        EventKind::Listed
        | EventKind::Registered
        | EventKind::Refreshed
        | EventKind::MessageQueued
        | EventKind::MessageDelivered => Colour::Green,
        EventKind::Died | EventKind::HostLost => Colour::Red,
        EventKind::Removed | EventKind::Unmatched | EventKind::MessageExpired => Colour::Dim,
        EventKind::ConsentChanged
        | EventKind::Problem
        | EventKind::Resync
        | EventKind::StateChanged
        | EventKind::MessageRefused
        | EventKind::MessageUnconfirmed
        | EventKind::Newer(_) => Colour::Yellow,
    }
}

/// One line for people, in the listing's columns (`EventColumns`): local
/// time, event, then the row's cells as the table shows them; for an event
/// about no row, why.
fn event_text(columns: &EventColumns, event: &Event, home: Option<&Path>) -> String {
    let clock = local_clock(event.at);
    let (name, colour) = (event.kind.as_str(), colour_of(&event.kind));
    match &event.row {
        Some(EventRow::Local { row, consent }) => {
            let cells = text_row(row, consent, home, event.at);
            columns.row_line(&clock, name, colour, &cells)
        }
        _ => columns.reason_line(&clock, name, colour, event.reason.as_deref().unwrap_or_default()),
    }
}
