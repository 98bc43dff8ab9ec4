//! `roster-list`: which agent sessions run on this machine right now, each
//! with a verdict that a reused pid or a stale file cannot fool (docs/contract.md §6.2).
//! The clap `Command` lives here so xtask renders man pages and
//! completions from the definition users run.

#![forbid(unsafe_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{CommandFactory, Parser};
use cli_support::manual::{self, Example, ExitStatusDoc, FileEntry, Manual};
use cli_support::{
    BadInput, Colour, CommonArgs, ExitStatus, NotUtf8Path, OutputFormat, escape_for_terminal, home_relative,
    open_roster_for_reading, paint, run_tool,
};
use consent::{ConsentDecider, ConsentLabel};
use harness::Harness;
use registry_core::adopted::AdoptedSource;
use registry_core::{
    ListFilter, ListingSummary, RosterDir, RunningSystem, SessionRow, Timestamp, list_sessions_presented,
};

mod json_array;

mod table;

use table::{CONSENT_COLUMN, UNVERIFIED_MARK};

mod notes;

mod watch;

mod hosts;

pub use watch::{EVENT_SCHEMA, EventKind};

const TOOL: &str = "roster-list";

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

    /// Show only sessions in this state: working, idle, waiting (for their user) or unknown
    #[arg(long, value_name = "STATE", value_parser = ["working", "idle", "waiting", "unknown"])]
    pub state: Option<String>,

    /// List roster's own records only, not the sessions Claude Code (~/.claude/sessions) and Copilot CLI (~/.copilot/session-state) keep
    #[arg(long)]
    pub no_adopt: bool,

    /// After the rows, print one event per change until interrupted (see EVENTS)
    #[arg(long)]
    pub watch: bool,

    /// Print the events until the session with this owner pid or session id is gone, then exit 0
    #[arg(long, value_name = "PID|SESSION_ID")]
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

/// Examples, notes (the EVENTS section of the man page among them),
/// environment, files and exit statuses: `--help` and the man page both
/// render this.
pub fn manual() -> Manual {
    Manual {
        examples: &[
            Example { description: "What runs right now:", commands: &["roster-list"], output: &[] },
            Example {
                description: "Everything, dead sessions included, for a script:",
                commands: &["roster-list --all --format json"],
                output: &[],
            },
            Example {
                description: "Pids of the live claude-code sessions working in this repository:",
                commands: &[
                    "roster-list --harness claude-code --cwd . --json |",
                    "    jq '.[] | select(.liveness == \"alive\") | .session_pid'",
                ],
                output: &[],
            },
            Example {
                description: "The sessions working as agent wren:",
                commands: &["roster-list --agent wren"],
                output: &[],
            },
            Example {
                description: "The sessions registered without an agent name:",
                commands: &["roster-list --agent \"\""],
                output: &[],
            },
            Example {
                description: "The sessions waiting for you, and each moment one starts waiting:",
                commands: &["roster-list --state waiting", "roster-list --watch --state waiting"],
                output: &[],
            },
            Example {
                description: "Follow the registry live, one JSON event per line (see Events):",
                commands: &["roster-list --watch --json"],
                output: &[],
            },
            Example {
                description: "Every machine's sessions through your ssh, and their events for a collector:",
                commands: &[
                    "roster-list --host local --host ann@build1 --host build2:2222",
                    "roster-list --watch --json --hosts-file ~/.config/roster/hosts",
                ],
                output: &[],
            },
            Example {
                description: "Wait until session 5854 has ended, like tail --pid:",
                commands: &["roster-list --until-gone 5854 && echo finished"],
                output: &[],
            },
        ],
        notes: vec![
            "Events: with --watch, roster-list prints the current rows, then one line per change until \
             SIGINT, SIGTERM or the reader of its output goes away (exit 0 in each case): registered (a new \
             session, or a new owner at a pid), refreshed (the same owner wrote its record again: a new \
             session id after /clear, a new directory), consent-changed (the row's consent decision changed: \
             its marker, the user config or the nearest .roster.toml above the session's directory was \
             created, edited or removed), died (the owner exited, seen the instant it happens; its record may \
             still be on disk), removed (the record is gone: pruned, or the session ended), problem (an entry \
             that cannot be believed appeared or changed), unmatched (a row that passed the field filters no \
             longer does, e.g. re-registered under another agent name: said once, then nothing more about it \
             while it does not match), resync (events may have been lost, the registry directory was removed \
             or recreated, or its path now leads to another directory, a symlink above it swapped: everything \
             was read again and every difference follows as events), state-changed (a live session's \
             state changed: it started working, went idle, or began waiting for its user; once per change), \
             message-queued (a message was queued for the session with roster-send), message-delivered, \
             message-expired, message-refused (a message for it was settled so: handed to the session, its \
             time to live ran out or the session ended, or the session no longer accepted messages); each \
             message is reported queued once and settled once, and those settled before the watch started \
             are not. The field filters apply to events, a message's too; died events are shown without --all. With --state S the \
             watch shows the rows listed in that state, then only the state-changed events into it: the \
             moments a session starts waiting, say, once each. An owner found gone is reported died before its record is \
             reported removed, however far behind the watcher fell."
                .to_owned(),
            "Events in JSON (--format json) are one object per line: schema (1), event (listed for each row \
             present at the start, then the names above), at (RFC 3339 in UTC with milliseconds), row (the \
             row exactly as roster-list --format json prints it; for removed the last row seen; for unmatched \
             the row now; null for resync) and, for resync, reason. The message events add message: {id, seq, \
             from {pid, agent, harness, session_id}, queued_at, expires_at, outcome (null, or {kind, at, event, \
             reason}), bytes (the length of its text)}, never the text; their row's messages_pending is the \
             count of messages waiting now. Schema 1 is a stable contract: keys and \
             event names may be added, none changes meaning or goes away without a new schema number. In \
             text, each event is one line in the columns of the table, after the local time and the event \
             (TIME EVENT PID HARNESS AGENT LIVENESS STATE CONSENT AGE CWD SESSION), under a header when the output is \
             a terminal; a column is as wide as its widest value may be, and an agent name longer than the \
             AGENT column is cut, ending in …, as the table cuts it."
                .to_owned(),
            "Events come from inotify on the registry directory, on the directories holding the symlinks on \
             its path, and on the directories the shown sessions' consent is read from (the user config's, \
             and each live session's directory and those above it up to its nearest .roster.toml), and a \
             pidfd on each live owner, in one epoll: no polling and no daemon, and no system call at all while \
             nothing changes. Where the open-file limit leaves owners without a pidfd, or the inotify watch \
             limit leaves a directory unfollowed, roster-list says so once on stderr and looks again on every \
             change of the registry. A path that comes to lead to a registry that is not trusted is said on \
             stderr and watched as if absent. --until-gone PID|SESSION_ID prints the events until no live \
             session has that owner pid or session id, then exits 0; it does not print the rows present at \
             the start unless --watch is given too. A pid or session id that no live session has when it \
             starts is exit 2, so that a typo does not look like a session that finished."
                .to_owned(),
            "State: what each live session is doing, from its harness's own hook events (roster-state, \
             which roster-hooks install wires): working (a turn runs), idle (the turn ended; it waits for a \
             prompt), waiting (blocked on its user; waiting_for says permission or input), or unknown (no \
             event has said, the harness has no such event, or the owner is not alive). The STATE column \
             shows it with its age (working 3m, idle 20s, waiting: permission 5s); JSON rows carry state, \
             waiting_for, state_since and state_source (the event that set it, e.g. \
             claude-code:PermissionRequest). --state keeps the rows in one state."
                .to_owned(),
            "Claude Code's own sessions: Claude Code keeps one file per live session in \
             ~/.claude/sessions (or $CLAUDE_CONFIG_DIR/sessions); roster-list lists them too, without any \
             hook, each judged by roster's verdict from the pid, start ticks, machine and pid namespace the \
             file names (origin \"claude-code\" in JSON). A session roster also has a record of is one row, \
             roster's. The files are read only: roster never changes or removes them, and a dead one stays \
             until Claude Code cleans it up. Copilot CLI marks each live session with \
             ~/.copilot/session-state/<session id>/inuse.<pid>.lock (or under $COPILOT_HOME) and holds a lock \
             on inuse.<pid>.hold beside it while it runs: its sessions are listed too (origin \"copilot\"), \
             alive only while that very pid holds the lock, dead only where no holder could be hidden (the \
             initial pid namespace, a local filesystem), else unknown. --no-adopt, or [adopt] claude_code = \
             false (copilot = false) in the user config, lists roster's records alone."
                .to_owned(),
            "Filters: --agent, --harness and --session-id given \"\" select the sessions without that value \
             (anonymous, unknown harness, no session id). With filters that match nothing stderr says \
             `no sessions match` and names them; `no sessions registered` means the registry holds none. Of \
             a registry that does not exist yet, stderr says that nothing was ever registered there and, when \
             roster-register would refuse to create it (a directory above it others may write to), why."
                .to_owned(),
            "Notes: what to act on (dead sessions hidden, unknown and untrusted entries, hook failures from \
             hook-errors.log) goes to stderr, never among the rows, each note once per cause (the roster \
             directory's .notes-shown.json remembers what was said). With --format json stderr carries every \
             current note on every call as one line {\"notes\":[{\"kind\":...,\"message\":...}]}, and stdout stays \
             the array of rows. -q silences them."
                .to_owned(),
            "Text output: a `?` after a pid marks an owner that was named by hand (roster-register --pid) \
             and is not the registering process or one of its ancestors; `roster-consent arm` refuses it (only a \
             session itself may arm; the repository's auto_arm still counts). A problem \
             entry shows its kind, its path and why it is not believed."
                .to_owned(),
            hosts::HOSTS_NOTE.to_owned(),
            consent_column_note(),
            "JSON rows carry every record key (null where absent) plus liveness, liveness_reason, \
             problem (null, malformed, untrusted, unsupported-format), consent (the marker that counts: \
             armed, disarmed, none), should_arm (the decision, true or false), consent_reason (why, as \
             `roster-consent status` says it), path, origin and messages_pending (how many messages wait \
             in the session's queue for delivery; 0 for none, and for rows that are no roster record). The \
             table shows a MSGS column, after CONSENT, only when a row shown has messages waiting."
                .to_owned(),
        ],
        environment: vec![
            manual::ROSTER_DIR_VARIABLE,
            manual::XDG_STATE_HOME_VARIABLE,
            manual::HOME_VARIABLE,
            manual::NO_COLOR_VARIABLE,
            manual::TERM_VARIABLE,
            manual::EnvVar {
                name: "CLAUDE_CONFIG_DIR",
                meaning: "Claude Code's configuration directory: its own sessions are read from \
                          $CLAUDE_CONFIG_DIR/sessions instead of ~/.claude/sessions.",
            },
            manual::EnvVar {
                name: "COPILOT_HOME",
                meaning: "Copilot CLI's home: its own sessions are read from $COPILOT_HOME/session-state \
                          instead of ~/.copilot/session-state.",
            },
            manual::XDG_CONFIG_HOME_VARIABLE,
            hosts::SSH_COMMAND_ENVIRONMENT,
        ],
        environment_note: Some(manual::EMPTY_VARIABLE_NOTE),
        files: &[
            manual::SESSIONS_FILE,
            manual::CONSENT_FILE,
            manual::STATES_FILE,
            manual::MESSAGES_FILE,
            manual::HOOK_ERRORS_FILE,
            FileEntry {
                path: "~/.claude/sessions/<pid>.json",
                meaning: "Claude Code's own record of each live session ($CLAUDE_CONFIG_DIR/sessions when \
                          that is set): listed too, judged by roster's verdict, read only, never changed.",
            },
            FileEntry {
                path: "~/.copilot/session-state/<id>/inuse.<pid>.lock",
                meaning: "Copilot CLI's mark of each live session ($COPILOT_HOME/session-state when that is \
                          set), with inuse.<pid>.hold, whose lock its process holds while it runs, and \
                          workspace.yaml (its cwd): listed too, alive only while that pid holds the lock, read \
                          only (never locked, never changed).",
            },
            manual::USER_CONFIG_FILE,
            FileEntry {
                path: "$ROSTER_DIR/.notes-shown.json",
                meaning: "The notes already said on stderr, so that each is said once per cause.",
            },
        ],
        exit_statuses: &[
            ExitStatusDoc {
                status: ExitStatus::Success,
                meaning: "Listed, even when some entries are problems (malformed, untrusted, \
                          unsupported-format): one bad file never fails the command. With --watch, \
                          also on SIGINT, SIGTERM or a reader that went away; with --until-gone, \
                          once the session is gone.",
            },
            ExitStatusDoc { status: ExitStatus::Failure, meaning: "Failed: an I/O error." },
            ExitStatusDoc {
                status: ExitStatus::BadInput,
                meaning: "Bad input or usage: an invalid flag or flag value, or a --until-gone pid or \
                          session id that no live session has when the watch starts.",
            },
            manual::EXIT_REFUSED_UNTRUSTED,
            hosts::EXIT_HOSTS_UNANSWERED,
        ],
        ..Manual::default()
    }
}

/// What the CONSENT column's labels mean, for the manual; the table's
/// footnotes say the same of the labels it shows.
fn consent_column_note() -> String {
    let labels: Vec<String> =
        ConsentLabel::ALL.iter().map(|label| format!("{label} ({})", label.meaning())).collect();
    format!(
        "The CONSENT column shows the decision `roster-consent should-arm --pid PID` gives, made from the \
         session's own recorded directory: {}. Under the table, stderr says what each label it shows means.",
        labels.join("; ")
    )
}

/// The clap definition, for xtask's man pages and completions.
pub fn command() -> clap::Command {
    cli_support::with_manual(ListArgs::command(), &manual())
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    let arguments = cli_support::process_arguments();
    run_tool(TOOL, || run(cli_support::parse_with_manual_on_help(command, &arguments)?))
}

/// Lists as `args` say.
pub fn run(args: ListArgs) -> anyhow::Result<()> {
    if hosts::asks_hosts(&args) {
        return hosts::run(&args);
    }
    let filter = build_filter(&args)?;
    if args.watch || args.until_gone.is_some() {
        let request = watch::WatchRequest {
            common: &args.common,
            until_gone: args.until_gone.clone(),
            prints_listing: args.watch,
        };
        return watch::run_watch(request, &filter);
    }
    let roster = open_roster_for_reading(&args.common)?;
    // Stdout is line-buffered: unbuffered, a JSON listing cost one write
    // per line, 27 per record.
    let mut out = std::io::BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
    let (summary, consent_labels) = match &roster {
        Some(roster) => print_listing(roster, &filter, &args, &mut out)?,
        None => print_adopted_only(&filter, &args, &mut out)?,
    };
    out.flush()?;
    drop(out);
    if !args.common.quiet {
        report_notes(&summary, &consent_labels, roster.as_ref(), &args)?;
    }
    Ok(())
}

/// Prints the rows of `roster` that `filter` shows. Each row's consent is
/// decided and the row rendered (its JSON, its table cells) on the thread
/// that judged it, right after; what is left for this thread is the sort
/// and the writing.
fn print_listing(
    roster: &RosterDir,
    filter: &ListFilter,
    args: &ListArgs,
    out: &mut impl Write,
) -> anyhow::Result<(ListingSummary, Vec<ConsentLabel>)> {
    let facts = RunningSystem::read();
    // One listing of `consent/` tells which rows have a marker at all: most
    // have none, and looking for each one's file cost a `stat` per row.
    let decider = ConsentDecider::new(&cli_support::process_env_os).knowing_markers_of(roster);
    match args.common.output_format() {
        OutputFormat::Json => {
            let present = |row: SessionRow| {
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
            Ok((summary, Vec::new()))
        }
        OutputFormat::Text => {
            let home = cli_support::process_env_os("HOME").map(PathBuf::from);
            let now = Timestamp::now();
            let present = |row: SessionRow| {
                let consent = decider.for_row(roster, &row, &facts);
                table::listing_row(&row, &consent, home.as_deref(), now)
            };
            let listing = list_sessions_presented(roster, filter, &facts, &present)?;
            let summary = listing.summary().clone();
            let rows: Vec<Vec<String>> = listing.into_presented(roster, filter, &facts, &present).collect();
            let text = table::render_cells(&rows, args.common.colour_on_stdout());
            out.write_all(text.as_bytes())?;
            let labels = consent_labels_shown(&rows);
            // The process ends right after printing: freeing the cells one
            // by one (eight per row) took as long as rendering the table,
            // on the one thread, for memory the exit gives back at once.
            std::mem::forget(rows);
            Ok((summary, labels))
        }
    }
}

/// The listing when roster's registry does not exist yet: the sessions
/// Claude Code keeps (when they are adopted), whose consent no marker can
/// have decided yet.
fn print_adopted_only(
    filter: &ListFilter,
    args: &ListArgs,
    out: &mut impl Write,
) -> anyhow::Result<(ListingSummary, Vec<ConsentLabel>)> {
    let facts = RunningSystem::read();
    let (rows, adopted_unread) = registry_core::adopted::read_adopted(&filter.adopt, &facts);
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
            Ok((summary, Vec::new()))
        }
        OutputFormat::Text => {
            let home = cli_support::process_env_os("HOME").map(PathBuf::from);
            let now = Timestamp::now();
            let cells: Vec<Vec<String>> = listing
                .rows
                .iter()
                .map(|row| table::text_row(row, &decider.for_row_without_registry(row), home.as_deref(), now))
                .collect();
            out.write_all(table::render_cells(&cells, args.common.colour_on_stdout()).as_bytes())?;
            Ok((summary, consent_labels_shown(&cells)))
        }
    }
}

/// Writes notes in one call, so a failure cannot leave half a line before
/// the error line that reports it.
fn write_whole(err: &mut impl Write, text: &str) -> anyhow::Result<()> {
    if text.is_empty() {
        return Ok(());
    }
    err.write_all(text.as_bytes())
        .map_err(|error| anyhow::anyhow!("writing the notes to standard error: {error}"))
}

/// Says on stderr what the reader should know beyond the rows: for a
/// script, every current note as one JSON line; for people, why the table
/// is empty, what its marks and the consent labels it shows mean, and each
/// note once per cause.
fn report_notes(
    listing: &ListingSummary,
    consent_labels: &[ConsentLabel],
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
    lines.extend(consent_label_footnotes(consent_labels));
    let mut shown_state = None;
    if let Some(roster) = roster {
        let (unseen, state) = notes::unseen_notes(listing, roster);
        lines.extend(unseen.into_iter().map(|note| note.message));
        shown_state = state.map(|state| (roster, state));
    }
    let colour = args.common.colour_on_stderr();
    let text: String = lines.iter().map(|line| format!("{}\n", paint(line, Colour::Dim, colour))).collect();
    write_whole(&mut err, &text)?;
    if let Some((roster, state)) = shown_state {
        notes::remember_shown(roster, &state);
    }
    Ok(())
}

fn build_filter(args: &ListArgs) -> anyhow::Result<ListFilter> {
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
        state: args.state.as_deref().map(harness::Activity::parse),
        adopt: adopted_sources(args),
    })
}

/// The consent labels the table's rows show, each once, in legend order.
fn consent_labels_shown(rows: &[Vec<String>]) -> Vec<ConsentLabel> {
    let mut shown = [false; ConsentLabel::ALL.len()];
    for row in rows {
        if let Some(index) = ConsentLabel::ALL.iter().position(|label| label.as_str() == row[CONSENT_COLUMN])
        {
            shown[index] = true;
        }
    }
    ConsentLabel::ALL.into_iter().zip(shown).filter_map(|(label, shown)| shown.then_some(label)).collect()
}

/// One line under the table per consent label it shows, saying what the
/// label means: a new user reads `off (repo)` without the manual, and a
/// script that parses the table's text on stdout never sees these.
fn consent_label_footnotes(labels: &[ConsentLabel]) -> impl Iterator<Item = String> + '_ {
    labels.iter().map(|label| format!("CONSENT {label}: {}", label.meaning()))
}

/// The harnesses' own session directories read: Claude Code's and
/// Copilot CLI's, unless `--no-adopt` or the user config's `[adopt]
/// claude_code = false` (`copilot = false`) says not to read one.
fn adopted_sources(args: &ListArgs) -> Vec<AdoptedSource> {
    use registry_core::adopted::{
        AdoptedHarness, claude_code_sessions_directory, copilot_session_state_directory,
    };
    if args.no_adopt {
        return Vec::new();
    }
    let env = &cli_support::process_env_os;
    let choices = consent::user_adopt_choices(env);
    let claude_code = choices.claude_code.then(|| claude_code_sessions_directory(env)).flatten();
    let copilot = choices.copilot.then(|| copilot_session_state_directory(env)).flatten();
    claude_code
        .map(|path| AdoptedSource { harness: AdoptedHarness::ClaudeCode, path })
        .into_iter()
        .chain(copilot.map(|path| AdoptedSource { harness: AdoptedHarness::Copilot, path }))
        .collect()
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
    if let Some(state) = &args.state {
        words.push(format!("--state {state}"));
    }
    words.join(" ")
}

/// Why `roster-register` would refuse the registry that does not exist
/// yet at the path these flags choose, in the words it would use: a hint
/// to register there would lead into that refusal.
fn refusal_of_a_new_registry(args: &ListArgs) -> Option<String> {
    let path = cli_support::roster_directory_choice(&args.common).ok()?.path;
    RosterDir::check_creatable(&path).err().map(|error| error.to_string())
}

/// What a person needs to read the listing, said on every call: why it
/// is empty (for a registry that does not exist, also why roster would
/// refuse it, `refusal`), and what the unverified mark means.
fn listing_remarks(
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
    let unverified = listing.unverified;
    if unverified > 0 {
        lines.push(format!(
            "{unverified} unverified owner{}, marked {UNVERIFIED_MARK} after the pid: named by hand, not the \
             registering process or its ancestor; `roster-consent arm` refuses {} (only a session \
             itself may arm)",
            plural(unverified),
            if unverified == 1 { "it" } else { "them" }
        ));
    }
    lines
}

fn plural(count: usize) -> &'static str {
    if count == 1 { "" } else { "s" }
}
