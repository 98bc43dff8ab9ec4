//! Going to a session: the commands that bring a checked location to the
//! front, through the multiplexer's or the terminal's own focus (a window
//! manager never lets another program raise a window under Wayland, so
//! roster aims at the pane, not the window). tmux: `switch-client` on the
//! right server, to the pane's session, window and pane, for the most
//! recently active client (`select-pane` alone does not cross sessions);
//! GNU screen: `select` in the session; kitty: `focus-window`; WezTerm:
//! `activate-pane`. Zellij has no command that focuses a pane by id from
//! outside, and a plain terminal none at all: they are said so.

use std::time::Duration;

use registry_core::record::{LocationCheck, LocationStatus, ScreenLocation};

use crate::run::{TmuxSilence, ask_tmux_server, run_bounded};

/// The longest a multiplexer is given to say which clients it has.
const ANSWER_BOUND: Duration = Duration::from_secs(2);

/// How to go to a session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FocusPlan {
    /// The command lines to run, in order: a program and its arguments.
    pub commands: Vec<Vec<String>>,
    /// What they do, in words.
    pub what: String,
}

/// Why a session cannot be gone to from here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FocusRefusal {
    /// Its location no longer holds: it is never focused.
    Stale(String),
    /// It runs in a multiplexer no client is attached to: `attach` is the
    /// command line that attaches one there.
    NoClient { why: String, attach: String },
    /// It shows where nothing here can bring it to the front (a terminal of
    /// its own, Zellij), or nowhere known.
    NotFocusable(String),
}

/// The plan that takes a client to `location` as `check` found it; for
/// tmux, `client` chooses the client (else the most recently active one).
pub fn focus_plan(
    location: &ScreenLocation,
    check: &LocationCheck,
    client: Option<&str>,
) -> Result<FocusPlan, FocusRefusal> {
    if check.status == LocationStatus::Stale {
        return Err(FocusRefusal::Stale(check.reason.clone()));
    }
    let server = location.server.clone().unwrap_or_default();
    let pane = location.pane.clone().unwrap_or_default();
    match location.multiplexer.as_deref() {
        Some("tmux") => tmux_plan(&server, &pane, &check.shown, client),
        Some("screen") => screen_plan(&server, &pane),
        Some("kitty") => Ok(FocusPlan {
            commands: vec![words(&[
                "kitty",
                "@",
                "--to",
                &server,
                "focus-window",
                "--match",
                &format!("id:{pane}"),
            ])],
            what: format!("focus kitty window {pane}"),
        }),
        Some("wezterm") => Ok(FocusPlan {
            commands: vec![words(&[
                "env",
                &format!("WEZTERM_UNIX_SOCKET={server}"),
                "wezterm",
                "cli",
                "activate-pane",
                "--pane-id",
                &pane,
            ])],
            what: format!("activate WezTerm pane {pane}"),
        }),
        Some("zellij") => Err(FocusRefusal::NotFocusable(format!(
            "Zellij cannot focus a pane by its id from outside: attach to its session with `zellij attach \
             {server}` and go to pane {pane}"
        ))),
        _ => Err(FocusRefusal::NotFocusable(match (&location.tty, &location.terminal) {
            (Some(tty), Some(terminal)) => format!(
                "it runs on {tty} in {terminal}, in no multiplexer: nothing here can bring that terminal to the front"
            ),
            (Some(tty), None) => {
                format!(
                    "it runs on {tty}, in no multiplexer: nothing here can bring that terminal to the front"
                )
            }
            _ => "nothing says where it shows: it was registered from outside a terminal".to_owned(),
        })),
    }
}

fn words(parts: &[&str]) -> Vec<String> {
    parts.iter().map(|part| (*part).to_owned()).collect()
}

/// Switches a tmux client to the pane: its session, window and pane.
fn tmux_plan(socket: &str, pane: &str, shown: &str, client: Option<&str>) -> Result<FocusPlan, FocusRefusal> {
    let attach = format!(
        "tmux -S {socket} attach-session -t {pane} \\; select-window -t {pane} \\; select-pane -t {pane}"
    );
    let client = match client {
        Some(client) => client.to_owned(),
        None => most_recent_tmux_client(socket)?.ok_or_else(|| FocusRefusal::NoClient {
            why: format!("no client is attached to the tmux server {socket}"),
            attach: attach.clone(),
        })?,
    };
    Ok(FocusPlan {
        commands: vec![words(&[
            "tmux",
            "-S",
            socket,
            "switch-client",
            "-c",
            &client,
            "-t",
            pane,
            ";",
            "select-window",
            "-t",
            pane,
            ";",
            "select-pane",
            "-t",
            pane,
        ])],
        what: format!("switch the tmux client {client} to pane {pane} ({shown})"),
    })
}

/// The tmux client most recently active on the server at `socket`; `None`
/// when none is attached.
fn most_recent_tmux_client(socket: &str) -> Result<Option<String>, FocusRefusal> {
    let clients =
        ask_tmux_server(socket, &["list-clients", "-F", "#{client_activity} #{client_name}"], ANSWER_BOUND)
            .map_err(|silence| match silence {
            TmuxSilence::NotAsked(why) => FocusRefusal::NotFocusable(why),
            TmuxSilence::NoServer(why) => FocusRefusal::Stale(why),
        })?;
    Ok(clients
        .lines()
        .filter_map(|line| {
            let (activity, name) = line.split_once(' ')?;
            Some((activity.parse::<u64>().unwrap_or(0), name.to_owned()))
        })
        .max_by_key(|(activity, _)| *activity)
        .map(|(_, name)| name))
}

/// Selects the window in the screen session, for the displays attached.
fn screen_plan(session: &str, window: &str) -> Result<FocusPlan, FocusRefusal> {
    let listing =
        run_bounded("screen", &words(&["-ls", session]), ANSWER_BOUND).map_err(FocusRefusal::NotFocusable)?;
    let attached = listing
        .stdout
        .lines()
        .any(|line| line.split_whitespace().next() == Some(session) && line.contains("(Attached)"));
    if !attached {
        return Err(FocusRefusal::NoClient {
            why: format!("no display is attached to the screen session {session}"),
            attach: format!("screen -r {session} -p {window}"),
        });
    }
    Ok(FocusPlan {
        commands: vec![words(&["screen", "-S", session, "-X", "select", window])],
        what: format!("select window {window} of the screen session {session}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checked(status: LocationStatus) -> LocationCheck {
        LocationCheck { status, reason: "why".into(), shown: "tmux %3".into() }
    }

    #[test]
    fn a_stale_location_is_never_focused() {
        let location = ScreenLocation {
            multiplexer: Some("kitty".into()),
            server: Some("unix:/tmp/kitty".into()),
            pane: Some("5".into()),
            ..ScreenLocation::default()
        };
        assert_eq!(
            focus_plan(&location, &checked(LocationStatus::Stale), None),
            Err(FocusRefusal::Stale("why".into()))
        );
        let plan = focus_plan(&location, &checked(LocationStatus::Current), None).unwrap();
        assert_eq!(
            plan.commands,
            [words(&["kitty", "@", "--to", "unix:/tmp/kitty", "focus-window", "--match", "id:5"])]
        );
    }

    #[test]
    fn a_given_tmux_client_is_switched_across_sessions_to_the_pane() {
        let location = ScreenLocation {
            multiplexer: Some("tmux".into()),
            server: Some("/tmp/tmux-1000/default".into()),
            pane: Some("%3".into()),
            ..ScreenLocation::default()
        };
        let plan = focus_plan(&location, &checked(LocationStatus::Current), Some("/dev/pts/9")).unwrap();
        let line = plan.commands[0].join(" ");
        assert_eq!(
            line,
            "tmux -S /tmp/tmux-1000/default switch-client -c /dev/pts/9 -t %3 ; select-window -t %3 ; select-pane -t %3"
        );
    }

    #[test]
    fn a_terminal_of_its_own_and_zellij_say_what_cannot_be_done() {
        let on_tty = ScreenLocation { tty: Some("pts/3".into()), ..ScreenLocation::default() };
        let refusal = focus_plan(&on_tty, &checked(LocationStatus::Current), None).unwrap_err();
        assert!(matches!(&refusal, FocusRefusal::NotFocusable(why) if why.contains("pts/3")), "{refusal:?}");
        let zellij = ScreenLocation {
            multiplexer: Some("zellij".into()),
            server: Some("work".into()),
            pane: Some("2".into()),
            ..ScreenLocation::default()
        };
        let refusal = focus_plan(&zellij, &checked(LocationStatus::Unchecked), None).unwrap_err();
        assert!(matches!(&refusal, FocusRefusal::NotFocusable(why) if why.contains("zellij attach work")));
    }
}
