//! Listing (docs/contract.md §6.2): every entry of `sessions/` as a row with its
//! verdict, filtered, newest `registered_at` first. One bad file never
//! hides the others. Reads take no lock.

use std::path::{Path, PathBuf};

use owner_liveness::{Liveness, SystemFacts};

use crate::directory::RosterDir;
use crate::error::Result;
use crate::files::list_entries;
use crate::parallel::map_in_parallel;
use crate::session_row::{SessionRow, non_utf8_name_row, read_listed_session_row};

/// Which rows to show. For the text filters, the empty string selects the
/// records without a value: `agent: Some("")` the anonymous sessions,
/// `harness: Some("")` those of an unknown harness, `session_id: Some("")`
/// those without a session id (no record holds an empty value).
#[derive(Clone, Debug, Default)]
pub struct ListFilter {
    pub include_dead: bool,
    pub agent: Option<String>,
    pub harness: Option<String>,
    pub session_id: Option<String>,
    /// Canonical directory: rows whose cwd is it or below it.
    pub cwd: Option<PathBuf>,
}

impl ListFilter {
    pub fn filters_on_fields(&self) -> bool {
        self.agent.is_some() || self.harness.is_some() || self.session_id.is_some() || self.cwd.is_some()
    }

    /// Whether a row passes the field filters (before its verdict). A
    /// problem row has no fields, so any field filter hides it.
    pub fn admits(&self, row: &SessionRow) -> bool {
        let Some(record) = &row.record else { return !self.filters_on_fields() };
        self.agent.as_deref().is_none_or(|agent| record.agent.as_deref().unwrap_or_default() == agent)
            && self.harness.as_deref().is_none_or(|harness| record.harness == harness)
            && self
                .session_id
                .as_deref()
                .is_none_or(|id| record.session_id.as_deref().unwrap_or_default() == id)
            && self.cwd.as_deref().is_none_or(|dir| Path::new(&record.cwd).starts_with(dir))
    }
}

/// All rows (the hidden ones counted), sorted newest first, ties by pid.
#[derive(Clone, Debug, Default)]
pub struct Listing {
    pub rows: Vec<SessionRow>,
    /// Dead rows left out because `include_dead` was off.
    pub dead_hidden: usize,
    /// Entries left out by the field filters: with no rows, whether the
    /// filters matched nothing or the registry is empty.
    pub filtered_out: usize,
}

/// Lists the sessions of a roster directory. The entries are read and
/// judged on every core (`map_in_parallel`), then filtered in order.
pub fn list_sessions(
    roster: &RosterDir,
    filter: &ListFilter,
    facts: &(impl SystemFacts + Sync),
) -> Result<Listing> {
    let mut listing = Listing::default();
    let entries = list_entries(roster, roster.sessions())?;
    let rows = map_in_parallel(&entries, |entry| match entry.name.to_str() {
        Some(name) => read_listed_session_row(roster, name, entry.kind, facts).map(|(row, _)| row),
        // A non-UTF-8 name is not one roster wrote; show it escaped.
        None => Some(non_utf8_name_row(roster, &entry.name)),
    });
    for row in rows.into_iter().flatten() {
        if !filter.admits(&row) {
            listing.filtered_out += 1;
            continue;
        }
        if row.liveness() == Liveness::Dead && !filter.include_dead {
            listing.dead_hidden += 1;
            continue;
        }
        listing.rows.push(row);
    }
    sort_newest_first(&mut listing.rows);
    Ok(listing)
}

impl Listing {
    /// The listing `filter` makes of rows already read (a watcher's
    /// state): field filters, dead rows hidden unless asked for, newest
    /// first.
    pub fn of_rows<'a>(rows: impl IntoIterator<Item = &'a SessionRow>, filter: &ListFilter) -> Listing {
        let mut listing = Listing::default();
        for row in rows {
            if !filter.admits(row) {
                listing.filtered_out += 1;
            } else if row.liveness() == Liveness::Dead && !filter.include_dead {
                listing.dead_hidden += 1;
            } else {
                listing.rows.push(row.clone());
            }
        }
        sort_newest_first(&mut listing.rows);
        listing
    }
}

/// Newest `registered_at` first (compared as times), ties by pid, then name.
pub fn sort_newest_first(rows: &mut [SessionRow]) {
    rows.sort_by(|a, b| {
        b.registered_at
            .cmp(&a.registered_at)
            .then_with(|| a.pid.cmp(&b.pid))
            .then_with(|| a.file_name.cmp(&b.file_name))
    });
}
