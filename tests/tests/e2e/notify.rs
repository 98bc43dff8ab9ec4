//! The e2e's notice proof, run inside the state proof: `roster-notify` follows the
//! session's registry with its desktop backend, on a real D-Bus session bus with a real
//! notification server (dunst under Xvfb), while a tmux client attached to the harness's
//! tmux server shows another session, as a person working elsewhere does. When the real
//! harness starts waiting for permission, exactly one desktop notice names it, passed to
//! the notification server within 1 s of the state change on disk (the bus's own clock of
//! the `Notify` call against the state's `state_since`); invoking the notice's action
//! (`dunstctl action`, as a click does) brings the client to the harness's pane through
//! `roster-focus`; once the dialog is answered, the notice is closed.

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, ensure};
use serde_json::Value;

use tests::notification_desktop::NotificationDesktop;
use tests::tmux::{AttachedClient, client_pane_at};

use super::SessionWorld;
use super::states::StepResult;
use super::terminal::Terminal;

/// From the state change on disk to the notice at the notification server, at most.
const NOTICE_LATENCY_LIMIT: Duration = Duration::from_secs(1);

/// How long a second notice for the same wait gets to come before "exactly one" is judged.
const SECOND_NOTICE_GRACE: Duration = Duration::from_millis(1500);

/// The flap window roster-notify runs with: how long after the wait ends it withdraws.
const FLAP_WINDOW_SECONDS: u64 = 1;

/// How long roster-notify gets to start, to withdraw, and roster-focus to move the client.
const NOTIFIER_DEADLINE: Duration = Duration::from_secs(20);

/// The tmux session the attached client shows while the harness runs elsewhere.
const ELSEWHERE: &str = "elsewhere";

/// roster-notify on the session's registry, the desktop it notifies on, and the client.
pub(super) struct NoticeWatch {
    desktop: NotificationDesktop,
    notifier: Child,
    lines: Arc<Mutex<Vec<Value>>>,
    stderr: Arc<Mutex<String>>,
    client: AttachedClient,
    terminal_socket: std::path::PathBuf,
}

impl NoticeWatch {
    /// Starts the desktop, attaches a client to another session of the harness's tmux
    /// server (`terminal`), and starts roster-notify; returns once it watches.
    pub(super) fn start(
        world: &SessionWorld,
        terminal: &Terminal,
        binaries: &std::path::Path,
        node: &std::path::Path,
    ) -> anyhow::Result<NoticeWatch> {
        let desktop = NotificationDesktop::start();
        terminal.run(&["new-session", "-d", "-s", ELSEWHERE])?;
        // The harness's window keeps its size when the client comes to it (set for the one
        // window: tmux 3.3a's server exits on a new session under a global `manual`).
        terminal.run(&["set-option", "-w", "-t", terminal.pane(), "window-size", "manual"])?;
        let client = AttachedClient::attach_at(terminal.socket(), ELSEWHERE);
        let mut notifier = world
            .roster_tool(binaries, "roster-notify", node)
            .arg("--dir")
            .arg(&world.roster)
            .args(["--format", "json", "--backend", "desktop", "--triggers", "waiting"])
            .args(["--flap-window", &FLAP_WINDOW_SECONDS.to_string()])
            .env("DBUS_SESSION_BUS_ADDRESS", &desktop.bus_address)
            .env("DISPLAY", &desktop.display)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .context("start roster-notify")?;
        let lines = Arc::new(Mutex::new(Vec::new()));
        let sink = lines.clone();
        let stdout = notifier.stdout.take().context("piped stdout")?;
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                sink.lock().unwrap().push(serde_json::from_str(&line).unwrap_or(Value::String(line)));
            }
        });
        let stderr = tests::gather_output(notifier.stderr.take().context("piped stderr")?);
        let watch = NoticeWatch {
            desktop,
            notifier,
            lines,
            stderr,
            client,
            terminal_socket: terminal.socket().to_path_buf(),
        };
        watch.wait_for("watching", 1)?;
        Ok(watch)
    }

    /// The lines of `action` so far.
    fn actions(&self, action: &str) -> Vec<Value> {
        self.lines.lock().unwrap().iter().filter(|line| line["action"] == action).cloned().collect()
    }

    /// Waits for the `count`th line of `action`.
    fn wait_for(&self, action: &str, count: usize) -> anyhow::Result<Value> {
        let started = Instant::now();
        loop {
            if let Some(line) = self.actions(action).into_iter().nth(count - 1) {
                return Ok(line);
            }
            ensure!(
                started.elapsed() < NOTIFIER_DEADLINE,
                "roster-notify printed no {count}th `{action}` within {NOTIFIER_DEADLINE:?}; it printed {:?}; \
                 stderr: {}",
                self.lines.lock().unwrap(),
                self.stderr.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Judges the notice of a session that waits for permission (`row`, its pane
    /// `harness_pane`): exactly one, naming it, at the notification server within 1 s of
    /// the state change; its action takes the client there.
    pub(super) fn judge_waiting(&self, harness: &str, row: &Value, harness_pane: &str) -> StepResult {
        match self.check_waiting(harness, row, harness_pane) {
            Ok(shown) => StepResult::Proven(shown),
            Err(error) => StepResult::Failed(format!("{error:#}")),
        }
    }

    fn check_waiting(&self, harness: &str, row: &Value, harness_pane: &str) -> anyhow::Result<String> {
        let show = self.wait_for("show", 1)?;
        let notice = &show["notice"];
        ensure!(notice["harness"] == harness, "the notice names another harness: {notice}");
        ensure!(notice["session_pid"] == row["session_pid"], "the notice names another session: {notice}");
        ensure!(notice["waiting_for"] == "permission", "the notice does not say permission: {notice}");
        let title = notice["title"].as_str().context("the notice has no title")?.to_owned();
        std::thread::sleep(SECOND_NOTICE_GRACE);
        let shows = self.actions("show").len() + self.actions("replace").len();
        ensure!(shows == 1, "roster-notify handed over {shows} notices for one wait");
        let calls: Vec<(SystemTime, String)> =
            self.desktop.timed_notify_calls().into_iter().filter(|(_, summary)| *summary == title).collect();
        ensure!(calls.len() == 1, "the notification server got {} notices titled {title:?}", calls.len());
        ensure!(self.desktop.displayed() == 1, "dunst shows {} notices, not 1", self.desktop.displayed());
        let since = row["state_since"].as_str().context("the row has no state_since")?;
        let since_nanos = tests::parse_rfc3339(since).context("state_since is not RFC 3339")?;
        let since = UNIX_EPOCH + Duration::from_nanos(u64::try_from(since_nanos).unwrap_or(0));
        let latency = calls[0].0.duration_since(since).unwrap_or_default();
        ensure!(
            latency <= NOTICE_LATENCY_LIMIT,
            "the notice reached the notification server {latency:?} after the state change (limit 1 s)"
        );

        let before = client_pane_at(&self.terminal_socket, &self.client.name);
        ensure!(before != harness_pane, "the client showed the harness's pane before the action");
        self.desktop.dunstctl(&["action", "0"]).context("dunstctl action 0 failed")?;
        let started = Instant::now();
        while client_pane_at(&self.terminal_socket, &self.client.name) != harness_pane {
            ensure!(
                started.elapsed() < NOTIFIER_DEADLINE,
                "the notice's action did not take the client to {harness_pane}; stderr: {}",
                self.stderr.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(format!(
            "one notice {title:?}, at dunst {} ms after the state change; its action took the client to \
             {harness_pane} in {} ms",
            latency.as_millis(),
            started.elapsed().as_millis()
        ))
    }

    /// Judges the notice once the session stopped waiting: withdrawn after the flap
    /// window, closed on the desktop, and no other handed over.
    pub(super) fn judge_closed(&self) -> StepResult {
        let closed = (|| -> anyhow::Result<String> {
            self.wait_for("withdraw", 1)?;
            let started = Instant::now();
            while self.desktop.displayed() != 0 {
                ensure!(started.elapsed() < NOTIFIER_DEADLINE, "dunst still shows the notice");
                std::thread::sleep(Duration::from_millis(50));
            }
            ensure!(self.desktop.close_calls() >= 1, "no CloseNotification reached the bus");
            let shows = self.actions("show").len() + self.actions("replace").len();
            ensure!(shows == 1, "roster-notify handed over {shows} notices");
            Ok(format!("withdrawn {FLAP_WINDOW_SECONDS} s after the wait ended, closed on the desktop"))
        })();
        match closed {
            Ok(shown) => StepResult::Proven(shown),
            Err(error) => StepResult::Failed(format!("{error:#}")),
        }
    }
}

impl Drop for NoticeWatch {
    fn drop(&mut self) {
        let _ = self.notifier.kill();
        let _ = self.notifier.wait();
    }
}
