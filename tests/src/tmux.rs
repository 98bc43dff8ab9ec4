//! Real tmux for the tests: a server of its own on a socket in a scratch
//! directory, and a client attached to it through a pseudo-terminal, as a
//! person's terminal is (the focus tests, the notifier's "in front of
//! you").

use std::path::{Path, PathBuf};
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
        tmux_at(&self.socket, args).unwrap_or_else(|why| panic!("{why}"))
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
        let pid: u32 = pid.parse().expect("a pid");
        wait_for_the_pane_to_start(pid, &self.socket);
        (pane.to_owned(), pid)
    }

    /// The pane a client shows now.
    pub fn client_pane(&self, client: &str) -> String {
        client_pane_at(&self.socket, client)
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
        clients_at(&self.socket)
    }
}

/// Runs `tmux -S SOCKET args…` against a server started anywhere; its
/// stdout, or the failure with tmux's words.
fn tmux_at(socket: &Path, args: &[&str]) -> Result<String, String> {
    let output = Command::new("tmux")
        .arg("-S")
        .arg(socket)
        .args(args)
        .env("TERM", "xterm-256color")
        .stdin(Stdio::null())
        .output()
        .map_err(|error| format!("tmux could not run: {error}"))?;
    if !output.status.success() {
        return Err(format!("tmux {args:?}: {}", String::from_utf8_lossy(&output.stderr).trim()));
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

/// Waits until the pane's process runs its own program: tmux prints the
/// pid as soon as it has forked, and until the child's exec its
/// environment is still the server's, without the `TMUX` naming `socket`
/// that tells a registration where the session shows.
pub fn wait_for_the_pane_to_start(pid: u32, socket: &Path) {
    let environ = format!("/proc/{pid}/environ");
    let naming_the_server = format!("TMUX={},", socket.display()).into_bytes();
    let started = poll_until(Duration::from_secs(10), || {
        std::fs::read(&environ).is_ok_and(|bytes| {
            bytes.split(|byte| *byte == 0).any(|entry| entry.starts_with(&naming_the_server))
        })
    });
    assert!(started, "pane process {pid} never showed TMUX={} in its environment", socket.display());
}

/// The clients attached to the tmux server on `socket`.
pub fn clients_at(socket: &Path) -> Vec<String> {
    let listed =
        tmux_at(socket, &["list-clients", "-F", "#{client_name}"]).unwrap_or_else(|why| panic!("{why}"));
    listed.lines().map(str::to_owned).collect()
}

/// The pane `client` of the tmux server on `socket` shows now.
pub fn client_pane_at(socket: &Path, client: &str) -> String {
    tmux_at(socket, &["display-message", "-p", "-c", client, "#{pane_id}"])
        .unwrap_or_else(|why| panic!("{why}"))
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
        AttachedClient::attach_at(&server.socket, session)
    }

    /// The same for the tmux server on `socket`, started anywhere.
    pub fn attach_at(socket: &Path, session: &str) -> AttachedClient {
        let script = require_tool("script");
        let before = clients_at(socket);
        let line = format!("tmux -S {} attach-session -t {session}", socket.display());
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
                name = clients_at(socket).into_iter().find(|client| !before.contains(client));
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
