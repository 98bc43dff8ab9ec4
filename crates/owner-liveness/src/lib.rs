//! owner-liveness answers one question well: is the process that registered
//! a session still the one running at that pid? It captures an owner's
//! identity, walks a process's ancestry, resolves which process owns the
//! calling session, and judges a recorded identity `alive`, `dead` or
//! `unknown` with a reason. It knows nothing of records or files.

mod ancestry;
mod capture;
mod chain;
mod facts;
mod glance;
mod identity;
mod interrupted;
#[cfg(feature = "made-up-facts")]
pub mod made_up_facts;
mod pid;
mod pidfd;
mod proc_read;
mod proc_stat;
mod resolve;
mod verdict;
mod world;

pub use ancestry::{
    ARGV_ENTRIES_KEPT, AncestorStep, AncestryWalk, MAX_ANCESTRY_HOPS, read_step, walk_ancestry,
    walk_ancestry_naming_up_to, walk_ancestry_reporting, walk_ancestry_to,
};
pub use capture::{HeldProcess, capture_identity};
pub use chain::{
    capture_held_owner_chain_seeing_terminal, capture_owner_chain, capture_owner_chain_seeing_terminal,
};
pub use facts::{LinuxFacts, LinuxProcess, OpenProcessError, ProcessFacts, SystemFacts};
pub use glance::ProcGlance;
pub use identity::{
    BOOT_ID_PATH, CaptureError, ChainMember, INITIAL_USER_NAMESPACE, MAX_CHAIN_MEMBERS, Namespaces,
    OwnerIdentity, ProcIdentity, ProcReadError, SocketIdentity, own_namespaces, read_boot_id, read_proc_stat,
    runs_in_initial_user_namespace,
};
pub use interrupted::{MaybeInterrupted, retry_interrupted};
pub use pid::{Pid, PidParseError, kernel_pid_max};
pub use pidfd::PidFd;
pub use proc_stat::{ProcStat, ProcStatParseError, is_kernel_thread, parse_proc_stat, parse_start_ticks};
pub use resolve::{
    HarnessPatterns, OwnerQuery, OwnerSource, PidExport, ROSTER_SESSION_PID, ResolveError, ResolvedOwner,
    resolve_owner,
};
pub use verdict::{
    INITIAL_USER_NS_INODE, Liveness, PIDFS_INODES_ARE_NEVER_REUSED, SeenVerdict, Verdict, judge, judge_now,
    judge_seeing_terminal,
};
pub use world::{MACHINE_LIMIT, USER_HZ, read_boottime_offset_ticks, read_machine};
