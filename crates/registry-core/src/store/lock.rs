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
    /// in the kernel: this thread blocks in `flock(LOCK_EX)`, so it gets
    /// the lock the instant the holder releases it or dies, and a timer
    /// ends the wait at the deadline (`wait_in_flock`). Polling instead made
    /// waiters sleep through most releases: at eight writers one in a
    /// hundred registrations waited hundreds of milliseconds.
    pub fn lock_within(&self, wait: Duration) -> Result<RegistryLock> {
        let (file, path) = self.open_lock_file()?;
        let started = Instant::now();
        let deadline = || match self.lock_deadline() {
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
/// in the kernel until `deadline` at most (asked only when the lock is
/// held), then "busy" naming the holder:
/// the registry lock and every lock of its kind (a message queue's) wait
/// this one way. `notice` is given once when the wait lasts
/// `LOCK_WAIT_NOTICE`.
pub(crate) fn flock_within(
    file: &File,
    path: std::path::PathBuf,
    deadline: impl FnOnce() -> Instant,
    notice: Option<LongWaitNotice>,
) -> Result<()> {
    let started = Instant::now();
    if take_lock_if_free(file, &path)? {
        return Ok(());
    }
    let deadline = deadline();
    let notice_at = notice.map(|notice| (started + LOCK_WAIT_NOTICE, notice));
    match wait_in_flock(file, deadline, notice_at, &path) {
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

enum WaitOutcome {
    Locked,
    Failed(std::io::Error),
    TimedOut,
}

/// How often the wake-up signal repeats once due, until the wait ends: a
/// signal that came just before the thread blocked in `flock` is followed
/// by another this soon.
const WAKE_REPEAT: Duration = Duration::from_millis(2);

/// The signal that ends a blocked `flock` at its deadline: a real-time
/// signal nothing else of roster's uses, and that no one sends to end a
/// process (as `timeout -s ALRM` sends SIGALRM). Its handler does nothing
/// and is installed without `SA_RESTART`, so `flock` returns EINTR; only a
/// wait's own timer sends it, to the waiting thread.
fn wake_signal() -> nix::libc::c_int {
    nix::libc::SIGRTMIN() + 5
}

/// Waits for the lock on `file` in `flock(LOCK_EX)` itself, so that the
/// kernel hands the lock to this very thread the instant the holder lets go
/// or dies: a per-thread timer interrupts the wait at `deadline` (and at
/// the notice's instant). (A second thread blocked in `flock` for it made
/// every contended lock wait for that thread to wake this one, one more
/// turn of the scheduler with the lock held, and cost a thread.) Where no
/// timer can be made (the user's RLIMIT_SIGPENDING, which counts timers,
/// is spent; a seccomp filter forbids them) the lock is asked for again and
/// again instead, up to the same deadline.
fn wait_in_flock(
    file: &File,
    deadline: Instant,
    mut notice: Option<(Instant, LongWaitNotice)>,
    path: &Path,
) -> WaitOutcome {
    let Ok(timer) = WakeTimer::start() else { return poll_for_lock(file, deadline, notice, path) };
    loop {
        let now = match due_at(deadline, &mut notice, path, file) {
            Some(now) => now,
            None => return WaitOutcome::TimedOut,
        };
        let wake_at = match notice {
            Some((at, _)) if at < deadline => at,
            _ => deadline,
        };
        if timer.arm(wake_at - now).is_err() {
            drop(timer);
            return poll_for_lock(file, deadline, notice, path);
        }
        match file.lock() {
            Ok(()) => return WaitOutcome::Locked,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(error) => return WaitOutcome::Failed(error),
        }
    }
}

/// The instant a wait goes on from, after giving `notice` when it is due;
/// `None` once `deadline` has passed.
fn due_at(
    deadline: Instant,
    notice: &mut Option<(Instant, LongWaitNotice)>,
    path: &Path,
    file: &File,
) -> Option<Instant> {
    let now = Instant::now();
    if now >= deadline {
        return None;
    }
    match *notice {
        Some((at, say)) if now >= at => {
            *notice = None;
            say(path, lock_holder(file));
            // Saying it took a while: the deadline is asked again.
            due_at(deadline, notice, path, file)
        }
        _ => Some(now),
    }
}

/// The longest pause between two asks of `poll_for_lock`.
const LONGEST_POLL_PAUSE: Duration = Duration::from_millis(16);

/// Asks for the lock without blocking until `deadline`, pausing a
/// millisecond, then twice as long each time up to `LONGEST_POLL_PAUSE`:
/// the wait of a thread that cannot have a timer.
fn poll_for_lock(
    file: &File,
    deadline: Instant,
    mut notice: Option<(Instant, LongWaitNotice)>,
    path: &Path,
) -> WaitOutcome {
    let mut pause = Duration::from_millis(1);
    loop {
        match file.try_lock() {
            Ok(()) => return WaitOutcome::Locked,
            Err(std::fs::TryLockError::WouldBlock) => {}
            Err(std::fs::TryLockError::Error(error)) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(std::fs::TryLockError::Error(error)) => return WaitOutcome::Failed(error),
        }
        let now = match due_at(deadline, &mut notice, path, file) {
            Some(now) => now,
            None => return WaitOutcome::TimedOut,
        };
        std::thread::sleep(pause.min(deadline - now));
        pause = (pause * 2).min(LONGEST_POLL_PAUSE);
    }
}

/// A POSIX timer that sends `wake_signal()` to the thread that made it,
/// with that signal unblocked in the thread while it lives. Dropped, it is
/// deleted, a signal of it still pending is taken, and the thread's mask is
/// as it was: nothing of the wait reaches later system calls.
struct WakeTimer {
    timer: nix::libc::timer_t,
    mask_before: nix::libc::sigset_t,
}

/// The set of the wake signal alone.
fn wake_set() -> nix::libc::sigset_t {
    // SAFETY: the set is initialised by sigemptyset before the signal is
    // added; both only write the set.
    unsafe {
        let mut set: nix::libc::sigset_t = std::mem::zeroed();
        nix::libc::sigemptyset(&mut set);
        nix::libc::sigaddset(&mut set, wake_signal());
        set
    }
}

impl WakeTimer {
    fn start() -> std::io::Result<WakeTimer> {
        use nix::libc;
        install_wake_handler()?;
        let wake = wake_set();
        // SAFETY: the sets live for the calls; `event` is fully initialised
        // (zeroed, then the fields the kernel reads for SIGEV_THREAD_ID),
        // and `timer` is written by the call before it is read.
        unsafe {
            let mut mask_before: libc::sigset_t = std::mem::zeroed();
            if libc::pthread_sigmask(libc::SIG_UNBLOCK, &wake, &mut mask_before) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            let mut event: libc::sigevent = std::mem::zeroed();
            event.sigev_notify = libc::SIGEV_THREAD_ID;
            event.sigev_signo = wake_signal();
            event.sigev_notify_thread_id = libc::gettid();
            let mut timer: libc::timer_t = std::mem::zeroed();
            if libc::timer_create(libc::CLOCK_MONOTONIC, &mut event, &mut timer) != 0 {
                let error = std::io::Error::last_os_error();
                libc::pthread_sigmask(libc::SIG_SETMASK, &mask_before, std::ptr::null_mut());
                return Err(error);
            }
            Ok(WakeTimer { timer, mask_before })
        }
    }

    /// Sends the signal after `after`, then every `WAKE_REPEAT`.
    fn arm(&self, after: Duration) -> std::io::Result<()> {
        use nix::libc;
        let after = after.max(Duration::from_nanos(1));
        let spec = |duration: Duration| libc::timespec {
            tv_sec: duration.as_secs() as libc::time_t,
            tv_nsec: libc::c_long::from(duration.subsec_nanos() as i32),
        };
        let setting = libc::itimerspec { it_value: spec(after), it_interval: spec(WAKE_REPEAT) };
        // SAFETY: `self.timer` is a live timer of this process.
        match unsafe { libc::timer_settime(self.timer, 0, &setting, std::ptr::null_mut()) } {
            0 => Ok(()),
            _ => Err(std::io::Error::last_os_error()),
        }
    }
}

impl Drop for WakeTimer {
    fn drop(&mut self) {
        use nix::libc;
        let wake = wake_set();
        let no_wait = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: the timer is deleted once, after which it sends nothing; a
        // wake signal of it still pending for this thread is taken without
        // waiting (the set and the timeout live for the calls); the mask is
        // put back as it was.
        unsafe {
            libc::timer_delete(self.timer);
            libc::pthread_sigmask(libc::SIG_BLOCK, &wake, std::ptr::null_mut());
            while libc::sigtimedwait(&wake, std::ptr::null_mut(), &no_wait) > 0 {}
            libc::pthread_sigmask(libc::SIG_SETMASK, &self.mask_before, std::ptr::null_mut());
        }
    }
}

/// Installs the wake signal's handler, which does nothing, once per process.
fn install_wake_handler() -> std::io::Result<()> {
    use nix::libc;
    static INSTALLED: std::sync::OnceLock<Result<(), i32>> = std::sync::OnceLock::new();
    extern "C" fn wake(_: libc::c_int) {}
    let outcome = INSTALLED.get_or_init(|| {
        // SAFETY: the handler does nothing, so it is async-signal-safe; the
        // action is fully initialised before the call reads it.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = wake as extern "C" fn(libc::c_int) as libc::sighandler_t;
            libc::sigemptyset(&mut action.sa_mask);
            action.sa_flags = 0;
            match libc::sigaction(wake_signal(), &action, std::ptr::null_mut()) {
                0 => Ok(()),
                _ => Err(nix::errno::Errno::last_raw()),
            }
        }
    });
    outcome.map_err(std::io::Error::from_raw_os_error)
}

/// How long a lock wait lasts before the handle's notice is given.
pub const LOCK_WAIT_NOTICE: Duration = Duration::from_millis(500);

/// The pid holding an `flock` on `file`, from `/proc/locks` (matched by
/// device and inode); `None` when it cannot be told (the holder is in
/// another pid namespace, or `/proc/locks` is unreadable).
///
/// The kernel hands `/proc/locks` out a page at a time, each page a pass
/// of its own over the locks held then: a lock taken or let go by anyone
/// between two pages shifts the lines, and a line (the holder's) can be
/// missed by that read. Where other processes lock and unlock busily (the
/// registries of many sessions, queues), the holder a lock wait named at
/// its notice was missing from its final error. A holder not found is
/// looked for again, up to `LOCKS_READS` reads.
pub(crate) fn lock_holder(file: &File) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    let metadata = file.metadata().ok()?;
    let (major, minor) = (nix::sys::stat::major(metadata.dev()), nix::sys::stat::minor(metadata.dev()));
    let wanted = format!("{major:02x}:{minor:02x}:{}", metadata.ino());
    (0..LOCKS_READS).find_map(|_| {
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
    })
}

/// How often `lock_holder` reads `/proc/locks` for a holder it has not
/// found: eight reads that each miss its line are beyond any churn seen.
const LOCKS_READS: usize = 8;

impl RegistryLock {
    /// The raw fd, for tests that check it is close-on-exec.
    pub fn raw_fd(&self) -> i32 {
        self._file.as_raw_fd()
    }

    pub fn fd(&self) -> BorrowedFd<'_> {
        self._file.as_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};

    /// The holder of a lock is found in `/proc/locks` every time while
    /// other threads take and let go of a hundred and more locks, which
    /// spread the file over several pages that each read passes over anew.
    #[test]
    fn the_holder_is_found_while_other_locks_come_and_go() {
        const CHURNING_THREADS: usize = 4;
        const LOCKS_EACH: usize = 48;
        let temp = tempfile::tempdir().unwrap();
        let held = File::create(temp.path().join("held")).unwrap();
        held.lock().unwrap();
        let asked = File::open(temp.path().join("held")).unwrap();
        let stop = AtomicBool::new(false);
        std::thread::scope(|scope| {
            for thread in 0..CHURNING_THREADS {
                let (stop, directory) = (&stop, temp.path());
                scope.spawn(move || {
                    let files: Vec<File> = (0..LOCKS_EACH)
                        .map(|index| File::create(directory.join(format!("churn-{thread}-{index}"))).unwrap())
                        .collect();
                    while !stop.load(Ordering::Relaxed) {
                        for file in &files {
                            file.lock().unwrap();
                        }
                        for file in &files {
                            file.unlock().unwrap();
                        }
                    }
                });
            }
            let misses = (0..300).filter(|_| lock_holder(&asked) != Some(std::process::id())).count();
            stop.store(true, Ordering::Relaxed);
            assert_eq!(misses, 0, "the holder was missing from /proc/locks in {misses} of 300 asks");
        });
    }
}
