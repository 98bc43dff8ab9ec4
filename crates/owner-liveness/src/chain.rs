//! Owner chains: a harness is often several processes in a row (a `node`
//! loader above a native binary, a relaunch), and a signal to one of them
//! may leave the others working. The owner identity therefore records the
//! whole run the ancestor walk found, each member with its own identity, so
//! that the verdict can say alive while any of them still runs.

use crate::capture::{
    HeldProcess, capture_held_identity_seeing_terminal, capture_identity_seeing_terminal,
    capture_identity_with,
};
use crate::facts::SystemFacts;
use crate::identity::{CaptureError, MAX_CHAIN_MEMBERS, OwnerIdentity};
use crate::pid::Pid;

/// Captures the owner `outermost` and the members below it (outermost
/// first), with the boot id and the capturing process's namespaces as
/// `facts` give them. The owner must be running, as for
/// `capture_identity`; a member below it that exited or cannot be read is
/// left out, since a member only ever adds evidence of life and one that
/// cannot be identified proves nothing. Members beyond
/// `MAX_CHAIN_MEMBERS`, repeats and the owner's own pid are left out too.
pub fn capture_owner_chain(
    outermost: Pid,
    below: &[Pid],
    facts: &impl SystemFacts,
) -> Result<OwnerIdentity, CaptureError> {
    capture_owner_chain_seeing_terminal(outermost, below, facts).map(|(owner, _)| owner)
}

/// `capture_owner_chain`, with the owner's controlling terminal as its
/// stat showed it at the capture (the kernel's `tty_nr`, 0 for none).
pub fn capture_owner_chain_seeing_terminal(
    outermost: Pid,
    below: &[Pid],
    facts: &impl SystemFacts,
) -> Result<(OwnerIdentity, u64), CaptureError> {
    let (owner, terminal) = capture_identity_seeing_terminal(outermost, facts)?;
    Ok((with_members_below(owner, below, facts), terminal))
}

/// `capture_owner_chain_seeing_terminal` of an owner held since its stat
/// was read (`HeldProcess`): that stat is the one recorded.
pub fn capture_held_owner_chain_seeing_terminal(
    outermost: &HeldProcess,
    below: &[Pid],
    facts: &impl SystemFacts,
) -> Result<(OwnerIdentity, u64), CaptureError> {
    let (owner, terminal) = capture_held_identity_seeing_terminal(outermost, facts)?;
    Ok((with_members_below(owner, below, facts), terminal))
}

/// `owner` with the members of its chain among `below` that can be
/// captured, in the same frame.
fn with_members_below(mut owner: OwnerIdentity, below: &[Pid], facts: &impl SystemFacts) -> OwnerIdentity {
    let outermost = owner.pid;
    for &pid in below {
        if owner.chain.len() + 1 == MAX_CHAIN_MEMBERS {
            break;
        }
        if pid == outermost || owner.chain.iter().any(|member| member.pid == pid) {
            continue;
        }
        let Ok(member) = capture_identity_with(pid, facts) else { continue };
        // The same registrar read both, so the frames agree; a member in
        // another boot or namespace could not be.
        if (&member.boot_id, member.pid_ns, member.time_ns, member.user_ns)
            != (&owner.boot_id, owner.pid_ns, owner.time_ns, owner.user_ns)
        {
            continue;
        }
        owner.chain.push(member.outermost());
    }
    owner
}
