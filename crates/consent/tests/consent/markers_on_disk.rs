//! Consent markers as `roster-consent` wrote them before the owner identity became
//! one shared type (real ones, kept under `tests/data/markers`): each must still
//! parse, and writing it back must give the very bytes that were read.

use std::path::PathBuf;

use consent::{ParsedMarker, parse_marker};
use registry_core::pid_of_file_name;

#[test]
fn markers_written_by_consent_parse_and_write_back_byte_for_byte() {
    let directory = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/markers");
    let mut names: Vec<PathBuf> =
        std::fs::read_dir(&directory).unwrap().map(|entry| entry.unwrap().path()).collect();
    names.sort();
    assert!(names.len() >= 2, "expected the sample markers, found {}", names.len());
    let mut chains = 0;
    for path in names {
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        let bytes = std::fs::read(&path).unwrap();
        let pid = pid_of_file_name(&name).unwrap_or_else(|| panic!("{name} is not <pid>.json"));
        let marker = match parse_marker(&bytes, pid) {
            ParsedMarker::Marker(marker) => *marker,
            other => panic!("{name} did not parse: {other:?}"),
        };
        chains += usize::from(String::from_utf8_lossy(&bytes).contains("\"chain\""));
        assert_eq!(
            String::from_utf8(marker.to_bytes()).unwrap(),
            String::from_utf8(bytes).unwrap(),
            "{name} does not write back as it was read"
        );
    }
    assert!(chains > 0, "no sample marker carries a chain");
}
