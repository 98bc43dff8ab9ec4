//! The consent marker (format 3; formats 1 and 2 are still read): `consent/<pid>.json`, one session's
//! explicit `armed` or `disarmed`, bound to its owner's identity with the
//! same keys as the record (docs/contract.md §3, §6.4). Parsing is strict, because a
//! marker is believed only when everything in it checks out.

use std::path::Path;

use owner_liveness::{OwnerIdentity, Pid};
use registry_core::{
    ChainMemberRecord, FormatProblem, Timestamp, check_chain, check_session_pid, parse_versioned,
};
use serde::{Deserialize, Serialize};

/// The marker format this roster writes and fully understands. Format 2
/// added `user_ns`, format 3 the owner's `chain`; since unknown keys are
/// refused, an older roster must see a marker that carries them as a newer
/// format, not as a broken one. Format 1 and 2 markers (without them) are
/// read as before: their owner is one process.
pub const MARKER_FORMAT: u64 = 3;

/// The first marker format that may carry `chain`.
pub const CHAIN_MARKER_FORMAT: u64 = 3;

/// What the session said.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MarkerState {
    Armed,
    Disarmed,
}

impl MarkerState {
    pub fn as_str(self) -> &'static str {
        match self {
            MarkerState::Armed => "armed",
            MarkerState::Disarmed => "disarmed",
        }
    }
}

/// A parsed, validated marker. Field names are the file format. Unknown
/// keys are refused: a marker grants consent, so nothing in it may go
/// unread (a newer roster that needs more keys writes a higher format).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Marker {
    pub format: u64,
    pub state: MarkerState,
    pub session_pid: u32,
    pub owner_uid: u32,
    pub start_ticks: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pidfs_ino: Option<u64>,
    pub boot_id: String,
    pub pid_ns: u64,
    pub time_ns: u64,
    /// The user namespace `owner_uid` is expressed in (format 2 on);
    /// absent in format 1 markers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_ns: Option<u64>,
    /// The harness processes below the owner (format 3 on), outermost
    /// first, as in the record: the marker counts while any of them runs,
    /// so consent dies with the whole chain, not with its loader. Absent
    /// for a one-process owner.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chain: Vec<ChainMemberRecord>,
    /// The session's working directory when the marker was written
    /// (information only).
    pub cwd: String,
    /// RFC 3339 UTC with nanoseconds.
    pub written_at: String,
}

/// What a file in `consent/` turned out to be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParsedMarker {
    Marker(Box<Marker>),
    /// Does not parse or breaks a rule; the text says which.
    Malformed(String),
    /// Written by a newer roster (`format` above ours).
    UnsupportedFormat(u64),
}

impl Marker {
    /// A marker for the owner `identity`, written now.
    pub fn new(identity: &OwnerIdentity, state: MarkerState, cwd: &Path, written_at: Timestamp) -> Marker {
        Marker {
            format: MARKER_FORMAT,
            state,
            session_pid: identity.pid.get(),
            owner_uid: identity.uid,
            start_ticks: identity.start_ticks,
            pidfs_ino: identity.pidfs_ino,
            boot_id: identity.boot_id.clone(),
            pid_ns: identity.pid_ns,
            time_ns: identity.time_ns,
            user_ns: identity.user_ns,
            chain: identity.chain.iter().map(ChainMemberRecord::from_member).collect(),
            // Information only, so a non-UTF-8 directory is kept lossy
            // rather than refused.
            cwd: cwd.to_string_lossy().into_owned(),
            written_at: written_at.to_string(),
        }
    }

    pub fn pid(&self) -> Pid {
        Pid::new(self.session_pid).expect("validated non-zero")
    }

    /// The owner identity the verdict checks.
    pub fn identity(&self) -> OwnerIdentity {
        OwnerIdentity {
            pid: self.pid(),
            uid: self.owner_uid,
            start_ticks: self.start_ticks,
            pidfs_ino: self.pidfs_ino,
            boot_id: self.boot_id.clone(),
            pid_ns: self.pid_ns,
            time_ns: self.time_ns,
            user_ns: self.user_ns,
            chain: self.chain.iter().map(ChainMemberRecord::member).collect(),
        }
    }

    pub fn written_at(&self) -> Timestamp {
        Timestamp::parse(&self.written_at).expect("validated")
    }

    /// The file's bytes: pretty JSON and a final newline.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = serde_json::to_vec_pretty(self).expect("a marker always serializes");
        bytes.push(b'\n');
        bytes
    }
}

/// Parses a marker file's bytes strictly, checking the pid against the
/// file name's. Invalid UTF-8, duplicate or unknown keys, a missing key, a
/// wrong type, `format` below 1, a zero pid or one that differs from the
/// file name, a state other than `armed`/`disarmed`, a relative `cwd`, an
/// empty `boot_id` or an unparseable `written_at` are all malformed.
pub fn parse_marker(bytes: &[u8], file_pid: Pid) -> ParsedMarker {
    match parse_versioned::<Marker>(bytes, MARKER_FORMAT) {
        Ok(marker) => match validate(&marker, file_pid) {
            Ok(()) => ParsedMarker::Marker(Box::new(marker)),
            Err(problem) => ParsedMarker::Malformed(problem),
        },
        Err(FormatProblem::Malformed(problem)) => ParsedMarker::Malformed(problem),
        Err(FormatProblem::Unsupported(format)) => ParsedMarker::UnsupportedFormat(format),
    }
}

fn validate(marker: &Marker, file_pid: Pid) -> Result<(), String> {
    check_session_pid(marker.session_pid, file_pid)?;
    if !marker.chain.is_empty() && marker.format < CHAIN_MARKER_FORMAT {
        return Err(format!("chain in a format {} marker; it came with format 3", marker.format));
    }
    check_chain(marker.session_pid, &marker.chain)?;
    if marker.boot_id.is_empty() {
        return Err("boot_id is empty".into());
    }
    if !Path::new(&marker.cwd).is_absolute() {
        return Err(format!("cwd {:?} is not an absolute path", marker.cwd));
    }
    if Timestamp::parse(&marker.written_at).is_none() {
        return Err(format!("written_at {:?} is not an RFC 3339 time", marker.written_at));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Marker {
        Marker {
            format: 3,
            state: MarkerState::Armed,
            session_pid: 4242,
            owner_uid: 1000,
            start_ticks: 870,
            pidfs_ino: Some(12345),
            boot_id: "0f0e0d0c-0b0a-0908-0706-050403020100".into(),
            pid_ns: 4026531836,
            time_ns: 4026531834,
            user_ns: Some(4026531837),
            chain: vec![ChainMemberRecord {
                pid: 4250,
                start_ticks: 871,
                pidfs_ino: Some(12346),
                owner_uid: 1000,
            }],
            cwd: "/home/dev/src/app".into(),
            written_at: "2026-11-30T02:03:05.123456789Z".into(),
        }
    }

    fn pid(raw: u32) -> Pid {
        Pid::new(raw).unwrap()
    }

    fn with(edit: impl FnOnce(&mut serde_json::Map<String, serde_json::Value>)) -> String {
        let mut value = serde_json::to_value(sample()).unwrap();
        edit(value.as_object_mut().unwrap());
        value.to_string()
    }

    fn check_malformed(text: &str) {
        let parsed = parse_marker(text.as_bytes(), pid(4242));
        assert!(matches!(parsed, ParsedMarker::Malformed(_)), "{text:?} gave {parsed:?}");
    }

    #[test]
    fn the_file_format_is_stable() {
        let text = String::from_utf8(sample().to_bytes()).unwrap();
        let keys: Vec<&str> = text.lines().filter_map(|line| line.trim().split('"').nth(1)).collect();
        assert_eq!(
            keys,
            [
                "format",
                "state",
                "session_pid",
                "owner_uid",
                "start_ticks",
                "pidfs_ino",
                "boot_id",
                "pid_ns",
                "time_ns",
                "user_ns",
                "chain",
                "pid",
                "start_ticks",
                "pidfs_ino",
                "owner_uid",
                "cwd",
                "written_at"
            ]
        );
        assert!(text.contains("\"state\": \"armed\""), "{text}");
    }

    #[test]
    fn a_written_marker_parses_back() {
        let marker = sample();
        assert_eq!(parse_marker(&marker.to_bytes(), pid(4242)), ParsedMarker::Marker(Box::new(marker)));
        let without_pidfs = Marker { pidfs_ino: None, state: MarkerState::Disarmed, ..sample() };
        assert_eq!(
            parse_marker(&without_pidfs.to_bytes(), pid(4242)),
            ParsedMarker::Marker(Box::new(without_pidfs))
        );
    }

    #[test]
    fn rule_breakers_are_malformed() {
        for text in ["", "{}", "[1]", "{\"format\": 1", "null", "{\"format\": \"1\"}", "{\"format\": -1}"] {
            check_malformed(text);
        }
        check_malformed(&with(|map| {
            map.insert("format".into(), 0.into());
        }));
        check_malformed(&with(|map| {
            map.insert("state".into(), "maybe".into());
        }));
        check_malformed(&with(|map| {
            map.insert("state".into(), "ARMED".into());
        }));
        check_malformed(&with(|map| {
            map.remove("state");
        }));
        check_malformed(&with(|map| {
            map.remove("boot_id");
        }));
        check_malformed(&with(|map| {
            map.insert("boot_id".into(), "".into());
        }));
        check_malformed(&with(|map| {
            map.insert("session_pid".into(), 4243.into());
        }));
        check_malformed(&with(|map| {
            map.insert("session_pid".into(), 0.into());
        }));
        check_malformed(&with(|map| {
            map.insert("start_ticks".into(), (-5).into());
        }));
        check_malformed(&with(|map| {
            map.insert("cwd".into(), "relative".into());
        }));
        check_malformed(&with(|map| {
            map.insert("written_at".into(), "now".into());
        }));
        check_malformed(&with(|map| {
            map.insert("trusted".into(), true.into());
        }));
        let duplicated = String::from_utf8(sample().to_bytes()).unwrap().replacen(
            "\"format\": 3,",
            "\"format\": 3, \"state\": \"armed\",",
            1,
        );
        check_malformed(&duplicated);
        let mut invalid_utf8 = sample().to_bytes();
        let position = invalid_utf8.iter().position(|&byte| byte == b'h').unwrap();
        invalid_utf8[position] = 0xff;
        assert!(matches!(parse_marker(&invalid_utf8, pid(4242)), ParsedMarker::Malformed(_)));
    }

    #[test]
    fn newer_formats_are_unsupported_not_malformed() {
        assert_eq!(
            parse_marker(br#"{"format": 4, "anything": true}"#, pid(4242)),
            ParsedMarker::UnsupportedFormat(4)
        );
    }

    #[test]
    fn format_2_markers_without_a_chain_are_still_read_and_may_not_carry_one() {
        let format_2 = Marker { format: 2, chain: Vec::new(), ..sample() };
        let text = String::from_utf8(format_2.to_bytes()).unwrap();
        assert!(!text.contains("chain"), "{text}");
        assert_eq!(parse_marker(text.as_bytes(), pid(4242)), ParsedMarker::Marker(Box::new(format_2)));
        // A chain in a format that predates it was not written by roster.
        let text = String::from_utf8(Marker { format: 2, ..sample() }.to_bytes()).unwrap();
        check_malformed(&text);
    }

    #[test]
    fn a_chain_of_bad_pids_is_malformed() {
        let member = |pid| ChainMemberRecord { pid, start_ticks: 1, pidfs_ino: None, owner_uid: 1000 };
        for chain in [
            vec![member(0)],
            vec![member(4242)],
            vec![member(7), member(7)],
            vec![member(7), member(8), member(9), member(10)],
        ] {
            check_malformed(&String::from_utf8(Marker { chain, ..sample() }.to_bytes()).unwrap());
        }
        check_malformed(&with(|map| {
            map.insert(
                "chain".into(),
                serde_json::json!([{"pid": 7, "start_ticks": 1, "owner_uid": 0, "x": 1}]),
            );
        }));
        let three = Marker { chain: vec![member(7), member(8), member(9)], ..sample() };
        assert_eq!(parse_marker(&three.to_bytes(), pid(4242)), ParsedMarker::Marker(Box::new(three)));
    }

    #[test]
    fn format_1_markers_without_a_user_namespace_are_still_read() {
        let format_1 = Marker { format: 1, user_ns: None, chain: Vec::new(), ..sample() };
        let text = String::from_utf8(format_1.to_bytes()).unwrap();
        assert!(!text.contains("user_ns"), "{text}");
        assert_eq!(parse_marker(text.as_bytes(), pid(4242)), ParsedMarker::Marker(Box::new(format_1)));
    }

    proptest::proptest! {
        #[test]
        fn serialize_then_parse_round_trips(
            pid_raw in 1u32..4_194_304,
            armed in proptest::bool::ANY,
            ticks in proptest::num::u64::ANY,
            pidfs in proptest::option::of(proptest::num::u64::ANY),
            cwd in "/[^\\x00]{0,60}",
            nanos in 0i128..4_102_444_800_000_000_000,
        ) {
            let marker = Marker {
                session_pid: pid_raw,
                state: if armed { MarkerState::Armed } else { MarkerState::Disarmed },
                start_ticks: ticks,
                pidfs_ino: pidfs,
                cwd,
                written_at: Timestamp::from_unix_nanos(nanos).to_string(),
                // The sample's member, moved off the owner's pid.
                chain: vec![ChainMemberRecord { pid: if pid_raw == 4250 { 4251 } else { 4250 }, ..sample().chain[0] }],
                ..sample()
            };
            let parsed = parse_marker(&marker.to_bytes(), Pid::new(pid_raw).unwrap());
            proptest::prop_assert_eq!(parsed, ParsedMarker::Marker(Box::new(marker)));
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..300)) {
            let _ = parse_marker(&bytes, Pid::new(1).unwrap());
        }
    }
}
