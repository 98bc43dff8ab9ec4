//! Running a binary: where the built binaries are, a clean environment, a
//! deadline for every command, and what a finished command did.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::hooks;

/// How long any single command may run before a test calls it hung. Far
/// above anything a healthy binary needs; it only turns a hang into a
/// failure instead of a stuck test run.
pub const COMMAND_DEADLINE: Duration = Duration::from_secs(30);

/// The built binary `name`, next to the test executable's `deps/` folder.
pub fn binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test executable has a path");
    // <target>/<profile>/deps/<test>-<hash> → <target>/<profile>/<name>
    let profile_dir =
        exe.parent().and_then(Path::parent).expect("the test executable sits in <profile>/deps");
    let path = profile_dir.join(name);
    assert!(
        path.is_file(),
        "{} is missing; build the binaries first: cargo build --workspace --bins",
        path.display()
    );
    path
}

/// What a finished command did.
#[derive(Debug)]
pub struct Outcome {
    pub description: String,
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    pub stderr: String,
    pub elapsed: Duration,
}

impl Outcome {
    /// The exit code; a death by signal is a test failure in itself.
    pub fn code(&self) -> i32 {
        self.status
            .code()
            .unwrap_or_else(|| panic!("{} died by a signal: {:?}\n{}", self.description, self.status, self))
    }

    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    /// Asserts the exit code, showing everything the command said when not.
    pub fn expect_code(&self, expected: i32) -> &Outcome {
        assert_eq!(self.code(), expected, "unexpected exit code\n{self}");
        self
    }

    /// Asserts success and parses stdout as JSON.
    pub fn json(&self) -> Value {
        self.expect_code(0);
        serde_json::from_slice(&self.stdout)
            .unwrap_or_else(|error| panic!("stdout is not JSON ({error})\n{self}"))
    }

    /// Asserts success and parses stdout as a JSON array of rows.
    pub fn rows(&self) -> Vec<Value> {
        match self.json() {
            Value::Array(rows) => rows,
            other => panic!("expected a JSON array of rows, got {other}\n{self}"),
        }
    }

    /// The problems with this command's error report; see
    /// [`error_report_problems`].
    pub fn error_line_problems(&self, tool: &str) -> Vec<String> {
        error_report_problems(&self.stderr, tool)
    }

    /// Asserts the one-line error report shape.
    pub fn expect_error_line(&self, tool: &str) -> &Outcome {
        let problems = self.error_line_problems(tool);
        assert!(problems.is_empty(), "{}\n{self}", problems.join("\n"));
        self
    }
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "command: {}\nstatus: {:?}\nelapsed: {:?}\nstdout: {}\nstderr: {}",
            self.description,
            self.status,
            self.elapsed,
            String::from_utf8_lossy(&self.stdout),
            self.stderr
        )
    }
}

/// Checks the error report shape of docs/contract.md §6: exactly one stderr line
/// `roster-<tool>: <message>`, no trailing period. Whether the message
/// splits into `<what failed>: <why>` is prose, not checked here: a
/// colon inside a value would make any such check guess. Returns the
/// problems found, empty when the report is right.
pub fn error_report_problems(stderr: &str, tool: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let lines: Vec<&str> = stderr.lines().collect();
    if lines.len() != 1 {
        problems.push(format!("stderr has {} lines, not 1: {:?}", lines.len(), stderr));
    }
    let first = lines.first().copied().unwrap_or("");
    let prefix = format!("{tool}: ");
    if !first.starts_with(&prefix) {
        problems.push(format!("stderr does not start with {prefix:?}: {first:?}"));
    } else if first[prefix.len()..].trim().is_empty() {
        problems.push(format!("stderr says nothing after {prefix:?}"));
    }
    // An error chain printed with `{:#}` whose outer link already
    // displays its source shows the cause twice ("X: X").
    let parts: Vec<&str> = first.split(": ").collect();
    if parts.windows(2).any(|pair| pair[0] == pair[1] && !pair[0].is_empty()) {
        problems.push(format!("stderr repeats its cause: {first:?}"));
    }
    if first.ends_with('.') {
        problems.push(format!("stderr ends with a period: {first:?}"));
    }
    problems
}

/// Describes a command for failure messages.
pub fn describe(command: &Command) -> String {
    let mut text = command.get_program().to_string_lossy().into_owned();
    for arg in command.get_args() {
        text.push(' ');
        text.push_str(&format!("{:?}", arg.to_string_lossy()));
    }
    let envs: Vec<String> = command
        .get_envs()
        .filter(|(key, _)| key.to_string_lossy().starts_with("ROSTER") || *key == "CLAUDE_PID")
        .map(|(key, value)| {
            format!("{}={:?}", key.to_string_lossy(), value.map(|v| v.to_string_lossy().into_owned()))
        })
        .collect();
    if !envs.is_empty() {
        text = format!("{} {text}", envs.join(" "));
    }
    text
}

/// Runs a command to its end with stdin empty, as `Command::output` would,
/// but failing the test when it outlives `COMMAND_DEADLINE`.
pub fn run_to_end(command: &mut Command) -> Finished {
    run_feeding(command, StdinFeed::Null, COMMAND_DEADLINE)
}

/// Runs a command to its end (stdin empty), killing it and failing the
/// test if it outlives `deadline`.
pub fn run_with_deadline(command: &mut Command, deadline: Duration) -> Outcome {
    let description = describe(command);
    let finished = run_feeding(command, StdinFeed::Null, deadline);
    let stderr = finished.stderr_text();
    Outcome {
        description,
        status: finished.status,
        stdout: finished.stdout,
        stderr,
        elapsed: finished.elapsed,
    }
}

/// What a process is given on stdin.
pub enum StdinFeed {
    /// These bytes, then end of file.
    Bytes(Vec<u8>),
    /// A pipe nobody ever writes to or closes while the process runs.
    HeldOpen,
    /// These bytes, then the pipe is held open until the process ends.
    BytesHeldOpen(Vec<u8>),
    /// `/dev/null`.
    Null,
}

/// A process that ran to its end.
#[derive(Debug)]
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// From spawn to exit, as the test saw it.
    pub elapsed: Duration,
}

impl Finished {
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }

    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }
}

/// Runs `command` with `stdin`, collecting stdout and stderr. Kills it and fails the test
/// when it has not ended within `deadline`.
pub fn run_to_completion(mut command: Command, stdin: StdinFeed, deadline: Duration) -> Finished {
    run_feeding(&mut command, stdin, deadline)
}

/// The one way the harness starts a binary and waits for it: `run_to_completion` and
/// `run_with_deadline` both come here.
fn run_feeding(command: &mut Command, stdin: StdinFeed, deadline: Duration) -> Finished {
    command.stdin(match stdin {
        StdinFeed::Null => Stdio::null(),
        _ => Stdio::piped(),
    });
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    let started = Instant::now();
    let mut child = spawn_retrying_busy_text(command);
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    let held_stdin = match stdin {
        StdinFeed::Bytes(bytes) => {
            let mut pipe = child.stdin.take().expect("piped stdin");
            // A reader that gives up early (a huge payload) closes the pipe: the write error
            // is expected then, and the process's result is what the test looks at.
            std::thread::spawn(move || {
                let _ = pipe.write_all(&bytes);
            });
            None
        }
        StdinFeed::HeldOpen => child.stdin.take(),
        StdinFeed::BytesHeldOpen(bytes) => {
            let mut pipe = child.stdin.take().expect("piped stdin");
            pipe.write_all(&bytes).expect("write the payload");
            Some(pipe)
        }
        StdinFeed::Null => None,
    };
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(child.wait_with_output());
    });
    let output = match receiver.recv_timeout(deadline) {
        Ok(output) => output.expect("waiting for the process"),
        Err(_) => {
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
            panic!("{} still ran after {deadline:?}; killed it (a hang)", describe(command));
        }
    };
    let elapsed = started.elapsed();
    drop(held_stdin);
    Finished { status: output.status, stdout: output.stdout, stderr: output.stderr, elapsed }
}

/// Spawns, retrying while the kernel says "text file busy": a freshly copied executable can
/// still be open for writing in a child another test thread forked at that instant, until
/// that child execs. Bounded by `MACHINE_DEADLINE`.
pub fn spawn_retrying_busy_text(command: &mut Command) -> Child {
    let started = Instant::now();
    loop {
        match command.spawn() {
            Ok(child) => return child,
            Err(error)
                if error.raw_os_error() == Some(nix::errno::Errno::ETXTBSY as i32)
                    && started.elapsed() < hooks::MACHINE_DEADLINE =>
            {
                std::thread::yield_now();
            }
            Err(error) => panic!("cannot start {command:?}: {error}"),
        }
    }
}

/// Waits for a child at most `deadline`; on timeout kills and reaps it and
/// returns `None`. Polls with a short, growing pause: the condition is the
/// child's exit, the pause only bounds how often it is checked.
pub fn wait_with_deadline(child: &mut Child, deadline: Duration) -> Option<ExitStatus> {
    let until = Instant::now() + deadline;
    let mut pause = Duration::from_micros(100);
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return Some(status);
        }
        if Instant::now() >= until {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(5));
    }
}

/// Polls `condition` until it holds or `deadline` passes; returns whether
/// it held.
pub fn poll_until(deadline: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + deadline;
    let mut pause = Duration::from_micros(100);
    loop {
        if condition() {
            return true;
        }
        if Instant::now() >= until {
            return false;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(5));
    }
}

/// Clears `command`'s environment down to the test runner's `PATH` and
/// `home` as `HOME`, so no `ROSTER_*`, `CLAUDE_PID`, `XDG_*` or harness
/// export of the machine running the tests leaks in. Every black-box test
/// starts its processes from here and adds what it tests.
pub fn clean_environment<'a>(command: &'a mut Command, home: &Path) -> &'a mut Command {
    command.env_clear();
    if let Some(path) = std::env::var_os("PATH") {
        command.env("PATH", path);
    }
    command.env("HOME", home)
}

/// What a running child writes to `pipe`, gathered as it comes (lossy
/// UTF-8) on a thread of its own, so that a test can read it at any time
/// while the child runs.
pub fn gather_output(
    mut pipe: impl std::io::Read + Send + 'static,
) -> std::sync::Arc<std::sync::Mutex<String>> {
    let gathered = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let sink = gathered.clone();
    std::thread::spawn(move || {
        let mut buffer = [0; 4096];
        while let Ok(count) = pipe.read(&mut buffer) {
            if count == 0 {
                break;
            }
            sink.lock().unwrap().push_str(&String::from_utf8_lossy(&buffer[..count]));
        }
    });
    gathered
}
