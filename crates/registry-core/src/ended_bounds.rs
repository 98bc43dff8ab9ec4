//! How many ended sessions `ended/` keeps, and for how long
//! (docs/contract.md §6.2.1, §7): values of their own, below the store,
//! which carries the user's choice with the registry it opened.

use std::time::Duration;

/// How long an ended session is kept after it ended.
pub const ENDED_KEPT_FOR: Duration = Duration::from_secs(30 * 24 * 3600);
/// The most ended sessions kept; the oldest go first.
pub const ENDED_KEPT_MOST: usize = 1000;
/// The range `[ended] kept_most` may take in the user's configuration.
pub const ENDED_KEPT_MOST_RANGE: std::ops::RangeInclusive<usize> = 1..=100_000;
/// The range `[ended] kept_days` may take in the user's configuration.
pub const ENDED_KEPT_DAYS_RANGE: std::ops::RangeInclusive<u64> = 1..=3650;

/// How many ended sessions `ended/` keeps, and for how long: by default
/// `ENDED_KEPT_MOST` for `ENDED_KEPT_FOR`; the user's `config.toml` may say
/// otherwise (`[ended] kept_most`, `kept_days`, docs/contract.md §7).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EndedBounds {
    pub kept_most: usize,
    pub kept_for: Duration,
}

impl Default for EndedBounds {
    fn default() -> EndedBounds {
        EndedBounds { kept_most: ENDED_KEPT_MOST, kept_for: ENDED_KEPT_FOR }
    }
}
