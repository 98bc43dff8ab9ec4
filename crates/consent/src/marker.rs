//! The consent marker (format 4; formats 1 to 3 are still read): `consent/<pid>@<world>.json`
//! (`RecordName`, an older roster's `<pid>.json` still read), one session's
//! explicit `armed` or `disarmed`, bound to its owner's identity with the
//! same keys as the record (docs/contract.md §3, §6.4). Parsing is strict, because a
//! marker is believed only when everything in it checks out.

use std::path::Path;

use owner_liveness::{OwnerIdentity, Pid};
use registry_core::record::{
    Field, FieldError, FieldProblem, FormatProblem, KeyName, Malformed, OwnerKeys, UncheckedOwner, Versioned,
    parse_versioned, read_once, required,
};
use registry_core::{RecordedOwner, RecordedTime, Timestamp};
use serde::de::{self, MapAccess};
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize};

/// The marker format this roster writes and fully understands. Format 2
/// added `user_ns`, format 3 the owner's `chain`; since unknown keys are
/// refused, an older roster must see a marker that carries them as a newer
/// format, not as a broken one. Format 1 and 2 markers (without them) are
/// read as before: their owner is one process. Format 4 added `machine`
/// (and start ticks on the initial time namespace's clock with it).
pub const MARKER_FORMAT: u64 = 4;

/// The first marker format that may carry `chain`.
pub const CHAIN_MARKER_FORMAT: u64 = 3;

/// The first marker format that may carry `machine`.
pub const MACHINE_MARKER_FORMAT: u64 = 4;

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

/// A parsed, validated marker. Serialized in the file's key order by hand,
/// the owner's keys by `RecordedOwner`. Unknown keys are refused: a marker
/// grants consent, so nothing in it may go unread (a newer roster that
/// needs more keys writes a higher format).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Marker {
    pub format: u64,
    pub state: MarkerState,
    /// `session_pid`, `owner_uid` … `user_ns` and (format 3 on) `chain`:
    /// the marker counts while any process of the chain runs, so consent
    /// dies with the whole chain, not with its loader.
    pub owner: RecordedOwner,
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
    /// Does not parse or breaks a rule; the value says which.
    Malformed(Malformed),
    /// Written by a newer roster (`format` above ours).
    UnsupportedFormat(u64),
}

impl Marker {
    /// A marker for the owner `identity`, written now.
    pub fn new(identity: &OwnerIdentity, state: MarkerState, cwd: &Path, written_at: Timestamp) -> Marker {
        Marker {
            format: MARKER_FORMAT,
            state,
            owner: RecordedOwner::from(identity),
            // Information only, so a non-UTF-8 directory is kept lossy
            // rather than refused.
            cwd: cwd.to_string_lossy().into_owned(),
            written_at: written_at.to_string(),
        }
    }

    pub fn pid(&self) -> Pid {
        self.owner.pid
    }

    /// The owner identity the verdict checks.
    pub fn identity(&self) -> OwnerIdentity {
        self.owner.identity()
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

impl Serialize for Marker {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("format", &self.format)?;
        map.serialize_entry("state", &self.state)?;
        self.owner.write_pid(&mut map)?;
        self.owner.write_identity(&mut map)?;
        self.owner.write_chain(&mut map)?;
        map.serialize_entry("cwd", &self.cwd)?;
        map.serialize_entry("written_at", &self.written_at)?;
        map.end()
    }
}

/// Parses a marker file's bytes strictly, checking the pid against the
/// file name's. Invalid UTF-8, duplicate or unknown keys, a missing key, a
/// wrong type, `format` below 1, a zero pid or one that differs from the
/// file name, a state other than `armed`/`disarmed`, a relative `cwd`, an
/// empty `boot_id` or an unparseable `written_at` are all malformed.
pub fn parse_marker(bytes: &[u8], file_pid: Pid) -> ParsedMarker {
    match parse_versioned::<MarkerKeys>(bytes, MARKER_FORMAT) {
        Ok(keys) => match keys.check(file_pid) {
            Ok(marker) => ParsedMarker::Marker(Box::new(marker)),
            Err(problem) => ParsedMarker::Malformed(Malformed::Field(problem)),
        },
        Err(FormatProblem::Malformed(problem)) => ParsedMarker::Malformed(problem),
        Err(FormatProblem::Unsupported(format)) => ParsedMarker::UnsupportedFormat(format),
    }
}

/// A marker's keys as read, before the rules of their values were checked.
struct MarkerKeys {
    format: u64,
    state: MarkerState,
    owner: UncheckedOwner,
    cwd: String,
    written_at: String,
}

impl Versioned for MarkerKeys {
    fn format(&self) -> u64 {
        self.format
    }
}

impl MarkerKeys {
    /// The marker, once every rule holds, checked in the order whose first
    /// failure status reports.
    fn check(self, file_pid: Pid) -> Result<Marker, FieldError> {
        self.owner.check_pid(file_pid)?;
        if !self.owner.chain.is_empty() && self.format < CHAIN_MARKER_FORMAT {
            return Err(FieldError::new(Field::Chain, FieldProblem::BeforeItsFormat { format: self.format }));
        }
        if self.owner.machine.is_some() && self.format < MACHINE_MARKER_FORMAT {
            return Err(FieldError::new(
                Field::Machine,
                FieldProblem::BeforeItsFormat { format: self.format },
            ));
        }
        let owner = self.owner.check(file_pid)?;
        if !Path::new(&self.cwd).is_absolute() {
            return Err(FieldError::new(Field::Cwd, FieldProblem::NotAbsolute { value: self.cwd }));
        }
        RecordedTime::parse(Field::WrittenAt, &self.written_at)?;
        Ok(Marker {
            format: self.format,
            state: self.state,
            owner,
            cwd: self.cwd,
            written_at: self.written_at,
        })
    }
}

impl<'de> Deserialize<'de> for MarkerKeys {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<MarkerKeys, D::Error> {
        deserializer.deserialize_map(MarkerVisitor)
    }
}

/// Reads a marker's keys as serde's derived reader did, refusing a key
/// given twice, a missing one and an unknown one by name.
struct MarkerVisitor;

impl<'de> de::Visitor<'de> for MarkerVisitor {
    type Value = MarkerKeys;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("struct Marker")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<MarkerKeys, A::Error> {
        let mut owner = OwnerKeys::default();
        let (mut format, mut state, mut cwd, mut written_at) = (None, None, None, None);
        while let Some(key) = map.next_key::<KeyName<'de>>()? {
            match key.as_str() {
                "format" => read_once(&mut format, "format", &mut map)?,
                "state" => read_once(&mut state, "state", &mut map)?,
                "cwd" => read_once(&mut cwd, "cwd", &mut map)?,
                "written_at" => read_once(&mut written_at, "written_at", &mut map)?,
                other => {
                    if !owner.read(other, &mut map)? {
                        return Err(unknown_key(other));
                    }
                }
            }
        }
        // Missing keys are named in the file's order, as serde did.
        let format = required(format, "format")?;
        let state = required(state, "state")?;
        let owner = owner.finish()?;
        Ok(MarkerKeys {
            format,
            state,
            owner,
            cwd: required(cwd, "cwd")?,
            written_at: required(written_at, "written_at")?,
        })
    }
}

/// serde's words for an unknown key, naming every key a marker has.
fn unknown_key<E: de::Error>(key: &str) -> E {
    let keys: Vec<String> = ["format", "state"]
        .iter()
        .chain(OwnerKeys::KEYS.iter())
        .chain(["cwd", "written_at"].iter())
        .map(|key| format!("`{key}`"))
        .collect();
    E::custom(format_args!("unknown field `{key}`, expected one of {}", keys.join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use owner_liveness::ChainMember;
    use registry_core::record::ChainMemberRecord;

    fn sample() -> Marker {
        let identity = OwnerIdentity {
            pid: pid(4242),
            uid: 1000,
            start_ticks: 870,
            pidfs_ino: Some(12345),
            boot_id: "0f0e0d0c-0b0a-0908-0706-050403020100".into(),
            pid_ns: 4026531836,
            time_ns: 4026531834,
            user_ns: Some(4026531837),
            machine: Some("machine-id:3d1219c7c4c5404aaa1f6d2a48adfda4".into()),
            chain: vec![ChainMember { pid: pid(4250), start_ticks: 871, pidfs_ino: Some(12346), uid: 1000 }],
        };
        Marker {
            format: 4,
            state: MarkerState::Armed,
            owner: RecordedOwner::from(&identity),
            cwd: "/home/dev/src/app".into(),
            written_at: "2026-11-30T02:03:05.123456789Z".into(),
        }
    }

    /// `sample()` with its owner changed by `edit`.
    fn sample_with(edit: impl FnOnce(&mut Marker)) -> Marker {
        let mut marker = sample();
        edit(&mut marker);
        marker
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
                "machine",
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
        let without_pidfs = sample_with(|marker| {
            marker.owner.pidfs_ino = None;
            marker.state = MarkerState::Disarmed;
        });
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
            "\"format\": 4,",
            "\"format\": 4, \"state\": \"armed\",",
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
            parse_marker(br#"{"format": 5, "anything": true}"#, pid(4242)),
            ParsedMarker::UnsupportedFormat(5)
        );
    }

    #[test]
    fn format_2_markers_without_a_chain_are_still_read_and_may_not_carry_one() {
        let format_2 = sample_with(|marker| {
            marker.format = 2;
            marker.owner.machine = None;
            marker.owner.chain = Vec::new();
        });
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
            check_malformed(
                &String::from_utf8(sample_with(|marker| marker.owner.chain = chain).to_bytes()).unwrap(),
            );
        }
        check_malformed(&with(|map| {
            map.insert(
                "chain".into(),
                serde_json::json!([{"pid": 7, "start_ticks": 1, "owner_uid": 0, "x": 1}]),
            );
        }));
        let three = sample_with(|marker| marker.owner.chain = vec![member(7), member(8), member(9)]);
        assert_eq!(parse_marker(&three.to_bytes(), pid(4242)), ParsedMarker::Marker(Box::new(three)));
    }

    #[test]
    fn format_1_markers_without_a_user_namespace_are_still_read() {
        let format_1 = sample_with(|marker| {
            marker.format = 1;
            marker.owner.user_ns = None;
            marker.owner.machine = None;
            marker.owner.chain = Vec::new();
        });
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
            let marker = sample_with(|marker| {
                marker.owner.pid = Pid::new(pid_raw).unwrap();
                marker.state = if armed { MarkerState::Armed } else { MarkerState::Disarmed };
                marker.owner.start_ticks = registry_core::StartTicks(ticks);
                marker.owner.pidfs_ino = pidfs;
                marker.cwd = cwd;
                marker.written_at = Timestamp::from_unix_nanos(nanos).to_string();
                // The sample's member, moved off the owner's pid.
                let member = marker.owner.chain[0];
                marker.owner.chain = vec![ChainMemberRecord { pid: if pid_raw == 4250 { 4251 } else { 4250 }, ..member }];
            });
            let parsed = parse_marker(&marker.to_bytes(), Pid::new(pid_raw).unwrap());
            proptest::prop_assert_eq!(parsed, ParsedMarker::Marker(Box::new(marker)));
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..300)) {
            let _ = parse_marker(&bytes, Pid::new(1).unwrap());
        }
    }
}
