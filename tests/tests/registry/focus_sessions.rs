//! Where sessions show, and going there (docs/contract.md §3 `location`,
//! §6.2, §6.8), with real tmux servers and a client attached through a
//! pseudo-terminal: a session registered in a pane records it, the listing
//! checks it against the server, `roster-focus` switches the attached
//! client to that pane across sessions and servers, and a location that no
//! longer holds (the pane number now another process's, the server gone)
//! is shown stale and never focused.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;
use tests::tmux::{AttachedClient, TmuxServer};
use tests::{Sandbox, poll_until, require_tool};

/// Registers the shell a pane runs as a Claude Code session, from outside
/// it (its environment read from /proc).
fn register_pane(sandbox: &Sandbox, pid: u32, session_id: &str) {
    let cwd = sandbox.base().to_string_lossy().into_owned();
    let outcome = sandbox.run(
        "roster-register",
        &["--pid", &pid.to_string(), "--harness", "claude-code", "--session-id", session_id, "--cwd", &cwd],
    );
    outcome.expect_code(0);
}

fn row_of(sandbox: &Sandbox, session_id: &str) -> Value {
    let rows = sandbox.run("roster-list", &["--json"]).json();
    rows.as_array()
        .unwrap()
        .iter()
        .find(|row| row["session_id"] == session_id)
        .unwrap_or_else(|| panic!("no row for {session_id}: {rows:#}"))
        .clone()
}

#[test]
fn a_session_in_a_tmux_pane_is_listed_there_and_focus_takes_the_attached_client_to_it() {
    let sandbox = Sandbox::new();
    let server = TmuxServer::start("work");
    server.tmux(&["new-session", "-d", "-s", "play"]);
    let (pane, shell) = server.new_window("work");
    register_pane(&sandbox, shell, "in-work");

    let row = row_of(&sandbox, "in-work");
    let location = &row["location"];
    assert_eq!(location["multiplexer"], "tmux", "{row:#}");
    assert_eq!(location["server"], server.socket(), "{row:#}");
    assert_eq!(location["pane"], pane.as_str(), "{row:#}");
    assert_eq!(location["status"], "current", "{row:#}");
    assert!(location["shown"].as_str().unwrap().starts_with("tmux work:"), "{row:#}");
    let table = sandbox.run("roster-list", &["--width", "300"]);
    assert!(
        table.stdout_text().contains("LOCATION") && table.stdout_text().contains("tmux work:"),
        "{table}"
    );

    // No client attached: out of reach, and how to attach is printed.
    let unattached = sandbox.run("roster-focus", &["in-work"]);
    unattached.expect_code(7);
    assert!(unattached.stdout_text().contains("attach-session"), "{unattached}");
    assert!(unattached.stderr.contains("no client is attached"), "{unattached}");

    // A client on the other session: focus crosses sessions to the pane.
    let client = AttachedClient::attach(&server, "play");
    assert_ne!(server.client_pane(&client.name), pane);
    let printed = sandbox.run("roster-focus", &["--print", "in-work"]);
    printed.expect_code(0);
    assert!(
        printed.stdout_text().contains("switch-client") && printed.stdout_text().contains(&pane),
        "{printed}"
    );
    assert_ne!(server.client_pane(&client.name), pane, "--print went there");
    let focused = sandbox.run("roster-focus", &["in-work"]);
    focused.expect_code(0);
    assert!(focused.stdout_text().starts_with("went to pid"), "{focused}");
    assert_eq!(server.client_pane(&client.name), pane, "{focused}");
}

/// A pid names one process of the caller's own world: roster-focus reads
/// that session's record alone (under strace: no other record of the
/// registry opened), and goes where the whole listing would have gone.
#[test]
fn a_pid_target_reads_its_own_record_alone() {
    let strace = require_tool("strace");
    let sandbox = Sandbox::new();
    let server = TmuxServer::start("work");
    server.tmux(&["new-session", "-d", "-s", "play"]);
    let (pane, shell) = server.new_window("work");
    register_pane(&sandbox, shell, "in-work");
    let others: Vec<tests::Owner> = (0..5).map(|_| tests::Owner::spawn()).collect();
    for (index, other) in others.iter().enumerate() {
        register_pane(&sandbox, other.pid(), &format!("other-{index}"));
    }
    let _client = AttachedClient::attach(&server, "play");

    let log = sandbox.base().join("focus.strace");
    let focus = sandbox.command_in_root("roster-focus", &["--print", &shell.to_string()]);
    let mut traced = Command::new(strace);
    traced
        .args(["-f", "-e", "trace=openat,openat2,open", "-o"])
        .arg(&log)
        .arg(focus.get_program())
        .args(focus.get_args())
        .env_clear()
        .envs(focus.get_envs().filter_map(|(name, value)| Some((name, value?))))
        .current_dir(focus.get_current_dir().expect("the sandbox sets a directory"));
    let output = traced.output().expect("run roster-focus under strace");
    let printed = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{printed} {}", String::from_utf8_lossy(&output.stderr));
    assert!(printed.contains("switch-client") && printed.contains(&pane), "{printed}");
    let trace = std::fs::read_to_string(&log).expect("the strace log");
    let opened_records: Vec<&str> =
        trace.lines().filter(|line| line.contains("@") && line.contains(".json\"")).collect();
    assert!(
        !opened_records.is_empty() && opened_records.iter().all(|line| line.contains(&format!("\"{shell}@"))),
        "records opened: {opened_records:#?}"
    );
    // The same session named by its id, found through the whole listing: the same place.
    let listed = sandbox.run("roster-focus", &["--print", "in-work"]);
    listed.expect_code(0);
    assert_eq!(listed.stdout_text(), printed, "{listed}");
}

#[test]
fn focus_reaches_the_right_server_and_next_waiting_picks_the_longest_waiting_session() {
    let sandbox = Sandbox::new();
    let first = TmuxServer::start("alpha");
    let second = TmuxServer::start("beta");
    let (first_pane, first_shell) = first.new_window("alpha");
    let (second_pane, second_shell) = second.new_window("beta");
    register_pane(&sandbox, first_shell, "on-first");
    register_pane(&sandbox, second_shell, "on-second");
    let first_client = AttachedClient::attach(&first, "alpha");
    let second_client = AttachedClient::attach(&second, "beta");

    // The second session has waited longer.
    for (pid, session_id) in [(second_shell, "on-second"), (first_shell, "on-first")] {
        let command = sandbox.command_in_root(
            "roster-state",
            &["--harness", "claude-code", "--event", "PermissionRequest", "--pid", &pid.to_string()],
        );
        let payload = format!(r#"{{"session_id":"{session_id}","hook_event_name":"PermissionRequest"}}"#);
        let run = tests::run_to_completion(
            command,
            tests::StdinFeed::Bytes(payload.into_bytes()),
            tests::COMMAND_DEADLINE,
        );
        assert_eq!(run.code(), Some(0), "{}", run.stderr_text());
        std::thread::sleep(Duration::from_millis(20));
    }
    let json = sandbox.run("roster-focus", &["--next-waiting", "--json"]);
    json.expect_code(0);
    let answer = json.json();
    assert_eq!(answer["session_id"], "on-second", "{answer:#}");
    assert_eq!(answer["outcome"], "focused", "{answer:#}");
    assert_eq!(second.client_pane(&second_client.name), second_pane);
    assert_ne!(first.client_pane(&first_client.name), first_pane, "the other server's client moved");

    sandbox.run("roster-focus", &["on-first"]).expect_code(0);
    assert_eq!(first.client_pane(&first_client.name), first_pane);
}

#[test]
fn a_pane_number_now_anothers_or_a_server_gone_is_stale_and_never_focused() {
    let sandbox = Sandbox::new();
    let server = TmuxServer::start("work");
    let (reused_pane, _) = server.new_window("work");
    let _client = AttachedClient::attach(&server, "work");
    // An owner whose environment names that pane, as one started there
    // before its server restarted would: the pane now runs another shell.
    let tmux_variable = format!("{},1,0", server.socket());
    let mut owner = Command::new("sleep")
        .arg("600")
        .env("TMUX", &tmux_variable)
        .env("TMUX_PANE", &reused_pane)
        .spawn()
        .expect("spawn an owner");
    register_pane(&sandbox, owner.id(), "reused");
    let row = row_of(&sandbox, "reused");
    assert_eq!(row["location"]["status"], "stale", "{row:#}");
    assert!(row["location"]["reason"].as_str().unwrap().contains("reused"), "{row:#}");
    let table = sandbox.run("roster-list", &["--width", "300"]);
    assert!(table.stdout_text().contains(&format!("tmux {reused_pane} (stale)")), "{table}");
    let refused = sandbox.run("roster-focus", &["reused"]);
    refused.expect_code(3);
    assert!(refused.stderr.contains("no longer holds"), "{refused}");

    // A pane closed: an owner that named it (it left tmux, or was started
    // with its variables) is stale.
    let (closed_pane, _) = server.new_window("work");
    let mut left = Command::new("sleep")
        .arg("600")
        .env("TMUX", &tmux_variable)
        .env("TMUX_PANE", &closed_pane)
        .spawn()
        .expect("spawn an owner");
    register_pane(&sandbox, left.id(), "left-tmux");
    server.tmux(&["kill-pane", "-t", &closed_pane]);
    let row = row_of(&sandbox, "left-tmux");
    assert_eq!(row["location"]["status"], "stale", "{row:#}");
    assert!(row["location"]["reason"].as_str().unwrap().contains("no longer on the tmux server"), "{row:#}");
    sandbox.run("roster-focus", &["left-tmux"]).expect_code(3);
    let _ = left.kill();
    let _ = left.wait();

    // The server gone: stale too, and nothing is run.
    drop(_client);
    drop(server);
    let row = row_of(&sandbox, "reused");
    assert_eq!(row["location"]["status"], "stale", "{row:#}");
    sandbox.run("roster-focus", &["reused"]).expect_code(3);
    let _ = owner.kill();
    let _ = owner.wait();
}

#[test]
fn a_session_on_a_terminal_of_its_own_says_where_it_is_and_that_it_cannot_be_focused() {
    let sandbox = Sandbox::new();
    // A shell on a pseudo-terminal of its own (script), no multiplexer.
    let script = require_tool("script");
    let mut terminal = Command::new(script)
        .args(["-qfec", "exec sleep 600", "/dev/null"])
        .env_remove("TMUX")
        .env_remove("TMUX_PANE")
        .env_remove("STY")
        .env("TERM_PROGRAM", "xterm")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("a terminal");
    // The child once it is `sleep` on its terminal (script's child sets
    // up the terminal, then becomes the shell, then sleep).
    let mut sleeper = None;
    assert!(poll_until(Duration::from_secs(10), || {
        sleeper = children_of(terminal.id()).into_iter().find(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|comm| comm.trim() == "sleep")
        });
        sleeper.is_some()
    }));
    let sleeper = sleeper.unwrap();
    register_pane(&sandbox, sleeper, "on-a-terminal");
    let row = row_of(&sandbox, "on-a-terminal");
    let tty = row["location"]["tty"].as_str().expect("a tty").to_owned();
    assert!(tty.starts_with("pts/"), "{row:#}");
    assert_eq!(row["location"]["status"], "current", "{row:#}");
    assert_eq!(row["location"]["terminal"], "xterm", "{row:#}");
    let refused = sandbox.run("roster-focus", &["on-a-terminal"]);
    refused.expect_code(7);
    assert!(refused.stderr.contains(&tty) && refused.stderr.contains("xterm"), "{refused}");
    let _ = terminal.kill();
    let _ = terminal.wait();
}

/// The pids whose parent is `pid`.
fn children_of(pid: u32) -> Vec<u32> {
    let path = Path::new("/proc").join(pid.to_string()).join("task").join(pid.to_string()).join("children");
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|word| word.parse().ok())
        .collect()
}

/// A GNU screen session of its own, detached, with two windows. Quit when
/// dropped.
struct ScreenSession {
    /// `STY`: `<pid of SCREEN>.<name>`.
    sty: String,
}

impl ScreenSession {
    fn start(name: &str) -> ScreenSession {
        require_tool("screen");
        let started = Command::new("screen").args(["-dmS", name]).status().expect("run screen");
        assert!(started.success());
        let mut sty = None;
        assert!(poll_until(Duration::from_secs(10), || {
            let listing = Command::new("screen").args(["-ls", name]).output().expect("screen -ls");
            sty = String::from_utf8_lossy(&listing.stdout)
                .lines()
                .filter_map(|line| line.split_whitespace().next())
                .find(|word| word.ends_with(&format!(".{name}")))
                .map(str::to_owned);
            sty.is_some()
        }));
        let session = ScreenSession { sty: sty.expect("a screen session") };
        session.screen(&["-X", "screen"]);
        // Both windows' shells, found the way the tests find them.
        assert!(poll_until(Duration::from_secs(10), || {
            session.window_shell("0").is_some() && session.window_shell("1").is_some()
        }));
        session
    }

    fn screen(&self, args: &[&str]) -> String {
        let output = Command::new("screen").arg("-S").arg(&self.sty).args(args).output().expect("run screen");
        String::from_utf8_lossy(&output.stdout).trim().to_owned()
    }

    fn screen_pid(&self) -> u32 {
        self.sty.split('.').next().unwrap().parse().unwrap()
    }

    /// The shell window `window` runs: the SCREEN process's child whose
    /// environment says that window.
    fn window_shell(&self, window: &str) -> Option<u32> {
        children_of(self.screen_pid()).into_iter().find(|pid| {
            std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|environ| {
                environ.split(|&byte| byte == 0).any(|entry| entry == format!("WINDOW={window}").as_bytes())
            })
        })
    }

    fn attached(&self) -> bool {
        let listing = Command::new("screen").args(["-ls", &self.sty]).output().expect("screen -ls");
        String::from_utf8_lossy(&listing.stdout).contains("(Attached)")
    }
}

impl Drop for ScreenSession {
    fn drop(&mut self) {
        let _ = Command::new("screen").args(["-S", &self.sty, "-X", "quit"]).output();
    }
}

#[test]
fn a_session_in_a_screen_window_is_listed_there_and_focus_selects_that_window() {
    let sandbox = Sandbox::new();
    let name = format!("roster-{}", std::process::id());
    let screen = ScreenSession::start(&name);
    let shell = screen.window_shell("0").expect("window 0's shell");
    register_pane(&sandbox, shell, "in-screen");
    let row = row_of(&sandbox, "in-screen");
    assert_eq!(row["location"]["multiplexer"], "screen", "{row:#}");
    assert_eq!(row["location"]["server"], screen.sty.as_str(), "{row:#}");
    assert_eq!(row["location"]["status"], "current", "{row:#}");
    assert_eq!(row["location"]["shown"], format!("screen {name}:0"), "{row:#}");

    let detached = sandbox.run("roster-focus", &["in-screen"]);
    detached.expect_code(7);
    assert!(detached.stdout_text().contains(&format!("screen -r {} -p 0", screen.sty)), "{detached}");

    let script = require_tool("script");
    let mut display = Command::new(script)
        .args(["-qfec", &format!("screen -r {}", screen.sty), "/dev/null"])
        .env("TERM", "xterm-256color")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("attach a display");
    assert!(poll_until(Duration::from_secs(10), || screen.attached()), "the display never attached");
    screen.screen(&["-X", "select", "1"]);
    assert!(poll_until(Duration::from_secs(5), || screen.screen(&["-Q", "number"]).starts_with('1')));
    let focused = sandbox.run("roster-focus", &["in-screen"]);
    focused.expect_code(0);
    assert!(
        poll_until(Duration::from_secs(5), || screen.screen(&["-Q", "number"]).starts_with('0')),
        "the display shows {}",
        screen.screen(&["-Q", "number"])
    );

    // A screen session that is none of the owner's ancestors: stale.
    let mut outsider = Command::new("sleep")
        .arg("600")
        .env("STY", format!("{}.{name}", u32::MAX / 1024))
        .env("WINDOW", "0")
        .spawn()
        .expect("spawn an owner");
    register_pane(&sandbox, outsider.id(), "not-in-screen");
    let row = row_of(&sandbox, "not-in-screen");
    assert_eq!(row["location"]["status"], "stale", "{row:#}");
    sandbox.run("roster-focus", &["not-in-screen"]).expect_code(3);
    let _ = outsider.kill();
    let _ = outsider.wait();
    let _ = display.kill();
    let _ = display.wait();
}

/// A kitty with remote control on a socket of its own, on an X server of
/// its own (Xvfb, software rendering), its first window running `sleep`.
/// Both killed when dropped.
struct KittyTerminal {
    xvfb: Child,
    kitty: Child,
    address: String,
    _directory: tempfile::TempDir,
}

impl KittyTerminal {
    fn start() -> KittyTerminal {
        let xvfb_program = require_tool("Xvfb");
        let kitty_program = require_tool("kitty");
        let display = (90..190)
            .find(|number| !Path::new(&format!("/tmp/.X11-unix/X{number}")).exists())
            .expect("a free X display");
        let xvfb = Command::new(xvfb_program)
            .args([&format!(":{display}"), "-screen", "0", "1280x800x24", "-nolisten", "tcp"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start Xvfb");
        assert!(
            poll_until(Duration::from_secs(10), || Path::new(&format!("/tmp/.X11-unix/X{display}")).exists())
        );
        let directory = tempfile::tempdir().expect("a scratch directory");
        let address = format!("unix:{}", directory.path().join("kitty.sock").display());
        let kitty = Command::new(kitty_program)
            .args(["-o", "allow_remote_control=yes", "--listen-on", &address, "sleep", "600"])
            .env("DISPLAY", format!(":{display}"))
            .env("LIBGL_ALWAYS_SOFTWARE", "1")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start kitty");
        let terminal = KittyTerminal { xvfb, kitty, address, _directory: directory };
        assert!(
            poll_until(Duration::from_secs(30), || terminal
                .windows()
                .is_some_and(|windows| !windows.is_empty())),
            "kitty never answered on {}",
            terminal.address
        );
        terminal
    }

    fn kitty(&self, args: &[&str]) -> Option<String> {
        let output = Command::new("kitty").args(["@", "--to", &self.address]).args(args).output().ok()?;
        output.status.success().then(|| String::from_utf8_lossy(&output.stdout).into_owned())
    }

    /// Each window's id, the pid it started, and whether it has the focus.
    fn windows(&self) -> Option<Vec<(u64, u32, bool)>> {
        let tree: Value = serde_json::from_str(&self.kitty(&["ls"])?).ok()?;
        let mut windows = Vec::new();
        for os_window in tree.as_array()? {
            for tab in os_window["tabs"].as_array()? {
                for window in tab["windows"].as_array()? {
                    windows.push((
                        window["id"].as_u64()?,
                        u32::try_from(window["pid"].as_u64()?).ok()?,
                        window["is_focused"].as_bool().unwrap_or(false),
                    ));
                }
            }
        }
        Some(windows)
    }

    fn focused(&self) -> Option<u64> {
        self.windows()?.into_iter().find(|(_, _, focused)| *focused).map(|(id, _, _)| id)
    }
}

impl Drop for KittyTerminal {
    fn drop(&mut self) {
        for child in [&mut self.kitty, &mut self.xvfb] {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[test]
fn a_session_in_a_kitty_window_is_listed_there_and_focus_focuses_that_window() {
    let sandbox = Sandbox::new();
    let kitty = KittyTerminal::start();
    let (first, first_pid, _) = kitty.windows().unwrap()[0];
    kitty.kitty(&["launch", "--type=window", "sleep", "600"]).expect("a second window");
    assert!(poll_until(Duration::from_secs(10), || kitty
        .windows()
        .is_some_and(|windows| windows.len() == 2)));
    let (second, _, _) = *kitty.windows().unwrap().iter().find(|(id, _, _)| *id != first).unwrap();
    register_pane(&sandbox, first_pid, "in-kitty");
    let row = row_of(&sandbox, "in-kitty");
    assert_eq!(row["location"]["multiplexer"], "kitty", "{row:#}");
    assert_eq!(row["location"]["server"], kitty.address.as_str(), "{row:#}");
    assert_eq!(row["location"]["pane"], first.to_string(), "{row:#}");
    assert_eq!(row["location"]["status"], "current", "{row:#}");

    kitty.kitty(&["focus-window", "--match", &format!("id:{second}")]).expect("focus the second window");
    assert!(poll_until(Duration::from_secs(5), || kitty.focused() == Some(second)));
    sandbox.run("roster-focus", &["in-kitty"]).expect_code(0);
    assert!(
        poll_until(Duration::from_secs(5), || kitty.focused() == Some(first)),
        "focused: {:?}",
        kitty.focused()
    );

    // An owner that names the second window, which runs another process.
    let mut outsider = Command::new("sleep")
        .arg("600")
        .env("KITTY_LISTEN_ON", &kitty.address)
        .env("KITTY_WINDOW_ID", second.to_string())
        .spawn()
        .expect("spawn an owner");
    register_pane(&sandbox, outsider.id(), "not-in-kitty");
    assert_eq!(row_of(&sandbox, "not-in-kitty")["location"]["status"], "stale");
    sandbox.run("roster-focus", &["not-in-kitty"]).expect_code(3);
    let _ = outsider.kill();
    let _ = outsider.wait();
}

/// `roster-focus --host`: the session is found, checked and focused on the
/// other machine (an sshd on 127.0.0.1 with a registry of its own), whose
/// attached client is switched; with none attached there, the command that
/// attaches one through ssh is printed.
#[test]
fn focus_on_another_host_switches_that_hosts_client_or_prints_how_to_attach_there() {
    use tests::sshd::{SshClient, SshHost};
    let client = SshClient::new();
    let binaries =
        tests::binary("roster-focus").parent().expect("a directory").to_string_lossy().into_owned();
    let host = SshHost::start(&client, &format!("{binaries}:/usr/bin:/bin"));
    let server = TmuxServer::start("far");
    let (pane, shell) = server.new_window("far");
    let cwd = host.base().to_string_lossy().into_owned();
    let registered = Command::new(tests::binary("roster-register"))
        .arg("--dir")
        .arg(host.registry())
        .args([
            "--pid",
            &shell.to_string(),
            "--harness",
            "claude-code",
            "--session-id",
            "far-away",
            "--cwd",
            &cwd,
        ])
        .output()
        .expect("register on the host");
    assert!(registered.status.success(), "{}", String::from_utf8_lossy(&registered.stderr));
    let sandbox = Sandbox::new();
    let focus = |args: &[&str]| {
        let mut command = sandbox.command("roster-focus");
        command.args(["--host", &host.address()]).args(args).env("ROSTER_SSH_COMMAND", client.ssh_command());
        tests::run_with_deadline(&mut command, Duration::from_secs(60))
    };

    // No client attached there: how to attach, through ssh, with a terminal.
    let unattached = focus(&["far-away"]);
    unattached.expect_code(7);
    let attach = unattached.stdout_text();
    assert!(
        attach.contains("-t") && attach.contains("attach-session") && attach.contains(&pane),
        "{unattached}"
    );

    let attached = AttachedClient::attach(&server, "far");
    server.tmux(&["select-window", "-t", "far:0"]);
    assert_ne!(server.client_pane(&attached.name), pane);
    let focused = focus(&["--json", "far-away"]);
    focused.expect_code(0);
    let answer = focused.json();
    assert_eq!(
        (answer["outcome"].as_str(), answer["host"].as_str()),
        (Some("focused"), Some(host.address().as_str()))
    );
    assert_eq!(server.client_pane(&attached.name), pane);
    // A session the host does not have.
    focus(&["nowhere"]).expect_code(3);
}
