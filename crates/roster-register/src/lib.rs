//! `roster-register`: writes or refreshes the calling session's record
//! (docs/contract.md §6.1), by hand or from a harness's session-start hook (§8.2).
//! The clap `Command` lives here so xtask renders man pages and
//! completions from the definition users run.

#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use clap::{CommandFactory, Parser};
use cli_support::manual::{self, EnvVar, Example, ExitStatusDoc, Manual};
use cli_support::{
    BadInput, CallingOwner, CommonArgs, ExitStatus, NotUtf8Path, OutputFormat, Refused, escape_for_terminal,
    home_relative, open_roster_for_writing, process_env, process_env_os, report_warning,
    resolve_calling_owner, resolve_calling_owner_naming_every_ancestor, roster_directory_choice,
    terminal_message,
};
use consent::RepoConfigWarning;
use harness::{
    CLAUDE_CODE_MESSAGING_SOCKET, Harness, HookPayload, HookTarget, detect_hook_harness,
    harness_version_from_env, messaging_socket_from_env, session_id_from_env,
};
use owner_liveness::SocketIdentity;
use registry_core::record::{CWD_LIMIT, FieldLimit, HARNESS_LIMIT, SOCKET_PATH_LIMIT};
use registry_core::register::precedence::{
    DroppedValue, UnusableValues, choose_agent, choose_harness_version, choose_session_id,
    choose_transcript_path,
};
use registry_core::register::refresh::{RecordedFact, SessionDirectory};
use registry_core::{
    Registered, Registrar, Registration, RosterDir, RunningSystem, read_session_row, register,
};

const TOOL: &str = "roster-register";

/// Register the calling agent session in the roster
#[derive(Debug, Parser)]
#[command(
    name = TOOL,
    version,
    about = "Register the calling agent session in the roster",
    long_about = "Register the calling agent session in the roster\n\n\
        Writes (or refreshes) one record for the session's owner: the long-lived harness \
        process (claude, codex, gemini, ...) that lives exactly as long as the session. The owner \
        is found, most explicit first, from --pid, ROSTER_SESSION_PID, the harness's own \
        CLAUDE_PID or OPENCODE_PID (only when it names an ancestor), or the nearest harness \
        process among the caller's ancestors (the outermost of a run of them: Copilot's and \
        Codex's node loader above their native binary, Gemini's relaunch). Its identity (boot \
        id, start time, pidfs inode, uid, namespaces) is recorded so that a reused pid can never \
        pass for it, and so is each process of that run below it (at most three, in `chain`), \
        also when --pid or a variable names the outermost: the session lives while any of them \
        runs, so a signal to the loader alone does not end it. An owner named by --pid that is \
        not a harness process, or not an ancestor, is recorded alone.\n\n\
        The agent name comes from --agent, else ROSTER_AGENT, else agent_name in the nearest \
        .roster.toml from the session's directory upward. An invalid --agent or ROSTER_AGENT is \
        bad input (exit 2). A repository file that cannot be used (unreadable, invalid TOML, an \
        unknown key, an invalid name, or untrusted: a symlink, another user's file, a file its \
        group or anyone may write) never stops registration: the session is registered without \
        its name and a one-line warning names the file and what is wrong (in hook mode it goes \
        to hook-errors.log).",
)]
pub struct RegisterArgs {
    #[command(flatten)]
    pub common: CommonArgs,

    /// Name the owner process: a pid (never 1 or a kernel thread), or `parent` for the process that ran this command
    #[arg(short, long, value_name = "PID|parent")]
    pub pid: Option<String>,

    /// Register under this agent name ("" for anonymous; default: ROSTER_AGENT, then the recorded name on a refresh, then agent_name in .roster.toml)
    #[arg(short, long, value_name = "NAME")]
    pub agent: Option<String>,

    /// Record the harness's session id (default: the hook payload, ROSTER_SESSION_ID, the harness's export, else the recorded one)
    #[arg(short, long, value_name = "ID")]
    pub session_id: Option<String>,

    /// Record DIR as the session's working directory (default: the payload's cwd; by hand the recorded one, else the current directory)
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,

    /// Record the harness by name (default: detected from the owner process, else the recorded one)
    #[arg(short = 'H', long, value_name = "NAME")]
    pub harness: Option<String>,

    /// Record the harness's messaging socket (default: CLAUDE_CODE_MESSAGING_SOCKET when it exists)
    #[arg(long, value_name = "PATH")]
    pub socket: Option<PathBuf>,

    /// Run as a session-start hook: read the payload from stdin, print nothing, always exit 0, finish within 1 s
    #[arg(long, value_name = "HARNESS|auto")]
    pub hook: Option<String>,
}

/// Examples, notes, environment, files and exit statuses: `--help` and the
/// man page both render this (`command()` attaches it).
pub fn manual() -> Manual {
    Manual {
        examples: &[
            Example {
                description: "Register the current shell as a session, working as agent wren:",
                commands: &["roster-register --pid parent --agent wren"],
                output: &[],
            },
            Example {
                description: "From a wrapper script that then execs the harness, so the wrapper's pid \
                              becomes the harness's:",
                commands: &["roster-register --pid $$ --harness aider && exec aider"],
                output: &[],
            },
            Example {
                description: "As Claude Code's SessionStart hook, which is what roster-hooks install \
                              claude-code writes; the payload arrives on standard input:",
                commands: &["roster-register --hook claude-code"],
                output: &[],
            },
            Example {
                description: "Rename the session of pid 5854, from any directory; nothing else of its \
                              record changes:",
                commands: &["roster-register --pid 5854 --agent heron"],
                output: &["renamed pid 5854 claude-code agent=heron ~/src/app (was agent=wren)"],
            },
            Example {
                description: "Register and print the record as roster-list shows it:",
                commands: &["roster-register --pid parent --format json"],
                output: &[],
            },
        ],
        notes: vec![
            "Refresh: registering the same owner again (a new session id after /clear, /resume or \
             compaction) keeps the recorded agent name unless --agent NAME, ROSTER_AGENT or --agent \"\" \
             says otherwise; agent_name in .roster.toml names a session only when it is first registered. \
             By hand, a refresh keeps every recorded fact it is given no new value for (harness, session \
             id, directory, transcript, socket, the owner's verification, registered_at) and says which \
             it changed: renamed when only the agent name changed, else refreshed with the facts changed. \
             The first registration by hand of a session Claude Code lists in its own sessions directory \
             takes what its file says."
                .to_owned(),
            field_limits_note(),
            "Paths are recorded as text: a session directory (given, current or from the hook payload, \
             or whose real path goes through a link) or a socket path that is not valid UTF-8 is refused \
             with exit 2, the message showing its bytes as \\xff; in hook mode it is dropped and logged \
             like an over-long value, and the current directory stands in for a cwd only if it is UTF-8."
                .to_owned(),
        ],
        environment: manual::session_variables_and(&[
            EnvVar {
                name: "ROSTER_AGENT",
                meaning: "The agent name, when --agent is not given; beats agent_name in .roster.toml.",
            },
            EnvVar {
                name: "ROSTER_SESSION_ID",
                meaning: "The session id, when neither --session-id nor the hook payload gives one.",
            },
            EnvVar {
                name: "CLAUDE_CODE_SESSION_ID, GEMINI_SESSION_ID, CODEX_THREAD_ID, AGENT_SESSION_ID",
                meaning: "The harnesses' own session id exports, the last resort for the session id.",
            },
            EnvVar {
                name: "CLAUDE_CODE_MESSAGING_SOCKET",
                meaning: "Claude Code's messaging socket, recorded when --socket is not given and the \
                          socket exists; a session whose socket disappears is dead.",
            },
            manual::NO_COLOR_VARIABLE,
            manual::TERM_VARIABLE,
        ]),
        environment_note: Some(manual::EMPTY_VARIABLE_NOTE),
        files: &[
            manual::SESSIONS_FILE,
            manual::LOCK_FILE,
            manual::HOOK_ERRORS_FILE,
            manual::REPOSITORY_CONFIG_FILE,
        ],
        exit_statuses: &[
            ExitStatusDoc {
                status: ExitStatus::Success,
                meaning: "The session was registered or its record refreshed.",
            },
            manual::EXIT_FAILED,
            ExitStatusDoc {
                status: ExitStatus::BadInput,
                meaning: "Bad input or usage: an invalid flag or flag value, an invalid ROSTER_SESSION_PID, \
                          ROSTER_AGENT or ROSTER_SESSION_ID, an unreadable hook payload, a session directory \
                          or socket path that is not UTF-8, or no owner found.",
            },
            ExitStatusDoc {
                status: ExitStatus::Refused,
                meaning: "Refused by rule: the roster directory is untrusted, another live session holds \
                          the session id (the message names its pid), or the owner is not running.",
            },
        ],
        exit_status_note: Some(manual::HOOK_MODE_EXIT_NOTE),
        ..Manual::default()
    }
}

/// The clap definition with its manual, for `--help` and xtask's man pages
/// and completions.
pub fn command() -> clap::Command {
    cli_support::with_manual(RegisterArgs::command(), &manual())
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    cli_support::complete_when_asked(command);
    cli_support::run_tool_with_hook_mode(
        TOOL,
        command,
        |args: &RegisterArgs| {
            args.hook.as_ref().map(|_| (&args.common, cli_support::HookEvent::SessionStart))
        },
        run,
    )
}

/// Registers the calling session as `args` say.
pub fn run(args: RegisterArgs) -> anyhow::Result<()> {
    let (target, payload) = match &args.hook {
        Some(value) => {
            let target = cli_support::hook_target(value)?;
            (Some(target), Some(cli_support::read_hook_payload()?))
        }
        None => (None, None),
    };
    let mut unusable =
        if args.hook.is_some() { UnusableValues::dropping() } else { UnusableValues::refusing() };
    // The boot id and this process's namespaces, read once: the owner's
    // identity is captured with them and the registry's records judged by them.
    let facts = RunningSystem::read();
    let gathered = gather_registration(&args, target, payload.as_ref(), &facts, &mut unusable);
    // Said even when registration then fails for another reason.
    for dropped in dropped_messages(&unusable) {
        cli_support::report_escaped_hook_problem(TOOL, &args.common, &dropped);
    }
    let (registration, repo_config_warning) = gathered?;
    let roster = open_roster_for_writing(&args.common)?;
    if let Some(warning) = repo_config_warning {
        let hook_log = args.hook.as_ref().map(|_| &roster);
        report_warning(TOOL, &warning.to_string(), hook_log);
    }
    let registered = register(&roster, &registration, &facts)?;
    if args.hook.is_none() && !args.common.quiet {
        print_registered(&args.common, &roster, &registered, &facts)?;
    }
    Ok(())
}

/// The manual's note on field limits, rendered from `FIELD_LIMITS` so the
/// text can never say another number than the check enforces. The values
/// roster takes from the kernel and its own resolution (boot id, machine,
/// how the owner was found) are left out: nobody passes them.
fn field_limits_note() -> String {
    use registry_core::record::Field;
    let given_by_users = registry_core::record::FIELD_LIMITS
        .iter()
        .filter(|limit| !matches!(limit.field, Field::BootId | Field::Machine | Field::SessionPidSource));
    let lines: Vec<String> = given_by_users
        .map(|limit| format!("  {:<18} {:>5} {}", limit.field.key(), limit.max, limit.unit_name()))
        .collect();
    format!(
        "Field limits (longer values are refused with exit 2; in hook mode they are dropped, logged to \
         hook-errors.log, and the session is registered without them; a cwd falls back to the current \
         directory):\n{}",
        lines.join("\n")
    )
}

/// Why values dropped in hook mode were dropped, one escaped line each
/// for stderr and `hook-errors.log`.
fn dropped_messages(unusable: &UnusableValues) -> impl Iterator<Item = String> + '_ {
    unusable.dropped().iter().map(|dropped| match dropped {
        DroppedValue::TooLong { origin, why } => {
            escape_for_terminal(&format!("{origin} dropped: {why}; registered without it")).into()
        }
        DroppedValue::Invalid { origin, why } => {
            escape_for_terminal(&format!("{origin}: {why}; registered without it")).into()
        }
        // Escaped already: a path that is not UTF-8 is shown by its bytes,
        // which escaping again would spoil.
        DroppedValue::AsSaid(message) => format!("{message}; registered without it"),
    })
}

/// `error` about a value that cannot be used: returned where such values
/// are refused; else the value is dropped and `error` said.
fn refuse_or_drop(unusable: &mut UnusableValues, error: anyhow::Error) -> anyhow::Result<()> {
    if unusable.refuses() {
        return Err(error);
    }
    unusable.drop_as_said(terminal_message(&error));
    Ok(())
}

/// `path` when it is UTF-8 and fits `limit` (as the record will spell it);
/// `None` when it was dropped. A record holds the path as text, so one
/// that is not UTF-8 is refused as `not_utf8` says.
fn admit_path(
    unusable: &mut UnusableValues,
    limit: FieldLimit,
    origin: &'static str,
    path: PathBuf,
    not_utf8: &dyn Fn(&Path) -> NotUtf8Path,
) -> anyhow::Result<Option<PathBuf>> {
    let Some(text) = path.to_str() else {
        refuse_or_drop(unusable, not_utf8(&path).into())?;
        return Ok(None);
    };
    Ok(unusable.fits(limit, origin, text)?.then_some(path))
}

/// Validates every input and captures the owner's identity. Nothing is
/// written before all of it holds. A repository file whose `agent_name`
/// cannot be used comes back as a warning: it never stops registration.
fn gather_registration(
    args: &RegisterArgs,
    target: Option<HookTarget>,
    payload: Option<&HookPayload>,
    facts: &RunningSystem,
    unusable: &mut UnusableValues,
) -> anyhow::Result<(Registration, Option<RepoConfigWarning>)> {
    // Where the registry is, first: an invalid ROSTER_DIR is bad input.
    roster_directory_choice(&args.common)?;
    // A hook that recognises its harness from the ancestry asks about every
    // ancestor, not only those up to an owner named by --pid: the walk
    // reads them all as it goes.
    let harness_from_ancestry = args.harness.is_none() && matches!(target, Some(HookTarget::Auto));
    let owner = match harness_from_ancestry {
        true => resolve_calling_owner_naming_every_ancestor(args.pid.as_deref())?,
        false => resolve_calling_owner(args.pid.as_deref())?,
    };
    let env = process_env;

    let harness = choose_harness(args, target, payload, &owner, &env)?;

    let cwd = choose_session_directory(args, payload, unusable)?;
    let repository_directory = match &cwd {
        SessionDirectory::Given(dir) | SessionDirectory::CurrentDirectory(dir) => dir.clone(),
    };

    let (agent, repo_config_warning) =
        choose_agent(args.agent.as_deref(), process_env("ROSTER_AGENT"), unusable, || {
            consent::repo_agent_name(&repository_directory).map(|found| found.map(|(name, _)| name))
        })?;
    let session_id = choose_session_id(
        args.session_id.as_deref(),
        payload.and_then(|payload| payload.session_id.clone()),
        process_env("ROSTER_SESSION_ID"),
        session_id_from_env(harness, &process_env),
        unusable,
    )?;

    let socket = choose_socket(args, unusable)?;

    let harness_version = choose_harness_version(
        payload.and_then(|payload| payload.harness_version.clone()),
        || harness_version_from_env(harness, &env),
        unusable,
    )?;
    let transcript_path =
        choose_transcript_path(payload.and_then(|payload| payload.transcript_path.clone()), unusable)?;

    let (identity, terminal) =
        owner.capture_identity_seeing_terminal(facts).map_err(|error| match error {
            owner_liveness::CaptureError::NotRunning(pid) => anyhow::Error::new(Refused(format!(
                "owner pid {pid} is not running; a record must never be born dead, so name a live process"
            ))),
            other => anyhow::Error::new(other),
        })?;

    let location = screen_location(&owner, identity.pid.get(), terminal, &env);
    let registrar = match payload {
        Some(_) => Registrar::Hook { speaks_for_the_session: true },
        None => Registrar::ByHand,
    };
    let registration = Registration {
        identity,
        session_pid_source: owner.resolved.source.into(),
        session_pid_verified: owner.resolved.verified,
        harness: harness.map(|harness| harness.as_str().to_owned()),
        harness_version,
        agent,
        session_id,
        transcript_path,
        socket,
        location,
        cwd,
        registrar_pid: std::process::id(),
        registrar,
        // Only a registration by hand takes facts from a harness's own
        // registry; a hook tells the session afresh, so where those
        // registries are (the user's configuration says) is not looked up.
        harness_sessions: match registrar {
            Registrar::ByHand => cli_support::harness_session_sources(true),
            Registrar::Hook { .. } => Vec::new(),
        },
    };
    Ok((registration, repo_config_warning))
}

/// The harness: `--harness`, else the hook's detection, else the owner's
/// ancestry.
fn choose_harness(
    args: &RegisterArgs,
    target: Option<HookTarget>,
    payload: Option<&HookPayload>,
    owner: &CallingOwner,
    env: &dyn Fn(&str) -> Option<String>,
) -> anyhow::Result<Option<Harness>> {
    if let Some(name) = &args.harness {
        HARNESS_LIMIT.check(name).map_err(|why| BadInput(format!("--harness: {why}")))?;
    }
    Ok(match (&args.harness, target, payload) {
        (Some(name), _, _) => Some(Harness::parse(name).ok_or_else(|| {
            BadInput(harness::unknown_harness_message(
                &format!("--harness {name:?}"),
                "a harness roster knows",
                name,
                &harness::harness_names(),
            ))
        })?),
        (None, Some(target), Some(payload)) => detect_hook_harness(target, payload, &owner.ancestry, env)
            .or_else(|| owner.resolved.harness.and_then(Harness::parse)),
        (None, _, _) => owner.resolved.harness.and_then(Harness::parse),
    })
}

/// The session's directory: `--cwd`, else the payload's, else the
/// directory the command runs in (a hook's is its session's).
fn choose_session_directory(
    args: &RegisterArgs,
    payload: Option<&HookPayload>,
    unusable: &mut UnusableValues,
) -> anyhow::Result<SessionDirectory> {
    // An over-long cwd in hook mode falls back to the current directory,
    // where harnesses run their hooks: the same as a payload without one.
    let cwd_given = match (&args.cwd, payload.and_then(|payload| payload.cwd.as_ref())) {
        (Some(dir), _) => admit_path(unusable, CWD_LIMIT, "--cwd", dir.clone(), &session_directory_not_utf8)?
            .map(|dir| (dir, "--cwd")),
        (None, Some(dir)) => admit_path(
            unusable,
            CWD_LIMIT,
            "the hook payload's cwd",
            dir.clone(),
            &session_directory_not_utf8,
        )?
        .map(|dir| (dir, "the hook payload's cwd")),
        (None, None) => None,
    };
    let given = match cwd_given {
        Some((dir, origin)) => match canonical_directory(&dir, origin) {
            Ok(canonical) => Some(canonical),
            // Outside hook mode the error stands as it is (bad input, or an
            // I/O error); in hook mode the directory the hook runs in stands
            // in, as for a payload without a cwd.
            Err(error) => {
                refuse_or_drop(unusable, error)?;
                None
            }
        },
        None => None,
    };
    // A hook runs in its session's directory, so the directory it runs in
    // is given as the payload's would be; by hand it is only where the
    // command runs: a refresh keeps the recorded directory.
    Ok(match given {
        Some(cwd) => SessionDirectory::Given(cwd),
        None => {
            let here = std::env::current_dir().context("reading the current directory")?;
            let here = canonical_directory(&here, "the current directory")?;
            if payload.is_some() {
                SessionDirectory::Given(here)
            } else {
                SessionDirectory::CurrentDirectory(here)
            }
        }
    })
}

/// The messaging socket: `--socket` (which must exist), else Claude Code's
/// variable (dropped when it names none).
fn choose_socket(
    args: &RegisterArgs,
    unusable: &mut UnusableValues,
) -> anyhow::Result<Option<SocketIdentity>> {
    let socket_not_utf8 = |origin: &'static str| {
        move |path: &Path| NotUtf8Path {
            what: origin.to_owned(),
            path: path.to_owned(),
            advice: "roster records the socket's path as text; give a socket whose path is UTF-8".to_owned(),
        }
    };
    let socket_given = match &args.socket {
        Some(path) => {
            admit_path(unusable, SOCKET_PATH_LIMIT, "--socket", path.clone(), &socket_not_utf8("--socket"))?
                .map(|path| (path, true))
        }
        None => match messaging_socket_from_env_exactly() {
            Some(path) => admit_path(
                unusable,
                SOCKET_PATH_LIMIT,
                CLAUDE_CODE_MESSAGING_SOCKET,
                path,
                &socket_not_utf8(CLAUDE_CODE_MESSAGING_SOCKET),
            )?
            .map(|path| (path, false)),
            None => None,
        },
    };
    Ok(match socket_given {
        Some((path, true)) => Some(SocketIdentity::capture(&path).map_err(|error| {
            BadInput(format!("--socket {}: {error}; give the path of an existing socket", path.display()))
        })?),
        Some((path, false)) => SocketIdentity::capture(&path).ok(),
        None => None,
    })
}

/// Where the session shows: the owner's own environment; when that cannot
/// be read (another user's process), this process's when it runs inside
/// the session (a hook's environment is its harness's). `terminal` is the
/// owner's controlling terminal as its capture read it.
fn screen_location(
    owner: &CallingOwner,
    owner_pid: u32,
    terminal: u64,
    env: &dyn Fn(&str) -> Option<String>,
) -> Option<registry_core::record::ScreenLocation> {
    let tty = registry_core::record::terminal_name(terminal);
    registry_core::record::location_of_process_on(owner_pid, tty.clone()).or_else(|| {
        let location = registry_core::record::ScreenLocation::from_environment(env, tty);
        (owner.resolved.verified && !location.is_empty()).then_some(location)
    })
}

/// Why a session directory that is not UTF-8 cannot be registered.
fn session_directory_not_utf8(path: &Path) -> NotUtf8Path {
    NotUtf8Path::directory(
        "the session directory",
        path,
        "register from (or pass --cwd) a directory whose path is UTF-8",
    )
}

/// `CLAUDE_CODE_MESSAGING_SOCKET` as the path it names, its bytes as they
/// are: read as text, a path that is not UTF-8 would come back lossy and
/// name another socket.
fn messaging_socket_from_env_exactly() -> Option<PathBuf> {
    match process_env_os(CLAUDE_CODE_MESSAGING_SOCKET) {
        Some(value) if value.to_str().is_none() => {
            Some(PathBuf::from(value)).filter(|path| path.is_absolute())
        }
        _ => messaging_socket_from_env(&process_env),
    }
}

/// The real path of the directory `path`, which must be UTF-8, as given
/// and as resolved (a link may lead to a directory that is not): the
/// record holds it as text.
fn canonical_directory(path: &Path, what: &str) -> anyhow::Result<PathBuf> {
    if path.to_str().is_none() {
        return Err(session_directory_not_utf8(path).into());
    }
    let canonical = match owner_liveness::retry_interrupted(|| std::fs::canonicalize(path)) {
        Ok(canonical) => canonical,
        Err(error) if registry_core::is_unusable_path(&error) => {
            return Err(
                BadInput(format!("{what} {}: {error}; give an existing directory", path.display())).into()
            );
        }
        // The system failed while looking (out of space, an I/O error):
        // an error of its own (exit 1), not the caller's path.
        Err(error) => {
            return Err(anyhow::Error::new(error).context(format!("resolving {what} {}", path.display())));
        }
    };
    // Only a directory that is missing or not one is the caller's mistake;
    // a failing stat is an I/O error (exit 1), not bad input.
    match owner_liveness::retry_interrupted(|| std::fs::metadata(&canonical)) {
        Ok(metadata) if metadata.is_dir() => {}
        Ok(_) => return Err(BadInput(format!("{what} {} is not a directory", path.display())).into()),
        Err(error) => {
            return Err(
                anyhow::Error::new(error).context(format!("inspecting {what} {}", canonical.display()))
            );
        }
    }
    let Some(canonical_text) = canonical.to_str() else {
        return Err(session_directory_not_utf8(&canonical).into());
    };
    // Resolving symlinks can lengthen a path past the limit.
    CWD_LIMIT
        .check(canonical_text)
        .map_err(|why| BadInput(format!("{what} resolves to a real path that is too long: {why}")))?;
    Ok(canonical)
}

fn print_registered(
    common: &CommonArgs,
    roster: &RosterDir,
    registered: &Registered,
    facts: &RunningSystem,
) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match common.output_format() {
        OutputFormat::Json => {
            let file_name = registered.path.file_name().and_then(|name| name.to_str()).unwrap_or_default();
            let row = read_session_row(roster, file_name, facts)
                .with_context(|| format!("re-reading {}", registered.path.display()))?;
            let consent =
                consent::ConsentDecider::new(&cli_support::process_env_os).for_row(roster, &row, facts);
            serde_json::to_writer_pretty(&mut out, &row.to_json(consent.row_consent()))?;
            writeln!(out)?;
        }
        OutputFormat::Text => {
            let home = cli_support::process_env_os("HOME").map(PathBuf::from);
            writeln!(out, "{}", registered_line(registered, home.as_deref()))?;
        }
    }
    Ok(())
}

/// The one line a registration prints: what it did, the record's harness,
/// agent name and directory, and for a refresh which facts it changed. A
/// refresh that changed the agent name alone is a rename.
fn registered_line(registered: &Registered, home: Option<&Path>) -> String {
    let record = &registered.record;
    let agent_words = |agent: Option<&registry_core::AgentName>| match agent {
        Some(agent) => format!("agent={}", cli_support::escape_for_terminal(agent)),
        None => "anonymous".to_owned(),
    };
    let (verb, outcome) = match &registered.previous {
        None => ("registered", String::new()),
        Some(previous) if registered.changed == [RecordedFact::Agent] => {
            ("renamed", format!(" (was {})", agent_words(previous.agent.as_ref())))
        }
        Some(_) if registered.changed.is_empty() => ("refreshed", " (nothing changed)".to_owned()),
        Some(_) => {
            let changed: Vec<&str> = registered.changed.iter().map(|fact| fact.name()).collect();
            ("refreshed", format!(" (changed: {})", changed.join(", ")))
        }
    };
    let harness = if record.harness.is_empty() {
        String::new()
    } else {
        format!(" {}", cli_support::escape_for_terminal(&record.harness))
    };
    let agent =
        record.agent.as_ref().map(|agent| format!(" {}", agent_words(Some(agent)))).unwrap_or_default();
    format!(
        "{verb} pid {}{harness}{agent} {}{outcome}",
        record.pid(),
        home_relative(Path::new(&record.cwd), home)
    )
}
