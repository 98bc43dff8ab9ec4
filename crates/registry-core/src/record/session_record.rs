//! The record (docs/contract.md §3, format 1): one session's file in `sessions/`,
//! its typed values, strict parsing into `Parsed` outcomes with a typed
//! reason for a malformed file, and the serialization that round-trips byte
//! for byte.

use std::path::PathBuf;

use owner_liveness::{OwnerIdentity, Pid, SocketIdentity};
use serde::Serialize;
use serde::ser::SerializeMap;

use crate::record::canonical::read_canonical_record;
use crate::record::keys::{RECORD_FORMAT, RecordKeys};
use crate::record::location::{LocationKeys, ScreenLocation};
use crate::record::malformed::{Field, FieldError, FieldLimit, Malformed};
use crate::record::name::RecordName;
use crate::record::owner::RecordedOwner;
use crate::record::timestamp::Timestamp;
use crate::record::values::{
    AgentName, HarnessName, HarnessVersion, RecordedTime, SOCKET_PATH_LIMIT, SessionDirectoryPath, SessionId,
    SessionPidSource, SocketPath, TranscriptPath,
};
use crate::record::versioned::{FormatProblem, parse_versioned};

/// The record's `socket` object.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SocketRecord {
    pub path: SocketPath,
    pub dev: u64,
    pub ino: u64,
    pub mtime_ns: i64,
}

/// A parsed, validated record: every value of its type, so nothing in it
/// needs checking again. Serialized in the file's key order
/// (docs/contract.md §3) by hand, because the owner's keys
/// (`RecordedOwner`) sit in three places among the record's own.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    pub format: u64,
    /// `session_pid`, `owner_uid` … `user_ns` and `chain`.
    pub owner: RecordedOwner,
    pub session_pid_source: SessionPidSource,
    pub session_pid_verified: bool,
    pub harness: HarnessName,
    pub harness_version: Option<HarnessVersion>,
    pub agent: Option<AgentName>,
    pub session_id: Option<SessionId>,
    pub transcript_path: Option<TranscriptPath>,
    pub socket: Option<SocketRecord>,
    /// Where the session shows on screen, as its owner's environment said
    /// at registration (`location`): a claim that each use verifies.
    pub location: Option<ScreenLocation>,
    pub cwd: SessionDirectoryPath,
    pub registrar_pid: u32,
    pub registered_at: RecordedTime,
    pub refreshed_at: RecordedTime,
}

/// What a file in `sessions/` turned out to be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Parsed {
    Record(Box<Record>),
    /// Does not parse or breaks a rule; the value says which.
    Malformed(Malformed),
    /// Written by a newer roster (`format` above ours).
    UnsupportedFormat(u64),
}

/// The pid a file name stands for, when it is a name roster writes
/// (`RecordName`): the only names a record is read under, and the owner
/// pid of every record read (`parse_record` holds the record to it).
pub fn pid_of_file_name(name: &str) -> Option<Pid> {
    RecordName::parse_file_name(name).map(|name| name.pid)
}

/// Parses a record file's bytes strictly (docs/contract.md §3), checking the pid
/// against the file name's. A file in the layout roster writes is read
/// without serde (`canonical`); any other goes to the general
/// reader, and both readers' keys meet the same checks.
pub fn parse_record(bytes: &[u8], file_pid: Pid) -> Parsed {
    match read_canonical_record(bytes) {
        Some(keys) => checked(keys, file_pid),
        None => parse_record_by_serde(bytes, file_pid),
    }
}

/// `parse_record` through the general reader alone, whatever the layout;
/// public so that the fuzzer can hold the two readers against each other.
pub fn parse_record_by_serde(bytes: &[u8], file_pid: Pid) -> Parsed {
    match parse_versioned::<RecordKeys>(bytes, RECORD_FORMAT) {
        Ok(keys) => checked(keys, file_pid),
        Err(FormatProblem::Malformed(problem)) => Parsed::Malformed(problem),
        Err(FormatProblem::Unsupported(format)) => Parsed::UnsupportedFormat(format),
    }
}

fn checked(keys: RecordKeys, file_pid: Pid) -> Parsed {
    match keys.check(file_pid) {
        Ok(record) => Parsed::Record(Box::new(record)),
        Err(problem) => Parsed::Malformed(Malformed::Field(problem)),
    }
}

impl Record {
    pub fn pid(&self) -> Pid {
        self.owner.pid
    }

    /// The owner identity the verdict checks.
    pub fn identity(&self) -> OwnerIdentity {
        self.owner.identity()
    }

    pub fn socket_identity(&self) -> Option<SocketIdentity> {
        self.socket.as_ref().map(|socket| SocketIdentity {
            path: PathBuf::from(socket.path.as_str()),
            dev: socket.dev,
            ino: socket.ino,
            mtime_ns: i128::from(socket.mtime_ns),
        })
    }

    pub fn registered_at(&self) -> Timestamp {
        self.registered_at.timestamp()
    }

    /// The file's bytes: pretty JSON and a final newline, for people who
    /// `cat` it.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = serde_json::to_vec_pretty(self).expect("a record always serializes");
        bytes.push(b'\n');
        bytes
    }

    /// Every string field against its `FieldLimit`, in `FIELD_LIMITS`
    /// order; the first one over its limit is the error. The types keep
    /// every value but the boot id (taken from the kernel as it is) within
    /// its limit; register checks once more before it writes, because a
    /// record it writes must be one list trusts.
    pub fn check_limits(&self) -> Result<(), FieldError> {
        let optional = |value: Option<&str>| value.unwrap_or_default().to_owned();
        let fields: [(FieldLimit, String); 10] = [
            (crate::record::values::CWD_LIMIT, self.cwd.to_string()),
            (crate::record::values::TRANSCRIPT_PATH_LIMIT, optional(self.transcript_path.as_deref())),
            (SOCKET_PATH_LIMIT, optional(self.socket.as_ref().map(|socket| socket.path.as_str()))),
            (crate::record::values::HARNESS_VERSION_LIMIT, optional(self.harness_version.as_deref())),
            (crate::record::values::SESSION_ID_LIMIT, optional(self.session_id.as_deref())),
            (crate::record::values::AGENT_NAME_LIMIT, optional(self.agent.as_deref())),
            (crate::record::values::HARNESS_LIMIT, self.harness.to_string()),
            (crate::record::values::SESSION_PID_SOURCE_LIMIT, self.session_pid_source.to_string()),
            (crate::record::values::BOOT_ID_LIMIT, self.owner.boot_id.to_string()),
            (crate::record::values::MACHINE_LIMIT, optional(self.owner.machine.as_deref())),
        ];
        fields.iter().try_for_each(|(limit, value)| limit.check(value))
    }
}

impl Serialize for Record {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("format", &self.format)?;
        self.owner.write_pid(&mut map)?;
        map.serialize_entry("session_pid_source", &self.session_pid_source)?;
        map.serialize_entry("session_pid_verified", &self.session_pid_verified)?;
        self.owner.write_identity(&mut map)?;
        map.serialize_entry("harness", &self.harness)?;
        if let Some(version) = &self.harness_version {
            map.serialize_entry("harness_version", version)?;
        }
        if let Some(agent) = &self.agent {
            map.serialize_entry("agent", agent)?;
        }
        if let Some(session_id) = &self.session_id {
            map.serialize_entry("session_id", session_id)?;
        }
        if let Some(path) = &self.transcript_path {
            map.serialize_entry("transcript_path", path)?;
        }
        if let Some(socket) = &self.socket {
            map.serialize_entry("socket", socket)?;
        }
        if let Some(location) = self.location.as_ref().filter(|location| !location.is_empty()) {
            map.serialize_entry("location", location)?;
        }
        self.owner.write_chain(&mut map)?;
        map.serialize_entry("cwd", &self.cwd)?;
        map.serialize_entry("registrar_pid", &self.registrar_pid)?;
        map.serialize_entry("registered_at", &self.registered_at)?;
        map.serialize_entry("refreshed_at", &self.refreshed_at)?;
        map.end()
    }
}

impl RecordKeys {
    /// The record, once every rule holds, checked in the order whose first
    /// failure list reports.
    fn check(self, file_pid: Pid) -> Result<Record, FieldError> {
        self.owner.check_pid(file_pid)?;
        self.owner.check_chain()?;
        let registered_at = RecordedTime::parse_owned(Field::RegisteredAt, self.registered_at)?;
        let refreshed_at = RecordedTime::parse_owned(Field::RefreshedAt, self.refreshed_at)?;
        SessionDirectoryPath::check_absolute(&self.cwd)?;
        let owner = self.owner.check(file_pid)?;
        let cwd = SessionDirectoryPath::parse_owned(self.cwd)?;
        let transcript_path = self.transcript_path.map(TranscriptPath::parse_owned).transpose()?;
        let socket = match self.socket {
            Some(socket) => Some(SocketRecord {
                path: SocketPath::parse_owned(socket.path)?,
                dev: socket.dev,
                ino: socket.ino,
                mtime_ns: socket.mtime_ns,
            }),
            None => None,
        };
        let location =
            self.location.map(LocationKeys::check).transpose()?.filter(|location| !location.is_empty());
        let harness_version = self.harness_version.map(HarnessVersion::parse_owned).transpose()?;
        if let Some(session_id) = &self.session_id {
            crate::record::values::SESSION_ID_LIMIT.check(session_id)?;
        }
        if let Some(agent) = &self.agent {
            crate::record::values::AGENT_NAME_LIMIT.check(agent)?;
        }
        let harness = HarnessName::parse_owned(self.harness)?;
        let session_pid_source = SessionPidSource::parse_owned(self.session_pid_source)?;
        Ok(Record {
            format: self.format,
            owner,
            session_pid_source,
            session_pid_verified: self.session_pid_verified,
            harness,
            harness_version,
            session_id: self.session_id.map(SessionId::parse_owned).transpose()?,
            agent: self.agent.map(AgentName::parse_owned).transpose()?,
            transcript_path,
            socket,
            location,
            cwd,
            registrar_pid: self.registrar_pid,
            registered_at,
            refreshed_at,
        })
    }
}

/// Whether a registration's `identity` is the owner `recorded` (a refresh,
/// not a new owner): the same outermost process. The chain below it may
/// differ from the recorded one (a member exited, a relaunch added one)
/// and the session is still the same; the refresh records the chain seen
/// now.
pub fn same_owner(recorded: &Record, identity: &OwnerIdentity) -> bool {
    recorded.owner.is_same_owner(identity)
}

/// Whether a registration's owner is one of the recorded chain's members
/// below its owner: the same session, found again after its outer
/// processes exited (Copilot's native process, its loader killed,
/// registering once more). Register then refreshes the recorded session
/// instead of starting a second one.
pub fn continues_chain(recorded: &Record, identity: &OwnerIdentity) -> bool {
    recorded.owner.is_continued_by(identity)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::record::owner::ChainMemberRecord;
    use crate::record::values::{
        AGENT_NAME_LIMIT, BOOT_ID_LIMIT, BootId, CWD_LIMIT, FIELD_LIMITS, HARNESS_LIMIT,
        HARNESS_VERSION_LIMIT, MACHINE_LIMIT, MachineName, SESSION_ID_LIMIT, SESSION_PID_SOURCE_LIMIT,
        StartTicks, TRANSCRIPT_PATH_LIMIT,
    };
    use owner_liveness::MAX_CHAIN_MEMBERS;

    fn text<T>(parse: fn(&str) -> Result<T, FieldError>, value: &str) -> T {
        parse(value).unwrap()
    }

    fn time(value: &str) -> RecordedTime {
        RecordedTime::parse(Field::RegisteredAt, value).unwrap()
    }

    fn sample() -> Record {
        Record {
            format: 1,
            owner: RecordedOwner {
                pid: pid(4242),
                uid: 1000,
                start_ticks: StartTicks(870),
                pidfs_ino: Some(12345),
                boot_id: text(BootId::parse, "0f0e0d0c-0b0a-0908-0706-050403020100"),
                pid_ns: 4026531836,
                time_ns: 4026531834,
                user_ns: Some(4026531837),
                machine: Some(text(MachineName::parse, "machine-id:3d1219c7c4c5404aaa1f6d2a48adfda4")),
                chain: Vec::new(),
            },
            session_pid_source: text(SessionPidSource::parse, "ancestor"),
            session_pid_verified: true,
            harness: text(HarnessName::parse, "claude-code"),
            harness_version: Some(text(HarnessVersion::parse, "2.1.328")),
            agent: Some(text(AgentName::parse, "wren")),
            session_id: Some(text(SessionId::parse, "7c660e54-2e19-4577-b46a-16f46484eaf4")),
            transcript_path: None,
            socket: None,
            location: None,
            cwd: text(SessionDirectoryPath::parse, "/home/dev/src/app"),
            registrar_pid: 4300,
            registered_at: time("2026-11-30T02:03:05.123456789Z"),
            refreshed_at: time("2026-11-30T02:03:05.123456789Z"),
        }
    }

    /// Records of every shape the writer makes: each optional key present
    /// and absent, a socket (with a negative mtime too), a chain.
    pub(crate) fn sample_shapes() -> Vec<Record> {
        let full = sample();
        let mut bare = sample();
        bare.owner.pidfs_ino = None;
        bare.owner.user_ns = None;
        bare.harness_version = None;
        bare.agent = None;
        bare.session_id = None;
        bare.owner.uid = 0;
        bare.session_pid_verified = false;
        let mut with_socket = sample();
        with_socket.transcript_path =
            Some(text(TranscriptPath::parse, "/home/dev/.claude/projects/x/7c66.jsonl"));
        with_socket.socket = Some(SocketRecord {
            path: text(SocketPath::parse, "/tmp/claude-1000/ide.sock"),
            dev: 64769,
            ino: 0,
            mtime_ns: 1_764_468_185_123_456_789,
        });
        let mut before_1970 = with_socket.clone();
        before_1970.socket.as_mut().unwrap().mtime_ns = -1;
        let mut unicode = sample();
        unicode.cwd = text(SessionDirectoryPath::parse, "/home/dév/src/日本");
        // Every integer at its type's edge, in text the layout's reader
        // reads (no escapes, no chain).
        let mut extreme = with_socket.clone();
        extreme.owner.pid = pid(u32::MAX);
        extreme.owner.uid = u32::MAX;
        extreme.owner.start_ticks = StartTicks(u64::MAX);
        extreme.owner.pidfs_ino = Some(u64::MAX);
        extreme.owner.pid_ns = u64::MAX;
        extreme.owner.time_ns = u64::MAX;
        extreme.owner.user_ns = Some(u64::MAX);
        extreme.registrar_pid = u32::MAX;
        let socket = extreme.socket.as_mut().unwrap();
        (socket.dev, socket.ino, socket.mtime_ns) = (u64::MAX, u64::MAX, i64::MIN);
        let mut latest = extreme.clone();
        latest.socket.as_mut().unwrap().mtime_ns = i64::MAX;
        let chained = with_chain(vec![member(4250, 880), member(4260, 890)]);
        // A location in full, one with a single key, and one beside a socket.
        let mut in_tmux = sample();
        in_tmux.location = Some(ScreenLocation {
            tty: Some("pts/3".into()),
            multiplexer: Some("tmux".into()),
            server: Some("/tmp/tmux-1000/default".into()),
            pane: Some("%3".into()),
            terminal: Some("tmux".into()),
        });
        let mut on_a_terminal = sample();
        on_a_terminal.location =
            Some(ScreenLocation { tty: Some("pts/7".into()), ..ScreenLocation::default() });
        let mut socket_and_location = with_socket.clone();
        socket_and_location.location =
            Some(ScreenLocation { terminal: Some("WezTerm".into()), ..ScreenLocation::default() });
        vec![
            full,
            bare,
            with_socket,
            before_1970,
            unicode,
            extreme,
            latest,
            chained,
            in_tmux,
            on_a_terminal,
            socket_and_location,
        ]
    }

    fn with_chain(chain: Vec<ChainMemberRecord>) -> Record {
        let mut record = sample();
        record.owner.chain = chain;
        record
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

    /// The reasons are values naming the field, and read as they always did.
    #[test]
    fn a_malformed_record_says_which_field_and_why() {
        let reason = |text: &str| match parse_record(text.as_bytes(), pid(4242)) {
            Parsed::Malformed(reason) => reason,
            other => panic!("{other:?}"),
        };
        let zero = reason(&with(|map| {
            map.insert("session_pid".into(), 0.into());
        }));
        assert_eq!(
            zero,
            Malformed::Field(FieldError::new(
                Field::SessionPid,
                crate::record::malformed::FieldProblem::PidZero
            ))
        );
        assert_eq!(zero.to_string(), "session_pid is 0");
        let other_pid = reason(&with(|map| {
            map.insert("session_pid".into(), 4243.into());
        }));
        assert_eq!(other_pid.to_string(), "session_pid 4243 does not match the file name 4242.json");
        let relative = reason(&with(|map| {
            map.insert("cwd".into(), "relative/dir".into());
        }));
        assert_eq!(relative.to_string(), "cwd \"relative/dir\" is not an absolute path");
        assert_eq!(reason("{}"), Malformed::NoFormat);
        assert_eq!(reason("{}").to_string(), "no \"format\" key");
        let missing = reason(&with(|map| {
            map.remove("boot_id");
        }));
        assert!(
            matches!(&missing, Malformed::Shape(why) if why.starts_with("missing field `boot_id`")),
            "{missing}"
        );
        let twice = String::from_utf8(sample().to_bytes()).unwrap().replacen(
            "\"format\": 1,",
            "\"format\": 1, \"owner_uid\": 0,",
            1,
        );
        let twice = reason(&twice);
        assert!(twice.to_string().starts_with("duplicate field `owner_uid`"), "{twice}");
    }

    fn member(pid: u32, start_ticks: u64) -> ChainMemberRecord {
        ChainMemberRecord { pid, start_ticks, pidfs_ino: Some(u64::from(pid) + 10_000), owner_uid: 1000 }
    }

    #[test]
    fn a_chain_round_trips_and_its_absence_is_an_owner_alone() {
        let record = with_chain(vec![member(4250, 871), member(4260, 872)]);
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
            let record = with_chain(chain.clone());
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
        let recorded = with_chain(vec![member(4250, 871)]);
        let identity = recorded.identity();
        assert!(same_owner(&recorded, &identity));
        // The chain seen at a refresh may differ: the owner is the same.
        let fewer = OwnerIdentity { chain: Vec::new(), ..identity.clone() };
        assert!(same_owner(&recorded, &fewer));
        let other_process = OwnerIdentity { start_ticks: 999, pidfs_ino: Some(1), ..identity.clone() };
        assert!(!same_owner(&recorded, &other_process));
        let without_pidfs = OwnerIdentity { start_ticks: 999, pidfs_ino: None, ..identity.clone() };
        assert!(!same_owner(&recorded, &without_pidfs));
        // An agreeing pidfs inode is the very process, whatever start tick a
        // time namespace's offset rounded it to.
        let rounded = OwnerIdentity { start_ticks: 872, ..identity.clone() };
        assert_eq!(same_owner(&recorded, &rounded), owner_liveness::PIDFS_INODES_ARE_NEVER_REUSED);
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
        assert!(!continues_chain(
            &recorded,
            &OwnerIdentity { start_ticks: 900, pidfs_ino: None, ..inner.clone() }
        ));
        assert!(!continues_chain(&recorded, &OwnerIdentity { pidfs_ino: Some(1), ..inner.clone() }));
        assert!(!continues_chain(&recorded, &OwnerIdentity { boot_id: "other".into(), ..inner.clone() }));
        assert!(!continues_chain(&sample(), &inner));
    }

    #[test]
    fn newer_formats_are_unsupported_not_malformed() {
        let text = with(|map| {
            map.insert("format".into(), 3.into());
            map.insert("something_new".into(), true.into());
        });
        assert_eq!(parse_record(text.as_bytes(), pid(4242)), Parsed::UnsupportedFormat(3));
        assert_eq!(parse_record(br#"{"format": 7}"#, pid(4242)), Parsed::UnsupportedFormat(7));
    }

    #[test]
    fn file_names() {
        assert_eq!(pid_of_file_name("12.json").map(Pid::get), Some(12));
        for bad in ["007.json", "0.json", "-1.json", "12.json.tmp", "12", "x.json", ".12.json"] {
            assert_eq!(pid_of_file_name(bad), None, "{bad}");
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
            owner: RecordedOwner {
                pid: pid(u32::MAX),
                uid: u32::MAX,
                start_ticks: StartTicks(u64::MAX),
                pidfs_ino: Some(u64::MAX),
                boot_id: text(BootId::parse, &worst(BOOT_ID_LIMIT)),
                pid_ns: u64::MAX,
                time_ns: u64::MAX,
                user_ns: sample().owner.user_ns,
                machine: Some(text(MachineName::parse, &"\\".repeat(MACHINE_LIMIT.max))),
                chain: (1..MAX_CHAIN_MEMBERS as u32)
                    .map(|below| ChainMemberRecord {
                        pid: u32::MAX - below,
                        start_ticks: u64::MAX,
                        pidfs_ino: Some(u64::MAX),
                        owner_uid: u32::MAX,
                    })
                    .collect(),
            },
            session_pid_source: text(SessionPidSource::parse, &worst(SESSION_PID_SOURCE_LIMIT)),
            harness: text(HarnessName::parse, &worst(HARNESS_LIMIT)),
            harness_version: Some(text(HarnessVersion::parse, &worst(HARNESS_VERSION_LIMIT))),
            agent: Some(text(AgentName::parse, &"\u{1F600}".repeat(AGENT_NAME_LIMIT.max))),
            session_id: Some(text(SessionId::parse, &"\\".repeat(SESSION_ID_LIMIT.max))),
            transcript_path: Some(text(TranscriptPath::parse, &worst(TRANSCRIPT_PATH_LIMIT))),
            socket: Some(SocketRecord {
                path: text(SocketPath::parse, &worst(SOCKET_PATH_LIMIT)),
                dev: u64::MAX,
                ino: u64::MAX,
                mtime_ns: i64::MIN,
            }),
            cwd: text(SessionDirectoryPath::parse, &format!("/{}", "\u{1}".repeat(CWD_LIMIT.max - 1))),
            registrar_pid: u32::MAX,
            registered_at: time("2026-11-30T02:03:05.123456789+23:59"),
            refreshed_at: time("2026-11-30T02:03:05.123456789-23:59"),
            ..sample()
        }
    }

    #[test]
    fn a_record_with_every_field_at_its_limit_fits_the_entry_cap_and_parses() {
        let record = maximal();
        let bytes = record.to_bytes();
        assert!(
            bytes.len() as u64 <= crate::store::files::MAX_ENTRY_BYTES,
            "a maximal record is {} bytes, over the {}-byte entry cap",
            bytes.len(),
            crate::store::files::MAX_ENTRY_BYTES
        );
        assert_eq!(parse_record(&bytes, pid(u32::MAX)), Parsed::Record(Box::new(record)));
    }

    /// A value over its limit can be neither built nor read: its type
    /// refuses it, and a file carrying it is malformed, naming the field.
    #[test]
    fn a_field_over_its_limit_is_malformed() {
        fn over(limit: FieldLimit) -> String {
            "x".repeat(limit.max + 1)
        }
        let socket = |path: String| serde_json::json!({"path": path, "dev": 1, "ino": 2, "mtime_ns": 3});
        let cases: Vec<(&str, &str, serde_json::Value, bool)> = vec![
            (
                "cwd",
                "cwd",
                format!("/{}", over(CWD_LIMIT)).into(),
                SessionDirectoryPath::parse(&format!("/{}", over(CWD_LIMIT))).is_err(),
            ),
            (
                "transcript_path",
                "transcript_path",
                over(TRANSCRIPT_PATH_LIMIT).into(),
                TranscriptPath::parse(&over(TRANSCRIPT_PATH_LIMIT)).is_err(),
            ),
            (
                "socket.path",
                "socket",
                socket(over(SOCKET_PATH_LIMIT)),
                SocketPath::parse(&over(SOCKET_PATH_LIMIT)).is_err(),
            ),
            (
                "harness_version",
                "harness_version",
                over(HARNESS_VERSION_LIMIT).into(),
                HarnessVersion::parse(&over(HARNESS_VERSION_LIMIT)).is_err(),
            ),
            (
                "session_id",
                "session_id",
                over(SESSION_ID_LIMIT).into(),
                SessionId::parse(&over(SESSION_ID_LIMIT)).is_err(),
            ),
            (
                "agent",
                "agent",
                "é".repeat(AGENT_NAME_LIMIT.max + 1).into(),
                AgentName::parse(&"é".repeat(AGENT_NAME_LIMIT.max + 1)).is_err(),
            ),
            (
                "harness",
                "harness",
                over(HARNESS_LIMIT).into(),
                HarnessName::parse(&over(HARNESS_LIMIT)).is_err(),
            ),
            (
                "session_pid_source",
                "session_pid_source",
                over(SESSION_PID_SOURCE_LIMIT).into(),
                SessionPidSource::parse(&over(SESSION_PID_SOURCE_LIMIT)).is_err(),
            ),
            ("boot_id", "boot_id", over(BOOT_ID_LIMIT).into(), BootId::parse(&over(BOOT_ID_LIMIT)).is_err()),
            (
                "machine",
                "machine",
                over(MACHINE_LIMIT).into(),
                MachineName::parse(&over(MACHINE_LIMIT)).is_err(),
            ),
        ];
        assert_eq!(cases.len(), FIELD_LIMITS.len());
        for (field, key, value, refused) in cases {
            let text = with(|map| {
                map.insert(key.into(), value);
            });
            match parse_record(text.as_bytes(), pid(4242)) {
                Parsed::Malformed(why) => {
                    assert!(why.to_string().starts_with(&field.replace('_', " ")), "{field}: {why}")
                }
                other => panic!("{field} over its limit parsed as {other:?}"),
            }
            assert!(refused, "{field}");
        }
        // The boot id comes from the kernel as it is; register's last check
        // still refuses one over its limit.
        let mut record = sample();
        record.owner.boot_id = BootId::from_kernel(&over(BOOT_ID_LIMIT));
        assert!(record.check_limits().is_err());
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
            let stamp = RecordedTime::from(Timestamp::from_unix_nanos(nanos));
            let mut record = Record {
                agent: agent.as_deref().map(|agent| text(AgentName::parse, agent)),
                session_id: session.as_deref().map(|session| text(SessionId::parse, session)),
                cwd: text(SessionDirectoryPath::parse, &cwd),
                harness_version: harness_version.as_deref().map(|version| text(HarnessVersion::parse, version)),
                registered_at: stamp.clone(),
                refreshed_at: stamp,
                ..sample()
            };
            record.owner.pid = Pid::new(pid_raw).unwrap();
            record.owner.start_ticks = StartTicks(ticks);
            record.owner.pidfs_ino = pidfs;
            let parsed = parse_record(&record.to_bytes(), Pid::new(pid_raw).unwrap());
            proptest::prop_assert_eq!(parsed, Parsed::Record(Box::new(record)));
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..300)) {
            let _ = parse_record(&bytes, Pid::new(1).unwrap());
        }
    }
}
