//! Applying one event to a session's state file: the state hook's whole
//! write, on every tool call, so it takes no registry lock, rewrites no
//! record and fsyncs nothing.
//!
//! The session's own updates are ordered by an `flock` on the state file
//! in place: a writer opens it, locks it, checks the name still holds the
//! file it locked (another writer may have renamed a new one over it
//! meanwhile, and then it starts again), reads the last event's order,
//! drops its event if it is older, else writes a temporary and renames it
//! over the name before letting go. Readers take no lock: the rename makes
//! them see the old file or the new one. The first event of a name puts
//! its file there with a rename that refuses to replace, so two first
//! events cannot both believe they were first.

use std::fs::File;
use std::io::Write;
use std::os::fd::{AsFd, OwnedFd};
use std::time::{Duration, Instant};

use harness::Activity;
use nix::errno::Errno;
use nix::fcntl::{AtFlags, OFlag, RenameFlags, openat, renameat, renameat2};
use nix::sys::stat::{FileStat, Mode, fstat, fstatat};
use nix::unistd::{UnlinkatFlags, unlinkat};
use owner_liveness::retry_interrupted;

use crate::error::{Error, Result};
use crate::record::timestamp::Timestamp;
use crate::state::file::{STATE_FORMAT, StateFile};
use crate::store::directory::{RosterDir, SubDir};
use crate::store::files::{io_errno, read_to_limit, temp_name};
use crate::store::ownership::effective_uid;

/// One event, as the state hook hands it on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StateEvent<'a> {
    pub activity: Activity,
    pub waiting_for: Option<&'a str>,
    /// `<harness>:<event>`.
    pub source: &'a str,
    /// When the hook started.
    pub at: Timestamp,
    /// The boot clock's nanoseconds when the hook started
    /// (`StateEvent::boot_clock_now`): the event's place in the session's
    /// order.
    pub order: u64,
}

impl StateEvent<'_> {
    /// The boot clock now, in nanoseconds: `CLOCK_BOOTTIME`, which counts
    /// suspended time and never goes back within a boot.
    pub fn boot_clock_now() -> u64 {
        nix::time::clock_gettime(nix::time::ClockId::CLOCK_BOOTTIME)
            .map(|time| {
                u64::try_from(time.tv_sec()).unwrap_or(0) * 1_000_000_000
                    + u64::try_from(time.tv_nsec()).unwrap_or(0)
            })
            .unwrap_or(0)
    }
}

/// What an event did to the state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StateChange {
    /// The activity (or what it waits for) changed.
    Changed,
    /// The same activity as before; only the last event's order moved.
    Unchanged,
    /// A later event was applied already; this one changed nothing.
    Older,
}

/// How many times a writer starts over because another writer replaced
/// the state file between its open and its lock.
const ATTEMPTS: usize = 32;

/// The largest state file read; roster writes a few hundred bytes.
const MAX_STATE_BYTES: u64 = 4096;

/// Applies `event` to the state of the record named `record_file_name`,
/// whose owner is `session_pid` started at `start_ticks`. Waits for the
/// session's other updates at most until the instant `lock_deadline`
/// tells, asked only when one holds the state's lock.
pub fn record_state_event(
    roster: &RosterDir,
    record_file_name: &str,
    session_pid: u32,
    start_ticks: u64,
    event: &StateEvent<'_>,
    lock_deadline: impl Fn() -> Instant,
) -> Result<StateChange> {
    if !StateFile::accepts(event.waiting_for, event.source)
        || (event.activity == Activity::Waiting) != event.waiting_for.is_some()
    {
        return Err(Error::BadInput(format!(
            "state event {:?} waiting for {:?} cannot be recorded",
            event.source, event.waiting_for
        )));
    }
    let states = roster.states();
    let path = roster.entry_path(states, record_file_name);
    let fail = |operation: &'static str, errno: Errno| Error::io(operation, path.clone(), errno.into());
    let fresh = |prior: Option<&StateFile>| next_state(prior, session_pid, start_ticks, event);
    for _ in 0..ATTEMPTS {
        let flags = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC;
        let fd = match retry_interrupted(|| openat(states.fd(), record_file_name, flags, Mode::empty())) {
            Ok(fd) => fd,
            Err(Errno::ENOENT) => {
                let (file, change) = fresh(None).expect("no prior state: the event applies");
                match put_in_place(states, record_file_name, &file, Placement::OnlyIfAbsent) {
                    Ok(()) => return Ok(change),
                    Err(Errno::EEXIST) => continue,
                    Err(errno) => return Err(fail("write", errno)),
                }
            }
            // A symlink or something else roster never puts there: replaced
            // below, as a file that holds no state.
            Err(Errno::ELOOP) => {
                let (file, change) = fresh(None).expect("no prior state: the event applies");
                put_in_place(states, record_file_name, &file, Placement::Replacing)
                    .map_err(|errno| fail("write", errno))?;
                return Ok(change);
            }
            Err(errno) => return Err(fail("open", errno)),
        };
        let locked = lock_until(fd, &lock_deadline).map_err(|errno| fail("lock", errno))?;
        let Some(held) = still_in_place(states, record_file_name, &locked) else { continue };
        let prior = read_state_file(&locked, &held);
        let Some((file, change)) = fresh(prior.as_ref()) else { return Ok(StateChange::Older) };
        put_in_place(states, record_file_name, &file, Placement::Replacing)
            .map_err(|errno| fail("write", errno))?;
        drop(locked);
        return Ok(change);
    }
    Err(Error::io(
        "update",
        path,
        std::io::Error::other("the state file kept being replaced while this update waited for it"),
    ))
}

/// The file after `event`, and what it changed; `None` when `prior`
/// describes the same owner and a later event.
fn next_state(
    prior: Option<&StateFile>,
    session_pid: u32,
    start_ticks: u64,
    event: &StateEvent<'_>,
) -> Option<(StateFile, StateChange)> {
    let prior = prior.filter(|prior| prior.describes_owner(session_pid, start_ticks));
    if prior.is_some_and(|prior| prior.last_event_order > event.order) {
        return None;
    }
    let same = prior.filter(|prior| {
        prior.state == event.activity.as_str() && prior.waiting_for.as_deref() == event.waiting_for
    });
    let (since, source) = match same {
        Some(prior) => (prior.state_since.clone(), prior.state_source.clone()),
        None => (event.at.to_string(), event.source.to_owned()),
    };
    let file = StateFile {
        format: STATE_FORMAT,
        session_pid,
        start_ticks,
        state: event.activity.as_str().to_owned(),
        waiting_for: event.waiting_for.map(str::to_owned),
        state_since: since,
        state_source: source,
        last_event_at: event.at.to_string(),
        last_event_order: event.order,
    };
    let change = if same.is_some() { StateChange::Unchanged } else { StateChange::Changed };
    Some((file, change))
}

/// Takes the `flock` on `fd`, trying again every millisecond until the
/// instant `deadline` tells (asked once, at the first busy try): only the
/// same session's other updates hold it, for a few microseconds each,
/// unless one of them was stopped.
fn lock_until(fd: OwnedFd, deadline: &impl Fn() -> Instant) -> std::result::Result<File, Errno> {
    let file = File::from(fd);
    let mut until = None;
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(file),
            Err(std::fs::TryLockError::WouldBlock)
                if Instant::now() < *until.get_or_insert_with(deadline) =>
            {
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(std::fs::TryLockError::WouldBlock) => return Err(Errno::EWOULDBLOCK),
            Err(std::fs::TryLockError::Error(error)) => return Err(io_errno(&error)),
        }
    }
}

/// The status of the file `locked` is open on, when `name` still holds
/// that file; `None` when another file took the name.
fn still_in_place(states: SubDir<'_>, name: &str, locked: &File) -> Option<FileStat> {
    let held = retry_interrupted(|| fstat(locked.as_fd())).ok()?;
    retry_interrupted(|| fstatat(states.fd(), name, AtFlags::AT_SYMLINK_NOFOLLOW))
        .is_ok_and(|now| now.st_dev == held.st_dev && now.st_ino == held.st_ino)
        .then_some(held)
}

/// The state file `file` is open on (`stat` is its status), when it is one
/// roster wrote for this user: a regular file of the effective uid, not
/// writable by others, of a sane size, that parses.
fn read_state_file(file: &File, stat: &FileStat) -> Option<StateFile> {
    let regular = stat.st_mode & nix::libc::S_IFMT == nix::libc::S_IFREG;
    let trusted = regular
        && stat.st_uid == effective_uid()
        && stat.st_mode & 0o022 == 0
        && u64::try_from(stat.st_size).is_ok_and(|size| size <= MAX_STATE_BYTES);
    if !trusted {
        return None;
    }
    let bytes = read_to_limit(file.as_fd(), stat.st_size, MAX_STATE_BYTES as usize + 1).ok()?;
    StateFile::parse(&bytes)
}

/// Whether a new state file may replace what is at its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Placement {
    /// Only when nothing is there (the first event of a name).
    OnlyIfAbsent,
    Replacing,
}

/// Writes `file` to a `0600` temporary and renames it to `name`: no fsync
/// (a state lost in a crash is written again by the next event).
fn put_in_place(
    states: SubDir<'_>,
    name: &str,
    file: &StateFile,
    placement: Placement,
) -> std::result::Result<(), Errno> {
    let temp = temp_name(name);
    let written = (|| {
        let flags = OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
        let fd =
            retry_interrupted(|| openat(states.fd(), temp.as_str(), flags, Mode::S_IRUSR | Mode::S_IWUSR))?;
        let mut written = File::from(fd);
        written.write_all(&file.to_bytes()).map_err(|error| io_errno(&error))?;
        drop(written);
        match placement {
            Placement::Replacing => {
                retry_interrupted(|| renameat(states.fd(), temp.as_str(), states.fd(), name))
            }
            Placement::OnlyIfAbsent => retry_interrupted(|| {
                renameat2(states.fd(), temp.as_str(), states.fd(), name, RenameFlags::RENAME_NOREPLACE)
            }),
        }
    })();
    if written.is_err() {
        let _ = unlinkat(states.fd(), temp.as_str(), UnlinkatFlags::NoRemoveDir);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(activity: Activity, order: u64) -> StateEvent<'static> {
        StateEvent {
            activity,
            waiting_for: (activity == Activity::Waiting).then_some("permission"),
            source: "claude-code:PreToolUse",
            at: Timestamp::from_unix_nanos(i128::from(order) * 1000),
            order,
        }
    }

    #[test]
    fn an_older_event_of_the_same_owner_changes_nothing() {
        let (working, _) = next_state(None, 7, 70, &event(Activity::Working, 10)).unwrap();
        assert_eq!(next_state(Some(&working), 7, 70, &event(Activity::Waiting, 9)), None);
        let (waiting, change) = next_state(Some(&working), 7, 70, &event(Activity::Waiting, 11)).unwrap();
        assert_eq!((waiting.state.as_str(), change), ("waiting", StateChange::Changed));
    }

    #[test]
    fn the_same_activity_keeps_its_since_and_source() {
        let (first, _) = next_state(None, 7, 70, &event(Activity::Working, 10)).unwrap();
        let mut later = event(Activity::Working, 20);
        later.source = "claude-code:PostToolUse";
        let (second, change) = next_state(Some(&first), 7, 70, &later).unwrap();
        assert_eq!(change, StateChange::Unchanged);
        assert_eq!((second.state_since, second.state_source), (first.state_since, first.state_source));
        assert_eq!(second.last_event_order, 20);
    }

    /// Every event roster listens to, in every state a session can be in:
    /// the event's activity is the state after it, and the state's time
    /// and source move only when the activity (or what it waits for) does.
    #[test]
    fn every_event_in_every_state_sets_its_own_activity() {
        let sources: Vec<String> = harness::ACTIVITY_EVENTS
            .iter()
            .map(|row| format!("{}:{}", row.harness.as_str(), row.event))
            .collect();
        let event_of = |index: usize, order: u64| {
            let row = &harness::ACTIVITY_EVENTS[index];
            StateEvent {
                activity: row.activity,
                waiting_for: row.waiting_for,
                source: &sources[index],
                at: Timestamp::from_unix_nanos(i128::from(order)),
                order,
            }
        };
        let mut starts: Vec<Option<StateFile>> = vec![None];
        for (index, _) in harness::ACTIVITY_EVENTS.iter().enumerate() {
            starts.push(next_state(None, 7, 70, &event_of(index, 10)).map(|(file, _)| file));
        }
        for start in &starts {
            for (index, row) in harness::ACTIVITY_EVENTS.iter().enumerate() {
                let (after, change) = next_state(start.as_ref(), 7, 70, &event_of(index, 20)).expect("newer");
                assert_eq!(after.state, row.activity.as_str(), "{row:?} after {start:?}");
                assert_eq!(after.waiting_for.as_deref(), row.waiting_for, "{row:?}");
                let same = start.as_ref().is_some_and(|start| {
                    start.state == row.activity.as_str() && start.waiting_for.as_deref() == row.waiting_for
                });
                assert_eq!(change == StateChange::Unchanged, same, "{row:?} after {start:?}");
                let expected_since = if same {
                    start.as_ref().unwrap().state_since.clone()
                } else {
                    after.last_event_at.clone()
                };
                assert_eq!(after.state_since, expected_since, "{row:?} after {start:?}");
                // Sent before what the file holds: nothing changes.
                if let Some(start) = start {
                    assert_eq!(next_state(Some(start), 7, 70, &event_of(index, 5)), None, "{row:?}");
                }
            }
        }
    }

    #[test]
    fn an_earlier_owners_state_is_no_prior_state() {
        let (earlier, _) = next_state(None, 7, 70, &event(Activity::Working, 1000)).unwrap();
        let (now, change) = next_state(Some(&earlier), 7, 71, &event(Activity::Working, 5)).unwrap();
        assert_eq!(change, StateChange::Changed);
        assert_eq!(now.start_ticks, 71);
        assert_eq!(now.last_event_order, 5);
    }
}
