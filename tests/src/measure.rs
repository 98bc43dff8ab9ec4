//! Timing whole processes: one invocation described once, so the same value
//! runs it, times it (wall time, and peak memory from `wait4`) and prints
//! the shell command that reproduces it; and the statistics of repeated
//! runs. `cargo xtask bench` measures with it, and a long run that wants a
//! process's time or memory takes it from here rather than a copy.

use std::ffi::OsString;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::shell_quote;
use anyhow::{Context, bail};

/// A command line with its working directory and stdin file.
#[derive(Clone, Debug)]
pub struct Invocation {
    pub program: PathBuf,
    pub arguments: Vec<OsString>,
    pub working_directory: Option<PathBuf>,
    pub stdin_file: Option<PathBuf>,
    /// How to show the command to a person when the real argument list is
    /// too long to print (`cat *.json` for ten thousand file names).
    pub shown_as: Option<String>,
    /// Variables set for the run, over those it inherits.
    pub environment: Vec<(OsString, OsString)>,
}

/// The only variables a timed command inherits.
const KEPT_VARIABLES: [&str; 3] = ["PATH", "HOME", "LANG"];

/// Durations of repeated runs of one thing.
#[derive(Clone, Debug, Default)]
pub struct Samples {
    pub durations: Vec<Duration>,
}

impl Invocation {
    pub fn new(program: impl Into<PathBuf>) -> Invocation {
        Invocation {
            program: program.into(),
            arguments: Vec::new(),
            working_directory: None,
            stdin_file: None,
            shown_as: None,
            environment: Vec::new(),
        }
    }

    /// Sets `name` to `value` for the run.
    pub fn env(mut self, name: impl Into<OsString>, value: impl Into<OsString>) -> Invocation {
        self.environment.push((name.into(), value.into()));
        self
    }

    pub fn arg(mut self, argument: impl Into<OsString>) -> Invocation {
        self.arguments.push(argument.into());
        self
    }

    pub fn args<I: IntoIterator<Item = S>, S: Into<OsString>>(mut self, arguments: I) -> Invocation {
        self.arguments.extend(arguments.into_iter().map(Into::into));
        self
    }

    pub fn in_directory(mut self, directory: &Path) -> Invocation {
        self.working_directory = Some(directory.to_owned());
        self
    }

    pub fn stdin_from(mut self, file: &Path) -> Invocation {
        self.stdin_file = Some(file.to_owned());
        self
    }

    pub fn shown_as(mut self, shell_words: &str) -> Invocation {
        self.shown_as = Some(shell_words.to_owned());
        self
    }

    /// Runs to completion with stdout discarded, as `> /dev/null` would,
    /// and returns the wall time from spawn to exit. A non-zero exit is an
    /// error carrying what the command wrote to stderr.
    pub fn time_once(&self) -> anyhow::Result<Duration> {
        let mut command = Command::new(&self.program);
        // Everything a run depends on is on its command line: no roster or
        // harness variable of the calling shell may change what is measured.
        command
            .env_clear()
            .envs(std::env::vars_os().filter(|(name, _)| KEPT_VARIABLES.iter().any(|kept| name == kept)))
            .envs(self.environment.iter().map(|(name, value)| (name, value)));
        command.args(&self.arguments).stdout(Stdio::null()).stderr(Stdio::piped());
        if let Some(directory) = &self.working_directory {
            command.current_dir(directory);
        }
        match &self.stdin_file {
            Some(path) => {
                command.stdin(File::open(path).with_context(|| format!("open {}", path.display()))?);
            }
            None => {
                command.stdin(Stdio::null());
            }
        }
        let started = Instant::now();
        let output = command.output().with_context(|| format!("run {}", self.program.display()))?;
        let elapsed = started.elapsed();
        if !output.status.success() || !output.stderr.is_empty() {
            bail!(
                "`{}` exited with {}: {}",
                self.shell_line(),
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            );
        }
        Ok(elapsed)
    }

    /// Runs to completion like `time_once` and also returns the process's
    /// peak resident set size in bytes (`ru_maxrss` of `wait4`).
    pub fn time_and_peak_memory(&self) -> anyhow::Result<(Duration, u64)> {
        let mut command = Command::new(&self.program);
        command
            .env_clear()
            .envs(std::env::vars_os().filter(|(name, _)| KEPT_VARIABLES.iter().any(|kept| name == kept)))
            .envs(self.environment.iter().map(|(name, value)| (name, value)));
        command.args(&self.arguments).stdout(Stdio::null()).stderr(Stdio::null()).stdin(Stdio::null());
        if let Some(directory) = &self.working_directory {
            command.current_dir(directory);
        }
        let started = Instant::now();
        let child = command.spawn().with_context(|| format!("run {}", self.program.display()))?;
        let mut status = 0;
        // SAFETY: an all-zero rusage is a valid value for wait4 to fill in.
        let mut usage: nix::libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: waits for our own child, writing into the two locals.
        let waited = unsafe { nix::libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
        let elapsed = started.elapsed();
        if waited < 0 {
            bail!("wait for {}: {}", self.program.display(), std::io::Error::last_os_error());
        }
        if !(nix::libc::WIFEXITED(status) && nix::libc::WEXITSTATUS(status) == 0) {
            bail!("`{}` failed (wait status {status})", self.shell_line());
        }
        Ok((elapsed, u64::try_from(usage.ru_maxrss).unwrap_or(0) * 1024))
    }

    /// The command as a shell line, arguments quoted where needed.
    pub fn shell_line(&self) -> String {
        let mut line = match &self.shown_as {
            Some(shown) => shown.clone(),
            None => std::iter::once(&self.program.clone().into_os_string())
                .chain(&self.arguments)
                .map(|word| shell_quote(&word.to_string_lossy()).into_owned())
                .collect::<Vec<_>>()
                .join(" "),
        };
        if let Some(path) = &self.stdin_file {
            line.push_str(&format!(" < {}", shell_quote(&path.to_string_lossy())));
        }
        line.push_str(" > /dev/null");
        match &self.working_directory {
            Some(directory) => format!("(cd {} && {line})", shell_quote(&directory.to_string_lossy())),
            None => line,
        }
    }
}

impl Samples {
    pub fn push(&mut self, duration: Duration) {
        self.durations.push(duration);
    }

    fn sorted(&self) -> Vec<Duration> {
        let mut sorted = self.durations.clone();
        sorted.sort();
        sorted
    }

    /// The median (the mean of the middle two for an even count).
    pub fn median(&self) -> Duration {
        let sorted = self.sorted();
        match sorted.len() {
            0 => Duration::ZERO,
            count if count % 2 == 1 => sorted[count / 2],
            count => (sorted[count / 2 - 1] + sorted[count / 2]) / 2,
        }
    }

    pub fn min(&self) -> Duration {
        self.durations.iter().copied().min().unwrap_or_default()
    }

    pub fn max(&self) -> Duration {
        self.durations.iter().copied().max().unwrap_or_default()
    }

    /// The value below which `fraction` of the samples lie (nearest rank).
    pub fn percentile(&self, fraction: f64) -> Duration {
        let sorted = self.sorted();
        if sorted.is_empty() {
            return Duration::ZERO;
        }
        let rank = ((fraction * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
        sorted[rank - 1]
    }
}

/// Milliseconds with two decimals, the unit every figure is shown in.
pub fn milliseconds(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}
