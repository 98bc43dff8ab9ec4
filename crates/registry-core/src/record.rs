//! The record (docs/contract.md §3, format 1): one session's file in `sessions/`, its
//! validated field types, strict parsing into `Parsed` outcomes and the
//! serialization that round-trips.

use std::path::{Path, PathBuf};

use owner_liveness::{ChainMember, MAX_CHAIN_MEMBERS, OwnerIdentity, Pid, SocketIdentity};
use serde::{Deserialize, Serialize};

use crate::timestamp::Timestamp;

/// The record format this roster writes and fully understands.
pub const RECORD_FORMAT: u64 = 1;

/// The longest value each string field of a record may hold. Register
/// refuses (or, in hook mode, drops) a longer value and list calls a record
/// carrying one malformed. The limits are sized so that a record with every
/// field at its limit, every byte one that JSON escapes to six (`\u0001`),
/// still fits in `MAX_ENTRY_BYTES`: a record register writes is always one
/// list trusts.
pub const FIELD_LIMITS: [FieldLimit; 9] = [
    CWD_LIMIT,
    TRANSCRIPT_PATH_LIMIT,
    SOCKET_PATH_LIMIT,
    HARNESS_VERSION_LIMIT,
    SESSION_ID_LIMIT,
    AGENT_NAME_LIMIT,
    HARNESS_LIMIT,
    SESSION_PID_SOURCE_LIMIT,
    BOOT_ID_LIMIT,
];

/// `cwd`: `PATH_MAX`, the longest path the kernel resolves.
pub const CWD_LIMIT: FieldLimit = FieldLimit::bytes("cwd", 4096);
/// `transcript_path`: `PATH_MAX`, like `cwd`.
pub const TRANSCRIPT_PATH_LIMIT: FieldLimit = FieldLimit::bytes("transcript_path", 4096);
/// `socket.path`: the size of a unix socket address (`sun_path`); a longer
/// path cannot be connected to, so it names no messaging socket.
pub const SOCKET_PATH_LIMIT: FieldLimit = FieldLimit::bytes("socket.path", 108);
/// `harness_version`: far above any version a harness prints.
pub const HARNESS_VERSION_LIMIT: FieldLimit = FieldLimit::bytes("harness_version", 128);
/// `session_id` (see `SessionId`).
pub const SESSION_ID_LIMIT: FieldLimit = FieldLimit::bytes("session_id", 128);
/// `agent`, in characters (see `AgentName`): at most 256 bytes.
pub const AGENT_NAME_LIMIT: FieldLimit = FieldLimit::characters("agent", 64);
/// `harness`: the longest harness name is 12 bytes.
pub const HARNESS_LIMIT: FieldLimit = FieldLimit::bytes("harness", 32);
/// `session_pid_source`: the longest source is 18 bytes.
pub const SESSION_PID_SOURCE_LIMIT: FieldLimit = FieldLimit::bytes("session_pid_source", 32);
/// `boot_id`: the kernel's boot id is a 36-byte UUID.
pub const BOOT_ID_LIMIT: FieldLimit = FieldLimit::bytes("boot_id", 64);

/// The longest value a record field may hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldLimit {
    /// The record key (`socket.path` for the socket object's path);
    /// messages spell it with spaces for underscores.
    pub field: &'static str,
    pub max: usize,
    pub unit: LengthUnit,
}

/// What a `FieldLimit` counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LengthUnit {
    /// Bytes of UTF-8.
    Bytes,
    /// Unicode scalar values (each at most 4 bytes).
    Characters,
}

impl FieldLimit {
    const fn bytes(field: &'static str, max: usize) -> FieldLimit {
        FieldLimit { field, max, unit: LengthUnit::Bytes }
    }

    const fn characters(field: &'static str, max: usize) -> FieldLimit {
        FieldLimit { field, max, unit: LengthUnit::Characters }
    }

    /// The length of `value` in this limit's unit.
    pub fn length_of(&self, value: &str) -> usize {
        match self.unit {
            LengthUnit::Bytes => value.len(),
            LengthUnit::Characters => value.chars().count(),
        }
    }

    /// The unit's name, plural: `bytes` or `characters`.
    pub fn unit_name(&self) -> &'static str {
        match self.unit {
            LengthUnit::Bytes => "bytes",
            LengthUnit::Characters => "characters",
        }
    }

    /// `Err` naming the field, the length and the limit when `value` is
    /// over it. Never quotes the value: it may be a megabyte long.
    pub fn check(&self, value: &str) -> Result<(), String> {
        let length = self.length_of(value);
        if length > self.max {
            return Err(format!(
                "{} is {length} {unit} long, over its limit of {} {unit}",
                self.field.replace('_', " "),
                self.max,
                unit = self.unit_name()
            ));
        }
        Ok(())
    }
}

/// A session id: 1–128 printable ASCII characters, no `/`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionId(String);

impl SessionId {
    pub fn parse(text: &str) -> Result<SessionId, String> {
        SESSION_ID_LIMIT.check(text)?;
        if text.is_empty() {
            return Err("session id is empty; it must be 1 to 128 characters long".into());
        }
        if let Some(bad) =
            text.chars().find(|character| !(' '..='~').contains(character) || *character == '/')
        {
            return Err(format!(
                "session id {text:?} contains {bad:?}; only printable ASCII without '/' is allowed"
            ));
        }
        Ok(SessionId(text.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// An agent name: 1–64 characters, no control characters, no leading or
/// trailing white space.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AgentName(String);

impl AgentName {
    pub fn parse(text: &str) -> Result<AgentName, String> {
        AGENT_NAME_LIMIT.check(text)?;
        if text.is_empty() {
            return Err("agent name is empty; it must be 1 to 64 characters long".into());
        }
        if text.chars().any(char::is_control) {
            return Err(format!("agent name {text:?} contains a control character"));
        }
        if text.starts_with(char::is_whitespace) || text.ends_with(char::is_whitespace) {
            return Err(format!("agent name {text:?} starts or ends with white space"));
        }
        Ok(AgentName(text.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The record's `socket` object.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SocketRecord {
    pub path: String,
    pub dev: u64,
    pub ino: u64,
    pub mtime_ns: i64,
}

/// One entry of a record's `chain`: a harness process below the owner,
/// with its own identity (docs/contract.md §5). Boot id and namespaces are
/// the record's. Shared with consent markers, which bind to the same chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChainMemberRecord {
    pub pid: u32,
    pub start_ticks: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pidfs_ino: Option<u64>,
    pub owner_uid: u32,
}

impl ChainMemberRecord {
    pub fn from_member(member: &ChainMember) -> ChainMemberRecord {
        ChainMemberRecord {
            pid: member.pid.get(),
            start_ticks: member.start_ticks,
            pidfs_ino: member.pidfs_ino,
            owner_uid: member.uid,
        }
    }

    /// The member as the verdict checks it; the pid was validated non-zero.
    pub fn member(&self) -> ChainMember {
        ChainMember {
            pid: Pid::new(self.pid).expect("validated non-zero"),
            uid: self.owner_uid,
            start_ticks: self.start_ticks,
            pidfs_ino: self.pidfs_ino,
        }
    }
}

/// A `chain` must name distinct non-zero pids other than the owner's, at
/// most `MAX_CHAIN_MEMBERS - 1` of them.
pub fn check_chain(session_pid: u32, chain: &[ChainMemberRecord]) -> Result<(), String> {
    if chain.len() >= MAX_CHAIN_MEMBERS {
        return Err(format!(
            "chain has {} members besides the owner; at most {} are recorded",
            chain.len(),
            MAX_CHAIN_MEMBERS - 1
        ));
    }
    for (index, member) in chain.iter().enumerate() {
        if member.pid == 0 {
            return Err("chain names pid 0".into());
        }
        if member.pid == session_pid || chain[..index].iter().any(|other| other.pid == member.pid) {
            return Err(format!("chain names pid {} twice", member.pid));
        }
    }
    Ok(())
}

/// A parsed, validated record. Field names are the file format.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    pub format: u64,
    pub session_pid: u32,
    pub session_pid_source: String,
    pub session_pid_verified: bool,
    pub owner_uid: u32,
    pub start_ticks: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pidfs_ino: Option<u64>,
    pub boot_id: String,
    pub pid_ns: u64,
    pub time_ns: u64,
    /// The user namespace `owner_uid` is expressed in; absent in records
    /// written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_ns: Option<u64>,
    pub harness: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harness_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript_path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub socket: Option<SocketRecord>,
    /// The harness processes below the owner in its chain, outermost
    /// first, innermost last; absent for a one-process owner and in
    /// records written before chains were recorded (both mean: the owner
    /// alone).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub chain: Vec<ChainMemberRecord>,
    pub cwd: String,
    pub registrar_pid: u32,
    pub registered_at: String,
    pub refreshed_at: String,
}

/// What a file in `sessions/` turned out to be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Parsed {
    Record(Box<Record>),
    /// Does not parse or breaks a rule; the text says which.
    Malformed(String),
    /// Written by a newer roster (`format` above ours).
    UnsupportedFormat(u64),
}

#[derive(Deserialize)]
struct FormatOnly {
    format: Option<serde_json::Value>,
}

/// The valid record file name for a pid: canonical decimal plus `.json`.
pub fn record_file_name(pid: Pid) -> String {
    format!("{pid}.json")
}

/// The pid a file name stands for, when the name is canonical.
pub fn pid_of_file_name(name: &str) -> Option<Pid> {
    let digits = name.strip_suffix(".json")?;
    Pid::parse_canonical(digits, u32::MAX).ok()
}

/// Why a roster file's bytes are not a value of the format this roster
/// understands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FormatProblem {
    Malformed(String),
    /// Written by a newer roster (`format` above ours).
    Unsupported(u64),
}

/// The first step of parsing every roster file (records, consent markers):
/// UTF-8, a JSON object, a `format` key between 1 and `supported`, then a
/// strict parse into `T` (serde refuses duplicate keys and wrong types).
pub fn parse_versioned<T: serde::de::DeserializeOwned>(
    bytes: &[u8],
    supported: u64,
) -> Result<T, FormatProblem> {
    let text = std::str::from_utf8(bytes)
        .map_err(|error| FormatProblem::Malformed(format!("not UTF-8: {error}")))?;
    let format = match serde_json::from_str::<FormatOnly>(text) {
        Ok(FormatOnly { format: Some(value) }) => value,
        Ok(FormatOnly { format: None }) => return Err(FormatProblem::Malformed("no \"format\" key".into())),
        Err(error) => return Err(FormatProblem::Malformed(format!("not a JSON object: {error}"))),
    };
    let Some(format) = format.as_u64() else {
        return Err(FormatProblem::Malformed(format!("\"format\" is {format}, not a positive integer")));
    };
    if format > supported {
        return Err(FormatProblem::Unsupported(format));
    }
    if format < 1 {
        return Err(FormatProblem::Malformed(format!("\"format\" is {format}; the lowest format is 1")));
    }
    serde_json::from_str(text).map_err(|error| FormatProblem::Malformed(error.to_string()))
}

/// A file's `session_pid` must be non-zero and equal the pid in its name.
pub fn check_session_pid(session_pid: u32, file_pid: Pid) -> Result<(), String> {
    if session_pid == 0 {
        return Err("session_pid is 0".into());
    }
    if session_pid != file_pid.get() {
        return Err(format!("session_pid {session_pid} does not match the file name {file_pid}.json"));
    }
    Ok(())
}

/// Parses a record file's bytes strictly (docs/contract.md §3), checking the pid
/// against the file name's.
pub fn parse_record(bytes: &[u8], file_pid: Pid) -> Parsed {
    match parse_versioned::<Record>(bytes, RECORD_FORMAT) {
        Ok(record) => match validate(&record, file_pid) {
            Ok(()) => Parsed::Record(Box::new(record)),
            Err(problem) => Parsed::Malformed(problem),
        },
        Err(FormatProblem::Malformed(problem)) => Parsed::Malformed(problem),
        Err(FormatProblem::Unsupported(format)) => Parsed::UnsupportedFormat(format),
    }
}

fn validate(record: &Record, file_pid: Pid) -> Result<(), String> {
    check_session_pid(record.session_pid, file_pid)?;
    check_chain(record.session_pid, &record.chain)?;
    if Timestamp::parse(&record.registered_at).is_none() {
        return Err(format!("registered_at {:?} is not an RFC 3339 time", record.registered_at));
    }
    if Timestamp::parse(&record.refreshed_at).is_none() {
        return Err(format!("refreshed_at {:?} is not an RFC 3339 time", record.refreshed_at));
    }
    if !Path::new(&record.cwd).is_absolute() {
        return Err(format!("cwd {:?} is not an absolute path", record.cwd));
    }
    if record.boot_id.is_empty() {
        return Err("boot_id is empty".into());
    }
    check_field_limits(record)?;
    if let Some(session_id) = &record.session_id {
        SessionId::parse(session_id)?;
    }
    if let Some(agent) = &record.agent {
        AgentName::parse(agent)?;
    }
    Ok(())
}

/// Every string field of `record` against its `FieldLimit`; the first one
/// over its limit is the error.
pub fn check_field_limits(record: &Record) -> Result<(), String> {
    fn optional(value: &Option<String>) -> &str {
        value.as_deref().unwrap_or_default()
    }
    let fields: [(FieldLimit, &str); 9] = [
        (CWD_LIMIT, &record.cwd),
        (TRANSCRIPT_PATH_LIMIT, optional(&record.transcript_path)),
        (SOCKET_PATH_LIMIT, record.socket.as_ref().map_or("", |socket| socket.path.as_str())),
        (HARNESS_VERSION_LIMIT, optional(&record.harness_version)),
        (SESSION_ID_LIMIT, optional(&record.session_id)),
        (AGENT_NAME_LIMIT, optional(&record.agent)),
        (HARNESS_LIMIT, &record.harness),
        (SESSION_PID_SOURCE_LIMIT, &record.session_pid_source),
        (BOOT_ID_LIMIT, &record.boot_id),
    ];
    fields.iter().try_for_each(|(limit, value)| limit.check(value))
}

impl Record {
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

    pub fn socket_identity(&self) -> Option<SocketIdentity> {
        self.socket.as_ref().map(|socket| SocketIdentity {
            path: PathBuf::from(&socket.path),
            dev: socket.dev,
            ino: socket.ino,
            mtime_ns: i128::from(socket.mtime_ns),
        })
    }

    pub fn registered_at(&self) -> Timestamp {
        Timestamp::parse(&self.registered_at).expect("validated")
    }

    /// The file's bytes: pretty JSON and a final newline, for people who
    /// `cat` it.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = serde_json::to_vec_pretty(self).expect("a record always serializes");
        bytes.push(b'\n');
        bytes
    }
}

/// Whether a registration's `identity` is the owner `recorded` (a refresh,
/// not a new owner): the same outermost process. The chain below it may
/// differ from the recorded one (a member exited, a relaunch added one)
/// and the session is still the same; the refresh records the chain seen
/// now.
pub fn same_owner(recorded: &Record, identity: &OwnerIdentity) -> bool {
    recorded.boot_id == identity.boot_id
        && recorded.pid_ns == identity.pid_ns
        && recorded.time_ns == identity.time_ns
        && same_process(recorded, &recorded.identity().outermost(), identity, &identity.outermost())
}

/// Whether a registration's owner is one of the recorded chain's members
/// below its owner: the same session, found again after its outer
/// processes exited (Copilot's native process, its loader killed,
/// registering once more). Register then refreshes the recorded session
/// instead of starting a second one.
pub fn continues_chain(recorded: &Record, identity: &OwnerIdentity) -> bool {
    recorded.boot_id == identity.boot_id
        && recorded.pid_ns == identity.pid_ns
        && recorded.time_ns == identity.time_ns
        && recorded
            .chain
            .iter()
            .any(|member| same_process(recorded, &member.member(), identity, &identity.outermost()))
}

/// Whether a recorded member and a captured one are the same process, in
/// frames already known to agree (boot, pid and time namespaces).
fn same_process(
    recorded: &Record,
    recorded_member: &ChainMember,
    identity: &OwnerIdentity,
    member: &ChainMember,
) -> bool {
    let pidfs_agrees = match (recorded_member.pidfs_ino, member.pidfs_ino) {
        (Some(a), Some(b)) => a == b,
        _ => true,
    };
    // A uid means something only beside another from the same user
    // namespace; a sandboxed registrar sees the owner's uid translated.
    let uid_agrees = match (recorded.user_ns, identity.user_ns) {
        (Some(a), Some(b)) if a != b => true,
        _ => recorded_member.uid == member.uid,
    };
    recorded_member.pid == member.pid
        && recorded_member.start_ticks == member.start_ticks
        && uid_agrees
        && pidfs_agrees
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Record {
        Record {
            format: 1,
            session_pid: 4242,
            session_pid_source: "ancestor".into(),
            session_pid_verified: true,
            owner_uid: 1000,
            start_ticks: 870,
            pidfs_ino: Some(12345),
            boot_id: "0f0e0d0c-0b0a-0908-0706-050403020100".into(),
            pid_ns: 4026531836,
            time_ns: 4026531834,
            user_ns: Some(4026531837),
            harness: "claude-code".into(),
            harness_version: Some("2.1.328".into()),
            agent: Some("wren".into()),
            session_id: Some("7c660e54-2e19-4577-b46a-16f46484eaf4".into()),
            transcript_path: None,
            socket: None,
            chain: Vec::new(),
            cwd: "/home/dev/src/app".into(),
            registrar_pid: 4300,
            registered_at: "2026-11-30T02:03:05.123456789Z".into(),
            refreshed_at: "2026-11-30T02:03:05.123456789Z".into(),
        }
    }

    fn pid(raw: u32) -> Pid {
        Pid::new(raw).unwrap()
    }

    #[test]
    fn a_written_record_parses_back() {
        let record = sample();
        assert_eq!(parse_record(&record.to_bytes(), pid(4242)), Parsed::Record(Box::new(record)));
    }

    fn malformed(text: &str) -> bool {
        matches!(parse_record(text.as_bytes(), pid(4242)), Parsed::Malformed(_))
    }

    fn with(edit: impl FnOnce(&mut serde_json::Map<String, serde_json::Value>)) -> String {
        let mut value = serde_json::to_value(sample()).unwrap();
        edit(value.as_object_mut().unwrap());
        value.to_string()
    }

    #[test]
    fn rule_breakers_are_malformed() {
        assert!(malformed("{}"));
        assert!(malformed(""));
        assert!(malformed("[1,2]"));
        assert!(malformed("{\"format\": 1"));
        assert!(malformed(&with(|map| {
            map.remove("boot_id");
        })));
        assert!(malformed(&with(|map| {
            map.insert("session_pid".into(), 4243.into());
        })));
        assert!(malformed(&with(|map| {
            map.insert("session_pid".into(), (-1).into());
        })));
        assert!(malformed(&with(|map| {
            map.insert("session_pid".into(), "4242".into());
        })));
        assert!(malformed(&with(|map| {
            map.insert("registered_at".into(), "yesterday".into());
        })));
        assert!(malformed(&with(|map| {
            map.insert("format".into(), 0.into());
        })));
        assert!(malformed(&with(|map| {
            map.remove("format");
        })));
        assert!(malformed(&with(|map| {
            map.insert("session_id".into(), "a/b".into());
        })));
        assert!(malformed(&with(|map| {
            map.insert("cwd".into(), "relative/dir".into());
        })));
        let duplicated = sample().to_bytes();
        let text = String::from_utf8(duplicated).unwrap().replacen(
            "\"format\": 1,",
            "\"format\": 1, \"owner_uid\": 0,",
            1,
        );
        assert!(malformed(&text));
        let mut invalid_utf8 = sample().to_bytes();
        let position = invalid_utf8.iter().position(|&byte| byte == b'w').unwrap();
        invalid_utf8[position] = 0xff;
        assert!(matches!(parse_record(&invalid_utf8, pid(4242)), Parsed::Malformed(_)));
    }

    fn member(pid: u32, start_ticks: u64) -> ChainMemberRecord {
        ChainMemberRecord { pid, start_ticks, pidfs_ino: Some(u64::from(pid) + 10_000), owner_uid: 1000 }
    }

    #[test]
    fn a_chain_round_trips_and_its_absence_is_an_owner_alone() {
        let record = Record { chain: vec![member(4250, 871), member(4260, 872)], ..sample() };
        let text = String::from_utf8(record.to_bytes()).unwrap();
        assert!(text.contains("\"chain\": ["), "{text}");
        assert_eq!(parse_record(text.as_bytes(), pid(4242)), Parsed::Record(Box::new(record.clone())));
        let members: Vec<u32> = record.identity().members().map(|member| member.pid.get()).collect();
        assert_eq!(members, [4242, 4250, 4260]);
        // A record written before chains (no key) reads as an owner alone.
        let older = String::from_utf8(sample().to_bytes()).unwrap();
        assert!(!older.contains("chain"), "{older}");
        match parse_record(older.as_bytes(), pid(4242)) {
            Parsed::Record(record) => assert!(record.identity().chain.is_empty()),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_chain_that_breaks_a_rule_is_malformed() {
        for chain in [
            vec![member(0, 1)],
            vec![member(4242, 1)],
            vec![member(7, 1), member(7, 2)],
            vec![member(7, 1), member(8, 1), member(9, 1), member(10, 1)],
        ] {
            let record = Record { chain: chain.clone(), ..sample() };
            assert!(matches!(parse_record(&record.to_bytes(), pid(4242)), Parsed::Malformed(_)), "{chain:?}");
        }
        assert!(malformed(&with(|map| {
            map.insert(
                "chain".into(),
                serde_json::json!([{"pid": 7, "start_ticks": 1, "owner_uid": 0, "x": 1}]),
            );
        })));
        assert!(malformed(&with(|map| {
            map.insert("chain".into(), serde_json::json!({"pid": 7}));
        })));
    }

    #[test]
    fn the_same_chain_is_the_same_owner() {
        let recorded = Record { chain: vec![member(4250, 871)], ..sample() };
        let identity = recorded.identity();
        assert!(same_owner(&recorded, &identity));
        // The chain seen at a refresh may differ: the owner is the same.
        let fewer = OwnerIdentity { chain: Vec::new(), ..identity.clone() };
        assert!(same_owner(&recorded, &fewer));
        let other_ticks = OwnerIdentity { start_ticks: 999, ..identity.clone() };
        assert!(!same_owner(&recorded, &other_ticks));
        // The native process, its loader gone, registering on its own.
        let inner = OwnerIdentity {
            pid: pid(4250),
            start_ticks: 871,
            pidfs_ino: Some(14250),
            chain: Vec::new(),
            ..identity.clone()
        };
        assert!(!same_owner(&recorded, &inner));
        assert!(continues_chain(&recorded, &inner));
        // A newcomer at the member's pid is not the member.
        assert!(!continues_chain(&recorded, &OwnerIdentity { start_ticks: 900, ..inner.clone() }));
        assert!(!continues_chain(&recorded, &OwnerIdentity { pidfs_ino: Some(1), ..inner.clone() }));
        assert!(!continues_chain(&recorded, &OwnerIdentity { boot_id: "other".into(), ..inner.clone() }));
        assert!(!continues_chain(&sample(), &inner));
    }

    #[test]
    fn newer_formats_are_unsupported_not_malformed() {
        let text = with(|map| {
            map.insert("format".into(), 2.into());
            map.insert("something_new".into(), true.into());
        });
        assert_eq!(parse_record(text.as_bytes(), pid(4242)), Parsed::UnsupportedFormat(2));
        assert_eq!(parse_record(br#"{"format": 7}"#, pid(4242)), Parsed::UnsupportedFormat(7));
    }

    #[test]
    fn file_names() {
        assert_eq!(pid_of_file_name("12.json").map(Pid::get), Some(12));
        for bad in ["007.json", "0.json", "-1.json", "12.json.tmp", "12", "x.json", ".12.json"] {
            assert_eq!(pid_of_file_name(bad), None, "{bad}");
        }
    }

    #[test]
    fn field_types() {
        assert!(SessionId::parse("7c660e54-2e19-4577-b46a-16f46484eaf4").is_ok());
        assert!(SessionId::parse(&"x".repeat(128)).is_ok());
        for bad in ["", "a/b", "tab\there", "ünï", &"x".repeat(129)] {
            assert!(SessionId::parse(bad).is_err(), "{bad:?}");
        }
        assert!(AgentName::parse("wren").is_ok());
        assert!(AgentName::parse("ünïcödé agent").is_ok());
        for bad in ["", " wren", "wren ", "a\nb", "\u{1b}[31m", &"x".repeat(65)] {
            assert!(AgentName::parse(bad).is_err(), "{bad:?}");
        }
    }

    /// Every field at its limit, filled with what JSON escapes worst: a
    /// control character (six bytes, `\u0001`) where the field allows one,
    /// else a backslash (two bytes) or a four-byte character. Regression: a
    /// 100 KiB `transcript_path` from a hook payload made a record over the
    /// entry size cap that list then showed as untrusted.
    fn maximal() -> Record {
        let worst = |limit: FieldLimit| "\u{1}".repeat(limit.max);
        Record {
            session_pid: u32::MAX,
            session_pid_source: worst(SESSION_PID_SOURCE_LIMIT),
            owner_uid: u32::MAX,
            start_ticks: u64::MAX,
            pidfs_ino: Some(u64::MAX),
            boot_id: worst(BOOT_ID_LIMIT),
            pid_ns: u64::MAX,
            time_ns: u64::MAX,
            harness: worst(HARNESS_LIMIT),
            harness_version: Some(worst(HARNESS_VERSION_LIMIT)),
            agent: Some("\u{1F600}".repeat(AGENT_NAME_LIMIT.max)),
            session_id: Some("\\".repeat(SESSION_ID_LIMIT.max)),
            transcript_path: Some(worst(TRANSCRIPT_PATH_LIMIT)),
            socket: Some(SocketRecord {
                path: worst(SOCKET_PATH_LIMIT),
                dev: u64::MAX,
                ino: u64::MAX,
                mtime_ns: i64::MIN,
            }),
            chain: (1..MAX_CHAIN_MEMBERS as u32)
                .map(|below| ChainMemberRecord {
                    pid: u32::MAX - below,
                    start_ticks: u64::MAX,
                    pidfs_ino: Some(u64::MAX),
                    owner_uid: u32::MAX,
                })
                .collect(),
            cwd: format!("/{}", "\u{1}".repeat(CWD_LIMIT.max - 1)),
            registrar_pid: u32::MAX,
            registered_at: "2026-11-30T02:03:05.123456789+23:59".into(),
            refreshed_at: "2026-11-30T02:03:05.123456789-23:59".into(),
            ..sample()
        }
    }

    #[test]
    fn a_record_with_every_field_at_its_limit_fits_the_entry_cap_and_parses() {
        let record = maximal();
        let bytes = record.to_bytes();
        assert!(
            bytes.len() as u64 <= crate::files::MAX_ENTRY_BYTES,
            "a maximal record is {} bytes, over the {}-byte entry cap",
            bytes.len(),
            crate::files::MAX_ENTRY_BYTES
        );
        assert_eq!(parse_record(&bytes, pid(u32::MAX)), Parsed::Record(Box::new(record)));
    }

    #[test]
    fn a_field_over_its_limit_is_malformed() {
        fn over(limit: FieldLimit) -> String {
            "x".repeat(limit.max + 1)
        }
        type Edit = Box<dyn Fn(&mut Record)>;
        let cases: Vec<(&str, Edit)> = vec![
            ("cwd", Box::new(|record| record.cwd = format!("/{}", over(CWD_LIMIT)))),
            (
                "transcript_path",
                Box::new(|record| record.transcript_path = Some(over(TRANSCRIPT_PATH_LIMIT))),
            ),
            (
                "socket.path",
                Box::new(|record| {
                    record.socket =
                        Some(SocketRecord { path: over(SOCKET_PATH_LIMIT), dev: 1, ino: 2, mtime_ns: 3 })
                }),
            ),
            (
                "harness_version",
                Box::new(|record| record.harness_version = Some(over(HARNESS_VERSION_LIMIT))),
            ),
            ("session_id", Box::new(|record| record.session_id = Some(over(SESSION_ID_LIMIT)))),
            ("agent", Box::new(|record| record.agent = Some("é".repeat(AGENT_NAME_LIMIT.max + 1)))),
            ("harness", Box::new(|record| record.harness = over(HARNESS_LIMIT))),
            (
                "session_pid_source",
                Box::new(|record| record.session_pid_source = over(SESSION_PID_SOURCE_LIMIT)),
            ),
            ("boot_id", Box::new(|record| record.boot_id = over(BOOT_ID_LIMIT))),
        ];
        assert_eq!(cases.len(), FIELD_LIMITS.len());
        for (field, edit) in cases {
            let mut record = sample();
            edit(&mut record);
            match parse_record(&record.to_bytes(), pid(4242)) {
                Parsed::Malformed(why) => {
                    assert!(why.starts_with(&field.replace('_', " ")), "{field}: {why}")
                }
                other => panic!("{field} over its limit parsed as {other:?}"),
            }
            assert!(check_field_limits(&record).is_err(), "{field}");
        }
    }

    #[test]
    fn a_limit_message_never_quotes_the_value() {
        let error = SessionId::parse(&"x".repeat(1 << 20)).unwrap_err();
        assert_eq!(error, "session id is 1048576 bytes long, over its limit of 128 bytes");
        let error = AgentName::parse(&"é".repeat(65)).unwrap_err();
        assert_eq!(error, "agent is 65 characters long, over its limit of 64 characters");
    }

    proptest::proptest! {
        #[test]
        fn serialize_then_parse_round_trips(
            pid_raw in 1u32..4_194_304,
            ticks in proptest::num::u64::ANY,
            pidfs in proptest::option::of(proptest::num::u64::ANY),
            agent in proptest::option::of("[a-zA-Z0-9][a-zA-Z0-9 _.-]{0,30}[a-zA-Z0-9]"),
            session in proptest::option::of("[ -.0-~]{1,128}"),
            cwd in "/[^\\x00]{0,60}",
            harness_version in proptest::option::of("\\PC{0,12}"),
            nanos in 0i128..4_102_444_800_000_000_000,
        ) {
            let stamp = Timestamp::from_unix_nanos(nanos).to_string();
            let record = Record {
                session_pid: pid_raw,
                start_ticks: ticks,
                pidfs_ino: pidfs,
                agent,
                session_id: session,
                cwd,
                harness_version,
                registered_at: stamp.clone(),
                refreshed_at: stamp,
                ..sample()
            };
            let parsed = parse_record(&record.to_bytes(), Pid::new(pid_raw).unwrap());
            proptest::prop_assert_eq!(parsed, Parsed::Record(Box::new(record)));
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..300)) {
            let _ = parse_record(&bytes, Pid::new(1).unwrap());
        }
    }
}
