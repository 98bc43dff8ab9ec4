//! `roster-list --watch`: the current rows, then one event per change until
//! interrupted, from the registry's own changes (inotify), its owners'
//! exits (pidfds) and the files their consent is decided from (inotify on
//! the directories they live in, `consent_inputs`), without polling.
//! `--until-gone` waits for one session to end, like `tail --pid`. The
//! events and their JSON schema are a stable contract (`EVENT_SCHEMA`).

mod consent_inputs;
mod messages;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use cli_support::{
    BadInput, Colour, CommonArgs, OutputFormat, escape_for_terminal, escape_path_for_terminal, local_clock,
    paint, process_env_os, roster_directory_choice,
};
use consent::{ConsentDecider, SessionConsent, record_file_name_of_marker, user_config_path};
use owner_liveness::{Liveness, Pid};
use registry_core::adopted::{
    AdoptedDirectory, AdoptedHarness, AdoptedSource, COPILOT_STARTING_GRACE, adopted_row_name,
    counterparts_of, is_same_session, merge_adopted, read_adopted_named,
};
use registry_core::{
    Change, ListFilter, Listing, Origin, Record, RegistryWatch, RosterDir, RunningSystem, SessionRow,
    StopWhen, Timestamp, list_sessions, read_session_row,
};

use registry_core::messages::{Message, OutcomeKind};

use self::consent_inputs::{ConsentConcerns, ConsentInputs};
use self::messages::{KnownQueues, MessageNews, message_json};
use crate::table::{EventColumns, TableOptions, text_row};

/// The version of the event objects `--watch --format json` prints; it
/// changes only when a key changes meaning or goes away.
pub const EVENT_SCHEMA: u32 = 1;

/// What happened to a session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// A row present when the watch started.
    Listed,
    /// A new session (or a new owner at a pid).
    Registered,
    /// The same owner wrote its record again (a new session id after
    /// `/clear`, a new directory, …).
    Refreshed,
    /// The session's consent decision changed.
    ConsentChanged,
    /// The owner exited (its record may still be on disk).
    Died,
    /// The record is gone (pruned, or the session ended).
    Removed,
    /// An entry that cannot be believed appeared or changed.
    Problem,
    /// Events may have been lost; everything was read again.
    Resync,
    /// A row that passed the field filters no longer does (re-registered
    /// under another agent name, moved out of `--cwd`, …): reported once,
    /// then nothing more about it while it does not match.
    Unmatched,
    /// A live session's state changed: it started working, went idle, or
    /// began waiting for its user (or waits for something else now).
    StateChanged,
    /// A message was queued for the session (`roster-send`).
    MessageQueued,
    /// A message for the session was handed to it by its delivery hook.
    MessageDelivered,
    /// A message for the session expired: its time to live ran out, or
    /// the session ended first.
    MessageExpired,
    /// A message for the session was refused at delivery: the session no
    /// longer accepted messages.
    MessageRefused,
    /// A message for the session was claimed by a delivery hook that
    /// stopped before it confirmed the hand-over.
    MessageUnconfirmed,
}

impl EventKind {
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Listed => "listed",
            EventKind::Registered => "registered",
            EventKind::Refreshed => "refreshed",
            EventKind::ConsentChanged => "consent-changed",
            EventKind::Died => "died",
            EventKind::Removed => "removed",
            EventKind::Problem => "problem",
            EventKind::Resync => "resync",
            EventKind::Unmatched => "unmatched",
            EventKind::StateChanged => "state-changed",
            EventKind::MessageQueued => "message-queued",
            EventKind::MessageDelivered => "message-delivered",
            EventKind::MessageExpired => "message-expired",
            EventKind::MessageRefused => "message-refused",
            EventKind::MessageUnconfirmed => "message-unconfirmed",
        }
    }

    fn colour(self) -> Colour {
        match self {
            EventKind::Listed
            | EventKind::Registered
            | EventKind::Refreshed
            | EventKind::MessageQueued
            | EventKind::MessageDelivered => Colour::Green,
            EventKind::ConsentChanged
            | EventKind::Problem
            | EventKind::Resync
            | EventKind::StateChanged
            | EventKind::MessageRefused
            | EventKind::MessageUnconfirmed => Colour::Yellow,
            EventKind::Died => Colour::Red,
            EventKind::Removed | EventKind::Unmatched | EventKind::MessageExpired => Colour::Dim,
        }
    }

    /// The event of a message's news: queued, or settled as its outcome
    /// says.
    fn of_message(news: &MessageNews) -> EventKind {
        match news {
            MessageNews::Queued(_) => EventKind::MessageQueued,
            MessageNews::Settled(message) => match message.outcome.as_ref().map(|outcome| outcome.kind) {
                Some(OutcomeKind::Delivered) => EventKind::MessageDelivered,
                Some(OutcomeKind::Expired) => EventKind::MessageExpired,
                Some(OutcomeKind::Refused) => EventKind::MessageRefused,
                Some(OutcomeKind::Unconfirmed) => EventKind::MessageUnconfirmed,
                None => EventKind::MessageQueued,
            },
        }
    }
}

/// How long an adopted session not proven yet is looked at again (a
/// Copilot CLI session between writing its lock file and locking its hold
/// file: a lock being taken sends no inotify event, and a claim is judged
/// dead only once its grace is over), and how often.
const SETTLING: Duration = Duration::from_secs(COPILOT_STARTING_GRACE.as_secs() + 1);
const SETTLING_LOOK: Duration = Duration::from_millis(50);

/// One known entry of `sessions/`: its row as last read, and its consent.
struct Known {
    row: SessionRow,
    consent: SessionConsent,
}

/// The watcher: what it knows, where it writes, and how.
struct Watcher<'a> {
    common: &'a CommonArgs,
    filter: &'a ListFilter,
    path: PathBuf,
    /// The harnesses' own session directories whose sessions are listed
    /// too (Claude Code's, Copilot CLI's).
    adopted: Vec<AdoptedSource>,
    roster: Option<RosterDir>,
    known: BTreeMap<String, Known>,
    decider: ConsentDecider,
    /// The running system the verdicts are judged against, read once.
    facts: RunningSystem,
    source: RegistryWatch,
    /// The records (file names) whose owners could not get a pidfd (the
    /// descriptor limit): judged again on every change of the registry
    /// instead.
    unwatched: HashSet<String>,
    said_unwatched: bool,
    /// The record file each watched process belongs to: an owner, or a
    /// member of its chain, whose exit may end the session.
    watched_processes: HashMap<Pid, String>,
    /// Where the consent of the sessions shown is decided from, followed
    /// for its changes; nothing is followed when nothing is shown (`-q`).
    inputs: ConsentInputs,
    follows_consent: bool,
    /// Some path could not be followed (the inotify watch limit, a
    /// directory that cannot be read): every consent is then decided again
    /// on every change of the registry.
    inputs_incomplete: bool,
    said_unfollowed: bool,
    /// Why the registry could not be opened last, said once per reason.
    said_unopenable: Option<String>,
    target: Option<String>,
    /// Whether the rows present at the start are printed (`listed`): with
    /// `--watch`, not with `--until-gone` alone, which prints the events.
    prints_listing: bool,
    /// The columns of the text lines, fixed when the watch starts.
    columns: Option<EventColumns>,
    /// What each session's message queue held when last looked at.
    queues: KnownQueues,
    out: std::io::StdoutLock<'static>,
    colour: bool,
    home: Option<PathBuf>,
    /// How the text lines are laid out (`--columns`, `--wide`, the width).
    table: TableOptions,
}

/// What ends this process's watch: SIGINT and SIGTERM, blocked from here
/// on and read through a signalfd, and its stdout's reader going away (a
/// pipe's writing end reports an error then; a terminal or a file never
/// does, and need not).
fn stop_when() -> anyhow::Result<StopWhen> {
    use anyhow::Context;
    use nix::sys::signal::{SigSet, Signal};
    use nix::sys::signalfd::{SfdFlags, SignalFd};
    use std::os::fd::AsFd;
    let mut signals = SigSet::empty();
    signals.add(Signal::SIGINT);
    signals.add(Signal::SIGTERM);
    signals
        .thread_block()
        .map_err(|errno| anyhow::anyhow!("blocking SIGINT and SIGTERM: {}", errno.desc()))?;
    let signal_fd = SignalFd::with_flags(&signals, SfdFlags::SFD_CLOEXEC | SfdFlags::SFD_NONBLOCK)
        .map_err(|errno| anyhow::anyhow!("signalfd: {}", errno.desc()))?;
    let readable = vec![signal_fd.as_fd().try_clone_to_owned().context("duplicating the signalfd")?];
    let hung_up = std::io::stdout().as_fd().try_clone_to_owned().into_iter().collect();
    Ok(StopWhen { readable, hung_up })
}

/// Raises the soft limit of open files to the hard limit, so thousands of
/// owners can each be watched through a pidfd; returns the limit now.
fn raise_open_file_limit() -> u64 {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    match getrlimit(Resource::RLIMIT_NOFILE) {
        Ok((soft, hard)) if soft < hard => {
            if setrlimit(Resource::RLIMIT_NOFILE, hard, hard).is_ok() {
                hard
            } else {
                soft
            }
        }
        Ok((soft, _)) => soft,
        Err(_) => 0,
    }
}

/// What a watch is asked for: the common flags, `--until-gone`'s session,
/// and whether the rows present at the start are printed (`--watch`).
pub struct WatchRequest<'a> {
    pub common: &'a CommonArgs,
    pub until_gone: Option<String>,
    pub prints_listing: bool,
    pub(crate) table: TableOptions,
}

/// Runs the watch until SIGINT, SIGTERM, a closed stdout, or (with
/// `--until-gone`) the end of the session named.
pub fn run_watch(request: WatchRequest<'_>, filter: &ListFilter) -> anyhow::Result<()> {
    raise_open_file_limit();
    let path = roster_directory_choice(request.common)?.path;
    // Opening a registry creates the subdirectories it lacks (one an older
    // roster made, or one made by hand, may hold only `sessions/`). Done
    // before the watch starts, their creation is no change to report: seen
    // by the watch, it was a resync before anything happened.
    RosterDir::open_existing(&path)?;
    // Watching starts before the first read, so no change falls between.
    let source = RegistryWatch::start(&path, stop_when()?)?;
    let follows_consent = !request.common.quiet;
    let mut watcher = Watcher {
        common: request.common,
        filter,
        roster: None,
        known: BTreeMap::new(),
        decider: ConsentDecider::new(&process_env_os),
        facts: RunningSystem::read(),
        source,
        unwatched: HashSet::new(),
        said_unwatched: false,
        watched_processes: HashMap::new(),
        inputs: ConsentInputs::new(user_config_path(&process_env_os)),
        follows_consent,
        inputs_incomplete: false,
        said_unfollowed: false,
        said_unopenable: None,
        target: request.until_gone,
        prints_listing: request.prints_listing,
        columns: None,
        queues: KnownQueues::default(),
        out: std::io::stdout().lock(),
        colour: request.common.colour_on_stdout(),
        home: process_env_os("HOME").map(PathBuf::from),
        table: request.table,
        path,
        adopted: filter.adopt.clone(),
    };
    watcher.start()?;
    if let Some(target) = &watcher.target
        && watcher.target_is_gone()
    {
        // A typo must not look like a session that finished.
        let target = escape_for_terminal(target);
        return Err(BadInput(format!(
            "--until-gone {target}: no running session has owner pid or session id {target} in {}; it \
             ended already or was never registered (`roster-list --all` shows the sessions registered)",
            escape_path_for_terminal(&watcher.path)
        ))
        .into());
    }
    loop {
        let settling = watcher.settling_rows();
        let changes = watcher.source.wait_at_most((!settling.is_empty()).then_some(SETTLING_LOOK))?;
        for name in settling {
            let now = watcher.read_known_row(&name);
            watcher.compare_and_report(&name, now)?;
        }
        // Changes of the consent inputs are gathered and acted on once,
        // after the registry's own: a burst of writes is one decision.
        let mut concerns = ConsentConcerns::default();
        for change in changes {
            if !watcher.apply(change, &mut concerns)? {
                return Ok(());
            }
        }
        watcher.judge_unwatched_owners()?;
        if watcher.inputs_incomplete {
            concerns.merge(ConsentConcerns::everyone());
        }
        watcher.refresh_consent(concerns)?;
        watcher.out.flush()?;
        if watcher.target_is_gone() {
            return Ok(());
        }
    }
}

impl Watcher<'_> {
    /// Reads everything, prints the current rows, watches each live owner
    /// and follows the consent inputs of the sessions shown.
    fn start(&mut self) -> anyhow::Result<()> {
        self.roster = self.open_roster()?;
        // The queues before the rows: a message queued after this is news,
        // whenever its row was read.
        if let Some(roster) = &self.roster {
            self.queues.learn_all(roster);
        }
        let rows = self.read_all()?;
        // Followed before any consent is decided, so that a change after
        // the decision is always seen.
        for row in &rows {
            self.follow_consent_of(row);
        }
        self.refresh_consent(ConsentConcerns::everyone())?;
        for row in rows {
            self.remember(row)?;
        }
        let listing = Listing::of_rows(self.known.values().map(|known| &known.row), self.filter);
        let listed = || listing.rows.iter().map(|row| (row, &self.known[&row.file_name].consent));
        let mut text = String::new();
        if self.common.output_format() == OutputFormat::Text {
            let now = Timestamp::now();
            let cells: Vec<Vec<String>> =
                listed().map(|(row, consent)| text_row(row, consent, self.home.as_deref(), now)).collect();
            let columns = EventColumns::new(&cells, &self.table, self.colour);
            if !self.common.quiet && std::io::IsTerminal::is_terminal(&std::io::stdout()) {
                text.push_str(&columns.header());
            }
            if let Some(note) = columns.dropped_note().filter(|_| !self.common.quiet) {
                let colour = self.common.colour_on_stderr();
                let _ = writeln!(std::io::stderr(), "{}", paint(&note, Colour::Dim, colour));
            }
            self.columns = Some(columns);
        }
        if self.prints_listing && !self.common.quiet {
            let at = Timestamp::now();
            for (row, consent) in listed() {
                text.push_str(&self.event_line(EventKind::Listed, at, Some(row), Some(consent), None, None));
            }
        }
        self.out.write_all(text.as_bytes())?;
        self.out.flush()?;
        Ok(())
    }

    /// The row named `name` as it is now: a roster record (with its state,
    /// and the state of the same session's adopted file when fresher), or
    /// an adopted session (`claude-code/<pid>.json`,
    /// `copilot/<session id>/inuse.<pid>.lock`).
    fn read_known_row(&self, name: &str) -> Option<SessionRow> {
        if adopted_row_name(name).is_some() {
            return read_adopted_named(name, &self.adopted, &self.facts);
        }
        let mut row = read_row(self.roster.as_ref()?, name, &self.facts)?;
        if let Some(record) = &row.record {
            for adopted in counterparts_of(record, &self.adopted, &self.facts) {
                merge_adopted(&mut row, &adopted);
            }
        }
        Some(row)
    }

    /// Whether the row `name` can be read now: an adopted session always, a
    /// roster record while the registry is open.
    fn can_read(&self, name: &str) -> bool {
        adopted_row_name(name).is_some() || self.roster.is_some()
    }

    /// What is followed to see the harnesses' sessions: their directories
    /// (and each Copilot CLI session's own), or while one does not exist
    /// the nearest directory above it.
    fn adopted_follow_paths(&self) -> Vec<PathBuf> {
        let mut paths = Vec::new();
        for source in &self.adopted {
            match AdoptedDirectory::open(source) {
                Ok(Some(directory)) => paths.extend(directory.followed_directories()),
                _ => paths.extend(source.path.ancestors().find(|path| path.is_dir()).map(Path::to_path_buf)),
            }
        }
        paths
    }

    /// A followed path changed (`name` in it, or the path itself when
    /// `None`): the sessions it may concern are looked at again, each as
    /// the roster record of the same session when there is one, else as a
    /// row of its own.
    fn adopted_entry_changed(
        &mut self,
        followed: &Path,
        name: Option<&std::ffi::OsStr>,
    ) -> anyhow::Result<()> {
        for source in self.adopted.clone() {
            let Some(names) = self.adopted_names_concerned(&source, followed, name)? else { continue };
            for file in names {
                self.adopted_file_changed(&format!("{}{file}", source.harness.row_prefix()))?;
            }
        }
        Ok(())
    }

    /// The names of `source` a change of `name` in `followed` concerns;
    /// `None` when it does not concern `source`.
    fn adopted_names_concerned(
        &mut self,
        source: &AdoptedSource,
        followed: &Path,
        name: Option<&std::ffi::OsStr>,
    ) -> anyhow::Result<Option<Vec<String>>> {
        let directory_path = &source.path;
        let name = name.and_then(|name| name.to_str());
        let in_directory = followed == directory_path.as_path();
        let session_directory =
            source.harness == AdoptedHarness::Copilot && followed.parent() == Some(directory_path.as_path());
        if !in_directory && !session_directory {
            // Above the directory, only a change on the way to it matters.
            let on_the_way = directory_path.starts_with(followed)
                && name.is_none_or(|name| directory_path.starts_with(followed.join(name)));
            if !on_the_way {
                return Ok(None);
            }
        }
        let one = match (source.harness, name) {
            (AdoptedHarness::ClaudeCode, Some(name)) if in_directory => Some(
                vec![name.to_owned()]
                    .into_iter()
                    .filter(|name| !name.starts_with('.') && name.ends_with(".json"))
                    .collect(),
            ),
            (AdoptedHarness::Copilot, Some(name)) if session_directory => {
                let session = followed.file_name().and_then(|session| session.to_str()).unwrap_or_default();
                Some(self.copilot_names_of(source, session, Some(name)))
            }
            _ => None,
        };
        if let Some(names) = one {
            return Ok(Some(names));
        }
        // The directory itself, one above it, or a Copilot CLI session's
        // directory coming or going: every session again, and the
        // directories followed where they are now.
        self.refresh_consent(ConsentConcerns::default())?;
        let on_disk = AdoptedDirectory::open(source)
            .ok()
            .flatten()
            .map(|directory| directory.names())
            .unwrap_or_default();
        let prefix = source.harness.row_prefix();
        let known = self.known.keys().filter_map(|name| name.strip_prefix(prefix).map(str::to_owned));
        let mut all: Vec<String> = on_disk.into_iter().chain(known).collect();
        all.sort();
        all.dedup();
        Ok(Some(all))
    }

    /// The lock files of the Copilot CLI session `session` a change of
    /// `changed` there concerns: that lock file, the lock file of a hold
    /// file, or every lock file of the session (its workspace.yaml), with
    /// those known before.
    fn copilot_names_of(&self, source: &AdoptedSource, session: &str, changed: Option<&str>) -> Vec<String> {
        let pid_of =
            |name: &str, suffix: &str| name.strip_prefix("inuse.")?.strip_suffix(suffix).map(str::to_owned);
        if let Some(changed) = changed {
            if let Some(pid) = pid_of(changed, ".lock").or_else(|| pid_of(changed, ".hold")) {
                return vec![format!("{session}/inuse.{pid}.lock")];
            }
            if changed != "workspace.yaml" && changed != "events.jsonl" {
                return Vec::new();
            }
        }
        let prefix = format!("{}{session}/", source.harness.row_prefix());
        let known = self
            .known
            .keys()
            .filter_map(|name| name.strip_prefix(&prefix).map(|file| format!("{session}/{file}")));
        let on_disk: Vec<String> = AdoptedDirectory::open(source)
            .ok()
            .flatten()
            .map(|directory| {
                directory
                    .names()
                    .into_iter()
                    .filter(|name| name.starts_with(&format!("{session}/")))
                    .collect()
            })
            .unwrap_or_default();
        let mut all: Vec<String> = on_disk.into_iter().chain(known).collect();
        all.sort();
        all.dedup();
        all
    }

    /// The adopted file `adopted_name` changed: reported as the roster
    /// row of the same session when one is known, else as its own row.
    fn adopted_file_changed(&mut self, adopted_name: &str) -> anyhow::Result<()> {
        let now = self.read_known_row(adopted_name);
        let roster_name = now.as_ref().and_then(|adopted| {
            self.known.iter().find_map(|(name, known)| {
                let same = adopted_row_name(name).is_none() && is_same_session(&known.row, adopted);
                same.then(|| name.clone())
            })
        });
        match roster_name {
            // One session: its roster row, with the state it may take.
            Some(roster_name) => {
                let now = self.read_known_row(&roster_name);
                self.compare_and_report(&roster_name, now)?;
                // Shown as roster's row now, not as one of its own.
                if self.known.contains_key(adopted_name) {
                    self.compare_and_report(adopted_name, None)?;
                }
                Ok(())
            }
            None => self.compare_and_report(adopted_name, now),
        }
    }

    /// The adopted rows not proven yet and younger than `SETTLING`: a
    /// session starting whose lock is not held yet, looked at again.
    fn settling_rows(&self) -> Vec<String> {
        let now = registry_core::Timestamp::now().unix_nanos();
        self.known
            .iter()
            .filter(|(name, known)| {
                adopted_row_name(name).is_some_and(|(harness, _)| harness == AdoptedHarness::Copilot)
                    && known.row.liveness() == Liveness::Unknown
                    && known.row.problem.is_none()
                    && now - known.row.registered_at.unix_nanos() < SETTLING.as_nanos() as i128
            })
            .map(|(name, _)| name.clone())
            .collect()
    }

    fn open_roster(&self) -> anyhow::Result<Option<RosterDir>> {
        Ok(RosterDir::open_existing(&self.path)?)
    }

    /// Opens the registry again where its path leads now. One that cannot
    /// be opened (its path now leads to a directory that is not trusted)
    /// is watched as if absent, and said on stderr once per reason: the
    /// watch goes on and opens it as soon as it changes.
    fn reopen_roster(&mut self) -> Option<RosterDir> {
        match self.open_roster() {
            Ok(roster) => {
                self.said_unopenable = None;
                roster
            }
            Err(error) => {
                let reason = format!("{error:#}");
                if self.said_unopenable.as_ref() != Some(&reason) {
                    eprintln!(
                        "roster-list: {reason}; watching it as if it were absent until it changes and can be \
                         opened"
                    );
                    self.said_unopenable = Some(reason);
                }
                None
            }
        }
    }

    /// Every entry of `sessions/`, dead ones included, with the harnesses'
    /// sessions no record stands for; only the latter while the registry
    /// does not exist, as the listing lists them.
    fn read_all(&mut self) -> anyhow::Result<Vec<SessionRow>> {
        let Some(roster) = &self.roster else {
            return Ok(registry_core::adopted::read_adopted(&self.adopted, &self.facts).0);
        };
        let everything =
            ListFilter { include_dead: true, adopt: self.adopted.clone(), ..ListFilter::default() };
        Ok(list_sessions(roster, &everything, &self.facts)?.rows)
    }

    /// Stores a row as known, with its consent, watches its owner and
    /// every member of its chain (the session ends with the last of them),
    /// and follows the files its consent is decided from.
    fn remember(&mut self, row: SessionRow) -> anyhow::Result<()> {
        // A harness's session is listed without roster's registry too.
        if self.roster.is_none() && adopted_row_name(&row.file_name).is_none() {
            return Ok(());
        }
        if self.follow_consent_of(&row) {
            self.refresh_consent(ConsentConcerns::default())?;
        }
        self.watch_owners(&row);
        let consent = self.decide_consent(&row);
        self.known.insert(row.file_name.clone(), Known { row, consent });
        Ok(())
    }

    /// Whether the consent of `row` is shown, so its inputs are followed:
    /// a live session's that passes the filters.
    fn shows_consent_of(&self, row: &SessionRow) -> bool {
        self.follows_consent && row.liveness() == Liveness::Alive && self.filter.admits(row)
    }

    /// Follows (or stops following) the consent inputs of `row`; `true`
    /// when that may need paths followed anew.
    fn follow_consent_of(&mut self, row: &SessionRow) -> bool {
        match (&row.record, self.shows_consent_of(row)) {
            (Some(record), true) => self.inputs.follow_session(&row.file_name, Path::new(&record.cwd)),
            _ => {
                self.inputs.unfollow_session(&row.file_name);
                false
            }
        }
    }

    fn decide_consent(&self, row: &SessionRow) -> SessionConsent {
        match &self.roster {
            Some(roster) => self.decider.for_row(roster, row, &self.facts),
            // No registry, no marker: a harness's session is decided from
            // its directory, as the listing decides it, and the row of an
            // owner found gone since (`report_a_death_not_yet_seen`)
            // accepts nothing.
            None => self.decider.for_row_without_registry(row),
        }
    }

    fn watch_owners(&mut self, row: &SessionRow) {
        if let (Some(record), Liveness::Alive) = (&row.record, row.liveness()) {
            let owner = record.pid();
            for member in record.identity().members() {
                match self.source.watch_owner(member.pid) {
                    Ok(_) => {
                        self.watched_processes.insert(member.pid, row.file_name.clone());
                    }
                    Err(errno) => {
                        self.unwatched.insert(row.file_name.clone());
                        if !self.said_unwatched {
                            self.said_unwatched = true;
                            eprintln!(
                                "roster-list: watching owner {owner} and later ones without a pidfd ({}): \
                                 after {} owners the open-file limit is reached, so their exits are seen on \
                                 the next change of the registry; raise `ulimit -n` to see them at once",
                                errno.desc(),
                                self.source.watched_owners()
                            );
                        }
                    }
                }
            }
        }
    }

    fn forget(&mut self, file_name: &str) -> Option<Known> {
        let known = self.known.remove(file_name)?;
        if let Some(record) = known.row.record.as_ref() {
            for member in record.identity().members() {
                if self.watched_processes.get(&member.pid).is_some_and(|name| name == file_name) {
                    self.watched_processes.remove(&member.pid);
                    self.source.unwatch_owner(member.pid);
                }
            }
        }
        self.unwatched.remove(file_name);
        self.inputs.unfollow_session(file_name);
        Some(known)
    }

    /// Acts on one change, or adds what it concerns to `concerns` for
    /// `refresh_consent`; `false` to stop.
    fn apply(&mut self, change: Change, concerns: &mut ConsentConcerns) -> anyhow::Result<bool> {
        match change {
            Change::Stop => return Ok(false),
            Change::SessionEntry(name) => self.session_entry_changed(&name)?,
            Change::ConsentEntry(name) => self.consent_entry_changed(&name)?,
            // A state file shares its record's name: the row is read again
            // with it, and a different state is reported.
            Change::StateEntry(name) => self.session_entry_changed(&name)?,
            Change::MessageQueue(record) => self.message_queue_changed(&record)?,
            Change::OwnerExited(pid) => self.owner_exited(pid)?,
            Change::Resync(why) => self.resync(&why)?,
            Change::Vanished(why) => self.vanished(&why)?,
            Change::Followed { path, name } => {
                // A harness's sessions directory, a Copilot CLI session's
                // own, or one above while it does not exist (the one
                // followed may have been created).
                if self.adopted.iter().any(|source| {
                    source.path.starts_with(&path) || path.parent() == Some(source.path.as_path())
                }) {
                    self.adopted_entry_changed(&path, name.as_deref())?;
                }
                concerns.merge(self.inputs.concerns(&path, name.as_deref()));
            }
            Change::FollowedLost => concerns.merge(ConsentConcerns::everyone()),
        }
        Ok(true)
    }

    /// The message queue of the record `record` changed: each message
    /// newly queued or settled there is reported, once, with the session's
    /// row and its count of messages waiting as it is now.
    fn message_queue_changed(&mut self, record: &str) -> anyhow::Result<()> {
        let Some(roster) = &self.roster else { return Ok(()) };
        let news = self.queues.look_again(roster, record);
        let Some(known) = self.known.get_mut(record) else { return Ok(()) };
        if known.row.record.is_none() || known.row.origin != Origin::Roster {
            return Ok(());
        }
        known.row.messages_pending = news.pending;
        let (row, consent) = (known.row.clone(), known.consent.clone());
        for item in &news.news {
            self.emit_message(EventKind::of_message(item), &row, &consent, item.message())?;
        }
        Ok(())
    }

    fn session_entry_changed(&mut self, name: &str) -> anyhow::Result<()> {
        if self.roster.is_none() {
            // Not open: missing until now, or not trusted. Read everything
            // once it can be opened.
            return match self.reopen_roster() {
                Some(_) => self.resync("the registry directory appeared"),
                None => Ok(()),
            };
        }
        let now = self.read_known_row(name);
        self.compare_and_report(name, now)
    }

    /// Reports what differs between the known row named `name` and `now`;
    /// for a roster record, also the harness's sessions it stands for, or
    /// stood for: one session is one row, the record's, as in a listing
    /// (docs/contract.md §6.5). A harness's session a record takes in is
    /// `removed` as a row of its own before the record's event, and one a
    /// record no longer stands for (its record removed, or now another
    /// owner's) is a row of its own again after it, its owner watched.
    fn compare_and_report(&mut self, name: &str, now: Option<SessionRow>) -> anyhow::Result<()> {
        if adopted_row_name(name).is_some() {
            return self.compare_and_report_row(name, now);
        }
        let before = self.known.get(name).and_then(|known| known.row.record.clone());
        let mut counterparts = Vec::new();
        for record in before.iter().chain(now.as_ref().and_then(|now| now.record.as_ref())) {
            for adopted in counterparts_of(record, &self.adopted, &self.facts) {
                if !counterparts.iter().any(|seen: &SessionRow| seen.file_name == adopted.file_name) {
                    counterparts.push(adopted);
                }
            }
        }
        let (taken, left): (Vec<SessionRow>, Vec<SessionRow>) = counterparts
            .into_iter()
            .partition(|adopted| now.as_ref().is_some_and(|now| is_same_session(now, adopted)));
        for adopted in &taken {
            if self.known.contains_key(&adopted.file_name) {
                self.compare_and_report_row(&adopted.file_name, None)?;
            }
        }
        self.compare_and_report_row(name, now)?;
        for adopted in left {
            let taken_elsewhere = self.known.iter().any(|(other, known)| {
                other != name && adopted_row_name(other).is_none() && is_same_session(&known.row, &adopted)
            });
            if !taken_elsewhere {
                let adopted_name = adopted.file_name.clone();
                self.compare_and_report_row(&adopted_name, Some(adopted))?;
            }
        }
        Ok(())
    }

    /// Reports what differs between the known row named `name` and `now`.
    fn compare_and_report_row(&mut self, name: &str, now: Option<SessionRow>) -> anyhow::Result<()> {
        // A claim proven alive whose process is on its way out has let its
        // lock go: its death is what comes next, through its pidfd.
        if let (Some(known), Some(now)) = (self.known.get(name), &now)
            && now.origin != Origin::Roster
            && known.row.liveness() == Liveness::Alive
            && now.liveness() == Liveness::Unknown
            && known.row.pid == now.pid
            && known.row.pid.is_some_and(registry_core::adopted::process_is_exiting)
            && known.row.judged_again(&self.facts).liveness() == Liveness::Alive
        {
            return Ok(());
        }
        let before = match self.forget(name) {
            Some(before) => Some(self.report_a_death_not_yet_seen(before, now.as_ref())?),
            None => None,
        };
        // A harness's claim that was dead is dead still, whatever its file
        // says since (the reason may be worded anew, or its lock file be
        // young enough to read as a session starting): nothing to report
        // until the claim is proven alive again.
        if let (Some(known), Some(now)) = (&before, &now)
            && now.origin != Origin::Roster
            && known.row.liveness() == Liveness::Dead
            && now.liveness() != Liveness::Alive
            && known.row.pid == now.pid
        {
            let known = before.expect("matched above");
            self.known.insert(name.to_owned(), known);
            return Ok(());
        }
        let Some(row) = now else {
            if let Some(before) = before {
                self.emit(EventKind::Removed, Some(&before.row), Some(&before.consent), None)?;
            }
            return Ok(());
        };
        let kind = match &before {
            None if row.problem.is_some() => Some(EventKind::Problem),
            None => Some(EventKind::Registered),
            Some(before) => change_between(&before.row, &row),
        };
        self.remember(row)?;
        let Some(known) = self.known.get(name) else { return Ok(()) };
        let consent_changed =
            before.as_ref().is_some_and(|before| consent_differs(&before.consent, &known.consent));
        let state_changed = before.as_ref().is_some_and(|before| state_differs(&before.row, &known.row));
        let (row, consent) = (known.row.clone(), known.consent.clone());
        if let Some(kind) = kind.or(consent_changed.then_some(EventKind::ConsentChanged)) {
            let was_matched = before.as_ref().is_some_and(|before| self.filter.admits(&before.row));
            if was_matched && !self.filter.admits(&row) {
                self.emit(EventKind::Unmatched, Some(&row), Some(&consent), None)?;
            } else {
                self.emit(kind, Some(&row), Some(&consent), None)?;
            }
        }
        if state_changed {
            self.emit(EventKind::StateChanged, Some(&row), Some(&consent), None)?;
        }
        Ok(())
    }

    /// A watcher that fell behind (its reader paused, or the process
    /// stopped) may learn that a record went away, or was replaced by
    /// another owner's, only after that session's owner exited, and before
    /// it reads the owner's pidfd. The last row seen is judged again now
    /// through the identity it records: an owner that is gone is reported
    /// `died` first, and the row that follows is the dead one.
    fn report_a_death_not_yet_seen(
        &mut self,
        before: Known,
        now: Option<&SessionRow>,
    ) -> anyhow::Result<Known> {
        let Some(record) = &before.row.record else { return Ok(before) };
        let still_its_record =
            now.and_then(|now| now.record.as_ref()).is_some_and(|now| same_recorded_owner(record, now));
        if still_its_record || before.row.liveness() == Liveness::Dead {
            return Ok(before);
        }
        let judged = before.row.judged_again(&self.facts);
        if judged.liveness() != Liveness::Dead {
            return Ok(before);
        }
        let consent = self.decide_consent(&judged);
        self.emit(EventKind::Died, Some(&judged), Some(&consent), None)?;
        Ok(Known { row: judged, consent })
    }

    fn consent_entry_changed(&mut self, marker_file_name: &str) -> anyhow::Result<()> {
        self.decide_consent_again(record_file_name_of_marker(marker_file_name))
    }

    /// Decides the consent of the known row `name` again, and reports it
    /// when it changed.
    fn decide_consent_again(&mut self, name: &str) -> anyhow::Result<()> {
        let Some(known) = self.known.get(name) else { return Ok(()) };
        let consent = self.decide_consent(&known.row);
        if !consent_differs(&known.consent, &consent) {
            return Ok(());
        }
        // The change may follow the owner's exit, not yet read from its
        // pidfd (a pruned marker, while this watcher was behind): then it
        // is that exit which is reported, from the record as it is now.
        if known.row.liveness() != Liveness::Dead
            && known.row.judged_again(&self.facts).liveness() == Liveness::Dead
        {
            let now = self.read_known_row(name);
            return self.compare_and_report(name, now);
        }
        let row = known.row.clone();
        self.emit(EventKind::ConsentChanged, Some(&row), Some(&consent), None)?;
        if let Some(known) = self.known.get_mut(name) {
            known.consent = consent;
        }
        Ok(())
    }

    /// Brings the followed consent inputs up to date, then decides again
    /// the consent of the sessions `concerns` names and of those whose
    /// inputs were followed anew, reporting each that changed. Following
    /// comes first: a change after a file is read is then always seen.
    fn refresh_consent(&mut self, mut concerns: ConsentConcerns) -> anyhow::Result<()> {
        if !self.follows_consent {
            let adopted: std::collections::BTreeSet<PathBuf> =
                self.adopted_follow_paths().into_iter().collect();
            let outcome = self.source.follow(&adopted);
            self.say_unfollowed(&outcome.unfollowable);
            return Ok(());
        }
        self.inputs.forget_paths_of(&concerns);
        // A path followed anew may move what is to be followed (a chain
        // looked at again finds the nearest repository file elsewhere):
        // a few rounds settle it, each one a change that raced this one.
        for _ in 0..FOLLOW_ROUNDS {
            let mut wanted = self.inputs.wanted_paths();
            wanted.extend(self.adopted_follow_paths());
            let outcome = self.source.follow(&wanted);
            self.say_unfollowed(&outcome.unfollowable);
            if outcome.newly_followed.is_empty() {
                break;
            }
            let mut anew = ConsentConcerns::default();
            for path in &outcome.newly_followed {
                anew.merge(self.inputs.concerns_of_newly_followed(path));
            }
            self.inputs.forget_paths_of(&anew);
            concerns.merge(anew);
        }
        if concerns.is_empty() {
            return Ok(());
        }
        if concerns.everyone {
            self.decider.forget_files(&process_env_os);
        } else {
            for changed in &concerns.below {
                self.decider.forget_directories_below(changed);
            }
        }
        for name in self.inputs.sessions_concerned(&concerns) {
            self.decide_consent_again(&name)?;
        }
        Ok(())
    }

    /// Says once that some consent input cannot be followed, and falls
    /// back to deciding every consent again on each change of the
    /// registry, for as long as one cannot.
    fn say_unfollowed(&mut self, unfollowable: &[(PathBuf, String)]) {
        self.inputs_incomplete = !unfollowable.is_empty();
        let Some((path, why)) = unfollowable.first() else { return };
        if self.said_unfollowed {
            return;
        }
        self.said_unfollowed = true;
        eprintln!(
            "roster-list: cannot follow {} for consent changes ({why}), so consent is decided again on \
             every change of the registry instead",
            path.display()
        );
    }

    fn owner_exited(&mut self, pid: Pid) -> anyhow::Result<()> {
        // Only processes of known records are watched.
        let Some(name) = self.watched_processes.remove(&pid) else { return Ok(()) };
        if !self.can_read(&name) {
            return Ok(());
        }
        let now = self.read_known_row(&name);
        self.compare_and_report(&name, now)
    }

    /// Reads everything again and reports every difference.
    fn resync(&mut self, why: &str) -> anyhow::Result<()> {
        self.emit(EventKind::Resync, None, None, Some(why))?;
        self.roster = self.reopen_roster();
        self.decider.forget_files(&process_env_os);
        let rows = self.read_all()?;
        let mut now: BTreeMap<String, SessionRow> =
            rows.into_iter().map(|row| (row.file_name.clone(), row)).collect();
        let names: Vec<String> =
            self.known.keys().chain(now.keys()).cloned().collect::<HashSet<_>>().into_iter().collect();
        let mut names = names;
        names.sort();
        for name in names {
            let row = now.remove(&name);
            self.compare_and_report(&name, row)?;
        }
        // The queues too: what was queued or settled meanwhile.
        for record in self.queues.all_records(self.roster.as_ref()) {
            self.message_queue_changed(&record)?;
        }
        Ok(())
    }

    /// The registry directory is gone: every session in it with it.
    fn vanished(&mut self, why: &str) -> anyhow::Result<()> {
        self.emit(EventKind::Resync, None, None, Some(why))?;
        self.roster = None;
        self.queues.forget_all();
        // Records first: a harness's session one of them stood for is a
        // row of its own again, as the listing shows it without a registry.
        let (adopted, records): (Vec<String>, Vec<String>) =
            self.known.keys().cloned().partition(|name| adopted_row_name(name).is_some());
        for name in records {
            self.compare_and_report(&name, None)?;
        }
        for name in adopted {
            let now = self.read_known_row(&name);
            self.compare_and_report(&name, now)?;
        }
        Ok(())
    }

    /// Owners without a pidfd are judged again after every change.
    fn judge_unwatched_owners(&mut self) -> anyhow::Result<()> {
        let names: Vec<String> = self.unwatched.iter().cloned().collect();
        for name in names {
            if !self.can_read(&name) {
                return Ok(());
            }
            let now = self.read_known_row(&name);
            if now.as_ref().is_some_and(|row| row.liveness() != Liveness::Alive) {
                self.unwatched.remove(&name);
                self.compare_and_report(&name, now)?;
            }
        }
        Ok(())
    }

    /// Prints one event, when its row passes the field filters (an
    /// `unmatched` row is the one that no longer does).
    fn emit(
        &mut self,
        kind: EventKind,
        row: Option<&SessionRow>,
        consent: Option<&SessionConsent>,
        reason: Option<&str>,
    ) -> anyhow::Result<()> {
        self.print_event(kind, row, consent, reason, None)
    }

    /// Prints one event about a message of the session of `row`, when the
    /// row passes the filters (`emit`).
    fn emit_message(
        &mut self,
        kind: EventKind,
        row: &SessionRow,
        consent: &SessionConsent,
        message: &Message,
    ) -> anyhow::Result<()> {
        self.print_event(kind, Some(row), Some(consent), None, Some(message))
    }

    fn print_event(
        &mut self,
        kind: EventKind,
        row: Option<&SessionRow>,
        consent: Option<&SessionConsent>,
        reason: Option<&str>,
        message: Option<&Message>,
    ) -> anyhow::Result<()> {
        // With --state, the moments a session enters that state are what
        // is asked for: the rows listed in it, then its state changes into it.
        let state_filtered = self.filter.state.is_some()
            && (!matches!(kind, EventKind::Listed | EventKind::StateChanged)
                || row.is_some_and(|row| !self.filter.admits_state(row)));
        let filtered_out = state_filtered
            || (kind != EventKind::Unmatched && row.is_some_and(|row| !self.filter.admits(row)));
        if filtered_out || self.common.quiet {
            return Ok(());
        }
        let line = self.event_line(kind, Timestamp::now(), row, consent, reason, message);
        self.out.write_all(line.as_bytes())?;
        self.out.flush()?;
        Ok(())
    }

    /// One event as printed: a line of text in the listing's columns, or
    /// a line of JSON.
    fn event_line(
        &self,
        kind: EventKind,
        at: Timestamp,
        row: Option<&SessionRow>,
        consent: Option<&SessionConsent>,
        reason: Option<&str>,
        message: Option<&Message>,
    ) -> String {
        match (self.common.output_format(), &self.columns) {
            (OutputFormat::Text, Some(columns)) => {
                event_text(columns, kind, at, row, consent, reason, self.home.as_deref())
            }
            _ => format!("{}\n", event_json(kind, at, row, consent, reason, message)),
        }
    }

    /// With `--until-gone`: whether no live or unknown session matches the
    /// target (a pid, or a session id) any more.
    fn target_is_gone(&self) -> bool {
        let Some(target) = &self.target else { return false };
        !self.known.values().any(|known| {
            let Some(record) = &known.row.record else { return false };
            let named = record.pid().to_string() == *target || record.session_id.as_deref() == Some(target);
            named && known.row.liveness() != Liveness::Dead
        })
    }
}

/// How many times `refresh_consent` follows paths anew before it lets the
/// next change finish the work: each round is a change that raced it.
const FOLLOW_ROUNDS: usize = 4;

/// Whether two records name the same owner process.
fn same_recorded_owner(old: &Record, new: &Record) -> bool {
    old.owner.pid == new.owner.pid
        && old.owner.start_ticks == new.owner.start_ticks
        && old.owner.boot_id == new.owner.boot_id
        && old.owner.pidfs_ino == new.owner.pidfs_ino
}

/// What kind of change turned `before` into `now` (same file name), if any
/// worth an event.
fn change_between(before: &SessionRow, now: &SessionRow) -> Option<EventKind> {
    // A harness's claim names its owner by pid alone until it is proven
    // (start ticks 0): the same claim proven, or dead after it was, is one
    // session.
    let claim = now.origin != Origin::Roster;
    let unproven = |row: &SessionRow| row.record.as_ref().is_some_and(|record| record.owner.start_ticks == 0);
    if claim
        && (unproven(before) || unproven(now))
        && let (Some(old), Some(new)) = (&before.record, &now.record)
        && old.owner.pid == new.owner.pid
    {
        return if now.liveness() == Liveness::Dead {
            (before.liveness() != Liveness::Dead).then_some(EventKind::Died)
        } else {
            (old != new || before.liveness() != now.liveness()).then_some(EventKind::Refreshed)
        };
    }
    match (&before.record, &now.record) {
        (_, None) => {
            let same_problem = before.problem == now.problem;
            (!same_problem).then_some(EventKind::Problem)
        }
        (None, Some(_)) => Some(EventKind::Registered),
        (Some(old), Some(new)) => {
            if !same_recorded_owner(old, new) {
                Some(EventKind::Registered)
            } else if before.liveness() != Liveness::Dead && now.liveness() == Liveness::Dead {
                Some(EventKind::Died)
            } else if old != new {
                Some(EventKind::Refreshed)
            } else {
                None
            }
        }
    }
}

/// Whether a live session's state changed in what a row shows of it: the
/// state and what it waits for (an owner that died is a `died` event).
fn state_differs(before: &SessionRow, now: &SessionRow) -> bool {
    let words = |row: &SessionRow| row.shown_state().map(|state| (state.activity, state.waiting_for.clone()));
    before.liveness() == Liveness::Alive && now.liveness() == Liveness::Alive && words(before) != words(now)
}

/// An entry of `sessions/` read and judged, with its state.
fn read_row(roster: &RosterDir, name: &str, facts: &RunningSystem) -> Option<SessionRow> {
    let mut row = read_session_row(roster, name, facts)?;
    row.read_state(roster, None);
    row.read_messages(roster, None);
    Some(row)
}

/// Whether a decision changed in anything a row shows of it: `consent`,
/// `should_arm`, `consent_reason`, or the text column.
fn consent_differs(before: &SessionConsent, now: &SessionConsent) -> bool {
    before != now
}

/// One NDJSON line: `{"schema", "event", "at", "row", ["reason"],
/// ["message"]}`.
fn event_json(
    kind: EventKind,
    at: Timestamp,
    row: Option<&SessionRow>,
    consent: Option<&SessionConsent>,
    reason: Option<&str>,
    message: Option<&Message>,
) -> String {
    let row = match (row, consent) {
        (Some(row), Some(consent)) => row.to_json(consent.row_consent()),
        _ => serde_json::Value::Null,
    };
    let mut event = serde_json::json!({
        "schema": EVENT_SCHEMA,
        "event": kind.as_str(),
        "at": at.to_rfc3339_millis(),
        "row": row,
    });
    if let Some(reason) = reason {
        event["reason"] = reason.into();
    }
    if let Some(message) = message {
        event["message"] = message_json(message);
    }
    event.to_string()
}

/// One line for people, in the listing's columns (`EventColumns`): local
/// time, event, then the row's cells as the table shows them; for an event
/// about no row, why.
fn event_text(
    columns: &EventColumns,
    kind: EventKind,
    at: Timestamp,
    row: Option<&SessionRow>,
    consent: Option<&SessionConsent>,
    reason: Option<&str>,
    home: Option<&Path>,
) -> String {
    let clock = local_clock(at);
    match (row, consent) {
        (Some(row), Some(consent)) => {
            let cells = text_row(row, consent, home, at);
            columns.row_line(&clock, kind.as_str(), kind.colour(), &cells)
        }
        _ => columns.reason_line(&clock, kind.as_str(), kind.colour(), reason.unwrap_or_default()),
    }
}
