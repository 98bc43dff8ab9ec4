//! Claude Code's own sessions (`~/.claude/sessions/<pid>.json`), listed
//! without any hook and judged by roster's verdict: crafted files for a
//! reused pid, an earlier boot, another machine, another pid namespace, and
//! files that cannot be believed; read only, whatever roster does.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;

use serde_json::{Value, json};
use tests::{Owner, Sandbox};

/// The sessions directory Claude Code keeps in the sandbox's home.
fn sessions_directory(sandbox: &Sandbox) -> PathBuf {
    let directory = sandbox.home().join(".claude/sessions");
    std::fs::create_dir_all(&directory).expect("create ~/.claude/sessions");
    std::fs::set_permissions(&directory, std::fs::Permissions::from_mode(0o700)).expect("chmod 700");
    directory
}

fn start_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("read the owner's stat");
    let after_name = stat.rsplit_once(')').expect("a stat line").1;
    after_name.split_whitespace().nth(19).expect("field 22").parse().expect("start ticks")
}

fn machine_id() -> String {
    std::fs::read_to_string("/etc/machine-id").expect("this machine has a machine-id").trim().to_owned()
}

fn pid_namespace() -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self/ns/pid").expect("the pid namespace").ino()
}

pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64
}

/// A session file as Claude Code 2.1.332 writes it, for `pid`.
pub(crate) fn session_file(pid: u32, session_id: &str, cwd: &str) -> Value {
    json!({
        "pid": pid, "sessionId": session_id, "cwd": cwd, "startedAt": now_ms(),
        "procStart": start_ticks(pid).to_string(), "version": "2.1.332", "peerProtocol": 1,
        "peerFeatures": ["notify_idle"], "kind": "interactive", "entrypoint": "cli",
        "pidDomain": format!("linux:{}:pid:[{}]", machine_id(), pid_namespace()),
        "messagingSocketPath": format!("/tmp/cc-socks/{pid}.sock"), "name": "app-4f", "nameSource": "derived",
        "status": "busy", "updatedAt": now_ms(), "statusUpdatedAt": now_ms(),
    })
}

pub(crate) fn write_session(sandbox: &Sandbox, name: &str, value: &Value) -> PathBuf {
    let path = sessions_directory(sandbox).join(name);
    std::fs::write(&path, serde_json::to_vec(value).unwrap()).expect("write a session file");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).expect("chmod 644");
    path
}

/// Every row `roster-list --json --all` gives, with `extra` flags.
pub(crate) fn rows_of(sandbox: &Sandbox, extra: &[&str]) -> Vec<Value> {
    let mut args = vec!["--json", "--all"];
    args.extend_from_slice(extra);
    sandbox.run("roster-list", &args).rows()
}

/// The row of owner `pid`.
pub(crate) fn row_for(rows: &[Value], pid: u32) -> Value {
    rows.iter()
        .find(|row| row["session_pid"] == pid)
        .cloned()
        .unwrap_or_else(|| panic!("no row for {pid}: {rows:?}"))
}

#[test]
fn a_session_claude_code_keeps_is_listed_alive_without_any_hook_and_can_be_turned_off() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    let cwd = sandbox.project().to_string_lossy().into_owned();
    write_session(&sandbox, &format!("{}.json", owner.pid()), &session_file(owner.pid(), "12d99b59-1", &cwd));
    let row = row_for(&rows_of(&sandbox, &[]), owner.pid());
    assert_eq!(row["origin"], "claude-code", "{row}");
    assert_eq!(row["liveness"], "alive", "{row}");
    assert_eq!(
        (row["harness"].as_str(), row["session_id"].as_str()),
        (Some("claude-code"), Some("12d99b59-1"))
    );
    assert_eq!(row["cwd"], cwd.as_str());
    assert_eq!(row["harness_version"], "2.1.332");
    assert_eq!(row["state"], "working", "{row}");
    assert_eq!(row["format"], Value::Null, "a harness's file has no roster format: {row}");
    // Turned off by the flag, or by the user config.
    assert!(rows_of(&sandbox, &["--no-adopt"]).is_empty());
    let config = sandbox.home().join(".config/roster");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("config.toml"), "[adopt]\nclaude_code = false\n").unwrap();
    assert!(rows_of(&sandbox, &[]).is_empty());
    std::fs::write(config.join("config.toml"), "[adopt]\nclaude_code = true\n").unwrap();
    assert_eq!(rows_of(&sandbox, &[]).len(), 1);
}

#[test]
fn each_claim_is_judged_by_the_verdict_rules() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    let pid = owner.pid();
    let cwd = sandbox.project().to_string_lossy().into_owned();
    let name = format!("{pid}.json");
    type Edit = Box<dyn Fn(&mut Value)>;
    let cases: Vec<(&str, Edit, &str)> = vec![
        ("as written", Box::new(|_| {}), "alive"),
        (
            "procStart of another process (a reused pid)",
            Box::new(move |file| file["procStart"] = (start_ticks(pid) + 1).to_string().into()),
            "dead",
        ),
        (
            "started before this boot",
            Box::new(|file| file["startedAt"] = 1_000_000_000_000u64.into()),
            "dead",
        ),
        (
            "another machine",
            Box::new(|file| {
                file["pidDomain"] = format!("linux:{}:pid:[{}]", "ab".repeat(16), pid_namespace()).into()
            }),
            "unknown",
        ),
        (
            "another pid namespace",
            Box::new(|file| file["pidDomain"] = format!("linux:{}:pid:[4026500000]", machine_id()).into()),
            "unknown",
        ),
    ];
    for (what, change, liveness) in cases {
        let mut file = session_file(pid, "s-1", &cwd);
        change(&mut file);
        write_session(&sandbox, &name, &file);
        let row = row_for(&rows_of(&sandbox, &[]), pid);
        assert_eq!(row["liveness"], liveness, "{what}: {row}");
        if liveness == "dead" {
            assert!(
                row["liveness_reason"].as_str().unwrap().contains("Claude Code removes its file"),
                "{row}"
            );
            assert_eq!(row["state"], "unknown", "a dead session is never shown working: {row}");
        }
    }
}

#[test]
fn files_that_cannot_be_believed_are_problem_rows_and_nothing_crashes() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    let pid = owner.pid();
    let cwd = sandbox.project().to_string_lossy().into_owned();
    let directory = sessions_directory(&sandbox);
    std::fs::write(directory.join("100.json"), b"{not json").unwrap();
    std::fs::write(directory.join("101.json"), br#"{"pid": 101}"#).unwrap();
    std::fs::write(directory.join("102.json"), vec![b' '; 1 << 20]).unwrap();
    let elsewhere = sandbox.base().join("elsewhere.json");
    std::fs::write(&elsewhere, serde_json::to_vec(&session_file(pid, "s-1", &cwd)).unwrap()).unwrap();
    std::os::unix::fs::symlink(&elsewhere, directory.join(format!("{pid}.json"))).unwrap();
    let other_users = write_session(&sandbox, "104.json", &session_file(pid, "s-2", &cwd));
    nix::unistd::chown(&other_users, Some(nix::unistd::Uid::from_raw(65534)), None).expect("chown (as root)");
    let mut wrong_pid = session_file(pid, "s-3", &cwd);
    wrong_pid["pid"] = 99.into();
    write_session(&sandbox, "105.json", &wrong_pid);
    let rows = rows_of(&sandbox, &[]);
    let problem = |name: &str| {
        rows.iter()
            .find(|row| row["path"].as_str().is_some_and(|path| path.ends_with(&format!("/{name}"))))
            .map(|row| row["problem"].clone())
            .unwrap_or_else(|| panic!("no row for {name}: {rows:?}"))
    };
    assert_eq!(problem("100.json"), "malformed");
    assert_eq!(problem("101.json"), "malformed");
    assert_eq!(problem("102.json"), "untrusted");
    assert_eq!(problem(&format!("{pid}.json")), "untrusted", "a symlink is never followed");
    assert_eq!(problem("104.json"), "untrusted", "another user's file is not believed");
    assert_eq!(problem("105.json"), "malformed");
    assert!(rows.iter().all(|row| row["origin"] == "claude-code"));
}

#[test]
fn roster_never_changes_a_harness_file_and_one_owner_is_one_row() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    let pid = owner.pid();
    let cwd = sandbox.project().to_string_lossy().into_owned();
    let path = write_session(&sandbox, &format!("{pid}.json"), &session_file(pid, "s-1", &cwd));
    let bytes = std::fs::read(&path).unwrap();
    // Registered by roster too: one row, roster's, with Claude Code's state.
    sandbox.register(pid, &["--harness", "claude-code", "--session-id", "s-1", "--agent", "wren"]);
    let rows = rows_of(&sandbox, &[]);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!((rows[0]["origin"].as_str(), rows[0]["agent"].as_str()), (Some("roster"), Some("wren")));
    assert_eq!(rows[0]["state"], "working", "the harness's state, the only one there is: {:?}", rows[0]);
    // Ended: roster's record goes with the session end, the harness's file
    // stays until the harness removes it, and the row is the file's.
    let end =
        sandbox.run_with_env("roster-prune", &["--current"], &[("ROSTER_SESSION_PID", &pid.to_string())]);
    assert_eq!(end.code(), 0, "{}", end.stderr);
    owner.kill();
    let rows = rows_of(&sandbox, &[]);
    assert_eq!((rows.len(), rows[0]["liveness"].as_str()), (1, Some("dead")), "{rows:?}");
    assert_eq!(sandbox.run("roster-prune", &[]).code(), 0);
    assert_eq!(std::fs::read(&path).unwrap(), bytes, "roster changed Claude Code's file");
    let metadata = std::fs::metadata(&path).unwrap();
    assert_eq!(metadata.permissions().mode() & 0o777, 0o644);
    assert_eq!(rows_of(&sandbox, &[]).len(), 1, "prune removed the harness's file");
}

#[test]
fn a_permission_prompt_is_waiting_for_permission_and_a_file_being_written_is_no_session_yet() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    let cwd = sandbox.project().to_string_lossy().into_owned();
    let mut file = session_file(owner.pid(), "s-1", &cwd);
    // As Claude Code 2.1.332 says it while its permission dialog shows.
    file["status"] = "waiting".into();
    file["waitingFor"] = "permission prompt".into();
    write_session(&sandbox, &format!("{}.json", owner.pid()), &file);
    let row = row_for(&rows_of(&sandbox, &[]), owner.pid());
    assert_eq!(
        (row["state"].as_str(), row["waiting_for"].as_str()),
        (Some("waiting"), Some("permission")),
        "{row}"
    );
    // Claude Code creates its file, then writes it: an empty one is skipped.
    let other = Owner::spawn();
    std::fs::write(sessions_directory(&sandbox).join(format!("{}.json", other.pid())), b"").unwrap();
    let rows = rows_of(&sandbox, &[]);
    assert_eq!(rows.len(), 1, "{rows:?}");
}

/// In a user namespace that maps no uid to the caller, every user's files
/// show the caller's uid, and proving one the caller's would take changing
/// it: a harness's sessions are then not read at all, and stderr says so.
#[test]
fn a_harness_directory_is_not_read_where_no_uid_maps_to_the_caller() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    let cwd = sandbox.project().to_string_lossy().into_owned();
    let path =
        write_session(&sandbox, &format!("{}.json", owner.pid()), &session_file(owner.pid(), "ns-1", &cwd));
    let before = std::fs::metadata(&path).unwrap();
    sandbox.register(owner.pid(), &[]);
    let unshare = tests::require_tool("unshare");
    let output = std::process::Command::new(unshare)
        .args(["-U", "--"])
        .arg(tests::binary("roster-list"))
        .arg("--dir")
        .arg(sandbox.root())
        .args(["--json", "--all"])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", sandbox.home())
        .output()
        .expect("run roster-list in an unmapped user namespace");
    let rows: Vec<Value> = serde_json::from_slice(&output.stdout).expect("a JSON listing");
    assert!(rows.iter().all(|row| row["origin"] != "claude-code"), "{rows:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("maps no uid to you"), "{stderr}");
    use std::os::unix::fs::MetadataExt;
    let after = std::fs::metadata(&path).unwrap();
    assert_eq!((before.ctime(), before.ctime_nsec()), (after.ctime(), after.ctime_nsec()), "never touched");
}

#[test]
fn a_session_in_a_terminal_is_located_from_its_environment_and_one_without_a_terminal_shows_nowhere() {
    let sandbox = Sandbox::new();
    let cwd = sandbox.project().to_string_lossy().into_owned();
    let pane = [("TMUX", "/nonexistent/tmux-socket,1,0"), ("TMUX_PANE", "%7")];
    let in_pane = Owner::spawn_in_a_session(&pane, true);
    let detached = Owner::spawn_in_a_session(&pane, false);
    for (owner, id) in [(&in_pane, "12d99b59-in-pane"), (&detached, "12d99b59-detached")] {
        write_session(&sandbox, &format!("{}.json", owner.pid()), &session_file(owner.pid(), id, &cwd));
    }
    let rows = rows_of(&sandbox, &[]);

    let located = row_for(&rows, in_pane.pid());
    assert_eq!(located["liveness"], "alive", "{located}");
    let location = &located["location"];
    assert_eq!(location["multiplexer"], "tmux", "{located}");
    assert_eq!(location["pane"], "%7", "{located}");
    assert!(location["tty"].as_str().is_some_and(|tty| tty.starts_with("pts/")), "{located}");
    // The pane is on no tmux server: the claim does not hold, and says so.
    assert_ne!(location["status"], "current", "{located}");

    // The same environment without a controlling terminal: on no screen,
    // whatever its variables say.
    let nowhere = row_for(&rows, detached.pid());
    assert_eq!(nowhere["liveness"], "alive", "{nowhere}");
    assert!(nowhere["location"].is_null(), "{nowhere}");

    // A terminal alone (no multiplexer) is the one the verdict read: current.
    let plain = Owner::spawn_in_a_session(&[("TERM_PROGRAM", "xterm")], true);
    write_session(
        &sandbox,
        &format!("{}.json", plain.pid()),
        &session_file(plain.pid(), "12d99b59-tty", &cwd),
    );
    let row = row_for(&rows_of(&sandbox, &[]), plain.pid());
    assert_eq!(row["location"]["terminal"], "xterm", "{row}");
    assert_eq!(row["location"]["status"], "current", "{row}");
    assert_eq!(row["location"]["shown"], row["location"]["tty"], "{row}");
}

/// Judging a session Claude Code keeps proves its owner alive at a glance
/// (under strace): its `/proc/<pid>/stat` opened once and `/proc/<pid>`
/// looked up once, both from the `/proc` opened at the start, and no pidfd
/// opened on it, which only a session the glance cannot prove needs.
#[test]
fn judging_a_session_claude_code_keeps_reads_its_stat_once_and_opens_no_pidfd() {
    let strace = tests::require_tool("strace");
    let sandbox = Sandbox::new();
    let owners: Vec<Owner> = (0..3).map(|_| Owner::spawn()).collect();
    let cwd = sandbox.project().to_string_lossy().into_owned();
    for (index, owner) in owners.iter().enumerate() {
        let file = session_file(owner.pid(), &format!("c0ffee-{index}"), &cwd);
        write_session(&sandbox, &format!("{}.json", owner.pid()), &file);
    }
    let log = sandbox.base().join("list.strace");
    let list = sandbox.command_in_root("roster-list", &["--json"]);
    let output = std::process::Command::new(strace)
        .args(["-f", "-e", "trace=openat,open,stat,newfstatat,statx,lstat,pidfd_open", "-o"])
        .arg(&log)
        .arg(list.get_program())
        .args(list.get_args())
        .env_clear()
        .envs(list.get_envs().filter_map(|(name, value)| Some((name, value?))))
        .current_dir(list.get_current_dir().expect("the sandbox sets a directory"))
        .output()
        .expect("run roster-list under strace");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let rows: Vec<Value> = serde_json::from_slice(&output.stdout).expect("a JSON listing");
    let trace = std::fs::read_to_string(&log).expect("the strace log");
    for owner in &owners {
        assert_eq!(row_for(&rows, owner.pid())["liveness"], "alive", "{rows:?}");
        let pid = owner.pid();
        let count = |pattern: &str| trace.lines().filter(|line| line.contains(pattern)).count();
        assert_eq!(count(&format!("\"{pid}/stat\"")), 1, "opens of /proc/{pid}/stat:\n{trace}");
        assert_eq!(count(&format!("\"{pid}\"")), 1, "lookups of /proc/{pid}:\n{trace}");
        assert_eq!(count(&format!("/proc/{pid}")), 0, "/proc/{pid} by its whole path:\n{trace}");
        assert_eq!(count(&format!("pidfd_open({pid},")), 0, "pidfds on {pid}:\n{trace}");
    }
}
