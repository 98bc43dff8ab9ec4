//! The hook-mode side of the harness (`hook_*.rs` and the other tests that run hooks):
//! where the harness captures are, a sandbox with its own HOME whose default roster
//! directory is private to the test, running a binary with a payload on stdin under a
//! deadline, and stand-in harnesses that run the session hooks the way the real harnesses
//! do (see `tests/stand-ins/`).

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use serde_json::Value;

pub use crate::{Finished, StdinFeed, run_to_completion, spawn_retrying_busy_text};
use crate::{Owner, Sandbox, binary, find_on_path, names_in, shell_quote};

/// How long a step that only waits for the machine (a process starting, node loading a
/// script) may take before the test gives up. Generous: a loaded machine is not a failure.
pub const MACHINE_DEADLINE: Duration = Duration::from_secs(60);

/// The payload path prefix the captures were rewritten to.
const CAPTURE_HOME: &str = "/home/dev";

/// The repository copy of the real harness captures.
pub fn captures_directory() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data").join("harness-captures")
}

/// The stand-in programs of `tests/stand-ins/`.
pub fn stand_in_source(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("stand-ins").join(name)
}

/// The `node` the npm stand-ins run under. Tests that need it fail (never pass) without it.
pub fn node_binary() -> PathBuf {
    find_on_path("node").unwrap_or_else(|| {
        panic!(
            "`node` is not on PATH: the Gemini CLI, Codex and Copilot CLI stand-ins run under node \
             exactly as the npm-installed harnesses do, so these tests cannot run; install Node.js"
        )
    })
}

/// bash, which the native stand-ins are copies of (its `EPOCHREALTIME` times the hooks).
pub fn bash_binary() -> PathBuf {
    let bash = Path::new("/bin/bash");
    assert!(bash.is_file(), "/bin/bash is missing: the native harness stand-ins are copies of it");
    fs::canonicalize(bash).expect("resolving /bin/bash")
}

/// `'<bin>/roster-register' --hook <target>`, as `roster-hooks install` writes it.
pub fn session_start_command(target: &str) -> String {
    format!("{} --hook {target}", shell_quote(&binary("roster-register").to_string_lossy()))
}

/// `'<bin>/roster-prune' --current --hook <target>`, as `roster-hooks install` writes it.
pub fn session_end_command(target: &str) -> String {
    format!("{} --current --hook {target}", shell_quote(&binary("roster-prune").to_string_lossy()))
}

/// What the hook tests do in a sandbox (`Sandbox::with_default_roster`): start processes
/// from the environment a harness gives its hooks, move the captures' paths in, and look at
/// what the hooks left behind.
impl Sandbox {
    /// The environment every process of the sandbox starts from.
    pub fn base_environment(&self) -> Vec<(String, String)> {
        let mut path = String::new();
        if let Some(node) = find_on_path("node").and_then(|node| node.parent().map(Path::to_path_buf)) {
            path.push_str(&node.to_string_lossy());
            path.push(':');
        }
        path.push_str("/usr/local/bin:/usr/bin:/bin");
        vec![
            ("PATH".to_owned(), path),
            ("HOME".to_owned(), self.home().to_string_lossy().into_owned()),
            ("LC_ALL".to_owned(), "C".to_owned()),
        ]
    }

    /// A command for a roster binary, with the sandbox's clean environment and the project
    /// as its working directory.
    pub fn roster_command(&self, tool: &str) -> Command {
        let mut command = Command::new(binary(tool));
        command.env_clear().envs(self.base_environment()).current_dir(self.project());
        command
    }

    /// A path of a capture moved into the sandbox: `/home/dev/…` under `home`, `/tmp/…`
    /// under `<root>/tmp`. Anything else is kept.
    pub fn relocate(&self, value: &str) -> String {
        if let Some(rest) = value.strip_prefix(CAPTURE_HOME) {
            return format!("{}{rest}", self.home().display());
        }
        if let Some(rest) = value.strip_prefix("/tmp/") {
            return format!("{}/tmp/{rest}", self.base().display());
        }
        value.to_owned()
    }

    /// A capture's payload with every `/home/dev` moved into the sandbox, byte for byte
    /// otherwise.
    pub fn relocate_payload(&self, payload: &str) -> String {
        payload.replace(CAPTURE_HOME, &self.home().to_string_lossy())
    }

    /// The record of `pid`, if one is written.
    pub fn find_record(&self, pid: u32) -> Option<Value> {
        let bytes = fs::read(self.root().join("sessions").join(crate::record_file_name_here(pid))).ok()?;
        Some(serde_json::from_slice(&bytes).expect("a record is JSON"))
    }

    /// The session-id index entries (`session-ids/*`, temporaries aside).
    pub fn session_index_entries(&self) -> Vec<String> {
        names_in(&self.root().join("session-ids")).into_iter().filter(|name| !name.starts_with('.')).collect()
    }

    /// The lines of `hook-errors.log` (none when it does not exist).
    pub fn hook_error_lines(&self) -> Vec<String> {
        fs::read_to_string(self.root().join("hook-errors.log"))
            .map(|text| text.lines().map(str::to_owned).collect())
            .unwrap_or_default()
    }

    /// Creates the roster directory the way roster does (0700), for tests that tamper with it.
    pub fn create_roster_directory(&self) {
        fs::create_dir_all(self.root()).expect("creating the roster directory");
        fs::set_permissions(self.root(), fs::Permissions::from_mode(0o700)).expect("chmod 0700");
    }

    /// What `roster-list` says on stderr beside its table: its notes.
    pub fn list_notes(&self) -> String {
        let finished =
            run_to_completion(self.roster_command("roster-list"), StdinFeed::Null, MACHINE_DEADLINE);
        assert!(finished.status.success(), "roster-list failed: {}", finished.stderr_text());
        finished.stderr_text()
    }

    /// A live process that is nobody's harness, to name with `--pid`, started with an
    /// empty environment. Killed on drop.
    pub fn spawn_idle_owner(&self) -> Owner {
        Owner::spawn_without_environment()
    }
}

/// The harness folders of the captures and the harness each one is.
pub const CAPTURE_FOLDERS: [(&str, &str); 5] = [
    ("claude-code-2.1.328", "claude-code"),
    ("codex", "codex"),
    ("gemini", "gemini-cli"),
    ("copilot", "copilot"),
    ("opencode", "opencode"),
];

/// One capture folder: its environment and its payloads, read from the repository copy.
pub struct Capture {
    pub folder: &'static str,
    pub harness: &'static str,
    /// `env*.txt`, in file order.
    pub environment: Vec<(String, String)>,
    /// `(file name, text)` of every `*.json`, sorted by name.
    pub payloads: Vec<(String, String)>,
}

impl Capture {
    pub fn load(folder: &'static str) -> Capture {
        let harness = CAPTURE_FOLDERS
            .iter()
            .find(|(name, _)| *name == folder)
            .map(|(_, harness)| *harness)
            .unwrap_or_else(|| panic!("unknown capture folder {folder}"));
        let directory = captures_directory().join(folder);
        let mut environment = Vec::new();
        let mut payloads = Vec::new();
        for name in names_in(&directory) {
            let path = directory.join(&name);
            if name.starts_with("env") && name.ends_with(".txt") {
                let text = fs::read_to_string(&path).expect("reading a capture's env");
                for line in text.lines().filter(|line| !line.trim().is_empty() && !line.starts_with('#')) {
                    let (key, value) = line.split_once('=').unwrap_or_else(|| panic!("{name}: {line:?}"));
                    environment.push((key.to_owned(), value.to_owned()));
                }
            } else if name.ends_with(".json") {
                payloads.push((name, fs::read_to_string(&path).expect("reading a capture's payload")));
            }
        }
        assert!(!payloads.is_empty(), "no payloads in {}", directory.display());
        assert!(!environment.is_empty(), "no env*.txt in {}", directory.display());
        Capture { folder, harness, environment, payloads }
    }

    /// The capture's environment moved into `sandbox`, without the variables listed.
    pub fn environment_in(&self, sandbox: &Sandbox, without: &[&str]) -> Vec<(String, String)> {
        self.environment
            .iter()
            .filter(|(key, _)| !without.contains(&key.as_str()))
            .map(|(key, value)| (key.clone(), sandbox.relocate(value)))
            .collect()
    }

    pub fn payload(&self, file_name: &str) -> &str {
        self.payloads
            .iter()
            .find(|(name, _)| name == file_name)
            .map(|(_, text)| text.as_str())
            .unwrap_or_else(|| panic!("{} has no {file_name}", self.folder))
    }

    pub fn variable(&self, key: &str) -> Option<&str> {
        self.environment.iter().find(|(name, _)| name == key).map(|(_, value)| value.as_str())
    }
}

/// What a record made from a (relocated) payload must say.
#[derive(Debug, PartialEq, Eq)]
pub struct ExpectedFields {
    pub session_id: Option<String>,
    pub cwd: String,
    pub transcript_path: Option<String>,
    pub harness: String,
    pub harness_version: Option<String>,
}

/// The fields a record made from `payload` (already relocated) must carry, worked out
/// from the payload's own keys in each harness's dialect, independently of roster's parser.
pub fn expected_fields(capture: &Capture, payload: &str, working_directory: &Path) -> ExpectedFields {
    let value: Value = serde_json::from_str(payload).expect("a capture payload is JSON");
    let string = |value: &Value, key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
    let (session_id, cwd, transcript_path, payload_version) = if capture.harness == "opencode" {
        let properties = value.get("properties").expect("an opencode event has properties");
        let info = properties.get("info");
        (
            string(properties, "sessionID"),
            info.and_then(|info| string(info, "directory")),
            None,
            info.and_then(|info| string(info, "version")),
        )
    } else {
        (
            string(&value, "session_id").or_else(|| string(&value, "sessionId")),
            string(&value, "cwd"),
            string(&value, "transcript_path").or_else(|| string(&value, "transcriptPath")),
            None,
        )
    };
    let cwd = cwd.map(PathBuf::from).unwrap_or_else(|| working_directory.to_path_buf());
    let cwd = fs::canonicalize(&cwd).unwrap_or_else(|error| panic!("{}: {error}", cwd.display()));
    let environment_version = match capture.harness {
        "claude-code" => capture.variable("AI_AGENT").map(|value| {
            // `claude-code_2-1-328_harness` → `2.1.328`.
            value.split('_').nth(1).expect("AI_AGENT has a version part").replace('-', ".")
        }),
        "copilot" => capture.variable("COPILOT_CLI_BINARY_VERSION").map(str::to_owned),
        _ => None,
    };
    ExpectedFields {
        session_id,
        cwd: cwd.to_string_lossy().into_owned(),
        transcript_path,
        harness: capture.harness.to_owned(),
        harness_version: payload_version.or(environment_version),
    }
}

/// The same fields as a record shows them.
pub fn recorded_fields(record: &Value) -> ExpectedFields {
    let string = |key: &str| record.get(key).and_then(Value::as_str).map(str::to_owned);
    ExpectedFields {
        session_id: string("session_id"),
        cwd: string("cwd").expect("a record has a cwd"),
        transcript_path: string("transcript_path"),
        harness: string("harness").expect("a record has a harness"),
        harness_version: string("harness_version"),
    }
}

/// Harness stand-ins: programs named and shaped like the real harness processes (see
/// `tests/stand-ins/`), which run the session hooks the way each harness does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StandInKind {
    /// A native `claude` that exports CLAUDE_PID and runs hooks under `sh -c`.
    ClaudeCode,
    /// A native Claude Code binary whose comm and exe are its version (`2.1.128`) while
    /// argv[0] says `claude`, and no CLAUDE_PID: only argv[0] can name it.
    ClaudeCodeNamedByArgv0Only,
    /// `node …/.bin/codex` above a native `codex` that runs hooks under `/bin/bash -c`.
    Codex,
    /// One `node …/.bin/gemini` running hooks under `/bin/bash -c`.
    GeminiCli,
    /// `node …/.bin/gemini` relaunching itself: two node processes, the inner runs hooks.
    GeminiCliRelaunching,
    /// `node …/.bin/copilot` above a native `copilot` whose comm is `MainThread`, running
    /// hooks under `/bin/bash --norc --noprofile -c`.
    Copilot,
    /// A native `opencode` that exports OPENCODE_PID and runs commands under `/bin/bash -c`.
    Opencode,
}

impl StandInKind {
    pub fn harness(self) -> &'static str {
        match self {
            StandInKind::ClaudeCode | StandInKind::ClaudeCodeNamedByArgv0Only => "claude-code",
            StandInKind::Codex => "codex",
            StandInKind::GeminiCli | StandInKind::GeminiCliRelaunching => "gemini-cli",
            StandInKind::Copilot => "copilot",
            StandInKind::Opencode => "opencode",
        }
    }

    pub fn capture_folder(self) -> &'static str {
        match self {
            StandInKind::ClaudeCode | StandInKind::ClaudeCodeNamedByArgv0Only => "claude-code-2.1.328",
            StandInKind::Codex => "codex",
            StandInKind::GeminiCli | StandInKind::GeminiCliRelaunching => "gemini",
            StandInKind::Copilot => "copilot",
            StandInKind::Opencode => "opencode",
        }
    }

    /// How many processes the harness is, outermost first down to the one running hooks.
    fn process_count(self) -> usize {
        match self {
            StandInKind::Codex | StandInKind::GeminiCliRelaunching | StandInKind::Copilot => 2,
            _ => 1,
        }
    }

    /// The comm the hook-running process must show for the stand-in to be faithful.
    fn hook_runner_comm(self) -> &'static str {
        match self {
            StandInKind::ClaudeCode => "claude",
            StandInKind::ClaudeCodeNamedByArgv0Only => "2.1.128",
            StandInKind::Codex => "codex",
            StandInKind::GeminiCli | StandInKind::GeminiCliRelaunching => "node",
            StandInKind::Copilot => "MainThread",
            StandInKind::Opencode => "opencode",
        }
    }

    /// Variables of the capture the stand-in sets itself (or must not inherit).
    fn environment_it_sets(self) -> &'static [&'static str] {
        match self {
            StandInKind::ClaudeCode | StandInKind::ClaudeCodeNamedByArgv0Only => &["CLAUDE_PID"],
            StandInKind::Opencode => &["OPENCODE_PID"],
            StandInKind::GeminiCliRelaunching => &["GEMINI_CLI_NO_RELAUNCH"],
            _ => &[],
        }
    }
}

/// One hook run by a stand-in.
#[derive(Debug)]
pub struct HookRun {
    pub exit_status: i32,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// Measured by the stand-in around spawning the hook and waiting for it, as the
    /// harness's own hook timeout sees it.
    pub elapsed: Duration,
}

impl HookRun {
    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }

    /// Fails the test unless the hook behaved as hook mode must: exit 0, nothing on stdout.
    pub fn assert_quiet_success(&self, what: &str) {
        assert_eq!(
            self.exit_status,
            0,
            "{what}: the hook exited {} (stderr: {})",
            self.exit_status,
            self.stderr_text()
        );
        assert!(
            self.stdout.is_empty(),
            "{what}: the hook wrote to stdout: {:?}",
            String::from_utf8_lossy(&self.stdout)
        );
    }
}

/// A running stand-in harness. Killed (its whole process group) on drop.
pub struct StandIn {
    pub kind: StandInKind,
    /// `None` once the stand-in has been waited for.
    child: Option<Child>,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    control: PathBuf,
    /// The outermost harness process: the session's owner.
    pub owner_pid: u32,
    /// The process that runs the hooks (the owner itself, or its child).
    pub hook_runner_pid: u32,
}

impl StandIn {
    /// Starts a stand-in of `kind` in `sandbox`'s project directory with `environment`
    /// (on top of the sandbox's base environment) and waits until it is ready.
    pub fn launch(sandbox: &Sandbox, kind: StandInKind, environment: &[(String, String)]) -> StandIn {
        let stand_ins = sandbox.base().join("stand-ins");
        let control = stand_ins.join(format!("control-{}", unique_suffix()));
        fs::create_dir_all(&control).expect("creating the stand-in control directory");
        let native_script = stand_ins.join("native-harness.sh");
        if !native_script.exists() {
            fs::copy(stand_in_source("native-harness.sh"), &native_script)
                .expect("copying native-harness.sh");
        }
        let npm_modules = sandbox.home().join(".npm").join("lib").join("node_modules");

        let mut stand_in_environment: Vec<(String, String)> =
            vec![("STAND_IN_CONTROL_DIR".to_owned(), control.to_string_lossy().into_owned())];
        let mut set = |key: &str, value: &str| stand_in_environment.push((key.to_owned(), value.to_owned()));

        let mut command = match kind {
            StandInKind::ClaudeCode | StandInKind::Opencode => {
                let name = if kind == StandInKind::ClaudeCode { "claude" } else { "opencode" };
                let native = install_native_copy(&sandbox.home().join(".local").join("bin").join(name));
                set("STAND_IN_HOOK_SHELL", if kind == StandInKind::ClaudeCode { "sh" } else { "bash" });
                set(
                    "STAND_IN_PID_EXPORT",
                    if kind == StandInKind::ClaudeCode { "CLAUDE_PID" } else { "OPENCODE_PID" },
                );
                let mut command = Command::new(native);
                command.arg(&native_script);
                command
            }
            StandInKind::ClaudeCodeNamedByArgv0Only => {
                let versions = sandbox.home().join(".local").join("share").join("claude").join("versions");
                let native = install_native_copy(&versions.join("2.1.128"));
                set("STAND_IN_HOOK_SHELL", "sh");
                let mut command = Command::new(native);
                command.arg0(sandbox.home().join(".local").join("bin").join("claude")).arg(&native_script);
                command
            }
            StandInKind::Codex | StandInKind::Copilot => {
                let (name, native) = if kind == StandInKind::Codex {
                    (
                        "codex",
                        npm_modules
                            .join("@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex"),
                    )
                } else {
                    ("copilot", npm_modules.join("@github/copilot-linux-x64/copilot"))
                };
                let native = install_native_copy(&native);
                set("STAND_IN_NATIVE_BINARY", &native.to_string_lossy());
                set("STAND_IN_NATIVE_SCRIPT", &native_script.to_string_lossy());
                if kind == StandInKind::Codex {
                    set("STAND_IN_HOOK_SHELL", "bash");
                } else {
                    set("STAND_IN_HOOK_SHELL", "bash-norc");
                    set("STAND_IN_COMM", "MainThread");
                }
                let mut command = Command::new(node_binary());
                command.arg(install_npm_entry_point(&npm_modules, name));
                command
            }
            StandInKind::GeminiCli | StandInKind::GeminiCliRelaunching => {
                set("STAND_IN_HOOK_SHELL", "bash");
                if kind == StandInKind::GeminiCliRelaunching {
                    set("STAND_IN_RELAUNCH", "1");
                }
                let mut command = Command::new(node_binary());
                command.arg(install_npm_entry_point(&npm_modules, "gemini"));
                command
            }
        };
        command
            .args(["-p", "hi"])
            .env_clear()
            .envs(sandbox.base_environment())
            .envs(
                environment
                    .iter()
                    .filter(|(key, _)| !kind.environment_it_sets().contains(&key.as_str()))
                    .cloned(),
            )
            .envs(stand_in_environment)
            .current_dir(sandbox.project())
            .process_group(0)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = spawn_retrying_busy_text(&mut command);
        let owner_pid = child.id();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("piped stdout");
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let mut stand_in =
            StandIn { kind, child: Some(child), stdin, lines, control, owner_pid, hook_runner_pid: 0 };
        let ready = stand_in.next_line("ready");
        stand_in.hook_runner_pid = ready
            .strip_prefix("ready ")
            .and_then(|pid| pid.parse().ok())
            .unwrap_or_else(|| panic!("{kind:?}: expected `ready <pid>`, got {ready:?}"));
        stand_in.assert_faithful();
        stand_in
    }

    /// Checks that the stand-in's processes look like the real harness's: the hook runner's
    /// comm, and the chain of harness processes from it up to the owner.
    fn assert_faithful(&self) {
        let comm = fs::read_to_string(format!("/proc/{}/comm", self.hook_runner_pid)).expect("reading comm");
        assert_eq!(comm.trim_end(), self.kind.hook_runner_comm(), "{:?}: the hook runner's comm", self.kind);
        let mut chain = vec![self.hook_runner_pid];
        while chain.len() < self.kind.process_count() {
            let parent = parent_pid(*chain.last().expect("non-empty"));
            chain.push(parent);
        }
        assert_eq!(
            chain.last().copied(),
            Some(self.owner_pid),
            "{:?}: the hook runner's harness ancestry {chain:?} must end at the process the test started",
            self.kind
        );
        if self.kind == StandInKind::Copilot {
            let exe = fs::read_link(format!("/proc/{}/exe", self.hook_runner_pid)).expect("reading exe");
            assert_eq!(exe.file_name().and_then(|name| name.to_str()), Some("copilot"));
        }
    }

    /// Has the stand-in run one hook: `command` with `payload` on its stdin. Waits for it.
    pub fn run_hook(&mut self, command: &str, payload: &[u8]) -> HookRun {
        let event = format!("hook-{}", unique_suffix());
        let base = self.control.join(&event);
        fs::write(base.with_extension("command"), command).expect("writing the hook command");
        fs::write(base.with_extension("payload"), payload).expect("writing the hook payload");
        self.send(&event);
        let line = self.next_line(&event);
        let fields: Vec<&str> = line.split(' ').collect();
        assert!(
            fields.len() == 4 && fields[0] == "done" && fields[1] == event,
            "{:?}: expected `done {event} <status> <microseconds>`, got {line:?}",
            self.kind
        );
        HookRun {
            exit_status: fields[2].parse().expect("an exit status"),
            stdout: fs::read(base.with_extension("stdout")).expect("reading the hook's stdout"),
            stderr: fs::read(base.with_extension("stderr")).expect("reading the hook's stderr"),
            elapsed: Duration::from_micros(fields[3].parse().expect("microseconds")),
        }
    }

    /// Ends the harness without any session-end hook (a crash, a kill, Codex on SIGTERM)
    /// and reaps it, so its owner pid is provably gone.
    pub fn exit_without_session_end(mut self) {
        self.send("exit");
        drop(self.stdin.take());
        let mut child = self.child.take().expect("the stand-in was not waited for yet");
        let (sender, receiver) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = sender.send(child.wait());
        });
        match receiver.recv_timeout(MACHINE_DEADLINE) {
            Ok(status) => {
                let status = status.expect("waiting for the stand-in");
                assert!(status.success(), "{:?}: the stand-in exited with {status}", self.kind);
            }
            Err(_) => {
                let _ = killpg(pid_of(self.owner_pid), Signal::SIGKILL);
                panic!(
                    "{:?}: stand-in {} did not exit within {MACHINE_DEADLINE:?}",
                    self.kind, self.owner_pid
                )
            }
        }
    }

    fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("the stand-in's stdin is open");
        writeln!(stdin, "{line}").and_then(|()| stdin.flush()).expect("writing to the stand-in");
    }

    fn next_line(&self, waiting_for: &str) -> String {
        match self.lines.recv_timeout(MACHINE_DEADLINE) {
            Ok(line) => line,
            Err(RecvTimeoutError::Timeout) => {
                panic!("{:?}: no answer for {waiting_for} within {MACHINE_DEADLINE:?}", self.kind)
            }
            Err(RecvTimeoutError::Disconnected) => {
                panic!("{:?}: the stand-in ended while the test waited for {waiting_for}", self.kind)
            }
        }
    }
}

impl Drop for StandIn {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = killpg(pid_of(child.id()), Signal::SIGKILL);
            let _ = child.wait();
        }
    }
}

fn pid_of(pid: u32) -> Pid {
    Pid::from_raw(i32::try_from(pid).expect("a pid fits i32"))
}

/// The parent of `pid`, from `/proc/<pid>/stat` (field 4, after the last `)`).
fn parent_pid(pid: u32) -> u32 {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).expect("reading stat");
    let after_comm = &stat[stat.rfind(')').expect("stat has a comm") + 2..];
    after_comm.split(' ').nth(1).and_then(|ppid| ppid.parse().ok()).expect("stat has a ppid")
}

/// Copies bash to `path` (a native harness stand-in), executable.
fn install_native_copy(path: &Path) -> PathBuf {
    fs::create_dir_all(path.parent().expect("a parent directory"))
        .expect("creating the stand-in's directory");
    if !path.exists() {
        fs::copy(bash_binary(), path).expect("copying bash as a stand-in");
        fs::set_permissions(path, fs::Permissions::from_mode(0o755)).expect("chmod 0755");
    }
    path.to_path_buf()
}

/// Copies the npm entry point stand-in to `<modules>/.bin/<name>`.
fn install_npm_entry_point(npm_modules: &Path, name: &str) -> PathBuf {
    let bin = npm_modules.join(".bin");
    fs::create_dir_all(&bin).expect("creating node_modules/.bin");
    let entry_point = bin.join(name);
    if !entry_point.exists() {
        fs::copy(stand_in_source("npm-entry-point.js"), &entry_point).expect("copying the npm stand-in");
    }
    entry_point
}

fn unique_suffix() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    format!("{}-{}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed))
}

/// The median of some durations.
pub fn median(durations: &mut [Duration]) -> Duration {
    assert!(!durations.is_empty(), "no durations");
    durations.sort();
    durations[durations.len() / 2]
}
