//! Running one roster tool the way the soak needs: output to unnamed files
//! (so a tool never blocks on a full pipe nobody reads), an optional
//! SIGKILL at a chosen instant, and a deadline that turns a hang into a
//! finding instead of a stuck run. Waiting goes through a pidfd, so a kill
//! can never reach a reused pid.

use std::fs::File;
use std::io::{Read, Seek};
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::Context;
use nix::sys::signal::Signal;
use tests::process_exit::exits_within;

/// No roster command may take this long; one that does has hung.
pub const HANG_DEADLINE: Duration = Duration::from_secs(30);

/// How a tool run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    Exited(i32),
    /// The soak killed it on purpose, at a random instant.
    KilledOnPurpose,
    /// Died of a signal the soak did not send (a crash).
    Signalled(i32),
    /// Still running at `HANG_DEADLINE`; killed.
    Hung,
}

/// A finished tool run.
#[derive(Debug)]
pub struct ToolRun {
    pub ending: Ending,
    pub stdout: Vec<u8>,
    pub stderr: String,
}

impl ToolRun {
    pub fn succeeded(&self) -> bool {
        self.ending == Ending::Exited(0)
    }

    /// The first line of stderr, for reports.
    pub fn first_error_line(&self) -> &str {
        self.stderr.lines().next().unwrap_or("")
    }

    pub fn describe(&self) -> String {
        let ending = match self.ending {
            Ending::Exited(code) => format!("exit {code}"),
            Ending::KilledOnPurpose => "killed".to_owned(),
            Ending::Signalled(signal) => format!("signal {signal}"),
            Ending::Hung => format!("hung past {} s", HANG_DEADLINE.as_secs()),
        };
        match self.first_error_line() {
            "" => ending,
            line => format!("{ending}: {line}"),
        }
    }
}

/// Runs `command` to its end. With `kill_after`, it is sent SIGKILL at that
/// instant if it is still running then (`KilledOnPurpose` only when the
/// kill really landed on a running process).
pub fn run_tool(
    mut command: Command,
    stdin: Option<File>,
    kill_after: Option<Duration>,
) -> anyhow::Result<ToolRun> {
    let stdout = tempfile::tempfile().context("create a file for a tool's stdout")?;
    let stderr = tempfile::tempfile().context("create a file for a tool's stderr")?;
    command
        .stdin(stdin.map_or_else(Stdio::null, Stdio::from))
        .stdout(stdout.try_clone()?)
        .stderr(stderr.try_clone()?);
    let mut child = command.spawn().with_context(|| format!("spawn {:?}", command.get_program()))?;
    let ending = wait_for(&mut child, kill_after)?;
    Ok(ToolRun {
        ending,
        stdout: read_all(stdout)?,
        stderr: String::from_utf8_lossy(&read_all(stderr)?).into_owned(),
    })
}

fn read_all(mut file: File) -> anyhow::Result<Vec<u8>> {
    file.rewind()?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Waits for `child`, killing it at `kill_after` and at the hang deadline.
pub fn wait_for(child: &mut Child, kill_after: Option<Duration>) -> anyhow::Result<Ending> {
    // Our own unreaped child: its pid cannot be reused before we wait for
    // it, so the pidfd names exactly that child.
    let pidfd = tests::process_exit::pidfd_of(child.id()).context("pidfd_open on a tool")?;
    let mut killed_on_purpose = false;
    if let Some(delay) = kill_after
        && !exits_within(&pidfd, delay).context("poll a tool's pidfd")?
    {
        child.kill().context("kill a tool")?;
        killed_on_purpose = true;
    }
    let mut hung = false;
    if !killed_on_purpose && !exits_within(&pidfd, HANG_DEADLINE).context("poll a tool's pidfd")? {
        child.kill().context("kill a hung tool")?;
        hung = true;
    }
    let status = child.wait().context("wait for a tool")?;
    Ok(match (status.code(), status.signal()) {
        _ if hung => Ending::Hung,
        (Some(code), _) => Ending::Exited(code),
        (None, Some(signal)) if killed_on_purpose && signal == Signal::SIGKILL as i32 => {
            Ending::KilledOnPurpose
        }
        (None, Some(signal)) => Ending::Signalled(signal),
        (None, None) => Ending::Signalled(0),
    })
}
