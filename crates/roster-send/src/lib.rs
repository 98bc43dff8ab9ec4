//! `roster-send`: queues a text message for a live agent session that
//! accepts messages (docs/contract.md §6.6), and tells what became of it.
//! The session's harness hands it the message later, through a hook; the
//! queue itself is `registry_core::messages`. The clap `Command` lives
//! here so xtask renders man pages and completions from the definition
//! users run.

#![forbid(unsafe_code)]

mod wait;

use std::io::{Read, Write};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{CommandFactory, Parser};
use cli_support::manual::{self, Example, ExitStatusDoc, Manual};
use cli_support::{
    BadInput, CommonArgs, EndedWith, ExitStatus, OutputFormat, Refused, escape_for_terminal, format_age,
    open_roster_for_reading, parse_duration, resolve_calling_owner, time_text,
};
use owner_liveness::{Liveness, Pid, ResolveError, kernel_pid_max};
use registry_core::messages::{
    AddressedBy, DEFAULT_TIME_TO_LIVE, MAX_PENDING, MAX_TEXT_BYTES, Message, MessageId, MessageText,
    MessageView, OutcomeKind, Recipient, SESSION_ENDED, Sender, framed_length, message_status,
    queue_directory, queue_message, withdraw_pending,
};
use registry_core::state::StateTarget;
use registry_core::{
    Record, RosterDir, RunningSystem, SessionRow, Timestamp, find_session_row, read_session_row,
};

use crate::wait::{Awaited, WaitOutcome, wait_for_outcome};

const TOOL: &str = "roster-send";

/// The most bytes read from stdin: past the text limit by far, so that
/// only a message that is too long anyway is cut.
const MAX_STDIN_BYTES: u64 = 4 * MAX_TEXT_BYTES as u64;

/// Queue a message for a live agent session that accepts messages
#[derive(Debug, Parser)]
#[command(
    name = TOOL,
    version,
    about = "Queue a message for a live agent session that accepts messages",
    long_about = "Queue a message for a live agent session that accepts messages\n\n\
        roster-send puts the text in the session's queue, beside its record, for its harness to hand \
        to the model at the session's next prompt or stop, through the delivery hook roster-hooks \
        installs. Only a live session that accepts messages gets one: its consent is decided as \
        roster-consent should-arm decides it (its marker, its repository's .roster.toml, your \
        configuration), when the message is sent and again when it is delivered.\n\n\
        Each message gets an id; --status ID says later whether it was delivered, expired or \
        refused, and --wait waits for that outcome. A message not delivered within its time to live \
        (--ttl, one hour by default), or whose session ends first, expires.",
    group = clap::ArgGroup::new("what").required(true).args(["to", "status"]),
)]
pub struct SendArgs {
    #[command(flatten)]
    pub common: CommonArgs,

    /// The session to send to: its owner's pid, its session id, or the agent name of exactly one live session
    #[arg(short, long, value_name = "PID|SESSION_ID|AGENT", add = cli_support::session_targets())]
    pub to: Option<String>,

    /// Send as the session of this pid (default: the session roster-send runs in, else the process that ran it)
    #[arg(short, long, value_name = "PID", requires = "to", add = cli_support::session_pids())]
    pub from: Option<String>,

    /// How long the message waits for delivery before it expires: 30s, 10m, 2h, 1d (default 1h)
    #[arg(long, value_name = "DURATION", requires = "to")]
    pub ttl: Option<String>,

    /// Wait for the message's outcome, at most DURATION (default: until it expires)
    #[arg(
        long,
        value_name = "DURATION",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "",
        requires = "to"
    )]
    pub wait: Option<String>,

    /// Say what became of the message ID: pending, delivered, expired or refused
    #[arg(short, long, value_name = "ID", conflicts_with_all = ["to", "message"])]
    pub status: Option<String>,

    /// The message (default, or `-`: read from standard input)
    #[arg(value_name = "MESSAGE")]
    pub message: Option<String>,
}

/// Examples, notes, files and exit statuses: `--help` and the man page
/// both render this.
pub fn manual() -> Manual {
    Manual {
        examples: &[
            Example {
                description: "Ask the session whose owner is pid 5854 to look at a failing test (the text on \
                              stdin: an argument is readable by every local user in /proc/PID/cmdline while \
                              roster-send runs, which with --wait is until delivery):",
                commands: &["echo 'the build on main fails in tests/api.rs; can you look?' | roster-send --to 5854"],
                output: &[
                    "queued 9f2c41d07a3be6581c2d4e0f7a9b3c55 for pid 5854 (wren, claude-code), expires in 1h",
                ],
            },
            Example {
                description: "Send a file's contents to a session named by its session id, and wait up to ten \
                              minutes for it to be delivered:",
                commands: &["roster-send --to 3f1c9a2e --wait=10m < review-notes.md"],
                output: &[],
            },
            Example {
                description: "Find the sessions to send to, then send and keep the id for later:",
                commands: &[
                    "roster-list --json | jq -r '.[] | select(.should_arm) | .session_pid'",
                    "id=$(echo 'rebase onto main' | roster-send --to 5854 --json | jq -r .id)",
                    "roster-send --status \"$id\"",
                ],
                output: &[],
            },
        ],
        notes: vec![
            format!(
                "Bounds: a message is at most {} KiB of UTF-8 (after CRLF line ends become LF and trailing \
                 line ends are dropped), and holds no control character but newline and tab: anything \
                 else is refused (exit 2), never changed. A session's queue holds at most {MAX_PENDING} \
                 pending messages; one more is refused with \"queue full\" (exit 1) and nothing is dropped. \
                 Framed for the model, a message must also fit what its session's harness keeps whole in one \
                 hook reply, counted as the harness counts it (Claude Code: 10,000 UTF-16 units; Codex: \
                 10,000 bytes; Gemini CLI: 65,024 bytes of JSON; the frame included): a longer one is \
                 refused (exit 2) naming how much to cut and in which unit, never split or cut.",
                MAX_TEXT_BYTES / 1024
            ),
            "Delivered means handed over whole: the delivery hook records a message delivered only after its \
             whole framed text was written to the harness; one that could not be written waits for the next \
             event, and one whose hook was stopped between the two is settled unconfirmed (never handed over \
             again). A message sent to a session id goes to that conversation only (after a /clear it \
             expires: its conversation ended); one sent to a pid goes to whatever conversation that process \
             runs. Only a hook running inside the session's own process tree takes its messages. What became \
             of a message stays known to --status for 7 days after it was settled, also once its session and \
             queue are gone."
                .to_owned(),
            "The message is the argument MESSAGE, or standard input read to its end when there is none (or \
             it is -). On a terminal, roster-send first says on stderr that it reads the message until end of \
             file (Ctrl-D at the start of a line). Nothing at all on standard input is a missing message, an \
             empty argument (\"\") an empty one: both are refused (exit 2). The session is always named with \
             --to: roster-send 5854 hi is refused with the command meant, roster-send --to 5854 hi."
                .to_owned(),
            "JSON: queued {\"id\", \"seq\", \"to\": {\"record\", \"pid\", \"start_ticks\", \"session_id\"}, \
             \"queued_at\", \"expires_at\", \"status\": \"queued\"}; refused by consent {\"status\": \
             \"refused\", \"reason\", \"to\"}; with --wait or --status, \"status\" is the message's state \
             (\"pending\", \"delivered\", \"expired\", \"refused\", \"unconfirmed\") with \"at\", \"event\" \
             and \"reason\"."
                .to_owned(),
            "--from names the sender the session is told of: by default the session roster-send runs in \
             (found as roster-register finds it), else the process that ran roster-send. A session is named \
             only when roster-send runs inside it (its owner is roster-send's ancestor): ROSTER_SESSION_PID \
             naming another process signs nothing, and the message is then from the process that ran \
             roster-send."
                .to_owned(),
        ],
        environment: manual::session_variables_and(&[]),
        environment_note: Some(manual::EMPTY_VARIABLE_NOTE),
        files: &[manual::SESSIONS_FILE, manual::CONSENT_FILE, manual::MESSAGES_FILE],
        exit_statuses: &[
            ExitStatusDoc {
                status: ExitStatus::Success,
                meaning: "Queued (its id printed); with --wait, delivered; with --status, the message is known.",
            },
            ExitStatusDoc {
                status: ExitStatus::Failure,
                meaning: "Refused by the session's consent, when sent or (with --wait) when delivered; the \
                          reason on stderr; with --wait, unconfirmed. Also a full queue, an I/O error, or a \
                          queue whose lock another process held for 1 second (nothing queued; the message \
                          names it).",
            },
            ExitStatusDoc {
                status: ExitStatus::BadInput,
                meaning: "Bad input: a missing message (no argument, nothing on standard input), an empty one, one too long (for roster, or for the session's \
                          harness) or with control characters, a bad --ttl, --wait or --from, an id that is not \
                          one, an agent name that names several live sessions (the message lists their pids).",
            },
            ExitStatusDoc {
                status: ExitStatus::Refused,
                meaning: "No such live session: no record has that pid, session id or agent name, or its owner is \
                          dead or cannot be examined (the reason said); with --status, no such message. \
                          Also an untrusted roster directory.",
            },
            ExitStatusDoc {
                status: ExitStatus::Expired,
                meaning: "With --wait: the message expired, its time to live run out or its session ended.",
            },
            ExitStatusDoc {
                status: ExitStatus::StillPending,
                meaning: "With --wait=DURATION: still pending when the wait ran out.",
            },
        ],
        ..Manual::default()
    }
}

/// The clap definition, for xtask's man pages and completions.
pub fn command() -> clap::Command {
    cli_support::with_manual(SendArgs::command(), &manual())
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    cli_support::complete_when_asked(command);
    let arguments = cli_support::process_arguments();
    match cli_support::parse_with_manual_on_help::<SendArgs>(command, &arguments) {
        Ok(args) => cli_support::run_tool(TOOL, || run(args)),
        Err(error) => cli_support::run_tool(TOOL, || Err(with_to_suggested(error, &arguments).into())),
    }
}

/// `roster-send 22173 hi` (the session named without `--to`): clap takes
/// `22173` for the message and refuses `hi` as unexpected. The error then
/// shows the command that was meant, `roster-send --to 22173 hi`.
fn with_to_suggested(mut error: clap::Error, arguments: &[std::ffi::OsString]) -> clap::Error {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if error.kind() != ErrorKind::UnknownArgument {
        return error;
    }
    if let Some(meant) = command_meant_with_to(arguments) {
        let tip = format!("to send to a session, name it with --to: {meant}");
        error.insert(ContextKind::Suggested, ContextValue::StyledStrs(vec![tip.into()]));
    }
    error
}

/// The command line `arguments` (program name first) with its first
/// positional word as `--to`'s value and the words after it as one message,
/// when no `--to` or `--status` was given and there are two or more
/// positional words.
fn command_meant_with_to(arguments: &[std::ffi::OsString]) -> Option<String> {
    let words: Vec<String> =
        arguments.iter().skip(1).map(|argument| argument.to_string_lossy().into_owned()).collect();
    let definition = SendArgs::command();
    let takes_a_separate_value = |word: &str| {
        definition.get_arguments().any(|argument| {
            let named = word.strip_prefix("--").is_some_and(|long| argument.get_long() == Some(long))
                || word
                    .strip_prefix('-')
                    .and_then(|short| short.parse::<char>().ok())
                    .is_some_and(|short| argument.get_short() == Some(short));
            named && argument.get_action().takes_values() && !argument.is_require_equals_set()
        })
    };
    let mut flags = Vec::new();
    let mut positionals = Vec::new();
    let mut index = 0;
    while index < words.len() {
        let word = &words[index];
        let names_the_session = ["--to", "--status", "-t", "-s"].iter().any(|flag| word.starts_with(flag));
        if names_the_session {
            return None;
        }
        if word.starts_with('-') && word != "-" {
            flags.push(word.clone());
            if takes_a_separate_value(word) && index + 1 < words.len() {
                index += 1;
                flags.push(words[index].clone());
            }
        } else {
            positionals.push(word.clone());
        }
        index += 1;
    }
    let (session, message) = positionals.split_first()?;
    if message.is_empty() {
        return None;
    }
    let mut meant = vec![TOOL.to_owned()];
    meant.extend(flags.iter().map(|flag| harness::hook_config::shell_quote(flag).into_owned()));
    meant.push("--to".to_owned());
    meant.push(harness::hook_config::shell_quote(session).into_owned());
    meant.push(harness::hook_config::shell_quote(&message.join(" ")).into_owned());
    Some(meant.join(" "))
}

/// Sends, or says what became of a message, as `args` say.
pub fn run(args: SendArgs) -> anyhow::Result<()> {
    match &args.status {
        Some(id) => show_status(&args, id),
        None => send(&args),
    }
}

fn send(args: &SendArgs) -> anyhow::Result<()> {
    let to = args.to.as_deref().unwrap_or_default();
    let text = MessageText::new(&message_text(args.message.as_deref())?)
        .map_err(|problem| BadInput(problem.to_string()))?;
    let time_to_live = match &args.ttl {
        Some(given) => positive_duration("--ttl", given)?,
        None => DEFAULT_TIME_TO_LIVE,
    };
    let wait = match args.wait.as_deref() {
        None => None,
        Some("") => Some(None),
        Some(given) => Some(Some(positive_duration("--wait", given)?)),
    };
    let from_pid = args.from.as_deref().map(|given| parse_pid("--from", given)).transpose()?;
    let Some(roster) = open_roster_for_reading(&args.common)? else {
        return Err(Refused(format!("no session {to} is registered: roster holds no sessions yet")).into());
    };
    let facts = RunningSystem::read();
    let (row, record) = live_session(&roster, to, &facts)?;
    let addressed_by =
        if to.bytes().all(|byte| byte.is_ascii_digit()) { AddressedBy::Pid } else { AddressedBy::SessionId };
    let recipient = Recipient::of_record(&row.file_name, &record, addressed_by);
    if let Err(reason) = deliverable_to(&record) {
        print_refusal(args, &recipient, &reason)?;
        return Err(EndedWith {
            status: ExitStatus::Failure,
            message: format!("pid {}: {reason}", recipient.pid),
        }
        .into());
    }
    if let Err(not_accepted) =
        cli_support::session_accepts_messages(&args.common, &roster, &row, record.owner.pid, &facts)
    {
        let reason = not_accepted.reason();
        print_refusal(args, &recipient, reason)?;
        let message = match &not_accepted {
            cli_support::NotAccepted::Refuses(_) => {
                format!("pid {} does not accept messages: {reason}", recipient.pid)
            }
            cli_support::NotAccepted::Undecided(_) => {
                format!("pid {}: {reason}; nothing was queued: send again", recipient.pid)
            }
        };
        return Err(EndedWith { status: ExitStatus::Failure, message }.into());
    }
    let sender = sender(&roster, from_pid, &facts)?;
    let now = Timestamp::now();
    fits_its_harness(&record, &sender, &now, &text)?;
    let queued =
        queue_message(&roster, &recipient, &sender, &text, time_to_live, now).map_err(
            |error| match error {
                locked @ registry_core::Error::QueueLocked { .. } => anyhow::Error::new(locked)
                    .context(format!("nothing was queued for pid {}", recipient.pid)),
                other => other.into(),
            },
        )?;
    let Some(wait) = wait else {
        return print_queued(args, &queued, &record, time_to_live)
            .or_else(|error| withdraw_unannounced(&roster, &queued, error));
    };
    let until = Instant::now() + wait.unwrap_or(time_to_live);
    let queue_path = queue_directory(&roster, &row.file_name);
    let awaited = Awaited {
        id: &queued.message_id(),
        queue_path: &queue_path,
        record_file_name: &row.file_name,
        owner: record.owner.pid,
    };
    if args.common.output_format() == OutputFormat::Text {
        print_queued(args, &queued, &record, time_to_live)
            .or_else(|error| withdraw_unannounced(&roster, &queued, error))?;
    }
    match wait_for_outcome(&roster, &awaited, until)? {
        WaitOutcome::Settled(message) => conclude(args, &message),
        WaitOutcome::StillPending(message) => {
            print_message_state(args, &message)?;
            Err(EndedWith {
                status: ExitStatus::StillPending,
                message: format!(
                    "message {} is still pending after waiting {}; roster-send --status {} tells its outcome later",
                    message.id,
                    format_age(wait.unwrap_or(time_to_live)),
                    message.id
                ),
            }
            .into())
        }
        WaitOutcome::GoneWithItsSession => {
            let gone = queued.settled(OutcomeKind::Expired, Timestamp::now(), SESSION_ENDED);
            conclude(args, &gone)
        }
    }
}

/// The message's text: the argument, or standard input (`-` or none).
/// Standard input that gives nothing at all is a missing message (an empty
/// argument, or only blank lines, is an empty one); on a terminal, stderr
/// first says that the message is read until end of file, so that
/// roster-send never waits in silence.
fn message_text(argument: Option<&str>) -> anyhow::Result<String> {
    if let Some(text) = argument.filter(|text| *text != "-") {
        return Ok(text.to_owned());
    }
    let stdin = std::io::stdin();
    if std::io::IsTerminal::is_terminal(&stdin) {
        let _ = writeln!(
            std::io::stderr().lock(),
            "{TOOL}: reading the message from standard input until end of file (Ctrl-D at the start of a \
             line); or give it as an argument"
        );
    }
    let mut bytes = Vec::new();
    stdin.lock().take(MAX_STDIN_BYTES + 1).read_to_end(&mut bytes)?;
    if bytes.is_empty() {
        return Err(BadInput(
            "no message given: standard input held nothing; give the text as an argument or on standard \
             input, as in: echo 'text' | roster-send --to PID"
                .into(),
        )
        .into());
    }
    if bytes.len() as u64 > MAX_STDIN_BYTES {
        return Err(BadInput(format!(
            "the message on standard input is over {} KiB, more than the {} KiB a message may hold; send a \
             shorter one",
            MAX_STDIN_BYTES / 1024,
            MAX_TEXT_BYTES / 1024
        ))
        .into());
    }
    String::from_utf8(bytes)
        .map_err(|_| BadInput("the message on standard input is not UTF-8 text; send text".into()).into())
}

/// A duration flag's value, which must be more than nothing.
fn positive_duration(flag: &str, given: &str) -> Result<Duration, BadInput> {
    match parse_duration(given) {
        Ok(duration) if duration.is_zero() => Err(BadInput(format!(
            "{flag} {given}: give a duration longer than nothing, as in 30s, 10m or 2h"
        ))),
        Ok(duration) if duration > LONGEST_DURATION => Err(BadInput(format!(
            "{flag} {given}: at most 365d; a message that waits longer waits for nothing"
        ))),
        Ok(duration) => Ok(duration),
        Err(why) => Err(BadInput(format!("{flag}: {why}"))),
    }
}

/// The longest `--ttl` or `--wait`: a year.
const LONGEST_DURATION: Duration = Duration::from_secs(365 * 24 * 3600);

fn parse_pid(flag: &str, given: &str) -> Result<Pid, BadInput> {
    Pid::parse_canonical(given, kernel_pid_max())
        .map_err(|error| BadInput(format!("{flag} {}: {error}", escape_for_terminal(given))))
}

/// The live session `to` names: the record of the owner pid `to` (in this
/// world), else the record holding the session id `to`, else the one live
/// session registered under the agent name `to` (several: bad input, naming
/// them, so that a message never goes to a session picked at random).
fn live_session(roster: &RosterDir, to: &str, facts: &RunningSystem) -> anyhow::Result<(SessionRow, Record)> {
    let shown = escape_for_terminal(to);
    let row = if to.bytes().all(|byte| byte.is_ascii_digit()) {
        let pid = parse_pid("--to", to)?;
        find_session_row(roster, pid, facts).ok_or_else(|| {
            Refused(format!("no session with owner pid {pid} is registered; roster-list shows the sessions"))
        })?
    } else if let Some(target) = StateTarget::of_session_id(roster, to)? {
        read_session_row(roster, &target.file_name, facts)
            .ok_or_else(|| Refused(format!("the session holding the session id {shown} has ended")))?
    } else {
        let named = registry_core::ListFilter { agent: Some(to.to_owned()), ..Default::default() };
        let mut live = registry_core::list_sessions(roster, &named, facts)?.rows;
        live.retain(|row| row.liveness() == Liveness::Alive);
        match live.len() {
            0 => {
                return Err(Refused(format!(
                    "no session holds the session id {shown}, and no live session is named {shown}; \
                     roster-list shows the sessions"
                ))
                .into());
            }
            1 => live.remove(0),
            several => {
                let pids: Vec<String> =
                    live.iter().filter_map(|row| row.pid).map(|pid| pid.to_string()).collect();
                return Err(BadInput(format!(
                    "--to {shown} names {several} live sessions (pids {}); give the pid or the session id of \
                     the one to send to",
                    pids.join(", ")
                ))
                .into());
            }
        }
    };
    let Some(record) = row.record.clone() else {
        return Err(Refused(format!(
            "{} is not a record roster believes: {}",
            row.path.display(),
            row.verdict.reason
        ))
        .into());
    };
    if row.liveness() != Liveness::Alive {
        return Err(Refused(format!(
            "the session of pid {} is {}: {}; a message goes only to a live session",
            record.owner.pid,
            row.liveness(),
            row.verdict.reason
        ))
        .into());
    }
    Ok((row, record))
}

/// Whether the session of `pid` accepts messages now, decided as
/// `roster-consent should-arm --pid PID` decides it.
/// Whether a hook of the session's harness can hand a message to its
/// model (`harness::DELIVERY_EVENTS`): a message no hook would deliver is
/// refused at once rather than left to expire.
fn deliverable_to(record: &registry_core::Record) -> Result<(), String> {
    match harness::Harness::parse(record.harness.as_str()) {
        Some(harness) if harness::delivers(harness) => Ok(()),
        Some(harness) => Err(format!(
            "{harness} has no hook that can hand a message to its model, so nothing would deliver it \
             (docs/harnesses.md)"
        )),
        None => Err(format!(
            "its harness ({}) is not one roster knows, so no hook of it would deliver a message; register \
             the session with --harness",
            if record.harness.as_str().is_empty() { "none recorded" } else { record.harness.as_str() }
        )),
    }
}

/// Whether the message, framed as the model will read it, is one the
/// session's harness keeps whole at every event that may deliver it
/// (`harness::delivery_limits`): a longer one is bad input, refused before
/// anything is queued, never cut where a forged closing line could take
/// over.
fn fits_its_harness(
    record: &registry_core::Record,
    sender: &Sender,
    now: &Timestamp,
    text: &MessageText,
) -> Result<(), BadInput> {
    let Some(harness) = harness::Harness::parse(record.harness.as_str()) else { return Ok(()) };
    for (event, limit) in harness::delivery_limits(harness) {
        let length = framed_length(sender, now, text.as_str(), limit.measure);
        if length <= limit.max {
            continue;
        }
        let unit = limit.measure.unit();
        return Err(BadInput(format!(
            "the message is too long for {harness}: framed for its model it is {length} {unit}, and {harness} \
             keeps at most {max} whole in one {event} hook reply; shorten it by {over} or more, or send a path \
             to a file that holds the rest",
            max = limit.max,
            event = event.event,
            over = length - limit.max,
        )));
    }
    Ok(())
}

/// Who sends: the session of `--from`'s pid, else the session roster-send
/// runs in, else the process that ran it. A session is named only when
/// roster-send runs inside it (its owner is an ancestor): an environment
/// variable naming another session's pid proves nothing, and the message
/// is then from the process that ran roster-send.
fn sender(roster: &RosterDir, from: Option<Pid>, facts: &RunningSystem) -> anyhow::Result<Sender> {
    let pid = match from {
        Some(pid) => {
            speaks_for(pid)?;
            pid
        }
        None => match resolve_calling_owner(None) {
            // Named by the environment (ROSTER_SESSION_PID) or found among
            // the ancestors: believed only when it is one of them.
            Ok(owner) if cli_support::runs_inside_session(owner.resolved.pid) == Ok(true) => {
                owner.resolved.pid
            }
            Ok(_) | Err(ResolveError::NotFound) => {
                let parent = u32::try_from(nix::unistd::getppid().as_raw()).unwrap_or(0);
                return Ok(Sender::of_process(parent));
            }
            Err(error) => return Err(error.into()),
        },
    };
    let row = find_session_row(roster, pid, facts);
    Ok(match row.as_ref().and_then(|row| row.record.as_ref().filter(|_| row.liveness() == Liveness::Alive)) {
        Some(record) => Sender::of_record(record),
        None => Sender::of_process(pid.get()),
    })
}

/// `--from` names the caller or one of its ancestors, as a session may
/// consent only for itself: the model is told who sent the message, so
/// no one may sign for another session.
fn speaks_for(pid: Pid) -> anyhow::Result<()> {
    let me = Pid::new(std::process::id()).expect("a running process has a pid");
    let walk = owner_liveness::walk_ancestry_reporting(me);
    if walk.steps.iter().any(|step| step.pid == pid) {
        return Ok(());
    }
    let why = match walk.unreadable {
        Some(why) => format!("cannot tell whether it is this command or one of its ancestors: {why}"),
        None => "it is neither this command nor one of its ancestors".to_owned(),
    };
    Err(Refused(format!(
        "--from {pid}: {why}; a message may be sent only as the session it is sent from (leave out --from \
         inside the session, or name the pid of the session you run in)"
    ))
    .into())
}

fn print_refusal(args: &SendArgs, recipient: &Recipient, reason: &str) -> anyhow::Result<()> {
    if args.common.output_format() == OutputFormat::Json {
        let value = serde_json::json!({ "status": "refused", "reason": reason, "to": recipient });
        writeln!(std::io::stdout().lock(), "{}", serde_json::to_string_pretty(&value)?)?;
    }
    Ok(())
}

/// A message queued whose sender could not be told so (its answer could
/// not be written): taken back while it is still pending, so that a send
/// that fails has queued nothing; said so when a delivery took it first.
fn withdraw_unannounced(roster: &RosterDir, queued: &Message, error: anyhow::Error) -> anyhow::Result<()> {
    match withdraw_pending(roster, queued) {
        Ok(true) => Err(error.context(format!("message {} was taken back, nothing is queued", queued.id))),
        Ok(false) => Err(error.context(format!(
            "message {} could not be taken back (a delivery took it first); roster-send --status {} tells its \
             outcome",
            queued.id, queued.id
        ))),
        Err(withdraw) => Err(error.context(format!(
            "message {} could not be taken back ({withdraw}); roster-send --status {} tells its outcome",
            queued.id, queued.id
        ))),
    }
}

fn print_queued(
    args: &SendArgs,
    message: &Message,
    record: &Record,
    time_to_live: Duration,
) -> anyhow::Result<()> {
    if args.common.quiet {
        return Ok(());
    }
    let mut out = std::io::stdout().lock();
    match args.common.output_format() {
        OutputFormat::Json => {
            writeln!(out, "{}", serde_json::to_string_pretty(&MessageView::queued(message))?)?;
        }
        OutputFormat::Text => {
            let who: Vec<&str> = [
                record.agent.as_ref().map(|agent| agent.as_str()),
                Some(record.harness.as_str()).filter(|harness| !harness.is_empty()),
            ]
            .into_iter()
            .flatten()
            .collect();
            let who = if who.is_empty() {
                String::new()
            } else {
                format!(" ({})", escape_for_terminal(&who.join(", ")))
            };
            let lives = format_age(time_to_live);
            writeln!(out, "queued {} for pid {}{who}, expires in {lives}", message.id, message.to.pid)?;
        }
    }
    Ok(())
}

/// Prints a settled message and ends as its outcome says: delivered 0,
/// refused or unconfirmed 1, expired 4.
fn conclude(args: &SendArgs, message: &Message) -> anyhow::Result<()> {
    print_message_state(args, message)?;
    let Some(outcome) = &message.outcome else { return Ok(()) };
    let reason = outcome.reason.as_deref().unwrap_or_default();
    match outcome.kind {
        OutcomeKind::Delivered => Ok(()),
        OutcomeKind::Refused => Err(EndedWith {
            status: ExitStatus::Failure,
            message: format!("message {} was refused when it came to be delivered: {reason}", message.id),
        }
        .into()),
        OutcomeKind::Expired => Err(EndedWith {
            status: ExitStatus::Expired,
            message: format!("message {} expired undelivered: {reason}", message.id),
        }
        .into()),
        OutcomeKind::Unconfirmed => Err(EndedWith {
            status: ExitStatus::Failure,
            message: format!("message {} is unconfirmed: {reason}", message.id),
        }
        .into()),
    }
}

/// `--status ID`.
fn show_status(args: &SendArgs, given: &str) -> anyhow::Result<()> {
    let id = MessageId::parse(given).ok_or_else(|| {
        BadInput(format!(
            "--status {}: not a message id; an id is the 32 lowercase hexadecimal digits roster-send printed",
            escape_for_terminal(given)
        ))
    })?;
    let unknown = || Refused(format!("no message {id}: never queued here, or settled more than 7 days ago"));
    let Some(roster) = open_roster_for_reading(&args.common)? else { return Err(unknown().into()) };
    let Some(found) = message_status(&roster, &id, Timestamp::now())? else { return Err(unknown().into()) };
    print_message_state(args, &found.message)
}

/// One message's state: a line for people, an object for programs.
fn print_message_state(args: &SendArgs, message: &Message) -> anyhow::Result<()> {
    if args.common.quiet {
        return Ok(());
    }
    let outcome = message.outcome.as_ref();
    let mut out = std::io::stdout().lock();
    match args.common.output_format() {
        OutputFormat::Json => {
            writeln!(out, "{}", serde_json::to_string_pretty(&MessageView::status(message))?)?;
        }
        OutputFormat::Text => {
            // Local, to the second, and how far from now; JSON keeps RFC 3339.
            let now = Timestamp::now();
            let line = match outcome {
                None => format!(
                    "{} pending for pid {}, expires at {}",
                    message.id,
                    message.to.pid,
                    time_text(message.expires_at(), now)
                ),
                Some(outcome) => {
                    let why = match (&outcome.event, &outcome.reason) {
                        (Some(event), _) => format!(" by {event}"),
                        (_, Some(reason)) => format!(": {reason}"),
                        _ => String::new(),
                    };
                    let at = match Timestamp::parse(&outcome.at) {
                        Some(at) => time_text(at, now),
                        None => outcome.at.clone(),
                    };
                    format!("{} {} at {at}{why}", message.id, outcome.kind.as_str())
                }
            };
            writeln!(out, "{}", escape_for_terminal(&line))?;
        }
    }
    Ok(())
}
