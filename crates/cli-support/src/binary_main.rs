//! A tool's whole `main` when it needs nothing of its own around it: answer
//! a completion request, parse the arguments with the manual shown on
//! `--help`, run, and report the outcome the way every tool does.

use std::process::ExitCode;

use crate::completion::complete_when_asked;
use crate::exit::run_tool;
use crate::help::{parse_with_manual_on_help, process_arguments};

/// The `main` of `tool`, whose clap command with its manual is `command`:
/// `run` gets the parsed arguments; a parse error (help and version
/// among them) is reported by `run_tool` as an error of `run` would be.
pub fn run_binary<Args: clap::Parser>(
    tool: &str,
    command: fn() -> clap::Command,
    run: impl FnOnce(Args) -> anyhow::Result<()>,
) -> ExitCode {
    complete_when_asked(command);
    let arguments = process_arguments();
    run_tool(tool, || run(parse_with_manual_on_help(command, &arguments)?))
}
