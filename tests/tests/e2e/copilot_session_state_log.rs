//! What Copilot CLI's session-state directory (`~/.copilot/session-state/<id>/`) held,
//! moment by moment, seen from outside roster: a thread reads every session's files and
//! `/proc/locks` each millisecond (`SessionStateLog`), another follows the `inuse.*` files'
//! creations, writes and removals in inotify's order (`FileEvents`); from both, what the
//! binary did at a session's start (the order of its lock and hold files, when its `flock`
//! was taken) and whether roster's watch needed its settling re-reads to find that `flock`.
//! The adopted-session proof's Copilot CLI row (`adopted_copilot`) times the watch against
//! it.

use std::collections::BTreeMap;
use std::fs;
use std::os::fd::AsFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::Context;
use nix::poll::{PollFd, PollFlags, PollTimeout};
use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify, WatchDescriptor};

use super::adopted::shown;
use super::roster_watch::WatchEvent;

/// How often the session-state directory and `/proc/locks` are read: the resolution of
/// every time measured against them.
pub(super) const READ_INTERVAL: Duration = Duration::from_millis(1);

/// How long and how often roster's watch reads an unproven young claim again (its
/// `SETTLING` and `SETTLING_LOOK`): taking a `flock` sends no inotify event.
const SETTLING: Duration = Duration::from_secs(5);
const SETTLING_LOOK: Duration = Duration::from_millis(50);

/// The files of a session directory whose contents the log keeps (the others, such as
/// `events.jsonl`, only their size and times).
pub(super) fn content_kept(name: &str) -> bool {
    name.starts_with("inuse.") || name == "workspace.yaml"
}

/// The marks of one session as the run found them.
pub(super) struct SessionMarks {
    /// The session's directory name: its id.
    pub(super) session_id: String,
    /// `inuse.<pid>.lock`.
    pub(super) lock_name: String,
    /// The pid the lock file's name and content give.
    pub(super) pid: u32,
    /// When the log first saw the lock file (empty or not).
    pub(super) lock_seen_at: Instant,
}

impl SessionMarks {
    pub(super) fn hold_name(&self) -> String {
        format!("inuse.{}.hold", self.pid)
    }
}

/// One file of a session directory as the log read it once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct FileState {
    /// The content, for the files `content_kept` names; empty for the others.
    pub(super) bytes: Vec<u8>,
    pub(super) inode: u64,
    pub(super) size: u64,
    pub(super) modified_nanos: i128,
    /// Who holds an `flock` on the file, from `/proc/locks` (hold files only).
    pub(super) holders: Vec<u32>,
}

/// One file's state from the moment it was first seen; `None`: seen gone.
#[derive(Clone, Debug)]
pub(super) struct Sighting {
    pub(super) seen_at: Instant,
    pub(super) state: Option<FileState>,
    /// Whether the file itself changed (created, written, removed), as opposed to only who
    /// holds a lock on it: a change inotify reports.
    pub(super) file_changed: bool,
}

/// Every session directory's files, moment by moment: `(session, name)` → sightings.
pub(super) type History = BTreeMap<(String, String), Vec<Sighting>>;

/// The session-state directory as a thread reads it every `READ_INTERVAL`, with
/// `/proc/locks`, never taking a lock or writing anything.
pub(super) struct SessionStateLog {
    history: Arc<Mutex<History>>,
    stop: Arc<AtomicBool>,
    reader: Option<JoinHandle<()>>,
}

impl SessionStateLog {
    pub(super) fn start(directory: &Path) -> SessionStateLog {
        let history = Arc::new(Mutex::new(History::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (kept, stopping, directory) = (Arc::clone(&history), Arc::clone(&stop), directory.to_path_buf());
        let reader = std::thread::spawn(move || {
            while !stopping.load(Ordering::Relaxed) {
                let now = read_session_state(&directory);
                let seen_at = Instant::now();
                let mut history = kept.lock().expect("history lock");
                for (key, state) in &now {
                    let sightings = history.entry(key.clone()).or_default();
                    let last = sightings.last().and_then(|sighting| sighting.state.as_ref());
                    if last != Some(state) {
                        let file_changed = last.is_none_or(|last| {
                            (&last.bytes, last.inode, last.size, last.modified_nanos)
                                != (&state.bytes, state.inode, state.size, state.modified_nanos)
                        });
                        sightings.push(Sighting { seen_at, state: Some(state.clone()), file_changed });
                    }
                }
                for (key, sightings) in history.iter_mut() {
                    let present = sightings.last().is_some_and(|sighting| sighting.state.is_some());
                    if present && !now.contains_key(key) {
                        sightings.push(Sighting { seen_at, state: None, file_changed: true });
                    }
                }
                drop(history);
                std::thread::sleep(READ_INTERVAL);
            }
        });
        SessionStateLog { history, stop, reader: Some(reader) }
    }

    /// The session directories seen so far.
    pub(super) fn sessions(&self) -> Vec<String> {
        let history = self.history.lock().expect("history lock");
        let mut sessions: Vec<String> = history.keys().map(|(session, _)| session.clone()).collect();
        sessions.dedup();
        sessions
    }

    /// The names seen in a session's directory.
    pub(super) fn names(&self, session: &str) -> Vec<String> {
        let history = self.history.lock().expect("history lock");
        history.keys().filter(|(of, _)| of == session).map(|(_, name)| name.clone()).collect()
    }

    pub(super) fn sightings(&self, session: &str, name: &str) -> Vec<Sighting> {
        let history = self.history.lock().expect("history lock");
        history.get(&(session.to_owned(), name.to_owned())).cloned().unwrap_or_default()
    }

    /// The file's state now, as last read; `None` when gone or never seen.
    pub(super) fn latest(&self, session: &str, name: &str) -> Option<FileState> {
        self.sightings(session, name).last().and_then(|sighting| sighting.state.clone())
    }

    /// When the file was first seen as `wanted` says.
    pub(super) fn first_seen(
        &self,
        session: &str,
        name: &str,
        wanted: impl Fn(&Option<FileState>) -> bool,
    ) -> Option<Instant> {
        self.sightings(session, name)
            .iter()
            .find(|sighting| wanted(&sighting.state))
            .map(|sighting| sighting.seen_at)
    }

    /// Every sighting of a session's files, in time order.
    pub(super) fn timeline(&self, session: &str) -> Vec<(String, Sighting)> {
        let history = self.history.lock().expect("history lock");
        let mut all: Vec<(String, Sighting)> = history
            .iter()
            .filter(|((of, _), _)| of == session)
            .flat_map(|((_, name), sightings)| {
                sightings.iter().map(|sighting| (name.clone(), sighting.clone()))
            })
            .collect();
        all.sort_by_key(|(_, sighting)| sighting.seen_at);
        all
    }
}

impl Drop for SessionStateLog {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
    }
}

/// Every regular file directly in each session directory, with the `flock` holders of the
/// hold files.
pub(super) fn read_session_state(directory: &Path) -> BTreeMap<(String, String), FileState> {
    let mut files = BTreeMap::new();
    let Ok(sessions) = fs::read_dir(directory) else { return files };
    let locks = flock_holders();
    for session in sessions.filter_map(Result::ok) {
        let session_name = session.file_name().to_string_lossy().into_owned();
        if session_name.starts_with('.') {
            continue;
        }
        let Ok(entries) = fs::read_dir(session.path()) else { continue };
        for entry in entries.filter_map(Result::ok) {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Ok(metadata) = fs::symlink_metadata(entry.path()) else { continue };
            if !metadata.is_file() {
                continue;
            }
            let bytes = if content_kept(&name) {
                match fs::read(entry.path()) {
                    Ok(bytes) => bytes,
                    Err(_) => continue,
                }
            } else {
                Vec::new()
            };
            let holders = if name.ends_with(".hold") {
                locks.get(&metadata.ino()).cloned().unwrap_or_default()
            } else {
                Vec::new()
            };
            let modified_nanos =
                i128::from(metadata.mtime()) * 1_000_000_000 + i128::from(metadata.mtime_nsec());
            let state =
                FileState { bytes, inode: metadata.ino(), size: metadata.len(), modified_nanos, holders };
            files.insert((session_name.clone(), name), state);
        }
    }
    files
}

/// `/proc/locks`' `flock` holders by inode (`1: FLOCK  ADVISORY  WRITE 4711 00:2a:1234 0
/// EOF`; waiters, `->`, hold nothing), read here independently of roster's parser.
pub(super) fn flock_holders() -> BTreeMap<u64, Vec<u32>> {
    let mut holders: BTreeMap<u64, Vec<u32>> = BTreeMap::new();
    let text = fs::read_to_string("/proc/locks").unwrap_or_default();
    for line in text.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.get(1) != Some(&"FLOCK") {
            continue;
        }
        let pid = fields.get(4).and_then(|pid| pid.parse::<u32>().ok());
        let inode = fields.get(5).and_then(|device| device.rsplit(':').next()?.parse::<u64>().ok());
        if let (Some(pid), Some(inode)) = (pid, inode) {
            holders.entry(inode).or_default().push(pid);
        }
    }
    holders
}

/// One inotify event of an `inuse.*` file in a session directory, in the kernel's order.
#[derive(Clone, Debug)]
pub(super) struct FileEvent {
    pub(super) seen_at: Instant,
    pub(super) session: String,
    pub(super) name: String,
    pub(super) what: &'static str,
    /// Who held an `flock` on the session's hold files when the run read the event (later
    /// than it happened): hold file name → holders.
    pub(super) holds: Vec<(String, Vec<u32>)>,
}

/// The `inuse.*` files' creations, writes and removals in every session directory, in the
/// order inotify reports them (which polling cannot tell apart within one read): a thread
/// follows the home directory down to each session's directory as they are created.
pub(super) struct FileEvents {
    events: Arc<Mutex<Vec<FileEvent>>>,
    stop: Arc<AtomicBool>,
    reader: Option<JoinHandle<()>>,
}

impl FileEvents {
    pub(super) fn start(home: &Path, state_directory: &Path) -> anyhow::Result<FileEvents> {
        let inotify = Inotify::init(InitFlags::IN_NONBLOCK | InitFlags::IN_CLOEXEC)
            .context("creating an inotify instance to follow Copilot CLI's files")?;
        let events = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let (kept, stopping) = (Arc::clone(&events), Arc::clone(&stop));
        let (home, state_directory) = (home.to_path_buf(), state_directory.to_path_buf());
        let reader = std::thread::spawn(move || {
            let mut follower = Follower { inotify, watched: Vec::new(), state_directory, events: kept };
            follower.follow(&home);
            while !stopping.load(Ordering::Relaxed) {
                let mut descriptors = [PollFd::new(follower.inotify.as_fd(), PollFlags::POLLIN)];
                if nix::poll::poll(&mut descriptors, PollTimeout::from(50_u16)).unwrap_or(0) > 0 {
                    follower.read();
                }
            }
        });
        Ok(FileEvents { events, stop, reader: Some(reader) })
    }

    pub(super) fn of_session(&self, session: &str) -> Vec<FileEvent> {
        let events = self.events.lock().expect("events lock");
        events.iter().filter(|event| event.session == session).cloned().collect()
    }
}

impl Drop for FileEvents {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
    }
}

/// The inotify instance of `FileEvents` and the directories it follows.
pub(super) struct Follower {
    inotify: Inotify,
    watched: Vec<(WatchDescriptor, PathBuf)>,
    state_directory: PathBuf,
    events: Arc<Mutex<Vec<FileEvent>>>,
}

impl Follower {
    /// Follows `directory` (on the way to the session-state directory, or a session's),
    /// and what is already in it.
    pub(super) fn follow(&mut self, directory: &Path) {
        let flags = AddWatchFlags::IN_CREATE
            | AddWatchFlags::IN_MODIFY
            | AddWatchFlags::IN_CLOSE_WRITE
            | AddWatchFlags::IN_DELETE
            | AddWatchFlags::IN_MOVED_TO
            | AddWatchFlags::IN_ONLYDIR;
        let Ok(descriptor) = self.inotify.add_watch(directory, flags) else { return };
        self.watched.push((descriptor, directory.to_path_buf()));
        let Ok(entries) = fs::read_dir(directory) else { return };
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            if path.is_dir() && self.to_follow(&path) {
                self.follow(&path);
            } else if let Some(session) = self.session_of(directory) {
                self.record(
                    &session,
                    directory,
                    &entry.file_name().to_string_lossy(),
                    "present when followed",
                );
            }
        }
    }

    /// Directories on the way to the session-state directory, and each session's.
    pub(super) fn to_follow(&self, path: &Path) -> bool {
        (self.state_directory.starts_with(path) && path != self.state_directory.as_path())
            || path == self.state_directory.as_path()
            || path.parent() == Some(self.state_directory.as_path())
    }

    pub(super) fn session_of(&self, directory: &Path) -> Option<String> {
        (directory.parent() == Some(self.state_directory.as_path()))
            .then(|| directory.file_name()?.to_str().map(str::to_owned))
            .flatten()
    }

    pub(super) fn read(&mut self) {
        let Ok(events) = self.inotify.read_events() else { return };
        for event in events {
            let Some(directory) = self
                .watched
                .iter()
                .find(|(descriptor, _)| *descriptor == event.wd)
                .map(|(_, path)| path.clone())
            else {
                continue;
            };
            let Some(name) = event.name.as_ref().map(|name| name.to_string_lossy().into_owned()) else {
                continue;
            };
            let path = directory.join(&name);
            let created = event.mask.intersects(AddWatchFlags::IN_CREATE | AddWatchFlags::IN_MOVED_TO);
            if event.mask.contains(AddWatchFlags::IN_ISDIR) {
                if created && self.to_follow(&path) {
                    self.follow(&path);
                }
                continue;
            }
            let Some(session) = self.session_of(&directory) else { continue };
            let what = if event.mask.contains(AddWatchFlags::IN_CREATE) {
                "created"
            } else if event.mask.contains(AddWatchFlags::IN_MOVED_TO) {
                "renamed in"
            } else if event.mask.contains(AddWatchFlags::IN_MODIFY) {
                "written"
            } else if event.mask.contains(AddWatchFlags::IN_CLOSE_WRITE) {
                "closed after writing"
            } else if event.mask.contains(AddWatchFlags::IN_DELETE) {
                "removed"
            } else {
                continue;
            };
            self.record(&session, &directory, &name, what);
        }
    }

    pub(super) fn record(&self, session: &str, directory: &Path, name: &str, what: &'static str) {
        if !name.starts_with("inuse.") {
            return;
        }
        let seen_at = Instant::now();
        let locks = flock_holders();
        let holds = fs::read_dir(directory)
            .map(|entries| {
                entries
                    .filter_map(Result::ok)
                    .filter(|entry| entry.file_name().to_string_lossy().ends_with(".hold"))
                    .filter_map(|entry| {
                        let inode = fs::symlink_metadata(entry.path()).ok()?.ino();
                        let holders = locks.get(&inode).cloned().unwrap_or_default();
                        Some((entry.file_name().to_string_lossy().into_owned(), holders))
                    })
                    .collect()
            })
            .unwrap_or_default();
        let event = FileEvent { seen_at, session: session.to_owned(), name: name.to_owned(), what, holds };
        self.events.lock().expect("events lock").push(event);
    }
}

/// What the binary did with its files at the start of `session`, and whether the
/// watch's settling re-reads were what found the `flock`.
pub(super) fn what_the_binary_did(
    log: &SessionStateLog,
    events: &FileEvents,
    record: &SessionMarks,
    number: usize,
    alive: &WatchEvent,
    before: &[WatchEvent],
) -> String {
    let (id, pid, lock_seen_at) = (&record.session_id, record.pid, record.lock_seen_at);
    let lock = log.sightings(id, &record.lock_name);
    let hold = log.sightings(id, &record.hold_name());
    let at = |instant: Instant| signed_ms(instant, lock_seen_at);
    let mut parts = Vec::new();
    let lock_first = lock.first().and_then(|sighting| sighting.state.clone()).unwrap_or_else(empty_state);
    let filled_at = lock
        .iter()
        .find(|sighting| sighting.state.as_ref().is_some_and(|state| !state.bytes.is_empty()))
        .map(|sighting| sighting.seen_at);
    parts.push(if lock_first.bytes.is_empty() {
        format!(
            "{} first seen empty, its pid in it at {}",
            record.lock_name,
            filled_at.map_or_else(|| "never".to_owned(), at)
        )
    } else {
        format!(
            "{} first seen already holding {:?} (no read caught it empty)",
            record.lock_name,
            String::from_utf8_lossy(&lock_first.bytes)
        )
    });
    let hold_first = hold.first().map(|sighting| sighting.seen_at);
    let held_at = hold
        .iter()
        .find(|sighting| sighting.state.as_ref().is_some_and(|state| state.holders.contains(&pid)))
        .map(|sighting| sighting.seen_at);
    let hold_first_unlocked = hold
        .first()
        .and_then(|sighting| sighting.state.as_ref())
        .is_some_and(|state| state.holders.is_empty());
    parts.push(match hold_first {
        Some(first) => format!(
            "{} first seen at {} ({}), flock by pid {pid} first seen at {}",
            record.hold_name(),
            at(first),
            if hold_first_unlocked { "not locked yet" } else { "already locked" },
            held_at.map_or_else(|| "never".to_owned(), at)
        ),
        None => format!("{} never seen", record.hold_name()),
    });
    let order = match (hold_first, held_at, filled_at) {
        (Some(hold), _, _) if hold < lock_seen_at => ".hold appeared before .lock".to_owned(),
        (Some(hold), _, _) if hold == lock_seen_at => ".lock and .hold in the same read".to_owned(),
        (Some(_), _, _) => ".lock appeared first, then .hold".to_owned(),
        (None, _, _) => "no .hold".to_owned(),
    };
    let flock = match (held_at, filled_at) {
        (Some(held), Some(filled)) if held > filled => {
            "the flock was taken after the .lock was written".to_owned()
        }
        (Some(_), Some(_)) => format!(
            "the flock was already held when the .lock was first seen written (the two within one {} read)",
            shown(READ_INTERVAL)
        ),
        _ => "the flock was never seen taken by that pid".to_owned(),
    };
    let workspace = log.first_seen(id, "workspace.yaml", Option::is_some);
    parts.push(format!(
        "{order}; {flock}; workspace.yaml first seen at {}",
        workspace.map_or_else(|| "never".to_owned(), at)
    ));
    parts.push(inotify_order(events, record));
    parts.push(settling_verdict(log, record, alive, before, held_at));
    format!("session {}: {}", number, parts.join("; "))
}

/// The order inotify gave the session's `inuse.*` files at its start, and what follows
/// from it: a file created then written was empty at its creation; a hold file created
/// after the lock file was written and closed was locked (on its own descriptor) after
/// that.
fn inotify_order(events: &FileEvents, record: &SessionMarks) -> String {
    let (lock, hold) = (record.lock_name.clone(), record.hold_name());
    let events: Vec<FileEvent> = events
        .of_session(&record.session_id)
        .into_iter()
        .filter(|event| event.name == lock || event.name == hold)
        .collect();
    let short = |name: &str| if name == lock { ".lock" } else { ".hold" };
    let mut sequence: Vec<String> = Vec::new();
    for event in events.iter().take_while(|event| event.what != "removed") {
        let step = format!("{} {}", short(&event.name), event.what);
        if sequence.last() != Some(&step) {
            sequence.push(step);
        }
    }
    let position =
        |name: &str, what: &str| events.iter().position(|event| event.name == name && event.what == what);
    let mut findings = Vec::new();
    match (position(&lock, "created"), position(&lock, "written")) {
        (Some(created), Some(written)) if created < written => findings.push(format!(
            "{lock} was created empty and written after (its pid {} later)",
            shown(events[written].seen_at.saturating_duration_since(events[created].seen_at))
        )),
        (None, _) => findings.push(format!("{lock}'s creation was not seen")),
        _ => findings.push(format!("{lock} was not seen written after its creation")),
    }
    match (position(&lock, "closed after writing"), position(&hold, "created")) {
        (Some(written), Some(created)) if written < created => {
            findings.push(format!(
                "{hold} was created after {lock} was written and closed, so its flock came after the write"
            ));
            let seen = &events[written];
            let at_write = match seen.holds.iter().find(|(name, _)| *name == hold) {
                None => format!("{hold} did not exist yet"),
                Some((_, holders)) if holders.is_empty() => format!("{hold} existed, not locked"),
                Some((_, holders)) => format!("{hold} was already locked by {holders:?}"),
            };
            findings.push(format!("when the run read the lock file's write event, {at_write}"));
        }
        (Some(_), Some(_)) => {
            findings.push(format!("{hold} was created before {lock} was written and closed"))
        }
        _ => findings
            .push("the order of the lock file's write and the hold file's creation was not seen".to_owned()),
    }
    format!("inotify order: {}; {}", sequence.join(" → "), findings.join("; "))
}

/// Whether the watch's re-reads of an unproven young claim (on each wake-up, at least
/// every `SETTLING_LOOK`, for `SETTLING`) were what found the `flock`: a lock taken
/// sends no inotify event. The unproven row's reason says what the watch's read saw.
fn settling_verdict(
    log: &SessionStateLog,
    record: &SessionMarks,
    alive: &WatchEvent,
    before: &[WatchEvent],
    held_at: Option<Instant>,
) -> String {
    let Some(unproven) = before.last() else {
        return "the watch's first row was already alive (its first read of the claim came after the flock): \
                its settling re-reads did not matter this time"
            .to_owned();
    };
    let reason = unproven.row()["liveness_reason"].as_str().unwrap_or_default().to_owned();
    let gap = shown(alive.received_at.saturating_duration_since(unproven.received_at));
    if reason.contains("beside the lock file") {
        return format!(
            "the watch first read the claim before the hold file existed (unknown: {reason}); the hold file's \
             creation, an inotify event, had it read again, and it said alive {gap} later: the settling \
             re-reads were not needed this time"
        );
    }
    if !reason.contains("does not hold") {
        return format!("the watch first said unknown ({reason}), alive {gap} later");
    }
    // The hold file existed when the watch read the claim, its flock not taken yet: the
    // next change of the session's files after the flock is the next inotify event
    // that would have had the claim read again.
    let next_change = log.timeline(&record.session_id).into_iter().find(|(name, sighting)| {
        sighting.file_changed
            && held_at.is_some_and(|held| sighting.seen_at > held)
            && *name != record.lock_name
            && *name != record.hold_name()
    });
    let next = next_change.as_ref().map_or_else(
        || "no later change of its files was seen".to_owned(),
        |(name, sighting)| {
            format!(
                "the next change of its files ({name}) came at {}",
                signed_ms(sighting.seen_at, record.lock_seen_at)
            )
        },
    );
    let before_next = next_change.as_ref().is_none_or(|(_, sighting)| alive.received_at < sighting.seen_at);
    if before_next {
        format!(
            "the watch first read the claim after the hold file existed but before its flock was taken \
             (unknown: {reason}); taking a flock sends no inotify event and {next}, yet the watch said alive \
             {gap} after its unknown row, at {}: found by its re-read of the unproven claim (each wake-up, at \
             least every {}, for {}). The settling mattered (unless the hold file's creation event was still \
             queued when the watch read the claim, which cannot be told from outside)",
            signed_ms(alive.received_at, record.lock_seen_at),
            shown(SETTLING_LOOK),
            shown(SETTLING)
        )
    } else {
        format!(
            "the watch first read the claim before its flock was taken (unknown: {reason}); {next}, before the \
             watch said alive {gap} after its unknown row: that change may have had it read again"
        )
    }
}

/// The session's lock file and workspace.yaml as Copilot CLI wrote them, one line.
pub(super) fn example_files(log: &SessionStateLog, record: &SessionMarks, home: &Path) -> String {
    let home = home.display().to_string();
    let content = |name: &str| {
        log.latest(&record.session_id, name)
            .map(|state| String::from_utf8_lossy(&state.bytes).replace(&home, "~"))
            .unwrap_or_else(|| "(gone)".to_owned())
    };
    format!(
        "{} {:?}, {} {:?} (empty: {}), workspace.yaml {:?}; also in the directory: {}",
        record.lock_name,
        content(&record.lock_name),
        record.hold_name(),
        content(&record.hold_name()),
        content(&record.hold_name()).is_empty(),
        content("workspace.yaml"),
        log.names(&record.session_id)
            .into_iter()
            .filter(|name| !content_kept(name))
            .collect::<Vec<_>>()
            .join(" ")
    )
}

pub(super) fn empty_state() -> FileState {
    FileState { bytes: Vec::new(), inode: 0, size: 0, modified_nanos: 0, holders: Vec::new() }
}

/// `+1.2 ms` or `-0.4 ms`: `instant` against `origin`.
pub(super) fn signed_ms(instant: Instant, origin: Instant) -> String {
    if instant >= origin {
        format!("+{}", shown(instant.duration_since(origin)))
    } else {
        format!("-{}", shown(origin.duration_since(instant)))
    }
}

/// Every change of a session's files the log saw, timed from the lock file's first sighting.
pub(super) fn describe_timeline(log: &SessionStateLog, session: &str, pid: u32) -> String {
    let timeline = log.timeline(session);
    let lock_name = format!("inuse.{pid}.lock");
    let origin = log
        .first_seen(session, &lock_name, Option::is_some)
        .or_else(|| timeline.first().map(|(_, sighting)| sighting.seen_at));
    let Some(origin) = origin else { return format!("nothing seen of session {session}") };
    timeline
        .iter()
        .map(|(name, sighting)| {
            let what = match &sighting.state {
                None => "gone".to_owned(),
                Some(state) if name.ends_with(".hold") => {
                    format!("{} bytes, locked by {:?}", state.size, state.holders)
                }
                Some(state) if content_kept(name) && name.starts_with("inuse.") => {
                    format!("{:?}", String::from_utf8_lossy(&state.bytes))
                }
                Some(state) => format!("{} bytes", state.size),
            };
            format!("{} {name} {what}", signed_ms(sighting.seen_at, origin))
        })
        .collect::<Vec<_>>()
        .join(", ")
}
