//! What every roster binary shares, so the five tools behave as one: the
//! common flags, exit statuses, the one-line error report, broken-pipe
//! handling, the manual behind `--help` and the man pages, the completion of
//! live sessions' pids and names, terminal
//! escaping, `~` paths, colour, tables and durations.
//!
//! It is a crate of its own because the binaries are thin and must agree;
//! the libraries below it know nothing of terminals or flags.

mod args;
mod binary_main;
mod completion;
mod exit;
#[cfg(test)]
mod exit_status_table;
mod fit;
mod help;
mod hook_clock;
mod hook_input;
mod hook_mode;
pub mod manual;
mod owner;
mod process_entry;
mod process_env;
mod roster;
mod sibling_tool;
pub mod ssh;
mod text;
mod time_text;

pub use args::{ColourChoice, CommonArgs, OutputFormat, colour_enabled};
pub use binary_main::run_binary;
pub use completion::{
    COMPLETE_VARIABLE, agent_names, complete_when_asked, session_ids, session_pids, session_pids_and_ids,
    session_pids_or_parent, session_targets,
};
/// Why a session does not take a message now: what
/// `session_accepts_messages` answers.
pub use consent::NotAccepted;
pub use exit::{
    BadInput, EndedWith, ExitStatus, NotUtf8Path, Refused, report_and_exit, run_tool, terminal_message,
};
pub use fit::{ColumnToFit, FittedColumns, character_width, display_width, fit_columns, output_width};
pub use help::{matches_with_manual_on_help, parse_with_manual_on_help, process_arguments, with_manual};
pub use hook_clock::{
    HookEvent, hook_work_deadline, hook_work_deadline_at_the_earliest, payload_wait,
    payload_wait_at_the_least,
};
pub use hook_input::{hook_target, read_hook_payload};
pub use hook_mode::{
    end_hook_with, hook_mode_requested, report_escaped_hook_problem, report_hook_problem,
    report_unparsable_hook_invocation, report_warning, run_hook, run_tool_with_hook_mode,
    stderr_is_the_reply,
};
pub use owner::{
    CallingOwner, own_ancestry, own_ancestry_up_to, resolve_calling_owner,
    resolve_calling_owner_naming_every_ancestor, resolve_calling_session_owner, runs_inside_session,
    runs_inside_session_walked, session_accepts_messages, session_accepts_messages_walked,
};
pub use process_entry::enter;
pub use process_env::{process_env, process_env_os};
pub use roster::{
    harness_session_sources, open_roster_for_reading, open_roster_for_writing, roster_directory_choice,
};
pub use sibling_tool::sibling_tool;
pub use text::{
    Colour, DURATION_SUGGESTIONS, PaintCell, column_widths, command_for_terminal, escape_for_terminal,
    escape_path_for_terminal, escape_source_text_for_terminal, escaped_prefix, fit_to_width, format_age,
    home_relative, paint, parse_duration, push_home_relative, push_table_line, render_table,
    render_table_within,
};
pub use time_text::{local_clock, local_date_time, time_text};
