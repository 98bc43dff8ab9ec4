//! A session owner whose own children run the commands a test gives it: a
//! long-lived `bash` reading command lines from a pipe, so that a hook or a
//! send runs inside the session's process tree, as a harness's hooks do
//! (the owner is an ancestor of the process, which is what roster believes,
//! never a pid named by a flag or the environment). Killed when dropped.

use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use harness::hook_config::shell_quote;

use crate::Finished;

/// A `bash` standing in for a session's owner, running what it is given
/// as its children.
pub struct SessionShell {
    child: Child,
    input: ChildStdin,
    scratch: tempfile::TempDir,
    runs: usize,
    /// Where the copy it runs from is, for one spawned under another name.
    program_directory: Option<tempfile::TempDir>,
}

impl SessionShell {
    pub fn spawn() -> SessionShell {
        SessionShell::spawn_from(crate::hooks::bash_binary(), &[])
    }

    /// A session owner that looks like a harness's process: a copy of bash
    /// named `name` (`claude`), with `env` added to its environment (and
    /// so to every command it runs).
    pub fn spawn_named(name: &str, env: &[(&str, &str)]) -> SessionShell {
        let scratch = tempfile::tempdir().expect("a scratch directory");
        let program = scratch.path().join(name);
        std::fs::copy(crate::hooks::bash_binary(), &program).expect("copy bash under the harness's name");
        let mut shell = SessionShell::spawn_from(program, env);
        // The copy lives as long as the shell runs from it.
        shell.program_directory = Some(scratch);
        shell
    }

    fn spawn_from(program: impl AsRef<std::ffi::OsStr>, env: &[(&str, &str)]) -> SessionShell {
        // A copy made by `spawn_named` can still be open for writing in a
        // child another test thread forked at that instant (until it execs).
        let mut child = crate::spawn_retrying_busy_text(
            Command::new(program)
                .args(["--norc", "--noprofile", "-s"])
                .envs(env.iter().copied())
                .stdin(Stdio::piped())
                .stdout(Stdio::null())
                .stderr(Stdio::null()),
        );
        let input = child.stdin.take().expect("a piped stdin");
        SessionShell {
            child,
            input,
            scratch: tempfile::tempdir().expect("a scratch directory"),
            runs: 0,
            program_directory: None,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Runs `command` (its program, arguments, directory and the variables
    /// it sets) as a child of this shell with `stdin` as its input, and
    /// waits for it at most `deadline`.
    pub fn run(&mut self, command: &Command, stdin: &[u8], deadline: Duration) -> Finished {
        self.run_writing_to(command, stdin, None, deadline)
    }

    /// `run`, with the command's stdout going to `stdout` (a file such as
    /// `/dev/full`) instead of being collected.
    pub fn run_writing_to(
        &mut self,
        command: &Command,
        stdin: &[u8],
        stdout: Option<&std::path::Path>,
        deadline: Duration,
    ) -> Finished {
        self.runs += 1;
        let file = |name: &str| self.scratch.path().join(format!("{}.{name}", self.runs));
        let (input, collected, stderr, status) = (file("in"), file("out"), file("err"), file("status"));
        let stdout = stdout.map_or(collected.clone(), std::path::Path::to_path_buf);
        std::fs::write(&input, stdin).expect("write the command's input");
        let quoted = |path: &PathBuf| shell_quote(&path.to_string_lossy()).into_owned();
        let mut line = String::new();
        if let Some(directory) = command.get_current_dir() {
            line.push_str(&format!("cd {} && ", shell_quote(&directory.to_string_lossy())));
        }
        line.push_str("env");
        for (key, value) in command.get_envs() {
            match value {
                Some(value) => line.push_str(&format!(
                    " {}",
                    shell_quote(&format!("{}={}", key.to_string_lossy(), value.to_string_lossy()))
                )),
                None => line.push_str(&format!(" -u {}", shell_quote(&key.to_string_lossy()))),
            }
        }
        line.push_str(&format!(" {}", shell_quote(&command.get_program().to_string_lossy())));
        for argument in command.get_args() {
            line.push_str(&format!(" {}", shell_quote(&argument.to_string_lossy())));
        }
        let pending = quoted(&file("status.tmp"));
        line.push_str(&format!(
            " <{} >{} 2>{}; echo $? >{pending}; mv {pending} {}; cd /\n",
            quoted(&input),
            quoted(&stdout),
            quoted(&stderr),
            quoted(&status)
        ));
        let started = Instant::now();
        self.input.write_all(line.as_bytes()).expect("give the shell its command");
        self.input.flush().expect("flush the shell's input");
        let code = loop {
            if let Ok(text) = std::fs::read_to_string(&status) {
                break text.trim().parse::<i32>().expect("an exit status");
            }
            assert!(started.elapsed() < deadline, "{line} did not end within {deadline:?}");
            std::thread::sleep(Duration::from_millis(5));
        };
        Finished {
            status: ExitStatus::from_raw(code << 8),
            stdout: std::fs::read(&collected).unwrap_or_default(),
            stderr: std::fs::read(&stderr).unwrap_or_default(),
            elapsed: started.elapsed(),
        }
    }
}

impl Drop for SessionShell {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
