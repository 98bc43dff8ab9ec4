//! Removing queues with their sessions (`roster-prune`): a session's
//! queue goes when its record does, and every prune removes the queues
//! whose record is gone, as it removes their state files. A queue is
//! removed under its own lock, so no send is halfway through it; one
//! whose lock a send holds now is left for the next prune. What became
//! of its messages is kept first (`archive.rs`).

use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::messages::archive::{OUTCOMES_NAME, keep_outcomes};
use crate::messages::queue::Queue;
use crate::record::timestamp::Timestamp;
use crate::store::directory::RosterDir;
use crate::store::files::{entry_stamp, list_names};
use crate::store::lock::RegistryLock;

/// How long a prune waits for a queue's lock: a send or a delivery holds
/// it for a few writes.
const QUEUE_LOCK_WAIT: Duration = Duration::from_millis(500);

/// Removes the queue of the record `record_file_name` with every message
/// in it; `Ok(false)` when there was none or it stays (a send held it).
pub(crate) fn remove_queue_of(
    roster: &RosterDir,
    _lock: &RegistryLock,
    record_file_name: &str,
) -> Result<bool> {
    let Some(queue) = Queue::open_existing(roster, record_file_name)? else { return Ok(false) };
    match queue.lock(roster, Instant::now() + QUEUE_LOCK_WAIT) {
        // The outcomes are kept first; a queue whose outcomes could not be
        // kept stays for the next prune, so that none is lost.
        Ok(true) => match keep_outcomes(roster, &queue, Timestamp::now()) {
            Ok(()) => queue.remove_all(roster, record_file_name),
            Err(_) => Ok(false),
        },
        Ok(false) | Err(Error::Busy { .. }) => Ok(false),
        Err(error) => Err(error),
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
