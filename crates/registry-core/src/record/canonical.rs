//! Reading a record in the exact layout `Record::to_bytes` writes, without
//! serde: prune and list read every record of a registry, and serde's
//! general reader was half of the CPU they spent outside the kernel
//! (matching twenty keys by name, one allocation per value).
//!
//! It reads only what it can read exactly: every key in the order the
//! writer puts them, two-space indents, strings without escapes or control
//! characters, integers in canonical decimal, nothing after the closing
//! brace but the newline. Anything else (a hand-edited file, an escape, a
//! `chain`, a newer format, a key it does not know) is `None`, and the
//! caller reads the file with the general reader, which says exactly what
//! is wrong, if anything. So a file read here yields the very keys the
//! general reader would yield, and the same checks then run on them.

use crate::record::keys::{RECORD_FORMAT, RecordKeys, SocketKeys};
use crate::record::location::{LOCATION_KEYS, LocationKeys};
use crate::record::owner::{OwnerKeys, UncheckedOwner};

/// The keys of `bytes` when they are in the writer's layout; `None` when
/// the general reader must decide.
pub(crate) fn read_canonical_record(bytes: &[u8]) -> Option<RecordKeys> {
    let mut reader = Reader { rest: bytes };
    reader.literal(b"{\n")?;
    let format = reader.unsigned("format", u64::MAX)?;
    if !(1..=RECORD_FORMAT).contains(&format) {
        return None;
    }
    let session_pid = reader.u32(OwnerKeys::SESSION_PID)?;
    let session_pid_source = reader.string("session_pid_source")?;
    let session_pid_verified = reader.boolean("session_pid_verified")?;
    let owner_uid = reader.u32(OwnerKeys::OWNER_UID)?;
    let start_ticks = reader.unsigned(OwnerKeys::START_TICKS, u64::MAX)?;
    let pidfs_ino = reader.optional(OwnerKeys::PIDFS_INO, |reader| reader.unsigned_value(u64::MAX))?;
    let boot_id = reader.string(OwnerKeys::BOOT_ID)?;
    let pid_ns = reader.unsigned(OwnerKeys::PID_NS, u64::MAX)?;
    let time_ns = reader.unsigned(OwnerKeys::TIME_NS, u64::MAX)?;
    let user_ns = reader.optional(OwnerKeys::USER_NS, |reader| reader.unsigned_value(u64::MAX))?;
    let machine = reader.optional(OwnerKeys::MACHINE, Reader::string_value)?;
    let harness = reader.string("harness")?;
    let harness_version = reader.optional("harness_version", Reader::string_value)?;
    let agent = reader.optional("agent", Reader::string_value)?;
    let session_id = reader.optional("session_id", Reader::string_value)?;
    let transcript_path = reader.optional("transcript_path", Reader::string_value)?;
    let socket = reader.optional("socket", Reader::socket_value)?;
    let location = reader.optional("location", Reader::location_value)?;
    let cwd = reader.string("cwd")?;
    let registrar_pid = reader.u32("registrar_pid")?;
    let registered_at = reader.string("registered_at")?;
    let refreshed_at = reader.last_string("refreshed_at")?;
    reader.literal(b"}\n")?;
    if !reader.rest.is_empty() {
        return None;
    }
    Some(RecordKeys {
        format,
        owner: UncheckedOwner {
            session_pid,
            owner_uid,
            start_ticks,
            pidfs_ino,
            boot_id,
            pid_ns,
            time_ns,
            user_ns,
            machine,
            chain: Vec::new(),
        },
        session_pid_source,
        session_pid_verified,
        harness,
        harness_version,
        agent,
        session_id,
        transcript_path,
        socket,
        location,
        cwd,
        registrar_pid,
        registered_at,
        refreshed_at,
    })
}

/// What is left of the file.
struct Reader<'b> {
    rest: &'b [u8],
}

impl Reader<'_> {
    fn literal(&mut self, expected: &[u8]) -> Option<()> {
        self.rest = self.rest.strip_prefix(expected)?;
        Some(())
    }

    /// `  "key": ` at the top level's indent.
    fn key(&mut self, key: &str) -> Option<()> {
        self.key_at(b"  ", key)
    }

    fn key_at(&mut self, indent: &[u8], key: &str) -> Option<()> {
        self.literal(indent)?;
        self.literal(b"\"")?;
        self.literal(key.as_bytes())?;
        self.literal(b"\": ")
    }

    /// A key the writer leaves out when it has no value: when the next
    /// key is `key`, its value as `read_value` reads it.
    fn optional<T>(
        &mut self,
        key: &str,
        read_value: impl FnOnce(&mut Self) -> Option<T>,
    ) -> Option<Option<T>> {
        let before = self.rest;
        if self.key(key).is_none() {
            self.rest = before;
            return Some(None);
        }
        read_value(self).map(Some)
    }

    fn unsigned(&mut self, key: &str, max: u64) -> Option<u64> {
        self.key(key)?;
        self.unsigned_value(max)
    }

    /// A value in canonical decimal of at most `max`, and its comma.
    fn unsigned_value(&mut self, max: u64) -> Option<u64> {
        let value = self.digits(max)?;
        self.literal(b",\n")?;
        Some(value)
    }

    fn u32(&mut self, key: &str) -> Option<u32> {
        self.unsigned(key, u64::from(u32::MAX)).map(|value| value as u32)
    }

    fn boolean(&mut self, key: &str) -> Option<bool> {
        self.key(key)?;
        let value = if self.literal(b"true").is_some() {
            true
        } else {
            self.literal(b"false")?;
            false
        };
        self.literal(b",\n")?;
        Some(value)
    }

    fn string(&mut self, key: &str) -> Option<String> {
        self.key(key)?;
        self.string_value()
    }

    /// A string value and its comma.
    fn string_value(&mut self) -> Option<String> {
        let value = self.quoted()?;
        self.literal(b",\n")?;
        Some(value)
    }

    /// The last key of the object: no comma after it.
    fn last_string(&mut self, key: &str) -> Option<String> {
        self.key(key)?;
        let value = self.quoted()?;
        self.literal(b"\n")?;
        Some(value)
    }

    /// Canonical decimal (no sign, no leading zero, no fraction or
    /// exponent) of at most `max`.
    fn digits(&mut self, max: u64) -> Option<u64> {
        let count = self.rest.iter().take_while(|byte| byte.is_ascii_digit()).count();
        let (digits, rest) = self.rest.split_at(count);
        if count == 0 || (count > 1 && digits[0] == b'0') {
            return None;
        }
        let mut value: u64 = 0;
        for digit in digits {
            value = value.checked_mul(10)?.checked_add(u64::from(digit - b'0'))?;
        }
        if value > max {
            return None;
        }
        self.rest = rest;
        Some(value)
    }

    /// A string with neither escapes nor control characters (which JSON
    /// would need escaped), in valid UTF-8: its text is its bytes.
    fn quoted(&mut self) -> Option<String> {
        self.literal(b"\"")?;
        let length = self.rest.iter().position(|&byte| byte == b'"' || byte == b'\\' || byte < 0x20)?;
        let (text, rest) = self.rest.split_at(length);
        self.rest = rest;
        self.literal(b"\"")?;
        std::str::from_utf8(text).ok().map(str::to_owned)
    }

    /// The `socket` object's value and its comma.
    fn socket_value(&mut self) -> Option<SocketKeys> {
        const INDENT: &[u8] = b"    ";
        self.literal(b"{\n")?;
        self.key_at(INDENT, "path")?;
        let path = self.quoted()?;
        self.literal(b",\n")?;
        self.key_at(INDENT, "dev")?;
        let dev = self.digits(u64::MAX)?;
        self.literal(b",\n")?;
        self.key_at(INDENT, "ino")?;
        let ino = self.digits(u64::MAX)?;
        self.literal(b",\n")?;
        self.key_at(INDENT, "mtime_ns")?;
        let negative = self.literal(b"-").is_some();
        let magnitude = self.digits(if negative { 1 << 63 } else { i64::MAX as u64 })?;
        if negative && magnitude == 0 {
            return None;
        }
        let mtime_ns = if negative { 0_i64.checked_sub_unsigned(magnitude)? } else { magnitude as i64 };
        self.literal(b"\n  },\n")?;
        Some(SocketKeys { path, dev, ino, mtime_ns })
    }

    /// The `location` object's value and its comma: its keys in the
    /// writer's order, each optional, at least one.
    fn location_value(&mut self) -> Option<LocationKeys> {
        const INDENT: &[u8] = b"    ";
        self.literal(b"{\n")?;
        let mut keys = LocationKeys::default();
        let mut any = false;
        for key in LOCATION_KEYS {
            let before = self.rest;
            if self.key_at(INDENT, key).is_none() {
                self.rest = before;
                continue;
            }
            *keys.slot(key)? = Some(self.quoted()?);
            any = true;
            if self.literal(b",\n").is_none() {
                self.literal(b"\n")?;
                break;
            }
        }
        self.literal(b"  },\n")?;
        any.then_some(keys)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::session_record::{Parsed, parse_record_by_serde};
    use owner_liveness::Pid;

    /// The general reader's keys for `bytes`, as parse_versioned's first
    /// try reads them (it reads only valid UTF-8, and keeps a format from 1
    /// to ours).
    fn general(bytes: &[u8]) -> Option<RecordKeys> {
        let keys = serde_json::from_str::<RecordKeys>(std::str::from_utf8(bytes).ok()?).ok()?;
        (1..=RECORD_FORMAT).contains(&keys.format).then_some(keys)
    }

    fn sample_bytes() -> Vec<Vec<u8>> {
        crate::record::session_record::tests::sample_shapes().iter().map(|record| record.to_bytes()).collect()
    }

    #[test]
    fn every_shape_the_writer_makes_without_a_chain_is_read_here_as_the_general_reader_reads_it() {
        for record in crate::record::session_record::tests::sample_shapes() {
            let bytes = record.to_bytes();
            let canonical = read_canonical_record(&bytes);
            if record.owner.chain.is_empty() {
                let keys =
                    canonical.unwrap_or_else(|| panic!("not read:\n{}", String::from_utf8_lossy(&bytes)));
                assert_eq!(Some(keys), general(&bytes));
                assert_eq!(
                    parse_record_by_serde(&bytes, record.pid()),
                    Parsed::Record(Box::new(record.clone()))
                );
            } else {
                assert_eq!(canonical, None, "a chain is left to the general reader");
            }
        }
    }

    /// Every single-byte edit of every shape: wherever the canonical
    /// reader still reads the file, it reads what the general reader does.
    #[test]
    fn no_single_byte_edit_makes_the_two_readers_disagree() {
        let replacements =
            [b'0', b'1', b'9', b'-', b' ', b'\n', b'"', b'\\', b',', b'{', b'}', b'a', 0x00, 0x1f, 0xc3];
        let mut read_here = 0;
        let mut compared = 0;
        for bytes in sample_bytes() {
            let mut edits: Vec<Vec<u8>> = Vec::new();
            for position in 0..bytes.len() {
                let mut deleted = bytes.clone();
                deleted.remove(position);
                edits.push(deleted);
                let mut doubled = bytes.clone();
                doubled.insert(position, bytes[position]);
                edits.push(doubled);
                for &replacement in &replacements {
                    let mut replaced = bytes.clone();
                    replaced[position] = replacement;
                    edits.push(replaced);
                }
            }
            edits.push([bytes.as_slice(), b" "].concat());
            edits.push([bytes.as_slice(), b"\n"].concat());
            for edit in edits {
                compared += 1;
                if let Some(keys) = read_canonical_record(&edit) {
                    read_here += 1;
                    assert_eq!(Some(keys), general(&edit), "{}", String::from_utf8_lossy(&edit));
                }
            }
        }
        // The edits inside values (a digit for a digit, a letter in a
        // string) are still canonical: the comparison is not vacuous.
        assert!(read_here > 1000, "only {read_here} of {compared} edits were read here");
    }

    #[test]
    fn values_the_general_reader_refuses_or_reads_otherwise_are_left_to_it() {
        let bytes = String::from_utf8(sample_bytes().remove(0)).unwrap();
        let pid = Pid::new(4242).unwrap();
        let cases = [
            ("\"start_ticks\": ", "\"start_ticks\": 0"),       // a leading zero
            ("\"owner_uid\": ", "\"owner_uid\": 99999999999"), // above u32
            ("\"cwd\": \"", "\"cwd\": \"\\u002f"),             // an escape
            ("\"harness\": \"", "\"harness\": \"\t"),          // a control character
            ("\"format\": 1", "\"format\": 3"),                // a newer format
            ("\"format\": 1", "\"format\": 1.0"),              // not an integer
            ("\"pid_ns\": ", "\"pid_ns\": 18446744073709551616"), // above u64 (digits prefixed)
            ("\"pid_ns\": ", "\"pid_ns\": 99999999999999999999"), // far above u64
            ("\"pid_ns\": ", "\"pid_ns\": -"),                 // a sign
        ];
        for (from, to) in cases {
            assert!(bytes.contains(from), "{from}");
            let edited = bytes.replacen(from, to, 1);
            assert_eq!(read_canonical_record(edited.as_bytes()), None, "{to}");
            assert_eq!(
                parse_record_by_serde(edited.as_bytes(), pid),
                crate::record::session_record::parse_record(edited.as_bytes(), pid)
            );
        }
    }
}
