//! Outcomes that outlive their queue (docs/contract.md §6.6): when a
//! session's queue is removed with it, every message in it is settled
//! (a pending one `expired`, its session ended; a claimed one
//! `unconfirmed`) and its settled file moved to `messages/.outcomes/`,
//! named by its id, so that `roster-send --status` still tells a sender
//! what became of it for a bounded time (`KEPT_FOR` after it was
//! settled, the newest `KEPT_MOST`).

use std::fs::File;
use std::os::fd::AsFd;
use std::path::PathBuf;
use std::time::Duration;

use nix::errno::Errno;
use nix::fcntl::renameat;
use owner_liveness::retry_interrupted;

use crate::error::{Error, Result};
use crate::messages::format::{Message, MessageId, OutcomeKind, SESSION_ENDED};
use crate::messages::queue::{Queue, QueueListing};
use crate::record::timestamp::Timestamp;
use crate::store::directory::{RosterDir, SubDir, mkdir_0700, open_verified_directory};
use crate::store::files::{entry_mtime, list_names, read_entry, remove_entry};

/// The directory in `messages/` that keeps the outcomes of messages whose
/// queue is gone (a name no queue can have: queues are record names).
pub const OUTCOMES_NAME: &str = ".outcomes";
/// How long an outcome is kept after it was settled.
pub const KEPT_FOR: Duration = Duration::from_secs(7 * 24 * 3600);
/// The most outcomes kept; the oldest go first.
pub const KEPT_MOST: usize = 4096;

/// `messages/.outcomes/`, opened and checked as roster's own directories
/// are; created when `create` and missing.
struct Outcomes {
    directory: File,
    relative: PathBuf,
}

impl Outcomes {
    fn open(roster: &RosterDir, create: bool) -> Result<Option<Outcomes>> {
        let messages = roster.messages();
        let shown = roster.entry_path(messages, OUTCOMES_NAME);
        if create {
            match mkdir_0700(Some(messages.fd()), OUTCOMES_NAME.as_ref()) {
                Ok(()) | Err(Errno::EEXIST) => {}
                Err(errno) => return Err(Error::io("create", shown, errno.into())),
            }
        }
        match open_verified_directory(Some(messages.fd()), OUTCOMES_NAME.as_ref(), &shown) {
            Ok(fd) => Ok(Some(Outcomes {
                directory: File::from(fd),
                relative: messages.path().join(OUTCOMES_NAME),
            })),
            Err(Error::Io { cause, .. }) if cause.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(error),
        }
    }

    fn subdir(&self) -> SubDir<'_> {
        SubDir { fd: self.directory.as_fd(), path: &self.relative }
    }
}

/// The name of message `id`'s outcome in `messages/.outcomes/`.
fn outcome_file_name(id: &MessageId) -> String {
    format!("{id}.json")
}

/// Settles what is left in `queue` (the caller holds its lock, and is
/// about to remove it with its session) and moves every settled message
/// to the outcomes kept, then trims those to their bounds. Best kept, not
/// required: a failure leaves the queue as it was for the next prune.
pub(crate) fn keep_outcomes(roster: &RosterDir, queue: &Queue, now: Timestamp) -> Result<()> {
    let listing = queue.list(roster)?;
    queue.remove_leftovers(roster, &listing)?;
    queue.settle_stale_claims(roster, &listing, now)?;
    let listing = queue.list(roster)?;
    for entry in listing.pending() {
        if let Some(message) = queue.read(entry) {
            queue.settle(roster, &message.settled(OutcomeKind::Expired, now, SESSION_ENDED))?;
        }
    }
    let listing: QueueListing = queue.list(roster)?;
    if listing.settled().next().is_none() {
        return Ok(());
    }
    let Some(outcomes) = Outcomes::open(roster, true)? else { return Ok(()) };
    for entry in listing.settled() {
        let to = outcome_file_name(&entry.parts.id);
        retry_interrupted(|| {
            renameat(queue.subdir().fd, entry.name.as_str(), outcomes.subdir().fd, to.as_str())
        })
        .map_err(|errno| {
            Error::io("keep the outcome of", queue.path(roster).join(&entry.name), errno.into())
        })?;
    }
    trim(roster, &outcomes, now)
}

/// Removes the outcomes older than `KEPT_FOR`, then the oldest past
/// `KEPT_MOST`.
fn trim(roster: &RosterDir, outcomes: &Outcomes, now: Timestamp) -> Result<()> {
    let oldest_kept = now.unix_nanos() - KEPT_FOR.as_nanos() as i128;
    let mut kept = Vec::new();
    for name in list_names(roster, outcomes.subdir())? {
        let Some(mtime) = entry_mtime(outcomes.subdir(), &name) else { continue };
        if mtime.unix_nanos() < oldest_kept {
            remove_entry(roster, outcomes.subdir(), &name)?;
        } else {
            kept.push((mtime.unix_nanos(), name));
        }
    }
    if kept.len() > KEPT_MOST {
        kept.sort();
        for (_, name) in kept.iter().take(kept.len() - KEPT_MOST) {
            remove_entry(roster, outcomes.subdir(), name)?;
        }
    }
    Ok(())
}

/// The kept outcome of message `id`, when its queue is gone: a settled
/// message roster wrote, whose id is the one its name says.
pub(crate) fn archived(roster: &RosterDir, id: &MessageId) -> Result<Option<(Message, PathBuf)>> {
    let Some(outcomes) = Outcomes::open(roster, false)? else { return Ok(None) };
    let Ok(contents) = read_entry(outcomes.subdir(), &outcome_file_name(id)) else { return Ok(None) };
    let Some(message) = Message::parse(&contents.bytes) else { return Ok(None) };
    if message.message_id() != *id || message.is_pending() {
        return Ok(None);
    }
    Ok(Some((message, roster.path().join(&outcomes.relative))))
}
