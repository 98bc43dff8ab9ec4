//! Handing a session its messages: what the delivery hook calls on each
//! prompt and stop. With no queue, or nothing pending in it, it costs one
//! failed `openat` or one directory read and takes no lock; otherwise,
//! under the queue's lock, overdue messages (and any for an earlier owner
//! of the record's name) are settled expired, and the rest are settled
//! refused when the session does not accept messages now, else delivered,
//! in sequence order, each marked on disk before the caller shows it: a
//! message is delivered at most once.

use std::time::Instant;

use crate::error::Result;
use crate::messages::format::{Message, OutcomeKind};
use crate::messages::queue::Queue;
use crate::record::session_record::Record;
use crate::record::timestamp::Timestamp;
use crate::store::directory::RosterDir;

/// The session a delivery is for and the event carrying it.
#[derive(Clone, Copy, Debug)]
pub struct Delivery<'a> {
    /// The session's record file name in `sessions/`.
    pub record_file_name: &'a str,
    /// Its record: only messages for the owner it names are delivered.
    pub record: &'a Record,
    /// `<harness>:<event>`, recorded as what carried each message.
    pub event: &'a str,
    pub now: Timestamp,
    /// The latest instant the queue's lock may be waited for (a hook's
    /// budget).
    pub lock_deadline: Instant,
    /// The most text (bytes) handed over at once: messages are taken in
    /// order while they fit, at least one; the rest wait for the next
    /// delivery.
    pub budget_bytes: usize,
}

/// Takes the messages waiting for `delivery`'s session, marked delivered,
/// in the order they were queued; asks `consent` only when there is one to
/// deliver, and when it answers `Err(reason)` settles them all refused
/// with that reason and returns none.
pub fn take_for_delivery(
    roster: &RosterDir,
    delivery: &Delivery<'_>,
    consent: impl FnOnce() -> std::result::Result<(), String>,
) -> Result<Vec<Message>> {
    let Some(queue) = Queue::open_existing(roster, delivery.record_file_name)? else { return Ok(Vec::new()) };
    if queue.list(roster)?.pending().next().is_none() {
        return Ok(Vec::new());
    }
    // Removed by a prune since it was opened: its session ended.
    if !queue.lock(roster, delivery.lock_deadline)? {
        return Ok(Vec::new());
    }
    let listing = queue.list(roster)?;
    queue.remove_leftovers(roster, &listing)?;
    let owner = (delivery.record.owner.pid.get(), delivery.record.owner.start_ticks.0);
    let still = queue.settle_expired(roster, &listing, owner, delivery.now)?;
    let deliverable = still.messages;
    if deliverable.is_empty() {
        return Ok(Vec::new());
    }
    if let Err(reason) = consent() {
        for message in &deliverable {
            queue.settle(roster, &message.settled(OutcomeKind::Refused, delivery.now, &reason))?;
        }
        return Ok(Vec::new());
    }
    let mut delivered = Vec::with_capacity(deliverable.len());
    let mut taken_bytes = 0;
    for message in deliverable {
        taken_bytes += message.text.len();
        if !delivered.is_empty() && taken_bytes > delivery.budget_bytes {
            break;
        }
        let settled = message.settled(OutcomeKind::Delivered, delivery.now, delivery.event);
        match queue.settle(roster, &settled) {
            Ok(()) => delivered.push(settled),
            // Those settled already are the caller's to show, or they are
            // lost; this one and the rest stay pending for a later event.
            Err(_) if !delivered.is_empty() => break,
            Err(error) => return Err(error),
        }
    }
    Ok(delivered)
}

/// The messages as the model reads them: each framed by a line that says
/// it came through roster, from whom and when (and that the user did not
/// type it), and a closing line naming its id, which no text can forge (the
/// id is drawn after the text is written).
pub fn text_for_model(messages: &[Message]) -> String {
    let framed: Vec<String> = messages
        .iter()
        .map(|message| {
            let from = &message.from;
            let mut sender = format!("pid {}", from.pid);
            for (word, value) in
                [("agent", &from.agent), ("harness", &from.harness), ("session", &from.session_id)]
            {
                if let Some(value) = value {
                    // The header is one line the sender's own names cannot
                    // bend: brackets and separators become plain marks.
                    let plain: String = value
                        .chars()
                        .map(|character| match character {
                            '[' | ']' | ';' | ',' => '_',
                            character if character.is_control() => '_',
                            character => character,
                        })
                        .collect();
                    sender.push_str(&format!(", {word} {plain}"));
                }
            }
            format!(
                "[roster message {id} from {sender}, sent {sent}; another program sent it through roster, your \
                 user did not type it]\n{text}\n[end of roster message {id}]",
                id = message.id,
                sent = message.queued_at,
                text = message.text,
            )
        })
        .collect();
    framed.join("\n\n")
}

/// How many messages wait for the session of `record_file_name`: its
/// queue's pending names, counted from one directory read.
pub fn pending_count(roster: &RosterDir, record_file_name: &str) -> usize {
    match Queue::open_existing(roster, record_file_name) {
        Ok(Some(queue)) => queue.list(roster).map_or(0, |listing| listing.pending().count()),
        _ => 0,
    }
}
