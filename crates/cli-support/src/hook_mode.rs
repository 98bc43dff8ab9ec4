//! Hook mode's discipline (SPEC §8.2), shared by `roster-register --hook`
//! and `roster-prune --current --hook`: never a byte on stdout, always exit
//! 0, a failure is one line on stderr and one line in `hook-errors.log`.

use std::io::Write;
use std::process::ExitCode;

use crate::args::CommonArgs;
use crate::roster::open_roster_for_writing;

/// Runs a hook-mode body. Whatever happens, exits 0 and writes nothing to
/// stdout; a failure is reported on stderr and logged for `roster-list`.
pub fn run_hook(tool: &str, common: &CommonArgs, body: impl FnOnce() -> anyhow::Result<()>) -> ExitCode {
    if let Err(error) = body() {
        report_hook_problem(tool, common, &format!("{error:#}"));
    }
    ExitCode::SUCCESS
}

/// Reports a hook-mode problem the way a hook may: one line on stderr and
/// one line in `hook-errors.log` (where `roster-list` points at it), never
/// stdout. Best effort: a roster directory that cannot be opened only loses
/// the log line.
pub fn report_hook_problem(tool: &str, common: &CommonArgs, message: &str) {
    let message = crate::text::escape_for_terminal(message).into_owned();
    let _ = writeln!(std::io::stderr().lock(), "{tool}: hook: {message}");
    if let Ok(roster) = open_roster_for_writing(common) {
        let _ = registry_core::append_hook_error(&roster, tool, &message);
    }
}

/// Whether the raw command line asks for hook mode. Used when the flags
/// themselves fail to parse: a hook must exit 0 even then, because a
/// harness may treat a non-zero hook as a reason to stop the session.
pub fn hook_mode_requested() -> bool {
    std::env::args_os().skip(1).any(|arg| {
        let arg = arg.to_string_lossy();
        arg == "--hook" || arg.starts_with("--hook=")
    })
}

/// Reports a command line that failed to parse in hook mode: one stderr
/// line and, where the default roster directory can be opened, one log
/// line; exit 0.
pub fn report_unparsable_hook_invocation(tool: &str, error: &clap::Error) -> ExitCode {
    // The flags did not parse, but a `--dir` among them still says where this hook's
    // roster is: log there, not in (and never by creating) the default directory.
    let common =
        CommonArgs { dir: dir_from_raw_arguments(std::env::args_os().skip(1)), ..CommonArgs::default() };
    let first_line = error.to_string().lines().next().unwrap_or("invalid arguments").to_owned();
    run_hook(tool, &common, || Err(anyhow::anyhow!("invalid hook command line: {first_line}")))
}

/// The value of the last `--dir DIR` or `--dir=DIR` among raw arguments, if any.
fn dir_from_raw_arguments(
    mut arguments: impl Iterator<Item = std::ffi::OsString>,
) -> Option<std::path::PathBuf> {
    let mut dir = None;
    while let Some(argument) = arguments.next() {
        if argument == "--dir" {
            dir = arguments.next().map(std::path::PathBuf::from);
        } else if let Some(value) = argument.to_str().and_then(|text| text.strip_prefix("--dir=")) {
            dir = Some(std::path::PathBuf::from(value));
        }
    }
    dir
}

/// The entry point of a tool that has a hook mode (`roster-register`,
/// `roster-prune --current`): parses the flags, then runs `body` under the
/// hook discipline when `hook_of(&args)` says so, else as a normal tool
/// whose errors map to exit codes through `lookups`.
pub fn run_tool_with_hook_mode<Args: clap::Parser>(
    tool: &str,
    lookups: &[crate::exit::ErrorLookup],
    hook_of: impl Fn(&Args) -> Option<&CommonArgs>,
    body: impl FnOnce(Args) -> anyhow::Result<()>,
) -> ExitCode {
    let args = match Args::try_parse() {
        Ok(args) => args,
        Err(error) if error.use_stderr() && hook_mode_requested() => {
            return report_unparsable_hook_invocation(tool, &error);
        }
        Err(error) => return crate::exit::run_tool(tool, &[], || Err(error.into())),
    };
    if let Some(common) = hook_of(&args).cloned() {
        return run_hook(tool, &common, || body(args));
    }
    crate::exit::run_tool(tool, lookups, || body(args))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dir_is_recovered_from_an_unparsable_command_line() {
        let check = |words: &[&str], expect: Option<&str>| {
            let arguments = words.iter().map(std::ffi::OsString::from);
            assert_eq!(dir_from_raw_arguments(arguments), expect.map(std::path::PathBuf::from), "{words:?}");
        };
        check(&["--hook", "codex", "--dir", "/r", "--bogus"], Some("/r"));
        check(&["--hook=codex", "--dir=/r", "--bogus"], Some("/r"));
        check(&["--hook", "codex", "--bogus"], None);
        check(&["--hook", "codex", "--dir"], None);
    }
}
