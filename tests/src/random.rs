//! A small seeded random generator for unpredictable instants and choices.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A small deterministic random generator (xorshift64*), seeded from the
/// clock unless `ROSTER_TEST_SEED` is set; failures print the seed. The
/// tests need unpredictable instants and choices, not cryptography, and no
/// dependency for it.
pub struct Random {
    state: u64,
    pub seed: u64,
}

impl Random {
    pub fn new() -> Random {
        let seed =
            std::env::var("ROSTER_TEST_SEED").ok().and_then(|text| text.parse().ok()).unwrap_or_else(|| {
                SystemTime::now().duration_since(UNIX_EPOCH).expect("after the epoch").as_nanos() as u64 | 1
            });
        Random { state: seed.max(1), seed }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        self.state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A generator with a given seed (each soak worker gets its own).
    pub fn seeded(seed: u64) -> Random {
        Random { state: seed.max(1), seed }
    }

    /// Uniform-enough in `0..bound`.
    pub fn below(&mut self, bound: u64) -> u64 {
        if bound == 0 { 0 } else { self.next_u64() % bound }
    }

    /// True with probability `percent` / 100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    /// A duration uniform in `0..max`.
    pub fn duration_below(&mut self, max: Duration) -> Duration {
        Duration::from_micros(self.below(max.as_micros().max(1) as u64))
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        if items.is_empty() { None } else { items.get(self.below(items.len() as u64) as usize) }
    }
}

impl Default for Random {
    fn default() -> Self {
        Random::new()
    }
}
