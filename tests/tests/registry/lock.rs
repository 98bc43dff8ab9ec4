//! The registry lock (docs/contract.md §2, §10 "Lock"): `.lock` is an `flock`, so a
//! holder killed with SIGKILL frees it at once; a writer waits for it at
//! most about 5 s and then exits 1 with "registry busy"; readers never wait
//! for it; and its fd is opened close-on-exec, so no child can inherit it.

use std::os::unix::fs::PermissionsExt;
use std::process::Stdio;
use std::time::{Duration, Instant};

use tests::{
    LockHolder, Owner, Sandbox, lock_is_held, poll_until, process_has_open, require_tool, wait_with_deadline,
};

/// The documented wait, and how far from it a measured wait may land on a
/// loaded machine.
const LOCK_WAIT: Duration = Duration::from_secs(5);
const SLACK_EARLY: Duration = Duration::from_millis(300);
const SLACK_LATE: Duration = Duration::from_secs(3);

#[test]
fn held_lock_makes_writers_wait_then_report_busy_readers_do_not_wait() {
    let sandbox = Sandbox::new();
    let registered = Owner::spawn();
    let newcomer = Owner::spawn();
    sandbox.register(registered.pid(), &[]);
    let lock = sandbox.root().join(".lock");
    let mode = std::fs::metadata(&lock).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o600, ".lock mode");
    let before = sandbox.session_entries();
    let _holder = LockHolder::spawn(&lock);
    assert!(lock_is_held(&lock));

    let writers: Vec<_> = [
        ("roster-register", vec!["--pid".to_owned(), newcomer.pid().to_string()]),
        ("roster-prune", vec![]),
        ("roster-prune", vec!["--current".to_owned(), "--pid".to_owned(), registered.pid().to_string()]),
    ]
    .into_iter()
    .map(|(tool, args)| {
        let command = sandbox.command_in_root(tool, &args.iter().map(String::as_str).collect::<Vec<_>>());
        std::thread::spawn(move || {
            (tool, tests::run_with_deadline(&mut { command }, tests::COMMAND_DEADLINE))
        })
    })
    .collect();

    // While the writers wait, a reader answers at once.
    let listed = sandbox.run("roster-list", &["--json"]);
    listed.expect_code(0);
    assert!(listed.elapsed < Duration::from_secs(2), "roster-list waited for the lock: {:?}", listed.elapsed);

    for writer in writers {
        let (tool, outcome) = writer.join().unwrap();
        outcome.expect_code(1).expect_error_line(tool);
        assert!(outcome.stderr.contains("registry busy"), "{tool} did not say \"registry busy\"\n{outcome}");
        assert!(
            outcome.elapsed >= LOCK_WAIT - SLACK_EARLY,
            "{tool} gave up after {:?}, before 5 s",
            outcome.elapsed
        );
        assert!(
            outcome.elapsed <= LOCK_WAIT + SLACK_LATE,
            "{tool} waited {:?}, far beyond 5 s",
            outcome.elapsed
        );
    }
    assert_eq!(sandbox.session_entries(), before, "a writer changed sessions/ without the lock");
}

#[test]
fn holder_killed_with_sigkill_frees_the_lock_at_once() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    sandbox.register(owner.pid(), &[]);
    let lock = sandbox.root().join(".lock");
    let holder = LockHolder::spawn(&lock);

    // A writer is already waiting when the holder dies.
    let waiting_owner = Owner::spawn();
    let mut command =
        sandbox.command_in_root("roster-register", &["--pid", &waiting_owner.pid().to_string()]);
    command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
    let mut waiter = command.spawn().unwrap();
    let waiter_pid = waiter.id();
    assert!(
        poll_until(Duration::from_secs(4), || process_has_open(waiter_pid, &lock)
            || waiter.try_wait().ok().flatten().is_some()),
        "the waiting register never opened .lock"
    );
    assert!(waiter.try_wait().unwrap().is_none(), "register did not wait for the held lock");
    let killed_at = Instant::now();
    holder.kill();
    let status = wait_with_deadline(&mut waiter, Duration::from_secs(20)).expect("register hung");
    let after_kill = killed_at.elapsed();
    assert!(status.success(), "the waiting register failed after the holder died: {status:?}");
    assert!(after_kill < Duration::from_secs(2), "the lock took {after_kill:?} to free after SIGKILL");
    assert!(sandbox.record_path(waiting_owner.pid()).exists());

    // And the next one does not wait at all.
    let holder = LockHolder::spawn(&lock);
    holder.kill();
    let outcome = sandbox.run("roster-register", &["--pid", &owner.pid().to_string()]);
    outcome.expect_code(0);
    assert!(
        outcome.elapsed < Duration::from_secs(2),
        "register took {:?} after the holder died",
        outcome.elapsed
    );
    assert!(!lock_is_held(&lock), "a finished register still holds the lock");
}

/// The lock fd must not leak into children: checked on the open itself
/// (O_CLOEXEC), or on an explicit FD_CLOEXEC set before anything else.
#[test]
fn lock_fd_is_close_on_exec() {
    let strace = require_tool("strace");
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    sandbox.register(owner.pid(), &[]);
    let log = sandbox.base().join("strace.log");
    let mut failures = Vec::new();
    for (tool, args) in
        [("roster-register", vec!["--pid".to_owned(), owner.pid().to_string()]), ("roster-prune", vec![])]
    {
        let mut command = std::process::Command::new(&strace);
        command
            .args(["-f", "-qq", "-y", "-o"])
            .arg(&log)
            .args(["-e", "trace=open,openat,openat2,fcntl,flock"])
            .arg(tests::binary(tool))
            .arg("--dir")
            .arg(sandbox.root())
            .args(&args);
        command.env_clear().env("HOME", sandbox.home()).current_dir(sandbox.home());
        tests::run_with_deadline(&mut command, tests::COMMAND_DEADLINE).expect_code(0);
        let text = std::fs::read_to_string(&log).unwrap();
        let opens: Vec<&str> = text
            .lines()
            .filter(|line| line.contains("open") && (line.contains("\".lock\"") || line.contains("/.lock\"")))
            .collect();
        if opens.is_empty() {
            failures.push(format!("{tool}: never opened .lock (does it take the lock?)\n{text}"));
        }
        for open in &opens {
            let fd = open.rsplit("= ").next().unwrap_or("").split('<').next().unwrap_or("").trim();
            let set_later = text
                .lines()
                .any(|line| line.contains(&format!("fcntl({fd}<")) && line.contains("FD_CLOEXEC"));
            if !open.contains("O_CLOEXEC") && !set_later {
                failures.push(format!("{tool}: .lock opened without close-on-exec: {open}"));
            }
        }
        if !text
            .lines()
            .any(|line| line.contains("flock(") && line.contains(".lock>") && line.contains("LOCK_EX"))
        {
            failures.push(format!("{tool}: no flock(LOCK_EX) on .lock:\n{text}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A writer whose user is at its pending-signal limit (RLIMIT_SIGPENDING,
/// which also bounds POSIX timers; a sandbox may set it to 0) still waits
/// for a held lock and takes it when the holder lets go: the limit is no
/// reason to give up a registration at once.
#[test]
fn a_writer_at_its_pending_signal_limit_still_waits_for_the_lock() {
    use std::os::unix::process::CommandExt;
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    sandbox.register(owner.pid(), &[]);
    let lock = sandbox.root().join(".lock");
    let holder = LockHolder::spawn(&lock);
    let waiting_owner = Owner::spawn();
    let mut command =
        sandbox.command_in_root("roster-register", &["--pid", &waiting_owner.pid().to_string()]);
    command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
    // SAFETY: setrlimit is async-signal-safe; nothing else runs in the child.
    unsafe {
        command.pre_exec(|| {
            nix::sys::resource::setrlimit(nix::sys::resource::Resource::RLIMIT_SIGPENDING, 0, 0)
                .map_err(std::io::Error::from)
        });
    }
    let mut waiter = command.spawn().unwrap();
    std::thread::sleep(Duration::from_millis(700));
    let exited_early = waiter.try_wait().unwrap();
    holder.kill();
    let status = wait_with_deadline(&mut waiter, Duration::from_secs(20)).expect("register hung");
    let mut stderr = String::new();
    std::io::Read::read_to_string(waiter.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    assert_eq!(exited_early, None, "register gave up while the lock was held: {stderr}");
    assert!(status.success(), "register failed: {status:?} {stderr}");
    assert!(sandbox.record_path(waiting_owner.pid()).exists());
}
