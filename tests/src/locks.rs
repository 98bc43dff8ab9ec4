//! The registry's locks from outside: a process holding `.lock` or a
//! queue's directory (through a writable descriptor, a read-only one, or
//! from a sandbox that sees the registry read-only), and whether a lock or
//! a file is held by someone.

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

impl LockHolder {
    /// A process that holds an `flock` on `path` (a file or a directory)
    /// through a descriptor opened read-only, as any process that may only
    /// read the registry can: `flock` asks for no write access. Taken in the
    /// child between fork and exec, so it is held once `spawn` returns;
    /// fails the test if it is already held.
    pub fn spawn_read_only(path: &Path) -> LockHolder {
        let c_path = CString::new(path.as_os_str().as_bytes()).expect("no NUL in the path");
        let mut command = Command::new("sleep");
        command.arg("100000").stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
        // SAFETY: the closure runs in the forked child and only makes
        // async-signal-safe system calls on data prepared before the fork.
        unsafe {
            command.pre_exec(move || {
                use nix::fcntl::{Flock, FlockArg, OFlag, open};
                use nix::sys::stat::Mode;
                let fd = open(c_path.as_c_str(), OFlag::O_RDONLY, Mode::empty())?;
                let lock = Flock::lock(fd, FlockArg::LockExclusiveNonblock).map_err(|(_, errno)| errno)?;
                std::mem::forget(lock);
                Ok(())
            });
        }
        let child = command.spawn().unwrap_or_else(|error| {
            panic!("take the lock on {} read-only in a helper: {error}", path.display())
        });
        LockHolder { child: Some(child) }
    }

    /// The holder a sandbox makes: `bwrap` with the whole file system, the
    /// roster directory `roster` included, bind-mounted read-only, running
    /// `flock PATH sleep`. Returns once the lock is held. Killing it kills
    /// the sandbox's processes too (`--die-with-parent`, its own pid
    /// namespace), which frees the lock a moment later.
    pub fn spawn_in_read_only_sandbox(roster: &Path, path: &Path) -> LockHolder {
        let bwrap = crate::require_tool("bwrap");
        let flock = crate::require_tool("flock");
        let child = Command::new(bwrap)
            .args(["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"])
            .arg("--ro-bind")
            .args([roster, roster])
            .args(["--unshare-pid", "--die-with-parent"])
            .arg(flock)
            .arg(path)
            .args(["sleep", "100000"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|error| panic!("start bwrap to hold {}: {error}", path.display()));
        let holder = LockHolder { child: Some(child) };
        assert!(
            crate::poll_until(std::time::Duration::from_secs(10), || lock_is_held(path)),
            "the sandboxed flock never took {}",
            path.display()
        );
        holder
    }

    /// A process that marks a session in `directory` as Copilot CLI does:
    /// it creates `inuse.<its pid>.hold`, writes its pid into
    /// `inuse.<its pid>.lock`, and only `lock_after` later takes the
    /// `flock` on the hold file (which sends no inotify event). Done in
    /// the child between fork and exec, without allocating.
    pub fn spawn_marking_session(directory: &Path, lock_after: std::time::Duration) -> LockHolder {
        let directory = CString::new(directory.as_os_str().as_bytes()).expect("no NUL in the path");
        let mut command = Command::new("sleep");
        command.arg("100000").stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
        // SAFETY: the closure runs in the forked child and only makes
        // async-signal-safe system calls on data prepared before the fork
        // or on its stack.
        unsafe {
            command.pre_exec(move || {
                use nix::fcntl::{Flock, FlockArg, OFlag, open, openat};
                use nix::sys::stat::Mode;
                let pid = nix::unistd::getpid().as_raw() as u32;
                let mut digits = [0u8; 10];
                let mut count = 0;
                let mut rest = pid;
                loop {
                    digits[count] = b'0' + (rest % 10) as u8;
                    count += 1;
                    rest /= 10;
                    if rest == 0 {
                        break;
                    }
                }
                let mut name = [0u8; 32];
                let prefix = b"inuse.";
                name[..prefix.len()].copy_from_slice(prefix);
                let mut at = prefix.len();
                for index in (0..count).rev() {
                    name[at] = digits[index];
                    at += 1;
                }
                let number_end = at;
                let directory_fd =
                    open(directory.as_c_str(), OFlag::O_DIRECTORY | OFlag::O_RDONLY, Mode::empty())?;
                let mode = Mode::from_bits_truncate(0o600);
                name[number_end..number_end + 5].copy_from_slice(b".hold");
                let hold_name =
                    std::ffi::CStr::from_bytes_until_nul(&name[..number_end + 6]).expect("a name");
                let hold = openat(&directory_fd, hold_name, OFlag::O_RDWR | OFlag::O_CREAT, mode)?;
                name[number_end..number_end + 5].copy_from_slice(b".lock");
                let lock_name =
                    std::ffi::CStr::from_bytes_until_nul(&name[..number_end + 6]).expect("a name");
                let lock = openat(
                    &directory_fd,
                    lock_name,
                    OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_CLOEXEC,
                    mode,
                )?;
                let mut line = [0u8; 11];
                for index in 0..count {
                    line[index] = digits[count - 1 - index];
                }
                line[count] = b'\n';
                nix::unistd::write(&lock, &line[..=count])?;
                drop(lock);
                nix::time::clock_nanosleep(
                    nix::time::ClockId::CLOCK_MONOTONIC,
                    nix::time::ClockNanosleepFlags::empty(),
                    &nix::sys::time::TimeSpec::from_duration(lock_after),
                )?;
                let held = Flock::lock(hold, FlockArg::LockExclusiveNonblock).map_err(|(_, errno)| errno)?;
                std::mem::forget(held);
                Ok(())
            });
        }
        let child = command.spawn().expect("mark a session as Copilot CLI does in a helper");
        LockHolder { child: Some(child) }
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

/// Whether some process waits for an `flock` on `path`: a `->` line of
/// `/proc/locks` for its inode (a waiter blocks in the kernel, so this is
/// how a test knows a writer has reached its wait).
pub fn lock_has_waiter(path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let inode =
        std::fs::metadata(path).unwrap_or_else(|error| panic!("stat {}: {error}", path.display())).ino();
    let inode_field = format!(":{inode}");
    let locks = std::fs::read_to_string("/proc/locks").expect("read /proc/locks");
    locks.lines().any(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        fields.get(1) == Some(&"->")
            && fields.get(2) == Some(&"FLOCK")
            && fields.get(6).is_some_and(|device_and_inode| device_and_inode.ends_with(&inode_field))
    })
}

/// Whether process `pid` has `target` open (by `/proc/<pid>/fd`).
pub fn process_has_open(pid: u32, target: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(format!("/proc/{pid}/fd")) else { return false };
    entries
        .filter_map(Result::ok)
        .any(|entry| std::fs::read_link(entry.path()).is_ok_and(|link| link == target))
}
