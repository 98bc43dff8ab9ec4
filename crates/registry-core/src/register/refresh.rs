//! What a registration by hand keeps of what is known of its session
//! (docs/contract.md §6.1): it never drops or replaces a fact it was not
//! given. A refresh keeps each recorded fact no value was given for, and the
//! first registration of a session a harness lists in its own registry
//! (§6.5) takes what that registry says (a hook's payload tells its
//! session's facts afresh). And which facts a refresh changed, which
//! `roster-register` reports.

use std::path::PathBuf;

use crate::record::malformed::FieldError;
use crate::record::session_record::{Record, SocketRecord};
use crate::record::values::{
    HarnessName, HarnessVersion, SessionDirectoryPath, SessionId, SessionPidSource, SocketPath,
    TranscriptPath,
};
use crate::register::Registration;

/// Where the session works, as a registration has it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionDirectory {
    /// Given for this session: `--cwd`, the hook payload's `cwd`, or the
    /// directory a hook runs in (a harness runs its hooks in its session's
    /// directory). Canonical (real) path.
    Given(PathBuf),
    /// Only the directory a registration by hand runs in: a new record
    /// takes it, a refresh keeps the recorded one. Canonical (real) path.
    CurrentDirectory(PathBuf),
}

/// What is known of a session before a registration: the record it
/// refreshes, or what a harness's own registry says of the same owner.
#[derive(Clone, Copy, Debug)]
pub(crate) enum KnownSession<'a> {
    /// Roster's own record of this owner.
    Recorded(&'a Record),
    /// A harness's own claim of this owner (Claude Code's session file),
    /// read as a record; nothing of roster's own (the agent name, how the
    /// owner was found) comes from it.
    ListedByHarness(&'a Record),
}

impl<'a> KnownSession<'a> {
    fn record(self) -> &'a Record {
        match self {
            KnownSession::Recorded(record) | KnownSession::ListedByHarness(record) => record,
        }
    }
}

/// A fact of a record a registration can change; the owner's identity
/// and the times are not among them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordedFact {
    Harness,
    HarnessVersion,
    Agent,
    SessionId,
    TranscriptPath,
    Socket,
    Directory,
    OwnerVerified,
}

impl RecordedFact {
    /// The fact as a report names it.
    pub fn name(self) -> &'static str {
        match self {
            RecordedFact::Harness => "harness",
            RecordedFact::HarnessVersion => "harness version",
            RecordedFact::Agent => "agent",
            RecordedFact::SessionId => "session id",
            RecordedFact::TranscriptPath => "transcript",
            RecordedFact::Socket => "socket",
            RecordedFact::Directory => "directory",
            RecordedFact::OwnerVerified => "owner verification",
        }
    }
}

/// The facts `after` holds otherwise than `before`, in the order a record
/// lists them.
pub fn changed_facts(before: &Record, after: &Record) -> Vec<RecordedFact> {
    let socket_path = |record: &Record| record.socket.as_ref().map(|socket| socket.path.clone());
    [
        (RecordedFact::Harness, before.harness != after.harness),
        (RecordedFact::HarnessVersion, before.harness_version != after.harness_version),
        (RecordedFact::Agent, before.agent != after.agent),
        (RecordedFact::SessionId, before.session_id != after.session_id),
        (RecordedFact::TranscriptPath, before.transcript_path != after.transcript_path),
        // The same socket path captured again is the same socket; a
        // socket replaced at its path (another inode) is a new one.
        (
            RecordedFact::Socket,
            socket_path(before) != socket_path(after)
                || before.socket.as_ref().map(|socket| (socket.dev, socket.ino))
                    != after.socket.as_ref().map(|socket| (socket.dev, socket.ino)),
        ),
        (RecordedFact::Directory, before.cwd != after.cwd),
        (RecordedFact::OwnerVerified, before.session_pid_verified != after.session_pid_verified),
    ]
    .into_iter()
    .filter_map(|(fact, changed)| changed.then_some(fact))
    .collect()
}

/// The facts of a record for `registration`, each the value given, else
/// what is known of the session, else none (the directory: the one the
/// registration runs in).
pub(crate) struct ChosenFacts {
    pub harness: HarnessName,
    pub harness_version: Option<HarnessVersion>,
    pub session_id: Option<SessionId>,
    pub transcript_path: Option<TranscriptPath>,
    pub socket: Option<SocketRecord>,
    pub location: Option<crate::record::location::ScreenLocation>,
    pub cwd: SessionDirectoryPath,
    pub session_pid_source: SessionPidSource,
    pub session_pid_verified: bool,
}

/// Chooses every fact of the record for `registration` (docs/contract.md
/// §6.1). A given value always wins. The harness version goes with its
/// harness, and the transcript with its session id: neither is kept for
/// another one. The owner's verification is kept from roster's own record
/// of the same owner (it proved the owner an ancestor of its registrar
/// once, and the identity proves it is the same process); a harness's
/// claim never verifies an owner.
pub(crate) fn choose_facts(
    registration: &Registration,
    known: Option<KnownSession<'_>>,
) -> Result<ChosenFacts, FieldError> {
    let known_record = known.map(KnownSession::record);
    let harness = match (&registration.harness, known_record) {
        (Some(name), _) => HarnessName::parse(name)?,
        (None, Some(record)) => record.harness.clone(),
        (None, None) => HarnessName::parse("")?,
    };
    let same_harness = known_record.filter(|record| record.harness == harness);
    let harness_version = match &registration.harness_version {
        Some(version) => Some(HarnessVersion::parse(version)?),
        None => same_harness.and_then(|record| record.harness_version.clone()),
    };
    let session_id =
        registration.session_id.clone().or_else(|| known_record.and_then(|record| record.session_id.clone()));
    let same_session = known_record.filter(|record| record.session_id == session_id);
    let transcript_path = match &registration.transcript_path {
        Some(path) => Some(TranscriptPath::parse(path)?),
        None => same_session.and_then(|record| record.transcript_path.clone()),
    };
    let socket = match &registration.socket {
        Some(socket) => Some(SocketRecord {
            path: SocketPath::parse_path(&socket.path)?,
            dev: socket.dev,
            ino: socket.ino,
            mtime_ns: i64::try_from(socket.mtime_ns).unwrap_or(i64::MAX),
        }),
        None => known_record.and_then(|record| record.socket.clone()),
    };
    // Where it shows, as seen now; when nothing was seen (a registration
    // from outside whose owner's environment cannot be read), as recorded.
    let location = match registration.location.as_ref().filter(|location| !location.is_empty()) {
        Some(location) => Some(location.clone()),
        None => known_record.and_then(|record| record.location.clone()),
    };
    let cwd = match (&registration.cwd, known_record) {
        (SessionDirectory::Given(path), _) => SessionDirectoryPath::parse_path(path)?,
        (SessionDirectory::CurrentDirectory(_), Some(record)) => record.cwd.clone(),
        (SessionDirectory::CurrentDirectory(path), None) => SessionDirectoryPath::parse_path(path)?,
    };
    let (session_pid_source, session_pid_verified) = match known {
        Some(KnownSession::Recorded(record))
            if record.session_pid_verified && !registration.session_pid_verified =>
        {
            (record.session_pid_source.clone(), true)
        }
        _ => (registration.session_pid_source.clone(), registration.session_pid_verified),
    };
    Ok(ChosenFacts {
        harness,
        harness_version,
        session_id,
        transcript_path,
        socket,
        location,
        cwd,
        session_pid_source,
        session_pid_verified,
    })
}
