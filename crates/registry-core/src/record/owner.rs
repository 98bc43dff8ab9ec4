//! `RecordedOwner`: the owner identity as roster writes it to disk, one type
//! shared by the record, the consent marker and the bench seeder. Its keys
//! (`session_pid`, `owner_uid` … `user_ns`, `chain`) are written and read
//! here and nowhere else, so adding one to the identity touches this file
//! and its tests; the files around it only say where the keys go.

use serde::de::{self, MapAccess};
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize};

use owner_liveness::{ChainMember, MAX_CHAIN_MEMBERS, OwnerIdentity, Pid};

use crate::record::malformed::{Field, FieldError, FieldProblem};
use crate::record::values::{BootId, MachineName, StartTicks};

/// The owner identity as recorded (docs/contract.md §3, §4.2): the
/// outermost process, the frame it was captured in, and the harness
/// processes below it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordedOwner {
    /// `session_pid`: the outermost process, the one the file is named for.
    pub pid: Pid,
    /// `owner_uid`, in the user namespace `user_ns`.
    pub uid: u32,
    pub start_ticks: StartTicks,
    pub pidfs_ino: Option<u64>,
    pub boot_id: BootId,
    pub pid_ns: u64,
    pub time_ns: u64,
    /// The user namespace `uid` is expressed in; absent in files written
    /// before it was recorded.
    pub user_ns: Option<u64>,
    /// The machine the owner was recorded on; absent in files written
    /// before it was recorded, whose start ticks are then on their
    /// registrar's own clock rather than the initial time namespace's.
    pub machine: Option<MachineName>,
    /// The harness processes below the owner, outermost first, innermost
    /// last; empty for a one-process owner and in files written before
    /// chains were recorded (both mean: the owner alone). Valid by
    /// `check_chain`.
    pub chain: Vec<ChainMemberRecord>,
}

/// One entry of a `chain`: a harness process below the owner, with its own
/// identity (docs/contract.md §5). Boot id and namespaces are the owner's.
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

    /// The member as the verdict checks it; `None` for pid 0, which
    /// `check_chain` never lets into a `RecordedOwner`.
    pub fn member(&self) -> Option<ChainMember> {
        Some(ChainMember {
            pid: Pid::new(self.pid)?,
            uid: self.owner_uid,
            start_ticks: self.start_ticks,
            pidfs_ino: self.pidfs_ino,
        })
    }
}

/// A `chain` must name distinct non-zero pids other than the owner's, at
/// most `MAX_CHAIN_MEMBERS - 1` of them.
pub fn check_chain(session_pid: u32, chain: &[ChainMemberRecord]) -> Result<(), FieldError> {
    let problem = |problem| Err(FieldError::new(Field::Chain, problem));
    if chain.len() >= MAX_CHAIN_MEMBERS {
        return problem(FieldProblem::TooManyMembers { members: chain.len() });
    }
    for (index, member) in chain.iter().enumerate() {
        if member.pid == 0 {
            return problem(FieldProblem::PidZero);
        }
        if member.pid == session_pid || chain[..index].iter().any(|other| other.pid == member.pid) {
            return problem(FieldProblem::RepeatedPid { pid: member.pid });
        }
    }
    Ok(())
}

/// A file's `session_pid` must be non-zero and equal the pid in its name.
pub fn check_session_pid(session_pid: u32, file_pid: Pid) -> Result<(), FieldError> {
    let problem = |problem| Err(FieldError::new(Field::SessionPid, problem));
    if session_pid == 0 {
        return problem(FieldProblem::PidZero);
    }
    if session_pid != file_pid.get() {
        return problem(FieldProblem::NotTheFileName { pid: session_pid, file_pid });
    }
    Ok(())
}

impl From<&OwnerIdentity> for RecordedOwner {
    fn from(identity: &OwnerIdentity) -> RecordedOwner {
        RecordedOwner {
            pid: identity.pid,
            uid: identity.uid,
            start_ticks: StartTicks(identity.start_ticks),
            pidfs_ino: identity.pidfs_ino,
            boot_id: BootId::from_kernel(&identity.boot_id),
            pid_ns: identity.pid_ns,
            time_ns: identity.time_ns,
            user_ns: identity.user_ns,
            machine: identity.machine.as_deref().map(MachineName::from_capture),
            chain: identity.chain.iter().map(ChainMemberRecord::from_member).collect(),
        }
    }
}

impl RecordedOwner {
    /// The owner identity the verdict checks.
    pub fn identity(&self) -> OwnerIdentity {
        OwnerIdentity {
            pid: self.pid,
            uid: self.uid,
            start_ticks: self.start_ticks.get(),
            pidfs_ino: self.pidfs_ino,
            boot_id: self.boot_id.as_str().to_owned(),
            pid_ns: self.pid_ns,
            time_ns: self.time_ns,
            user_ns: self.user_ns,
            machine: self.machine.as_ref().map(|machine| machine.as_str().to_owned()),
            chain: self.chain.iter().filter_map(ChainMemberRecord::member).collect(),
        }
    }

    /// Whether a registration's `identity` is this owner (a refresh, not a
    /// new owner): the same outermost process. The chain below it may
    /// differ from the recorded one (a member exited, a relaunch added one)
    /// and the session is still the same.
    pub fn is_same_owner(&self, identity: &OwnerIdentity) -> bool {
        self.same_frame(identity)
            && self.same_process(&self.identity().outermost(), identity, &identity.outermost())
    }

    /// Whether `identity`'s owner is one of the recorded chain's members
    /// below the owner: the same session, found again after its outer
    /// processes exited.
    pub fn is_continued_by(&self, identity: &OwnerIdentity) -> bool {
        self.same_frame(identity)
            && self
                .chain
                .iter()
                .filter_map(ChainMemberRecord::member)
                .any(|member| self.same_process(&member, identity, &identity.outermost()))
    }

    /// The same boot and pid namespace. Start ticks recorded with a
    /// machine are on the initial time namespace's clock, like every
    /// capture's now, so a registration from inside a time namespace is
    /// the same frame; a file written before then compares only within
    /// its own time namespace.
    fn same_frame(&self, identity: &OwnerIdentity) -> bool {
        self.boot_id.as_str() == identity.boot_id
            && self.pid_ns == identity.pid_ns
            && (self.machine.is_some() || self.time_ns == identity.time_ns)
    }

    /// Whether a recorded member and a captured one are the same process,
    /// in frames already known to agree (boot and pid namespace).
    fn same_process(&self, recorded: &ChainMember, identity: &OwnerIdentity, member: &ChainMember) -> bool {
        let pidfs_agrees = match (recorded.pidfs_ino, member.pidfs_ino) {
            // Where the kernel never hands a pidfs inode out twice in a
            // boot, an agreeing one is the very process whatever the rest
            // shows (a uid it changed, a start tick a time namespace
            // offset rounded).
            (Some(a), Some(b)) if a == b && owner_liveness::PIDFS_INODES_ARE_NEVER_REUSED => {
                return recorded.pid == member.pid;
            }
            (Some(a), Some(b)) => a == b,
            _ => true,
        };
        // A uid means something only beside another from the same user
        // namespace; a sandboxed registrar sees the owner's uid translated.
        let uid_agrees = match (self.user_ns, identity.user_ns) {
            (Some(a), Some(b)) if a != b => true,
            _ => recorded.uid == member.uid,
        };
        recorded.pid == member.pid && recorded.start_ticks == member.start_ticks && uid_agrees && pidfs_agrees
    }

    /// Writes `session_pid`; the file decides where it goes.
    pub fn write_pid<M: SerializeMap>(&self, map: &mut M) -> Result<(), M::Error> {
        map.serialize_entry(OwnerKeys::SESSION_PID, &self.pid.get())
    }

    /// Writes the identity's keys after `session_pid`, in file order:
    /// `owner_uid`, `start_ticks`, `pidfs_ino` (when known), `boot_id`,
    /// `pid_ns`, `time_ns`, `user_ns` (when known).
    pub fn write_identity<M: SerializeMap>(&self, map: &mut M) -> Result<(), M::Error> {
        write_identity_keys(Some(self), map, AbsentKeys::Omitted)
    }

    /// Writes `chain`, absent for an owner alone.
    pub fn write_chain<M: SerializeMap>(&self, map: &mut M) -> Result<(), M::Error> {
        write_chain_key(Some(self), map, AbsentKeys::Omitted)
    }
}

/// How keys without a value are written: left out (a file) or as `null`
/// (a listing's row, which carries every key, docs/contract.md §6.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AbsentKeys {
    Omitted,
    Null,
}

fn write_entry<M: SerializeMap, T: Serialize>(
    map: &mut M,
    key: &'static str,
    value: Option<T>,
    absent: AbsentKeys,
) -> Result<(), M::Error> {
    match (value, absent) {
        (Some(value), _) => map.serialize_entry(key, &value),
        (None, AbsentKeys::Omitted) => Ok(()),
        (None, AbsentKeys::Null) => map.serialize_entry(key, &Option::<()>::None),
    }
}

/// The identity's keys after `session_pid` (`RecordedOwner::write_identity`)
/// of `owner`, or of no owner (a listed row that is not a record).
pub fn write_identity_keys<M: SerializeMap>(
    owner: Option<&RecordedOwner>,
    map: &mut M,
    absent: AbsentKeys,
) -> Result<(), M::Error> {
    write_entry(map, OwnerKeys::OWNER_UID, owner.map(|owner| owner.uid), absent)?;
    write_entry(map, OwnerKeys::START_TICKS, owner.map(|owner| owner.start_ticks), absent)?;
    write_entry(map, OwnerKeys::PIDFS_INO, owner.and_then(|owner| owner.pidfs_ino), absent)?;
    write_entry(map, OwnerKeys::BOOT_ID, owner.map(|owner| &owner.boot_id), absent)?;
    write_entry(map, OwnerKeys::PID_NS, owner.map(|owner| owner.pid_ns), absent)?;
    write_entry(map, OwnerKeys::TIME_NS, owner.map(|owner| owner.time_ns), absent)?;
    write_entry(map, OwnerKeys::USER_NS, owner.and_then(|owner| owner.user_ns), absent)?;
    write_entry(map, OwnerKeys::MACHINE, owner.and_then(|owner| owner.machine.as_ref()), absent)
}

/// The `chain` key of `owner`: absent (or `null`) for an owner alone.
pub fn write_chain_key<M: SerializeMap>(
    owner: Option<&RecordedOwner>,
    map: &mut M,
    absent: AbsentKeys,
) -> Result<(), M::Error> {
    let chain = owner.map(|owner| owner.chain.as_slice()).filter(|chain| !chain.is_empty());
    write_entry(map, OwnerKeys::CHAIN, chain, absent)
}

/// The key lists `parts` joined into one, at compile time: a list that
/// holds the owner's keys among others (a listing's row) names them
/// through `OwnerKeys` rather than spelling them again.
pub(crate) const fn concat_keys<const N: usize>(parts: &[&[&'static str]]) -> [&'static str; N] {
    let mut keys = [""; N];
    let mut filled = 0;
    let mut part = 0;
    while part < parts.len() {
        let mut index = 0;
        while index < parts[part].len() {
            keys[filled] = parts[part][index];
            filled += 1;
            index += 1;
        }
        part += 1;
    }
    assert!(filled == N, "the parts do not fill the list");
    keys
}

/// The owner's keys of a file being read, as serde hands them over: the
/// reading side of `write_pid`, `write_identity` and `write_chain`. A
/// file's reader offers it each key; the ones it takes are the owner's.
#[derive(Debug, Default)]
pub struct OwnerKeys {
    session_pid: Option<u32>,
    owner_uid: Option<u32>,
    start_ticks: Option<u64>,
    pidfs_ino: Option<Option<u64>>,
    boot_id: Option<String>,
    pid_ns: Option<u64>,
    time_ns: Option<u64>,
    user_ns: Option<Option<u64>>,
    machine: Option<Option<String>>,
    chain: Option<Vec<ChainMemberRecord>>,
}

/// The owner's keys as read, before their rules were checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UncheckedOwner {
    pub session_pid: u32,
    pub(crate) owner_uid: u32,
    pub(crate) start_ticks: u64,
    pub(crate) pidfs_ino: Option<u64>,
    pub(crate) boot_id: String,
    pub(crate) pid_ns: u64,
    pub(crate) time_ns: u64,
    pub(crate) user_ns: Option<u64>,
    pub machine: Option<String>,
    pub chain: Vec<ChainMemberRecord>,
}

/// A key of a file being read, borrowed from the file's text where it has
/// no escapes: a listing reads twenty keys of every record, and serde's
/// derived readers allocate none for them either.
pub struct KeyName<'de>(std::borrow::Cow<'de, str>);

impl KeyName<'_> {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl<'de> Deserialize<'de> for KeyName<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<KeyName<'de>, D::Error> {
        struct Visitor;
        impl<'de> de::Visitor<'de> for Visitor {
            type Value = KeyName<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E: de::Error>(self, key: &'de str) -> Result<KeyName<'de>, E> {
                Ok(KeyName(std::borrow::Cow::Borrowed(key)))
            }
            fn visit_str<E: de::Error>(self, key: &str) -> Result<KeyName<'de>, E> {
                Ok(KeyName(std::borrow::Cow::Owned(key.to_owned())))
            }
        }
        deserializer.deserialize_str(Visitor)
    }
}

/// Fills `slot` with the next value, refusing a key given twice as serde
/// does.
pub fn read_once<'de, A: MapAccess<'de>, T: Deserialize<'de>>(
    slot: &mut Option<T>,
    key: &'static str,
    map: &mut A,
) -> Result<(), A::Error> {
    if slot.is_some() {
        return Err(de::Error::duplicate_field(key));
    }
    *slot = Some(map.next_value()?);
    Ok(())
}

/// The value of a key that must be present.
pub fn required<T, E: de::Error>(slot: Option<T>, key: &'static str) -> Result<T, E> {
    slot.ok_or_else(|| E::missing_field(key))
}

impl OwnerKeys {
    /// The owner's keys, each spelled here once: the record, the consent
    /// marker and the listing's row write and read them by these names.
    pub const SESSION_PID: &'static str = "session_pid";
    pub const OWNER_UID: &'static str = "owner_uid";
    pub const START_TICKS: &'static str = "start_ticks";
    pub const PIDFS_INO: &'static str = "pidfs_ino";
    pub const BOOT_ID: &'static str = "boot_id";
    pub const PID_NS: &'static str = "pid_ns";
    pub const TIME_NS: &'static str = "time_ns";
    pub const USER_NS: &'static str = "user_ns";
    pub const MACHINE: &'static str = "machine";
    pub const CHAIN: &'static str = "chain";

    /// The identity's keys after `session_pid`, in file order
    /// (`RecordedOwner::write_identity`).
    pub const IDENTITY: [&'static str; 8] = [
        Self::OWNER_UID,
        Self::START_TICKS,
        Self::PIDFS_INO,
        Self::BOOT_ID,
        Self::PID_NS,
        Self::TIME_NS,
        Self::USER_NS,
        Self::MACHINE,
    ];

    /// The keys, in file order (the marker names them when it refuses an
    /// unknown one).
    pub const KEYS: [&'static str; 10] =
        concat_keys(&[&[Self::SESSION_PID], &Self::IDENTITY, &[Self::CHAIN]]);

    /// Reads the value of `key` when it is one of the owner's: `Ok(true)`
    /// when taken, `Ok(false)` when the key is not the owner's.
    pub fn read<'de, A: MapAccess<'de>>(&mut self, key: &str, map: &mut A) -> Result<bool, A::Error> {
        match key {
            Self::SESSION_PID => read_once(&mut self.session_pid, Self::SESSION_PID, map)?,
            Self::OWNER_UID => read_once(&mut self.owner_uid, Self::OWNER_UID, map)?,
            Self::START_TICKS => read_once(&mut self.start_ticks, Self::START_TICKS, map)?,
            Self::PIDFS_INO => read_once(&mut self.pidfs_ino, Self::PIDFS_INO, map)?,
            Self::BOOT_ID => read_once(&mut self.boot_id, Self::BOOT_ID, map)?,
            Self::PID_NS => read_once(&mut self.pid_ns, Self::PID_NS, map)?,
            Self::TIME_NS => read_once(&mut self.time_ns, Self::TIME_NS, map)?,
            Self::USER_NS => read_once(&mut self.user_ns, Self::USER_NS, map)?,
            Self::MACHINE => read_once(&mut self.machine, Self::MACHINE, map)?,
            Self::CHAIN => read_once(&mut self.chain, Self::CHAIN, map)?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Refuses a file without `session_pid`. Files declare it before their
    /// other keys, so a missing one is named first.
    pub fn require_pid<E: de::Error>(&self) -> Result<(), E> {
        required(self.session_pid, Self::SESSION_PID).map(|_| ())
    }

    /// The keys read, refusing a missing one by name (in file order).
    pub fn finish<E: de::Error>(self) -> Result<UncheckedOwner, E> {
        Ok(UncheckedOwner {
            session_pid: required(self.session_pid, Self::SESSION_PID)?,
            owner_uid: required(self.owner_uid, Self::OWNER_UID)?,
            start_ticks: required(self.start_ticks, Self::START_TICKS)?,
            pidfs_ino: self.pidfs_ino.flatten(),
            boot_id: required(self.boot_id, Self::BOOT_ID)?,
            pid_ns: required(self.pid_ns, Self::PID_NS)?,
            time_ns: required(self.time_ns, Self::TIME_NS)?,
            user_ns: self.user_ns.flatten(),
            machine: self.machine.flatten(),
            chain: self.chain.unwrap_or_default(),
        })
    }
}

impl UncheckedOwner {
    /// The owner, once its rules hold: `session_pid` non-zero and the
    /// file's, `chain` valid, `boot_id` non-empty and within its limit.
    /// Files check the rules one by one where their other checks interleave
    /// (`check_pid`, `check_chain`), then call this.
    pub fn check(self, file_pid: Pid) -> Result<RecordedOwner, FieldError> {
        self.check_pid(file_pid)?;
        self.check_chain()?;
        Ok(RecordedOwner {
            pid: file_pid,
            uid: self.owner_uid,
            start_ticks: StartTicks(self.start_ticks),
            pidfs_ino: self.pidfs_ino,
            boot_id: BootId::parse_owned(self.boot_id)?,
            pid_ns: self.pid_ns,
            time_ns: self.time_ns,
            user_ns: self.user_ns,
            machine: self.machine.map(MachineName::parse_owned).transpose()?,
            chain: self.chain,
        })
    }

    pub fn check_pid(&self, file_pid: Pid) -> Result<(), FieldError> {
        check_session_pid(self.session_pid, file_pid)
    }

    pub fn check_chain(&self) -> Result<(), FieldError> {
        check_chain(self.session_pid, &self.chain)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn identity() -> OwnerIdentity {
        OwnerIdentity {
            pid: Pid::new(4242).unwrap(),
            uid: 1000,
            start_ticks: 870,
            pidfs_ino: Some(12345),
            boot_id: "0f0e0d0c-0b0a-0908-0706-050403020100".into(),
            pid_ns: 4026531836,
            time_ns: 4026531834,
            user_ns: Some(4026531837),
            machine: Some("machine-id:3d1219c7c4c5404aaa1f6d2a48adfda4".into()),
            chain: vec![ChainMember {
                pid: Pid::new(4250).unwrap(),
                uid: 1000,
                start_ticks: 871,
                pidfs_ino: Some(14250),
            }],
        }
    }

    #[test]
    fn an_identity_is_recorded_and_read_back_whole() {
        let identity = identity();
        assert_eq!(RecordedOwner::from(&identity).identity(), identity);
        let alone =
            OwnerIdentity { chain: Vec::new(), pidfs_ino: None, user_ns: None, machine: None, ..identity };
        assert_eq!(RecordedOwner::from(&alone).identity(), alone);
    }

    /// Every key the owner writes is one it reads, in the order `KEYS` says.
    #[test]
    fn the_keys_written_are_the_keys_read() {
        struct Keys<'a>(&'a RecordedOwner);
        impl Serialize for Keys<'_> {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let mut map = serializer.serialize_map(None)?;
                self.0.write_pid(&mut map)?;
                self.0.write_identity(&mut map)?;
                self.0.write_chain(&mut map)?;
                map.end()
            }
        }
        let owner = RecordedOwner::from(&identity());
        let value = serde_json::to_value(Keys(&owner)).unwrap();
        let written: Vec<&str> = value.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(written, OwnerKeys::KEYS);

        struct Read(UncheckedOwner);
        impl<'de> Deserialize<'de> for Read {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Read, D::Error> {
                struct Visitor;
                impl<'de> de::Visitor<'de> for Visitor {
                    type Value = Read;
                    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                        f.write_str("an owner")
                    }
                    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Read, A::Error> {
                        let mut keys = OwnerKeys::default();
                        while let Some(key) = map.next_key::<KeyName<'de>>()? {
                            assert!(keys.read(key.as_str(), &mut map)?, "{} not read", key.as_str());
                        }
                        keys.finish().map(Read)
                    }
                }
                deserializer.deserialize_map(Visitor)
            }
        }
        let read: Read = serde_json::from_value(value).unwrap();
        assert_eq!(read.0.check(owner.pid).unwrap(), owner);
    }
}
