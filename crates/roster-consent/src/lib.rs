//! `roster-consent`: whether the calling session accepts being messaged
//! ("pushed to") by other tools (docs/contract.md §6.4): `arm`, `disarm`, `status` and
//! `should-arm`. The command line and its dispatch are here, one file per
//! subcommand in `commands/`, the manual in `manual.rs`. The clap `Command`
//! lives here so xtask renders man pages and completions from the
//! definition users run.

#![forbid(unsafe_code)]

mod commands;
mod manual;

use std::ffi::OsString;
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};
use cli_support::{CommonArgs, ExitStatus, run_tool};
use consent::MarkerState;

pub use commands::SessionArgs;
pub use commands::should_arm::should_arm;
use commands::should_arm::should_arm_exit_status;
pub use manual::manual;

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
        ConsentCommand::Arm(session) => commands::arm::write_state(&args.common, session, MarkerState::Armed),
        ConsentCommand::Disarm(session) => {
            commands::arm::write_state(&args.common, session, MarkerState::Disarmed)
        }
        ConsentCommand::Status(session) => commands::status::status(&args.common, session),
        ConsentCommand::ShouldArm(session) if should_arm(&args.common, session) => Ok(()),
        ConsentCommand::ShouldArm(_) => {
            Err(anyhow::anyhow!("the session should not accept pushes now; see `roster-consent status`"))
        }
    }
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
