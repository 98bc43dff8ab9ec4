//! `roster-prune` in the reaper posture (docs/contract.md §5, §6.3): dead goes, unknown
//! and problem entries go only past an explicit `--older-than`, alive never;
//! `--dry-run` changes nothing; a candidate that comes alive between the
//! listing and the removal is kept; temporaries go after an hour; `.lock`
//! is never unlinked; `--current` touches exactly one record.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use tests::{
    LockHolder, Owner, Sandbox, ago, make_identity_stale, poll_until, process_has_open, rfc3339, row_pids,
    rows_for_pid, set_mtime, wait_with_deadline, write_file_0600,
};

const DAY: Duration = Duration::from_secs(86400);

fn prune(sandbox: &Sandbox, args: &[&str]) -> Value {
    let mut all = vec!["--json"];
    all.extend_from_slice(args);
    let report = sandbox.run("roster-prune", &all).json();
    for key in ["removed", "dead_removed", "unknown_removed", "current_removed", "kept", "temp_removed"] {
        assert!(report.get(key).is_some(), "the report lacks {key}: {report:#}");
    }
    report
}

fn removed_pids(report: &Value) -> std::collections::BTreeSet<u64> {
    row_pids(report["removed"].as_array().expect("removed is an array"))
}

fn set_registered_at(sandbox: &Sandbox, pid: u32, age: Duration) {
    sandbox.edit_record(pid, |record| {
        record.insert("registered_at".into(), Value::from(rfc3339(ago(age))));
    });
}

fn make_unknown(sandbox: &Sandbox, pid: u32) {
    sandbox.edit_record(pid, |record| {
        let namespace = record["pid_ns"].as_u64().unwrap();
        record.insert("pid_ns".into(), Value::from(namespace + 1));
    });
}

#[test]
fn dead_goes_alive_and_unknown_stay() {
    let sandbox = Sandbox::new();
    let alive = Owner::spawn();
    let unknown = Owner::spawn();
    let doomed = Owner::spawn();
    for owner in [&alive, &unknown, &doomed] {
        sandbox.register(owner.pid(), &[]);
    }
    make_unknown(&sandbox, unknown.pid());
    let dead = doomed.kill();

    let report = prune(&sandbox, &[]);
    assert_eq!(removed_pids(&report), [u64::from(dead)].into(), "{report:#}");
    assert_eq!(report["dead_removed"], 1);
    assert_eq!(report["unknown_removed"], 0);
    assert_eq!(report["kept"], 2, "alive and unknown are kept: {report:#}");
    let row = &report["removed"][0];
    assert!(tests::missing_row_keys(row).is_empty(), "a removed row lacks keys: {row:#}");
    assert_eq!(row["liveness"], "dead");
    assert!(!sandbox.record_path(dead).exists());
    assert!(sandbox.record_path(alive.pid()).exists());
    assert!(sandbox.record_path(unknown.pid()).exists());
}

#[test]
fn older_than_removes_old_unknown_and_problem_entries_never_alive() {
    let sandbox = Sandbox::new();
    let alive_old = Owner::spawn();
    let unknown_old = Owner::spawn();
    let unknown_fresh = Owner::spawn();
    for owner in [&alive_old, &unknown_old, &unknown_fresh] {
        sandbox.register(owner.pid(), &[]);
    }
    set_registered_at(&sandbox, alive_old.pid(), 30 * DAY);
    set_registered_at(&sandbox, unknown_old.pid(), 2 * DAY);
    make_unknown(&sandbox, unknown_old.pid());
    make_unknown(&sandbox, unknown_fresh.pid());

    let template = std::fs::read(sandbox.record_path(alive_old.pid())).unwrap();
    let mut newer: Value = serde_json::from_slice(&template).unwrap();
    newer["format"] = Value::from(3);
    let entries: [(&str, Vec<u8>, bool); 5] = [
        ("31001.json", b"garbage".to_vec(), true),
        ("31002.json", b"garbage".to_vec(), false),
        ("31003.json", serde_json::to_vec(&newer).unwrap(), true),
        ("31004.json", template.clone(), true),
        ("notes.txt", b"hello".to_vec(), true),
    ];
    for (name, bytes, old) in &entries {
        let path = sandbox.sessions().join(name);
        write_file_0600(&path, bytes);
        if *name == "31004.json" {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o660)).unwrap();
        }
        if *old {
            set_mtime(&path, ago(2 * DAY));
        }
    }

    // Not old enough for a week: nothing but the dead would go, and there is none.
    let report = prune(&sandbox, &["--older-than", "7d"]);
    assert!(
        removed_pids(&report).is_empty() && report["removed"].as_array().unwrap().is_empty(),
        "{report:#}"
    );
    let report = prune(&sandbox, &["--older-than", "90m"]);
    let removed: Vec<String> = report["removed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["path"].as_str().unwrap().rsplit('/').next().unwrap().to_owned())
        .collect();
    let mut removed_sorted = removed.clone();
    removed_sorted.sort();
    let mut expected = vec![
        tests::record_file_name_here(unknown_old.pid()),
        "31001.json".into(),
        "31003.json".into(),
        "31004.json".into(),
        "notes.txt".into(),
    ];
    expected.sort();
    assert_eq!(removed_sorted, expected, "{report:#}");
    assert_eq!(report["unknown_removed"], 5);
    assert_eq!(report["dead_removed"], 0);
    for name in &expected {
        assert!(!sandbox.sessions().join(name).exists(), "{name} is still there");
    }
    for kept in [sandbox.record_path(alive_old.pid()), sandbox.record_path(unknown_fresh.pid())] {
        assert!(kept.exists(), "{} was removed", kept.display());
    }
    assert!(sandbox.sessions().join("31002.json").exists(), "a fresh malformed file was removed");
}

#[test]
fn dry_run_removes_nothing_and_reports_the_same() {
    let sandbox = Sandbox::new();
    let doomed = Owner::spawn();
    let unknown = Owner::spawn();
    sandbox.register(doomed.pid(), &[]);
    sandbox.register(unknown.pid(), &[]);
    make_unknown(&sandbox, unknown.pid());
    set_registered_at(&sandbox, unknown.pid(), 2 * DAY);
    let dead = doomed.kill();
    let temp = sandbox.sessions().join(".tmp-leftover");
    write_file_0600(&temp, b"half a rec");
    set_mtime(&temp, ago(Duration::from_secs(7200)));
    let before = sandbox.session_entries();

    let dry = prune(&sandbox, &["--dry-run", "--older-than", "1d"]);
    assert_eq!(sandbox.session_entries(), before, "--dry-run changed sessions/");
    assert_eq!(removed_pids(&dry), [u64::from(dead), u64::from(unknown.pid())].into(), "{dry:#}");
    assert_eq!(dry["temp_removed"], 1, "--dry-run reports the temporary it would remove: {dry:#}");
    // Regression: a dry run's rows said their record "was removed".
    for row in dry["removed"].as_array().unwrap() {
        assert!(row["consent_reason"].as_str().unwrap().contains("would be removed"), "{row:#}");
    }

    let real = prune(&sandbox, &["--older-than", "1d"]);
    assert_eq!(removed_pids(&real), removed_pids(&dry));
    for key in ["dead_removed", "unknown_removed", "temp_removed"] {
        assert_eq!(real[key], dry[key], "{key}");
    }
    assert!(!temp.exists());
}

/// Regression guard for the time-of-check/time-of-use window in prune: it
/// judges every entry without the lock, then takes the lock. A record that
/// was dead at the first look and has been replaced by a live one by the
/// time the lock is held must be re-read and kept (docs/contract.md §6.3).
#[test]
fn candidate_that_comes_alive_before_removal_is_kept() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    sandbox.register(owner.pid(), &[]);
    let live_bytes = std::fs::read(sandbox.record_path(owner.pid())).unwrap();
    sandbox.edit_record(owner.pid(), make_identity_stale);
    assert_eq!(rows_for_pid(&sandbox.list_all(), owner.pid())[0]["liveness"], "dead");

    let lock_path = sandbox.root().join(".lock");
    let holder = LockHolder::spawn(&lock_path);
    let mut command = sandbox.command_in_root("roster-prune", &["--json"]);
    command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut prune_process = command.spawn().expect("start roster-prune");
    let prune_pid = prune_process.id();

    // Prune opens `.lock` only after its first pass; once the fd is there
    // it is waiting for us (it may wait up to 5 s, we need milliseconds).
    let waiting = poll_until(Duration::from_secs(4), || {
        process_has_open(prune_pid, &lock_path) || prune_process.try_wait().ok().flatten().is_some()
    });
    let exited_early = prune_process.try_wait().expect("try_wait");
    assert!(waiting, "roster-prune never opened {}", lock_path.display());
    assert!(
        exited_early.is_none(),
        "roster-prune finished without waiting for the held lock: {exited_early:?}"
    );

    // The pid's record becomes a live one again, atomically.
    sandbox.write_entry(&tests::record_file_name_here(owner.pid()), &live_bytes);
    holder.kill();

    let status = wait_with_deadline(&mut prune_process, Duration::from_secs(20)).expect("roster-prune hung");
    let mut stdout = String::new();
    std::io::Read::read_to_string(prune_process.stdout.as_mut().unwrap(), &mut stdout).unwrap();
    let mut stderr = String::new();
    std::io::Read::read_to_string(prune_process.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert!(status.success(), "roster-prune failed: {status:?} {stderr}");
    assert!(
        sandbox.record_path(owner.pid()).exists(),
        "a record that had come alive was removed; report: {stdout}"
    );
    let report: Value = serde_json::from_str(&stdout).unwrap_or_else(|error| panic!("{error}: {stdout}"));
    assert!(removed_pids(&report).is_empty(), "{report:#}");
    assert_eq!(rows_for_pid(&sandbox.list(&[]), owner.pid())[0]["liveness"], "alive");
}

#[test]
fn old_temporaries_go_fresh_ones_stay_lock_is_never_unlinked() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    sandbox.register(owner.pid(), &[]);
    let hour_and_more = ago(Duration::from_secs(3600 + 600));
    let outside = sandbox.base().join("outside-target");
    std::fs::write(&outside, b"keep me").unwrap();

    let old: Vec<PathBuf> = vec![
        sandbox.root().join(".tmp-root-old"),
        sandbox.sessions().join(".tmp-sessions-old"),
        sandbox.consent().join(".tmp-consent-old"),
    ];
    for path in &old {
        write_file_0600(path, b"{\"format\":");
        set_mtime(path, hour_and_more);
    }
    // A leftover temporary symlink (as an index entry is made): removed as
    // a link, never followed.
    let old_link = sandbox.sessions().join(".tmp-.sid-0123456789abcdef.77");
    std::os::unix::fs::symlink(&outside, &old_link).unwrap();
    set_mtime(&old_link, hour_and_more);
    let fresh = sandbox.sessions().join(".tmp-sessions-fresh");
    write_file_0600(&fresh, b"{\"format\":");
    set_mtime(&fresh, ago(Duration::from_secs(3000)));

    let lock = sandbox.root().join(".lock");
    assert!(lock.exists(), "register left no .lock");
    let lock_inode = std::fs::metadata(&lock).unwrap().ino();
    set_mtime(&lock, ago(30 * DAY));

    let report = prune(&sandbox, &["--older-than", "1d"]);
    assert_eq!(report["temp_removed"], 4, "{report:#}");
    for path in old.iter().chain([&old_link]) {
        assert!(std::fs::symlink_metadata(path).is_err(), "{} is still there", path.display());
    }
    assert!(fresh.exists(), "a temporary younger than an hour was removed (its writer may be running)");
    assert_eq!(std::fs::read(&outside).unwrap(), b"keep me", "the symlink's target was touched");
    assert_eq!(
        std::fs::metadata(&lock).map(|m| m.ino()).ok(),
        Some(lock_inode),
        ".lock was unlinked or replaced"
    );
    assert!(sandbox.record_path(owner.pid()).exists());
}

#[test]
fn current_removes_exactly_the_named_session() {
    let sandbox = Sandbox::new();
    let ending = Owner::spawn();
    let other = Owner::spawn();
    let doomed = Owner::spawn();
    for owner in [&ending, &other, &doomed] {
        sandbox.register(owner.pid(), &[]);
    }
    let dead = doomed.kill();

    // Alive or not, the named session's record goes; nothing else does,
    // not even a dead record a plain prune would take.
    let report = prune(&sandbox, &["--current", "--pid", &ending.pid().to_string()]);
    assert_eq!(removed_pids(&report), [u64::from(ending.pid())].into(), "{report:#}");
    assert!(!sandbox.record_path(ending.pid()).exists());
    assert!(sandbox.record_path(other.pid()).exists());
    assert!(sandbox.record_path(dead).exists(), "--current removed another (dead) record");

    let report = prune(&sandbox, &["--current", "--pid", &other.pid().to_string()]);
    assert_eq!(removed_pids(&report), [u64::from(other.pid())].into());
    // Nothing registered for this owner any more: done, nothing removed.
    let report = prune(&sandbox, &["--current", "--pid", &other.pid().to_string()]);
    assert!(report["removed"].as_array().unwrap().is_empty(), "{report:#}");
    // A session-end hook may run after its owner is gone: a dead pid is
    // still a valid `--current` owner.
    let report = prune(&sandbox, &["--current", "--pid", &dead.to_string()]);
    assert_eq!(removed_pids(&report), [u64::from(dead)].into(), "{report:#}");
    assert!(sandbox.visible_session_entries().is_empty());
}

/// Regression: `--current` reported the live session it removed as
/// "1 unknown" (`"unknown_removed": 1` for a row whose liveness is alive)
/// and said `kept 0` while other records remained. A removal on request is
/// its own kind, and kept counts the entries left in the registry.
#[test]
fn current_counts_its_removal_as_on_request_and_what_it_kept() {
    let sandbox = Sandbox::new();
    let ending = Owner::spawn();
    let other = Owner::spawn();
    let doomed = Owner::spawn();
    for owner in [&ending, &other, &doomed] {
        sandbox.register(owner.pid(), &[]);
    }
    doomed.kill();
    let pid = ending.pid().to_string();

    let dry = prune(&sandbox, &["--current", "--pid", &pid, "--dry-run"]);
    assert_eq!(
        (&dry["current_removed"], &dry["dead_removed"], &dry["unknown_removed"], &dry["kept"]),
        (&Value::from(1), &Value::from(0), &Value::from(0), &Value::from(2)),
        "{dry:#}"
    );

    let text = sandbox.run("roster-prune", &["--current", "--pid", &pid]);
    let stdout = text.expect_code(0).stdout_text();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(lines[0].starts_with(&format!("removed pid {pid} (alive: ")), "{text}");
    assert_eq!(lines[1], "removed 1 on request, 0 consent markers; kept 2", "{text}");

    let report = prune(&sandbox, &["--current", "--pid", &other.pid().to_string()]);
    assert_eq!(report["removed"][0]["liveness"], "alive", "{report:#}");
    assert_eq!(
        (&report["current_removed"], &report["unknown_removed"], &report["kept"]),
        (&Value::from(1), &Value::from(0), &Value::from(1)),
        "the dead record is left, and counted as kept: {report:#}"
    );
}

/// A name that is not UTF-8 is listed as malformed (it is not a name
/// roster writes); past `--older-than` it must go like any other problem
/// entry, or nobody would ever remove it. Regression: prune counted such
/// a name as kept and never looked at its age.
#[test]
fn old_entries_with_non_utf8_names_are_pruned() {
    use std::os::unix::ffi::OsStrExt;
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    sandbox.register(owner.pid(), &[]);
    let path = sandbox.sessions().join(std::ffi::OsStr::from_bytes(b"\xff\xfe.json"));
    write_file_0600(&path, b"{}");
    set_mtime(&path, ago(2 * DAY));
    let rows = sandbox.list(&[]);
    assert_eq!(rows.len(), 2, "the non-UTF-8 entry is not listed: {rows:#?}");
    let kept = prune(&sandbox, &["--older-than", "7d"]);
    assert!(path.exists(), "removed before its age: {kept:#}");
    let report = prune(&sandbox, &["--older-than", "1d"]);
    assert!(!path.exists(), "an old entry with a non-UTF-8 name was kept: {report:#}");
    assert_eq!(report["unknown_removed"], 1, "{report:#}");
    assert!(sandbox.record_path(owner.pid()).exists());
}

#[test]
fn dead_consent_markers_go_live_ones_stay() {
    let sandbox = Sandbox::new();
    // A live, armed session: this test process, named as `parent`.
    sandbox.run("roster-register", &["--pid", "parent", "--quiet"]).expect_code(0);
    sandbox.run("roster-consent", &["arm", "--pid", "parent", "--quiet"]).expect_code(0);
    let live_marker = sandbox.consent().join(tests::record_file_name_here(std::process::id()));
    assert!(live_marker.exists(), "arm wrote no marker");
    // An armed session whose owner has ended.
    let gone = sandbox.session_of_an_exited_shell();
    let dead_marker = sandbox.consent().join(tests::record_file_name_here(gone));
    assert!(dead_marker.exists(), "the ended session left no marker to prune");

    let dry = prune(&sandbox, &["--dry-run"]);
    assert!(dead_marker.exists(), "--dry-run removed a consent marker: {dry:#}");
    let report = prune(&sandbox, &[]);
    assert!(!dead_marker.exists(), "the dead owner's consent marker survived: {report:#}");
    assert!(!sandbox.record_path(gone).exists(), "the dead owner's record survived: {report:#}");
    assert!(live_marker.exists(), "a live owner's consent marker was removed: {report:#}");
    assert!(sandbox.record_path(std::process::id()).exists());

    // A session-end hook takes the record and the marker, alive or not.
    prune(&sandbox, &["--current", "--pid", "parent"]);
    assert!(!live_marker.exists(), "--current left the session's consent marker");
    assert!(!sandbox.record_path(std::process::id()).exists());
}
