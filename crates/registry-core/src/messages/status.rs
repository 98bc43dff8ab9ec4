//! A message found by its id, wherever it is queued (`roster-send
//! --status`, `--wait`): read as it stands, with a pending one whose time
//! ran out settled expired on the way (under its queue's lock), so that
//! every reader sees the same outcome.

use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::messages::archive;
use crate::messages::format::{Message, MessageId, OutcomeKind, TIME_TO_LIVE_RAN_OUT};
use crate::messages::queue::{Queue, QueueEntry, queue_lock_deadline};
use crate::record::timestamp::Timestamp;
use crate::store::directory::RosterDir;
use crate::store::files::list_names;

/// How long `--status` waits for a queue whose hook is handing the
/// message over: a hand-over takes a few writes; past this the message
/// is shown pending, as it still is.
const CLAIM_LOOK_WAIT: Duration = Duration::from_millis(200);

/// Where a message is: its queue directory and its message.
#[derive(Debug)]
pub struct FoundMessage {
    pub message: Message,
    /// The queue directory it is in, which changes when it is settled
    /// (what a waiter watches).
    pub queue_path: std::path::PathBuf,
}

/// The kept outcome of the message `id`, once its queue is gone.
fn archived(roster: &RosterDir, id: &MessageId) -> Result<Option<FoundMessage>> {
    Ok(archive::archived(roster, id)?.map(|(message, queue_path)| FoundMessage { message, queue_path }))
}

/// The message `id`, `None` when no queue holds it and no outcome of it
/// is kept (never queued here, or past the settled ones kept); once its
/// queue is gone with its session, its kept outcome. A pending
/// message whose time ran out by `now` is settled expired first.
pub fn message_status(roster: &RosterDir, id: &MessageId, now: Timestamp) -> Result<Option<FoundMessage>> {
    settle_if_pending(roster, id, now, |message| {
        (message.expires_at() <= now).then_some(TIME_TO_LIVE_RAN_OUT.to_owned())
    })
}

/// Settles the message `id` expired with `reason` when it is still
/// pending (its session ended while a sender waited for it), and returns
/// it as it then stands.
pub fn expire_message(
    roster: &RosterDir,
    id: &MessageId,
    reason: &str,
    now: Timestamp,
) -> Result<Option<FoundMessage>> {
    settle_if_pending(roster, id, now, |_| Some(reason.to_owned()))
}

/// The message `id`, settled expired with the reason `expiry` gives for
/// it when it is pending and `expiry` gives one.
fn settle_if_pending(
    roster: &RosterDir,
    id: &MessageId,
    now: Timestamp,
    expiry: impl Fn(&Message) -> Option<String>,
) -> Result<Option<FoundMessage>> {
    let Some((queue, entry, message)) = find_and_read(roster, id)? else { return archived(roster, id) };
    let claimed = entry.parts.claimed;
    if !claimed && (!message.is_pending() || expiry(&message).is_none()) {
        return Ok(Some(FoundMessage { message, queue_path: queue.path(roster) }));
    }
    // A claimed message is being handed over while its hook holds the
    // lock; found claimed under the lock, its hook stopped first.
    let deadline = if claimed { Instant::now() + CLAIM_LOOK_WAIT } else { queue_lock_deadline(roster) };
    match queue.lock(roster, deadline) {
        Ok(true) => {}
        Ok(false) => return archived(roster, id),
        Err(crate::error::Error::QueueLocked { .. }) if claimed => {
            return Ok(Some(FoundMessage { message, queue_path: queue.path(roster) }));
        }
        Err(error) => return Err(error),
    }
    let listing = queue.list(roster)?;
    queue.settle_stale_claims(roster, &listing, now)?;
    // Settled meanwhile, by a delivery or another reader: as it is now.
    let listing = queue.list(roster)?;
    let Some(current) = listing.messages.iter().rev().find(|listed| listed.parts.id == *id) else {
        return Ok(None);
    };
    let Some(message) = queue.read(current) else { return Ok(None) };
    let message = match (message.is_pending(), expiry(&message)) {
        (true, Some(reason)) => {
            let settled = message.settled(OutcomeKind::Expired, now, &reason);
            queue.settle(roster, &settled)?;
            settled
        }
        _ => message,
    };
    Ok(Some(FoundMessage { message, queue_path: queue.path(roster) }))
}

/// How many times a message whose file was renamed between its listing
/// and its reading (claimed, settled or put back by a delivery meanwhile)
/// is looked for again before it counts as unreadable.
const RENAMED_MEANWHILE_ATTEMPTS: u32 = 8;

/// The message `id` found and read: a file renamed between the listing
/// and the read (a hook claiming or settling it) is looked for again
/// rather than taken for a message gone with its queue.
/// A read that failed (an I/O error) is an error: the message may be a
/// good one that a later look reads, never one taken for gone.
fn find_and_read(roster: &RosterDir, id: &MessageId) -> Result<Option<(Queue, QueueEntry, Message)>> {
    let mut failed = None;
    for attempt in 1..=RENAMED_MEANWHILE_ATTEMPTS {
        let Some((queue, entry)) = find(roster, id)? else { return Ok(None) };
        match queue.read_or_failure(&entry) {
            Ok(Some(message)) => return Ok(Some((queue, entry, message))),
            Ok(None) => failed = None,
            Err(why) => failed = Some((queue.path(roster).join(&entry.name), why)),
        }
        if attempt < RENAMED_MEANWHILE_ATTEMPTS {
            std::thread::sleep(Duration::from_millis(u64::from(attempt)));
        }
    }
    match failed {
        Some((path, why)) => Err(Error::io("read", path, std::io::Error::other(why))),
        None => Ok(None),
    }
}

/// The queue holding the message `id` and its file's entry (the settled
/// one when a crash left both names).
///
/// A queue that could not be listed (an I/O error) may hold it: not found
/// elsewhere, that is the answer, as an error, never "no such message".
fn find(roster: &RosterDir, id: &MessageId) -> Result<Option<(Queue, QueueEntry)>> {
    let mut unlisted = None;
    for name in list_names(roster, roster.messages())? {
        let Some(name) = name.to_str().filter(|name| !name.starts_with('.')) else { continue };
        let Ok(Some(queue)) = Queue::open_existing(roster, name) else { continue };
        let listing = match queue.list(roster) {
            Ok(listing) => listing,
            Err(error) => {
                unlisted = Some(error);
                continue;
            }
        };
        if let Some(entry) = listing.messages.iter().rev().find(|entry| entry.parts.id == *id).cloned() {
            return Ok(Some((queue, entry)));
        }
    }
    match unlisted {
        Some(error) => Err(error),
        None => Ok(None),
    }
}
