//! Owner chains: a harness is often several processes in a row (a `node`
//! loader above a native binary, a relaunch), and a signal to one of them
//! may leave the others working. The owner identity therefore records the
//! whole run the ancestor walk found, each member with its own identity, so
//! that the verdict can say alive while any of them still runs.

use crate::identity::{CaptureError, OwnerIdentity, capture_identity};
use crate::pid::Pid;

/// The most processes an owner chain holds: the outermost (the owner whose
/// pid names the record) and at most three below it.
pub const MAX_CHAIN_MEMBERS: usize = 4;

/// One process of an owner chain below the outermost: its own identity.
/// Boot id and namespaces are the owner's (captured by the same registrar).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ChainMember {
    pub pid: Pid,
    /// Owner of `/proc/<pid>` at capture, in the owner's `user_ns`.
    pub uid: u32,
    /// Field 22 of `/proc/<pid>/stat`.
    pub start_ticks: u64,
    /// pidfs inode of a pidfd on the process, where the kernel has pidfs.
    pub pidfs_ino: Option<u64>,
}

impl OwnerIdentity {
    /// The outermost process of the chain as a member (the owner itself).
    pub fn outermost(&self) -> ChainMember {
        ChainMember { pid: self.pid, uid: self.uid, start_ticks: self.start_ticks, pidfs_ino: self.pidfs_ino }
    }

    /// Every member, outermost first, innermost last.
    pub fn members(&self) -> impl Iterator<Item = ChainMember> + '_ {
        std::iter::once(self.outermost()).chain(self.chain.iter().copied())
    }
}

/// Captures the owner `outermost` and the members below it (outermost
/// first). The owner must be running, as for `capture_identity`; a member
/// below it that exited or cannot be read is left out, since a member
/// only ever adds evidence of life and one that cannot be identified
/// proves nothing. Members beyond `MAX_CHAIN_MEMBERS`, repeats and the
/// owner's own pid are left out too.
pub fn capture_owner_chain(outermost: Pid, below: &[Pid]) -> Result<OwnerIdentity, CaptureError> {
    let mut owner = capture_identity(outermost)?;
    for &pid in below {
        if owner.chain.len() + 1 == MAX_CHAIN_MEMBERS {
            break;
        }
        if pid == outermost || owner.chain.iter().any(|member| member.pid == pid) {
            continue;
        }
        let Ok(member) = capture_identity(pid) else { continue };
        // The same registrar read both, so the frames agree; a member in
        // another boot or namespace could not be.
        if (&member.boot_id, member.pid_ns, member.time_ns, member.user_ns)
            != (&owner.boot_id, owner.pid_ns, owner.time_ns, owner.user_ns)
        {
            continue;
        }
        owner.chain.push(member.outermost());
    }
    Ok(owner)
}
