//! Fuzzes the RFC 3339 timestamp parser (docs/contract.md §3): any text gives a time or
//! nothing, never a panic; and a parsed time, written back as roster writes
//! times, parses to the same instant (a listing shows `registered_at` that
//! way, and scripts parse it again).

#![no_main]

use libfuzzer_sys::fuzz_target;
use registry_core::Timestamp;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Some(stamp) = Timestamp::parse(text) {
        let written = stamp.to_string();
        assert_eq!(
            Timestamp::parse(&written),
            Some(stamp),
            "{text:?} parsed, but its written form {written:?} did not"
        );
    }
});
