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
