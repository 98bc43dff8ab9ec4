//! The verdict (docs/contract.md §5) as a table: a fake system where every fact agrees
//! with the recorded identity, and one row per rule that changes one fact
//! (or two, to show which rule wins) and names the verdict and its reason.

use std::collections::HashMap;
use std::io;
use std::path::PathBuf;

use owner_liveness::made_up_facts::{MadeUpFacts, MadeUpProcess};
use owner_liveness::{
    ChainMember, Namespaces, OpenProcessError, OwnerIdentity, Pid, ProcIdentity, ProcReadError,
    SocketIdentity, judge,
};

/// The initial user namespace, where a uid means the same to everyone.
const INITIAL: u64 = owner_liveness::INITIAL_USER_NS_INODE;

/// One row: what was recorded and what the system says now.
struct Case {
    recorded: OwnerIdentity,
    recorded_socket: Option<SocketIdentity>,
    world: MadeUpFacts,
}

const MACHINE: &str = "machine-id:3d1219c7c4c5404aaa1f6d2a48adfda4";

const SOCKET_PATH: &str = "/run/user/1000/claude/messaging.sock";

fn socket(dev: u64, ino: u64, mtime_ns: i128) -> SocketIdentity {
    SocketIdentity { path: PathBuf::from(SOCKET_PATH), dev, ino, mtime_ns }
}

/// A recorded owner and a system that agrees with it on every signal.
fn agreeing_case() -> Case {
    let recorded = OwnerIdentity {
        pid: Pid::new(4242).unwrap(),
        uid: 1000,
        start_ticks: 870,
        pidfs_ino: Some(77),
        boot_id: "boot-a".to_owned(),
        pid_ns: 11,
        time_ns: 12,
        user_ns: Some(INITIAL),
        machine: Some(MACHINE.to_owned()),
        chain: Vec::new(),
    };
    let owner = MadeUpProcess {
        pidfs_inode: Some(77),
        proc: Ok(ProcIdentity { uid: 1000, start_ticks: 870, terminal: 0 }),
        exited: Ok(false),
        user_namespace: Some(INITIAL),
    };
    let world = MadeUpFacts {
        boot_id: Ok("boot-a".to_owned()),
        namespaces: Ok(Namespaces { pid_ns: 11, time_ns: 12, user_ns: INITIAL }),
        machine: Ok(MACHINE.to_owned()),
        boottime_offset_ticks: 0,
        processes: HashMap::from([(4242, Ok(owner))]),
        threads: HashMap::new(),
        socket: Ok(socket(5, 6, 7)),
        // The verdict reads no clock.
        now: std::time::SystemTime::UNIX_EPOCH,
        glances: true,
        meanwhile: None,
    };
    Case { recorded, recorded_socket: Some(socket(5, 6, 7)), world }
}

/// The owner's process, pid 4242.
fn process(case: &mut Case) -> &mut MadeUpProcess {
    let owner = case.world.processes.get_mut(&4242).and_then(|opened| opened.as_mut().ok());
    owner.expect("this row keeps the process openable")
}

/// What opening `pid` gives from now on.
fn set(case: &mut Case, pid: u32, process: Result<MadeUpProcess, OpenProcessError>) {
    case.world.processes.insert(pid, process);
}

/// Applies `change` to the agreeing case and compares `"<liveness>: <reason>"`.
/// Each row is judged twice, with glances at the processes and without
/// (every process opened): a glance may only prove sooner what the handle
/// proves.
fn check(change: impl Fn(&mut Case), expect: &str) {
    for glances in [true, false] {
        let mut case = agreeing_case();
        case.world.glances = glances;
        change(&mut case);
        let verdict = judge(&case.recorded, case.recorded_socket.as_ref(), &case.world);
        assert_eq!(format!("{}: {}", verdict.liveness, verdict.reason), expect, "glances: {glances}");
    }
}

/// An owner without a pidfs inode (a harness's own file) that agrees in
/// every way is proven by one look at its pid, a glance at `/proc`; with
/// anything amiss, or no glance to be had, the handle is opened too.
#[test]
fn an_owner_without_a_pidfs_inode_is_proven_alive_at_a_glance() {
    let looks = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let looks_at = |glances: bool, change: &dyn Fn(&mut Case)| {
        let mut case = agreeing_case();
        case.recorded.pidfs_ino = None;
        case.world.glances = glances;
        let counted = std::sync::Arc::clone(&looks);
        case.world.meanwhile = Some(Box::new(move |_| {
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }));
        change(&mut case);
        looks.store(0, std::sync::atomic::Ordering::SeqCst);
        let verdict = judge(&case.recorded, case.recorded_socket.as_ref(), &case.world);
        (format!("{}: {}", verdict.liveness, verdict.reason), looks.load(std::sync::atomic::Ordering::SeqCst))
    };
    let alive = "alive: pid 4242 running since tick 870".to_owned();
    assert_eq!(looks_at(true, &|_| {}), (alive.clone(), 1));
    assert_eq!(looks_at(false, &|_| {}), (alive.clone(), 2));
    // A zombie leader may have threads that run: only the handle tells.
    assert_eq!(looks_at(true, &|case| process(case).exited = Ok(true)).1, 2);
    // Another uid: the handle's rules.
    assert_eq!(
        looks_at(true, &|case| process(case).proc =
            Ok(ProcIdentity { uid: 0, start_ticks: 870, terminal: 0 }))
        .1,
        2
    );
    // A uid recorded in another user namespace than the reader's is not
    // even glanced at: the handle alone.
    assert_eq!(looks_at(true, &|case| case.recorded.user_ns = Some(99)).1, 1);
}

/// An owner that recorded no pidfs inode (a harness's own file), on a
/// kernel that shows none either: every rule as the handle judges it, each
/// row with glances and without (`check`), so that a glance can only prove
/// sooner what the handle proves.
#[test]
fn an_owner_without_a_pidfs_inode_by_every_rule() {
    let without_pidfs = |case: &mut Case| {
        case.recorded.pidfs_ino = None;
        process(case).pidfs_inode = None;
    };
    type Row<'a> = (&'a dyn Fn(&mut Case), &'a str);
    let rows: [Row<'_>; 8] = [
        (&|_| {}, "alive: pid 4242 running since tick 870"),
        (
            &|case| process(case).proc = Ok(ProcIdentity { uid: 1000, start_ticks: 991, terminal: 0 }),
            "dead: pid 4242 now names a process started at tick 991, not 870",
        ),
        (
            &|case| process(case).proc = Ok(ProcIdentity { uid: 0, start_ticks: 870, terminal: 0 }),
            "dead: pid 4242 now belongs to uid 0, not 1000",
        ),
        (&|case| process(case).exited = Ok(true), "dead: pid 4242 has exited (zombie)"),
        (
            &|case| case.recorded.user_ns = Some(99),
            "unknown: pid 4242 started at tick 870 as recorded, but its uid cannot be compared (recorded in user \
             namespace 99, read from user namespace 4026531837) and no pidfs inode proves it is the same process",
        ),
        (
            &|case| case.world.boottime_offset_ticks = 500,
            "unknown: pid 4242 shows start tick 370, not 870, through this time namespace's offset of 500 ticks, \
             which proves nothing without a pidfs inode",
        ),
        (
            // A thread of another process now has the pid, started in the
            // recorded tick: `/proc/4242` shows it, no pidfd opens on it.
            &|case| {
                set(case, 4242, Err(OpenProcessError::NotAProcess));
                case.world.threads.insert(4242, ProcIdentity { uid: 1000, start_ticks: 870, terminal: 0 });
            },
            "dead: pid 4242 is not a process now (a thread of another process, or one being reaped)",
        ),
        (
            &|case| process(case).proc = Err(ProcReadError::PermissionDenied),
            "unknown: /proc/4242 unreadable: permission denied",
        ),
    ];
    for (change, expect) in rows {
        check(
            |case| {
                without_pidfs(case);
                change(case);
            },
            expect,
        );
    }
}

#[test]
fn every_signal_agreeing_is_alive() {
    check(|_| {}, "alive: pid 4242 running since tick 870");
    check(|case| case.recorded_socket = None, "alive: pid 4242 running since tick 870");
}

#[test]
fn rule_1_another_boot_is_dead_before_anything_else() {
    check(|case| case.world.boot_id = Ok("boot-b".to_owned()), "dead: recorded in an earlier boot");
    check(
        |case| {
            case.world.boot_id = Ok("boot-b".to_owned());
            case.world.namespaces = Ok(Namespaces { pid_ns: 99, time_ns: 12, user_ns: INITIAL });
        },
        "dead: recorded in an earlier boot",
    );
}

/// A home shared by two machines: the other machine's sessions are not
/// this one's to judge, whatever its boot id says.
#[test]
fn rule_1_another_boot_on_another_machine_is_unknown_naming_it() {
    check(
        |case| {
            case.world.boot_id = Ok("boot-b".to_owned());
            case.world.machine = Ok("hostname:laptop".to_owned());
        },
        "unknown: recorded on another machine (machine-id:3d1219c7c4c5404aaa1f6d2a48adfda4)",
    );
    check(
        |case| {
            case.world.boot_id = Ok("boot-b".to_owned());
            case.world.machine = Err(io::ErrorKind::PermissionDenied);
        },
        "unknown: recorded in another boot on machine-id:3d1219c7c4c5404aaa1f6d2a48adfda4, and this machine \
         cannot be named: permission denied",
    );
    // Same kernel (same boot id): a container with a machine id of its own
    // is judged by the namespace rules.
    check(
        |case| case.world.machine = Ok("hostname:container".to_owned()),
        "alive: pid 4242 running since tick 870",
    );
    // A record written before machines were recorded cannot tell a reboot
    // from another machine.
    check(
        |case| {
            case.recorded.machine = None;
            case.world.boot_id = Ok("boot-b".to_owned());
        },
        "unknown: recorded in another boot by a roster that did not record its machine: an earlier boot of \
         this machine or another machine sharing this registry",
    );
}

#[test]
/// Without this boot's id a record cannot be placed: every machine's
/// initial pid namespace has the same inode, so another machine's pid
/// would pass rule 2 and be judged dead here. Regression: a record of a
/// machine sharing the home, its pid free here, was pruned by a reader
/// whose boot id was hidden.
fn rule_1_an_unreadable_boot_id_is_unknown_even_where_the_pid_is_free() {
    const UNPLACED: &str = "a pid cannot be placed on this machine's kernel without it";
    check(
        |case| case.world.boot_id = Err(io::ErrorKind::PermissionDenied),
        &format!("unknown: boot id unreadable: permission denied; {UNPLACED}"),
    );
    check(
        |case| {
            case.world.boot_id = Err(io::ErrorKind::NotFound);
            set(case, 4242, Err(OpenProcessError::Gone));
        },
        &format!("unknown: boot id unreadable: entity not found; {UNPLACED}"),
    );
}

#[test]
fn rule_2_another_pid_namespace_is_unknown_and_a_time_namespace_is_taken_back() {
    check(
        |case| case.world.namespaces = Ok(Namespaces { pid_ns: 99, time_ns: 12, user_ns: INITIAL }),
        "unknown: recorded in another pid namespace",
    );
    // A time namespace shifts the start ticks its readers see; an identity
    // that names its machine is on the initial clock and is compared there.
    check(
        |case| {
            case.world.namespaces = Ok(Namespaces { pid_ns: 11, time_ns: 99, user_ns: INITIAL });
            case.world.boottime_offset_ticks = 100_000;
            process(case).pidfs_inode = None;
            process(case).proc = Ok(ProcIdentity { uid: 1000, start_ticks: 100_870, terminal: 0 });
        },
        "alive: pid 4242 running since tick 870",
    );
    check(
        |case| {
            case.world.namespaces = Ok(Namespaces { pid_ns: 11, time_ns: 99, user_ns: INITIAL });
            case.world.boottime_offset_ticks = 100_000;
            process(case).pidfs_inode = None;
            process(case).proc = Ok(ProcIdentity { uid: 1000, start_ticks: 870, terminal: 0 });
        },
        "unknown: pid 4242's start tick cannot be taken back to the initial clock through this time \
         namespace's offset of 100000 ticks",
    );
    // Seen through an offset, another start tick is no proof of another
    // process (the offset may round it); only a pidfs inode would be.
    check(
        |case| {
            case.world.namespaces = Ok(Namespaces { pid_ns: 11, time_ns: 99, user_ns: INITIAL });
            case.world.boottime_offset_ticks = 100_000;
            process(case).pidfs_inode = None;
            process(case).proc = Ok(ProcIdentity { uid: 1000, start_ticks: 100_871, terminal: 0 });
        },
        "unknown: pid 4242 shows start tick 871, not 870, through this time namespace's offset of 100000 \
         ticks, which proves nothing without a pidfs inode",
    );
    // An older record's ticks are on its registrar's clock.
    check(
        |case| {
            case.recorded.machine = None;
            case.world.namespaces = Ok(Namespaces { pid_ns: 11, time_ns: 99, user_ns: INITIAL });
        },
        "unknown: recorded in another time namespace",
    );
    // Pids mean other things in another namespace, so even a missing pid
    // proves nothing.
    check(
        |case| {
            case.world.namespaces = Ok(Namespaces { pid_ns: 99, time_ns: 12, user_ns: INITIAL });
            set(case, 4242, Err(OpenProcessError::Gone));
        },
        "unknown: recorded in another pid namespace",
    );
    check(
        |case| case.world.namespaces = Err(io::ErrorKind::PermissionDenied),
        "unknown: own namespaces unreadable: permission denied",
    );
}

#[test]
fn rule_3_no_process_at_the_pid_is_dead() {
    check(|case| set(case, 4242, Err(OpenProcessError::Gone)), "dead: pid 4242 is gone");
    check(
        |case| set(case, 4242, Err(OpenProcessError::NotAProcess)),
        "dead: pid 4242 is not a process now (a thread of another process, or one being reaped)",
    );
}

#[test]
fn rule_3_a_handle_that_cannot_be_opened_otherwise_is_unknown_but_the_socket_still_counts() {
    check(
        |case| set(case, 4242, Err(OpenProcessError::Other("Operation not permitted".to_owned()))),
        "unknown: pid 4242 cannot be opened: Operation not permitted",
    );
    // Regression: an unopenable handle used to end the verdict at once, so
    // a vanished socket (positive evidence) was never looked at.
    check(
        |case| {
            set(case, 4242, Err(OpenProcessError::Other("Operation not permitted".to_owned())));
            case.world.socket = Err(io::ErrorKind::NotFound);
        },
        &format!("dead: socket {SOCKET_PATH} is gone"),
    );
}

#[test]
fn rule_4_another_pidfs_inode_is_dead_even_with_the_same_start_tick() {
    check(
        |case| process(case).pidfs_inode = Some(78),
        "dead: pid 4242 now names another process (pidfs inode 78, not 77)",
    );
    check(
        |case| {
            process(case).pidfs_inode = Some(78);
            process(case).proc = Ok(ProcIdentity { uid: 1000, start_ticks: 991, terminal: 0 });
        },
        "dead: pid 4242 now names another process (pidfs inode 78, not 77)",
    );
}

#[test]
fn rule_4_without_a_pidfs_inode_on_either_side_the_start_tick_decides() {
    check(|case| case.recorded.pidfs_ino = None, "alive: pid 4242 running since tick 870");
    check(|case| process(case).pidfs_inode = None, "alive: pid 4242 running since tick 870");
    check(
        |case| {
            case.recorded.pidfs_ino = None;
            process(case).proc = Ok(ProcIdentity { uid: 1000, start_ticks: 991, terminal: 0 });
        },
        "dead: pid 4242 now names a process started at tick 991, not 870",
    );
}

/// An agreeing pidfs inode names the very process that registered (a
/// 64-bit kernel never hands an inode number out twice in a boot), so its
/// start tick is the recorded one and `/proc` is not read: whatever `/proc`
/// would say, the verdict rests on the handle. A 32-bit build sees only
/// the inode's low half and still compares the start tick.
#[test]
fn rule_4_an_agreeing_pidfs_inode_proves_the_process_without_proc() {
    let sixty_four_bit = cfg!(target_pointer_width = "64");
    for (proc, on_32_bit) in [
        (
            Ok(ProcIdentity { uid: 1000, start_ticks: 991, terminal: 0 }),
            "dead: pid 4242 now names a process started at tick 991, not 870",
        ),
        (Err(ProcReadError::NotFound), "unknown: /proc/4242 unreadable: not found"),
        (Err(ProcReadError::PermissionDenied), "unknown: /proc/4242 unreadable: permission denied"),
    ] {
        let expect = if sixty_four_bit { "alive: pid 4242 running since tick 870" } else { on_32_bit };
        check(|case| process(case).proc = proc.clone(), expect);
    }
    // Rule 5 still asks the handle.
    check(
        |case| {
            process(case).proc = Err(ProcReadError::PermissionDenied);
            process(case).exited = Ok(true);
        },
        "dead: pid 4242 has exited (zombie)",
    );
}

#[test]
fn rule_4_another_start_tick_or_uid_is_dead() {
    // Without a pidfs inode to name the process, `/proc` is read.
    check(
        |case| {
            process(case).pidfs_inode = None;
            process(case).proc = Ok(ProcIdentity { uid: 1000, start_ticks: 991, terminal: 0 });
        },
        "dead: pid 4242 now names a process started at tick 991, not 870",
    );
    // Without a pidfs inode to name the process, the uid is the only other
    // witness of pid reuse.
    check(
        |case| {
            process(case).pidfs_inode = None;
            process(case).proc = Ok(ProcIdentity { uid: 0, start_ticks: 870, terminal: 0 });
        },
        "dead: pid 4242 now belongs to uid 0, not 1000",
    );
    check(
        |case| {
            case.recorded.pidfs_ino = None;
            process(case).proc = Ok(ProcIdentity { uid: 0, start_ticks: 991, terminal: 0 });
        },
        "dead: pid 4242 now names a process started at tick 991, not 870",
    );
}

/// The pidfs inode names one process for the whole boot: where it agrees,
/// a process that changed its uid (setuid, a dropped privilege) is still
/// the one that registered, and a live session is never called dead.
#[test]
fn rule_4_a_uid_change_of_the_very_process_the_pidfs_inode_names_is_alive() {
    check(
        |case| process(case).proc = Ok(ProcIdentity { uid: 0, start_ticks: 870, terminal: 0 }),
        "alive: pid 4242 running since tick 870",
    );
}

/// Where no pidfs inode names the process, `/proc` must prove it.
#[test]
fn rule_4_unreadable_proc_while_the_pid_exists_is_unknown_never_dead() {
    check(
        |case| {
            process(case).pidfs_inode = None;
            process(case).proc = Err(ProcReadError::NotFound);
        },
        "unknown: /proc/4242 unreadable: not found",
    );
    check(
        |case| {
            case.recorded.pidfs_ino = None;
            process(case).proc = Err(ProcReadError::PermissionDenied);
        },
        "unknown: /proc/4242 unreadable: permission denied",
    );
    check(
        |case| {
            process(case).pidfs_inode = None;
            process(case).proc = Err(ProcReadError::Other("malformed /proc stat line: no state".to_owned()))
        },
        "unknown: /proc/4242 unreadable: malformed /proc stat line: no state",
    );
}

#[test]
fn rule_5_an_exited_process_awaiting_its_reaper_is_dead() {
    check(|case| process(case).exited = Ok(true), "dead: pid 4242 has exited (zombie)");
    // /proc gone because the process was reaped after its handle opened:
    // the handle still proves the exit.
    check(
        |case| {
            process(case).proc = Err(ProcReadError::NotFound);
            process(case).exited = Ok(true);
        },
        "dead: pid 4242 has exited (zombie)",
    );
    check(
        |case| process(case).exited = Err(io::ErrorKind::Interrupted),
        "unknown: pid 4242 cannot be polled: operation interrupted",
    );
}

#[test]
fn rule_6_a_vanished_or_replaced_socket_is_dead_once_no_member_runs() {
    // Nothing proves the owner runs (its handle cannot be opened): the
    // socket decides.
    let unopenable =
        |case: &mut Case| set(case, 4242, Err(OpenProcessError::Other("Operation not permitted".to_owned())));
    check(
        |case| {
            unopenable(case);
            case.world.socket = Err(io::ErrorKind::NotFound);
        },
        &format!("dead: socket {SOCKET_PATH} is gone"),
    );
    check(
        |case| {
            unopenable(case);
            case.world.socket = Ok(socket(9, 6, 7));
        },
        &format!("dead: socket {SOCKET_PATH} was replaced"),
    );
    check(
        |case| {
            unopenable(case);
            case.world.socket = Ok(socket(5, 9, 7));
        },
        &format!("dead: socket {SOCKET_PATH} was replaced"),
    );
    // dev and ino agree: a touched socket (new mtime) is the same socket.
    check(|case| case.world.socket = Ok(socket(5, 6, 8)), "alive: pid 4242 running since tick 870");
}

#[test]
fn rule_6_a_vanished_or_replaced_socket_while_the_owner_runs_is_unknown_never_dead() {
    // A harness removes its socket while it shuts down, before it exits:
    // the session is ending, not provably gone, and consent is closed.
    check(
        |case| case.world.socket = Err(io::ErrorKind::NotFound),
        &format!("unknown: socket {SOCKET_PATH} is gone while pid 4242 still runs"),
    );
    check(
        |case| case.world.socket = Ok(socket(9, 6, 7)),
        &format!("unknown: socket {SOCKET_PATH} was replaced while pid 4242 still runs"),
    );
    // A process at the pid that cannot be told apart from the owner (no
    // pidfs inode, /proc hidden) may be the session's: not dead either.
    check(
        |case| {
            process(case).pidfs_inode = None;
            process(case).proc = Err(ProcReadError::PermissionDenied);
            case.world.socket = Err(io::ErrorKind::NotFound);
        },
        &format!(
            "unknown: socket {SOCKET_PATH} is gone while pid 4242 still exists and may be the session's"
        ),
    );
    // Once the owner has exited, the record is dead by the process rules.
    check(
        |case| {
            process(case).exited = Ok(true);
            case.world.socket = Err(io::ErrorKind::NotFound);
        },
        "dead: pid 4242 has exited (zombie)",
    );
}

#[test]
fn rule_6_without_dev_and_ino_the_mtime_decides() {
    check(
        |case| {
            set(case, 4242, Err(OpenProcessError::Other("Operation not permitted".to_owned())));
            case.recorded_socket = Some(socket(0, 0, 7));
            case.world.socket = Ok(socket(5, 6, 8));
        },
        &format!("dead: socket {SOCKET_PATH} was replaced"),
    );
    check(
        |case| {
            case.recorded_socket = Some(socket(0, 0, 7));
            case.world.socket = Ok(socket(5, 6, 8));
        },
        &format!("unknown: socket {SOCKET_PATH} was replaced while pid 4242 still runs"),
    );
    check(
        |case| {
            case.recorded_socket = Some(socket(0, 0, 7));
            case.world.socket = Ok(socket(5, 6, 7));
        },
        "alive: pid 4242 running since tick 870",
    );
}

#[test]
fn rule_6_a_socket_that_cannot_be_examined_is_unknown() {
    check(
        |case| case.world.socket = Err(io::ErrorKind::PermissionDenied),
        &format!("unknown: socket {SOCKET_PATH} unreadable: permission denied"),
    );
    // A socket is looked at only when one was recorded.
    check(
        |case| {
            case.recorded_socket = None;
            case.world.socket = Err(io::ErrorKind::NotFound);
        },
        "alive: pid 4242 running since tick 870",
    );
}

#[test]
fn rule_7_any_dead_beats_every_unknown() {
    check(
        |case| {
            set(case, 4242, Err(OpenProcessError::Other("Operation not permitted".to_owned())));
            case.world.socket = Err(io::ErrorKind::NotFound);
        },
        &format!("dead: socket {SOCKET_PATH} is gone"),
    );
    check(
        |case| {
            set(case, 4242, Err(OpenProcessError::Other("Operation not permitted".to_owned())));
            case.world.socket = Ok(socket(5, 9, 7));
        },
        &format!("dead: socket {SOCKET_PATH} was replaced"),
    );
    check(
        |case| {
            process(case).proc = Err(ProcReadError::PermissionDenied);
            process(case).pidfs_inode = None;
            process(case).exited = Ok(true);
        },
        "dead: pid 4242 has exited (zombie)",
    );
}

#[test]
fn rule_7_every_unknown_is_named_in_the_reason() {
    check(
        |case| {
            process(case).pidfs_inode = None;
            process(case).proc = Err(ProcReadError::NotFound);
            case.world.socket = Err(io::ErrorKind::PermissionDenied);
        },
        &format!(
            "unknown: /proc/4242 unreadable: not found; socket {SOCKET_PATH} unreadable: permission denied"
        ),
    );
}

/// A reader in another user namespace (a sandbox built on `unshare -U`,
/// bubblewrap, a rootless container) sees every uid translated, often as
/// the overflow uid 65534: the uid proves nothing there, so it never makes
/// a live owner dead, and the pidfs inode with the start tick must prove
/// the identity instead.
#[test]
fn rule_4_a_uid_read_from_another_user_namespace_is_not_compared() {
    let translated = |case: &mut Case| {
        case.world.namespaces = Ok(Namespaces { pid_ns: 11, time_ns: 12, user_ns: 99 });
        process(case).proc = Ok(ProcIdentity { uid: 65534, start_ticks: 870, terminal: 0 });
    };
    check(translated, "alive: pid 4242 running since tick 870");
    // Without a pidfs inode to agree, the start tick alone is no proof.
    check(
        |case| {
            translated(case);
            process(case).pidfs_inode = None;
        },
        "unknown: pid 4242 started at tick 870 as recorded, but its uid cannot be compared (recorded \
         in user namespace 4026531837, read from user namespace 99) and no pidfs inode proves it is the same process",
    );
    // What does prove death still does.
    check(
        |case| {
            translated(case);
            process(case).pidfs_inode = None;
            process(case).proc = Ok(ProcIdentity { uid: 65534, start_ticks: 871, terminal: 0 });
        },
        "dead: pid 4242 now names a process started at tick 871, not 870",
    );
    check(
        |case| {
            translated(case);
            process(case).pidfs_inode = Some(78);
        },
        "dead: pid 4242 now names another process (pidfs inode 78, not 77)",
    );
    check(
        |case| {
            translated(case);
            set(case, 4242, Err(OpenProcessError::Gone));
        },
        "dead: pid 4242 is gone",
    );
    // In the recorded user namespace, without a pidfs inode, the uid is
    // compared as always.
    check(
        |case| {
            process(case).pidfs_inode = None;
            process(case).proc = Ok(ProcIdentity { uid: 65534, start_ticks: 870, terminal: 0 });
        },
        "dead: pid 4242 now belongs to uid 65534, not 1000",
    );
}

/// A record written before the user namespace was recorded: the owner's
/// own user namespace stands for the registrar's.
#[test]
fn rule_4_older_records_compare_the_uid_only_in_the_owners_user_namespace() {
    let older = |case: &mut Case| case.recorded.user_ns = None;
    check(older, "alive: pid 4242 running since tick 870");
    check(
        |case| {
            older(case);
            process(case).pidfs_inode = None;
            process(case).proc = Ok(ProcIdentity { uid: 0, start_ticks: 870, terminal: 0 });
        },
        "dead: pid 4242 now belongs to uid 0, not 1000",
    );
    // An older record written inside a user namespace that translated the
    // uid, read from the host: the pidfs inode proves the owner.
    check(
        |case| {
            older(case);
            process(case).proc = Ok(ProcIdentity { uid: 0, start_ticks: 870, terminal: 0 });
            case.recorded.uid = 65534;
        },
        "alive: pid 4242 running since tick 870",
    );
    check(
        |case| {
            older(case);
            process(case).user_namespace = None;
            process(case).proc = Ok(ProcIdentity { uid: 65534, start_ticks: 870, terminal: 0 });
        },
        "alive: pid 4242 running since tick 870",
    );
    check(
        |case| {
            older(case);
            process(case).user_namespace = Some(14);
            process(case).pidfs_inode = None;
        },
        "unknown: pid 4242 started at tick 870 as recorded, but its uid cannot be compared (the owner \
         is in user namespace 14, read from user namespace 4026531837) and no pidfs inode proves it is the same \
         process",
    );
}

/// In a user namespace other than the initial one, an equal inode is no
/// proof of the same namespace (inodes of gone namespaces are reused), so
/// a uid that differs there leaves the verdict unknown, never dead.
#[test]
fn rule_4_a_uid_that_differs_outside_the_initial_user_namespace_is_unknown() {
    check(
        |case| {
            case.recorded.user_ns = Some(99);
            case.world.namespaces = Ok(Namespaces { pid_ns: 11, time_ns: 12, user_ns: 99 });
            process(case).pidfs_inode = None;
            process(case).proc = Ok(ProcIdentity { uid: 1001, start_ticks: 870, terminal: 0 });
        },
        "unknown: pid 4242 now shows uid 1001, not 1000, but in user namespace 99, whose inode may have \
         been reused, that proves nothing",
    );
    check(
        |case| {
            case.recorded.user_ns = Some(99);
            case.world.namespaces = Ok(Namespaces { pid_ns: 11, time_ns: 12, user_ns: 99 });
        },
        "alive: pid 4242 running since tick 870",
    );
}

// Chains (docs/contract.md §5): the owner 4242 is a loader above its native process
// 4250 (and, where a row says so, a relaunch 4260). Every member is judged
// by rules 3 to 5 on its own; the session lives while any member provably
// runs and is dead only when every member is provably gone.

/// The recorded identity of the member at `pid`, started at `ticks`.
fn member(pid: u32, ticks: u64) -> ChainMember {
    ChainMember {
        pid: Pid::new(pid).unwrap(),
        uid: 1000,
        start_ticks: ticks,
        pidfs_ino: Some(u64::from(pid)),
    }
}

/// The process that agrees with `member` in every way.
fn running(member: &ChainMember) -> MadeUpProcess {
    MadeUpProcess {
        pidfs_inode: member.pidfs_ino,
        proc: Ok(ProcIdentity { uid: member.uid, start_ticks: member.start_ticks, terminal: 0 }),
        exited: Ok(false),
        user_namespace: Some(INITIAL),
    }
}

/// A chain owner 4242 → 4250 (→ 4260 with `three`), every member running
/// as recorded, no socket.
fn chain_case(three: bool) -> Case {
    let mut case = agreeing_case();
    case.recorded_socket = None;
    case.recorded.chain.push(member(4250, 990));
    if three {
        case.recorded.chain.push(member(4260, 995));
    }
    for member in case.recorded.chain.clone() {
        set(&mut case, member.pid.get(), Ok(running(&member)));
    }
    case
}

/// A process at the member's pid that cannot be told apart from it: no
/// pidfs inode, and `/proc` hidden.
fn unproven(case: &mut Case, pid: u32, ticks: u64) {
    let process = MadeUpProcess {
        pidfs_inode: None,
        proc: Err(ProcReadError::PermissionDenied),
        ..running(&member(pid, ticks))
    };
    set(case, pid, Ok(process));
}

fn check_chain(three: bool, change: impl Fn(&mut Case), expect: &str) {
    for glances in [true, false] {
        let mut case = chain_case(three);
        case.world.glances = glances;
        change(&mut case);
        let verdict = judge(&case.recorded, case.recorded_socket.as_ref(), &case.world);
        assert_eq!(format!("{}: {}", verdict.liveness, verdict.reason), expect, "glances: {glances}");
    }
}

#[test]
fn chain_every_member_running_rests_on_the_owner() {
    check_chain(false, |_| {}, "alive: owner 4242 running since tick 870");
    check_chain(true, |_| {}, "alive: owner 4242 running since tick 870");
}

#[test]
fn chain_the_loader_gone_leaves_the_session_alive_on_the_native_process() {
    check_chain(
        false,
        |case| set(case, 4242, Err(OpenProcessError::Gone)),
        "alive: owner 4242 is gone; harness process 4250 still running since tick 990",
    );
    // Every way a member can be proven gone counts as gone, and the reason
    // names each member that ended before the one the verdict rests on.
    check_chain(
        true,
        |case| {
            process(case).exited = Ok(true);
            set(case, 4250, Ok(MadeUpProcess { pidfs_inode: Some(1), ..running(&member(4250, 990)) }));
        },
        "alive: owner 4242 has exited (zombie); harness process 4250 now names another process \
         (pidfs inode 1, not 4250); harness process 4260 still running since tick 995",
    );
    // The innermost gone, the owner still there: alive on the owner.
    check_chain(
        false,
        |case| set(case, 4250, Err(OpenProcessError::Gone)),
        "alive: owner 4242 running since tick 870",
    );
}

#[test]
fn chain_is_dead_only_when_every_member_is_provably_gone() {
    check_chain(
        false,
        |case| {
            set(case, 4242, Err(OpenProcessError::Gone));
            set(case, 4250, Err(OpenProcessError::Gone));
        },
        "dead: owner 4242 is gone; harness process 4250 is gone",
    );
    check_chain(
        true,
        |case| {
            process(case).pidfs_inode = None;
            process(case).proc = Ok(ProcIdentity { uid: 1000, start_ticks: 5, terminal: 0 });
            set(case, 4250, Ok(MadeUpProcess { exited: Ok(true), ..running(&member(4250, 990)) }));
            set(case, 4260, Err(OpenProcessError::NotAProcess));
        },
        "dead: owner 4242 now names a process started at tick 5, not 870; harness process 4250 has \
         exited (zombie); harness process 4260 is not a process now (a thread of another process, or one \
         being reaped)",
    );
    // A reused pid is not its member: a newcomer at 4250 keeps nothing
    // alive. (With no pidfs inode to name it, the uid is the witness.)
    check_chain(
        false,
        |case| {
            set(case, 4242, Err(OpenProcessError::Gone));
            set(
                case,
                4250,
                Ok(MadeUpProcess {
                    pidfs_inode: None,
                    proc: Ok(ProcIdentity { uid: 0, start_ticks: 990, terminal: 0 }),
                    ..running(&member(4250, 990))
                }),
            );
        },
        "dead: owner 4242 is gone; harness process 4250 now belongs to uid 0, not 1000",
    );
}

#[test]
fn chain_a_member_that_cannot_be_examined_makes_it_unknown_never_dead() {
    check_chain(
        false,
        |case| {
            set(case, 4242, Err(OpenProcessError::Gone));
            unproven(case, 4250, 990);
        },
        "unknown: owner 4242 is gone; /proc/4250 unreadable: permission denied",
    );
    check_chain(
        false,
        |case| {
            set(case, 4242, Err(OpenProcessError::Other("Operation not permitted".to_owned())));
            set(case, 4250, Err(OpenProcessError::Gone));
        },
        "unknown: owner 4242 cannot be opened: Operation not permitted; harness process 4250 is gone",
    );
    // One member alive is enough, whatever the others say.
    check_chain(
        true,
        |case| {
            set(case, 4242, Err(OpenProcessError::Gone));
            set(case, 4250, Err(OpenProcessError::Other("Operation not permitted".to_owned())));
        },
        "alive: owner 4242 is gone; harness process 4260 still running since tick 995",
    );
}

#[test]
fn chain_the_shared_rules_still_decide_for_the_whole_chain() {
    // Boot and namespaces are the whole chain's.
    check_chain(
        false,
        |case| case.world.boot_id = Ok("boot-b".to_owned()),
        "dead: recorded in an earlier boot",
    );
    check_chain(
        false,
        |case| case.world.namespaces = Ok(Namespaces { pid_ns: 99, time_ns: 12, user_ns: INITIAL }),
        "unknown: recorded in another pid namespace",
    );
    check_chain(
        false,
        |case| {
            case.world.boot_id = Err(io::ErrorKind::PermissionDenied);
            set(case, 4242, Err(OpenProcessError::Gone));
        },
        "unknown: boot id unreadable: permission denied; a pid cannot be placed on this machine's kernel \
         without it",
    );
    // The socket is the session's: gone, it ends the session unless a
    // member still runs, which leaves it unknown and names that member.
    check_chain(
        false,
        |case| {
            case.recorded_socket = Some(socket(5, 6, 7));
            set(case, 4242, Err(OpenProcessError::Gone));
            case.world.socket = Err(io::ErrorKind::NotFound);
        },
        &format!("unknown: socket {SOCKET_PATH} is gone while harness process 4250 still runs"),
    );
    check_chain(
        false,
        |case| {
            case.recorded_socket = Some(socket(5, 6, 7));
            set(case, 4242, Err(OpenProcessError::Gone));
            unproven(case, 4250, 990);
            case.world.socket = Err(io::ErrorKind::NotFound);
        },
        &format!(
            "unknown: socket {SOCKET_PATH} is gone while harness process 4250 still exists and may be the session's"
        ),
    );
    check_chain(
        false,
        |case| {
            case.recorded_socket = Some(socket(5, 6, 7));
            set(case, 4242, Err(OpenProcessError::Gone));
            set(case, 4250, Err(OpenProcessError::Other("Operation not permitted".to_owned())));
            case.world.socket = Err(io::ErrorKind::NotFound);
        },
        &format!("dead: socket {SOCKET_PATH} is gone"),
    );
}

#[test]
fn chain_uids_are_compared_only_within_the_recorded_user_namespace() {
    // Read from another user namespace the uid proves nothing: the member
    // is alive only on its pidfs inode and start tick.
    let elsewhere = Namespaces { pid_ns: 11, time_ns: 12, user_ns: 4026532999 };
    check_chain(
        false,
        |case| {
            case.world.namespaces = Ok(elsewhere);
            set(case, 4242, Err(OpenProcessError::Gone));
            set(
                case,
                4250,
                Ok(MadeUpProcess {
                    proc: Ok(ProcIdentity { uid: 65534, start_ticks: 990, terminal: 0 }),
                    ..running(&member(4250, 990))
                }),
            );
        },
        "alive: owner 4242 is gone; harness process 4250 still running since tick 990",
    );
    check_chain(
        false,
        |case| {
            case.world.namespaces = Ok(elsewhere);
            set(case, 4242, Err(OpenProcessError::Gone));
            set(
                case,
                4250,
                Ok(MadeUpProcess {
                    pidfs_inode: None,
                    proc: Ok(ProcIdentity { uid: 65534, start_ticks: 990, terminal: 0 }),
                    ..running(&member(4250, 990))
                }),
            );
        },
        "unknown: owner 4242 is gone; harness process 4250 started at tick 990 as recorded, but its uid \
         cannot be compared (recorded in user namespace 4026531837, read from user namespace 4026532999) \
         and no pidfs inode proves it is the same process",
    );
}
