//! Outcomes that outlive their queue (docs/contract.md §6.6): when a
//! session's queue is removed with it, every message in it is settled
//! (a pending one `expired`, its session ended; a claimed one
//! `unconfirmed`) and its settled file moved to `messages/.outcomes/`,
//! named by its id, so that `roster-send --status` still tells a sender
//! what became of it for a bounded time (`KEPT_FOR` after it was
//! settled, the newest `KEPT_MOST`).

use std::path::PathBuf;
use std::time::Duration;

use nix::fcntl::renameat;
use owner_liveness::retry_interrupted;

use crate::error::{Error, Result};
use crate::messages::format::{Message, MessageId, OutcomeKind, SESSION_ENDED};
use crate::messages::queue::{Queue, QueueListing};
use crate::record::timestamp::Timestamp;
use crate::store::directory::{OUTCOMES_NAME, OnDemandDir, RosterDir};
use crate::store::files::{entry_mtime, list_names, read_entry, remove_entry};

/// How long an outcome is kept after it was settled.
pub const KEPT_FOR: Duration = Duration::from_secs(7 * 24 * 3600);
/// The most outcomes kept; the oldest go first.
pub const KEPT_MOST: usize = 4096;

/// `messages/.outcomes/`; created when `create` and missing.
fn open_outcomes_directory(roster: &RosterDir, create: bool) -> Result<Option<OnDemandDir>> {
    OnDemandDir::open(roster, roster.messages(), OUTCOMES_NAME, create)
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
    let Some(outcomes) = open_outcomes_directory(roster, true)? else { return Ok(()) };
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
fn trim(roster: &RosterDir, outcomes: &OnDemandDir, now: Timestamp) -> Result<()> {
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
    let Some(outcomes) = open_outcomes_directory(roster, false)? else { return Ok(None) };
    let Ok(contents) = read_entry(outcomes.subdir(), &outcome_file_name(id)) else { return Ok(None) };
    let Some(message) = Message::parse(&contents.bytes) else { return Ok(None) };
    if message.message_id() != *id || message.is_pending() {
        return Ok(None);
    }
    Ok(Some((message, roster.path().join(outcomes.subdir().path()))))
}
