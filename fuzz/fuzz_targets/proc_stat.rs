//! Fuzzes the `/proc/<pid>/stat` parser (docs/contract.md §4.2), where a process
//! chooses its own comm (any bytes, `)` and spaces included): any line
//! gives the fields or an error, never a panic.

#![no_main]

use libfuzzer_sys::fuzz_target;
use owner_liveness::parse_proc_stat;

fuzz_target!(|data: &[u8]| {
    if let Ok(stat) = parse_proc_stat(data) {
        // The comm is what comes between the first `(` and the last `)`.
        assert!(stat.comm.len() <= data.len() * 3, "comm longer than its line");
    }
});
