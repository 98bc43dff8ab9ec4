//! A terminal for a harness's interactive TUI in the e2e run: the harness runs in a tmux
//! server of its own (its socket in the session's directory, so nothing else's tmux is
//! touched), detached, at a fixed size. The run types into it and reads its screen as a
//! person would; a TUI only shows its permission dialogs, and only keeps its session open
//! between turns, on a terminal. tmux rather than a pty crate: it keeps the screen as the
//! TUI drew it (`capture-pane`), which is what the run must wait on.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, ensure};

/// Columns and lines of the terminal: wide enough that no TUI wraps a prompt or a dialog.
const COLUMNS: u32 = 200;
const LINES: u32 = 50;

/// How often a wait looks at the screen again.
const SCREEN_POLL: Duration = Duration::from_millis(100);

/// One tmux server running one program in one window. Every command names the
/// program's pane, so that another session on the server (a client's elsewhere) changes
/// nothing of what the run reads and types.
pub struct Terminal {
    tmux: PathBuf,
    socket: PathBuf,
    /// The program's pane (`%N`).
    pane: String,
}

impl Terminal {
    /// Starts `program` with `arguments` in `directory`, its environment exactly
    /// `environment` and the two variables tmux gives every pane, `TMUX` and `TMUX_PANE`,
    /// as a harness a person starts in a tmux pane has them (through `env -i`, so nothing
    /// else of this process's environment or tmux's own reaches it), the tmux server's
    /// socket at `socket`.
    pub fn start(
        tmux: &Path,
        socket: &Path,
        directory: &Path,
        environment: &[(String, String)],
        program: &Path,
        arguments: &[String],
    ) -> anyhow::Result<Terminal> {
        let mut terminal =
            Terminal { tmux: tmux.to_path_buf(), socket: socket.to_path_buf(), pane: String::new() };
        let mut command = terminal.command();
        command
            .args(["new-session", "-d", "-P", "-F", "#{pane_id}"])
            .args(["-x", &COLUMNS.to_string(), "-y", &LINES.to_string(), "-c"])
            .arg(directory)
            .args(["--", "sh", "-c", r#"exec env -i TMUX="$TMUX" TMUX_PANE="$TMUX_PANE" "$@""#, "sh"])
            .args(environment.iter().map(|(key, value)| format!("{key}={value}")))
            .arg(program)
            .args(arguments)
            .current_dir(directory);
        let output = command.output().context("starting tmux")?;
        ensure!(
            output.status.success(),
            "tmux new-session failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        );
        terminal.pane = String::from_utf8_lossy(&output.stdout).trim().to_owned();
        ensure!(terminal.pane.starts_with('%'), "tmux new-session named no pane: {:?}", terminal.pane);
        Ok(terminal)
    }

    /// The socket of the terminal's tmux server.
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// The program's pane (`%N`).
    pub fn pane(&self) -> &str {
        &self.pane
    }

    /// `tmux -S <socket> -f /dev/null` with nothing of this process's environment but PATH
    /// (the server it starts keeps the environment it was started with).
    fn command(&self) -> Command {
        let mut command = Command::new(&self.tmux);
        command
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .arg("-S")
            .arg(&self.socket)
            .args(["-f", "/dev/null"])
            .stdin(Stdio::null());
        command
    }

    /// Runs `tmux arguments…` against the terminal's server; its stdout.
    pub fn run(&self, arguments: &[&str]) -> anyhow::Result<String> {
        let output = self.command().args(arguments).output().context("running tmux")?;
        ensure!(
            output.status.success(),
            "tmux {} failed ({}): {}",
            arguments.join(" "),
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        );
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }

    /// The pid of the program in the window (`env` execs it), while it runs.
    pub fn program_pid(&self) -> anyhow::Result<u32> {
        let text = self.run(&["display-message", "-p", "-t", &self.pane, "#{pane_pid}"])?;
        text.trim().parse().with_context(|| format!("tmux gave no pane pid: {text:?}"))
    }

    /// The screen as it shows now, one string, lines joined.
    pub fn screen(&self) -> String {
        self.run(&["capture-pane", "-p", "-t", &self.pane]).unwrap_or_default()
    }

    /// Types `text` as it is (no key names).
    pub fn type_text(&self, text: &str) -> anyhow::Result<()> {
        self.run(&["send-keys", "-t", &self.pane, "-l", text]).map(drop)
    }

    /// Presses one key by its tmux name (`Enter`, `Escape`, `Down`, `C-c`, `1`).
    pub fn press(&self, key: &str) -> anyhow::Result<()> {
        self.run(&["send-keys", "-t", &self.pane, key]).map(drop)
    }

    /// Waits until the screen shows `text`, at most `deadline`; the error carries the
    /// screen as it was.
    pub fn wait_for_text(&self, text: &str, deadline: Duration) -> anyhow::Result<()> {
        self.wait_for_screen(&format!("{text:?}"), deadline, |screen| screen.contains(text))
    }

    /// Waits until `shows` holds for the screen, at most `deadline`.
    pub fn wait_for_screen(
        &self,
        what: &str,
        deadline: Duration,
        shows: impl Fn(&str) -> bool,
    ) -> anyhow::Result<()> {
        let started = Instant::now();
        loop {
            let screen = self.screen();
            if shows(&screen) {
                return Ok(());
            }
            ensure!(
                started.elapsed() < deadline,
                "the terminal did not show {what} within {deadline:?}; it shows:\n{}",
                screen_excerpt(&screen)
            );
            std::thread::sleep(SCREEN_POLL);
        }
    }

    /// Ends the tmux server, which hangs up on the program.
    pub fn close(&self) {
        let _ = self.run(&["kill-server"]);
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        self.close();
    }
}

/// The screen's non-blank lines, for a report.
pub fn screen_excerpt(screen: &str) -> String {
    screen
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| format!("  | {line}"))
        .collect::<Vec<_>>()
        .join("\n")
}
