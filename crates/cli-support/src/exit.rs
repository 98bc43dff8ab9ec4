//! Exit codes and the one-line error report (docs/contract.md §6): `0` done, `1`
//! failed, `2` bad input or usage, `3` refused by rule. Library errors know
//! their own code through `ExitCoded`; the binary prints `{:#}` once.

use std::io::{self, Write};
use std::process::ExitCode;

/// Tells the exit code of one link of an error chain, if it knows its type.
pub type ErrorLookup = fn(&(dyn std::error::Error + 'static)) -> Option<u8>;

/// A library error that knows which exit code it deserves.
pub trait ExitCoded: std::error::Error + Send + Sync + 'static {
    fn exit_code(&self) -> u8;
}

/// Bad input or usage at the binary's edge (exit 2).
#[derive(Debug)]
pub struct BadInput(pub String);

/// Refused by a rule at the binary's edge (exit 3).
#[derive(Debug)]
pub struct Refused(pub String);

impl std::fmt::Display for BadInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadInput {}
impl std::error::Error for Refused {}

impl ExitCoded for BadInput {
    fn exit_code(&self) -> u8 {
        2
    }
}

impl ExitCoded for Refused {
    fn exit_code(&self) -> u8 {
        3
    }
}

impl ExitCoded for registry_core::Error {
    fn exit_code(&self) -> u8 {
        registry_core::Error::exit_code(self)
    }
}

impl ExitCoded for harness::PayloadError {
    fn exit_code(&self) -> u8 {
        2
    }
}

impl ExitCoded for owner_liveness::ResolveError {
    fn exit_code(&self) -> u8 {
        2
    }
}

impl ExitCoded for owner_liveness::CaptureError {
    fn exit_code(&self) -> u8 {
        match self {
            owner_liveness::CaptureError::NotRunning(_)
            | owner_liveness::CaptureError::ExitedDuringCapture(_) => 3,
            _ => 1,
        }
    }
}

/// Looks up the exit code of an error type that implements `ExitCoded`.
pub fn lookup<E: ExitCoded>(cause: &(dyn std::error::Error + 'static)) -> Option<u8> {
    cause.downcast_ref::<E>().map(ExitCoded::exit_code)
}

/// The exit code an error deserves: the outermost link of its chain whose
/// type knows one (the built-in types, then `lookups`), else 1. A broken
/// pipe is not a failure of the tool: exit 0.
pub fn exit_code_of(error: &anyhow::Error, lookups: &[ErrorLookup]) -> u8 {
    if error.chain().any(is_broken_pipe) {
        return 0;
    }
    let builtin: [ErrorLookup; 6] = [
        lookup::<BadInput>,
        lookup::<harness::PayloadError>,
        lookup::<registry_core::Error>,
        lookup::<Refused>,
        lookup::<owner_liveness::ResolveError>,
        lookup::<owner_liveness::CaptureError>,
    ];
    error
        .chain()
        .find_map(|cause| builtin.iter().chain(lookups).find_map(|lookup| lookup(cause)))
        .unwrap_or(1)
}

/// Whether a cause is a write to a closed pipe, bare or inside a JSON
/// serializer's error.
fn is_broken_pipe(cause: &(dyn std::error::Error + 'static)) -> bool {
    let kind = cause
        .downcast_ref::<io::Error>()
        .map(io::Error::kind)
        .or_else(|| cause.downcast_ref::<serde_json::Error>().and_then(serde_json::Error::io_error_kind));
    kind == Some(io::ErrorKind::BrokenPipe)
}

/// Prints `tool: {error:#}` on one escaped line to stderr and returns the
/// exit code for it.
pub fn report_and_exit(tool: &str, error: &anyhow::Error, lookups: &[ErrorLookup]) -> ExitCode {
    let code = exit_code_of(error, lookups);
    if code != 0 {
        let message = crate::text::escape_for_terminal(&format!("{error:#}")).into_owned();
        let message = message.trim_end_matches('.');
        let _ = writeln!(io::stderr().lock(), "{tool}: {message}");
    }
    ExitCode::from(code)
}

/// Runs a tool body and maps its result to an exit code. clap's own errors
/// (usage, `--help`, `--version`) are printed by clap with its exit codes
/// normalised to the contract: 0 for help and version, 2 for usage.
pub fn run_tool(tool: &str, lookups: &[ErrorLookup], body: impl FnOnce() -> anyhow::Result<()>) -> ExitCode {
    match body() {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            if let Some(clap_error) = error.downcast_ref::<clap::Error>() {
                if matches!(
                    clap_error.kind(),
                    clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
                        | clap::error::ErrorKind::MissingSubcommand
                ) {
                    let _ = write!(io::stderr().lock(), "{}", missing_subcommand_report(tool, clap_error));
                    return ExitCode::from(2);
                }
                if !clap_error.use_stderr() {
                    // --help and --version: clap prints them to stdout.
                    let _ = clap_error.print();
                    return ExitCode::SUCCESS;
                }
                let arguments: Vec<String> = std::env::args_os()
                    .skip(1)
                    .map(|argument| argument.to_string_lossy().into_owned())
                    .collect();
                let message = negative_value_error(clap_error, &arguments)
                    .unwrap_or_else(|| one_line_usage_error(clap_error));
                let _ = writeln!(io::stderr().lock(), "{tool}: {message}");
                return ExitCode::from(2);
            }
            report_and_exit(tool, &error, lookups)
        }
    }
}

/// A tool with subcommands run without one: that one is needed, the usage
/// and the subcommands with what each does (clap's help, cut to those
/// parts), for stderr.
pub fn missing_subcommand_report(tool: &str, error: &clap::Error) -> String {
    use clap::error::{ContextKind, ContextValue};
    let mut help = error.render().to_string();
    // With other arguments given, clap reports the missing subcommand as an
    // error that names the subcommands instead of showing the help.
    if let Some(ContextValue::Strings(names)) = error.get(ContextKind::ValidSubcommand) {
        let usage = help.lines().find(|line| line.starts_with("Usage:")).unwrap_or("").to_owned();
        help = format!("{usage}\n\nCommands:\n");
        for name in names {
            help.push_str(&format!("  {name}\n"));
        }
    }
    let mut report = format!("{tool}: no subcommand given; name one of these\n\n");
    let mut keep = false;
    for line in help.lines() {
        if line.starts_with("Usage:") || line.starts_with("Commands:") {
            keep = true;
        } else if !line.starts_with(' ') && !line.is_empty() {
            keep = false;
        }
        if keep {
            report.push_str(line);
            report.push('\n');
        }
    }
    let mut report = report.trim_end().to_owned();
    report.push_str(&format!("\n\nSee '{tool} --help' for more.\n"));
    report
}

/// A flag given a negative number (`--older-than -1d`, `--pid -5`): clap
/// takes the value for an unknown flag; say instead which flag got it and
/// that it must not be negative. `arguments` are the raw arguments.
pub fn negative_value_error(error: &clap::Error, arguments: &[String]) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if error.kind() != ErrorKind::UnknownArgument {
        return None;
    }
    let Some(ContextValue::String(unknown)) = error.get(ContextKind::InvalidArg) else { return None };
    if !unknown.strip_prefix('-').is_some_and(|rest| rest.starts_with(|first: char| first.is_ascii_digit())) {
        return None;
    }
    let position = arguments.iter().position(|argument| argument.starts_with(unknown.as_str()))?;
    let flag = arguments[..position].last().filter(|flag| flag.starts_with("--"))?;
    let value = crate::text::escape_for_terminal(&arguments[position]).into_owned();
    Some(format!("{flag} {value}: a negative value is not accepted; give {flag} a positive one (see --help)"))
}

/// clap's usage error as one line: its first paragraph without the
/// `error: ` prefix (which names the missing or wrong arguments), the
/// possible values or tip if clap gives one (`tip: a similar argument
/// exists: '--agent'`), and where to read more.
pub fn one_line_usage_error(error: &clap::Error) -> String {
    let rendered = error.render().to_string();
    let mut paragraphs = rendered.split("\n\n");
    let mut first: Vec<&str> =
        paragraphs.next().unwrap_or("").lines().map(str::trim).filter(|line| !line.is_empty()).collect();
    // clap puts its suggestions in paragraphs of their own after the first.
    first.extend(paragraphs.map(str::trim).filter(|paragraph| paragraph.starts_with("tip: ")));
    let mut parts: Vec<String> = Vec::new();
    for (index, line) in first.iter().enumerate() {
        let line = if index == 0 { line.strip_prefix("error: ").unwrap_or(line) } else { line };
        let line = line.strip_prefix("tip: ").unwrap_or(line);
        parts.push(line.trim_end_matches(':').to_owned());
    }
    if parts.is_empty() {
        parts.push("invalid arguments".to_owned());
    }
    let message = format!("{}; see --help", parts.join(": ").replace(": [", " ["));
    crate::text::escape_for_terminal(&message).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_follow_the_chain() {
        let bad = anyhow::Error::new(BadInput("--agent is empty".into())).context("reading flags");
        assert_eq!(exit_code_of(&bad, &[]), 2);
        let refused = anyhow::Error::new(Refused("conflict".into()));
        assert_eq!(exit_code_of(&refused, &[]), 3);
        let plain = anyhow::anyhow!("disk on fire");
        assert_eq!(exit_code_of(&plain, &[]), 1);
        let pipe = anyhow::Error::new(io::Error::from(io::ErrorKind::BrokenPipe)).context("writing stdout");
        assert_eq!(exit_code_of(&pipe, &[]), 0);
    }

    fn usage_error(arguments: &[&str]) -> clap::Error {
        let command = clap::Command::new("tool")
            .arg(clap::Arg::new("agent").long("agent"))
            .arg(clap::Arg::new("older-than").long("older-than"));
        command.try_get_matches_from(arguments).expect_err("the arguments are wrong")
    }

    /// Regression: clap's "a similar argument exists" tip was dropped.
    #[test]
    fn usage_errors_keep_clap_suggestions_on_one_line() {
        let message = one_line_usage_error(&usage_error(&["tool", "--agnt", "x"]));
        assert_eq!(
            message,
            "unexpected argument '--agnt' found: a similar argument exists: '--agent'; see --help"
        );
    }

    #[test]
    fn a_negative_value_names_its_flag() {
        let arguments = ["tool", "--older-than", "-1d"];
        let error = usage_error(&arguments);
        let raw: Vec<String> = arguments[1..].iter().map(|argument| (*argument).to_owned()).collect();
        assert_eq!(
            negative_value_error(&error, &raw).as_deref(),
            Some(
                "--older-than -1d: a negative value is not accepted; give --older-than a positive one (see --help)"
            )
        );
        let other = usage_error(&["tool", "--bogus"]);
        assert_eq!(negative_value_error(&other, &["--bogus".to_owned()]), None);
    }

    #[test]
    fn extra_lookups_are_consulted() {
        #[derive(Debug)]
        struct Busy;
        impl std::fmt::Display for Busy {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("busy")
            }
        }
        impl std::error::Error for Busy {}
        let error = anyhow::Error::new(Busy);
        assert_eq!(exit_code_of(&error, &[|e| e.downcast_ref::<Busy>().map(|_| 3)]), 3);
        let wrapped = anyhow::Error::new(Busy).context("outer").context("outermost");
        assert_eq!(exit_code_of(&wrapped, &[|e| e.downcast_ref::<Busy>().map(|_| 3)]), 3);
    }
}
