//! Fuzzes the consent marker parser (docs/contract.md §6.4): a marker grants consent,
//! so any bytes must give a marker, a malformed entry or an unsupported
//! format, never a panic; and a marker that parses must round-trip.

#![no_main]

use consent::{ParsedMarker, parse_marker};
use libfuzzer_sys::fuzz_target;
use owner_liveness::Pid;

fuzz_target!(|data: &[u8]| {
    let file_pid = Pid::new(4242).expect("non-zero");
    if let ParsedMarker::Marker(marker) = parse_marker(data, file_pid) {
        let _ = marker.identity();
        let bytes = marker.to_bytes();
        assert_eq!(
            parse_marker(&bytes, file_pid),
            ParsedMarker::Marker(marker),
            "a parsed marker does not round-trip"
        );
    }
});
