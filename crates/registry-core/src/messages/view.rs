//! A queue as a reader that takes no lock sees it (`roster-list --watch`):
//! each message once, by id, pending or settled as its names say, and the
//! message itself read only when asked for. A crash that left a settled
//! message's pending name behind shows the message settled, as delivery
//! counts it.

use crate::error::Result;
use crate::messages::format::{Message, MessageFileName, MessageId};
use crate::messages::queue::{Queue, QueueEntry};
use crate::store::directory::RosterDir;

/// What the queue of one session holds now, one entry per message, in
/// sequence order.
#[derive(Debug)]
pub struct QueueView {
    queue: Queue,
    entries: Vec<QueueEntry>,
}

impl QueueView {
    /// The queue of the record `record_file_name` as it stands, from one
    /// directory read; `None` when the session has no queue.
    pub fn read(roster: &RosterDir, record_file_name: &str) -> Result<Option<QueueView>> {
        let Some(queue) = Queue::open_existing(roster, record_file_name)? else { return Ok(None) };
        let listing = queue.list(roster)?;
        let mut entries: Vec<QueueEntry> =
            listing.pending().chain(listing.claimed()).chain(listing.settled()).cloned().collect();
        entries.sort_by_key(|entry| entry.parts.seq);
        Ok(Some(QueueView { queue, entries }))
    }

    /// Each message's id, sequence number and whether it is settled (a
    /// claimed one, being handed over, is not yet).
    pub fn messages(&self) -> impl Iterator<Item = &MessageFileName> {
        self.entries.iter().map(|entry| &entry.parts)
    }

    /// How many messages wait: `pending_count`, from this read.
    pub fn pending(&self) -> usize {
        self.entries.iter().filter(|entry| entry.parts.is_pending()).count()
    }

    /// The message `id` as its file holds it, when it is one roster wrote
    /// and trusts (`None` also when it was not in the queue when read).
    pub fn message(&self, id: &MessageId) -> Option<Message> {
        let entry = self.entries.iter().find(|entry| entry.parts.id == *id)?;
        self.queue.read(entry)
    }
}
