//! The `terminal` backend: a notice written to the terminal roster-notify
//! runs in, for people who live in one terminal or work over ssh. OSC 777
//! (`ESC ] 777 ; notify ; TITLE ; BODY BEL`: foot, WezTerm, Ghostty,
//! rxvt-unicode, VTE terminals) or OSC 9 (`ESC ] 9 ; TEXT BEL`: iTerm2,
//! kitty, WezTerm, Windows Terminal), then the bell. Inside tmux the
//! sequence is wrapped for passthrough (tmux's `allow-passthrough on`
//! lets it out). A terminal cannot take a notice back: withdraw does
//! nothing.

use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;

use super::{Backend, BackendError};
use crate::notice::Notice;

/// Which escape sequence carries the notice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum TerminalSequence {
    Osc777,
    Osc9,
}

pub struct TerminalBackend {
    terminal: Mutex<File>,
    sequence: TerminalSequence,
    inside_tmux: bool,
}

impl TerminalBackend {
    /// Opens the controlling terminal (`/dev/tty`, or `path`).
    pub fn open(
        path: Option<PathBuf>,
        sequence: TerminalSequence,
        inside_tmux: bool,
    ) -> Result<TerminalBackend, String> {
        let path = path.unwrap_or_else(|| PathBuf::from("/dev/tty"));
        let terminal = std::fs::OpenOptions::new().write(true).open(&path).map_err(|error| {
            format!(
                "the terminal backend writes to {}, which cannot be opened: {error}; run roster-notify in a \
                 terminal, or leave the terminal backend out (under systemd there is none)",
                path.display()
            )
        })?;
        Ok(TerminalBackend { terminal: Mutex::new(terminal), sequence, inside_tmux })
    }
}

/// The bytes of a notice: the sequence (wrapped for tmux) and the bell.
pub fn terminal_bytes(notice: &Notice, sequence: TerminalSequence, inside_tmux: bool) -> Vec<u8> {
    let title = printable(&notice.title);
    let body = printable(&notice.body);
    let sequence = match sequence {
        // `;` separates OSC 777's fields: none may hold one.
        TerminalSequence::Osc777 => {
            format!("\x1b]777;notify;{};{}\x07", title.replace(';', ","), body.replace(';', ","))
        }
        TerminalSequence::Osc9 => format!("\x1b]9;{title}: {body}\x07"),
    };
    let mut bytes = if inside_tmux {
        // DCS tmux; … ST, each ESC inside doubled.
        format!("\x1bPtmux;{}\x1b\\", sequence.replace('\x1b', "\x1b\x1b"))
    } else {
        sequence
    };
    bytes.push('\x07');
    bytes.into_bytes()
}

/// `text` without control characters, which would end or break the
/// sequence.
fn printable(text: &str) -> String {
    text.chars().map(|character| if character.is_control() { ' ' } else { character }).collect()
}

impl Backend for TerminalBackend {
    fn name(&self) -> &'static str {
        "terminal"
    }

    fn leaves_the_machine(&self) -> bool {
        false
    }

    fn show(&self, notice: &Notice) -> Result<(), BackendError> {
        let bytes = terminal_bytes(notice, self.sequence, self.inside_tmux);
        let mut terminal =
            self.terminal.lock().map_err(|_| BackendError::new("the terminal's lock is poisoned"))?;
        terminal
            .write_all(&bytes)
            .and_then(|()| terminal.flush())
            .map_err(|error| BackendError::new(format!("writing to the terminal: {error}")))
    }

    fn withdraw(&self, _: &Notice) -> Result<(), BackendError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notice::{SessionView, make_notice};
    use crate::triggers::{SessionKey, Trigger};

    fn notice() -> Notice {
        let view = SessionView {
            harness: Some("codex".into()),
            agent: Some("a;b\x1b]0;evil\x07".into()),
            waiting_for: Some("permission".into()),
            ..SessionView::default()
        };
        make_notice(
            &view,
            &SessionKey { host: None, record: "1@w.json".into() },
            Trigger::Waiting,
            0,
            5_000,
            false,
        )
    }

    #[test]
    fn osc_777_carries_title_and_body_and_rings_the_bell() {
        let bytes = String::from_utf8(terminal_bytes(&notice(), TerminalSequence::Osc777, false)).unwrap();
        assert_eq!(
            bytes,
            "\x1b]777;notify;a,b ]0,evil  (codex) waits for your permission;waiting 5s\x07\x07"
        );
    }

    #[test]
    fn osc_9_inside_tmux_is_wrapped_for_passthrough() {
        let bytes = String::from_utf8(terminal_bytes(&notice(), TerminalSequence::Osc9, true)).unwrap();
        assert!(bytes.starts_with("\x1bPtmux;\x1b\x1b]9;"), "{bytes:?}");
        assert!(bytes.ends_with("\x07\x1b\\\x07"), "{bytes:?}");
        assert_eq!(bytes.matches('\x1b').count(), 4, "{bytes:?}");
    }
}
