//! Spreading per-entry work over the cores: reading a record and judging
//! its owner is a dozen system calls that wait on nothing but the kernel,
//! and every entry is independent of the others, so a listing of ten
//! thousand records runs one slice per core instead of one after another.

use std::num::NonZeroUsize;

/// Below this many items one thread does it all: starting threads costs
/// more than it saves.
const ITEMS_WORTH_A_THREAD: usize = 512;

/// The most threads used, however many cores there are: past this the
/// kernel's locks on the directory and `/proc` are the limit.
const MOST_THREADS: usize = 8;

/// `items.iter().map(work).collect()`, in the same order, with the items
/// split into one contiguous slice per available core. Falls back to this
/// thread alone where threads cannot be started.
pub(crate) fn map_in_parallel<T: Sync, R: Send>(items: &[T], work: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map_or(1, NonZeroUsize::get)
        .min(MOST_THREADS)
        .min(items.len() / ITEMS_WORTH_A_THREAD)
        .max(1);
    if threads == 1 {
        return items.iter().map(&work).collect();
    }
    let slice_length = items.len().div_ceil(threads);
    let work = &work;
    std::thread::scope(|scope| {
        let mut slices = items.chunks(slice_length);
        // This thread takes the first slice itself.
        let own_slice = slices.next().unwrap_or_default();
        let helpers: Vec<_> = slices
            .map(|slice| {
                let spawned = std::thread::Builder::new()
                    .name("registry-read".into())
                    .spawn_scoped(scope, move || slice.iter().map(work).collect::<Vec<R>>());
                (slice, spawned)
            })
            .collect();
        let mut results: Vec<R> = Vec::with_capacity(items.len());
        results.extend(own_slice.iter().map(work));
        for (slice, spawned) in helpers {
            match spawned.map(|handle| handle.join()) {
                Ok(Ok(slice_results)) => results.extend(slice_results),
                // No thread (resources exhausted): do the slice here.
                Err(_) => results.extend(slice.iter().map(work)),
                // The work panicked in the helper: panic here as well, as it
                // would have without threads.
                Ok(Err(panic)) => std::panic::resume_unwind(panic),
            }
        }
        results
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_keep_the_order_of_the_items() {
        for count in [0, 1, 511, 512, 1024, 5000] {
            let items: Vec<usize> = (0..count).collect();
            let doubled = map_in_parallel(&items, |item| item * 2);
            assert_eq!(doubled, items.iter().map(|item| item * 2).collect::<Vec<_>>(), "{count} items");
        }
    }
}
