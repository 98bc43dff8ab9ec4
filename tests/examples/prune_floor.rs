//! The file operations a prune of dead records cannot do without, alone, for
//! the bench to time beside `roster-prune` on the same registry: what the
//! kernel's share of a prune is on the machine at hand.
//!
//! `prune_floor REGISTRY` reads every record (open, fstat, read, close),
//! asks for its owner (`pidfd_open` of the pid its name carries), removes
//! it, reads and removes every index entry of `session-ids/`, writes an
//! entry in `ended/` for each of the last thousand records (create,
//! fchmod, write, close, rename) and removes as many entries that were
//! there before. It splits them as roster-prune does: one thread removes
//! the records and writes the ended entries, the other removes the index
//! entries and trims `ended/`, and both read records whenever they have
//! nothing to remove. None of roster's own work is in it: no parsing, no
//! verdict, no report, and no check of what it removes.

use std::os::fd::{AsFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use anyhow::Context;
use nix::fcntl::{OFlag, openat, readlinkat, renameat};
use nix::sys::stat::{Mode, fchmod, fstat};
use nix::unistd::{UnlinkatFlags, read, unlinkat, write};
use owner_liveness::{Pid, PidFd};

/// Records read at a time by whichever thread takes them.
const RECORDS_PER_CHUNK: usize = 64;
/// Ended entries written (and older ones trimmed), as `ended/` keeps by
/// default.
const ENDED_WRITTEN_MOST: usize = 1000;
/// About the size of one entry of `ended/` as roster writes it.
const ENDED_ENTRY_BYTES: usize = 300;

fn main() -> anyhow::Result<()> {
    let root = std::env::args_os().nth(1).context("usage: prune_floor REGISTRY")?;
    let root = std::path::Path::new(&root);
    let open_directory = |name: &str| -> anyhow::Result<OwnedFd> {
        let path = root.join(name);
        openat(
            nix::fcntl::AT_FDCWD,
            &path,
            OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC,
            Mode::empty(),
        )
        .with_context(|| format!("open {}", path.display()))
    };
    // A registry never pruned has no `ended/` yet; a prune creates it.
    let ended_path = root.join("ended");
    std::fs::create_dir_all(&ended_path).with_context(|| format!("create {}", ended_path.display()))?;
    let sessions = open_directory("sessions")?;
    let session_ids = open_directory("session-ids")?;
    let ended = open_directory("ended")?;
    let names_in = |name: &str| -> anyhow::Result<Vec<String>> {
        let mut names = Vec::new();
        for entry in std::fs::read_dir(root.join(name)).with_context(|| format!("list {name}"))? {
            let entry_name =
                entry?.file_name().into_string().map_err(|_| anyhow::anyhow!("a name of {name}"))?;
            if !entry_name.starts_with('.') {
                names.push(entry_name);
            }
        }
        Ok(names)
    };
    let work = Work {
        sessions,
        session_ids,
        ended,
        records: names_in("sessions")?,
        index_entries: names_in("session-ids")?,
        older_ended: names_in("ended")?,
        next_chunk: AtomicUsize::new(0),
        chunk_read: Vec::new(),
        records_removed: AtomicUsize::new(0),
        ended_written: AtomicUsize::new(0),
        ended_done: AtomicBool::new(false),
    };
    let chunk_count = work.records.len().div_ceil(RECORDS_PER_CHUNK);
    let work = Work { chunk_read: (0..chunk_count).map(|_| AtomicBool::new(false)).collect(), ..work };
    std::thread::scope(|scope| {
        let index_thread = scope.spawn(|| work.remove_index_entries_and_trim());
        let records = work.remove_records_and_write_ended();
        let index = index_thread.join().expect("the index thread ran to its end");
        records.and(index)
    })
}

struct Work {
    sessions: OwnedFd,
    session_ids: OwnedFd,
    ended: OwnedFd,
    records: Vec<String>,
    index_entries: Vec<String>,
    older_ended: Vec<String>,
    next_chunk: AtomicUsize,
    chunk_read: Vec<AtomicBool>,
    /// Records removed, in the order of `records`.
    records_removed: AtomicUsize,
    ended_written: AtomicUsize,
    ended_done: AtomicBool,
}

impl Work {
    /// Reads the next chunk of records nobody took yet; `false` when none
    /// is left.
    fn read_a_chunk(&self) -> anyhow::Result<bool> {
        let chunk = self.next_chunk.fetch_add(1, Ordering::Relaxed);
        let Some(read_flag) = self.chunk_read.get(chunk) else { return Ok(false) };
        let first = chunk * RECORDS_PER_CHUNK;
        let last = (first + RECORDS_PER_CHUNK).min(self.records.len());
        let mut buffer = [0u8; 4096];
        for name in &self.records[first..last] {
            let flags = OFlag::O_RDONLY
                | OFlag::O_NOFOLLOW
                | OFlag::O_NONBLOCK
                | OFlag::O_NOCTTY
                | OFlag::O_CLOEXEC
                | OFlag::O_NOATIME;
            let file = openat(self.sessions.as_fd(), name.as_str(), flags, Mode::empty())
                .with_context(|| format!("open sessions/{name}"))?;
            fstat(&file)?;
            read(&file, &mut buffer)?;
            drop(file);
            let pid = name.split('@').next().and_then(|pid| pid.parse::<u32>().ok()).and_then(Pid::new);
            if let Some(pid) = pid {
                let _ = PidFd::open(pid);
            }
        }
        read_flag.store(true, Ordering::Release);
        Ok(true)
    }

    fn remove_records_and_write_ended(&self) -> anyhow::Result<()> {
        let mut removed = 0;
        while removed < self.records.len() {
            let readable = self.chunk_read[removed / RECORDS_PER_CHUNK].load(Ordering::Acquire);
            if readable {
                let name = self.records[removed].as_str();
                unlinkat(self.sessions.as_fd(), name, UnlinkatFlags::NoRemoveDir)
                    .with_context(|| format!("remove sessions/{name}"))?;
                removed += 1;
                self.records_removed.store(removed, Ordering::Release);
            } else if !self.read_a_chunk()? {
                std::thread::yield_now();
            }
        }
        let entry = vec![b'x'; ENDED_ENTRY_BYTES];
        let written_most = self.records.len().min(ENDED_WRITTEN_MOST);
        for (number, name) in self.records[self.records.len() - written_most..].iter().enumerate() {
            let temporary = format!(".tmp-floor-{number}");
            let flags = OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL | OFlag::O_CLOEXEC;
            let file = openat(self.ended.as_fd(), temporary.as_str(), flags, Mode::from_bits_truncate(0o600))
                .with_context(|| format!("create ended/{temporary}"))?;
            fchmod(file.as_fd(), Mode::from_bits_truncate(0o600))?;
            write(&file, &entry)?;
            drop(file);
            let entry_name = format!("{}-floor.json", name.trim_end_matches(".json"));
            renameat(self.ended.as_fd(), temporary.as_str(), self.ended.as_fd(), entry_name.as_str())?;
            self.ended_written.store(number + 1, Ordering::Release);
        }
        self.ended_done.store(true, Ordering::Release);
        Ok(())
    }

    fn remove_index_entries_and_trim(&self) -> anyhow::Result<()> {
        let mut removed = 0;
        while removed < self.index_entries.len() {
            let records_removed = self.records_removed.load(Ordering::Acquire);
            if removed < records_removed || records_removed == self.records.len() {
                let name = self.index_entries[removed].as_str();
                let _ = readlinkat(self.session_ids.as_fd(), name);
                unlinkat(self.session_ids.as_fd(), name, UnlinkatFlags::NoRemoveDir)
                    .with_context(|| format!("remove session-ids/{name}"))?;
                removed += 1;
            } else if !self.read_a_chunk()? {
                std::thread::yield_now();
            }
        }
        // An older entry goes once one is written in its place.
        for (number, name) in self.older_ended.iter().enumerate() {
            while self.ended_written.load(Ordering::Acquire) <= number
                && !self.ended_done.load(Ordering::Acquire)
            {
                std::thread::yield_now();
            }
            unlinkat(self.ended.as_fd(), name.as_str(), UnlinkatFlags::NoRemoveDir)
                .with_context(|| format!("remove ended/{name}"))?;
        }
        Ok(())
    }
}
