//! Fuzzes the record parser (docs/contract.md §3): any bytes under any file name must
//! give a record, a malformed entry or an unsupported format, never a
//! panic; and a record that parses must round-trip through its own bytes.

#![no_main]

use libfuzzer_sys::fuzz_target;
use owner_liveness::Pid;
use registry_core::{Parsed, parse_record, pid_of_file_name};

fuzz_target!(|data: &[u8]| {
    // The pid the file name claims; most seeds are for pid 4242.
    let file_pid = Pid::new(4242).expect("non-zero");
    if let Parsed::Record(record) = parse_record(data, file_pid) {
        let _ = record.registered_at();
        let again = parse_record(&record.to_bytes(), record.pid());
        assert_eq!(again, Parsed::Record(record.clone()), "a parsed record does not round-trip");
    }
    if let Ok(name) = std::str::from_utf8(data) {
        let _ = pid_of_file_name(name);
    }
});
