//! The `.lock` every mutation of the registry holds (docs/contract.md §2):
//! an `flock` on a file that is never unlinked, taken within a bounded
//! wait, with a notice naming the holder when the wait is long.

use std::fs::File;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::path::Path;
use std::time::{Duration, Instant};

use nix::fcntl::{OFlag, openat};
use nix::sys::stat::Mode;
use owner_liveness::retry_interrupted;

use crate::error::{Error, Result};
use crate::store::directory::RosterDir;

/// The lock file's name; it is never unlinked.
pub const LOCK_NAME: &str = ".lock";
/// How long a mutation waits for the lock before "registry busy".
pub const LOCK_WAIT: Duration = Duration::from_secs(5);

/// The exclusive registry lock, released when dropped (or when the holder
/// dies: it is an `flock`, so the kernel frees it with the last fd).
#[derive(Debug)]
pub struct RegistryLock {
    _file: File,
}

impl RosterDir {
    /// Takes the lock, waiting at most `LOCK_WAIT`, then "registry busy".
    pub fn lock(&self) -> Result<RegistryLock> {
        self.lock_within(LOCK_WAIT)
    }

    /// Takes the lock, waiting at most `wait`, and never past the handle's
    /// lock deadline (`with_lock_deadline`).
    ///
    /// A free lock is taken at once (`LOCK_NB`). A held one is waited for
    /// in the kernel: a waiting thread blocks in `flock(LOCK_EX)`, so it
    /// wakes the instant the holder releases the lock or dies, while this
    /// thread waits for it with the deadline. Polling instead made waiters
    /// sleep through most releases: at eight writers one in a hundred
    /// registrations waited hundreds of milliseconds.
    pub fn lock_within(&self, wait: Duration) -> Result<RegistryLock> {
        let (file, path) = self.open_lock_file()?;
        let started = Instant::now();
        let deadline = match self.lock_deadline {
            Some(limit) => limit.min(started + wait),
            None => started + wait,
        };
        flock_within(&file, path, deadline, self.on_long_lock_wait)?;
        Ok(RegistryLock { _file: file })
    }

    /// Takes the lock only if it is free this instant; `None` when another
    /// process holds it. For work that may as well be left to the next
    /// writer (register's reaping): it never waits. (It may take the lock
    /// just as a holder lets go, before the waiters wake; they then wait
    /// for that work, as long as it takes.)
    pub fn lock_if_free(&self) -> Result<Option<RegistryLock>> {
        let (file, path) = self.open_lock_file()?;
        Ok(take_lock_if_free(&file, &path)?.then_some(RegistryLock { _file: file }))
    }

    /// The lock file, created when missing, never through a symlink.
    fn open_lock_file(&self) -> Result<(File, std::path::PathBuf)> {
        let path = self.path().join(LOCK_NAME);
        let flags = OFlag::O_RDWR | OFlag::O_CREAT | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let fd: OwnedFd =
            retry_interrupted(|| openat(self.root().fd, LOCK_NAME, flags, Mode::S_IRUSR | Mode::S_IWUSR))
                .map_err(|errno| Error::io("open", &path, errno.into()))?;
        Ok((File::from(fd), path))
    }
}

/// Takes an exclusive `flock` on `file` (named `path` in messages), waiting
/// in the kernel until `deadline` at most, then "busy" naming the holder:
/// the registry lock and every lock of its kind (a message queue's) wait
/// this one way. `notice` is given once when the wait lasts
/// `LOCK_WAIT_NOTICE`.
pub(crate) fn flock_within(
    file: &File,
    path: std::path::PathBuf,
    deadline: Instant,
    notice: Option<LongWaitNotice>,
) -> Result<()> {
    let started = Instant::now();
    if take_lock_if_free(file, &path)? {
        return Ok(());
    }
    let waiter = LockWaiter::start(file).map_err(|error| Error::io("wait for the lock on", &path, error))?;
    let notice_at = notice.map(|notice| (started + LOCK_WAIT_NOTICE, notice));
    match waiter.wait(deadline, notice_at, &path, file) {
        WaitOutcome::Locked => Ok(()),
        WaitOutcome::Failed(error) => Err(Error::io("lock", &path, error)),
        WaitOutcome::TimedOut => {
            let holder = lock_holder(file);
            Err(Error::Busy { path, waited_ms: started.elapsed().as_millis(), holder })
        }
    }
}

/// Takes the lock on `file` if no one holds it (`LOCK_NB`): `false` when
/// someone does.
pub(crate) fn take_lock_if_free(file: &File, path: &Path) -> Result<bool> {
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(true),
            Err(std::fs::TryLockError::WouldBlock) => return Ok(false),
            Err(std::fs::TryLockError::Error(error)) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(std::fs::TryLockError::Error(error)) => return Err(Error::io("lock", path, error)),
        }
    }
}

/// What a long lock wait calls, with the lock's path and holder.
type LongWaitNotice = fn(&Path, Option<u32>);

/// A thread blocked in `flock(LOCK_EX)` on a duplicate of the lock's fd
/// (same open file description, so the lock it takes is the caller's),
/// and the state it shares with the thread that waits for it.
struct LockWaiter {
    shared: std::sync::Arc<(std::sync::Mutex<WaitState>, std::sync::Condvar)>,
}

enum WaitState {
    Waiting,
    Locked,
    Failed(std::io::Error),
    /// The caller gave up: the waiting thread releases the lock as soon as
    /// it gets it, so an abandoned wait never keeps the registry locked.
    Abandoned,
}

enum WaitOutcome {
    Locked,
    Failed(std::io::Error),
    TimedOut,
}

impl LockWaiter {
    fn start(file: &File) -> std::io::Result<LockWaiter> {
        let duplicate = file.try_clone()?;
        let shared =
            std::sync::Arc::new((std::sync::Mutex::new(WaitState::Waiting), std::sync::Condvar::new()));
        let for_thread = std::sync::Arc::clone(&shared);
        std::thread::Builder::new().name("registry-lock-wait".into()).spawn(move || {
            let result = loop {
                match duplicate.lock() {
                    Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
                    other => break other,
                }
            };
            let (state, woken) = &*for_thread;
            let mut state = state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            match (&*state, result) {
                (WaitState::Abandoned, Ok(())) => {
                    let _ = duplicate.unlock();
                }
                (WaitState::Abandoned, Err(_)) => {}
                (_, Ok(())) => *state = WaitState::Locked,
                (_, Err(error)) => *state = WaitState::Failed(error),
            }
            woken.notify_all();
        })?;
        Ok(LockWaiter { shared })
    }

    /// Waits until the waiting thread has the lock, failed, or `deadline`
    /// passed; gives `notice` once at its instant if still waiting then.
    fn wait(
        self,
        deadline: Instant,
        mut notice: Option<(Instant, LongWaitNotice)>,
        path: &Path,
        file: &File,
    ) -> WaitOutcome {
        let (state, woken) = &*self.shared;
        let mut guard = state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        loop {
            match std::mem::replace(&mut *guard, WaitState::Waiting) {
                WaitState::Locked => return WaitOutcome::Locked,
                WaitState::Failed(error) => return WaitOutcome::Failed(error),
                WaitState::Waiting | WaitState::Abandoned => {}
            }
            let now = Instant::now();
            if now >= deadline {
                *guard = WaitState::Abandoned;
                return WaitOutcome::TimedOut;
            }
            let wake_at = match notice {
                Some((at, _)) if at < deadline => at,
                _ => deadline,
            };
            if let Some((at, say)) = notice
                && now >= at
            {
                notice = None;
                // The holder is read without holding the state: reading
                // `/proc/locks` must not delay the waiting thread's report.
                drop(guard);
                say(path, lock_holder(file));
                guard = state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                continue;
            }
            guard = woken
                .wait_timeout(guard, wake_at.saturating_duration_since(now))
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .0;
        }
    }
}

/// How long a lock wait lasts before the handle's notice is given.
pub const LOCK_WAIT_NOTICE: Duration = Duration::from_millis(500);

/// The pid holding an `flock` on `file`, from `/proc/locks` (matched by
/// device and inode); `None` when it cannot be told (the holder is in
/// another pid namespace, or `/proc/locks` is unreadable).
pub(crate) fn lock_holder(file: &File) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    let metadata = file.metadata().ok()?;
    let (major, minor) = (nix::sys::stat::major(metadata.dev()), nix::sys::stat::minor(metadata.dev()));
    let wanted = format!("{major:02x}:{minor:02x}:{}", metadata.ino());
    let locks = std::fs::read_to_string("/proc/locks").ok()?;
    locks.lines().find_map(|line| {
        // `1: FLOCK  ADVISORY  WRITE 4711 00:1f:12345 0 EOF`; a waiter's
        // line has `->` after the number.
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.get(1) != Some(&"FLOCK") || fields.get(5) != Some(&wanted.as_str()) {
            return None;
        }
        fields.get(4)?.parse().ok()
    })
}

impl RegistryLock {
    /// The raw fd, for tests that check it is close-on-exec.
    pub fn raw_fd(&self) -> i32 {
        self._file.as_raw_fd()
    }

    pub fn fd(&self) -> BorrowedFd<'_> {
        self._file.as_fd()
    }
}
