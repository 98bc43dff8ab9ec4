//! Owner identity and the verdict against real processes: children that run,
//! stop, exit, linger as zombies, rename themselves, lose their main thread,
//! hide behind `hidepid`, and pids that are forcibly reused inside a pid
//! namespace. The tables (`verdict_table.rs`, `resolve_table.rs`) prove each
//! rule's logic; this file proves the kernel really says what the rules
//! assume.
//!
//! Proven here with real processes:
//! - §4.2 capture: the start tick is field 22 counted after the *last* `)`
//!   even when the comm is `a) R 1 2 3`; a pidfs inode is recorded; a pid
//!   with no process, a thread id, and a zombie are refused.
//! - §5 rule 1: another boot id → dead (recorded boot id changed on a live
//!   process).
//! - §5 rule 2: another pid namespace or time namespace → unknown (recorded
//!   namespace changed on a live process).
//! - §5 rule 3: pid gone (killed and reaped) → dead; pid now naming a thread
//!   of another process (forced reuse by a thread) → dead.
//! - §5 rule 4: forced pid reuse with the same pid and the same start tick →
//!   dead through the pidfs inode (and, without pidfs, indistinguishable);
//!   forced reuse at a later tick without pidfs → dead through the start
//!   tick; start tick or uid changed on a live process → dead where no
//!   pidfs inode names it (an agreeing one proves it without `/proc`);
//!   `/proc/<pid>` unreadable while the pid exists (`hidepid=invisible`:
//!   not found, `hidepid=noaccess`: permission denied) → alive through the
//!   pidfs inode, else unknown, never dead; an owner that turns itself
//!   non-dumpable stays alive.
//! - §5 rule 5: zombie (killed, not reaped) → dead; main thread exited while
//!   another thread runs → alive; stopped by SIGSTOP → alive.
//! - §5 rule 6: socket removed or replaced while the owner runs → unknown;
//!   socket path that cannot be stat'ed (symlink loop) → unknown.
//! - §5 rule 7: a live child, and this process, are alive.
//!
//! Proven only by the tables: an unreadable boot id or own namespaces →
//! unknown; a pidfd that cannot be opened for another reason (EPERM,
//! ENOSYS) → unknown, with the socket still examined; a malformed
//! `/proc/<pid>/stat`; a pidfd that cannot be polled; the socket's mtime
//! fallback when dev and ino were not recorded; a kernel without pidfs on
//! either side; which rule wins when several fire; the joining of several
//! unknown reasons; and all of owner resolution (§4.1).
//!
//! Tests that need namespaces run a copy of this test binary under
//! `unshare --user --map-root-user --pid --fork --mount-proc` and fail, with
//! the reason, where that is not possible; they never pass silently.

use std::ffi::CStr;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use nix::libc;
use nix::sys::signal::{self, SaFlags, SigAction, SigHandler, SigSet, Signal};
use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid, waitpid};
use nix::unistd::{ForkResult, Uid};
use owner_liveness::{
    CaptureError, Liveness, OwnerIdentity, Pid, SocketIdentity, Verdict, capture_identity, judge_now,
    read_step,
};

/// How long any condition is polled for before a test gives up. Generous:
/// the machine may be busy with other builds.
const PATIENCE: Duration = Duration::from_secs(30);

/// The environment variable that turns a re-executed copy of this binary
/// into a helper process, and the test that then acts as the helper.
const HELPER_MODE_VARIABLE: &str = "OWNER_LIVENESS_TEST_HELPER_MODE";
/// Its full test name, module path included (this file is a module of the
/// `owner_liveness` test binary).
const HELPER_ENTRY_POINT: &str = "real_processes::reexecuted_helper_entry_point_answers_a_ping";
/// What a helper says to its parent follows this marker. libtest's own
/// output is skipped, and may even precede the marker on the same line
/// (`test <name> ... ` is printed without a newline before the test runs).
const HELPER_LINE_PREFIX: &str = "helper: ";

// ---------------------------------------------------------------------------
// Processes in this test process: alive, gone, zombie, stopped.
// ---------------------------------------------------------------------------

#[test]
fn this_process_is_alive() {
    let identity = capture(own_pid());
    assert!(identity.pidfs_ino.is_some(), "this kernel should have pidfs (Linux 6.9+): {identity:?}");
    let verdict = judge_now(&identity, None);
    assert_eq!(verdict.liveness, Liveness::Alive, "{verdict:?}");
    assert_eq!(verdict.reason, format!("pid {} running since tick {}", identity.pid, identity.start_ticks));
}

#[test]
fn a_running_child_is_alive() {
    let child = fork_pausing_child(do_nothing);
    let identity = capture(child.pid());
    let verdict = judge_now(&identity, None);
    assert_eq!(verdict.liveness, Liveness::Alive, "{verdict:?}");
}

#[test]
fn a_killed_and_reaped_child_is_dead_because_its_pid_is_gone() {
    let mut child = fork_pausing_child(do_nothing);
    let identity = capture(child.pid());
    child.kill_and_reap();
    let verdict = judge_now(&identity, None);
    assert_eq!(verdict.liveness, Liveness::Dead, "{verdict:?}");
    assert_eq!(verdict.reason, format!("pid {} is gone", identity.pid));
}

#[test]
fn a_killed_child_not_yet_reaped_is_dead_as_a_zombie() {
    let mut child = fork_pausing_child(do_nothing);
    let identity = capture(child.pid());
    child.kill_leaving_zombie();
    assert_eq!(proc_state(child.pid()), 'Z');
    let verdict = judge_now(&identity, None);
    assert_eq!(verdict.liveness, Liveness::Dead, "{verdict:?}");
    assert_eq!(verdict.reason, format!("pid {} has exited (zombie)", identity.pid));
}

#[test]
fn a_zombie_cannot_be_captured() {
    let mut child = fork_pausing_child(do_nothing);
    child.kill_leaving_zombie();
    assert_eq!(capture_identity(child.pid()), Err(CaptureError::NotRunning(child.pid())));
}

#[test]
fn a_pid_with_no_process_cannot_be_captured() {
    let mut child = fork_pausing_child(do_nothing);
    let pid = child.pid();
    child.kill_and_reap();
    assert_eq!(capture_identity(pid), Err(CaptureError::NotRunning(pid)));
}

#[test]
fn a_stopped_child_is_alive() {
    let child = fork_pausing_child(do_nothing);
    let identity = capture(child.pid());
    signal::kill(child.nix_pid(), Signal::SIGSTOP).expect("stop the child");
    let stopped = waitpid(child.nix_pid(), Some(WaitPidFlag::WUNTRACED)).expect("wait for the stop");
    assert!(matches!(stopped, WaitStatus::Stopped(_, Signal::SIGSTOP)), "{stopped:?}");
    assert_eq!(proc_state(child.pid()), 'T');
    let verdict = judge_now(&identity, None);
    assert_eq!(verdict.liveness, Liveness::Alive, "{verdict:?}");
}

#[test]
fn a_process_whose_main_thread_exited_while_another_thread_runs_is_alive() {
    let mut helper = Helper::spawn("main-thread-exits");
    helper.expect("started");
    let identity = capture(helper.pid());
    helper.send("exit the main thread");
    helper.expect("main thread exited");
    // /proc shows the leader as a zombie: state Z alone is not death.
    assert_eq!(proc_state(helper.pid()), 'Z');
    let verdict = judge_now(&identity, None);
    assert_eq!(verdict.liveness, Liveness::Alive, "{verdict:?}");
    // Without a pidfs inode (a harness's own file), where a glance at
    // `/proc` sees the zombie leader and the pidfd must decide.
    let without_pidfs = OwnerIdentity { pidfs_ino: None, ..identity.clone() };
    let verdict = judge_now(&without_pidfs, None);
    assert_eq!(verdict.liveness, Liveness::Alive, "{verdict:?}");
    // A capture now still sees the process and the same identity.
    assert_eq!(capture(helper.pid()), identity);
}

// ---------------------------------------------------------------------------
// A recorded identity that no longer matches a live process.
// ---------------------------------------------------------------------------

#[test]
fn a_live_process_judged_against_a_changed_record() {
    let child = fork_pausing_child(do_nothing);
    let identity = capture(child.pid());
    let pid = identity.pid;
    let check = |change: fn(&mut OwnerIdentity), expect: Liveness, reason: String| {
        let mut recorded = identity.clone();
        change(&mut recorded);
        let verdict = judge_now(&recorded, None);
        assert_eq!(verdict, Verdict { liveness: expect, reason }, "record {recorded:?}");
    };
    check(|_| {}, Liveness::Alive, format!("pid {pid} running since tick {}", identity.start_ticks));
    // An agreeing pidfs inode names the very process: `/proc` is not read,
    // so a start tick changed in the record is not even seen.
    check(
        |recorded| recorded.start_ticks += 1,
        Liveness::Alive,
        format!("pid {pid} running since tick {}", identity.start_ticks + 1),
    );
    check(
        |recorded| {
            recorded.start_ticks += 1;
            recorded.pidfs_ino = None;
        },
        Liveness::Dead,
        format!(
            "pid {pid} now names a process started at tick {}, not {}",
            identity.start_ticks,
            identity.start_ticks + 1
        ),
    );
    // Without a pidfs inode the uid witnesses pid reuse; with one that
    // agrees, a uid change is the same process changing its uid.
    check(
        |recorded| {
            recorded.uid = recorded.uid.wrapping_add(1);
            recorded.pidfs_ino = None;
        },
        Liveness::Dead,
        format!("pid {pid} now belongs to uid {}, not {}", identity.uid, identity.uid.wrapping_add(1)),
    );
    check(
        |recorded| recorded.uid = recorded.uid.wrapping_add(1),
        Liveness::Alive,
        format!("pid {pid} running since tick {}", identity.start_ticks),
    );
    check(
        |recorded| recorded.boot_id = "00000000-0000-0000-0000-000000000000".to_owned(),
        Liveness::Dead,
        "recorded in an earlier boot".to_owned(),
    );
    check(|recorded| recorded.pid_ns += 1, Liveness::Unknown, "recorded in another pid namespace".to_owned());
    // Start ticks recorded with a machine are on the initial time
    // namespace's clock, so a registrar in another time namespace changes
    // nothing; an older record's ticks were its registrar's own.
    check(
        |recorded| recorded.time_ns += 1,
        Liveness::Alive,
        format!("pid {pid} running since tick {}", identity.start_ticks),
    );
    check(
        |recorded| {
            recorded.time_ns += 1;
            recorded.machine = None;
        },
        Liveness::Unknown,
        "recorded in another time namespace".to_owned(),
    );
    check(
        |recorded| {
            recorded.boot_id = "00000000-0000-0000-0000-000000000000".to_owned();
            recorded.machine = Some("hostname:another-machine".to_owned());
        },
        Liveness::Unknown,
        "recorded on another machine (hostname:another-machine)".to_owned(),
    );
    let pidfs_ino = identity.pidfs_ino.expect("this kernel should have pidfs (Linux 6.9+)");
    check(
        |recorded| recorded.pidfs_ino = recorded.pidfs_ino.map(|inode| inode + 1),
        Liveness::Dead,
        format!("pid {pid} now names another process (pidfs inode {pidfs_ino}, not {})", pidfs_ino + 1),
    );
}

#[test]
fn a_record_whose_pid_now_names_a_thread_is_dead() {
    let own = capture(own_pid());
    let (tid_sender, tid_receiver) = std::sync::mpsc::channel();
    let (done_sender, done_receiver) = std::sync::mpsc::channel::<()>();
    let thread = std::thread::spawn(move || {
        tid_sender.send(nix::unistd::gettid().as_raw()).unwrap();
        let _ = done_receiver.recv();
    });
    let tid = Pid::new(u32::try_from(tid_receiver.recv().unwrap()).unwrap()).unwrap();
    assert_eq!(capture_identity(tid), Err(CaptureError::NotRunning(tid)));
    let recorded = OwnerIdentity { pid: tid, ..own };
    let verdict = judge_now(&recorded, None);
    done_sender.send(()).unwrap();
    thread.join().unwrap();
    assert_eq!(verdict.liveness, Liveness::Dead, "{verdict:?}");
    assert!(verdict.reason.contains("is not a process now"), "{verdict:?}");
}

/// The kernel hands the files of a non-dumpable process's `/proc/<pid>` to
/// root, but not the directory. Pins that the uid is read from the
/// directory: taking it from the `stat` file (say, by `fstat` on the fd just
/// read) would judge a live owner that hardens itself "now belongs to uid
/// 0", dead.
#[test]
fn a_live_owner_that_makes_itself_non_dumpable_stays_alive() {
    let mut helper = Helper::spawn("becomes-non-dumpable");
    let helper_uid: u32 = helper.expect("real uid ").parse().unwrap();
    assert_ne!(helper_uid, 0, "the helper drops root so that an owner change to root is visible");
    let identity = capture(helper.pid());
    assert_eq!(identity.uid, helper_uid);
    helper.send("become non-dumpable");
    helper.expect("non-dumpable");
    let stat_file_owner = std::fs::metadata(format!("/proc/{}/stat", helper.pid())).unwrap().uid();
    assert_eq!(stat_file_owner, 0, "the trap this test is about did not happen");
    let verdict = judge_now(&identity, None);
    assert_eq!(verdict.liveness, Liveness::Alive, "{verdict:?}");
    // Without a pidfs inode, proven at a glance at `/proc`: by the
    // directory's owner, not the stat file's.
    let without_pidfs = OwnerIdentity { pidfs_ino: None, ..identity.clone() };
    let verdict = judge_now(&without_pidfs, None);
    assert_eq!(verdict.liveness, Liveness::Alive, "{verdict:?}");
}

// ---------------------------------------------------------------------------
// A comm that imitates stat fields.
// ---------------------------------------------------------------------------

const IMITATING_COMM: &CStr = c"a) R 1 2 3";

fn rename_to_imitating_comm() {
    // SAFETY: prctl with a valid NUL-terminated name; async-signal-safe.
    unsafe { libc::prctl(libc::PR_SET_NAME, IMITATING_COMM.as_ptr(), 0, 0, 0) };
}

#[test]
fn a_comm_that_imitates_stat_fields_does_not_shift_the_start_tick() {
    let child = fork_pausing_child(rename_to_imitating_comm);
    let comm_path = format!("/proc/{}/comm", child.pid());
    wait_until("the child renamed itself", || {
        std::fs::read_to_string(&comm_path).is_ok_and(|comm| comm == "a) R 1 2 3\n")
    });
    let identity = capture(child.pid());

    let stat = std::fs::read_to_string(format!("/proc/{}/stat", child.pid())).unwrap();
    let after_comm = &stat[stat.rfind(')').unwrap() + 1..];
    let field_22: u64 = after_comm.split_whitespace().nth(19).unwrap().parse().unwrap();
    assert_eq!(identity.start_ticks, field_22, "stat line {stat:?}");
    // Counting fields from the start of the line would land elsewhere: the
    // rename really does shift them.
    let naive_field_22 = stat.split_whitespace().nth(21).unwrap();
    assert_ne!(naive_field_22, field_22.to_string(), "stat line {stat:?}");

    let step = read_step(child.pid()).unwrap();
    assert_eq!(step.comm, "a) R 1 2 3");
    assert_eq!(step.parent, Some(own_pid()));
    assert_eq!(judge_now(&identity, None).liveness, Liveness::Alive);
}

// ---------------------------------------------------------------------------
// The harness's socket.
// ---------------------------------------------------------------------------

#[test]
fn a_recorded_socket_removed_replaced_or_unreachable() {
    let directory = TemporaryDirectory::new();
    let socket_path = directory.path().join("messaging.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&socket_path).unwrap();
    let recorded_socket = SocketIdentity::capture(&socket_path).unwrap();
    let identity = capture(own_pid());
    let verdict_with = |socket: &SocketIdentity| judge_now(&identity, Some(socket));
    let shown = socket_path.display();
    let owner = own_pid();

    assert_eq!(verdict_with(&recorded_socket).liveness, Liveness::Alive);

    // The owner (this test) still runs, so a socket replaced or gone says
    // the session is ending, not that it ended. Replaced: a new socket
    // renamed over the path while the old one still existed, so the inode
    // cannot have been recycled.
    let replacement_path = directory.path().join("replacement.sock");
    let _replacement = std::os::unix::net::UnixListener::bind(&replacement_path).unwrap();
    std::fs::rename(&replacement_path, &socket_path).unwrap();
    assert_eq!(
        verdict_with(&recorded_socket),
        Verdict {
            liveness: Liveness::Unknown,
            reason: format!("socket {shown} was replaced while pid {owner} still runs")
        }
    );

    std::fs::remove_file(&socket_path).unwrap();
    assert_eq!(
        verdict_with(&recorded_socket),
        Verdict {
            liveness: Liveness::Unknown,
            reason: format!("socket {shown} is gone while pid {owner} still runs")
        }
    );

    // A path that cannot be examined (a symlink loop) proves nothing.
    std::os::unix::fs::symlink(&socket_path, &socket_path).unwrap();
    let verdict = verdict_with(&recorded_socket);
    assert_eq!(verdict.liveness, Liveness::Unknown, "{verdict:?}");
    assert!(verdict.reason.starts_with(&format!("socket {shown} unreadable: ")), "{verdict:?}");
}

// ---------------------------------------------------------------------------
// Inside fresh user, pid and mount namespaces.
// ---------------------------------------------------------------------------

#[test]
fn forced_pid_reuse_with_the_same_start_tick_is_dead_through_the_pidfs_inode() {
    run_helper_in_new_namespaces("pid-reuse-same-tick");
}

#[test]
fn forced_pid_reuse_at_a_later_tick_is_dead_through_the_start_tick_without_pidfs() {
    run_helper_in_new_namespaces("pid-reuse-later-tick");
}

#[test]
fn forced_pid_reuse_by_a_thread_is_dead() {
    run_helper_in_new_namespaces("pid-reuse-by-thread");
}

#[test]
fn proc_hidden_by_hidepid_invisible_while_the_pid_exists_is_unknown_never_dead() {
    run_helper_in_new_namespaces("hidepid-invisible");
}

#[test]
fn proc_denied_by_hidepid_noaccess_while_the_pid_exists_is_unknown_never_dead() {
    run_helper_in_new_namespaces("hidepid-noaccess");
}

// ---------------------------------------------------------------------------
// The helper: this test binary, re-executed.
// ---------------------------------------------------------------------------

/// In a re-executed copy of this binary, acts out the helper mode named by
/// the environment. Run normally, it checks that such a copy starts and
/// answers, which every helper-based test relies on.
#[test]
fn reexecuted_helper_entry_point_answers_a_ping() {
    match std::env::var(HELPER_MODE_VARIABLE) {
        Ok(mode) => act_as_helper(&mode),
        Err(_) => {
            let mut helper = Helper::spawn("ping");
            let answer = helper.expect("pong from ");
            assert_eq!(answer, helper.pid().to_string());
        }
    }
}

fn act_as_helper(mode: &str) {
    match mode {
        "ping" => say(&format!("pong from {}", std::process::id())),
        "main-thread-exits" => helper_main_thread_exits(),
        "becomes-non-dumpable" => helper_becomes_non_dumpable(),
        "pid-reuse-same-tick" => helper_pid_reuse_same_tick(),
        "pid-reuse-later-tick" => helper_pid_reuse_later_tick(),
        "pid-reuse-by-thread" => helper_pid_reuse_by_thread(),
        "hidepid-invisible" => helper_hidden_proc("invisible", "not found"),
        "hidepid-noaccess" => helper_hidden_proc("noaccess", "permission denied"),
        other => panic!("unknown helper mode {other:?}"),
    }
    say(&format!("{mode} done"));
}

fn say(line: &str) {
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{HELPER_LINE_PREFIX}{line}").unwrap();
    stdout.flush().unwrap();
}

fn read_command() -> Option<String> {
    let mut line = String::new();
    let read = std::io::stdin().read_line(&mut line).unwrap();
    (read > 0).then(|| line.trim_end().to_owned())
}

extern "C" fn exit_this_thread_only(_signal: libc::c_int) {
    // SAFETY: SYS_exit ends only the calling thread, and is async-signal-safe.
    unsafe { libc::syscall(libc::SYS_exit, 0) };
}

/// Ends the thread-group leader while a worker thread keeps the process
/// running. libtest may run this test on the main thread or on another, so
/// the work is done on a fresh thread either way and the leader is ended by
/// a signal aimed at it alone.
fn helper_main_thread_exits() {
    say("started");
    assert_eq!(read_command().as_deref(), Some("exit the main thread"));
    let action =
        SigAction::new(SigHandler::Handler(exit_this_thread_only), SaFlags::empty(), SigSet::empty());
    // SAFETY: the handler only makes a raw syscall.
    unsafe { signal::sigaction(Signal::SIGUSR1, &action) }.unwrap();
    let worker = std::thread::spawn(|| {
        let pid = std::process::id() as libc::pid_t;
        // SAFETY: tgkill with our own tgid and the leader's tid (= tgid).
        let sent = unsafe { libc::syscall(libc::SYS_tgkill, pid, pid, libc::SIGUSR1) };
        assert_eq!(sent, 0, "tgkill: {}", std::io::Error::last_os_error());
        wait_until("the main thread exited", || proc_state(own_pid()) == 'Z');
        say("main thread exited");
        // Keep running until the parent closes stdin, then end every thread.
        while read_command().is_some() {}
        std::process::exit(0);
    });
    // If this is the main thread, the signal ends it here; if not, it waits
    // for the worker, which never returns.
    let _ = worker.join();
}

/// Drops root if it has it (a non-root uid is what makes the `/proc` owner
/// change visibly), stays dumpable until told, then becomes non-dumpable.
fn helper_becomes_non_dumpable() {
    if Uid::effective().is_root() {
        let nobody = Uid::from_raw(65534);
        nix::unistd::setresuid(nobody, nobody, nobody).unwrap();
    }
    // A uid change resets dumpability to the system default; the test wants
    // a process that starts dumpable, as a harness does.
    nix::sys::prctl::set_dumpable(true).unwrap();
    say(&format!("real uid {}", Uid::current()));
    assert_eq!(read_command().as_deref(), Some("become non-dumpable"));
    nix::sys::prctl::set_dumpable(false).unwrap();
    say("non-dumpable");
    while read_command().is_some() {}
    std::process::exit(0);
}

/// Records a child, kills and reaps it, and makes the next fork reuse its
/// pid until the newcomer also has the same start tick: the case only the
/// pidfs inode can tell apart.
fn helper_pid_reuse_same_tick() {
    let tick = TickClock::new();
    let deadline = Instant::now() + PATIENCE;
    let mut attempts = 0;
    loop {
        attempts += 1;
        assert!(Instant::now() < deadline, "no same-tick pid reuse in {attempts} attempts");
        // Start right after a tick begins, so the whole dance fits in it.
        tick.wait_for_the_start_of_a_tick();
        let Some((recorded, newcomer)) = record_then_reuse_pid() else { continue };
        let newcomer_identity = capture(newcomer.pid());
        if newcomer_identity.start_ticks != recorded.start_ticks {
            continue;
        }
        let pid = recorded.pid;
        let recorded_inode = recorded.pidfs_ino.expect("this kernel should have pidfs (Linux 6.9+)");
        let newcomer_inode = newcomer_identity.pidfs_ino.unwrap();
        let verdict = judge_now(&recorded, None);
        assert_eq!(
            verdict,
            Verdict {
                liveness: Liveness::Dead,
                reason: format!(
                    "pid {pid} now names another process (pidfs inode {newcomer_inode}, not {recorded_inode})"
                ),
            }
        );
        // With equal pid and start tick, only pidfs can tell the two apart:
        // a record without a pidfs inode is fooled. This is the limit the
        // pidfs inode exists to remove, pinned so that the verdict above is
        // known to come from the inode and nothing else.
        let without_pidfs = OwnerIdentity { pidfs_ino: None, ..recorded.clone() };
        assert_eq!(judge_now(&without_pidfs, None).liveness, Liveness::Alive);
        say(&format!("pid {pid} reused at tick {} after {attempts} attempts", recorded.start_ticks));
        return;
    }
}

/// Records a child without its pidfs inode (as on a kernel without pidfs),
/// kills and reaps it, waits for the next tick, and reuses its pid.
fn helper_pid_reuse_later_tick() {
    let tick = TickClock::new();
    let deadline = Instant::now() + PATIENCE;
    loop {
        assert!(Instant::now() < deadline, "no pid reuse at a later tick");
        let first = fork_pausing_child(do_nothing);
        let recorded = capture(first.pid());
        drop(first);
        wait_until("a later tick", || tick.now() > recorded.start_ticks);
        let Some(newcomer) = fork_child_at_pid(recorded.pid) else { continue };
        let newcomer_ticks = capture(newcomer.pid()).start_ticks;
        assert!(newcomer_ticks > recorded.start_ticks);
        let pid = recorded.pid;
        let without_pidfs = OwnerIdentity { pidfs_ino: None, ..recorded.clone() };
        assert_eq!(
            judge_now(&without_pidfs, None),
            Verdict {
                liveness: Liveness::Dead,
                reason: format!(
                    "pid {pid} now names a process started at tick {newcomer_ticks}, not {}",
                    recorded.start_ticks
                ),
            }
        );
        let verdict = judge_now(&recorded, None);
        assert_eq!(verdict.liveness, Liveness::Dead, "{verdict:?}");
        assert!(verdict.reason.contains("pidfs inode"), "{verdict:?}");
        return;
    }
}

/// Records a child, kills and reaps it, and hands its pid to a new thread
/// of this process: the pid then names a thread, not a process.
fn helper_pid_reuse_by_thread() {
    let deadline = Instant::now() + PATIENCE;
    loop {
        assert!(Instant::now() < deadline, "no pid reuse by a thread");
        let first = fork_pausing_child(do_nothing);
        let recorded = capture(first.pid());
        drop(first);
        set_last_pid(recorded.pid.get() - 1);
        let (tid_sender, tid_receiver) = std::sync::mpsc::channel();
        let (done_sender, done_receiver) = std::sync::mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            tid_sender.send(nix::unistd::gettid().as_raw()).unwrap();
            let _ = done_receiver.recv();
        });
        let tid = tid_receiver.recv().unwrap();
        let verdict = judge_now(&recorded, None);
        // Without a pidfs inode (a harness's own file): `/proc/<tid>` shows
        // the thread, at a glance, likely with the recorded start tick.
        let verdict_without_pidfs = judge_now(&OwnerIdentity { pidfs_ino: None, ..recorded.clone() }, None);
        let capture = capture_identity(recorded.pid);
        done_sender.send(()).unwrap();
        thread.join().unwrap();
        if tid != recorded.pid.as_raw() {
            continue;
        }
        let pid = recorded.pid;
        assert_eq!(
            verdict,
            Verdict {
                liveness: Liveness::Dead,
                reason: format!(
                    "pid {pid} is not a process now (a thread of another process, or one being reaped)"
                ),
            }
        );
        assert_eq!(verdict_without_pidfs, verdict);
        assert_eq!(capture, Err(CaptureError::NotRunning(pid)));
        return;
    }
}

/// Judges a live, non-dumpable process after remounting `/proc` with
/// `hidepid=<hidepid>` and giving up the capabilities that see past it. The
/// pidfd still opens: with the pidfs inode it proves the process alive
/// without `/proc`; without one (a record from a kernel before pidfs) the
/// verdict must be unknown, never dead.
fn helper_hidden_proc(hidepid: &str, expected_error: &str) {
    // A child inherits dumpability: fork it non-dumpable, then restore ours.
    nix::sys::prctl::set_dumpable(false).unwrap();
    let target = fork_pausing_child(do_nothing);
    nix::sys::prctl::set_dumpable(true).unwrap();
    let identity = capture(target.pid());
    let own_identity = capture(own_pid());

    // hidepid exempts the members of one group, by default the global root
    // group, which this helper belongs to when the tests run as root. Name
    // a group that does not exist in this user namespace: no one is exempt.
    nix::mount::mount(
        Some("proc"),
        "/proc",
        Some("proc"),
        nix::mount::MsFlags::empty(),
        Some(format!("hidepid={hidepid},gid=65534").as_str()),
    )
    .expect("mount a proc with hidepid over /proc");
    drop_effective_capabilities();

    let pid = identity.pid;
    assert!(identity.pidfs_ino.is_some(), "this kernel gives pidfds no pidfs inode: {identity:?}");
    assert_eq!(
        judge_now(&identity, None),
        Verdict {
            liveness: Liveness::Alive,
            reason: format!("pid {pid} running since tick {}", identity.start_ticks)
        }
    );
    let without_pidfs = OwnerIdentity { pidfs_ino: None, ..identity.clone() };
    assert_eq!(
        judge_now(&without_pidfs, None),
        Verdict { liveness: Liveness::Unknown, reason: format!("/proc/{pid} unreadable: {expected_error}") }
    );
    assert!(
        matches!(capture_identity(pid), Err(CaptureError::ProcUnreadable { .. })),
        "{:?}",
        capture_identity(pid)
    );
    // This process stays visible to itself, so the mount is not simply broken.
    assert_eq!(judge_now(&own_identity, None).liveness, Liveness::Alive);
}

/// Clears this thread's effective capabilities (CAP_SYS_PTRACE among them,
/// which would see through hidepid).
fn drop_effective_capabilities() {
    #[repr(C)]
    struct CapabilityHeader {
        version: u32,
        pid: libc::c_int,
    }
    #[repr(C)]
    #[derive(Clone, Copy, Default)]
    struct CapabilityData {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;
    let mut header = CapabilityHeader { version: LINUX_CAPABILITY_VERSION_3, pid: 0 };
    let mut data = [CapabilityData::default(); 2];
    // SAFETY: a version-3 header and the two data structs version 3 wants.
    let got = unsafe { libc::syscall(libc::SYS_capget, &mut header, data.as_mut_ptr()) };
    assert_eq!(got, 0, "capget: {}", std::io::Error::last_os_error());
    for part in &mut data {
        part.effective = 0;
    }
    // SAFETY: as above; lowering the effective set is always allowed.
    let set = unsafe { libc::syscall(libc::SYS_capset, &mut header, data.as_ptr()) };
    assert_eq!(set, 0, "capset: {}", std::io::Error::last_os_error());
}

/// Forks and records a child, kills and reaps it, and forks a newcomer at
/// the same pid. `None` when the pid did not come back (then nothing leaks:
/// both children are gone).
fn record_then_reuse_pid() -> Option<(OwnerIdentity, ForkedChild)> {
    let first = fork_pausing_child(do_nothing);
    let recorded = capture(first.pid());
    drop(first);
    let newcomer = fork_child_at_pid(recorded.pid)?;
    Some((recorded, newcomer))
}

/// Makes the next fork in this pid namespace get `pid`, and forks.
fn fork_child_at_pid(pid: Pid) -> Option<ForkedChild> {
    set_last_pid(pid.get() - 1);
    let child = fork_pausing_child(do_nothing);
    (child.pid() == pid).then_some(child)
}

fn set_last_pid(last: u32) {
    std::fs::write("/proc/sys/kernel/ns_last_pid", last.to_string())
        .expect("write ns_last_pid (needs CAP_SYS_ADMIN over this pid namespace)");
}

/// The clock that `/proc/<pid>/stat` start times count: boot time in
/// `USER_HZ` ticks.
struct TickClock {
    nanoseconds_per_tick: u64,
}

impl TickClock {
    fn new() -> TickClock {
        // SAFETY: sysconf has no memory arguments.
        let ticks_per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        assert!(ticks_per_second > 0);
        TickClock { nanoseconds_per_tick: 1_000_000_000 / ticks_per_second as u64 }
    }

    fn boot_time_nanoseconds() -> u64 {
        let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: one valid timespec to fill.
        let read = unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut now) };
        assert_eq!(read, 0);
        now.tv_sec as u64 * 1_000_000_000 + now.tv_nsec as u64
    }

    fn now(&self) -> u64 {
        Self::boot_time_nanoseconds() / self.nanoseconds_per_tick
    }

    /// Waits until at most a fifth of the current tick has passed.
    fn wait_for_the_start_of_a_tick(&self) {
        let early = self.nanoseconds_per_tick / 5;
        wait_until("the start of a tick", || {
            Self::boot_time_nanoseconds() % self.nanoseconds_per_tick < early
        });
    }
}

fn run_helper_in_new_namespaces(mode: &str) {
    let executable = std::env::current_exe().unwrap();
    let output = Command::new("unshare")
        .args(["--user", "--map-root-user", "--pid", "--fork", "--mount-proc"])
        .arg(&executable)
        .args(["--exact", HELPER_ENTRY_POINT, "--nocapture", "--test-threads=1"])
        .env(HELPER_MODE_VARIABLE, mode)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|error| {
            panic!("this test needs the `unshare` command (util-linux) to make namespaces: {error}")
        });
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "helper {mode:?} under `unshare --user --map-root-user --pid --fork --mount-proc` failed ({}); \
         this test needs user namespaces (root, or kernel.unprivileged_userns_clone=1)\n\
         --- stdout\n{stdout}\n--- stderr\n{stderr}",
        output.status
    );
    // Shown with --nocapture: what the helper saw (for example how many
    // attempts a same-tick reuse took).
    for line in stdout.lines().filter(|line| line.contains(HELPER_LINE_PREFIX)) {
        println!("{line}");
    }
    let done = format!("{HELPER_LINE_PREFIX}{mode} done");
    assert!(
        stdout.lines().any(|line| line.ends_with(&done)),
        "helper {mode:?} never finished\n--- stdout\n{stdout}"
    );
}

/// A re-executed copy of this test binary in a helper mode, talking in lines
/// over its stdin and stdout. Killed and reaped on drop.
struct Helper {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    seen: String,
}

impl Helper {
    fn spawn(mode: &str) -> Helper {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", HELPER_ENTRY_POINT, "--nocapture", "--test-threads=1"])
            .env(HELPER_MODE_VARIABLE, mode)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("re-execute this test binary as a helper");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Helper { child, stdin, stdout, seen: String::new() }
    }

    fn pid(&self) -> Pid {
        Pid::new(self.child.id()).unwrap()
    }

    fn send(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Reads lines until the helper says `what`, and returns the rest of
    /// that line. A helper that dies first ends the test with its output.
    fn expect(&mut self, what: &str) -> String {
        let wanted = format!("{HELPER_LINE_PREFIX}{what}");
        loop {
            let mut line = String::new();
            let read = self.stdout.read_line(&mut line).unwrap();
            assert!(read > 0, "helper ended before saying {what:?}; it said:\n{}", self.seen);
            self.seen.push_str(&line);
            if let Some((_, rest)) = line.trim_end().split_once(&wanted) {
                return rest.to_owned();
            }
        }
    }
}

impl Drop for Helper {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ---------------------------------------------------------------------------
// Forked children and small helpers.
// ---------------------------------------------------------------------------

fn do_nothing() {}

/// A forked copy of this process that only waits for signals. Killed and
/// reaped on drop unless already reaped.
struct ForkedChild {
    pid: nix::unistd::Pid,
    reaped: bool,
}

/// Forks a child that runs `prepare` and then pauses forever. The child
/// makes only raw system calls: after a fork in a threaded process nothing
/// else is safe.
fn fork_pausing_child(prepare: fn()) -> ForkedChild {
    // SAFETY: the child below calls only async-signal-safe functions.
    match unsafe { nix::unistd::fork() }.expect("fork") {
        ForkResult::Child => {
            // Hold none of the parent's descriptors (pipes of other tests
            // would otherwise stay open as long as this child lives).
            // SAFETY: close_range on our own descriptors.
            unsafe { libc::syscall(libc::SYS_close_range, 3, libc::c_uint::MAX, 0) };
            prepare();
            loop {
                // SAFETY: pause has no arguments.
                unsafe { libc::pause() };
            }
        }
        ForkResult::Parent { child } => ForkedChild { pid: child, reaped: false },
    }
}

impl ForkedChild {
    fn nix_pid(&self) -> nix::unistd::Pid {
        self.pid
    }

    fn pid(&self) -> Pid {
        Pid::new(self.pid.as_raw() as u32).unwrap()
    }

    fn kill_and_reap(&mut self) {
        signal::kill(self.pid, Signal::SIGKILL).expect("kill the child");
        let status = waitpid(self.pid, None).expect("reap the child");
        assert!(matches!(status, WaitStatus::Signaled(_, Signal::SIGKILL, _)), "{status:?}");
        self.reaped = true;
    }

    /// Kills the child and waits until it is a zombie, without reaping it.
    fn kill_leaving_zombie(&mut self) {
        signal::kill(self.pid, Signal::SIGKILL).expect("kill the child");
        waitid(Id::Pid(self.pid), WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT).expect("wait for the exit");
    }
}

impl Drop for ForkedChild {
    fn drop(&mut self) {
        if !self.reaped {
            let _ = signal::kill(self.pid, Signal::SIGKILL);
            let _ = waitpid(self.pid, None);
        }
    }
}

fn own_pid() -> Pid {
    Pid::new(std::process::id()).unwrap()
}

fn capture(pid: Pid) -> OwnerIdentity {
    capture_identity(pid).unwrap_or_else(|error| panic!("capture pid {pid}: {error}"))
}

/// Field 3 of `/proc/<pid>/stat`, read independently of the crate's parser.
fn proc_state(pid: Pid) -> char {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    stat[stat.rfind(')').unwrap() + 1..].trim_start().chars().next().unwrap()
}

/// Polls `condition` until it holds; fails the test after `PATIENCE`.
fn wait_until(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !condition() {
        assert!(Instant::now() < deadline, "gave up waiting for {what}");
        std::thread::yield_now();
    }
}

/// A directory under the system's temporary directory, removed on drop.
struct TemporaryDirectory(PathBuf);

impl TemporaryDirectory {
    fn new() -> TemporaryDirectory {
        static COUNTER: AtomicU32 = AtomicU32::new(0);
        let name =
            format!("owner-liveness-test-{}-{}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed));
        let path = std::env::temp_dir().join(name);
        std::fs::create_dir(&path).unwrap();
        TemporaryDirectory(path)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TemporaryDirectory {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
