//! Prune's removals on one thread per directory while every thread judges:
//! the records of `sessions/` are unlinked on one thread, the index entries
//! of `session-ids/` on another, and both judge entries whenever they have
//! nothing to remove. Two threads unlinking in one directory contend on its
//! lock and on tmpfs's tree of directory offsets, and on two cores that
//! made removing 10,000 records and their index entries slower than one
//! thread doing it alone (80-200 ms against 83-140 ms; 57-85 ms with one
//! thread per directory).
//!
//! The ended sessions (`ended/`, a third directory) can only be chosen once
//! every entry is judged, so they are kept at the end, by the record
//! thread, which then holds every row it removed. The index thread saves a
//! backlog of index entries for that moment, so that it removes them in
//! `session-ids/` while the ended sessions are written in `ended/`: kept
//! after both threads were done, the ended sessions of a prune of 10,000
//! dead records took 13-25 ms of one core alone, a sixth of its time.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

use crate::record::name::RecordName;

use crate::error::{Error, Result};
use crate::parallel::ITEMS_PER_BATCH;
use crate::prune::outcome::{EntryOutcome, Judged};
use crate::removal_checks::index_entry_of;
use crate::session_row::SessionRow;
use crate::store::directory::RosterDir;
use crate::store::directory_entries::DirectoryEntry;
use crate::store::files::remove_entry;
use crate::store::lock::RegistryLock;
use crate::store::session_index::{IndexKey, remove_index_entry_if_pointing_at};

/// Index entries the index thread leaves queued while entries remain to
/// judge, for each ended session that may be kept: removing an index entry
/// costs about half what writing an ended session does, so a backlog of
/// twice as many keeps it busy for as long as the ended sessions take.
/// Once `ended/` is full, each one written also trims an older one, and
/// the index thread finishes first; but backlogs of three and four did no
/// better in 40 interleaved rounds (112-115 ms a prune of 10,000 either
/// way; one, 124 ms): the kernel's work of creating files in one
/// directory of a tmpfs while removing in another is not free of shared
/// locks.
const INDEX_BACKLOG_PER_ENDED_SESSION: usize = 2;

/// Judges every entry with `judge` on `threads` threads (at least two) and
/// removes what it says may go; returns each entry's outcome, in the order
/// of `entries`, and what `keep_ended` returned. A record goes before its
/// index entry, as when one thread does both. `keep_ended` is given every
/// row removed, once every entry is judged, and runs while the index
/// entries still queued are removed (`ended_most`: how many ended sessions
/// it may keep at most, which sizes that queue).
pub(crate) fn judge_and_remove<'l>(
    roster: &RosterDir,
    entries: &[DirectoryEntry],
    threads: usize,
    judge: impl Fn(&DirectoryEntry) -> Result<Judged<'l>> + Sync,
    ended_most: usize,
    keep_ended: impl FnOnce(&[&SessionRow]) -> Result<()>,
) -> (Vec<Result<EntryOutcome>>, Result<()>) {
    let batches: Vec<&[DirectoryEntry]> = entries.chunks(ITEMS_PER_BATCH).collect();
    let pipeline = Pipeline {
        roster,
        next_batch: AtomicUsize::new(0),
        queues: Mutex::new(Queues {
            records: Vec::new(),
            index_entries: Vec::new(),
            batches_unjudged: batches.len(),
            records_done: false,
            abandoned: false,
        }),
        records_ready: Condvar::new(),
        index_entries_ready: Condvar::new(),
        index_backlog: ended_most.saturating_mul(INDEX_BACKLOG_PER_ENDED_SESSION),
        batches,
    };
    let judge = &judge;
    let (finished, ended): (Vec<Finished>, Result<()>) = std::thread::scope(|scope| {
        let pipeline = &pipeline;
        let spawn = |name: &str, role: Role| {
            // No thread (resources exhausted): the others take its share.
            std::thread::Builder::new()
                .name(name.into())
                .spawn_scoped(scope, move || pipeline.work(role, judge))
                .ok()
        };
        let index_remover = spawn("registry-index", Role::IndexEntries);
        let judges: Vec<_> = (2..threads).filter_map(|_| spawn("registry-read", Role::JudgeOnly)).collect();
        let own_role = if index_remover.is_some() { Role::Records } else { Role::RecordsAndIndexEntries };
        let own = pipeline.work(own_role, judge);
        // Every entry is judged and every record removed, here: the rows
        // removed are this thread's.
        let removed: Vec<&SessionRow> = own
            .outcomes
            .iter()
            .filter_map(|(_, outcome)| match outcome {
                Ok(EntryOutcome::Removed(row)) => Some(&**row),
                _ => None,
            })
            .collect();
        let ended = keep_ended(&removed);
        let mut finished = vec![own];
        for helper in index_remover.into_iter().chain(judges) {
            match helper.join() {
                Ok(theirs) => finished.push(theirs),
                // The work panicked in the helper: panic here as well, as it
                // would have without threads.
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        (finished, ended)
    });
    let mut outcomes: Vec<Option<Result<EntryOutcome>>> = entries.iter().map(|_| None).collect();
    let mut index_failures = Vec::new();
    for finished in finished {
        for (index, outcome) in finished.outcomes {
            outcomes[index] = Some(outcome);
        }
        index_failures.extend(finished.index_failures);
    }
    for (index, error) in index_failures {
        outcomes[index] = Some(Err(error));
    }
    let outcomes = outcomes.into_iter().map(|outcome| outcome.expect("every entry is judged once")).collect();
    (outcomes, ended)
}

/// What a thread does besides judging.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Unlinks records, then hands their index entries on.
    Records,
    /// Unlinks records and their index entries (no index thread started).
    RecordsAndIndexEntries,
    IndexEntries,
    JudgeOnly,
}

/// A record to remove: its entry's position and its row, as finally judged
/// under the lock.
type RecordRemoval<'l> = (usize, Box<SessionRow>, &'l RegistryLock);

/// An index entry to remove once its record is gone: the entry's position,
/// its key and the record it must still name.
type IndexRemoval<'l> = (usize, IndexKey, RecordName, &'l RegistryLock);

/// What one thread did.
#[derive(Default)]
struct Finished {
    outcomes: Vec<(usize, Result<EntryOutcome>)>,
    /// Entries whose record went but whose index entry could not be removed.
    index_failures: Vec<(usize, Error)>,
}

struct Queues<'l> {
    records: Vec<RecordRemoval<'l>>,
    index_entries: Vec<IndexRemoval<'l>>,
    /// Batches not yet judged to the end (taken or not).
    batches_unjudged: usize,
    /// Every record is removed: no index entry will be handed on any more.
    records_done: bool,
    /// A thread panicked: the others stop waiting for it.
    abandoned: bool,
}

struct Pipeline<'a, 'l> {
    roster: &'a RosterDir,
    batches: Vec<&'a [DirectoryEntry]>,
    next_batch: AtomicUsize,
    queues: Mutex<Queues<'l>>,
    records_ready: Condvar,
    index_entries_ready: Condvar,
    /// Index entries the index thread leaves queued while batches remain
    /// to judge (`INDEX_BACKLOG_PER_ENDED_SESSION`).
    index_backlog: usize,
}

/// What a thread took to remove.
enum Removals<'l> {
    Records(Vec<RecordRemoval<'l>>),
    IndexEntries(Vec<IndexRemoval<'l>>),
}

impl<'a, 'l> Pipeline<'a, 'l> {
    fn queues(&self) -> MutexGuard<'_, Queues<'l>> {
        self.queues.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// One thread's loop: its removals first, else the next batch to
    /// judge, else (every batch taken) wait for removals until none can
    /// come any more.
    fn work(&self, role: Role, judge: &impl Fn(&DirectoryEntry) -> Result<Judged<'l>>) -> Finished {
        let _wake_the_others_on_panic = WakeOnPanic(self);
        let mut finished = Finished::default();
        loop {
            if let Some(removals) = self.take_removals(role, false) {
                self.remove(removals, role, &mut finished);
                continue;
            }
            let index = self.next_batch.fetch_add(1, Ordering::Relaxed);
            if index < self.batches.len() {
                self.judge_batch(index, judge, &mut finished);
                continue;
            }
            match self.take_removals(role, true) {
                Some(removals) => self.remove(removals, role, &mut finished),
                None => return finished,
            }
        }
    }

    /// The removals waiting for `role`; with `wait`, blocks until some come
    /// and returns `None` only once none can come any more.
    fn take_removals(&self, role: Role, wait: bool) -> Option<Removals<'l>> {
        let mut queues = self.queues();
        loop {
            match role {
                Role::JudgeOnly => return None,
                Role::Records | Role::RecordsAndIndexEntries => {
                    if !queues.records.is_empty() {
                        return Some(Removals::Records(std::mem::take(&mut queues.records)));
                    }
                    if !wait {
                        return None;
                    }
                    if queues.batches_unjudged == 0 || queues.abandoned {
                        queues.records_done = true;
                        self.index_entries_ready.notify_all();
                        return None;
                    }
                    queues = self.records_ready.wait(queues).unwrap_or_else(PoisonError::into_inner);
                }
                Role::IndexEntries => {
                    // Judging comes first while the backlog is short: the
                    // entries saved are removed while the ended sessions
                    // are written, at the end.
                    let judging_left = self.next_batch.load(Ordering::Relaxed) < self.batches.len();
                    let saved = if !wait && judging_left { self.index_backlog } else { 0 };
                    if queues.index_entries.len() > saved {
                        let excess = queues.index_entries.len() - saved;
                        return Some(Removals::IndexEntries(queues.index_entries.drain(..excess).collect()));
                    }
                    if !wait || queues.records_done || queues.abandoned {
                        return None;
                    }
                    queues = self.index_entries_ready.wait(queues).unwrap_or_else(PoisonError::into_inner);
                }
            }
        }
    }

    fn judge_batch(
        &self,
        index: usize,
        judge: &impl Fn(&DirectoryEntry) -> Result<Judged<'l>>,
        finished: &mut Finished,
    ) {
        let first = index * ITEMS_PER_BATCH;
        let mut removals = Vec::new();
        for (position, entry) in (first..).zip(self.batches[index]) {
            match judge(entry) {
                Ok(Judged::Remove(row, lock)) => removals.push((position, row, lock)),
                Ok(Judged::Done(outcome)) => finished.outcomes.push((position, Ok(outcome))),
                Err(error) => finished.outcomes.push((position, Err(error))),
            }
        }
        let mut queues = self.queues();
        queues.records.extend(removals);
        queues.batches_unjudged -= 1;
        self.records_ready.notify_all();
    }

    fn remove(&self, removals: Removals<'l>, role: Role, finished: &mut Finished) {
        match removals {
            Removals::Records(records) => {
                let mut index_entries = Vec::new();
                for (position, row, lock) in records {
                    let removed = match remove_entry(self.roster, self.roster.sessions(), &row.file_name) {
                        Ok(removed) => removed,
                        Err(error) => {
                            finished.outcomes.push((position, Err(error)));
                            continue;
                        }
                    };
                    if let Some((key, pid)) = index_entry_of(&row) {
                        if role == Role::RecordsAndIndexEntries {
                            self.remove_index_entry((position, key, pid, lock), finished);
                        } else {
                            index_entries.push((position, key, pid, lock));
                        }
                    }
                    let outcome = if removed { EntryOutcome::Removed(row) } else { EntryOutcome::Gone };
                    finished.outcomes.push((position, Ok(outcome)));
                }
                if !index_entries.is_empty() {
                    self.queues().index_entries.extend(index_entries);
                    self.index_entries_ready.notify_all();
                }
            }
            Removals::IndexEntries(index_entries) => {
                for removal in index_entries {
                    self.remove_index_entry(removal, finished);
                }
            }
        }
    }

    fn remove_index_entry(&self, removal: IndexRemoval<'l>, finished: &mut Finished) {
        let (position, key, pid, _lock) = removal;
        if let Err(error) = remove_index_entry_if_pointing_at(self.roster, &key, pid) {
            finished.index_failures.push((position, error));
        }
    }
}

/// Wakes every waiting thread when its thread panics, so that none waits
/// for work the panicking one will never finish.
struct WakeOnPanic<'p, 'a, 'l>(&'p Pipeline<'a, 'l>);

impl Drop for WakeOnPanic<'_, '_, '_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.queues().abandoned = true;
            self.0.records_ready.notify_all();
            self.0.index_entries_ready.notify_all();
        }
    }
}
