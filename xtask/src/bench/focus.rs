//! roster-focus's figure: `roster-focus --print PID` resolving a live
//! session whose recorded location is a real tmux pane (a tmux server of
//! the bench's own, a client attached to it), in the largest live
//! registry, timed in the same rounds as its floor: the two questions to
//! the tmux server it cannot do without (does the pane still run the
//! session, which client to switch), asked by tmux itself.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, bail};
use owner_liveness::OwnerIdentity;

use super::report::Figure;
use super::{Bench, LiveRegistries, progress, unregister};
use ::tests::measure::{Invocation, Samples};
use ::tests::seed::session_id_for;
use ::tests::shell_quote;
use ::tests::tmux::AttachedClient;

/// The figures' names.
pub const FOCUS_PRINT: &str = "roster-focus --print PID (a session in a tmux pane)";
pub const TRUE_BESIDE_FOCUS: &str = "/bin/true (focus rounds)";
pub const TMUX_QUERIES_BESIDE_FOCUS: &str = "tmux list-panes -a + tmux list-clients (focus rounds)";

/// The tmux session the owner's pane is in.
const TMUX_SESSION: &str = "bench";

/// The ordinal the focused session's id is made from: far from the seeded
/// records' and the registrations'.
const FOCUSED_ORDINAL: usize = 3_000_000;

/// A tmux server of the bench's own, its socket in the bench's scratch
/// directory, no configuration read; killed when dropped.
struct BenchTmux {
    socket: PathBuf,
}

impl BenchTmux {
    /// Starts the server with one session whose pane runs `sleep` (the
    /// session's owner): the pane's id and the owner's pid.
    fn start(directory: &Path) -> anyhow::Result<(BenchTmux, String, u32)> {
        std::fs::create_dir_all(directory).with_context(|| format!("create {}", directory.display()))?;
        let server = BenchTmux { socket: directory.join("tmux.sock") };
        // `exec`: the pane's process is the owner itself, not a shell
        // waiting for it.
        let line = server.tmux(&[
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            TMUX_SESSION,
            "-x",
            "160",
            "-y",
            "48",
            "-P",
            "-F",
            "#{pane_id} #{pane_pid}",
            "exec sleep 86400",
        ])?;
        let (pane, pid) = line.split_once(' ').with_context(|| format!("tmux printed {line:?}"))?;
        let pid = pid.parse().with_context(|| format!("tmux printed {line:?}"))?;
        ::tests::tmux::wait_for_the_pane_to_start(pid, &server.socket);
        let pane = pane.to_owned();
        Ok((server, pane, pid))
    }

    /// `tmux -S SOCKET arguments…`, which must succeed: its stdout.
    fn tmux(&self, arguments: &[&str]) -> anyhow::Result<String> {
        let output = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .args(arguments)
            .env("TERM", "xterm-256color")
            .stdin(Stdio::null())
            .output()
            .context("run tmux (Debian package: tmux)")?;
        if !output.status.success() {
            bail!(
                "tmux -S {} {arguments:?} failed: {}",
                self.socket.display(),
                String::from_utf8_lossy(&output.stderr).trim()
            );
        }
        Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
    }
}

impl Drop for BenchTmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux").arg("-S").arg(&self.socket).arg("kill-server").output();
    }
}

impl Bench {
    /// `roster-focus --print PID` of a session registered from a tmux pane
    /// into the largest live registry, against `/bin/true` and the two
    /// tmux commands focus asks the server (`list-panes -a` and
    /// `list-clients`, as it words them; their times added round by round),
    /// all in the same rounds, the order rotating every round.
    ///
    /// The session is real: a tmux server of the bench's own (socket in the
    /// scratch directory, `-f /dev/null`) runs `sleep` in a pane, and
    /// `roster-register --pid` of that process records the pane from its
    /// environment (`TMUX`, `TMUX_PANE`), as a harness's registration
    /// does. A client is attached through a pseudo-terminal, as a person's
    /// terminal is, so that focus finds one to switch (with none it says
    /// the session is out of reach). Before the rounds, `--print` is
    /// checked once to print the tmux command that goes to that pane. The
    /// record leaves the registry afterwards, so that it keeps its size.
    pub(super) fn measure_focus(&self, live: &LiveRegistries) -> anyhow::Result<Vec<Figure>> {
        let largest = *self.sizes.last().expect("sizes are listed");
        progress(&format!(
            "timing roster-focus --print of a session in a tmux pane among {} sessions, /bin/true and \
             roster-list",
            super::thousands(largest)
        ));
        let registry = live.get(largest);
        let (server, pane, owner_pid) = BenchTmux::start(&self.scratch.join("focus-tmux"))?;
        let _client = AttachedClient::attach_at(&server.socket, TMUX_SESSION);
        let owner_pid = owner_liveness::Pid::new(owner_pid).context("the pane's pid")?;
        let owner: OwnerIdentity =
            owner_liveness::capture_identity(owner_pid).context("capture the pane's owner's identity")?;
        let session_id = session_id_for(FOCUSED_ORDINAL, &owner);
        let register = Invocation::new(self.tool("roster-register"))
            .arg("--dir")
            .arg(&registry.root)
            .arg("--pid")
            .arg(owner_pid.to_string())
            .args(["--harness", "claude-code", "--agent", "focused", "--session-id", &session_id])
            .arg("--cwd")
            .arg(&self.work_directory)
            .arg("--quiet");
        register.time_once().context("register the session in the tmux pane")?;

        // No session of a harness's own files may join the rows: a home
        // of its own, empty.
        let home = self.scratch.join("focus-home");
        std::fs::create_dir_all(&home).with_context(|| format!("create {}", home.display()))?;
        let focus = Invocation::new(self.tool("roster-focus"))
            .args(["--print", &owner_pid.to_string(), "--dir"])
            .arg(&registry.root)
            .env("HOME", &home);
        check_focus_prints_the_pane(&focus, &server.socket, &pane)?;
        let true_program = Invocation::new(&self.true_program);
        let panes = Invocation::new("tmux").arg("-S").arg(&server.socket).args([
            "list-panes",
            "-a",
            "-F",
            "#{pane_id} #{pane_pid} #{session_name}:#{window_index}.#{pane_index}",
        ]);
        let clients = Invocation::new("tmux").arg("-S").arg(&server.socket).args([
            "list-clients",
            "-F",
            "#{client_activity} #{client_name}",
        ]);

        let samples = self.time_in_rounds([&focus, &true_program, &panes, &clients])?;
        unregister(registry, &owner, &session_id)?;
        // The lines name the home the runs had.
        let with_home = |invocation: &Invocation| {
            format!("HOME={} {}", shell_quote(&home.to_string_lossy()), invocation.shell_line())
        };
        drop(server);
        let [focus_samples, true_samples, panes_samples, clients_samples] = samples;
        let mut tmux_samples = Samples::default();
        for (panes, clients) in panes_samples.durations.iter().zip(&clients_samples.durations) {
            tmux_samples.push(*panes + *clients);
        }
        Ok(vec![
            Figure {
                name: FOCUS_PRINT,
                records: Some(largest),
                samples: focus_samples,
                reproduce: with_home(&focus),
            },
            Figure {
                name: TRUE_BESIDE_FOCUS,
                records: None,
                samples: true_samples,
                reproduce: true_program.shell_line(),
            },
            Figure {
                name: TMUX_QUERIES_BESIDE_FOCUS,
                records: None,
                samples: tmux_samples,
                reproduce: format!("{}; {}", panes.shell_line(), clients.shell_line()),
            },
        ])
    }
}

/// Runs `focus` once, untimed: it must succeed and print a tmux command
/// that switches to `pane` on the server at `socket`.
fn check_focus_prints_the_pane(focus: &Invocation, socket: &Path, pane: &str) -> anyhow::Result<()> {
    let mut command = Command::new(&focus.program);
    command
        .args(&focus.arguments)
        .env_clear()
        .envs(std::env::vars_os().filter(|(name, _)| name == "PATH" || name == "LANG"))
        .envs(focus.environment.iter().map(|(name, value)| (name, value)))
        .stdin(Stdio::null());
    let output = command.output().with_context(|| format!("run {}", focus.program.display()))?;
    let printed = String::from_utf8_lossy(&output.stdout);
    // A shell line: words quoted where needed.
    let words: Vec<&str> = printed.split_whitespace().map(|word| word.trim_matches('\'')).collect();
    let socket = socket.to_string_lossy();
    let names_the_pane = words.first() == Some(&"tmux")
        && words.windows(2).any(|pair| pair == ["-S", socket.as_ref()])
        && words.contains(&"switch-client")
        && words.windows(2).any(|pair| pair == ["-t", pane]);
    if !output.status.success() || !names_the_pane {
        bail!(
            "`{}` should print the tmux command that goes to pane {pane} on {socket}, but it exited with {} \
             and printed {:?} (stderr: {})",
            focus.shell_line(),
            output.status,
            printed.trim(),
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(())
}
