//! Listing (docs/contract.md §6.2): every entry of `sessions/` as a row with its
//! verdict, filtered, newest `registered_at` first. One bad file never
//! hides the others. Reads take no lock.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use std::collections::{BTreeMap, HashSet};

use harness::Activity;
use owner_liveness::{Liveness, Pid, SystemFacts, Verdict};

use crate::adopted::{
    AdoptedSource, counterparts_of, may_be_same_session_as_a_record, read_adopted_made_into,
};
use crate::error::Result;
use crate::parallel::map_in_parallel;
use crate::record::session_record::pid_of_file_name;
use crate::record::timestamp::Timestamp;
use crate::session_row::{
    KnownVerdict, Origin, Problem, SessionRow, non_utf8_name_row, read_listed_session_row,
    read_session_row_knowing,
};
use crate::store::directory::RosterDir;
use crate::store::directory_entries::EntryKind;
use crate::store::files::{FileStamp, list_entries};

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
    /// Rows whose shown state is one of these (`None` for `unknown`);
    /// `None` for every state.
    pub state: Option<Vec<Option<Activity>>>,
    /// Claude Code's sessions directory, whose sessions are listed too
    /// (docs/contract.md §6.5); `None` to list roster's records alone.
    pub adopt: Vec<AdoptedSource>,
}

impl ListFilter {
    pub fn filters_on_fields(&self) -> bool {
        self.agent.is_some()
            || self.harness.is_some()
            || self.session_id.is_some()
            || self.cwd.is_some()
            || self.state.is_some()
    }

    /// Whether a row passes the state filter, once its state is read.
    pub fn admits_state(&self, row: &SessionRow) -> bool {
        self.state
            .as_ref()
            .is_none_or(|wanted| wanted.contains(&row.shown_state().map(|state| state.activity)))
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
    /// Of those, the harnesses' own files (not roster records), by origin.
    pub dead_hidden_adopted: BTreeMap<Origin, usize>,
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
    /// Of those, the harnesses' own files by origin: `roster-prune` never
    /// removes them (docs/contract.md §6.5), so what is said of them differs.
    pub dead_hidden_adopted: BTreeMap<Origin, usize>,
    /// Entries left out by the field filters.
    pub filtered_out: usize,
    /// Shown rows whose verdict is `unknown` (problem entries included).
    pub unknown: usize,
    /// Shown records whose owner was named by hand and is not the
    /// registering process or its ancestor (`session_pid_verified: false`).
    pub unverified: usize,
    /// The shown problem entries: file name and what is wrong.
    pub problems: Vec<(String, Problem)>,
    /// Why a harness's sessions directory was not read, when it was not.
    pub adopted_unread: Vec<String>,
}

impl ListingSummary {
    /// Whether the registry held no entry at all.
    pub fn registry_is_empty(&self) -> bool {
        self.shown == 0 && self.dead_hidden == 0 && self.filtered_out == 0
    }

    /// The dead rows hidden that are roster records, which `roster-prune`
    /// removes.
    pub fn dead_hidden_records(&self) -> usize {
        self.dead_hidden - self.dead_hidden_adopted.values().sum::<usize>()
    }

    fn count_dead_hidden(&mut self, origin: Origin) {
        self.dead_hidden += 1;
        if origin != Origin::Roster {
            *self.dead_hidden_adopted.entry(origin).or_default() += 1;
        }
    }

    fn count_shown(&mut self, row: &SessionRow) {
        let problem = row.problem.as_ref().map(|problem| (row.file_name.clone(), problem.clone()));
        self.count(RowTally::of(row), problem);
    }

    /// Counts a shown row from its tally and, for a problem entry, its
    /// file name and problem.
    fn count(&mut self, tally: RowTally, problem: Option<(String, Problem)>) {
        self.shown += 1;
        self.unknown += usize::from(tally.unknown);
        self.unverified += usize::from(tally.unverified);
        self.problems.extend(problem);
    }
}

/// What a shown row adds to the summary's counts, taken before the row is
/// presented or, deferred, lets its record go.
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
    let keep_row = |row: SessionRow| row;
    let presented = list_sessions_presented(roster, filter, facts, &keep_row)?;
    let summary = presented.summary.clone();
    Ok(Listing {
        rows: presented.into_presented(roster, filter, facts, &keep_row).collect(),
        dead_hidden: summary.dead_hidden,
        dead_hidden_adopted: summary.dead_hidden_adopted,
        filtered_out: summary.filtered_out,
    })
}

/// A listing of at most this many entries presents each row as soon as it
/// is judged and reads each file once; a larger one keeps of each row only
/// what sorts and counts it, and reads its record again when the row is
/// presented. A listing of a hundred thousand records then needs a few
/// dozen megabytes, not a quarter of a gigabyte.
const WHOLE_ROWS_UP_TO: usize = 16_384;

/// Record bytes presented in memory at most, however few the entries:
/// records may be up to 64 KiB each.
const WHOLE_ROWS_BUDGET: u64 = 16 << 20;

/// Deferred rows read again and presented at a time, on every core: enough
/// to be worth the threads, few enough that their presentations stay a few
/// megabytes.
const DEFERRED_ROWS_PER_PASS: usize = 2_048;

/// A listing in its final order, each row already turned by the caller's
/// `present` into what it prints (its JSON, its table cells), or (past
/// `WHOLE_ROWS_BUDGET`) deferred: read and presented again when handed out
/// (`into_presented`), so that a printer never holds them all at once.
#[derive(Debug)]
pub struct PresentedListing<P> {
    kept: Vec<KeptRow<P>>,
    summary: ListingSummary,
}

impl<P> Default for PresentedListing<P> {
    fn default() -> Self {
        PresentedListing { kept: Vec::new(), summary: ListingSummary::default() }
    }
}

/// A shown row: presented, or the facts that sort it and the verdict
/// reached for the very file it was read from. Both boxed: a listing of a
/// hundred thousand rows holds this several times over while it collects
/// them, and inline rows made that tens of megabytes.
#[derive(Debug)]
enum KeptRow<P> {
    Presented(Box<PresentedRow<P>>),
    Deferred(Box<DeferredRow>),
}

#[derive(Debug)]
struct PresentedRow<P> {
    order: RowOrder,
    presented: P,
}

/// What puts a row in its place: newest `registered_at` first, ties by
/// pid, then by file name.
#[derive(Debug)]
struct RowOrder {
    registered_at: Timestamp,
    pid: Option<Pid>,
    file_name: Box<str>,
}

impl RowOrder {
    fn of(row: &SessionRow) -> RowOrder {
        RowOrder { registered_at: row.registered_at, pid: row.pid, file_name: row.file_name.as_str().into() }
    }
}

#[derive(Debug)]
struct DeferredRow {
    order: RowOrder,
    listed_as: EntryKind,
    stamp: FileStamp,
    verdict: Verdict,
}

impl<P> KeptRow<P> {
    fn order(&self) -> &RowOrder {
        match self {
            KeptRow::Presented(row) => &row.order,
            KeptRow::Deferred(row) => &row.order,
        }
    }
}

/// The row a deferred row stands for, read again: when the file is still
/// the one judged, the verdict reached for it stands, else the entry is
/// judged anew and shown only if it still passes the filter. `None`: it no
/// longer does, or is gone.
fn reread(
    deferred: &DeferredRow,
    roster: &RosterDir,
    filter: &ListFilter,
    facts: &impl SystemFacts,
) -> Option<SessionRow> {
    let known = KnownVerdict { stamp: deferred.stamp, verdict: &deferred.verdict };
    let (mut row, _) =
        read_session_row_knowing(roster, &deferred.order.file_name, deferred.listed_as, Some(known), facts)?;
    row.read_state(roster, None);
    row.read_messages(roster, None);
    if let Some(record) = &row.record
        && !filter.adopt.is_empty()
    {
        AdoptedRows::new(counterparts_of(record, &filter.adopt, facts)).merge_into(&mut row);
    }
    let shown = filter.admits(&row)
        && filter.admits_state(&row)
        && (filter.include_dead || row.liveness() != Liveness::Dead);
    shown.then_some(row)
}

/// What reading one entry made of it.
enum Outcome<P> {
    /// The row, what it adds to the counts and, for a problem entry, its
    /// file name and problem.
    Shown(KeptRow<P>, RowTally, Option<Box<(String, Problem)>>),
    /// A dead row left out, of this origin.
    DeadHidden(Origin),
    FilteredOut,
}

/// Reads and judges every entry of `sessions/` on every core
/// (`map_in_parallel`), filters them, presents each shown row on the core
/// that judged it, while it is at hand (`present`: deciding its consent,
/// rendering it), and puts them in order, newest first. What is left for
/// one thread is the sort and the printing. One bad file never hides the
/// others.
pub fn list_sessions_presented<P: Send>(
    roster: &RosterDir,
    filter: &ListFilter,
    facts: &(impl SystemFacts + Sync),
    present: &(impl Fn(SessionRow) -> P + Sync),
) -> Result<PresentedListing<P>> {
    list_sessions_presented_within(roster, filter, WHOLE_ROWS_BUDGET, facts, present)
}

/// `list_sessions_presented`, presenting rows up front for at most
/// `whole_rows_budget` bytes of records.
fn list_sessions_presented_within<P: Send>(
    roster: &RosterDir,
    filter: &ListFilter,
    whole_rows_budget: u64,
    facts: &(impl SystemFacts + Sync),
    present: &(impl Fn(SessionRow) -> P + Sync),
) -> Result<PresentedListing<P>> {
    let entries = list_entries(roster, roster.sessions())?;
    // Dotfiles (session-id index entries, temporaries) are not rows.
    let rows = entries.iter().filter(|entry| !entry.name.as_encoded_bytes().starts_with(b".")).count();
    let whole_rows_budget = if rows > WHOLE_ROWS_UP_TO { 0 } else { whole_rows_budget };
    let kept_bytes = AtomicU64::new(0);
    let states = state_names(roster)?;
    // The sessions ever sent a message have a queue; the others cost nothing.
    let queues = crate::messages::queue_names(roster)?;
    // The owner pids of every record this listing can read (a record is
    // read only under a name roster writes, which names its owner's pid):
    // a harness's session that none of them may stand for is presented as
    // soon as it is judged, on the core that judged it, instead of being
    // held until every record is read.
    let record_pids: HashSet<Pid> =
        entries.iter().filter_map(|entry| pid_of_file_name(entry.name.to_str()?)).collect();
    let (adopted, adopted_unread) = read_adopted_made_into(&filter.adopt, facts, &|row| {
        if may_be_same_session_as_a_record(&row, &record_pids) {
            AdoptedRead::Unsettled(Box::new(row))
        } else {
            AdoptedRead::Settled(adopted_outcome(row, filter, present))
        }
    });
    // In the harnesses' order, each settled row's outcome, and a gap for
    // each row a record may still take in.
    let mut unsettled = Vec::new();
    let adopted_outcomes: Vec<Option<Outcome<P>>> = adopted
        .into_iter()
        .map(|read| match read {
            AdoptedRead::Settled(outcome) => Some(outcome),
            AdoptedRead::Unsettled(row) => {
                unsettled.push(*row);
                None
            }
        })
        .collect();
    let adopted = AdoptedRows::new(unsettled);
    let outcomes = map_in_parallel(&entries, |entry| {
        let (mut row, stamp) = match entry.name.to_str() {
            Some(name) => read_listed_session_row(roster, name, entry.kind, facts)?,
            // A non-UTF-8 name is not one roster wrote; show it escaped.
            None => (non_utf8_name_row(roster, &entry.name), None),
        };
        // A harness's file of the session this record stands for is this
        // row, whether or not the row is shown: a record the filters leave
        // out never lets its session show up as the harness's row (the
        // watch takes it in the same way).
        let taken = adopted.take_in(&row);
        if !filter.admits(&row) {
            return Some(Outcome::FilteredOut);
        }
        if row.liveness() == Liveness::Dead && !filter.include_dead {
            return Some(Outcome::DeadHidden(row.origin));
        }
        row.read_state(roster, Some(&states));
        row.read_messages(roster, Some(&queues));
        adopted.merge_taken(&mut row, &taken);
        if !filter.admits_state(&row) {
            return Some(Outcome::FilteredOut);
        }
        let tally = RowTally::of(&row);
        let problem = row.problem.as_ref().map(|problem| Box::new((row.file_name.clone(), problem.clone())));
        let deferrable = row.problem.is_none()
            && stamp.is_some_and(|stamp| {
                kept_bytes.fetch_add(stamp.size(), Ordering::Relaxed) + stamp.size() > whole_rows_budget
            });
        let kept = match stamp {
            Some(stamp) if deferrable => KeptRow::Deferred(Box::new(DeferredRow {
                order: RowOrder::of(&row),
                listed_as: entry.kind,
                stamp,
                verdict: row.verdict,
            })),
            _ => KeptRow::Presented(Box::new(PresentedRow {
                order: RowOrder::of(&row),
                presented: present(row),
            })),
        };
        Some(Outcome::Shown(kept, tally, problem))
    });
    drop(entries);
    // The harness's sessions no roster record stands for, as rows of their
    // own, each in its gap.
    let mut unmatched = present_unmatched(adopted.unmatched(), filter, present).into_iter();
    let adopted_outcomes =
        adopted_outcomes.into_iter().map(|settled| settled.or_else(|| unmatched.next().flatten()));
    let outcomes: Vec<Option<Outcome<P>>> = outcomes.into_iter().chain(adopted_outcomes).collect();
    Ok(into_listing(outcomes, adopted_unread))
}

/// A harness's session as the listing first reads it.
enum AdoptedRead<P> {
    /// No roster record may stand for it (`may_be_same_session_as_a_record`):
    /// filtered and presented already.
    Settled(Outcome<P>),
    /// A record may take it in: it waits for the records to be read.
    Unsettled(Box<SessionRow>),
}

/// The harness's sessions no roster record stood for (`None` where one
/// did), each filtered and presented as a row of its own on the core that
/// takes it. Each row is moved out of its slot by the one thread that takes
/// it, not cloned: a row of a harness's file holds a dozen strings.
fn present_unmatched<P: Send>(
    unmatched: Vec<Option<SessionRow>>,
    filter: &ListFilter,
    present: &(impl Fn(SessionRow) -> P + Sync),
) -> Vec<Option<Outcome<P>>> {
    let unmatched: Vec<std::sync::Mutex<Option<SessionRow>>> =
        unmatched.into_iter().map(std::sync::Mutex::new).collect();
    map_in_parallel(&unmatched, |slot| {
        let taken =
            slot.lock().map(|mut slot| slot.take()).unwrap_or_else(|poisoned| poisoned.into_inner().take());
        taken.map(|row| adopted_outcome(row, filter, present))
    })
}

/// A harness's session that no roster record stands for, as a row of its
/// own: filtered, and presented when shown.
fn adopted_outcome<P>(
    row: SessionRow,
    filter: &ListFilter,
    present: &impl Fn(SessionRow) -> P,
) -> Outcome<P> {
    if !filter.admits(&row) {
        return Outcome::FilteredOut;
    }
    if row.liveness() == Liveness::Dead && !filter.include_dead {
        return Outcome::DeadHidden(row.origin);
    }
    if !filter.admits_state(&row) {
        return Outcome::FilteredOut;
    }
    let tally = RowTally::of(&row);
    let problem = row.problem.as_ref().map(|problem| Box::new((row.file_name.clone(), problem.clone())));
    let kept =
        KeptRow::Presented(Box::new(PresentedRow { order: RowOrder::of(&row), presented: present(row) }));
    Outcome::Shown(kept, tally, problem)
}

/// The outcomes counted into a listing, its rows newest first.
fn into_listing<P>(outcomes: Vec<Option<Outcome<P>>>, adopted_unread: Vec<String>) -> PresentedListing<P> {
    let mut listing = PresentedListing { kept: Vec::with_capacity(outcomes.len()), ..Default::default() };
    listing.summary.adopted_unread = adopted_unread;
    for outcome in outcomes.into_iter().flatten() {
        match outcome {
            Outcome::Shown(row, tally, problem) => {
                listing.summary.count(tally, problem.map(|problem| *problem));
                listing.kept.push(row);
            }
            Outcome::DeadHidden(origin) => listing.summary.count_dead_hidden(origin),
            Outcome::FilteredOut => listing.summary.filtered_out += 1,
        }
    }
    // Newest first, as `sort_newest_first` orders whole rows.
    listing.kept.sort_unstable_by(|a, b| {
        let (a, b) = (a.order(), b.order());
        b.registered_at
            .cmp(&a.registered_at)
            .then_with(|| a.pid.cmp(&b.pid))
            .then_with(|| a.file_name.cmp(&b.file_name))
    });
    listing
}

/// A harness's sessions, by owner pid, each marked once a roster record of
/// the same owner took it in.
struct AdoptedRows {
    rows: Vec<SessionRow>,
    by_pid: std::collections::HashMap<u32, usize>,
    /// By session id: a harness's file may name another process of the
    /// same session (Copilot CLI's native process below its loader).
    by_session: std::collections::HashMap<String, Vec<usize>>,
    matched: Vec<std::sync::atomic::AtomicBool>,
}

impl AdoptedRows {
    fn new(rows: Vec<SessionRow>) -> AdoptedRows {
        let by_pid = rows
            .iter()
            .enumerate()
            .filter(|(_, row)| row.record.is_some())
            .filter_map(|(index, row)| Some((row.pid?.get(), index)))
            .collect();
        let mut by_session: std::collections::HashMap<String, Vec<usize>> = std::collections::HashMap::new();
        for (index, row) in rows.iter().enumerate() {
            if let Some(session_id) = row.record.as_ref().and_then(|record| record.session_id.as_ref()) {
                by_session.entry(session_id.as_str().to_owned()).or_default().push(index);
            }
        }
        let matched = rows.iter().map(|_| std::sync::atomic::AtomicBool::new(false)).collect();
        AdoptedRows { rows, by_pid, by_session, matched }
    }

    /// Merges into `row` the adopted sessions that are its own, if any
    /// (`merge_adopted`), and marks them taken in.
    fn merge_into(&self, row: &mut SessionRow) {
        let taken = self.take_in(row);
        self.merge_taken(row, &taken);
    }

    /// Marks taken in the adopted sessions that stand for the same session
    /// as `row` (`is_same_session`), and returns them.
    fn take_in(&self, row: &SessionRow) -> Vec<usize> {
        let Some(record) = row.record.as_ref() else { return Vec::new() };
        let by_pid = self.by_pid.get(&record.owner.pid.get()).copied();
        let by_session = record
            .session_id
            .as_ref()
            .and_then(|session_id| self.by_session.get(session_id.as_str()))
            .map_or(&[][..], Vec::as_slice);
        let mut taken: Vec<usize> = by_pid
            .into_iter()
            .chain(by_session.iter().copied())
            .filter(|index| crate::adopted::is_same_session(row, &self.rows[*index]))
            .collect();
        taken.sort_unstable();
        taken.dedup();
        for index in &taken {
            self.matched[*index].store(true, Ordering::Relaxed);
        }
        taken
    }

    /// Merges into `row` the state of the adopted sessions `take_in` found
    /// its own (`merge_adopted`).
    fn merge_taken(&self, row: &mut SessionRow, taken: &[usize]) {
        for index in taken {
            crate::adopted::merge_adopted(row, &self.rows[*index]);
        }
    }

    /// The adopted sessions no roster record took in, in their order;
    /// `None` for each one a record took in.
    fn unmatched(self) -> Vec<Option<SessionRow>> {
        self.rows
            .into_iter()
            .zip(self.matched)
            .map(|(row, matched)| (!matched.load(Ordering::Relaxed)).then_some(row))
            .collect()
    }
}

/// The names in `states/`, listed once so that a listing opens only the
/// state files there are.
pub(crate) fn state_names(roster: &RosterDir) -> Result<HashSet<String>> {
    Ok(list_entries(roster, roster.states())?
        .into_iter()
        .filter_map(|entry| entry.name.into_string().ok())
        .filter(|name| !name.starts_with('.'))
        .collect())
}

impl<P: Send + Sync> PresentedListing<P> {
    /// Counts as of the first reading; a row that changed before it was
    /// handed out may be missing from `into_presented` since.
    pub fn summary(&self) -> &ListingSummary {
        &self.summary
    }

    /// The presented rows, newest first. Deferred rows are read again and
    /// presented (`present`, the same as the listing's) a batch at a time
    /// on every core.
    pub fn into_presented<'a>(
        self,
        roster: &'a RosterDir,
        filter: &'a ListFilter,
        facts: &'a (impl SystemFacts + Sync),
        present: &'a (impl Fn(SessionRow) -> P + Sync),
    ) -> impl Iterator<Item = P> + 'a
    where
        P: 'a,
    {
        let mut kept = self.kept.into_iter().peekable();
        std::iter::from_fn(move || {
            kept.peek()?;
            let batch: Vec<KeptRow<P>> = kept.by_ref().take(DEFERRED_ROWS_PER_PASS).collect();
            Some(present_batch(batch, roster, filter, facts, present))
        })
        .flatten()
    }
}

/// The rows of `batch` presented, in order: those deferred read again and
/// presented on every core.
fn present_batch<P: Send + Sync>(
    batch: Vec<KeptRow<P>>,
    roster: &RosterDir,
    filter: &ListFilter,
    facts: &(impl SystemFacts + Sync),
    present: &(impl Fn(SessionRow) -> P + Sync),
) -> impl Iterator<Item = P> {
    let deferred_presented = if batch.iter().any(|row| matches!(row, KeptRow::Deferred(_))) {
        map_in_parallel(&batch, |row| match row {
            KeptRow::Deferred(row) => reread(row, roster, filter, facts).map(present),
            KeptRow::Presented(_) => None,
        })
    } else {
        Vec::new()
    };
    let mut deferred_presented = deferred_presented.into_iter();
    batch.into_iter().filter_map(move |row| {
        let deferred = deferred_presented.next().flatten();
        match row {
            KeptRow::Presented(row) => Some(row.presented),
            KeptRow::Deferred(_) => deferred,
        }
    })
}

impl Listing {
    /// What the reader is told besides the rows.
    pub fn summary(&self) -> ListingSummary {
        let mut summary = ListingSummary {
            dead_hidden: self.dead_hidden,
            dead_hidden_adopted: self.dead_hidden_adopted.clone(),
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
            if !filter.admits(row) || !filter.admits_state(row) {
                listing.filtered_out += 1;
            } else if row.liveness() == Liveness::Dead && !filter.include_dead {
                listing.dead_hidden += 1;
                if row.origin != Origin::Roster {
                    *listing.dead_hidden_adopted.entry(row.origin).or_default() += 1;
                }
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
    use crate::register::precedence::AgentChoice;
    use crate::register::refresh::SessionDirectory;
    use crate::register::{Registrar, Registration, register};
    use crate::running_system::RunningSystem;

    struct Owner(Child);

    /// Where the record of `pid`, registered in this process's world, is.
    fn record_path(roster: &std::path::Path, pid: u32) -> std::path::PathBuf {
        let world = crate::record::name::World::of_reader(&RunningSystem::read()).unwrap();
        roster
            .join("sessions")
            .join(crate::record::name::RecordName::new(Pid::new(pid).unwrap(), world).file_name())
    }

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
            harness: Some("codex".into()),
            harness_version: None,
            agent: AgentChoice::Keep { default: None },
            session_id: None,
            transcript_path: None,
            socket: None,
            location: None,
            cwd: SessionDirectory::Given(cwd.to_owned()),
            registrar_pid: std::process::id(),
            registrar: Registrar::ByHand,
            harness_sessions: Vec::new(),
        };
        register(roster, &registration, &RunningSystem::read()).expect("register");
    }

    fn row_json(row: SessionRow) -> String {
        row.to_json(crate::session_row::RowConsent::REMOVED).to_string()
    }

    /// A Claude Code session file for `pid`, its start tick `start_ticks`.
    fn claude_code_file(directory: &Path, pid: u32, start_ticks: u64, cwd: &Path) {
        let identity = capture_identity(Pid::new(pid).unwrap()).expect("capture the owner");
        let machine = identity.machine.as_deref().and_then(|machine| machine.strip_prefix("machine-id:"));
        let file = serde_json::json!({
            "pid": pid, "sessionId": format!("session-of-{pid}"), "cwd": cwd,
            "startedAt": 1_796_000_000_000_u64 + u64::from(pid), "procStart": start_ticks.to_string(),
            "pidDomain": format!("linux:{}:pid:[{}]", machine.expect("a machine id"), identity.pid_ns),
            "status": "busy", "updatedAt": 1_796_000_000_000_u64,
        });
        std::fs::write(directory.join(format!("{pid}.json")), file.to_string()).unwrap();
    }

    #[test]
    fn harness_sessions_no_record_may_stand_for_list_as_those_one_may() {
        let scratch = tempfile::tempdir().unwrap();
        let roster = RosterDir::open_or_create(&scratch.path().join("roster")).unwrap();
        let sessions = scratch.path().join("claude-sessions");
        std::fs::create_dir(&sessions).unwrap();
        std::fs::set_permissions(&sessions, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
        let owners: Vec<Owner> = (0..4).map(|_| owner()).collect();
        let pid = |index: usize| owners[index].0.id();
        let ticks = |index: usize| capture_identity(Pid::new(pid(index)).unwrap()).unwrap().start_ticks;
        // Owners 0 and 1 are registered. Owner 0's file is its record's
        // session (one row); the file at owner 1's pid claims another start
        // (a reused pid: its own row, dead); owners 2 and 3 have files alone;
        // malformed files lie between them.
        register_owner(&roster, &owners[0], scratch.path());
        register_owner(&roster, &owners[1], scratch.path());
        claude_code_file(&sessions, pid(0), ticks(0), scratch.path());
        claude_code_file(&sessions, pid(1), ticks(1) + 1, scratch.path());
        claude_code_file(&sessions, pid(2), ticks(2), scratch.path());
        claude_code_file(&sessions, pid(3), ticks(3), scratch.path());
        for name in ["1.json", "2.json", "3.json"] {
            std::fs::write(sessions.join(name), "{").unwrap();
        }
        let source = AdoptedSource { harness: crate::adopted::AdoptedHarness::ClaudeCode, path: sessions };
        let facts = RunningSystem::read();
        let every_file =
            crate::adopted::AdoptedDirectory::open(&source).unwrap().unwrap().rows(&facts).unwrap();
        let record_pids: HashSet<Pid> =
            [pid(0), pid(1)].into_iter().map(|pid| Pid::new(pid).unwrap()).collect();
        let may_be_taken: Vec<bool> = every_file
            .iter()
            .map(|row| crate::adopted::may_be_same_session_as_a_record(row, &record_pids))
            .collect();
        let names_may_be_taken: Vec<&str> = every_file
            .iter()
            .zip(&may_be_taken)
            .filter(|(_, may)| **may)
            .map(|(row, _)| row.file_name.as_str())
            .collect();
        let mut expected = [format!("claude-code/{}.json", pid(0)), format!("claude-code/{}.json", pid(1))];
        expected.sort();
        let mut names_may_be_taken: Vec<String> = names_may_be_taken.into_iter().map(str::to_owned).collect();
        names_may_be_taken.sort();
        assert_eq!(names_may_be_taken, expected, "only the files at a record's pid may be taken in");

        let filter = ListFilter { include_dead: true, adopt: vec![source], ..ListFilter::default() };
        let listing = list_sessions_presented(&roster, &filter, &facts, &|row: SessionRow| row).unwrap();
        let summary = listing.summary().clone();
        let rows: Vec<SessionRow> = listing.into_presented(&roster, &filter, &facts, &|row| row).collect();
        // Every harness file but owner 0's is a row of its own; owner 0's is
        // its record's row, which took the file's state.
        let mut adopted_names: Vec<&str> = rows
            .iter()
            .filter(|row| row.origin == Origin::ClaudeCode)
            .map(|row| row.file_name.as_str())
            .collect();
        adopted_names.sort_unstable();
        let mut expected_names: Vec<&str> = every_file
            .iter()
            .map(|row| row.file_name.as_str())
            .filter(|name| *name != format!("claude-code/{}.json", pid(0)))
            .collect();
        expected_names.sort_unstable();
        assert_eq!(adopted_names, expected_names);
        let merged =
            rows.iter().find(|row| row.origin == Origin::Roster && row.pid.map(Pid::get) == Some(pid(0)));
        assert_eq!(
            merged.and_then(|row| row.state.as_ref()).map(|state| state.activity),
            Some(Activity::Working)
        );
        let reused = rows.iter().find(|row| row.file_name == format!("claude-code/{}.json", pid(1))).unwrap();
        assert_eq!(reused.liveness(), Liveness::Dead, "{}", reused.verdict.reason);
        // The problems are told in the order the harness's directory lists
        // its files, settled at once or not.
        let problems: Vec<&str> = summary.problems.iter().map(|(name, _)| name.as_str()).collect();
        let listed_order: Vec<&str> =
            every_file.iter().filter(|row| row.problem.is_some()).map(|row| row.file_name.as_str()).collect();
        assert_eq!(problems, listed_order);
        assert_eq!(summary.shown, rows.len());
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
        let record_size =
            std::fs::metadata(record_path(&scratch.path().join("roster"), owners[5].0.id())).unwrap().len();
        for include_dead in [false, true] {
            let filter = ListFilter { include_dead, ..ListFilter::default() };
            let list =
                |budget| list_sessions_presented_within(&roster, &filter, budget, &facts, &row_json).unwrap();
            let whole = list(u64::MAX);
            let deferred = list(0);
            // Rows presented up front and deferred ones interleaved.
            let mixed = list(record_size * 5);
            assert!(deferred.kept.iter().all(|row| matches!(row, KeptRow::Deferred(_))));
            assert!(whole.kept.iter().all(|row| matches!(row, KeptRow::Presented(_))));
            let mixed_deferred = mixed.kept.iter().filter(|row| matches!(row, KeptRow::Deferred(_))).count();
            assert!((1..mixed.kept.len()).contains(&mixed_deferred), "{mixed_deferred} deferred");
            assert_eq!(deferred.summary, whole.summary, "include_dead {include_dead}");
            assert_eq!(mixed.summary, whole.summary, "include_dead {include_dead}");
            assert_eq!(deferred.summary.shown, if include_dead { 12 } else { 8 });
            let whole_rows: Vec<String> = whole.into_presented(&roster, &filter, &facts, &row_json).collect();
            assert_eq!(
                deferred.into_presented(&roster, &filter, &facts, &row_json).collect::<Vec<_>>(),
                whole_rows,
                "include_dead {include_dead}"
            );
            assert_eq!(
                mixed.into_presented(&roster, &filter, &facts, &row_json).collect::<Vec<_>>(),
                whole_rows,
                "include_dead {include_dead}"
            );
        }
    }

    #[test]
    fn rows_presented_on_several_threads_come_out_newest_first() {
        let scratch = tempfile::tempdir().unwrap();
        let roster = RosterDir::open_or_create(&scratch.path().join("roster")).unwrap();
        // More entries than one thread takes on alone (`map_in_parallel`);
        // malformed ones need no owner, and each file's mtime orders them.
        let names: Vec<String> = (1..=1_500).map(|pid| format!("{pid}.json")).collect();
        for name in &names {
            std::fs::write(scratch.path().join("roster/sessions").join(name), "{").unwrap();
        }
        let facts = RunningSystem::read();
        let filter = ListFilter::default();
        let listing = list_sessions_presented(&roster, &filter, &facts, &row_json).unwrap();
        assert_eq!(listing.summary.shown, names.len());
        let presented: Vec<String> = listing.into_presented(&roster, &filter, &facts, &row_json).collect();
        let mut expected: Vec<SessionRow> = names
            .iter()
            .map(|name| crate::session_row::read_session_row(&roster, name, &facts).unwrap())
            .collect();
        sort_newest_first(&mut expected);
        assert_eq!(presented, expected.into_iter().map(row_json).collect::<Vec<_>>());
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
        let keep_row = |row: SessionRow| row;
        let deferred = list_sessions_presented_within(&roster, &filter, 0, &facts, &keep_row).unwrap();
        assert_eq!(deferred.summary.shown, 3);
        // Between the first reading and the rows being handed out: one
        // record goes, one owner dies (its file unchanged: the verdict
        // reached stands), one owner registers again (a new file: judged
        // anew).
        let gone = owners[0].0.id();
        std::fs::remove_file(record_path(&scratch.path().join("roster"), gone)).unwrap();
        register_owner(&roster, &owners[2], &scratch.path().join("roster"));
        // After that registration, whose reaper pass would remove it.
        owners[1].0.kill().unwrap();
        owners[1].0.wait().unwrap();
        let rows: Vec<SessionRow> = deferred.into_presented(&roster, &filter, &facts, &keep_row).collect();
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
