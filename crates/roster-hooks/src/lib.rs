//! `roster-hooks`: wires `roster-register` and `roster-prune` into an agent
//! harness's own hook configuration (docs/contract.md §8.3), and says where they are
//! wired. The editing itself lives in `harness::hook_config`; this crate is
//! the command line around it: the command and its dispatch here, one file
//! per subcommand in `commands/`, the manual in `manual.rs`. The clap
//! `Command` is built here so that xtask renders man pages and completions
//! from the definition users run.

#![forbid(unsafe_code)]

mod binaries;
mod commands;
mod manual;

use std::ffi::OsString;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use cli_support::CommonArgs;
use harness::hook_config::HookPaths;

use commands::install::InstallArgs;
use commands::print::PrintArgs;
use commands::status::StatusArgs;
use commands::{Invocation, TOOL, TargetArgs};
pub use manual::manual;

/// Wire roster's session hooks into an agent harness's own configuration
#[derive(Debug, Parser)]
#[command(
    name = "roster-hooks",
    version,
    propagate_version = true,
    subcommand_required = true,
    arg_required_else_help = true
)]
struct HooksCommandLine {
    #[command(flatten)]
    common: CommonArgs,

    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, Subcommand)]
enum Action {
    /// Show the hook entries install would merge, for adding them by hand
    Print(PrintArgs),

    /// Merge roster's hooks (session start and end, and each state event) into a harness's configuration
    Install(InstallArgs),

    /// Remove exactly the hooks install added, its backup and the directories it created
    Uninstall(TargetArgs),

    /// Say for each harness whether roster's hooks are installed
    Status(StatusArgs),
}

/// The clap command, for xtask's man pages and completions.
pub fn command() -> clap::Command {
    cli_support::with_manual(command_without_manual(), &manual())
}

/// The clap command that parses: `command()` less the manual, which is
/// built only when help is shown.
fn command_without_manual() -> clap::Command {
    HooksCommandLine::command().mut_arg("dir", |argument| {
        argument.help(
            "Make the installed hooks use DIR as the roster directory (they get --dir DIR; \
             default: ROSTER_DIR or the default when they run)",
        )
    })
}

/// Parses `arguments` (the program name first) and does what they say.
pub fn run<I, T>(arguments: I) -> anyhow::Result<()>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let arguments: Vec<OsString> = arguments.into_iter().map(Into::into).collect();
    let matches = cli_support::matches_with_manual_on_help(command_without_manual(), command, &arguments)?;
    let command_line = HooksCommandLine::from_arg_matches(&matches)?;
    let context = Invocation { common: command_line.common, paths: HookPaths::from_environment()? };
    match command_line.action {
        Action::Print(arguments) => commands::print::print_snippet(&context, &arguments),
        Action::Install(arguments) => commands::install::install(&context, &arguments),
        Action::Uninstall(arguments) => commands::uninstall::uninstall(&context, &arguments),
        Action::Status(arguments) => commands::status::status(&context, &arguments),
    }
}

/// Runs the tool on the process's arguments and maps the result to an exit
/// code.
pub fn main() -> ExitCode {
    cli_support::complete_when_asked(command);
    cli_support::run_tool(TOOL, || run(std::env::args_os()))
}
