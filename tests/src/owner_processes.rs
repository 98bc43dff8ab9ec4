//! Long-lived processes standing in for a session's owner in the
//! black-box tests, killed and reaped when dropped, and pids that name none.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::{binary, poll_until};

/// A long-lived process standing in for a harness session's owner. It is
/// killed and reaped when dropped, so no test leaves one behind.
pub struct Owner {
    child: Child,
}

impl Default for Owner {
    fn default() -> Self {
        Owner::spawn()
    }
}

impl Owner {
    pub fn spawn() -> Owner {
        let child = Command::new("sleep")
            .arg("100000")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn `sleep` as an owner process");
        Owner { child }
    }

    /// An owner started from an empty environment, so nothing of the test
    /// runner's own (which may run inside a harness) shows in its
    /// `/proc/<pid>/environ`.
    pub fn spawn_without_environment() -> Owner {
        let child = Command::new("/bin/sleep")
            .arg("100000")
            .env_clear()
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn /bin/sleep as an owner process");
        Owner { child }
    }

    /// An owner with only `variables` in its environment, in a session of
    /// its own: with a pseudo-terminal as its controlling terminal when
    /// `in_a_terminal` (as every pane of a multiplexer or terminal gives
    /// its programs), else without any.
    pub fn spawn_in_a_session(variables: &[(&str, &str)], in_a_terminal: bool) -> Owner {
        use std::os::unix::process::CommandExt;
        let terminal = in_a_terminal.then(|| nix::pty::openpty(None, None).expect("open a pseudo-terminal"));
        let mut command = Command::new("/bin/sleep");
        command.arg("100000").env_clear().envs(variables.iter().copied());
        match &terminal {
            Some(pty) => {
                let side = |purpose| Stdio::from(pty.slave.try_clone().expect(purpose));
                command
                    .stdin(side("the terminal as stdin"))
                    .stdout(side("as stdout"))
                    .stderr(side("as stderr"));
            }
            None => {
                command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
            }
        }
        // SAFETY: only async-signal-safe system calls (setsid, ioctl)
        // between fork and exec.
        unsafe {
            command.pre_exec(move || {
                nix::unistd::setsid()?;
                if in_a_terminal && nix::libc::ioctl(0, nix::libc::TIOCSCTTY, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = command.spawn().expect("spawn /bin/sleep in a session of its own");
        // The master side stays open for as long as the test holds the
        // owner: closed, the terminal would hang up its session.
        if let Some(pty) = terminal {
            std::mem::forget(pty.master);
        }
        Owner { child }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends SIGKILL without reaping: the owner stays a zombie until this
    /// value is dropped.
    pub fn kill_leaving_zombie(&self) {
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.pid() as i32),
            nix::sys::signal::Signal::SIGKILL,
        )
        .expect("kill the owner");
    }

    /// Kills the owner and reaps it, so its pid names no process (not even
    /// a zombie); returns the pid.
    pub fn kill(mut self) -> u32 {
        let pid = self.pid();
        let _ = self.child.kill();
        let _ = self.child.wait();
        pid
    }
}

impl Drop for Owner {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An owner that armed consent for itself: a shell that ran
/// `roster-consent arm --pid parent` (so the owner is verified, as a
/// session's own shell is), then became `sleep` in place, keeping the
/// identity the marker holds. Killed and reaped when dropped.
pub struct ArmedOwner {
    child: Child,
}

impl ArmedOwner {
    /// Arms in the roster directory `root`, recording `cwd`, with `home` as
    /// HOME; waits until the marker exists.
    pub fn spawn(root: &Path, home: &Path, cwd: &Path) -> ArmedOwner {
        let child = Command::new("sh")
            .args([
                "-c",
                "\"$0\" --dir \"$1\" arm --pid parent --cwd \"$2\" >/dev/null 2>&1 && exec sleep 100000",
            ])
            .arg(binary("roster-consent"))
            .arg(root)
            .arg(cwd)
            .env_clear()
            .env("HOME", home)
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .stdin(Stdio::null())
            .spawn()
            .expect("spawn an owner that arms itself");
        let marker = root.join("consent").join(crate::record_file_name_here(child.id()));
        assert!(poll_until(Duration::from_secs(10), || marker.exists()), "the owner did not arm itself");
        ArmedOwner { child }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for ArmedOwner {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A pid that named a process a moment ago and now names none.
pub fn dead_pid() -> u32 {
    Owner::spawn().kill()
}

/// The kernel's `pid_max` (the first pid that is not allowed).
pub fn pid_max() -> u32 {
    std::fs::read_to_string("/proc/sys/kernel/pid_max")
        .expect("read /proc/sys/kernel/pid_max")
        .trim()
        .parse()
        .expect("pid_max is a number")
}
