//! The files a watched session's consent is decided from besides its
//! marker, and where they live: the user's config
//! (`$XDG_CONFIG_HOME/roster/config.toml`) and the nearest `.roster.toml`
//! at or above the session's recorded directory (docs/contract.md §7).
//! `roster-list --watch` follows the directories they live in through
//! inotify, so that a veto added to the user's config, or a repository
//! file created, edited or removed, is reported the moment it happens.
//! This file knows which paths those are and whose consent a change in one
//! of them may have changed; it makes no decision itself.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use consent::{REPO_CONFIG_NAME, find_repo_config};

/// The followed sessions and the paths their consent is read from.
pub(super) struct ConsentInputs {
    /// The user's config file; `None` where it cannot be located (its
    /// veto is then assumed, and nothing can change that).
    user_config: Option<PathBuf>,
    /// The paths followed for the user's config, while known to be right.
    user_config_paths: Option<Vec<PathBuf>>,
    /// The followed sessions (their record file names) by the directory
    /// their record holds.
    sessions_by_directory: BTreeMap<PathBuf, BTreeSet<String>>,
    directory_of_session: HashMap<String, PathBuf>,
    /// Per session directory, the directories its repository file may
    /// appear, change or vanish in: each existing one from it up to the
    /// one holding its nearest `.roster.toml`, or to `/`. Kept while known
    /// to be right.
    chains: HashMap<PathBuf, Vec<PathBuf>>,
}

/// Whose consent changes of the followed paths may have changed.
#[derive(Debug, Default)]
pub(super) struct ConsentConcerns {
    /// The user's config: every session's.
    pub everyone: bool,
    /// Repository files or directories on the way to one: the sessions
    /// working at or below these directories.
    pub below: BTreeSet<PathBuf>,
}

impl ConsentConcerns {
    pub fn everyone() -> ConsentConcerns {
        ConsentConcerns { everyone: true, below: BTreeSet::new() }
    }

    pub fn is_empty(&self) -> bool {
        !self.everyone && self.below.is_empty()
    }

    pub fn merge(&mut self, other: ConsentConcerns) {
        self.everyone |= other.everyone;
        self.below.extend(other.below);
    }
}

impl ConsentInputs {
    pub fn new(user_config: Option<PathBuf>) -> ConsentInputs {
        ConsentInputs {
            user_config,
            user_config_paths: None,
            sessions_by_directory: BTreeMap::new(),
            directory_of_session: HashMap::new(),
            chains: HashMap::new(),
        }
    }

    /// Follows the inputs of the session recorded in `file_name`, working
    /// in `directory`; `true` when no followed session worked there yet
    /// (new paths may need following).
    pub fn follow_session(&mut self, file_name: &str, directory: &Path) -> bool {
        if self.directory_of_session.get(file_name).is_some_and(|known| known == directory) {
            return false;
        }
        self.unfollow_session(file_name);
        self.directory_of_session.insert(file_name.to_owned(), directory.to_owned());
        let sessions = self.sessions_by_directory.entry(directory.to_owned()).or_default();
        sessions.insert(file_name.to_owned());
        sessions.len() == 1
    }

    pub fn unfollow_session(&mut self, file_name: &str) {
        let Some(directory) = self.directory_of_session.remove(file_name) else { return };
        if let Some(sessions) = self.sessions_by_directory.get_mut(&directory) {
            sessions.remove(file_name);
            if sessions.is_empty() {
                self.sessions_by_directory.remove(&directory);
                self.chains.remove(&directory);
            }
        }
    }

    /// Every path to follow now: for the user's config, and for each
    /// followed session's repository file.
    pub fn wanted_paths(&mut self) -> BTreeSet<PathBuf> {
        let mut wanted: BTreeSet<PathBuf> = self.user_config_paths().iter().cloned().collect();
        for directory in self.sessions_by_directory.keys() {
            let chain = self.chains.entry(directory.clone()).or_insert_with(|| chain_of(directory));
            wanted.extend(chain.iter().cloned());
        }
        wanted
    }

    /// Forgets where the inputs were found for the sessions a change in
    /// `concerns` may have moved them for; `wanted_paths` looks again.
    pub fn forget_paths_of(&mut self, concerns: &ConsentConcerns) {
        if concerns.everyone {
            self.user_config_paths = None;
            self.chains.clear();
            return;
        }
        for changed in &concerns.below {
            self.chains.retain(|directory, _| !directory.starts_with(changed));
        }
    }

    /// Whose consent a change of `name` in the followed `path` (or of
    /// `path` itself, `name` being `None`) may have changed.
    pub fn concerns(&self, path: &Path, name: Option<&OsStr>) -> ConsentConcerns {
        let mut concerns = ConsentConcerns::default();
        let changed = match name {
            Some(name) => path.join(name),
            None => path.to_owned(),
        };
        if let Some(user_config) = &self.user_config
            && user_config.starts_with(&changed)
        {
            concerns.everyone = true;
        }
        let about_a_repository_file = name.is_none_or(|name| name == REPO_CONFIG_NAME);
        if about_a_repository_file && self.has_sessions_below(path) {
            concerns.below.insert(path.to_owned());
        } else if self.has_sessions_below(&changed) {
            // A directory on the way to sessions' directories appeared,
            // went away or was renamed.
            concerns.below.insert(changed);
        }
        concerns
    }

    /// The followed sessions `concerns` names, by record file name.
    pub fn sessions_concerned(&self, concerns: &ConsentConcerns) -> BTreeSet<String> {
        if concerns.everyone {
            return self.directory_of_session.keys().cloned().collect();
        }
        let mut concerned = BTreeSet::new();
        for changed in &concerns.below {
            let below = self.sessions_by_directory.range(changed.clone()..);
            for (_, sessions) in below.take_while(|(directory, _)| directory.starts_with(changed)) {
                concerned.extend(sessions.iter().cloned());
            }
        }
        concerned
    }

    /// What following `path` anew concerns: it may have changed before it
    /// was followed, unseen.
    pub fn concerns_of_newly_followed(&self, path: &Path) -> ConsentConcerns {
        let mut concerns = ConsentConcerns::default();
        if self.user_config_paths.as_ref().is_some_and(|paths| paths.iter().any(|user| user == path)) {
            concerns.everyone = true;
        }
        if self.has_sessions_below(path) {
            concerns.below.insert(path.to_owned());
        }
        concerns
    }

    fn has_sessions_below(&self, directory: &Path) -> bool {
        // Paths sort component by component, so the directories below
        // `directory` come right after it.
        self.sessions_by_directory
            .range(directory.to_owned()..)
            .next()
            .is_some_and(|(working_in, _)| working_in.starts_with(directory))
    }

    /// The directory holding the user's config, or the nearest above it
    /// that exists (to see it created), and the file itself when it is a
    /// symlink (a write to its target shows nowhere else).
    fn user_config_paths(&mut self) -> &[PathBuf] {
        let user_config = &self.user_config;
        self.user_config_paths.get_or_insert_with(|| {
            let Some(file) = user_config else { return Vec::new() };
            let mut paths: Vec<PathBuf> = file
                .ancestors()
                .skip(1)
                .find(|above| above.is_dir())
                .map(Path::to_owned)
                .into_iter()
                .collect();
            if std::fs::symlink_metadata(file).is_ok_and(|metadata| metadata.file_type().is_symlink()) {
                paths.push(file.clone());
            }
            paths
        })
    }
}

/// The existing directories from `directory` up to the one holding its
/// nearest `.roster.toml` (found as the decision finds it), or up to `/`:
/// a repository file created in any of them, or the nearest one edited or
/// removed, changes the decision; one above the nearest does not.
fn chain_of(directory: &Path) -> Vec<PathBuf> {
    let nearest = find_repo_config(directory);
    let holding_it = nearest.as_deref().and_then(Path::parent);
    let mut chain = Vec::new();
    for above in directory.ancestors() {
        if above.is_dir() {
            chain.push(above.to_owned());
        }
        if Some(above) == holding_it {
            break;
        }
    }
    chain
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs_in(base: &Path) -> ConsentInputs {
        ConsentInputs::new(Some(base.join("home/.config/roster/config.toml")))
    }

    #[test]
    fn a_chain_stops_at_the_nearest_repository_file_and_skips_what_does_not_exist() {
        let temp = tempfile::tempdir().expect("temp dir");
        let base = temp.path().canonicalize().expect("canonical");
        std::fs::create_dir_all(base.join("repo/sub")).expect("mkdir");
        std::fs::write(base.join("repo/.roster.toml"), b"").expect("write");
        assert_eq!(
            chain_of(&base.join("repo/sub/gone")),
            vec![base.join("repo/sub"), base.join("repo")],
            "up to the directory holding the file, without the missing one"
        );
        let without = chain_of(&base);
        assert_eq!(without.first(), Some(&base));
        assert_eq!(without.last().map(PathBuf::as_path), Some(Path::new("/")));
    }

    #[test]
    fn the_user_config_is_followed_from_the_nearest_directory_that_exists() {
        let temp = tempfile::tempdir().expect("temp dir");
        let base = temp.path().canonicalize().expect("canonical");
        std::fs::create_dir_all(base.join("home")).expect("mkdir");
        let mut inputs = inputs_in(&base);
        assert_eq!(inputs.wanted_paths(), BTreeSet::from([base.join("home")]));
        std::fs::create_dir_all(base.join("home/.config/roster")).expect("mkdir");
        assert_eq!(inputs.wanted_paths(), BTreeSet::from([base.join("home")]), "kept until told");
        inputs.forget_paths_of(&ConsentConcerns::everyone());
        assert_eq!(inputs.wanted_paths(), BTreeSet::from([base.join("home/.config/roster")]));
    }

    #[test]
    fn a_change_concerns_the_sessions_it_may_decide_for() {
        let base = Path::new("/r");
        let mut inputs = inputs_in(Path::new("/u"));
        inputs.follow_session("1.json", &base.join("repo/sub"));
        inputs.follow_session("2.json", &base.join("repo"));
        inputs.follow_session("3.json", &base.join("repository"));
        let check = |path: &str, name: Option<&str>, everyone: bool, below: &[&str], sessions: &[&str]| {
            let concerns = inputs.concerns(Path::new(path), name.map(OsStr::new));
            assert_eq!(concerns.everyone, everyone, "{path} {name:?}");
            let expected: BTreeSet<PathBuf> = below.iter().map(PathBuf::from).collect();
            assert_eq!(concerns.below, expected, "{path} {name:?}");
            let expected: BTreeSet<String> = sessions.iter().map(|name| name.to_string()).collect();
            assert_eq!(inputs.sessions_concerned(&concerns), expected, "{path} {name:?}");
        };
        check("/r/repo/sub", Some(".roster.toml"), false, &["/r/repo/sub"], &["1.json"]);
        check("/r/repo", Some(".roster.toml"), false, &["/r/repo"], &["1.json", "2.json"]);
        check("/r", Some(".roster.toml"), false, &["/r"], &["1.json", "2.json", "3.json"]);
        check("/r", Some("repo"), false, &["/r/repo"], &["1.json", "2.json"]);
        check("/r", Some("unrelated"), false, &[], &[]);
        check("/r/repo", None, false, &["/r/repo"], &["1.json", "2.json"]);
        check("/u/home/.config/roster", Some("config.toml"), true, &[], &["1.json", "2.json", "3.json"]);
        check("/u/home/.config/roster", Some("other.toml"), false, &[], &[]);
        check("/u/home", Some(".config"), true, &[], &["1.json", "2.json", "3.json"]);
    }

    #[test]
    fn a_session_followed_again_in_the_same_directory_needs_no_new_path() {
        let mut inputs = inputs_in(Path::new("/u"));
        assert!(inputs.follow_session("1.json", Path::new("/r/a")));
        assert!(!inputs.follow_session("1.json", Path::new("/r/a")));
        assert!(!inputs.follow_session("2.json", Path::new("/r/a")));
        assert!(inputs.follow_session("2.json", Path::new("/r/b")));
        inputs.unfollow_session("1.json");
        assert!(!inputs.has_sessions_below(Path::new("/r/a")));
        assert!(inputs.has_sessions_below(Path::new("/r")));
    }
}
