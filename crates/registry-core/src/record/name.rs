//! The name of a session's record in `sessions/` and of its consent marker
//! in `consent/` (docs/contract.md §2): the owner pid and the world that pid
//! means something in, `<pid>@<pid_ns>-<boot>.json`, where `<pid_ns>` is
//! the inode of the registrar's pid namespace and `<boot>` the FNV-1a hash
//! of the boot id, in 16 hex digits. One kernel has one boot id (two
//! machines sharing a home have two) and numbers its pid namespaces apart
//! while they live, so two processes with the same pid in two containers
//! or on two machines never share a name: nothing done in one world ever
//! replaces, refreshes or removes another world's record by its name.
//!
//! `<pid>.json`, the name older rosters wrote, is still read (a *legacy*
//! name); its record says its world, and register, prune and consent touch
//! it only when that is their own.

use std::fmt;

use owner_liveness::{OwnerIdentity, Pid, SystemFacts};

use crate::record::stable_hash::fnv1a_64;

/// The world a pid is a pid in: a pid namespace of one boot of one kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct World {
    pub pid_ns: u64,
    /// `fnv1a_64` of the boot id.
    pub boot_hash: u64,
}

impl World {
    pub fn new(pid_ns: u64, boot_id: &str) -> World {
        World { pid_ns, boot_hash: fnv1a_64(boot_id.as_bytes()) }
    }

    /// The world an identity was captured in.
    pub fn of_identity(identity: &OwnerIdentity) -> World {
        World::new(identity.pid_ns, &identity.boot_id)
    }

    /// The world the pids this process reads are in, when its boot id and
    /// pid namespace can be read.
    pub fn of_reader(facts: &impl SystemFacts) -> Option<World> {
        let boot_id = facts.boot_id().ok()?;
        let namespaces = facts.own_namespaces().ok()?;
        Some(World::new(namespaces.pid_ns, &boot_id))
    }

    /// `<pid_ns>-<boot hash>`, as a name carries it.
    fn parse(text: &str) -> Option<World> {
        let (pid_ns, boot) = text.split_once('-')?;
        let pid_ns = canonical_decimal(pid_ns)?;
        if boot.len() != 16 || !boot.bytes().all(|byte| matches!(byte, b'0'..=b'9' | b'a'..=b'f')) {
            return None;
        }
        Some(World { pid_ns, boot_hash: u64::from_str_radix(boot, 16).ok()? })
    }
}

impl fmt::Display for World {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{:016x}", self.pid_ns, self.boot_hash)
    }
}

/// What a record's (or marker's) file is called.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RecordName {
    pub pid: Pid,
    /// `None` for a legacy `<pid>.json`.
    pub world: Option<World>,
}

impl RecordName {
    pub fn new(pid: Pid, world: World) -> RecordName {
        RecordName { pid, world: Some(world) }
    }

    /// The name of the record an identity's registration writes.
    pub fn of_identity(identity: &OwnerIdentity) -> RecordName {
        RecordName::new(identity.pid, World::of_identity(identity))
    }

    /// The name older rosters gave a pid's record.
    pub fn legacy(pid: Pid) -> RecordName {
        RecordName { pid, world: None }
    }

    /// The names a session of `pid` in `world` may have, in the order they
    /// are looked at: this world's, then an older roster's `<pid>.json`.
    pub fn candidates(pid: Pid, world: World) -> [RecordName; 2] {
        [RecordName::new(pid, world), RecordName::legacy(pid)]
    }

    /// The file name: `<stem>.json`.
    pub fn file_name(&self) -> String {
        format!("{self}.json")
    }

    /// The name a file is called by, when it is one roster writes (or
    /// wrote).
    pub fn parse_file_name(name: &str) -> Option<RecordName> {
        RecordName::parse_stem(name.strip_suffix(".json")?)
    }

    /// `<pid>@<world>` or a legacy `<pid>`, as a session-id index entry
    /// names its record.
    pub fn parse_stem(stem: &str) -> Option<RecordName> {
        let (pid, world) = match stem.split_once('@') {
            Some((pid, world)) => (pid, Some(World::parse(world)?)),
            None => (stem, None),
        };
        let pid = Pid::parse_canonical(pid, u32::MAX).ok()?;
        Some(RecordName { pid, world })
    }
}

/// The stem: `<pid>@<world>`, or `<pid>` for a legacy name.
impl fmt::Display for RecordName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.world {
            Some(world) => write!(f, "{}@{world}", self.pid),
            None => write!(f, "{}", self.pid),
        }
    }
}

/// A canonical decimal `u64`: digits only, no sign, no leading zero.
fn canonical_decimal(text: &str) -> Option<u64> {
    let canonical = !text.is_empty()
        && text.bytes().all(|byte| byte.is_ascii_digit())
        && (text == "0" || !text.starts_with('0'));
    canonical.then(|| text.parse().ok()).flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pid(raw: u32) -> Pid {
        Pid::new(raw).unwrap()
    }

    #[test]
    fn names_round_trip_and_carry_their_world() {
        let world = World::new(4026531836, "3d1219c7-c4c5-404a-aa1f-6d2a48adfda4");
        let name = RecordName::new(pid(4711), world);
        let file_name = name.file_name();
        assert!(file_name.starts_with("4711@4026531836-"), "{file_name}");
        assert_eq!(file_name.len(), "4711@4026531836-".len() + 16 + ".json".len());
        assert_eq!(RecordName::parse_file_name(&file_name), Some(name));
        assert_eq!(RecordName::parse_file_name("4711.json"), Some(RecordName::legacy(pid(4711))));
        assert_eq!(RecordName::parse_stem(&name.to_string()), Some(name));
    }

    #[test]
    fn two_worlds_never_share_a_name() {
        let host = World::new(4026531836, "boot-a");
        let container = World::new(4026532200, "boot-a");
        let other_machine = World::new(4026531836, "boot-b");
        let names = [host, container, other_machine].map(|world| RecordName::new(pid(2), world).file_name());
        assert_ne!(names[0], names[1]);
        assert_ne!(names[0], names[2]);
        assert_ne!(names[1], names[2]);
    }

    #[test]
    fn anything_else_is_no_name() {
        for name in [
            "4711",
            "04711.json",
            "4711@.json",
            "4711@4026531836.json",
            "4711@4026531836-.json",
            "4711@04026531836-0123456789abcdef.json",
            "4711@4026531836-0123456789ABCDEF.json",
            "4711@4026531836-0123456789abcde.json",
            "4711@4026531836-0123456789abcdef0.json",
            "4711@4026531836-0123456789abcdef@1.json",
            "0@4026531836-0123456789abcdef.json",
            "-1.json",
            "notes.txt",
        ] {
            assert_eq!(RecordName::parse_file_name(name), None, "{name}");
        }
    }
}
