//! Running one roster tool the way the soak needs: output to unnamed files
//! (so a tool never blocks on a full pipe nobody reads), an optional
//! SIGKILL at a chosen instant, and a deadline that turns a hang into a
//! finding instead of a stuck run. Waiting goes through a pidfd, so a kill
//! can never reach a reused pid.

use std::fs::File;
use std::io::{Read, Seek};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::Context;
use nix::libc;

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
    let pidfd = open_pidfd(child.id())?;
    let mut killed_on_purpose = false;
    if let Some(delay) = kill_after
        && !exits_within(&pidfd, delay)?
    {
        child.kill().context("kill a tool")?;
        killed_on_purpose = true;
    }
    let mut hung = false;
    if !killed_on_purpose && !exits_within(&pidfd, HANG_DEADLINE)? {
        child.kill().context("kill a hung tool")?;
        hung = true;
    }
    let status = child.wait().context("wait for a tool")?;
    Ok(match (status.code(), status.signal()) {
        _ if hung => Ending::Hung,
        (Some(code), _) => Ending::Exited(code),
        (None, Some(libc::SIGKILL)) if killed_on_purpose => Ending::KilledOnPurpose,
        (None, Some(signal)) => Ending::Signalled(signal),
        (None, None) => Ending::Signalled(0),
    })
}

/// A pidfd on our own unreaped child: its pid cannot be reused before we
/// wait for it, so the pidfd names exactly that child.
fn open_pidfd(pid: u32) -> anyhow::Result<OwnedFd> {
    // SAFETY: pidfd_open takes a pid and flags and returns a new fd or -1.
    let raw = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0 as libc::c_uint) };
    if raw < 0 {
        return Err(std::io::Error::last_os_error()).context("pidfd_open on a tool");
    }
    // SAFETY: the kernel just returned this fd and nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(raw as i32) })
}

/// Whether the process behind `pidfd` exits within `timeout`.
fn exits_within(pidfd: &OwnedFd, timeout: Duration) -> anyhow::Result<bool> {
    let deadline = Instant::now() + timeout;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let mut poll = libc::pollfd { fd: pidfd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        let milliseconds = left.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32;
        // SAFETY: one valid pollfd.
        let ready = unsafe { libc::poll(&mut poll, 1, milliseconds) };
        if ready > 0 {
            return Ok(true);
        }
        if ready == 0 {
            // poll sleeps whole milliseconds; a sub-millisecond kill delay
            // rounds up, which is as random as the delay itself.
            return Ok(false);
        }
        let error = std::io::Error::last_os_error();
        if error.kind() != std::io::ErrorKind::Interrupted {
            return Err(error).context("poll a tool's pidfd");
        }
    }
}

/// A small, fast, seedable random source (xorshift64*): the soak needs
/// unpredictable instants, not cryptography, and no dependency for it.
#[derive(Clone, Debug)]
pub struct Random(u64);

impl Random {
    pub fn seeded(seed: u64) -> Random {
        Random(seed.max(1))
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `0..bound` (`bound` > 0).
    pub fn below(&mut self, bound: u64) -> u64 {
        self.next_u64() % bound
    }

    /// True with probability `percent` / 100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    /// A duration uniform in `0..max`.
    pub fn duration_below(&mut self, max: Duration) -> Duration {
        Duration::from_micros(self.below(max.as_micros().max(1) as u64))
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        if items.is_empty() { None } else { items.get(self.below(items.len() as u64) as usize) }
    }
}
