//! `roster-prune`: removes what is provably gone (docs/contract.md §6.3) in the reaper
//! posture, and, with `--current`, the calling session's own record as a
//! session-end hook (§8.2). The clap `Command` lives here so xtask renders
//! man pages and completions from the definition users run.

#![forbid(unsafe_code)]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{CommandFactory, Parser};
use cli_support::manual::{self, Example, ExitStatusDoc, FileEntry, Manual};
use cli_support::{
    BadInput, CommonArgs, ExitStatus, OutputFormat, Refused, escape_for_terminal, open_roster_for_reading,
    parse_duration, push_home_relative, resolve_calling_owner, roster_directory_choice,
};
use owner_liveness::{OwnerIdentity, SystemFacts};
use registry_core::adopted::adopted_row_name;
use registry_core::{
    CurrentOutcome, CurrentSession, HowEnded, PruneOptions, PruneReport, RegistryLock, RosterDir, RowConsent,
    RunningSystem, SessionRow, Timestamp, keep_ended, listed_entry_count, map_in_parallel, prune_sessions,
    remove_current,
};

const TOOL: &str = "roster-prune";

/// Remove roster records whose sessions are provably gone
#[derive(Debug, Parser)]
#[command(
    name = TOOL,
    version,
    about = "Remove roster records whose sessions are provably gone",
    long_about = "Remove roster records whose sessions are provably gone\n\n\
        Removes dead records (the owner exited, its pid was reused, it ran in an earlier boot), \
        consent markers of dead owners, session states whose record is gone, and temporaries older \
        than an hour. Nothing is removed \
        that was not judged, or judged again, under the registry lock, so a session that is \
        alive is never removed. Unknown and problem entries are kept unless --older-than says \
        how old they may get. Records of another pid namespace or another machine (a shared \
        home) are unknown: they go only with --older-than.\n\n\
        With --current, only the calling session's own record goes: the one at its owner's pid \
        in this pid namespace and boot whose recorded owner is that very process (and, with \
        --hook, whose session id is the payload's). Anything else at that pid is kept and the \
        reason said (exit 3; with --hook, a line in hook-errors.log).\n\n\
        A session end withdraws the session's consent even when it cannot have the registry \
        lock (another process holds it past the wait, 5 s, or with --hook past what the 500 ms \
        budget leaves): its owner still running, a disarmed marker is written without the lock, \
        so nothing is queued for the session or delivered to it any more; the record stays for \
        the next prune, and the run fails with \"registry busy\" (with --hook, a line in \
        hook-errors.log). A message queue whose lock another process holds is left for the \
        next prune too, never waited for.",
)]
pub struct PruneArgs {
    #[command(flatten)]
    pub common: CommonArgs,

    /// Also remove unknown and problem entries older than DURATION (90m, 36h, 7d, 2w)
    #[arg(short = 'o', long, value_name = "DURATION")]
    pub older_than: Option<String>,

    /// Report what would be removed without removing anything
    #[arg(short = 'n', long)]
    pub dry_run: bool,

    /// Remove the calling session's own record and consent marker, alive or not
    #[arg(long)]
    pub current: bool,

    /// With --current: name the owner process, a pid or `parent`
    #[arg(long, value_name = "PID|parent", requires = "current", add = cli_support::session_pids_or_parent())]
    pub pid: Option<String>,

    /// With --current: run as a session-end hook (read the payload if it comes, print nothing, always exit 0, finish within 500 ms)
    #[arg(long, value_name = "HARNESS|auto", requires = "current")]
    pub hook: Option<String>,
}

/// Examples, notes, environment, files and exit statuses: `--help` and the
/// man page both render this.
pub fn manual() -> Manual {
    Manual {
        examples: &[
            Example {
                description: "Remove what is provably gone:",
                commands: &["roster-prune"],
                output: &[],
            },
            Example {
                description: "See what would go, including entries nobody could examine for a week:",
                commands: &["roster-prune --older-than 7d --dry-run"],
                output: &[],
            },
            Example {
                description: "As Claude Code's SessionEnd hook, which is what roster-hooks install \
                              claude-code writes:",
                commands: &["roster-prune --current --hook claude-code"],
                output: &[],
            },
            Example {
                description: "A crontab line that prunes every hour, quietly:",
                commands: &["0 * * * * roster-prune --quiet"],
                output: &[],
            },
        ],
        notes: vec![
            "JSON: {\"removed\": [rows as roster-list shows them], \"dead_removed\": N, \
             \"unknown_removed\": N, \"current_removed\": N, \"kept\": N, \"temp_removed\": N, \
             \"consent_removed\": N, \"dry_run\": true|false}."
                .to_owned(),
            "With --current the calling session's record is removed on request, alive or not: it is \
             counted in current_removed (text: `removed 1 on request`), never as dead or unknown, and \
             kept counts the other entries left in the registry."
                .to_owned(),
            "Harnesses' own session files (Claude Code's ~/.claude/sessions, Copilot CLI's lock files), \
             which roster-list also lists, are never removed, dead or not: the harness removes them itself. \
             Short flags: -n --dry-run, -o --older-than, -q --quiet."
                .to_owned(),
        ],
        environment: manual::session_variables_and(&[manual::NO_COLOR_VARIABLE, manual::TERM_VARIABLE]),
        environment_note: Some(manual::EMPTY_VARIABLE_NOTE),
        files: &[
            manual::SESSIONS_FILE,
            manual::CONSENT_FILE,
            manual::STATES_FILE,
            manual::LOCK_FILE,
            manual::HOOK_ERRORS_FILE,
            FileEntry {
                path: "$ROSTER_DIR/sessions/.tmp-*",
                meaning: "Temporaries of interrupted writes, removed once older than an hour.",
            },
        ],
        exit_statuses: &[
            ExitStatusDoc {
                status: ExitStatus::Success,
                meaning: "Done, also when nothing was removed or with --dry-run.",
            },
            manual::EXIT_FAILED,
            ExitStatusDoc {
                status: ExitStatus::BadInput,
                meaning: "Bad input or usage: an invalid --older-than duration, an invalid owner variable, \
                          no owner found for --current, an unreadable hook payload.",
            },
            ExitStatusDoc {
                status: ExitStatus::Refused,
                meaning: "Refused by rule: the roster directory is untrusted (the message names the path \
                          and the fix), or --current found at its owner's pid a record that is not the \
                          calling session's own (another pid namespace's or machine's, another process's, \
                          another session id's), which it keeps.",
            },
        ],
        exit_status_note: Some(manual::HOOK_MODE_EXIT_NOTE),
        ..Manual::default()
    }
}

/// The clap definition, for xtask's man pages and completions.
pub fn command() -> clap::Command {
    cli_support::with_manual(PruneArgs::command(), &manual())
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    cli_support::complete_when_asked(command);
    cli_support::run_tool_with_hook_mode(
        TOOL,
        command,
        |args: &PruneArgs| args.hook.as_ref().map(|_| (&args.common, cli_support::HookEvent::SessionEnd)),
        run,
    )
}

/// What one run removed, sessions and consent markers together.
struct Outcome {
    report: PruneReport,
    consent_removed: usize,
    /// Why the ended sessions could not be kept (`keep_session_end`, `PruneReport::ended_not_kept`).
    ended_not_kept: Option<registry_core::Error>,
}

/// Prunes as `args` say.
pub fn run(args: PruneArgs) -> anyhow::Result<()> {
    let older_than = match &args.older_than {
        Some(text) => Some(parse_duration(text).map_err(|why| BadInput(format!("--older-than: {why}")))?),
        None => None,
    };
    roster_directory_choice(&args.common)?;
    let outcome = if args.current { prune_current(&args)? } else { prune_all(&args, older_than)? };
    // Best effort: the records went all the same, so this is said, not
    // failed on.
    if let Some(error) = &outcome.ended_not_kept {
        let message = format!("the ended sessions could not be kept: {error}");
        if args.hook.is_some() {
            cli_support::report_hook_problem(TOOL, &args.common, &message);
        } else {
            cli_support::report_warning(TOOL, &message, None);
        }
    }
    if args.hook.is_none() && !args.common.quiet {
        print_outcome(&args, &outcome)?;
    }
    // The process ends here: freeing every removed row one by one only
    // to exit cost a sixth of pruning ten thousand records.
    std::mem::forget(outcome);
    Ok(())
}

fn prune_all(args: &PruneArgs, older_than: Option<Duration>) -> anyhow::Result<Outcome> {
    let Some(roster) = open_roster_for_reading(&args.common)? else {
        return Ok(Outcome { report: PruneReport::default(), consent_removed: 0, ended_not_kept: None });
    };
    let options = PruneOptions { older_than, dry_run: args.dry_run };
    let facts = RunningSystem::read();
    // One hold of the lock covers removing the records, the temporaries
    // and the consent markers.
    let (mut report, lock) = prune_sessions(&roster, &options, &facts)?;
    let ended_not_kept = report.ended_not_kept.take();
    let markers = consent::prune_markers(&roster, &lock, older_than, args.dry_run, &facts)?;
    Ok(Outcome { report, consent_removed: markers.removed, ended_not_kept })
}

/// Keeps an entry in `ended/` for the session that just ended
/// (docs/contract.md §2), `exited`. The error, if any, for the caller to
/// say once the lock is let go. (A prune keeps the ended sessions of the
/// records it removes itself: `prune_sessions`.)
fn keep_session_end(
    roster: &RosterDir,
    lock: &RegistryLock,
    row: &SessionRow,
    facts: &RunningSystem,
) -> Option<registry_core::Error> {
    let now = Timestamp::from_system_time(facts.now());
    keep_ended(roster, lock, &[row], |_| HowEnded::Exited, now).err()
}

fn prune_current(args: &PruneArgs) -> anyhow::Result<Outcome> {
    // In hook mode the payload tells nothing prune needs to find the record
    // (the owner comes from the process tree), so a broken payload does not
    // keep a finished session's record alive: it is removed, and the
    // payload's fault is reported (and logged) afterwards.
    let payload = match &args.hook {
        Some(value) => {
            cli_support::hook_target(value)?;
            Some(cli_support::read_hook_payload())
        }
        None => None,
    };
    let report = PruneReport::default();
    // `/clear` ends a harness's session but not its owner: the session start
    // that follows refreshes the same record with the new session id, and
    // removing it in between would lose its `registered_at`.
    if let Some(Ok(payload)) = &payload
        && payload.ends_only_the_conversation()
    {
        return Ok(Outcome { report, consent_removed: 0, ended_not_kept: None });
    }
    let payload_session_id = match &payload {
        // An empty session id names no session, as an empty value means
        // unset everywhere.
        Some(Ok(payload)) => payload.session_id.as_deref().filter(|id| !id.is_empty()),
        _ => None,
    };
    let outcome = remove_calling_session(args, report, payload_session_id)?;
    if let Some(Err(error)) = payload {
        let done = if outcome.report.removed.is_empty() {
            "the session had no record to remove"
        } else {
            "the session's record was removed"
        };
        return Err(anyhow::Error::new(error).context(format!("{done}, but its hook payload")));
    }
    Ok(outcome)
}

/// Removes the calling session's own record and consent marker, alive or
/// not, and nothing else (docs/contract.md §6.3): a record at the owner's
/// pid that is not provably the session's own (another world's, another
/// process's, another session id's) is kept, and said so: exit 3, or in
/// hook mode a line in `hook-errors.log`.
fn remove_calling_session(
    args: &PruneArgs,
    mut report: PruneReport,
    payload_session_id: Option<&str>,
) -> anyhow::Result<Outcome> {
    let owner = resolve_calling_owner(args.pid.as_deref())?;
    let Some(roster) = open_roster_for_reading(&args.common)? else {
        return Ok(Outcome { report, consent_removed: 0, ended_not_kept: None });
    };
    let facts = RunningSystem::read();
    // Not running any more: only a dead record can then be its own.
    let identity = owner.capture_identity(&facts).ok();
    let current = CurrentSession { pid: owner.resolved.pid, identity: identity.as_ref(), payload_session_id };
    let lock = match lock_for_session_end(&roster) {
        Ok(lock) => lock,
        Err(busy @ registry_core::Error::Busy { .. }) if !args.dry_run => {
            return Err(close_consent_without_lock(&roster, identity.as_ref(), &facts, busy));
        }
        Err(error) => return Err(error.into()),
    };
    let outcome = remove_current(&roster, &lock, &current, args.dry_run, &facts)?;
    // The marker goes with the session: not when the record stays because
    // it is this owner's in another session (that session's marker), and
    // the marker of a chain's record found below its owner goes with it.
    let mut consent_removed = 0;
    let mut kept = None;
    let mut ended_not_kept = None;
    match outcome {
        CurrentOutcome::Removed(row) => {
            if !args.dry_run {
                ended_not_kept = keep_session_end(&roster, &lock, &row, &facts);
            }
            consent_removed += consent::remove_marker(&roster, &lock, &current, args.dry_run, &facts)?;
            if let Some(record) = row.record.as_ref().filter(|record| record.pid() != current.pid) {
                let identity = record.identity();
                let chain_session =
                    CurrentSession { pid: record.pid(), identity: Some(&identity), payload_session_id: None };
                consent_removed +=
                    consent::remove_marker(&roster, &lock, &chain_session, args.dry_run, &facts)?;
            }
            // Removed on request, alive or not: a session that ended is
            // neither dead nor unknown.
            report.current_removed += 1;
            report.removed.push(row);
        }
        CurrentOutcome::NotFound => {
            consent_removed += consent::remove_marker(&roster, &lock, &current, args.dry_run, &facts)?;
        }
        CurrentOutcome::Kept { row, why, callers_owner } => {
            if !callers_owner {
                consent_removed += consent::remove_marker(&roster, &lock, &current, args.dry_run, &facts)?;
            }
            kept = Some((row, why));
        }
    }
    // What was kept is every other entry of the registry, counted only for
    // a report that is printed: a session-end hook has a tight budget.
    if args.hook.is_none() && !args.common.quiet {
        let still_listed = listed_entry_count(&roster)?;
        let removed_later = if args.dry_run { report.current_removed } else { 0 };
        report.kept = still_listed.saturating_sub(removed_later);
    }
    drop(lock);
    if let Some((row, why)) = kept {
        return Err(anyhow::Error::new(Refused(format!(
            "kept {}: {why}; --current removes only the calling session's own record",
            row.path.display()
        ))));
    }
    Ok(Outcome { report, consent_removed, ended_not_kept })
}

/// What a session-end hook keeps back from its work deadline for closing
/// the session's consent without the registry lock, when the lock cannot
/// be had: one atomic write of a marker.
const CONSENT_CLOSING_RESERVE: Duration = Duration::from_millis(100);

/// The registry lock for `--current`: waited for as every writer waits
/// (`LOCK_WAIT`), but in hook mode only until `CONSENT_CLOSING_RESERVE`
/// before the work deadline, so that the session's consent can still be
/// closed without it within the hook's budget.
fn lock_for_session_end(roster: &RosterDir) -> registry_core::Result<RegistryLock> {
    match cli_support::hook_work_deadline() {
        Some(deadline) => {
            let closing_starts = deadline.checked_sub(CONSENT_CLOSING_RESERVE).unwrap_or(deadline);
            roster.lock_within(closing_starts.saturating_duration_since(std::time::Instant::now()))
        }
        None => roster.lock(),
    }
}

/// A session end that cannot have the registry lock still withdraws the
/// session's consent (docs/contract.md §6.3): while its owner runs, a
/// `disarmed` marker is written without the lock, so that nothing is
/// queued for the session or delivered to it from now on, whoever holds
/// the lock. Its record, state and queue stay for the next prune (the
/// owner's exit makes them dead). Not knowing whether the record is this
/// session's or a later one's of the same owner, it closes consent all the
/// same: fail closed. Returns the error the run ends with.
fn close_consent_without_lock(
    roster: &RosterDir,
    identity: Option<&OwnerIdentity>,
    facts: &RunningSystem,
    busy: registry_core::Error,
) -> anyhow::Error {
    // An owner that is not running has no consent a marker could keep open.
    let Some(identity) = identity else {
        return anyhow::Error::new(busy).context("the session's record stays for the next prune");
    };
    let directory = directory_for_marker(roster, identity, facts);
    match consent::write_disarmed_marker_without_lock(roster, identity, &directory, facts) {
        Ok(written) => anyhow::Error::new(busy).context(format!(
            "the session's consent was withdrawn without the registry lock ({} says disarmed), and its \
             record stays for the next prune",
            written.path.display()
        )),
        Err(error) => anyhow::Error::new(error)
            .context(format!("the session's consent could not be withdrawn either ({busy})")),
    }
}

/// The directory a marker written at session end records (information
/// only): the session's own, as its record names it, else the directory
/// the hook runs in.
fn directory_for_marker(roster: &RosterDir, identity: &OwnerIdentity, facts: &RunningSystem) -> PathBuf {
    consent::session_directory(Some(roster), roster.path(), identity.pid, Some(identity), None, facts)
        .map(|directory| directory.path)
        .or_else(|_| std::env::current_dir())
        .unwrap_or_else(|_| PathBuf::from("/"))
}

fn print_outcome(args: &PruneArgs, outcome: &Outcome) -> anyhow::Result<()> {
    let report = &outcome.report;
    // Stdout is line-buffered: unbuffered, a report cost one write per line.
    let mut out = std::io::BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
    match args.common.output_format() {
        OutputFormat::Json => {
            let removed_consent =
                if args.dry_run { RowConsent::WOULD_BE_REMOVED } else { RowConsent::REMOVED };
            let removed: Vec<serde_json::Value> =
                report.removed.iter().map(|row| row.to_json(removed_consent)).collect();
            let value = serde_json::json!({
                "removed": removed,
                "dead_removed": report.dead_removed,
                "unknown_removed": report.unknown_removed,
                "current_removed": report.current_removed,
                "kept": report.kept,
                "temp_removed": report.temp_removed,
                "consent_removed": outcome.consent_removed,
                "dry_run": args.dry_run,
            });
            serde_json::to_writer_pretty(&mut out, &value)?;
            writeln!(out)?;
        }
        OutputFormat::Text => {
            let home = cli_support::process_env_os("HOME").map(PathBuf::from);
            let verb = if args.dry_run { "would remove" } else { "removed" };
            // Rendered on every core: 10,000 lines are some 10 ms of one.
            let lines = map_in_parallel(&report.removed, |row| {
                let mut line = String::with_capacity(LINE_CAPACITY);
                let _ = write!(line, "{verb} ");
                push_row_description(&mut line, row, home.as_deref());
                line.push('\n');
                line
            });
            for line in &lines {
                out.write_all(line.as_bytes())?;
            }
            writeln!(out, "{}", summary_line(verb, args.current, outcome))?;
            if !args.current
                && let Some(line) = dead_harness_files_line()
            {
                writeln!(out, "{line}")?;
            }
        }
    }
    out.flush()?;
    Ok(())
}

/// The last line of a text report: what went, by kind, and how many
/// entries were kept. `--current` removes on request, so its line counts
/// that and not dead or unknown entries, which it never looks for.
fn summary_line(verb: &str, current: bool, outcome: &Outcome) -> String {
    let report = &outcome.report;
    let markers = outcome.consent_removed;
    let markers = format!("{markers} consent marker{}", if markers == 1 { "" } else { "s" });
    if current {
        return format!("{verb} {} on request, {markers}; kept {}", report.current_removed, report.kept);
    }
    format!(
        "{verb} {} dead, {} unknown, {markers}, {} temporar{}; kept {}",
        report.dead_removed,
        report.unknown_removed,
        report.temp_removed,
        if report.temp_removed == 1 { "y" } else { "ies" },
        report.kept
    )
}

/// What is said of the dead sessions `roster-list --all` shows from the
/// harnesses' own files (docs/contract.md §6.5): roster-prune never removes
/// those, and says so rather than leave `removed 0 dead` unexplained next
/// to a listing that shows them. `None` when there is none.
fn dead_harness_files_line() -> Option<String> {
    let facts = RunningSystem::read();
    let (rows, _) = registry_core::adopted::read_adopted(&cli_support::harness_session_sources(true), &facts);
    let mut dead: BTreeMap<&'static str, usize> = BTreeMap::new();
    for row in rows.iter().filter(|row| row.liveness() == owner_liveness::Liveness::Dead) {
        if let Some((harness, _)) = adopted_row_name(&row.file_name) {
            *dead.entry(harness.display_name()).or_default() += 1;
        }
    }
    if dead.is_empty() {
        return None;
    }
    let counts: Vec<String> = dead
        .iter()
        .map(|(harness, count)| {
            format!("{count} dead {harness} session{}", if *count == 1 { "" } else { "s" })
        })
        .collect();
    Some(format!(
        "left {}: a harness's own files, which roster-prune never removes (the harness removes them \
         itself, or delete them by hand)",
        counts.join(" and ")
    ))
}

/// Room for a typical report line, so that writing one allocates once.
const LINE_CAPACITY: usize = 128;

/// `pid N (liveness: reason) place`, appended to `out`.
fn push_row_description(out: &mut String, row: &SessionRow, home: Option<&Path>) {
    match row.pid {
        Some(pid) => {
            let _ = write!(out, "pid {pid} ");
        }
        None => out.push_str("pid ? "),
    }
    let _ = write!(out, "({}: {}) ", row.liveness(), escape_for_terminal(&row.verdict.reason));
    match &row.record {
        Some(record) => push_home_relative(out, Path::new(&record.cwd), home),
        None => push_home_relative(out, &row.path, home),
    }
}
