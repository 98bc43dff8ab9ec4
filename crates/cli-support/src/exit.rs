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
                if !clap_error.use_stderr() {
                    // --help and --version: clap prints them to stdout.
                    let _ = clap_error.print();
                    return ExitCode::SUCCESS;
                }
                let _ = writeln!(io::stderr().lock(), "{tool}: {}", one_line_usage_error(clap_error));
                return ExitCode::from(2);
            }
            report_and_exit(tool, &error, lookups)
        }
    }
}

/// clap's usage error as one line: its first paragraph without the
/// `error: ` prefix (which names the missing or wrong arguments), the
/// possible values or tip if clap gives one, and where to read more.
pub fn one_line_usage_error(error: &clap::Error) -> String {
    let rendered = error.render().to_string();
    let mut paragraphs = rendered.split("\n\n");
    let first: Vec<&str> =
        paragraphs.next().unwrap_or("").lines().map(str::trim).filter(|line| !line.is_empty()).collect();
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
