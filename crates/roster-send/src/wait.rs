//! Waiting for a queued message's outcome (`roster-send --wait`): inotify
//! on the session's queue directory (a settled message is renamed into
//! it) and a pidfd on the session's owner (a session that ends while its
//! message waits expires it), in one `poll`, woken too when the message's
//! time to live runs out. A coarse timeout re-reads the message now and
//! then, in case the kernel said nothing (a session that lives on in
//! another process of its chain, a queue that could not be watched).

use std::os::fd::AsFd;
use std::path::Path;
use std::time::{Duration, Instant};

use nix::poll::{PollFd, PollFlags, PollTimeout};
use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify};
use owner_liveness::{Liveness, Pid, PidFd, retry_interrupted};
use registry_core::messages::{Message, MessageId, SESSION_ENDED, expire_message, message_status};
use registry_core::{RosterDir, RunningSystem, Timestamp, read_session_row};

/// The longest a wait sleeps without looking at the message again.
const COARSE_RECHECK: Duration = Duration::from_secs(5);
/// The same when the queue or the owner could not be watched.
const FALLBACK_RECHECK: Duration = Duration::from_millis(500);

/// How a wait ended.
#[derive(Debug)]
pub enum WaitOutcome {
    /// Delivered, expired or refused.
    Settled(Message),
    /// Still pending when the wait ran out.
    StillPending(Message),
    /// Gone with its queue before its outcome was read: its session ended
    /// and a prune removed the queue.
    GoneWithItsSession,
}

/// The message being waited for and its session.
pub struct Awaited<'a> {
    pub id: &'a MessageId,
    /// Its queue directory, watched for the settled file.
    pub queue_path: &'a Path,
    /// The session's record file name and owner pid.
    pub record_file_name: &'a str,
    pub owner: Pid,
}

/// Waits until the message `awaited` names is settled, or `until`.
pub fn wait_for_outcome(
    roster: &RosterDir,
    awaited: &Awaited<'_>,
    until: Instant,
) -> anyhow::Result<WaitOutcome> {
    // Watched before the first look, so a settlement between the two is
    // not missed.
    let inotify = Inotify::init(InitFlags::IN_CLOEXEC | InitFlags::IN_NONBLOCK)?;
    let watched = inotify
        .add_watch(
            awaited.queue_path,
            AddWatchFlags::IN_MOVED_TO
                | AddWatchFlags::IN_CREATE
                | AddWatchFlags::IN_DELETE
                | AddWatchFlags::IN_DELETE_SELF
                | AddWatchFlags::IN_ONLYDIR,
        )
        .is_ok();
    let owner = PidFd::open(awaited.owner).ok();
    loop {
        let now = Timestamp::now();
        let Some(found) = message_status(roster, awaited.id, now)? else {
            // Its queue was removed with its session's record.
            return Ok(WaitOutcome::GoneWithItsSession);
        };
        let message = found.message;
        if !message.is_pending() {
            return Ok(WaitOutcome::Settled(message));
        }
        let owner_exited = owner.as_ref().is_none_or(|pidfd| pidfd.has_exited().unwrap_or(false));
        if owner_exited && session_ended(roster, awaited.record_file_name) {
            return Ok(match expire_message(roster, awaited.id, SESSION_ENDED, Timestamp::now())? {
                Some(found) => WaitOutcome::Settled(found.message),
                None => WaitOutcome::GoneWithItsSession,
            });
        }
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(WaitOutcome::StillPending(message));
        }
        let until_expiry = Duration::from_nanos(
            u64::try_from(message.expires_at().unix_nanos() - now.unix_nanos()).unwrap_or(0),
        ) + Duration::from_millis(1);
        // Without a watch or a pidfd to wake it, the coarse recheck is
        // what notices; with both, it is only a safety net.
        let recheck =
            if watched && owner.is_some() && !owner_exited { COARSE_RECHECK } else { FALLBACK_RECHECK };
        let sleep = left.min(until_expiry).min(recheck);
        sleep_until_woken(&inotify, owner.as_ref().filter(|_| !owner_exited), sleep)?;
    }
}

/// Whether the session has provably ended: its record is gone, or it
/// stands for an owner judged dead. One that could not be judged (a
/// record unreadable this instant, liveness unknown) has not: its message
/// is not expired on a passing fault.
fn session_ended(roster: &RosterDir, record_file_name: &str) -> bool {
    read_session_row(roster, record_file_name, &RunningSystem::read())
        .is_none_or(|row| row.liveness() == Liveness::Dead)
}

/// Sleeps until the queue directory changes, the owner exits, or `timeout`.
fn sleep_until_woken(inotify: &Inotify, owner: Option<&PidFd>, timeout: Duration) -> anyhow::Result<()> {
    let mut fds = vec![PollFd::new(inotify.as_fd(), PollFlags::POLLIN)];
    if let Some(owner) = owner {
        fds.push(PollFd::new(owner.as_fd(), PollFlags::POLLIN));
    }
    let milliseconds = u16::try_from(timeout.as_millis().max(1)).unwrap_or(u16::MAX);
    retry_interrupted(|| nix::poll::poll(&mut fds, PollTimeout::from(milliseconds)))?;
    // What changed is read again from the directory; the events only wake.
    while inotify.read_events().is_ok_and(|events| !events.is_empty()) {}
    Ok(())
}
