//! The registry lock from outside: a process holding `.lock`, and whether
//! a lock or a file is held by someone.

use std::ffi::CString;
use std::fs::File;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// A process that holds the roster's `.lock` with `flock` until killed:
/// the lock is taken in the child between fork and exec (so it is held
/// once `spawn` returns) and the fd survives into `sleep`, which keeps it.
pub struct LockHolder {
    child: Option<Child>,
}

impl LockHolder {
    /// Takes the lock on `lock_path` (created 0600 if missing); fails the
    /// test if it is already held.
    pub fn spawn(lock_path: &Path) -> LockHolder {
        let path = CString::new(lock_path.as_os_str().as_bytes()).expect("no NUL in the path");
        let mut command = Command::new("sleep");
        command.arg("100000").stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
        // SAFETY: the closure runs in the forked child and only makes
        // async-signal-safe system calls on data prepared before the fork.
        unsafe {
            command.pre_exec(move || {
                use nix::fcntl::{Flock, FlockArg, OFlag, open};
                use nix::sys::stat::Mode;
                // Not close-on-exec: the descriptor, and with it the lock,
                // must live on in `sleep`.
                let fd =
                    open(path.as_c_str(), OFlag::O_RDWR | OFlag::O_CREAT, Mode::from_bits_truncate(0o600))?;
                let lock = Flock::lock(fd, FlockArg::LockExclusiveNonblock).map_err(|(_, errno)| errno)?;
                std::mem::forget(lock);
                Ok(())
            });
        }
        let child = command
            .spawn()
            .unwrap_or_else(|error| panic!("take the lock on {} in a helper: {error}", lock_path.display()));
        LockHolder { child: Some(child) }
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("running").id()
    }

    /// SIGKILLs the holder and reaps it.
    pub fn kill(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for LockHolder {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Whether some process holds an `flock` on `path` (tested with a
/// non-blocking attempt of our own, released at once).
pub fn lock_is_held(path: &Path) -> bool {
    let file = File::open(path).unwrap_or_else(|error| panic!("open {}: {error}", path.display()));
    match file.try_lock() {
        Ok(()) => {
            let _ = file.unlock();
            false
        }
        Err(std::fs::TryLockError::WouldBlock) => true,
        Err(std::fs::TryLockError::Error(error)) => panic!("flock {}: {error}", path.display()),
    }
}

/// Whether process `pid` has `target` open (by `/proc/<pid>/fd`).
pub fn process_has_open(pid: u32, target: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(format!("/proc/{pid}/fd")) else { return false };
    entries
        .filter_map(Result::ok)
        .any(|entry| std::fs::read_link(entry.path()).is_ok_and(|link| link == target))
}
