//! Consent markers on disk, judged against real processes: a marker counts
//! only while its owner lives, dead markers are reaped by the next write
//! and by prune, unknown and problem entries only past an age, and the
//! gate's combination of marker and auto-arm decision, as a table.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Child, Command};
use std::time::Duration;

use consent::{
    ConsentState, Decision, Marker, MarkerEntry, MarkerFinding, MarkerProblem, MarkerState,
    effective_should_arm, live_consent_state, prune_markers, read_marker, remove_marker, write_marker,
};
use owner_liveness::{Liveness, OwnerIdentity, Pid, Verdict, capture_identity};
use registry_core::{CurrentSession, ProblemKind, RecordName, RosterDir, RunningSystem, Timestamp};

/// An edit made to a marker file's JSON object.
type MarkerEdit = fn(&mut serde_json::Map<String, serde_json::Value>);

fn roster() -> (tempfile::TempDir, RosterDir) {
    let root = tempfile::tempdir().unwrap();
    let roster = RosterDir::open_or_create(&root.path().join("roster")).unwrap();
    (root, roster)
}

/// A live process to own a marker; killed and reaped when dropped.
struct Owner(Child);

impl Owner {
    fn spawn() -> Owner {
        Owner(Command::new("sleep").arg("300").spawn().unwrap())
    }

    fn pid(&self) -> Pid {
        Pid::new(self.0.id()).unwrap()
    }

    fn identity(&self) -> OwnerIdentity {
        capture_identity(self.pid()).unwrap()
    }

    /// Kills and reaps the process, so its pid is gone.
    fn end(mut self) {
        self.0.kill().unwrap();
        self.0.wait().unwrap();
    }
}

impl Drop for Owner {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn marker_path(roster: &RosterDir, pid: Pid) -> std::path::PathBuf {
    roster.path().join("consent").join(here(pid).file_name())
}

fn edit_marker(path: &Path, edit: impl FnOnce(&mut serde_json::Map<String, serde_json::Value>)) {
    let mut value: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    edit(value.as_object_mut().unwrap());
    std::fs::write(path, serde_json::to_vec(&value).unwrap()).unwrap();
}

fn set_mtime_long_ago(path: &Path) {
    let long_ago = nix::sys::time::TimeSpec::new(1_000_000_000, 0);
    nix::sys::stat::utimensat(
        nix::fcntl::AT_FDCWD,
        path,
        &long_ago,
        &long_ago,
        nix::sys::stat::UtimensatFlags::NoFollowSymlink,
    )
    .unwrap();
}

/// The running system, as the tools pass it.
fn facts() -> RunningSystem {
    RunningSystem::read()
}

/// The marker name of `pid` in this process's world.
fn here(pid: Pid) -> RecordName {
    consent::marker_name_in_reader_world(pid, &facts())
}

#[test]
fn a_marker_counts_while_its_owner_lives() {
    let (_root, roster) = roster();
    let owner = Owner::spawn();
    assert_eq!(live_consent_state(&roster, here(owner.pid()), &facts()), ConsentState::None);

    let written =
        write_marker(&roster, &owner.identity(), MarkerState::Armed, Path::new("/srv/app"), &facts())
            .unwrap();
    assert_eq!(written.path, marker_path(&roster, owner.pid()));
    assert_eq!(written.marker.cwd, "/srv/app");
    let mode = std::fs::metadata(&written.path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    assert_eq!(live_consent_state(&roster, here(owner.pid()), &facts()), ConsentState::Armed);
    let entry = read_marker(&roster, here(owner.pid()), &facts());
    assert!(entry.counts());
    assert!(entry.reason().starts_with("the marker counts: its owner is alive"), "{}", entry.reason());

    write_marker(&roster, &owner.identity(), MarkerState::Disarmed, Path::new("/srv/app"), &facts()).unwrap();
    assert_eq!(live_consent_state(&roster, here(owner.pid()), &facts()), ConsentState::Disarmed);

    let pid = owner.pid();
    owner.end();
    let entry = read_marker(&roster, here(pid), &facts());
    assert_eq!(entry.counted_state(), ConsentState::None);
    assert_eq!(entry.liveness(), Some(Liveness::Dead));
    assert!(entry.reason().contains("ignored: its owner is dead"), "{}", entry.reason());
}

#[test]
fn the_next_write_reaps_dead_markers_only() {
    let (_root, roster) = roster();
    let departed = Owner::spawn();
    let departed_pid = departed.pid();
    let staying = Owner::spawn();
    write_marker(&roster, &departed.identity(), MarkerState::Armed, Path::new("/a"), &facts()).unwrap();
    write_marker(&roster, &staying.identity(), MarkerState::Armed, Path::new("/b"), &facts()).unwrap();
    departed.end();
    assert!(marker_path(&roster, departed_pid).exists(), "nothing reaps before the next write");

    let newcomer = Owner::spawn();
    let written =
        write_marker(&roster, &newcomer.identity(), MarkerState::Armed, Path::new("/c"), &facts()).unwrap();
    assert_eq!(written.reaped.dead_removed, 1, "{:?}", written.reaped);
    assert!(!marker_path(&roster, departed_pid).exists());
    assert_eq!(live_consent_state(&roster, here(staying.pid()), &facts()), ConsentState::Armed);
    assert_eq!(live_consent_state(&roster, here(newcomer.pid()), &facts()), ConsentState::Armed);
}

#[test]
fn identity_mismatches_are_dead() {
    let (_root, roster) = roster();
    let owner = Owner::spawn();
    let path = marker_path(&roster, owner.pid());
    let cases: [(&str, MarkerEdit); 4] = [
        ("boot", |map| {
            map.insert("boot_id".into(), "00000000-0000-0000-0000-000000000000".into());
        }),
        // The start ticks witness pid reuse where no pidfs inode names the
        // process (an agreeing one proves it, and /proc is not read).
        ("start ticks", |map| {
            let ticks = map["start_ticks"].as_u64().unwrap();
            map.insert("start_ticks".into(), (ticks + 1).into());
            map.remove("pidfs_ino");
        }),
        // Without pidfs (kernels before 6.9) no inode is recorded, and the
        // start ticks above carry the check alone.
        ("pidfs inode", |map| {
            if let Some(inode) = map.get("pidfs_ino").and_then(serde_json::Value::as_u64) {
                map.insert("pidfs_ino".into(), (inode + 1).into());
            } else {
                let ticks = map["start_ticks"].as_u64().unwrap();
                map.insert("start_ticks".into(), (ticks + 1).into());
            }
        }),
        // The uid witnesses pid reuse where no pidfs inode names the
        // process (a pidfs inode that agrees proves it whatever its uid).
        ("uid", |map| {
            let uid = map["owner_uid"].as_u64().unwrap();
            map.insert("owner_uid".into(), (uid + 1).into());
            map.remove("pidfs_ino");
        }),
    ];
    for (name, edit) in cases {
        write_marker(&roster, &owner.identity(), MarkerState::Armed, Path::new("/a"), &facts()).unwrap();
        edit_marker(&path, edit);
        let entry = read_marker(&roster, here(owner.pid()), &facts());
        assert_eq!(entry.liveness(), Some(Liveness::Dead), "{name}: {entry:?}");
        assert_eq!(entry.counted_state(), ConsentState::None, "{name}");
    }
}

#[test]
fn problem_entries_never_count() {
    let (_root, roster) = roster();
    let owner = Owner::spawn();
    let path = marker_path(&roster, owner.pid());
    let expect = |what: &str, kind: ProblemKind| {
        let entry = read_marker(&roster, here(owner.pid()), &facts());
        let MarkerFinding::Problem(problem) = &entry.finding else { panic!("{what}: {entry:?}") };
        assert_eq!(problem.kind, kind, "{what}: {entry:?}");
        assert_eq!(entry.counted_state(), ConsentState::None, "{what}");
        assert!(entry.holds_off_auto_arm(), "{what}");
        assert!(
            entry.reason().starts_with(&format!("the marker is ignored: {}", kind.as_str())),
            "{}",
            entry.reason()
        );
    };

    write_marker(&roster, &owner.identity(), MarkerState::Armed, Path::new("/a"), &facts()).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o620)).unwrap();
    expect("group-writable", ProblemKind::Untrusted);

    std::fs::write(&path, b"{\"format\": 1, \"state\": \"armed\"").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    expect("truncated", ProblemKind::Malformed);

    std::fs::write(&path, b"{\"format\": 9}").unwrap();
    expect("newer format", ProblemKind::UnsupportedFormat);

    let elsewhere = path.with_file_name("elsewhere");
    write_marker(&roster, &owner.identity(), MarkerState::Armed, Path::new("/a"), &facts()).unwrap();
    std::fs::rename(&path, &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &path).unwrap();
    expect("symlink", ProblemKind::Untrusted);
}

#[test]
fn prune_removes_dead_and_only_old_unknowns() {
    let (_root, roster) = roster();
    let alive = Owner::spawn();
    let dead = Owner::spawn();
    let dead_pid = dead.pid();
    let foreign = Owner::spawn();
    write_marker(&roster, &alive.identity(), MarkerState::Armed, Path::new("/a"), &facts()).unwrap();
    write_marker(&roster, &dead.identity(), MarkerState::Disarmed, Path::new("/a"), &facts()).unwrap();
    write_marker(&roster, &foreign.identity(), MarkerState::Armed, Path::new("/a"), &facts()).unwrap();
    dead.end();
    // Written in another pid namespace: unknown, and long ago.
    edit_marker(&marker_path(&roster, foreign.pid()), |map| {
        let namespace = map["pid_ns"].as_u64().unwrap();
        map.insert("pid_ns".into(), (namespace + 1).into());
        map.insert("written_at".into(), "2001-01-01T00:00:00Z".into());
    });
    let garbage = roster.path().join("consent/notes.txt");
    std::fs::write(&garbage, "hello").unwrap();
    set_mtime_long_ago(&garbage);
    std::fs::create_dir(roster.path().join("consent/77.json")).unwrap();
    set_mtime_long_ago(&roster.path().join("consent/77.json"));

    let lock = roster.lock().unwrap();
    let dry = prune_markers(&roster, &lock, Some(Duration::from_secs(3600)), true, &facts()).unwrap();
    assert_eq!((dry.dead_removed, dry.unknown_removed), (1, 2), "{dry:?}");
    assert!(marker_path(&roster, dead_pid).exists(), "a dry run removes nothing");

    let report = prune_markers(&roster, &lock, None, false, &facts()).unwrap();
    assert_eq!((report.dead_removed, report.unknown_removed, report.kept), (1, 0, 4), "{report:?}");
    assert_eq!(report.removed_entries[0].pid, Some(dead_pid));
    assert!(!marker_path(&roster, dead_pid).exists());
    assert!(marker_path(&roster, foreign.pid()).exists(), "unknown is kept without an age bound");

    // A young age bound keeps what is younger than it.
    let report =
        prune_markers(&roster, &lock, Some(Duration::from_secs(100 * 365 * 86400)), false, &facts()).unwrap();
    assert_eq!(report.removed, 0, "{report:?}");

    let report = prune_markers(&roster, &lock, Some(Duration::from_secs(3600)), false, &facts()).unwrap();
    assert_eq!((report.dead_removed, report.unknown_removed, report.kept), (0, 2, 2), "{report:?}");
    assert!(!marker_path(&roster, foreign.pid()).exists());
    assert!(!garbage.exists());
    assert!(roster.path().join("consent/77.json").is_dir(), "a directory is never removed");
    assert_eq!(
        live_consent_state(&roster, here(alive.pid()), &facts()),
        ConsentState::Armed,
        "alive is never removed"
    );
}

#[test]
fn remove_marker_removes_whatever_its_verdict() {
    let (_root, roster) = roster();
    let owner = Owner::spawn();
    write_marker(&roster, &owner.identity(), MarkerState::Armed, Path::new("/a"), &facts()).unwrap();
    let lock = roster.lock().unwrap();
    let identity = owner.identity();
    let current = CurrentSession { pid: owner.pid(), identity: Some(&identity), payload_session_id: None };
    assert_eq!(remove_marker(&roster, &lock, &current, true, &facts()).unwrap(), 1);
    assert_eq!(
        live_consent_state(&roster, here(owner.pid()), &facts()),
        ConsentState::Armed,
        "a dry run removes nothing"
    );
    assert_eq!(remove_marker(&roster, &lock, &current, false, &facts()).unwrap(), 1);
    assert_eq!(live_consent_state(&roster, here(owner.pid()), &facts()), ConsentState::None);
    assert_eq!(remove_marker(&roster, &lock, &current, false, &facts()).unwrap(), 0);
    assert_eq!(remove_marker(&roster, &lock, &current, true, &facts()).unwrap(), 0);
}

fn judged(state: MarkerState, liveness: Liveness) -> MarkerEntry {
    let pid = Pid::new(4242).unwrap();
    let identity = OwnerIdentity {
        pid,
        uid: 1000,
        start_ticks: 870,
        pidfs_ino: None,
        boot_id: "b".into(),
        pid_ns: 1,
        time_ns: 2,
        user_ns: None,
        machine: None,
        chain: Vec::new(),
    };
    MarkerEntry {
        finding: MarkerFinding::Judged {
            marker: Box::new(Marker::new(&identity, state, Path::new("/a"), Timestamp::now())),
            verdict: Verdict { liveness, reason: "seen".into() },
        },
        ..MarkerEntry::absent(Path::new("/roster"), RecordName::legacy(pid))
    }
}

fn decision(auto_arm: bool) -> Decision {
    Decision { auto_arm, reasons: Vec::new(), warnings: Vec::new() }
}

#[test]
fn the_gate_as_a_table() {
    let pid = Pid::new(4242).unwrap();
    let problem = MarkerEntry {
        finding: MarkerFinding::Problem(MarkerProblem {
            kind: ProblemKind::Untrusted,
            detail: "is a symlink".into(),
            read_failed: false,
        }),
        ..MarkerEntry::absent(Path::new("/roster"), RecordName::legacy(pid))
    };
    use Liveness::{Alive, Dead, Unknown};
    use MarkerState::{Armed, Disarmed};
    // (marker, auto_arm → should_arm, auto_arm off → should_arm)
    let cases = [
        ("none", MarkerEntry::absent(Path::new("/roster"), RecordName::legacy(pid)), true, false),
        ("armed alive", judged(Armed, Alive), true, true),
        ("disarmed alive", judged(Disarmed, Alive), false, false),
        ("armed dead", judged(Armed, Dead), true, false),
        ("disarmed dead", judged(Disarmed, Dead), true, false),
        ("armed unknown", judged(Armed, Unknown), false, false),
        ("disarmed unknown", judged(Disarmed, Unknown), false, false),
        ("problem", problem, false, false),
    ];
    for (name, marker, with_auto_arm, without_auto_arm) in cases {
        let on = effective_should_arm(&marker, &decision(true));
        let off = effective_should_arm(&marker, &decision(false));
        assert_eq!(on.should_arm, with_auto_arm, "{name} with auto-arm: {}", on.reason);
        assert_eq!(off.should_arm, without_auto_arm, "{name} without auto-arm: {}", off.reason);
    }
}
