//! `roster-resume`: picks up sessions that ended (docs/contract.md §6.9):
//! one by its session id, the last one that ended, or every one a reboot
//! or a crash ended since this machine booted, each with its harness's
//! resume command (`harness::RESUME_COMMANDS`) in its directory: in a new
//! tmux window per session, in this terminal (`--here`), or printed for a
//! script (`--print`). It refuses a session that already runs, a directory
//! that is gone and a harness that is not installed, each with its own
//! exit status, and never starts one session twice: the decision and the
//! start happen under the registry lock, and a claim in `resuming/` names
//! the process started until it ends. The clap `Command` lives here so
//! xtask renders man pages and completions from the definition users run.

#![forbid(unsafe_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{CommandFactory, Parser};
use cli_support::manual::{self, Example, ExitStatusDoc, FileEntry, Manual};
use cli_support::{BadInput, CommonArgs, EndedWith, ExitStatus, OutputFormat, Refused, escape_for_terminal};
use harness::hook_config::shell_quote;
use harness::{Harness, Resume};
use owner_liveness::Liveness;
use registry_core::{
    EndedSession, HowEnded, ListFilter, ResumeClaim, RosterDir, RunningSystem, SessionRow, Timestamp,
    claim_name, list_ended, running_claim, write_claim,
};

const TOOL: &str = "roster-resume";

/// The longest `tmux new-window` is given.
const TMUX_BOUND: Duration = Duration::from_secs(10);

/// Pick up sessions that ended: in a new tmux window each, here, or printed
#[derive(Debug, Parser)]
#[command(
    name = TOOL,
    version,
    about = "Pick up agent sessions that ended (a crash, a reboot): each in a new tmux window, here, or printed",
    long_about = "Pick up agent sessions that ended (a crash, a reboot): each in a new tmux window, here, or printed\n\n\
        roster-resume reads the ended sessions roster keeps (roster-list --ended) and starts each again \
        with its harness's own resume command, in the session's directory: claude --resume ID, codex \
        resume ID, gemini --resume ID, copilot --resume=ID, opencode --session ID, amp threads continue \
        ID, cursor-agent --resume ID, goose session --resume --session-id ID; for a session whose id was \
        never known, the harness's \"continue the latest session of this directory\" form. Inside tmux \
        each session gets a new window named by its agent (else its harness); --here runs one session in \
        this terminal; --print prints the command lines instead, for scripts. A session whose id a live \
        session holds now, a directory that is gone and a harness not on PATH are refused, and no \
        session is ever started twice, even by two roster-resume at once.",
    group = clap::ArgGroup::new("which").required(true).args(["session_id", "last", "boot"]),
)]
pub struct ResumeArgs {
    #[command(flatten)]
    pub common: CommonArgs,

    /// The ended session to resume, by its session id (the newest entry with it)
    #[arg(value_name = "SESSION_ID")]
    pub session_id: Option<String>,

    /// The session that ended last
    #[arg(short, long)]
    pub last: bool,

    /// Every session a reboot or a crash ended since this machine booted (not those that exited)
    #[arg(short, long)]
    pub boot: bool,

    /// Print the command lines (cd DIR && COMMAND) instead of running them
    #[arg(short, long)]
    pub print: bool,

    /// Run the one session in this terminal instead of a new tmux window
    #[arg(long, conflicts_with = "print")]
    pub here: bool,
}

/// Examples, notes and exit statuses: `--help` and the man page both
/// render this.
pub fn manual() -> Manual {
    Manual {
        examples: &[
            Example {
                description: "After a reboot: every session it ended, each in a new tmux window:",
                commands: &["roster-list --ended --since 1d", "roster-resume --boot"],
                output: &[],
            },
            Example {
                description: "The command lines, for a script or another terminal:",
                commands: &["roster-resume --boot --print"],
                output: &["cd /home/dev/src/app && claude --resume 7c660e54-2e19-4577-b46a-16f46484eaf4"],
            },
            Example {
                description: "One session, by its id, in this terminal:",
                commands: &["roster-resume --here 7c660e54-2e19-4577-b46a-16f46484eaf4"],
                output: &[],
            },
        ],
        notes: vec![
            "Which sessions: SESSION_ID names the newest ended session with that id; --last the one that ended \
             last, however it ended; --boot every session listed `reboot` or `crashed` that ended since this \
             machine booted (one per session id, the newest), not those that exited or were removed. \
             roster-list --ended shows each with its resume command."
                .to_owned(),
            "Refused, each with its own exit status: a session whose id a live session holds now (it already \
             runs: the pid is named; roster-focus goes there), or that another roster-resume started and whose \
             process still runs (8); a directory that is gone (9); a harness whose program is not on PATH \
             (10); a harness with no resume command, Aider, or no such ended session (3). With --boot the \
             others are still resumed, and the exit status is the first refusal's."
                .to_owned(),
            "Never twice: the checks and the start happen under the registry lock, and a claim in \
             $ROSTER_DIR/resuming/ names the process started (the tmux pane's, or this one with --here, which \
             becomes the harness) until it ends; by then the harness's hook has registered the session again."
                .to_owned(),
            "Inside tmux (TMUX set) each session opens in a new window of the current tmux session, named by \
             its agent (else its harness), in the session's directory, with this PATH; the first one is \
             selected when only one opens. Outside tmux, --here or --print is needed."
                .to_owned(),
        ],
        environment: manual::session_variables_and(&[
            manual::EnvVar {
                name: "TMUX",
                meaning: "Set inside tmux: the sessions open in new windows of that server.",
            },
            manual::EnvVar { name: "PATH", meaning: "Where each harness's program is looked for." },
        ]),
        environment_note: Some(manual::EMPTY_VARIABLE_NOTE),
        files: &[
            FileEntry {
                path: "$ROSTER_DIR/ended/",
                meaning: "The ended sessions, as roster-list --ended shows them.",
            },
            FileEntry {
                path: "$ROSTER_DIR/resuming/<hash>.json",
                meaning: "One claim per session started: the process that runs it (0600).",
            },
        ],
        exit_statuses: &[
            ExitStatusDoc { status: ExitStatus::Success, meaning: "Started (or with --print, printed) each session." },
            ExitStatusDoc { status: ExitStatus::Failure, meaning: "tmux or the harness could not be started." },
            ExitStatusDoc {
                status: ExitStatus::BadInput,
                meaning: "Bad input or usage: outside tmux without --here or --print; --here for several sessions.",
            },
            ExitStatusDoc {
                status: ExitStatus::Refused,
                meaning: "No such ended session, or its harness has no resume command (Aider).",
            },
            ExitStatusDoc {
                status: ExitStatus::AlreadyRunning,
                meaning: "It already runs: a live session holds its id, or another roster-resume started it.",
            },
            ExitStatusDoc { status: ExitStatus::DirectoryGone, meaning: "Its directory is gone." },
            ExitStatusDoc { status: ExitStatus::NotInstalled, meaning: "Its harness's program is not on PATH." },
        ],
        ..Manual::default()
    }
}

pub fn command() -> clap::Command {
    cli_support::with_manual(ResumeArgs::command(), &manual())
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    cli_support::run_binary(TOOL, command, run)
}

/// How a session is started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Print,
    Here,
    Tmux,
}

/// One ended session, and what became of it.
#[derive(Debug)]
struct Outcome<'a> {
    session: &'a EndedSession,
    argv: Option<Vec<String>>,
    form: Option<&'static str>,
    result: Result<Started, (ExitStatus, String)>,
}

/// What a start did.
#[derive(Debug, Default)]
struct Started {
    window: Option<String>,
    pid: Option<u32>,
}

fn run(args: ResumeArgs) -> anyhow::Result<()> {
    let mode = if args.print {
        Mode::Print
    } else if args.here {
        Mode::Here
    } else if cli_support::process_env_os("TMUX").is_some() {
        Mode::Tmux
    } else {
        return Err(BadInput(
            "not inside tmux (TMUX is not set), where each session would open in a new window: use --here to \
             run it in this terminal, or --print for its command line"
                .to_owned(),
        )
        .into());
    };
    let roster = match mode {
        Mode::Print => cli_support::open_roster_for_reading(&args.common)?,
        Mode::Here | Mode::Tmux => Some(cli_support::open_roster_for_writing(&args.common)?),
    };
    let listing = match &roster {
        Some(roster) => list_ended(roster)?,
        None => registry_core::EndedListing::default(),
    };
    let chosen = choose(&args, &listing.sessions)?;
    if mode == Mode::Here && chosen.len() != 1 {
        return Err(BadInput(format!(
            "--here runs exactly one session in this terminal, and --boot found {}; leave out --here to open \
             each in a tmux window, or name one by its session id",
            chosen.len()
        ))
        .into());
    }
    let mut outcomes = Vec::new();
    let many = chosen.len() > 1;
    for session in chosen {
        let outcome = match (mode, &roster) {
            (Mode::Print, _) | (_, None) => prepare(session, roster.as_ref()),
            (Mode::Here, Some(roster)) => return here(&args, roster, session),
            (Mode::Tmux, Some(roster)) => start_in_tmux(roster, session, many),
        };
        outcomes.push(outcome);
    }
    report(&args, mode, &outcomes)
}

/// The ended sessions the arguments name, newest first.
fn choose<'a>(args: &ResumeArgs, sessions: &'a [EndedSession]) -> anyhow::Result<Vec<&'a EndedSession>> {
    if let Some(id) = &args.session_id {
        return match sessions.iter().find(|session| session.session_id.as_deref() == Some(id)) {
            Some(session) => Ok(vec![session]),
            None => Err(Refused(format!(
                "no ended session has the session id {}; roster-list --ended shows them",
                escape_for_terminal(id)
            ))
            .into()),
        };
    }
    if args.last {
        return match sessions.first() {
            Some(session) => Ok(vec![session]),
            None => {
                Err(Refused("no ended sessions are kept; roster-list --ended shows them".to_owned()).into())
            }
        };
    }
    let booted =
        boot_time().ok_or_else(|| anyhow::anyhow!("reading when this machine booted from /proc/stat"))?;
    let mut seen = std::collections::HashSet::new();
    let chosen: Vec<&EndedSession> = sessions
        .iter()
        .filter(|session| matches!(session.how, HowEnded::Reboot | HowEnded::Crashed))
        .filter(|session| session.ended().unix_nanos() >= booted.unix_nanos())
        .filter(|session| {
            seen.insert(claim_name(&session.harness, session.session_id.as_deref(), &session.cwd))
        })
        .collect();
    if chosen.is_empty() {
        return Err(Refused(
            "no session was ended by a reboot or a crash since this machine booted; roster-list --ended shows \
             how each ended"
                .to_owned(),
        )
        .into());
    }
    Ok(chosen)
}

/// When this machine booted (`btime` of `/proc/stat`).
fn boot_time() -> Option<Timestamp> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let seconds: i128 = stat.lines().find_map(|line| line.strip_prefix("btime "))?.trim().parse().ok()?;
    Some(Timestamp::from_unix_nanos(seconds * 1_000_000_000))
}

/// The session's resume command, or why none resumes it.
fn resume_argv(session: &EndedSession) -> Result<(Vec<String>, &'static str), (ExitStatus, String)> {
    match session.resume() {
        Resume::Command { argv, form } => Ok((argv, form.as_str())),
        Resume::Unavailable(why) => {
            Err((ExitStatus::Refused, format!("{}: nothing resumes it: {why}", who(session))))
        }
    }
}

/// The session's resume command and the checks every mode makes (see
/// `check`), for `--print`.
fn prepare<'a>(session: &'a EndedSession, roster: Option<&RosterDir>) -> Outcome<'a> {
    match resume_argv(session) {
        Ok((argv, form)) => {
            let result = check(session, roster, &argv[0]).map(|_| Started::default());
            Outcome { session, argv: Some(argv), form: Some(form), result }
        }
        Err(refusal) => Outcome { session, argv: None, form: None, result: Err(refusal) },
    }
}

/// The checks before a start: it has no live holder of its id and no
/// claim whose process runs, its directory is there, its program is on
/// `PATH`. `Ok` holds the program's full path.
fn check(
    session: &EndedSession,
    roster: Option<&RosterDir>,
    program: &str,
) -> Result<PathBuf, (ExitStatus, String)> {
    let who = who(session);
    if let Some(holder) = live_holder(session, roster) {
        return Err((ExitStatus::AlreadyRunning, format!("{who} already runs: {holder}")));
    }
    if let Some(roster) = roster {
        let name = claim_name(&session.harness, session.session_id.as_deref(), &session.cwd);
        match running_claim(roster, &name) {
            Ok(Some(claim)) => {
                return Err((
                    ExitStatus::AlreadyRunning,
                    format!(
                        "{who} already runs: roster-resume started it as pid {} at {}, and it still runs",
                        claim.pid, claim.claimed_at
                    ),
                ));
            }
            Ok(None) => {}
            Err(error) => return Err((ExitStatus::of(&error.into()), format!("{who}: reading its claim"))),
        }
    }
    let cwd = Path::new(&session.cwd);
    if !cwd.is_dir() {
        return Err((
            ExitStatus::DirectoryGone,
            format!(
                "{who}: its directory {} is gone; recreate it (or check it out again) to resume the session there",
                escape_for_terminal(&session.cwd)
            ),
        ));
    }
    find_on_path(program).ok_or_else(|| {
        let name = Harness::parse(&session.harness).map_or_else(|| session.harness.clone(), |harness| harness.display_name().to_owned());
        (
            ExitStatus::NotInstalled,
            format!("{who}: {name} is not installed here: no `{program}` on PATH; install it, or add its directory to PATH"),
        )
    })
}

/// The live session that holds the ended session's id now, described:
/// `pid 5854 (wren, claude-code); roster-focus 5854 goes to it`. A session
/// whose liveness is unknown may be running: it holds its id too.
fn live_holder(session: &EndedSession, roster: Option<&RosterDir>) -> Option<String> {
    let id = session.session_id.as_deref()?;
    let filter = ListFilter {
        session_id: Some(id.to_owned()),
        adopt: cli_support::harness_session_sources(true),
        ..ListFilter::default()
    };
    let facts = RunningSystem::read();
    let rows: Vec<SessionRow> = match roster {
        Some(roster) => registry_core::list_sessions(roster, &filter, &facts).ok()?.rows,
        None => registry_core::adopted::read_adopted(&filter.adopt, &facts).0,
    };
    let row = rows.into_iter().find(|row| {
        row.liveness() != Liveness::Dead
            && row.record.as_ref().and_then(|record| record.session_id.as_deref()) == Some(id)
    })?;
    let pid = row.pid.map_or_else(|| "?".to_owned(), |pid| pid.to_string());
    let record = row.record.as_ref()?;
    let names: Vec<String> = [record.agent.as_deref(), Some(record.harness.as_str())]
        .into_iter()
        .flatten()
        .map(|name| escape_for_terminal(name).into_owned())
        .collect();
    let state = if row.liveness() == Liveness::Alive { "" } else { ", whose liveness cannot be told" };
    Some(format!("pid {pid} ({}{state}) holds its id; roster-focus {pid} goes to it", names.join(", ")))
}

/// `session 7c660e54… (wren, claude-code)`.
fn who(session: &EndedSession) -> String {
    let names: Vec<String> = [session.agent.as_deref(), Some(session.harness.as_str())]
        .into_iter()
        .flatten()
        .map(|name| escape_for_terminal(name).into_owned())
        .collect();
    match &session.session_id {
        Some(id) => format!("session {} ({})", escape_for_terminal(id), names.join(", ")),
        None => {
            format!("the session without id in {} ({})", escape_for_terminal(&session.cwd), names.join(", "))
        }
    }
}

/// The executable `name` in the first `PATH` directory that holds one.
fn find_on_path(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = cli_support::process_env_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|directory| directory.is_absolute())
        .map(|directory| directory.join(name))
        .find(|candidate| {
            std::fs::metadata(candidate)
                .is_ok_and(|metadata| metadata.is_file() && metadata.permissions().mode() & 0o111 != 0)
        })
}

/// Checks and starts one session in a new window of the current tmux
/// session, under the registry lock, and claims it for the pane's process.
fn start_in_tmux<'a>(roster: &RosterDir, session: &'a EndedSession, many: bool) -> Outcome<'a> {
    let (argv, form) = match resume_argv(session) {
        Ok(found) => found,
        Err(refusal) => return Outcome { session, argv: None, form: None, result: Err(refusal) },
    };
    let mut outcome =
        Outcome { session, argv: Some(argv.clone()), form: Some(form), result: Ok(Started::default()) };
    let lock = match roster.lock() {
        Ok(lock) => lock,
        Err(error) => {
            let error = anyhow::Error::new(error);
            outcome.result = Err((ExitStatus::of(&error), format!("{}: {error:#}", who(session))));
            return outcome;
        }
    };
    let program = match check(session, Some(roster), &argv[0]) {
        Ok(program) => program,
        Err(refusal) => {
            outcome.result = Err(refusal);
            return outcome;
        }
    };
    let name = session.agent.clone().unwrap_or_else(|| session.harness.clone());
    let mut tmux_arguments: Vec<String> = vec!["new-window".into()];
    if many {
        tmux_arguments.push("-d".into());
    }
    tmux_arguments.extend(["-P".into(), "-F".into(), "#{pane_pid} #{window_id}".into(), "-n".into(), name]);
    tmux_arguments.extend(["-c".into(), session.cwd.clone()]);
    if let Some(path) = cli_support::process_env_os("PATH").and_then(|path| path.into_string().ok()) {
        tmux_arguments.extend(["-e".into(), format!("PATH={path}")]);
    }
    tmux_arguments.push("--".into());
    tmux_arguments.push(program.to_string_lossy().into_owned());
    tmux_arguments.extend(argv[1..].iter().cloned());
    let answer = match location::run_bounded("tmux", &tmux_arguments, TMUX_BOUND) {
        Ok(answer) if answer.success => answer,
        Ok(answer) => {
            outcome.result = Err((
                ExitStatus::Failure,
                format!("{}: tmux new-window failed: {}", who(session), answer.stderr.trim()),
            ));
            return outcome;
        }
        Err(why) => {
            outcome.result = Err((ExitStatus::Failure, format!("{}: {why}", who(session))));
            return outcome;
        }
    };
    let mut words = answer.stdout.split_whitespace();
    let pid: Option<u32> = words.next().and_then(|pid| pid.parse().ok());
    let window = words.next().map(str::to_owned);
    let claimed = pid
        .and_then(|pid| ResumeClaim::of(&session.harness, session.session_id.as_deref(), &session.cwd, pid))
        .map(|claim| {
            let name = claim_name(&session.harness, session.session_id.as_deref(), &session.cwd);
            write_claim(roster, &lock, &name, &claim)
        });
    drop(lock);
    if let Some(Err(error)) = claimed {
        let _ =
            writeln!(std::io::stderr(), "{TOOL}: warning: {}: could not claim it: {error:#}", who(session));
    }
    outcome.result = Ok(Started { window, pid });
    outcome
}

/// `--here`: checks under the lock, claims it for this process, goes to
/// its directory and becomes the harness.
fn here(args: &ResumeArgs, roster: &RosterDir, session: &EndedSession) -> anyhow::Result<()> {
    use std::os::unix::process::CommandExt;
    let (argv, _) = resume_argv(session).map_err(|(status, message)| EndedWith { status, message })?;
    let lock = roster.lock()?;
    let program =
        check(session, Some(roster), &argv[0]).map_err(|(status, message)| EndedWith { status, message })?;
    let claim =
        ResumeClaim::of(&session.harness, session.session_id.as_deref(), &session.cwd, std::process::id())
            .ok_or_else(|| anyhow::anyhow!("reading this process's start time from /proc/self/stat"))?;
    let name = claim_name(&session.harness, session.session_id.as_deref(), &session.cwd);
    write_claim(roster, &lock, &name, &claim)?;
    drop(lock);
    if !args.common.quiet {
        let _ = writeln!(
            std::io::stderr(),
            "{TOOL}: resuming {} in {}",
            who(session),
            escape_for_terminal(&session.cwd)
        );
    }
    let error =
        std::process::Command::new(&program).arg0(&argv[0]).args(&argv[1..]).current_dir(&session.cwd).exec();
    Err(anyhow::Error::new(error).context(format!("starting {}", program.display())))
}

/// `cd DIR && COMMAND`, shell-quoted.
fn command_line(session: &EndedSession, argv: &[String]) -> String {
    let words: Vec<String> = argv.iter().map(|word| shell_quote(word).into_owned()).collect();
    format!("cd {} && {}", shell_quote(&session.cwd), words.join(" "))
}

/// Prints what was done (stdout) and what was refused (stderr), and ends
/// with the first refusal's status.
fn report(args: &ResumeArgs, mode: Mode, outcomes: &[Outcome<'_>]) -> anyhow::Result<()> {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let refused: Vec<&(ExitStatus, String)> =
        outcomes.iter().filter_map(|outcome| outcome.result.as_ref().err()).collect();
    match args.common.output_format() {
        OutputFormat::Json => {
            let shown: Vec<serde_json::Value> =
                outcomes.iter().map(|outcome| json_of(mode, outcome)).collect();
            serde_json::to_writer_pretty(&mut out, &shown)?;
            writeln!(out)?;
        }
        OutputFormat::Text => {
            for outcome in outcomes {
                let (Some(argv), Ok(started)) = (&outcome.argv, &outcome.result) else { continue };
                match mode {
                    Mode::Print => {
                        writeln!(out, "{}", escape_for_terminal(&command_line(outcome.session, argv)))?
                    }
                    _ if args.common.quiet => {}
                    _ => writeln!(
                        out,
                        "started {} in {}: tmux window {}{}",
                        who(outcome.session),
                        escape_for_terminal(&outcome.session.cwd),
                        started.window.as_deref().unwrap_or("?"),
                        started.pid.map(|pid| format!(", pid {pid}")).unwrap_or_default()
                    )?,
                }
            }
        }
    }
    out.flush()?;
    drop(out);
    let Some((status, message)) = refused.first() else { return Ok(()) };
    if refused.len() == 1 && outcomes.len() == 1 {
        return Err(EndedWith { status: *status, message: message.clone() }.into());
    }
    let mut err = std::io::stderr().lock();
    for (_, message) in &refused {
        writeln!(err, "{TOOL}: {message}")?;
    }
    Err(EndedWith {
        status: *status,
        message: format!("{} of {} sessions not resumed (each said above)", refused.len(), outcomes.len()),
    }
    .into())
}

/// One outcome in JSON.
fn json_of(mode: Mode, outcome: &Outcome<'_>) -> serde_json::Value {
    let session = outcome.session;
    let (result, status, reason, window, pid) = match &outcome.result {
        Ok(started) => {
            let result = if mode == Mode::Print { "printed" } else { "started" };
            (result, 0, None, started.window.clone(), started.pid)
        }
        Err((status, message)) => ("refused", status.code(), Some(message.clone()), None, None),
    };
    serde_json::json!({
        "outcome": result,
        "status": status,
        "reason": reason,
        "session_id": session.session_id,
        "harness": session.harness,
        "agent": session.agent,
        "how": session.how.as_str(),
        "ended_at": session.ended_at,
        "cwd": session.cwd,
        "argv": outcome.argv,
        "form": outcome.form,
        "command_line": outcome.argv.as_ref().map(|argv| command_line(session, argv)),
        "window": window,
        "pid": pid,
    })
}
