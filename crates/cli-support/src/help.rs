//! A tool's manual joins its clap command only when help is shown. Rendering
//! the manual (examples, notes, environment, files, exit statuses, wrapped
//! to the help width) costs more than the rest of a hook's start-up, and a
//! hook never asks for help; so the command line is parsed with the bare
//! command, and only a request for help builds the full one and parses
//! again, which makes clap print exactly what the full command prints.

use std::ffi::OsString;

use clap::error::ErrorKind;
use clap::{ArgMatches, Command};

use crate::manual::Manual;

/// `command` with `manual` as its long help, and each subcommand the manual
/// names with its own: what `--help`, the man pages and the completions show.
pub fn with_manual(command: Command, manual: &Manual) -> Command {
    let mut command = command.after_long_help(manual.render_help());
    for (name, subcommand_manual) in &manual.subcommands {
        command = command
            .mut_subcommand(name, |subcommand| subcommand.after_long_help(subcommand_manual.render_help()));
    }
    command
}

/// Parses `arguments` (the program name first) with `bare`, the command
/// without its manual. When clap answers with help (`-h`, `--help`, the
/// `help` subcommand, or a command that shows help when given nothing), the
/// arguments are parsed again with `full()`, so that the help, and the
/// error that carries it, is the full command's, byte for byte.
pub fn matches_with_manual_on_help(
    mut bare: Command,
    full: impl FnOnce() -> Command,
    arguments: &[OsString],
) -> Result<ArgMatches, clap::Error> {
    match bare.try_get_matches_from_mut(arguments) {
        Err(error) if shows_help(error.kind()) => full().try_get_matches_from(arguments),
        Err(error) => Err(with_nearest_subcommand_suggested(error, &bare)),
        other => other,
    }
}

/// A mistyped subcommand for which clap suggests nothing (its similarity
/// found no `arm` in `amr`) gets the nearest by edit distance, the one
/// every "did you mean" of roster uses, so that every subcommand of every
/// tool is suggested alike.
fn with_nearest_subcommand_suggested(mut error: clap::Error, command: &Command) -> clap::Error {
    use clap::error::{ContextKind, ContextValue};
    if error.kind() != ErrorKind::InvalidSubcommand || error.get(ContextKind::SuggestedSubcommand).is_some() {
        return error;
    }
    let Some(ContextValue::String(typed)) = error.get(ContextKind::InvalidSubcommand) else { return error };
    let names: Vec<&str> = command
        .get_subcommands()
        .filter(|subcommand| !subcommand.is_hide_set())
        .map(Command::get_name)
        .chain(command.has_subcommands().then_some("help"))
        .collect();
    if let Some(nearest) = harness::nearest_by_edit_distance(typed, &names) {
        let nearest = vec![nearest.to_owned()];
        error.insert(ContextKind::SuggestedSubcommand, ContextValue::Strings(nearest));
    }
    error
}

/// `matches_with_manual_on_help` for a derived command line `Args`, whose
/// `Args::command()` carries no manual and `full()` adds it.
pub fn parse_with_manual_on_help<Args: clap::Parser>(
    full: impl FnOnce() -> Command,
    arguments: &[OsString],
) -> Result<Args, clap::Error> {
    let mut matches = matches_with_manual_on_help(Args::command(), full, arguments)?;
    // As `Parser::try_parse_from` does: an error of the conversion is
    // formatted against the command, to show its usage. The command is
    // built again for that rare error rather than cloned for every run.
    Args::from_arg_matches_mut(&mut matches).map_err(|error| error.format(&mut Args::command()))
}

/// The process's own arguments, the program name first.
pub fn process_arguments() -> Vec<OsString> {
    std::env::args_os().collect()
}

/// The answers of clap that render a command's help.
fn shows_help(kind: ErrorKind) -> bool {
    matches!(kind, ErrorKind::DisplayHelp | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manual::Example;

    fn manual() -> Manual {
        Manual {
            examples: &[Example { description: "Run it:", commands: &["tool run"], output: &[] }],
            subcommands: vec![(
                "run",
                Manual {
                    examples: &[Example { description: "Now:", commands: &["tool run now"], output: &[] }],
                    ..Manual::default()
                },
            )],
            ..Manual::default()
        }
    }

    fn bare() -> Command {
        Command::new("tool")
            .arg(clap::Arg::new("flag").long("flag").action(clap::ArgAction::SetTrue))
            .subcommand(Command::new("run").about("Run"))
    }

    fn full() -> Command {
        with_manual(bare(), &manual())
    }

    fn arguments(words: &[&str]) -> Vec<OsString> {
        words.iter().map(OsString::from).collect()
    }

    fn help_printed(words: &[&str]) -> String {
        let error = matches_with_manual_on_help(bare(), full, &arguments(words)).expect_err("help is asked");
        error.render().to_string()
    }

    fn help_of_full(words: &[&str]) -> String {
        full().try_get_matches_from(arguments(words)).expect_err("help is asked").render().to_string()
    }

    #[test]
    fn help_is_the_full_commands_for_every_way_of_asking() {
        for words in [
            &["tool", "--help"][..],
            &["tool", "-h"],
            &["tool", "run", "--help"],
            &["tool", "run", "-h"],
            &["tool", "help", "run"],
            &["tool", "help"],
        ] {
            assert_eq!(help_printed(words), help_of_full(words), "{words:?}");
        }
        assert!(help_printed(&["tool", "--help"]).contains("tool run"));
        assert!(help_printed(&["tool", "run", "--help"]).contains("tool run now"));
    }

    /// The bare command parses exactly what the full one parses; only the
    /// long help differs.
    #[test]
    fn everything_but_help_is_parsed_without_the_manual() {
        let matches =
            matches_with_manual_on_help(bare(), || panic!("no help asked"), &arguments(&["tool", "--flag"]))
                .expect("valid arguments");
        assert!(matches.get_flag("flag"));
        let error =
            matches_with_manual_on_help(bare(), || panic!("no help asked"), &arguments(&["tool", "--bogus"]))
                .expect_err("an unknown flag");
        assert_eq!(error.kind(), ErrorKind::UnknownArgument);
        assert_eq!(bare().get_after_long_help(), None);
        assert!(full().get_after_long_help().is_some());
    }
}
