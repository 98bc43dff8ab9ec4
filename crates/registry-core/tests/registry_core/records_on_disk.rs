//! Records as `roster-register` wrote them before the record became typed (a few
//! real ones, kept under `tests/data/records`): each must still parse, and writing
//! it back must give the very bytes that were read, so a registry written by an
//! older roster reads the same and a refresh changes only what it means to.

use std::path::PathBuf;

use owner_liveness::Pid;
use registry_core::{Parsed, parse_record, pid_of_file_name};

fn recorded_files() -> Vec<(String, Vec<u8>)> {
    let directory = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/records");
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&directory)
        .unwrap_or_else(|error| panic!("read {}: {error}", directory.display()))
        .map(|entry| {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_str().unwrap().to_owned();
            (name, std::fs::read(&path).unwrap())
        })
        .collect();
    files.sort();
    files
}

fn parsed(name: &str, bytes: &[u8]) -> registry_core::Record {
    let pid: Pid = pid_of_file_name(name).unwrap_or_else(|| panic!("{name} is not <pid>.json"));
    match parse_record(bytes, pid) {
        Parsed::Record(record) => *record,
        other => panic!("{name} did not parse: {other:?}"),
    }
}

#[test]
fn records_written_by_register_parse_and_write_back_byte_for_byte() {
    let files = recorded_files();
    assert!(files.len() >= 4, "expected the sample records, found {}", files.len());
    for (name, bytes) in &files {
        let record = parsed(name, bytes);
        assert_eq!(
            String::from_utf8(record.to_bytes()).unwrap(),
            String::from_utf8(bytes.clone()).unwrap(),
            "{name} does not write back as it was read"
        );
    }
}

#[test]
fn the_samples_cover_every_optional_part_of_a_record() {
    let texts: Vec<String> =
        recorded_files().into_iter().map(|(_, bytes)| String::from_utf8(bytes).unwrap()).collect();
    for key in
        ["\"chain\"", "\"socket\"", "\"transcript_path\"", "\"agent\"", "\"session_id\"", "\"pidfs_ino\""]
    {
        assert!(texts.iter().any(|text| text.contains(key)), "no sample record carries {key}");
    }
    assert!(texts.iter().any(|text| !text.contains("\"agent\"")), "no sample record is anonymous");
    assert!(
        texts.iter().any(|text| text.contains("\\u") || !text.is_ascii()),
        "no sample has a non-ASCII name"
    );
}
