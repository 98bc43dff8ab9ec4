//! Whether a session is the one in front of its user now, so that no
//! notice nags about the pane they are looking at. Asked of the
//! multiplexer or terminal that shows it:
//! - tmux: the pane is the active pane of the current window of a client
//!   attached to its server whose flags say `focused` (tmux clears that
//!   when the outer terminal reports it lost the focus, with
//!   `focus-events on`; without it tmux cannot tell, and an attached
//!   client counts as looking);
//! - kitty: the window is focused in a focused OS window (`kitty @ ls`);
//! - anything else (screen, WezTerm, Zellij, a plain terminal) cannot be
//!   told from outside: never in front.

use std::time::Duration;

use registry_core::record::ScreenLocation;

use crate::run::run_bounded;

/// The longest a multiplexer is given to answer.
const ANSWER_BOUND: Duration = Duration::from_secs(2);

/// The answer, with why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InFront {
    Yes(String),
    No(String),
}

/// Whether the pane or window `location` names is in front of its user
/// now. The location should be checked current first (`Verifier`): a
/// reused pane id names another session's pane.
pub fn in_front(location: &ScreenLocation) -> InFront {
    let server = location.server.as_deref().unwrap_or_default();
    let pane = location.pane.as_deref().unwrap_or_default();
    match location.multiplexer.as_deref() {
        Some("tmux") => tmux_in_front(server, pane),
        Some("kitty") => kitty_in_front(server, pane),
        Some(other) => InFront::No(format!("{other} does not say which pane its user looks at")),
        None => InFront::No("a terminal of its own does not say whether it has the focus".to_owned()),
    }
}

fn tmux_in_front(socket: &str, pane: &str) -> InFront {
    let arguments =
        ["-S", socket, "list-clients", "-F", "#{pane_id} #{client_flags} #{client_name}"].map(str::to_owned);
    let answer = match run_bounded("tmux", &arguments, ANSWER_BOUND) {
        Ok(answer) if answer.success => answer,
        Ok(answer) => {
            return InFront::No(format!("tmux on {socket} did not answer: {}", answer.stderr.trim()));
        }
        Err(why) => return InFront::No(why),
    };
    tmux_clients_show(&answer.stdout, pane)
}

/// Reads `list-clients -F '#{pane_id} #{client_flags} #{client_name}'`.
fn tmux_clients_show(listing: &str, pane: &str) -> InFront {
    for line in listing.lines() {
        let mut fields = line.splitn(3, ' ');
        let (Some(shown), Some(flags), client) = (fields.next(), fields.next(), fields.next()) else {
            continue;
        };
        let flags: Vec<&str> = flags.split(',').collect();
        if shown == pane && flags.contains(&"attached") && flags.contains(&"focused") {
            return InFront::Yes(format!(
                "pane {pane} is the active pane of the focused tmux client {}",
                client.unwrap_or("?")
            ));
        }
    }
    InFront::No(format!("no focused tmux client shows pane {pane}"))
}

fn kitty_in_front(address: &str, window: &str) -> InFront {
    let arguments = ["@", "--to", address, "ls"].map(str::to_owned);
    let answer = match run_bounded("kitty", &arguments, ANSWER_BOUND) {
        Ok(answer) if answer.success => answer,
        Ok(answer) => {
            return InFront::No(format!("kitty at {address} did not answer: {}", answer.stderr.trim()));
        }
        Err(why) => return InFront::No(why),
    };
    let Ok(tree) = serde_json::from_str::<serde_json::Value>(&answer.stdout) else {
        return InFront::No("kitty @ ls gave no JSON".to_owned());
    };
    for os_window in tree.as_array().into_iter().flatten() {
        for tab in os_window["tabs"].as_array().into_iter().flatten() {
            for candidate in tab["windows"].as_array().into_iter().flatten() {
                let is_it = candidate["id"].as_u64().is_some_and(|id| id.to_string() == window);
                if is_it && candidate["is_focused"] == true && os_window["is_focused"] == true {
                    return InFront::Yes(format!("kitty window {window} has the focus"));
                }
            }
        }
    }
    InFront::No(format!("kitty window {window} does not have the focus"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pane_is_in_front_only_for_an_attached_focused_client_showing_it() {
        let listing = "%1 attached,focused,UTF-8 /dev/pts/2\n%4 attached,UTF-8 /dev/pts/5\n";
        assert!(matches!(tmux_clients_show(listing, "%1"), InFront::Yes(_)));
        assert!(matches!(tmux_clients_show(listing, "%4"), InFront::No(_)), "a client without the focus");
        assert!(matches!(tmux_clients_show(listing, "%2"), InFront::No(_)), "no client shows it");
        assert!(matches!(tmux_clients_show("", "%1"), InFront::No(_)), "no client at all");
    }

    #[test]
    fn what_cannot_be_told_is_never_in_front() {
        let screen = ScreenLocation { multiplexer: Some("screen".into()), ..ScreenLocation::default() };
        assert!(matches!(in_front(&screen), InFront::No(_)));
        assert!(matches!(in_front(&ScreenLocation::default()), InFront::No(_)));
    }
}
