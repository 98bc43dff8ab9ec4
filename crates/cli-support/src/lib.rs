//! What every roster binary shares, so the five tools behave as one: the
//! common flags, exit codes, the one-line error report, broken-pipe
//! handling, terminal escaping, `~` paths, colour, tables and durations.
//!
//! It is a crate of its own because the binaries are thin and must agree;
//! the libraries below it know nothing of terminals or flags.

mod args;
mod exit;
mod text;

pub use args::{CommonArgs, OutputFormat, common_args_help};
pub use exit::{BadInput, ErrorLookup, ExitCoded, Refused, exit_code_of, lookup, report_and_exit, run_tool};
pub use text::{
    Colour, escape_for_terminal, format_age, home_relative, paint, parse_duration, render_table, use_colour,
};
