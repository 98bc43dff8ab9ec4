//! Spreading per-entry work over the cores: reading a record and judging
//! its owner is a dozen system calls that wait on nothing but the kernel,
//! and every entry is independent of the others, so a listing of ten
//! thousand records runs on every core instead of one after another.

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Below this many items one thread does it all: starting threads costs
/// more than it saves.
const ITEMS_WORTH_A_THREAD: usize = 512;

/// The most threads used, however many cores there are: past this the
/// kernel's locks on the directory and `/proc` are the limit.
const MOST_THREADS: usize = 8;

/// Items handed to a thread at a time. Threads take the next batch when
/// done with theirs, so one slowed down (by the scheduler, or by entries
/// that cost more) does not leave the others idle at the end, as fixed
/// halves did.
pub(crate) const ITEMS_PER_BATCH: usize = 64;

/// How many threads are worth starting for `items` independent items:
/// one per core, at most [`MOST_THREADS`], one for every
/// [`ITEMS_WORTH_A_THREAD`] items, and at least this one.
pub(crate) fn threads_for(items: usize) -> usize {
    std::thread::available_parallelism()
        .map_or(1, NonZeroUsize::get)
        .min(MOST_THREADS)
        .min(items / ITEMS_WORTH_A_THREAD)
        .max(1)
}

/// `items.iter().map(work).collect()`, in the same order, spread over the
/// available cores in batches. Falls back to this thread alone where
/// threads cannot be started.
pub fn map_in_parallel<T: Sync, R: Send>(items: &[T], work: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = threads_for(items.len());
    if threads == 1 {
        return items.iter().map(&work).collect();
    }
    let batches: Vec<&[T]> = items.chunks(ITEMS_PER_BATCH).collect();
    let next_batch = AtomicUsize::new(0);
    // Each thread returns the batches it did, numbered; they are put back
    // in order at the end.
    let take_batches = || {
        let mut done: Vec<(usize, Vec<R>)> = Vec::new();
        loop {
            let index = next_batch.fetch_add(1, Ordering::Relaxed);
            let Some(batch) = batches.get(index) else { return done };
            done.push((index, batch.iter().map(&work).collect()));
        }
    };
    let mut done = std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..threads)
            .filter_map(|_| {
                // No thread (resources exhausted): the others take its share.
                std::thread::Builder::new()
                    .name("registry-read".into())
                    .spawn_scoped(scope, take_batches)
                    .ok()
            })
            .collect();
        let mut done = take_batches();
        for helper in helpers {
            match helper.join() {
                Ok(theirs) => done.extend(theirs),
                // The work panicked in the helper: panic here as well, as it
                // would have without threads.
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        done
    });
    done.sort_unstable_by_key(|(index, _)| *index);
    let mut results = Vec::with_capacity(items.len());
    for (_, batch_results) in done {
        results.extend(batch_results);
    }
    results
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_keep_the_order_of_the_items() {
        for count in [0, 1, 63, 64, 65, 511, 512, 1024, 5000] {
            let items: Vec<usize> = (0..count).collect();
            let doubled = map_in_parallel(&items, |item| item * 2);
            assert_eq!(doubled, items.iter().map(|item| item * 2).collect::<Vec<_>>(), "{count} items");
        }
    }

    #[test]
    fn every_item_is_done_once_when_some_take_longer() {
        // Every item is done exactly once whichever thread takes it.
        let items: Vec<usize> = (0..4096).collect();
        let calls = AtomicUsize::new(0);
        let results = map_in_parallel(&items, |item| {
            calls.fetch_add(1, Ordering::Relaxed);
            if item % 1000 == 0 {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            *item
        });
        assert_eq!(results, items);
        assert_eq!(calls.load(Ordering::Relaxed), items.len());
    }
}
