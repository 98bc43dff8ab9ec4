//! Shared helpers for the black-box tests in `tests/tests/`: where the built
//! binaries are, a private roster directory per test, owner processes that
//! die with the test, running a binary with a clean environment and a
//! deadline, and reading what it printed and wrote.
//!
//! The tests drive the real binaries as a user's shell or a harness hook
//! would, so a test can only see what a process can see. The roster
//! libraries are linked only where the harness must do exactly what they
//! do (shell quoting, pidfds, atomic writes, seeding records), never to
//! look behind a binary's back.
//!
//! The one harness of the workspace: every black-box test, the help checks
//! of the binary crates, the long runs (`tests/soak`, `tests/faults`,
//! `tests/e2e`) and `cargo xtask bench` build on it.

pub mod help;
pub mod hooks;
pub mod measure;
pub mod owners;
pub mod process_exit;
pub mod seed;
pub mod shell_completion;
pub mod strace;
pub mod workspace;

pub use harness::hook_config::shell_quote;

use std::collections::BTreeSet;
use std::ffi::{CString, OsStr};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};

/// The three registry binaries every contract test runs.
pub const REGISTRY_TOOLS: [&str; 3] = ["roster-register", "roster-list", "roster-prune"];

/// Every key of a record (docs/contract.md §3); a JSON row carries each, null where absent.
pub const RECORD_KEYS: [&str; 21] = [
    "format",
    "session_pid",
    "session_pid_source",
    "session_pid_verified",
    "owner_uid",
    "start_ticks",
    "pidfs_ino",
    "boot_id",
    "pid_ns",
    "time_ns",
    "user_ns",
    "harness",
    "harness_version",
    "agent",
    "session_id",
    "transcript_path",
    "socket",
    "cwd",
    "registrar_pid",
    "registered_at",
    "refreshed_at",
];

/// The keys a JSON row adds to the record's (docs/contract.md §6.2).
pub const ROW_EXTRA_KEYS: [&str; 7] =
    ["liveness", "liveness_reason", "problem", "consent", "should_arm", "consent_reason", "path"];

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

/// The Debian package of each external tool a test may need: what the tests
/// install with apt-get when they run as root and the tool is missing (the
/// README names every one at its test command).
pub const TOOL_PACKAGES: [(&str, &str); 17] = [
    ("apt-get", "apt"),
    ("bwrap", "bubblewrap"),
    ("dpkg-deb", "dpkg"),
    ("dpkg-shlibdeps", "dpkg-dev"),
    ("prlimit", "util-linux"),
    ("elvish", "elvish"),
    ("fish", "fish"),
    ("groff", "groff-base"),
    ("man", "man-db"),
    ("mount", "mount"),
    ("nsenter", "util-linux"),
    ("script", "bsdutils"),
    ("setpriv", "util-linux"),
    ("strace", "strace"),
    ("unshare", "util-linux"),
    ("zsh", "zsh"),
    ("flock", "util-linux"),
];

/// The full path of an external tool a test needs. A tool that is missing
/// is installed from Debian's packages where that can be done (as root,
/// with apt-get), so a fresh machine needs nothing installed by hand;
/// otherwise the test fails loudly, naming the package (a test must never
/// pass by skipping).
pub fn require_tool(name: &str) -> PathBuf {
    find_or_install_tool(name).unwrap_or_else(|| {
        let package =
            TOOL_PACKAGES.iter().find(|(tool, _)| *tool == name).map_or("unknown", |(_, package)| *package);
        panic!("this test needs `{name}` on PATH; install it (Debian package: {package}); it is not optional")
    })
}

/// The tool's path, after installing its Debian package where it was
/// missing and that can be done; `None` when it is still missing.
pub fn find_or_install_tool(name: &str) -> Option<PathBuf> {
    if let Some(path) = find_on_path(name) {
        return Some(path);
    }
    let (_, package) = TOOL_PACKAGES.iter().find(|(tool, _)| *tool == name)?;
    install_package(name, package);
    find_on_path(name)
}

/// The first executable file called `name` in a directory of `PATH`.
pub fn find_on_path(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path).map(|dir| dir.join(name)).find(|candidate| {
        std::fs::metadata(candidate).is_ok_and(|meta| meta.is_file() && meta.mode() & 0o111 != 0)
    })
}

/// `apt-get install` of the package that holds `tool`, one test process at
/// a time (a lock file serializes the test binaries that run at once), and
/// one line on stderr saying so: installing software on the machine must
/// never happen unannounced. Best effort: the caller looks for the tool
/// again and fails loudly if it is still missing.
fn install_package(tool: &str, package: &str) {
    if !nix::unistd::geteuid().is_root() || find_on_path("apt-get").is_none() {
        return;
    }
    let Ok(lock) =
        File::options().create(true).truncate(false).write(true).open("/tmp/roster-tests-apt.lock")
    else {
        return;
    };
    if lock.lock().is_err() {
        return;
    }
    // Another test process may have installed it while this one waited.
    if find_on_path(tool).is_some() {
        return;
    }
    // Written to the descriptor itself: libtest captures `eprintln!` of a
    // passing test, and this line is for whoever runs the tests.
    let _ = writeln!(
        std::io::stderr(),
        "roster tests: installing the Debian package {package} with apt-get: a test needs `{tool}`, which is \
         missing here"
    );
    let install = || {
        Command::new("apt-get")
            .args(["install", "-y", "-qq", "--no-install-recommends", package])
            .env("DEBIAN_FRONTEND", "noninteractive")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success())
    };
    if !install() {
        let _ = Command::new("apt-get")
            .args(["update", "-qq"])
            .env("DEBIAN_FRONTEND", "noninteractive")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        install();
    }
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

/// A private world for one test: a canonical temporary directory with its
/// own HOME and a roster directory nobody else uses. Two layouts, one type:
/// `new` puts the roster directory at `<temp>/roster`, passed as `--dir`;
/// `with_default_roster` puts it where the tools look by default,
/// `~/.local/state/roster` under the private HOME (a hook gets no `--dir`),
/// beside a project directory `~/src/app` standing where the harness
/// captures' `/home/dev/src/app` stood. The roster directory does not exist
/// until a binary creates it.
pub struct Sandbox {
    /// Removed, with everything in it, when the sandbox is dropped.
    _temp: tempfile::TempDir,
    base: PathBuf,
    root: PathBuf,
    home: PathBuf,
}

impl Default for Sandbox {
    fn default() -> Self {
        Sandbox::new()
    }
}

impl Sandbox {
    pub fn new() -> Sandbox {
        let (temp, base, home) = Sandbox::temporary_home("roster-blackbox-");
        Sandbox { root: base.join("roster"), base, home, _temp: temp }
    }

    /// The layout of the hook tests: the roster directory at its default
    /// place under HOME, and the project directory created.
    pub fn with_default_roster() -> Sandbox {
        let (temp, base, home) = Sandbox::temporary_home("roster-hook-");
        let sandbox = Sandbox { root: home.join(".local/state/roster"), base, home, _temp: temp };
        std::fs::create_dir_all(sandbox.project()).expect("create the project directory");
        sandbox
    }

    fn temporary_home(prefix: &str) -> (tempfile::TempDir, PathBuf, PathBuf) {
        let temp = tempfile::Builder::new().prefix(prefix).tempdir().expect("create a temp dir");
        // Canonical, so paths the binaries print (canonicalized) compare equal.
        let base = temp.path().canonicalize().expect("canonicalize the temp dir");
        let home = base.join("home");
        std::fs::create_dir(&home).expect("create home");
        (temp, base, home)
    }

    /// The temp directory everything of this sandbox lives in.
    pub fn base(&self) -> PathBuf {
        self.base.clone()
    }

    /// The project directory of `with_default_roster` (`~/src/app`).
    pub fn project(&self) -> PathBuf {
        self.home.join("src/app")
    }

    /// The roster directory (passed as `--dir`, or the default under HOME).
    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn home(&self) -> &Path {
        &self.home
    }

    pub fn sessions(&self) -> PathBuf {
        self.root.join("sessions")
    }

    pub fn consent(&self) -> PathBuf {
        self.root.join("consent")
    }

    /// Where register puts the record of `pid` registered from this
    /// process's world (its pid namespace, this boot).
    pub fn record_path(&self, pid: u32) -> PathBuf {
        self.sessions().join(record_file_name_here(pid))
    }

    /// Where arm and disarm put the consent marker of `pid`.
    pub fn marker_path(&self, pid: u32) -> PathBuf {
        self.consent().join(record_file_name_here(pid))
    }

    /// A binary with a clean environment: only `PATH` and a private `HOME`,
    /// so no `ROSTER_*`, `CLAUDE_PID`, `OPENCODE_PID`, `XDG_STATE_HOME` or
    /// harness export of the machine running the tests leaks in. Runs in
    /// the private home. No `--dir`: callers add what they test.
    pub fn command(&self, tool: &str) -> Command {
        let mut command = Command::new(binary(tool));
        clean_environment(&mut command, &self.home).current_dir(&self.home);
        command
    }

    /// `tool --dir <root> args…`, with the clean environment.
    pub fn command_in_root(&self, tool: &str, args: &[&str]) -> Command {
        let mut command = self.command(tool);
        command.arg("--dir").arg(&self.root).args(args);
        command
    }

    /// Runs `tool --dir <root> args…` to its end.
    pub fn run(&self, tool: &str, args: &[&str]) -> Outcome {
        run_with_deadline(&mut self.command_in_root(tool, args), COMMAND_DEADLINE)
    }

    /// Runs `tool --dir <root> args…` with extra environment variables.
    pub fn run_with_env(&self, tool: &str, args: &[&str], env: &[(&str, &str)]) -> Outcome {
        let mut command = self.command_in_root(tool, args);
        for (key, value) in env {
            command.env(key, value);
        }
        run_with_deadline(&mut command, COMMAND_DEADLINE)
    }

    /// Runs `tool --dir <root> args…` on a pseudo-terminal, as a person's
    /// shell would (`script`), with the clean environment and `env` added;
    /// its stdout and stderr both go to the terminal, and come back mixed
    /// as the finished run's stdout (with `\r\n` line ends).
    pub fn run_on_terminal(&self, tool: &str, args: &[&str], env: &[(&str, &str)]) -> Finished {
        let mut words = vec![shell_quote(&binary(tool).to_string_lossy()).into_owned()];
        words.push("--dir".to_owned());
        words.push(shell_quote(&self.root.to_string_lossy()).into_owned());
        words.extend(args.iter().map(|argument| shell_quote(argument).into_owned()));
        let mut command = Command::new(require_tool("script"));
        clean_environment(&mut command, &self.home).current_dir(&self.home);
        command.envs(env.iter().copied());
        command.args(["-qec", &words.join(" "), "/dev/null"]);
        run_to_completion(command, StdinFeed::Null, COMMAND_DEADLINE)
    }

    /// Registers `pid` (`--pid`) with extra flags, asserts success and
    /// returns the JSON row register printed.
    pub fn register(&self, pid: u32, extra: &[&str]) -> Value {
        let pid_text = pid.to_string();
        let mut args = vec!["--json", "--pid", pid_text.as_str()];
        args.extend_from_slice(extra);
        self.run("roster-register", &args).json()
    }

    /// `roster-list --json` rows (with extra flags).
    pub fn list(&self, extra: &[&str]) -> Vec<Value> {
        let mut args = vec!["--json"];
        args.extend_from_slice(extra);
        self.run("roster-list", &args).rows()
    }

    /// `roster-list --json --all` rows.
    pub fn list_all(&self) -> Vec<Value> {
        self.list(&["--all"])
    }

    /// The record file of `pid` as JSON.
    pub fn record(&self, pid: u32) -> Value {
        let path = self.record_path(pid);
        let bytes = std::fs::read(&path).unwrap_or_else(|error| panic!("read {}: {error}", path.display()));
        serde_json::from_slice(&bytes)
            .unwrap_or_else(|error| panic!("{} is not JSON: {error}", path.display()))
    }

    /// Writes `sessions/<name>` with `bytes`, mode 0600, atomically (via a
    /// dotfile and a rename), so a concurrently running binary sees the old
    /// file or the new one.
    pub fn write_entry(&self, name: &str, bytes: &[u8]) -> PathBuf {
        write_file_atomically(&self.sessions().join(name), bytes)
    }

    /// Writes `value` as the record file of `pid`.
    pub fn write_record(&self, pid: u32, value: &Value) -> PathBuf {
        self.write_entry(&record_file_name_here(pid), &serde_json::to_vec_pretty(value).expect("serialize"))
    }

    /// Edits the record file of `pid` in place (atomically).
    pub fn edit_record(&self, pid: u32, edit: impl FnOnce(&mut Map<String, Value>)) -> Value {
        let mut value = self.record(pid);
        edit(value.as_object_mut().expect("a record is an object"));
        self.write_record(pid, &value);
        value
    }

    /// Every name in `sessions/`, dotfiles included, sorted.
    pub fn session_entries(&self) -> Vec<String> {
        names_in(&self.sessions())
    }

    /// The names in `sessions/` a reader lists (not dotfiles), sorted.
    pub fn visible_session_entries(&self) -> Vec<String> {
        self.session_entries().into_iter().filter(|name| !name.starts_with('.')).collect()
    }

    /// Every `.tmp-*` entry in the roster directory and its subdirectories.
    pub fn temporaries(&self) -> Vec<PathBuf> {
        [self.root.clone(), self.sessions(), self.consent()]
            .iter()
            .flat_map(|dir| {
                names_in(dir).into_iter().filter(|name| name.starts_with(".tmp-")).map(|name| dir.join(name))
            })
            .collect()
    }
}

/// The file name of `pid`'s record (and consent marker) when it is
/// registered from this process's world: `<pid>@<pid namespace>-<boot
/// hash>.json` (docs/contract.md §2).
pub fn record_file_name_here(pid: u32) -> String {
    let pid = owner_liveness::Pid::new(pid).expect("a non-zero pid");
    let world = registry_core::World::new(own_namespace_inode("pid"), &boot_id());
    registry_core::RecordName::new(pid, world).file_name()
}

/// Names in a directory, sorted; empty when it does not exist.
pub fn names_in(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut names: Vec<String> = entries
        .map(|entry| entry.expect("read_dir entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Writes a file mode 0600 the way roster writes its own: a temporary in
/// the same directory, renamed over the target.
pub fn write_file_atomically(target: &Path, bytes: &[u8]) -> PathBuf {
    harness::hook_config::write_atomically(target, bytes, 0o600)
        .unwrap_or_else(|error| panic!("write {}: {error}", target.display()));
    target.to_owned()
}

/// Creates a plain file mode 0600 (not atomically; for setting up).
pub fn write_file_0600(path: &Path, bytes: &[u8]) {
    let mut file = OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .unwrap_or_else(|error| panic!("create {}: {error}", path.display()));
    file.write_all(bytes).expect("write");
}

/// A long-lived process standing in for a harness session's owner. It is
/// killed and reaped when dropped, so no test leaves one behind.
pub struct Owner {
    child: Child,
}

impl Default for Owner {
    fn default() -> Self {
        Owner::spawn()
    }
}

impl Owner {
    pub fn spawn() -> Owner {
        let child = Command::new("sleep")
            .arg("100000")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn `sleep` as an owner process");
        Owner { child }
    }

    /// An owner started from an empty environment, so nothing of the test
    /// runner's own (which may run inside a harness) shows in its
    /// `/proc/<pid>/environ`.
    pub fn spawn_without_environment() -> Owner {
        let child = Command::new("/bin/sleep")
            .arg("100000")
            .env_clear()
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn /bin/sleep as an owner process");
        Owner { child }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends SIGKILL without reaping: the owner stays a zombie until this
    /// value is dropped.
    pub fn kill_leaving_zombie(&self) {
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.pid() as i32),
            nix::sys::signal::Signal::SIGKILL,
        )
        .expect("kill the owner");
    }

    /// Kills the owner and reaps it, so its pid names no process (not even
    /// a zombie); returns the pid.
    pub fn kill(mut self) -> u32 {
        let pid = self.pid();
        let _ = self.child.kill();
        let _ = self.child.wait();
        pid
    }
}

impl Drop for Owner {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An owner that armed consent for itself: a shell that ran
/// `roster-consent arm --pid parent` (so the owner is verified, as a
/// session's own shell is), then became `sleep` in place, keeping the
/// identity the marker holds. Killed and reaped when dropped.
pub struct ArmedOwner {
    child: Child,
}

impl ArmedOwner {
    /// Arms in the roster directory `root`, recording `cwd`, with `home` as
    /// HOME; waits until the marker exists.
    pub fn spawn(root: &Path, home: &Path, cwd: &Path) -> ArmedOwner {
        let child = Command::new("sh")
            .args([
                "-c",
                "\"$0\" --dir \"$1\" arm --pid parent --cwd \"$2\" >/dev/null 2>&1 && exec sleep 100000",
            ])
            .arg(binary("roster-consent"))
            .arg(root)
            .arg(cwd)
            .env_clear()
            .env("HOME", home)
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .stdin(Stdio::null())
            .spawn()
            .expect("spawn an owner that arms itself");
        let marker = root.join("consent").join(crate::record_file_name_here(child.id()));
        assert!(poll_until(Duration::from_secs(10), || marker.exists()), "the owner did not arm itself");
        ArmedOwner { child }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for ArmedOwner {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A pid that named a process a moment ago and now names none.
pub fn dead_pid() -> u32 {
    Owner::spawn().kill()
}

/// The kernel's `pid_max` (the first pid that is not allowed).
pub fn pid_max() -> u32 {
    std::fs::read_to_string("/proc/sys/kernel/pid_max")
        .expect("read /proc/sys/kernel/pid_max")
        .trim()
        .parse()
        .expect("pid_max is a number")
}

/// The inode of one of this process's namespaces (`pid`, `time`, …).
pub fn own_namespace_inode(kind: &str) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(format!("/proc/self/ns/{kind}")).expect("stat /proc/self/ns").ino()
}

/// The current boot id.
pub fn boot_id() -> String {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id").expect("read boot_id").trim().to_owned()
}

/// Sets an entry's mtime (and atime) without following a symlink.
pub fn set_mtime(path: &Path, time: SystemTime) {
    let since_epoch = time.duration_since(UNIX_EPOCH).expect("after the epoch");
    let spec = nix::sys::time::TimeSpec::from_duration(since_epoch);
    nix::sys::stat::utimensat(
        nix::fcntl::AT_FDCWD,
        path,
        &spec,
        &spec,
        nix::sys::stat::UtimensatFlags::NoFollowSymlink,
    )
    .unwrap_or_else(|error| panic!("set the mtime of {}: {error}", path.display()));
}

/// `now - age`.
pub fn ago(age: Duration) -> SystemTime {
    SystemTime::now() - age
}

/// Formats a time as RFC 3339 UTC with nanoseconds, as records hold it.
pub fn rfc3339(time: SystemTime) -> String {
    let since = time.duration_since(UNIX_EPOCH).expect("after the epoch");
    let seconds = since.as_secs() as i64;
    let (days, rest) = (seconds.div_euclid(86400), seconds.rem_euclid(86400));
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:09}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60,
        since.subsec_nanos()
    )
}

/// Parses RFC 3339 (`YYYY-MM-DDTHH:MM:SS[.frac](Z|±HH:MM)`) into Unix
/// nanoseconds; `None` if it is not that.
pub fn parse_rfc3339(text: &str) -> Option<i128> {
    let bytes = text.as_bytes();
    if bytes.len() < 20 || !text.is_ascii() {
        return None;
    }
    let number = |range: std::ops::Range<usize>| -> Option<i64> {
        let part = text.get(range)?;
        if part.bytes().all(|byte| byte.is_ascii_digit()) { part.parse().ok() } else { None }
    };
    let (year, month, day) = (number(0..4)?, number(5..7)?, number(8..10)?);
    let (hour, minute, second) = (number(11..13)?, number(14..16)?, number(17..19)?);
    if bytes[4] != b'-' || bytes[7] != b'-' || bytes[10] != b'T' || bytes[13] != b':' || bytes[16] != b':' {
        return None;
    }
    let mut position = 19;
    let mut nanos: i128 = 0;
    if bytes[position] == b'.' {
        let digits = bytes[position + 1..].iter().take_while(|byte| byte.is_ascii_digit()).count();
        if digits == 0 || digits > 9 {
            return None;
        }
        nanos =
            text[position + 1..position + 1 + digits].parse::<i128>().ok()? * 10_i128.pow(9 - digits as u32);
        position += 1 + digits;
    }
    let offset_seconds: i64 = match &text[position..] {
        "Z" => 0,
        zone if zone.len() == 6 && (zone.starts_with('+') || zone.starts_with('-')) => {
            let magnitude =
                number(position + 1..position + 3)? * 3600 + number(position + 4..position + 6)? * 60;
            if zone.starts_with('+') { magnitude } else { -magnitude }
        }
        _ => return None,
    };
    let days = days_from_civil(year, month, day);
    let seconds = days * 86400 + hour * 3600 + minute * 60 + second - offset_seconds;
    Some(i128::from(seconds) * 1_000_000_000 + nanos)
}

/// Unix nanoseconds of a `SystemTime`.
pub fn unix_nanos(time: SystemTime) -> i128 {
    time.duration_since(UNIX_EPOCH).expect("after the epoch").as_nanos() as i128
}

// Howard Hinnant's civil-date algorithms: small enough not to want a crate.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146097 + day_of_era - 719468
}

fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719468;
    let era = z.div_euclid(146097);
    let day_of_era = z - era * 146097;
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 { month_index + 3 } else { month_index - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Checks that a JSON row has every record key and every row key; returns
/// the missing ones.
pub fn missing_row_keys(row: &Value) -> Vec<&'static str> {
    let Some(object) = row.as_object() else {
        return RECORD_KEYS.iter().chain(&ROW_EXTRA_KEYS).copied().collect();
    };
    RECORD_KEYS.iter().chain(&ROW_EXTRA_KEYS).copied().filter(|key| !object.contains_key(*key)).collect()
}

/// The row whose `path` ends in `sessions/<name>`.
pub fn row_named<'a>(rows: &'a [Value], name: &str) -> Option<&'a Value> {
    let suffix = format!("/sessions/{name}");
    rows.iter().find(|row| row["path"].as_str().is_some_and(|path| path.ends_with(&suffix)))
}

/// The rows for `pid`.
pub fn rows_for_pid(rows: &[Value], pid: u32) -> Vec<&Value> {
    rows.iter().filter(|row| row["session_pid"].as_u64() == Some(u64::from(pid))).collect()
}

/// The pids of rows, as a set.
pub fn row_pids(rows: &[Value]) -> BTreeSet<u64> {
    rows.iter().filter_map(|row| row["session_pid"].as_u64()).collect()
}

/// A process that holds the roster's `.lock` with `flock` until killed:
/// the lock is taken in the child between fork and exec (so it is held
/// once `spawn` returns) and the fd survives into `sleep`, which keeps it.
pub struct LockHolder {
    child: Option<Child>,
}

impl LockHolder {
    /// Takes the lock on `lock_path` (created 0600 if missing); fails the
    /// test if it is already held.
    pub fn spawn(lock_path: &Path) -> LockHolder {
        let path = CString::new(lock_path.as_os_str().as_bytes()).expect("no NUL in the path");
        let mut command = Command::new("sleep");
        command.arg("100000").stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
        // SAFETY: the closure runs in the forked child and only makes
        // async-signal-safe system calls on data prepared before the fork.
        unsafe {
            command.pre_exec(move || {
                use nix::fcntl::{Flock, FlockArg, OFlag, open};
                use nix::sys::stat::Mode;
                // Not close-on-exec: the descriptor, and with it the lock,
                // must live on in `sleep`.
                let fd =
                    open(path.as_c_str(), OFlag::O_RDWR | OFlag::O_CREAT, Mode::from_bits_truncate(0o600))?;
                let lock = Flock::lock(fd, FlockArg::LockExclusiveNonblock).map_err(|(_, errno)| errno)?;
                std::mem::forget(lock);
                Ok(())
            });
        }
        let child = command
            .spawn()
            .unwrap_or_else(|error| panic!("take the lock on {} in a helper: {error}", lock_path.display()));
        LockHolder { child: Some(child) }
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("running").id()
    }

    /// SIGKILLs the holder and reaps it.
    pub fn kill(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for LockHolder {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Whether some process holds an `flock` on `path` (tested with a
/// non-blocking attempt of our own, released at once).
pub fn lock_is_held(path: &Path) -> bool {
    let file = File::open(path).unwrap_or_else(|error| panic!("open {}: {error}", path.display()));
    match file.try_lock() {
        Ok(()) => {
            let _ = file.unlock();
            false
        }
        Err(std::fs::TryLockError::WouldBlock) => true,
        Err(std::fs::TryLockError::Error(error)) => panic!("flock {}: {error}", path.display()),
    }
}

/// Whether process `pid` has `target` open (by `/proc/<pid>/fd`).
pub fn process_has_open(pid: u32, target: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(format!("/proc/{pid}/fd")) else { return false };
    entries
        .filter_map(Result::ok)
        .any(|entry| std::fs::read_link(entry.path()).is_ok_and(|link| link == target))
}

/// A small deterministic random generator (xorshift64*), seeded from the
/// clock unless `ROSTER_TEST_SEED` is set; failures print the seed. The
/// tests need unpredictable instants and choices, not cryptography, and no
/// dependency for it.
pub struct Random {
    state: u64,
    pub seed: u64,
}

impl Random {
    pub fn new() -> Random {
        let seed =
            std::env::var("ROSTER_TEST_SEED").ok().and_then(|text| text.parse().ok()).unwrap_or_else(|| {
                SystemTime::now().duration_since(UNIX_EPOCH).expect("after the epoch").as_nanos() as u64 | 1
            });
        Random { state: seed.max(1), seed }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        self.state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A generator with a given seed (each soak worker gets its own).
    pub fn seeded(seed: u64) -> Random {
        Random { state: seed.max(1), seed }
    }

    /// Uniform-enough in `0..bound`.
    pub fn below(&mut self, bound: u64) -> u64 {
        if bound == 0 { 0 } else { self.next_u64() % bound }
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

impl Default for Random {
    fn default() -> Self {
        Random::new()
    }
}

/// The raw control characters in `bytes` that a terminal would act on:
/// C0 other than newline, DEL, and C1 (as UTF-8 or as a lone byte), plus
/// every byte that is not valid UTF-8 (a lone 0x9b is CSI to some
/// terminals). Empty when the text is safe to show.
pub fn raw_controls(bytes: &[u8]) -> Vec<String> {
    let mut found = Vec::new();
    for chunk in bytes.utf8_chunks() {
        for character in chunk.valid().chars() {
            if character.is_control() && character != '\n' {
                found.push(format!("{character:?}"));
            }
        }
        if !chunk.invalid().is_empty() {
            found.push(format!("invalid UTF-8 {:?}", chunk.invalid()));
        }
    }
    found
}

/// `OsStr` from raw bytes (names with control characters).
pub fn os_str(bytes: &[u8]) -> &OsStr {
    OsStr::from_bytes(bytes)
}

/// Edits a record so it names another process at the same pid: a later
/// start tick and, where recorded, another pidfs inode. Every identity
/// signal then says "not this process", so the verdict is dead however the
/// signals are weighed (docs/contract.md §5 step 4).
pub fn make_identity_stale(record: &mut Map<String, Value>) {
    let ticks = record["start_ticks"].as_u64().expect("start_ticks is a number");
    record.insert("start_ticks".into(), Value::from(ticks + 1));
    if let Some(inode) = record.get("pidfs_ino").and_then(Value::as_u64) {
        record.insert("pidfs_ino".into(), Value::from(inode + 1));
    }
}

impl Sandbox {
    /// Registers and arms a session whose owner is a short-lived shell,
    /// and returns the shell's pid once it has exited: a record and a
    /// consent marker of a dead owner, made the only way a real session
    /// makes them (consent only arms a verified owner: the caller or one of
    /// its ancestors, here the shell).
    pub fn session_of_an_exited_shell(&self) -> u32 {
        let script = r#""$REGISTER" --dir "$DIR" --pid parent --quiet \
            && "$CONSENT" --dir "$DIR" arm --pid parent --quiet \
            && echo $$"#;
        let clean = self.command("roster-register");
        let mut shell = Command::new("sh");
        shell.args(["-c", script]).env_clear().current_dir(&self.home);
        shell.envs(clean.get_envs().filter_map(|(key, value)| Some((key, value?))));
        shell.env("REGISTER", binary("roster-register")).env("CONSENT", binary("roster-consent"));
        shell.env("DIR", &self.root);
        let outcome = run_with_deadline(&mut shell, COMMAND_DEADLINE);
        outcome.expect_code(0);
        outcome.stdout_text().trim().parse().unwrap_or_else(|_| panic!("the shell printed no pid\n{outcome}"))
    }
}
