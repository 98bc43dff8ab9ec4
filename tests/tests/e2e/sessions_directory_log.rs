//! What Claude Code's own sessions directory (`~/.claude/sessions`) held, moment by moment,
//! seen from outside roster: a thread reads every file in it each millisecond and keeps
//! each new content with the instant it was first seen, and the instant a file was first
//! seen gone. The adopted-session proof (`adopted`) times `roster-list --watch`'s events
//! against it, and reports the files as the harness wrote them (temporary names, torn
//! writes, every status it went through).

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use super::adopted::{AdoptedProof, neutral_path, shown};
use super::roster_watch::RosterWatch;
use super::session_world::SessionWorld;

/// How often the directory is read: the resolution of every time measured against it.
const READ_INTERVAL: Duration = Duration::from_millis(1);

/// One content of one file, or its absence, from the moment it was first seen.
#[derive(Clone, Debug)]
pub struct FileVersion {
    pub seen_at: Instant,
    /// The file's modification time and permission bits, as read with this content.
    pub modified: Option<SystemTime>,
    pub mode: u32,
    /// `None` when the file was seen gone.
    pub bytes: Option<Vec<u8>>,
}

impl FileVersion {
    /// The content as JSON, when it is JSON.
    pub fn json(&self) -> Option<serde_json::Value> {
        serde_json::from_slice(self.bytes.as_deref()?).ok()
    }

    /// The `status` key of the content, when it has one.
    pub fn status(&self) -> Option<String> {
        self.json()?.get("status")?.as_str().map(str::to_owned)
    }
}

/// The log of one directory, kept by a thread until it is dropped.
pub struct SessionsDirectoryLog {
    versions: Arc<Mutex<BTreeMap<String, Vec<FileVersion>>>>,
    stop: Arc<AtomicBool>,
    reader: Option<JoinHandle<()>>,
}

impl SessionsDirectoryLog {
    /// Starts reading `directory`, which need not exist yet.
    pub fn start(directory: &Path) -> SessionsDirectoryLog {
        let versions = Arc::new(Mutex::new(BTreeMap::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let reader = {
            let directory = directory.to_path_buf();
            let versions = Arc::clone(&versions);
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    read_once(&directory, &versions);
                    std::thread::sleep(READ_INTERVAL);
                }
            })
        };
        SessionsDirectoryLog { versions, stop, reader: Some(reader) }
    }

    /// Every name seen in the directory so far, in name order.
    pub fn names(&self) -> Vec<String> {
        self.versions.lock().expect("log lock").keys().cloned().collect()
    }

    /// The versions of `name`, oldest first.
    pub fn versions(&self, name: &str) -> Vec<FileVersion> {
        self.versions.lock().expect("log lock").get(name).cloned().unwrap_or_default()
    }

    /// The version of `name` seen last, if it was ever seen.
    pub fn latest(&self, name: &str) -> Option<FileVersion> {
        self.versions(name).pop()
    }

    /// The first version of `name` seen at or after `after` that satisfies `wanted`.
    pub fn first_after(
        &self,
        name: &str,
        after: Instant,
        wanted: impl Fn(&FileVersion) -> bool,
    ) -> Option<FileVersion> {
        self.versions(name).into_iter().find(|version| version.seen_at >= after && wanted(version))
    }
}

impl Drop for SessionsDirectoryLog {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
    }
}

/// Reads every file of `directory` once, and records what changed since the last read.
fn read_once(directory: &Path, versions: &Mutex<BTreeMap<String, Vec<FileVersion>>>) {
    let present: Vec<String> = match fs::read_dir(directory) {
        Ok(entries) => entries.filter_map(|entry| entry.ok()?.file_name().into_string().ok()).collect(),
        Err(_) => Vec::new(),
    };
    let seen_at = Instant::now();
    let mut read: Vec<(String, FileVersion)> = Vec::new();
    for name in &present {
        let path = directory.join(name);
        let metadata = fs::symlink_metadata(&path).ok();
        let bytes = fs::read(&path).ok();
        read.push((
            name.clone(),
            FileVersion {
                seen_at,
                modified: metadata.as_ref().and_then(|metadata| metadata.modified().ok()),
                mode: metadata.as_ref().map_or(0, |metadata| metadata.mode() & 0o7777),
                bytes,
            },
        ));
    }
    let mut versions = versions.lock().expect("log lock");
    for (name, version) in read {
        let history = versions.entry(name).or_default();
        if history.last().is_none_or(|last| last.bytes != version.bytes) {
            history.push(version);
        }
    }
    for (name, history) in versions.iter_mut() {
        let gone = !present.contains(name);
        if gone && history.last().is_some_and(|last| last.bytes.is_some()) {
            history.push(FileVersion { seen_at, modified: None, mode: 0, bytes: None });
        }
    }
}

/// What the run saw beside its checks: the file's partial reads, the `problem` events they
/// led to, every event of the watch, and the directory's history.
pub(super) fn report_what_was_seen(
    log: &SessionsDirectoryLog,
    watch: &mut RosterWatch,
    world: &SessionWorld,
    proof: &mut AdoptedProof,
) {
    let torn = torn_reads(log);
    proof.mismatches.extend(torn.iter().cloned());
    let problems: Vec<String> = watch
        .events()
        .iter()
        .filter(|event| event.kind() == "problem" && event.row()["origin"] == "claude-code")
        .map(|event| {
            format!(
                "the watch reported `problem` for {} ({}): {}",
                event.row()["path"]
                    .as_str()
                    .map_or_else(String::new, |path| neutral_path(Path::new(path), world)),
                event.row()["problem"],
                event.row()["liveness_reason"]
            )
        })
        .collect();
    if !problems.is_empty() {
        // The contract's own rule (a file that is not JSON is a malformed problem row),
        // met by a file the harness had not finished writing: reported, not failed, so
        // that the proof says what roster does with the harness as it is.
        proof.warnings.push(format!(
            "{} ({})",
            problems.join("; "),
            if torn.is_empty() { "the log caught no partial file".to_owned() } else { torn.join("; ") }
        ));
    }
    proof.note(format!("the watch's events: {}", watch.summary()));
    proof.note(format!("the sessions directory, as the log saw it: {}", directory_history(log, world)));
}

/// The statuses of `versions` in order, each once in a row; `(gone)` for a removal.
pub(super) fn statuses(versions: &[FileVersion]) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    for version in versions {
        let word = match (&version.bytes, version.status()) {
            (None, _) => "(gone)".to_owned(),
            (Some(_), Some(status)) => status,
            (Some(_), None) if version.json().is_none() => "(not JSON)".to_owned(),
            (Some(_), None) => "(no status)".to_owned(),
        };
        if words.last() != Some(&word) {
            words.push(word);
        }
    }
    words
}

/// The reads of a session file that found no whole JSON: Claude Code 2.1.332 writes its
/// file in place (opened without truncating, written, then truncated to length), so a
/// reader may find it empty just after its creation, or a shorter content followed by the
/// tail of the longer one before it.
pub(super) fn torn_reads(log: &SessionsDirectoryLog) -> Vec<String> {
    log.names()
        .iter()
        .filter(|name| name.ends_with(".json"))
        .flat_map(|name| {
            let versions = log.versions(name);
            let first_seen = versions.first().map(|version| version.seen_at);
            versions
                .into_iter()
                .filter(|version| version.json().is_none())
                .filter_map(|version| {
                    let bytes = version.bytes.as_deref()?;
                    let when = first_seen.map_or_else(String::new, |first| {
                        format!(
                            ", {} after the file was first seen",
                            shown(version.seen_at.duration_since(first))
                        )
                    });
                    Some(format!(
                        "a read of {name} found {} byte(s) that are no whole JSON{when}: {:?}",
                        bytes.len(),
                        String::from_utf8_lossy(&bytes[bytes.len().saturating_sub(60)..])
                    ))
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Every name the log saw in the directory with what became of it, for the report. The
/// content of a file that is not a session file is not shown (Claude Code keeps a peer
/// token there): its keys are.
pub(super) fn directory_history(log: &SessionsDirectoryLog, world: &SessionWorld) -> String {
    let names = log.names();
    if names.is_empty() {
        return format!("nothing seen in {}", neutral_path(&world.home.join(".claude/sessions"), world));
    }
    names
        .iter()
        .map(|name| {
            let versions = log.versions(name);
            let mode =
                versions.iter().find(|version| version.bytes.is_some()).map_or(0, |version| version.mode);
            let keys: Vec<String> = versions
                .iter()
                .find_map(FileVersion::json)
                .and_then(|json| json.as_object().map(|object| object.keys().cloned().collect()))
                .unwrap_or_default();
            let fate =
                if versions.last().is_some_and(|version| version.bytes.is_none()) { ", removed" } else { "" };
            if name.ends_with(".json") {
                format!(
                    "{name} (mode {mode:o}, {} version(s): {}{fate})",
                    versions.len(),
                    statuses(&versions).join(" → ")
                )
            } else {
                format!("{name} (mode {mode:o}, keys {}{fate})", keys.join(" "))
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}
