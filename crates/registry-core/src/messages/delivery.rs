//! Handing a session its messages: what the delivery hook calls on each
//! prompt and turn end. With no queue, or nothing pending in it, it costs
//! one failed `openat` or one directory read and takes no lock; otherwise,
//! under the queue's lock, overdue messages (any for an earlier owner of
//! the record's name, or sent to a conversation the session no longer
//! runs) are settled expired, and the rest are settled refused when the
//! session does not accept messages now, else claimed for a hand-over.
//!
//! A message is `delivered` only once its whole framed text was handed to
//! the harness: the hook claims it (renames it, under the lock it holds
//! to the end), writes the reply, and only then confirms it. A hook that
//! cannot hand it over puts it back to pending; one stopped between its
//! claim and its confirmation leaves a claim that the next holder of the
//! lock settles `unconfirmed`. Never delivered twice, never claimed
//! delivered when the harness did not get it.

use std::time::Instant;

use crate::error::Result;
use crate::messages::format::{Message, OutcomeKind};
use harness::DeliveryLimit;

use crate::messages::frame::{framed, joined_length, text_for_model};
use crate::messages::queue::Queue;
use crate::record::session_record::Record;
use crate::record::timestamp::Timestamp;
use crate::store::directory::RosterDir;
use crate::store::files::Durability;

/// The session a delivery is for and the event carrying it.
#[derive(Clone, Copy, Debug)]
pub struct Delivery<'a> {
    /// The session's record file name in `sessions/`.
    pub record_file_name: &'a str,
    /// Its record: only messages for the owner it names are delivered.
    pub record: &'a Record,
    /// The conversation the session runs now (the hook payload's session
    /// id, else the record's): a message sent to another session id is
    /// not for it.
    pub conversation: Option<&'a str>,
    /// `<harness>:<event>`, recorded as what carried each message.
    pub event: &'a str,
    pub now: Timestamp,
    /// The latest instant the queue's lock may be waited for.
    pub lock_deadline: Instant,
    /// The latest instant the claim may be done by, so that the reply and
    /// the confirmation still fit the hook's budget: a claim that ends
    /// later is put back, and its messages wait for the next event.
    pub claim_deadline: &'a ClaimDeadline<'a>,
    /// The longest text the harness keeps whole at this event, in the
    /// measure it counts in (`harness::delivery_limit`).
    pub limit: DeliveryLimit,
}

/// The latest instant a claim may be done by, known at first only by the
/// earliest it can be: the instant itself is asked of `exact` only once
/// that has passed, since in hook mode it costs a read of `/proc` (the
/// hook's late start), which a claim of a few milliseconds never needs.
pub struct ClaimDeadline<'a> {
    earliest: Instant,
    exact: Option<&'a dyn Fn() -> Instant>,
    known: std::cell::OnceCell<Instant>,
}

impl<'a> ClaimDeadline<'a> {
    /// A deadline no earlier than `earliest`, which `exact` tells.
    pub fn between(earliest: Instant, exact: &'a dyn Fn() -> Instant) -> ClaimDeadline<'a> {
        ClaimDeadline { earliest, exact: Some(exact), known: std::cell::OnceCell::new() }
    }

    /// A deadline known already.
    pub fn at(instant: Instant) -> ClaimDeadline<'static> {
        ClaimDeadline { earliest: instant, exact: None, known: std::cell::OnceCell::from(instant) }
    }

    fn has_passed(&self) -> bool {
        let now = Instant::now();
        now >= self.earliest
            && now
                >= *self
                    .known
                    .get_or_init(|| self.exact.map_or(self.earliest, |exact| exact().max(self.earliest)))
    }
}

impl std::fmt::Debug for ClaimDeadline<'_> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("ClaimDeadline")
            .field("earliest", &self.earliest)
            .field("known", &self.known.get())
            .finish()
    }
}

/// What a delivery found to do.
#[derive(Debug)]
pub enum Taken {
    /// Nothing to hand over now (nothing waits, all were settled, the
    /// queue was busy, or the disk too slow for the budget).
    Nothing,
    /// Nothing handed over now, and why: a message whose file could not
    /// be read stands first in line, and none queued after it may
    /// overtake it.
    Waiting(String),
    /// The claimed messages, to be handed over, then confirmed.
    HandOver(HandOver),
}

/// Messages claimed for one reply, their queue's lock held until they are
/// confirmed or put back (or the process ends).
#[derive(Debug)]
pub struct HandOver {
    queue: Queue,
    messages: Vec<Message>,
    event: String,
    now: Timestamp,
    /// Why the messages queued after these wait although they might fit:
    /// one of them could not be read.
    left_waiting: Option<String>,
}

impl HandOver {
    /// Why messages queued after these were left waiting, when one could
    /// not be read.
    pub fn left_waiting(&self) -> Option<&str> {
        self.left_waiting.as_deref()
    }

    /// The claimed messages, in order.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// Their text as the model reads it: the reply carries exactly this.
    pub fn text(&self) -> String {
        text_for_model(&self.messages)
    }

    /// Records them `delivered`: the reply was written whole. Written
    /// without waiting for the disk, so that a stalled disk cannot keep a
    /// delivered message from being confirmed within the budget (after a
    /// power loss a confirmation may be lost: the claim then reads
    /// `unconfirmed`, never delivered twice). Returns them as recorded.
    pub fn confirm(self, roster: &RosterDir) -> Result<Vec<Message>> {
        let mut confirmed = Vec::with_capacity(self.messages.len());
        for message in &self.messages {
            let delivered = message.settled(OutcomeKind::Delivered, self.now, &self.event);
            self.queue.settle_claimed(roster, &delivered, Durability::Unsynced)?;
            confirmed.push(delivered);
        }
        Ok(confirmed)
    }

    /// Settles them `unconfirmed` with `reason`: part of the reply reached
    /// the harness, so whether it read them is not known; they are never
    /// handed over again.
    pub fn leave_unconfirmed(self, roster: &RosterDir, reason: &str) -> Result<()> {
        for message in &self.messages {
            let settled = message.settled(OutcomeKind::Unconfirmed, self.now, reason);
            self.queue.settle_claimed(roster, &settled, Durability::Unsynced)?;
        }
        Ok(())
    }

    /// Puts them back to pending: the reply could not be written, and the
    /// harness has none of them.
    pub fn put_back(self, roster: &RosterDir) -> Result<()> {
        for message in &self.messages {
            self.queue.unclaim(roster, message)?;
        }
        Ok(())
    }
}

/// What the session's consent says at delivery, asked only when a
/// message is there to deliver.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConsentNow {
    Accepts,
    /// The session does not accept messages: they are settled refused.
    Refuses(String),
    /// Its consent could not be decided (a file could not be read): the
    /// messages are neither handed over nor refused, and wait.
    Undecided,
}

/// Takes the messages waiting for `delivery`'s session, in the order they
/// were queued, as many as fit whole in one reply; asks `consent` only
/// when there is one to deliver: refused, it settles them all refused
/// with its reason; undecided, it leaves them waiting. Either way it
/// takes none.
pub fn take_for_delivery(
    roster: &RosterDir,
    delivery: &Delivery<'_>,
    consent: impl FnOnce() -> ConsentNow,
) -> Result<Taken> {
    match waiting_queue(roster, delivery.record_file_name)? {
        Some(waiting) => take_waiting(roster, waiting, delivery, consent),
        None => Ok(Taken::Nothing),
    }
}

/// `take_for_delivery` of a queue `waiting_queue` found with something
/// waiting a moment ago (a delivery hook asks that first, before it makes
/// ready to deliver): it is not opened and read a second time before its
/// lock is taken.
pub fn take_waiting(
    roster: &RosterDir,
    waiting: WaitingQueue,
    delivery: &Delivery<'_>,
    consent: impl FnOnce() -> ConsentNow,
) -> Result<Taken> {
    let WaitingQueue(queue) = waiting;
    // Removed by a prune since it was opened: its session ended.
    if !queue.lock(roster, delivery.lock_deadline)? {
        return Ok(Taken::Nothing);
    }
    let listing = queue.list(roster)?;
    queue.remove_leftovers(roster, &listing)?;
    let owner = (delivery.record.owner.pid.get(), delivery.record.owner.start_ticks.0);
    let still = queue.settle_expired(roster, &listing, owner, delivery.conversation, delivery.now)?;
    let left_waiting = still
        .read_failed
        .map(|why| format!("a message could not be read, and it and the ones after it wait: {why}"));
    if still.messages.is_empty() {
        return Ok(left_waiting.map_or(Taken::Nothing, Taken::Waiting));
    }
    match consent() {
        ConsentNow::Accepts => {}
        ConsentNow::Undecided => return Ok(Taken::Nothing),
        ConsentNow::Refuses(reason) => {
            for message in &still.messages {
                queue.settle(roster, &message.settled(OutcomeKind::Refused, delivery.now, &reason))?;
            }
            return Ok(Taken::Nothing);
        }
    }
    let mut chosen = Vec::new();
    let mut lengths = Vec::new();
    for message in still.messages {
        let length = delivery.limit.length(&framed(&message));
        // One that could never be handed over whole here (queued before
        // the harness's limit was known, or longer than it): refused,
        // rather than cut where a forged closing line could take over.
        if length > delivery.limit.max {
            let unit = delivery.limit.measure.unit();
            let reason = format!(
                "its framed text is {length} {unit}, more than the {} its harness keeps whole at {}",
                delivery.limit.max, delivery.event
            );
            queue.settle(roster, &message.settled(OutcomeKind::Refused, delivery.now, &reason))?;
            continue;
        }
        lengths.push(length);
        if joined_length(lengths.iter().copied(), delivery.limit.measure) > delivery.limit.max {
            break;
        }
        chosen.push(message);
    }
    if chosen.is_empty() || delivery.claim_deadline.has_passed() {
        return Ok(Taken::Nothing);
    }
    let mut claimed = Vec::with_capacity(chosen.len());
    for message in chosen {
        // The claim took too long to leave time for the reply and its
        // confirmation (a disk that stalls): the messages wait for the
        // next event.
        if delivery.claim_deadline.has_passed() {
            undo_claims(roster, &queue, &claimed);
            return Ok(Taken::Nothing);
        }
        if let Err(error) = queue.claim(roster, &message) {
            undo_claims(roster, &queue, &claimed);
            return Err(error);
        }
        claimed.push(message);
    }
    if delivery.claim_deadline.has_passed() {
        undo_claims(roster, &queue, &claimed);
        return Ok(Taken::Nothing);
    }
    Ok(Taken::HandOver(HandOver {
        queue,
        messages: claimed,
        event: delivery.event.to_owned(),
        now: delivery.now,
        left_waiting,
    }))
}

/// Puts `claimed` back to pending, as far as it can: a claim that cannot
/// be undone stays, and is settled `unconfirmed` later (never delivered).
fn undo_claims(roster: &RosterDir, queue: &Queue, claimed: &[Message]) {
    for message in claimed {
        let _ = queue.unclaim(roster, message);
    }
}

/// Whether anything waits for the session of `record_file_name` (a
/// pending message, or a claim to settle): what a delivery hook asks
/// first, at the cost of one failed `openat` when no queue exists. A
/// queue that could not be read is an error, never "nothing waits".
pub fn anything_waits(roster: &RosterDir, record_file_name: &str) -> Result<bool> {
    Ok(waiting_queue(roster, record_file_name)?.is_some())
}

/// A session's queue, opened, in which a message waited (pending, or a
/// claim to settle) when it was read, not under its lock: what
/// `take_waiting` takes.
#[derive(Debug)]
pub struct WaitingQueue(Queue);

/// The queue of the session of `record_file_name` when anything waits in
/// it (`anything_waits`), kept open for `take_waiting`.
pub fn waiting_queue(roster: &RosterDir, record_file_name: &str) -> Result<Option<WaitingQueue>> {
    let Some(queue) = Queue::open_existing(roster, record_file_name)? else { return Ok(None) };
    let listing = queue.list(roster)?;
    let waits = listing.pending().next().is_some() || listing.claimed().next().is_some();
    Ok(waits.then_some(WaitingQueue(queue)))
}

/// How many messages wait for the session of `record_file_name`: its
/// queue's pending names, counted from one directory read.
pub fn pending_count(roster: &RosterDir, record_file_name: &str) -> usize {
    match Queue::open_existing(roster, record_file_name) {
        Ok(Some(queue)) => queue.list(roster).map_or(0, |listing| listing.pending().count()),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// The exact deadline is asked only once the earliest it can be has
    /// passed, and then once; a deadline known already is never asked.
    #[test]
    fn a_claim_deadline_is_measured_only_past_the_earliest_it_can_be() {
        let asked = std::cell::Cell::new(0);
        let later = Instant::now() + Duration::from_secs(3600);
        let exact = || {
            asked.set(asked.get() + 1);
            later
        };
        let not_yet = ClaimDeadline::between(Instant::now() + Duration::from_secs(60), &exact);
        assert!(!not_yet.has_passed());
        assert_eq!(asked.get(), 0, "measured before the earliest it could be");

        let measured = ClaimDeadline::between(Instant::now(), &exact);
        assert!(!measured.has_passed(), "an hour away");
        assert!(!measured.has_passed());
        assert_eq!(asked.get(), 1, "measured once");

        let gone = || Instant::now() - Duration::from_secs(1);
        assert!(ClaimDeadline::between(Instant::now(), &gone).has_passed());
        assert!(ClaimDeadline::at(Instant::now()).has_passed());
        assert!(!ClaimDeadline::at(later).has_passed());
    }
}
