//! Opening the roster directory the way every binary does: `--dir` beats
//! `ROSTER_DIR`, which beats the XDG default; writers create it, readers
//! only open what exists. And where the harnesses keep their own registries
//! of live sessions, which listings read and registrations consult.

use harness::session_files::{claude_code, copilot};
use registry_core::adopted::{AdoptedHarness, AdoptedSource};
use registry_core::{DirectoryChoice, RosterDir, choose_directory};

use crate::args::CommonArgs;
use crate::process_env::process_env_os;

/// Where the roster directory is for these flags and this environment.
pub fn roster_directory_choice(common: &CommonArgs) -> registry_core::Result<DirectoryChoice> {
    choose_directory(common.dir.as_deref(), &process_env_os)
}

/// Opens (creating it if needed) the roster directory, for a writer, with
/// the bounds of `ended/` the user's `config.toml` sets.
pub fn open_roster_for_writing(common: &CommonArgs) -> registry_core::Result<RosterDir> {
    RosterDir::open_or_create(&roster_directory_choice(common)?.path)
        .map(|roster| with_lock_manners(roster, common).with_ended_bounds(user_ended_bounds))
}

/// Opens the roster directory for a reader (who may remove, as prune
/// does: with the bounds of `ended/` the user's `config.toml` sets); `None`
/// when it does not exist.
pub fn open_roster_for_reading(common: &CommonArgs) -> registry_core::Result<Option<RosterDir>> {
    Ok(RosterDir::open_existing(&roster_directory_choice(common)?.path)?
        .map(|roster| with_lock_manners(roster, common).with_ended_bounds(user_ended_bounds)))
}

/// The harnesses' own session directories (docs/contract.md §6.5): Claude
/// Code's and Copilot CLI's, unless `read` is false (`roster-list
/// --no-adopt`) or the user config's `[adopt] claude_code = false`
/// (`copilot = false`) says not to read one.
pub fn harness_session_sources(read: bool) -> Vec<AdoptedSource> {
    if !read {
        return Vec::new();
    }
    let env = &process_env_os;
    let choices = consent::user_adopt_choices(env);
    let claude_code = choices.claude_code.then(|| claude_code::sessions_directory(env)).flatten();
    let copilot = choices.copilot.then(|| copilot::session_state_directory(env)).flatten();
    claude_code
        .map(|path| AdoptedSource { harness: AdoptedHarness::ClaudeCode, path })
        .into_iter()
        .chain(copilot.map(|path| AdoptedSource { harness: AdoptedHarness::Copilot, path }))
        .collect()
}

/// The bounds of `ended/` the user's `config.toml` sets, read when the
/// first ended session is kept.
fn user_ended_bounds() -> registry_core::EndedBounds {
    consent::user_ended_bounds(&process_env_os)
}

/// In hook mode every lock wait ends within the hook's budget; otherwise a
/// long wait tells the person at the terminal what it waits for (never
/// with `--quiet`, and never when stderr is not a terminal: a script gets
/// the one-line error only).
fn with_lock_manners(roster: RosterDir, common: &CommonArgs) -> RosterDir {
    use std::io::IsTerminal;
    if crate::hook_clock::in_hook_mode() {
        roster.with_lock_deadline(crate::hook_clock::hook_work_deadline)
    } else if common.quiet || !std::io::stderr().is_terminal() {
        roster
    } else {
        roster.with_long_lock_wait_notice(say_what_the_wait_is_for)
    }
}

fn say_what_the_wait_is_for(lock: &std::path::Path, holder: Option<u32>) {
    use std::io::Write;
    let tool = std::env::args_os()
        .next()
        .and_then(|argv0| {
            std::path::Path::new(&argv0).file_name().map(|name| name.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "roster".to_owned());
    let holder = holder.map(|pid| format!(" (held by pid {pid})")).unwrap_or_default();
    let _ = writeln!(
        std::io::stderr().lock(),
        "{tool}: waiting for the registry lock {}{holder}, at most {} s",
        crate::text::escape_for_terminal(&lock.display().to_string()),
        registry_core::LOCK_WAIT.as_secs()
    );
}
