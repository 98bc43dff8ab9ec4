//! The `exec` backend: runs a command (no shell: the configured words)
//! for each notice and each withdrawal, with the notice as JSON on its
//! stdin (`NoticeMessage`), for Slack or Telegram scripts and sounds. A
//! command that runs past the timeout is killed; one that exits non-zero
//! failed, and its stderr's last line is logged.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{Backend, BackendError, NoticeMessage};
use crate::notice::Notice;

pub struct ExecBackend {
    command: Vec<String>,
    timeout: Duration,
}

impl ExecBackend {
    pub fn new(command: Vec<String>, timeout: Duration) -> Result<ExecBackend, String> {
        if command.first().is_none_or(|program| program.is_empty()) {
            return Err(
                "the exec backend needs a command: [notify.exec] command = [\"PROGRAM\", \"ARG\", …] \
                        or --exec PROGRAM"
                    .to_owned(),
            );
        }
        Ok(ExecBackend { command, timeout })
    }

    fn run(&self, message: &NoticeMessage<'_>) -> Result<(), BackendError> {
        let program = &self.command[0];
        let mut child = Command::new(program)
            .args(&self.command[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|error| BackendError::new(format!("{program} could not be started: {error}")))?;
        let input = message.to_json();
        let mut stdin = child.stdin.take().expect("stdin is piped");
        // Written on a thread: a command that does not read must not hold
        // the worker past the timeout.
        let writer = std::thread::spawn(move || {
            let _ = stdin.write_all(&input).and_then(|()| stdin.write_all(b"\n"));
        });
        let mut stderr = child.stderr.take().expect("stderr is piped");
        let reader = std::thread::spawn(move || {
            let mut text = Vec::new();
            let _ = (&mut stderr).take(64 * 1024).read_to_end(&mut text);
            String::from_utf8_lossy(&text).into_owned()
        });
        let started = Instant::now();
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if started.elapsed() >= self.timeout => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(BackendError::new(format!(
                        "{program} ran past {} ms and was killed",
                        self.timeout.as_millis()
                    )));
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(5)),
                Err(error) => return Err(BackendError::new(format!("waiting for {program}: {error}"))),
            }
        };
        let _ = writer.join();
        let said = reader.join().unwrap_or_default();
        if status.success() {
            return Ok(());
        }
        let last = said.lines().rev().find(|line| !line.trim().is_empty()).unwrap_or("").trim();
        Err(BackendError::new(format!("{program} failed ({status}): {last}")))
    }
}

impl Backend for ExecBackend {
    fn name(&self) -> &'static str {
        "exec"
    }

    fn leaves_the_machine(&self) -> bool {
        true
    }

    fn show(&self, notice: &Notice) -> Result<(), BackendError> {
        self.run(&NoticeMessage::new("show", notice))
    }

    fn replace(&self, notice: &Notice) -> Result<(), BackendError> {
        self.run(&NoticeMessage::new("replace", notice))
    }

    fn withdraw(&self, notice: &Notice) -> Result<(), BackendError> {
        self.run(&NoticeMessage::new("withdraw", notice))
    }
}
