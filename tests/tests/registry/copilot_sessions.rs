//! Copilot CLI's own marks of its live sessions
//! (`~/.copilot/session-state/<id>/inuse.<pid>.lock`, with the `flock` on
//! `inuse.<pid>.hold` that its process holds while it lives), listed
//! without any hook: alive only while that very pid holds the lock, dead
//! only where no holder could hide, and read only whatever roster does.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use tests::{LockHolder, Owner, Sandbox, binary, require_tool};

use super::adopted_sessions::{row_for, rows_of};

const SESSION: &str = "5f0c2b9e-1d7a-4c4e-9a53-0c8d1e2f3a4b";

/// A Copilot CLI session directory in the sandbox's home, with its
/// workspace.yaml and the first line of its events.jsonl as 1.0.102 writes
/// them.
fn session_directory(sandbox: &Sandbox, session: &str) -> PathBuf {
    let state = sandbox.home().join(".copilot/session-state");
    let directory = state.join(session);
    std::fs::create_dir_all(&directory).expect("create the session directory");
    for path in [&state, &directory] {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700)).expect("chmod 700");
    }
    let cwd = sandbox.project();
    std::fs::write(
        directory.join("workspace.yaml"),
        format!("id: {session}\ncwd: {}\nclient_name: github/cli\nname: hi\n", cwd.display()),
    )
    .unwrap();
    std::fs::write(
        directory.join("events.jsonl"),
        format!(
            "{{\"type\":\"session.start\",\"data\":{{\"sessionId\":\"{session}\",\"copilotVersion\":\"1.0.102\"}}}}\n"
        ),
    )
    .unwrap();
    directory
}

/// A live Copilot CLI session as its process marks it: a process holding
/// the `flock` on `inuse.<pid>.hold`, and `inuse.<pid>.lock` naming it.
fn live_session(directory: &Path) -> LockHolder {
    let taking = directory.join("taking.hold");
    let holder = LockHolder::spawn(&taking);
    let pid = holder.pid();
    std::fs::rename(&taking, directory.join(format!("inuse.{pid}.hold"))).unwrap();
    write_lock_file(directory, pid, &format!("{pid}\n"));
    holder
}

fn write_lock_file(directory: &Path, pid: u32, contents: &str) -> PathBuf {
    let path = directory.join(format!("inuse.{pid}.lock"));
    std::fs::write(&path, contents).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    path
}

/// Sets a file's modification time `seconds` back.
fn age(path: &Path, seconds: u64) {
    let file = std::fs::File::options().write(true).open(path).unwrap();
    let then = std::time::SystemTime::now() - std::time::Duration::from_secs(seconds);
    file.set_modified(then).unwrap();
}

#[test]
fn a_session_copilot_marks_is_listed_alive_without_any_hook_and_can_be_turned_off() {
    let sandbox = Sandbox::new();
    let directory = session_directory(&sandbox, SESSION);
    let holder = live_session(&directory);
    let row = row_for(&rows_of(&sandbox, &[]), holder.pid());
    assert_eq!(row["origin"], "copilot", "{row}");
    assert_eq!(row["liveness"], "alive", "{row}");
    assert_eq!((row["harness"].as_str(), row["session_id"].as_str()), (Some("copilot"), Some(SESSION)));
    assert_eq!(row["cwd"], sandbox.project().to_string_lossy().as_ref());
    assert_eq!(row["harness_version"], "1.0.102");
    assert_ne!(row["start_ticks"], 0, "a proven owner's start ticks are read: {row}");
    assert!(rows_of(&sandbox, &["--no-adopt"]).is_empty());
    let config = sandbox.home().join(".config/roster");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("config.toml"), "[adopt]\ncopilot = false\n").unwrap();
    assert!(rows_of(&sandbox, &[]).is_empty());
    std::fs::write(config.join("config.toml"), "[adopt]\ncopilot = true\nclaude_code = false\n").unwrap();
    assert_eq!(rows_of(&sandbox, &[]).len(), 1);
    // COPILOT_HOME moves the directory, as it moves Copilot CLI's.
    let moved = sandbox.base().join("copilot-home");
    std::fs::create_dir_all(&moved).unwrap();
    let outcome = sandbox.run_with_env(
        "roster-list",
        &["--json", "--all"],
        &[("COPILOT_HOME", moved.to_str().unwrap())],
    );
    assert!(outcome.rows().is_empty(), "{outcome}");
}

#[test]
fn a_killed_session_is_dead_and_its_files_are_never_touched() {
    let sandbox = Sandbox::new();
    let directory = session_directory(&sandbox, SESSION);
    let holder = live_session(&directory);
    let pid = holder.pid();
    let lock = directory.join(format!("inuse.{pid}.lock"));
    let hold = directory.join(format!("inuse.{pid}.hold"));
    let before = (std::fs::read(&lock).unwrap(), std::fs::metadata(&hold).unwrap().len());
    // Killed right after it started, its claim reads as a session starting
    // (maybe in another pid namespace): never dead in that grace.
    let young = Owner::spawn();
    let young_pid = young.pid();
    drop(young);
    write_lock_file(&directory, young_pid, &format!("{young_pid}\n"));
    std::fs::write(directory.join(format!("inuse.{young_pid}.hold")), b"").unwrap();
    let row = row_for(&rows_of(&sandbox, &[]), young_pid);
    assert_eq!(row["liveness"], "unknown", "{row}");
    // The session ran a while before it was killed.
    age(&lock, 30);
    holder.kill();
    let row = row_for(&rows_of(&sandbox, &[]), pid);
    assert_eq!(row["liveness"], "dead", "{row}");
    let reason = row["liveness_reason"].as_str().unwrap();
    assert!(reason.contains("Copilot CLI removes its files"), "{reason}");
    assert!(rows_of(&sandbox, &[]).iter().any(|row| row["session_pid"] == pid));
    assert!(
        sandbox.list(&[]).iter().all(|row| row["session_pid"] != pid),
        "a dead one is shown only with --all"
    );
    let pruned = sandbox.run("roster-prune", &[]);
    assert!(pruned.status.success(), "{pruned}");
    assert_eq!((std::fs::read(&lock).unwrap(), std::fs::metadata(&hold).unwrap().len()), before);
}

#[test]
fn each_claim_is_judged_by_who_holds_its_lock() {
    let sandbox = Sandbox::new();
    let directory = session_directory(&sandbox, SESSION);

    // A pid now of a process that started after the lock file was written,
    // holding nothing: a reused pid, dead.
    let reused = Owner::spawn();
    let file = write_lock_file(&directory, reused.pid(), &format!("{}\n", reused.pid()));
    std::fs::write(directory.join(format!("inuse.{}.hold", reused.pid())), b"").unwrap();
    age(&file, 3600);
    let row = row_for(&rows_of(&sandbox, &[]), reused.pid());
    assert_eq!(row["liveness"], "dead", "{row}");
    assert!(row["liveness_reason"].as_str().unwrap().contains("started after its lock file"), "{row}");

    // A lock held by the pid it names is alive whatever the clocks say: a
    // lock file far older than its process (a clock stepped) included.
    let held = live_session(&directory);
    age(&directory.join(format!("inuse.{}.lock", held.pid())), 7200);
    let row = row_for(&rows_of(&sandbox, &[]), held.pid());
    assert_eq!(row["liveness"], "alive", "{row}");
    drop(held);

    // The same pid with a lock file written after it started, not holding
    // the lock: starting, ending, or another namespace's pid. Never dead.
    age(&file, 0);
    std::fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_modified(std::time::SystemTime::now())
        .unwrap();
    let row = row_for(&rows_of(&sandbox, &[]), reused.pid());
    assert_eq!(row["liveness"], "unknown", "{row}");

    // The hold file locked by another pid than the one named: a session of
    // another pid namespace, whose own pid is the one named. Unknown.
    let other = tempfile::tempdir().unwrap();
    let taking = other.path().join("x.hold");
    let holder = LockHolder::spawn(&taking);
    let named = reused.pid();
    std::fs::remove_file(directory.join(format!("inuse.{named}.hold"))).unwrap();
    std::fs::rename(&taking, directory.join(format!("inuse.{named}.hold"))).unwrap();
    age(&file, 3600);
    let row = row_for(&rows_of(&sandbox, &[]), named);
    assert_eq!(row["liveness"], "unknown", "{row}");
    assert!(
        row["liveness_reason"].as_str().unwrap().contains(&format!("locked by pid {}", holder.pid())),
        "{row}"
    );
    holder.kill();

    // No hold file beside the lock: starting or ending, unknown.
    std::fs::remove_file(directory.join(format!("inuse.{named}.hold"))).unwrap();
    let row = row_for(&rows_of(&sandbox, &[]), named);
    assert_eq!(row["liveness"], "unknown", "{row}");
}

#[test]
fn a_reader_in_another_pid_namespace_never_judges_a_lock_it_cannot_see_dead() {
    let sandbox = Sandbox::new();
    let directory = session_directory(&sandbox, SESSION);
    let holder = live_session(&directory);
    // A session that has run a while (past the grace of one starting).
    age(&directory.join(format!("inuse.{}.lock", holder.pid())), 30);
    // Inside a new pid namespace the holder is not seen, in /proc/locks
    // nor anywhere: whatever the pid there names, the session is unknown.
    let unshare = require_tool("unshare");
    let output = Command::new(unshare)
        .args(["-p", "-f", "--mount-proc"])
        .arg(binary("roster-list"))
        .arg("--dir")
        .arg(sandbox.root())
        .args(["--json", "--all"])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", sandbox.home())
        .output()
        .expect("run roster-list in a new pid namespace");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let rows: Vec<Value> = serde_json::from_slice(&output.stdout).unwrap();
    let row = row_for(&rows, holder.pid());
    assert_eq!(row["liveness"], "unknown", "{row}");
    assert!(row["liveness_reason"].as_str().unwrap().contains("another pid namespace"), "{row}");
}

#[test]
fn files_that_cannot_be_believed_are_problem_rows_and_nothing_crashes() {
    use std::os::unix::fs::symlink;
    let sandbox = Sandbox::new();
    let directory = session_directory(&sandbox, SESSION);
    let owner = Owner::spawn();
    let pid = owner.pid();
    let problem_of = |sandbox: &Sandbox, pid: u32| {
        let row = row_for(&rows_of(sandbox, &[]), pid);
        assert_eq!(row["liveness"], "unknown", "{row}");
        row["problem"].as_str().unwrap_or_else(|| panic!("a problem row: {row}")).to_owned()
    };
    write_lock_file(&directory, pid, "4711\n");
    assert_eq!(problem_of(&sandbox, pid), "malformed", "another pid inside than in the name");
    write_lock_file(&directory, pid, &"9".repeat(1 << 20));
    assert_eq!(problem_of(&sandbox, pid), "untrusted", "1 MiB");
    std::fs::remove_file(directory.join(format!("inuse.{pid}.lock"))).unwrap();
    let elsewhere = sandbox.base().join("elsewhere.lock");
    std::fs::write(&elsewhere, format!("{pid}\n")).unwrap();
    symlink(&elsewhere, directory.join(format!("inuse.{pid}.lock"))).unwrap();
    assert_eq!(problem_of(&sandbox, pid), "untrusted", "a symlink");
    std::fs::remove_file(directory.join(format!("inuse.{pid}.lock"))).unwrap();
    let file = write_lock_file(&directory, pid, &format!("{pid}\n"));
    nix::unistd::chown(&file, Some(nix::unistd::Uid::from_raw(65534)), None).unwrap();
    assert_eq!(problem_of(&sandbox, pid), "untrusted", "another user's file");
    std::fs::remove_file(&file).unwrap();
    write_lock_file(&directory, pid, &format!("{pid}\n"));
    std::fs::remove_file(directory.join("workspace.yaml")).unwrap();
    assert_eq!(problem_of(&sandbox, pid), "malformed", "no workspace.yaml: no cwd");
    std::fs::write(directory.join("workspace.yaml"), "id: another-session\ncwd: /tmp\n").unwrap();
    assert_eq!(problem_of(&sandbox, pid), "malformed", "workspace.yaml of another session");

    // A session directory that is a symlink is not read as one.
    let state = sandbox.home().join(".copilot/session-state");
    let real = sandbox.base().join("real-session");
    std::fs::rename(&directory, &real).unwrap();
    symlink(&real, &directory).unwrap();
    let rows = rows_of(&sandbox, &[]);
    assert!(rows.iter().all(|row| row["origin"] != "copilot" || row["problem"].is_string()), "{rows:?}");
    // A session-state directory writable by others is not read, and says so.
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o777)).unwrap();
    let outcome = sandbox.run("roster-list", &["--json", "--all"]);
    assert!(outcome.rows().iter().all(|row| row["origin"] != "copilot"), "{outcome}");
    let notes = sandbox.run("roster-list", &["--all"]);
    assert!(notes.stderr.contains("Copilot CLI's own sessions are not listed"), "{notes}");
}

#[test]
fn roster_record_and_copilot_lock_of_one_session_are_one_row() {
    let sandbox = Sandbox::new();
    let directory = session_directory(&sandbox, SESSION);
    // Copilot CLI's loader is roster's owner; its native process below it
    // holds the lock: two pids, one session id, one row.
    // This test's own process stands for the loader: the lock holder is
    // its child, as Copilot CLI's native process is its loader's.
    let loader = std::process::id();
    sandbox.register(loader, &["--harness", "copilot", "--session-id", SESSION]);
    let native = live_session(&directory);
    let rows = rows_of(&sandbox, &[]);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(
        (rows[0]["origin"].as_str(), rows[0]["session_pid"].as_u64()),
        (Some("roster"), Some(u64::from(loader)))
    );
    // Once the native process is gone, they are two again: the claim is
    // shown for what it is.
    native.kill();
    let rows = rows_of(&sandbox, &[]);
    assert_eq!(rows.len(), 2, "{rows:?}");
}

#[test]
fn a_record_naming_a_live_copilot_sessions_id_from_elsewhere_never_hides_it() {
    let sandbox = Sandbox::new();
    let directory = session_directory(&sandbox, SESSION);
    let native = live_session(&directory);
    // An unrelated process registered by hand under the same session id:
    // not the lock holder's parent, not in its chain.
    let stranger = Owner::spawn();
    sandbox.register(stranger.pid(), &["--harness", "copilot", "--session-id", SESSION]);
    let rows = rows_of(&sandbox, &[]);
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(row_for(&rows, native.pid())["origin"], "copilot");
    assert_eq!(row_for(&rows, stranger.pid())["origin"], "roster");
}
