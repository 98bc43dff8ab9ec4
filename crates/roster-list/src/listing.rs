//! What one listing is: the flags `roster-list` takes (`ListArgs`), the
//! filter they make, and the listing printed from a registry (or from the
//! harnesses' own sessions when there is none), with its notes. The
//! binary's entry point (lib.rs) and the many-host view (`hosts/`) both
//! stand on it.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Parser;
use cli_support::{
    BadInput, Colour, CommonArgs, NotUtf8Path, OutputFormat, escape_for_terminal, home_relative, paint,
};
use consent::{ConsentDecider, ConsentLabel};
use harness::Harness;
use registry_core::{
    ListFilter, ListingSummary, RosterDir, RunningSystem, SessionRow, Timestamp, list_sessions_presented,
};

use crate::locations::Locations;
use crate::table::{self, CONSENT_COLUMN, TableOptions};
use crate::{json_array, notes};

/// The binary's name.
pub(crate) const TOOL: &str = "roster-list";

/// List the agent sessions running on this machine
#[derive(Clone, Debug, Parser)]
#[command(
    name = TOOL,
    version,
    about = "List the agent sessions running on this machine",
    long_about = "List the agent sessions running on this machine\n\n\
        Shows every registered session with a verdict (LIVENESS) and what it is doing (STATE: working, \
        idle, waiting for its user, or unknown). The verdict is alive (the very process that registered \
        still runs, or another process of its recorded chain, such as Copilot's native binary \
        after its node loader was killed), dead (every process of it proven gone: exited, pid \
        reused, earlier boot) or unknown (could not be examined, e.g. another pid namespace). \
        The reason names the process the verdict rests on. Entries that cannot be believed (malformed, \
        untrusted, written by a newer roster) are listed as problems and never hide the others. \
        Newest registration first.",
)]
pub struct ListArgs {
    #[command(flatten)]
    pub common: CommonArgs,

    /// Show dead sessions too
    #[arg(short = 'a', long)]
    pub all: bool,

    /// Show only sessions registered under this agent name ("" for the anonymous ones)
    #[arg(short = 'A', long, value_name = "NAME", add = cli_support::agent_names())]
    pub agent: Option<String>,

    /// Show only sessions of this harness (claude-code, codex, gemini-cli, ...; "" for an unknown one)
    #[arg(short = 'H', long, value_name = "NAME")]
    pub harness: Option<String>,

    /// Show only the session with this session id ("" for the sessions without one)
    #[arg(short = 'i', long, value_name = "ID", add = cli_support::session_ids())]
    pub session_id: Option<String>,

    /// Show only sessions working in DIR or below it
    #[arg(short = 'C', long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,

    /// Show only sessions in these states, a comma list of working, idle, waiting (for their user), unknown
    #[arg(
        short = 's',
        long,
        value_name = "STATE[,STATE...]",
        value_delimiter = ',',
        value_parser = ["working", "idle", "waiting", "unknown"]
    )]
    pub state: Vec<String>,

    /// List roster's own records only, not the sessions Claude Code (~/.claude/sessions) and Copilot CLI (~/.copilot/session-state) keep
    #[arg(long)]
    pub no_adopt: bool,

    /// Show these columns, in this order: a comma list of pid, harness, agent, liveness, state, consent, msgs, location, age, cwd, session, reason
    #[arg(short = 'c', long, value_name = "COLUMN[,COLUMN...]")]
    pub columns: Option<String>,

    /// Show every cell whole: full session ids, no cut to the terminal's width
    #[arg(short = 'W', long)]
    pub wide: bool,

    /// Fit the table in N columns (default: $COLUMNS, else the terminal's width; no limit into a pipe)
    #[arg(long, value_name = "N", conflicts_with = "wide", value_parser = clap::value_parser!(u16).range(1..))]
    pub width: Option<u16>,

    /// Do not explain the table's marks and CONSENT labels on stderr (each is said once otherwise)
    #[arg(long)]
    pub no_legend: bool,

    /// List the sessions that ended instead, newest first: when, how (exited, crashed, reboot, removed), harness, agent, directory, session id, and the command that resumes it (or none and why)
    #[arg(long, conflicts_with_all = ["watch", "until_gone", "host", "hosts_file", "all", "state", "columns"])]
    pub ended: bool,

    /// With --ended, only the sessions that ended within DURATION (90m, 36h, 7d, 2w)
    #[arg(long, value_name = "DURATION", requires = "ended")]
    pub since: Option<String>,

    /// After the rows, print one event per change until interrupted (see EVENTS)
    #[arg(short = 'w', long)]
    pub watch: bool,

    /// Print the events until the session with this owner pid or session id is gone, then exit 0
    #[arg(long, value_name = "PID|SESSION_ID", add = cli_support::session_pids_and_ids())]
    pub until_gone: Option<String>,

    /// List the sessions of HOST through ssh (repeatable; `local` is this machine; see HOSTS)
    #[arg(long, value_name = "[USER@]HOST[:PORT]")]
    pub host: Vec<String>,

    /// List the sessions of each host FILE names, one a line (# starts a comment), as --host does
    #[arg(long, value_name = "FILE")]
    pub hosts_file: Option<PathBuf>,

    /// Seconds ssh may take to connect to a host of --host
    #[arg(long, value_name = "SECONDS", default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=3600))]
    pub connect_timeout: u32,
}

/// What a text listing adds to its rows for stderr: the consent labels it
/// shows (for the legend) and what to say of columns left out to fit.
#[derive(Debug, Default)]
pub(crate) struct TableExtras {
    pub(crate) consent_labels: Vec<ConsentLabel>,
    pub(crate) columns_note: Option<String>,
}

impl ListArgs {
    /// How the text table is laid out: `--columns` (checked here, bad
    /// input before anything is printed), `--wide`, `--width`.
    pub(crate) fn table_options(&self) -> Result<TableOptions, BadInput> {
        TableOptions::from_flags(self.columns.as_deref(), self.wide, self.width.map(usize::from))
    }

    /// The states `--state` asks for as one comma list, as it may be retyped.
    pub(crate) fn state_words(&self) -> Option<String> {
        (!self.state.is_empty()).then(|| self.state.join(","))
    }
}

/// Prints the rows of `roster` that `filter` shows. Each row's consent is
/// decided and the row rendered (its JSON, its table cells) on the thread
/// that judged it, right after; what is left for this thread is the sort
/// and the writing.
pub(crate) fn print_listing(
    roster: &RosterDir,
    filter: &ListFilter,
    args: &ListArgs,
    table_options: &TableOptions,
    out: &mut impl Write,
) -> anyhow::Result<(ListingSummary, TableExtras)> {
    let facts = RunningSystem::read();
    // One listing of `consent/` tells which rows have a marker at all: most
    // have none, and looking for each one's file cost a `stat` per row.
    let decider = ConsentDecider::new(&cli_support::process_env_os).knowing_markers_of(roster);
    let locations = Locations::new();
    match args.common.output_format() {
        OutputFormat::Json => {
            let present = |row: SessionRow| {
                let row = locations.checked(row);
                let consent = decider.for_row(roster, &row, &facts);
                json_array::render_array_element(&row.json_view(consent.row_consent()))
            };
            let listing = list_sessions_presented(roster, filter, &facts, &present)?;
            let summary = listing.summary().clone();
            let mut failed = None;
            let rows = listing
                .into_presented(roster, filter, &facts, &present)
                .map_while(|row| row.map_err(|error| failed = Some(error)).ok());
            json_array::write_array(out, rows)?;
            if let Some(error) = failed {
                return Err(anyhow::anyhow!("rendering a row as JSON: {error}"));
            }
            Ok((summary, TableExtras::default()))
        }
        OutputFormat::Text => {
            let home = cli_support::process_env_os("HOME").map(PathBuf::from);
            let now = Timestamp::now();
            let present = |row: SessionRow| {
                let row = locations.checked(row);
                let consent = decider.for_row(roster, &row, &facts);
                table::text_row(&row, &consent, home.as_deref(), now)
            };
            let listing = list_sessions_presented(roster, filter, &facts, &present)?;
            let summary = listing.summary().clone();
            let mut rows: Vec<Vec<String>> =
                listing.into_presented(roster, filter, &facts, &present).collect();
            let (text, columns_note) =
                table::render_listing(&mut rows, table_options, args.common.colour_on_stdout());
            out.write_all(text.as_bytes())?;
            let extras = TableExtras { consent_labels: consent_labels_shown(&rows), columns_note };
            // The process ends right after printing: freeing the cells one
            // by one (eight per row) took as long as rendering the table,
            // on the one thread, for memory the exit gives back at once.
            std::mem::forget(rows);
            Ok((summary, extras))
        }
    }
}

/// The listing when roster's registry does not exist yet: the sessions
/// Claude Code keeps (when they are adopted), whose consent no marker can
/// have decided yet.
pub(crate) fn print_adopted_only(
    filter: &ListFilter,
    args: &ListArgs,
    table_options: &TableOptions,
    out: &mut impl Write,
) -> anyhow::Result<(ListingSummary, TableExtras)> {
    let facts = RunningSystem::read();
    let (rows, adopted_unread) = registry_core::adopted::read_adopted(&filter.adopt, &facts);
    let locations = Locations::new();
    let rows: Vec<SessionRow> = rows.into_iter().map(|row| locations.checked(row)).collect();
    let listing = registry_core::Listing::of_rows(&rows, filter);
    let mut summary = listing.summary();
    summary.adopted_unread = adopted_unread;
    let decider = ConsentDecider::new(&cli_support::process_env_os);
    match args.common.output_format() {
        OutputFormat::Json => {
            let rendered = listing.rows.iter().map(|row| {
                let consent = decider.for_row_without_registry(row);
                json_array::render_array_element(&row.json_view(consent.row_consent()))
            });
            let rendered: Vec<_> = rendered.collect::<Result<_, _>>()?;
            json_array::write_array(out, rendered.into_iter())?;
            Ok((summary, TableExtras::default()))
        }
        OutputFormat::Text => {
            let home = cli_support::process_env_os("HOME").map(PathBuf::from);
            let now = Timestamp::now();
            let mut cells: Vec<Vec<String>> = listing
                .rows
                .iter()
                .map(|row| table::text_row(row, &decider.for_row_without_registry(row), home.as_deref(), now))
                .collect();
            let (text, columns_note) =
                table::render_listing(&mut cells, table_options, args.common.colour_on_stdout());
            out.write_all(text.as_bytes())?;
            Ok((summary, TableExtras { consent_labels: consent_labels_shown(&cells), columns_note }))
        }
    }
}

/// Writes notes in one call, so a failure cannot leave half a line before
/// the error line that reports it.
pub(crate) fn write_whole(err: &mut impl Write, text: &str) -> anyhow::Result<()> {
    if text.is_empty() {
        return Ok(());
    }
    err.write_all(text.as_bytes())
        .map_err(|error| anyhow::anyhow!("writing the notes to standard error: {error}"))
}

/// Says on stderr what the reader should know beyond the rows: for a
/// script, every current note as one JSON line; for people, why the table
/// is empty, and each note once per cause, among them what its marks and
/// the consent labels it shows mean (unless `--no-legend`).
pub(crate) fn report_notes(
    listing: &ListingSummary,
    extras: &TableExtras,
    roster: Option<&RosterDir>,
    args: &ListArgs,
) -> anyhow::Result<()> {
    let mut err = std::io::stderr().lock();
    if args.common.output_format() == OutputFormat::Json {
        if let Some(roster) = roster {
            let notes = notes::current_notes(listing, roster);
            if !notes.is_empty() {
                write_whole(&mut err, &format!("{}\n", notes::notes_json_line(&notes)))?;
            }
        }
        return Ok(());
    }
    let home = cli_support::process_env_os("HOME").map(PathBuf::from);
    let refusal = match roster {
        Some(_) => None,
        None => refusal_of_a_new_registry(args),
    };
    let mut lines = listing_remarks(listing, roster, refusal, &filter_words(args, home.as_deref()));
    let mut legend = if args.no_legend {
        Vec::new()
    } else {
        notes::legend_notes(&extras.consent_labels, listing.unverified)
    };
    legend.extend(extras.columns_note.clone().map(notes::columns_note));
    let mut shown_state = None;
    match roster {
        Some(roster) => {
            let (unseen, state) = notes::unseen_notes(listing, roster, legend);
            lines.extend(unseen.into_iter().map(|note| note.message));
            shown_state = state.map(|state| (roster, state));
        }
        // Without a registry there is nowhere to remember what was said.
        None => lines.extend(legend.into_iter().map(|note| note.message)),
    }
    let colour = args.common.colour_on_stderr();
    let text: String = lines.iter().map(|line| format!("{}\n", paint(line, Colour::Dim, colour))).collect();
    write_whole(&mut err, &text)?;
    if let Some((roster, state)) = shown_state {
        notes::remember_shown(roster, &state);
    }
    Ok(())
}

pub(crate) fn build_filter(args: &ListArgs) -> anyhow::Result<ListFilter> {
    if let Some(name) = &args.harness
        && !name.is_empty()
        && Harness::parse(name).is_none()
    {
        let message = harness::unknown_harness_message(
            &format!("--harness {name:?}"),
            "a harness roster knows",
            name,
            &harness::harness_names(),
        );
        return Err(BadInput(format!("{message} (or \"\" for an unknown harness)")).into());
    }
    // Records hold directories as text: a directory that is not UTF-8, as
    // given or as resolved, is no session's, and is refused rather than
    // compared lossily (as `\u{fffd}`, another directory).
    let not_utf8 =
        |path: &Path| NotUtf8Path::directory("--cwd", path, "give --cwd a directory whose path is UTF-8");
    let cwd = match &args.cwd {
        Some(dir) if dir.to_str().is_none() => return Err(not_utf8(dir).into()),
        Some(dir) => {
            let canonical =
                owner_liveness::retry_interrupted(|| std::fs::canonicalize(dir)).map_err(|error| {
                    BadInput(format!("--cwd {}: {error}; give an existing directory", dir.display()))
                })?;
            if canonical.to_str().is_none() {
                return Err(not_utf8(&canonical).into());
            }
            if !canonical.is_dir() {
                return Err(BadInput(format!(
                    "--cwd {}: not a directory; give the directory sessions work in",
                    cli_support::escape_path_for_terminal(dir)
                ))
                .into());
            }
            Some(canonical)
        }
        None => None,
    };
    Ok(ListFilter {
        include_dead: args.all,
        agent: args.agent.clone(),
        harness: args.harness.clone(),
        session_id: args.session_id.clone(),
        cwd,
        state: (!args.state.is_empty())
            .then(|| args.state.iter().map(|state| harness::Activity::parse(state)).collect()),
        adopt: cli_support::harness_session_sources(!args.no_adopt),
    })
}

/// The consent labels the table's rows show, each once, in legend order.
pub(crate) fn consent_labels_shown(rows: &[Vec<String>]) -> Vec<ConsentLabel> {
    let mut shown = [false; ConsentLabel::ALL.len()];
    for row in rows {
        if let Some(index) = ConsentLabel::ALL.iter().position(|label| label.as_str() == row[CONSENT_COLUMN])
        {
            shown[index] = true;
        }
    }
    ConsentLabel::ALL.into_iter().zip(shown).filter_map(|(label, shown)| shown.then_some(label)).collect()
}

/// The field filters given, as flags a reader can retype: `--agent wren`,
/// `--session-id ""`. Empty when none is given.
pub(crate) fn filter_words(args: &ListArgs, home: Option<&Path>) -> String {
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
    if let Some(states) = args.state_words() {
        words.push(format!("--state {states}"));
    }
    words.join(" ")
}

/// Why `roster-register` would refuse the registry that does not exist
/// yet at the path these flags choose, in the words it would use: a hint
/// to register there would lead into that refusal.
pub(crate) fn refusal_of_a_new_registry(args: &ListArgs) -> Option<String> {
    let path = cli_support::roster_directory_choice(&args.common).ok()?.path;
    RosterDir::check_creatable(&path).err().map(|error| error.to_string())
}

/// What a person needs to read the listing, said on every call: why it
/// is empty (for a registry that does not exist, also why roster would
/// refuse it, `refusal`).
pub(crate) fn listing_remarks(
    listing: &ListingSummary,
    roster: Option<&RosterDir>,
    refusal: Option<String>,
    filters: &str,
) -> Vec<String> {
    let mut lines = Vec::new();
    let Some(roster) = roster else {
        // With a registry this is one of its notes (`notes::current_notes`).
        for why in &listing.adopted_unread {
            lines.push(escape_for_terminal(why).into_owned());
        }
        if listing.shown > 0 || listing.dead_hidden > 0 || listing.filtered_out > 0 {
            // Claude Code's own sessions, listed without a registry.
            return lines;
        }
        lines.push(match refusal {
            Some(why) => format!(
                "no sessions: nothing was ever registered here, and roster-register would refuse it: {}",
                escape_for_terminal(&why)
            ),
            None => "no sessions: nothing was ever registered here (roster-register adds one)".to_owned(),
        });
        return lines;
    };
    if listing.registry_is_empty() {
        lines.push(format!(
            "no sessions registered in {}",
            escape_for_terminal(&roster.path().display().to_string())
        ));
    } else if listing.shown == 0 && !filters.is_empty() {
        let except = if listing.dead_hidden > 0 { " except dead ones" } else { "" };
        lines.push(format!("no sessions match {filters}{except}"));
    }
    lines
}
