//! Seeding a registry straight through the library: the same record format
//! and session-id index `roster-register` writes, and the state file format
//! `roster-state` writes, without a process and two fsyncs per record, so
//! ten thousand records take a second, not a minute.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use anyhow::Context;
use owner_liveness::{OwnerIdentity, OwnerSource};
use registry_core::record::ScreenLocation;
use registry_core::state::{STATE_FORMAT, StateEvent, StateFile};
use registry_core::{
    AgentName, HarnessName, HarnessVersion, RECORD_FORMAT, Record, RecordName, RecordedOwner, RecordedTime,
    RosterDir, SESSION_IDS, SESSIONS, STATES, SessionDirectoryPath, SessionId, Timestamp, TranscriptPath,
    index_entry_name,
};

/// A roster directory created the way the tools create one (0700, every
/// subdirectory), and where its records and their states go.
#[derive(Clone, Debug)]
pub struct SeededRegistry {
    pub root: PathBuf,
    pub sessions: PathBuf,
    pub states: PathBuf,
}

impl SeededRegistry {
    pub fn create(root: &Path) -> anyhow::Result<SeededRegistry> {
        RosterDir::open_or_create(root)
            .with_context(|| format!("create roster directory {}", root.display()))?;
        Ok(SeededRegistry { root: root.to_owned(), sessions: root.join(SESSIONS), states: root.join(STATES) })
    }

    /// Writes `record` and its session-id index entry, as register would.
    pub fn write(&self, record: &Record) -> anyhow::Result<PathBuf> {
        let name = RecordName::of_identity(&record.identity());
        let path = self.sessions.join(name.file_name());
        write_private_file(&path, &record.to_bytes())?;
        if let Some(session_id) = &record.session_id {
            let index = self.root.join(SESSION_IDS).join(index_entry_name(session_id));
            let _ = std::fs::remove_file(&index);
            std::os::unix::fs::symlink(name.to_string(), &index)
                .with_context(|| format!("create {}", index.display()))?;
        }
        Ok(path)
    }

    /// Writes `state` as the state file of `record`, as the state hook would.
    pub fn write_state(&self, record: &Record, state: &StateFile) -> anyhow::Result<PathBuf> {
        let path = self.states.join(RecordName::of_identity(&record.identity()).file_name());
        write_private_file(&path, &state.to_bytes())?;
        Ok(path)
    }

    /// The record files (not dotfiles) now in `sessions/`.
    pub fn record_file_names(&self) -> anyhow::Result<Vec<String>> {
        let mut names = Vec::new();
        for entry in
            std::fs::read_dir(&self.sessions).with_context(|| format!("read {}", self.sessions.display()))?
        {
            let name = entry?.file_name().to_string_lossy().into_owned();
            if !name.starts_with('.') {
                names.push(name);
            }
        }
        names.sort();
        Ok(names)
    }
}

/// A record like one a claude-code session-start hook writes: session id,
/// agent name, transcript path, all the optional keys a real one carries.
pub fn realistic_record(identity: &OwnerIdentity, ordinal: usize, cwd: &Path) -> anyhow::Result<Record> {
    let now = RecordedTime::from(Timestamp::now());
    let session_id = session_id_for(ordinal, identity);
    let transcript = format!("/home/dev/.claude/projects/-home-dev-src-app/{session_id}.jsonl");
    Ok(Record {
        format: RECORD_FORMAT,
        owner: RecordedOwner::from(identity),
        session_pid_source: OwnerSource::Flag.into(),
        session_pid_verified: false,
        harness: HarnessName::parse("claude-code")?,
        harness_version: Some(HarnessVersion::parse("2.1.328")?),
        agent: Some(AgentName::parse(&format!("agent-{}", ordinal % 97))?),
        transcript_path: Some(TranscriptPath::parse(&transcript)?),
        session_id: Some(SessionId::parse(&session_id)?),
        socket: None,
        // As a session started in a tmux pane records it.
        location: Some(ScreenLocation {
            tty: Some(format!("pts/{}", ordinal % 64)),
            multiplexer: Some("tmux".into()),
            server: Some("/tmp/tmux-1000/default".into()),
            pane: Some(format!("%{ordinal}")),
            terminal: Some("tmux".into()),
        }),
        cwd: SessionDirectoryPath::parse(&cwd.to_string_lossy())?,
        registrar_pid: std::process::id(),
        registered_at: now.clone(),
        refreshed_at: now,
    })
}

/// A state like a Claude Code session's hooks leave for `record`'s owner:
/// working, idle or waiting for permission in turn over the ordinals, its
/// last event now (so every event sent later is newer).
pub fn realistic_state(record: &Record, ordinal: usize) -> StateFile {
    let (state, waiting_for, event) = match ordinal % 3 {
        0 => ("working", None, "PreToolUse"),
        1 => ("idle", None, "Stop"),
        _ => ("waiting", Some("permission"), "PermissionRequest"),
    };
    let now = Timestamp::now().to_string();
    let owner = record.identity();
    StateFile {
        format: STATE_FORMAT,
        session_pid: owner.pid.get(),
        start_ticks: owner.start_ticks,
        state: state.to_owned(),
        waiting_for: waiting_for.map(str::to_owned),
        state_since: now.clone(),
        state_source: format!("claude-code:{event}"),
        last_event_at: now,
        last_event_order: StateEvent::boot_clock_now(),
    }
}

/// Creates (or replaces) `path` with `bytes`, `0600` as roster's files are.
fn write_private_file(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("create {}", path.display()))?;
    file.write_all(bytes).with_context(|| format!("write {}", path.display()))
}

/// A session id shaped like Claude Code's (a UUID), unique per ordinal.
pub fn session_id_for(ordinal: usize, identity: &OwnerIdentity) -> String {
    let pid = identity.pid.get();
    format!("{ordinal:08x}-{:04x}-4{:03x}-8000-{:012x}", pid & 0xffff, ordinal & 0xfff, identity.start_ticks)
}
