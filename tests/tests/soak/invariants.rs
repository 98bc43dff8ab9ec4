//! The invariants of docs/contract.md §10 the soak checks, each one a named result:
//! what was seen during the run (every listing) and what is on disk after
//! a final prune.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use anyhow::Context;
use owner_liveness::{Liveness, judge_now};
use registry_core::{
    CONSENT, HOOK_LOG_LINES, HOOK_LOG_NAME, Parsed, SESSION_IDS, SESSIONS, TEMP_PREFIX, parse_record,
    pid_of_file_name,
};
use serde_json::Value;

use super::Soak;
use super::tools::run_tool;

/// One invariant and whether it held.
#[derive(Debug)]
pub struct InvariantResult {
    pub name: &'static str,
    pub held: bool,
    pub detail: String,
}

/// How many examples a failed invariant names.
const EXAMPLES: usize = 8;

impl InvariantResult {
    fn from_problems(name: &'static str, checked: String, problems: Vec<String>) -> InvariantResult {
        if problems.is_empty() {
            return InvariantResult { name, held: true, detail: checked };
        }
        let mut detail =
            format!("{} problem{}: ", problems.len(), if problems.len() == 1 { "" } else { "s" });
        detail.push_str(&problems.iter().take(EXAMPLES).cloned().collect::<Vec<_>>().join("; "));
        InvariantResult { name, held: false, detail }
    }
}

/// Temporaries a crashed writer left long before the run: a final prune
/// must remove them (they are older than its one-hour bound).
pub fn plant_stale_temporaries(roster: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let two_hours_ago = SystemTime::now() - Duration::from_secs(2 * 3600);
    let mut planted = Vec::new();
    for directory in
        [roster.to_owned(), roster.join(SESSIONS), roster.join(CONSENT), roster.join(SESSION_IDS)]
    {
        let path = directory.join(format!("{TEMP_PREFIX}left-by-a-crash-before-the-soak"));
        let file = std::fs::File::create(&path).with_context(|| format!("create {}", path.display()))?;
        file.set_modified(two_hours_ago)?;
        planted.push(path);
    }
    Ok(planted)
}

/// What is wrong with listed rows: a problem entry (a torn file would be
/// one), a roster dotfile (a temporary) shown, consent counted for an
/// owner that is not alive.
pub fn row_problems(rows: &[Value]) -> Vec<String> {
    let mut problems = Vec::new();
    for row in rows {
        let path = row["path"].as_str().unwrap_or("?");
        if !row["problem"].is_null() {
            problems.push(format!("a {} entry {path} ({})", row["problem"], row["liveness_reason"]));
        }
        if Path::new(path).file_name().is_some_and(|name| name.to_string_lossy().starts_with('.')) {
            problems.push(format!("the roster dotfile {path}"));
        }
        let consent = row["consent"].as_str().unwrap_or("?");
        if consent != "none" && row["liveness"] != "alive" {
            problems.push(format!("consent {consent} for the {} owner of {path}", row["liveness"]));
        }
    }
    problems
}

/// What is wrong with a listing of ended sessions: an entry skipped as not
/// to be believed (said on stderr), more than the bound, an entry whose
/// `how` is none of the four.
pub fn ended_problems(entries: &[Value], stderr: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if stderr.contains("ended-skipped") {
        problems.push(format!("entries skipped as not to be believed: {}", stderr.trim()));
    }
    if entries.len() > registry_core::ENDED_KEPT_MOST {
        problems.push(format!(
            "{} entries, past the bound of {}",
            entries.len(),
            registry_core::ENDED_KEPT_MOST
        ));
    }
    for entry in entries {
        let how = entry["how"].as_str().unwrap_or("?");
        if !["exited", "crashed", "reboot", "removed"].contains(&how) {
            problems.push(format!("an entry ended {how:?}: {entry}"));
        }
    }
    problems
}

/// After the final prune every file of `ended/` is a whole entry roster
/// believes: as many listed as there are files, none skipped, within the
/// bound.
fn ended_whole_and_bounded(soak: &Soak) -> anyhow::Result<InvariantResult> {
    let directory = soak.roster.join(registry_core::ENDED);
    let files = match std::fs::read_dir(&directory) {
        Ok(entries) => entries
            .filter_map(Result::ok)
            .filter(|entry| !entry.file_name().to_string_lossy().starts_with('.'))
            .count(),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => 0,
        Err(error) => return Err(error).with_context(|| format!("read {}", directory.display())),
    };
    let mut command = soak.tool("roster-list");
    command.arg("--dir").arg(&soak.roster).args(["--ended", "--format", "json"]);
    let run = run_tool(command, None, None)?;
    let entries: Vec<Value> =
        serde_json::from_slice(&run.stdout).context("roster-list --ended printed no JSON")?;
    let mut problems = ended_problems(&entries, &run.stderr);
    if !run.succeeded() {
        problems.push(format!("roster-list --ended failed: {}", run.describe()));
    }
    if entries.len() != files {
        problems.push(format!("{files} files in ended/ but {} entries listed", entries.len()));
    }
    Ok(InvariantResult::from_problems(
        "ended sessions kept whole and bounded",
        format!(
            "{} entries whole after the final prune; {} listed during the run",
            entries.len(),
            soak.ended_rows_seen.load(std::sync::atomic::Ordering::Relaxed)
        ),
        problems,
    ))
}

/// Every invariant, checked after the final prune.
pub fn check_all(
    soak: &Soak,
    stale: &[PathBuf],
    run_started: SystemTime,
) -> anyhow::Result<Vec<InvariantResult>> {
    let final_rows = final_listing(soak)?;
    let during_run = soak.violations.lock().expect("no soak thread panics").clone();
    Ok(vec![
        InvariantResult::from_problems(
            "no unexpected failure; no torn file, temporary or dead owner's consent ever listed",
            format!(
                "{} list rows checked during the run",
                soak.list_rows_seen.load(std::sync::atomic::Ordering::Relaxed)
            ),
            during_run,
        ),
        no_live_record_lost(soak, &final_rows),
        no_torn_file(soak)?,
        ended_whole_and_bounded(soak)?,
        no_state_without_its_record(soak)?,
        no_consent_for_dead_owners(soak, &final_rows)?,
        no_old_temporary(soak, stale, run_started)?,
        hook_log_bounded(soak)?,
        delivered_means_received_whole_once(soak)?,
    ])
}

/// The ids of the messages a delivery reply holds whole: its opening line
/// and its closing line, in the text a Claude Code prompt hook hands over.
pub fn whole_messages_in_reply(printed: &[u8]) -> Vec<String> {
    let Ok(reply) = serde_json::from_slice::<Value>(printed) else { return Vec::new() };
    let Some(context) = reply["hookSpecificOutput"]["additionalContext"].as_str() else { return Vec::new() };
    const OPENING: &str = "[roster message ";
    context
        .match_indices(OPENING)
        .filter_map(|(at, _)| context.get(at + OPENING.len()..at + OPENING.len() + 32))
        .filter(|id| context.contains(&format!("[end of roster message {id}]")))
        .map(str::to_owned)
        .collect()
}

/// Every message a send queued reads `delivered` only when a stand-in
/// harness received it whole, none was received twice, none received is
/// left to be handed over again, and none is lost without an outcome.
fn delivered_means_received_whole_once(soak: &Soak) -> anyhow::Result<InvariantResult> {
    use registry_core::messages::{MessageId, OutcomeKind, message_status};
    let roster = registry_core::RosterDir::open_existing(&soak.roster)?.context("the roster directory")?;
    let sent = soak.sent.lock().expect("no soak thread panics").clone();
    let received = soak.received.lock().expect("no soak thread panics").clone();
    let mut problems = Vec::new();
    let mut delivered = 0;
    for id in &sent {
        let times = received.get(id).copied().unwrap_or(0);
        if times > 1 {
            problems.push(format!("message {id} reached its harness {times} times"));
        }
        let Some(parsed) = MessageId::parse(id) else {
            problems.push(format!("send printed the id {id:?}, which is not one"));
            continue;
        };
        let outcome = message_status(&roster, &parsed, registry_core::Timestamp::now())?
            .map(|found| found.message.outcome.map(|outcome| outcome.kind));
        match outcome {
            None => problems.push(format!("message {id} is lost: no queue and no kept outcome holds it")),
            Some(Some(OutcomeKind::Delivered)) if times == 0 => {
                problems.push(format!("message {id} reads delivered, but no harness received it whole"))
            }
            Some(Some(OutcomeKind::Delivered)) => delivered += 1,
            Some(None) if times > 0 => {
                problems.push(format!("message {id} was received, yet waits to be handed over again"))
            }
            Some(_) => {}
        }
    }
    Ok(InvariantResult::from_problems(
        "a message reads delivered only when its harness received it whole, and at most once",
        format!("{} messages queued, {delivered} delivered, {} received", sent.len(), received.len()),
        problems,
    ))
}

fn final_listing(soak: &Soak) -> anyhow::Result<Vec<Value>> {
    let mut command = soak.tool("roster-list");
    command.arg("--dir").arg(&soak.roster).args(["--all", "--format", "json"]);
    let run = run_tool(command, None, None)?;
    if !run.succeeded() {
        anyhow::bail!("the final roster-list failed: {}", run.describe());
    }
    serde_json::from_slice(&run.stdout).context("the final roster-list printed no JSON rows")
}

/// Every owner still alive whose registration succeeded has its record,
/// naming it (same start tick and pidfs inode), listed as alive.
fn no_live_record_lost(soak: &Soak, final_rows: &[Value]) -> InvariantResult {
    let live = soak.live_owners.lock().expect("no soak thread panics");
    let mut checked = 0;
    let mut problems = Vec::new();
    for slot in live.iter().filter(|slot| slot.book.lock().expect("no soak thread panics").registered) {
        checked += 1;
        let pid = slot.identity.pid;
        let path = soak.roster.join(SESSIONS).join(tests::record_file_name_here(pid.get()));
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(error) => {
                problems.push(format!(
                    "owner {pid} is alive and was registered, but {}: {error}",
                    path.display()
                ));
                continue;
            }
        };
        match parse_record(&bytes, pid) {
            Parsed::Record(record)
                if record.owner.start_ticks == slot.identity.start_ticks
                    && record.owner.pidfs_ino == slot.identity.pidfs_ino => {}
            Parsed::Record(_) => {
                problems.push(format!("{} names another process than owner {pid}", path.display()))
            }
            other => problems.push(format!("{} does not parse: {other:?}", path.display())),
        }
        let listed_alive = final_rows.iter().any(|row| {
            row["session_pid"] == pid.get() && row["liveness"] == "alive" && row["problem"].is_null()
        });
        if !listed_alive {
            problems.push(format!("roster-list does not show owner {pid} alive"));
        }
    }
    InvariantResult::from_problems(
        "no live record lost",
        format!("{checked} live, registered owners each have their record, listed alive"),
        problems,
    )
}

/// Every record and consent marker on disk parses: a crash or a full disk
/// left the old file or the new one, never a torn one. Each is 0600.
fn no_torn_file(soak: &Soak) -> anyhow::Result<InvariantResult> {
    let mut problems = Vec::new();
    let mut records = 0;
    let mut markers = 0;
    for (subdirectory, is_record) in [(SESSIONS, true), (CONSENT, false)] {
        let directory = soak.roster.join(subdirectory);
        for entry in std::fs::read_dir(&directory).with_context(|| format!("read {}", directory.display()))? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            let path = entry.path();
            let Some(pid) = pid_of_file_name(&name) else {
                problems.push(format!("{} is not named <pid>.json", path.display()));
                continue;
            };
            let metadata = std::fs::symlink_metadata(&path)?;
            use std::os::unix::fs::PermissionsExt;
            if !metadata.is_file() || metadata.permissions().mode() & 0o7777 != 0o600 {
                problems.push(format!("{} is not a 0600 regular file", path.display()));
            }
            let bytes = std::fs::read(&path)?;
            let parsed = if is_record {
                records += 1;
                matches!(parse_record(&bytes, pid), Parsed::Record(_))
            } else {
                markers += 1;
                matches!(consent::parse_marker(&bytes, pid), consent::ParsedMarker::Marker(_))
            };
            if !parsed {
                problems.push(format!(
                    "{} does not parse: {:?}",
                    path.display(),
                    String::from_utf8_lossy(&bytes)
                ));
            }
        }
    }
    Ok(InvariantResult::from_problems(
        "no torn file",
        format!("{records} records and {markers} consent markers parse, all 0600"),
        problems,
    ))
}

/// After the final prune every consent marker belongs to a live owner, and
/// no listed row counts consent for an owner that is not alive.
fn no_consent_for_dead_owners(soak: &Soak, final_rows: &[Value]) -> anyhow::Result<InvariantResult> {
    let mut problems: Vec<String> = row_problems(final_rows);
    let directory = soak.roster.join(CONSENT);
    let mut markers = 0;
    for entry in std::fs::read_dir(&directory).with_context(|| format!("read {}", directory.display()))? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = pid_of_file_name(&name) else { continue };
        let Ok(bytes) = std::fs::read(entry.path()) else { continue };
        if let consent::ParsedMarker::Marker(marker) = consent::parse_marker(&bytes, pid) {
            markers += 1;
            let verdict = judge_now(&marker.identity(), None);
            if verdict.liveness != Liveness::Alive {
                problems.push(format!(
                    "{} outlived its owner ({}: {})",
                    entry.path().display(),
                    verdict.liveness,
                    verdict.reason
                ));
            }
        }
    }
    let retired = soak.retired_owners.lock().expect("no soak thread panics").len();
    Ok(InvariantResult::from_problems(
        "no consent marker counted for a dead owner",
        format!("{markers} markers left, each of a live owner; {retired} owners exited during the run"),
        problems,
    ))
}

/// After the final prune no temporary older than the run is left (the
/// planted ones included); younger ones, left by writers killed mid-write,
/// are invisible and wait for their hour.
/// After the final prune every state file is whole and has the record it
/// is named after: a state never outlives its session's record.
fn no_state_without_its_record(soak: &Soak) -> anyhow::Result<InvariantResult> {
    let mut problems = Vec::new();
    let mut states = 0;
    let directory = soak.roster.join("states");
    for entry in std::fs::read_dir(&directory).with_context(|| format!("read {}", directory.display()))? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        states += 1;
        if !soak.roster.join(SESSIONS).join(&name).exists() {
            problems.push(format!("{} outlived its record", entry.path().display()));
        }
        let bytes = std::fs::read(entry.path())?;
        if registry_core::state::StateFile::parse(&bytes).is_none() {
            problems.push(format!(
                "{} does not parse: {:?}",
                entry.path().display(),
                String::from_utf8_lossy(&bytes)
            ));
        }
    }
    Ok(InvariantResult::from_problems(
        "no torn state, and none without its record after a final prune",
        format!("{states} state files checked"),
        problems,
    ))
}

fn no_old_temporary(
    soak: &Soak,
    stale: &[PathBuf],
    run_started: SystemTime,
) -> anyhow::Result<InvariantResult> {
    let mut problems = Vec::new();
    let mut young = 0;
    for directory in [
        soak.roster.clone(),
        soak.roster.join(SESSIONS),
        soak.roster.join(CONSENT),
        soak.roster.join(SESSION_IDS),
        soak.roster.join("states"),
    ] {
        for entry in std::fs::read_dir(&directory).with_context(|| format!("read {}", directory.display()))? {
            let entry = entry?;
            if !entry.file_name().to_string_lossy().starts_with(TEMP_PREFIX) {
                continue;
            }
            let modified = entry.metadata()?.modified()?;
            if modified < run_started {
                problems.push(format!("{} is older than the run", entry.path().display()));
            } else {
                young += 1;
            }
        }
    }
    for path in stale.iter().filter(|path| path.exists()) {
        problems.push(format!("{} survived the final prune", path.display()));
    }
    Ok(InvariantResult::from_problems(
        "no temporary older than the run after a final prune",
        format!(
            "{} planted stale temporaries removed; {young} younger ones left by killed writers",
            stale.len()
        ),
        problems,
    ))
}

/// The hook failure log stays bounded however many hooks failed (docs/contract.md §2).
fn hook_log_bounded(soak: &Soak) -> anyhow::Result<InvariantResult> {
    let path = soak.roster.join(HOOK_LOG_NAME);
    let lines = match std::fs::read(&path) {
        Ok(bytes) => bytes.split(|&byte| byte == b'\n').filter(|line| !line.is_empty()).count(),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => 0,
        Err(error) => return Err(error).with_context(|| format!("read {}", path.display())),
    };
    let problems = if lines > HOOK_LOG_LINES {
        vec![format!("{} has {lines} lines, more than {HOOK_LOG_LINES}", path.display())]
    } else {
        Vec::new()
    };
    Ok(InvariantResult::from_problems(
        "hook failure log bounded",
        format!("{HOOK_LOG_NAME} has {lines} lines (at most {HOOK_LOG_LINES})"),
        problems,
    ))
}
