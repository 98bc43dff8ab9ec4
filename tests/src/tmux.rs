//! Real tmux for the tests: a server of its own on a socket in a scratch
//! directory, and a client attached to it through a pseudo-terminal, as a
//! person's terminal is (the focus tests, the notifier's "in front of
//! you").

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::{poll_until, require_tool};

/// A tmux server of its own, on a socket in a scratch directory, with no
/// configuration read. Killed when dropped.
pub struct TmuxServer {
    socket: PathBuf,
    _directory: tempfile::TempDir,
}

impl TmuxServer {
    pub fn start(first_session: &str) -> TmuxServer {
        require_tool("tmux");
        let directory = tempfile::tempdir().expect("a scratch directory");
        let socket = directory.path().join("tmux.sock");
        let server = TmuxServer { socket, _directory: directory };
        server.tmux(&["-f", "/dev/null", "new-session", "-d", "-s", first_session, "-x", "160", "-y", "48"]);
        server
    }

    pub fn socket(&self) -> &str {
        self.socket.to_str().expect("a UTF-8 socket path")
    }

    /// Runs `tmux -S SOCKET args…`, which must succeed; its stdout.
    pub fn tmux(&self, args: &[&str]) -> String {
        let output = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(args)
            .env("TERM", "xterm-256color")
            .stdin(Stdio::null())
            .output()
            .expect("run tmux");
        assert!(output.status.success(), "tmux {args:?}: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8_lossy(&output.stdout).trim().to_owned()
    }

    /// A new window in `session`: its pane's id and the pid of the shell
    /// it runs (the process a session started there is or descends from).
    pub fn new_window(&self, session: &str) -> (String, u32) {
        let line = self.tmux(&[
            "new-window",
            "-d",
            "-P",
            "-F",
            "#{pane_id} #{pane_pid}",
            "-t",
            &format!("{session}:"),
        ]);
        let (pane, pid) = line.split_once(' ').expect("pane id and pid");
        (pane.to_owned(), pid.parse().expect("a pid"))
    }

    /// The pane a client shows now.
    pub fn client_pane(&self, client: &str) -> String {
        self.tmux(&["display-message", "-p", "-c", client, "#{pane_id}"])
    }

    /// `TMUX` as a client inside `session` sees it: what a program
    /// started there inherits.
    pub fn tmux_variable(&self, session: &str) -> String {
        let pid = self.tmux(&["display-message", "-p", "-t", &format!("{session}:"), "#{pid}"]);
        format!("{},{pid},0", self.socket.display())
    }

    /// Every window: its name, its pane's directory and its pane's pid.
    pub fn windows(&self) -> Vec<(String, String, u32)> {
        self.tmux(&["list-windows", "-a", "-F", "#{window_name} #{pane_current_path} #{pane_pid}"])
            .lines()
            .filter_map(|line| {
                let mut words = line.split(' ');
                Some((words.next()?.to_owned(), words.next()?.to_owned(), words.next()?.parse().ok()?))
            })
            .collect()
    }

    pub fn clients(&self) -> Vec<String> {
        self.tmux(&["list-clients", "-F", "#{client_name}"]).lines().map(str::to_owned).collect()
    }
}

impl Drop for TmuxServer {
    fn drop(&mut self) {
        let _ = Command::new("tmux").arg("-S").arg(&self.socket).arg("kill-server").output();
    }
}

/// A tmux client attached to `session` of `server` through a
/// pseudo-terminal (`script`), as a person's terminal is. Detached and
/// killed when dropped.
pub struct AttachedClient {
    child: Child,
    pub name: String,
}

impl AttachedClient {
    pub fn attach(server: &TmuxServer, session: &str) -> AttachedClient {
        let script = require_tool("script");
        let before = server.clients();
        let line = format!("tmux -S {} attach-session -t {session}", server.socket());
        let child = Command::new(script)
            .args(["-qfec", &line, "/dev/null"])
            .env("TERM", "xterm-256color")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start a client in a pseudo-terminal");
        let mut name = None;
        assert!(
            poll_until(Duration::from_secs(10), || {
                name = server.clients().into_iter().find(|client| !before.contains(client));
                name.is_some()
            }),
            "the client never attached"
        );
        AttachedClient { child, name: name.expect("a client") }
    }
}

impl Drop for AttachedClient {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
