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

/// The signal that ends a blocked `flock` at its deadline. Its handler does
/// nothing and is installed without `SA_RESTART`, so `flock` returns EINTR;
/// it is only ever sent by a wait's own timer, to the waiting thread.
const WAKE_SIGNAL: nix::sys::signal::Signal = nix::sys::signal::Signal::SIGALRM;

/// Waits for the lock on `file` in `flock(LOCK_EX)` itself, so that the
/// kernel hands the lock to this very thread the instant the holder lets go
/// or dies: a per-thread timer interrupts the wait at `deadline` (and at
/// the notice's instant). (A second thread blocked in `flock` for it made
/// every contended lock wait for that thread to wake this one, one more
/// turn of the scheduler with the lock held, and cost a thread.)
fn wait_in_flock(
    file: &File,
    deadline: Instant,
    mut notice: Option<(Instant, LongWaitNotice)>,
    path: &Path,
) -> WaitOutcome {
    let timer = match WakeTimer::start() {
        Ok(timer) => timer,
        Err(error) => return WaitOutcome::Failed(error),
    };
    loop {
        let now = Instant::now();
        if now >= deadline {
            return WaitOutcome::TimedOut;
        }
        if let Some((at, say)) = notice
            && now >= at
        {
            notice = None;
            say(path, lock_holder(file));
            continue;
        }
        let wake_at = match notice {
            Some((at, _)) if at < deadline => at,
            _ => deadline,
        };
        if let Err(error) = timer.arm(wake_at - now) {
            return WaitOutcome::Failed(error);
        }
        match file.lock() {
            Ok(()) => return WaitOutcome::Locked,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(error) => return WaitOutcome::Failed(error),
        }
    }
}

/// A POSIX timer that sends `WAKE_SIGNAL` to the thread that made it, with
/// that signal unblocked in the thread while it lives. Dropped, it is
/// deleted, a signal of it still pending is taken, and the thread's mask is
/// as it was: nothing of the wait reaches later system calls.
struct WakeTimer {
    timer: nix::libc::timer_t,
    mask_before: nix::sys::signal::SigSet,
}

impl WakeTimer {
    fn start() -> std::io::Result<WakeTimer> {
        use nix::libc;
        use nix::sys::signal::{SigSet, SigmaskHow, pthread_sigmask};
        install_wake_handler()?;
        let mut mask_before = SigSet::empty();
        let wake = SigSet::from(WAKE_SIGNAL);
        pthread_sigmask(SigmaskHow::SIG_UNBLOCK, Some(&wake), Some(&mut mask_before))?;
        // SAFETY: `event` is fully initialised (zeroed, then the fields the
        // kernel reads for SIGEV_THREAD_ID), and `timer` is written by the
        // call before it is read.
        let created = unsafe {
            let mut event: libc::sigevent = std::mem::zeroed();
            event.sigev_notify = libc::SIGEV_THREAD_ID;
            event.sigev_signo = WAKE_SIGNAL as libc::c_int;
            event.sigev_notify_thread_id = libc::gettid();
            let mut timer: libc::timer_t = std::mem::zeroed();
            match libc::timer_create(libc::CLOCK_MONOTONIC, &mut event, &mut timer) {
                0 => Ok(timer),
                _ => Err(std::io::Error::last_os_error()),
            }
        };
        match created {
            Ok(timer) => Ok(WakeTimer { timer, mask_before }),
            Err(error) => {
                let _ = pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&mask_before), None);
                Err(error)
            }
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
        use nix::sys::signal::{SigSet, SigmaskHow, pthread_sigmask};
        // SAFETY: deleted once; no signal of it is generated afterwards.
        unsafe { libc::timer_delete(self.timer) };
        let wake = SigSet::from(WAKE_SIGNAL);
        let _ = pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&wake), None);
        let no_wait = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: takes a pending wake signal of this thread, if any, without
        // waiting; the set and the timeout live for the call.
        while unsafe { libc::sigtimedwait(wake.as_ref(), std::ptr::null_mut(), &no_wait) } > 0 {}
        let _ = pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&self.mask_before), None);
    }
}

/// Installs the wake signal's handler, which does nothing, once per process.
fn install_wake_handler() -> std::io::Result<()> {
    use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, sigaction};
    static INSTALLED: std::sync::OnceLock<Result<(), nix::errno::Errno>> = std::sync::OnceLock::new();
    extern "C" fn wake(_: nix::libc::c_int) {}
    let outcome = INSTALLED.get_or_init(|| {
        let action = SigAction::new(SigHandler::Handler(wake), SaFlags::empty(), SigSet::empty());
        // SAFETY: the handler does nothing, so it is async-signal-safe.
        unsafe { sigaction(WAKE_SIGNAL, &action) }.map(drop)
    });
    outcome.map_err(std::io::Error::from)
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
