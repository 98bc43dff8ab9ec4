//! Fuzzes the record parser (docs/contract.md §3): any bytes under any file name must
//! give a record, a malformed entry or an unsupported format, never a
//! panic; a record that parses must round-trip through its own bytes; and
//! the reader of roster's own layout must agree with the general reader.

#![no_main]

use libfuzzer_sys::fuzz_target;
use owner_liveness::Pid;
use registry_core::{Parsed, parse_record, parse_record_by_serde, pid_of_file_name};

fuzz_target!(|data: &[u8]| {
    // The pid the file name claims; most seeds are for pid 4242.
    let file_pid = Pid::new(4242).expect("non-zero");
    let parsed = parse_record(data, file_pid);
    assert_eq!(parsed, parse_record_by_serde(data, file_pid), "the two readers disagree");
    if let Parsed::Record(record) = parsed {
        let _ = record.registered_at();
        let again = parse_record(&record.to_bytes(), record.pid());
        assert_eq!(again, Parsed::Record(record.clone()), "a parsed record does not round-trip");
    }
    if let Ok(name) = std::str::from_utf8(data) {
        let _ = pid_of_file_name(name);
    }
});
