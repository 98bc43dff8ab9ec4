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
        let message = crate::text::escape_for_terminal(&format!("{error:#}")).into_owned();
        let _ = writeln!(std::io::stderr().lock(), "{tool}: hook: {message}");
        if let Ok(roster) = open_roster_for_writing(common) {
            let _ = registry_core::append_hook_error(&roster, tool, &message);
        }
    }
    ExitCode::SUCCESS
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
    let common = CommonArgs::default();
    let first_line = error.to_string().lines().next().unwrap_or("invalid arguments").to_owned();
    run_hook(tool, &common, || Err(anyhow::anyhow!("invalid hook command line: {first_line}")))
}
