//! `roster-list`: which agent sessions run on this machine right now, each
//! with a verdict that a reused pid or a stale file cannot fool (docs/contract.md §6.2).
//! The clap `Command` lives here so xtask renders man pages and
//! completions from the definition users run.

#![forbid(unsafe_code)]

use std::io::Write;
use std::process::ExitCode;

use clap::CommandFactory;
use cli_support::manual::{self, Example, ExitStatusDoc, FileEntry, Manual};
use cli_support::{ExitStatus, open_roster_for_reading};
use consent::ConsentLabel;

mod ended;

mod json_array;

mod table;

mod notes;

mod watch;

mod hosts;

mod listing;
/// Each listed session's location, checked.
mod locations;

pub use listing::ListArgs;
use listing::TOOL;
use listing::{build_filter, print_adopted_only, print_listing, report_notes};

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
                description: "The waiting and idle sessions, in a narrow pane, with chosen columns:",
                commands: &["roster-list -s waiting,idle -c pid,agent,state,cwd"],
                output: &[],
            },
            Example {
                description: "What ended in the last day, and how (exited, crashed, reboot, removed):",
                commands: &["roster-list --ended --since 1d"],
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
             message-expired, message-refused, message-unconfirmed (a message for it was settled so: handed \
             to the session whole, its time to live ran out or the session or its conversation ended, the \
             session no longer accepted messages, or the hook handing it over stopped before it could confirm \
             it); each \
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
             (TIME EVENT PID HARNESS AGENT LIVENESS STATE CONSENT AGE CWD SESSION REASON), under a header when the \
             output is a terminal; a column is as wide as its widest value may be, and an agent name longer than the \
             AGENT column is cut, ending in …, as the table cuts it. The columns are fixed when the watch starts \
             and fitted to the width as the table's are (see Table); session ids are shortened to the length the \
             rows present at the start need."
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
            "Table: the text output fits --width N columns, else $COLUMNS, else the width of the terminal \
             stdout is; into a pipe or a file it has no limit. To fit, the CWD, REASON, AGENT and STATE cells \
             are cut first, each ending in …; when that is not enough, columns are left out, AGE first, then \
             HARNESS, CONSENT, MSGS, SESSION, STATE, REASON, AGENT, CWD, LIVENESS (never PID), and stderr names \
             them once. Session ids are shortened to the shortest prefix of at least 8 characters that tells \
             the rows shown apart, ending in …; JSON and --wide (-W) show them whole, and --wide cuts nothing. \
             --columns (-c) LIST chooses the columns and their order from pid, harness, agent, liveness, \
             state, consent, msgs, age, cwd, session, reason (in any case). A problem entry shows its kind \
             and file name under CWD and why it is not believed under REASON, the last column, shown only \
             when a problem entry is. Widths count terminal columns: a CJK character or an emoji takes two. \
             The many-host table (--host) is not fitted."
                .to_owned(),
            "Text output: a `?` after a pid marks an owner that was named by hand (roster-register --pid) \
             and is not the registering process or one of its ancestors; `roster-consent arm` refuses it (only a \
             session itself may arm; the repository's auto_arm still counts); stderr says so once. Short flags: \
             -a --all, -A --agent, -H --harness, -i --session-id, -C --cwd, -s --state, -w --watch, -c \
             --columns, -W --wide, -q --quiet."
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
                path: "$ROSTER_DIR/ended/",
                meaning: "One entry per session that left the registry, how and when it ended, read by \
                          --ended: the last 1000 within 30 days, unless [ended] kept_most and kept_days in config.toml say otherwise. An entry that cannot be believed is \
                          skipped and counted in a note.",
            },
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
         session's own recorded directory: {}. Under the table, stderr says what each label it shows means, \
         the first time it shows (--no-legend: never).",
        labels.join("; ")
    )
}

/// The clap definition, for xtask's man pages and completions.
pub fn command() -> clap::Command {
    cli_support::with_manual(ListArgs::command(), &manual())
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    cli_support::run_binary(TOOL, command, run)
}

/// Lists as `args` say.
pub fn run(args: ListArgs) -> anyhow::Result<()> {
    // Checked first, so that a mistyped --columns is bad input with --host
    // too, whose table is not laid out by it.
    let table_options = args.table_options()?;
    if args.ended {
        return ended::run_ended(&args);
    }
    if hosts::asks_hosts(&args) {
        return hosts::run(&args);
    }
    let filter = build_filter(&args)?;
    if args.watch || args.until_gone.is_some() {
        let request = watch::WatchRequest {
            common: &args.common,
            until_gone: args.until_gone.clone(),
            prints_listing: args.watch,
            table: table_options,
        };
        return watch::run_watch(request, &filter);
    }
    let roster = open_roster_for_reading(&args.common)?;
    // Stdout is line-buffered: unbuffered, a JSON listing cost one write
    // per line, 27 per record.
    let mut out = std::io::BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
    let (summary, extras) = match &roster {
        Some(roster) => print_listing(roster, &filter, &args, &table_options, &mut out)?,
        None => print_adopted_only(&filter, &args, &table_options, &mut out)?,
    };
    out.flush()?;
    drop(out);
    if !args.common.quiet {
        report_notes(&summary, &extras, roster.as_ref(), &args)?;
    }
    Ok(())
}
