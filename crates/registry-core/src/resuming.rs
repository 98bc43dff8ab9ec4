//! Claims of sessions being resumed (docs/contract.md §2, §6.9): so that
//! one ended session is never started twice, `roster-resume` decides under
//! the registry lock and, before it lets go, writes a claim in
//! `resuming/` naming the process it started (its pid and start time).
//! While that process lives the session counts as running, even before
//! its hook registers the session again; a claim whose process is gone
//! counts for nothing and is removed at the next claim.

use owner_liveness::{Pid, parse_proc_stat};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::record::timestamp::Timestamp;
use crate::record::values::RecordedTime;
use crate::store::directory::{OnDemandDir, RESUMING, RosterDir};
use crate::store::files::{
    Durability, TEMP_PREFIX, list_names, read_entry, remove_entry, write_atomically_as,
};
use crate::store::lock::RegistryLock;

/// The format of a claim.
pub const RESUMING_FORMAT: u64 = 1;

/// What a claim says: which session, started as which process, when.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResumeClaim {
    pub format: u64,
    pub harness: String,
    pub session_id: Option<String>,
    pub cwd: String,
    /// The process that runs the resumed session (a tmux pane's first
    /// process, or `roster-resume --here` itself, which becomes it).
    pub pid: u32,
    /// Its start time, in clock ticks since boot (`/proc/PID/stat` field
    /// 22): a reused pid is another process.
    pub start_ticks: u64,
    /// When it was claimed, RFC 3339.
    pub claimed_at: String,
}

impl ResumeClaim {
    /// A claim of `pid` (running now) for the session.
    pub fn of(harness: &str, session_id: Option<&str>, cwd: &str, pid: u32) -> Option<ResumeClaim> {
        Some(ResumeClaim {
            format: RESUMING_FORMAT,
            harness: harness.to_owned(),
            session_id: session_id.map(str::to_owned),
            cwd: cwd.to_owned(),
            pid,
            start_ticks: start_ticks(pid)?,
            claimed_at: RecordedTime::from(Timestamp::now()).as_str().to_owned(),
        })
    }

    /// Whether the process the claim names still runs (the same process:
    /// same pid, same start time).
    pub fn still_running(&self) -> bool {
        start_ticks(self.pid) == Some(self.start_ticks)
    }
}

/// A process's start time, when it runs.
fn start_ticks(pid: u32) -> Option<u64> {
    let pid = Pid::new(pid)?;
    let line = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
    let stat = parse_proc_stat(&line).ok()?;
    (stat.state != 'Z' && stat.state != 'X').then_some(stat.start_ticks)
}

/// The claim file's name of a session: a hash of what identifies it (the
/// harness and the session id, or the harness and the directory for a
/// session without id, which its harness continues as the latest there).
pub fn claim_name(harness: &str, session_id: Option<&str>, cwd: &str) -> String {
    let key = match session_id {
        Some(id) => format!("id\0{harness}\0{id}"),
        None => format!("cwd\0{harness}\0{cwd}"),
    };
    // FNV-1a, 64 bits, twice with two offsets: stable across builds.
    let hash = |offset: u64| {
        key.bytes().fold(offset, |hash, byte| (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3))
    };
    format!("{:016x}{:016x}.json", hash(0xcbf2_9ce4_8422_2325), hash(0x84222325_cbf29ce4))
}

/// `resuming/`; created when `create` and missing.
fn open_claims_directory(roster: &RosterDir, create: bool) -> Result<Option<OnDemandDir>> {
    OnDemandDir::open(roster, roster.root(), RESUMING, create)
}

/// The claim on the session whose claim file is `name` whose process still
/// runs, if any. A file that fails the trust checks or does not parse
/// claims nothing (it is replaced by the next claim).
pub fn running_claim(roster: &RosterDir, name: &str) -> Result<Option<ResumeClaim>> {
    let Some(directory) = open_claims_directory(roster, false)? else { return Ok(None) };
    let claim = read_entry(directory.subdir(), name)
        .ok()
        .and_then(|contents| serde_json::from_slice::<ResumeClaim>(&contents.bytes).ok())
        .filter(|claim| claim.format == RESUMING_FORMAT);
    Ok(claim.filter(ResumeClaim::still_running))
}

/// Writes `claim` as `name` (decided under `_lock`), and removes the claims
/// whose process has ended.
pub fn write_claim(roster: &RosterDir, _lock: &RegistryLock, name: &str, claim: &ResumeClaim) -> Result<()> {
    let Some(directory) = open_claims_directory(roster, true)? else { return Ok(()) };
    let bytes = serde_json::to_vec(claim).map_err(|error| {
        Error::io(
            "encode the claim",
            roster.entry_path(directory.subdir(), name),
            std::io::Error::other(error),
        )
    })?;
    write_atomically_as(roster, directory.subdir(), name, &bytes, Durability::Unsynced)?;
    for other in list_names(roster, directory.subdir())? {
        let Some(other) = other.to_str() else { continue };
        if other == name || other.starts_with(TEMP_PREFIX) {
            continue;
        }
        let ended = read_entry(directory.subdir(), other)
            .ok()
            .and_then(|contents| serde_json::from_slice::<ResumeClaim>(&contents.bytes).ok())
            .is_none_or(|claim| !claim.still_running());
        if ended {
            remove_entry(roster, directory.subdir(), other)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_names_a_running_process_and_one_session() {
        let temp = tempfile::tempdir().unwrap();
        let roster = RosterDir::open_or_create(&temp.path().join("roster")).unwrap();
        let name = claim_name("claude-code", Some("abc"), "/srv/app");
        assert_ne!(name, claim_name("claude-code", Some("abd"), "/srv/app"));
        assert_ne!(name, claim_name("codex", Some("abc"), "/srv/app"));
        assert_eq!(name, claim_name("claude-code", Some("abc"), "/elsewhere"));
        assert_ne!(claim_name("codex", None, "/a"), claim_name("codex", None, "/b"));
        assert!(running_claim(&roster, &name).unwrap().is_none());

        let lock = roster.lock().unwrap();
        let mine = ResumeClaim::of("claude-code", Some("abc"), "/srv/app", std::process::id()).unwrap();
        write_claim(&roster, &lock, &name, &mine).unwrap();
        assert_eq!(running_claim(&roster, &name).unwrap(), Some(mine.clone()));

        // A reused pid is another process: the claim counts for nothing,
        // and the next claim removes it.
        let gone = ResumeClaim { start_ticks: mine.start_ticks + 1, ..mine };
        let other = claim_name("codex", Some("x"), "/");
        write_claim(&roster, &lock, &other, &gone).unwrap();
        assert!(running_claim(&roster, &other).unwrap().is_none());
        let third = ResumeClaim::of("amp", Some("T-1"), "/", std::process::id()).unwrap();
        write_claim(&roster, &lock, &claim_name("amp", Some("T-1"), "/"), &third).unwrap();
        assert!(!temp.path().join("roster").join(RESUMING).join(&other).exists());
    }
}
