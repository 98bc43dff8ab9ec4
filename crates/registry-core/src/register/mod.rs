//! Register (docs/contract.md §6.1): write or refresh the calling session's record,
//! keep one live owner per session id without scanning the registry, and
//! reap a small bounded batch of dead records on the way. `precedence`
//! decides which of the values given for a registration it takes, and
//! `refresh` what it keeps of what is known of the session.

pub mod precedence;
pub mod refresh;

use std::path::PathBuf;

use owner_liveness::{Liveness, OwnerIdentity, SocketIdentity, SystemFacts};

use crate::adopted::{AdoptedSource, harness_record_of_owner};
use crate::ended::{HowEnded, keep_ended};
use crate::error::{Error, Result};
use crate::record::keys::RECORD_FORMAT;
use crate::record::name::RecordName;
use crate::record::owner::RecordedOwner;
use crate::record::session_record::{Parsed, Record, continues_chain, parse_record, same_owner};
use crate::record::timestamp::Timestamp;
use crate::record::values::{AgentName, RecordedTime, SessionId, SessionPidSource};
use crate::register::precedence::AgentChoice;
use crate::register::refresh::{KnownSession, RecordedFact, SessionDirectory, changed_facts, choose_facts};
use crate::removal_checks::{dead_for_good, index_entry_of, recheck};
use crate::session_row::{SessionRow, read_listed_session_row, read_session_row};
use crate::store::directory::RosterDir;
use crate::store::files::{MAX_ENTRY_BYTES, read_names_from, remove_entry, write_atomically};
use crate::store::hints::Hint;
use crate::store::layout::REAP_CURSOR_NAME;
use crate::store::lock::RegistryLock;
use crate::store::session_index::{
    indexed_holder, point_index_at, remove_index_entry_if_pointing_at, remove_index_if_pointing_at,
};

/// How many entries one register looks at for reaping, at most. Each is a
/// record (read and judged: about ten system calls), so this bounds what a
/// registration costs beyond its own record whatever the registry's size.
/// The walk ends sooner, at the `REAP_LIVE_JUDGED`th record that is not
/// dead: in a registry of live sessions a registration judges that many
/// neighbours, and dead records, wherever the walk meets them, go a few at
/// a time.
pub const REAP_EXAMINE: usize = 4;
/// How many records that are not dead end a reaping walk. Two, not one: on
/// a file system whose directory positions count entries (ramfs, tmpfs
/// before Linux 6.6), each registration's own record goes to the head of
/// the directory and pushes every other entry one place on, so a walk that
/// moved one place a registration would judge the same live record for
/// good; two always gains on it.
pub const REAP_LIVE_JUDGED: usize = 2;
/// How many dead records one register removes, at most.
pub const REAP_REMOVE: usize = 3;
/// The cursor is written zero-padded to one width (an `i64` has at most 19
/// digits and a sign), so that writers racing without the lock each
/// replace all of it (`Hint::write`).
const CURSOR_WIDTH: usize = 20;

/// Everything a record is made of, already validated. A value that is
/// `None` was not given: a refresh by hand keeps the recorded one
/// (`refresh`).
#[derive(Clone, Debug)]
pub struct Registration {
    pub identity: OwnerIdentity,
    pub session_pid_source: SessionPidSource,
    pub session_pid_verified: bool,
    pub harness: Option<String>,
    pub harness_version: Option<String>,
    pub agent: AgentChoice,
    pub session_id: Option<SessionId>,
    pub transcript_path: Option<String>,
    pub socket: Option<SocketIdentity>,
    /// Where the session shows on screen, from its owner's environment
    /// (empty when it could not be read).
    pub location: Option<crate::record::location::ScreenLocation>,
    pub cwd: SessionDirectory,
    pub registrar_pid: u32,
    pub registrar: Registrar,
    /// The harnesses' own registries of live sessions (§6.5): the first
    /// registration by hand of a session one of them lists takes what it
    /// says there for the facts it is not given.
    pub harness_sessions: Vec<AdoptedSource>,
}

/// Who registers, which decides what a registration keeps of what is known
/// of the session (docs/contract.md §6.1) and whether the session id it
/// gives may take the place of another one (§4.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Registrar {
    /// A person or a script: a refresh keeps each recorded fact it gives
    /// no value for, and a first registration of a session a harness lists
    /// in its own registry takes what that says. What it gives is meant.
    ByHand,
    /// A harness's session-start hook, whose payload and environment tell
    /// the session's facts afresh. `speaks_for_the_session`: whether it
    /// speaks for the session the owner's live record holds (a hook of the
    /// owner's own harness process, as the ancestry shows, or one whose
    /// payload says the conversation restarted in its process: `/clear`,
    /// compaction, a resume), so that a new session id of its may take the
    /// recorded one's place; a hook that shows neither is another session
    /// starting.
    Hook { speaks_for_the_session: bool },
}

/// What register did.
#[derive(Clone, Debug)]
pub struct Registered {
    pub record: Record,
    pub path: PathBuf,
    /// The same owner was registered before: `registered_at` was kept.
    pub refreshed: bool,
    /// The facts the refresh changed (none for a new record), in the order
    /// the record lists them.
    pub changed: Vec<RecordedFact>,
    /// The record this one refreshed.
    pub previous: Option<Record>,
    /// A record of another (dead) process at the same pid was replaced.
    pub replaced_previous_owner: bool,
    /// Pids of dead records removed on the way (the session id's dead
    /// holder, an older roster's record of a dead process at the same pid,
    /// and the opportunistic batch).
    pub reaped: Vec<u32>,
}

/// The record a registration finds at its own name, or at the name an
/// older roster gave its pid, and what it is to this owner.
struct Previous {
    name: RecordName,
    record: Record,
}

/// The record the session-id index names for a session id (an unchecked
/// hint), as read under the registration's lock.
struct IndexedHolder<'a> {
    session_id: &'a SessionId,
    holder: Option<RecordName>,
}

/// Writes the record for `registration` under the lock.
pub fn register(
    roster: &RosterDir,
    registration: &Registration,
    facts: &impl SystemFacts,
) -> Result<Registered> {
    let lock = roster.lock()?;
    // What the index says of the session id given, read once under the
    // lock: only this registration changes the index until it writes its
    // own entry, and a holder named is believed only once its record says
    // so.
    let indexed = registration
        .session_id
        .as_ref()
        .map(|session_id| IndexedHolder { session_id, holder: indexed_holder(roster, session_id) });
    let adopted = continued_session(roster, registration, indexed.as_ref(), facts);
    let registration = adopted.as_ref().unwrap_or(registration);
    let pid = registration.identity.pid;
    // The record's name carries its world: a process with this pid in
    // another pid namespace or on another machine has a name of its own.
    let name = RecordName::of_identity(&registration.identity);
    let file_name = name.file_name();
    let sessions = roster.sessions();
    let now = Timestamp::from_system_time(facts.now());
    let mut reaped = Vec::new();
    // The dead records removed under this lock, kept as ended sessions.
    let mut removed = Vec::new();

    // The record at this name is of this world; one of another process is
    // replaced only once it is provably dead. An older roster's
    // `<pid>.json` may be of any world: it is this owner's own (then this
    // write takes its place), a dead process's (then it goes), or left as
    // it is.
    let at_name = read_record(roster, &file_name);
    let refreshed_here = at_name.as_ref().is_some_and(|record| same_owner(record, &registration.identity));
    if let Some(record) = &at_name
        && !refreshed_here
    {
        refuse_unless_dead(roster, &file_name, record, facts)?;
    }
    let legacy = RecordName::legacy(pid);
    let mut legacy_to_remove = None;
    let mut previous = at_name.map(|record| Previous { name, record });
    if let Some(record) = read_record(roster, &legacy.file_name()) {
        if same_owner(&record, &registration.identity) {
            if !refreshed_here {
                previous = Some(Previous { name: legacy, record });
            }
            legacy_to_remove = Some(legacy);
        } else if let Some(row) = read_session_row(roster, &legacy.file_name(), facts)
            && row.liveness() == Liveness::Dead
            && remove_entry(roster, sessions, &row.file_name)?
        {
            if let Some((key, holder)) = index_entry_of(&row) {
                remove_index_entry_if_pointing_at(roster, &key, holder)?;
            }
            reaped.push(pid.get());
            removed.push(row);
        }
    }
    let refreshed =
        previous.as_ref().is_some_and(|previous| same_owner(&previous.record, &registration.identity));
    let replaced_previous_owner = previous.is_some() && !refreshed;
    let refreshed_record = previous.as_ref().filter(|_| refreshed).map(|previous| &previous.record);
    let record = record_to_write(registration, refreshed_record, now, facts)?;
    if let Some(recorded) = refreshed_record {
        refuse_another_session(roster, &file_name, recorded, &record, registration)?;
    }
    let bytes = record.to_bytes();
    if bytes.len() as u64 > MAX_ENTRY_BYTES {
        return Err(Error::BadInput(format!(
            "the record is {} bytes, over the {MAX_ENTRY_BYTES}-byte limit of a roster file",
            bytes.len()
        )));
    }

    let previous_name = previous.as_ref().map(|previous| previous.name);
    // Removing a dead record above may have removed an index entry too:
    // then the index is read again.
    let still_indexed = indexed.as_ref().filter(|_| removed.is_empty());
    if let Some((holder, row)) =
        take_session_id_from_a_dead_holder(roster, &record, name, previous_name, still_indexed, facts)?
    {
        reaped.push(holder.pid.get());
        removed.push(row);
    }

    write_in_place(roster, &record, &bytes, name, previous.as_ref(), legacy_to_remove)?;
    keep_reaped(roster, &lock, &removed, facts);
    drop(lock);
    reaped.extend(reap_a_few(roster, &file_name, facts));
    let previous = refreshed_record.cloned();
    Ok(Registered {
        path: roster.entry_path(sessions, &file_name),
        changed: previous.as_ref().map(|previous| changed_facts(previous, &record)).unwrap_or_default(),
        previous,
        record,
        refreshed,
        replaced_previous_owner,
        reaped,
    })
}

/// Writes the record at its name, the session-id index pointing at it
/// first; the index entry of an id the previous record held and this one
/// does not goes, and so does this owner's record under an older roster's
/// name, which the one written takes the place of.
fn write_in_place(
    roster: &RosterDir,
    record: &Record,
    bytes: &[u8],
    name: RecordName,
    previous: Option<&Previous>,
    legacy_to_remove: Option<RecordName>,
) -> Result<()> {
    let sessions = roster.sessions();
    if let Some(session_id) = &record.session_id {
        point_index_at(roster, session_id, name)?;
    }
    write_atomically(roster, sessions, &name.file_name(), bytes)?;
    if let Some(previous) = previous
        && let Some(old_id) = &previous.record.session_id
        && Some(old_id) != record.session_id.as_ref()
    {
        remove_index_if_pointing_at(roster, old_id, previous.name)?;
    }
    // This owner's record under an older roster's name: the one just
    // written takes its place.
    if let Some(legacy) = legacy_to_remove {
        remove_entry(roster, sessions, &legacy.file_name())?;
        if let Some(old_id) = read_legacy_session_id(previous, legacy)
            && Some(&old_id) != record.session_id.as_ref()
        {
            remove_index_if_pointing_at(roster, &old_id, legacy)?;
        }
    }
    Ok(())
}

/// The record this registration writes: what it gives, with what is known
/// of its session besides (its record when it refreshes one, else what a
/// harness's own registry says of the same owner, for a registration by
/// hand), checked against every limit a reader holds it to.
fn record_to_write(
    registration: &Registration,
    refreshed_record: Option<&Record>,
    now: Timestamp,
    facts: &impl SystemFacts,
) -> Result<Record> {
    // What is known of the session besides what a registration by hand
    // gives: its record, or for a first registration what a harness's own
    // registry says of the same owner. A hook tells the session afresh.
    let listed_by_harness = match (refreshed_record, registration.registrar) {
        (None, Registrar::ByHand) => {
            harness_record_of_owner(&registration.identity, &registration.harness_sessions, facts)
        }
        _ => None,
    };
    let known = match (refreshed_record, &listed_by_harness, registration.registrar) {
        (_, _, Registrar::Hook { .. }) => None,
        (Some(record), _, Registrar::ByHand) => Some(KnownSession::Recorded(record)),
        (None, Some(record), Registrar::ByHand) => Some(KnownSession::ListedByHarness(record)),
        (None, None, Registrar::ByHand) => None,
    };
    let registered_at = match (refreshed_record, &listed_by_harness) {
        (Some(record), _) => record.registered_at.clone(),
        // The session started when its harness says, not now.
        (None, Some(record)) => record.registered_at.clone(),
        (None, None) => RecordedTime::from(now),
    };

    let agent = match (&registration.agent, refreshed_record) {
        (AgentChoice::Set(name), _) => Some(name.clone()),
        (AgentChoice::Clear, _) => None,
        (AgentChoice::Keep { .. }, Some(record)) => record.agent.clone(),
        (AgentChoice::Keep { default }, None) => default.clone(),
    };
    // The caller checked each value against its limit; this is the promise
    // itself: a record register writes is one list trusts.
    build_record(registration, known, agent, registered_at, now)
        .and_then(|record| record.check_limits().map(|()| record))
        .map_err(|why| Error::BadInput(format!("the record's {why}")))
}

/// One live owner per session id: the record the index names for the new
/// record's session id, when it is another's and still holds that id,
/// refuses the registration while it is not dead, and is removed when it
/// is (its name and row returned).
fn take_session_id_from_a_dead_holder(
    roster: &RosterDir,
    record: &Record,
    name: RecordName,
    previous_name: Option<RecordName>,
    indexed: Option<&IndexedHolder<'_>>,
    facts: &impl SystemFacts,
) -> Result<Option<(RecordName, SessionRow)>> {
    if let Some(session_id) = &record.session_id
        && let Some(holder) = match indexed {
            Some(indexed) if indexed.session_id == session_id => indexed.holder,
            _ => indexed_holder(roster, session_id),
        }
        && holder != name
        && Some(holder) != previous_name
        && let Some(row) = read_session_row(roster, &holder.file_name(), facts)
        && let Some(record) = &row.record
        && record.session_id.as_ref() == Some(session_id)
    {
        if row.liveness() != Liveness::Dead {
            return Err(Error::SessionIdConflict {
                session_id: session_id.as_str().to_owned(),
                holder: holder.pid.get(),
                holder_path: row.path.clone(),
                liveness: row.liveness().to_string(),
                reason: row.verdict.reason.clone(),
            });
        }
        if remove_entry(roster, roster.sessions(), &row.file_name)? {
            return Ok(Some((holder, row)));
        }
    }
    Ok(None)
}

/// The record in `sessions/` under `file_name`, when there is a
/// well-formed one; anything else (nothing, a problem entry) is `None`.
fn read_record(roster: &RosterDir, file_name: &str) -> Option<Record> {
    let name = RecordName::parse_file_name(file_name)?;
    let contents = crate::store::files::read_entry(roster.sessions(), file_name).ok()?;
    match parse_record(&contents.bytes, name.pid) {
        Parsed::Record(record) => Some(*record),
        _ => None,
    }
}

/// Refuses to replace `record`, of another process at the registering
/// owner's own name, unless its verdict is dead: a record that is not
/// provably gone is never overwritten.
fn refuse_unless_dead(
    roster: &RosterDir,
    file_name: &str,
    record: &Record,
    facts: &impl SystemFacts,
) -> Result<()> {
    let verdict = owner_liveness::judge(&record.identity(), record.socket_identity().as_ref(), facts);
    if verdict.liveness == Liveness::Dead {
        return Ok(());
    }
    Err(Error::NotOurs {
        path: roster.entry_path(roster.sessions(), file_name),
        why: format!(
            "holds the record of another process at pid {}, which is {} ({}), not provably gone; \
             it is never replaced: end that session, or remove the file by hand if you know it is over",
            record.pid(),
            verdict.liveness,
            verdict.reason
        ),
    })
}

/// The session id of this owner's record under an older roster's name,
/// when that was the record refreshed.
fn read_legacy_session_id(previous: Option<&Previous>, legacy: RecordName) -> Option<SessionId> {
    previous
        .filter(|previous| previous.name == legacy)
        .and_then(|previous| previous.record.session_id.clone())
}

/// A registration whose owner is a member of the chain of the record that
/// holds its session id, that record not dead: the same session, found
/// again below its exited outer processes (Copilot's native process
/// registering after its loader was killed). It becomes a refresh of that
/// record, which keeps its owner and chain, so the session stays one
/// record and its consent marker stays its own. Found through the session
/// id, so it costs no scan; a registration with a new session id starts
/// a record of its own.
fn continued_session(
    roster: &RosterDir,
    registration: &Registration,
    indexed: Option<&IndexedHolder<'_>>,
    facts: &impl SystemFacts,
) -> Option<Registration> {
    let session_id = registration.session_id.as_ref()?;
    let holder = indexed?.holder?;
    if holder.pid == registration.identity.pid {
        return None;
    }
    let row = read_session_row(roster, &holder.file_name(), facts)?;
    let record = row.record.as_ref()?;
    if record.session_id.as_ref() != Some(session_id)
        || row.liveness() == Liveness::Dead
        || !continues_chain(record, &registration.identity)
    {
        return None;
    }
    Some(Registration {
        identity: record.identity(),
        session_pid_source: record.session_pid_source.clone(),
        session_pid_verified: record.session_pid_verified,
        ..registration.clone()
    })
}

/// Refuses a registration that would put another session id in place of
/// the one `recorded`, this owner's live record, holds, when it does not
/// speak for that session (`Registrar::Hook`): a second conversation
/// registering under the owner of a first one (two sessions started under
/// one wrapper that names itself the owner) must not take its record, and
/// with it the first one's messages (docs/contract.md §4.1).
fn refuse_another_session(
    roster: &RosterDir,
    file_name: &str,
    recorded: &Record,
    record: &Record,
    registration: &Registration,
) -> Result<()> {
    let (Some(held), Some(given)) = (&recorded.session_id, &registration.session_id) else { return Ok(()) };
    let speaks_for_the_session = match registration.registrar {
        Registrar::ByHand => true,
        Registrar::Hook { speaks_for_the_session } => speaks_for_the_session,
    };
    if held == given || speaks_for_the_session {
        return Ok(());
    }
    Err(Error::NotOurs {
        path: roster.entry_path(roster.sessions(), file_name),
        why: format!(
            "holds the live session {held:?} of pid {}; session {given:?} starting under the same owner is \
             another conversation, and no process of the owner's harness says it takes that one's place, so \
             it is not registered there: name each session's own process as its owner (a wrapper that starts \
             several sessions must not export ROSTER_SESSION_PID to them)",
            record.pid()
        ),
    })
}

/// The record of `registration`, its facts chosen by `choose_facts` from
/// what it gives and what is `known` of the session, each checked against
/// its field's limit (the caller checked them already; a value over its
/// limit here is a bug, and bad input rather than a file list would
/// distrust).
fn build_record(
    registration: &Registration,
    known: Option<KnownSession<'_>>,
    agent: Option<AgentName>,
    registered_at: RecordedTime,
    now: Timestamp,
) -> std::result::Result<Record, crate::record::malformed::FieldError> {
    let facts = choose_facts(registration, known)?;
    Ok(Record {
        format: RECORD_FORMAT,
        owner: RecordedOwner::from(&registration.identity),
        cwd: facts.cwd,
        transcript_path: facts.transcript_path,
        socket: facts.socket,
        location: facts.location,
        harness_version: facts.harness_version,
        harness: facts.harness,
        session_pid_source: facts.session_pid_source,
        session_pid_verified: facts.session_pid_verified,
        agent,
        session_id: facts.session_id,
        registrar_pid: registration.registrar_pid,
        registered_at,
        refreshed_at: RecordedTime::from(now),
    })
}

/// Looks at up to `REAP_EXAMINE` entries from where the last register left
/// off, up to and including the `REAP_LIVE_JUDGED`th record that is not
/// dead, and removes up to `REAP_REMOVE` dead records. Best effort: a
/// failure here never fails the registration.
///
/// It runs after the registration let go of the lock, so that the lock is
/// held only for the registration's own record: the entries are read and
/// judged without it, which in a registry of live sessions is all there is
/// to do. Only when one is dead is the lock taken again, and only if it is
/// free at that instant: a registration never waits to reap. The dead
/// records are then re-checked under it the way prune re-checks, and
/// removed. When the lock was not free, the walk stays where it was, so
/// the next registration finds the same dead records again.
fn reap_a_few(roster: &RosterDir, own_record: &str, facts: &impl SystemFacts) -> Vec<u32> {
    let sessions = roster.sessions();
    // `None` when there is none or it cannot be used: the walk starts at the
    // top, and the cursor is written whatever the walk finds.
    let hint = Hint::open(sessions, REAP_CURSOR_NAME);
    let stored_cursor = hint
        .as_ref()
        .and_then(Hint::read)
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .and_then(|text| text.trim().parse::<i64>().ok());
    let cursor = stored_cursor.unwrap_or(0);
    let write_cursor = |at: i64| {
        if let Some(hint) = &hint {
            let _ = hint.write(format!("{at:0CURSOR_WIDTH$}").as_bytes());
        }
    };
    let Ok((entries, next)) = read_names_from(sessions, cursor, REAP_EXAMINE) else {
        // A cursor the directory refuses (say, a negative one) must not stop
        // the walk for good: the next one starts from the top.
        if stored_cursor != Some(0) {
            write_cursor(0);
        }
        return Vec::new();
    };
    let mut dead = Vec::new();
    // Where the next walk starts: after the last entry this one looked at.
    let mut walked_to = None;
    let mut looked_at_all = true;
    let mut not_dead = 0;
    for (entry, after) in &entries {
        if dead.len() == REAP_REMOVE {
            looked_at_all = false;
            break;
        }
        walked_to = Some(*after);
        let Some(name) = entry.name.to_str() else { continue };
        // The record just written is alive by construction: not read again.
        if name == own_record {
            continue;
        }
        let Some((row, stamp)) = read_listed_session_row(roster, name, entry.kind, facts) else { continue };
        if row.record.is_none() || row.file_name == own_record {
            continue;
        }
        if row.liveness() != Liveness::Dead {
            // Records that are not dead end the walk: judging live
            // neighbours is all a registry of live sessions would give it
            // to do.
            not_dead += 1;
            if not_dead == REAP_LIVE_JUDGED {
                looked_at_all = false;
                break;
            }
            continue;
        }
        dead.push((row, stamp));
    }
    let next = if looked_at_all { next.unwrap_or(0) } else { walked_to.unwrap_or(cursor) };
    let move_cursor = || {
        if stored_cursor != Some(next) {
            write_cursor(next);
        }
    };
    if dead.is_empty() {
        move_cursor();
        return Vec::new();
    }
    let Ok(Some(lock)) = roster.lock_if_free() else { return Vec::new() };
    let mut reaped = Vec::new();
    let mut removed = Vec::new();
    for (row, stamp) in dead {
        // Dead is final for an unchanged file: no new process can take
        // over a dead identity. A file replaced meanwhile is judged anew.
        let stamp = stamp.filter(|_| dead_for_good(&row));
        let Some(row) = recheck(roster, row, stamp, facts) else { continue };
        let Some(record) = &row.record else { continue };
        if row.liveness() != Liveness::Dead || row.file_name == own_record {
            continue;
        }
        if remove_entry(roster, sessions, &row.file_name).unwrap_or(false) {
            // An index entry left behind is an orphan prune removes.
            if let Some((key, holder)) = index_entry_of(&row) {
                let _ = remove_index_entry_if_pointing_at(roster, &key, holder);
            }
            reaped.push(record.pid().get());
            removed.push(row);
        }
    }
    keep_reaped(roster, &lock, &removed, facts);
    move_cursor();
    drop(lock);
    reaped
}

/// Keeps an ended-session entry for each dead record a registration
/// removed (docs/contract.md §6.2.1). Best effort, as the reaping itself: a
/// registration never fails for it, and says nothing.
fn keep_reaped(roster: &RosterDir, lock: &RegistryLock, removed: &[SessionRow], facts: &impl SystemFacts) {
    if removed.is_empty() {
        return;
    }
    let this_boot = facts.boot_id().ok();
    let ended: Vec<&SessionRow> = removed.iter().collect();
    let how = |row: &SessionRow| HowEnded::of_removed(row, this_boot.as_deref());
    let _ = keep_ended(roster, lock, &ended, how, Timestamp::from_system_time(facts.now()));
}
