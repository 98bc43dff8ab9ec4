//! Proves against the real pinned Copilot CLI what roster assumes of the marks it keeps of
//! its live sessions (docs/contract.md §6.5), which roster's own tests can only imitate:
//! `~/.copilot/session-state/<session id>/inuse.<pid>.lock` naming the native process's
//! pid, beside `inuse.<pid>.hold`, `flock`ed by that very pid while it lives, and
//! `workspace.yaml` with the session's cwd. No roster hook is installed anywhere: Copilot
//! CLI runs `-p hi` in a temporary HOME against the gated fake model server (its model call
//! held, so the session lives) while `roster-list --watch --format json --dir <an empty
//! roster>` runs with the same HOME. Beside roster, a log of the session-state directory
//! (`SessionStateLog`) reads every session's files and `/proc/locks` each millisecond, to
//! time the watch's events and to record what the binary did. Three parts, each waited for
//! against a deadline:
//!
//! 1. listed: once the lock file appears, the watch reports the session (`registered`, or
//!    `registered` then `refreshed` when its first read came before the `flock`) alive,
//!    origin `copilot`, with the directory's name as session id and the project as cwd;
//!    `roster-list --format json` shows the same row;
//! 2. SIGKILL of the pid the lock file names: `died` at once; `roster-list --all` shows it
//!    dead, saying Copilot CLI removes its files; the lock and hold files stay byte for
//!    byte, `roster-prune` included;
//! 3. a second session's turn answered: Copilot CLI exits 0 and removes its files, the
//!    watch reports `removed`, and `roster-list` no longer shows it.
//!
//! Where the binary differs from what roster assumes (the files' names, the pid in the lock
//! file, who holds the `flock`, when they are written or removed), the run says what it saw
//! and the check that fails because of it fails with that evidence.

use std::collections::BTreeMap;
use std::fs;
use std::os::fd::AsFd;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use nix::poll::{PollFd, PollFlags, PollTimeout};
use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify, WatchDescriptor};
use nix::sys::signal::Signal;
use nix::unistd::Pid;
use serde_json::Value;

use super::adopted::{
    AdoptedProof, PartOutcome, neutral_path, record_part, roster_rows, shown, wait_for_exit,
};
use super::fake_model_server::{FakeModelServer, REPLY_TEXT};
use super::real_harnesses::InstalledHarness;
use super::roster_watch::{RosterWatch, WatchEvent};
use super::{CaseResult, SessionWorld, describe_process, signal_process};

/// Copilot CLI's name in roster.
pub const COPILOT: &str = "copilot";

/// How long Copilot CLI may take from its start to its lock file (a first run unpacks its
/// native binary; the machine may be loaded).
const START_DEADLINE: Duration = Duration::from_secs(180);

/// How long the binary may take from an action (the lock file seen, the answer let through)
/// to what it leads to (the `flock`, a model call, its exit, its files removed).
const STEP_DEADLINE: Duration = Duration::from_secs(60);

/// How long the watch may take to report what the log saw, before the run calls the event
/// missing.
const EVENT_DEADLINE: Duration = Duration::from_secs(10);

/// How often the session-state directory and `/proc/locks` are read: the resolution of
/// every time measured against them.
const READ_INTERVAL: Duration = Duration::from_millis(1);

/// How often the run looks at the processes, the server and the log while it waits.
const POLL: Duration = Duration::from_millis(5);

/// What the dead row's reason must say.
const DEAD_REASON: &str = "Copilot CLI removes its files";

/// The `comm` of Copilot CLI's native process (its node loader is `node`).
const NATIVE_COMM: &str = "MainThread";

/// How long and how often roster's watch reads an unproven young claim again (its
/// `SETTLING` and `SETTLING_LOOK`): taking a `flock` sends no inotify event.
const SETTLING: Duration = Duration::from_secs(5);
const SETTLING_LOOK: Duration = Duration::from_millis(50);

/// The files of a session directory whose contents the log keeps (the others, such as
/// `events.jsonl`, only their size and times).
fn content_kept(name: &str) -> bool {
    name.starts_with("inuse.") || name == "workspace.yaml"
}

/// One part of the proof, in the order they run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    Listed,
    Killed,
    Exited,
}

impl Part {
    const ALL: [Part; 3] = [Part::Listed, Part::Killed, Part::Exited];

    fn label(self) -> &'static str {
        match self {
            Part::Listed => "adopted: listed, no hooks",
            Part::Killed => "adopted: SIGKILL, died, files kept",
            Part::Exited => "adopted: own exit, files removed",
        }
    }
}

/// Runs the proof with the installed Copilot CLI.
pub fn prove(installed: &InstalledHarness, binaries: &Path, node: &Path) -> AdoptedProof {
    let mut proof = AdoptedProof::new();
    if let Err(error) = run(installed, binaries, node, &mut proof) {
        let error = format!("{error:#}");
        proof.note(format!("FAILED: {error}"));
        let failed_at = proof.parts.len();
        for (index, part) in Part::ALL.iter().enumerate().skip(failed_at) {
            let result = if index == failed_at {
                CaseResult::Failed(error.clone())
            } else {
                CaseResult::NotRun("not reached: an earlier part failed".to_owned())
            };
            proof.parts.push((part.label(), result, String::new()));
        }
    }
    proof
}

/// One file of a session directory as the log read it once.
#[derive(Clone, Debug, PartialEq, Eq)]
struct FileState {
    /// The content, for the files `content_kept` names; empty for the others.
    bytes: Vec<u8>,
    inode: u64,
    size: u64,
    modified_nanos: i128,
    /// Who holds an `flock` on the file, from `/proc/locks` (hold files only).
    holders: Vec<u32>,
}

/// One file's state from the moment it was first seen; `None`: seen gone.
#[derive(Clone, Debug)]
struct Sighting {
    seen_at: Instant,
    state: Option<FileState>,
    /// Whether the file itself changed (created, written, removed), as opposed to only who
    /// holds a lock on it: a change inotify reports.
    file_changed: bool,
}

/// Every session directory's files, moment by moment: `(session, name)` → sightings.
type History = BTreeMap<(String, String), Vec<Sighting>>;

/// The session-state directory as a thread reads it every `READ_INTERVAL`, with
/// `/proc/locks`, never taking a lock or writing anything.
struct SessionStateLog {
    history: Arc<Mutex<History>>,
    stop: Arc<AtomicBool>,
    reader: Option<JoinHandle<()>>,
}

impl SessionStateLog {
    fn start(directory: &Path) -> SessionStateLog {
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
    fn sessions(&self) -> Vec<String> {
        let history = self.history.lock().expect("history lock");
        let mut sessions: Vec<String> = history.keys().map(|(session, _)| session.clone()).collect();
        sessions.dedup();
        sessions
    }

    /// The names seen in a session's directory.
    fn names(&self, session: &str) -> Vec<String> {
        let history = self.history.lock().expect("history lock");
        history.keys().filter(|(of, _)| of == session).map(|(_, name)| name.clone()).collect()
    }

    fn sightings(&self, session: &str, name: &str) -> Vec<Sighting> {
        let history = self.history.lock().expect("history lock");
        history.get(&(session.to_owned(), name.to_owned())).cloned().unwrap_or_default()
    }

    /// The file's state now, as last read; `None` when gone or never seen.
    fn latest(&self, session: &str, name: &str) -> Option<FileState> {
        self.sightings(session, name).last().and_then(|sighting| sighting.state.clone())
    }

    /// When the file was first seen as `wanted` says.
    fn first_seen(
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
    fn timeline(&self, session: &str) -> Vec<(String, Sighting)> {
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
fn read_session_state(directory: &Path) -> BTreeMap<(String, String), FileState> {
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
fn flock_holders() -> BTreeMap<u64, Vec<u32>> {
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
struct FileEvent {
    seen_at: Instant,
    session: String,
    name: String,
    what: &'static str,
    /// Who held an `flock` on the session's hold files when the run read the event (later
    /// than it happened): hold file name → holders.
    holds: Vec<(String, Vec<u32>)>,
}

/// The `inuse.*` files' creations, writes and removals in every session directory, in the
/// order inotify reports them (which polling cannot tell apart within one read): a thread
/// follows the home directory down to each session's directory as they are created.
struct FileEvents {
    events: Arc<Mutex<Vec<FileEvent>>>,
    stop: Arc<AtomicBool>,
    reader: Option<JoinHandle<()>>,
}

impl FileEvents {
    fn start(home: &Path, state_directory: &Path) -> anyhow::Result<FileEvents> {
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

    fn of_session(&self, session: &str) -> Vec<FileEvent> {
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
struct Follower {
    inotify: Inotify,
    watched: Vec<(WatchDescriptor, PathBuf)>,
    state_directory: PathBuf,
    events: Arc<Mutex<Vec<FileEvent>>>,
}

impl Follower {
    /// Follows `directory` (on the way to the session-state directory, or a session's),
    /// and what is already in it.
    fn follow(&mut self, directory: &Path) {
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
    fn to_follow(&self, path: &Path) -> bool {
        (self.state_directory.starts_with(path) && path != self.state_directory.as_path())
            || path == self.state_directory.as_path()
            || path.parent() == Some(self.state_directory.as_path())
    }

    fn session_of(&self, directory: &Path) -> Option<String> {
        (directory.parent() == Some(self.state_directory.as_path()))
            .then(|| directory.file_name()?.to_str().map(str::to_owned))
            .flatten()
    }

    fn read(&mut self) {
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

    fn record(&self, session: &str, directory: &Path, name: &str, what: &'static str) {
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

/// One Copilot CLI run: its node loader (the spawned child, leader of its process group)
/// and the session it marked.
struct CopilotSession {
    child: Child,
    /// The session's directory name: its id.
    session_id: String,
    /// `inuse.<pid>.lock`.
    lock_name: String,
    /// The pid the lock file's name and content give.
    pid: u32,
    /// When the log first saw the lock file (empty or not).
    lock_seen_at: Instant,
}

impl CopilotSession {
    fn hold_name(&self) -> String {
        format!("inuse.{}.hold", self.pid)
    }

    /// Kills the loader's process group (the native process is in it) and reaps the loader.
    fn kill_group(&mut self) {
        if let Ok(leader) = i32::try_from(self.child.id()) {
            let _ = nix::sys::signal::killpg(Pid::from_raw(leader), Signal::SIGKILL);
        }
        let _ = self.child.wait();
    }
}

/// Everything a part needs.
struct Drive<'a> {
    world: &'a SessionWorld,
    server: &'a FakeModelServer,
    log: &'a SessionStateLog,
    file_events: &'a FileEvents,
    watch: &'a mut RosterWatch,
    installed: &'a InstalledHarness,
    binaries: &'a Path,
    node: &'a Path,
    state_directory: PathBuf,
    /// Every run started, to be killed whatever happens.
    sessions: Vec<CopilotSession>,
}

fn run(
    installed: &InstalledHarness,
    binaries: &Path,
    node: &Path,
    proof: &mut AdoptedProof,
) -> anyhow::Result<()> {
    let harness = installed.harness;
    let world = SessionWorld::create(harness.name, "adopted")?;
    let api = harness.api.context("the harness speaks no model API")?;
    let server = FakeModelServer::start(api)?;
    harness.prepare_home(&world.home, &server.base_url())?;
    // An empty roster: nobody ever registered here, and no hook is installed.
    fs::create_dir_all(&world.roster)?;
    fs::set_permissions(&world.roster, std::os::unix::fs::PermissionsExt::from_mode(0o700))?;
    let state_directory = world.home.join(".copilot").join("session-state");
    proof.note(format!(
        "no roster hook installed; Copilot CLI's directory {} does not exist yet",
        neutral_path(&state_directory, &world)
    ));

    let log = SessionStateLog::start(&state_directory);
    let file_events = FileEvents::start(&world.home, &state_directory)?;
    let mut watch_command = world.roster_tool(binaries, "roster-list", node);
    watch_command.args(["--watch", "--format", "json", "--dir"]).arg(&world.roster);
    let mut watch = RosterWatch::start(watch_command, &world.root.join("watch-stderr.txt"))?;
    watch.wait_until_following(EVENT_DEADLINE)?;

    let mut drive = Drive {
        world: &world,
        server: &server,
        log: &log,
        file_events: &file_events,
        watch: &mut watch,
        installed,
        binaries,
        node,
        state_directory,
        sessions: Vec::new(),
    };
    let outcome = drive.parts(proof);
    let mut started = std::mem::take(&mut drive.sessions);
    server.open_gate();
    for session in &mut started {
        session.kill_group();
    }
    // A native process that left its loader's group is killed by the pid its lock file
    // names, while it is still Copilot CLI's.
    for session in &started {
        if process_running(session.pid) && describe_process(session.pid).starts_with(NATIVE_COMM) {
            signal_process(session.pid, "KILL");
        }
    }
    let sessions: Vec<(String, u32)> =
        started.iter().map(|session| (session.session_id.clone(), session.pid)).collect();
    watch.stop();
    proof.note(format!("the watch's events: {}", watch.summary()));
    for (session_id, pid) in &sessions {
        proof.note(format!(
            "session {session_id}, as the log saw it: {}",
            describe_timeline(&log, session_id, *pid)
        ));
    }
    drop(log);
    let kept = outcome.is_err() || !proof.failures().is_empty();
    if kept {
        proof.note(format!("kept {} for inspection", world.root.display()));
        for line in super::last_lines(&world.harness_output(), 10) {
            proof.note(format!("  | {line}"));
        }
    } else {
        let _ = fs::remove_dir_all(&world.root);
    }
    outcome
}

impl Drive<'_> {
    fn parts(&mut self, proof: &mut AdoptedProof) -> anyhow::Result<()> {
        self.listed(proof)?;
        self.killed(proof)?;
        self.exited(proof)
    }

    /// Starts `copilot -p hi` and waits for the lock file of a session directory not among
    /// `known`, filled with its pid, and for the `flock` on its hold file.
    fn start_session(&mut self, known: &[String], proof: &mut AdoptedProof) -> anyhow::Result<usize> {
        let arguments = self.installed.harness.arguments(&self.installed.help);
        let spawned_at = Instant::now();
        let child =
            self.world.spawn_harness(self.installed, &arguments, self.node, &self.server.base_url())?;
        let loader = child.id();
        let index = self.sessions.len();
        // Kept at once, so that whatever fails below, the run kills it.
        self.sessions.push(CopilotSession {
            child,
            session_id: String::new(),
            lock_name: String::new(),
            pid: 0,
            lock_seen_at: spawned_at,
        });
        let (session_id, lock_name) = loop {
            let found = self.log.sessions().into_iter().filter(|session| !known.contains(session)).find_map(
                |session| {
                    let lock =
                        self.log.names(&session).into_iter().find(|name| lock_file_pid(name).is_some())?;
                    Some((session, lock))
                },
            );
            if let Some(found) = found {
                break found;
            }
            if let Some(status) = self.sessions[index].child.try_wait()? {
                bail!(
                    "Copilot CLI (loader pid {loader}) exited ({status}) before any new session directory of {} held an \
                     inuse.<pid>.lock; the directory: {}; requests: {:?}",
                    neutral_path(&self.state_directory, self.world),
                    self.directory_listing(known),
                    self.server.requests()
                );
            }
            ensure!(
                spawned_at.elapsed() < START_DEADLINE,
                "Copilot CLI (loader pid {loader}) made no new session directory with an inuse.<pid>.lock in {} within \
                 {START_DEADLINE:?}; the directory: {}; requests: {:?}",
                neutral_path(&self.state_directory, self.world),
                self.directory_listing(known),
                self.server.requests()
            );
            std::thread::sleep(READ_INTERVAL);
        };
        let pid = lock_file_pid(&lock_name).context("a lock file's name carries a pid")?;
        let lock_seen_at =
            self.log.first_seen(&session_id, &lock_name, Option::is_some).context("the lock was seen")?;
        {
            let session = &mut self.sessions[index];
            session.session_id = session_id.clone();
            session.lock_name = lock_name.clone();
            session.pid = pid;
            session.lock_seen_at = lock_seen_at;
        }
        proof.note(format!(
            "{session_id}/{lock_name} appeared {} after the start; the loader is pid {loader} ({}), pid {pid} is {} \
             (parent {})",
            shown(lock_seen_at.saturating_duration_since(spawned_at)),
            describe_process(loader),
            describe_process(pid),
            parent_of(pid).map_or_else(|| "?".to_owned(), |parent| parent.to_string())
        ));
        if !describe_process(pid).starts_with(NATIVE_COMM) {
            proof.note(format!("pid {pid} is not named {NATIVE_COMM}: {}", describe_process(pid)));
        }
        // The lock file filled with its pid, and the hold file locked, each within a deadline.
        let started = Instant::now();
        loop {
            let lock = self.log.latest(&session_id, &lock_name);
            let hold = self.log.latest(&session_id, &format!("inuse.{pid}.hold"));
            let filled = lock.as_ref().is_some_and(|lock| !lock.bytes.is_empty());
            let held = hold.as_ref().is_some_and(|hold| hold.holders.contains(&pid));
            if filled && held {
                break;
            }
            if started.elapsed() > STEP_DEADLINE {
                let evidence = format!(
                    "the lock file holds {:?}; the hold file {}; {}",
                    lock.map(|lock| String::from_utf8_lossy(&lock.bytes).into_owned()),
                    match hold {
                        None => "is not there".to_owned(),
                        Some(hold) if hold.holders.is_empty() => "is locked by nobody".to_owned(),
                        Some(hold) => format!("is locked by pid(s) {:?}, not {pid}", hold.holders),
                    },
                    describe_timeline(self.log, &session_id, pid)
                );
                proof.mismatches.push(format!("{STEP_DEADLINE:?} after {lock_name} appeared, {evidence}"));
                bail!(
                    "Copilot CLI's session never showed what roster assumes within {STEP_DEADLINE:?}: {evidence}"
                );
            }
            std::thread::sleep(READ_INTERVAL);
        }
        proof.mismatches.extend(self.file_mismatches(&self.sessions[index]));
        Ok(index)
    }

    /// What the session directory holds, as the log saw it: each new session and its names.
    fn directory_listing(&self, known: &[String]) -> String {
        let sessions: Vec<String> = self
            .log
            .sessions()
            .into_iter()
            .filter(|session| !known.contains(session))
            .map(|session| format!("{session}: {}", self.log.names(&session).join(" ")))
            .collect();
        if sessions.is_empty() { "no new session directory".to_owned() } else { sessions.join("; ") }
    }

    /// Where the session's files differ from what roster assumes of them, each one line.
    fn file_mismatches(&self, session: &CopilotSession) -> Vec<String> {
        let mut mismatches = Vec::new();
        let pid = session.pid;
        let lock = self.log.latest(&session.session_id, &session.lock_name).unwrap_or_else(empty_state);
        let said = String::from_utf8_lossy(&lock.bytes).trim().to_owned();
        if said != pid.to_string() {
            mismatches.push(format!("{} holds {said:?}, not its name's pid {pid}", session.lock_name));
        }
        let hold = self.log.latest(&session.session_id, &session.hold_name()).unwrap_or_else(empty_state);
        if hold.holders.iter().any(|holder| *holder != pid) {
            mismatches.push(format!(
                "{} is locked by {:?}, not only by {pid}",
                session.hold_name(),
                hold.holders
            ));
        }
        let workspace = self.log.latest(&session.session_id, "workspace.yaml");
        match workspace.as_ref().map(|workspace| String::from_utf8_lossy(&workspace.bytes).into_owned()) {
            None => mismatches.push("no workspace.yaml beside the lock file".to_owned()),
            Some(text) => {
                let id = yaml_value(&text, "id");
                let cwd = yaml_value(&text, "cwd");
                if id.as_deref() != Some(session.session_id.as_str()) {
                    mismatches.push(format!(
                        "workspace.yaml's id is {id:?}, not its directory's {}",
                        session.session_id
                    ));
                }
                let project = self.world.project.display().to_string();
                if cwd.as_deref() != Some(project.as_str()) {
                    mismatches.push(format!("workspace.yaml's cwd is {cwd:?}, not the project {project}"));
                }
            }
        }
        mismatches
    }

    /// Waits for the watch to say the session is alive: `registered`, or `registered`
    /// unproven then `refreshed` alive. Returns the alive event and the events before it.
    fn wait_alive(
        &mut self,
        session: usize,
        outcome: &mut PartOutcome,
        proof: &mut AdoptedProof,
    ) -> anyhow::Result<(WatchEvent, Vec<WatchEvent>)> {
        let (pid, lock_seen_at) = (self.sessions[session].pid, self.sessions[session].lock_seen_at);
        let started = Instant::now();
        let mut before = Vec::new();
        let alive = loop {
            let left = EVENT_DEADLINE.saturating_sub(started.elapsed());
            let event = self
                .watch
                .wait_for(&format!("alive event for pid {pid}"), left, |event| {
                    event.is_about(
                        &["registered", "refreshed", "problem", "died", "removed", "unmatched"],
                        pid,
                    )
                })
                .map_err(|error| error.context(self.evidence(session)))?;
            if event.row()["liveness"] == "alive" {
                break event;
            }
            before.push(event);
        };
        let kinds: Vec<&str> = before.iter().chain([&alive]).map(WatchEvent::kind).collect();
        let expected =
            kinds.first() == Some(&"registered") && kinds[1..].iter().all(|kind| *kind == "refreshed");
        if !expected {
            outcome.fail(format!(
                "the watch reported {} for pid {pid}, not registered (then refreshed){}",
                kinds.join(", "),
                self.evidence(session)
            ));
        }
        let latency = alive.received_at.saturating_duration_since(lock_seen_at);
        outcome.latency(&format!("alive (session {})", session + 1), latency);
        let held_at = self.log.first_seen(
            &self.sessions[session].session_id,
            &self.sessions[session].hold_name(),
            |state| state.as_ref().is_some_and(|state| state.holders.contains(&pid)),
        );
        proof.note(format!(
            "the watch: {} ; alive {} after the lock file was seen{}",
            before
                .iter()
                .chain([&alive])
                .map(|event| format!(
                    "{} {} at +{} ({})",
                    event.kind(),
                    event.row()["liveness"].as_str().unwrap_or("-"),
                    shown(event.received_at.saturating_duration_since(lock_seen_at)),
                    event.row()["liveness_reason"].as_str().unwrap_or_default()
                ))
                .collect::<Vec<_>>()
                .join(", "),
            shown(latency),
            held_at.map_or_else(String::new, |held_at| format!(
                ", {} after the flock was seen held",
                shown(alive.received_at.saturating_duration_since(held_at))
            ))
        ));
        Ok((alive, before))
    }

    /// Checks a row the watch or roster-list showed against the session and the world.
    fn check_row(&self, row: &Value, session: usize, outcome: &mut PartOutcome) {
        let session_record = &self.sessions[session];
        let evidence = self.evidence(session);
        if row["origin"] != COPILOT {
            outcome.fail(format!("the row's origin is {}, not \"copilot\"{evidence}", row["origin"]));
        }
        if row["liveness"] != "alive" {
            outcome.fail(format!(
                "the row says {} ({}) while Copilot CLI runs{evidence}",
                row["liveness"], row["liveness_reason"]
            ));
        }
        if row["harness"] != COPILOT {
            outcome.fail(format!("the row's harness is {}, not copilot{evidence}", row["harness"]));
        }
        if row["session_id"].as_str() != Some(session_record.session_id.as_str()) {
            outcome.fail(format!(
                "the row's session_id is {}, the session directory is {}{evidence}",
                row["session_id"], session_record.session_id
            ));
        }
        let project = self.world.project.display().to_string();
        if row["cwd"].as_str() != Some(project.as_str()) {
            outcome.fail(format!("the row's cwd is {}, not the project {project:?}{evidence}", row["cwd"]));
        }
    }

    /// Part 1: the watch reports the session Copilot CLI marked, alive; `roster-list`
    /// shows the same row.
    fn listed(&mut self, proof: &mut AdoptedProof) -> anyhow::Result<()> {
        let mut outcome = PartOutcome::default();
        let session = self.start_session(&[], proof)?;
        let pid = self.sessions[session].pid;
        let (alive, before) = self.wait_alive(session, &mut outcome, proof)?;
        self.check_row(alive.row(), session, &mut outcome);
        proof.observations.push(self.what_the_binary_did(session, &alive, &before));
        proof.example_file = Some(self.example_files(session));
        let listed = self.rows(&[])?;
        match listed.iter().find(|row| row["session_pid"].as_u64() == Some(u64::from(pid))) {
            Some(row) => {
                self.check_row(row, session, &mut outcome);
                for key in
                    ["origin", "liveness", "cwd", "session_id", "harness", "path", "session_pid_source"]
                {
                    if row[key] != alive.row()[key] {
                        outcome.fail(format!(
                            "roster-list --format json says {key} {}, the watch said {}",
                            row[key],
                            alive.row()[key]
                        ));
                    }
                }
                proof.note(format!(
                    "roster-list --format json: {} {} {} {} {} {} (source {})",
                    row["origin"],
                    row["session_pid"],
                    row["liveness"],
                    row["session_id"],
                    row["cwd"],
                    row["path"]
                        .as_str()
                        .map_or_else(String::new, |path| neutral_path(Path::new(path), self.world)),
                    row["session_pid_source"]
                ));
            }
            None => outcome.fail(format!(
                "roster-list --format json shows no row for pid {pid}: {}{}",
                Value::from(listed.clone()),
                self.evidence(session)
            )),
        }
        self.finish(Part::Listed, outcome, proof);
        Ok(())
    }

    /// Part 2: SIGKILL to the pid the lock file names, its model call held: `died` at once;
    /// the row dead, saying Copilot CLI removes its files; the files kept byte for byte.
    fn killed(&mut self, proof: &mut AdoptedProof) -> anyhow::Result<()> {
        let mut outcome = PartOutcome::default();
        let session = 0;
        let (pid, loader) = (self.sessions[session].pid, self.sessions[session].child.id());
        self.wait_for_model_calls(1, session)?;
        let directory = self.state_directory.join(&self.sessions[session].session_id);
        let lock_path = directory.join(&self.sessions[session].lock_name);
        let hold_path = directory.join(self.sessions[session].hold_name());
        let lock_before = fs::read(&lock_path).with_context(|| format!("reading {}", lock_path.display()))?;
        let hold_before = fs::read(&hold_path).with_context(|| format!("reading {}", hold_path.display()))?;
        let evidence = self.evidence(session);
        // A session that has run a while: an unheld claim younger than the
        // grace reads as one starting (maybe in another pid namespace), and
        // `roster-list` calls it dead only past that.
        let ran_for = self.sessions[session].lock_seen_at.elapsed();
        let grace = registry_core::adopted::COPILOT_STARTING_GRACE + Duration::from_millis(500);
        if ran_for < grace {
            std::thread::sleep(grace - ran_for);
        }
        let killed_at = Instant::now();
        signal_process(pid, "KILL");
        let exited_at = wait_for_exit(pid, EVENT_DEADLINE);
        match self.watch.wait_for("died", EVENT_DEADLINE, |event| event.is_about(&["died"], pid)) {
            Ok(event) => {
                outcome.latency("died", event.received_at.saturating_duration_since(killed_at));
                match exited_at {
                    Some(exited_at) => proof.note(format!(
                        "pid {pid} was seen exited {} after SIGKILL; died came {} after that",
                        shown(exited_at.saturating_duration_since(killed_at)),
                        shown(event.received_at.saturating_duration_since(exited_at))
                    )),
                    None => outcome.fail(format!("pid {pid} still ran {EVENT_DEADLINE:?} after SIGKILL")),
                }
                if event.row()["origin"] != COPILOT {
                    outcome.fail(format!("the died row's origin is {}", event.row()["origin"]));
                }
            }
            Err(error) => outcome.fail(format!("{error:#}{evidence}")),
        }
        let row = self
            .rows(&["--all"])?
            .into_iter()
            .find(|row| row["session_pid"].as_u64() == Some(u64::from(pid)));
        match &row {
            Some(row) if row["liveness"] == "dead" => {
                let reason = row["liveness_reason"].as_str().unwrap_or_default();
                if !reason.contains(DEAD_REASON) {
                    outcome.fail(format!("the dead row's reason does not say {DEAD_REASON:?}: {reason:?}"));
                }
                proof.note(format!("roster-list --all: dead, {reason:?}"));
            }
            other => {
                outcome.fail(format!("roster-list --all shows {other:?} for the killed pid {pid}{evidence}"))
            }
        }
        check_file_kept(&lock_path, &lock_before, "after the kill and roster-list", &mut outcome);
        check_file_kept(&hold_path, &hold_before, "after the kill and roster-list", &mut outcome);
        let pruned = self
            .world
            .roster_tool(self.binaries, "roster-prune", self.node)
            .arg("--dir")
            .arg(&self.world.roster)
            .arg("--json")
            .output()?;
        if !pruned.status.success() {
            outcome.fail(format!("roster-prune failed: {}", String::from_utf8_lossy(&pruned.stderr).trim()));
        }
        let pruned: Value = serde_json::from_slice(&pruned.stdout).unwrap_or_default();
        let lock_text = lock_path.display().to_string();
        let removed_it = pruned["removed"].as_array().is_some_and(|rows| {
            rows.iter().any(|row| {
                row["session_pid"].as_u64() == Some(u64::from(pid))
                    || row["path"].as_str() == Some(lock_text.as_str())
            })
        });
        if removed_it {
            outcome.fail(format!("roster-prune says it removed Copilot CLI's session: {pruned}"));
        }
        check_file_kept(&lock_path, &lock_before, "after roster-prune", &mut outcome);
        check_file_kept(&hold_path, &hold_before, "after roster-prune", &mut outcome);
        let still_listed = self
            .rows(&["--all"])?
            .iter()
            .any(|row| row["session_pid"].as_u64() == Some(u64::from(pid)) && row["liveness"] == "dead");
        if !still_listed {
            outcome.fail("after roster-prune, roster-list --all no longer shows the dead session");
        }
        let loader_state = match self.sessions[session].child.try_wait()? {
            Some(status) => format!("had exited ({status})"),
            None => "still ran".to_owned(),
        };
        proof.note(format!(
            "SIGKILL to pid {pid} mid-turn: {} ({} bytes) and {} ({} bytes) left as they were; its loader, pid \
             {loader}, {loader_state} by then; its group is killed now",
            self.sessions[session].lock_name,
            lock_before.len(),
            self.sessions[session].hold_name(),
            hold_before.len()
        ));
        self.sessions[session].kill_group();
        self.finish(Part::Killed, outcome, proof);
        Ok(())
    }

    /// Part 3: a second session's turn answered: Copilot CLI exits 0 and removes its files;
    /// the watch says `removed`; `roster-list` shows it no more.
    fn exited(&mut self, proof: &mut AdoptedProof) -> anyhow::Result<()> {
        let mut outcome = PartOutcome::default();
        let known = self.log.sessions();
        let calls_before = self.server.model_call_count();
        let session = self.start_session(&known, proof)?;
        let pid = self.sessions[session].pid;
        let (alive, before) = self.wait_alive(session, &mut outcome, proof)?;
        self.check_row(alive.row(), session, &mut outcome);
        proof.observations.push(self.what_the_binary_did(session, &alive, &before));
        self.wait_for_model_calls(calls_before + 1, session)?;
        let (session_id, lock_name, hold_name) = {
            let record = &self.sessions[session];
            (record.session_id.clone(), record.lock_name.clone(), record.hold_name())
        };
        let opened_at = Instant::now();
        self.server.open_gate();
        let (mut status, mut native_gone, mut lock_gone, mut hold_gone) = (None, None, None, None);
        while status.is_none() || lock_gone.is_none() || hold_gone.is_none() {
            if status.is_none() {
                status = self.sessions[session].child.try_wait()?.map(|status| (status, Instant::now()));
            }
            if native_gone.is_none() && !process_running(pid) {
                native_gone = Some(Instant::now());
            }
            lock_gone = lock_gone.or_else(|| self.log.first_seen(&session_id, &lock_name, Option::is_none));
            hold_gone = hold_gone.or_else(|| self.log.first_seen(&session_id, &hold_name, Option::is_none));
            if opened_at.elapsed() > STEP_DEADLINE {
                let evidence = format!(
                    "{STEP_DEADLINE:?} after its turn was answered: loader {}, {lock_name} {}, {hold_name} {}; {}",
                    status
                        .map_or_else(|| "still runs".to_owned(), |(status, _)| format!("exited ({status})")),
                    if lock_gone.is_some() { "removed" } else { "still there" },
                    if hold_gone.is_some() { "removed" } else { "still there" },
                    describe_timeline(self.log, &session_id, pid)
                );
                if status.is_some() {
                    proof
                        .mismatches
                        .push(format!("Copilot CLI ended normally but left its files: {evidence}"));
                }
                bail!("Copilot CLI's second session did not end as roster assumes: {evidence}");
            }
            std::thread::sleep(READ_INTERVAL);
        }
        let (status, exited_at) = status.context("the loader exited")?;
        let lock_gone = lock_gone.context("the lock file went")?;
        let hold_gone = hold_gone.context("the hold file went")?;
        let after = |at: Instant| shown(at.saturating_duration_since(opened_at));
        let output = fs::read_to_string(self.world.harness_output()).unwrap_or_default();
        proof.note(format!(
            "its turn answered, Copilot CLI exited ({status}) {} later, printing the reply: {}; {lock_name} was seen \
             gone at +{}, {hold_name} at +{}, pid {pid} at +{}",
            after(exited_at),
            output.contains(REPLY_TEXT),
            after(lock_gone),
            after(hold_gone),
            native_gone.map_or_else(|| "?".to_owned(), after)
        ));
        if !status.success() {
            outcome
                .fail(format!("Copilot CLI exited {status} after its turn was answered: {}", output.trim()));
        }
        match self.watch.wait_for("removed", EVENT_DEADLINE, |event| event.is_about(&["removed"], pid)) {
            Ok(event) => outcome.latency("removed", event.received_at.saturating_duration_since(lock_gone)),
            Err(error) => outcome.fail(format!("{error:#}{}", self.evidence(session))),
        }
        let events: Vec<String> = self
            .watch
            .events()
            .iter()
            .filter(|event| event.row()["session_pid"].as_u64() == Some(u64::from(pid)))
            .filter(|event| event.received_at >= alive.received_at)
            .map(|event| format!("{} {}", event.kind(), event.row()["liveness"].as_str().unwrap_or("-"),))
            .collect();
        proof.note(format!("the watch's events of the second session from alive on: {}", events.join(", ")));
        let unexpected: Vec<&String> = events
            .iter()
            .skip(1)
            .filter(|event| {
                !event.starts_with("died") && !event.starts_with("removed") && !event.starts_with("refreshed")
            })
            .collect();
        if !unexpected.is_empty() {
            outcome.fail(format!("between alive and removed the watch reported {unexpected:?}"));
        }
        let rows = self.rows(&["--all"])?;
        if let Some(row) = rows.iter().find(|row| row["session_pid"].as_u64() == Some(u64::from(pid))) {
            outcome.fail(format!("roster-list --all still shows the session that ended: {row}"));
        }
        self.finish(Part::Exited, outcome, proof);
        Ok(())
    }

    /// Waits until the server has seen `count` model calls in all, the session's loader
    /// still running.
    fn wait_for_model_calls(&mut self, count: usize, session: usize) -> anyhow::Result<()> {
        let started = Instant::now();
        while self.server.model_call_count() < count {
            if let Some(status) = self.sessions[session].child.try_wait()? {
                bail!(
                    "Copilot CLI exited ({status}) before its model call; requests: {:?}",
                    self.server.requests()
                );
            }
            ensure!(
                started.elapsed() < STEP_DEADLINE,
                "Copilot CLI made no model call within {STEP_DEADLINE:?}; requests: {:?}",
                self.server.requests()
            );
            std::thread::sleep(POLL);
        }
        Ok(())
    }

    /// What the binary did with its files at the start of `session`, and whether the
    /// watch's settling re-reads were what found the `flock`.
    fn what_the_binary_did(&self, session: usize, alive: &WatchEvent, before: &[WatchEvent]) -> String {
        let record = &self.sessions[session];
        let (id, pid, lock_seen_at) = (&record.session_id, record.pid, record.lock_seen_at);
        let lock = self.log.sightings(id, &record.lock_name);
        let hold = self.log.sightings(id, &record.hold_name());
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
        let workspace = self.log.first_seen(id, "workspace.yaml", Option::is_some);
        parts.push(format!(
            "{order}; {flock}; workspace.yaml first seen at {}",
            workspace.map_or_else(|| "never".to_owned(), at)
        ));
        parts.push(self.inotify_order(session));
        parts.push(self.settling_verdict(session, alive, before, held_at));
        format!("session {}: {}", session + 1, parts.join("; "))
    }

    /// The order inotify gave the session's `inuse.*` files at its start, and what follows
    /// from it: a file created then written was empty at its creation; a hold file created
    /// after the lock file was written and closed was locked (on its own descriptor) after
    /// that.
    fn inotify_order(&self, session: usize) -> String {
        let record = &self.sessions[session];
        let (lock, hold) = (record.lock_name.clone(), record.hold_name());
        let events: Vec<FileEvent> = self
            .file_events
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
            _ => findings.push(
                "the order of the lock file's write and the hold file's creation was not seen".to_owned(),
            ),
        }
        format!("inotify order: {}; {}", sequence.join(" → "), findings.join("; "))
    }

    /// Whether the watch's re-reads of an unproven young claim (on each wake-up, at least
    /// every `SETTLING_LOOK`, for `SETTLING`) were what found the `flock`: a lock taken
    /// sends no inotify event. The unproven row's reason says what the watch's read saw.
    fn settling_verdict(
        &self,
        session: usize,
        alive: &WatchEvent,
        before: &[WatchEvent],
        held_at: Option<Instant>,
    ) -> String {
        let record = &self.sessions[session];
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
        let next_change = self.log.timeline(&record.session_id).into_iter().find(|(name, sighting)| {
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
        let before_next =
            next_change.as_ref().is_none_or(|(_, sighting)| alive.received_at < sighting.seen_at);
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
    fn example_files(&self, session: usize) -> String {
        let record = &self.sessions[session];
        let home = self.world.home.display().to_string();
        let content = |name: &str| {
            self.log
                .latest(&record.session_id, name)
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
            self.log
                .names(&record.session_id)
                .into_iter()
                .filter(|name| !content_kept(name))
                .collect::<Vec<_>>()
                .join(" ")
        )
    }

    /// The session's files as the log saw them, for a failure message.
    fn evidence(&self, session: usize) -> String {
        let record = &self.sessions[session];
        format!(" [{}]", describe_timeline(self.log, &record.session_id, record.pid))
    }

    /// Records a part's result and latencies.
    fn finish(&self, part: Part, outcome: PartOutcome, proof: &mut AdoptedProof) {
        record_part(part.label(), outcome, proof);
    }

    /// `roster-list --dir <roster> --format json [extra]`, parsed.
    fn rows(&self, extra: &[&str]) -> anyhow::Result<Vec<Value>> {
        roster_rows(self.world, self.binaries, self.node, extra)
    }
}

/// The pid an `inuse.<pid>.lock` name carries.
fn lock_file_pid(name: &str) -> Option<u32> {
    let digits = name.strip_prefix("inuse.")?.strip_suffix(".lock")?;
    (!digits.is_empty() && digits.bytes().all(|byte| byte.is_ascii_digit()))
        .then(|| digits.parse().ok())
        .flatten()
}

fn empty_state() -> FileState {
    FileState { bytes: Vec::new(), inode: 0, size: 0, modified_nanos: 0, holders: Vec::new() }
}

/// A top-level plain scalar of a YAML text (`cwd: /home/me/app`).
fn yaml_value(text: &str, key: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let value = line.strip_prefix(key)?.strip_prefix(':')?.trim();
        Some(value.trim_matches(|character| character == '"' || character == '\'').to_owned())
    })
}

/// Whether a process runs at `pid` (a zombie does not).
fn process_running(pid: u32) -> bool {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    stat.rfind(')').and_then(|end| stat.get(end + 2..)?.chars().next()).is_some_and(|state| state != 'Z')
}

/// The parent pid of `pid`.
fn parent_of(pid: u32) -> Option<u32> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat[stat.rfind(')')? + 2..].split(' ').nth(1)?.parse().ok()
}

fn check_file_kept(path: &Path, before: &[u8], when: &str, outcome: &mut PartOutcome) {
    match fs::read(path) {
        Ok(now) if now == before => {}
        Ok(now) => outcome.fail(format!(
            "{} changed {when}: was {:?}, is {:?}",
            path.display(),
            String::from_utf8_lossy(before),
            String::from_utf8_lossy(&now)
        )),
        Err(error) => outcome.fail(format!("{} is gone {when}: {error}", path.display())),
    }
}

/// `+1.2 ms` or `-0.4 ms`: `instant` against `origin`.
fn signed_ms(instant: Instant, origin: Instant) -> String {
    if instant >= origin {
        format!("+{}", shown(instant.duration_since(origin)))
    } else {
        format!("-{}", shown(origin.duration_since(instant)))
    }
}

/// Every change of a session's files the log saw, timed from the lock file's first sighting.
fn describe_timeline(log: &SessionStateLog, session: &str, pid: u32) -> String {
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
