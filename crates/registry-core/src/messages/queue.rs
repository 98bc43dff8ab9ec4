//! One session's queue on disk: the directory `messages/<record name>/`,
//! opened without following links and checked as the roster directory's
//! own subdirectories are, the `flock` on it that orders every change to
//! the queue, and the reads and writes of its message files.
//!
//! Every change happens under the lock, so a temporary found while it is
//! held is a crashed writer's leftover, and a sequence number picked under
//! it (the largest in the directory plus one) is no other sender's.

use std::fs::File;
use std::os::fd::AsFd;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::fcntl::renameat;
use nix::sys::stat::fstat;
use nix::unistd::{UnlinkatFlags, unlinkat};
use owner_liveness::retry_interrupted;

use crate::error::{Error, Result};
use crate::messages::format::{Message, MessageFileName, MessageId, claimed_file_name, message_file_name};
use crate::store::directory::{RosterDir, SubDir, mkdir_0700, open_verified_directory};
use crate::store::directory_entries::EntryKind;
use crate::store::files::{
    Durability, ReadProblem, TEMP_PREFIX, list_entries, read_stamped_entry_of_kind, remove_entry,
    write_atomically, write_atomically_as,
};
use crate::store::lock::{flock_within, lock_holder, take_lock_if_free};

/// A session's queue directory, opened and checked.
#[derive(Debug)]
pub(crate) struct Queue {
    directory: File,
    /// `messages/<record name>`, for messages and `SubDir`.
    relative: PathBuf,
}

/// One message file's name in a queue, as listed.
#[derive(Clone, Debug)]
pub(crate) struct QueueEntry {
    pub(crate) name: String,
    pub(crate) parts: MessageFileName,
    pub(crate) kind: EntryKind,
}

/// What a queue's directory holds, by kind of name.
#[derive(Debug, Default)]
pub(crate) struct QueueListing {
    /// Message files, in sequence order (a message settled while a crash
    /// left its pending name behind is listed under both).
    pub(crate) messages: Vec<QueueEntry>,
    /// Atomic-write temporaries.
    pub(crate) temporaries: Vec<String>,
    /// The ids of the messages listed both settled and not (pending or
    /// claimed), sorted: a queue keeps every settled file of its session,
    /// and telling each pending one from a settled twin by going through
    /// all of them made a listing of a long session's queue cost the square
    /// of its length. Found by looking each settled id up among the few
    /// that are not settled (`twinned_ids`), nearly always none.
    twinned_ids: Vec<MessageId>,
}

impl QueueListing {
    /// The largest sequence number in the queue (0 when none).
    pub(crate) fn last_seq(&self) -> u64 {
        self.messages.iter().map(|entry| entry.parts.seq).max().unwrap_or(0)
    }

    /// Whether a settled file of message `id` is in the queue.
    fn settled_twin(&self, entry: &QueueEntry) -> bool {
        self.twinned_ids.binary_search(&entry.parts.id).is_ok()
    }

    /// The pending or claimed names whose message is settled too (a crash
    /// between writing the settled file and removing the other name).
    pub(crate) fn stale_names(&self) -> impl Iterator<Item = &QueueEntry> {
        self.messages.iter().filter(|entry| !entry.parts.settled && self.settled_twin(entry))
    }

    /// The pending messages that are not settled as well, in order.
    pub(crate) fn pending(&self) -> impl Iterator<Item = &QueueEntry> {
        self.messages.iter().filter(|entry| entry.parts.is_pending() && !self.settled_twin(entry))
    }

    /// The claimed messages that are not settled as well: found under the
    /// queue's lock, each is one whose hook stopped before it confirmed
    /// (the hook holds the lock from its claim to its confirmation).
    pub(crate) fn claimed(&self) -> impl Iterator<Item = &QueueEntry> {
        self.messages.iter().filter(|entry| entry.parts.claimed && !self.settled_twin(entry))
    }

    pub(crate) fn settled(&self) -> impl Iterator<Item = &QueueEntry> {
        self.messages.iter().filter(|entry| entry.parts.settled)
    }
}

/// The ids of `messages` listed both settled and not, sorted, without
/// duplicates: each settled id is looked up among the sorted ids of the
/// messages that are not settled, which a queue holds few of (at most its
/// pending bound, and the claims of a hook that stopped).
fn twinned_ids(messages: &[QueueEntry]) -> Vec<MessageId> {
    let mut unsettled: Vec<&MessageId> =
        messages.iter().filter(|entry| !entry.parts.settled).map(|entry| &entry.parts.id).collect();
    if unsettled.is_empty() {
        return Vec::new();
    }
    unsettled.sort_unstable();
    let mut twinned: Vec<MessageId> = messages
        .iter()
        .filter(|entry| entry.parts.settled && unsettled.binary_search(&&entry.parts.id).is_ok())
        .map(|entry| entry.parts.id.clone())
        .collect();
    twinned.sort_unstable();
    twinned.dedup();
    twinned
}

/// The queue directory's name for the record named `record_file_name`:
/// the record's name without `.json`.
pub(crate) fn queue_name(record_file_name: &str) -> &str {
    record_file_name.strip_suffix(".json").unwrap_or(record_file_name)
}

/// The names of the queues in `messages/` (record names without `.json`),
/// read once so that a listing opens only the queues there are.
pub fn queue_names(roster: &RosterDir) -> Result<std::collections::HashSet<String>> {
    Ok(list_entries(roster, roster.messages())?
        .into_iter()
        .filter(|entry| entry.kind == EntryKind::Directory || entry.kind == EntryKind::Unknown)
        .filter_map(|entry| entry.name.into_string().ok())
        .filter(|name| !name.starts_with('.'))
        .collect())
}

/// The directory the queue of the record `record_file_name` is (or would
/// be): what a sender waiting for an outcome watches.
pub fn queue_directory(roster: &RosterDir, record_file_name: &str) -> PathBuf {
    roster.entry_path(roster.messages(), queue_name(record_file_name))
}

/// How long a send or a reader waits for a queue's lock before it gives
/// up with `Error::QueueLocked`. Roster holds a queue's lock for the few
/// writes of one send, delivery or expiry (milliseconds, an fsync or two),
/// so a lock held longer than this is held by something else, and waiting
/// for it longer would only keep the sender from hearing so.
pub(crate) const QUEUE_LOCK_WAIT: Duration = Duration::from_secs(1);

/// The latest instant a send or a reader waits for a queue's lock:
/// `QUEUE_LOCK_WAIT`, within the handle's own deadline.
pub(crate) fn queue_lock_deadline(roster: &RosterDir) -> Instant {
    let bound = Instant::now() + QUEUE_LOCK_WAIT;
    roster.lock_deadline().map_or(bound, |limit| limit.min(bound))
}

/// What came of trying a queue's lock without waiting (`Queue::try_lock`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum QueueLockAttempt {
    /// Taken: held until the `Queue` is dropped.
    Locked,
    /// The directory was removed (by a prune) before the lock was taken:
    /// the session ended, and a caller that needs the queue opens it again.
    Removed,
    /// Another process holds the lock this instant (`holder`, when
    /// `/proc/locks` tells): nothing waited. What a caller that reports it
    /// says is `Error::QueueLocked` with the queue's path.
    HeldElsewhere { holder: Option<u32> },
}

impl Queue {
    /// The queue of the record `record_file_name`, when it has one: `None`
    /// costs one failed `openat`.
    pub(crate) fn open_existing(roster: &RosterDir, record_file_name: &str) -> Result<Option<Queue>> {
        let name = queue_name(record_file_name);
        let messages = roster.messages();
        let shown = roster.entry_path(messages, name);
        match open_verified_directory(Some(messages.fd()), name.as_ref(), &shown) {
            Ok(fd) => Ok(Some(Queue { directory: File::from(fd), relative: messages.path().join(name) })),
            Err(Error::Io { cause, .. }) if cause.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(error),
        }
    }

    /// The queue of the record `record_file_name`, created `0700` when
    /// missing.
    pub(crate) fn open_or_create(roster: &RosterDir, record_file_name: &str) -> Result<Queue> {
        if let Some(queue) = Queue::open_existing(roster, record_file_name)? {
            return Ok(queue);
        }
        let name = queue_name(record_file_name);
        match mkdir_0700(Some(roster.messages().fd()), name.as_ref()) {
            Ok(()) | Err(Errno::EEXIST) => {}
            Err(errno) => {
                return Err(Error::io("create", roster.entry_path(roster.messages(), name), errno.into()));
            }
        }
        Queue::open_existing(roster, record_file_name)?.ok_or_else(|| {
            let path = roster.entry_path(roster.messages(), name);
            Error::io("open", path, std::io::Error::from(std::io::ErrorKind::NotFound))
        })
    }

    /// The queue as a directory of the roster, for the file helpers.
    pub(crate) fn subdir(&self) -> SubDir<'_> {
        SubDir { fd: self.directory.as_fd(), path: &self.relative }
    }

    /// The queue directory's full path, for messages.
    pub(crate) fn path(&self, roster: &RosterDir) -> PathBuf {
        roster.path().join(&self.relative)
    }

    /// Takes the queue's lock, waiting at most until `deadline`, then
    /// `Error::QueueLocked` naming the directory and its holder. `Ok(false)`
    /// when the directory was removed (by a prune) before the lock was
    /// taken: the caller opens it again.
    pub(crate) fn lock(&self, roster: &RosterDir, deadline: Instant) -> Result<bool> {
        // No notice of a long wait: the registry lock's notice promises
        // 5 s, and a queue's wait ends within `QUEUE_LOCK_WAIT`.
        match flock_within(&self.directory, self.path(roster), || deadline, None) {
            Ok(()) => {}
            Err(Error::Busy { path, waited_ms, holder }) => {
                return Err(Error::QueueLocked { path, waited_ms, holder });
            }
            Err(error) => return Err(error),
        }
        self.still_in_place(roster)
    }

    /// Takes the queue's lock only if it is free this instant (`LOCK_NB`):
    /// never a wait, whoever holds it and however (an `flock` works on a
    /// read-only descriptor, so a process that can only read the registry
    /// can hold it for ever). For work with a budget of its own that may as
    /// well be left to a later run: a delivery hook, whose messages wait
    /// for the session's next event, and a prune, which leaves the queue to
    /// the next prune.
    pub(crate) fn try_lock(&self, roster: &RosterDir) -> Result<QueueLockAttempt> {
        if !take_lock_if_free(&self.directory, &self.path(roster))? {
            return Ok(QueueLockAttempt::HeldElsewhere { holder: lock_holder(&self.directory) });
        }
        Ok(if self.still_in_place(roster)? { QueueLockAttempt::Locked } else { QueueLockAttempt::Removed })
    }

    /// Whether the queue's directory is still linked in `messages/` (a
    /// prune may have removed it between its opening and its locking).
    fn still_in_place(&self, roster: &RosterDir) -> Result<bool> {
        let stat = retry_interrupted(|| fstat(self.directory.as_fd()))
            .map_err(|errno| Error::io("stat", self.path(roster), errno.into()))?;
        Ok(stat.st_nlink > 0)
    }

    /// The names in the queue, by kind; names that are neither messages
    /// nor temporaries are left out (roster puts none there).
    pub(crate) fn list(&self, roster: &RosterDir) -> Result<QueueListing> {
        let mut listing = QueueListing::default();
        for entry in list_entries(roster, self.subdir())? {
            let Ok(name) = entry.name.into_string() else { continue };
            if name.starts_with(TEMP_PREFIX) {
                listing.temporaries.push(name);
            } else if let Some(parts) = MessageFileName::parse(&name) {
                listing.messages.push(QueueEntry { name, parts, kind: entry.kind });
            }
        }
        listing.messages.sort_by(|left, right| {
            (left.parts.seq, left.parts.settled).cmp(&(right.parts.seq, right.parts.settled))
        });
        listing.twinned_ids = twinned_ids(&listing.messages);
        Ok(listing)
    }

    /// The message in `entry`'s file, when it is one roster wrote and
    /// trusts: a regular file of the effective uid, one link, not writable
    /// by others, within the size cap, that parses, and whose name agrees
    /// with its content. Anything else is never delivered.
    pub(crate) fn read(&self, entry: &QueueEntry) -> Option<Message> {
        self.read_or_failure(entry).ok().flatten()
    }

    /// The message `entry` names, telling a file roster does not trust
    /// (`Ok(None)`: another user's, a link, not a message, gone) from a
    /// read that failed (`Err`, what the system said: an I/O error, no
    /// memory): a message that could not be read may be a good one, read
    /// on a later event, so a delivery stops at it rather than hand over
    /// the ones queued after it first.
    pub(crate) fn read_or_failure(&self, entry: &QueueEntry) -> std::result::Result<Option<Message>, String> {
        let contents = match read_stamped_entry_of_kind(self.subdir(), &entry.name, entry.kind) {
            Ok((contents, _)) => contents,
            Err(ReadProblem::Failed(why)) => return Err(why),
            Err(ReadProblem::Missing | ReadProblem::Untrusted { .. }) => return Ok(None),
        };
        let Some(message) = Message::parse(&contents.bytes) else { return Ok(None) };
        let agrees = message.seq == entry.parts.seq
            && message.message_id() == entry.parts.id
            && message.outcome.is_some() == entry.parts.settled;
        Ok(agrees.then_some(message))
    }

    /// Writes `message` to its file, atomically and durably.
    pub(crate) fn write(&self, roster: &RosterDir, message: &Message) -> Result<()> {
        write_atomically(roster, self.subdir(), &message.file_name(), &message.to_bytes())
    }

    /// Settles a pending message: its settled file written first, then its
    /// pending name removed, so that a crash between the two leaves a
    /// message that reads as settled (`QueueListing::stale_names`), never
    /// one delivered twice.
    pub(crate) fn settle(&self, roster: &RosterDir, settled: &Message) -> Result<()> {
        self.write(roster, settled)?;
        let pending = crate::messages::format::message_file_name(settled.seq, &settled.message_id(), false);
        remove_entry(roster, self.subdir(), &pending)?;
        Ok(())
    }

    /// Settles a claimed message (`settled` says how), as `settle` settles
    /// a pending one, written as `durability` says: a delivery confirms
    /// without waiting for the disk, since the claim already keeps the
    /// message from being handed over twice.
    pub(crate) fn settle_claimed(
        &self,
        roster: &RosterDir,
        settled: &Message,
        durability: Durability,
    ) -> Result<()> {
        write_atomically_as(roster, self.subdir(), &settled.file_name(), &settled.to_bytes(), durability)?;
        remove_entry(roster, self.subdir(), &claimed_file_name(settled.seq, &settled.message_id()))?;
        Ok(())
    }

    /// Claims the pending message `message` for a delivery (the caller
    /// holds the lock): its pending name renamed to its claimed one, which
    /// no other delivery takes. No fsync: every process sees a rename at
    /// once, and a power loss ends the session the claim was for.
    pub(crate) fn claim(&self, roster: &RosterDir, message: &Message) -> Result<()> {
        let id = message.message_id();
        self.rename(roster, &message_file_name(message.seq, &id, false), &claimed_file_name(message.seq, &id))
    }

    /// Puts a claimed message back to pending (a hand-over that did not
    /// happen): the rename of `claim`, undone.
    pub(crate) fn unclaim(&self, roster: &RosterDir, message: &Message) -> Result<()> {
        let id = message.message_id();
        self.rename(roster, &claimed_file_name(message.seq, &id), &message_file_name(message.seq, &id, false))
    }

    fn rename(&self, roster: &RosterDir, from: &str, to: &str) -> Result<()> {
        retry_interrupted(|| renameat(self.directory.as_fd(), from, self.directory.as_fd(), to))
            .map_err(|errno| Error::io("rename", roster.entry_path(self.subdir(), from), errno.into()))
    }

    /// Removes `name` from the queue.
    pub(crate) fn remove(&self, roster: &RosterDir, name: &str) -> Result<bool> {
        remove_entry(roster, self.subdir(), name)
    }

    /// Removes every name in the queue directory (the caller holds its
    /// lock), then the directory itself from `messages/`. `Ok(false)` when
    /// something in it could not be removed, and the queue stays.
    pub(crate) fn remove_all(self, roster: &RosterDir, record_file_name: &str) -> Result<bool> {
        for entry in list_entries(roster, self.subdir())? {
            // Roster makes no directory in a queue: one found there is
            // left, and the queue with it.
            if entry.kind == EntryKind::Directory {
                return Ok(false);
            }
            match retry_interrupted(|| {
                unlinkat(self.directory.as_fd(), entry.name.as_os_str(), UnlinkatFlags::NoRemoveDir)
            }) {
                Ok(()) | Err(Errno::ENOENT) => {}
                Err(Errno::EISDIR | Errno::EPERM) => return Ok(false),
                Err(errno) => {
                    let path = roster.entry_path(self.subdir(), &entry.name.to_string_lossy());
                    return Err(Error::io("remove", path, errno.into()));
                }
            }
        }
        let name = queue_name(record_file_name);
        match retry_interrupted(|| unlinkat(roster.messages().fd(), name, UnlinkatFlags::RemoveDir)) {
            Ok(()) => Ok(true),
            Err(Errno::ENOENT | Errno::ENOTEMPTY | Errno::EEXIST) => Ok(false),
            Err(errno) => Err(Error::io("remove", roster.entry_path(roster.messages(), name), errno.into())),
        }
    }
}

/// The pending messages of a queue after the overdue ones were settled,
/// in order.
#[derive(Debug, Default)]
pub(crate) struct StillPending {
    pub(crate) messages: Vec<Message>,
    /// Pending names whose file is not one roster trusts (another user's,
    /// a link, not a message): never delivered, still counted against
    /// the queue's bound.
    pub(crate) unreadable: usize,
    /// The first pending message whose read failed (what the system
    /// said): `messages` holds only the ones queued before it, so that a
    /// delivery never hands over a later message first.
    pub(crate) read_failed: Option<String>,
}

impl Queue {
    /// Removes what a crashed writer left (the caller holds the lock, so
    /// no writer is at work): temporaries, and pending names of messages
    /// settled already.
    pub(crate) fn remove_leftovers(&self, roster: &RosterDir, listing: &QueueListing) -> Result<()> {
        for name in listing.temporaries.iter().chain(listing.stale_names().map(|entry| &entry.name)) {
            self.remove(roster, name)?;
        }
        Ok(())
    }

    /// Settles, under the lock the caller holds, each claimed message
    /// left by a hook that stopped before it confirmed: `unconfirmed`,
    /// never pending again (its harness may have it).
    pub(crate) fn settle_stale_claims(
        &self,
        roster: &RosterDir,
        listing: &QueueListing,
        now: crate::record::timestamp::Timestamp,
    ) -> Result<()> {
        use crate::messages::format::{HANDOVER_UNCONFIRMED, OutcomeKind};
        for entry in listing.claimed() {
            let Some(message) = self.read(entry) else { continue };
            let settled = message.settled(OutcomeKind::Unconfirmed, now, HANDOVER_UNCONFIRMED);
            self.settle_claimed(roster, &settled, Durability::Synced)?;
        }
        Ok(())
    }

    /// Settles as expired (the caller holds the lock) each pending message
    /// that is for another owner than `owner` (pid, start ticks: an earlier
    /// session at the record's name), for another conversation than
    /// `conversation` (when the message was sent to a session id and the
    /// conversation the session runs now is known), or whose time ran out
    /// by `now`, and returns the others. Stale claims are settled first.
    pub(crate) fn settle_expired(
        &self,
        roster: &RosterDir,
        listing: &QueueListing,
        owner: (u32, u64),
        conversation: Option<&str>,
        now: crate::record::timestamp::Timestamp,
    ) -> Result<StillPending> {
        use crate::messages::format::{CONVERSATION_ENDED, OutcomeKind, SESSION_ENDED, TIME_TO_LIVE_RAN_OUT};
        self.settle_stale_claims(roster, listing, now)?;
        let mut still = StillPending::default();
        for entry in listing.pending() {
            let message = match self.read_or_failure(entry) {
                Ok(Some(message)) => message,
                Ok(None) => {
                    still.unreadable += 1;
                    continue;
                }
                Err(why) => {
                    still.read_failed = Some(format!("{}: {why}", entry.name));
                    break;
                }
            };
            let sent_to = message.to.conversation();
            let reason = if (message.to.pid, message.to.start_ticks) != owner {
                Some(SESSION_ENDED)
            } else if sent_to.is_some() && conversation.is_some() && sent_to != conversation {
                Some(CONVERSATION_ENDED)
            } else if message.expires_at() <= now {
                Some(TIME_TO_LIVE_RAN_OUT)
            } else {
                None
            };
            match reason {
                Some(reason) => self.settle(roster, &message.settled(OutcomeKind::Expired, now, reason))?,
                None => still.messages.push(message),
            }
        }
        Ok(still)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pending or claimed name whose message is settled too (a crash
    /// between writing the settled file and removing the other name) is
    /// told by its id wherever the settled file stands: such names are
    /// stale, never pending; the others are what they say.
    #[test]
    fn a_message_listed_settled_too_is_stale_wherever_its_settled_file_stands() {
        let id = |digit: char| std::iter::repeat_n(digit, 32).collect::<String>();
        let names = [
            format!("0000000000000001-{}.json", id('a')),
            format!("0000000000000001-{}.done.json", id('a')),
            format!("0000000000000002-{}.json", id('b')),
            format!("0000000000000003-{}.done.json", id('c')),
            format!("0000000000000004-{}.claimed.json", id('d')),
            format!("0000000000000004-{}.done.json", id('d')),
            format!("0000000000000005-{}.claimed.json", id('e')),
            // A settled file under another sequence number than its twin.
            format!("0000000000000006-{}.json", id('f')),
            format!("0000000000000009-{}.done.json", id('f')),
        ];
        let mut messages: Vec<QueueEntry> = names
            .iter()
            .map(|name| QueueEntry {
                name: name.clone(),
                parts: MessageFileName::parse(name).unwrap(),
                kind: EntryKind::Regular,
            })
            .collect();
        messages.reverse();
        let listing = QueueListing { twinned_ids: twinned_ids(&messages), messages, temporaries: Vec::new() };
        let seqs = |entries: Vec<&QueueEntry>| {
            let mut seqs: Vec<u64> = entries.iter().map(|entry| entry.parts.seq).collect();
            seqs.sort_unstable();
            seqs
        };
        assert_eq!(seqs(listing.stale_names().collect()), [1, 4, 6]);
        assert_eq!(seqs(listing.pending().collect()), [2]);
        assert_eq!(seqs(listing.claimed().collect()), [5]);
        assert_eq!(seqs(listing.settled().collect()), [1, 3, 4, 9]);
        assert!(twinned_ids(&listing.messages[..1]).is_empty());
    }

    /// `try_lock` never waits: a lock held elsewhere, even through a
    /// read-only descriptor, is said at once, with its holder; a free one
    /// is taken; a queue removed meanwhile is said so.
    #[test]
    fn trying_a_queue_lock_never_waits_and_tells_what_it_found() {
        let temp = tempfile::tempdir().unwrap();
        let roster = RosterDir::open_or_create(&temp.path().join("roster")).unwrap();
        let record = "4711@4026531836-0123456789abcdef.json";
        let queue = Queue::open_or_create(&roster, record).unwrap();
        let read_only = File::open(queue.path(&roster)).unwrap();
        read_only.try_lock().expect("the queue's lock is free");

        let started = Instant::now();
        let attempt = queue.try_lock(&roster).unwrap();
        assert!(matches!(attempt, QueueLockAttempt::HeldElsewhere { .. }), "{attempt:?}");
        assert!(started.elapsed() < Duration::from_millis(500), "it waited {:?}", started.elapsed());

        read_only.unlock().unwrap();
        assert_eq!(queue.try_lock(&roster).unwrap(), QueueLockAttempt::Locked);
        drop(queue);

        let queue = Queue::open_existing(&roster, record).unwrap().expect("the queue is there");
        std::fs::remove_dir(queue.path(&roster)).unwrap();
        assert_eq!(queue.try_lock(&roster).unwrap(), QueueLockAttempt::Removed);
    }
}
