//! `cargo test -p tests --features soak --test soak -- [SECONDS]` (30 when
//! not given): writers, pruners, listers, consent flips, senders, delivery
//! hooks run by the sessions' owners, and owners that exit, all at once and
//! for a bounded time, under I/O load (writers that fsync to the real disk
//! without pause), with random SIGKILLs of the tools and a small tmpfs that
//! fills up now and then; at
//! the end every invariant of docs/contract.md §10 is checked and a violation fails the
//! run.
//!
//! Only what docs/contract.md guarantees is asserted, whatever the machine's load:
//! a failure is allowed when the contract allows it (a full disk, a lock wait
//! past its bound, an owner that exited meanwhile) and is counted instead.

#![forbid(unsafe_code)]

mod invariants;
mod namespace;
mod owners;
mod tools;
mod watcher;

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, bail};
use owner_liveness::OwnerIdentity;

use owners::SoakOwner;
use tests::Random;
use tests::workspace::{Profile, build_binaries};
use tools::{Ending, ToolRun, run_tool};

/// The tmpfs the registry lives on: small enough to fill in a moment.
const TMPFS_BYTES: u64 = 3 * 1024 * 1024;
/// Owners alive at any time.
const LIVE_OWNERS: usize = 16;
const WRITER_THREADS: usize = 4;
const LISTER_THREADS: usize = 2;
/// Per cent of tool runs killed at a random instant.
const KILL_PERCENT: u64 = 15;
/// Kill instants are drawn below this; the tools (debug builds) take a few
/// milliseconds, so most kills land mid-run.
const KILL_WINDOW: Duration = Duration::from_millis(12);
/// Threads that write and fsync to the real disk for the whole run, as
/// `dd … conv=fsync` loops do: the I/O load deliveries must keep their
/// promises under.
const IO_LOAD_THREADS: usize = 2;
/// What each of them writes before its fsync.
const IO_LOAD_CHUNK: usize = 1024 * 1024;

/// Everything the soak's threads share.
struct Soak {
    binaries: PathBuf,
    roster: PathBuf,
    disk: PathBuf,
    /// The directory every registration names as its cwd (not on the tmpfs:
    /// a full disk must not make a cwd vanish).
    work_directory: PathBuf,
    /// A directory without configuration files, as the tools' HOME.
    home: PathBuf,
    consent_binary: Option<PathBuf>,
    deadline: Instant,
    live_owners: Mutex<Vec<Arc<OwnerSlot>>>,
    retired_owners: Mutex<Vec<Arc<OwnerSlot>>>,
    tally: Mutex<BTreeMap<&'static str, Counts>>,
    violations: Mutex<Vec<String>>,
    next_owner_serial: AtomicUsize,
    disk_full_periods: AtomicUsize,
    list_rows_seen: AtomicUsize,
    /// Ended-session entries `roster-list --ended` listed during the run.
    ended_rows_seen: AtomicUsize,
    /// The ids of the messages a send said it queued.
    sent: Mutex<Vec<String>>,
    /// How many times each message id reached a harness whole (its
    /// opening and closing frame lines in one reply a delivery hook
    /// printed).
    received: Mutex<BTreeMap<String, usize>>,
    /// Where the I/O load writes (the real disk, not the tmpfs).
    load_directory: PathBuf,
    load_bytes_synced: AtomicUsize,
}

/// One owner and what the soak knows about it.
#[derive(Debug)]
struct OwnerSlot {
    identity: OwnerIdentity,
    session_id: String,
    process: Mutex<Option<SoakOwner>>,
    book: Mutex<OwnerBook>,
}

/// The owner's history, as far as the invariants need it.
#[derive(Debug, Default)]
struct OwnerBook {
    /// Chosen to exit: from here on its record may go and its tools may
    /// fail because it is gone.
    dying: bool,
    /// A registration succeeded while it was not dying, so its record
    /// must exist for as long as it lives.
    registered: bool,
}

/// How the runs of one kind of operation ended.
#[derive(Clone, Copy, Debug, Default)]
struct Counts {
    ok: usize,
    disk_full: usize,
    busy: usize,
    killed: usize,
    owner_gone: usize,
    unexpected: usize,
}

/// The class of one run's ending.
#[derive(Debug)]
enum Class {
    Ok,
    DiskFull,
    Busy,
    Killed,
    OwnerGone,
    Unexpected(String),
}

/// How long the soak runs when no number of seconds is given.
const DEFAULT_SECONDS: u64 = 30;

fn main() -> anyhow::Result<()> {
    if owners::running_as_owner() {
        owners::serve_as_owner();
    }
    let seconds = match std::env::args().nth(1) {
        None => DEFAULT_SECONDS,
        Some(text) => text.parse().with_context(|| {
            format!("soak: {text:?} is not a number of seconds; run `cargo test -p tests --features soak --test soak -- 30`")
        })?,
    };
    run(seconds)
}

fn run(seconds: u64) -> anyhow::Result<()> {
    let binaries = build_binaries(Profile::Debug, &tests::workspace::ROSTER_BINARIES)?;
    let consent_binary = Some(binaries.join("roster-consent")).filter(|path| path.is_file());
    // Still single-threaded here, as entering a namespace requires.
    namespace::enter_private_mount_namespace()?;
    let scratch =
        tempfile::Builder::new().prefix("roster-soak-").tempdir().context("create a scratch directory")?;
    let disk = scratch.path().join("disk");
    std::fs::create_dir(&disk)?;
    namespace::mount_small_tmpfs(&disk, TMPFS_BYTES)?;
    let outcome = soak_on(scratch.path(), &disk, &binaries, consent_binary, seconds);
    namespace::unmount(&disk);
    outcome
}

fn soak_on(
    scratch: &Path,
    disk: &Path,
    binaries: &Path,
    consent_binary: Option<PathBuf>,
    seconds: u64,
) -> anyhow::Result<()> {
    let roster = disk.join("roster");
    registry_core::RosterDir::open_or_create(&roster).context("create the roster directory")?;
    let work_directory = scratch.join("work");
    let home = scratch.join("home");
    std::fs::create_dir(&work_directory)?;
    std::fs::create_dir(&home)?;
    let run_started = SystemTime::now();
    let stale_temporaries = invariants::plant_stale_temporaries(&roster)?;

    let soak = Soak {
        binaries: binaries.to_owned(),
        roster,
        disk: disk.to_owned(),
        work_directory,
        home,
        consent_binary,
        deadline: Instant::now() + Duration::from_secs(seconds),
        live_owners: Mutex::new(Vec::new()),
        retired_owners: Mutex::new(Vec::new()),
        tally: Mutex::new(BTreeMap::new()),
        violations: Mutex::new(Vec::new()),
        next_owner_serial: AtomicUsize::new(0),
        disk_full_periods: AtomicUsize::new(0),
        list_rows_seen: AtomicUsize::new(0),
        ended_rows_seen: AtomicUsize::new(0),
        sent: Mutex::new(Vec::new()),
        received: Mutex::new(BTreeMap::new()),
        load_directory: scratch.join("load"),
        load_bytes_synced: AtomicUsize::new(0),
    };
    std::fs::create_dir(&soak.load_directory)?;
    for _ in 0..LIVE_OWNERS {
        let slot = soak.start_owner()?;
        soak.live_owners.lock().expect("no soak thread panics").push(slot);
    }
    let seed = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default().as_nanos() as u64;
    eprintln!(
        "soak: {seconds} s on a {} MiB tmpfs, {LIVE_OWNERS} owners at a time, seed {seed:#x}{}",
        TMPFS_BYTES >> 20,
        if soak.consent_binary.is_some() { "" } else { "; roster-consent is not built, so no consent flips" }
    );

    let mut watch_command = soak.tool("roster-list");
    watch_command.arg("--dir").arg(&soak.roster);
    let mut watcher = watcher::SoakWatcher::start(watch_command)?;
    let watcher_pid = watcher.pid();
    let mut early_memory = None;
    let thread_failures: Vec<String> = std::thread::scope(|scope| {
        let early_memory = &mut early_memory;
        scope.spawn(move || {
            std::thread::sleep(Duration::from_secs(seconds) / 4);
            *early_memory = watcher::resident_kib(watcher_pid);
        });
        let mut handles = Vec::new();
        let mut next_seed = seed;
        let mut random = || {
            next_seed = next_seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
            Random::seeded(next_seed)
        };
        for _ in 0..WRITER_THREADS {
            let random = random();
            handles.push(scope.spawn(|| soak.writer(random)));
        }
        for _ in 0..LISTER_THREADS {
            let random = random();
            handles.push(scope.spawn(|| soak.lister(random)));
        }
        let pruner_random = random();
        handles.push(scope.spawn(|| soak.pruner(pruner_random)));
        let churn_random = random();
        handles.push(scope.spawn(|| soak.owner_churn(churn_random)));
        let filler_random = random();
        handles.push(scope.spawn(|| soak.filler(filler_random)));
        if soak.consent_binary.is_some() {
            let consent_random = random();
            handles.push(scope.spawn(|| soak.consent_flipper(consent_random)));
            let sender_random = random();
            handles.push(scope.spawn(|| soak.sender(sender_random)));
            let deliverer_random = random();
            handles.push(scope.spawn(|| soak.deliverer(deliverer_random)));
        }
        for load in 0..IO_LOAD_THREADS {
            let soak = &soak;
            handles.push(scope.spawn(move || soak.io_load(load)));
        }
        handles
            .into_iter()
            .filter_map(|handle| match handle.join() {
                Ok(Ok(())) => None,
                Ok(Err(error)) => Some(format!("{error:#}")),
                Err(_) => Some("a soak thread panicked".to_owned()),
            })
            .collect()
    });
    let _ = std::fs::remove_file(soak.filler_path());
    if !thread_failures.is_empty() {
        bail!("the soak itself failed: {}", thread_failures.join("; "));
    }

    let final_prune = soak.final_prune()?;
    watcher.set_early_memory(early_memory);
    let mut results = invariants::check_all(&soak, &stale_temporaries, run_started)?;
    results.push(watcher.finish());
    print_summary(&soak, seconds, &final_prune, &results);
    for slot in soak.live_owners.lock().expect("no soak thread panics").drain(..) {
        if let Some(owner) = slot.process.lock().expect("no soak thread panics").take() {
            owner.kill();
        }
    }
    let violated: Vec<&invariants::InvariantResult> = results.iter().filter(|result| !result.held).collect();
    if !violated.is_empty() {
        bail!(
            "{} invariant{} of docs/contract.md §10 violated (see above)",
            violated.len(),
            if violated.len() == 1 { "" } else { "s" }
        );
    }
    Ok(())
}

impl Soak {
    fn running(&self) -> bool {
        Instant::now() < self.deadline
    }

    fn filler_path(&self) -> PathBuf {
        self.disk.join("filler")
    }

    /// A tool command with nothing inherited from the caller's environment
    /// but PATH, so no roster or harness variable of the shell that started
    /// the soak can change what the tools do.
    pub(crate) fn tool(&self, name: &str) -> Command {
        let mut command = Command::new(self.binaries.join(name));
        command
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .current_dir(&self.work_directory);
        command
    }

    fn kill_instant(random: &mut Random) -> Option<Duration> {
        random.chance(KILL_PERCENT).then(|| random.duration_below(KILL_WINDOW))
    }

    fn start_owner(&self) -> anyhow::Result<Arc<OwnerSlot>> {
        // Consent is given by an owner's own child; without roster-consent
        // the owner only needs to exist, and any binary that reads stdin
        // until it closes would do, but one kind of owner keeps this simple.
        let consent_binary =
            self.consent_binary.clone().unwrap_or_else(|| self.binaries.join("roster-consent"));
        let owner = SoakOwner::start(&consent_binary, &self.roster)?;
        let serial = self.next_owner_serial.fetch_add(1, Ordering::Relaxed);
        Ok(Arc::new(OwnerSlot {
            identity: owner.identity.clone(),
            session_id: format!("soak-{serial:05}-{}", owner.pid()),
            process: Mutex::new(Some(owner)),
            book: Mutex::new(OwnerBook::default()),
        }))
    }

    fn pick_live_owner(&self, random: &mut Random) -> Option<Arc<OwnerSlot>> {
        random.pick(&self.live_owners.lock().expect("no soak thread panics")).cloned()
    }

    fn count(&self, operation: &'static str, class: &Class) {
        let mut tally = self.tally.lock().expect("no soak thread panics");
        let counts = tally.entry(operation).or_default();
        match class {
            Class::Ok => counts.ok += 1,
            Class::DiskFull => counts.disk_full += 1,
            Class::Busy => counts.busy += 1,
            Class::Killed => counts.killed += 1,
            Class::OwnerGone => counts.owner_gone += 1,
            Class::Unexpected(what) => {
                counts.unexpected += 1;
                self.violation(format!("{operation}: {what}"));
            }
        }
    }

    fn violation(&self, what: String) {
        self.violations.lock().expect("no soak thread panics").push(what);
    }

    /// Registers random live owners, by flags or as a hook, some killed.
    fn writer(&self, mut random: Random) -> anyhow::Result<()> {
        const AGENTS: [&str; 4] = ["wren", "heron", "kestrel", "ünïcödé agent"];
        while self.running() {
            let Some(slot) = self.pick_live_owner(&mut random) else { continue };
            let as_hook = random.chance(25);
            let mut command = self.tool("roster-register");
            let mut stdin = None;
            if as_hook {
                let mut payload = tempfile::tempfile()?;
                serde_json::to_writer(
                    &mut payload,
                    &serde_json::json!({
                        "session_id": slot.session_id,
                        "cwd": self.work_directory,
                        "hook_event_name": "SessionStart",
                        "source": "startup",
                    }),
                )?;
                std::io::Seek::rewind(&mut payload)?;
                stdin = Some(payload);
                command.args(["--hook", "claude-code"]);
            } else {
                let agent = *random.pick(&AGENTS).expect("agents are listed");
                command.args([
                    "--harness",
                    "claude-code",
                    "--quiet",
                    "--agent",
                    agent,
                    "--session-id",
                    &slot.session_id,
                ]);
                command.arg("--cwd").arg(&self.work_directory);
            }
            command.arg("--dir").arg(&self.roster).args(["--pid", &slot.identity.pid.to_string()]);
            let run = run_tool(command, stdin, Self::kill_instant(&mut random))?;
            let mut book = slot.book.lock().expect("no soak thread panics");
            let class = classify(&run, book.dying);
            if matches!(class, Class::Ok) && !book.dying {
                book.registered = true;
            }
            drop(book);
            self.count(if as_hook { "register --hook" } else { "register" }, &class);
            if random.chance(50) {
                self.state_event(&slot, &mut random)?;
            }
        }
        Ok(())
    }

    /// A state event of the session, as its harness's hook sends it: racing
    /// the session's registrations, prunes, its owner's death and a full
    /// disk. In hook mode it always exits 0.
    fn state_event(&self, slot: &OwnerSlot, random: &mut Random) -> anyhow::Result<()> {
        const EVENTS: [&str; 4] = ["PreToolUse", "PermissionRequest", "PostToolUse", "Stop"];
        let event = *random.pick(&EVENTS).expect("events are listed");
        let mut payload = tempfile::tempfile()?;
        serde_json::to_writer(&mut payload, &serde_json::json!({"session_id": slot.session_id}))?;
        std::io::Seek::rewind(&mut payload)?;
        let mut command = self.tool("roster-state");
        command.args(["--hook", "claude-code", "--event", event]).arg("--dir").arg(&self.roster);
        let run = run_tool(command, Some(payload), Self::kill_instant(random))?;
        let dying = slot.book.lock().expect("no soak thread panics").dying;
        self.count("state --hook", &classify(&run, dying));
        Ok(())
    }

    /// Lists everything and checks each row as it is seen: no problem entry
    /// (a torn file would be one), no temporary, no consent without a live
    /// owner.
    fn lister(&self, mut random: Random) -> anyhow::Result<()> {
        while self.running() {
            // Every third listing is of the ended sessions, which pruners and
            // reaping registrations write meanwhile: none may be torn or skipped.
            if random.below(3) == 0 {
                self.list_ended(&mut random)?;
                continue;
            }
            let mut command = self.tool("roster-list");
            command.arg("--dir").arg(&self.roster).args(["--all", "--format", "json"]);
            let run = run_tool(command, None, Self::kill_instant(&mut random))?;
            let class = classify(&run, false);
            if matches!(class, Class::Ok) {
                match serde_json::from_slice::<Vec<serde_json::Value>>(&run.stdout) {
                    Ok(rows) => {
                        self.list_rows_seen.fetch_add(rows.len(), Ordering::Relaxed);
                        for problem in invariants::row_problems(&rows) {
                            self.violation(format!("roster-list showed {problem}"));
                        }
                    }
                    Err(error) => self
                        .violation(format!("roster-list printed something that is not JSON rows: {error}")),
                }
            }
            self.count("list", &class);
        }
        Ok(())
    }

    /// `roster-list --ended --format json`, some runs killed: JSON entries
    /// each with a known `how`, and no entry skipped as not to be believed
    /// (a torn or half-written one would be).
    fn list_ended(&self, random: &mut Random) -> anyhow::Result<()> {
        let mut command = self.tool("roster-list");
        command.arg("--dir").arg(&self.roster).args(["--ended", "--format", "json"]);
        let run = run_tool(command, None, Self::kill_instant(random))?;
        let class = classify(&run, false);
        if matches!(class, Class::Ok) {
            match serde_json::from_slice::<Vec<serde_json::Value>>(&run.stdout) {
                Ok(entries) => {
                    self.ended_rows_seen.fetch_add(entries.len(), Ordering::Relaxed);
                    for problem in invariants::ended_problems(&entries, &run.stderr) {
                        self.violation(format!("roster-list --ended showed {problem}"));
                    }
                }
                Err(error) => {
                    self.violation(format!("roster-list --ended printed something that is not JSON: {error}"))
                }
            }
        }
        self.count("list --ended", &class);
        Ok(())
    }

    /// Prunes now and then, some runs killed.
    fn pruner(&self, mut random: Random) -> anyhow::Result<()> {
        while self.running() {
            std::thread::sleep(Duration::from_millis(20) + random.duration_below(Duration::from_millis(150)));
            let mut command = self.tool("roster-prune");
            command.arg("--dir").arg(&self.roster).arg("--quiet");
            let run = run_tool(command, None, Self::kill_instant(&mut random))?;
            self.count("prune", &classify(&run, false));
        }
        Ok(())
    }

    /// Owners exit: some end their session first (the session-end hook's
    /// `prune --current`), others just die; a new owner takes each place.
    fn owner_churn(&self, mut random: Random) -> anyhow::Result<()> {
        while self.running() {
            std::thread::sleep(Duration::from_millis(80) + random.duration_below(Duration::from_millis(250)));
            let slot = {
                let mut live = self.live_owners.lock().expect("no soak thread panics");
                if live.is_empty() {
                    continue;
                }
                let index = random.below(live.len() as u64) as usize;
                live.swap_remove(index)
            };
            slot.book.lock().expect("no soak thread panics").dying = true;
            if random.chance(50) {
                let as_hook = random.chance(50);
                let mut command = self.tool("roster-prune");
                command
                    .arg("--current")
                    .arg("--dir")
                    .arg(&self.roster)
                    .args(["--pid", &slot.identity.pid.to_string()]);
                let mut stdin = None;
                if as_hook {
                    command.args(["--hook", "claude-code"]);
                    let mut payload = tempfile::tempfile()?;
                    write!(
                        payload,
                        r#"{{"session_id":"{}","hook_event_name":"SessionEnd","reason":"exit"}}"#,
                        slot.session_id
                    )?;
                    std::io::Seek::rewind(&mut payload)?;
                    stdin = Some(payload);
                } else {
                    command.arg("--quiet");
                }
                let run = run_tool(command, stdin, Self::kill_instant(&mut random))?;
                self.count(
                    if as_hook { "prune --current --hook" } else { "prune --current" },
                    &classify(&run, false),
                );
            }
            if let Some(owner) = slot.process.lock().expect("no soak thread panics").take() {
                owner.kill();
            }
            self.retired_owners.lock().expect("no soak thread panics").push(slot);
            let replacement = self.start_owner()?;
            self.live_owners.lock().expect("no soak thread panics").push(replacement);
        }
        Ok(())
    }

    /// Arms and disarms consent through the owners themselves (consent is
    /// only given by a verified owner), some runs killed.
    fn consent_flipper(&self, mut random: Random) -> anyhow::Result<()> {
        while self.running() {
            std::thread::sleep(random.duration_below(Duration::from_millis(30)));
            let Some(slot) = self.pick_live_owner(&mut random) else { continue };
            let verb = if random.chance(60) { "arm" } else { "disarm" };
            let kill_after = Self::kill_instant(&mut random);
            let answer = {
                let mut process = slot.process.lock().expect("no soak thread panics");
                match process.as_mut() {
                    Some(owner) => owner.consent(verb, kill_after),
                    None => continue,
                }
            };
            let dying = slot.book.lock().expect("no soak thread panics").dying;
            let class = match answer {
                None if dying => Class::OwnerGone,
                None => Class::Unexpected(format!("owner {} stopped answering", slot.identity.pid)),
                Some(answer) => {
                    let run = ToolRun {
                        ending: answer.ending,
                        stdout: Vec::new(),
                        stderr: answer.first_error_line,
                    };
                    classify(&run, dying)
                }
            };
            self.count(if verb == "arm" { "consent arm" } else { "consent disarm" }, &class);
        }
        Ok(())
    }

    /// Sends messages to random sessions, some of the sends killed; keeps
    /// the id of each one a send said it queued. A refusal (the session
    /// does not accept messages, is not registered, its queue is full or
    /// locked) is an answer the contract allows.
    fn sender(&self, mut random: Random) -> anyhow::Result<()> {
        let mut serial = 0usize;
        while self.running() {
            std::thread::sleep(random.duration_below(Duration::from_millis(10)));
            let Some(slot) = self.pick_live_owner(&mut random) else { continue };
            serial += 1;
            let filler = "soak text ".repeat(random.below(300) as usize);
            let mut command = self.tool("roster-send");
            command.arg("--dir").arg(&self.roster).args(["--json", "--to", &slot.session_id]);
            command.arg(format!("SOAK-MESSAGE {serial} {filler}"));
            let run = run_tool(command, None, Self::kill_instant(&mut random))?;
            let class = match run.ending {
                Ending::Exited(0) => match serde_json::from_slice::<serde_json::Value>(&run.stdout) {
                    Ok(answer) if answer["id"].is_string() => {
                        let id = answer["id"].as_str().unwrap_or_default().to_owned();
                        self.sent.lock().expect("no soak thread panics").push(id);
                        Class::Ok
                    }
                    _ => Class::Unexpected(format!("send exited 0 without an id: {}", run.describe())),
                },
                Ending::KilledOnPurpose => Class::Killed,
                Ending::Exited(1..=4) if run.stderr.contains("No space left on device") => Class::DiskFull,
                Ending::Exited(1..=4) => Class::Busy,
                _ => Class::Unexpected(run.describe()),
            };
            self.count("send", &class);
        }
        Ok(())
    }

    /// Has random owners run their session's delivery hook at a prompt,
    /// some killed, and counts every message that reached the harness
    /// whole.
    fn deliverer(&self, mut random: Random) -> anyhow::Result<()> {
        while self.running() {
            std::thread::sleep(random.duration_below(Duration::from_millis(20)));
            let Some(slot) = self.pick_live_owner(&mut random) else { continue };
            let kill_after = Self::kill_instant(&mut random);
            let answer = {
                let mut process = slot.process.lock().expect("no soak thread panics");
                match process.as_mut() {
                    Some(owner) => owner.deliver(&slot.session_id, kill_after),
                    None => continue,
                }
            };
            let dying = slot.book.lock().expect("no soak thread panics").dying;
            let class = match answer {
                None if dying => Class::OwnerGone,
                None => Class::Unexpected(format!("owner {} stopped answering", slot.identity.pid)),
                Some((Ending::Exited(0), printed)) => {
                    let mut received = self.received.lock().expect("no soak thread panics");
                    for id in invariants::whole_messages_in_reply(&printed) {
                        *received.entry(id).or_default() += 1;
                    }
                    Class::Ok
                }
                Some((Ending::KilledOnPurpose, printed)) => {
                    // Killed while it wrote: what reached the harness whole
                    // still counts.
                    let mut received = self.received.lock().expect("no soak thread panics");
                    for id in invariants::whole_messages_in_reply(&printed) {
                        *received.entry(id).or_default() += 1;
                    }
                    Class::Killed
                }
                Some((ending, _)) => Class::Unexpected(format!("the delivery hook ended {ending:?}")),
            };
            self.count("deliver --hook", &class);
        }
        Ok(())
    }

    /// Writes and fsyncs to the real disk without pause: the I/O load.
    fn io_load(&self, index: usize) -> anyhow::Result<()> {
        let path = self.load_directory.join(format!("load-{index}"));
        let chunk = vec![0x5au8; IO_LOAD_CHUNK];
        while self.running() {
            let mut file = File::create(&path).context("create an I/O load file")?;
            for _ in 0..8 {
                file.write_all(&chunk).context("write the I/O load")?;
                file.sync_data().context("fsync the I/O load")?;
                self.load_bytes_synced.fetch_add(chunk.len(), Ordering::Relaxed);
            }
        }
        let _ = std::fs::remove_file(&path);
        Ok(())
    }

    /// Fills the tmpfs to the last byte now and then, holds it full for a
    /// moment, and frees it again.
    fn filler(&self, mut random: Random) -> anyhow::Result<()> {
        let chunk = vec![0u8; 64 * 1024];
        while self.running() {
            std::thread::sleep(
                Duration::from_millis(200) + random.duration_below(Duration::from_millis(800)),
            );
            let mut filler = File::create(self.filler_path()).context("create the filler file")?;
            loop {
                match filler.write(&chunk) {
                    Ok(0) => break,
                    Ok(_) => {}
                    Err(error) if error.raw_os_error() == Some(nix::libc::ENOSPC) => break,
                    Err(error) => return Err(error).context("fill the tmpfs"),
                }
            }
            self.disk_full_periods.fetch_add(1, Ordering::Relaxed);
            std::thread::sleep(
                Duration::from_millis(100) + random.duration_below(Duration::from_millis(400)),
            );
            drop(filler);
            std::fs::remove_file(self.filler_path()).context("remove the filler file")?;
        }
        Ok(())
    }

    fn final_prune(&self) -> anyhow::Result<serde_json::Value> {
        let mut command = self.tool("roster-prune");
        command.arg("--dir").arg(&self.roster).args(["--format", "json"]);
        let run = run_tool(command, None, None)?;
        if !run.succeeded() {
            bail!("the final roster-prune failed: {}", run.describe());
        }
        serde_json::from_slice(&run.stdout).context("the final roster-prune printed no JSON report")
    }
}

/// What a run's ending means. `owner_dying`: the owner the run was about
/// was chosen to exit, so "not running" and friends are expected.
fn classify(run: &ToolRun, owner_dying: bool) -> Class {
    // roster-list --format json says its notes on stderr as one JSON line
    // (docs/contract.md §6.2); they are part of a successful listing.
    let message: String =
        run.stderr.lines().filter(|line| !is_notes_line(line)).map(|line| format!("{line}\n")).collect();
    let message = message.as_str();
    match run.ending {
        Ending::Exited(0) if message.is_empty() => return Class::Ok,
        // Hook mode exits 0 whatever happens and reports on stderr, so any
        // exit with a message is judged by the message.
        Ending::Exited(_) => {}
        Ending::KilledOnPurpose => return Class::Killed,
        Ending::Signalled(_) | Ending::Hung => return Class::Unexpected(run.describe()),
    }
    if message.contains("No space left on device") {
        Class::DiskFull
    } else if message.contains("registry busy") {
        Class::Busy
    } else if owner_dying {
        Class::OwnerGone
    } else {
        Class::Unexpected(run.describe())
    }
}

/// Whether `line` is roster-list's JSON notes line, `{"notes":[...]}`.
fn is_notes_line(line: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(line).is_ok_and(|value| {
        value.as_object().is_some_and(|object| object.len() == 1 && object["notes"].is_array())
    })
}

fn print_summary(
    soak: &Soak,
    seconds: u64,
    final_prune: &serde_json::Value,
    results: &[invariants::InvariantResult],
) {
    let tally = soak.tally.lock().expect("no soak thread panics");
    println!("soak: {seconds} s on a {} MiB tmpfs in a private mount namespace", TMPFS_BYTES >> 20);
    println!(
        "{:<24} {:>7} {:>9} {:>6} {:>7} {:>10} {:>10}",
        "operation", "ok", "disk full", "busy", "killed", "owner gone", "unexpected"
    );
    for (operation, counts) in tally.iter() {
        println!(
            "{operation:<24} {:>7} {:>9} {:>6} {:>7} {:>10} {:>10}",
            counts.ok, counts.disk_full, counts.busy, counts.killed, counts.owner_gone, counts.unexpected
        );
    }
    let total = tally.values().fold(Counts::default(), |sum, counts| Counts {
        ok: sum.ok + counts.ok,
        disk_full: sum.disk_full + counts.disk_full,
        busy: sum.busy + counts.busy,
        killed: sum.killed + counts.killed,
        owner_gone: sum.owner_gone + counts.owner_gone,
        unexpected: sum.unexpected + counts.unexpected,
    });
    println!(
        "{:<24} {:>7} {:>9} {:>6} {:>7} {:>10} {:>10}",
        "all", total.ok, total.disk_full, total.busy, total.killed, total.owner_gone, total.unexpected
    );
    if soak.consent_binary.is_none() {
        println!("consent flips skipped: roster-consent is not built");
    }
    let retired = soak.retired_owners.lock().expect("no soak thread panics").len();
    println!(
        "owners: {} started, {retired} exited; disk filled {} times; {} list rows checked",
        soak.next_owner_serial.load(Ordering::Relaxed),
        soak.disk_full_periods.load(Ordering::Relaxed),
        soak.list_rows_seen.load(Ordering::Relaxed),
    );
    println!(
        "messages: {} queued, {} received whole by the stand-in harnesses; {} MiB written and fsynced as I/O load",
        soak.sent.lock().expect("no soak thread panics").len(),
        soak.received.lock().expect("no soak thread panics").len(),
        soak.load_bytes_synced.load(Ordering::Relaxed) >> 20,
    );
    println!(
        "final prune: {} dead records, {} consent markers, {} temporaries removed; {} kept",
        final_prune["dead_removed"],
        final_prune["consent_removed"],
        final_prune["temp_removed"],
        final_prune["kept"]
    );
    println!("invariants:");
    for result in results {
        println!("  {} {}: {}", if result.held { "ok  " } else { "FAIL" }, result.name, result.detail);
    }
}
