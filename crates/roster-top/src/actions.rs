//! What the keys do, each through the tool that already does it and
//! keeps its rules: `roster-focus` goes to a session, `roster-send`
//! queues a message (consent checked there), `roster-consent` arms and
//! disarms. The tool is the one beside roster-top's own executable, else
//! the one on PATH. Its answer (or why it refused, and its exit status)
//! becomes the status line.

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::board::Shown;

/// The longest a tool is waited for: roster-focus bounds its own focus
/// command at 5 s.
const TOOL_BOUND: Duration = Duration::from_secs(10);

/// What ran and how it ended, for the status line.
pub struct Outcome {
    pub ok: bool,
    pub text: String,
}

/// The flags every tool is given as roster-top was: the registry.
#[derive(Clone, Debug, Default)]
pub struct Passed {
    pub dir: Option<PathBuf>,
}

impl Passed {
    fn apply(&self, command: &mut Command) {
        if let Some(dir) = &self.dir {
            command.arg("--dir").arg(dir);
        }
    }
}

/// Enter / `g`: roster-focus to the session (on its host, with --host).
pub fn go_to(shown: &Shown, passed: &Passed) -> Outcome {
    let Some(pid) = shown.pid else { return refused("it has no pid to go to") };
    let mut command = Command::new(cli_support::sibling_tool("roster-focus"));
    passed.apply(&mut command);
    if let Some(host) = &shown.host {
        command.args(["--host", host]);
    }
    command.arg(pid.to_string());
    run(command, None, "roster-focus")
}

/// `s`: roster-send the text to the session; the text goes on stdin (an
/// argument would be readable by every user while the tool runs).
pub fn send(shown: &Shown, text: &str, passed: &Passed) -> Outcome {
    if shown.host.is_some() {
        return refused("roster-send reaches this machine's sessions only; send from the session's host");
    }
    let Some(pid) = shown.pid else { return refused("it has no pid to send to") };
    let mut command = Command::new(cli_support::sibling_tool("roster-send"));
    passed.apply(&mut command);
    command.args(["--to", &pid.to_string()]);
    run(command, Some(text.as_bytes()), "roster-send")
}

/// `a` / `d`: roster-consent arm or disarm for the session's owner.
pub fn consent(shown: &Shown, arm: bool, passed: &Passed) -> Outcome {
    if shown.host.is_some() {
        return refused("consent is changed on the session's own host");
    }
    let Some(pid) = shown.pid else { return refused("it has no pid") };
    let mut command = Command::new(cli_support::sibling_tool("roster-consent"));
    passed.apply(&mut command);
    command.args([if arm { "arm" } else { "disarm" }, "--pid", &pid.to_string()]);
    run(command, None, "roster-consent")
}

fn refused(why: &str) -> Outcome {
    Outcome { ok: false, text: format!("not done: {why}") }
}

/// Runs a tool to its end (bounded), its stdin `input` or nothing; its
/// first line said, or its exit status and what it said on stderr
/// (`roster-send exit 1: pid 5854 does not accept messages: …`), the
/// status first so a narrow pane still shows it.
fn run(mut command: Command, input: Option<&[u8]>, tool: &str) -> Outcome {
    command
        .stdin(if input.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env("COLUMNS", "200")
        .env("NO_COLOR", "1");
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(error) => {
            return Outcome {
                ok: false,
                text: format!("{tool} could not be run ({error}); install it beside roster-top or on PATH"),
            };
        }
    };
    if let (Some(input), Some(mut stdin)) = (input, child.stdin.take()) {
        let _ = stdin.write_all(input);
    }
    let deadline = std::time::Instant::now() + TOOL_BOUND;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if std::time::Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                let _ = child.kill();
                break None;
            }
        }
    };
    let output = child.wait_with_output();
    let (stdout, stderr) = match &output {
        Ok(output) => (first_line(&output.stdout), first_line(&output.stderr)),
        Err(_) => (OsString::new(), OsString::new()),
    };
    let (stdout, stderr) = (stdout.to_string_lossy(), stderr.to_string_lossy());
    match status {
        Some(status) if status.success() => Outcome { ok: true, text: stdout.into_owned() },
        Some(status) => {
            let code = status.code().map_or_else(|| "a signal".to_owned(), |code| code.to_string());
            let said = if stderr.is_empty() { stdout } else { stderr };
            let said = said.strip_prefix(&format!("{tool}: ")).unwrap_or(&said);
            Outcome { ok: false, text: format!("{tool} exit {code}: {said}") }
        }
        None => {
            Outcome { ok: false, text: format!("{tool} did not finish within {}s", TOOL_BOUND.as_secs()) }
        }
    }
}

/// The first non-empty line, escaped for the terminal.
fn first_line(bytes: &[u8]) -> OsString {
    let text = String::from_utf8_lossy(bytes);
    let line = text.lines().find(|line| !line.trim().is_empty()).unwrap_or("");
    cli_support::escape_for_terminal(line).into_owned().into()
}
