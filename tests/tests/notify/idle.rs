//! An idle `roster-notify` sleeps in the kernel: once its notices are
//! handed over and nothing changes, strace attached for five seconds sees
//! no system call but the waits it interrupts, in every thread (the
//! watch's, the main loop's, each backend's worker).

use std::time::Duration;

use tests::http_recorder::{Answer, HttpRecorder};
use tests::{Owner, Sandbox, require_tool};

use crate::{Notifier, claude_event, register};

#[test]
fn an_idle_notifier_makes_no_system_calls() {
    let strace = require_tool("strace");
    let sandbox = Sandbox::new();
    // Followed for consent up to HOME only (see the watch's idle test).
    tests::write_file_0600(&sandbox.home().join(".roster.toml"), b"");
    let webhook = HttpRecorder::start(Answer::Ok);
    let url = format!("{}/hook", webhook.url);
    let notifier = Notifier::start(&sandbox, &["--backend", "webhook", "--webhook-url", &url], &[]);
    let owners: Vec<Owner> = (0..3).map(|_| Owner::spawn()).collect();
    for (index, owner) in owners.iter().enumerate() {
        register(&sandbox, owner.pid(), &format!("s-idle-{index}"), &format!("quiet{index}"));
    }
    notifier.wait_for("watching", 1, Duration::from_secs(20));
    // One notice handed over, so that every part has run once.
    claude_event(&sandbox, "s-idle-0", "PermissionRequest");
    webhook.wait_for(1, Duration::from_secs(10));
    // Past the flap window and any retry, nothing is left to do.
    std::thread::sleep(Duration::from_secs(4));

    let trace = sandbox.base().join("idle.trace");
    let (lines, wakeups) = tests::strace::idle_trace(&strace, notifier.pid(), Duration::from_secs(5), &trace);
    let wakeups: Vec<&String> = wakeups.iter().filter(|line| !is_an_interrupted_wait(line)).collect();
    assert!(wakeups.is_empty(), "an idle notifier made system calls:\n{lines}");
    assert!(
        lines.contains("<unfinished ...>"),
        "strace saw no wait in progress, so it saw nothing:\n{lines}"
    );
    notifier.stop();
}

/// A wait in progress when strace attached, shown as strace shows it: a
/// futex, signal or epoll wait (a worker's channel, the main loop, the
/// watch) begun before, and cut by the detach.
fn is_an_interrupted_wait(line: &str) -> bool {
    let waits = ["futex(", "epoll_wait(", "rt_sigtimedwait(", "poll(", "ppoll(", "read(", "clock_nanosleep("];
    waits.iter().any(|wait| line.contains(wait))
        && (line.contains("<unfinished ...>") || line.contains("<detached ...>"))
}
