//! Prints the verdict on this process (alive) and on a child that has exited
//! and been reaped (dead), with the identity each verdict was judged on.
//!
//! Run with `cargo run -p owner-liveness --example verdict`.

use std::io::Read;
use std::process::{Command, Stdio};

use owner_liveness::{OwnerIdentity, Pid, capture_identity, judge_now};

/// Passed to the re-executed copy of this example that serves as the child.
const CHILD_ARGUMENT: &str = "--be-the-child";

fn main() {
    if std::env::args().nth(1).as_deref() == Some(CHILD_ARGUMENT) {
        // The child lives until its parent closes our stdin.
        let _ = std::io::stdin().read_to_end(&mut Vec::new());
        return;
    }

    let own_pid = Pid::new(std::process::id()).expect("a pid is never zero");
    let own_identity = capture_identity(own_pid).expect("capture this process");
    show("this process", &own_identity);

    let mut child = Command::new(std::env::current_exe().expect("path of this example"))
        .arg(CHILD_ARGUMENT)
        .stdin(Stdio::piped())
        .spawn()
        .expect("start a child");
    let child_pid = Pid::new(child.id()).expect("a pid is never zero");
    let child_identity = capture_identity(child_pid).expect("capture the child while it runs");
    show("the child, running", &child_identity);
    // Closing its stdin ends the child; waiting reaps it, so its pid is gone.
    drop(child.stdin.take());
    child.wait().expect("reap the child");
    show("the child, exited and reaped", &child_identity);
}

fn show(what: &str, identity: &OwnerIdentity) {
    let verdict = judge_now(identity, None);
    println!("{what}: {}: {}", verdict.liveness, verdict.reason);
    println!(
        "    recorded pid {}, uid {}, start tick {}, pidfs inode {}",
        identity.pid,
        identity.uid,
        identity.start_ticks,
        identity.pidfs_ino.map_or_else(|| "none".to_owned(), |inode| inode.to_string()),
    );
}
