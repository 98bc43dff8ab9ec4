//! `roster-top` (docs/contract.md §6.10) run in a real tmux pane of a fixed
//! size, driven with `send-keys` and read with `capture-pane`: the rows
//! and their order, a state change redrawn, Enter taking an attached
//! client to the session's pane, `s` sending through roster-send's rules,
//! `a`/`d` through roster-consent's, the pane resized, the terminal given
//! back on `q`, SIGTERM and SIGHUP; an idle view's system calls; and
//! `--summary`.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use tests::{Sandbox, SessionShell, poll_until, require_tool};

use tests::tmux::{AttachedClient, TmuxServer};

/// How long a redraw is waited for: the view redraws as soon as the
/// watch reports, so this bound is only for a loaded machine.
const REDRAW: Duration = Duration::from_secs(5);

/// A stand-in session: a process that sleeps, registered as a Claude
/// Code session with an agent name. Killed when dropped.
struct StandIn {
    child: Child,
}

impl StandIn {
    fn start(sandbox: &Sandbox, agent: &str, cwd: &Path) -> StandIn {
        let child = Command::new("sleep").arg("100000").stdin(Stdio::null()).spawn().expect("spawn sleep");
        let stand_in = StandIn { child };
        register(sandbox, stand_in.pid(), agent, cwd);
        stand_in
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for StandIn {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn register(sandbox: &Sandbox, pid: u32, agent: &str, cwd: &Path) {
    sandbox
        .run(
            "roster-register",
            &[
                "--pid",
                &pid.to_string(),
                "--harness",
                "claude-code",
                "--agent",
                agent,
                "--session-id",
                &format!("id-{agent}"),
                "--cwd",
                cwd.to_str().unwrap(),
            ],
        )
        .expect_code(0);
}

/// Runs the state hook for `pid` as Claude Code would on `event`.
fn set_state(sandbox: &Sandbox, pid: u32, agent: &str, event: &str) {
    let command = sandbox.command_in_root(
        "roster-state",
        &["--harness", "claude-code", "--event", event, "--pid", &pid.to_string()],
    );
    let payload = format!(r#"{{"session_id":"id-{agent}","hook_event_name":"{event}"}}"#);
    let run = tests::run_to_completion(
        command,
        tests::StdinFeed::Bytes(payload.into_bytes()),
        tests::COMMAND_DEADLINE,
    );
    assert_eq!(run.code(), Some(0), "{}", run.stderr_text());
}

/// A tmux server whose one pane runs a shell in the sandbox's clean
/// environment, where roster-top is started (so the shell is there to
/// look at after it quits).
struct TopPane {
    server: TmuxServer,
    /// Assignments typed before the command (tmux sets TERM itself, over
    /// what a session's environment says).
    prefix: String,
}

impl TopPane {
    fn start(sandbox: &Sandbox, width: u16, height: u16, extra: &[&str]) -> TopPane {
        TopPane::start_with_env(sandbox, width, height, extra, &[])
    }

    fn start_with_env(
        sandbox: &Sandbox,
        width: u16,
        height: u16,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> TopPane {
        let pane = TopPane::shell(sandbox, width, height, env);
        pane.run_top(sandbox, extra);
        pane
    }

    /// The pane, its shell waiting for a command.
    fn shell(sandbox: &Sandbox, width: u16, height: u16, env: &[(&str, &str)]) -> TopPane {
        let server = TmuxServer::start("spare");
        let (width, height) = (width.to_string(), height.to_string());
        let home = format!("HOME={}", sandbox.home().to_str().unwrap());
        let path = format!("PATH={}", std::env::var("PATH").unwrap_or_default());
        let prefix: String = env
            .iter()
            .filter(|(key, _)| *key == "TERM")
            .map(|(key, value)| format!("{key}={value} "))
            .collect();
        let env: Vec<String> = env
            .iter()
            .filter(|(key, _)| *key != "TERM")
            .flat_map(|(key, value)| ["-e".to_owned(), format!("{key}={value}")])
            .collect();
        let mut args: Vec<&str> =
            vec!["new-session", "-d", "-s", "top", "-x", &width, "-y", &height, "-e", &home, "-e", &path];
        args.extend(["-e", "PS1=$ "]);
        args.extend(env.iter().map(String::as_str));
        args.extend(["env", "-u", "TMUX", "-u", "TMUX_PANE", "sh"]);
        server.tmux(&args);
        server.tmux(&["set-option", "-t", "top", "window-size", "manual"]);
        TopPane { server, prefix }
    }

    /// A pane with its shell and nothing run in it yet.
    fn start_shell(sandbox: &Sandbox) -> TopPane {
        TopPane::shell(sandbox, 160, 30, &[])
    }

    /// Types a line into the pane's shell.
    fn type_line(&self, line: &str) {
        self.server.tmux(&["send-keys", "-t", "top", "-l", line]);
        self.server.tmux(&["send-keys", "-t", "top", "Enter"]);
    }

    /// Types the roster-top command line into the pane's shell.
    fn run_top(&self, sandbox: &Sandbox, extra: &[&str]) {
        let mut words = vec![
            tests::binary("roster-top").to_string_lossy().into_owned(),
            "--dir".to_owned(),
            sandbox.root().to_string_lossy().into_owned(),
        ];
        words.extend(extra.iter().map(|word| (*word).to_owned()));
        self.server.tmux(&["send-keys", "-t", "top", "-l", &format!("{}{}", self.prefix, words.join(" "))]);
        self.server.tmux(&["send-keys", "-t", "top", "Enter"]);
        assert!(
            poll_until(REDRAW, || self.screen().starts_with("roster-top")),
            "roster-top never drew:\n{}",
            self.screen()
        );
    }

    fn screen(&self) -> String {
        self.server.tmux(&["capture-pane", "-p", "-t", "top"])
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "top"];
        args.extend_from_slice(keys);
        self.server.tmux(&args);
    }

    /// Types text literally.
    fn type_text(&self, text: &str) {
        self.server.tmux(&["send-keys", "-t", "top", "-l", text]);
    }

    fn wait_for(&self, what: &str, shows: impl Fn(&str) -> bool) -> String {
        self.wait_for_within(what, REDRAW, shows)
    }

    fn wait_for_within(&self, what: &str, bound: Duration, shows: impl Fn(&str) -> bool) -> String {
        let mut screen = String::new();
        assert!(
            poll_until(bound, || {
                screen = self.screen();
                shows(&screen)
            }),
            "the view never showed {what}:\n{screen}"
        );
        screen
    }

    /// `#{alternate_on} #{cursor_flag}` of the pane.
    fn terminal_modes(&self) -> String {
        self.server.tmux(&["display-message", "-p", "-t", "top", "#{alternate_on} #{cursor_flag}"])
    }

    fn resize(&self, width: u16, height: u16) {
        self.server.tmux(&[
            "resize-window",
            "-t",
            "top",
            "-x",
            &width.to_string(),
            "-y",
            &height.to_string(),
        ]);
    }

    /// The pid of roster-top: the pane shell's child.
    fn top_pid(&self) -> u32 {
        let shell: u32 =
            self.server.tmux(&["display-message", "-p", "-t", "top", "#{pane_pid}"]).parse().unwrap();
        let mut found = None;
        assert!(
            poll_until(REDRAW, || {
                found = children_of(shell).into_iter().find(|child| {
                    std::fs::read_to_string(format!("/proc/{child}/comm"))
                        .is_ok_and(|comm| comm.trim() == "roster-top")
                });
                found.is_some()
            }),
            "no roster-top under the pane's shell {shell}"
        );
        found.unwrap()
    }

    /// After roster-top ended: the pane is back on its main screen with
    /// the cursor shown, and the shell's prompt is there.
    fn expect_terminal_restored(&self, how: &str) {
        assert!(
            poll_until(REDRAW, || self.terminal_modes() == "0 1"),
            "after {how}: alternate_on cursor_flag = {} (want 0 1):\n{}",
            self.terminal_modes(),
            self.screen()
        );
    }
}

fn children_of(pid: u32) -> Vec<u32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|child| child.parse().ok())
        .collect()
}

/// The line of the screen naming `agent`.
fn line_of<'a>(screen: &'a str, agent: &str) -> &'a str {
    screen.lines().find(|line| line.split_whitespace().any(|word| word == agent)).unwrap_or("")
}

fn row_position(screen: &str, agent: &str) -> usize {
    screen
        .lines()
        .position(|line| line.split_whitespace().any(|word| word == agent))
        .unwrap_or_else(|| panic!("no row for {agent}:\n{screen}"))
}

#[test]
fn the_rows_come_waiting_first_and_a_state_change_or_an_end_is_redrawn() {
    require_tool("tmux");
    let sandbox = Sandbox::new();
    // A repository on a branch: the project column names both, read from
    // .git/HEAD.
    let cwd = sandbox.base().join("shop");
    std::fs::create_dir_all(cwd.join(".git")).unwrap();
    std::fs::write(cwd.join(".git/HEAD"), "ref: refs/heads/feature-x\n").unwrap();
    let idle = StandIn::start(&sandbox, "alpha", &cwd);
    let longest = StandIn::start(&sandbox, "bravo", &cwd);
    let later = StandIn::start(&sandbox, "charlie", &cwd);
    set_state(&sandbox, idle.pid(), "alpha", "Stop");
    set_state(&sandbox, longest.pid(), "bravo", "PermissionRequest");
    std::thread::sleep(Duration::from_millis(20));
    set_state(&sandbox, later.pid(), "charlie", "PermissionRequest");

    let pane = TopPane::start(&sandbox, 120, 30, &[]);
    let screen = pane.wait_for("three rows", |screen| screen.contains("charlie") && screen.contains("alpha"));
    assert!(screen.contains("3 sessions"), "{screen}");
    assert!(
        row_position(&screen, "bravo") < row_position(&screen, "charlie")
            && row_position(&screen, "charlie") < row_position(&screen, "alpha"),
        "waiting first, the longest waiting on top:\n{screen}"
    );
    assert!(line_of(&screen, "bravo").contains("waiting: permission"), "{screen}");
    assert!(line_of(&screen, "alpha").contains("idle"), "{screen}");
    assert!(line_of(&screen, "alpha").contains("shop (feature-x)"), "{screen}");
    for header in ["PID", "HARNESS", "AGENT", "STATE", "PROJECT", "LOCATION", "CONSENT"] {
        assert!(screen.lines().nth(1).unwrap().contains(header), "{header}:\n{screen}");
    }
    // Tab goes round the waiting sessions, the longest waiting first.
    assert!(line_of(&screen, "bravo").starts_with('>'), "{screen}");
    pane.keys(&["Tab"]);
    pane.wait_for("charlie selected", |screen| line_of(screen, "charlie").starts_with('>'));
    pane.keys(&["Tab"]);
    pane.wait_for("bravo selected again", |screen| line_of(screen, "bravo").starts_with('>'));

    // A state change: the longest waiting one starts working, and goes
    // below the one still waiting.
    set_state(&sandbox, longest.pid(), "bravo", "UserPromptSubmit");
    let screen = pane.wait_for("bravo working", |screen| line_of(screen, "bravo").contains("working"));
    assert!(row_position(&screen, "charlie") < row_position(&screen, "bravo"), "{screen}");

    // An end: marked dead, never shown alive, then gone.
    drop(later);
    let screen = pane.wait_for("charlie dead", |screen| line_of(screen, "charlie").contains("dead"));
    assert!(!line_of(&screen, "charlie").contains("waiting"), "{screen}");
    assert!(
        poll_until(Duration::from_secs(20), || !pane.screen().contains("charlie")),
        "the dead row never left:\n{}",
        pane.screen()
    );
    pane.keys(&["q"]);
    pane.expect_terminal_restored("q");
}

#[test]
fn enter_takes_the_attached_client_to_the_sessions_pane() {
    let sandbox = Sandbox::new();
    let sessions = TmuxServer::start("work");
    sessions.tmux(&["new-session", "-d", "-s", "play"]);
    let (pane_id, shell) = sessions.new_window("work");
    register(&sandbox, shell, "paned", &sandbox.base());
    let client = AttachedClient::attach(&sessions, "play");
    assert_ne!(sessions.client_pane(&client.name), pane_id);

    let top = TopPane::start(&sandbox, 120, 30, &[]);
    let screen = top.wait_for("the paned session", |screen| screen.contains("paned"));
    assert!(line_of(&screen, "paned").contains("tmux work:"), "its checked location:\n{screen}");
    top.keys(&["Enter"]);
    assert!(
        poll_until(REDRAW, || sessions.client_pane(&client.name) == pane_id),
        "the client never went to {pane_id}:\n{}",
        top.screen()
    );
    top.wait_for("the status line saying where it went", |screen| screen.contains("went to pid"));
    // `g` does the same after the client moved away.
    sessions.tmux(&["switch-client", "-c", &client.name, "-t", "play"]);
    assert_ne!(sessions.client_pane(&client.name), pane_id);
    top.keys(&["g"]);
    assert!(poll_until(REDRAW, || sessions.client_pane(&client.name) == pane_id), "g did not go there");
    // `n` goes to the next waiting session: once this one waits, from
    // anywhere in the list.
    sessions.tmux(&["switch-client", "-c", &client.name, "-t", "play"]);
    let waiting = StandIn::start(&sandbox, "elsewhere", &sandbox.base());
    set_state(&sandbox, shell, "paned", "PermissionRequest");
    top.wait_for("the paned session waiting", |screen| line_of(screen, "paned").contains("waiting"));
    top.keys(&["End"]);
    top.wait_for("the other one selected", |screen| line_of(screen, "elsewhere").starts_with('>'));
    top.keys(&["n"]);
    assert!(poll_until(REDRAW, || sessions.client_pane(&client.name) == pane_id), "n did not go there");
    // The frame is drawn once roster-focus returned.
    top.wait_for("n selecting it too", |screen| line_of(screen, "paned").starts_with('>'));
    drop(waiting);
    top.keys(&["q"]);
    top.expect_terminal_restored("q");
}

#[test]
fn s_sends_to_an_armed_session_and_shows_the_refusal_of_a_disarmed_one_and_d_disarms() {
    let sandbox = Sandbox::new();
    let project = sandbox.home().join("src/app");
    std::fs::create_dir_all(&project).unwrap();
    // A session that armed itself from inside (its shell runs the arm),
    // whose hooks run as its children, as a harness runs them.
    let mut armed = SessionShell::spawn();
    let cwd = project.to_string_lossy().into_owned();
    let arm = sandbox.command_in_root("roster-consent", &["arm", "--pid", "parent", "--cwd", &cwd]);
    let armed_itself = armed.run(&arm, b"", tests::COMMAND_DEADLINE);
    assert_eq!(armed_itself.code(), Some(0), "{}", armed_itself.stderr_text());
    register(&sandbox, armed.pid(), "armed-one", &project);
    let closed = StandIn::start(&sandbox, "closed-one", &project);
    sandbox.run("roster-consent", &["disarm", "--pid", &closed.pid().to_string()]).expect_code(0);
    // The closed one waits, so it is the first row; the armed one second.
    set_state(&sandbox, closed.pid(), "closed-one", "PermissionRequest");

    let pane = TopPane::start(&sandbox, 140, 30, &[]);
    let screen = pane.wait_for("both sessions", |screen| {
        line_of(screen, "armed-one").contains("armed") && line_of(screen, "closed-one").contains("disarmed")
    });
    assert!(line_of(&screen, "closed-one").starts_with('>'), "the waiting one is selected:\n{screen}");

    // To the disarmed one: refused, said in the status line, nothing queued.
    pane.keys(&["s"]);
    pane.wait_for("the prompt", |screen| screen.contains("send to pid"));
    pane.type_text("please look at the build");
    pane.keys(&["Enter"]);
    let screen = pane.wait_for("the refusal", |screen| screen.contains("does not accept messages"));
    let status = screen.lines().last().unwrap_or("");
    assert!(
        status.starts_with("roster-send exit 1: pid") && status.contains("does not accept messages"),
        "roster-send's status and reason:\n{screen}"
    );
    let rows = sandbox.list(&[]);
    let pending = |pid: u32| {
        rows.iter().find(|row| row["session_pid"] == pid).map(|row| row["messages_pending"].clone()).unwrap()
    };
    assert_eq!(pending(closed.pid()), 0);

    // To the armed one: queued, said, and counted in its row.
    pane.keys(&["j"]);
    pane.wait_for("the armed one selected", |screen| line_of(screen, "armed-one").starts_with('>'));
    pane.keys(&["s"]);
    pane.type_text("rebase onto main");
    pane.keys(&["Enter"]);
    pane.wait_for("the message queued", |screen| screen.lines().last().unwrap_or("").contains("queued"));
    let rows = sandbox.list(&[]);
    let pending =
        rows.iter().find(|row| row["session_pid"] == armed.pid()).unwrap()["messages_pending"].clone();
    assert_eq!(pending, 1, "{rows:#?}");
    pane.wait_for("its message counted", |screen| {
        line_of(screen, "armed-one").split_whitespace().any(|word| word == "1")
    });
    // Delivered: the session's next prompt hook hands the text to its
    // model, and the row's count goes back to none.
    let session_id =
        sandbox.list(&[]).iter().find(|row| row["session_pid"] == armed.pid()).unwrap()["session_id"]
            .as_str()
            .unwrap()
            .to_owned();
    let payload = serde_json::json!({
        "session_id": session_id, "hook_event_name": "UserPromptSubmit", "prompt": "go on",
        "cwd": cwd, "transcript_path": format!("{cwd}/transcript.jsonl"), "permission_mode": "default",
    });
    let hook =
        sandbox.command_in_root("roster-state", &["--hook", "claude-code", "--event", "UserPromptSubmit"]);
    let delivered = armed.run(&hook, &serde_json::to_vec(&payload).unwrap(), tests::COMMAND_DEADLINE);
    assert_eq!(delivered.code(), Some(0), "{}", delivered.stderr_text());
    let reply: serde_json::Value = serde_json::from_slice(&delivered.stdout).expect("the hook's JSON reply");
    let context = reply["hookSpecificOutput"]["additionalContext"].as_str().unwrap_or_default();
    assert!(context.contains("rebase onto main"), "the message was not handed over: {reply}");
    pane.wait_for("its count back to none", |screen| {
        !line_of(screen, "armed-one").split_whitespace().any(|word| word == "1")
    });

    // `a` from outside the session is refused by roster-consent's rule;
    // `d` disarms it.
    pane.keys(&["a"]);
    pane.wait_for("arm refused", |screen| {
        screen.lines().last().unwrap_or("").starts_with("roster-consent exit 3")
    });
    pane.keys(&["d"]);
    pane.wait_for("disarmed", |screen| line_of(screen, "armed-one").contains("off (disarmed)"));
    pane.keys(&["q"]);
    pane.expect_terminal_restored("q");
}

#[test]
fn the_view_fits_80_by_24_and_200_by_50_and_filters() {
    let sandbox = Sandbox::new();
    let cwd = sandbox.base();
    let owners: Vec<StandIn> =
        ["api", "web", "docs"].iter().map(|agent| StandIn::start(&sandbox, agent, &cwd)).collect();
    set_state(&sandbox, owners[0].pid(), "api", "PermissionRequest");
    let pane = TopPane::start(&sandbox, 120, 30, &[]);
    pane.wait_for("three rows", |screen| screen.contains("docs") && screen.contains("api"));

    pane.resize(80, 24);
    let screen = pane.wait_for("80 columns", |screen| {
        let header = screen.lines().nth(1).unwrap_or("");
        header.contains("AGENT") && !header.contains("PID")
    });
    let header = screen.lines().nth(1).unwrap();
    for kept in ["AGENT", "STATE", "PROJECT"] {
        assert!(header.contains(kept), "{kept} kept at 80x24:\n{screen}");
    }
    assert!(screen.lines().all(|line| line.chars().count() <= 80), "{screen}");
    assert_eq!(screen.lines().count(), 24, "{screen}");
    assert!(line_of(&screen, "api").contains("waiting: permission"), "{screen}");
    assert!(screen.lines().last().unwrap().contains("q quit"), "{screen}");

    pane.resize(200, 50);
    let screen = pane.wait_for("200 columns", |screen| screen.lines().nth(1).unwrap_or("").contains("PID"));
    for shown in ["PID", "HARNESS", "CONSENT", "MSGS", "LOCATION"] {
        assert!(screen.lines().nth(1).unwrap().contains(shown), "{shown} at 200x50:\n{screen}");
    }
    assert!(screen.contains("docs") && screen.contains("web"), "{screen}");

    // `/` filters; Esc clears the filter.
    pane.keys(&["/"]);
    pane.type_text("web");
    let screen = pane.wait_for("only web", |screen| !screen.contains("docs"));
    assert!(screen.contains("web") && !line_of(&screen, "api").contains("api"), "{screen}");
    pane.keys(&["Escape"]);
    pane.wait_for("every row again", |screen| screen.contains("docs") && screen.contains("api"));
    // `?` shows the keys; any key closes.
    pane.keys(&["?"]);
    pane.wait_for("the help", |screen| screen.contains("roster-focus") && screen.contains("roster-send"));
    pane.keys(&["x"]);
    pane.wait_for("the help closed", |screen| !screen.contains("(roster-send)"));
    pane.keys(&["Escape"]);
    pane.expect_terminal_restored("Esc");
}

#[test]
fn sigterm_and_sighup_give_the_terminal_back() {
    let sandbox = Sandbox::new();
    let _owner = StandIn::start(&sandbox, "lone", &sandbox.base());
    let pane = TopPane::start(&sandbox, 100, 30, &[]);
    for signal in [nix::sys::signal::Signal::SIGTERM, nix::sys::signal::Signal::SIGHUP] {
        pane.wait_for("the row", |screen| screen.contains("lone"));
        assert_eq!(pane.terminal_modes(), "1 0", "roster-top holds the alternate screen, cursor hidden");
        let pid = pane.top_pid();
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), signal).unwrap();
        assert!(
            poll_until(REDRAW, || !Path::new(&format!("/proc/{pid}")).exists()
                || std::fs::read_to_string(format!("/proc/{pid}/stat"))
                    .is_ok_and(|stat| stat.contains(") Z"))),
            "roster-top outlived {signal}"
        );
        pane.expect_terminal_restored(&format!("{signal}"));
        // Started again for the next signal.
        pane.run_top(&sandbox, &[]);
    }
    pane.keys(&["q"]);
    pane.expect_terminal_restored("q");
}

/// While nothing changes and no age in seconds is shown, the view sleeps
/// in the kernel: strace attached for five seconds sees only the wait it
/// interrupts.
#[test]
fn an_idle_view_makes_no_system_calls() {
    let strace = require_tool("strace");
    let sandbox = Sandbox::new();
    // Followed for consent up to HOME only (see the watch's idle test).
    tests::write_file_0600(&sandbox.home().join(".roster.toml"), b"");
    let home = sandbox.home().to_owned();
    let owners: Vec<StandIn> =
        (0..3).map(|index| StandIn::start(&sandbox, &format!("quiet{index}"), &home)).collect();
    let pane = TopPane::start(&sandbox, 120, 30, &[]);
    pane.wait_for("three rows", |screen| {
        owners.iter().enumerate().all(|(index, _)| screen.contains(&format!("quiet{index}")))
    });
    let pid = pane.top_pid();
    assert!(
        poll_until(Duration::from_secs(10), || tests::strace::every_thread_waits_in_epoll(pid)),
        "roster-top never went back to its wait"
    );
    let trace = sandbox.base().join("idle.trace");
    let (lines, wakeups) = tests::strace::idle_trace(&strace, pid, Duration::from_secs(5), &trace);
    assert!(wakeups.is_empty(), "an idle view made system calls:\n{lines}");
    assert!(lines.contains("epoll_wait("), "strace saw no wait in progress, so it saw nothing:\n{lines}");
    // One interrupted wait per thread: the view's and the watch's.
    assert!(lines.lines().count() <= 4, "more than the interrupted waits:\n{lines}");
    pane.keys(&["q"]);
    pane.expect_terminal_restored("q");
}

#[test]
fn summary_prints_one_line_and_its_json() {
    let sandbox = Sandbox::new();
    let cwd = sandbox.base();
    let empty = sandbox.run("roster-top", &["--summary"]);
    empty.expect_code(0);
    assert_eq!(empty.stdout_text(), "no sessions\n");

    let owners: Vec<StandIn> = ["one", "two", "api", "web", "rest"]
        .iter()
        .map(|agent| StandIn::start(&sandbox, agent, &cwd))
        .collect();
    set_state(&sandbox, owners[0].pid(), "one", "UserPromptSubmit");
    set_state(&sandbox, owners[1].pid(), "two", "UserPromptSubmit");
    set_state(&sandbox, owners[2].pid(), "api", "PermissionRequest");
    std::thread::sleep(Duration::from_millis(20));
    set_state(&sandbox, owners[3].pid(), "web", "PermissionRequest");
    set_state(&sandbox, owners[4].pid(), "rest", "Stop");
    let line = sandbox.run("roster-top", &["--summary"]);
    line.expect_code(0);
    assert_eq!(line.stdout_text(), "2 working · 2 waiting: permission (api, web) · 1 idle\n");
    let json = sandbox.run("roster-top", &["--summary", "--format", "json"]);
    json.expect_code(0);
    let value = json.json();
    assert_eq!(value["working"], 2, "{value:#}");
    assert_eq!(value["idle"], 1, "{value:#}");
    assert_eq!(value["waiting"][0]["agent"], "api", "{value:#}");
    assert_eq!(value["waiting"][0]["waiting_for"], "permission", "{value:#}");
    assert_eq!(value["waiting"][1]["session_pid"], owners[3].pid(), "{value:#}");
    assert_eq!(value["text"], "2 working · 2 waiting: permission (api, web) · 1 idle", "{value:#}");

    // A registry others could swap is refused, by the view too, before
    // the screen is taken.
    let shared = sandbox.base().join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::create_dir(shared.join("roster")).unwrap();
    std::fs::set_permissions(&shared, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let untrusted = shared.join("roster");
    let mut command = sandbox.command("roster-top");
    command.arg("--dir").arg(&untrusted).arg("--summary");
    let refused = tests::run_with_deadline(&mut command, tests::COMMAND_DEADLINE);
    refused.expect_code(3);
    assert!(refused.stderr.contains("chmod go-w"), "{refused}");
    let pane = TopPane::start_shell(&sandbox);
    pane.type_line(&format!(
        "{} --dir {}; echo exit=$?",
        tests::binary("roster-top").display(),
        untrusted.display()
    ));
    let screen = pane.wait_for("the refusal", |screen| screen.contains("exit=3"));
    assert!(screen.contains("chmod go-w"), "{screen}");
    assert_eq!(pane.terminal_modes(), "0 1", "{screen}");

    // The view itself needs a terminal, and says so.
    let refused = sandbox.run("roster-top", &[]);
    refused.expect_code(2);
    assert!(refused.stderr.contains("--summary"), "{refused}");
}

/// With `--host`, every host's sessions are shown beside this machine's,
/// each with its host; a host that stops answering is shown lost, its
/// sessions kept as they were (never dead, never removed), and shown live
/// again once it answers.
#[test]
fn hosts_are_shown_and_a_lost_host_is_lost_not_dying() {
    use tests::sshd::{SshClient, SshHost};
    let client = SshClient::new();
    let binaries = tests::binary("roster-list").parent().unwrap().to_string_lossy().into_owned();
    let steady = SshHost::start(&client, &format!("{binaries}:/usr/bin:/bin"));
    let mut flaky = SshHost::start(&client, &format!("{binaries}:/usr/bin:/bin"));
    let sandbox = Sandbox::new();
    let here = StandIn::start(&sandbox, "here", &sandbox.base());
    let ann = tests::Owner::spawn();
    let bob = tests::Owner::spawn();
    for (host, owner, agent) in [(&steady, &ann, "ann"), (&flaky, &bob, "bob")] {
        tests::run_with_deadline(
            Command::new(tests::binary("roster-register")).arg("--dir").arg(host.registry()).args([
                "--pid",
                &owner.pid().to_string(),
                "--agent",
                agent,
                "-q",
            ]),
            Duration::from_secs(30),
        )
        .expect_code(0);
    }
    let (one, two) = (steady.address(), flaky.address());
    let ssh = client.ssh_command();
    let pane = TopPane::start_with_env(
        &sandbox,
        160,
        30,
        &["--host", &one, "--host", &two],
        &[("ROSTER_SSH_COMMAND", &ssh)],
    );
    let screen = pane.wait_for_within("every host's rows", Duration::from_secs(30), |screen| {
        screen.contains("ann") && screen.contains("bob") && screen.contains("here")
    });
    assert!(screen.lines().nth(1).unwrap().contains("HOST"), "{screen}");
    assert!(line_of(&screen, "ann").contains(&one), "{screen}");
    assert!(line_of(&screen, "bob").contains(&two), "{screen}");
    assert!(line_of(&screen, "here").contains("local"), "{screen}");

    flaky.kill();
    let screen = pane.wait_for_within("bob's host lost", Duration::from_secs(30), |screen| {
        line_of(screen, "bob").contains("host lost")
    });
    assert!(screen.lines().next().unwrap().contains(&format!("host lost: {two}")), "{screen}");
    // Past the time a dead row is kept: a lost host's row stays, not dead.
    std::thread::sleep(Duration::from_secs(12));
    let screen = pane.screen();
    assert!(line_of(&screen, "bob").contains("host lost"), "{screen}");
    assert!(!line_of(&screen, "bob").contains("dead"), "{screen}");
    assert!(!line_of(&screen, "ann").contains("host lost"), "{screen}");

    flaky.restart();
    pane.wait_for_within("bob's host back", Duration::from_secs(40), |screen| {
        screen.contains("bob") && !line_of(screen, "bob").contains("host lost")
    });
    drop(here);
    pane.keys(&["q"]);
    pane.expect_terminal_restored("q");
}

/// Colour follows `--color`, `NO_COLOR` and `TERM=dumb`; without it the
/// selected row is still marked and reversed.
#[test]
fn colour_follows_no_color_term_and_the_flag() {
    let sandbox = Sandbox::new();
    let waiting = StandIn::start(&sandbox, "waits", &sandbox.base());
    set_state(&sandbox, waiting.pid(), "waits", "PermissionRequest");
    let coloured_state = |pane: &TopPane| {
        let screen = pane.server.tmux(&["capture-pane", "-p", "-e", "-t", "top"]);
        let line = screen.lines().find(|line| line.contains("waits")).unwrap_or("").to_owned();
        // A foreground colour: SGR 30-37, 90-97 or 38;… (tmux may join several).
        let coloured = line.split("\u{1b}[").skip(1).any(|sequence| {
            let codes = sequence.split('m').next().unwrap_or("");
            codes.starts_with("38;")
                || codes.split(';').any(|code| matches!(code.parse::<u8>(), Ok(30..=37 | 90..=97)))
        });
        (coloured, line)
    };
    for (env, extra, want) in [
        (vec![], vec![], true),
        (vec![("NO_COLOR", "1")], vec![], false),
        (vec![("NO_COLOR", "1")], vec!["--color", "always"], true),
        (vec![], vec!["--color", "never"], false),
        (vec![("TERM", "dumb")], vec![], false),
    ] {
        let pane = TopPane::start_with_env(&sandbox, 120, 30, &extra, &env);
        let screen = pane.wait_for("the waiting row", |screen| screen.contains("waits"));
        assert!(line_of(&screen, "waits").starts_with('>'), "{screen}");
        let (coloured, line) = coloured_state(&pane);
        assert_eq!(coloured, want, "{env:?} {extra:?}: {line:?}");
        pane.keys(&["q"]);
        pane.expect_terminal_restored("q");
    }
}

/// A panic gives the terminal back: a program that takes it exactly as
/// roster-top does (`roster_top::terminal::take`, its panic hook included)
/// and then panics leaves the pane on its main screen with the cursor
/// shown, the panic's message printed there.
#[test]
fn a_panic_gives_the_terminal_back() {
    let program =
        tests::workspace::build_example(tests::workspace::Profile::Debug, "roster-top", "panic_in_view")
            .expect("build the panic_in_view example");
    let sandbox = Sandbox::new();
    let pane = TopPane::start_shell(&sandbox);
    pane.type_line(&program.to_string_lossy());
    assert!(
        poll_until(REDRAW, || pane.terminal_modes() == "1 0" && pane.screen().contains("taken")),
        "the terminal was never taken: {}\n{}",
        pane.terminal_modes(),
        pane.screen()
    );
    pane.keys(&["Enter"]);
    pane.expect_terminal_restored("a panic");
    let screen = pane.screen();
    assert!(
        screen.contains("a panic in the view"),
        "the panic's message is not on the main screen:\n{screen}"
    );
}
