//! A record's keys as read, before the rules of their values are checked:
//! what both readers of a record's bytes produce (the canonical one in
//! `canonical` and serde's in `session_record`), and the format they read.

use crate::record::location::LocationKeys;
use serde::Deserialize;
use serde::de::{self, IgnoredAny, MapAccess};

use crate::record::owner::{KeyName, OwnerKeys, UncheckedOwner, read_once, required};
use crate::record::versioned::Versioned;

/// The record format this roster writes and fully understands. Format 2
/// added `machine` (and start ticks on the initial time namespace's clock
/// wherever `machine` is present); format 1 files are still read.
pub const RECORD_FORMAT: u64 = 2;

/// A record's keys as read, before the rules of their values were checked.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct RecordKeys {
    pub(crate) format: u64,
    pub(crate) owner: UncheckedOwner,
    pub(crate) session_pid_source: String,
    pub(crate) session_pid_verified: bool,
    pub(crate) harness: String,
    pub(crate) harness_version: Option<String>,
    pub(crate) agent: Option<String>,
    pub(crate) session_id: Option<String>,
    pub(crate) transcript_path: Option<String>,
    pub(crate) socket: Option<SocketKeys>,
    pub(crate) location: Option<LocationKeys>,
    pub(crate) cwd: String,
    pub(crate) registrar_pid: u32,
    pub(crate) registered_at: String,
    pub(crate) refreshed_at: String,
}

impl Versioned for RecordKeys {
    fn format(&self) -> u64 {
        self.format
    }
}

/// The `socket` object as read.
#[derive(Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename = "SocketRecord")]
pub(crate) struct SocketKeys {
    pub(crate) path: String,
    pub(crate) dev: u64,
    pub(crate) ino: u64,
    pub(crate) mtime_ns: i64,
}

impl<'de> Deserialize<'de> for RecordKeys {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<RecordKeys, D::Error> {
        deserializer.deserialize_map(RecordVisitor)
    }
}

/// Reads a record's keys as serde's derived reader did: a key given twice
/// or a missing one is refused by name, an unknown one is skipped (a newer
/// roster adds keys only with a higher format).
struct RecordVisitor;

impl<'de> de::Visitor<'de> for RecordVisitor {
    type Value = RecordKeys;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("struct Record")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RecordKeys, A::Error> {
        let mut owner = OwnerKeys::default();
        let mut format = None;
        let mut session_pid_source = None;
        let mut session_pid_verified = None;
        let mut harness = None;
        let mut harness_version: Option<Option<String>> = None;
        let mut agent: Option<Option<String>> = None;
        let mut session_id: Option<Option<String>> = None;
        let mut transcript_path: Option<Option<String>> = None;
        let mut socket: Option<Option<SocketKeys>> = None;
        let mut location: Option<Option<LocationKeys>> = None;
        let mut cwd = None;
        let mut registrar_pid = None;
        let mut registered_at = None;
        let mut refreshed_at = None;
        while let Some(key) = map.next_key::<KeyName<'de>>()? {
            match key.as_str() {
                "format" => read_once(&mut format, "format", &mut map)?,
                "session_pid_source" => read_once(&mut session_pid_source, "session_pid_source", &mut map)?,
                "session_pid_verified" => {
                    read_once(&mut session_pid_verified, "session_pid_verified", &mut map)?
                }
                "harness" => read_once(&mut harness, "harness", &mut map)?,
                "harness_version" => read_once(&mut harness_version, "harness_version", &mut map)?,
                "agent" => read_once(&mut agent, "agent", &mut map)?,
                "session_id" => read_once(&mut session_id, "session_id", &mut map)?,
                "transcript_path" => read_once(&mut transcript_path, "transcript_path", &mut map)?,
                "socket" => read_once(&mut socket, "socket", &mut map)?,
                "location" => read_once(&mut location, "location", &mut map)?,
                "cwd" => read_once(&mut cwd, "cwd", &mut map)?,
                "registrar_pid" => read_once(&mut registrar_pid, "registrar_pid", &mut map)?,
                "registered_at" => read_once(&mut registered_at, "registered_at", &mut map)?,
                "refreshed_at" => read_once(&mut refreshed_at, "refreshed_at", &mut map)?,
                other => {
                    if !owner.read(other, &mut map)? {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
            }
        }
        // Missing keys are named in the file's order, as serde did.
        let format = required(format, "format")?;
        owner.require_pid()?;
        let session_pid_source = required(session_pid_source, "session_pid_source")?;
        let session_pid_verified = required(session_pid_verified, "session_pid_verified")?;
        let owner = owner.finish()?;
        Ok(RecordKeys {
            format,
            owner,
            session_pid_source,
            session_pid_verified,
            harness: required(harness, "harness")?,
            harness_version: harness_version.flatten(),
            agent: agent.flatten(),
            session_id: session_id.flatten(),
            transcript_path: transcript_path.flatten(),
            socket: socket.flatten(),
            location: location.flatten(),
            cwd: required(cwd, "cwd")?,
            registrar_pid: required(registrar_pid, "registrar_pid")?,
            registered_at: required(registered_at, "registered_at")?,
            refreshed_at: required(refreshed_at, "refreshed_at")?,
        })
    }
}
