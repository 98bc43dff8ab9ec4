//! `roster-focus`: takes the terminal to a live session (docs/contract.md
//! §6.8): finds it (by pid, session id or agent name, or the one waiting
//! longest for its user), checks where it shows (its recorded location,
//! against its multiplexer: the `location` crate), and runs the
//! multiplexer's own focus command, or prints it. A location that no
//! longer holds is never focused. The clap `Command` lives here so xtask
//! renders man pages and completions from the definition users run.

#![forbid(unsafe_code)]

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use clap::{CommandFactory, Parser};
use cli_support::manual::{self, Example, ExitStatusDoc, Manual};
use cli_support::{BadInput, CommonArgs, EndedWith, ExitStatus, OutputFormat, Refused, escape_for_terminal};
use harness::hook_config::shell_quote;
use location::{FocusPlan, FocusRefusal, Verifier, focus_plan, run_bounded};
use owner_liveness::Liveness;
use registry_core::record::{LocationCheck, LocationStatus};
use registry_core::{ListFilter, RunningSystem, SessionRow};

const TOOL: &str = "roster-focus";

/// The longest a focus command is given to run.
const FOCUS_BOUND: Duration = Duration::from_secs(5);

/// Take the terminal to a live agent session
#[derive(Debug, Parser)]
#[command(
    name = TOOL,
    version,
    about = "Take the terminal to a live agent session: its tmux pane, screen window or kitty window",
    long_about = "Take the terminal to a live agent session: its tmux pane, screen window or kitty window\n\n\
        roster-focus finds the session (by its owner's pid, its session id, its agent name, or with \
        --next-waiting the one that has waited longest for its user), checks where it shows (the \
        location its registration recorded: a tmux pane, a GNU screen window, a kitty or WezTerm \
        window), and runs that multiplexer's own focus command: tmux switch-client to the pane's \
        session, window and pane for the most recently active client, screen select, kitty @ \
        focus-window, wezterm cli activate-pane. A location is checked first: the pane must still be \
        there and run the session (a restarted tmux server reuses pane numbers); one that no longer \
        holds is never focused. --print prints the command line instead, for key bindings and scripts.",
    group = clap::ArgGroup::new("which").required(true).args(["target", "next_waiting"]),
)]
pub struct FocusArgs {
    #[command(flatten)]
    pub common: CommonArgs,

    /// The session: its owner's pid, its session id (or a prefix of it that names one), or the agent name of exactly one live session
    #[arg(value_name = "PID|SESSION_ID|AGENT")]
    pub target: Option<String>,

    /// The live session that has waited longest for its user (with --state, in those states instead)
    #[arg(short, long, conflicts_with = "target")]
    pub next_waiting: bool,

    /// With --next-waiting: choose among sessions in these states, a comma list of working, idle, waiting
    #[arg(
        short,
        long,
        value_name = "STATE[,STATE...]",
        value_delimiter = ',',
        value_parser = ["working", "idle", "waiting"],
        requires = "next_waiting"
    )]
    pub state: Vec<String>,

    /// With --next-waiting: choose among the sessions of this agent name
    #[arg(short = 'A', long, value_name = "NAME", requires = "next_waiting", add = cli_support::agent_names())]
    pub agent: Option<String>,

    /// Print the command that goes there instead of running it
    #[arg(short, long)]
    pub print: bool,

    /// The tmux client to switch (as `tmux list-clients` names it; default: the most recently active one)
    #[arg(long, value_name = "CLIENT")]
    pub client: Option<String>,

    /// Go to the session on another machine, through your ssh: [USER@]HOST[:PORT] (a Host of your ssh config too)
    #[arg(long, value_name = "HOST")]
    pub host: Option<String>,
}

/// Examples, notes and exit statuses: `--help` and the man page both
/// render this.
pub fn manual() -> Manual {
    Manual {
        examples: &[
            Example {
                description: "Go to the session that has waited longest for you:",
                commands: &["roster-focus --next-waiting"],
                output: &["went to pid 5854 (wren, claude-code): switch the tmux client /dev/pts/2 to pane %3 (work:2.1)"],
            },
            Example {
                description: "Bind it to a key in tmux (prefix N); in kitty.conf, `map ctrl+shift+n launch \
                              --type=background roster-focus --next-waiting` does the same:",
                commands: &["tmux bind-key N run-shell 'roster-focus --next-waiting'"],
                output: &[],
            },
            Example {
                description: "Print the command that would go to the session of pid 5854, for a script:",
                commands: &["roster-focus --print 5854"],
                output: &[],
            },
        ],
        notes: vec![
            "Where a session shows is recorded when it registers (its owner's controlling terminal, and TMUX and \
             TMUX_PANE, STY and WINDOW, KITTY_LISTEN_ON and KITTY_WINDOW_ID, WEZTERM_UNIX_SOCKET and \
             WEZTERM_PANE, ZELLIJ_SESSION_NAME and ZELLIJ_PANE_ID, TERM_PROGRAM from its environment), and for \
             a session Claude Code or Copilot CLI keeps, read from its process's environment. roster-list shows \
             it in its LOCATION column and location key."
                .to_owned(),
            "Checked before use: a tmux pane must exist on that server and run the session's owner or one of \
             its ancestors; a screen window must exist in a screen session that is one of the owner's \
             ancestors; a kitty window must exist and run the owner or an ancestor. Anything else is stale, \
             shown with why, and never focused (exit 3). kitty needs allow_remote_control and listen_on in its \
             configuration for KITTY_LISTEN_ON to be set."
                .to_owned(),
            "What cannot be reached from here says so (exit 7): a tmux server or screen session no client is \
             attached to (its attach command is printed), a session on a terminal of its own (no multiplexer \
             can bring a terminal window to the front; under Wayland no program can), a Zellij pane (Zellij \
             cannot focus a pane by id from outside)."
                .to_owned(),
        ],
        environment: manual::session_variables_and(&[]),
        environment_note: Some(manual::EMPTY_VARIABLE_NOTE),
        files: &[manual::SESSIONS_FILE],
        exit_statuses: &[
            ExitStatusDoc {
                status: ExitStatus::Success,
                meaning: "Went there; with --print, printed how.",
            },
            ExitStatusDoc { status: ExitStatus::Failure, meaning: "The focus command failed (what it said on stderr)." },
            ExitStatusDoc {
                status: ExitStatus::BadInput,
                meaning: "Bad input or usage; a name or id prefix that names several live sessions (their pids listed).",
            },
            ExitStatusDoc {
                status: ExitStatus::Refused,
                meaning: "No such live session, or where it shows no longer holds (stale, the reason said): never \
                          focused. Also an untrusted roster directory.",
            },
            ExitStatusDoc {
                status: ExitStatus::OutOfReach,
                meaning: "Out of reach from here: no client attached to its tmux server or screen session (the \
                          attach command printed), a terminal of its own, a Zellij pane.",
            },
        ],
        ..Manual::default()
    }
}

pub fn command() -> clap::Command {
    cli_support::with_manual(FocusArgs::command(), &manual())
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    cli_support::run_binary(TOOL, command, run)
}

fn run(args: FocusArgs) -> anyhow::Result<()> {
    if let Some(host) = &args.host {
        return on_host(&args, host);
    }
    let mut verifier = Verifier::new();
    let (row, check) = match &args.target {
        Some(target) => {
            let row = match live_session_of_own_pid(&args, target)? {
                Some(row) => row,
                None => the_session(live_rows(&args)?, target)?,
            };
            let check = check_of(&mut verifier, &row);
            (row, check)
        }
        None => next_waiting(live_rows(&args)?, &args, &mut verifier)?,
    };
    let location = row.record.as_ref().and_then(|record| record.location.clone()).unwrap_or_default();
    let who = describe(&row);
    let plan = match check.as_ref() {
        Some(check) => focus_plan(&location, check, args.client.as_deref()),
        None => Err(FocusRefusal::NotFocusable(
            "nothing says where it shows: it was registered without a terminal or multiplexer in its \
             environment"
                .to_owned(),
        )),
    };
    match plan {
        Ok(plan) => go(&args, &row, &who, check.as_ref(), &plan),
        Err(refusal) => refuse(&args, &row, &who, check.as_ref(), refusal),
    }
}

/// The live session of the process `target` names as a pid, read from its
/// one record (the record named for the caller's own world, as a pid the
/// user types names a process of theirs) without judging every other
/// session: what the whole listing would choose first, at the cost of one
/// record. `None` when `target` is not a pid written plainly, when a filter
/// (`--agent`, `--state`) must be applied, or when no live session of
/// roster's own has that owner: the listing then decides (the sessions the
/// harnesses keep, a session id or agent name of digits).
fn live_session_of_own_pid(args: &FocusArgs, target: &str) -> anyhow::Result<Option<SessionRow>> {
    let Ok(pid) = owner_liveness::Pid::parse_canonical(target, owner_liveness::kernel_pid_max()) else {
        return Ok(None);
    };
    if args.agent.is_some() || !args.state.is_empty() {
        return Ok(None);
    }
    let Some(roster) = cli_support::open_roster_for_reading(&args.common)? else { return Ok(None) };
    let facts = RunningSystem::read();
    Ok(registry_core::find_session_row(&roster, pid, &facts)
        .filter(|row| row.liveness() == Liveness::Alive && row.record.is_some() && row.pid == Some(pid)))
}

/// The live sessions, roster's and those the harnesses keep.
fn live_rows(args: &FocusArgs) -> anyhow::Result<Vec<SessionRow>> {
    let facts = RunningSystem::read();
    let filter = ListFilter {
        agent: args.agent.clone(),
        state: (!args.state.is_empty())
            .then(|| args.state.iter().map(|state| harness::Activity::parse(state)).collect()),
        adopt: cli_support::harness_session_sources(true),
        ..ListFilter::default()
    };
    let mut rows = match cli_support::open_roster_for_reading(&args.common)? {
        Some(roster) => registry_core::list_sessions(&roster, &filter, &facts)?.rows,
        None => registry_core::adopted::read_adopted(&filter.adopt, &facts).0,
    };
    rows.retain(|row| row.liveness() == Liveness::Alive && row.record.is_some());
    Ok(rows)
}

/// One way a target may name a row.
type RowTest<'a> = Box<dyn Fn(&SessionRow) -> bool + 'a>;

/// The one live session `target` names: a pid, a session id or a unique
/// prefix of one (as the table shortens them), or an agent name.
fn the_session(rows: Vec<SessionRow>, target: &str) -> anyhow::Result<SessionRow> {
    let shown = escape_for_terminal(target);
    let session_id = |row: &SessionRow| {
        row.record.as_ref().and_then(|record| record.session_id.as_deref().map(str::to_owned))
    };
    let agent =
        |row: &SessionRow| row.record.as_ref().and_then(|record| record.agent.as_deref().map(str::to_owned));
    let prefix = target.strip_suffix('…').unwrap_or(target);
    let choices: [RowTest<'_>; 4] = [
        Box::new(|row| row.pid.is_some_and(|pid| pid.to_string() == target)),
        Box::new(|row| session_id(row).as_deref() == Some(target)),
        Box::new(|row| prefix.len() >= 4 && session_id(row).is_some_and(|id| id.starts_with(prefix))),
        Box::new(|row| agent(row).as_deref() == Some(target)),
    ];
    for matches in choices {
        let mut found: Vec<&SessionRow> = rows.iter().filter(|row| matches(row)).collect();
        match found.len() {
            0 => continue,
            1 => return Ok(found.remove(0).clone()),
            several => {
                let pids: Vec<String> =
                    found.iter().filter_map(|row| row.pid).map(|pid| pid.to_string()).collect();
                return Err(BadInput(format!(
                    "{shown} names {several} live sessions (pids {}); give the pid of the one to go to",
                    pids.join(", ")
                ))
                .into());
            }
        }
    }
    Err(Refused(format!(
        "no live session has the pid, session id or agent name {shown}; roster-list shows the sessions"
    ))
    .into())
}

/// The session that has waited longest in the states asked (waiting for
/// its user by default) among those that can be gone to; when none can,
/// the longest-waiting one, to say why.
fn next_waiting(
    rows: Vec<SessionRow>,
    args: &FocusArgs,
    verifier: &mut Verifier,
) -> anyhow::Result<(SessionRow, Option<LocationCheck>)> {
    let wanted: Vec<harness::Activity> = if args.state.is_empty() {
        vec![harness::Activity::Waiting]
    } else {
        args.state.iter().filter_map(|state| harness::Activity::parse(state)).collect()
    };
    let mut candidates: Vec<SessionRow> = rows
        .into_iter()
        .filter(|row| row.shown_state().is_some_and(|state| wanted.contains(&state.activity)))
        .collect();
    candidates
        .sort_by_key(|row| row.shown_state().map(|state| state.since.unix_nanos()).unwrap_or(i128::MAX));
    let Some(longest) = candidates.first().cloned() else {
        let states: Vec<&str> = wanted.iter().map(|activity| activity.as_str()).collect();
        return Err(Refused(format!(
            "no live session is {}; roster-list shows the sessions",
            states.join(" or ")
        ))
        .into());
    };
    for row in candidates {
        let check = check_of(verifier, &row);
        if check.as_ref().is_some_and(|check| check.status != LocationStatus::Stale) && focusable(&row) {
            return Ok((row, check));
        }
    }
    let check = check_of(verifier, &longest);
    Ok((longest, check))
}

/// Whether a row's location is one a focus command can reach at all.
fn focusable(row: &SessionRow) -> bool {
    row.record
        .as_ref()
        .and_then(|record| record.location.as_ref())
        .and_then(|location| location.multiplexer.as_deref())
        .is_some_and(|multiplexer| multiplexer != "zellij")
}

fn check_of(verifier: &mut Verifier, row: &SessionRow) -> Option<LocationCheck> {
    let location = row.record.as_ref()?.location.as_ref()?;
    Some(verifier.check(location, row.pid?))
}

/// `pid 5854 (wren, claude-code)`.
fn describe(row: &SessionRow) -> String {
    let pid = row.pid.map_or_else(|| "?".to_owned(), |pid| pid.to_string());
    let Some(record) = &row.record else { return format!("pid {pid}") };
    let names: Vec<String> =
        [record.agent.as_deref(), Some(record.harness.as_str()).filter(|harness| !harness.is_empty())]
            .into_iter()
            .flatten()
            .map(|name| escape_for_terminal(name).into_owned())
            .collect();
    if names.is_empty() { format!("pid {pid}") } else { format!("pid {pid} ({})", names.join(", ")) }
}

/// A command line as a shell would take it.
fn shell_line(command: &[String]) -> String {
    command.iter().map(|word| shell_quote(word).into_owned()).collect::<Vec<_>>().join(" ")
}

/// Runs the plan (or prints it), and says where it went.
fn go(
    args: &FocusArgs,
    row: &SessionRow,
    who: &str,
    check: Option<&LocationCheck>,
    plan: &FocusPlan,
) -> anyhow::Result<()> {
    if !args.print {
        for command in &plan.commands {
            let answer = run_bounded(&command[0], &command[1..], FOCUS_BOUND)
                .map_err(|why| anyhow::anyhow!("going to {who}: {why}"))?;
            if !answer.success {
                return Err(anyhow::anyhow!(
                    "going to {who}: `{}` failed: {}",
                    escape_for_terminal(&shell_line(command)),
                    escape_for_terminal(answer.stderr.trim())
                ));
            }
        }
    }
    let mut out = std::io::stdout().lock();
    match args.common.output_format() {
        OutputFormat::Json => {
            let value = answer_json(
                row,
                check,
                if args.print { "printed" } else { "focused" },
                &plan.what,
                Some(&plan.commands),
                None,
            );
            writeln!(out, "{}", serde_json::to_string_pretty(&value)?)?;
        }
        OutputFormat::Text if args.print => {
            for command in &plan.commands {
                writeln!(out, "{}", shell_line(command))?;
            }
        }
        OutputFormat::Text => {
            if !args.common.quiet {
                writeln!(out, "went to {who}: {}", escape_for_terminal(&plan.what))?;
            }
        }
    }
    if let Some(check) = check.filter(|check| check.status == LocationStatus::Unchecked) {
        cli_support::report_warning(
            TOOL,
            &format!("where {who} shows could not be checked: {}", check.reason),
            None,
        );
    }
    Ok(())
}

/// Says why the session cannot be gone to, with the command that attaches
/// a client where one would help.
fn refuse(
    args: &FocusArgs,
    row: &SessionRow,
    who: &str,
    check: Option<&LocationCheck>,
    refusal: FocusRefusal,
) -> anyhow::Result<()> {
    let (status, why, attach) = match refusal {
        FocusRefusal::Stale(why) => {
            (ExitStatus::Refused, format!("where {who} showed no longer holds: {why}"), None)
        }
        FocusRefusal::NoClient { why, attach } => (
            ExitStatus::OutOfReach,
            format!("{who} cannot be brought to the front from here: {why}; attach with: {attach}"),
            Some(attach),
        ),
        FocusRefusal::NotFocusable(why) => {
            (ExitStatus::OutOfReach, format!("{who} cannot be brought to the front from here: {why}"), None)
        }
    };
    let mut out = std::io::stdout().lock();
    match args.common.output_format() {
        OutputFormat::Json => {
            let outcome = if status == ExitStatus::Refused { "stale" } else { "out-of-reach" };
            let value = answer_json(row, check, outcome, &why, None, attach.as_deref());
            writeln!(out, "{}", serde_json::to_string_pretty(&value)?)?;
        }
        OutputFormat::Text => {
            if let Some(attach) = &attach {
                writeln!(out, "{attach}")?;
            }
        }
    }
    Err(EndedWith { status, message: escape_for_terminal(&why).into_owned() }.into())
}

/// The JSON answer: which session, where it shows and what checking found,
/// what was done (`focused`, `printed`, `stale`, `out-of-reach`), and the
/// commands or the attach command.
fn answer_json(
    row: &SessionRow,
    check: Option<&LocationCheck>,
    outcome: &str,
    what: &str,
    commands: Option<&Vec<Vec<String>>>,
    attach: Option<&str>,
) -> serde_json::Value {
    let record = row.record.as_ref();
    serde_json::json!({
        "outcome": outcome,
        "session_pid": row.pid.map(|pid| pid.get()),
        "session_id": record.and_then(|record| record.session_id.as_deref()),
        "harness": record.map(|record| record.harness.as_str()),
        "agent": record.and_then(|record| record.agent.as_deref()),
        "location": record.and_then(|record| record.location.as_ref()),
        "status": check.map(|check| check.status.as_str()),
        "reason": check.map(|check| check.reason.as_str()),
        "shown": check.map(|check| check.shown.as_str()),
        "what": what,
        "commands": commands,
        "attach": attach,
    })
}

/// How long ssh is given to connect to another machine.
const SSH_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// `roster-focus` run on `host` through the user's ssh (docs/contract.md
/// §6.8): it finds and checks the session there and switches that
/// machine's attached client; when none is attached there, the command
/// that attaches one over ssh is printed.
fn on_host(args: &FocusArgs, host: &str) -> anyhow::Result<()> {
    use cli_support::ssh::{Place, parse_host, remote_command_line, ssh_call, ssh_words};
    let parsed = parse_host(host)
        .map_err(|why| BadInput(format!("--host {}: {why}", escape_for_terminal(&format!("{host:?}")))))?;
    let Place::Remote { destination, port } = parsed.place else {
        return Err(
            BadInput("--host local: leave --host out to go to a session of this machine".to_owned()).into()
        );
    };
    let remote = remote_arguments(args);
    let ssh =
        ssh_words(cli_support::process_env_os(cli_support::ssh::SSH_COMMAND_VARIABLE)).map_err(BadInput)?;
    let line = remote_command_line(TOOL, &remote);
    let output = ssh_call(&ssh, &destination, port, SSH_CONNECT_TIMEOUT, &line)
        .output()
        .map_err(|error| anyhow::anyhow!("running {}: {error}", ssh[0]))?;
    let said = String::from_utf8_lossy(&output.stderr);
    let last_words = said.lines().rev().map(str::trim).find(|line| !line.is_empty()).unwrap_or_default();
    let answer: serde_json::Value = match serde_json::from_slice(&output.stdout) {
        Ok(answer) => answer,
        Err(_) => return Err(unreadable_answer(host, last_words, output.status.code())),
    };
    let outcome = answer["outcome"].as_str().unwrap_or_default().to_owned();
    let attach = answer["attach"].as_str().map(|attach| attach_line(&ssh, &destination, port, attach));
    print_answer(args, host, &answer, &outcome, attach.as_deref())?;
    let why = || {
        escape_for_terminal(&format!("on {host}: {}", answer["what"].as_str().unwrap_or(last_words)))
            .into_owned()
    };
    match (outcome.as_str(), output.status.code()) {
        ("focused" | "printed", _) => Ok(()),
        ("stale", _) => Err(EndedWith { status: ExitStatus::Refused, message: why() }.into()),
        ("out-of-reach", _) => Err(EndedWith { status: ExitStatus::OutOfReach, message: why() }.into()),
        _ => Err(anyhow::anyhow!("on {host}: {}", escape_for_terminal(last_words))),
    }
}

/// What `roster-focus` is asked there: this call's flags, its answer as JSON.
fn remote_arguments(args: &FocusArgs) -> Vec<String> {
    let mut remote = vec!["--format".to_owned(), "json".to_owned()];
    if args.print {
        remote.push("--print".to_owned());
    }
    if let Some(client) = &args.client {
        remote.extend(["--client".to_owned(), client.clone()]);
    }
    if let Some(agent) = &args.agent {
        remote.extend(["--agent".to_owned(), agent.clone()]);
    }
    if !args.state.is_empty() {
        remote.extend(["--state".to_owned(), args.state.join(",")]);
    }
    match &args.target {
        Some(target) => remote.extend(["--".to_owned(), target.clone()]),
        None => remote.push("--next-waiting".to_owned()),
    }
    remote
}

/// Why a host's answer could not be read: ssh could not reach it, it has
/// no roster-focus, or what roster-focus said there (by its exit status).
fn unreadable_answer(host: &str, last_words: &str, status: Option<i32>) -> anyhow::Error {
    let on_host = || escape_for_terminal(&format!("on {host}: {last_words}")).into_owned();
    match status {
        Some(255) => {
            anyhow::anyhow!("{}", escape_for_terminal(&format!("ssh could not reach {host}: {last_words}")))
        }
        Some(127) => anyhow::anyhow!(
            "{}",
            escape_for_terminal(&format!(
                "{host} has no {TOOL} on the PATH of a non-interactive ssh session"
            ))
        ),
        Some(3) => EndedWith { status: ExitStatus::Refused, message: on_host() }.into(),
        Some(2) => BadInput(on_host()).into(),
        _ => anyhow::anyhow!("{}", on_host()),
    }
}

/// The attach command there, run through ssh with a terminal.
fn attach_line(ssh: &[String], destination: &str, port: Option<u16>, attach: &str) -> String {
    let mut words = ssh.to_vec();
    words.push("-t".to_owned());
    if let Some(port) = port {
        words.extend(["-p".to_owned(), port.to_string()]);
    }
    words.push(destination.to_owned());
    format!(
        "{} {}",
        words.iter().map(|word| shell_quote(word).into_owned()).collect::<Vec<_>>().join(" "),
        shell_quote(attach)
    )
}

/// The host's answer as this call prints it: the JSON with `host` (and
/// the attach command through ssh), or the commands printed there, the
/// focus made, or how to attach.
fn print_answer(
    args: &FocusArgs,
    host: &str,
    answer: &serde_json::Value,
    outcome: &str,
    attach: Option<&str>,
) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    match args.common.output_format() {
        OutputFormat::Json => {
            let mut answer = answer.clone();
            answer["host"] = serde_json::Value::from(host);
            if let Some(attach) = attach {
                answer["attach"] = serde_json::Value::from(attach);
            }
            writeln!(out, "{}", serde_json::to_string_pretty(&answer)?)?;
        }
        OutputFormat::Text => match outcome {
            "printed" => {
                for command in answer["commands"].as_array().into_iter().flatten() {
                    let words: Vec<String> = command
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|word| word.as_str().map(str::to_owned))
                        .collect();
                    writeln!(out, "{}", shell_line(&words))?;
                }
            }
            "focused" if !args.common.quiet => {
                writeln!(
                    out,
                    "went to pid {} on {}: {}",
                    answer["session_pid"],
                    escape_for_terminal(host),
                    escape_for_terminal(answer["what"].as_str().unwrap_or_default())
                )?;
            }
            _ => {
                if let Some(attach) = attach {
                    writeln!(out, "{attach}")?;
                }
            }
        },
    }
    Ok(())
}
