//! Checking a recorded location against what holds now. A tmux pane id, a
//! screen window number and a kitty window id are reused: after a tmux
//! server restarts, `%3` is whatever pane was opened third; a closed
//! window's number goes to the next one. So a location is current only
//! when its multiplexer answers that the pane is there and that the process
//! it runs is the session's owner or one of the owner's ancestors (the
//! shell the pane started, which started the harness). Each server is
//! asked once per `Verifier`, however many sessions it holds.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use owner_liveness::{Pid, walk_ancestry_reporting};
use registry_core::record::{LocationCheck, LocationStatus, ScreenLocation, controlling_terminal};

use crate::run::{TmuxSilence, ask_tmux_server, run_bounded};

/// The longest a multiplexer is given to answer.
const ANSWER_BOUND: Duration = Duration::from_secs(2);

/// Why a server's panes are not known.
#[derive(Clone, Debug)]
enum ServerProblem {
    /// It is gone: every location on it is stale.
    Gone(String),
    /// It could not be asked: locations on it are unchecked.
    Unasked(String),
}

/// A pane of a tmux server: the process it runs and where it is.
#[derive(Clone, Debug)]
pub(crate) struct TmuxPane {
    pid: u32,
    /// `session:window.pane`.
    place: String,
}

/// Checks locations, asking each server once.
#[derive(Debug, Default)]
pub struct Verifier {
    tmux: HashMap<String, Result<HashMap<String, TmuxPane>, ServerProblem>>,
    screen: HashMap<String, Result<Vec<String>, ServerProblem>>,
    kitty: HashMap<String, Result<HashMap<String, u32>, ServerProblem>>,
    ancestries: HashMap<u32, Result<Vec<u32>, String>>,
}

impl Verifier {
    pub fn new() -> Verifier {
        Verifier::default()
    }

    /// `location`, recorded for the live session whose owner is `owner`,
    /// checked now.
    pub fn check(&mut self, location: &ScreenLocation, owner: Pid) -> LocationCheck {
        let pane = location.pane.as_deref().unwrap_or_default();
        let server = location.server.as_deref().unwrap_or_default();
        match location.multiplexer.as_deref() {
            Some("tmux") => self.check_tmux(server, pane, owner),
            Some("screen") => self.check_screen(server, pane, owner),
            Some("kitty") => self.check_kitty(server, pane, owner),
            Some(other @ ("wezterm" | "zellij")) => unchecked(
                format!("{other} {pane}"),
                format!("{other} panes are not checked: {other} does not say which process runs in a pane"),
            ),
            Some(other) => unchecked(other.to_owned(), format!("{other} is no multiplexer roster knows")),
            None => self.check_terminal(location, owner),
        }
    }

    fn check_tmux(&mut self, server: &str, pane: &str, owner: Pid) -> LocationCheck {
        let shown = format!("tmux {pane}");
        let panes = self.tmux.entry(server.to_owned()).or_insert_with(|| tmux_panes(server)).clone();
        let panes = match panes {
            Ok(panes) => panes,
            Err(problem) => return from_problem(shown, problem),
        };
        let Some(found) = panes.get(pane) else {
            return stale(shown, format!("pane {pane} is no longer on the tmux server {server}"));
        };
        match self.runs_the_session(found.pid, owner) {
            Ok(true) => current(format!("tmux {}", found.place), format!("pane {pane} runs this session")),
            Ok(false) => stale(
                shown,
                format!(
                    "pane {pane} of the tmux server {server} runs pid {}, which is not this session's (the pane \
                     number was reused)",
                    found.pid
                ),
            ),
            Err(why) => unchecked(shown, why),
        }
    }

    fn check_screen(&mut self, server: &str, window: &str, owner: Pid) -> LocationCheck {
        // STY is `<pid of SCREEN>.<name>`.
        let name = server.split_once('.').map_or(server, |(_, name)| name);
        let shown = format!("screen {name}:{window}");
        let screen_pid = server.split('.').next().and_then(|pid| pid.parse::<u32>().ok());
        // The session runs in a window of that very SCREEN process: it is
        // one of the owner's ancestors (a screen that ended and whose pid
        // was reused is not).
        match screen_pid.map(|pid| self.runs_the_session(pid, owner)) {
            Some(Ok(true)) => {}
            Some(Ok(false)) | None => {
                return stale(shown, format!("the session no longer runs in the screen session {server}"));
            }
            Some(Err(why)) => return unchecked(shown, why),
        }
        let windows = self.screen.entry(server.to_owned()).or_insert_with(|| screen_windows(server)).clone();
        match windows {
            Ok(windows) if windows.iter().any(|number| number == window) => {
                current(shown, format!("window {window} of screen {server} runs this session"))
            }
            Ok(_) => stale(shown, format!("window {window} is no longer in the screen session {server}")),
            Err(problem) => from_problem(shown, problem),
        }
    }

    fn check_kitty(&mut self, server: &str, window: &str, owner: Pid) -> LocationCheck {
        let shown = format!("kitty {window}");
        let windows = self.kitty.entry(server.to_owned()).or_insert_with(|| kitty_windows(server)).clone();
        let windows = match windows {
            Ok(windows) => windows,
            Err(problem) => return from_problem(shown, problem),
        };
        let Some(&pid) = windows.get(window) else {
            return stale(shown, format!("window {window} is no longer in the kitty at {server}"));
        };
        match self.runs_the_session(pid, owner) {
            Ok(true) => current(shown, format!("kitty window {window} runs this session")),
            Ok(false) => {
                stale(shown, format!("kitty window {window} runs pid {pid}, which is not this session's"))
            }
            Err(why) => unchecked(shown, why),
        }
    }

    /// A session on a terminal of its own: current while the owner's
    /// controlling terminal is still the one recorded.
    fn check_terminal(&mut self, location: &ScreenLocation, owner: Pid) -> LocationCheck {
        let Some(tty) = location.tty.as_deref() else {
            let terminal = location.terminal.as_deref().unwrap_or("-");
            return unchecked(terminal.to_owned(), "no terminal or multiplexer was recorded".to_owned());
        };
        match controlling_terminal(owner.get()) {
            Some(now) if now == tty => current(tty.to_owned(), format!("the owner's terminal is {tty}")),
            Some(now) => stale(tty.to_owned(), format!("the owner's terminal is now {now}, not {tty}")),
            None => stale(tty.to_owned(), format!("the owner has no terminal now, not {tty}")),
        }
    }

    /// Whether `pid` is `owner` or one of its ancestors.
    fn runs_the_session(&mut self, pid: u32, owner: Pid) -> Result<bool, String> {
        let ancestry = self.ancestries.entry(owner.get()).or_insert_with(|| {
            let walk = walk_ancestry_reporting(owner);
            match walk.unreadable {
                Some(why) if walk.steps.len() <= 1 => {
                    Err(format!("the owner's ancestry cannot be read: {why}"))
                }
                _ => Ok(walk.steps.iter().map(|step| step.pid.get()).collect()),
            }
        });
        ancestry.clone().map(|pids| pids.contains(&pid))
    }
}

fn current(shown: String, reason: String) -> LocationCheck {
    LocationCheck { status: LocationStatus::Current, reason, shown }
}

fn stale(shown: String, reason: String) -> LocationCheck {
    LocationCheck { status: LocationStatus::Stale, reason, shown }
}

fn unchecked(shown: String, reason: String) -> LocationCheck {
    LocationCheck { status: LocationStatus::Unchecked, reason, shown }
}

fn from_problem(shown: String, problem: ServerProblem) -> LocationCheck {
    match problem {
        ServerProblem::Gone(why) => stale(shown, why),
        ServerProblem::Unasked(why) => unchecked(shown, why),
    }
}

/// Every pane of the tmux server at `socket`, by pane id.
fn tmux_panes(socket: &str) -> Result<HashMap<String, TmuxPane>, ServerProblem> {
    if !Path::new(socket).exists() {
        return Err(ServerProblem::Gone(format!("the tmux server's socket {socket} is gone")));
    }
    let arguments = [
        "list-panes",
        "-a",
        "-F",
        // Spaces apart (tmux writes a tab as `_`); the place, which may
        // hold spaces, last.
        "#{pane_id} #{pane_pid} #{session_name}:#{window_index}.#{pane_index}",
    ];
    let panes = ask_tmux_server(socket, &arguments, ANSWER_BOUND).map_err(|silence| match silence {
        TmuxSilence::NotAsked(why) => ServerProblem::Unasked(why),
        TmuxSilence::NoServer(why) => ServerProblem::Gone(why),
    })?;
    Ok(panes
        .lines()
        .filter_map(|line| {
            let mut fields = line.splitn(3, ' ');
            let pane = fields.next()?.to_owned();
            let pid = fields.next()?.parse().ok()?;
            let place = fields.next()?.to_owned();
            Some((pane, TmuxPane { pid, place }))
        })
        .collect())
}

/// The window numbers of the screen session `session`.
fn screen_windows(session: &str) -> Result<Vec<String>, ServerProblem> {
    let arguments = ["-S", session, "-Q", "windows"].map(str::to_owned);
    let answer = run_bounded("screen", &arguments, ANSWER_BOUND).map_err(ServerProblem::Unasked)?;
    if !answer.success && answer.stdout.trim().is_empty() {
        return Err(ServerProblem::Gone(format!(
            "no screen session {session} answers: {}",
            answer.stderr.trim()
        )));
    }
    // `0 bash  1*$ claude`: entries two spaces apart, each its number,
    // its flags and its title.
    Ok(answer
        .stdout
        .trim()
        .split("  ")
        .filter_map(|word| {
            let number: String = word.chars().take_while(char::is_ascii_digit).collect();
            (!number.is_empty()).then_some(number)
        })
        .collect())
}

/// Every window of the kitty listening at `address`, by id, with the pid
/// of the process it started.
fn kitty_windows(address: &str) -> Result<HashMap<String, u32>, ServerProblem> {
    let arguments = ["@", "--to", address, "ls"].map(str::to_owned);
    let answer = run_bounded("kitty", &arguments, ANSWER_BOUND).map_err(ServerProblem::Unasked)?;
    if !answer.success {
        return Err(ServerProblem::Gone(format!("no kitty answers at {address}: {}", answer.stderr.trim())));
    }
    let tree: serde_json::Value = serde_json::from_str(&answer.stdout)
        .map_err(|error| ServerProblem::Unasked(format!("kitty @ ls gave no JSON: {error}")))?;
    let mut windows = HashMap::new();
    for os_window in tree.as_array().into_iter().flatten() {
        for tab in os_window["tabs"].as_array().into_iter().flatten() {
            for window in tab["windows"].as_array().into_iter().flatten() {
                if let (Some(id), Some(pid)) = (window["id"].as_u64(), window["pid"].as_u64()) {
                    windows.insert(id.to_string(), u32::try_from(pid).unwrap_or(0));
                }
            }
        }
    }
    Ok(windows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn location(multiplexer: &str, server: &str, pane: &str) -> ScreenLocation {
        ScreenLocation {
            multiplexer: Some(multiplexer.into()),
            server: Some(server.into()),
            pane: Some(pane.into()),
            ..ScreenLocation::default()
        }
    }

    #[test]
    fn a_tmux_server_whose_socket_is_gone_makes_its_locations_stale() {
        let mut verifier = Verifier::new();
        let me = Pid::new(std::process::id()).unwrap();
        let check = verifier.check(&location("tmux", "/nonexistent/tmux-socket", "%3"), me);
        assert_eq!(check.status, LocationStatus::Stale, "{check:?}");
        assert!(check.reason.contains("is gone"), "{check:?}");
        assert_eq!(check.shown, "tmux %3");
    }

    #[test]
    fn a_screen_session_that_is_no_ancestor_is_stale_without_asking_screen() {
        let mut verifier = Verifier::new();
        let me = Pid::new(std::process::id()).unwrap();
        // pid 4194304 is above any pid_max: never an ancestor.
        let check = verifier.check(&location("screen", "4194304.dev", "2"), me);
        assert_eq!(check.status, LocationStatus::Stale, "{check:?}");
        assert_eq!(check.shown, "screen dev:2");
    }

    #[test]
    fn a_terminal_is_current_while_the_owner_still_has_it() {
        let mut verifier = Verifier::new();
        let me = Pid::new(std::process::id()).unwrap();
        let tty = controlling_terminal(me.get());
        let recorded = ScreenLocation { tty: Some("pts/4000".into()), ..ScreenLocation::default() };
        let check = verifier.check(&recorded, me);
        assert_eq!(check.status, LocationStatus::Stale, "{check:?}");
        if let Some(tty) = tty {
            let recorded = ScreenLocation { tty: Some(tty), ..ScreenLocation::default() };
            assert_eq!(verifier.check(&recorded, me).status, LocationStatus::Current);
        }
    }
}
