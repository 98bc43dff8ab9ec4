//! The paths a watch follows besides the registry's own directories, in an
//! inotify instance of their own: the paths its caller asks about (the
//! files a session's consent is decided from live outside the registry),
//! and the directories holding each symlink on the way to the registry,
//! whose swap moves the registry elsewhere. One directory may be followed
//! for several reasons at once and is one inotify watch then (the kernel
//! gives the same inode one watch): it is let go when the last reason goes.
//! Kept apart from the registry's watches so that none of this can touch
//! them.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::ffi::{OsStr, OsString};
use std::os::fd::{AsFd, BorrowedFd};
use std::path::{Component, Path, PathBuf};

use nix::errno::Errno;
use nix::sys::inotify::{AddWatchFlags, InitFlags, Inotify, WatchDescriptor};

/// Why a path is followed.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Interest {
    /// A path the caller follows: its changes are reported to the caller.
    Caller(PathBuf),
    /// The directory `directory` holds the symlink `name` the registry's
    /// path goes through.
    SymlinkOnTheWay { directory: PathBuf, name: OsString },
}

/// What one inotify event of this instance means.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum FollowedEvent {
    /// An entry `name` of the caller's path changed, or (`None`) the path
    /// itself did.
    Caller { path: PathBuf, name: Option<OsString> },
    /// A symlink on the way to the registry (or a directory holding one)
    /// was replaced, removed or renamed.
    RegistryPathChanged,
    /// The kernel's queue overflowed: any followed path may have changed.
    Lost,
}

/// The inotify instance and what each of its watches is for.
#[derive(Debug)]
pub(crate) struct FollowedPaths {
    inotify: Inotify,
    interests: HashMap<WatchDescriptor, BTreeSet<Interest>>,
    descriptors: HashMap<Interest, WatchDescriptor>,
}

/// The same for every watch, so that adding a path a second time (the
/// same inode under another name) never narrows what the first asked for.
/// No `IN_ONLYDIR`: a caller may follow a file (the user's config when it
/// is a symlink into a dotfiles repository), and the watch follows
/// symlinks to it.
fn followed_flags() -> AddWatchFlags {
    AddWatchFlags::IN_CREATE
        | AddWatchFlags::IN_DELETE
        | AddWatchFlags::IN_MOVED_FROM
        | AddWatchFlags::IN_MOVED_TO
        | AddWatchFlags::IN_CLOSE_WRITE
        | AddWatchFlags::IN_ATTRIB
        | AddWatchFlags::IN_DELETE_SELF
        | AddWatchFlags::IN_MOVE_SELF
}

/// Events that are about the watched path itself, not an entry of it.
fn self_events() -> AddWatchFlags {
    AddWatchFlags::IN_DELETE_SELF | AddWatchFlags::IN_MOVE_SELF | AddWatchFlags::IN_IGNORED
}

/// The most symlinks followed on one path, as the kernel's own limit
/// (`ELOOP` past 40).
const MOST_SYMLINKS: usize = 40;

impl FollowedPaths {
    pub(crate) fn new() -> Result<FollowedPaths, Errno> {
        let inotify = Inotify::init(InitFlags::IN_CLOEXEC | InitFlags::IN_NONBLOCK)?;
        Ok(FollowedPaths { inotify, interests: HashMap::new(), descriptors: HashMap::new() })
    }

    pub(crate) fn as_fd(&self) -> BorrowedFd<'_> {
        self.inotify.as_fd()
    }

    /// Follows `path` for `interest`; `Ok(true)` when it was not followed
    /// for it before.
    pub(crate) fn follow(&mut self, interest: Interest, path: &Path) -> Result<bool, Errno> {
        if self.descriptors.contains_key(&interest) {
            return Ok(false);
        }
        let wd = self.inotify.add_watch(path, followed_flags())?;
        self.interests.entry(wd).or_default().insert(interest.clone());
        self.descriptors.insert(interest, wd);
        Ok(true)
    }

    /// Stops following for `interest`; the watch goes with its last one.
    pub(crate) fn unfollow(&mut self, interest: &Interest) {
        let Some(wd) = self.descriptors.remove(interest) else { return };
        let Some(interests) = self.interests.get_mut(&wd) else { return };
        interests.remove(interest);
        if interests.is_empty() {
            self.interests.remove(&wd);
            let _ = self.inotify.rm_watch(wd);
        }
    }

    /// The caller's paths followed now.
    pub(crate) fn caller_paths(&self) -> BTreeSet<PathBuf> {
        self.descriptors
            .keys()
            .filter_map(|interest| match interest {
                Interest::Caller(path) => Some(path.clone()),
                Interest::SymlinkOnTheWay { .. } => None,
            })
            .collect()
    }

    /// The symlinks on the way to the registry followed now.
    pub(crate) fn symlinks_on_the_way(&self) -> BTreeSet<Interest> {
        self.descriptors
            .keys()
            .filter(|interest| matches!(interest, Interest::SymlinkOnTheWay { .. }))
            .cloned()
            .collect()
    }

    /// Reads every pending event and says what each means.
    pub(crate) fn read(&mut self) -> Result<Vec<FollowedEvent>, Errno> {
        let mut found = Vec::new();
        loop {
            let events = match self.inotify.read_events() {
                Ok(events) => events,
                Err(Errno::EAGAIN) => return Ok(found),
                Err(Errno::EINTR) => continue,
                Err(errno) => return Err(errno),
            };
            for event in events {
                if event.mask.contains(AddWatchFlags::IN_Q_OVERFLOW) {
                    found.push(FollowedEvent::Lost);
                    continue;
                }
                // Events of a watch let go of (its IN_IGNORED above all)
                // concern nobody any more.
                let Some(interests) = self.interests.get(&event.wd) else { continue };
                let about_itself = event.mask.intersects(self_events());
                for interest in interests {
                    match interest {
                        Interest::Caller(path) => {
                            let name = if about_itself { None } else { event.name.clone() };
                            found.push(FollowedEvent::Caller { path: path.clone(), name });
                        }
                        Interest::SymlinkOnTheWay { name, .. } => {
                            if about_itself || event.name.as_deref() == Some(name.as_os_str()) {
                                found.push(FollowedEvent::RegistryPathChanged);
                            }
                        }
                    }
                }
                if event.mask.contains(AddWatchFlags::IN_IGNORED) {
                    // The kernel dropped the watch (its path was deleted):
                    // a later `follow` adds it again, or fails saying why.
                    if let Some(interests) = self.interests.remove(&event.wd) {
                        for interest in interests {
                            self.descriptors.remove(&interest);
                        }
                    }
                }
            }
        }
    }
}

/// Every symlink met while resolving `path`, as the directory holding it
/// and its name, in the order met (a symlink's target may hold more).
/// Resolution stops at the first entry that does not exist: nothing below
/// it can be on the way yet.
pub(crate) fn symlinks_on_path(path: &Path) -> Vec<(PathBuf, OsString)> {
    let mut found = Vec::new();
    let mut resolved = PathBuf::from("/");
    let mut pending: VecDeque<OsString> = steps_of(path).collect();
    while let Some(step) = pending.pop_front() {
        if step == ".." {
            resolved.pop();
            continue;
        }
        let candidate = resolved.join(&step);
        match std::fs::symlink_metadata(&candidate) {
            Ok(metadata) if metadata.file_type().is_symlink() => {
                found.push((resolved.clone(), step));
                if found.len() > MOST_SYMLINKS {
                    break;
                }
                let Ok(target) = std::fs::read_link(&candidate) else { break };
                if target.is_absolute() {
                    resolved = PathBuf::from("/");
                }
                for (index, target_step) in steps_of(&target).enumerate() {
                    pending.insert(index, target_step);
                }
            }
            Ok(_) => resolved = candidate,
            Err(_) => break,
        }
    }
    found
}

/// The names along a path, `..` kept as a step back (it is resolved after
/// the symlinks before it, as the kernel does).
fn steps_of(path: &Path) -> impl Iterator<Item = OsString> + '_ {
    path.components().filter_map(|component| match component {
        Component::Normal(name) => Some(name.to_owned()),
        Component::ParentDir => Some(OsStr::new("..").to_owned()),
        Component::RootDir | Component::CurDir | Component::Prefix(_) => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symlinks_on_a_path_are_found_through_each_target() {
        let temp = tempfile::tempdir().expect("temp dir");
        let base = temp.path().canonicalize().expect("canonical");
        std::fs::create_dir_all(base.join("a/b/roster")).expect("mkdir");
        std::os::unix::fs::symlink("a", base.join("link")).expect("symlink");
        std::os::unix::fs::symlink(base.join("link/b"), base.join("second")).expect("symlink");
        let found = symlinks_on_path(&base.join("second/roster"));
        assert_eq!(found, vec![(base.clone(), "second".into()), (base.clone(), "link".into())]);
        assert_eq!(symlinks_on_path(&base.join("a/b/roster")), Vec::new());
        // Below a missing entry nothing is on the way yet.
        assert_eq!(symlinks_on_path(&base.join("missing/link/roster")), Vec::new());
    }

    #[test]
    fn a_step_back_is_taken_after_the_symlink_before_it() {
        let temp = tempfile::tempdir().expect("temp dir");
        let base = temp.path().canonicalize().expect("canonical");
        std::fs::create_dir_all(base.join("a/deep")).expect("mkdir");
        std::fs::create_dir_all(base.join("a/roster")).expect("mkdir");
        std::os::unix::fs::symlink("a/deep", base.join("link")).expect("symlink");
        std::os::unix::fs::symlink("../elsewhere", base.join("a/roster/inner")).expect("symlink");
        // link/.. is a, not base: the step back is taken from the target.
        let found = symlinks_on_path(&base.join("link/../roster/inner"));
        assert_eq!(found, vec![(base.clone(), "link".into()), (base.join("a/roster"), "inner".into())]);
    }

    #[test]
    fn a_loop_of_symlinks_ends() {
        let temp = tempfile::tempdir().expect("temp dir");
        let base = temp.path().canonicalize().expect("canonical");
        std::os::unix::fs::symlink("two", base.join("one")).expect("symlink");
        std::os::unix::fs::symlink("one", base.join("two")).expect("symlink");
        assert_eq!(symlinks_on_path(&base.join("one/roster")).len(), MOST_SYMLINKS + 1);
    }
}
