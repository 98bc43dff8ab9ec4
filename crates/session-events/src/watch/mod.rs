//! The watch of this machine's sessions: the registry's own changes
//! (inotify), its owners' exits (pidfds), the harnesses' own session files
//! and the files consent is decided from, turned into events without
//! polling and handed to a `Sink`. What each session looked like last is
//! kept here; which event a difference is, `judge.rs` says.
//!
//! The rooms: this file holds the watch and its reading of the registry;
//! `report.rs` compares a reading with what was known and reports it;
//! `adopted.rs` follows Claude Code's and Copilot CLI's files;
//! `consent_changes.rs` decides consent again when its inputs change, which
//! `consent_inputs.rs` names; `queues.rs` keeps each message queue's news.

mod adopted;
mod consent_changes;
mod consent_inputs;
mod queues;
mod report;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ffi::OsString;
use std::path::PathBuf;

use consent::{ConsentDecider, SessionConsent, user_config_path};
use owner_liveness::{Liveness, Pid};
use registry_core::adopted::{
    AdoptedSource, adopted_row_name, counterparts_of, merge_adopted, read_adopted_named,
};
use registry_core::{
    Change, ListFilter, Listing, RegistryWatch, RosterDir, RunningSystem, SessionRow, StopWhen, Timestamp,
    list_sessions, read_session_row,
};

use self::consent_inputs::{ConsentConcerns, ConsentInputs};
use self::queues::KnownQueues;
use registry_core::messages::MessageView;

use crate::event::{Event, EventKind};
use crate::judge::reported_under;
use crate::sink::{Notice, Sink};

/// How often the adopted sessions still settling (`adopted.rs`) are looked
/// at again.
const SETTLING_LOOK: std::time::Duration = std::time::Duration::from_millis(50);

/// What a watch is asked to watch, and with what.
pub struct WatchConfig {
    /// The registry directory (it need not exist yet).
    pub path: PathBuf,
    /// Which sessions' events are reported, and the harnesses' own session
    /// directories whose sessions are watched too (`adopt`).
    pub filter: ListFilter,
    /// Whether consent inputs are followed, so that a consent changed by a
    /// file other than its marker is reported as it changes. A consumer
    /// that shows no consent passes `false`.
    pub follows_consent: bool,
    /// The environment consent is decided with (`XDG_CONFIG_HOME`, `HOME`,
    /// …): the process's own, as the consumer reads it.
    pub env: fn(&str) -> Option<OsString>,
    /// What ends the watch: descriptors that become readable (a signalfd,
    /// a pipe another thread writes to) or hang up (stdout).
    pub stop_when: StopWhen,
}

/// One known entry of `sessions/` (or adopted file): its row as last read,
/// and its consent.
struct Known {
    row: SessionRow,
    consent: SessionConsent,
}

/// A running watch of this machine's sessions, handing its events to `S`.
pub struct SessionWatch<S: Sink> {
    sink: S,
    filter: ListFilter,
    path: PathBuf,
    env: fn(&str) -> Option<OsString>,
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
    /// Where the consent of the sessions reported is decided from,
    /// followed for its changes, when `follows_consent`.
    inputs: ConsentInputs,
    follows_consent: bool,
    /// Some path could not be followed (the inotify watch limit, a
    /// directory that cannot be read): every consent is then decided again
    /// on every change of the registry.
    inputs_incomplete: bool,
    said_unfollowed: bool,
    /// Why the registry could not be opened last, said once per reason.
    said_unopenable: Option<String>,
    /// What each session's message queue held when last looked at.
    queues: KnownQueues,
}

impl<S: Sink> SessionWatch<S> {
    /// Starts watching, reads everything and returns the watch with the
    /// `listed` events of the rows present now (in the listing's order,
    /// filtered), which are not handed to the sink: a consumer prints them
    /// or not, and lays out its columns after them.
    pub fn start(config: WatchConfig, sink: S) -> anyhow::Result<(SessionWatch<S>, Vec<Event>)> {
        // Opening a registry creates the subdirectories it lacks (one an
        // older roster made, or one made by hand, may hold only
        // `sessions/`). Done before the watch starts, their creation is no
        // change to report: seen by the watch, it was a resync before
        // anything happened.
        RosterDir::open_existing(&config.path)?;
        // Watching starts before the first read, so no change falls between.
        let source = RegistryWatch::start(&config.path, config.stop_when)?;
        let env = config.env;
        let mut watch = SessionWatch {
            sink,
            adopted: config.filter.adopt.clone(),
            filter: config.filter,
            path: config.path,
            env,
            roster: None,
            known: BTreeMap::new(),
            decider: ConsentDecider::new(&env),
            facts: RunningSystem::read(),
            source,
            unwatched: HashSet::new(),
            said_unwatched: false,
            watched_processes: HashMap::new(),
            inputs: ConsentInputs::new(user_config_path(&env)),
            follows_consent: config.follows_consent,
            inputs_incomplete: false,
            said_unfollowed: false,
            said_unopenable: None,
            queues: KnownQueues::default(),
        };
        let listed = watch.read_the_start()?;
        Ok((watch, listed))
    }

    /// The sink the events go to.
    pub fn sink_mut(&mut self) -> &mut S {
        &mut self.sink
    }

    /// The registry directory watched.
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// Waits for the next changes and reports them; `false` once the watch
    /// is told to stop.
    pub fn next_changes(&mut self) -> anyhow::Result<bool> {
        let settling = self.settling_rows();
        let changes = self.source.wait_at_most((!settling.is_empty()).then_some(SETTLING_LOOK))?;
        for name in settling {
            let now = self.read_known_row(&name);
            self.compare_and_report(&name, now)?;
        }
        // Changes of the consent inputs are gathered and acted on once,
        // after the registry's own: a burst of writes is one decision.
        let mut concerns = ConsentConcerns::default();
        for change in changes {
            if !self.apply(change, &mut concerns)? {
                return Ok(false);
            }
        }
        self.judge_unwatched_owners()?;
        if self.inputs_incomplete {
            concerns.merge(ConsentConcerns::everyone());
        }
        self.refresh_consent(concerns)?;
        Ok(true)
    }

    /// Reports every change until the watch is told to stop.
    pub fn run(&mut self) -> anyhow::Result<()> {
        while self.next_changes()? {}
        Ok(())
    }

    /// Whether a live (or unknown) session has owner pid or session id
    /// `target`: what `--until-gone` waits for the end of.
    pub fn has_live_session(&self, target: &str) -> bool {
        self.known.values().any(|known| {
            let Some(record) = &known.row.record else { return false };
            let named = record.pid().to_string() == *target || record.session_id.as_deref() == Some(target);
            named && known.row.liveness() != Liveness::Dead
        })
    }

    /// Reads everything, watches each live owner and follows the consent
    /// inputs of the sessions reported; the rows as `listed` events.
    fn read_the_start(&mut self) -> anyhow::Result<Vec<Event>> {
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
        let listing = Listing::of_rows(self.known.values().map(|known| &known.row), &self.filter);
        let at = Timestamp::now();
        Ok(listing
            .rows
            .iter()
            .map(|row| Event::about_session(EventKind::Listed, at, row, &self.known[&row.file_name].consent))
            .collect())
    }

    /// The row named `name` as it is now: a roster record (with its state,
    /// and the state of the same session's adopted file when fresher), or
    /// an adopted session (`claude-code/<pid>.json`,
    /// `copilot/<session id>/inuse.<pid>.lock`).
    fn read_known_row(&self, name: &str) -> Option<SessionRow> {
        if adopted_row_name(name).is_some() {
            return read_adopted_named(name, &self.adopted, &self.facts);
        }
        let roster = self.roster.as_ref()?;
        let mut row = read_session_row(roster, name, &self.facts)?;
        row.read_state(roster, None);
        row.read_messages(roster, None);
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

    fn open_roster(&self) -> anyhow::Result<Option<RosterDir>> {
        Ok(RosterDir::open_existing(&self.path)?)
    }

    /// Opens the registry again where its path leads now. One that cannot
    /// be opened (its path now leads to a directory that is not trusted)
    /// is watched as if absent, and said once per reason: the watch goes
    /// on and opens it as soon as it changes.
    fn reopen_roster(&mut self) -> Option<RosterDir> {
        match self.open_roster() {
            Ok(roster) => {
                self.said_unopenable = None;
                roster
            }
            Err(error) => {
                let reason = format!("{error:#}");
                if self.said_unopenable.as_ref() != Some(&reason) {
                    self.sink.notice(Notice::RegistryUnopenable { why: reason.clone() });
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

    fn watch_owners(&mut self, row: &SessionRow) {
        let (Some(record), Liveness::Alive) = (&row.record, row.liveness()) else { return };
        for member in record.identity().members() {
            match self.source.watch_owner(member.pid) {
                Ok(_) => {
                    self.watched_processes.insert(member.pid, row.file_name.clone());
                }
                Err(errno) => {
                    self.unwatched.insert(row.file_name.clone());
                    if !self.said_unwatched {
                        self.said_unwatched = true;
                        self.sink.notice(Notice::OwnersUnwatched {
                            owner: record.pid().get(),
                            why: errno.desc().to_owned(),
                            watched: self.source.watched_owners(),
                        });
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
        if known.row.record.is_none() || known.row.origin != registry_core::Origin::Roster {
            return Ok(());
        }
        known.row.messages_pending = news.pending;
        let (row, consent) = (known.row.clone(), known.consent.clone());
        for item in &news.news {
            let event = Event {
                message: Some(MessageView::in_event(item.message())),
                ..Event::about_session(item.kind(), Timestamp::now(), &row, &consent)
            };
            self.emit(event, Some(&row))?;
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
        self.emit_about_the_stream(why)?;
        self.roster = self.reopen_roster();
        self.decider.forget_files(&self.env);
        let rows = self.read_all()?;
        let mut now: BTreeMap<String, SessionRow> =
            rows.into_iter().map(|row| (row.file_name.clone(), row)).collect();
        let mut names: Vec<String> =
            self.known.keys().chain(now.keys()).cloned().collect::<HashSet<_>>().into_iter().collect();
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
        self.emit_about_the_stream(why)?;
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

    /// Hands an event about `row` to the sink, when the filters report it.
    fn emit_about(
        &mut self,
        kind: EventKind,
        row: &SessionRow,
        consent: &SessionConsent,
    ) -> anyhow::Result<()> {
        self.emit(Event::about_session(kind, Timestamp::now(), row, consent), Some(row))
    }

    /// A `resync`: events may have been lost, for the reason `why`.
    fn emit_about_the_stream(&mut self, why: &str) -> anyhow::Result<()> {
        self.emit(Event::about_the_stream(EventKind::Resync, Timestamp::now(), Some(why)), None)
    }

    fn emit(&mut self, event: Event, row: Option<&SessionRow>) -> anyhow::Result<()> {
        if reported_under(&self.filter, &event.kind, row) {
            self.sink.event(event)?;
        }
        Ok(())
    }
}
