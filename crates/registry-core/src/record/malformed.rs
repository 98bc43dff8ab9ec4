//! Why a roster file (a record, a consent marker) is malformed, as a value:
//! the field and what is wrong with it, so callers can tell problems apart
//! without reading messages. Each displays as the one line `roster-list`
//! and `roster-consent status` show for it. The shape of a field's length
//! limit (`FieldLimit`) is here too, since breaking one is such a problem;
//! the limits themselves are with the field types (`values.rs`).

use std::fmt;

use owner_liveness::{MAX_CHAIN_MEMBERS, Pid};

/// Why a file's bytes are not a valid record or marker.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Malformed {
    #[error("not UTF-8: {0}")]
    NotUtf8(String),
    #[error("no \"format\" key")]
    NoFormat,
    #[error("not a JSON object: {0}")]
    NotAnObject(String),
    /// `format` holds something other than a non-negative integer (the
    /// JSON text of what it holds).
    #[error("\"format\" is {0}, not a positive integer")]
    FormatNotAnInteger(String),
    #[error("\"format\" is {0}; the lowest format is 1")]
    FormatBelowOne(u64),
    /// The JSON does not fit the format: a key missing, repeated or
    /// unknown, or a value of the wrong type; serde's words.
    #[error("{0}")]
    Shape(String),
    /// A value of the right type that breaks its field's rule.
    #[error(transparent)]
    Field(#[from] FieldError),
}

/// A field of a record or marker whose value breaks a rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    pub field: Field,
    pub problem: FieldProblem,
}

/// The fields whose values have rules beyond their JSON type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Field {
    SessionPid,
    Chain,
    BootId,
    Machine,
    Cwd,
    TranscriptPath,
    SocketPath,
    Location,
    HarnessVersion,
    SessionId,
    Agent,
    Harness,
    SessionPidSource,
    RegisteredAt,
    RefreshedAt,
    WrittenAt,
}

/// What is wrong with a field's value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldProblem {
    /// Longer than its `FieldLimit`. The value itself is never kept: it may
    /// be a megabyte long.
    OverLimit {
        length: usize,
        limit: FieldLimit,
    },
    Empty,
    /// A session id character outside printable ASCII, or `/`.
    ForbiddenCharacter {
        value: String,
        character: char,
    },
    ControlCharacter {
        value: String,
    },
    SurroundingWhiteSpace {
        value: String,
    },
    NotAbsolute {
        value: String,
    },
    NotRfc3339 {
        value: String,
    },
    /// A pid of 0 (`session_pid`, or a member of `chain`).
    PidZero,
    /// `session_pid` differs from the pid in the file name.
    NotTheFileName {
        pid: u32,
        file_pid: Pid,
    },
    /// More chain members than are ever recorded.
    TooManyMembers {
        members: usize,
    },
    /// A chain member at the owner's pid or at another member's.
    RepeatedPid {
        pid: u32,
    },
    /// A chain in a marker format older than chains.
    BeforeItsFormat {
        format: u64,
    },
    /// A path that is not valid UTF-8, where a record holds text: a lossy
    /// conversion would name another path.
    NotUtf8,
}

/// The longest value a record field may hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldLimit {
    pub field: Field,
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
    pub(crate) const fn bytes(field: Field, max: usize) -> FieldLimit {
        FieldLimit { field, max, unit: LengthUnit::Bytes }
    }

    pub(crate) const fn characters(field: Field, max: usize) -> FieldLimit {
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
    pub fn check(&self, value: &str) -> Result<(), FieldError> {
        let length = self.length_of(value);
        if length > self.max {
            return Err(FieldError::new(self.field, FieldProblem::OverLimit { length, limit: *self }));
        }
        Ok(())
    }
}

impl Field {
    /// The key in the file (`socket.path` for the socket object's path).
    pub fn key(self) -> &'static str {
        match self {
            Field::SessionPid => "session_pid",
            Field::Chain => "chain",
            Field::BootId => "boot_id",
            Field::Machine => "machine",
            Field::Cwd => "cwd",
            Field::TranscriptPath => "transcript_path",
            Field::SocketPath => "socket.path",
            Field::Location => "location",
            Field::HarnessVersion => "harness_version",
            Field::SessionId => "session_id",
            Field::Agent => "agent",
            Field::Harness => "harness",
            Field::SessionPidSource => "session_pid_source",
            Field::RegisteredAt => "registered_at",
            Field::RefreshedAt => "refreshed_at",
            Field::WrittenAt => "written_at",
        }
    }

    /// The key as messages speak it: spaces for underscores.
    pub fn spoken(self) -> String {
        self.key().replace('_', " ")
    }
}

impl FieldError {
    pub fn new(field: Field, problem: FieldProblem) -> FieldError {
        FieldError { field, problem }
    }
}

impl std::error::Error for FieldError {}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let key = self.field.key();
        match &self.problem {
            FieldProblem::OverLimit { length, limit } => write!(
                f,
                "{} is {length} {unit} long, over its limit of {} {unit}",
                self.field.spoken(),
                limit.max,
                unit = limit.unit_name()
            ),
            FieldProblem::Empty => match self.field {
                Field::SessionId => f.write_str("session id is empty; it must be 1 to 128 characters long"),
                Field::Agent => f.write_str("agent name is empty; it must be 1 to 64 characters long"),
                _ => write!(f, "{key} is empty"),
            },
            FieldProblem::ForbiddenCharacter { value, character } => write!(
                f,
                "{} {value:?} contains {character:?}; only printable ASCII without '/' is allowed",
                self.field.spoken()
            ),
            FieldProblem::ControlCharacter { value } => {
                write!(f, "agent name {value:?} contains a control character")
            }
            FieldProblem::SurroundingWhiteSpace { value } => {
                write!(f, "agent name {value:?} starts or ends with white space")
            }
            FieldProblem::NotAbsolute { value } => write!(f, "{key} {value:?} is not an absolute path"),
            FieldProblem::NotRfc3339 { value } => write!(f, "{key} {value:?} is not an RFC 3339 time"),
            FieldProblem::PidZero if self.field == Field::Chain => f.write_str("chain names pid 0"),
            FieldProblem::PidZero => write!(f, "{key} is 0"),
            FieldProblem::NotTheFileName { pid, file_pid } => {
                write!(f, "{key} {pid} does not match the file name {file_pid}.json")
            }
            FieldProblem::TooManyMembers { members } => write!(
                f,
                "chain has {members} members besides the owner; at most {} are recorded",
                MAX_CHAIN_MEMBERS - 1
            ),
            FieldProblem::RepeatedPid { pid } => write!(f, "chain names pid {pid} twice"),
            FieldProblem::BeforeItsFormat { format } => {
                let came_with = if self.field == Field::Machine { 4 } else { 3 };
                write!(f, "{key} in a format {format} marker; it came with format {came_with}")
            }
            FieldProblem::NotUtf8 => write!(f, "{key} is not valid UTF-8; a record holds it as text"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::values::{AGENT_NAME_LIMIT, SESSION_ID_LIMIT, SOCKET_PATH_LIMIT};

    fn check(field: Field, problem: FieldProblem, expect: &str) {
        assert_eq!(FieldError::new(field, problem).to_string(), expect);
    }

    /// The messages are the ones list and status have always shown.
    #[test]
    fn each_problem_reads_as_before() {
        let over = |length, limit| FieldProblem::OverLimit { length, limit };
        check(
            Field::SessionId,
            over(129, SESSION_ID_LIMIT),
            "session id is 129 bytes long, over its limit of 128 bytes",
        );
        check(
            Field::Agent,
            over(65, AGENT_NAME_LIMIT),
            "agent is 65 characters long, over its limit of 64 characters",
        );
        check(
            Field::SocketPath,
            over(109, SOCKET_PATH_LIMIT),
            "socket.path is 109 bytes long, over its limit of 108 bytes",
        );
        check(
            Field::SessionId,
            FieldProblem::Empty,
            "session id is empty; it must be 1 to 128 characters long",
        );
        check(Field::Agent, FieldProblem::Empty, "agent name is empty; it must be 1 to 64 characters long");
        check(Field::BootId, FieldProblem::Empty, "boot_id is empty");
        check(
            Field::SessionId,
            FieldProblem::ForbiddenCharacter { value: "a/b".into(), character: '/' },
            "session id \"a/b\" contains '/'; only printable ASCII without '/' is allowed",
        );
        check(
            Field::Agent,
            FieldProblem::ControlCharacter { value: "a\nb".into() },
            "agent name \"a\\nb\" contains a control character",
        );
        check(
            Field::Agent,
            FieldProblem::SurroundingWhiteSpace { value: " wren".into() },
            "agent name \" wren\" starts or ends with white space",
        );
        check(
            Field::Cwd,
            FieldProblem::NotAbsolute { value: "x".into() },
            "cwd \"x\" is not an absolute path",
        );
        check(
            Field::RegisteredAt,
            FieldProblem::NotRfc3339 { value: "now".into() },
            "registered_at \"now\" is not an RFC 3339 time",
        );
        check(Field::SessionPid, FieldProblem::PidZero, "session_pid is 0");
        check(Field::Chain, FieldProblem::PidZero, "chain names pid 0");
        check(
            Field::SessionPid,
            FieldProblem::NotTheFileName { pid: 4243, file_pid: Pid::new(4242).unwrap() },
            "session_pid 4243 does not match the file name 4242.json",
        );
        check(
            Field::Chain,
            FieldProblem::TooManyMembers { members: 4 },
            "chain has 4 members besides the owner; at most 3 are recorded",
        );
        check(Field::Chain, FieldProblem::RepeatedPid { pid: 7 }, "chain names pid 7 twice");
        check(
            Field::Chain,
            FieldProblem::BeforeItsFormat { format: 2 },
            "chain in a format 2 marker; it came with format 3",
        );
        check(Field::Cwd, FieldProblem::NotUtf8, "cwd is not valid UTF-8; a record holds it as text");
    }
}
