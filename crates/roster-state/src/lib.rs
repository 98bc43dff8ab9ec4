//! `roster-state`: the state hook (docs/contract.md §3.2, §8.2, §8.4). A harness runs it on
//! every prompt, tool call, permission prompt and stop; it looks the event
//! up in the harness's table (`harness::ACTIVITY_EVENTS`) and records in
//! the session's state file whether the session is working, idle or
//! waiting for its user. The clap `Command` lives here so xtask renders
//! man pages and completions from the definition users run.

#![forbid(unsafe_code)]

use std::io::Write;
use std::os::fd::AsFd;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{CommandFactory, Parser};
use cli_support::manual::{self, Example, ExitStatusDoc, Manual};
use cli_support::{
    BadInput, CommonArgs, ExitStatus, OutputFormat, Refused, open_roster_for_reading, payload_wait,
    resolve_calling_owner,
};
use harness::{ActivityEvent, Harness, PAYLOAD_READ_DEADLINE, StatePayload, activity_event};
use owner_liveness::ResolveError;
use registry_core::RunningSystem;
use registry_core::messages::{ConsentNow, Delivery, HandOver, Message, Taken, take_waiting, waiting_queue};
use registry_core::state::{StateChange, StateEvent, StateTarget, record_state_event};

const TOOL: &str = "roster-state";

/// How long an update waits for the same session's other updates outside
/// hook mode (in hook mode, until the hook's work deadline).
const LOCK_WAIT: Duration = Duration::from_millis(200);

/// How long a delivery waits for its queue's lock: a send holds it for a
/// few writes; a holder that keeps it longer keeps the messages waiting
/// for a later event, not this hook spending its budget.
const QUEUE_LOCK_WAIT: Duration = Duration::from_millis(50);

/// By hand (`--harness`) no watchdog ends the run: the claim may take this
/// long.
const BY_HAND_CLAIM_WAIT: Duration = Duration::from_secs(5);

/// Record what an agent session is doing, from its harness's hook events
#[derive(Debug, Parser)]
#[command(
    name = TOOL,
    version,
    about = "Record what an agent session is doing, from its harness's hook events",
    long_about = "Record what an agent session is doing, from its harness's hook events\n\n\
        A harness runs roster-state on every prompt, tool call, permission prompt and stop, as \
        roster-hooks install wires it. The event (--event, else the payload's event name) is looked \
        up in the harness's table: a prompt or a tool call means working, a stop idle, a permission \
        prompt or a question waiting. The session is the one whose record holds the payload's \
        session id, else the calling session's owner; an event of a session roster holds no record \
        of changes nothing. roster-list shows the state in its STATE column and state keys.\n\n\
        Each update reads and replaces one small file, states/<record name>, without the registry \
        lock; updates of one session are applied in the order they were sent, a late one never \
        undoing a newer one.\n\n\
        Messages: on a harness's delivery events (a prompt submitted, a turn ending; \
        docs/harnesses.md lists them) the hook also hands the session the messages roster-send \
        queued for it, if the session still accepts messages, in the harness's own reply format: \
        the only time it prints. Claude Code's Stop takes them as exit 2 with the text on stderr; \
        the turn then goes on with them. With nothing queued this costs one failed open.",
    group = clap::ArgGroup::new("caller").required(true).args(["hook", "harness"]),
)]
pub struct StateArgs {
    #[command(flatten)]
    pub common: CommonArgs,

    /// Run as a harness's hook: read the payload, record the state, finish within 500 ms; prints only a delivery (see MESSAGES)
    #[arg(long, value_name = "HARNESS")]
    pub hook: Option<String>,

    /// Do what the hook does, and say what happened (to try a hook by hand)
    #[arg(long, value_name = "HARNESS")]
    pub harness: Option<String>,

    /// The event, as the harness's hook configuration names it (default: the payload's event name)
    #[arg(short, long, value_name = "EVENT")]
    pub event: Option<String>,

    /// Name the session's owner when the payload's session id names no record: a pid or `parent`
    #[arg(short, long, value_name = "PID|parent", add = cli_support::session_pids_or_parent())]
    pub pid: Option<String>,
}

/// Examples, notes, environment, files and exit statuses: `--help` and the
/// man page both render this.
pub fn manual() -> Manual {
    Manual {
        examples: &[
            Example {
                description: "As Claude Code's PreToolUse hook, which is what roster-hooks install claude-code \
                              writes (one such hook per event it listens to):",
                commands: &["roster-state --hook claude-code --event PreToolUse"],
                output: &[],
            },
            Example {
                description: "Try a permission prompt by hand, for the session whose id the payload names:",
                commands: &[
                    "echo '{\"session_id\": \"3f1c9a2e\"}' |",
                    "    roster-state --harness claude-code --event PermissionRequest",
                ],
                output: &["waiting for permission since now (claude-code:PermissionRequest), pid 5854"],
            },
        ],
        notes: vec![
            "The events each harness sends and the state each one means are listed in roster-hooks(1) \
             and docs/harnesses.md; an event not listed there changes nothing."
                .to_owned(),
            "JSON (with --harness): {\"outcome\": \"changed\"|\"unchanged\"|\"older\"|\"ignored\", \"state\": \
             \"working\"|\"idle\"|\"waiting\"|null, \"waiting_for\": WORD|null, \"source\": \"<harness>:<event>\", \
             \"session_pid\": N|null, \"path\": PATH|null}. older: a later event was applied already; \
             ignored: roster does not listen to this event."
                .to_owned(),
            "A state is written without fsync: one lost in a crash is written again by the next event. \
             It is shown only while its session's owner is alive, and goes with its record."
                .to_owned(),
        ],
        environment: manual::session_variables_and(&[]),
        environment_note: Some(manual::EMPTY_VARIABLE_NOTE),
        files: &[
            manual::SESSIONS_FILE,
            manual::STATES_FILE,
            manual::HOOK_ERRORS_FILE,
        ],
        exit_statuses: &[
            manual::EXIT_DONE,
            manual::EXIT_FAILED,
            manual::EXIT_BAD_INPUT,
            ExitStatusDoc {
                status: ExitStatus::Refused,
                meaning: "Refused by rule: the roster directory is untrusted, or (with --harness) roster holds \
                          no record of the session, so there is nothing to record its state for.",
            },
        ],
        exit_status_note: Some(
            "With --hook the command exits 0 whatever happened (a failure is one line on stderr and one \
             line appended to hook-errors.log, so that a harness never blocks or reports a session because of \
             roster), except when it hands Claude Code's Stop the session's messages: exit 2, the harness's \
             own way of going on with the text on stderr.",
        ),
        ..Manual::default()
    }
}

/// The clap definition, for xtask's man pages and completions.
pub fn command() -> clap::Command {
    cli_support::with_manual(StateArgs::command(), &manual())
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    cli_support::complete_when_asked(command);
    cli_support::run_tool_with_hook_mode(
        TOOL,
        command,
        |args: &StateArgs| args.hook.as_ref().map(|_| (&args.common, cli_support::HookEvent::StateChange)),
        run,
    )
}

/// What one run did.
struct Outcome {
    what: Option<StateChange>,
    event: Option<&'static ActivityEvent>,
    source: String,
    target: Option<StateTarget>,
    path: Option<std::path::PathBuf>,
    /// The ids of the messages this event handed to the model, and their
    /// text as the model reads it.
    delivered: Vec<String>,
    delivered_text: Option<String>,
    /// By hand: the messages claimed, confirmed once printed.
    handover: Option<HandOver>,
}

/// Records the event as `args` say.
pub fn run(args: StateArgs) -> anyhow::Result<()> {
    let at = registry_core::Timestamp::now();
    let order = StateEvent::boot_clock_now();
    let harness = harness_named(args.hook.as_deref().or(args.harness.as_deref()).unwrap_or_default())?;
    let payload = read_payload()?;
    let event_name = args
        .event
        .clone()
        .or_else(|| payload.event.clone())
        .ok_or_else(|| BadInput("no event: give --event, or a payload with its event name".into()))?;
    let event = activity_event(harness, &event_name, payload.kind.as_deref());
    if event.is_none() {
        report_mistyped_event(&args, harness, &event_name);
    }
    let mut outcome = Outcome {
        what: None,
        event,
        source: String::new(),
        target: None,
        path: None,
        delivered: Vec::new(),
        delivered_text: None,
        handover: None,
    };
    if let Some(event) = event {
        outcome.source = match event.kind {
            Some(kind) => format!("{harness}:{}:{kind}", event.event),
            None => format!("{harness}:{}", event.event),
        };
        record(&args, &payload, event, at, order, &mut outcome)?;
    }
    if args.hook.is_none() && !args.common.quiet {
        let text = outcome_text(&args, &event_name, &outcome)?;
        let printed = write_counted(Stream::Stdout, text.as_bytes());
        if let Some(handover) = outcome.handover.take()
            && let Some(roster) = open_roster_for_reading(&args.common)?
        {
            // As a hook's reply: a message is delivered only when all of it
            // was written, and one part of which went out is never put back.
            match &printed {
                Ok(()) => drop(handover.confirm(&roster)?),
                Err(ReplyNotWritten { handed_any: false, .. }) => handover.put_back(&roster)?,
                Err(ReplyNotWritten { handed_any: true, .. }) => {
                    handover.leave_unconfirmed(&roster, REPLY_CUT_SHORT)?;
                }
            }
        }
        printed.map_err(|not_written| not_written.error)?;
    } else if let Some(handover) = outcome.handover.take()
        && let Some(roster) = open_roster_for_reading(&args.common)?
    {
        // Quiet, by hand: nothing shown, nothing delivered. (The roster is
        // opened again only when something was claimed: a hook claims
        // nothing here, and pays for no second open.)
        handover.put_back(&roster)?;
    }
    Ok(())
}

/// An event name roster does not listen to that is a typo of one it does
/// (`Stopp` for `Stop`) is said, with the nearest known name, rather than
/// ignored in silence: in hook mode on stderr and in `hook-errors.log`, by
/// hand on stderr. It still records nothing: a guess never sets a state.
/// Any other event roster does not listen to is ignored quietly, as the
/// harnesses send many.
fn report_mistyped_event(args: &StateArgs, harness: Harness, event_name: &str) {
    let names = harness::activity_event_names(harness);
    if names.contains(&event_name) {
        // A known event of a kind roster does not read.
        return;
    }
    let Some(nearest) = harness::nearest_by_edit_distance(event_name, &names) else { return };
    let message = format!(
        "event {event_name:?} is not one roster listens to for {harness}; the nearest known event is {nearest} \
         (--event {nearest}); nothing recorded"
    );
    if args.hook.is_some() {
        cli_support::report_hook_problem(TOOL, &args.common, &message);
    } else {
        cli_support::report_warning(TOOL, &message, None);
    }
}

fn harness_named(name: &str) -> Result<Harness, BadInput> {
    Harness::parse(name).ok_or_else(|| {
        BadInput(harness::unknown_harness_message(
            &format!("harness {name:?}"),
            "a harness",
            name,
            &harness::harness_names(),
        ))
    })
}

/// The payload on stdin, read to its end; a payload too large to keep
/// says nothing (the process tree then names the session).
fn read_payload() -> Result<StatePayload, BadInput> {
    let stdin = std::io::stdin();
    let least = cli_support::payload_wait_at_the_least(PAYLOAD_READ_DEADLINE);
    let bytes = harness::read_state_payload(stdin.as_fd(), least, || payload_wait(PAYLOAD_READ_DEADLINE))
        .map_err(|error| BadInput(error.to_string()))?;
    match bytes {
        Some(bytes) => harness::parse_state_payload(&bytes).map_err(|error| BadInput(error.to_string())),
        None => Ok(StatePayload::default()),
    }
}

fn record(
    args: &StateArgs,
    payload: &StatePayload,
    event: &ActivityEvent,
    at: registry_core::Timestamp,
    order: u64,
    outcome: &mut Outcome,
) -> anyhow::Result<()> {
    let Some(roster) = open_roster_for_reading(&args.common)? else { return no_record(args) };
    let by_session_id = match payload.session_id.as_deref() {
        Some(id) => StateTarget::of_session_id(&roster, id)?,
        None => None,
    };
    let target = match by_session_id {
        Some(target) => target,
        None => {
            // No record holds the payload's session id (or it named none):
            // the calling session's owner may have one. Finding no owner is
            // finding no session; failing to look is a failure.
            let owner = match resolve_calling_owner(args.pid.as_deref()) {
                Ok(owner) => owner,
                Err(ResolveError::NotFound) if args.hook.is_some() || payload.session_id.is_some() => {
                    return no_record(args);
                }
                Err(error) => return Err(error.into()),
            };
            let row = registry_core::find_session_row(&roster, owner.resolved.pid, &RunningSystem::read());
            match row.as_ref().and_then(|row| Some((row.file_name.clone(), row.record.as_ref()?))) {
                Some((file_name, record)) => StateTarget::of(file_name, record),
                None => return no_record(args),
            }
        }
    };
    // In hook mode the work deadline is the budget's, which costs a read
    // of `/proc` to know: it is asked only when something has to wait.
    let by_hand_deadline = Instant::now() + LOCK_WAIT;
    let deadline = || cli_support::hook_work_deadline().unwrap_or(by_hand_deadline);
    // One forced continuation per turn end: when a stop hook already made
    // this turn go on, the turn ends, and the messages wait for the next
    // prompt (no loop of blocked stops).
    let point = harness::delivery_event(event.harness, event.event)
        .filter(|point| !(point.point == harness::DeliveryPoint::TurnEnd && payload.stop_hook_active));
    let taken = match point {
        Some(point) => match take_messages(args, &roster, &target, payload, point, at) {
            Ok(taken) => taken,
            Err(error) if args.hook.is_some() => {
                cli_support::report_hook_problem(TOOL, &args.common, &format!("{error:#}"));
                None
            }
            Err(error) => return Err(error),
        },
        None => None,
    };
    // In hook mode the reply is written and confirmed before the state is
    // recorded, so that a slow state write cannot leave a claim unconfirmed.
    let mut turn_goes_on = false;
    if let Some((point, handover)) = taken {
        turn_goes_on = point.point == harness::DeliveryPoint::TurnEnd;
        if args.hook.is_some() {
            let delivered = hand_over(args, &roster, point, handover)?;
            turn_goes_on &= !delivered.is_empty();
            outcome.delivered = delivered.iter().map(|message| message.id.clone()).collect();
        } else {
            outcome.delivered_text = Some(handover.text());
            outcome.delivered = handover.messages().iter().map(|message| message.id.clone()).collect();
            outcome.handover = Some(handover);
        }
    }
    // A turn whose end took a message goes on: the session is working.
    let activity = if turn_goes_on { harness::Activity::Working } else { event.activity };
    let state_event =
        StateEvent { activity, waiting_for: event.waiting_for, source: &outcome.source, at, order };
    let what = record_state_event(
        &roster,
        &target.file_name,
        target.session_pid,
        target.start_ticks,
        &state_event,
        deadline,
    );
    let what = match what {
        Ok(what) => what,
        Err(error) if !outcome.delivered.is_empty() && args.hook.is_some() => {
            cli_support::report_hook_problem(TOOL, &args.common, &error.to_string());
            return Ok(());
        }
        Err(error) => return Err(error.into()),
    };
    outcome.what = Some(what);
    outcome.path = Some(roster.entry_path(roster.states(), &target.file_name));
    outcome.target = Some(target);
    Ok(())
}

/// The messages waiting for the session of `target`, claimed for delivery
/// at `point` (in order, as many as the harness keeps whole in one
/// reply); `None` when none waits, which costs one failed `openat`. Only
/// a hook running inside the session's own process tree takes them, and
/// only for the conversation they were sent to; the session's consent is
/// decided again first: a session that no longer accepts messages gets
/// none, and they are settled refused.
fn take_messages(
    args: &StateArgs,
    roster: &registry_core::RosterDir,
    target: &StateTarget,
    payload: &StatePayload,
    point: &'static harness::DeliveryEvent,
    at: registry_core::Timestamp,
) -> anyhow::Result<Option<(&'static harness::DeliveryEvent, HandOver)>> {
    let waiting = match waiting_queue(roster, &target.file_name) {
        Ok(Some(waiting)) => waiting,
        Ok(None) => return Ok(None),
        Err(error) => {
            return Err(anyhow::anyhow!("messages for pid {} left waiting: {error}", target.session_pid));
        }
    };
    let facts = RunningSystem::read();
    let Some(row) = live_row_of(roster, target, &facts)? else { return Ok(None) };
    let Some(record) = row.record.as_ref() else { return Ok(None) };
    // The messages go only to a hook of that very session: the record's
    // owner (alive, the process it names) must be an ancestor of this
    // hook. A pid given by --pid or ROSTER_SESSION_PID, or a payload
    // naming another session's id, proves nothing.
    // Walked once: the consent decision below resolves the owner from the
    // same ancestry, which it asks about up to the owner only.
    let ancestry = cli_support::own_ancestry_up_to(record.owner.pid);
    match cli_support::runs_inside_session_walked(record.owner.pid, &ancestry) {
        Ok(true) => {}
        Ok(false) => return Ok(None),
        Err(why) => {
            return Err(anyhow::anyhow!(
                "messages for pid {} left waiting: cannot tell whether this hook runs inside that session: {why}",
                record.owner.pid
            ));
        }
    }
    let conversation =
        payload.session_id.as_deref().or_else(|| record.session_id.as_ref().map(|id| id.as_str()));
    let event = format!("{}:{}", point.harness, point.event);
    let now = Instant::now();
    // What is left after the claim must hold the reply and its
    // confirmation before the watchdog; by hand there is no watchdog. The
    // budget's deadline is measured only if the claim runs past the
    // earliest it can be.
    let by_hand = now + BY_HAND_CLAIM_WAIT;
    let work_deadline = || cli_support::hook_work_deadline().unwrap_or(by_hand);
    let claim_deadline = registry_core::messages::ClaimDeadline::between(
        cli_support::hook_work_deadline_at_the_earliest().unwrap_or(by_hand),
        &work_deadline,
    );
    let delivery = Delivery {
        record_file_name: &target.file_name,
        record,
        conversation,
        event: &event,
        now: at,
        // Another process holding the queue's lock keeps the messages
        // waiting for a later event, never this hook spending its budget.
        lock_deadline: now + QUEUE_LOCK_WAIT,
        claim_deadline: &claim_deadline,
        limit: harness::delivery_limit(point),
    };
    let consent = || match cli_support::session_accepts_messages_walked(
        &args.common,
        roster,
        &row,
        record.owner.pid,
        &facts,
        ancestry.clone(),
    ) {
        Ok(()) => ConsentNow::Accepts,
        Err(cli_support::NotAccepted::Refuses(reason)) => ConsentNow::Refuses(reason),
        Err(cli_support::NotAccepted::Undecided(why)) => {
            cli_support::report_hook_problem(
                TOOL,
                &args.common,
                &format!("messages for pid {} left waiting: {why}", record.owner.pid),
            );
            ConsentNow::Undecided
        }
    };
    settle_claim(args, point, take_waiting(roster, waiting, &delivery, consent))
}

/// The row of the session of `target` when it may be given its messages:
/// alive, and still the owner the hook's target names. One that could not
/// be judged keeps them waiting, and says so. The record is the one read
/// to find the target, a moment ago, judged now.
fn live_row_of(
    roster: &registry_core::RosterDir,
    target: &StateTarget,
    facts: &RunningSystem,
) -> anyhow::Result<Option<registry_core::SessionRow>> {
    let row = registry_core::judged_session_row(roster, &target.file_name, target.record.clone(), facts);
    let Some(record) = row.record.as_ref() else { return Ok(None) };
    // A session that is not alive takes nothing: its messages expire with
    // it. One that could not be judged keeps them waiting, and says so.
    match row.liveness() {
        owner_liveness::Liveness::Alive => {}
        owner_liveness::Liveness::Dead => return Ok(None),
        owner_liveness::Liveness::Unknown => {
            let why = format!(": {}", row.verdict.reason);
            return Err(anyhow::anyhow!(
                "messages for pid {} left waiting: whether its session is alive could not be told{why}",
                target.session_pid
            ));
        }
    }
    if record.owner.pid.get() != target.session_pid || record.owner.start_ticks.0 != target.start_ticks {
        return Ok(None);
    }
    Ok(Some(row))
}

/// What a claim for delivery came to: the messages to hand over, or none
/// (a problem said where there is one).
fn settle_claim(
    args: &StateArgs,
    point: &'static harness::DeliveryEvent,
    taken: Result<Taken, registry_core::Error>,
) -> anyhow::Result<Option<(&'static harness::DeliveryEvent, HandOver)>> {
    match taken {
        Ok(Taken::HandOver(handover)) => {
            // A hook says it after its reply (`hand_over`): before, on a
            // stderr that is the reply, the model would read it.
            if let (None, Some(why)) = (&args.hook, handover.left_waiting()) {
                cli_support::report_hook_problem(TOOL, &args.common, why);
            }
            Ok(Some((point, handover)))
        }
        Ok(Taken::Waiting(why)) => {
            cli_support::report_hook_problem(TOOL, &args.common, &why);
            Ok(None)
        }
        Ok(Taken::Nothing) => Ok(None),
        Err(registry_core::Error::QueueLocked { .. }) => Ok(None),
        Err(error) => Err(error.into()),
    }
}

/// Hands the claimed messages to the harness as its hook protocol says
/// (stdout, or stderr and an exit status), then confirms them delivered;
/// returns those delivered. A reply that could not be written whole puts
/// them back to pending: the harness has none of them.
fn hand_over(
    args: &StateArgs,
    roster: &registry_core::RosterDir,
    point: &harness::DeliveryEvent,
    handover: HandOver,
) -> anyhow::Result<Vec<Message>> {
    let reply = harness::delivery_reply(point, &handover.text());
    if reply.stderr.is_some() {
        cli_support::stderr_is_the_reply();
    }
    let left_waiting = handover.left_waiting().map(str::to_owned);
    let delivered = hand_over_reply(args, roster, &reply, handover);
    if let Some(why) = left_waiting {
        cli_support::report_hook_problem(TOOL, &args.common, &why);
    }
    delivered
}

/// `hand_over`'s work once the reply is made: written, then confirmed.
fn hand_over_reply(
    args: &StateArgs,
    roster: &registry_core::RosterDir,
    reply: &harness::HookReply,
    handover: HandOver,
) -> anyhow::Result<Vec<Message>> {
    match write_reply(reply) {
        Ok(()) => {}
        Err(ReplyNotWritten { handed_any: false, error }) => {
            let problem = match handover.put_back(roster) {
                Ok(()) => {
                    format!("the messages could not be handed over, and wait for the next event: {error}")
                }
                Err(put_back) => format!(
                    "the messages could not be handed over ({error}), and putting them back failed \
                     ({put_back}): the next delivery settles them unconfirmed"
                ),
            };
            cli_support::report_hook_problem(TOOL, &args.common, &problem);
            return Ok(Vec::new());
        }
        Err(ReplyNotWritten { handed_any: true, error }) => {
            // Part of the reply reached the harness: it may have read some
            // of it, so the messages are neither delivered nor sent again.
            let problem = match handover.leave_unconfirmed(roster, REPLY_CUT_SHORT) {
                Ok(()) => format!("the reply was cut short ({error}): its messages are settled unconfirmed"),
                Err(settle) => format!(
                    "the reply was cut short ({error}), and settling its messages failed ({settle}): the \
                     next delivery settles them unconfirmed"
                ),
            };
            cli_support::report_hook_problem(TOOL, &args.common, &problem);
            return Ok(Vec::new());
        }
    }
    if reply.exit_status != 0 {
        cli_support::end_hook_with(reply.exit_status);
    }
    match handover.confirm(roster) {
        Ok(delivered) => Ok(delivered),
        Err(error) => {
            cli_support::report_hook_problem(
                TOOL,
                &args.common,
                &format!(
                    "the messages were handed over whole but could not be recorded delivered (the next \
                     delivery settles them unconfirmed): {error}"
                ),
            );
            Ok(Vec::new())
        }
    }
}

/// Why a claimed message reads `unconfirmed` when its reply was cut short.
const REPLY_CUT_SHORT: &str = "its delivery hook's reply was cut short after part of it was written, so \
                               whether the harness read this message is not known";

/// A reply not written whole: whether any of it was (then the harness
/// may have read part of it), and why.
struct ReplyNotWritten {
    handed_any: bool,
    error: std::io::Error,
}

/// Writes a delivery reply whole: its stdout, then its stderr, each with
/// its closing newline in the same buffer (`write_counted`).
fn write_reply(reply: &harness::HookReply) -> Result<(), ReplyNotWritten> {
    let mut handed_any = false;
    for (stream, text) in [(Stream::Stdout, &reply.stdout), (Stream::Stderr, &reply.stderr)] {
        let Some(text) = text else { continue };
        let mut bytes = Vec::with_capacity(text.len() + 1);
        bytes.extend_from_slice(text.as_bytes());
        bytes.push(b'\n');
        write_counted(stream, &bytes).map_err(|mut not_written| {
            not_written.handed_any |= handed_any;
            not_written
        })?;
        handed_any = true;
    }
    Ok(())
}

/// Which standard stream a text goes to.
#[derive(Clone, Copy)]
enum Stream {
    Stdout,
    Stderr,
}

/// Writes `bytes` whole to `stream`, straight to the descriptor, so that
/// what reached the reader is counted exactly: on an error, whether any
/// of it went out.
fn write_counted(stream: Stream, bytes: &[u8]) -> Result<(), ReplyNotWritten> {
    use std::os::fd::AsFd;
    // Anything the standard library buffered goes first, so these bytes
    // are the last on the stream.
    let _ = std::io::stdout().flush();
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    let descriptor = match stream {
        Stream::Stdout => stdout.as_fd(),
        Stream::Stderr => stderr.as_fd(),
    };
    // One `write` call each time, on the descriptor itself: the count it
    // returns is what the reader was handed.
    let mut written = 0;
    while written < bytes.len() {
        match nix::unistd::write(descriptor, &bytes[written..]) {
            Ok(0) => {
                let error = std::io::Error::new(std::io::ErrorKind::WriteZero, "the reader took no more");
                return Err(ReplyNotWritten { handed_any: written > 0, error });
            }
            Ok(count) => written += count,
            Err(nix::errno::Errno::EINTR) => {}
            Err(errno) => return Err(ReplyNotWritten { handed_any: written > 0, error: errno.into() }),
        }
    }
    Ok(())
}

/// A session roster holds no record of: nothing to do for a hook (the
/// session was started before roster was wired, or is not registered),
/// refused when asked by hand.
fn no_record(args: &StateArgs) -> anyhow::Result<()> {
    if args.hook.is_some() {
        return Ok(());
    }
    Err(Refused(
        "roster holds no record of this session (neither the payload's session id nor the calling \
         session's owner); register it first with roster-register"
            .into(),
    )
    .into())
}

/// What a by-hand run prints about `outcome`, the delivered text included.
fn outcome_text(args: &StateArgs, event_name: &str, outcome: &Outcome) -> anyhow::Result<String> {
    use std::fmt::Write as _;
    let mut out = String::new();
    let outcome_word = match outcome.what {
        None => "ignored",
        Some(StateChange::Changed) => "changed",
        Some(StateChange::Unchanged) => "unchanged",
        Some(StateChange::Older) => "older",
    };
    match args.common.output_format() {
        OutputFormat::Json => {
            let value = serde_json::json!({
                "outcome": outcome_word,
                "state": outcome.event.map(|event| event.activity.as_str()),
                "waiting_for": outcome.event.and_then(|event| event.waiting_for),
                "source": outcome.event.map(|_| outcome.source.as_str()),
                "session_pid": outcome.target.as_ref().map(|target| target.session_pid),
                "path": outcome.path.as_ref().map(|path| path.to_string_lossy()),
                "delivered": outcome.delivered,
                "delivered_text": outcome.delivered_text,
            });
            writeln!(out, "{}", serde_json::to_string_pretty(&value)?)?;
        }
        OutputFormat::Text => {
            let (Some(event), Some(target)) = (outcome.event, &outcome.target) else {
                writeln!(
                    out,
                    "ignored: roster does not listen to {} of this harness; nothing changed",
                    cli_support::escape_for_terminal(event_name)
                )?;
                return Ok(out);
            };
            let state = match event.waiting_for {
                Some(what) => format!("waiting for {what}"),
                None => event.activity.as_str().to_owned(),
            };
            let line = match outcome.what {
                Some(StateChange::Older) => format!(
                    "unchanged: a later event of pid {} was recorded already ({} came late)",
                    target.session_pid, outcome.source
                ),
                Some(StateChange::Unchanged) => {
                    format!("{state} still ({}), pid {}", outcome.source, target.session_pid)
                }
                _ => format!("{state} since now ({}), pid {}", outcome.source, target.session_pid),
            };
            writeln!(out, "{line}")?;
            if let Some(text) = &outcome.delivered_text {
                let count = outcome.delivered.len();
                writeln!(out, "delivered {count} message{}:", if count == 1 { "" } else { "s" })?;
                writeln!(out, "{}", cli_support::escape_for_terminal(text))?;
            }
        }
    }
    Ok(out)
}
