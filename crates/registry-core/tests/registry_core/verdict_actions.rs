//! What list, prune and register's reaping pass do with a record, by its
//! owner's verdict: a table of made-up system facts (which process runs at
//! which pid, the boot, the namespaces, the clock) against a real roster
//! directory, so each rule is one row and no real process has to die.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use owner_liveness::made_up_facts::{MadeUpFacts, MadeUpProcess};
use owner_liveness::{Liveness, Namespaces, OpenProcessError, OwnerIdentity, OwnerSource, Pid, ProcIdentity};
use registry_core::register::Registrar;
use registry_core::register::precedence::AgentChoice;
use registry_core::register::refresh::SessionDirectory;
use registry_core::{
    ListFilter, PruneOptions, Registration, RosterDir, Timestamp, list_sessions, prune_sessions, register,
    write_atomically,
};

const MACHINE: &str = "machine-id:0123456789abcdef0123456789abcdef";
const BOOT_ID: &str = "0f0e0d0c-0b0a-0908-0706-050403020100";
const PID_NS: u64 = 4026531836;
const TIME_NS: u64 = 4026531834;
const USER_NS: u64 = 4026531837;
const UID: u32 = 1000;
const REGISTERED_AT: &str = "2026-11-30T02:03:05.123456789Z";

/// What the made-up system says is at a pid.
#[derive(Clone, Copy, Debug)]
enum AtPid {
    /// The recorded process, still running.
    TheOwner,
    /// No process.
    Nothing,
    /// Another process, started later.
    Newcomer,
    /// A process that cannot be opened (not its absence).
    Unopenable,
}

/// What opening `pid` gives where `at_pid` runs there.
fn opened(pid: u32, at_pid: AtPid) -> Result<MadeUpProcess, OpenProcessError> {
    let started_at = |start_ticks| ProcIdentity { uid: UID, start_ticks, terminal: 0 };
    match at_pid {
        AtPid::TheOwner => Ok(MadeUpProcess {
            pidfs_inode: Some(inode_of(pid)),
            proc: Ok(started_at(ticks_of(pid))),
            exited: Ok(false),
            user_namespace: Some(USER_NS),
        }),
        AtPid::Newcomer => Ok(MadeUpProcess {
            pidfs_inode: Some(1),
            proc: Ok(started_at(ticks_of(pid) + 1)),
            exited: Ok(false),
            user_namespace: Some(USER_NS),
        }),
        AtPid::Nothing => Err(OpenProcessError::Gone),
        AtPid::Unopenable => Err(OpenProcessError::Other("Permission denied".into())),
    }
}

/// The made-up system of this boot in `pid_ns`, a minute after the
/// records were written, where `processes` run.
fn made_up_facts(pid_ns: u64, processes: HashMap<u32, AtPid>) -> MadeUpFacts {
    let namespaces = Namespaces { pid_ns, time_ns: TIME_NS, user_ns: USER_NS };
    let mut facts = MadeUpFacts::new(BOOT_ID, namespaces, MACHINE, registered_at() + Duration::from_secs(60));
    facts.processes = processes.into_iter().map(|(pid, at_pid)| (pid, opened(pid, at_pid))).collect();
    facts
}

fn ticks_of(pid: u32) -> u64 {
    u64::from(pid) * 10
}

fn inode_of(pid: u32) -> u64 {
    u64::from(pid) + 100_000
}

fn registered_at() -> SystemTime {
    let nanos = Timestamp::parse(REGISTERED_AT).unwrap().unix_nanos();
    SystemTime::UNIX_EPOCH + Duration::from_nanos(nanos as u64)
}

/// A record of the owner at `pid`, as register writes it, in `boot_id`.
fn record_text(pid: u32, boot_id: &str) -> String {
    record_on(Some(MACHINE), pid, ticks_of(pid), inode_of(pid), boot_id)
}

/// A record of the process at `pid` started at `ticks` with pidfs inode
/// `inode`.
fn record_of(pid: u32, ticks: u64, inode: u64, boot_id: &str) -> String {
    record_on(Some(MACHINE), pid, ticks, inode, boot_id)
}

/// `record_of`, recorded on `machine` (`None`: by a roster that did not
/// record machines, format 1).
fn record_on(machine: Option<&str>, pid: u32, ticks: u64, inode: u64, boot_id: &str) -> String {
    let (format, machine) = match machine {
        Some(machine) => (2, format!("\n  \"machine\": \"{machine}\",")),
        None => (1, String::new()),
    };
    format!(
        r#"{{
  "format": {format},
  "session_pid": {pid},
  "session_pid_source": "flag",
  "session_pid_verified": false,
  "owner_uid": {UID},
  "start_ticks": {ticks},
  "pidfs_ino": {inode},
  "boot_id": "{boot_id}",
  "pid_ns": {PID_NS},
  "time_ns": {TIME_NS},
  "user_ns": {USER_NS},{machine}
  "harness": "aider",
  "session_id": "session-{pid}",
  "cwd": "/home/dev/src/app",
  "registrar_pid": 1,
  "registered_at": "{REGISTERED_AT}",
  "refreshed_at": "{REGISTERED_AT}"
}}
"#,
    )
}

/// One rule: a record's owner as the made-up system shows it, the verdict
/// that makes, and what each pass does with the record.
struct Case {
    name: &'static str,
    at_pid: AtPid,
    /// Recorded in another boot than the system's.
    earlier_boot: bool,
    /// The system runs in another pid namespace than the record's.
    other_pid_namespace: bool,
    /// The machine the record names (`None`: an older roster's record).
    machine: Option<&'static str>,
    liveness: Liveness,
    /// Shown by a plain `roster-list` (dead rows are hidden without `--all`).
    listed: bool,
    /// Removed by a plain `roster-prune`.
    pruned: bool,
    /// Removed by `roster-prune --older-than 1d` a hundred days later.
    pruned_when_old: bool,
    /// Removed by a register's reaping pass.
    reaped: bool,
}

const fn case(name: &'static str, at_pid: AtPid, liveness: Liveness) -> Case {
    let dead = matches!(liveness, Liveness::Dead);
    let unknown = matches!(liveness, Liveness::Unknown);
    Case {
        name,
        at_pid,
        earlier_boot: false,
        other_pid_namespace: false,
        machine: Some(MACHINE),
        liveness,
        listed: !dead,
        pruned: dead,
        pruned_when_old: dead || unknown,
        reaped: dead,
    }
}

fn cases() -> Vec<Case> {
    vec![
        case("the owner runs", AtPid::TheOwner, Liveness::Alive),
        case("nothing runs at the pid", AtPid::Nothing, Liveness::Dead),
        case("a newcomer took the pid", AtPid::Newcomer, Liveness::Dead),
        case("the pid cannot be opened", AtPid::Unopenable, Liveness::Unknown),
        Case { earlier_boot: true, ..case("recorded in an earlier boot", AtPid::TheOwner, Liveness::Dead) },
        // A home shared by two machines: the other one's sessions are
        // never dead here, and go only past an age.
        Case {
            earlier_boot: true,
            machine: Some("hostname:the-other-machine"),
            ..case("recorded on another machine", AtPid::Nothing, Liveness::Unknown)
        },
        // An older roster did not say its machine: a reboot and another
        // machine look the same.
        Case {
            earlier_boot: true,
            machine: None,
            ..case("an older roster's record of another boot", AtPid::Nothing, Liveness::Unknown)
        },
        Case {
            other_pid_namespace: true,
            ..case("seen from another pid namespace", AtPid::TheOwner, Liveness::Unknown)
        },
    ]
}

/// A roster with the one record of `case` (owner pid 4242), and the
/// system it is judged in, `age` after the record was written.
fn world(case: &Case, age: Duration) -> (tempfile::TempDir, RosterDir, MadeUpFacts) {
    let temp = tempfile::tempdir().unwrap();
    let roster = RosterDir::open_or_create(&temp.path().join("roster")).unwrap();
    let boot_id = if case.earlier_boot { "00000000-0000-0000-0000-000000000000" } else { BOOT_ID };
    let record = record_on(case.machine, 4242, ticks_of(4242), inode_of(4242), boot_id);
    write_atomically(&roster, roster.sessions(), "4242.json", record.as_bytes()).unwrap();
    let pid_ns = if case.other_pid_namespace { PID_NS + 1 } else { PID_NS };
    let processes = HashMap::from([(4242, case.at_pid), (5000, AtPid::TheOwner)]);
    let facts = MadeUpFacts { now: registered_at() + age, ..made_up_facts(pid_ns, processes) };
    (temp, roster, facts)
}

fn still_there(roster: &RosterDir) -> bool {
    roster.path().join("sessions/4242.json").exists()
}

#[test]
fn list_shows_each_verdict_and_hides_the_dead() {
    for case in cases() {
        let (_temp, roster, facts) = world(&case, Duration::from_secs(60));
        let listing = list_sessions(&roster, &ListFilter::default(), &facts).unwrap();
        assert_eq!(listing.rows.len() == 1, case.listed, "{}: {:?}", case.name, listing.rows);
        assert_eq!(listing.dead_hidden == 1, !case.listed, "{}", case.name);
        let everything = ListFilter { include_dead: true, ..ListFilter::default() };
        let listing = list_sessions(&roster, &everything, &facts).unwrap();
        assert_eq!(listing.rows.len(), 1, "{}: --all shows every row", case.name);
        assert_eq!(listing.rows[0].liveness(), case.liveness, "{}: {:?}", case.name, listing.rows[0].verdict);
    }
}

#[test]
fn prune_removes_the_dead_and_the_unknown_only_past_their_age() {
    for case in cases() {
        let (_temp, roster, facts) = world(&case, Duration::from_secs(60));
        let options = PruneOptions { older_than: None, dry_run: false };
        let (report, _lock) = prune_sessions(&roster, &options, &facts).unwrap();
        assert_eq!(!still_there(&roster), case.pruned, "{}: {report:?}", case.name);

        let (_temp, roster, facts) = world(&case, Duration::from_secs(100 * 86400));
        let options = PruneOptions { older_than: Some(Duration::from_secs(86400)), dry_run: false };
        let (report, _lock) = prune_sessions(&roster, &options, &facts).unwrap();
        assert_eq!(!still_there(&roster), case.pruned_when_old, "{}, old: {report:?}", case.name);

        // Young, with --older-than: only the dead go.
        let (_temp, roster, facts) = world(&case, Duration::from_secs(60));
        let options = PruneOptions { older_than: Some(Duration::from_secs(86400)), dry_run: false };
        prune_sessions(&roster, &options, &facts).unwrap();
        assert_eq!(!still_there(&roster), case.pruned, "{}, young", case.name);
    }
}

#[test]
fn register_reaps_only_the_dead_on_its_way() {
    for case in cases() {
        let (_temp, roster, facts) = world(&case, Duration::from_secs(60));
        let registered = register(&roster, &registration(5000), &facts).unwrap();
        assert_eq!(registered.reaped.contains(&4242), case.reaped, "{}: {:?}", case.name, registered.reaped);
        assert_eq!(!still_there(&roster), case.reaped, "{}", case.name);
        // The clock register reads is the facts' clock.
        assert_eq!(registered.record.registered_at(), Timestamp::from_system_time(facts.now));
    }
}

/// The registration of a new owner at `pid`, running in the made-up system.
fn registration(pid: u32) -> Registration {
    Registration {
        identity: OwnerIdentity {
            pid: Pid::new(pid).unwrap(),
            uid: UID,
            start_ticks: ticks_of(pid),
            pidfs_ino: Some(inode_of(pid)),
            boot_id: BOOT_ID.into(),
            pid_ns: PID_NS,
            time_ns: TIME_NS,
            user_ns: Some(USER_NS),
            machine: Some(MACHINE.into()),
            chain: Vec::new(),
        },
        session_pid_source: OwnerSource::Flag.into(),
        session_pid_verified: false,
        harness: Some("aider".into()),
        harness_version: None,
        agent: AgentChoice::Keep { default: None },
        session_id: None,
        transcript_path: None,
        socket: None,
        location: None,
        cwd: SessionDirectory::Given(PathBuf::from("/home/dev/src/app")),
        registrar_pid: 1,
        registrar: Registrar::ByHand,
        harness_sessions: Vec::new(),
    }
}

/// A roster holding the dead record of 4242 (its pid now a newcomer's),
/// in a made-up system where the newcomer registers (its record replaces
/// the dead one) the moment 4242's process is first looked at: right after
/// the dead record was judged, before anything could remove it. 5000 runs.
fn world_where_4242_is_replaced_once_judged() -> (tempfile::TempDir, RosterDir, MadeUpFacts) {
    let temp = tempfile::tempdir().unwrap();
    let roster = RosterDir::open_or_create(&temp.path().join("roster")).unwrap();
    write_atomically(&roster, roster.sessions(), "4242.json", record_text(4242, BOOT_ID).as_bytes()).unwrap();
    let newcomer = record_of(4242, ticks_of(4242) + 1, 1, BOOT_ID);
    let sessions = roster.path().join("sessions");
    let replaced = std::sync::atomic::AtomicBool::new(false);
    let processes = HashMap::from([(4242, AtPid::Newcomer), (5000, AtPid::TheOwner)]);
    let facts = MadeUpFacts {
        meanwhile: Some(Box::new(move |pid| {
            if pid.get() == 4242 && !replaced.swap(true, std::sync::atomic::Ordering::SeqCst) {
                let temporary = sessions.join(".tmp-newcomer");
                std::fs::write(&temporary, &newcomer).unwrap();
                std::fs::rename(&temporary, sessions.join("4242.json")).unwrap();
            }
        })),
        ..made_up_facts(PID_NS, processes)
    };
    (temp, roster, facts)
}

/// A record judged dead before prune took the lock, and replaced by a live
/// session's record (its pid reused by a newcomer that registered) before
/// it was removed: prune finds the file changed, judges it again under the
/// lock, and keeps it.
#[test]
fn prune_keeps_a_record_replaced_by_a_live_one_after_it_was_judged() {
    let (_temp, roster, facts) = world_where_4242_is_replaced_once_judged();
    let options = PruneOptions { older_than: None, dry_run: false };
    let (report, _lock) = prune_sessions(&roster, &options, &facts).unwrap();
    assert_eq!(report.dead_removed, 0, "{report:?}");
    assert_eq!(report.kept, 1, "{report:?}");
    let kept = std::fs::read_to_string(roster.path().join("sessions/4242.json")).unwrap();
    assert!(kept.contains(&format!("\"start_ticks\": {}", ticks_of(4242) + 1)), "{kept}");
}

/// Register's reaping pass judges without the lock: a dead record replaced
/// by a live session's record (its pid reused by a newcomer that
/// registered) between that judgment and the removal is judged again under
/// the lock and kept, as prune keeps it.
#[test]
fn register_keeps_a_record_replaced_by_a_live_one_after_its_reaping_pass_judged_it() {
    let (_temp, roster, facts) = world_where_4242_is_replaced_once_judged();
    let registered = register(&roster, &registration(5000), &facts).unwrap();
    assert!(registered.reaped.is_empty(), "{:?}", registered.reaped);
    let kept = std::fs::read_to_string(roster.path().join("sessions/4242.json")).unwrap();
    assert!(kept.contains(&format!("\"start_ticks\": {}", ticks_of(4242) + 1)), "{kept}");
}

/// Register's reaping never waits for the lock: when another process holds
/// it by the time a dead record is found, the registration returns at once
/// with the record left in place, and its walk stays where it was, so the
/// very next registration finds the record again and removes it. (Had the
/// walk moved on, the record would wait a lap of the registry: here forty
/// records, ten registrations.)
#[test]
fn register_leaves_a_dead_record_to_the_next_writer_when_the_lock_is_taken() {
    let temp = tempfile::tempdir().unwrap();
    let roster = RosterDir::open_or_create(&temp.path().join("roster")).unwrap();
    write_atomically(&roster, roster.sessions(), "4242.json", record_text(4242, BOOT_ID).as_bytes()).unwrap();
    let mut processes = HashMap::from([(4242, AtPid::Nothing)]);
    for pid in 6000..6040u32 {
        let file = format!("{pid}.json");
        write_atomically(&roster, roster.sessions(), &file, record_text(pid, BOOT_ID).as_bytes()).unwrap();
        processes.insert(pid, AtPid::TheOwner);
    }
    let registrants: Vec<u32> = (5000..5100).collect();
    processes.extend(registrants.iter().map(|&pid| (pid, AtPid::TheOwner)));
    let root = roster.path().to_owned();
    // Another holder of the lock, with its own open file description as
    // another process would have; it takes the lock the moment the reaping
    // pass looks at 4242's owner (there is none: the record is dead).
    let other_holder = std::sync::Arc::new(std::sync::Mutex::new(None));
    let taken_by_other = std::sync::Arc::clone(&other_holder);
    let other_takes_it = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let takes_it = std::sync::Arc::clone(&other_takes_it);
    let facts = MadeUpFacts {
        meanwhile: Some(Box::new(move |pid| {
            if pid.get() == 4242 && takes_it.load(std::sync::atomic::Ordering::SeqCst) {
                let other = RosterDir::open_or_create(&root).unwrap();
                let lock = other.lock_if_free().unwrap().expect("the registration let go of the lock");
                *taken_by_other.lock().unwrap() = Some(lock);
            }
        })),
        ..made_up_facts(PID_NS, processes)
    };
    let mut registrants = registrants.into_iter();
    let skipped = registrants.by_ref().find(|&pid| {
        let started = std::time::Instant::now();
        let registered = register(&roster, &registration(pid), &facts).unwrap();
        assert!(started.elapsed() < Duration::from_secs(1), "register waited {:?}", started.elapsed());
        assert!(registered.reaped.is_empty(), "{:?}", registered.reaped);
        other_holder.lock().unwrap().take().is_some()
    });
    assert!(skipped.is_some(), "no registration's reaping pass came to 4242 in a lap of the registry");
    assert!(roster.path().join("sessions/4242.json").exists());

    other_takes_it.store(false, std::sync::atomic::Ordering::SeqCst);
    let registered = register(&roster, &registration(registrants.next().unwrap()), &facts).unwrap();
    assert_eq!(registered.reaped, vec![4242]);
    assert!(!roster.path().join("sessions/4242.json").exists());
}

/// The reaping cursor is a hint any value of which is harmless: one the
/// directory refuses (a negative offset) sends the walk back to the top
/// instead of stopping it for good, and so does a cursor file too large to
/// read (1 MiB of junk), which the next write cuts back to one cursor.
#[test]
fn register_reaps_again_after_a_cursor_it_cannot_use() {
    let junk = vec![b'7'; 1 << 20];
    let cases = [("a negative cursor", &b"-5"[..]), ("1 MiB of junk", &junk[..])];
    let scratch = scratch_directories();
    for ((case, cursor), within) in scratch.iter().flat_map(|within| cases.map(|case| (case, within.path())))
    {
        let temp = tempfile::tempdir_in(within).unwrap();
        let roster = RosterDir::open_or_create(&temp.path().join("roster")).unwrap();
        write_atomically(&roster, roster.sessions(), "4242.json", record_text(4242, BOOT_ID).as_bytes())
            .unwrap();
        let cursor_file = roster.path().join("sessions/.reap-cursor");
        std::fs::write(&cursor_file, cursor).unwrap();
        let processes =
            HashMap::from([(4242, AtPid::Nothing), (5000, AtPid::TheOwner), (5001, AtPid::TheOwner)]);
        let facts = made_up_facts(PID_NS, processes);
        let reaped: Vec<u32> = [5000, 5001]
            .into_iter()
            .flat_map(|pid| register(&roster, &registration(pid), &facts).unwrap().reaped)
            .collect();
        assert_eq!(reaped, vec![4242], "{case}");
        assert!(!roster.path().join("sessions/4242.json").exists(), "{case}");
        let left = std::fs::read(&cursor_file).unwrap();
        let readable =
            left.len() <= 20 && std::str::from_utf8(&left).is_ok_and(|text| text.parse::<i64>().is_ok());
        assert!(
            readable,
            "{case}: the cursor file holds {} bytes, starting {:?}",
            left.len(),
            &left[..left.len().min(24)]
        );
    }
}

/// The directories a reaping test runs in: the temp directory, and a tmpfs
/// when there is one (`/dev/shm`), which lists the newest entries first
/// where ext4 lists them by hash: the walk must reap in either order.
fn scratch_directories() -> Vec<tempfile::TempDir> {
    let mut directories = vec![tempfile::tempdir().unwrap()];
    if Path::new("/dev/shm").is_dir() {
        directories.push(tempfile::tempdir_in("/dev/shm").unwrap());
    }
    directories
}

/// A registration's reaping walk ends at the `REAP_LIVE_JUDGED`th record
/// that is not dead: in a registry of live sessions it judges that many
/// neighbours, not `REAP_EXAMINE`, and the dead records it meets go, those
/// behind live ones at the registrations after it, until none is left and
/// every live record is still there; whether the dead records were written
/// before the live ones or after, and in either directory order.
#[test]
fn register_reaps_up_to_the_second_live_record_and_the_rest_at_the_next() {
    use registry_core::register::{REAP_EXAMINE, REAP_LIVE_JUDGED};
    let live = [4300, 4301, 4302, 4303, 4304, 4305];
    let dead = [4400, 4401, 4402];
    let registrants: Vec<u32> = (5000..5030).collect();
    for temp in scratch_directories() {
        for dead_first in [false, true] {
            let case = format!("in {}, dead written first: {dead_first}", temp.path().display());
            let roster =
                RosterDir::open_or_create(&temp.path().join(format!("roster-{dead_first}"))).unwrap();
            let written: Vec<u32> = if dead_first {
                dead.iter().chain(&live).copied().collect()
            } else {
                live.iter().chain(&dead).copied().collect()
            };
            for pid in written {
                let name = format!("{pid}.json");
                write_atomically(&roster, roster.sessions(), &name, record_text(pid, BOOT_ID).as_bytes())
                    .unwrap();
            }
            let processes = live
                .iter()
                .chain(&registrants)
                .map(|&pid| (pid, AtPid::TheOwner))
                .chain(dead.iter().map(|&pid| (pid, AtPid::Nothing)))
                .collect();
            let looked_at = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
            let seen = std::sync::Arc::clone(&looked_at);
            let facts = MadeUpFacts {
                meanwhile: Some(Box::new(move |pid: Pid| seen.lock().unwrap().push(pid.get()))),
                ..made_up_facts(PID_NS, processes)
            };
            let mut reaped = Vec::new();
            for &pid in &registrants {
                let registered = register(&roster, &registration(pid), &facts).unwrap();
                // The neighbours judged: every process looked at but the
                // registrant's own.
                let judged: std::collections::BTreeSet<u32> =
                    looked_at.lock().unwrap().drain(..).filter(|&looked| looked != pid).collect();
                let live_judged = judged.iter().filter(|judged| !dead.contains(judged)).count();
                assert!(live_judged <= REAP_LIVE_JUDGED, "{case}: registration {pid} judged {judged:?}");
                assert!(judged.len() <= REAP_EXAMINE, "{case}: registration {pid} judged {judged:?}");
                reaped.extend(registered.reaped);
            }
            reaped.sort_unstable();
            let cursor =
                std::fs::read_to_string(roster.path().join("sessions/.reap-cursor")).unwrap_or_default();
            assert_eq!(reaped, dead, "{case}: every dead record goes, once (cursor left at {cursor:?})");
            for pid in live {
                assert!(roster.path().join(format!("sessions/{pid}.json")).exists(), "{case}: {pid} stays");
            }
        }
    }
}

/// A reaping cursor that is not a file to trust (a FIFO, a symlink, a
/// file with a second link) is replaced by one that is, whatever it was:
/// left in place it could never be written, and every walk would start at
/// the top. What it pointed at or was linked to is left as it was.
#[test]
fn register_replaces_a_reaping_cursor_it_cannot_trust() {
    for kind in ["fifo", "symlink", "hard link"] {
        let temp = tempfile::tempdir().unwrap();
        let roster = RosterDir::open_or_create(&temp.path().join("roster")).unwrap();
        let cursor_file = roster.path().join("sessions/.reap-cursor");
        let elsewhere = temp.path().join("elsewhere");
        std::fs::write(&elsewhere, b"not a cursor").unwrap();
        match kind {
            "fifo" => nix::unistd::mkfifo(&cursor_file, nix::sys::stat::Mode::S_IRWXU).unwrap(),
            "symlink" => std::os::unix::fs::symlink(&elsewhere, &cursor_file).unwrap(),
            _ => std::fs::hard_link(&elsewhere, &cursor_file).unwrap(),
        }
        let processes = HashMap::from([(5000, AtPid::TheOwner), (5001, AtPid::TheOwner)]);
        let facts = made_up_facts(PID_NS, processes);
        for pid in [5000, 5001] {
            register(&roster, &registration(pid), &facts).unwrap();
        }
        let metadata = std::fs::symlink_metadata(&cursor_file).unwrap();
        assert!(metadata.file_type().is_file(), "{kind}: still {:?}", metadata.file_type());
        assert_eq!(std::os::unix::fs::MetadataExt::nlink(&metadata), 1, "{kind}");
        let cursor = std::fs::read_to_string(&cursor_file).unwrap();
        assert!(cursor.trim().parse::<i64>().is_ok(), "{kind}: the cursor holds {cursor:?}");
        assert_eq!(std::fs::read(&elsewhere).unwrap(), b"not a cursor", "{kind}: what it named was changed");
    }
}

/// Thousands of records, as many dead as not: prune judges them on every
/// core while one thread removes records and another their index entries.
/// Every dead record goes with the index entry that names it; an index
/// entry that names another (live) record of the same session stays, and
/// so does every record that is alive or unknown.
#[test]
fn prune_of_thousands_removes_each_dead_record_with_its_own_index_entry_only() {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    assert!(
        cores >= 2,
        "this test runs prune on several threads and needs two cores, this machine has {cores}"
    );
    let temp = tempfile::tempdir().unwrap();
    let roster = RosterDir::open_or_create(&temp.path().join("roster")).unwrap();
    let session_ids = roster.path().join("session-ids");
    let kinds = [AtPid::TheOwner, AtPid::Nothing, AtPid::Newcomer, AtPid::Unopenable];
    let mut processes = HashMap::new();
    let mut dead = Vec::new();
    let mut index_names_another = Vec::new();
    for pid in 10_000..14_000u32 {
        let kind = kinds[pid as usize % kinds.len()];
        processes.insert(pid, kind);
        let file = format!("{pid}.json");
        write_atomically(&roster, roster.sessions(), &file, record_text(pid, BOOT_ID).as_bytes()).unwrap();
        let id = registry_core::SessionId::parse(&format!("session-{pid}")).unwrap();
        let index_entry = session_ids.join(registry_core::index_entry_name(&id));
        // Every tenth session has since been resumed by another process,
        // whose record its index entry names now.
        let holder = if pid % 10 == 0 { pid + 100_000 } else { pid };
        std::os::unix::fs::symlink(holder.to_string(), &index_entry).unwrap();
        if holder != pid {
            let file = format!("{holder}.json");
            write_atomically(&roster, roster.sessions(), &file, record_text(holder, BOOT_ID).as_bytes())
                .unwrap();
            processes.insert(holder, AtPid::TheOwner);
        }
        if matches!(kind, AtPid::Nothing | AtPid::Newcomer) {
            dead.push(pid);
        }
        if holder != pid {
            index_names_another.push((index_entry, holder));
        }
    }
    let facts = made_up_facts(PID_NS, processes);
    let options = PruneOptions { older_than: None, dry_run: false };
    let (report, _lock) = prune_sessions(&roster, &options, &facts).unwrap();

    assert_eq!(report.dead_removed, dead.len(), "{:?}", report.removed.len());
    assert_eq!(report.unknown_removed, 0);
    assert_eq!(report.kept, 4_000 - dead.len() + index_names_another.len());
    let mut removed: Vec<u32> = report.removed.iter().map(|row| row.pid.unwrap().get()).collect();
    removed.sort_unstable();
    assert_eq!(removed, dead);
    for pid in 10_000..14_000u32 {
        let record_left = roster.path().join(format!("sessions/{pid}.json")).exists();
        assert_eq!(record_left, !dead.contains(&pid), "record of {pid}");
        let id = registry_core::SessionId::parse(&format!("session-{pid}")).unwrap();
        let index_left =
            std::fs::symlink_metadata(session_ids.join(registry_core::index_entry_name(&id))).is_ok();
        assert_eq!(index_left, !dead.contains(&pid) || pid % 10 == 0, "index entry of {pid}");
    }
    for (index_entry, holder) in index_names_another {
        assert_eq!(std::fs::read_link(&index_entry).unwrap(), Path::new(&holder.to_string()));
    }
}

/// Thousands of dead records, registered in an order the directory does
/// not list them in, against a bound of a few hundred ended sessions: the
/// ended sessions are chosen once every record is judged and written
/// while the index entries still queued go. Exactly the most recently
/// registered are kept, each once and whole, every ended session kept
/// before goes, and every record and index entry goes.
#[test]
fn prune_of_thousands_keeps_the_ended_sessions_of_the_most_recently_registered() {
    const RECORDS: u32 = 3_000;
    const KEPT_MOST: usize = 300;
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    assert!(
        cores >= 2,
        "this test runs prune on several threads and needs two cores, this machine has {cores}"
    );
    let temp = tempfile::tempdir().unwrap();
    let roster = RosterDir::open_or_create(&temp.path().join("roster")).unwrap().with_ended_bounds(|| {
        registry_core::EndedBounds { kept_most: KEPT_MOST, kept_for: registry_core::ENDED_KEPT_FOR }
    });
    let session_ids = roster.path().join("session-ids");
    // The rank of each record's registration: a permutation of the pids.
    let rank_of = |pid: u32| (pid - 20_000) * 7_919 % RECORDS;
    for pid in 20_000..20_000 + RECORDS {
        let rank = rank_of(pid);
        let registered_at = format!("2026-11-30T01:{:02}:{:02}.000000000Z", rank / 60, rank % 60);
        let text = record_text(pid, BOOT_ID).replace(REGISTERED_AT, &registered_at);
        write_atomically(&roster, roster.sessions(), &format!("{pid}.json"), text.as_bytes()).unwrap();
        let id = registry_core::SessionId::parse(&format!("session-{pid}")).unwrap();
        std::os::unix::fs::symlink(pid.to_string(), session_ids.join(registry_core::index_entry_name(&id)))
            .unwrap();
    }
    // Ended sessions kept before, one dated a day ahead by a clock since
    // stepped back: all were written before this prune's, and go.
    let ended = roster.path().join("ended");
    std::fs::create_dir(&ended).unwrap();
    std::fs::set_permissions(&ended, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    for index in 0..50 {
        let file = std::fs::File::create(ended.join(format!("{index}@earlier-1.json"))).unwrap();
        if index == 0 {
            file.set_modified(SystemTime::now() + Duration::from_secs(86_400)).unwrap();
        }
    }
    // Nothing runs at any of the pids: every record is dead.
    let facts = made_up_facts(PID_NS, HashMap::new());
    let options = PruneOptions { older_than: None, dry_run: false };
    let (report, _lock) = prune_sessions(&roster, &options, &facts).unwrap();

    assert_eq!(report.dead_removed, RECORDS as usize);
    assert!(report.ended_not_kept.is_none(), "{:?}", report.ended_not_kept);
    assert_eq!(std::fs::read_dir(roster.path().join("sessions")).unwrap().count(), 0);
    assert_eq!(std::fs::read_dir(&session_ids).unwrap().count(), 0);
    let listing = registry_core::list_ended(&roster).unwrap();
    assert_eq!(listing.skipped, 0);
    let mut kept: Vec<u32> = listing.sessions.iter().map(|session| rank_of(session.owner_pid)).collect();
    kept.sort_unstable();
    let newest: Vec<u32> = (RECORDS - KEPT_MOST as u32..RECORDS).collect();
    assert_eq!(kept, newest, "the ended sessions kept are not the most recently registered");
    assert_eq!(std::fs::read_dir(roster.path().join("ended")).unwrap().count(), KEPT_MOST);
    for session in &listing.sessions {
        assert_eq!(session.how, registry_core::HowEnded::Crashed);
        assert_eq!(session.session_id.as_deref(), Some(format!("session-{}", session.owner_pid).as_str()));
    }
}

/// A prune killed between removing records and their index entries leaves
/// entries that name no record; the next prune removes those, and only
/// those: an entry of a record that is there, or one that names no pid,
/// stays, and a dry run removes nothing.
#[test]
fn prune_removes_index_entries_left_without_their_record() {
    let temp = tempfile::tempdir().unwrap();
    let roster = RosterDir::open_or_create(&temp.path().join("roster")).unwrap();
    write_atomically(&roster, roster.sessions(), "4242.json", record_text(4242, BOOT_ID).as_bytes()).unwrap();
    let session_ids = roster.path().join("session-ids");
    let entry =
        |name: &str, target: &str| std::os::unix::fs::symlink(target, session_ids.join(name)).unwrap();
    entry("00000000000000aa", "4242");
    entry("00000000000000bb", "7001");
    entry("00000000000000cc", "7002");
    entry("00000000000000dd", "not-a-pid");
    let facts = made_up_facts(PID_NS, HashMap::from([(4242, AtPid::TheOwner)]));
    let left = || {
        let mut names: Vec<String> = std::fs::read_dir(&session_ids)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    let dry_run = PruneOptions { older_than: None, dry_run: true };
    drop(prune_sessions(&roster, &dry_run, &facts).unwrap());
    assert_eq!(left().len(), 4, "a dry run removed {:?}", left());
    let (report, _lock) = prune_sessions(&roster, &PruneOptions::default(), &facts).unwrap();
    assert_eq!(report.kept, 1);
    assert_eq!(left(), ["00000000000000aa", "00000000000000dd"]);
}
