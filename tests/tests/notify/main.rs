//! `roster-notify` driven as its user runs it (docs/contract.md §6.11):
//! real sessions registered and put in states with `roster-register` and
//! `roster-state` as the hooks do, the notifier following them through
//! the real watch, and its notices read back where they land: a real
//! notification server on a real D-Bus session bus (dunst under Xvfb), a
//! tmux client a notice's action moves, a local HTTP(S) server standing
//! for ntfy and a webhook, a command's stdin. One test binary, a module
//! per backend.

mod desktop;
mod hosts;
mod idle;
mod posted;
mod terminal;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use std::path::Path;

use tests::{COMMAND_DEADLINE, Sandbox, StdinFeed, binary, poll_until, run_to_completion};

/// A running `roster-notify --format json`, its stdout lines parsed as
/// they come, stopped with SIGTERM when dropped.
pub struct Notifier {
    child: Child,
    lines: Arc<Mutex<Vec<(Instant, Value)>>>,
    stderr: Arc<Mutex<String>>,
}

impl Notifier {
    pub fn start(sandbox: &Sandbox, args: &[&str], env: &[(&str, &str)]) -> Notifier {
        let mut command = sandbox.command_in_root("roster-notify", &["--format", "json"]);
        command
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().expect("start roster-notify");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let stdout = child.stdout.take().expect("piped");
        let sink = lines.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let value = serde_json::from_str(&line).unwrap_or_else(|error| panic!("{error}: {line}"));
                sink.lock().unwrap().push((Instant::now(), value));
            }
        });
        let stderr = tests::gather_output(child.stderr.take().expect("piped"));
        Notifier { child, lines, stderr }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Every line so far.
    pub fn lines(&self) -> Vec<Value> {
        self.lines.lock().unwrap().iter().map(|(_, value)| value.clone()).collect()
    }

    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// The lines whose `action` is `action`.
    pub fn actions(&self, action: &str) -> Vec<Value> {
        self.lines().into_iter().filter(|line| line["action"] == action).collect()
    }

    /// Waits for the `count`th line with `action`; when it came.
    pub fn wait_for(&self, action: &str, count: usize, deadline: Duration) -> Instant {
        let mut at = None;
        assert!(
            poll_until(deadline, || {
                let lines = self.lines.lock().unwrap();
                at = lines
                    .iter()
                    .filter(|(_, line)| line["action"] == action)
                    .nth(count - 1)
                    .map(|(at, _)| *at);
                at.is_some()
            }),
            "no {count}th `{action}` within {deadline:?}; lines: {:#?}\nstderr: {}",
            self.lines(),
            self.stderr()
        );
        at.expect("found")
    }

    /// Stops it with SIGTERM; it must exit 0 within 5 s.
    pub fn stop(mut self) {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).expect("SIGTERM");
        let mut status = None;
        assert!(
            poll_until(Duration::from_secs(5), || {
                status = self.child.try_wait().expect("wait");
                status.is_some()
            }),
            "roster-notify did not stop within 5 s of SIGTERM"
        );
        assert!(status.unwrap().success(), "roster-notify exited {status:?}: {}", self.stderr());
    }
}

impl Drop for Notifier {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Puts the session `session_id` in the state Claude Code's `event` means,
/// through `roster-state`, as its hook does.
pub fn claude_event(sandbox: &Sandbox, session_id: &str, event: &str) {
    claude_event_in(sandbox.root(), session_id, event);
}

/// The same in the registry at `registry` (another host's).
pub fn claude_event_in(registry: &Path, session_id: &str, event: &str) {
    let mut command = Command::new(binary("roster-state"));
    command.arg("--dir").arg(registry).args(["--hook", "claude-code", "--event", event]);
    let payload = serde_json::json!({"session_id": session_id, "hook_event_name": event});
    let run =
        run_to_completion(command, StdinFeed::Bytes(payload.to_string().into_bytes()), COMMAND_DEADLINE);
    assert_eq!(run.code(), Some(0), "roster-state {event}: {}", run.stderr_text());
}

/// Registers the process `pid` as a Claude Code session.
pub fn register(sandbox: &Sandbox, pid: u32, session_id: &str, agent: &str) {
    let cwd = sandbox.project();
    std::fs::create_dir_all(&cwd).expect("the project directory");
    let outcome = sandbox.run(
        "roster-register",
        &[
            "--pid",
            &pid.to_string(),
            "--harness",
            "claude-code",
            "--session-id",
            session_id,
            "--agent",
            agent,
            "--cwd",
            cwd.to_str().expect("UTF-8"),
        ],
    );
    outcome.expect_code(0);
}

/// The user config of the sandbox's HOME.
pub fn write_user_config(sandbox: &Sandbox, text: &str) {
    let directory = sandbox.home().join(".config/roster");
    std::fs::create_dir_all(&directory).expect("the config directory");
    std::fs::write(directory.join("config.toml"), text).expect("write config.toml");
}

/// Runs a command to its end; its stdout.
pub fn output_of(command: &mut Command) -> String {
    let output = command.output().expect("run");
    String::from_utf8_lossy(&output.stdout).into_owned()
}
