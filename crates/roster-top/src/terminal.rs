//! The terminal roster-top takes over (raw mode, the alternate screen, the
//! cursor hidden) and gives back whatever happens: on quit, on SIGTERM or
//! SIGHUP (read through a signalfd by the event loop, so no handler runs
//! in signal context), on an error, and on a panic (a hook restores before
//! the panic is printed). Restoring is done once, however many paths ask.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use ratatui::crossterm::{cursor, execute, terminal};

/// Whether the terminal is ours now (raw, alternate screen).
static TAKEN: AtomicBool = AtomicBool::new(false);

/// Takes the terminal: raw mode, the alternate screen, no cursor; and
/// installs the panic hook that gives it back.
pub fn take() -> anyhow::Result<()> {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        previous(info);
    }));
    terminal::enable_raw_mode()
        .map_err(|error| anyhow::anyhow!("putting the terminal in raw mode: {error}"))?;
    TAKEN.store(true, Ordering::SeqCst);
    execute!(
        std::io::stdout(),
        terminal::EnterAlternateScreen,
        cursor::Hide,
        terminal::Clear(terminal::ClearType::All)
    )
    .map_err(|error| anyhow::anyhow!("entering the alternate screen: {error}"))?;
    Ok(())
}

/// Gives the terminal back as it was: the main screen, the cursor shown,
/// cooked mode. Errors are ignored: after SIGHUP there may be no terminal.
pub fn restore() {
    if !TAKEN.swap(false, Ordering::SeqCst) {
        return;
    }
    let mut out = std::io::stdout();
    let _ = execute!(out, terminal::LeaveAlternateScreen, cursor::Show);
    let _ = out.flush();
    let _ = terminal::disable_raw_mode();
}

/// Restores the terminal when dropped: an early return or an error in
/// the event loop gives it back too.
pub struct Taken;

impl Drop for Taken {
    fn drop(&mut self) {
        restore();
    }
}
