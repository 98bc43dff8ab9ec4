//! The processes the live figures (`watch.rs`, `notify.rs`) run beside the
//! tool they time: a stand-in session owner, and a child's output read line
//! by line, each stamped when it came.

use std::io::{BufRead, BufReader};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Instant;

use anyhow::Context;

/// A stand-in session owner (`sleep`), killed and reaped when dropped
/// (its `died` figure kills it first).
pub(super) struct SleepingOwner {
    pub(super) child: Child,
}

impl SleepingOwner {
    pub(super) fn spawn() -> anyhow::Result<SleepingOwner> {
        let child =
            Command::new("sleep").arg("100000").stdin(Stdio::null()).spawn().context("spawn an owner")?;
        Ok(SleepingOwner { child })
    }

    pub(super) fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for SleepingOwner {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Each line `stdout` prints, stamped with when it was read.
pub(super) fn stamp_lines(stdout: ChildStdout) -> Receiver<(Instant, String)> {
    let (sender, receiver) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if sender.send((Instant::now(), line)).is_err() {
                break;
            }
        }
    });
    receiver
}
