//! `roster-list`: which agent sessions run on this machine right now, each
//! with a verdict that a reused pid or a stale file cannot fool (SPEC §6.2).
//! The clap `Command` lives here so xtask renders man pages and
//! completions from the definition users run.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{CommandFactory, Parser};
use cli_support::{
    BadInput, Colour, CommonArgs, OutputFormat, escape_for_terminal, format_age, home_relative,
    open_roster_for_reading, paint, render_table, run_tool, use_colour,
};
use harness::Harness;
use owner_liveness::Liveness;
use registry_core::{
    HOOK_LOG_NAME, ListFilter, Listing, RosterDir, SessionRow, Timestamp, list_sessions, recent_hook_errors,
};

const TOOL: &str = "roster-list";

/// How far back the footer looks for hook failures.
const HOOK_ERROR_WINDOW: Duration = Duration::from_secs(24 * 3600);

/// List the agent sessions running on this machine
#[derive(Debug, Parser)]
#[command(
    name = TOOL,
    version,
    about = "List the agent sessions running on this machine",
    long_about = "List the agent sessions running on this machine\n\n\
        Shows every registered session with a verdict: alive (the very process that registered \
        still runs), dead (proven gone: exited, pid reused, earlier boot) or unknown (could not \
        be examined, e.g. another pid namespace). Entries that cannot be believed (malformed, \
        untrusted, written by a newer roster) are listed as problems and never hide the others. \
        Newest registration first.",
    after_long_help = AFTER_HELP,
)]
pub struct ListArgs {
    #[command(flatten)]
    pub common: CommonArgs,

    /// Show dead sessions too
    #[arg(long)]
    pub all: bool,

    /// Show only sessions registered under this agent name ("" for the anonymous ones)
    #[arg(long, value_name = "NAME")]
    pub agent: Option<String>,

    /// Show only sessions of this harness (claude-code, codex, gemini-cli, ...; "" for an unknown one)
    #[arg(long, value_name = "NAME")]
    pub harness: Option<String>,

    /// Show only the session with this session id ("" for the sessions without one)
    #[arg(long, value_name = "ID")]
    pub session_id: Option<String>,

    /// Show only sessions working in DIR or below it
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
}

const AFTER_HELP: &str = "\
Examples:
  What runs right now:
    roster-list
  Everything, dead sessions included, for a script:
    roster-list --all --format json
  Pids of the live claude-code sessions in this repository:
    roster-list --harness claude-code --cwd . --json | jq '.[] | select(.liveness == \"alive\") | .session_pid'
  The sessions registered without an agent name:
    roster-list --agent \"\"

Filters: --agent, --harness and --session-id given \"\" select the sessions without that value \
(anonymous, unknown harness, no session id). With filters that match nothing the footer says \
`no sessions match` and names them; `no sessions registered` means the registry holds none.

Text output: a `?` after a pid marks an owner that was named by hand (--pid, ROSTER_SESSION_PID) \
and is not the registering process or one of its ancestors; consent refuses it. A problem \
entry shows its kind, its path and why it is not believed.

JSON rows carry every record key (null where absent) plus liveness, liveness_reason, \
problem (null, malformed, untrusted, unsupported-format), consent (armed, disarmed, none) \
and path.

Exit status: 0 listed (even when some entries are problems); 1 failed; 2 bad input; 3 \
untrusted roster directory.";

/// The clap definition, for xtask's man pages and completions.
pub fn command() -> clap::Command {
    ListArgs::command()
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    run_tool(TOOL, &[], || run(ListArgs::try_parse()?))
}

/// Lists as `args` say.
pub fn run(args: ListArgs) -> anyhow::Result<()> {
    let filter = build_filter(&args)?;
    let roster = open_roster_for_reading(&args.common)?;
    let listing = match &roster {
        Some(roster) => list_sessions(roster, &filter)?,
        None => Listing::default(),
    };
    // One listing of `consent/` tells which rows have a marker at all: most
    // have none, and looking for each one's file cost a `stat` per row.
    let markers: Option<std::collections::HashSet<std::ffi::OsString>> = roster
        .as_ref()
        .and_then(|roster| registry_core::list_names(roster, roster.consent()).ok())
        .map(|names| names.into_iter().collect());
    let consents: Vec<&'static str> = listing
        .rows
        .iter()
        .map(|row| match (&roster, row.record.as_ref()) {
            (Some(_), Some(record))
                if markers.as_ref().is_some_and(|markers| {
                    !markers.contains(std::ffi::OsStr::new(&consent::consent_file_name(record.pid())))
                }) =>
            {
                "none"
            }
            (Some(roster), Some(record)) => consent::live_consent_state(roster, record.pid()).as_str(),
            _ => "none",
        })
        .collect();
    // Stdout is line-buffered: unbuffered, a JSON listing cost one write
    // per line, 27 per record.
    let mut out = std::io::BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
    match args.common.output_format() {
        OutputFormat::Json => {
            let rows: Vec<registry_core::RowJson<'_>> =
                listing.rows.iter().zip(&consents).map(|(row, consent)| row.json_view(consent)).collect();
            serde_json::to_writer_pretty(&mut out, &rows)?;
            writeln!(out)?;
        }
        OutputFormat::Text => {
            let text = render_text(&listing, &consents, roster.as_ref(), &args, use_colour());
            out.write_all(text.as_bytes())?;
        }
    }
    out.flush()?;
    Ok(())
}

fn build_filter(args: &ListArgs) -> anyhow::Result<ListFilter> {
    if let Some(name) = &args.harness
        && !name.is_empty()
        && Harness::parse(name).is_none()
    {
        let names: Vec<&str> = Harness::ALL.iter().map(|harness| harness.as_str()).collect();
        return Err(BadInput(format!(
            "--harness {name:?} is not a harness roster knows; use one of {} (or \"\" for an unknown harness)",
            names.join(", ")
        ))
        .into());
    }
    let cwd = match &args.cwd {
        Some(dir) => {
            Some(registry_core::retry_interrupted(|| std::fs::canonicalize(dir)).map_err(|error| {
                BadInput(format!("--cwd {}: {error}; give an existing directory", dir.display()))
            })?)
        }
        None => None,
    };
    Ok(ListFilter {
        include_dead: args.all,
        agent: args.agent.clone(),
        harness: args.harness.clone(),
        session_id: args.session_id.clone(),
        cwd,
    })
}

fn render_text(
    listing: &Listing,
    consents: &[&str],
    roster: Option<&RosterDir>,
    args: &ListArgs,
    colour: bool,
) -> String {
    let home = cli_support::process_env_os("HOME").map(PathBuf::from);
    let now = Timestamp::now();
    let mut text = String::new();
    if !listing.rows.is_empty() {
        let rows: Vec<Vec<String>> = listing
            .rows
            .iter()
            .zip(consents)
            .map(|(row, consent)| text_row(row, consent, home.as_deref(), now))
            .collect();
        let headers = ["PID", "HARNESS", "AGENT", "STATE", "CONSENT", "AGE", "CWD", "SESSION"];
        text.push_str(&render_table(&headers, &rows, &|column, cell| match (column, cell) {
            (3, "alive") => paint(cell, Colour::Green, colour),
            (3, "dead") => paint(cell, Colour::Red, colour),
            (3, "unknown") => paint(cell, Colour::Yellow, colour),
            _ => cell.to_owned(),
        }));
    }
    if args.common.quiet {
        return text;
    }
    for line in footer(listing, roster, &filter_words(args, home.as_deref()), now) {
        text.push_str(&paint(&line, Colour::Dim, colour));
        text.push('\n');
    }
    text
}

/// The mark after the pid of an owner named by hand that is not an
/// ancestor of the registering process (`session_pid_verified: false`).
const UNVERIFIED_MARK: &str = "?";

fn text_row(row: &SessionRow, consent: &str, home: Option<&Path>, now: Timestamp) -> Vec<String> {
    let unverified = row.record.as_ref().is_some_and(|record| !record.session_pid_verified);
    let pid = match row.pid {
        Some(pid) if unverified => format!("{pid}{UNVERIFIED_MARK}"),
        Some(pid) => pid.to_string(),
        None => "?".to_owned(),
    };
    let age = format_age(row.registered_at.age(now));
    let state = row.liveness().as_str().to_owned();
    match (&row.record, &row.problem) {
        (Some(record), _) => vec![
            pid,
            if record.harness.is_empty() {
                "-".to_owned()
            } else {
                escape_for_terminal(&record.harness).into_owned()
            },
            record
                .agent
                .as_deref()
                .map_or_else(|| "-".to_owned(), |agent| escape_for_terminal(agent).into_owned()),
            state,
            consent.to_owned(),
            age,
            home_relative(Path::new(&record.cwd), home),
            record
                .session_id
                .as_deref()
                .map_or_else(|| "-".to_owned(), |id| escape_for_terminal(id).into_owned()),
        ],
        (None, problem) => vec![
            pid,
            "-".to_owned(),
            "-".to_owned(),
            state,
            "-".to_owned(),
            age,
            match problem {
                Some(problem) => format!(
                    "{}: {} ({})",
                    problem.kind.as_str(),
                    home_relative(&row.path, home),
                    escape_for_terminal(&problem.detail)
                ),
                None => format!("problem: {}", home_relative(&row.path, home)),
            },
            "-".to_owned(),
        ],
    }
}

/// The field filters given, as flags a reader can retype: `--agent wren`,
/// `--session-id ""`. Empty when none is given.
fn filter_words(args: &ListArgs, home: Option<&Path>) -> String {
    let quoted = |value: &str| {
        let plain = !value.is_empty()
            && !value.chars().any(|character| character.is_whitespace() || "\"'\\$`".contains(character));
        let shown = if plain { value.to_owned() } else { format!("{value:?}") };
        escape_for_terminal(&shown).into_owned()
    };
    let mut words = Vec::new();
    for (flag, value) in
        [("--agent", &args.agent), ("--harness", &args.harness), ("--session-id", &args.session_id)]
    {
        if let Some(value) = value {
            words.push(format!("{flag} {}", quoted(value)));
        }
    }
    if let Some(dir) = &args.cwd {
        words.push(format!("--cwd {}", home_relative(dir, home)));
    }
    words.join(" ")
}

/// Lines naming what the reader should act on.
fn footer(listing: &Listing, roster: Option<&RosterDir>, filters: &str, now: Timestamp) -> Vec<String> {
    let mut lines = Vec::new();
    let Some(roster) = roster else {
        lines.push("no sessions: nothing was ever registered here (roster-register adds one)".to_owned());
        return lines;
    };
    let registry_is_empty = listing.rows.is_empty() && listing.dead_hidden == 0 && listing.filtered_out == 0;
    if registry_is_empty {
        lines.push(format!(
            "no sessions registered in {}",
            escape_for_terminal(&roster.path().display().to_string())
        ));
    } else if listing.rows.is_empty() && !filters.is_empty() {
        let except = if listing.dead_hidden > 0 { " except dead ones" } else { "" };
        lines.push(format!("no sessions match {filters}{except}"));
    }
    let unverified = listing
        .rows
        .iter()
        .filter(|row| row.record.as_ref().is_some_and(|record| !record.session_pid_verified))
        .count();
    if unverified > 0 {
        lines.push(format!(
            "{unverified} unverified owner{}, marked {UNVERIFIED_MARK} after the pid: named by hand, not the \
             registering process or its ancestor; consent refuses {}",
            plural(unverified),
            if unverified == 1 { "it" } else { "them" }
        ));
    }
    if listing.dead_hidden > 0 {
        lines.push(format!(
            "{} dead session{} hidden: `roster-list --all` shows them, `roster-prune` removes them",
            listing.dead_hidden,
            plural(listing.dead_hidden)
        ));
    }
    let unknown = listing.rows.iter().filter(|row| row.liveness() == Liveness::Unknown).count();
    if unknown > 0 {
        let problems = listing.rows.iter().filter(|row| row.problem.is_some()).count();
        let problem_note =
            if problems > 0 { format!(" ({problems} of them problem entries)") } else { String::new() };
        lines.push(format!(
            "{unknown} unknown entr{}{problem_note}: only `roster-prune --older-than DURATION` removes them",
            if unknown == 1 { "y" } else { "ies" }
        ));
    }
    let (failures, last) = recent_hook_errors(roster, now, HOOK_ERROR_WINDOW);
    if failures > 0 {
        lines.push(format!(
            "{failures} hook failure{} in the last day, see {}; last: {}",
            plural(failures),
            escape_for_terminal(&roster.path().join(HOOK_LOG_NAME).display().to_string()),
            escape_for_terminal(last.as_deref().unwrap_or(""))
        ));
    }
    lines
}

fn plural(count: usize) -> &'static str {
    if count == 1 { "" } else { "s" }
}
