//! The values a record holds, as types that can only hold valid ones: each
//! constructor checks its field's limit (`FIELD_LIMITS`) and rule, so a
//! record, once built, needs no second look, and a record register writes
//! is always one list trusts.

use std::ffi::OsStr;
use std::fmt;
use std::ops::Deref;
use std::path::Path;

use owner_liveness::OwnerSource;
use serde::{Serialize, Serializer};

use crate::record::malformed::{Field, FieldError, FieldLimit, FieldProblem};
use crate::record::timestamp::Timestamp;

/// The longest value each string field of a record may hold. Register
/// refuses (or, in hook mode, drops) a longer value and list calls a record
/// carrying one malformed. The limits are sized so that a record with every
/// field at its limit, every byte one that JSON escapes to six (`\u0001`),
/// still fits in `MAX_ENTRY_BYTES`: a record register writes is always one
/// list trusts.
pub const FIELD_LIMITS: [FieldLimit; 10] = [
    CWD_LIMIT,
    TRANSCRIPT_PATH_LIMIT,
    SOCKET_PATH_LIMIT,
    HARNESS_VERSION_LIMIT,
    SESSION_ID_LIMIT,
    AGENT_NAME_LIMIT,
    HARNESS_LIMIT,
    SESSION_PID_SOURCE_LIMIT,
    BOOT_ID_LIMIT,
    MACHINE_LIMIT,
];

/// `cwd`: `PATH_MAX`, the longest path the kernel resolves.
pub const CWD_LIMIT: FieldLimit = FieldLimit::bytes(Field::Cwd, 4096);
/// `transcript_path`: `PATH_MAX`, like `cwd`.
pub const TRANSCRIPT_PATH_LIMIT: FieldLimit = FieldLimit::bytes(Field::TranscriptPath, 4096);
/// `socket.path`: the size of a unix socket address (`sun_path`); a longer
/// path cannot be connected to, so it names no messaging socket.
pub const SOCKET_PATH_LIMIT: FieldLimit = FieldLimit::bytes(Field::SocketPath, 108);
/// `harness_version`: far above any version a harness prints.
pub const HARNESS_VERSION_LIMIT: FieldLimit = FieldLimit::bytes(Field::HarnessVersion, 128);
/// `session_id` (see `SessionId`).
pub const SESSION_ID_LIMIT: FieldLimit = FieldLimit::bytes(Field::SessionId, 128);
/// `agent`, in characters (see `AgentName`): at most 256 bytes.
pub const AGENT_NAME_LIMIT: FieldLimit = FieldLimit::characters(Field::Agent, 64);
/// `harness`: the longest harness name is 12 bytes.
pub const HARNESS_LIMIT: FieldLimit = FieldLimit::bytes(Field::Harness, 32);
/// `session_pid_source`: the longest source is 18 bytes.
pub const SESSION_PID_SOURCE_LIMIT: FieldLimit = FieldLimit::bytes(Field::SessionPidSource, 32);
/// `boot_id`: the kernel's boot id is a 36-byte UUID.
pub const BOOT_ID_LIMIT: FieldLimit = FieldLimit::bytes(Field::BootId, 64);
/// `machine`: `hostname:` and a 64-byte hostname at most
/// (`owner_liveness::MACHINE_LIMIT`).
pub const MACHINE_LIMIT: FieldLimit = FieldLimit::bytes(Field::Machine, owner_liveness::MACHINE_LIMIT);

/// The string-valued field types share their views: a `&str` (so
/// `Option<T>::as_deref` gives an `Option<&str>`), comparisons with text,
/// display and serialization as the plain string.
macro_rules! text_value {
    ($name:ident) => {
        impl $name {
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl Deref for $name {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl AsRef<OsStr> for $name {
            fn as_ref(&self) -> &OsStr {
                OsStr::new(&self.0)
            }
        }

        impl AsRef<Path> for $name {
            fn as_ref(&self) -> &Path {
                Path::new(&self.0)
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(&self.0)
            }
        }
    };
}

/// Each string field type's constructors around its rule (`check`):
/// `parse` copies the text it is given, `parse_owned` keeps the one read
/// from a file, so parsing a listing's records copies no string twice.
macro_rules! checked_constructors {
    ($name:ident) => {
        impl $name {
            pub fn parse(text: &str) -> Result<$name, FieldError> {
                $name::check(text)?;
                Ok($name(text.to_owned()))
            }

            pub fn parse_owned(text: String) -> Result<$name, FieldError> {
                $name::check(&text)?;
                Ok($name(text))
            }
        }
    };
}

/// A session id: 1–128 printable ASCII characters, no `/`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionId(String);
text_value!(SessionId);
checked_constructors!(SessionId);

impl SessionId {
    fn check(text: &str) -> Result<(), FieldError> {
        SESSION_ID_LIMIT.check(text)?;
        let problem = |problem| Err(FieldError::new(Field::SessionId, problem));
        if text.is_empty() {
            return problem(FieldProblem::Empty);
        }
        if let Some(bad) =
            text.chars().find(|character| !(' '..='~').contains(character) || *character == '/')
        {
            return problem(FieldProblem::ForbiddenCharacter { value: text.to_owned(), character: bad });
        }
        Ok(())
    }
}

/// An agent name: 1–64 characters, no control characters, no leading or
/// trailing white space.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AgentName(String);
text_value!(AgentName);
checked_constructors!(AgentName);

impl AgentName {
    fn check(text: &str) -> Result<(), FieldError> {
        AGENT_NAME_LIMIT.check(text)?;
        let problem = |problem| Err(FieldError::new(Field::Agent, problem));
        if text.is_empty() {
            return problem(FieldProblem::Empty);
        }
        if text.chars().any(char::is_control) {
            return problem(FieldProblem::ControlCharacter { value: text.to_owned() });
        }
        if text.starts_with(char::is_whitespace) || text.ends_with(char::is_whitespace) {
            return problem(FieldProblem::SurroundingWhiteSpace { value: text.to_owned() });
        }
        Ok(())
    }
}

/// A field that is any text within its limit.
macro_rules! limited_text {
    ($(#[$doc:meta])* $name:ident, $limit:ident) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash)]
        pub struct $name(String);
        text_value!($name);
        checked_constructors!($name);

        impl $name {
            fn check(text: &str) -> Result<(), FieldError> {
                $limit.check(text)
            }
        }
    };
}

limited_text!(
    /// The harness's name (`claude-code`, `codex`, …; empty when unknown).
    HarnessName,
    HARNESS_LIMIT
);
limited_text!(
    /// The version the harness reported.
    HarnessVersion,
    HARNESS_VERSION_LIMIT
);
limited_text!(
    /// How the owner was found (`OwnerSource::as_str`: `flag`, `ancestor`, …).
    /// Kept as text: a record from a newer roster may name a source this one
    /// does not know, and is still read.
    SessionPidSource,
    SESSION_PID_SOURCE_LIMIT
);

impl From<OwnerSource> for SessionPidSource {
    /// Every source's name is within the limit: the longest,
    /// `ROSTER_SESSION_PID`, is 18 bytes.
    fn from(source: OwnerSource) -> SessionPidSource {
        SessionPidSource(source.as_str().to_owned())
    }
}

limited_text!(
    /// The harness's transcript file, as the hook payload named it.
    TranscriptPath,
    TRANSCRIPT_PATH_LIMIT
);
limited_text!(
    /// The path of the harness's messaging socket.
    SocketPath,
    SOCKET_PATH_LIMIT
);

/// The path-valued fields also take a `Path`: the text it is, refused when
/// it is not valid UTF-8, since a lossy `\u{fffd}` would name another path.
macro_rules! path_constructor {
    ($name:ident, $field:expr) => {
        impl $name {
            pub fn parse_path(path: &Path) -> Result<$name, FieldError> {
                $name::parse(path.to_str().ok_or(FieldError::new($field, FieldProblem::NotUtf8))?)
            }
        }
    };
}

path_constructor!(SocketPath, Field::SocketPath);

/// The kernel's boot id the owner was recorded in: not empty, within its
/// limit.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct BootId(String);
text_value!(BootId);
checked_constructors!(BootId);

impl BootId {
    fn check(text: &str) -> Result<(), FieldError> {
        if text.is_empty() {
            return Err(FieldError::new(Field::BootId, FieldProblem::Empty));
        }
        BOOT_ID_LIMIT.check(text)
    }

    /// The boot id the kernel reported, taken as it is (a 36-byte UUID):
    /// `From<&OwnerIdentity>` cannot fail, and register checks every limit
    /// of a record (`Record::check_limits`) before it writes one.
    pub(crate) fn from_kernel(text: &str) -> BootId {
        BootId(text.to_owned())
    }
}

/// The machine the owner was recorded on (`machine-id:…` or `hostname:…`,
/// docs/contract.md §4.3): not empty, printable ASCII, within its limit.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct MachineName(String);
text_value!(MachineName);
checked_constructors!(MachineName);

impl MachineName {
    fn check(text: &str) -> Result<(), FieldError> {
        if text.is_empty() {
            return Err(FieldError::new(Field::Machine, FieldProblem::Empty));
        }
        if let Some(character) = text.chars().find(|c| !c.is_ascii_graphic()) {
            let value = text.to_owned();
            return Err(FieldError::new(
                Field::Machine,
                FieldProblem::ForbiddenCharacter { value, character },
            ));
        }
        MACHINE_LIMIT.check(text)
    }

    /// The machine as the capture named it: `From<&OwnerIdentity>` cannot
    /// fail, and register checks every limit before it writes a record.
    pub(crate) fn from_capture(text: &str) -> MachineName {
        MachineName(text.to_owned())
    }
}

/// The session's working directory: an absolute path within `CWD_LIMIT`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SessionDirectoryPath(String);
text_value!(SessionDirectoryPath);
checked_constructors!(SessionDirectoryPath);
path_constructor!(SessionDirectoryPath, Field::Cwd);

impl SessionDirectoryPath {
    fn check(text: &str) -> Result<(), FieldError> {
        SessionDirectoryPath::check_absolute(text)?;
        CWD_LIMIT.check(text)
    }

    /// The first half of the rule alone, for a reader that reports a
    /// relative path before the limits of other fields.
    pub fn check_absolute(text: &str) -> Result<(), FieldError> {
        if !Path::new(text).is_absolute() {
            return Err(FieldError::new(Field::Cwd, FieldProblem::NotAbsolute { value: text.to_owned() }));
        }
        Ok(())
    }

    pub fn as_path(&self) -> &Path {
        Path::new(&self.0)
    }
}

/// A time as a record holds it: valid RFC 3339, kept as written (any offset
/// is read; register writes UTC), so a record reads back byte for byte.
/// Only the text is kept, parsed again when the time is asked for: a
/// listing holds every record, and the text is all it writes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RecordedTime(String);

impl RecordedTime {
    pub fn parse(field: Field, text: &str) -> Result<RecordedTime, FieldError> {
        RecordedTime::check(field, text)?;
        Ok(RecordedTime(text.to_owned()))
    }

    pub fn parse_owned(field: Field, text: String) -> Result<RecordedTime, FieldError> {
        RecordedTime::check(field, &text)?;
        Ok(RecordedTime(text))
    }

    fn check(field: Field, text: &str) -> Result<(), FieldError> {
        match Timestamp::parse(text) {
            Some(_) => Ok(()),
            None => Err(FieldError::new(field, FieldProblem::NotRfc3339 { value: text.to_owned() })),
        }
    }

    pub fn timestamp(&self) -> Timestamp {
        Timestamp::parse(&self.0).expect("a RecordedTime holds a valid time")
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<Timestamp> for RecordedTime {
    fn from(time: Timestamp) -> RecordedTime {
        RecordedTime(time.to_string())
    }
}

impl fmt::Display for RecordedTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Serialize for RecordedTime {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

/// Field 22 of `/proc/<pid>/stat`: when the process started, in clock
/// ticks since boot. Together with the pid and boot id it names one
/// process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct StartTicks(pub u64);

impl StartTicks {
    pub fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for StartTicks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl PartialEq<u64> for StartTicks {
    fn eq(&self, other: &u64) -> bool {
        self.0 == *other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(BootId::parse("").is_err());
        assert!(BootId::parse(&"b".repeat(65)).is_err());
        assert!(SessionDirectoryPath::parse("relative").is_err());
        let not_utf8 = Path::new(<OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(b"/tmp/\xff"));
        let refused = |field| FieldError::new(field, FieldProblem::NotUtf8);
        assert_eq!(SessionDirectoryPath::parse_path(not_utf8), Err(refused(Field::Cwd)));
        assert_eq!(SocketPath::parse_path(not_utf8), Err(refused(Field::SocketPath)));
        assert!(SessionDirectoryPath::parse_path(Path::new("/tmp/\u{fffd}")).is_ok());
        assert!(SessionDirectoryPath::parse(&format!("/{}", "d".repeat(4096))).is_err());
        assert!(HarnessName::parse(&"h".repeat(33)).is_err());
        assert!(RecordedTime::parse(Field::WrittenAt, "yesterday").is_err());
    }

    #[test]
    fn every_owner_source_fits_its_limit() {
        for source in [
            OwnerSource::Flag,
            OwnerSource::Parent,
            OwnerSource::RosterSessionPid,
            OwnerSource::HarnessExport("CLAUDE_PID"),
            OwnerSource::HarnessExport("OPENCODE_PID"),
            OwnerSource::Ancestor,
        ] {
            let recorded = SessionPidSource::from(source);
            assert_eq!(SessionPidSource::parse(source.as_str()).as_ref(), Ok(&recorded));
        }
    }

    #[test]
    fn a_recorded_time_keeps_its_offset_as_written() {
        let time = RecordedTime::parse(Field::RefreshedAt, "2026-11-30T03:03:05.123456789+01:00").unwrap();
        assert_eq!(time.as_str(), "2026-11-30T03:03:05.123456789+01:00");
        assert_eq!(time.timestamp(), Timestamp::parse("2026-11-30T02:03:05.123456789Z").unwrap());
    }

    #[test]
    fn a_limit_message_never_quotes_the_value() {
        let error = SessionId::parse(&"x".repeat(1 << 20)).unwrap_err();
        assert_eq!(error.to_string(), "session id is 1048576 bytes long, over its limit of 128 bytes");
        let error = AgentName::parse(&"é".repeat(65)).unwrap_err();
        assert_eq!(error.to_string(), "agent is 65 characters long, over its limit of 64 characters");
    }
}
