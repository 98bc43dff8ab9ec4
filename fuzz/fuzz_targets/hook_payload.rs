//! Fuzzes the hook payload parser (docs/contract.md §8.2) with every harness dialect
//! as seeds: any bytes give a payload or an error naming what is wrong,
//! never a panic.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(error) = harness::parse_payload(data) {
        // Every error renders: it becomes a line of hook-errors.log.
        let _ = error.to_string();
    }
});
