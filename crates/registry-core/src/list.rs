//! Listing (docs/contract.md §6.2): every entry of `sessions/` as a row with its
//! verdict, filtered, newest `registered_at` first. One bad file never
//! hides the others. Reads take no lock.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use owner_liveness::{Liveness, Pid, SystemFacts, Verdict};

use crate::directory::RosterDir;
use crate::directory_entries::EntryKind;
use crate::error::Result;
use crate::files::{FileStamp, list_entries};
use crate::parallel::map_in_parallel;
use crate::session_row::{
    KnownVerdict, Problem, SessionRow, non_utf8_name_row, read_listed_session_row, read_session_row_knowing,
};
use crate::timestamp::Timestamp;

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

/// What the reader of a listing is told besides its rows: how many were
/// left out and why, and what among the shown rows needs acting on.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ListingSummary {
    /// Rows shown.
    pub shown: usize,
    /// Dead rows left out because `include_dead` was off.
    pub dead_hidden: usize,
    /// Entries left out by the field filters.
    pub filtered_out: usize,
    /// Shown rows whose verdict is `unknown` (problem entries included).
    pub unknown: usize,
    /// Shown records whose owner was named by hand and is not the
    /// registering process or its ancestor (`session_pid_verified: false`).
    pub unverified: usize,
    /// The shown problem entries: file name and what is wrong.
    pub problems: Vec<(String, Problem)>,
}

impl ListingSummary {
    /// Whether the registry held no entry at all.
    pub fn registry_is_empty(&self) -> bool {
        self.shown == 0 && self.dead_hidden == 0 && self.filtered_out == 0
    }

    fn count_shown(&mut self, row: &SessionRow) {
        self.count(RowTally::of(row), Some(row));
    }

    /// Counts a shown row from its tally; `row` is needed only for a
    /// problem entry (which is always kept whole).
    fn count(&mut self, tally: RowTally, row: Option<&SessionRow>) {
        self.shown += 1;
        self.unknown += usize::from(tally.unknown);
        self.unverified += usize::from(tally.unverified);
        if let Some(row) = row
            && let Some(problem) = &row.problem
        {
            self.problems.push((row.file_name.clone(), problem.clone()));
        }
    }
}

/// What a shown row adds to the summary's counts, taken before a deferred
/// row lets its record go.
#[derive(Clone, Copy, Debug)]
struct RowTally {
    unknown: bool,
    unverified: bool,
}

impl RowTally {
    fn of(row: &SessionRow) -> RowTally {
        RowTally {
            unknown: row.liveness() == Liveness::Unknown,
            unverified: row.record.as_ref().is_some_and(|record| !record.session_pid_verified),
        }
    }
}

/// Lists the sessions of a roster directory. The entries are read and
/// judged on every core (`map_in_parallel`), then filtered in order.
pub fn list_sessions(
    roster: &RosterDir,
    filter: &ListFilter,
    facts: &(impl SystemFacts + Sync),
) -> Result<Listing> {
    let ordered = list_sessions_ordered(roster, filter, facts)?;
    let summary = ordered.summary.clone();
    Ok(Listing {
        rows: ordered.into_rows(roster, filter, facts).collect(),
        dead_hidden: summary.dead_hidden,
        filtered_out: summary.filtered_out,
    })
}

/// A listing of at most this many entries keeps its rows parsed in memory
/// and reads each file once; a larger one keeps of each row only what
/// sorts and counts it, and reads its record again when the row is handed
/// out. A listing of a hundred thousand records then needs a few dozen
/// megabytes, not a quarter of a gigabyte.
const WHOLE_ROWS_UP_TO: usize = 16_384;

/// Record bytes kept parsed in memory at most, however few the entries:
/// records may be up to 64 KiB each.
const WHOLE_ROWS_BUDGET: u64 = 16 << 20;

/// A listing in its final order, whose rows are handed out one at a time
/// (`rows`, `into_rows`), so that a printer never holds them all at once.
#[derive(Debug, Default)]
pub struct OrderedListing {
    kept: Vec<KeptRow>,
    summary: ListingSummary,
}

/// A shown row: whole, or (past `WHOLE_ROWS_BUDGET`) the facts that sort
/// it and the verdict reached for the very file it was read from.
#[derive(Debug)]
enum KeptRow {
    Whole(Box<SessionRow>),
    Deferred(Box<DeferredRow>),
}

#[derive(Debug)]
struct DeferredRow {
    file_name: Box<str>,
    listed_as: EntryKind,
    stamp: FileStamp,
    pid: Option<Pid>,
    registered_at: Timestamp,
    verdict: Verdict,
}

impl KeptRow {
    fn sort_key(&self) -> (Timestamp, Option<Pid>, &str) {
        match self {
            KeptRow::Whole(row) => (row.registered_at, row.pid, &row.file_name),
            KeptRow::Deferred(row) => (row.registered_at, row.pid, &row.file_name),
        }
    }

    /// The row itself. A deferred row's record is read again; when the
    /// file is still the one judged, the verdict reached for it stands,
    /// else the entry is judged anew and shown only if it still passes the
    /// filter. `None`: it no longer does, or is gone.
    fn resolve(
        &self,
        roster: &RosterDir,
        filter: &ListFilter,
        facts: &impl SystemFacts,
    ) -> Option<Cow<'_, SessionRow>> {
        match self {
            KeptRow::Whole(row) => Some(Cow::Borrowed(row)),
            KeptRow::Deferred(row) => reread(row, roster, filter, facts).map(Cow::Owned),
        }
    }

    /// `resolve`, giving the row away.
    fn into_row(
        self,
        roster: &RosterDir,
        filter: &ListFilter,
        facts: &impl SystemFacts,
    ) -> Option<SessionRow> {
        match self {
            KeptRow::Whole(row) => Some(*row),
            KeptRow::Deferred(row) => reread(&row, roster, filter, facts),
        }
    }
}

fn reread(
    deferred: &DeferredRow,
    roster: &RosterDir,
    filter: &ListFilter,
    facts: &impl SystemFacts,
) -> Option<SessionRow> {
    let known = KnownVerdict { stamp: deferred.stamp, verdict: &deferred.verdict };
    let (row, _) =
        read_session_row_knowing(roster, &deferred.file_name, deferred.listed_as, Some(known), facts)?;
    let shown = filter.admits(&row) && (filter.include_dead || row.liveness() != Liveness::Dead);
    shown.then_some(row)
}

/// What reading one entry made of it.
enum Outcome {
    /// The row, and what it adds to the counts.
    Shown(KeptRow, RowTally),
    DeadHidden,
    FilteredOut,
}

/// Reads and judges every entry of `sessions/` on every core
/// (`map_in_parallel`), filters them and puts them in order, newest first.
/// One bad file never hides the others.
pub fn list_sessions_ordered(
    roster: &RosterDir,
    filter: &ListFilter,
    facts: &(impl SystemFacts + Sync),
) -> Result<OrderedListing> {
    list_sessions_ordered_within(roster, filter, WHOLE_ROWS_BUDGET, facts)
}

/// `list_sessions_ordered`, keeping whole rows for at most
/// `whole_rows_budget` bytes of records.
fn list_sessions_ordered_within(
    roster: &RosterDir,
    filter: &ListFilter,
    whole_rows_budget: u64,
    facts: &(impl SystemFacts + Sync),
) -> Result<OrderedListing> {
    let entries = list_entries(roster, roster.sessions())?;
    // Dotfiles (session-id index entries, temporaries) are not rows.
    let rows = entries.iter().filter(|entry| !entry.name.as_encoded_bytes().starts_with(b".")).count();
    let whole_rows_budget = if rows > WHOLE_ROWS_UP_TO { 0 } else { whole_rows_budget };
    let kept_bytes = AtomicU64::new(0);
    let outcomes = map_in_parallel(&entries, |entry| {
        let (row, stamp) = match entry.name.to_str() {
            Some(name) => read_listed_session_row(roster, name, entry.kind, facts)?,
            // A non-UTF-8 name is not one roster wrote; show it escaped.
            None => (non_utf8_name_row(roster, &entry.name), None),
        };
        if !filter.admits(&row) {
            return Some(Outcome::FilteredOut);
        }
        if row.liveness() == Liveness::Dead && !filter.include_dead {
            return Some(Outcome::DeadHidden);
        }
        let tally = RowTally::of(&row);
        let deferrable = row.problem.is_none()
            && stamp.is_some_and(|stamp| {
                kept_bytes.fetch_add(stamp.size(), Ordering::Relaxed) + stamp.size() > whole_rows_budget
            });
        match stamp {
            Some(stamp) if deferrable => Some(Outcome::Shown(
                KeptRow::Deferred(Box::new(DeferredRow {
                    file_name: row.file_name.into_boxed_str(),
                    listed_as: entry.kind,
                    stamp,
                    pid: row.pid,
                    registered_at: row.registered_at,
                    verdict: row.verdict,
                })),
                tally,
            )),
            _ => Some(Outcome::Shown(KeptRow::Whole(Box::new(row)), tally)),
        }
    });
    drop(entries);
    let mut listing = OrderedListing::default();
    for outcome in outcomes.into_iter().flatten() {
        match outcome {
            Outcome::Shown(row, tally) => {
                let whole = match &row {
                    KeptRow::Whole(row) => Some(&**row),
                    KeptRow::Deferred(_) => None,
                };
                listing.summary.count(tally, whole);
                listing.kept.push(row);
            }
            Outcome::DeadHidden => listing.summary.dead_hidden += 1,
            Outcome::FilteredOut => listing.summary.filtered_out += 1,
        }
    }
    // Newest first, as `sort_newest_first` orders whole rows.
    listing.kept.sort_by(|a, b| {
        let (a_time, a_pid, a_name) = a.sort_key();
        let (b_time, b_pid, b_name) = b.sort_key();
        b_time.cmp(&a_time).then_with(|| a_pid.cmp(&b_pid)).then_with(|| a_name.cmp(b_name))
    });
    Ok(listing)
}

impl OrderedListing {
    /// Counts as of the first reading; a row that changed before it was
    /// handed out may be missing from `rows` since.
    pub fn summary(&self) -> &ListingSummary {
        &self.summary
    }

    /// The rows, newest first, each read again if it was not kept whole.
    pub fn rows<'a>(
        &'a self,
        roster: &'a RosterDir,
        filter: &'a ListFilter,
        facts: &'a impl SystemFacts,
    ) -> impl Iterator<Item = Cow<'a, SessionRow>> + 'a {
        self.kept.iter().filter_map(move |kept| kept.resolve(roster, filter, facts))
    }

    /// `rows`, giving them away.
    pub fn into_rows<'a>(
        self,
        roster: &'a RosterDir,
        filter: &'a ListFilter,
        facts: &'a impl SystemFacts,
    ) -> impl Iterator<Item = SessionRow> + 'a {
        self.kept.into_iter().filter_map(move |kept| kept.into_row(roster, filter, facts))
    }
}

impl Listing {
    /// What the reader is told besides the rows.
    pub fn summary(&self) -> ListingSummary {
        let mut summary = ListingSummary {
            dead_hidden: self.dead_hidden,
            filtered_out: self.filtered_out,
            ..ListingSummary::default()
        };
        for row in &self.rows {
            summary.count_shown(row);
        }
        summary
    }

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

#[cfg(test)]
mod tests {
    use std::process::{Child, Command};

    use owner_liveness::capture_identity;

    use super::*;
    use crate::register::{AgentChoice, Registration, register};
    use crate::running_system::RunningSystem;

    struct Owner(Child);

    impl Drop for Owner {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    fn owner() -> Owner {
        Owner(Command::new("sleep").arg("600").spawn().expect("spawn sleep"))
    }

    fn register_owner(roster: &RosterDir, owner: &Owner, cwd: &Path) {
        let pid = Pid::new(owner.0.id()).expect("a pid");
        let registration = Registration {
            identity: capture_identity(pid).expect("capture the owner"),
            session_pid_source: owner_liveness::OwnerSource::Flag.into(),
            session_pid_verified: false,
            harness: "codex".into(),
            harness_version: None,
            agent: AgentChoice::Keep { default: None },
            session_id: None,
            transcript_path: None,
            socket: None,
            cwd: cwd.to_owned(),
            registrar_pid: std::process::id(),
        };
        register(roster, &registration, &RunningSystem::read()).expect("register");
    }

    fn rows_json(rows: impl Iterator<Item = SessionRow>) -> Vec<String> {
        let consent = crate::session_row::RowConsent::REMOVED;
        rows.map(|row| row.to_json(consent).to_string()).collect()
    }

    #[test]
    fn deferred_rows_are_the_rows_a_whole_listing_holds() {
        let scratch = tempfile::tempdir().unwrap();
        let roster = RosterDir::open_or_create(&scratch.path().join("roster")).unwrap();
        let mut owners: Vec<Owner> = (0..12).map(|_| owner()).collect();
        for owner in &owners {
            register_owner(&roster, owner, scratch.path());
        }
        // Four owners die: hidden without --all, listed dead with it.
        for owner in &mut owners[..4] {
            owner.0.kill().unwrap();
            owner.0.wait().unwrap();
        }
        let facts = RunningSystem::read();
        for include_dead in [false, true] {
            let filter = ListFilter { include_dead, ..ListFilter::default() };
            let whole = list_sessions_ordered_within(&roster, &filter, u64::MAX, &facts).unwrap();
            let deferred = list_sessions_ordered_within(&roster, &filter, 0, &facts).unwrap();
            assert!(deferred.kept.iter().all(|row| matches!(row, KeptRow::Deferred(_))));
            assert!(whole.kept.iter().all(|row| matches!(row, KeptRow::Whole(_))));
            assert_eq!(deferred.summary, whole.summary, "include_dead {include_dead}");
            assert_eq!(deferred.summary.shown, if include_dead { 12 } else { 8 });
            assert_eq!(
                rows_json(deferred.into_rows(&roster, &filter, &facts)),
                rows_json(whole.into_rows(&roster, &filter, &facts)),
                "include_dead {include_dead}"
            );
        }
    }

    #[test]
    fn a_deferred_row_whose_file_changed_is_judged_again_or_left_out() {
        let scratch = tempfile::tempdir().unwrap();
        let roster = RosterDir::open_or_create(&scratch.path().join("roster")).unwrap();
        let mut owners: Vec<Owner> = (0..3).map(|_| owner()).collect();
        for owner in &owners {
            register_owner(&roster, owner, scratch.path());
        }
        let filter = ListFilter::default();
        let facts = RunningSystem::read();
        let deferred = list_sessions_ordered_within(&roster, &filter, 0, &facts).unwrap();
        assert_eq!(deferred.summary.shown, 3);
        // Between the first reading and the rows being handed out: one
        // record goes, one owner dies (its file unchanged: the verdict
        // reached stands), one owner registers again (a new file: judged
        // anew).
        let gone = owners[0].0.id();
        std::fs::remove_file(scratch.path().join(format!("roster/sessions/{gone}.json"))).unwrap();
        register_owner(&roster, &owners[2], &scratch.path().join("roster"));
        // After that registration, whose reaper pass would remove it.
        owners[1].0.kill().unwrap();
        owners[1].0.wait().unwrap();
        let rows: Vec<SessionRow> = deferred.into_rows(&roster, &filter, &facts).collect();
        let pids: Vec<u32> = rows.iter().filter_map(|row| row.pid.map(Pid::get)).collect();
        assert!(!pids.contains(&gone), "a removed record is not shown: {pids:?}");
        let unchanged = rows.iter().find(|row| row.pid.map(Pid::get) == Some(owners[1].0.id())).unwrap();
        assert_eq!(
            unchanged.liveness(),
            Liveness::Alive,
            "the verdict reached for the unchanged file stands"
        );
        let refreshed = rows.iter().find(|row| row.pid.map(Pid::get) == Some(owners[2].0.id())).unwrap();
        let new_cwd = scratch.path().join("roster").canonicalize().unwrap();
        assert_eq!(refreshed.record.as_ref().unwrap().cwd.as_path(), new_cwd);
        assert_eq!(refreshed.liveness(), Liveness::Alive);
    }
}
