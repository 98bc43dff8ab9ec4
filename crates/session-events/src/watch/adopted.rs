//! The harnesses' own session files a watch follows (Claude Code's
//! `sessions/<pid>.json`, each Copilot CLI session's lock files): which of
//! them a change of a followed path concerns, and each read again as the
//! roster row of the same session when there is one, else as its own row
//! (docs/contract.md §6.5).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use owner_liveness::Liveness;
use registry_core::Timestamp;
use registry_core::adopted::{
    AdoptedDirectory, AdoptedHarness, AdoptedSource, COPILOT_STARTING_GRACE, adopted_row_name,
    is_same_session,
};

use super::SessionWatch;
use super::consent_inputs::ConsentConcerns;
use crate::sink::Sink;

/// How long an adopted session not proven yet is looked at again (a
/// Copilot CLI session between writing its lock file and locking its hold
/// file: a lock being taken sends no inotify event, and a claim is judged
/// dead only once its grace is over); how often is `SETTLING_LOOK`.
const SETTLING: Duration = Duration::from_secs(COPILOT_STARTING_GRACE.as_secs() + 1);

impl<S: Sink> SessionWatch<S> {
    /// What is followed to see the harnesses' sessions: their directories
    /// (and each Copilot CLI session's own), or while one does not exist
    /// the nearest directory above it.
    pub(super) fn adopted_follow_paths(&self) -> Vec<PathBuf> {
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
    pub(super) fn adopted_entry_changed(
        &mut self,
        followed: &Path,
        name: Option<&OsStr>,
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
        name: Option<&OsStr>,
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
                [name]
                    .into_iter()
                    .filter(|name| !name.starts_with('.') && name.ends_with(".json"))
                    .map(str::to_owned)
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
        Ok(Some(self.names_on_disk_or_known(source, "")))
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
        self.names_on_disk_or_known(source, &format!("{session}/"))
    }

    /// The names of `source` under `under` (`""` for all): those in its
    /// directory now, and those known before, sorted, each once.
    fn names_on_disk_or_known(&self, source: &AdoptedSource, under: &str) -> Vec<String> {
        let prefix = format!("{}{under}", source.harness.row_prefix());
        let known = self
            .known
            .keys()
            .filter_map(|name| name.strip_prefix(&prefix).map(|file| format!("{under}{file}")));
        let on_disk: Vec<String> = AdoptedDirectory::open(source)
            .ok()
            .flatten()
            .map(|directory| directory.names().into_iter().filter(|name| name.starts_with(under)).collect())
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
    pub(super) fn settling_rows(&self) -> Vec<String> {
        let now = Timestamp::now().unix_nanos();
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
}
