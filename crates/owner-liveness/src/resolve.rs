//! Owner resolution (docs/contract.md §4.1): which process owns the calling session.
//! A pure function of the explicit flag, the environment, the ancestry and
//! the harness patterns, so every rule is a row of a table test.

use crate::ancestry::AncestorStep;
use crate::identity::MAX_CHAIN_MEMBERS;
use crate::pid::{Pid, PidParseError};

/// What the harness crate knows that resolution needs. Kept as a trait so
/// this crate stays below `harness` and tests can supply tiny tables.
pub trait HarnessPatterns {
    /// The harness a process belongs to by its comm, argv or exe (docs/contract.md §8.1).
    fn harness_of(&self, step: &AncestorStep) -> Option<&'static str>;
    /// Environment variables through which a harness exports its own pid.
    fn pid_exports(&self) -> &[PidExport];
}

/// A harness's own pid export, such as `CLAUDE_PID` of claude-code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PidExport {
    pub variable: &'static str,
    pub harness: &'static str,
}

/// The variable that names the owner explicitly, beating harness exports.
pub const ROSTER_SESSION_PID: &str = "ROSTER_SESSION_PID";

/// Everything resolution looks at.
pub struct OwnerQuery<'a> {
    /// The value of `--pid`: a pid or `parent`.
    pub flag: Option<&'a str>,
    /// Looks up an environment variable (non-UTF-8 values arrive lossy and
    /// so fail the canonical pid check).
    pub env: &'a dyn Fn(&str) -> Option<String>,
    /// The process that ran the command (`getppid()` of the caller).
    pub parent: Pid,
    /// The caller's ancestry, caller first (`walk_ancestry(getpid())`).
    pub ancestry: &'a [AncestorStep],
    /// `/proc/sys/kernel/pid_max`.
    pub pid_max: u32,
}

/// How the owner was found; `as_str` is the record's `session_pid_source`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OwnerSource {
    Flag,
    Parent,
    RosterSessionPid,
    HarnessExport(&'static str),
    Ancestor,
}

impl OwnerSource {
    pub fn as_str(self) -> &'static str {
        match self {
            OwnerSource::Flag => "flag",
            OwnerSource::Parent => "parent",
            OwnerSource::RosterSessionPid => ROSTER_SESSION_PID,
            OwnerSource::HarnessExport(variable) => variable,
            OwnerSource::Ancestor => "ancestor",
        }
    }
}

/// The answer: the owner pid, how it was found, whether it is the caller or
/// one of its ancestors, its harness when the ancestry shows one, and the
/// rest of its chain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedOwner {
    pub pid: Pid,
    pub source: OwnerSource,
    pub verified: bool,
    pub harness: Option<&'static str>,
    /// The processes of the owner's harness run below it among the caller's
    /// ancestors (docs/contract.md §5), outermost first, innermost last, at
    /// most `MAX_CHAIN_MEMBERS - 1`: the loader's native child, a
    /// relaunched copy. Empty when the owner is no harness process or not
    /// an ancestor. Whatever named the owner (the walk, `--pid`, a
    /// variable), the run below it is the same session's.
    pub chain: Vec<Pid>,
}

/// Why no owner could be named. Every kind is bad input (exit 2).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    #[error("--pid {} {why}; give a pid or `parent`", shown(value))]
    InvalidFlag { value: String, why: PidParseError },
    #[error("{variable}={} {why}; set it to the owner's pid or unset it", shown(value))]
    InvalidEnv { variable: String, value: String, why: PidParseError },
    #[error(
        "no session owner found: no harness process among the caller's ancestors; \
         name it with --pid PID, --pid parent, ROSTER_SESSION_PID=PID, \
         or run from inside a harness (CLAUDE_PID / OPENCODE_PID or the ancestor walk)"
    )]
    NotFound,
    #[error(
        "{named_by} names pid {pid}, {what}, which outlives every session and so can never own one; \
         name the harness process instead: --pid with its pid, or --pid parent from the session's shell"
    )]
    NotAnOwner { named_by: &'static str, pid: Pid, what: &'static str },
    #[error(
        "the {harness} process above this command is pid 1 of its pid namespace (a container's entry \
         point), and pid 1 is never an owner since it outlives every session; start the harness under an \
         init (`docker run --init`, tini) so that it gets a pid of its own"
    )]
    HarnessIsInit { harness: &'static str },
}

/// A value as an error shows it: quoted, and cut short when it is long (a
/// message is one line, whatever was given).
fn shown(value: &str) -> String {
    const SHOWN_CHARS: usize = 40;
    if value.chars().count() <= SHOWN_CHARS {
        return format!("{value:?}");
    }
    let head: String = value.chars().take(SHOWN_CHARS).collect();
    format!("{head:?}… ({} bytes)", value.len())
}

/// pid 1 (init, or a container's first process): never a session's owner.
const INIT_PID: u32 = 1;

/// Refuses a candidate owner that is init.
fn refuse_init(owner: ResolvedOwner) -> Result<ResolvedOwner, ResolveError> {
    if owner.pid.get() != INIT_PID {
        return Ok(owner);
    }
    let named_by = match owner.source {
        OwnerSource::Flag => "--pid",
        OwnerSource::Parent => "--pid parent (this command was started by init, or its parent exited)",
        other => other.as_str(),
    };
    Err(ResolveError::NotAnOwner { named_by, pid: owner.pid, what: "init" })
}

/// The owner `pid`, found by `source`, as the caller's ancestry shows it.
fn owner_at(
    ancestry: &[AncestorStep],
    pid: Pid,
    source: OwnerSource,
    patterns: &dyn HarnessPatterns,
) -> ResolvedOwner {
    let position = ancestry.iter().position(|step| step.pid == pid);
    ResolvedOwner {
        pid,
        source,
        verified: position.is_some(),
        harness: position.and_then(|index| patterns.harness_of(&ancestry[index])),
        chain: position.map(|index| run_below(ancestry, index, patterns)).unwrap_or_default(),
    }
}

/// Resolves the owner, most explicit first (docs/contract.md §4.1).
pub fn resolve_owner(
    query: &OwnerQuery<'_>,
    patterns: &dyn HarnessPatterns,
) -> Result<ResolvedOwner, ResolveError> {
    let found = |pid: Pid, source: OwnerSource| owner_at(query.ancestry, pid, source, patterns);

    if let Some(value) = query.flag {
        if value == "parent" {
            let mut owner = found(query.parent, OwnerSource::Parent);
            // The parent is an ancestor by definition, even when /proc could
            // not show the walk.
            owner.verified = true;
            return refuse_init(owner);
        }
        let pid = Pid::parse_canonical(value, query.pid_max)
            .map_err(|why| ResolveError::InvalidFlag { value: value.to_owned(), why })?;
        return refuse_init(found(pid, OwnerSource::Flag));
    }

    if let Some(pid) = env_pid(query, ROSTER_SESSION_PID)? {
        // A harness process nearer than the pid named (a wrapper that
        // exported its own pid and started several sessions), or one
        // named that is no ancestor at all: the caller runs inside that
        // harness process, whose session it speaks for. Two sessions under
        // one wrapper never share an owner, and one conversation never
        // takes another's place, its messages or its consent.
        if let Some(nearer) = nearest_harness_run(query.ancestry, patterns) {
            let position = |pid: Pid| query.ancestry.iter().position(|step| step.pid == pid);
            let named_further_up = match (position(nearer), position(pid)) {
                (Some(harness), Some(named)) => harness < named,
                (Some(_), None) => true,
                _ => false,
            };
            if named_further_up {
                return Ok(found(nearer, OwnerSource::Ancestor));
            }
        }
        return refuse_init(found(pid, OwnerSource::RosterSessionPid));
    }

    // Every export that is set is checked before any is trusted, so a bad
    // value is an error whatever the order of the harness table.
    let mut exported = Vec::new();
    for export in patterns.pid_exports() {
        if let Some(pid) = env_pid(query, export.variable)? {
            exported.push((export, pid));
        }
    }
    for (export, pid) in exported {
        if pid.get() == INIT_PID || export_is_trustworthy(query.ancestry, pid, export.harness, patterns) {
            return refuse_init(found(pid, OwnerSource::HarnessExport(export.variable)));
        }
    }

    if let Some(pid) = nearest_harness_run(query.ancestry, patterns) {
        return Ok(found(pid, OwnerSource::Ancestor));
    }
    // The walk passes init by; say so when init was the harness.
    match query
        .ancestry
        .iter()
        .find(|step| step.pid.get() == INIT_PID)
        .and_then(|init| patterns.harness_of(init))
    {
        Some(harness) => Err(ResolveError::HarnessIsInit { harness }),
        None => Err(ResolveError::NotFound),
    }
}

fn env_pid(query: &OwnerQuery<'_>, variable: &str) -> Result<Option<Pid>, ResolveError> {
    let Some(value) = (query.env)(variable) else { return Ok(None) };
    Pid::parse_canonical(&value, query.pid_max).map(Some).map_err(|why| ResolveError::InvalidEnv {
        variable: variable.to_owned(),
        value,
        why,
    })
}

/// An export counts only when it names an ancestor and no process of
/// another harness sits between the caller and it: a `CLAUDE_PID` leaked
/// from an outer claude into an inner codex must lose to the codex.
fn export_is_trustworthy(
    ancestry: &[AncestorStep],
    pid: Pid,
    harness: &str,
    patterns: &dyn HarnessPatterns,
) -> bool {
    let Some(position) = ancestry.iter().position(|step| step.pid == pid) else {
        return false;
    };
    ancestry[..position].iter().all(|step| patterns.harness_of(step).is_none_or(|other| other == harness))
}

/// The processes directly below `ancestry[owner]` (toward the caller) that
/// belong to the same harness, outermost first. When the run is longer than
/// a chain holds, the members nearest the caller are kept: the innermost
/// process is the one doing the work (Copilot's and Codex's native binary).
fn run_below(ancestry: &[AncestorStep], owner: usize, patterns: &dyn HarnessPatterns) -> Vec<Pid> {
    let Some(harness) = patterns.harness_of(&ancestry[owner]) else { return Vec::new() };
    let run_start = ancestry[..owner]
        .iter()
        .rposition(|step| patterns.harness_of(step) != Some(harness))
        .map_or(0, |index| index + 1);
    let kept_end = owner.min(run_start + MAX_CHAIN_MEMBERS - 1);
    ancestry[run_start..kept_end].iter().rev().map(|step| step.pid).collect()
}

/// The nearest harness process above the caller, widened to the outermost
/// of a run of consecutive ancestors of the same harness (wrapper → native
/// binary, relaunch). Init never counts, even where it looks like a
/// harness (a container whose first process is the harness).
fn nearest_harness_run(ancestry: &[AncestorStep], patterns: &dyn HarnessPatterns) -> Option<Pid> {
    let below_init = ancestry.iter().take_while(|step| step.pid.get() != INIT_PID).count();
    let ancestry = &ancestry[..below_init];
    let (start, harness) = ancestry
        .iter()
        .enumerate()
        .find_map(|(index, step)| patterns.harness_of(step).map(|harness| (index, harness)))?;
    let run_length =
        ancestry[start..].iter().take_while(|step| patterns.harness_of(step) == Some(harness)).count();
    Some(ancestry[start + run_length - 1].pid)
}
