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
