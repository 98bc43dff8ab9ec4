//! `roster-list --watch` as a script reads it: the NDJSON stream of a real
//! watcher while real sessions register, refresh, arm, die by SIGKILL, are
//! pruned, an untrusted entry is planted, and the registry is deleted and
//! recreated; consent changed by the user's config and the repository
//! files; a filtered watch whose session stops matching; a watcher that
//! was stopped while a session ended; a symlink above the registry
//! swapped; `--until-gone`; exit 0 on SIGINT, SIGTERM and a closed stdout;
//! no system call at all while nothing changes; and each message queued
//! for a session and settled, once.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use registry_core::messages::ConsentNow;
use serde_json::Value;
use tests::{
    ArmedOwner, Owner, Sandbox, deliver_at_prompt, poll_until, require_tool, wait_with_deadline,
    write_file_atomically,
};

/// How long a test waits for one event before calling it missing.
const EVENT_WAIT: Duration = Duration::from_secs(10);

/// A running watcher and the events it printed, line by line.
pub(crate) struct Watcher {
    child: Child,
    pub(crate) lines: Receiver<String>,
}

impl Watcher {
    pub(crate) fn start(sandbox: &Sandbox, extra: &[&str]) -> Watcher {
        let mut command = sandbox.command_in_root("roster-list", &["--watch", "--format", "json"]);
        command.args(extra).stderr(Stdio::inherit());
        Watcher::spawn(command)
    }

    pub(crate) fn spawn(mut command: Command) -> Watcher {
        command.stdin(Stdio::null()).stdout(Stdio::piped());
        let mut child = command.spawn().expect("start roster-list --watch");
        let lines = read_lines(child.stdout.take().expect("piped stdout"));
        Watcher { child, lines }
    }

    /// The next line printed, as it is; fails the test if none comes in time.
    #[track_caller]
    pub(crate) fn next_line(&self) -> String {
        match self.lines.recv_timeout(EVENT_WAIT) {
            Ok(line) => line,
            Err(RecvTimeoutError::Timeout) => panic!("no line within {EVENT_WAIT:?}"),
            Err(RecvTimeoutError::Disconnected) => panic!("the watcher ended its output"),
        }
    }

    /// The next event, parsed; fails the test if none comes in time.
    #[track_caller]
    fn next(&self) -> Value {
        let line = self.next_line();
        let event: Value = serde_json::from_str(&line).unwrap_or_else(|error| panic!("{line:?}: {error}"));
        assert_eq!(event["schema"], 1, "{event}");
        assert!(tests::parse_rfc3339(event["at"].as_str().unwrap_or_default()).is_some(), "{event}");
        event
    }

    /// The next event, which must be `kind` (for the row of `pid`, if given).
    #[track_caller]
    fn expect(&self, kind: &str, pid: Option<u32>) -> Value {
        let event = self.next();
        assert_eq!(event["event"], kind, "{event}");
        if let Some(pid) = pid {
            assert_eq!(event["row"]["session_pid"], pid, "{event}");
        }
        event
    }

    /// Nothing more arrives for a while.
    fn expect_quiet(&self, wait: Duration) {
        if let Ok(line) = self.lines.recv_timeout(wait) {
            panic!("an unexpected event: {line}");
        }
    }

    /// The next `count` events, by the pid of their row: for changes
    /// reported in an order the test does not fix.
    #[track_caller]
    fn next_by_pid(&self, count: usize) -> BTreeMap<u64, Value> {
        let mut events = BTreeMap::new();
        for _ in 0..count {
            let event = self.next();
            let pid = event["row"]["session_pid"].as_u64().unwrap_or_else(|| panic!("no pid: {event}"));
            assert!(events.insert(pid, event).is_none(), "two events for pid {pid}");
        }
        events
    }

    fn pid(&self) -> nix::unistd::Pid {
        nix::unistd::Pid::from_raw(self.child.id() as i32)
    }

    /// Stops the watcher (SIGSTOP) and waits until the kernel says it is.
    fn stop(&self) {
        nix::sys::signal::kill(self.pid(), nix::sys::signal::Signal::SIGSTOP).expect("stop the watcher");
        let stat = format!("/proc/{}/stat", self.child.id());
        let stopped = poll_until(Duration::from_secs(10), || {
            let text = std::fs::read_to_string(&stat).unwrap_or_default();
            text.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with('T'))
        });
        assert!(stopped, "the watcher did not stop");
    }

    fn resume(&self) {
        nix::sys::signal::kill(self.pid(), nix::sys::signal::Signal::SIGCONT).expect("continue the watcher");
    }

    fn finish(mut self) -> i32 {
        let status =
            wait_with_deadline(&mut self.child, Duration::from_secs(10)).expect("the watcher did not exit");
        status.code().unwrap_or_else(|| panic!("the watcher died by a signal: {status:?}"))
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn read_lines(stdout: ChildStdout) -> Receiver<String> {
    let (sender, receiver) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    receiver
}

fn run(sandbox: &Sandbox, tool: &str, args: &[&str]) {
    sandbox.run(tool, args).expect_code(0);
}

/// `[consent] auto_arm = VALUE`, as both configuration files spell it.
fn auto_arm(value: bool) -> String {
    format!("[consent]\nauto_arm = {value}\n")
}

/// The next event must be `consent-changed` for `pid`, deciding
/// `should_arm` for the reason a listing made now gives.
#[track_caller]
fn expect_decision(sandbox: &Sandbox, watcher: &Watcher, pid: u32, should_arm: bool) {
    let changed = watcher.expect("consent-changed", Some(pid));
    assert_eq!(changed["row"]["should_arm"], should_arm, "{changed}");
    let rows = sandbox.list(&[]);
    let listed = tests::rows_for_pid(&rows, pid);
    assert_eq!(listed.len(), 1, "{rows:?}");
    assert_eq!(changed["row"]["consent_reason"], listed[0]["consent_reason"], "{changed}");
}

#[test]
fn a_watcher_reads_exactly_the_expected_event_sequence() {
    let sandbox = Sandbox::new();
    let first = Owner::spawn();
    sandbox.register(first.pid(), &["--agent", "first"]);
    let watcher = Watcher::start(&sandbox, &[]);
    let listed = watcher.expect("listed", Some(first.pid()));
    assert_eq!(listed["row"]["liveness"], "alive");
    assert!(listed["row"]["should_arm"].is_boolean(), "{listed}");

    let owner = Owner::spawn();
    let pid = owner.pid().to_string();
    run(&sandbox, "roster-register", &["--pid", &pid, "--session-id", "s-1", "--agent", "wren"]);
    let registered = watcher.expect("registered", Some(owner.pid()));
    assert_eq!(registered["row"]["session_id"], "s-1");

    run(&sandbox, "roster-register", &["--pid", &pid, "--session-id", "s-2"]);
    let refreshed = watcher.expect("refreshed", Some(owner.pid()));
    assert_eq!(
        (refreshed["row"]["session_id"].as_str(), refreshed["row"]["agent"].as_str()),
        (Some("s-2"), Some("wren"))
    );

    run(&sandbox, "roster-consent", &["disarm", "--pid", &pid]);
    let changed = watcher.expect("consent-changed", Some(owner.pid()));
    assert_eq!(changed["row"]["consent"], "disarmed", "{changed}");
    assert_eq!(changed["row"]["should_arm"], false);

    let killed_at = Instant::now();
    let dead_pid = owner.kill();
    let died = watcher.expect("died", Some(dead_pid));
    assert_eq!(died["row"]["liveness"], "dead", "{died}");
    assert!(killed_at.elapsed() < EVENT_WAIT);

    run(&sandbox, "roster-prune", &[]);
    let removed = watcher.expect("removed", Some(dead_pid));
    assert_eq!(removed["row"]["session_id"], "s-2", "the last known row: {removed}");

    // An entry another process could have rewritten: listed, never believed.
    // Written aside (a dotfile, which the watcher ignores) and renamed into
    // place, so it appears whole, in one event.
    let aside = sandbox.sessions().join(".planting");
    std::fs::write(&aside, b"{}").expect("plant an entry");
    std::fs::set_permissions(&aside, std::fs::Permissions::from_mode(0o666)).expect("chmod");
    std::fs::rename(&aside, sandbox.sessions().join("4242.json")).expect("rename into place");
    let problem = watcher.expect("problem", Some(4242));
    assert_eq!(problem["row"]["problem"], "untrusted", "{problem}");
    watcher.expect_quiet(Duration::from_millis(300));

    // The registry deleted: every entry goes, then the watcher says so.
    std::fs::remove_dir_all(sandbox.root()).expect("delete the registry");
    let mut removed_pids = vec![
        watcher.expect("removed", None)["row"]["session_pid"].as_u64(),
        watcher.expect("removed", None)["row"]["session_pid"].as_u64(),
    ];
    removed_pids.sort();
    let mut expected = vec![Some(u64::from(first.pid())), Some(4242)];
    expected.sort();
    assert_eq!(removed_pids, expected);
    let gone = watcher.expect("resync", None);
    assert_eq!(gone["row"], Value::Null);
    assert!(gone["reason"].as_str().is_some_and(|reason| reason.contains("removed")), "{gone}");

    // ... and recreated: a resync, then what is there now.
    let again = Owner::spawn();
    sandbox.register(again.pid(), &["--agent", "again"]);
    watcher.expect("resync", None);
    watcher.expect("registered", Some(again.pid()));
    watcher.expect_quiet(Duration::from_millis(300));

    nix::sys::signal::kill(watcher.pid(), nix::sys::signal::Signal::SIGINT).expect("interrupt");
    assert_eq!(watcher.finish(), 0, "SIGINT ends a watch with exit 0");
}

#[test]
fn until_gone_returns_when_the_session_ends_by_pid_or_session_id() {
    let sandbox = Sandbox::new();
    let by_pid = Owner::spawn();
    sandbox.register(by_pid.pid(), &[]);
    let by_id = Owner::spawn();
    sandbox.register(by_id.pid(), &["--session-id", "wait-for-me"]);

    for (target, owner) in [(by_pid.pid().to_string(), by_pid), ("wait-for-me".to_owned(), by_id)] {
        let mut command = sandbox.command_in_root("roster-list", &["--until-gone", &target, "-q"]);
        command.stdout(Stdio::null()).stderr(Stdio::inherit());
        let mut child = command.spawn().expect("start --until-gone");
        // Still waiting while the session runs.
        std::thread::sleep(Duration::from_millis(300));
        assert!(child.try_wait().expect("poll").is_none(), "--until-gone {target} returned early");
        let killed = Instant::now();
        owner.kill();
        let status =
            wait_with_deadline(&mut child, Duration::from_secs(10)).expect("--until-gone did not return");
        assert_eq!(status.code(), Some(0), "{target}");
        assert!(killed.elapsed() < Duration::from_secs(5), "{target}: took {:?}", killed.elapsed());
    }
}

/// Regression: `--until-gone` for a pid or session id no live session had
/// exited 0 at once, so a typo looked like a session that finished.
#[test]
fn until_gone_for_a_session_nobody_runs_is_bad_input() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    sandbox.register(owner.pid(), &["--session-id", "real-one"]);
    for target in ["real-on", "4194303"] {
        let outcome = sandbox.run("roster-list", &["--until-gone", target]);
        outcome.expect_code(2).expect_error_line("roster-list");
        assert!(outcome.stderr.contains(&format!("--until-gone {target}: no running session")), "{outcome}");
        assert!(outcome.stdout.is_empty(), "{outcome}");
    }
    let ended = owner.kill();
    let outcome = sandbox.run("roster-list", &["--until-gone", &ended.to_string(), "-q"]);
    outcome.expect_code(2);
}

#[test]
fn a_closed_stdout_or_sigterm_ends_a_watch_with_exit_0() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    sandbox.register(owner.pid(), &[]);

    let watcher = Watcher::start(&sandbox, &[]);
    watcher.expect("listed", Some(owner.pid()));
    nix::sys::signal::kill(watcher.pid(), nix::sys::signal::Signal::SIGTERM).expect("terminate");
    assert_eq!(watcher.finish(), 0);

    // The reader goes away while nothing happens: the watcher notices.
    let mut command = sandbox.command_in_root("roster-list", &["--watch", "--format", "json"]);
    command.stdin(Stdio::null()).stdout(Stdio::piped());
    let mut child = command.spawn().expect("start the watcher");
    let mut reader = BufReader::new(child.stdout.take().expect("piped"));
    let mut first = String::new();
    reader.read_line(&mut first).expect("the first row");
    drop(reader);
    let status =
        wait_with_deadline(&mut child, Duration::from_secs(10)).expect("the watcher outlived its reader");
    assert_eq!(status.code(), Some(0), "{status:?}");
}

/// While nothing changes, a watcher sleeps in the kernel: strace attached
/// for five idle seconds sees no system call but the wait it interrupts.
#[test]
fn an_idle_watcher_makes_no_system_calls() {
    let strace = require_tool("strace");
    let sandbox = Sandbox::new();
    // The sessions work in HOME. A repository file there ends the
    // directories followed for their consent at HOME: above it is /tmp,
    // where other processes create files all the time, and each of those
    // wakes the watcher to see whether it was a .roster.toml. The user's
    // config directory does not exist, so HOME is followed for it too.
    tests::write_file_0600(&sandbox.home().join(".roster.toml"), b"");
    let owners: Vec<Owner> = (0..3).map(|_| Owner::spawn()).collect();
    for owner in &owners {
        sandbox.register(owner.pid(), &[]);
    }
    let watcher = Watcher::start(&sandbox, &[]);
    for _ in &owners {
        watcher.expect("listed", None);
    }
    // Idle means every thread of the watcher is back in its wait.
    assert!(
        poll_until(Duration::from_secs(10), || tests::strace::every_thread_waits_in_epoll(
            watcher.child.id()
        )),
        "the watcher never went back to its wait after listing"
    );
    let trace = sandbox.base().join("idle.trace");
    let (lines, wakeups) =
        tests::strace::idle_trace(&strace, watcher.child.id(), Duration::from_secs(5), &trace);
    assert!(wakeups.is_empty(), "an idle watcher made system calls:\n{lines}");
    assert!(lines.contains("epoll_wait("), "strace saw no wait in progress, so it saw nothing:\n{lines}");
    assert!(lines.lines().count() <= 2, "more than the one interrupted wait:\n{lines}");
}

/// Past the open-file limit, owners get no pidfd: the watcher says so once
/// on stderr and still reports their deaths, on the next change of the
/// registry, never missing one.
#[test]
fn owners_beyond_the_open_file_limit_are_still_seen_to_die() {
    let prlimit = require_tool("prlimit");
    let sandbox = Sandbox::new();
    // As in the idle test: the directories followed for consent end at
    // HOME, so that nothing but the registry's changes wakes the watcher.
    tests::write_file_0600(&sandbox.home().join(".roster.toml"), b"");
    let owners: Vec<Owner> = (0..24).map(|_| Owner::spawn()).collect();
    for owner in &owners {
        sandbox.register(owner.pid(), &[]);
    }
    let inner = sandbox.command_in_root("roster-list", &["--watch", "--format", "json"]);
    let mut command = Command::new(prlimit);
    // Room for the process's own descriptors and reading, not for pidfds.
    command.args(["--nofile=48:48", "--"]).arg(inner.get_program()).args(inner.get_args());
    command.env_clear().envs(inner.get_envs().filter_map(|(key, value)| value.map(|value| (key, value))));
    let stderr_path = sandbox.base().join("watch.stderr");
    command.stderr(std::fs::File::create(&stderr_path).expect("create the stderr file"));
    let watcher = Watcher::spawn(command);
    for _ in &owners {
        watcher.expect("listed", None);
    }
    let said = std::fs::read_to_string(&stderr_path).expect("read stderr");
    assert_eq!(said.lines().count(), 1, "said once: {said}");
    assert!(said.contains("without a pidfd") && said.contains("ulimit -n"), "{said}");

    // Under this limit no owner gets a pidfd (descriptors are kept for
    // reading the registry): a death is not seen at once, but on the next
    // change of the registry.
    let mut owners = owners;
    let first = owners.remove(0);
    let dead_pid = first.kill();
    watcher.expect_quiet(Duration::from_millis(300));
    // A change that reaps nothing (a register might reap the dead record).
    let other = owners.last().expect("an owner").pid().to_string();
    sandbox.run("roster-consent", &["disarm", "--pid", &other]).expect_code(0);
    let mut seen_dead = false;
    for _ in 0..2 {
        let event = watcher.next();
        if event["event"] == "died" {
            assert_eq!(event["row"]["session_pid"], dead_pid, "{event}");
            seen_dead = true;
        }
    }
    assert!(seen_dead, "the death of an owner without a pidfd was never reported");
}

/// A session's consent changes when a file it is decided from changes,
/// not only its marker: the user's config vetoes auto-arm or stops
/// vetoing, and the nearest `.roster.toml` above the session's directory
/// is created, edited or removed, or a nearer one is created between. Each
/// is reported as `consent-changed` the moment it happens, through inotify.
/// Before, the watcher read those files once: a veto added to the user's
/// config left the last word `should_arm: true`.
#[test]
fn consent_changed_by_the_configuration_files_is_reported() {
    let sandbox = Sandbox::new();
    let repository = sandbox.base().join("repository");
    let between = repository.join("between");
    let working = between.join("working");
    std::fs::create_dir_all(&working).expect("create the session's directory");
    let owner = Owner::spawn();
    sandbox.register(owner.pid(), &["--cwd", working.to_str().expect("UTF-8")]);
    let pid = owner.pid();

    let watcher = Watcher::start(&sandbox, &[]);
    let listed = watcher.expect("listed", Some(pid));
    assert_eq!(listed["row"]["should_arm"], false, "no repository opts in yet: {listed}");

    // The repository opts in.
    write_file_atomically(&repository.join(".roster.toml"), auto_arm(true).as_bytes());
    expect_decision(&sandbox, &watcher, pid, true);

    // The user's config, in directories that do not exist yet, vetoes.
    let config_directory = sandbox.home().join(".config/roster");
    std::fs::create_dir_all(&config_directory).expect("create the config directory");
    let user_config = config_directory.join("config.toml");
    write_file_atomically(&user_config, auto_arm(false).as_bytes());
    expect_decision(&sandbox, &watcher, pid, false);

    // ... stops vetoing, edited in place, vetoes again, and is removed.
    tests::write_file_0600(&user_config, b"");
    expect_decision(&sandbox, &watcher, pid, true);
    write_file_atomically(&user_config, auto_arm(false).as_bytes());
    expect_decision(&sandbox, &watcher, pid, false);
    std::fs::remove_file(&user_config).expect("remove the user's config");
    expect_decision(&sandbox, &watcher, pid, true);

    // A nearer repository file, created between the session's directory
    // and the one that opted in, speaks for it now.
    write_file_atomically(&between.join(".roster.toml"), auto_arm(false).as_bytes());
    expect_decision(&sandbox, &watcher, pid, false);
    std::fs::remove_file(between.join(".roster.toml")).expect("remove the nearer file");
    expect_decision(&sandbox, &watcher, pid, true);

    // The repository file edited in place, then removed.
    tests::write_file_0600(&repository.join(".roster.toml"), auto_arm(false).as_bytes());
    expect_decision(&sandbox, &watcher, pid, false);
    write_file_atomically(&repository.join(".roster.toml"), auto_arm(true).as_bytes());
    expect_decision(&sandbox, &watcher, pid, true);
    std::fs::remove_file(repository.join(".roster.toml")).expect("remove the repository file");
    expect_decision(&sandbox, &watcher, pid, false);

    // Writes that decide nothing are not reported.
    std::fs::write(working.join("notes.txt"), b"unrelated").expect("write an unrelated file");
    watcher.expect_quiet(Duration::from_millis(300));
}

/// Under a field filter, a session that stops matching it (re-registered
/// under another agent name) is reported once as `unmatched`, with its row
/// as it is now, and then never again while it does not match; a matched
/// session's death and removal are reported; a session that comes to
/// match arrives with the event of its change. Before, a session that
/// stopped matching just fell silent.
#[test]
fn a_filtered_watch_reports_a_session_that_stops_matching_once() {
    let sandbox = Sandbox::new();
    let leaving = Owner::spawn();
    let staying = Owner::spawn();
    let joining = Owner::spawn();
    sandbox.register(leaving.pid(), &["--agent", "wren"]);
    sandbox.register(staying.pid(), &["--agent", "wren"]);
    sandbox.register(joining.pid(), &["--agent", "robin"]);

    let watcher = Watcher::start(&sandbox, &["--agent", "wren"]);
    let listed = watcher.next_by_pid(2);
    for owner in [&leaving, &staying] {
        assert_eq!(listed[&u64::from(owner.pid())]["event"], "listed", "{listed:?}");
    }

    let leaving_pid = leaving.pid().to_string();
    run(&sandbox, "roster-register", &["--pid", &leaving_pid, "--agent", "robin"]);
    let unmatched = watcher.expect("unmatched", Some(leaving.pid()));
    assert_eq!(unmatched["row"]["agent"], "robin", "the row as it is now: {unmatched}");
    assert_eq!(unmatched["row"]["liveness"], "alive", "{unmatched}");
    // Forgotten: its death, its consent and its removal are not reported.
    run(&sandbox, "roster-consent", &["disarm", "--pid", &leaving_pid]);
    leaving.kill();
    watcher.expect_quiet(Duration::from_millis(300));

    let dead_pid = staying.kill();
    let died = watcher.expect("died", Some(dead_pid));
    assert_eq!(died["row"]["agent"], "wren", "{died}");
    run(&sandbox, "roster-prune", &[]);
    let removed = watcher.expect("removed", Some(dead_pid));
    assert_eq!(removed["row"]["liveness"], "dead", "{removed}");

    let joining_pid = joining.pid().to_string();
    run(&sandbox, "roster-register", &["--pid", &joining_pid, "--agent", "wren"]);
    let joined = watcher.expect("refreshed", Some(joining.pid()));
    assert_eq!(joined["row"]["agent"], "wren", "{joined}");
    watcher.expect_quiet(Duration::from_millis(300));
}

/// A watcher that falls behind (stopped by SIGSTOP while a session's owner
/// is killed and its record and consent marker pruned, then continued)
/// learns of the removals and of the owner's exit at once. It judges the
/// last row it saw again before reporting it: `died` first, then `removed`
/// with the dead row. Likewise a marker removed just before its owner was
/// killed is not reported as a change of a live owner's consent: the death
/// is. Before, it reported `removed` with `liveness: "alive"` for an owner
/// long gone, and never `died`.
#[test]
fn a_watcher_that_fell_behind_reports_a_death_before_the_removal() {
    let sandbox = Sandbox::new();
    let pruned = ArmedOwner::spawn(sandbox.root(), sandbox.home(), sandbox.home());
    let unmarked = ArmedOwner::spawn(sandbox.root(), sandbox.home(), sandbox.home());
    let (pruned_pid, unmarked_pid) = (pruned.pid(), unmarked.pid());
    sandbox.register(pruned_pid, &["--session-id", "behind"]);
    sandbox.register(unmarked_pid, &[]);
    let watcher = Watcher::start(&sandbox, &[]);
    let listed = watcher.next_by_pid(2);
    assert!(listed.values().all(|event| event["row"]["consent"] == "armed"), "{listed:?}");

    watcher.stop();
    // Killed and reaped, so its pid names no process.
    drop(pruned);
    run(&sandbox, "roster-prune", &[]);
    assert_eq!(
        sandbox.visible_session_entries(),
        [tests::record_file_name_here(unmarked_pid)],
        "the record is pruned"
    );
    assert_eq!(
        tests::names_in(&sandbox.consent()),
        [tests::record_file_name_here(unmarked_pid)],
        "the marker is pruned"
    );
    watcher.resume();
    let died = watcher.expect("died", Some(pruned_pid));
    assert_eq!(died["row"]["liveness"], "dead", "{died}");
    assert_eq!(died["row"]["should_arm"], false, "{died}");
    let removed = watcher.expect("removed", Some(pruned_pid));
    assert_eq!(removed["row"]["liveness"], "dead", "never alive once gone: {removed}");
    assert_eq!(removed["row"]["session_id"], "behind", "{removed}");
    watcher.expect_quiet(Duration::from_millis(300));

    // The marker goes first and the owner after, both unseen: the first
    // change read is the marker's, and by then the owner is gone.
    watcher.stop();
    std::fs::remove_file(sandbox.consent().join(tests::record_file_name_here(unmarked_pid)))
        .expect("remove the marker");
    drop(unmarked);
    watcher.resume();
    let died = watcher.expect("died", Some(unmarked_pid));
    assert_eq!(
        (died["row"]["liveness"].as_str(), died["row"]["consent"].as_str()),
        (Some("dead"), Some("none"))
    );
    watcher.expect_quiet(Duration::from_millis(300));
}

/// A watch of `--dir <base>/link/roster` follows the path it was given:
/// when `link` is swapped from `a` to `b`, it says so with a `resync`, then
/// reports what differs between the two registries (a session only in `a`
/// removed, one in both refreshed with `b`'s row, one only in `b`
/// registered), and from then on watches `b`. When the path comes to lead
/// to a directory that is not trusted, it says why on stderr and watches it
/// as if absent. Before, it went on watching `a` and reported nothing.
#[test]
fn a_swapped_symlink_above_the_registry_moves_the_watch() {
    let sandbox = Sandbox::new();
    let base = sandbox.base();
    let register_in = |registry: &Path, owner: &Owner, agent: &str| {
        let mut command = sandbox.command("roster-register");
        command.arg("--dir").arg(registry).args(["--pid", &owner.pid().to_string(), "--agent", agent]);
        tests::run_with_deadline(&mut command, tests::COMMAND_DEADLINE).expect_code(0);
    };
    let (in_a, in_b) = (base.join("a/roster"), base.join("b/roster"));
    let only_in_a = Owner::spawn();
    let in_both = Owner::spawn();
    let only_in_b = Owner::spawn();
    register_in(&in_a, &only_in_a, "first");
    register_in(&in_a, &in_both, "as-in-a");
    register_in(&in_b, &in_both, "as-in-b");
    register_in(&in_b, &only_in_b, "second");
    let link = base.join("link");
    std::os::unix::fs::symlink("a", &link).expect("link to a");

    let mut command = sandbox.command("roster-list");
    command.arg("--dir").arg(link.join("roster")).args(["--watch", "--format", "json"]);
    let stderr_path = base.join("watch.stderr");
    command.stderr(std::fs::File::create(&stderr_path).expect("create the stderr file"));
    let watcher = Watcher::spawn(command);
    let listed = watcher.next_by_pid(2);
    assert_eq!(listed[&u64::from(in_both.pid())]["row"]["agent"], "as-in-a", "{listed:?}");

    // Swapped the way `ln -sfn` does it atomically: a new link renamed over.
    let swap_to = |target: &str| {
        let aside = base.join("link.new");
        std::os::unix::fs::symlink(target, &aside).expect("make the new link");
        std::fs::rename(&aside, &link).expect("swap the link");
    };
    swap_to("b");
    let resync = watcher.expect("resync", None);
    assert!(
        resync["reason"].as_str().is_some_and(|reason| reason.contains("leads to another directory")),
        "{resync}"
    );
    let differences = watcher.next_by_pid(3);
    let of = |owner: &Owner| &differences[&u64::from(owner.pid())];
    assert_eq!(of(&only_in_a)["event"], "removed", "{differences:?}");
    assert_eq!(of(&in_both)["event"], "refreshed", "{differences:?}");
    assert_eq!(of(&in_both)["row"]["agent"], "as-in-b", "{differences:?}");
    assert_eq!(of(&only_in_b)["event"], "registered", "{differences:?}");
    watcher.expect_quiet(Duration::from_millis(300));

    // From now on b is watched, and a is not.
    let later = Owner::spawn();
    register_in(&in_a, &later, "old-place");
    watcher.expect_quiet(Duration::from_millis(300));
    register_in(&in_b, &later, "new-place");
    let registered = watcher.expect("registered", Some(later.pid()));
    assert_eq!(registered["row"]["agent"], "new-place", "{registered}");

    // A registry others may write to cannot be believed: said on stderr,
    // and its sessions are gone from the watch's view.
    for subdirectory in ["sessions", "consent"] {
        std::fs::create_dir_all(base.join("open/roster").join(subdirectory))
            .expect("create an open registry");
    }
    std::fs::set_permissions(base.join("open/roster"), std::fs::Permissions::from_mode(0o777))
        .expect("open it to everyone");
    swap_to("open");
    watcher.expect("resync", None);
    let gone = watcher.next_by_pid(3);
    assert!(gone.values().all(|event| event["event"] == "removed"), "{gone:?}");
    let said = std::fs::read_to_string(&stderr_path).expect("read stderr");
    assert!(said.contains("writable by group or others") && said.contains("as if it were absent"), "{said}");
}

/// Regression: a watch of a registry that held only `sessions/` (made by an
/// older roster, or by hand) began with `resync: the registry directory
/// was replaced or recreated`, before anything happened: opening the
/// registry created `consent/`, and the watch saw it appear.
#[test]
fn a_registry_without_its_consent_directory_starts_a_quiet_watch() {
    let sandbox = Sandbox::new();
    let first = Owner::spawn();
    sandbox.register(first.pid(), &[]);
    for made_by_a_newer_roster in ["consent", "session-ids"] {
        std::fs::remove_dir_all(sandbox.root().join(made_by_a_newer_roster)).expect("remove a subdirectory");
    }
    let watcher = Watcher::start(&sandbox, &[]);
    // Once the row is listed the watcher has read the registry: the next
    // event is the next change, with nothing in between.
    watcher.expect("listed", Some(first.pid()));
    let owner = Owner::spawn();
    run(&sandbox, "roster-register", &["--pid", &owner.pid().to_string()]);
    watcher.expect("registered", Some(owner.pid()));
    assert!(sandbox.consent().is_dir(), "the watch opened the registry without completing it");
}

/// Where each column of a text line starts: the character offset of each
/// word that follows two spaces or more (cells are separated by two
/// spaces, and one holds none).
fn column_starts(line: &str) -> Vec<usize> {
    let characters: Vec<char> = line.trim_end_matches('\r').chars().collect();
    let mut starts = vec![0];
    for index in 2..characters.len() {
        if characters[index] != ' ' && characters[index - 1] == ' ' && characters[index - 2] == ' ' {
            starts.push(index);
        }
    }
    starts
}

/// Regression: the text lines of a watch did not line up with the table:
/// other columns than `roster-list`'s (no AGE), fixed widths that a long
/// agent name pushed out of line, no `?` after an unverified pid, no
/// header, and `--until-gone` printed the current rows before its events.
/// Every line is now an event in the listing's columns, after the time and
/// the event name, a long agent name cut as the table cuts it.
#[test]
fn watch_text_lines_line_up_in_the_listings_columns() {
    let sandbox = Sandbox::new();
    let long = Owner::spawn();
    let agent = "an-agent-name-longer-than-its-column";
    sandbox.register(long.pid(), &["--agent", agent, "--session-id", "s-long"]);
    let table = sandbox.run("roster-list", &["--color", "never"]).stdout_text();
    let cut = table.lines().nth(1).and_then(|row| row.split_whitespace().nth(2)).expect("a row").to_owned();
    assert!(cut.ends_with('…') && agent.starts_with(cut.trim_end_matches('…')), "{table}");

    let mut command = sandbox.command_in_root("roster-list", &["--watch", "--color", "never"]);
    command.stderr(Stdio::inherit());
    let watcher = Watcher::spawn(command);
    let listed = watcher.next_line();
    let short = Owner::spawn();
    run(&sandbox, "roster-register", &["--pid", &short.pid().to_string(), "--agent", "wren"]);
    let registered = watcher.next_line();
    let died_pid = long.kill();
    let died = watcher.next_line();

    let words = |line: &str| line.split_whitespace().map(str::to_owned).collect::<Vec<_>>();
    assert_eq!(
        words(&listed)[1..4],
        ["listed".to_owned(), format!("{died_pid}?"), "-".to_owned()],
        "{listed}"
    );
    assert_eq!(words(&listed)[4], cut, "cut as in the table:\n{listed}\n{table}");
    // LIVENESS, then STATE (`-`: no event has said what it does).
    assert_eq!(words(&listed)[5..9], ["alive", "-", "off", "(repo)"], "{listed}");
    assert_eq!(
        words(&registered)[1..5],
        ["registered".to_owned(), format!("{}?", short.pid()), "-".to_owned(), "wren".to_owned()]
    );
    assert_eq!(words(&died)[1], "died", "{died}");
    assert_eq!(words(&died).last().map(String::as_str), Some("s-long"), "{died}");
    // Eleven columns each (the event's CONSENT is `off (repo)` or `-`).
    for line in [&listed, &registered] {
        assert_eq!(column_starts(line).len(), 11, "{line:?}");
    }
    assert_eq!(column_starts(&listed), column_starts(&registered), "\n{listed}\n{registered}");
    let died_starts = column_starts(&died);
    assert_eq!(died_starts.len(), 11, "{died:?}");
    assert_eq!(died_starts, column_starts(&listed), "\n{listed}\n{died}");
    drop(watcher);

    // On a terminal, a header over the same columns; `--until-gone` prints
    // the events only.
    let script = require_tool("script");
    let until_gone = format!(
        "{} --dir {} --until-gone {} --color never",
        tests::shell_quote(&tests::binary("roster-list").to_string_lossy()),
        tests::shell_quote(&sandbox.root().to_string_lossy()),
        short.pid()
    );
    let mut command = Command::new(script);
    tests::clean_environment(&mut command, sandbox.home()).args(["-qec", &until_gone, "/dev/null"]);
    let terminal = Watcher::spawn(command);
    let header = terminal.next_line();
    assert!(header.starts_with("TIME "), "{header:?}");
    let short_pid = short.kill();
    let died = terminal.next_line();
    assert_eq!(words(&died)[1..3], ["died".to_owned(), format!("{short_pid}?")], "{died:?}");
    let header_starts = column_starts(&header);
    // The header ends in REASON, the column a problem event says why in;
    // a session's event leaves it empty.
    assert_eq!(header_starts.len(), 12, "{header:?}");
    assert!(header.trim_end().ends_with(" REASON"), "{header:?}");
    assert_eq!(header_starts[..11], column_starts(&died), "\n{header}\n{died}");
    assert_eq!(terminal.finish(), 0);
}

/// `roster-state` with `payload` for `event`, as a harness's hook runs it.
pub(crate) fn state_event(sandbox: &Sandbox, harness: &str, event: &str, payload: &[u8]) {
    let command = sandbox.command_in_root("roster-state", &["--hook", harness, "--event", event]);
    let run =
        tests::run_to_completion(command, tests::StdinFeed::Bytes(payload.to_vec()), tests::COMMAND_DEADLINE);
    assert_eq!(run.code(), Some(0), "{}", run.stderr_text());
}

/// "Needs you" is one command: `--watch --state waiting` prints the moment
/// a session starts waiting, once per change, and nothing else: not the
/// same state said again, not the work that follows, not the death.
#[test]
fn a_watch_for_waiting_sessions_prints_each_moment_one_starts_waiting_once() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    let pid = owner.pid();
    sandbox.register(pid, &["--harness", "claude-code", "--session-id", "s-1"]);
    let payload = br#"{"session_id":"s-1"}"#;
    state_event(&sandbox, "claude-code", "UserPromptSubmit", payload);
    let watcher = Watcher::start(&sandbox, &["--state", "waiting"]);
    watcher.expect_quiet(Duration::from_millis(300));

    state_event(&sandbox, "claude-code", "PermissionRequest", payload);
    let waiting = watcher.expect("state-changed", Some(pid));
    assert_eq!(waiting["row"]["state"], "waiting", "{waiting}");
    assert_eq!(waiting["row"]["waiting_for"], "permission", "{waiting}");
    assert_eq!(waiting["row"]["state_source"], "claude-code:PermissionRequest", "{waiting}");
    // The dialog's notification six seconds later is the same state.
    let notification = br#"{"session_id":"s-1","notification_type":"permission_prompt"}"#;
    state_event(&sandbox, "claude-code", "Notification", notification);
    // The permission granted: working, which this watch does not ask for.
    state_event(&sandbox, "claude-code", "PostToolUse", payload);
    watcher.expect_quiet(Duration::from_millis(300));
    state_event(&sandbox, "claude-code", "PermissionRequest", payload);
    watcher.expect("state-changed", Some(pid));
    owner.kill();
    watcher.expect_quiet(Duration::from_millis(300));

    // Without a state filter every change of state is an event, once.
    let other = Owner::spawn();
    sandbox.register(other.pid(), &["--harness", "codex", "--session-id", "s-2"]);
    let all = Watcher::start(&sandbox, &[]);
    let listed = all.expect("listed", Some(other.pid()));
    assert_eq!(listed["row"]["state"], "unknown", "{listed}");
    let payload = br#"{"session_id":"s-2"}"#;
    for (event, state) in [("UserPromptSubmit", "working"), ("PreToolUse", ""), ("Stop", "idle")] {
        state_event(&sandbox, "codex", event, payload);
        if state.is_empty() {
            all.expect_quiet(Duration::from_millis(300));
        } else {
            let changed = all.expect("state-changed", Some(other.pid()));
            assert_eq!(changed["row"]["state"], state, "{changed}");
        }
    }
}

/// Claude Code's own sessions are followed like roster's records: a file
/// that appears is a `registered` session, its owner's death a `died` one
/// at once (a pidfd), its removal by Claude Code a `removed` one.
#[test]
fn a_watch_follows_the_sessions_claude_code_keeps() {
    let sandbox = Sandbox::new();
    // Registered once, so the registry exists; that session stays listed.
    let roster_owner = Owner::spawn();
    sandbox.register(roster_owner.pid(), &[]);
    let watcher = Watcher::start(&sandbox, &[]);
    watcher.expect("listed", Some(roster_owner.pid()));
    // Claude Code runs for the first time: its directories appear after
    // the watch started.
    let directory = sandbox.home().join(".claude/sessions");
    std::fs::create_dir(sandbox.home().join(".claude")).unwrap();
    std::fs::create_dir(&directory).unwrap();
    std::fs::set_permissions(&directory, std::fs::Permissions::from_mode(0o700)).unwrap();
    let owner = Owner::spawn();
    let pid = owner.pid();
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let ticks = stat.rsplit_once(')').unwrap().1.split_whitespace().nth(19).unwrap().to_owned();
    let machine = std::fs::read_to_string("/etc/machine-id").unwrap().trim().to_owned();
    let pid_ns = std::os::unix::fs::MetadataExt::ino(&std::fs::metadata("/proc/self/ns/pid").unwrap());
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64;
    let file = serde_json::json!({
        "pid": pid, "sessionId": "cc-1", "cwd": sandbox.project(), "startedAt": now, "procStart": ticks,
        "pidDomain": format!("linux:{machine}:pid:[{pid_ns}]"), "status": "idle", "updatedAt": now,
    });
    let path = directory.join(format!("{pid}.json"));
    tests::write_file_atomically(&path, &serde_json::to_vec(&file).unwrap());
    let registered = watcher.expect("registered", Some(pid));
    assert_eq!(registered["row"]["origin"], "claude-code", "{registered}");
    assert_eq!(registered["row"]["state"], "idle", "{registered}");
    owner.kill();
    let died = watcher.expect("died", Some(pid));
    assert_eq!(died["row"]["origin"], "claude-code", "{died}");
    std::fs::remove_file(&path).unwrap();
    watcher.expect("removed", Some(pid));
    watcher.expect_quiet(Duration::from_millis(300));
}

/// Copilot CLI's sessions are followed too: a session directory and lock
/// file that appear after the watch started are a `registered` session,
/// alive once its process holds the lock (taken after the files are
/// written, which no inotify event tells), its death `died` at once, the
/// files' removal `removed`.
#[test]
fn a_watch_follows_the_sessions_copilot_marks() {
    let sandbox = Sandbox::new();
    let roster_owner = Owner::spawn();
    sandbox.register(roster_owner.pid(), &[]);
    let watcher = Watcher::start(&sandbox, &[]);
    watcher.expect("listed", Some(roster_owner.pid()));
    let state = sandbox.home().join(".copilot/session-state");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o700)).unwrap();
    let directory = state.join("0b7e2c1d-cp-1");
    std::fs::create_dir(&directory).unwrap();
    std::fs::set_permissions(&directory, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::write(directory.join("workspace.yaml"), format!("cwd: {}\n", sandbox.project().display()))
        .unwrap();
    let session = tests::LockHolder::spawn_marking_session(&directory, Duration::from_millis(400));
    let pid = session.pid();
    let registered = watcher.expect("registered", Some(pid));
    assert_eq!(registered["row"]["origin"], "copilot", "{registered}");
    // Unknown until the lock is held (perhaps said anew as the files
    // appear); then the same claim, proven: never dead meanwhile.
    let mut latest = registered;
    for _ in 0..4 {
        if latest["row"]["liveness"] == "alive" {
            break;
        }
        assert_eq!(latest["row"]["liveness"], "unknown", "{latest}");
        latest = watcher.expect("refreshed", Some(pid));
    }
    assert_eq!(latest["row"]["liveness"], "alive", "{latest}");
    session.kill();
    let died = watcher.expect("died", Some(pid));
    assert_eq!(died["row"]["origin"], "copilot", "{died}");
    std::fs::remove_file(directory.join(format!("inuse.{pid}.lock"))).unwrap();
    watcher.expect("removed", Some(pid));
    watcher.expect_quiet(Duration::from_millis(300));
}

/// The next event must be `kind` for a message to `pid` with `pending`
/// messages waiting; returns its `message`, checked to carry no text.
#[track_caller]
fn expect_message(watcher: &Watcher, kind: &str, pid: u32, pending: u64) -> Value {
    let event = watcher.expect(kind, Some(pid));
    assert_eq!(event["row"]["messages_pending"], pending, "{event}");
    let message = event["message"].clone();
    let keys: Vec<&str> = message.as_object().expect("a message object").keys().map(String::as_str).collect();
    let mut expected = ["id", "seq", "from", "queued_at", "expires_at", "outcome", "bytes"];
    expected.sort_unstable();
    let mut keys = keys;
    keys.sort_unstable();
    assert_eq!(keys, expected, "{event}");
    assert!(message["from"]["pid"].is_u64(), "{event}");
    message
}

/// A message's life as a watcher sees it: queued, then delivered,
/// expired (its time to live ran out) or refused (the session closed
/// meanwhile), each once, with the session's row and its count of
/// messages waiting going 1 then 0; a watch whose filters leave the
/// session out says nothing of its messages.
#[test]
fn a_watch_reports_each_message_queued_then_settled_once() {
    let sandbox = Sandbox::new();
    let project = sandbox.home().join("src/app");
    std::fs::create_dir_all(&project).unwrap();
    let owner = ArmedOwner::spawn(sandbox.root(), sandbox.home(), &project);
    let pid = owner.pid();
    let to = pid.to_string();
    sandbox
        .register(pid, &["--cwd", project.to_str().unwrap(), "--agent", "wren", "--harness", "claude-code"]);
    let watcher = Watcher::start(&sandbox, &[]);
    let listed = watcher.expect("listed", Some(pid));
    assert_eq!(listed["row"]["messages_pending"], 0, "{listed}");
    let elsewhere = Watcher::start(&sandbox, &["--agent", "someone-else"]);

    // Delivered. The first send also makes the session's queue.
    let text = "please rebase onto main";
    let queued = sandbox.run("roster-send", &["--json", "--to", &to, text]).json();
    let message = expect_message(&watcher, "message-queued", pid, 1);
    assert_eq!(message["id"], queued["id"], "{message}");
    assert_eq!(message["seq"], 1, "{message}");
    assert_eq!(message["outcome"], Value::Null, "{message}");
    assert_eq!(message["bytes"], text.len(), "{message}");
    assert_eq!(message["expires_at"], queued["expires_at"], "{message}");
    assert_eq!(deliver_at_prompt(&sandbox, pid, ConsentNow::Accepts).len(), 1);
    let message = expect_message(&watcher, "message-delivered", pid, 0);
    assert_eq!(message["id"], queued["id"], "{message}");
    assert_eq!(message["outcome"]["kind"], "delivered", "{message}");
    assert_eq!(message["outcome"]["event"], "claude-code:UserPromptSubmit", "{message}");
    watcher.expect_quiet(Duration::from_millis(300));

    // Expired: its time to live runs out, and a look at it settles it.
    let queued = sandbox.run("roster-send", &["--json", "--ttl", "1s", "--to", &to, "soon stale"]).json();
    let message = expect_message(&watcher, "message-queued", pid, 1);
    assert_eq!((message["id"].clone(), message["seq"].clone()), (queued["id"].clone(), Value::from(2)));
    std::thread::sleep(Duration::from_millis(1100));
    let id = queued["id"].as_str().unwrap();
    let status = sandbox.run("roster-send", &["--json", "--status", id]).json();
    assert_eq!(status["status"], "expired", "{status}");
    let message = expect_message(&watcher, "message-expired", pid, 0);
    assert_eq!(message["outcome"]["kind"], "expired", "{message}");
    assert_eq!(message["outcome"]["reason"], "its time to live ran out", "{message}");
    watcher.expect_quiet(Duration::from_millis(300));

    // Refused: the session closes before the delivery.
    let queued = sandbox.run("roster-send", &["--json", "--to", &to, "are you there?"]).json();
    expect_message(&watcher, "message-queued", pid, 1);
    run(&sandbox, "roster-consent", &["disarm", "--pid", &to]);
    watcher.expect("consent-changed", Some(pid));
    assert!(
        deliver_at_prompt(&sandbox, pid, ConsentNow::Refuses("the session was disarmed".into())).is_empty()
    );
    let message = expect_message(&watcher, "message-refused", pid, 0);
    assert_eq!(message["id"], queued["id"], "{message}");
    assert_eq!(message["outcome"]["reason"], "the session was disarmed", "{message}");
    watcher.expect_quiet(Duration::from_millis(300));
    elsewhere.expect_quiet(Duration::from_millis(100));

    // The queue removed with its session: no event of its own.
    let ended = owner_pid_killed(owner);
    watcher.expect("died", Some(ended));
    run(&sandbox, "roster-prune", &[]);
    watcher.expect("removed", Some(ended));
    watcher.expect_quiet(Duration::from_millis(300));
}

/// Kills the armed owner and returns its pid.
fn owner_pid_killed(owner: ArmedOwner) -> u32 {
    let pid = owner.pid();
    drop(owner);
    pid
}
