//! One pid number, many worlds (docs/contract.md §4.3): a pid means one
//! process only in one pid namespace of one boot of one machine. With real
//! `unshare -p -f --mount-proc` containers (pids forced with `ns_last_pid`),
//! a second machine made of a bind-mounted boot id and machine id in a
//! mount namespace, and `unshare -T`, nothing done in one world replaces,
//! refreshes or removes another world's session or consent marker, and a
//! time namespace never turns a session into another.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;
use tests::{
    COMMAND_DEADLINE, Outcome, Owner, Sandbox, binary, clean_environment, poll_until, require_tool,
    run_with_deadline,
};

/// A container: a pid namespace of its own with its own `/proc`, whose
/// shell (pid 1 there) keeps one session process running.
struct Container {
    unshare: Child,
    /// The session process as the host numbers it.
    session_on_host: u32,
    /// The same process as the container numbers it.
    session_inside: u32,
}

impl Container {
    /// Starts a container whose session process gets `forced_pid` inside
    /// (written to the container's `ns_last_pid` first), or the next pid
    /// (2) when `None`.
    fn start(forced_pid: Option<u32>) -> Container {
        let unshare = require_tool("unshare");
        require_tool("nsenter");
        let force = forced_pid
            .map_or(String::new(), |pid| format!("echo {} > /proc/sys/kernel/ns_last_pid; ", pid - 1));
        let script = format!("{force}sleep 100000 & wait");
        let child = Command::new(unshare)
            // --kill-child: the shell, pid 1 inside, gets SIGKILL when
            // unshare dies, and every process of the container with it.
            .args(["-p", "-f", "--kill-child", "--mount-proc", "sh", "-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start a container with unshare -p -f --mount-proc");
        let unshare_pid = child.id();
        let mut session = None;
        assert!(
            poll_until(Duration::from_secs(10), || {
                session = children_of(unshare_pid)
                    .into_iter()
                    .flat_map(children_of)
                    .find(|pid| comm_of(*pid).as_deref() == Some("sleep"));
                session.is_some()
            }),
            "the container's session process did not start"
        );
        let session_on_host = session.unwrap();
        let session_inside = inner_pid(session_on_host);
        if let Some(forced) = forced_pid {
            assert_eq!(
                session_inside, forced,
                "ns_last_pid did not give the container's session pid {forced}"
            );
        }
        Container { unshare: child, session_on_host, session_inside }
    }

    /// `tool --dir <root> args…` run inside the container (its pid and
    /// mount namespaces, so its own `/proc`), with a clean environment.
    fn command(&self, sandbox: &Sandbox, tool: &str, args: &[&str]) -> Command {
        let mut command = Command::new(require_tool("nsenter"));
        clean_environment(&mut command, sandbox.home());
        command
            .args(["-t", &self.session_on_host.to_string(), "-p", "-m", "--"])
            .arg(binary(tool))
            .arg("--dir")
            .arg(sandbox.root())
            .args(args)
            .current_dir(sandbox.home());
        command
    }

    fn run(&self, sandbox: &Sandbox, tool: &str, args: &[&str]) -> Outcome {
        run_with_deadline(&mut self.command(sandbox, tool, args), COMMAND_DEADLINE)
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        // Killing unshare kills the shell (--kill-child), pid 1 inside,
        // and that ends every process there.
        let _ = self.unshare.kill();
        let _ = self.unshare.wait();
    }
}

fn children_of(pid: u32) -> Vec<u32> {
    std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
        .unwrap_or_default()
        .split_whitespace()
        .filter_map(|pid| pid.parse().ok())
        .collect()
}

fn comm_of(pid: u32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/comm")).ok().map(|comm| comm.trim().to_owned())
}

/// The innermost pid of a process (the last of `NSpid`).
fn inner_pid(pid: u32) -> u32 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("read status");
    let line = status.lines().find(|line| line.starts_with("NSpid:")).expect("an NSpid line");
    line.split_whitespace().last().and_then(|pid| pid.parse().ok()).expect("a pid")
}

/// Runs `command` with `payload` on stdin.
fn run_with_payload(command: &mut Command, payload: &str) -> Outcome {
    command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = command.spawn().expect("spawn");
    child.stdin.take().unwrap().write_all(payload.as_bytes()).unwrap();
    let output = child.wait_with_output().expect("wait");
    Outcome {
        description: format!("{command:?}"),
        status: output.status,
        stdout: output.stdout,
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        elapsed: Duration::ZERO,
    }
}

fn rows_for(rows: &[Value], pid: u32) -> Vec<Value> {
    rows.iter().filter(|row| row["session_pid"] == pid).cloned().collect()
}

fn hook_log(sandbox: &Sandbox) -> String {
    std::fs::read_to_string(sandbox.root().join("hook-errors.log")).unwrap_or_default()
}

/// The issue's first proof: a container's session-end hook, for a process
/// that has the host session's pid number in the container, used to delete
/// the live host session's record and its `disarm` marker.
#[test]
fn a_container_session_end_never_removes_a_live_host_session_or_its_marker() {
    let sandbox = Sandbox::new();
    let host = Owner::spawn();
    let pid = host.pid();
    let pid_text = pid.to_string();
    sandbox.register(pid, &["--agent", "hostside", "--session-id", "hostsid"]);
    sandbox.run("roster-consent", &["disarm", "--pid", &pid_text]).expect_code(0);
    let record_before = std::fs::read(sandbox.record_path(pid)).unwrap();

    let container = Container::start(Some(pid));
    let ended = run_with_payload(
        &mut container.command(
            &sandbox,
            "roster-prune",
            &["--current", "--hook", "claude-code", "--pid", &container.session_inside.to_string()],
        ),
        r#"{"session_id":"inner","hook_event_name":"SessionEnd","reason":"exit"}"#,
    );
    ended.expect_code(0);
    assert!(ended.stdout.is_empty(), "hook mode printed to stdout: {ended}");
    let log = hook_log(&sandbox);
    assert!(
        log.contains("kept") && log.contains("another world"),
        "the hook said nothing of what it kept: {log}"
    );
    // Plain mode says so too, and refuses.
    let plain = container.run(&sandbox, "roster-prune", &["--current", "--pid", &pid_text]);
    plain.expect_code(3).expect_error_line("roster-prune");
    assert!(plain.stderr.contains(sandbox.record_path(pid).to_str().unwrap()), "{plain}");
    assert!(plain.stderr.contains("another world"), "{plain}");

    assert_eq!(std::fs::read(sandbox.record_path(pid)).unwrap(), record_before, "the host record changed");
    assert!(sandbox.marker_path(pid).exists(), "the host session's disarm marker was removed");
    let rows = rows_for(&sandbox.list(&["--all"]), pid);
    let host_row = rows.iter().find(|row| row["agent"] == "hostside").expect("the host session is listed");
    assert_eq!(host_row["liveness"], "alive", "{host_row:#}");
    assert_eq!(host_row["consent"], "disarmed", "{host_row:#}");
}

/// The same, with consent at stake: in a repository that opts in, a
/// session that disarmed itself stays disarmed after another world's
/// session end and its own next refresh (`/clear`).
#[test]
fn consent_a_session_withdrew_is_never_reopened_by_another_world() {
    let sandbox = Sandbox::new();
    let repo = sandbox.base().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    std::fs::write(repo.join(".roster.toml"), "[consent]\nauto_arm = true\n").unwrap();
    let host = Owner::spawn();
    let pid = host.pid();
    let pid_text = pid.to_string();
    let repo_text = repo.to_str().unwrap();
    sandbox.register(pid, &["--cwd", repo_text, "--session-id", "first"]);
    assert_eq!(sandbox.run("roster-consent", &["should-arm", "--pid", &pid_text]).code(), 0, "auto-armed");
    sandbox.run("roster-consent", &["disarm", "--pid", &pid_text]).expect_code(0);
    assert_eq!(sandbox.run("roster-consent", &["should-arm", "--pid", &pid_text]).code(), 1);

    let container = Container::start(Some(pid));
    let inside = container.session_inside.to_string();
    run_with_payload(
        &mut container.command(
            &sandbox,
            "roster-prune",
            &["--current", "--hook", "claude-code", "--pid", &inside],
        ),
        r#"{"session_id":"first","reason":"exit"}"#,
    )
    .expect_code(0);
    // Arm and disarm in the container write the container's own marker.
    container
        .run(&sandbox, "roster-consent", &["disarm", "--pid", &inside, "--cwd", repo_text])
        .expect_code(0);
    container.run(&sandbox, "roster-prune", &["--current", "--pid", &inside]).expect_code(3);
    assert!(sandbox.marker_path(pid).exists(), "the host session's marker went");

    sandbox.register(pid, &["--cwd", repo_text, "--session-id", "after-clear"]);
    assert_eq!(
        sandbox.run("roster-consent", &["should-arm", "--pid", &pid_text]).code(),
        1,
        "the host session's own disarm must still hold"
    );
}

/// Two sibling containers number from 1: both sessions are pid 2, and the
/// second must not erase the first.
#[test]
fn sibling_containers_with_one_pid_keep_two_sessions() {
    let sandbox = Sandbox::new();
    let first = Container::start(None);
    let second = Container::start(None);
    assert_eq!(first.session_inside, second.session_inside, "both sessions have one pid inside");
    let inside = first.session_inside.to_string();
    first.run(&sandbox, "roster-register", &["--pid", &inside, "--agent", "first"]).expect_code(0);
    let registered =
        second.run(&sandbox, "roster-register", &["--json", "--pid", &inside, "--agent", "second"]);
    registered.expect_code(0);
    assert_eq!(registered.json()["agent"], "second");
    // A refresh in the second container refreshes only its own.
    second.run(&sandbox, "roster-register", &["--pid", &inside, "--session-id", "s2"]).expect_code(0);
    assert_eq!(sandbox.visible_session_entries().len(), 2, "{:?}", sandbox.visible_session_entries());

    for (container, own, other) in [(&first, "first", "second"), (&second, "second", "first")] {
        let rows = container.run(&sandbox, "roster-list", &["--json", "--all"]).rows();
        let mine = rows.iter().find(|row| row["agent"] == own).expect("its own session");
        assert_eq!(mine["liveness"], "alive", "{mine:#}");
        let theirs = rows.iter().find(|row| row["agent"] == other).expect("the other session");
        assert_eq!(theirs["liveness"], "unknown", "{theirs:#}");
        assert!(theirs["liveness_reason"].as_str().unwrap().contains("another pid namespace"), "{theirs:#}");
        // Prune and --current in one container leave the other's alone.
        container.run(&sandbox, "roster-prune", &[]).expect_code(0);
    }
    first.run(&sandbox, "roster-prune", &["--current", "--pid", &inside]).expect_code(0);
    let left: Vec<Value> = sandbox.list(&["--all"]);
    assert_eq!(left.len(), 1, "{left:#?}");
    assert_eq!(left[0]["agent"], "second", "the first container's end removed the other's: {left:#?}");

    // From the host, the container's session is another world's.
    let host_rows = sandbox.list(&[]);
    assert_eq!(host_rows[0]["liveness"], "unknown", "{host_rows:#?}");
    sandbox.run("roster-prune", &[]).expect_code(0);
    assert_eq!(sandbox.list(&["--all"]).len(), 1, "prune removed another world's session");
}

/// Register from another pid namespace used to replace a live host record
/// (judged unknown, yet overwritten as if dead).
#[test]
fn register_from_another_pid_namespace_never_replaces_a_live_host_record() {
    let sandbox = Sandbox::new();
    let host = Owner::spawn();
    let pid = host.pid();
    let registered = sandbox.register(pid, &["--agent", "hostside"]);
    let container = Container::start(Some(pid));
    let inside = container.session_inside.to_string();
    let outcome =
        container.run(&sandbox, "roster-register", &["--json", "--pid", &inside, "--agent", "inner"]);
    outcome.expect_code(0);
    assert_eq!(outcome.json()["agent"], "inner");

    let host_record = sandbox.record(pid);
    assert_eq!(host_record["agent"], "hostside");
    assert_eq!(host_record["registered_at"], registered["registered_at"]);
    let rows = rows_for(&sandbox.list(&["--all"]), pid);
    assert_eq!(rows.len(), 2, "{rows:#?}");
    let by_agent = |agent: &str| rows.iter().find(|row| row["agent"] == agent).unwrap().clone();
    assert_eq!(by_agent("hostside")["liveness"], "alive");
    assert_eq!(by_agent("inner")["liveness"], "unknown");
    // The reap pass of another host registration keeps the container's.
    let other = Owner::spawn();
    sandbox.register(other.pid(), &[]);
    assert_eq!(rows_for(&sandbox.list(&["--all"]), pid).len(), 2);
}

/// A second machine sharing this home: another boot id and another machine
/// id, bind-mounted in a mount namespace of its own.
struct OtherMachine {
    boot_id_file: PathBuf,
    machine_id_file: Option<PathBuf>,
}

impl OtherMachine {
    /// Another machine (`machine_id` given) or this machine after a reboot
    /// (`None`: only the boot id changes).
    fn new(sandbox: &Sandbox, boot_id: &str, machine_id: Option<&str>) -> OtherMachine {
        let boot_id_file = sandbox.base().join(format!("boot_id-{boot_id}"));
        std::fs::write(&boot_id_file, format!("{boot_id}\n")).unwrap();
        let machine_id_file = machine_id.map(|id| {
            let path = sandbox.base().join(format!("machine-id-{id}"));
            std::fs::write(&path, format!("{id}\n")).unwrap();
            path
        });
        OtherMachine { boot_id_file, machine_id_file }
    }

    fn run(&self, sandbox: &Sandbox, tool: &str, args: &[&str]) -> Outcome {
        let mut script =
            String::from("mount --bind \"$BOOT_ID\" /proc/sys/kernel/random/boot_id || exit 90\n");
        if self.machine_id_file.is_some() {
            script.push_str("mount --bind \"$MACHINE_ID\" /etc/machine-id || exit 91\n");
        }
        script.push_str("exec \"$@\"\n");
        let mut command = Command::new(require_tool("unshare"));
        clean_environment(&mut command, sandbox.home());
        command
            .args(["-m", "--propagation", "private", "sh", "-c", &script, "sh"])
            .arg(binary(tool))
            .arg("--dir")
            .arg(sandbox.root())
            .args(args)
            .env("BOOT_ID", &self.boot_id_file)
            .current_dir(sandbox.home());
        if let Some(path) = &self.machine_id_file {
            command.env("MACHINE_ID", path);
        }
        let outcome = run_with_deadline(&mut command, COMMAND_DEADLINE);
        assert!(
            !matches!(outcome.code(), 90 | 91),
            "cannot bind-mount a boot id or machine id in a mount namespace: {outcome}"
        );
        outcome
    }
}

fn this_machine() -> String {
    owner_liveness::read_machine().expect("this machine can be named")
}

#[test]
fn a_home_shared_by_two_machines_keeps_each_machines_sessions() {
    let sandbox = Sandbox::new();
    let on_this = Owner::spawn();
    let on_other = Owner::spawn();
    sandbox.register(on_this.pid(), &["--agent", "here"]);
    let other = OtherMachine::new(
        &sandbox,
        "0b0e5eed-0000-4000-8000-000000000001",
        Some("0123456789abcdef0123456789abcdef"),
    );

    // The other machine registers (its reap pass judges this one's record)
    // and prunes: this machine's live session stays.
    other
        .run(&sandbox, "roster-register", &["--pid", &on_other.pid().to_string(), "--agent", "there"])
        .expect_code(0);
    // Even the same pid number registered there is a session of its own.
    other
        .run(&sandbox, "roster-register", &["--pid", &on_this.pid().to_string(), "--agent", "same-number"])
        .expect_code(0);
    other.run(&sandbox, "roster-prune", &[]).expect_code(0);
    let rows = other.run(&sandbox, "roster-list", &["--json", "--all"]).rows();
    assert_eq!(rows.len(), 3, "{rows:#?}");
    let here = rows.iter().find(|row| row["agent"] == "here").expect("this machine's session");
    assert_eq!(here["liveness"], "unknown", "{here:#}");
    let reason = here["liveness_reason"].as_str().unwrap();
    assert_eq!(reason, format!("recorded on another machine ({})", this_machine()), "{here:#}");
    let there = rows.iter().find(|row| row["agent"] == "there").unwrap();
    assert_eq!(there["machine"], "machine-id:0123456789abcdef0123456789abcdef", "{there:#}");

    // Seen from here: this machine's session alive, the other's unknown
    // naming it, and nothing of theirs pruned.
    sandbox.run("roster-prune", &[]).expect_code(0);
    let rows = sandbox.list(&["--all"]);
    assert_eq!(rows.len(), 3, "{rows:#?}");
    for row in &rows {
        let expected = if row["agent"] == "here" { "alive" } else { "unknown" };
        assert_eq!(row["liveness"], expected, "{row:#}");
        if row["agent"] != "here" {
            assert_eq!(
                row["liveness_reason"],
                "recorded on another machine (machine-id:0123456789abcdef0123456789abcdef)",
                "{row:#}"
            );
            assert_eq!(row["should_arm"], false, "{row:#}");
        }
    }
    // Only an age bound removes another machine's sessions.
    std::thread::sleep(Duration::from_millis(1100));
    sandbox.run("roster-prune", &["--older-than", "1s"]).expect_code(0);
    let rows = sandbox.list(&["--all"]);
    assert_eq!(rows.len(), 1, "{rows:#?}");
    assert_eq!(rows[0]["agent"], "here");
}

#[test]
fn a_reboot_of_this_machine_still_ends_its_sessions() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    sandbox.register(owner.pid(), &["--agent", "before-the-reboot"]);
    let rebooted = OtherMachine::new(&sandbox, "0b0e5eed-0000-4000-8000-000000000002", None);
    let rows = rebooted.run(&sandbox, "roster-list", &["--json", "--all"]).rows();
    assert_eq!(rows[0]["liveness"], "dead", "{rows:#?}");
    assert_eq!(rows[0]["liveness_reason"], "recorded in an earlier boot");
    rebooted.run(&sandbox, "roster-prune", &[]).expect_code(0);
    assert!(sandbox.list(&["--all"]).is_empty(), "the earlier boot's record was not pruned");
}

/// A session re-registered from inside a time namespace used to be taken
/// for a new owner, losing its agent name and `registered_at`, and the
/// host then listed its own live session as unknown.
#[test]
fn a_refresh_from_a_time_namespace_is_a_refresh() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    let pid = owner.pid().to_string();
    let first = sandbox.register(owner.pid(), &["--agent", "wren", "--session-id", "before"]);
    let in_time_namespace = |tool: &str, args: &[&str]| {
        let mut command = Command::new(require_tool("unshare"));
        clean_environment(&mut command, sandbox.home());
        command
            .args(["-T", "--boottime", "86400", "--monotonic", "3600", "--"])
            .arg(binary(tool))
            .arg("--dir")
            .arg(sandbox.root())
            .args(args)
            .current_dir(sandbox.home());
        run_with_deadline(&mut command, COMMAND_DEADLINE)
    };
    let refreshed = in_time_namespace("roster-register", &["--pid", &pid, "--session-id", "after"]);
    refreshed.expect_code(0);
    assert!(refreshed.stdout_text().starts_with("refreshed pid"), "{refreshed}");
    let record = sandbox.record(owner.pid());
    assert_eq!(record["agent"], "wren");
    assert_eq!(record["registered_at"], first["registered_at"]);
    assert_eq!(record["start_ticks"], first["start_ticks"], "start ticks are on the initial clock");
    assert_eq!(record["session_id"], "after");
    assert_ne!(record["time_ns"], first["time_ns"], "the refresh ran in another time namespace");
    assert_eq!(sandbox.visible_session_entries().len(), 1);

    let row = &sandbox.list(&[])[0];
    assert_eq!(row["liveness"], "alive", "{row:#}");
    let seen_inside = in_time_namespace("roster-list", &["--json"]).rows();
    assert_eq!(seen_inside[0]["liveness"], "alive", "{seen_inside:#?}");
    // Its end from inside the time namespace is its own end.
    in_time_namespace("roster-prune", &["--current", "--pid", &pid]).expect_code(0);
    assert!(sandbox.list(&["--all"]).is_empty());
}

/// `--current` removes a record only when it is the caller's own by
/// identity and, in hook mode, by session id.
#[test]
fn current_removes_only_its_own_session() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    let pid = owner.pid().to_string();
    sandbox.register(owner.pid(), &["--session-id", "mine"]);
    sandbox.run("roster-consent", &["disarm", "--pid", &pid]).expect_code(0);

    // Another session's end (its payload names another session id, or one
    // that is no valid session id at all): kept with its consent marker,
    // logged, exit 0, stdout silent.
    for other in ["someone-else", "not/a/session/id"] {
        let mut hook =
            sandbox.command_in_root("roster-prune", &["--current", "--hook", "claude-code", "--pid", &pid]);
        let outcome = run_with_payload(&mut hook, &format!(r#"{{"session_id":"{other}","reason":"exit"}}"#));
        outcome.expect_code(0);
        assert!(outcome.stdout.is_empty(), "{outcome}");
        assert!(
            sandbox.record_path(owner.pid()).exists(),
            "a session end of session id {other} removed the record"
        );
        assert!(
            sandbox.marker_path(owner.pid()).exists(),
            "a session end of session id {other} removed the marker"
        );
        let log = hook_log(&sandbox);
        assert!(log.contains("kept") && log.contains(other), "{log}");
    }

    // A record at the pid of another process (its identity differs): kept;
    // plain mode says so with exit 3.
    let original = sandbox.record(owner.pid());
    sandbox.edit_record(owner.pid(), |record| {
        let ticks = record["start_ticks"].as_u64().unwrap();
        record.insert("start_ticks".into(), Value::from(ticks + 1));
        record.remove("pidfs_ino");
    });
    let outcome = sandbox.run("roster-prune", &["--current", "--pid", &pid]);
    outcome.expect_code(3).expect_error_line("roster-prune");
    assert!(outcome.stderr.contains("kept"), "{outcome}");
    assert!(outcome.stderr.contains(sandbox.record_path(owner.pid()).to_str().unwrap()), "{outcome}");
    assert!(sandbox.record_path(owner.pid()).exists());
    let mut hook =
        sandbox.command_in_root("roster-prune", &["--current", "--hook", "claude-code", "--pid", &pid]);
    run_with_payload(&mut hook, r#"{"session_id":"mine","reason":"exit"}"#).expect_code(0);
    assert!(sandbox.record_path(owner.pid()).exists(), "hook mode removed another process's record");

    // Its own record, its own session id (or an empty one, which names
    // none, as an empty value means unset everywhere): removed.
    for payload in [r#"{"session_id":"mine","reason":"exit"}"#, r#"{"session_id":"","reason":"exit"}"#] {
        sandbox.write_record(owner.pid(), &original);
        let mut hook =
            sandbox.command_in_root("roster-prune", &["--current", "--hook", "claude-code", "--pid", &pid]);
        run_with_payload(&mut hook, payload).expect_code(0);
        assert!(!sandbox.record_path(owner.pid()).exists(), "its own session end removed nothing: {payload}");
    }
}

/// Machines are named by `/etc/machine-id`, else the hostname; the record
/// says which.
#[test]
fn a_record_names_its_machine() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    let row = sandbox.register(owner.pid(), &[]);
    assert_eq!(row["machine"], this_machine());
    let no_machine_id = OtherMachine {
        boot_id_file: PathBuf::from("/proc/sys/kernel/random/boot_id"),
        machine_id_file: Some(empty_file(&sandbox)),
    };
    let other = Owner::spawn();
    let outcome =
        no_machine_id.run(&sandbox, "roster-register", &["--json", "--pid", &other.pid().to_string()]);
    let hostname = nix::unistd::gethostname().unwrap().into_string().unwrap();
    assert_eq!(outcome.json()["machine"], format!("hostname:{hostname}"), "{outcome}");
    // Same boot id, so the same kernel: the other machine id changes nothing.
    let rows = sandbox.list(&[]);
    assert!(rows.iter().all(|row| row["liveness"] == "alive"), "{rows:#?}");
}

fn empty_file(sandbox: &Sandbox) -> PathBuf {
    let path: &Path = &sandbox.base().join("empty-machine-id");
    std::fs::write(path, "").unwrap();
    path.to_owned()
}

/// Records and markers an older roster wrote as `<pid>.json` (format 1,
/// no machine) are still read, and their own session's next write moves
/// them to this world's name, keeping what a refresh keeps.
#[test]
fn records_and_markers_of_an_older_roster_are_read_and_taken_over() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    let pid = owner.pid();
    let pid_text = pid.to_string();
    let first = sandbox.register(pid, &["--agent", "wren", "--session-id", "old"]);
    sandbox.run("roster-consent", &["disarm", "--pid", &pid_text]).expect_code(0);
    // As an older roster wrote them: `<pid>.json`, no machine, format 1
    // (records) and 3 (markers).
    let legacy_record = sandbox.sessions().join(format!("{pid}.json"));
    let legacy_marker = sandbox.consent().join(format!("{pid}.json"));
    for (new, legacy, format) in
        [(sandbox.record_path(pid), &legacy_record, 1), (sandbox.marker_path(pid), &legacy_marker, 3)]
    {
        let mut value: Value = serde_json::from_slice(&std::fs::read(&new).unwrap()).unwrap();
        let object = value.as_object_mut().unwrap();
        object.remove("machine");
        object.insert("format".into(), Value::from(format));
        tests::write_file_0600(legacy, &serde_json::to_vec_pretty(&value).unwrap());
        std::fs::remove_file(&new).unwrap();
    }
    let rows = sandbox.list(&[]);
    assert_eq!(rows.len(), 1, "{rows:#?}");
    assert_eq!(rows[0]["liveness"], "alive", "{:#}", rows[0]);
    assert_eq!(rows[0]["consent"], "disarmed", "the older marker still counts: {:#}", rows[0]);
    assert_eq!(sandbox.run("roster-consent", &["should-arm", "--pid", &pid_text]).code(), 1);
    // A marker written now, beside the older record, is the one the
    // listing shows (it is named for the record's world, not its file).
    sandbox.run("roster-consent", &["disarm", "--pid", &pid_text]).expect_code(0);
    assert!(!legacy_marker.exists(), "the older marker stayed beside the new one");
    let rows = sandbox.list(&[]);
    assert_eq!(
        rows[0]["consent"], "disarmed",
        "the new marker of an older record is not seen: {:#}",
        rows[0]
    );

    let refreshed = sandbox.run("roster-register", &["--pid", &pid_text, "--session-id", "new"]);
    refreshed.expect_code(0);
    assert!(refreshed.stdout_text().starts_with("refreshed pid"), "{refreshed}");
    assert!(!legacy_record.exists(), "the older record stayed beside the new one");
    let record = sandbox.record(pid);
    assert_eq!(record["registered_at"], first["registered_at"]);
    assert_eq!(record["agent"], "wren");
    assert_eq!(record["format"], 2);
    assert!(sandbox.marker_path(pid).exists());
    // Its end removes both of this world's files.
    sandbox.run("roster-prune", &["--current", "--pid", &pid_text]).expect_code(0);
    assert!(sandbox.visible_session_entries().is_empty());
    assert!(tests::names_in(&sandbox.consent()).is_empty());
}
