//! Queuing a message for a session (`roster-send`): under the queue's
//! lock, overdue messages are settled first, the bound on pending ones is
//! checked, the message gets the next sequence number and is written
//! durably, and the oldest settled messages past the number kept go.
//! The caller has checked that the session is alive and accepts messages.

use std::time::Duration;

use crate::error::{Error, Result};
use crate::messages::format::{
    MAX_PENDING, MAX_SETTLED, MESSAGE_FORMAT, Message, MessageId, MessageText, Recipient, Sender,
};
use crate::messages::queue::{Queue, queue_lock_deadline};
use crate::record::timestamp::Timestamp;
use crate::store::directory::RosterDir;

/// How many times a send opens the queue again because a prune removed
/// the directory between its open and its lock.
const ATTEMPTS: usize = 8;

/// Queues `text` from `from` for the session `to`, to be delivered before
/// `now + time_to_live`. Waits for the queue's other writers at most
/// `QUEUE_LOCK_WAIT` (less when the handle has a lock deadline), then
/// refuses with `Error::QueueLocked`: a lock held that long is no send's or
/// delivery's. Refuses with `Error::QueueFull` when `MAX_PENDING` messages
/// wait already: nothing is ever dropped to make room.
pub fn queue_message(
    roster: &RosterDir,
    to: &Recipient,
    from: &Sender,
    text: &MessageText,
    time_to_live: Duration,
    now: Timestamp,
) -> Result<Message> {
    let id = MessageId::random().map_err(|error| Error::io("read", "/dev/urandom", error))?;
    let record_file_name = format!("{}.json", to.record);
    let deadline = queue_lock_deadline(roster);
    for _ in 0..ATTEMPTS {
        let queue = Queue::open_or_create(roster, &record_file_name)?;
        if !queue.lock(roster, deadline)? {
            continue;
        }
        let listing = queue.list(roster)?;
        queue.remove_leftovers(roster, &listing)?;
        let still = queue.settle_expired(
            roster,
            &listing,
            (to.pid, to.start_ticks),
            to.session_id.as_deref(),
            now,
        )?;
        if still.messages.len() + still.unreadable >= MAX_PENDING {
            return Err(Error::QueueFull { path: queue.path(roster), limit: MAX_PENDING });
        }
        let expires_at =
            Timestamp::from_unix_nanos(now.unix_nanos().saturating_add(time_to_live.as_nanos() as i128));
        let message = Message {
            format: MESSAGE_FORMAT,
            id: id.to_string(),
            seq: listing.last_seq() + 1,
            to: to.clone(),
            from: from.clone(),
            text: text.as_str().to_owned(),
            queued_at: now.to_string(),
            expires_at: expires_at.to_string(),
            outcome: None,
        };
        if let Err(error) = queue.write(roster, &message) {
            // A write that failed after its rename (the directory's fsync)
            // left the message in place: a send that says it failed has
            // queued nothing, so it goes (the lock is still held).
            let _ = queue.remove(roster, &message.file_name());
            return Err(error);
        }
        // Trimming the oldest outcomes is housekeeping the next send does
        // again: its failure does not undo a message that is queued.
        if let Ok(listing) = queue.list(roster) {
            let settled: Vec<String> = listing.settled().map(|entry| entry.name.clone()).collect();
            for name in settled.iter().take(settled.len().saturating_sub(MAX_SETTLED)) {
                let _ = queue.remove(roster, name);
            }
        }
        return Ok(message);
    }
    Err(Error::io(
        "queue a message in",
        roster.entry_path(roster.messages(), &to.record),
        std::io::Error::other("the queue kept being removed while this send waited for it"),
    ))
}

/// Takes back the message `queued` while it is still pending (its sender
/// could not be told it was queued, so it must not stay queued): `Ok(true)`
/// when it was removed, `Ok(false)` when a delivery took or settled it
/// first.
pub fn withdraw_pending(roster: &RosterDir, queued: &Message) -> Result<bool> {
    let record_file_name = format!("{}.json", queued.to.record);
    let Some(queue) = Queue::open_existing(roster, &record_file_name)? else { return Ok(false) };
    if !queue.lock(roster, queue_lock_deadline(roster))? {
        return Ok(false);
    }
    queue.remove(roster, &queued.file_name())
}
