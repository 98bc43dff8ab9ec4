//! The host `local` of `roster-list --host` (docs/contract.md §6.7): this
//! machine, listed in-process exactly as `roster-list --format json` lists
//! it, no ssh and no second process.

use super::answer::{Answered, HostNote, Unanswered};
use super::rows::parse_rows;
use super::target::LOCAL_HOST;
use crate::listing::ListArgs;
use cli_support::{OutputFormat, open_roster_for_reading};

/// This machine's rows and notes, as `roster-list --format json` with
/// these flags would print them.
pub fn list_here(args: &ListArgs) -> Result<Answered, Unanswered> {
    list(args).map_err(|error| Unanswered {
        note: HostNote {
            host: LOCAL_HOST.to_owned(),
            kind: "host-unreadable".to_owned(),
            message: format!("{LOCAL_HOST}: {}", cli_support::terminal_message(&error).trim_end_matches('.')),
        },
    })
}

fn list(args: &ListArgs) -> anyhow::Result<Answered> {
    let mut args = args.clone();
    args.common.json = false;
    args.common.format = OutputFormat::Json;
    let filter = crate::listing::build_filter(&args)?;
    let roster = open_roster_for_reading(&args.common)?;
    let mut out = Vec::new();
    // JSON rows: no table to lay out.
    let table_options = crate::table::TableOptions::default();
    let (summary, _) = match &roster {
        Some(roster) => crate::listing::print_listing(roster, &filter, &args, &table_options, &mut out)?,
        None => crate::listing::print_adopted_only(&filter, &args, &table_options, &mut out)?,
    };
    let rows = parse_rows(&out).map_err(|why| anyhow::anyhow!("reading this machine's own rows: {why}"))?;
    let notes = match (&roster, args.common.quiet) {
        (Some(roster), false) => crate::notes::current_notes(&summary, roster)
            .into_iter()
            .map(|note| HostNote {
                host: LOCAL_HOST.to_owned(),
                kind: note.kind.as_str().to_owned(),
                message: note.message,
            })
            .collect(),
        _ => Vec::new(),
    };
    Ok(Answered { rows, notes })
}
