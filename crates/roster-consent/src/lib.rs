//! `roster-consent`: whether the calling session accepts being messaged
//! ("pushed to") by other tools (docs/contract.md §6.4): `arm`, `disarm`, `status` and
//! `should-arm`. The clap `Command` lives here so xtask renders man pages
//! and completions from the definition users run.

#![forbid(unsafe_code)]

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{Args, CommandFactory, Parser, Subcommand};
use cli_support::manual::{self, Example, ExitStatusDoc, Manual};
use cli_support::{
    BadInput, CallingOwner, Colour, CommonArgs, ExitStatus, NotUtf8Path, OutputFormat, Refused,
    escape_for_terminal, home_relative, paint, run_tool,
};
use consent::{
    Assessment, AssessmentRequest, ConfigInput, ConfigOutcome, EndedSession, MarkerEntry, MarkerFinding,
    MarkerState, MarkerWriteRefusal, SessionDirectory, SessionDirectorySource, SessionStatus,
    canonical_session_directory, owner_condition, session_directory, write_marker,
};
use owner_liveness::OwnerIdentity;
use registry_core::{RosterDir, RunningSystem};

const TOOL: &str = "roster-consent";

/// Record and query whether an agent session accepts being messaged
#[derive(Debug, Parser)]
#[command(
    name = TOOL,
    version,
    about = "Record and query whether an agent session accepts being messaged",
    long_about = "Record and query whether an agent session accepts being messaged\n\n\
        A session accepts pushes from other tools when it armed itself (`arm`), or when the \
        nearest .roster.toml of its directory says [consent] auto_arm = true and the session \
        did not disarm itself (`disarm`). Your own [consent] auto_arm = false in \
        ~/.config/roster/config.toml vetoes auto-arm in every repository. A session's marker \
        counts only while the very process that wrote it runs: it can never outlive its \
        session, and a reused pid can never revive it.\n\n\
        The session's owner is found, most explicit first, from --pid, ROSTER_SESSION_PID, \
        the harness's own CLAUDE_PID or OPENCODE_PID (only when it names an ancestor), or the \
        nearest harness process among the caller's ancestors (the outermost of a run of them). \
        The marker records that run (a node loader and its native binary) and counts while any \
        of its processes runs: consent dies with the whole session, not with its loader.\n\n\
        The session's directory (where .roster.toml is looked for) is the session's own, never \
        the caller's: --cwd when given, else the cwd recorded when the session registered, and \
        only while that record's owner is the very process running at the pid. A running session \
        with no such record needs --cwd: status then exits 2 naming the record it looked for, and \
        should-arm exits 1. A session that has ended (its owner, and every other process of its \
        chain, no longer runs) accepts nothing: status says so and what it last was, and exits 3.\n\n\
        A .roster.toml is believed only as a regular file (not a symlink) owned by you or root \
        and writable by nobody else; any other is untrusted, enables nothing, and status says \
        why.",
    subcommand_required = true,
    arg_required_else_help = true,
)]
pub struct ConsentArgs {
    #[command(flatten)]
    pub common: CommonArgs,

    #[command(subcommand)]
    pub command: ConsentCommand,
}

/// The four things one can ask of consent.
#[derive(Debug, Subcommand)]
pub enum ConsentCommand {
    /// Accept pushes for the calling session until it ends or disarms
    #[command(long_about = "Accept pushes for the calling session until it ends or disarms\n\n\
            Writes consent/<pid>@<world>.json with state \"armed\" and the owner's identity. Refused \
            (exit 3) unless the owner is this command or one of its ancestors (so a session \
            can only consent for itself, never for an unrelated process named with --pid) and \
            is running. Prints `armed pid PID (DIR)`. DIR, kept in the marker for information, \
            is --cwd, else the session's recorded directory, else the current directory. An arm \
            waits for the registry lock (5 s at most); when the session disarms itself meanwhile, \
            the disarm wins and the arm writes nothing (exit 1).")]
    Arm(SessionArgs),

    /// Refuse pushes for the calling session, whatever the repository's auto_arm says
    #[command(
        long_about = "Refuse pushes for the calling session, whatever the repository's auto_arm says\n\n\
            Writes consent/<pid>@<world>.json with state \"disarmed\": an explicit off for this session \
            that beats auto_arm (removing the marker would let auto_arm re-arm it). Any running \
            owner may be disarmed, even one named with --pid that is not an ancestor: \
            disarming grants nothing. Refused (exit 3) when the owner is not running. Prints \
            `disarmed pid PID (DIR)`, DIR as for arm.\n\n\
            Takes effect at once whoever holds the registry lock (any process that can read the \
            registry can hold it, even through a read-only descriptor): when the lock stays held \
            for 250 ms, the marker is written without it, whole, by a rename, and the markers of \
            dead sessions are left for the next writer or prune."
    )]
    Disarm(SessionArgs),

    /// Show whether the calling session accepts pushes, and why
    #[command(long_about = "Show whether the calling session accepts pushes, and why\n\n\
            Shows the session's own state (armed, disarmed or none, and why a marker that is \
            present does not count: its owner is dead or of unknown liveness, or the file is \
            untrusted or malformed), the session's directory and where it came from, the \
            auto-arm inputs (the repository's .roster.toml and your config.toml, and any error \
            reading them or reason not to believe them), the decision and why.\n\n\
            The directory is --cwd when given, else the cwd in the session's record (only while \
            the record's owner is the very process running at the pid); never the directory \
            status runs in. Without either, status exits 2 and names the record it looked for. \
            The marker's path is shown when there is a marker.\n\n\
            A session that has ended (its owner is not running, nor any other process of its \
            chain) accepts nothing and nothing is decided for it: status says it is gone and what \
            it last was, as far as what it left tells (its record and the directory it names, or \
            --cwd; its marker's state and path), and exits 3, as for any owner that is not \
            running.\n\n\
            JSON keys: pid, pid_source, pid_verified, owner_running, owner_reason, session_ended, \
            record {path, liveness, reason} (the record an ended session left, else null), \
            directory {path, source} (source \"--cwd\" or \"record\"; null when not known), marker \
            {state, written_state, counts, liveness, problem, reason, path}, \
            repo {path, auto_arm, error}, user {path, auto_arm, veto, error}, auto_arm, \
            should_arm, reasons, warnings. marker.state is the state that counts (\"armed\", \
            \"disarmed\" or \"none\"); marker.written_state is what the file says; marker.path is \
            where the marker is, or would be. For a session that ended, repo, user and auto_arm \
            are null.")]
    Status(SessionArgs),

    /// Exit 0 when the calling session should accept pushes now, else 1, printing nothing
    #[command(
        long_about = "Exit 0 when the calling session should accept pushes now, else 1, printing nothing\n\n\
            Exit 0 when the session's owner is running and it armed itself, or when auto_arm \
            resolves true and it did not disarm itself; exit 1 otherwise. A marker that is \
            present but cannot be believed (untrusted, malformed, or of an owner whose liveness \
            is unknown) might be a disarm, so it holds auto-arm off. Every error (a bad flag, an \
            untrusted roster directory, an owner that cannot be found, an unreadable \
            configuration, a session with no record and no --cwd, ...) is exit 1 too, and \
            nothing is ever printed: the answer fails closed. Run `roster-consent status` to see \
            why. --pid may name any session, verified or not: asking grants nothing. The answer \
            is the session's, wherever it is asked from: its .roster.toml is looked for from the \
            directory it registered with (or --cwd)."
    )]
    ShouldArm(SessionArgs),
}

/// Which session, and where it works.
#[derive(Clone, Debug, Args)]
pub struct SessionArgs {
    /// Name the session's owner process: a pid (never 1 or a kernel thread), or `parent` for the process that ran this command
    #[arg(short, long, value_name = "PID|parent", add = cli_support::session_pids_or_parent())]
    pub pid: Option<String>,

    /// Take DIR as the session's directory, where .roster.toml is looked for (default: the cwd of the session's record)
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
}

/// Examples, environment, files and exit statuses, the subcommands'
/// examples among them: `--help` and the man page both render this.
pub fn manual() -> Manual {
    Manual {
        examples: &[
            Example {
                description: "Accept pushes in this session, from a shell the harness runs (its parent is \
                              the session):",
                commands: &["roster-consent arm"],
                output: &[],
            },
            Example {
                description: "Refuse them again, even where the repository's .roster.toml sets auto_arm:",
                commands: &["roster-consent disarm"],
                output: &[],
            },
            Example {
                description: "Why the session does or does not accept pushes:",
                commands: &["roster-consent status"],
                output: &[],
            },
            Example {
                description: "In a script, start listening for pushes only when the session consents:",
                commands: &["roster-consent should-arm && start-listening"],
                output: &[],
            },
            Example {
                description: "From an orchestrator, in any directory: may it push to the registered session \
                              6120? The answer comes from the directory that session registered with:",
                commands: &["roster-consent should-arm --pid 6120 && echo \"may push to 6120\""],
                output: &[],
            },
            Example {
                description: "Opt a repository in to auto-arm, in the .roster.toml committed at its root:",
                commands: &["cat .roster.toml"],
                output: &["agent_name = \"wren\"", "[consent]", "auto_arm = true"],
            },
            Example {
                description: "Veto auto-arm in every repository:",
                commands: &["cat ~/.config/roster/config.toml"],
                output: &["[consent]", "auto_arm = false"],
            },
        ],
        environment: manual::session_variables_and(&[
            manual::XDG_CONFIG_HOME_VARIABLE,
            manual::NO_COLOR_VARIABLE,
            manual::TERM_VARIABLE,
        ]),
        environment_note: Some(manual::EMPTY_VARIABLE_NOTE),
        files: &[
            manual::CONSENT_FILE,
            manual::SESSIONS_FILE,
            manual::LOCK_FILE,
            manual::REPOSITORY_CONFIG_FILE,
            manual::USER_CONFIG_FILE,
        ],
        exit_statuses: &[
            manual::EXIT_DONE,
            manual::EXIT_FAILED,
            ExitStatusDoc {
                status: ExitStatus::BadInput,
                meaning: "Bad input or usage: an invalid flag or flag value, an invalid owner variable, no \
                          owner found, or (status) a running session with no record of its directory and \
                          no --cwd.",
            },
            ExitStatusDoc {
                status: ExitStatus::Refused,
                meaning: "Refused by rule: the roster directory is untrusted, the owner is not running \
                          (status: the session has ended; it still prints what the session left), or, \
                          for arm, the owner is not verified (neither the caller nor one of its ancestors).",
            },
        ],
        exit_status_note: Some(
            "should-arm exits 0 when the session should accept pushes now and 1 otherwise, including on \
             every error (fail closed); it never exits 2 or 3.",
        ),
        subcommands: vec![
            ("arm", Manual { examples: ARM_EXAMPLES, ..Manual::default() }),
            ("disarm", Manual { examples: DISARM_EXAMPLES, ..Manual::default() }),
            ("status", Manual { examples: STATUS_EXAMPLES, ..Manual::default() }),
            ("should-arm", Manual { examples: SHOULD_ARM_EXAMPLES, ..Manual::default() }),
        ],
        ..Manual::default()
    }
}

const ARM_EXAMPLES: &[Example] = &[
    Example {
        description: "From a shell inside the session:",
        commands: &["roster-consent arm"],
        output: &[],
    },
    Example {
        description: "Naming the shell that runs this command as the session's owner:",
        commands: &["roster-consent arm --pid parent"],
        output: &[],
    },
    Example {
        description: "Print the written marker for a script:",
        commands: &["roster-consent arm --json"],
        output: &[],
    },
];

const DISARM_EXAMPLES: &[Example] = &[
    Example {
        description: "From a shell inside the session:",
        commands: &["roster-consent disarm"],
        output: &[],
    },
    Example {
        description: "Disarm a session by its owner's pid (from roster-list):",
        commands: &["roster-consent disarm --pid 5854"],
        output: &[],
    },
];

const STATUS_EXAMPLES: &[Example] = &[
    Example {
        description: "Why the calling session does or does not accept pushes:",
        commands: &["roster-consent status"],
        output: &[],
    },
    Example {
        description: "The same for the session whose owner is pid 5854:",
        commands: &["roster-consent status --pid 5854"],
        output: &[],
    },
    Example {
        description: "Judged from another directory than the one the session registered with:",
        commands: &["roster-consent status --pid 5854 --cwd ~/src/app"],
        output: &[],
    },
    Example {
        description: "Only the decision, for a script:",
        commands: &["roster-consent status --json | jq .should_arm"],
        output: &[],
    },
];

const SHOULD_ARM_EXAMPLES: &[Example] = &[
    Example {
        description: "In the session's own shell:",
        commands: &["if roster-consent should-arm; then echo accepting pushes; fi"],
        output: &[],
    },
    Example {
        description: "From an orchestrator: may it push to the session whose owner is pid 6120?",
        commands: &["roster-consent should-arm --pid 6120 && echo \"may push to 6120\""],
        output: &[],
    },
    Example {
        description: "In a hook: go on quietly unless Claude Code's session accepts pushes:",
        commands: &["roster-consent should-arm --pid \"$CLAUDE_PID\" --cwd \"$PWD\" || exit 0"],
        output: &[],
    },
];

/// The clap definition, for xtask's man pages and completions.
pub fn command() -> clap::Command {
    cli_support::with_manual(ConsentArgs::command(), &manual())
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    cli_support::complete_when_asked(command);
    let arguments = cli_support::process_arguments();
    match cli_support::parse_with_manual_on_help::<ConsentArgs>(command, &arguments) {
        Ok(ConsentArgs { common, command: ConsentCommand::ShouldArm(session) }) => {
            ExitCode::from(should_arm_exit_status(&common, &session))
        }
        Ok(args) => run_tool(TOOL, || run(args)),
        // should-arm prints nothing, not even a usage error; help and
        // version are asked for by a person and still shown.
        Err(error) if error.use_stderr() && names_should_arm(&arguments) => {
            ExitCode::from(ExitStatus::Failure)
        }
        Err(error) => run_tool(TOOL, || Err(error.into())),
    }
}

fn names_should_arm(arguments: &[OsString]) -> bool {
    arguments.iter().skip(1).any(|argument| argument == "should-arm")
}

/// Runs one subcommand for a library caller. The binary sends
/// `should-arm` down its own silent path instead, where every failure is
/// exit 1 and nothing is printed.
pub fn run(args: ConsentArgs) -> anyhow::Result<()> {
    match &args.command {
        ConsentCommand::Arm(session) => write_state(&args.common, session, MarkerState::Armed),
        ConsentCommand::Disarm(session) => write_state(&args.common, session, MarkerState::Disarmed),
        ConsentCommand::Status(session) => status(&args.common, session),
        ConsentCommand::ShouldArm(session) if should_arm(&args.common, session) => Ok(()),
        ConsentCommand::ShouldArm(_) => {
            Err(anyhow::anyhow!("the session should not accept pushes now; see `roster-consent status`"))
        }
    }
}

/// `should-arm` as the binary runs it: 0 or 1, nothing printed, whatever
/// happens. Even a panic is caught and silenced, since its message would
/// be output.
fn should_arm_exit_status(common: &CommonArgs, session: &SessionArgs) -> ExitStatus {
    std::panic::set_hook(Box::new(|_| {}));
    match std::panic::catch_unwind(|| should_arm(common, session)) {
        Ok(true) => ExitStatus::Success,
        _ => ExitStatus::Failure,
    }
}

/// Should the session accept pushes now? Its owner must be running, and
/// either armed itself, or auto-arm resolves true and it did not disarm
/// itself. Every error is `false` (fail closed); nothing is printed.
pub fn should_arm(common: &CommonArgs, session: &SessionArgs) -> bool {
    assess(common, session, &RunningSystem::read()).is_ok_and(|status| status.session.should_arm())
}

/// The calling owner and the consent library's assessment of its session.
fn assess(common: &CommonArgs, session: &SessionArgs, facts: &RunningSystem) -> anyhow::Result<Status> {
    if let Some(given) = &session.cwd {
        require_utf8_directory(given)?;
    }
    let owner = cli_support::resolve_calling_session_owner(common, session.pid.as_deref(), facts)?;
    let roster_path = cli_support::roster_directory_choice(common)?.path;
    let request = AssessmentRequest {
        pid: owner.resolved.pid,
        owner_identity: owner.capture_identity(facts),
        roster_path: &roster_path,
        cwd_flag: session.cwd.as_deref(),
        env: &cli_support::process_env_os,
    };
    let session = consent::assess(request, facts)?;
    let directory = match &session {
        SessionStatus::Assessed(assessment) => Some(&assessment.directory),
        SessionStatus::Ended(ended) => ended.directory.as_ref(),
    };
    if let Some(directory) = directory {
        require_utf8_directory(&directory.path)?;
    }
    Ok(Status { owner, session })
}

/// Refuses a session directory that is not UTF-8, as given or as resolved:
/// roster records directories as text, and one read lossily (`\u{fffd}`
/// for the bytes) would be another directory, whose `.roster.toml` would
/// speak for the session.
fn require_utf8_directory(path: &Path) -> Result<(), NotUtf8Path> {
    match path.to_str() {
        Some(_) => Ok(()),
        None => Err(NotUtf8Path::directory(
            "the session directory",
            path,
            "pass --cwd a directory whose path is UTF-8",
        )),
    }
}

/// What `status` prints: who the owner is and how it was found, and the
/// assessment of its session, or what is left of one that ended.
struct Status {
    owner: CallingOwner,
    session: SessionStatus,
}

/// The directory a marker records (information only: it decides nothing):
/// the session's directory as `status` finds it, else, for a session that
/// never registered, the current directory.
fn marker_directory(
    roster: Option<&RosterDir>,
    roster_path: &Path,
    identity: &OwnerIdentity,
    session: &SessionArgs,
) -> anyhow::Result<SessionDirectory> {
    if let Some(given) = &session.cwd {
        require_utf8_directory(given)?;
    }
    let directory = match session_directory(
        roster,
        roster_path,
        identity.pid,
        Some(identity),
        session.cwd.as_deref(),
        &RunningSystem::read(),
    ) {
        Err(consent::Error::NoSessionDirectory { .. }) => {
            let here = std::env::current_dir().map_err(|error| {
                BadInput(format!(
                    "the current directory cannot be read ({error}); pass the session's directory with --cwd"
                ))
            })?;
            SessionDirectory {
                path: canonical_session_directory(&here)?,
                source: SessionDirectorySource::CurrentDirectory,
            }
        }
        other => other?,
    };
    require_utf8_directory(&directory.path)?;
    Ok(directory)
}

/// `arm` and `disarm`.
fn write_state(common: &CommonArgs, session: &SessionArgs, state: MarkerState) -> anyhow::Result<()> {
    let verb = match state {
        MarkerState::Armed => "arm",
        MarkerState::Disarmed => "disarm",
    };
    let owner =
        cli_support::resolve_calling_session_owner(common, session.pid.as_deref(), &RunningSystem::read())?;
    let resolved = &owner.resolved;
    match consent::may_write_marker(state, resolved.verified, owner.ancestry_unreadable.as_deref()) {
        Ok(()) => {}
        // Not a refusal: whether the owner is an ancestor could not be told.
        Err(MarkerWriteRefusal::AncestryUnreadable(why)) => anyhow::bail!(
            "cannot {verb} pid {}: cannot tell whether it is this command or one of its ancestors: {why}",
            resolved.pid
        ),
        Err(MarkerWriteRefusal::NotTheSessionItself) => {
            return Err(Refused(format!(
                "cannot arm pid {pid} (named by {source}): it is neither this command nor one of its \
                 ancestors, and a session may only consent for itself; run `roster-consent arm` inside the \
                 session, or `roster-consent arm --pid parent` from its shell",
                pid = resolved.pid,
                source = source_description(&owner),
            ))
            .into());
        }
    }
    let facts = RunningSystem::read();
    let identity =
        owner.capture_identity(&facts).with_context(|| format!("cannot {verb} pid {}", resolved.pid))?;
    // The directory is decided before anything is created, from the
    // registry as it is: bad input (a --cwd, or a current directory, that
    // cannot be the session's) writes nothing.
    let existing = cli_support::open_roster_for_reading(common)?;
    let roster_path = cli_support::roster_directory_choice(common)?.path;
    let directory = marker_directory(existing.as_ref(), &roster_path, &identity, session)?.path;
    let roster = match existing {
        Some(roster) => roster,
        None => cli_support::open_roster_for_writing(common)?,
    };
    let written = write_marker(&roster, &identity, state, &directory, &facts)?;
    if common.quiet {
        return Ok(());
    }
    let mut out = std::io::stdout().lock();
    match common.output_format() {
        OutputFormat::Json => {
            let mut value = serde_json::to_value(&written.marker)?;
            if let Some(object) = value.as_object_mut() {
                object.insert("path".into(), path_json(Some(&written.path)));
            }
            serde_json::to_writer_pretty(&mut out, &value)?;
            writeln!(out)?;
        }
        OutputFormat::Text => {
            let home = home_directory();
            writeln!(
                out,
                "{} pid {} ({})",
                state.as_str(),
                resolved.pid,
                home_relative(&directory, home.as_deref())
            )?;
        }
    }
    Ok(())
}

fn source_description(owner: &CallingOwner) -> String {
    match owner.resolved.source {
        owner_liveness::OwnerSource::Flag => "--pid".into(),
        owner_liveness::OwnerSource::Parent => "--pid parent".into(),
        owner_liveness::OwnerSource::Ancestor => "the ancestor walk".into(),
        other => other.as_str().into(),
    }
}

/// `status`: the session's consent and why. A session that ended is
/// described (what it last was) and refused like any command about an
/// owner that is not running: exit 3.
fn status(common: &CommonArgs, session: &SessionArgs) -> anyhow::Result<()> {
    let status = assess(common, session, &RunningSystem::read())?;
    if !common.quiet {
        let mut out = std::io::stdout().lock();
        let home = home_directory();
        match (common.output_format(), &status.session) {
            (OutputFormat::Json, SessionStatus::Assessed(assessment)) => {
                serde_json::to_writer_pretty(&mut out, &status_json(&status.owner, assessment))?;
                writeln!(out)?;
            }
            (OutputFormat::Json, SessionStatus::Ended(ended)) => {
                serde_json::to_writer_pretty(&mut out, &ended_status_json(&status.owner, ended))?;
                writeln!(out)?;
            }
            (OutputFormat::Text, SessionStatus::Assessed(assessment)) => out.write_all(
                status_text(&status.owner, assessment, home.as_deref(), common.colour_on_stdout()).as_bytes(),
            )?,
            (OutputFormat::Text, SessionStatus::Ended(ended)) => {
                out.write_all(ended_status_text(&status.owner, ended, home.as_deref()).as_bytes())?;
            }
        }
        out.flush()?;
    }
    match &status.session {
        SessionStatus::Assessed(_) => Ok(()),
        SessionStatus::Ended(ended) => {
            Err(Refused(format!("{}: its session has ended and accepts nothing", ended.owner_gone)).into())
        }
    }
}

fn home_directory() -> Option<PathBuf> {
    cli_support::process_env_os("HOME").map(PathBuf::from).filter(|home| home.is_absolute())
}

fn path_json(path: Option<&Path>) -> serde_json::Value {
    path.map_or(serde_json::Value::Null, |path| path.to_string_lossy().into_owned().into())
}

/// The `marker` object of `status --json`: the state that counts, what
/// the file says, its owner's liveness, why, and its path (where it is,
/// or would be).
fn marker_json(marker: &MarkerEntry) -> serde_json::Value {
    let (liveness, problem) = match &marker.finding {
        MarkerFinding::Absent => (None, None),
        MarkerFinding::Judged { verdict, .. } => (Some(verdict.liveness.as_str()), None),
        MarkerFinding::Problem(problem) => (Some("unknown"), Some(problem.kind.as_str())),
    };
    serde_json::json!({
        "state": marker.counted_state().as_str(),
        "written_state": marker.written_state().map(MarkerState::as_str),
        "counts": marker.counts(),
        "liveness": liveness,
        "problem": problem,
        "reason": marker.reason(),
        "path": path_json(Some(&marker.path)),
    })
}

/// The owner's keys of `status --json`: its pid and how it was found.
fn owner_json(owner: &CallingOwner) -> serde_json::Map<String, serde_json::Value> {
    let mut keys = serde_json::Map::new();
    keys.insert("pid".into(), owner.resolved.pid.get().into());
    keys.insert("pid_source".into(), owner.resolved.source.as_str().into());
    keys.insert("pid_verified".into(), owner.resolved.verified.into());
    keys
}

fn status_json(owner: &CallingOwner, assessment: &Assessment) -> serde_json::Value {
    let config = |input: &ConfigInput| {
        serde_json::json!({
            "path": path_json(input.path.as_deref()),
            "auto_arm": input.outcome.auto_arm(),
            "error": input.outcome.error(),
        })
    };
    let mut user = config(&assessment.inputs.user);
    user["veto"] = user_vetoes(&assessment.inputs.user.outcome).into();
    let mut keys = owner_json(owner);
    let rest = serde_json::json!({
        "owner_running": assessment.owner_identity.is_ok(),
        "owner_reason": assessment.owner_identity.as_ref().err().map(ToString::to_string),
        "session_ended": false,
        "record": serde_json::Value::Null,
        "directory": directory_json(Some(&assessment.directory)),
        "marker": marker_json(&assessment.marker),
        "repo": config(&assessment.inputs.repo),
        "user": user,
        "auto_arm": assessment.inputs.decision.auto_arm,
        "should_arm": assessment.should_arm(),
        "reasons": assessment.reasons(),
        "warnings": assessment.inputs.decision.warnings,
    });
    keys.extend(rest.as_object().cloned().unwrap_or_default());
    keys.into()
}

/// `status --json` of a session that ended: the same keys, with what is
/// left of it (its record, its marker) and nothing decided (`repo`,
/// `user` and `auto_arm` null).
fn ended_status_json(owner: &CallingOwner, ended: &EndedSession) -> serde_json::Value {
    let record = ended.record.as_ref().map(|row| {
        serde_json::json!({
            "path": path_json(Some(&row.path)),
            "liveness": row.liveness().as_str(),
            "reason": row.verdict.reason,
        })
    });
    let mut keys = owner_json(owner);
    let rest = serde_json::json!({
        "owner_running": false,
        "owner_reason": ended.owner_gone.to_string(),
        "session_ended": true,
        "record": record,
        "directory": directory_json(ended.directory.as_ref()),
        "marker": marker_json(&ended.marker),
        "repo": serde_json::Value::Null,
        "user": serde_json::Value::Null,
        "auto_arm": serde_json::Value::Null,
        "should_arm": false,
        "reasons": [ended.consent.reason],
        "warnings": [],
    });
    keys.extend(rest.as_object().cloned().unwrap_or_default());
    keys.into()
}

fn directory_json(directory: Option<&SessionDirectory>) -> serde_json::Value {
    directory.map_or(serde_json::Value::Null, |directory| {
        serde_json::json!({ "path": path_json(Some(&directory.path)), "source": directory.source.as_str() })
    })
}

/// Where the session's directory came from, in words.
fn directory_origin(source: SessionDirectorySource) -> &'static str {
    match source {
        SessionDirectorySource::CwdFlag => "from --cwd",
        SessionDirectorySource::Record => "from the session's record",
        SessionDirectorySource::CurrentDirectory => "the current directory",
    }
}

fn user_vetoes(outcome: &ConfigOutcome) -> bool {
    !matches!(outcome, ConfigOutcome::Absent | ConfigOutcome::AutoArmUnset | ConfigOutcome::AutoArm(true))
}

/// What a configuration file said, in words.
fn describe_config(input: &ConfigInput) -> String {
    match &input.outcome {
        ConfigOutcome::Absent => "absent".into(),
        ConfigOutcome::AutoArmUnset => "[consent] auto_arm not set".into(),
        ConfigOutcome::AutoArm(value) => format!("[consent] auto_arm = {value}"),
        failed => failed.error().unwrap_or_default(),
    }
}

/// The `session` line of `status`: the owner's pid, how it was found,
/// whether it is verified, and its condition (`running`, or why not).
fn session_line(owner: &CallingOwner, condition: &str) -> String {
    let resolved = &owner.resolved;
    let verified =
        if resolved.verified { "verified" } else { "not verified: not this command or an ancestor" };
    format!("pid {} (via {}, {verified}), {condition}", resolved.pid, source_description(owner))
}

/// The `directory` line of `status`: the directory and where it came from.
fn directory_line(directory: &SessionDirectory, home: Option<&Path>) -> String {
    format!("{} ({})", home_relative(&directory.path, home), directory_origin(directory.source))
}

/// Label and value lines, the labels in a column of their own.
fn labelled_lines(lines: &[(&str, String)]) -> String {
    let width = lines.iter().map(|(label, _)| label.len()).max().unwrap_or(0);
    lines.iter().map(|(label, value)| format!("{label:<width$}  {value}\n")).collect()
}

/// The text of `status`: a label column and escaped values, `~` for home.
/// The marker's path is shown only where there is a marker.
fn status_text(owner: &CallingOwner, assessment: &Assessment, home: Option<&Path>, colour: bool) -> String {
    let escaped = |text: &str| escape_for_terminal(text).into_owned();
    let shown_path =
        |path: Option<&Path>| path.map_or_else(|| "-".to_owned(), |path| home_relative(path, home));
    let marker = &assessment.marker;
    let inputs = &assessment.inputs;

    let running = match &assessment.owner_identity {
        Ok(_) => "running".to_owned(),
        Err(error) => escaped(&owner_condition(error)),
    };
    let mut lines: Vec<(&str, String)> = vec![
        ("session", session_line(owner, &running)),
        ("directory", directory_line(&assessment.directory, home)),
        ("local", format!("{}; {}", marker.counted_state().as_str(), escaped(&marker.reason()))),
    ];
    if !matches!(marker.finding, MarkerFinding::Absent) {
        lines.push(("marker", shown_path(Some(&marker.path))));
    }
    lines.extend([
        (
            "repo file",
            match &inputs.repo.path {
                Some(path) => {
                    format!("{}: {}", shown_path(Some(path)), escaped(&describe_config(&inputs.repo)))
                }
                None => "none found from the session's directory upward".to_owned(),
            },
        ),
        (
            "user file",
            format!(
                "{}: {}{}",
                shown_path(inputs.user.path.as_deref()),
                escaped(&describe_config(&inputs.user)),
                if user_vetoes(&inputs.user.outcome) { " (veto)" } else { "" }
            ),
        ),
        ("auto-arm", if inputs.decision.auto_arm { "on" } else { "off" }.to_owned()),
        (
            "should arm",
            if assessment.should_arm() {
                paint("yes", Colour::Green, colour)
            } else {
                paint("no", Colour::Yellow, colour)
            },
        ),
    ]);
    for (index, reason) in assessment.reasons().iter().enumerate() {
        lines.push((if index == 0 { "why" } else { "" }, escaped(reason)));
    }
    for warning in &inputs.decision.warnings {
        lines.push(("warning", escaped(warning)));
    }
    labelled_lines(&lines)
}

/// The text of `status` for a session that ended: that it is gone, and
/// what it last was, as far as what it left tells (its record and its
/// directory, its marker's state); nothing is decided for it.
fn ended_status_text(owner: &CallingOwner, ended: &EndedSession, home: Option<&Path>) -> String {
    let escaped = |text: &str| escape_for_terminal(text).into_owned();
    let gone = format!("gone: {}", escaped(&ended.owner_gone.to_string()));
    let mut lines: Vec<(&str, String)> = vec![("session", session_line(owner, &gone))];
    lines.push((
        "record",
        match &ended.record {
            Some(row) => format!(
                "{}, {} ({})",
                home_relative(&row.path, home),
                row.liveness(),
                escaped(&row.verdict.reason)
            ),
            None => "none left".to_owned(),
        },
    ));
    if let Some(directory) = &ended.directory {
        lines.push(("directory", directory_line(directory, home)));
    }
    let marker = &ended.marker;
    let last_state = match &marker.finding {
        MarkerFinding::Absent => "none: it left no consent marker".to_owned(),
        MarkerFinding::Judged { marker: written, .. } => format!(
            "{} (its marker, left behind: the next consent write or `roster-prune` removes it)",
            written.state.as_str()
        ),
        MarkerFinding::Problem(_) => format!("unknown: {}", escaped(&marker.reason())),
    };
    lines.push(("last state", last_state));
    if !matches!(marker.finding, MarkerFinding::Absent) {
        lines.push(("marker", home_relative(&marker.path, home)));
    }
    lines.push(("should arm", "no".to_owned()));
    lines.push(("why", escaped(&ended.consent.reason)));
    labelled_lines(&lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Help style: imperative first lines without a trailing period, and a
    /// help line for every flag, on the tool and each subcommand.
    #[test]
    fn help_follows_the_house_style() {
        let command = command();
        command.clone().debug_assert();
        let mut commands = vec![command.clone()];
        commands.extend(command.get_subcommands().cloned());
        for command in &commands {
            let name = command.get_name();
            let about = command.get_about().map(ToString::to_string).unwrap_or_default();
            assert!(!about.is_empty() && !about.ends_with('.'), "{name}: {about:?}");
            assert!(command.get_after_long_help().is_some(), "{name} has no examples");
            for argument in command.get_arguments() {
                let help = argument.get_help().map(ToString::to_string).unwrap_or_default();
                assert!(!help.is_empty(), "{name} --{:?} has no help", argument.get_long());
                assert!(!help.ends_with('.'), "{name}: {help:?}");
            }
        }
        let names: Vec<&str> = command.get_subcommands().map(clap::Command::get_name).collect();
        assert_eq!(names, ["arm", "disarm", "status", "should-arm"]);
    }

    #[test]
    fn only_an_argument_spelled_should_arm_silences_usage_errors() {
        let arguments = |list: &[&str]| list.iter().map(OsString::from).collect::<Vec<_>>();
        assert!(names_should_arm(&arguments(&["roster-consent", "--dir", "x", "should-arm", "--bogus"])));
        assert!(!names_should_arm(&arguments(&["roster-consent", "status", "--bogus"])));
        assert!(!names_should_arm(&arguments(&["should-arm"])), "argv[0] is not an argument");
    }
}
