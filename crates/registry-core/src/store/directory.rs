//! The roster directory (docs/contract.md §2): where it is, its trust checks, and the
//! verified handles every other file operation is made relative to, so a
//! path swapped for a symlink after the check cannot redirect anything.

use std::ffi::OsString;
use std::fs::File;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path, PathBuf};

use nix::errno::Errno;
use nix::fcntl::{OFlag, open, openat};
use nix::sys::stat::{Mode, fchmod, fstat, mkdirat};

use crate::error::{Error, Result};
use owner_liveness::retry_interrupted;

/// Name of the records subdirectory.
pub const SESSIONS: &str = "sessions";
/// Name of the consent markers subdirectory.
pub const CONSENT: &str = "consent";
/// Name of the session-id index subdirectory (`session_index`).
pub const SESSION_IDS: &str = "session-ids";
/// Name of the session states subdirectory (`state`).
pub const STATES: &str = "states";
/// Name of the message queues subdirectory (`messages`): one directory per
/// session, named as its record without `.json`.
pub const MESSAGES: &str = "messages";
/// The directory in `messages/` that keeps the outcomes of messages whose
/// queue is gone (a name no queue can have: queues are record names).
pub const OUTCOMES_NAME: &str = ".outcomes";
/// Name of the ended sessions subdirectory (`ended`).
pub const ENDED: &str = "ended";
/// Name of the claims subdirectory (`resuming`).
pub const RESUMING: &str = "resuming";

/// Where the roster directory is, and what said so.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirectoryChoice {
    pub path: PathBuf,
    pub source: DirectorySource,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DirectorySource {
    Flag,
    RosterDirEnv,
    XdgStateHome,
    Home,
}

/// `--dir` beats `ROSTER_DIR`, which beats `$XDG_STATE_HOME/roster`, else
/// `~/.local/state/roster`. A relative `ROSTER_DIR` is refused (hooks run
/// in arbitrary directories); a relative `XDG_STATE_HOME` is ignored, as
/// the XDG base directory specification says.
pub fn choose_directory(
    flag: Option<&Path>,
    env: &dyn Fn(&str) -> Option<OsString>,
) -> Result<DirectoryChoice> {
    if let Some(path) = flag {
        if path.as_os_str().is_empty() {
            return Err(Error::BadInput("--dir is empty; give the roster directory's path".into()));
        }
        return Ok(DirectoryChoice { path: absolute(path), source: DirectorySource::Flag });
    }
    if let Some(value) = env("ROSTER_DIR").filter(|value| !value.is_empty()) {
        let path = PathBuf::from(value);
        if !path.is_absolute() {
            return Err(Error::BadInput(format!(
                "ROSTER_DIR={:?} is not an absolute path; set it to one or unset it",
                path.display().to_string()
            )));
        }
        return Ok(DirectoryChoice { path, source: DirectorySource::RosterDirEnv });
    }
    if let Some(state) = env("XDG_STATE_HOME").map(PathBuf::from).filter(|path| path.is_absolute()) {
        return Ok(DirectoryChoice { path: state.join("roster"), source: DirectorySource::XdgStateHome });
    }
    let home = env("HOME").map(PathBuf::from).filter(|path| path.is_absolute()).ok_or(Error::NoHome)?;
    Ok(DirectoryChoice { path: home.join(".local/state/roster"), source: DirectorySource::Home })
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_owned())
}

/// A verified roster directory and its verified subdirectories.
#[derive(Debug)]
pub struct RosterDir {
    path: PathBuf,
    root: OwnedFd,
    sessions: OwnedFd,
    consent: OwnedFd,
    session_ids: OwnedFd,
    states: OwnedFd,
    messages: OwnedFd,
    /// Tells the latest instant a lock wait may end, below `LOCK_WAIT`: a
    /// hook's budget (see `with_lock_deadline`). Asked only when a lock is
    /// waited for.
    lock_deadline: Option<fn() -> Option<std::time::Instant>>,
    /// Called once when a lock wait has lasted a while, with the holder's
    /// pid when the kernel tells it: how a person learns what they wait for.
    pub(crate) on_long_lock_wait: Option<fn(&Path, Option<u32>)>,
    /// How many ended sessions, and for how long, `ended/` keeps: the
    /// user's configuration, else the defaults (docs/contract.md §7).
    /// Asked of `with_ended_bounds` once an ended session is kept, which
    /// few runs do: reading the configuration costs a look at a file.
    ended_bounds: std::sync::OnceLock<crate::ended_bounds::EndedBounds>,
    ended_bounds_from: Option<fn() -> crate::ended_bounds::EndedBounds>,
}

/// A verified subdirectory handle with its path, for messages.
#[derive(Clone, Copy, Debug)]
pub struct SubDir<'a> {
    pub(crate) fd: BorrowedFd<'a>,
    pub(crate) path: &'a Path,
}

impl<'a> SubDir<'a> {
    pub fn path(&self) -> &'a Path {
        self.path
    }

    pub fn fd(&self) -> BorrowedFd<'a> {
        self.fd
    }
}

/// A subdirectory made only once something is kept in it (`ended/`,
/// `resuming/`, `messages/.outcomes/`), opened and checked as roster's own
/// directories are.
pub(crate) struct OnDemandDir {
    directory: File,
    relative: PathBuf,
}

impl OnDemandDir {
    /// Opens `name` in `parent`, creating it first when `create`; `None`
    /// when it is missing and not created.
    pub(crate) fn open(
        roster: &RosterDir,
        parent: SubDir<'_>,
        name: &str,
        create: bool,
    ) -> Result<Option<OnDemandDir>> {
        let shown = roster.entry_path(parent, name);
        if create {
            match mkdir_0700(Some(parent.fd()), name.as_ref()) {
                Ok(()) | Err(Errno::EEXIST) => {}
                Err(errno) => return Err(Error::io("create", shown, errno.into())),
            }
        }
        match open_verified_directory(Some(parent.fd()), name.as_ref(), &shown) {
            Ok(fd) => Ok(Some(OnDemandDir { directory: File::from(fd), relative: parent.path().join(name) })),
            Err(Error::Io { cause, .. }) if cause.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(error),
        }
    }

    pub(crate) fn subdir(&self) -> SubDir<'_> {
        SubDir { fd: self.directory.as_fd(), path: &self.relative }
    }
}

impl RosterDir {
    /// Opens the roster directory, creating it (and its parents and
    /// subdirectories) `0700` where missing, and verifies every level.
    pub fn open_or_create(path: &Path) -> Result<RosterDir> {
        // Nearly always there already: opened (and verified) first, its
        // ancestors checked after, so that the parents' existence and the
        // directory's creation cost nothing. Anything else takes the way
        // below, which says what is wrong in the same words as ever.
        if let Ok(root) = open_verified_directory(None, path, path) {
            if let Some(parent) = path.parent() {
                check_ancestors(path, parent)?;
            }
            return RosterDir::with_subdirectories(path, root);
        }
        if let Some(parent) = path.parent() {
            create_parents(parent)?;
            check_ancestors(path, parent)?;
        }
        match mkdir_0700(None, path) {
            Ok(()) | Err(Errno::EEXIST) => {}
            Err(errno) => return Err(Error::io("create", path, errno.into())),
        }
        let root = open_verified_directory(None, path, path)?;
        RosterDir::with_subdirectories(path, root)
    }

    /// Opens an existing roster directory for reading; `Ok(None)` when it
    /// does not exist yet (nothing was ever registered), so a reader never
    /// creates the directory itself. Missing subdirectories of a trusted
    /// directory are created: that changes nothing anyone could observe.
    pub fn open_existing(path: &Path) -> Result<Option<RosterDir>> {
        // Nearly always there: opened (and verified) first and its
        // ancestors checked after, as `open_or_create` does, so that its
        // existence costs no look of its own. Anything else takes the way
        // below, which says what is wrong in the same words as ever.
        if let Ok(root) = open_verified_directory(None, path, path) {
            if let Some(parent) = path.parent() {
                check_ancestors(path, parent)?;
            }
            return RosterDir::with_subdirectories(path, root).map(Some);
        }
        match retry_interrupted(|| std::fs::symlink_metadata(path)) {
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            _ => {}
        }
        if let Some(parent) = path.parent() {
            check_ancestors(path, parent)?;
        }
        let root = open_verified_directory(None, path, path)?;
        RosterDir::with_subdirectories(path, root).map(Some)
    }

    /// Whether a roster directory at `path`, which does not exist yet,
    /// would be trusted once a writer creates it: the directories above it
    /// that exist are checked as `open_or_create` checks them (those it
    /// would create are yours and `0700`). The error is the very one a
    /// writer would meet, so a reader can say in its words why the
    /// registry would be refused before anyone registers.
    pub fn check_creatable(path: &Path) -> Result<()> {
        let Some(parent) = path.parent() else { return Ok(()) };
        let existing = parent.ancestors().find(|ancestor| {
            ancestor.as_os_str().is_empty()
                || retry_interrupted(|| std::fs::symlink_metadata(ancestor)).is_ok()
        });
        match existing {
            Some(existing) if !existing.as_os_str().is_empty() => check_ancestors(path, existing),
            _ => Ok(()),
        }
    }

    /// Opens (creating where missing) and verifies the subdirectories.
    fn with_subdirectories(path: &Path, root: OwnedFd) -> Result<RosterDir> {
        Ok(RosterDir {
            path: path.to_owned(),
            sessions: open_subdirectory(&root, path, SESSIONS)?,
            consent: open_subdirectory(&root, path, CONSENT)?,
            session_ids: open_subdirectory(&root, path, SESSION_IDS)?,
            states: open_subdirectory(&root, path, STATES)?,
            messages: open_subdirectory(&root, path, MESSAGES)?,
            root,
            lock_deadline: None,
            on_long_lock_wait: None,
            ended_bounds: std::sync::OnceLock::new(),
            ended_bounds_from: None,
        })
    }

    /// Bounds every lock wait of this handle to end by the instant
    /// `deadline` tells (a hook's whole run must fit the harness's budget),
    /// however long `LOCK_WAIT`; `None` from it bounds nothing. It is asked
    /// only when a lock is busy: a hook's deadline costs a read of `/proc`,
    /// which a free lock never needs.
    pub fn with_lock_deadline(mut self, deadline: fn() -> Option<std::time::Instant>) -> RosterDir {
        self.lock_deadline = Some(deadline);
        self
    }

    /// The latest instant a lock wait may end, when this handle has one.
    pub(crate) fn lock_deadline(&self) -> Option<std::time::Instant> {
        self.lock_deadline.and_then(|deadline| deadline())
    }

    /// Keeps `ended/` to the bounds `bounds` tells at each write of an
    /// ended session, asked once, when the first is written.
    pub fn with_ended_bounds(mut self, bounds: fn() -> crate::ended_bounds::EndedBounds) -> RosterDir {
        self.ended_bounds_from = Some(bounds);
        self
    }

    /// The bounds `ended/` is kept to (`with_ended_bounds`, else the
    /// defaults).
    pub(crate) fn ended_bounds(&self) -> crate::ended_bounds::EndedBounds {
        *self
            .ended_bounds
            .get_or_init(|| self.ended_bounds_from.map_or_else(Default::default, |bounds| bounds()))
    }

    /// Calls `notice` once whenever a lock wait lasts `LOCK_WAIT_NOTICE`.
    pub fn with_long_lock_wait_notice(mut self, notice: fn(&Path, Option<u32>)) -> RosterDir {
        self.on_long_lock_wait = Some(notice);
        self
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn root(&self) -> SubDir<'_> {
        SubDir { fd: self.root.as_fd(), path: &self.path }
    }

    pub fn sessions(&self) -> SubDir<'_> {
        SubDir { fd: self.sessions.as_fd(), path: Path::new(SESSIONS) }
    }

    pub fn consent(&self) -> SubDir<'_> {
        SubDir { fd: self.consent.as_fd(), path: Path::new(CONSENT) }
    }

    pub fn session_ids(&self) -> SubDir<'_> {
        SubDir { fd: self.session_ids.as_fd(), path: Path::new(SESSION_IDS) }
    }

    pub fn states(&self) -> SubDir<'_> {
        SubDir { fd: self.states.as_fd(), path: Path::new(STATES) }
    }

    pub fn messages(&self) -> SubDir<'_> {
        SubDir { fd: self.messages.as_fd(), path: Path::new(MESSAGES) }
    }

    /// Full path of a file in a subdirectory, for messages and JSON rows.
    /// Built in one allocation: a listing makes one per record.
    pub fn entry_path(&self, subdirectory: SubDir<'_>, name: &str) -> PathBuf {
        let within = subdirectory.path != self.path;
        let length = self.path.as_os_str().len()
            + if within { subdirectory.path.as_os_str().len() + 1 } else { 0 }
            + name.len()
            + 1;
        let mut path = PathBuf::with_capacity(length);
        path.push(&self.path);
        if within {
            path.push(subdirectory.path);
        }
        path.push(name);
        path
    }
}

fn create_parents(parent: &Path) -> Result<()> {
    if parent.as_os_str().is_empty() || parent.exists() {
        return Ok(());
    }
    retry_interrupted(|| std::fs::DirBuilder::new().recursive(true).mode_0700().create(parent))
        .map_err(|error| Error::io("create", parent, error))
}

trait DirBuilderMode {
    fn mode_0700(&mut self) -> &mut Self;
}

impl DirBuilderMode for std::fs::DirBuilder {
    fn mode_0700(&mut self) -> &mut Self {
        use std::os::unix::fs::DirBuilderExt;
        self.mode(0o700)
    }
}

pub(crate) fn mkdir_0700(parent: Option<BorrowedFd<'_>>, path: &Path) -> std::result::Result<(), Errno> {
    retry_interrupted(|| match parent {
        Some(fd) => mkdirat(fd, path, Mode::S_IRWXU),
        None => nix::unistd::mkdir(path, Mode::S_IRWXU),
    })
}

fn open_subdirectory(root: &OwnedFd, root_path: &Path, name: &str) -> Result<OwnedFd> {
    let shown = root_path.join(name);
    // Nearly always there already: opened first, created only when missing.
    match open_verified_directory(Some(root.as_fd()), Path::new(name), &shown) {
        Err(Error::Io { cause, .. }) if cause.kind() == std::io::ErrorKind::NotFound => {}
        opened => return opened,
    }
    match mkdir_0700(Some(root.as_fd()), Path::new(name)) {
        Ok(()) | Err(Errno::EEXIST) => {}
        Err(errno) => return Err(Error::io("create", shown, errno.into())),
    }
    open_verified_directory(Some(root.as_fd()), Path::new(name), &shown)
}

/// Opens `path` (relative to `parent` when given) as a directory without
/// following a symlink, then checks owner and mode on the handle itself.
pub(crate) fn open_verified_directory(
    parent: Option<BorrowedFd<'_>>,
    path: &Path,
    shown: &Path,
) -> Result<OwnedFd> {
    let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC;
    let opened = retry_interrupted(|| match parent {
        Some(fd) => openat(fd, path, flags, Mode::empty()),
        None => open(path, flags, Mode::empty()),
    });
    let fd = match opened {
        Ok(fd) => fd,
        Err(Errno::ELOOP) => {
            return Err(untrusted(
                shown,
                "is a symlink",
                "point --dir or ROSTER_DIR at the real directory instead",
            ));
        }
        Err(Errno::ENOTDIR) => {
            let problem = if is_symlink(parent, path) { "is a symlink" } else { "is not a directory" };
            return Err(untrusted(shown, problem, "move it aside or choose another --dir"));
        }
        Err(errno) => return Err(Error::io("open", shown, errno.into())),
    };
    let stat = retry_interrupted(|| fstat(&fd)).map_err(|errno| Error::io("stat", shown, errno.into()))?;
    let euid = crate::store::ownership::effective_uid();
    if stat.st_uid != euid {
        return Err(untrusted(
            shown,
            &format!("is owned by uid {}, not by you (uid {euid})", stat.st_uid),
            "use a directory of your own (--dir or ROSTER_DIR)",
        ));
    }
    if !crate::store::ownership::owned_by_caller(fd.as_fd(), stat.st_uid, stat.st_mode) {
        return Err(untrusted(
            shown,
            &format!("cannot be proved yours: {}", crate::store::ownership::UNPROVABLE_OWNER),
            "use a directory of your own (--dir or ROSTER_DIR)",
        ));
    }
    let mode = stat.st_mode & 0o7777;
    if mode & 0o002 != 0 && mode & 0o1000 != 0 {
        // A sticky directory everyone may write to is shared by design
        // (`/tmp`): making it private would break everyone else's use of it.
        return Err(untrusted(
            shown,
            &format!("is a shared directory, writable by others (mode {mode:04o})"),
            &format!(
                "use a private directory instead, one only you can write to (--dir or ROSTER_DIR), e.g. {}",
                shown.join(format!("roster-{euid}")).display()
            ),
        ));
    }
    if mode & 0o022 != 0 {
        return Err(untrusted(
            shown,
            &format!("is writable by group or others (mode {mode:04o})"),
            &format!("run `chmod 700 {}`", shown.display()),
        ));
    }
    if mode & 0o077 != 0 {
        // Read or search bits for others: quietly tighten (docs/contract.md §2).
        retry_interrupted(|| fchmod(&fd, Mode::S_IRWXU))
            .map_err(|errno| Error::io("chmod 700", shown, errno.into()))?;
    }
    Ok(fd)
}

/// Checks every directory above the roster directory: another user who
/// may write to one of them could rename the roster directory (or a
/// directory above it) away and put one of theirs in its place. Each must
/// be owned by root or you, and writable by group or others only with the
/// sticky bit (as `/tmp` is), which lets nobody rename what is not theirs.
/// A symlink on the way must be yours or root's too: whoever owns it may
/// point it elsewhere.
fn check_ancestors(roster: &Path, parent: &Path) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let euid = crate::store::ownership::effective_uid();
    let owner_ok = |uid: u32| uid == euid || uid == 0;
    let given = absolute(parent);
    // What each ancestor is, not following a symlink. When every one could
    // be looked at, none is a symlink and the path has no `.` or `..`, the
    // path is already its real path and these are the very facts the
    // checks below need: nothing is resolved or looked at twice.
    let mut seen = Vec::new();
    let mut plain = given.components().all(|part| !matches!(part, Component::CurDir | Component::ParentDir));
    for ancestor in given.ancestors() {
        let Ok(metadata) = retry_interrupted(|| std::fs::symlink_metadata(ancestor)) else {
            plain = false;
            continue;
        };
        if metadata.file_type().is_symlink() {
            if !owner_ok(metadata.uid()) {
                return Err(untrusted_parent(
                    roster,
                    ancestor,
                    &format!(
                        "is a symlink owned by uid {}, so that user may point it elsewhere",
                        metadata.uid()
                    ),
                    "point --dir or ROSTER_DIR at a path through directories of your own",
                ));
            }
            plain = false;
        }
        seen.push((ancestor.to_owned(), metadata));
    }
    if !plain {
        let real = retry_interrupted(|| std::fs::canonicalize(&given))
            .map_err(|error| Error::io("resolve", &given, error))?;
        seen.clear();
        for ancestor in real.ancestors() {
            let metadata = retry_interrupted(|| std::fs::metadata(ancestor))
                .map_err(|error| Error::io("stat", ancestor, error))?;
            seen.push((ancestor.to_owned(), metadata));
        }
    }
    // Where this user namespace maps no uid to the caller, root's
    // directories and other users' look the same (the overflow uid): the
    // owner cannot be told, and only the modes below are checked.
    let owners_visible = !crate::store::ownership::caller_uid_is_unmapped();
    for (ancestor, metadata) in &seen {
        let ancestor = ancestor.as_path();
        let mode = metadata.mode() & 0o7777;
        if owners_visible && !owner_ok(metadata.uid()) {
            return Err(untrusted_parent(
                roster,
                ancestor,
                &format!("is owned by uid {}, neither you (uid {euid}) nor root", metadata.uid()),
                "use a roster directory under directories of your own (--dir or ROSTER_DIR)",
            ));
        }
        let sticky = mode & 0o1000 != 0;
        let others_may_write = mode & 0o002 != 0 || (mode & 0o020 != 0 && !is_private_group(metadata.gid()));
        if others_may_write && !sticky {
            let who = if mode & 0o002 != 0 { "anyone" } else { "its group" };
            return Err(untrusted_parent(
                roster,
                ancestor,
                &format!("is writable by {who} without the sticky bit (mode {mode:04o})"),
                &format!("run `chmod go-w {}` (or `chmod +t` for a shared directory)", ancestor.display()),
            ));
        }
    }
    Ok(())
}

/// Whether `gid` is your own user private group (named as you, with no
/// other members): group write on a directory of that group lets nobody
/// else in, and umask 002 gives it to every directory you make.
fn is_private_group(gid: u32) -> bool {
    let euid = nix::unistd::geteuid();
    let (Ok(Some(user)), Ok(Some(group))) =
        (nix::unistd::User::from_uid(euid), nix::unistd::Group::from_gid(nix::unistd::Gid::from_raw(gid)))
    else {
        return false;
    };
    user.gid.as_raw() == gid
        && group.name == user.name
        && group.mem.iter().all(|member| *member == user.name)
        && no_other_account_has_primary_group(gid, &user.name)
}

/// Whether no account but `name` has `gid` as its primary group in
/// `/etc/passwd` (such an account is in the group without being listed as
/// a member). Unreadable: not provably private.
fn no_other_account_has_primary_group(gid: u32, name: &str) -> bool {
    let Ok(passwd) = std::fs::read_to_string("/etc/passwd") else { return false };
    passwd.lines().all(|line| {
        let fields: Vec<&str> = line.split(':').collect();
        fields.len() < 4 || fields[0] == name || fields[3].parse::<u32>().ok() != Some(gid)
    })
}

fn untrusted_parent(roster: &Path, ancestor: &Path, problem: &str, fix: &str) -> Error {
    untrusted(
        roster,
        &format!("is below {}, which {problem}, so another user could swap the registry", ancestor.display()),
        fix,
    )
}

fn is_symlink(parent: Option<BorrowedFd<'_>>, path: &Path) -> bool {
    let flags = nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW;
    let stat = match parent {
        Some(fd) => nix::sys::stat::fstatat(fd, path, flags),
        None => nix::sys::stat::lstat(path),
    };
    stat.is_ok_and(|stat| stat.st_mode & nix::libc::S_IFMT == nix::libc::S_IFLNK)
}

fn untrusted(path: &Path, problem: &str, fix: &str) -> Error {
    Error::UntrustedDirectory { path: path.to_owned(), problem: problem.to_owned(), fix: fix.to_owned() }
}
