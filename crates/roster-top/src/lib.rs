//! `roster-top`: a full-screen view of every live session (docs/contract.md
//! §6.10), redrawn when the watch reports a change, a key is pressed or the
//! pane is resized, and otherwise asleep in one epoll; keys that act
//! through the tools that already do (roster-focus, roster-send,
//! roster-consent); `--summary`, one line for a status bar. The clap
//! `Command` lives here so xtask renders man pages and completions from the
//! definition users run.

#![forbid(unsafe_code)]

mod actions;
mod board;
mod feed;
mod frame_cost;
mod keys;
mod project;
mod summary;
pub mod terminal;
mod view;

use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
use std::process::ExitCode;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::{CommandFactory, Parser};
use cli_support::manual::{self, Example, ExitStatusDoc, Manual};
use cli_support::{BadInput, CommonArgs, ExitStatus};
use nix::sys::epoll::{Epoll, EpollCreateFlags, EpollEvent, EpollFlags, EpollTimeout};
use nix::sys::signal::{SigSet, Signal};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use registry_core::Timestamp;

pub use crate::frame_cost::redraw_times;

use crate::feed::{Fed, Wake};
use crate::view::{After, View};

const TOOL: &str = "roster-top";

/// A live full-screen view of the agent sessions
#[derive(Debug, Parser)]
#[command(
    name = TOOL,
    version,
    about = "A live full-screen view of the agent sessions, the ones waiting for you first",
    long_about = "A live full-screen view of the agent sessions, the ones waiting for you first\n\n\
        roster-top shows one row per live session of this machine (and with --host, of other \
        machines): its harness, agent name, state and for how long (`waiting: permission 2m`), project \
        (its directory's last part and git branch), where it shows (its tmux pane, screen window, \
        kitty window or terminal, checked as roster-list checks it), whether it accepts messages, the \
        messages waiting for it, and its host. Sessions waiting for you come first, the longest \
        waiting on top, then working, idle and unknown ones. A session that ends is marked dead \
        (never shown alive again) and leaves after 10 seconds; a host that stops answering is marked \
        lost, its sessions kept as they last were, never shown as dying.\n\n\
        It is fed by the registry's watch (the events roster-list --watch prints): no polling. It \
        redraws when a session changes, when a key is pressed and when the pane is resized, and once \
        when an age it shows changes its text (each second while an age in seconds is shown, each \
        minute for minutes); otherwise it sleeps and makes no system call.\n\n\
        Keys: Enter or g goes to the selected session (roster-focus); n goes to the next session \
        waiting for you (Tab only selects it); j/k or the arrows select; s asks for a one-line message and sends it \
        (roster-send, its consent rules and refusals shown in the status line); a arms and d \
        disarms the session's consent (roster-consent); / filters by agent, harness, state or \
        directory; ? shows the keys; q or Esc quits. The tools are the ones beside roster-top's \
        own executable, else those on PATH.",
)]
pub struct TopArgs {
    #[command(flatten)]
    pub common: CommonArgs,

    /// Print one line for a status bar (`3 working · 1 waiting: permission (api) · 2 idle`) and exit
    #[arg(long)]
    pub summary: bool,

    /// Show the sessions of another machine too, through your ssh: [USER@]HOST[:PORT] (repeatable; this machine's are always shown)
    #[arg(long, value_name = "HOST", conflicts_with = "summary")]
    pub host: Vec<String>,
}

/// Examples, notes and exit statuses: `--help` and the man page both
/// render this.
pub fn manual() -> Manual {
    Manual {
        examples: &[
            Example {
                description: "Watch every session; Enter goes to the selected one, n to the next waiting:",
                commands: &["roster-top"],
                output: &[],
            },
            Example {
                description: "The sessions in tmux's status line, asked every 5 seconds (in ~/.tmux.conf):",
                commands: &["set -g status-interval 5", "set -g status-right '#(roster-top --summary)'"],
                output: &["2 working · 1 waiting: permission (api) · 1 idle"],
            },
            Example {
                description: "This machine's sessions and two servers' in one view:",
                commands: &["roster-top --host build1 --host ci@build2"],
                output: &[],
            },
        ],
        notes: vec![
            "Who may arm and disarm: `a` runs roster-consent arm --pid for the selected session, which \
             arms only a session roster-top runs inside (its owner must be roster-top or one of its \
             ancestors: a session consents for itself, never another tool for it), so from a separate \
             pane it is refused and the refusal is shown. `d` runs roster-consent disarm --pid, which \
             any user may do to any running session of theirs: disarming grants nothing. A session on \
             another host is armed and disarmed on that host."
                .to_owned(),
            "Columns, left out in this order when the pane is too narrow: PID, MSGS, HARNESS, CONSENT, \
             HOST, LOCATION, PROJECT; AGENT and STATE always stay. 80 columns by 24 lines shows AGENT, \
             STATE and PROJECT at least."
                .to_owned(),
            "Colour follows --color, NO_COLOR and TERM=dumb as every roster tool's does; without \
             colour the selected row is still shown reversed and marked `>`. No mouse is needed."
                .to_owned(),
            "The project's branch is read from the repository's .git/HEAD (a worktree's too) when the \
             session appears or changes; no git is run."
                .to_owned(),
            "--summary makes one listing of the registry, as roster-list does, and exits: with \
             --format json it prints {\"working\", \"idle\", \"unknown\", \"waiting\": [{\"waiting_for\", \
             \"agent\", \"session_pid\", \"state_since\"}], \"text\"}."
                .to_owned(),
            "The terminal is given back (main screen, cursor shown, cooked mode) on q, Esc or Ctrl-C, \
             on SIGTERM, SIGHUP and SIGINT, on an error and on a panic."
                .to_owned(),
        ],
        environment: manual::session_variables_and(&[]),
        environment_note: Some(manual::EMPTY_VARIABLE_NOTE),
        files: &[manual::SESSIONS_FILE],
        exit_statuses: &[
            ExitStatusDoc {
                status: ExitStatus::Success,
                meaning: "Quit by a key, SIGTERM, SIGHUP or SIGINT; with --summary, printed the line.",
            },
            ExitStatusDoc {
                status: ExitStatus::Failure,
                meaning: "The terminal could not be used, or an I/O error.",
            },
            ExitStatusDoc {
                status: ExitStatus::BadInput,
                meaning: "Bad usage, or the view started without a terminal (--summary needs none).",
            },
            ExitStatusDoc { status: ExitStatus::Refused, meaning: "An untrusted roster directory." },
        ],
        ..Manual::default()
    }
}

pub fn command() -> clap::Command {
    cli_support::with_manual(TopArgs::command(), &manual())
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    cli_support::run_binary(TOOL, command, run)
}

fn run(args: TopArgs) -> anyhow::Result<()> {
    if args.summary {
        return summary::print_summary(&args.common);
    }
    let stdin = std::io::stdin();
    if !std::io::IsTerminal::is_terminal(&stdin) || !std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        return Err(BadInput(
            "roster-top draws on a terminal, and stdin or stdout is not one; run it in a terminal, or use \
             --summary for one line (roster-list --watch for a stream of events)"
                .to_owned(),
        )
        .into());
    }
    // A registry that may not be trusted is refused here, with its fix,
    // before the screen is taken (the watch would only say it later).
    cli_support::open_roster_for_reading(&args.common)?;
    let path = cli_support::roster_directory_choice(&args.common)?.path;
    raise_open_file_limit();
    // Blocked before any thread starts, so every thread inherits the
    // mask and the signals arrive only through the signalfd; the tools
    // roster-top runs start with an empty mask (std resets it).
    let mut signals = SigSet::empty();
    for signal in [Signal::SIGTERM, Signal::SIGHUP, Signal::SIGINT, Signal::SIGWINCH, Signal::SIGQUIT] {
        signals.add(signal);
    }
    signals.thread_block().map_err(|errno| anyhow::anyhow!("blocking signals: {}", errno.desc()))?;
    let signal_fd = SignalFd::with_flags(&signals, SfdFlags::SFD_CLOEXEC | SfdFlags::SFD_NONBLOCK)
        .map_err(|errno| anyhow::anyhow!("signalfd: {}", errno.desc()))?;
    let (wake_read, wake_write) =
        nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC | nix::fcntl::OFlag::O_NONBLOCK).context("a pipe")?;
    let (sender, receiver) = mpsc::channel();
    let wake = Wake::new(sender, wake_write);
    feed::start_local(path, wake.clone());
    // This machine is always shown (its own watch): `local`, which
    // roster-list --host takes for it, would show it twice.
    let hosts: Vec<String> = args.host.iter().filter(|host| *host != "local").cloned().collect();
    if !hosts.is_empty() {
        let mut extra = Vec::new();
        if let Some(dir) = &args.common.dir {
            extra.push("--dir".to_owned());
            extra.push(dir.to_string_lossy().into_owned());
        }
        feed::start_hosts(cli_support::sibling_tool("roster-list"), hosts, extra, wake);
    } else {
        drop(wake);
    }
    let passed = actions::Passed { dir: args.common.dir.clone() };
    let colour = args.common.colour_on_stdout();
    // crossterm drops colours by itself when NO_COLOR is set; the choice
    // is made above (`--color always` beats NO_COLOR), once for all tools.
    ratatui::crossterm::style::force_color_output(colour);
    let view = View::new(colour, !args.host.is_empty(), passed);
    terminal::take()?;
    let _taken = terminal::Taken;
    let outcome = event_loop(view, &signal_fd, wake_read.as_fd(), &receiver);
    terminal::restore();
    outcome
}

/// What the epoll's events carry.
const STDIN: u64 = 0;
const SIGNALS: u64 = 1;
const WAKE: u64 = 2;

/// Draws, then sleeps until a key, a signal, an event or the next change
/// of an age shown; until quit.
fn event_loop(
    mut view: View,
    signal_fd: &SignalFd,
    wake: BorrowedFd<'_>,
    receiver: &mpsc::Receiver<Fed>,
) -> anyhow::Result<()> {
    let backend = ratatui::backend::CrosstermBackend::new(std::io::stdout());
    let mut screen = ratatui::Terminal::new(backend).context("the terminal")?;
    let epoll = Epoll::new(EpollCreateFlags::EPOLL_CLOEXEC).context("epoll")?;
    let stdin = std::io::stdin();
    epoll.add(stdin.as_fd(), EpollEvent::new(EpollFlags::EPOLLIN, STDIN)).context("epoll on stdin")?;
    epoll
        .add(signal_fd.as_fd(), EpollEvent::new(EpollFlags::EPOLLIN, SIGNALS))
        .context("epoll on signals")?;
    epoll.add(wake, EpollEvent::new(EpollFlags::EPOLLIN, WAKE)).context("epoll on the feed")?;
    let mut events = [EpollEvent::empty(); 4];
    let mut dirty = true;
    loop {
        if view.board.drop_the_long_dead(Instant::now()) {
            dirty = true;
        }
        if dirty {
            screen.draw(|frame| view.draw(frame)).context("drawing")?;
            dirty = false;
        }
        let timeout = match view.board.next_change(&view.filter, Timestamp::now(), Instant::now()) {
            // A millisecond past the change, so the text has changed.
            Some(wait) => {
                EpollTimeout::try_from(wait + Duration::from_millis(1)).unwrap_or(EpollTimeout::MAX)
            }
            None => EpollTimeout::NONE,
        };
        let ready = match epoll.wait(&mut events, timeout) {
            Ok(ready) => ready,
            Err(nix::errno::Errno::EINTR) => continue,
            Err(errno) => return Err(anyhow::anyhow!("epoll_wait: {}", errno.desc())),
        };
        if ready == 0 {
            // An age shown changed its text, or a dead row is due to go.
            dirty = true;
            continue;
        }
        for event in &events[..ready] {
            match event.data() {
                STDIN => {
                    let mut buffer = [0u8; 1024];
                    let read = match nix::unistd::read(stdin.as_fd(), &mut buffer) {
                        Ok(0) => return Ok(()),
                        Ok(read) => read,
                        Err(nix::errno::Errno::EAGAIN | nix::errno::Errno::EINTR) => 0,
                        // The terminal went away (a hangup): nothing to draw on.
                        Err(_) => return Ok(()),
                    };
                    for key in keys::keys_in(&buffer[..read]) {
                        if view.key(key) == After::Quit {
                            return Ok(());
                        }
                    }
                    dirty = true;
                }
                SIGNALS => {
                    while let Ok(Some(info)) = signal_fd.read_signal() {
                        if info.ssi_signo == Signal::SIGWINCH as u32 {
                            screen.autoresize().context("resizing")?;
                            dirty = true;
                        } else {
                            return Ok(());
                        }
                    }
                }
                _ => {
                    drain(wake);
                    while let Ok(fed) = receiver.try_recv() {
                        match fed {
                            Fed::Event(event) => {
                                let label = board::local_consent_label(&event);
                                dirty |= view.board.apply(&event, label);
                            }
                            Fed::Notice(text) => {
                                view.say(false, text);
                                dirty = true;
                            }
                            Fed::Ended(why) => {
                                let why = why.unwrap_or_else(|| "it stopped".to_owned());
                                view.say(
                                    false,
                                    format!("the watch ended: {why}; the rows are no longer live"),
                                );
                                dirty = true;
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Empties the wake pipe (non-blocking).
fn drain(fd: BorrowedFd<'_>) {
    let mut buffer = [0u8; 256];
    while matches!(nix::unistd::read(fd, &mut buffer), Ok(read) if read > 0) {}
    let _ = fd.as_raw_fd();
}

/// Raises the soft limit of open files to the hard limit, so the watch
/// can hold a pidfd for each of thousands of owners.
fn raise_open_file_limit() {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    if let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE)
        && soft < hard
    {
        let _ = setrlimit(Resource::RLIMIT_NOFILE, hard, hard);
    }
}
