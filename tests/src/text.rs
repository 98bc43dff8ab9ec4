//! Bytes as a terminal would see them: raw control characters, and
//! `OsStr`s from raw bytes.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

/// The raw control characters in `bytes` that a terminal would act on:
/// C0 other than newline, DEL, and C1 (as UTF-8 or as a lone byte), plus
/// every byte that is not valid UTF-8 (a lone 0x9b is CSI to some
/// terminals). Empty when the text is safe to show.
pub fn raw_controls(bytes: &[u8]) -> Vec<String> {
    let mut found = Vec::new();
    for chunk in bytes.utf8_chunks() {
        for character in chunk.valid().chars() {
            if character.is_control() && character != '\n' {
                found.push(format!("{character:?}"));
            }
        }
        if !chunk.invalid().is_empty() {
            found.push(format!("invalid UTF-8 {:?}", chunk.invalid()));
        }
    }
    found
}

/// `OsStr` from raw bytes (names with control characters).
pub fn os_str(bytes: &[u8]) -> &OsStr {
    OsStr::from_bytes(bytes)
}
