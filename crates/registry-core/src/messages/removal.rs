//! Removing queues with their sessions (`roster-prune`): a session's
//! queue goes when its record does, and every prune removes the queues
//! whose record is gone, as it removes their state files. A queue is
//! removed under its own lock, so no send is halfway through it; one
//! whose lock is held this instant is left for the next prune. What
//! became of its messages is kept first (`archive.rs`).

use crate::error::Result;
use crate::messages::archive::keep_outcomes;
use crate::messages::queue::{Queue, QueueLockAttempt};
use crate::record::timestamp::Timestamp;
use crate::store::directory::OUTCOMES_NAME;
use crate::store::directory::RosterDir;
use crate::store::files::{entry_stamp, list_names};
use crate::store::lock::RegistryLock;

/// Removes the queue of the record `record_file_name` with every message
/// in it; `Ok(false)` when there was none or it stays (its lock was held).
///
/// The queue's lock is only tried, never waited for: any process that can
/// read the registry can hold it for ever, and a session end
/// (`prune --current --hook`) has 500 ms for everything, its consent
/// marker included. A queue left behind is an orphan the next prune
/// removes; its record is gone, so nothing is sent to it meanwhile.
pub(crate) fn remove_queue_of(
    roster: &RosterDir,
    _lock: &RegistryLock,
    record_file_name: &str,
) -> Result<bool> {
    let Some(queue) = Queue::open_existing(roster, record_file_name)? else { return Ok(false) };
    match queue.try_lock(roster)? {
        // The outcomes are kept first; a queue whose outcomes could not be
        // kept stays for the next prune, so that none is lost.
        QueueLockAttempt::Locked => match keep_outcomes(roster, &queue, Timestamp::now()) {
            Ok(()) => queue.remove_all(roster, record_file_name),
            Err(_) => Ok(false),
        },
        QueueLockAttempt::Removed | QueueLockAttempt::HeldElsewhere { .. } => Ok(false),
    }
}

/// Removes the queues whose record is gone from `sessions/` (nothing
/// with `dry_run`).
pub(crate) fn remove_orphaned_queues(roster: &RosterDir, lock: &RegistryLock, dry_run: bool) -> Result<()> {
    if dry_run {
        return Ok(());
    }
    for name in list_names(roster, roster.messages())? {
        let Some(name) = name.to_str().filter(|name| !name.starts_with('.') && *name != OUTCOMES_NAME) else {
            continue;
        };
        let record_file_name = format!("{name}.json");
        if entry_stamp(roster.sessions(), &record_file_name).is_some() {
            continue;
        }
        remove_queue_of(roster, lock, &record_file_name)?;
    }
    Ok(())
}
