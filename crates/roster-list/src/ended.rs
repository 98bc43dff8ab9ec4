//! `roster-list --ended`: the sessions that left the registry (their
//! session end, a prune or reap of a dead one, a removal by age), newest
//! first, as `ended/` keeps them, with the command that resumes each
//! (docs/contract.md §6.2.1). Entries that
//! cannot be believed are skipped and counted in a note on stderr.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use cli_support::{
    BadInput, Colour, OutputFormat, escape_for_terminal, home_relative, paint, parse_duration,
};
use registry_core::{EndedSession, ListFilter, Timestamp, list_ended};

use crate::listing::{ListArgs, build_filter};
use crate::notes::{Note, NoteKind, notes_json_line};

/// The table's columns.
/// RESUME, last, is the command that resumes the session in its directory
/// (shell-quoted), or `none: ` and why.
const HEADERS: [&str; 7] = ["ENDED", "HOW", "HARNESS", "AGENT", "CWD", "SESSION", "RESUME"];

/// Lists the ended sessions as `args` say.
pub(crate) fn run_ended(args: &ListArgs) -> anyhow::Result<()> {
    let since = match &args.since {
        Some(text) => Some(parse_duration(text).map_err(|why| BadInput(format!("--since: {why}")))?),
        None => None,
    };
    let filter = build_filter(args)?;
    let listing = match cli_support::open_roster_for_reading(&args.common)? {
        Some(roster) => list_ended(&roster)?,
        None => registry_core::EndedListing::default(),
    };
    let now = Timestamp::now();
    let shown: Vec<&EndedSession> =
        listing.sessions.iter().filter(|session| shows(session, &filter, since, now)).collect();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    match args.common.output_format() {
        OutputFormat::Json => {
            let shown: Vec<_> = shown.iter().map(|session| session.shown()).collect();
            serde_json::to_writer_pretty(&mut out, &shown)?;
            writeln!(out)?;
        }
        OutputFormat::Text => {
            let home = cli_support::process_env_os("HOME").map(PathBuf::from);
            let rows: Vec<Vec<String>> =
                shown.iter().map(|session| text_row(session, home.as_deref(), now)).collect();
            if !rows.is_empty() {
                out.write_all(cli_support::render_table(&HEADERS, &rows, &|_, cell| cell.into()).as_bytes())?;
            }
        }
    }
    out.flush()?;
    drop(out);
    if !args.common.quiet {
        report(args, shown.len(), listing.skipped)?;
    }
    Ok(())
}

/// Whether `filter` and `--since` show `session`.
fn shows(session: &EndedSession, filter: &ListFilter, since: Option<Duration>, now: Timestamp) -> bool {
    since.is_none_or(|since| session.ended().age(now) <= since)
        && filter.agent.as_deref().is_none_or(|agent| session.agent.as_deref().unwrap_or("") == agent)
        && filter.harness.as_deref().is_none_or(|harness| session.harness == harness)
        && filter.session_id.as_deref().is_none_or(|id| session.session_id.as_deref().unwrap_or("") == id)
        && filter.cwd.as_deref().is_none_or(|dir| Path::new(&session.cwd).starts_with(dir))
}

fn text_row(session: &EndedSession, home: Option<&Path>, now: Timestamp) -> Vec<String> {
    let dash = |value: Option<&str>| value.filter(|value| !value.is_empty()).unwrap_or("-").to_owned();
    vec![
        cli_support::time_text(session.ended(), now),
        session.how.as_str().to_owned(),
        dash(Some(&session.harness)),
        escape_for_terminal(&dash(session.agent.as_deref())).into_owned(),
        escape_for_terminal(&home_relative(Path::new(&session.cwd), home)).into_owned(),
        dash(session.session_id.as_deref()),
        escape_for_terminal(&resume_text(session)).into_owned(),
    ]
}

/// The RESUME cell: the command line to run in the session's directory, or
/// `none: ` and why.
fn resume_text(session: &EndedSession) -> String {
    match session.resume() {
        harness::Resume::Command { argv, .. } => argv
            .iter()
            .map(|word| harness::hook_config::shell_quote(word).into_owned())
            .collect::<Vec<_>>()
            .join(" "),
        harness::Resume::Unavailable(why) => format!("none: {why}"),
    }
}

/// Says on stderr that nothing ended (in text) and how many entries were
/// skipped, each time: an entry not believed is said, never listed.
fn report(args: &ListArgs, shown: usize, skipped: usize) -> anyhow::Result<()> {
    let mut notes = Vec::new();
    if skipped > 0 {
        notes.push(Note {
            kind: NoteKind::EndedSkipped,
            cause: skipped.to_string(),
            message: format!(
                "{skipped} ended-session entr{} skipped: not to be believed (not a regular file of yours, \
                 or not an ended session roster wrote)",
                if skipped == 1 { "y" } else { "ies" }
            ),
        });
    }
    let mut err = std::io::stderr().lock();
    if args.common.output_format() == OutputFormat::Json {
        if !notes.is_empty() {
            writeln!(err, "{}", notes_json_line(&notes))?;
        }
        return Ok(());
    }
    let mut lines: Vec<String> = Vec::new();
    if shown == 0 {
        lines.push("no ended sessions".to_owned());
    }
    lines.extend(notes.into_iter().map(|note| note.message));
    let colour = args.common.colour_on_stderr();
    for line in lines {
        writeln!(err, "{}", paint(&line, Colour::Dim, colour))?;
    }
    Ok(())
}
