//! What changes in the registry, as it happens, without polling and
//! without a daemon: inotify on the roster directory and its
//! subdirectories (`states/`, `messages/` and each session's message queue
//! in it are optional, and their coming and going is never a resync), a
//! pidfd per watched owner (readable the instant it
//! exits), and the descriptors the running process says end the watch
//! (`StopWhen`: its signalfd, its stdout), all in one epoll; beside them, a second inotify instance on the paths the
//! caller follows (`follow`) and on the directories holding the symlinks
//! the registry's path goes through. While nothing changes the process
//! sleeps in `epoll_wait` and makes no system call. It reports raw
//! changes; `roster-list --watch` turns them into events.

mod followed_paths;

use std::collections::{BTreeSet, HashMap};
use std::ffi::OsString;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::sys::epoll::{Epoll, EpollCreateFlags, EpollEvent, EpollFlags, EpollTimeout};
use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify, InotifyEvent, WatchDescriptor};
use owner_liveness::{Pid, PidFd};

use self::followed_paths::{FollowedEvent, FollowedPaths, Interest, symlinks_on_path};
use crate::error::{Error, Result};
use crate::store::directory::{CONSENT, MESSAGES, SESSIONS, STATES};

/// One thing that changed, for the caller to look at again.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// An entry of `sessions/` appeared, changed or went away.
    SessionEntry(String),
    /// An entry of `consent/` appeared, changed or went away.
    ConsentEntry(String),
    /// A session's state file in `states/` was written.
    StateEntry(String),
    /// The message queue of the record named here (`<record>.json`)
    /// changed: a message was queued or settled in it, or the queue's
    /// directory appeared or went away. Its names tell which.
    MessageQueue(String),
    /// A watched owner's pidfd became readable: the process exited.
    OwnerExited(Pid),
    /// An entry `name` of a path the caller follows (`follow`) appeared,
    /// changed or went away; `name` is `None` when the path itself changed,
    /// was removed or renamed (or, for a followed file, was written).
    Followed { path: PathBuf, name: Option<OsString> },
    /// Changes of the followed paths may have been lost (the kernel's
    /// queue overflowed): everything they decide must be looked at again.
    FollowedLost,
    /// Events may have been lost (the inotify queue overflowed, or the
    /// directory was replaced or recreated): everything must be read again.
    Resync(String),
    /// The registry directory is gone (removed, or its path leads where
    /// there is none now), for the reason given; the watch goes on and
    /// reports a `Resync` when it is back.
    Vanished(String),
    /// SIGINT or SIGTERM arrived, or whoever reads stdout went away.
    Stop,
}

/// What ends a watch, as the process that runs it arranges: descriptors
/// that become readable (a signalfd the binary made after blocking SIGINT
/// and SIGTERM) or report a hang-up (its stdout, once the reader goes).
/// Either arrives as `Change::Stop`; the watch never reads them.
#[derive(Debug, Default)]
pub struct StopWhen {
    pub readable: Vec<OwnedFd>,
    pub hung_up: Vec<OwnedFd>,
}

const INOTIFY_TOKEN: u64 = 0;
const SIGNAL_TOKEN: u64 = 1;
const STDOUT_TOKEN: u64 = 2;
const FOLLOWED_TOKEN: u64 = 3;
/// Owner tokens are the pid plus this, so a token names its owner.
const OWNER_TOKEN_BASE: u64 = 1 << 32;

/// The inotify watches of a present registry, or of the nearest existing
/// directory above a missing one (waiting for it to come back).
#[derive(Debug, Default)]
struct Watches {
    root: Option<WatchDescriptor>,
    sessions: Option<WatchDescriptor>,
    consent: Option<WatchDescriptor>,
    states: Option<WatchDescriptor>,
    messages: Option<WatchDescriptor>,
    /// Each queue directory in `messages/`, by its watch: its name.
    queues: HashMap<WatchDescriptor, String>,
    /// The nearest existing ancestor, while the registry is missing.
    waiting_in: Option<WatchDescriptor>,
    /// The directory the registry's path led to when it was watched (its
    /// device and inode): when the path leads elsewhere (a symlink above it
    /// was swapped), the watch moves with it.
    leads_to: Option<(u64, u64)>,
}

/// What `follow` did: the paths followed anew, and those that could not be
/// followed with why and the fix, in words. A path that does not exist is
/// neither: the caller follows the directory above it to see it appear.
#[derive(Debug, Default)]
pub struct FollowOutcome {
    pub newly_followed: Vec<PathBuf>,
    pub unfollowable: Vec<(PathBuf, String)>,
}

/// The watch: one epoll over the inotify fd, a signalfd, stdout and the
/// owners' pidfds.
#[derive(Debug)]
pub struct RegistryWatch {
    path: PathBuf,
    epoll: Epoll,
    inotify: Inotify,
    /// Kept open for as long as the watch is: epoll watches them.
    _stop_when: StopWhen,
    watches: Watches,
    owners: HashMap<Pid, PidFd>,
    /// The most pidfds this watch opens: the open-file limit less a
    /// reserve, so reading the registry never runs out of descriptors.
    pidfd_budget: usize,
    /// The paths followed besides the registry, or why they cannot be (no
    /// inotify instance could be made: the descriptor limit, or the
    /// per-user limit of instances).
    followed: std::result::Result<FollowedPaths, Errno>,
}

/// Descriptors kept free for reading records, markers and directories.
const RESERVED_DESCRIPTORS: u64 = 64;

fn entry_flags() -> AddWatchFlags {
    AddWatchFlags::IN_CREATE
        | AddWatchFlags::IN_MOVED_TO
        | AddWatchFlags::IN_MOVED_FROM
        | AddWatchFlags::IN_DELETE
        | AddWatchFlags::IN_CLOSE_WRITE
        | AddWatchFlags::IN_ATTRIB
        | AddWatchFlags::IN_DELETE_SELF
        | AddWatchFlags::IN_MOVE_SELF
        | AddWatchFlags::IN_ONLYDIR
        | AddWatchFlags::IN_DONT_FOLLOW
}

fn root_flags() -> AddWatchFlags {
    AddWatchFlags::IN_CREATE
        | AddWatchFlags::IN_MOVED_TO
        | AddWatchFlags::IN_MOVED_FROM
        | AddWatchFlags::IN_DELETE
        | AddWatchFlags::IN_ATTRIB
        | AddWatchFlags::IN_DELETE_SELF
        | AddWatchFlags::IN_MOVE_SELF
        | AddWatchFlags::IN_ONLYDIR
        | AddWatchFlags::IN_DONT_FOLLOW
}

/// A state file is only ever put in place by a rename; the temporaries
/// written before it are nobody's business.
fn state_flags() -> AddWatchFlags {
    AddWatchFlags::IN_MOVED_TO
        | AddWatchFlags::IN_DELETE_SELF
        | AddWatchFlags::IN_MOVE_SELF
        | AddWatchFlags::IN_ONLYDIR
        | AddWatchFlags::IN_DONT_FOLLOW
}

/// `messages/` holds one directory per session's queue, made by the
/// first send and removed by prune.
fn messages_flags() -> AddWatchFlags {
    AddWatchFlags::IN_CREATE
        | AddWatchFlags::IN_MOVED_TO
        | AddWatchFlags::IN_MOVED_FROM
        | AddWatchFlags::IN_DELETE
        | AddWatchFlags::IN_DELETE_SELF
        | AddWatchFlags::IN_MOVE_SELF
        | AddWatchFlags::IN_ONLYDIR
        | AddWatchFlags::IN_DONT_FOLLOW
}

/// A message is queued, and settled, by a rename into its queue; the
/// pending name removed after settling and old settled files removed by a
/// send change nothing a watcher reports.
fn queue_flags() -> AddWatchFlags {
    AddWatchFlags::IN_MOVED_TO
        | AddWatchFlags::IN_DELETE_SELF
        | AddWatchFlags::IN_MOVE_SELF
        | AddWatchFlags::IN_ONLYDIR
        | AddWatchFlags::IN_DONT_FOLLOW
}

fn waiting_flags() -> AddWatchFlags {
    AddWatchFlags::IN_CREATE
        | AddWatchFlags::IN_MOVED_TO
        | AddWatchFlags::IN_DELETE_SELF
        | AddWatchFlags::IN_MOVE_SELF
        | AddWatchFlags::IN_ONLYDIR
}

impl RegistryWatch {
    /// Starts watching the registry at `path` (which need not exist yet).
    /// What ends the watch is the caller's, as descriptors it owns the
    /// process's side of (`StopWhen`): the library blocks no signal and
    /// looks at no standard stream of its own.
    pub fn start(path: &Path, stop_when: StopWhen) -> Result<RegistryWatch> {
        let system = |what: &'static str| move |errno: Errno| Error::io(what, PathBuf::new(), errno.into());
        let epoll = Epoll::new(EpollCreateFlags::EPOLL_CLOEXEC).map_err(system("epoll_create"))?;
        let inotify =
            Inotify::init(InitFlags::IN_CLOEXEC | InitFlags::IN_NONBLOCK).map_err(system("inotify_init"))?;
        epoll
            .add(inotify.as_fd(), EpollEvent::new(EpollFlags::EPOLLIN, INOTIFY_TOKEN))
            .map_err(system("epoll_ctl"))?;
        for readable in &stop_when.readable {
            epoll
                .add(readable.as_fd(), EpollEvent::new(EpollFlags::EPOLLIN, SIGNAL_TOKEN))
                .map_err(system("epoll_ctl"))?;
        }
        for hung_up in &stop_when.hung_up {
            // Only the errors and hang-ups epoll always reports; a
            // descriptor that cannot be watched (a file) need not be.
            let _ = epoll.add(hung_up.as_fd(), EpollEvent::new(EpollFlags::empty(), STDOUT_TOKEN));
        }
        // Without it the registry is still watched; `follow` says why not.
        let followed = FollowedPaths::new().and_then(|followed| {
            epoll.add(followed.as_fd(), EpollEvent::new(EpollFlags::EPOLLIN, FOLLOWED_TOKEN))?;
            Ok(followed)
        });
        let mut watch = RegistryWatch {
            path: path.to_owned(),
            epoll,
            inotify,
            _stop_when: stop_when,
            watches: Watches::default(),
            owners: HashMap::new(),
            pidfd_budget: pidfd_budget(),
            followed,
        };
        watch.establish()?;
        Ok(watch)
    }

    /// Whether the registry directory is being watched (it exists).
    pub fn registry_present(&self) -> bool {
        self.watches.sessions.is_some()
    }

    /// Watches `pid` through a pidfd: its exit arrives as `OwnerExited`.
    /// `Ok(false)` when the process is already gone; an error when no more
    /// descriptors can be opened (EMFILE, ENFILE).
    pub fn watch_owner(&mut self, pid: Pid) -> std::result::Result<bool, Errno> {
        if self.owners.contains_key(&pid) {
            return Ok(true);
        }
        if self.owners.len() >= self.pidfd_budget {
            return Err(Errno::EMFILE);
        }
        let pidfd = match PidFd::open(pid) {
            Ok(pidfd) => pidfd,
            Err(Errno::ESRCH | Errno::ENOENT | Errno::EINVAL) => return Ok(false),
            Err(errno) => return Err(errno),
        };
        self.epoll.add(
            pidfd.as_fd(),
            EpollEvent::new(EpollFlags::EPOLLIN, OWNER_TOKEN_BASE + u64::from(pid.get())),
        )?;
        self.owners.insert(pid, pidfd);
        Ok(true)
    }

    /// Stops watching `pid` (its record is gone, or it was seen to exit).
    pub fn unwatch_owner(&mut self, pid: Pid) {
        if let Some(pidfd) = self.owners.remove(&pid) {
            let _ = self.epoll.delete(pidfd.as_fd());
        }
    }

    /// How many owners are watched through a pidfd.
    pub fn watched_owners(&self) -> usize {
        self.owners.len()
    }

    /// Follows exactly `paths` (directories, or files; symlinks are
    /// followed) for the caller: the paths followed before and not given
    /// now are let go, and each change of a followed path or of an entry
    /// in it arrives as `Change::Followed`.
    pub fn follow(&mut self, paths: &BTreeSet<PathBuf>) -> FollowOutcome {
        let mut outcome = FollowOutcome::default();
        let followed = match &mut self.followed {
            Ok(followed) => followed,
            Err(errno) => {
                let why = format!(
                    "no inotify instance could be made ({}); raise fs.inotify.max_user_instances or `ulimit -n`",
                    errno.desc()
                );
                outcome.unfollowable = paths.iter().map(|path| (path.clone(), why.clone())).collect();
                return outcome;
            }
        };
        for gone in followed.caller_paths().difference(paths) {
            followed.unfollow(&Interest::Caller(gone.clone()));
        }
        for path in paths {
            match followed.follow(Interest::Caller(path.clone()), path) {
                Ok(true) => outcome.newly_followed.push(path.clone()),
                Ok(false) => {}
                Err(Errno::ENOENT | Errno::ENOTDIR | Errno::ELOOP) => {}
                Err(errno) => outcome.unfollowable.push((path.clone(), why_unfollowable(errno))),
            }
        }
        outcome
    }

    /// Blocks until something changes; returns what did.
    pub fn wait(&mut self) -> Result<Vec<Change>> {
        self.wait_at_most(None)
    }

    /// `wait`, for at most `timeout` when one is given: nothing changed
    /// when it ran out.
    pub fn wait_at_most(&mut self, timeout: Option<std::time::Duration>) -> Result<Vec<Change>> {
        let timeout = match timeout {
            Some(timeout) => EpollTimeout::try_from(timeout).unwrap_or(EpollTimeout::MAX),
            None => EpollTimeout::NONE,
        };
        let mut ready = [EpollEvent::empty(); 64];
        let count = loop {
            match self.epoll.wait(&mut ready, timeout) {
                Ok(count) => break count,
                Err(Errno::EINTR) => continue,
                Err(errno) => return Err(Error::io("epoll_wait", &self.path, errno.into())),
            }
        };
        let mut changes = Vec::new();
        for event in &ready[..count] {
            match event.data() {
                INOTIFY_TOKEN => self.read_inotify(&mut changes)?,
                FOLLOWED_TOKEN => self.read_followed(&mut changes)?,
                SIGNAL_TOKEN | STDOUT_TOKEN => changes.push(Change::Stop),
                token => {
                    let pid = u32::try_from(token - OWNER_TOKEN_BASE).ok().and_then(Pid::new);
                    if let Some(pid) = pid {
                        self.unwatch_owner(pid);
                        changes.push(Change::OwnerExited(pid));
                    }
                }
            }
        }
        Ok(changes)
    }

    fn read_inotify(&mut self, changes: &mut Vec<Change>) -> Result<()> {
        let mut reestablish = false;
        loop {
            let events = match self.inotify.read_events() {
                Ok(events) => events,
                Err(Errno::EAGAIN) => break,
                Err(Errno::EINTR) => continue,
                Err(errno) => return Err(Error::io("read inotify events for", &self.path, errno.into())),
            };
            for event in &events {
                reestablish |= self.interpret(event, changes);
            }
        }
        if reestablish {
            self.reestablish(&RegistryPathChange::DirectoryReplacedOrRemoved, changes)?;
        } else if self.path_leads_elsewhere() {
            // Another change may show first that a directory above the
            // registry was swapped without a symlink (a rename).
            self.reestablish(&RegistryPathChange::LeadsElsewhere, changes)?;
        }
        Ok(())
    }

    /// Adds what one inotify event says to `changes`; `true` when the
    /// registry's own watches must be made again (a directory replaced or
    /// removed).
    fn interpret(&mut self, event: &InotifyEvent, changes: &mut Vec<Change>) -> bool {
        if event.mask.contains(AddWatchFlags::IN_Q_OVERFLOW) {
            changes.push(Change::Resync("the kernel's event queue overflowed".into()));
            return false;
        }
        let self_event = AddWatchFlags::IN_DELETE_SELF
            | AddWatchFlags::IN_MOVE_SELF
            | AddWatchFlags::IN_IGNORED
            | AddWatchFlags::IN_UNMOUNT;
        let wd = Some(event.wd);
        // Events of watches this one removed itself (their
        // IN_IGNORED above all) say nothing about the registry now.
        let current = [
            self.watches.root,
            self.watches.sessions,
            self.watches.consent,
            self.watches.states,
            self.watches.messages,
            self.watches.waiting_in,
        ];
        if !current.contains(&wd) && !self.watches.queues.contains_key(&event.wd) {
            return false;
        }
        if wd == self.watches.waiting_in {
            return true;
        }
        // `states/` is optional and holds hints: its going or coming
        // moves only its own watch, never the registry's.
        if wd == self.watches.states && event.mask.intersects(self_event) {
            self.watches.states = None;
            return false;
        }
        // So are `messages/` and each queue in it, which hold their
        // own files: a queue going is said as a change of it.
        if wd == self.watches.messages && event.mask.intersects(self_event) {
            self.watches.messages = None;
            return false;
        }
        if let Some(queue) = self.watches.queues.get(&event.wd) {
            let record = format!("{queue}.json");
            if event.mask.intersects(self_event) {
                self.watches.queues.remove(&event.wd);
                // Moved away, it is watched no more.
                let _ = self.inotify.rm_watch(event.wd);
                changes.push(Change::MessageQueue(record));
            } else if event.name.as_ref().is_some_and(|name| !name.as_encoded_bytes().starts_with(b".")) {
                changes.push(Change::MessageQueue(record));
            }
            return false;
        }
        if event.mask.intersects(self_event) {
            return true;
        }
        let Some(name) = event.name.as_ref().and_then(|name| name.to_str()) else {
            // A name that is not UTF-8: a problem entry for the listing.
            if wd == self.watches.sessions {
                changes.push(Change::Resync("an entry with a name that is not UTF-8 changed".into()));
            }
            return false;
        };
        self.entry_changed(wd, name, event.mask, changes)
    }

    /// An entry `name` of the watched directory `wd` changed (`mask`);
    /// `true` when the registry's own watches must be made again.
    fn entry_changed(
        &mut self,
        wd: Option<WatchDescriptor>,
        name: &str,
        mask: AddWatchFlags,
        changes: &mut Vec<Change>,
    ) -> bool {
        if wd == self.watches.sessions {
            if !name.starts_with('.') {
                changes.push(Change::SessionEntry(name.to_owned()));
            }
        } else if wd == self.watches.consent {
            if !name.starts_with('.') {
                changes.push(Change::ConsentEntry(name.to_owned()));
            }
        } else if wd == self.watches.states {
            if !name.starts_with('.') {
                changes.push(Change::StateEntry(name.to_owned()));
            }
        } else if wd == self.watches.messages {
            if !name.starts_with('.') {
                self.queue_entry_changed(name, mask, changes);
            }
        } else if wd == self.watches.root && name == STATES {
            self.watch_states();
        } else if wd == self.watches.root && name == MESSAGES {
            self.watch_messages(changes);
        } else if wd == self.watches.root && [SESSIONS, CONSENT].contains(&name) {
            // A subdirectory removed, renamed or put in place. Its
            // creation may also be the one the watch was made
            // just after (the root watched first, the directory
            // made, then watched itself): the directory watched
            // already is the one there, and nothing was missed.
            let arrived = mask.intersects(AddWatchFlags::IN_CREATE | AddWatchFlags::IN_MOVED_TO);
            let watched = if name == SESSIONS { self.watches.sessions } else { self.watches.consent };
            let already_watched = arrived
                && watched.is_some()
                && self.inotify.add_watch(&self.path.join(name), entry_flags()).ok() == watched;
            return !already_watched;
        }
        false
    }

    fn read_followed(&mut self, changes: &mut Vec<Change>) -> Result<()> {
        let Ok(followed) = &mut self.followed else { return Ok(()) };
        let events = followed.read().map_err(|errno| {
            Error::io("read inotify events for the paths followed beside", &self.path, errno.into())
        })?;
        let mut path_changed = false;
        for event in events {
            match event {
                FollowedEvent::Caller { path, name } => changes.push(Change::Followed { path, name }),
                FollowedEvent::Lost => {
                    changes.push(Change::FollowedLost);
                    path_changed = true;
                }
                FollowedEvent::RegistryPathChanged => path_changed = true,
            }
        }
        if !path_changed {
            return Ok(());
        }
        if self.path_leads_elsewhere() {
            self.reestablish(&RegistryPathChange::LeadsElsewhere, changes)?;
        } else if self.followed_symlinks() != self.symlinks_on_the_way() {
            if self.registry_present() {
                // Another way to the same directory: only the symlinks to
                // follow changed.
                self.follow_symlinks_on_the_way();
            } else {
                // Waiting for a registry that is missing, in a directory
                // the path may no longer lead through.
                self.reestablish(&RegistryPathChange::LeadsElsewhere, changes)?;
            }
        }
        Ok(())
    }

    /// Watches `states/` when it is there and not watched yet.
    fn watch_states(&mut self) {
        if self.watches.states.is_none() {
            self.watches.states = self.inotify.add_watch(&self.path.join(STATES), state_flags()).ok();
        }
    }

    /// Watches `messages/` when it is there and not watched yet, and each
    /// queue in it: a queue made before its watch was is said as a change,
    /// so that a message queued meanwhile is seen.
    fn watch_messages(&mut self, changes: &mut Vec<Change>) {
        if self.watches.messages.is_some() {
            return;
        }
        let messages = self.path.join(MESSAGES);
        self.watches.messages = self.inotify.add_watch(&messages, messages_flags()).ok();
        if self.watches.messages.is_none() {
            return;
        }
        for name in queue_directory_names(&messages) {
            self.watch_queue(&name);
            changes.push(Change::MessageQueue(format!("{name}.json")));
        }
    }

    /// Watches the queue directory `messages/<name>`; `false` when it
    /// cannot be (gone already, or the inotify watch limit).
    fn watch_queue(&mut self, name: &str) -> bool {
        let path = self.path.join(MESSAGES).join(name);
        match self.inotify.add_watch(&path, queue_flags()) {
            Ok(wd) => {
                self.watches.queues.insert(wd, name.to_owned());
                true
            }
            Err(_) => false,
        }
    }

    /// A name in `messages/` came or went: a queue made (its watch added,
    /// then the queue said changed, for what was written before the
    /// watch) or removed.
    fn queue_entry_changed(&mut self, name: &str, mask: AddWatchFlags, changes: &mut Vec<Change>) {
        let arrived = mask.intersects(AddWatchFlags::IN_CREATE | AddWatchFlags::IN_MOVED_TO);
        if arrived {
            let watched = self.watches.queues.values().any(|queue| queue == name);
            if !watched {
                self.watch_queue(name);
            }
        } else if let Some(wd) =
            self.watches.queues.iter().find_map(|(wd, queue)| (queue == name).then_some(*wd))
        {
            self.watches.queues.remove(&wd);
            let _ = self.inotify.rm_watch(wd);
        }
        changes.push(Change::MessageQueue(format!("{name}.json")));
    }

    /// Watches the registry again where its path leads now and says what
    /// that changed: a `Resync` when it is there, `Vanished` when it was
    /// and is no more. `why` is what happened to the path.
    fn reestablish(&mut self, why: &RegistryPathChange, changes: &mut Vec<Change>) -> Result<()> {
        let was_present = self.registry_present();
        self.establish()?;
        match (was_present, self.registry_present()) {
            (_, true) => changes.push(Change::Resync(why.resync_reason(&self.path))),
            (true, false) => changes.push(Change::Vanished(why.vanished_reason(&self.path))),
            (false, false) => {}
        }
        Ok(())
    }

    /// Whether the registry's path no longer leads to the directory
    /// watched (or leads to one while none is).
    fn path_leads_elsewhere(&self) -> bool {
        self.watches.leads_to != directory_identity(&self.path)
    }

    /// The symlinks on the way to the registry, as followed now.
    fn followed_symlinks(&self) -> BTreeSet<Interest> {
        match &self.followed {
            Ok(followed) => followed.symlinks_on_the_way(),
            Err(_) => BTreeSet::new(),
        }
    }

    /// The symlinks on the way to the registry, as the path resolves now.
    fn symlinks_on_the_way(&self) -> BTreeSet<Interest> {
        symlinks_on_path(&self.path)
            .into_iter()
            .map(|(directory, name)| Interest::SymlinkOnTheWay { directory, name })
            .collect()
    }

    /// Follows the directories holding each symlink on the registry's path
    /// as it resolves now, letting go of those it no longer goes through.
    /// Where one cannot be followed, a swap of that symlink is noticed on
    /// the next change of the registry instead.
    fn follow_symlinks_on_the_way(&mut self) {
        let wanted = self.symlinks_on_the_way();
        let before = self.followed_symlinks();
        let Ok(followed) = &mut self.followed else { return };
        for gone in before.difference(&wanted) {
            followed.unfollow(gone);
        }
        for interest in wanted {
            if let Interest::SymlinkOnTheWay { directory, .. } = &interest {
                let directory = directory.clone();
                let _ = followed.follow(interest, &directory);
            }
        }
    }

    /// (Re)creates the inotify watches: on the registry and its
    /// subdirectories when they exist, else on the nearest existing
    /// directory above, to learn when the registry comes back.
    fn establish(&mut self) -> Result<()> {
        // The symlinks first: a swap after them is seen, and one before
        // them is in what is watched below.
        self.follow_symlinks_on_the_way();
        // A directory may appear between a failed watch and the watch that
        // waits for it, and its creation would go unseen: after waiting
        // starts, the registry is looked for again.
        for _ in 0..16 {
            if self.try_establish()? {
                return Ok(());
            }
            let complete = [SESSIONS, CONSENT].iter().all(|name| self.path.join(name).is_dir());
            if !complete {
                return Ok(());
            }
        }
        Ok(())
    }

    /// One attempt; `Ok(true)` when the registry is watched, `Ok(false)`
    /// when the watch waits for it.
    fn try_establish(&mut self) -> Result<bool> {
        self.watches.leads_to = None;
        let queues: Vec<WatchDescriptor> = self.watches.queues.drain().map(|(wd, _)| wd).collect();
        for wd in [
            self.watches.root.take(),
            self.watches.sessions.take(),
            self.watches.consent.take(),
            self.watches.states.take(),
            self.watches.messages.take(),
            self.watches.waiting_in.take(),
        ]
        .into_iter()
        .flatten()
        .chain(queues)
        {
            let _ = self.inotify.rm_watch(wd);
        }
        let add = |path: &Path, flags: AddWatchFlags| self.inotify.add_watch(path, flags);
        let root = add(&self.path, root_flags());
        let sessions = add(&self.path.join(SESSIONS), entry_flags());
        let consent = add(&self.path.join(CONSENT), entry_flags());
        // States are optional: a registry an older roster made has none
        // until a reader opens it (and its creation is seen in the root).
        let states = add(&self.path.join(STATES), state_flags()).ok();
        match (root, sessions, consent) {
            (Ok(root), Ok(sessions), Ok(consent)) => {
                self.watches = Watches {
                    root: Some(root),
                    sessions: Some(sessions),
                    consent: Some(consent),
                    states,
                    messages: None,
                    queues: HashMap::new(),
                    waiting_in: None,
                    // Looked at after the watches were made: a swap after
                    // this is a difference the next look finds.
                    leads_to: directory_identity(&self.path),
                };
                // The queues there are now are read by whoever (re)reads
                // the registry after this: nothing to say of them here.
                self.watch_messages(&mut Vec::new());
                Ok(true)
            }
            (root, sessions, consent) => {
                for wd in [root.ok(), sessions.ok(), consent.ok(), states].into_iter().flatten() {
                    let _ = self.inotify.rm_watch(wd);
                }
                self.wait_for_the_registry()?;
                self.watches.leads_to = directory_identity(&self.path);
                Ok(false)
            }
        }
    }

    fn wait_for_the_registry(&mut self) -> Result<()> {
        // The registry itself may exist without its subdirectories: then
        // watch it, for them to appear.
        let mut candidate: Option<&Path> = Some(&self.path);
        while let Some(directory) = candidate {
            match self.inotify.add_watch(directory, waiting_flags()) {
                Ok(wd) => {
                    self.watches.waiting_in = Some(wd);
                    return Ok(());
                }
                Err(Errno::ENOENT | Errno::ENOTDIR) => candidate = directory.parent(),
                Err(errno) => return Err(Error::io("watch", directory, errno.into())),
            }
        }
        Err(Error::io(
            "watch",
            &self.path,
            std::io::Error::new(std::io::ErrorKind::NotFound, "no directory above it exists"),
        ))
    }
}

/// What happened to the registry's path, for the reasons a `Resync` or a
/// `Vanished` gives.
enum RegistryPathChange {
    /// The registry directory itself was removed, replaced or recreated.
    DirectoryReplacedOrRemoved,
    /// The path leads to another directory now.
    LeadsElsewhere,
}

impl RegistryPathChange {
    fn resync_reason(&self, path: &Path) -> String {
        match self {
            RegistryPathChange::DirectoryReplacedOrRemoved => {
                "the registry directory was replaced or recreated".to_owned()
            }
            RegistryPathChange::LeadsElsewhere => format!(
                "{} now leads to another directory (a symlink or directory above it was changed)",
                path.display()
            ),
        }
    }

    fn vanished_reason(&self, path: &Path) -> String {
        match self {
            RegistryPathChange::DirectoryReplacedOrRemoved => "the registry directory was removed".to_owned(),
            RegistryPathChange::LeadsElsewhere => format!(
                "{} now leads where there is no registry (a symlink or directory above it was changed)",
                path.display()
            ),
        }
    }
}

/// The names of the queue directories in `messages`, as a watcher lists
/// them (roster makes nothing else there; a dotfile is no queue).
fn queue_directory_names(messages: &Path) -> Vec<String> {
    let Ok(entries) = owner_liveness::retry_interrupted(|| std::fs::read_dir(messages)) else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|name| !name.starts_with('.'))
        .collect()
}

/// Why inotify refused to follow a path, and the fix.
fn why_unfollowable(errno: Errno) -> String {
    let fix = match errno {
        Errno::ENOSPC => "the inotify watch limit is reached; raise fs.inotify.max_user_watches",
        Errno::EACCES => "it cannot be read",
        Errno::ENOMEM => "the kernel is out of memory",
        _ => "the kernel refused",
    };
    format!("{}: {fix}", errno.desc())
}

/// The device and inode of the directory `path` leads to now, following
/// symlinks; `None` when it leads nowhere.
fn directory_identity(path: &Path) -> Option<(u64, u64)> {
    let metadata = owner_liveness::retry_interrupted(|| std::fs::metadata(path)).ok()?;
    metadata.is_dir().then(|| (metadata.dev(), metadata.ino()))
}

/// How many pidfds fit under the open-file limit with the reserve kept.
fn pidfd_budget() -> usize {
    use nix::sys::resource::{Resource, getrlimit};
    let soft = getrlimit(Resource::RLIMIT_NOFILE).map(|(soft, _)| soft).unwrap_or(1024);
    usize::try_from(soft.saturating_sub(RESERVED_DESCRIPTORS)).unwrap_or(usize::MAX)
}
