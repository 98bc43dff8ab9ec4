//! Finding the calling session's owner from the real process: the glue
//! between the pure resolution of owner-liveness (docs/contract.md §4.1), the harness
//! patterns, the environment and `/proc`. Register, consent and
//! `prune --current` all resolve the owner this one way.

use owner_liveness::{
    AncestorStep, AncestryWalk, CaptureError, HeldProcess, OwnerIdentity, OwnerQuery, OwnerSource, Pid,
    ResolveError, ResolvedOwner, SystemFacts, capture_owner_chain, is_kernel_thread, kernel_pid_max,
    resolve_owner, walk_ancestry_naming_up_to, walk_ancestry_reporting, walk_ancestry_to,
};

use crate::args::CommonArgs;
use crate::process_env::{process_env, process_env_os};
use crate::roster::{open_roster_for_reading, roster_directory_choice};

/// The owner and the ancestry it was found in.
#[derive(Clone, Debug)]
pub struct CallingOwner {
    pub resolved: ResolvedOwner,
    /// The caller's ancestry, caller first.
    pub ancestry: Vec<AncestorStep>,
    /// Why the ancestry walk stopped short, when a `/proc` read failed: an
    /// owner not found among the ancestors may then be one all the same.
    pub ancestry_unreadable: Option<String>,
    /// The process `--pid` named, held since its stat was read: when it is
    /// the owner, its capture records that stat rather than reading another.
    pub named: Option<std::sync::Arc<HeldProcess>>,
}

impl CallingOwner {
    /// Captures the owner's identity with every member of its chain (the
    /// harness processes below it among the caller's ancestors), which
    /// register and consent record so that the session lives while any of
    /// them runs. The owner must be running; a member that cannot be
    /// captured is left out. The boot id and this process's namespaces
    /// come from `facts`, the same the command then judges records with.
    pub fn capture_identity(&self, facts: &impl SystemFacts) -> Result<OwnerIdentity, CaptureError> {
        capture_owner_chain(self.resolved.pid, &self.resolved.chain, facts)
    }

    /// `capture_identity`, with the owner's controlling terminal as the
    /// capture saw it (the kernel's `tty_nr`, 0 for none): what a record
    /// of where the session shows starts from.
    pub fn capture_identity_seeing_terminal(
        &self,
        facts: &impl SystemFacts,
    ) -> Result<(OwnerIdentity, u64), CaptureError> {
        match &self.named {
            Some(named) if named.pid() == self.resolved.pid => {
                owner_liveness::capture_held_owner_chain_seeing_terminal(named, &self.resolved.chain, facts)
            }
            _ => owner_liveness::capture_owner_chain_seeing_terminal(
                self.resolved.pid,
                &self.resolved.chain,
                facts,
            ),
        }
    }
}

/// Resolves the owner of the calling session (`--pid` value, if given).
pub fn resolve_calling_owner(pid_flag: Option<&str>) -> Result<CallingOwner, ResolveError> {
    let Some(named) = named_by_flag(pid_flag) else {
        return resolve_calling_owner_walked(pid_flag, own_ancestry(), None);
    };
    // The named process, held by a pidfd and its stat read once: its start
    // ends the walk where it can no longer be above (for a process that is
    // no ancestor, the first ancestor that started before it), it tells a
    // kernel thread, that it runs at all proves the pid a valid one, and
    // its capture records the same stat.
    let held = HeldProcess::open(named).ok().map(std::sync::Arc::new);
    // Resolution asks about the named process and the run below it only:
    // the argv and exe of the ancestors above it (all of them, when it is
    // no ancestor) are read only if something asks.
    let me = Pid::new(std::process::id()).expect("a running process has a non-zero pid");
    let walk = walk_ancestry_naming_up_to(me, named, held.as_ref().map(|held| held.stat().start_ticks));
    let mut owner =
        resolve_calling_owner_walked(pid_flag, walk, held.as_deref().map(|held| (named, held.stat())))?;
    owner.named = held;
    Ok(owner)
}

/// `resolve_calling_owner` for a caller that asks about every ancestor
/// (a hook that recognises its harness from them): the argv and exe of each
/// are read as the walk reaches it, also when `--pid` names the owner.
pub fn resolve_calling_owner_naming_every_ancestor(
    pid_flag: Option<&str>,
) -> Result<CallingOwner, ResolveError> {
    resolve_calling_owner_walked(pid_flag, own_ancestry(), None)
}

/// The process a `--pid` value names (a pid, or `parent`), when it is
/// one; an invalid value is resolution's to refuse.
fn named_by_flag(pid_flag: Option<&str>) -> Option<Pid> {
    match pid_flag? {
        "parent" => u32::try_from(nix::unistd::getppid().as_raw()).ok().and_then(Pid::new),
        value => value.parse::<u32>().ok().and_then(Pid::new),
    }
}

/// This process's ancestry, itself first: what `resolve_calling_owner` and
/// `runs_inside_session` walk, for a caller that asks both.
pub fn own_ancestry() -> AncestryWalk {
    let me = Pid::new(std::process::id()).expect("a running process has a non-zero pid");
    walk_ancestry_reporting(me)
}

/// `own_ancestry` for a caller that asks about one process, `named`, and
/// the run below it only (whether this process runs inside its session,
/// and who owns that session): the walk ends at `named`, and reads the
/// argv and exe of a step only when asked (`walk_ancestry_to`).
pub fn own_ancestry_up_to(named: Pid) -> AncestryWalk {
    let me = Pid::new(std::process::id()).expect("a running process has a non-zero pid");
    walk_ancestry_to(me, named)
}

/// `resolve_calling_owner` over `walk`, this process's ancestry as
/// `own_ancestry` read it; `named_stat` is the stat of the process the
/// flag names, when it was read (and the process runs).
fn resolve_calling_owner_walked(
    pid_flag: Option<&str>,
    walk: AncestryWalk,
    named_stat: Option<(Pid, &owner_liveness::ProcStat)>,
) -> Result<CallingOwner, ResolveError> {
    let me = Pid::new(std::process::id()).expect("a running process has a non-zero pid");
    let ancestry = walk.steps;
    let parent_raw = nix::unistd::getppid().as_raw();
    // A process whose parent is outside its pid namespace sees ppid 0; it
    // has no usable parent, so `--pid parent` names itself's nearest
    // visible ancestor: itself.
    let parent = u32::try_from(parent_raw).ok().and_then(Pid::new).unwrap_or(me);
    let query = OwnerQuery {
        flag: pid_flag,
        env: &process_env,
        parent,
        ancestry: &ancestry,
        // A pid a process runs at is one the kernel gave out: no need to
        // hold it to `pid_max`.
        pid_max: match named_stat {
            Some(_) => u32::MAX,
            None => kernel_pid_max(),
        },
    };
    let resolved = resolve_owner(&query, &harness::HarnessTable)?;
    let kernel_thread = match &named_stat {
        Some((named, stat)) if *named == resolved.pid => stat.is_kernel_thread(),
        _ => is_kernel_thread(resolved.pid),
    };
    if kernel_thread {
        let named_by = match resolved.source {
            OwnerSource::Flag => "--pid",
            other => other.as_str(),
        };
        return Err(ResolveError::NotAnOwner { named_by, pid: resolved.pid, what: "a kernel thread" });
    }
    Ok(CallingOwner { resolved, ancestry, ancestry_unreadable: walk.unreadable, named: None })
}

/// `resolve_calling_owner_walked` of `--pid PID` for the owner of a live
/// session's record (its row judged alive a moment ago): that pid was held
/// to `pid_max` and refused as a kernel thread when it was registered, so
/// neither is read again. The verdict proved it is still that process, or,
/// for a record with a chain, that another member of it runs; either way
/// the consent decision then holds the record to the owner captured now
/// (`same_owner`), so a pid reused since (by anything, a kernel thread
/// too) leaves it undecided, never open.
fn resolve_recorded_owner_walked(pid: Pid, walk: AncestryWalk) -> Result<CallingOwner, ResolveError> {
    let ancestry = walk.steps;
    let flag = pid.to_string();
    let query = OwnerQuery {
        flag: Some(&flag),
        env: &process_env,
        // Asked only for `--pid parent`.
        parent: pid,
        ancestry: &ancestry,
        pid_max: u32::MAX,
    };
    let resolved = resolve_owner(&query, &harness::HarnessTable)?;
    Ok(CallingOwner { resolved, ancestry, ancestry_unreadable: walk.unreadable, named: None })
}

/// Resolves the calling session's owner as `resolve_calling_owner` does,
/// and when nothing names it and no harness process is among the
/// ancestors, takes the nearest ancestor that owns a live session in the
/// registry `common` names: a shell registered by hand (`roster-register
/// --pid $$`) is the session of the commands run in it, as it is for
/// `roster-send`'s sender, without `--pid parent`. Found so, the owner is
/// an ancestor (`OwnerSource::Ancestor`, verified).
pub fn resolve_calling_session_owner(
    common: &CommonArgs,
    pid_flag: Option<&str>,
    facts: &impl SystemFacts,
) -> Result<CallingOwner, ResolveError> {
    let not_found = match resolve_calling_owner(pid_flag) {
        Err(ResolveError::NotFound) => ResolveError::NotFound,
        other => return other,
    };
    let Ok(Some(roster)) = open_roster_for_reading(common) else { return Err(not_found) };
    let me = Pid::new(std::process::id()).expect("a running process has a non-zero pid");
    let registered_ancestor =
        walk_ancestry_reporting(me).steps.iter().skip(1).map(|step| step.pid).find(|pid| {
            registry_core::find_session_row(&roster, *pid, facts)
                .is_some_and(|row| row.record.is_some() && row.liveness() == owner_liveness::Liveness::Alive)
        });
    let Some(pid) = registered_ancestor else { return Err(not_found) };
    let mut owner = resolve_calling_owner(Some(&pid.to_string()))?;
    owner.resolved.source = OwnerSource::Ancestor;
    Ok(owner)
}

/// Whether this process runs inside the session whose owner is `owner`:
/// `owner` is this process or one of its ancestors now. What proves that
/// a hook is its session's own, or that a sender speaks for the session
/// it names; a name given by a flag or the environment proves nothing.
/// `Err` says why it could not be told (an ancestor's `/proc` unreadable).
pub fn runs_inside_session(owner: Pid) -> Result<bool, String> {
    runs_inside_session_walked(owner, &own_ancestry_up_to(owner))
}

/// `runs_inside_session` over `walk`, this process's ancestry as
/// `own_ancestry` read it.
pub fn runs_inside_session_walked(owner: Pid, walk: &AncestryWalk) -> Result<bool, String> {
    if walk.steps.iter().any(|step| step.pid == owner) {
        return Ok(true);
    }
    match &walk.unreadable {
        Some(why) => Err(why.clone()),
        None => Ok(false),
    }
}

/// Whether the session whose owner is `pid` accepts messages now, decided
/// as `roster-consent should-arm --pid` decides (`consent::accepts_messages`):
/// `Err` says why not, and whether that is a refusal or a consent that
/// could not be decided now. What roster-send asks before it queues and
/// the delivery hook asks again before it hands a message over.
/// `roster` is the registry `common` names, opened by the caller already,
/// and `row` the session's row in it, read and judged a moment ago.
pub fn session_accepts_messages(
    common: &CommonArgs,
    roster: &registry_core::RosterDir,
    row: &registry_core::SessionRow,
    pid: Pid,
    facts: &impl SystemFacts,
) -> Result<(), consent::NotAccepted> {
    session_accepts_messages_walked(common, roster, row, pid, facts, own_ancestry_up_to(pid))
}

/// `session_accepts_messages` over `walk`, this process's ancestry as
/// `own_ancestry_up_to(pid)` read it: the delivery hook has walked it
/// already to learn whether it runs inside the session, and a second walk
/// read every ancestor's `/proc` again.
pub fn session_accepts_messages_walked(
    common: &CommonArgs,
    roster: &registry_core::RosterDir,
    row: &registry_core::SessionRow,
    pid: Pid,
    facts: &impl SystemFacts,
    walk: AncestryWalk,
) -> Result<(), consent::NotAccepted> {
    let undecided = |error: String| {
        consent::NotAccepted::Undecided(format!("its consent could not be decided now: {error}"))
    };
    let live_record = row
        .record
        .as_ref()
        .filter(|record| row.liveness() == owner_liveness::Liveness::Alive && record.owner.pid == pid);
    let (pid, owner_identity) = match live_record {
        // A record without a chain is alive only while its owner itself
        // runs: the verdict a moment ago proved that very process (its pid,
        // start, pidfs inode, boot and namespaces), which is what a capture
        // now would tell.
        Some(record) if record.owner.chain.is_empty() => (pid, Ok(record.identity())),
        Some(_) => {
            let owner =
                resolve_recorded_owner_walked(pid, walk).map_err(|error| undecided(error.to_string()))?;
            (owner.resolved.pid, owner.capture_identity(facts))
        }
        None => {
            let owner = resolve_calling_owner_walked(Some(&pid.to_string()), walk, None)
                .map_err(|error| undecided(error.to_string()))?;
            (owner.resolved.pid, owner.capture_identity(facts))
        }
    };
    let roster_path = roster_directory_choice(common).map_err(|error| undecided(error.to_string()))?.path;
    let request = consent::AssessmentRequest {
        pid,
        owner_identity,
        roster_path: &roster_path,
        opened_roster: Some(roster),
        known_row: Some(row),
        cwd_flag: None,
        env: &process_env_os,
    };
    consent::accepts_messages(request, facts)
}
