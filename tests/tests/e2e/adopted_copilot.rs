//! The adopted-session proof's row for Copilot CLI (`adopted` drives it): the marks it keeps
//! of its live sessions, `~/.copilot/session-state/<session id>/inuse.<pid>.lock` naming the
//! native process's pid, beside `inuse.<pid>.hold`, `flock`ed by that very pid while it
//! lives, and `workspace.yaml` with the session's cwd, read beside roster by
//! `copilot_session_state_log`. Copilot CLI runs `-p hi` against the gated fake model server
//! (its model call held, so the session lives); the watch must say `registered`, or
//! `registered` then `refreshed` when its first read came before the `flock`; a session
//! ends when its turn is answered: Copilot CLI exits 0 and removes its files. Where the
//! binary differs from what roster assumes (the files' names, the pid in the lock file, who
//! holds the `flock`, when they are written or removed), the run says what it saw.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use nix::sys::signal::Signal;
use nix::unistd::Pid;
use serde_json::Value;

use super::adopted::{
    AdoptedProof, Drive, EVENT_DEADLINE, MarkingHarness, Part, PartOutcome, neutral_path, shown,
};
use super::copilot_session_state_log::{
    FileEvents, READ_INTERVAL, SessionMarks, SessionStateLog, describe_timeline, empty_state, example_files,
    what_the_binary_did,
};
use super::fake_model_server::{FakeModelServer, ModelApi, REPLY_TEXT};
use super::harness_processes::{describe_process, signal_process};
use super::roster_watch::WatchEvent;
use super::session_world::SessionWorld;

/// Copilot CLI's name in roster.
pub const COPILOT: &str = "copilot";

/// How long Copilot CLI may take from its start to its lock file (a first run unpacks its
/// native binary; the machine may be loaded).
const START_DEADLINE: Duration = Duration::from_secs(180);

/// How long the binary may take from an action (the lock file seen, the answer let through)
/// to what it leads to (the `flock`, a model call, its exit, its files removed).
const STEP_DEADLINE: Duration = Duration::from_secs(60);

/// How often the run looks at the processes, the server and the log while it waits.
const POLL: Duration = Duration::from_millis(5);

/// The `comm` of Copilot CLI's native process (its node loader is `node`).
const NATIVE_COMM: &str = "MainThread";

/// One Copilot CLI run: its node loader (the spawned child, leader of its process group)
/// and the session it marked.
struct CopilotSession {
    child: Child,
    marks: SessionMarks,
}

impl CopilotSession {
    /// Kills the loader's process group (the native process is in it) and reaps the loader.
    fn kill_group(&mut self) {
        if let Ok(leader) = i32::try_from(self.child.id()) {
            let _ = nix::sys::signal::killpg(Pid::from_raw(leader), Signal::SIGKILL);
        }
        let _ = self.child.wait();
    }
}

/// Copilot CLI's row: the logs of its session-state directory, and every run started, to
/// be killed whatever happens.
pub(super) struct CopilotMarks {
    log: SessionStateLog,
    file_events: FileEvents,
    sessions: Vec<CopilotSession>,
    /// The model calls the server had seen before the second session started.
    calls_before_second: usize,
}

impl MarkingHarness for CopilotMarks {
    const NAME: &'static str = COPILOT;
    const CALLED: &'static str = "Copilot CLI";
    const DEAD_REASON: &'static str = "Copilot CLI removes its files";
    const PARTS: &'static [(Part, &'static str)] = &[
        (Part::Listed, "adopted: listed, no hooks"),
        (Part::Killed, "adopted: SIGKILL, died, files kept"),
        (Part::Exited, "adopted: own exit, files removed"),
    ];
    const LISTED_KEYS: &'static [&'static str] =
        &["origin", "liveness", "cwd", "session_id", "harness", "path", "session_pid_source"];
    const AS_ASSUMED: &'static str = "the files are as roster assumes (inuse.<pid>.lock naming the pid that \
         holds the flock on inuse.<pid>.hold, workspace.yaml's id and cwd; kept after SIGKILL, removed at the end)";

    fn marks_directory(home: &Path) -> PathBuf {
        home.join(".copilot").join("session-state")
    }

    fn start_server(api: ModelApi) -> anyhow::Result<FakeModelServer> {
        FakeModelServer::start(api)
    }

    fn begin(world: &SessionWorld, marks: &Path) -> anyhow::Result<CopilotMarks> {
        let log = SessionStateLog::start(marks);
        let file_events = FileEvents::start(&world.home, marks)?;
        Ok(CopilotMarks { log, file_events, sessions: Vec::new(), calls_before_second: 0 })
    }

    fn start_session(
        &mut self,
        drive: &mut Drive<'_>,
        second: bool,
        proof: &mut AdoptedProof,
    ) -> anyhow::Result<usize> {
        let known = if second { self.log.sessions() } else { Vec::new() };
        self.calls_before_second = drive.server.model_call_count();
        self.start_copilot(drive, &known, proof)
    }

    fn pid(&self, session: usize) -> u32 {
        self.sessions[session].marks.pid
    }

    /// `registered` alive (or unproven, then `refreshed` alive), checked; what the binary
    /// did with its files, and the first session's files for the report.
    fn await_listed(
        &mut self,
        drive: &mut Drive<'_>,
        session: usize,
        outcome: &mut PartOutcome,
        proof: &mut AdoptedProof,
    ) -> anyhow::Result<WatchEvent> {
        let (alive, before) = self.wait_alive(drive, session, outcome, proof)?;
        self.check_row(drive, alive.row(), session, outcome);
        let marks = &self.sessions[session].marks;
        proof.observations.push(what_the_binary_did(
            &self.log,
            &self.file_events,
            marks,
            session + 1,
            &alive,
            &before,
        ));
        if session == 0 {
            proof.example_file = Some(example_files(&self.log, marks, &drive.world.home));
        }
        Ok(alive)
    }

    fn check_listed_row(
        &self,
        drive: &Drive<'_>,
        session: usize,
        row: &Value,
        outcome: &mut PartOutcome,
        proof: &mut AdoptedProof,
    ) {
        self.check_row(drive, row, session, outcome);
        proof.note(format!(
            "roster-list --format json: {} {} {} {} {} {} (source {})",
            row["origin"],
            row["session_pid"],
            row["liveness"],
            row["session_id"],
            row["cwd"],
            row["path"].as_str().map_or_else(String::new, |path| neutral_path(Path::new(path), drive.world)),
            row["session_pid_source"]
        ));
    }

    /// Its model call held, and the session older than roster's grace for an unheld claim
    /// (one younger reads as starting, maybe in another pid namespace, and `roster-list`
    /// calls it dead only past that): the lock and hold files must stay.
    fn mid_turn(&mut self, drive: &mut Drive<'_>, session: usize) -> anyhow::Result<Vec<PathBuf>> {
        self.wait_for_model_calls(drive, 1, session)?;
        let ran_for = self.sessions[session].marks.lock_seen_at.elapsed();
        let grace = registry_core::adopted::COPILOT_STARTING_GRACE + Duration::from_millis(500);
        if ran_for < grace {
            std::thread::sleep(grace - ran_for);
        }
        let marks = &self.sessions[session].marks;
        let directory = drive.marks.join(&marks.session_id);
        Ok(vec![directory.join(&marks.lock_name), directory.join(marks.hold_name())])
    }

    fn after_kill(
        &mut self,
        _drive: &mut Drive<'_>,
        session: usize,
        kept: &[(PathBuf, Vec<u8>)],
        proof: &mut AdoptedProof,
    ) -> anyhow::Result<()> {
        let (pid, loader) = (self.sessions[session].marks.pid, self.sessions[session].child.id());
        let size = |index: usize| kept.get(index).map_or(0, |(_, before)| before.len());
        let (lock_before, hold_before) = (size(0), size(1));
        let loader_state = match self.sessions[session].child.try_wait()? {
            Some(status) => format!("had exited ({status})"),
            None => "still ran".to_owned(),
        };
        proof.note(format!(
            "SIGKILL to pid {pid} mid-turn: {} ({} bytes) and {} ({} bytes) left as they were; its loader, pid \
             {loader}, {loader_state} by then; its group is killed now",
            self.sessions[session].marks.lock_name,
            lock_before,
            self.sessions[session].marks.hold_name(),
            hold_before
        ));
        self.sessions[session].kill_group();
        Ok(())
    }

    /// Its turn answered: the loader exits 0, the lock and hold files go; when the lock
    /// file was seen gone.
    fn end(
        &mut self,
        drive: &mut Drive<'_>,
        session: usize,
        outcome: &mut PartOutcome,
        proof: &mut AdoptedProof,
    ) -> anyhow::Result<Instant> {
        let pid = self.sessions[session].marks.pid;
        self.wait_for_model_calls(drive, self.calls_before_second + 1, session)?;
        let (session_id, lock_name, hold_name) = {
            let record = &self.sessions[session].marks;
            (record.session_id.clone(), record.lock_name.clone(), record.hold_name())
        };
        let opened_at = Instant::now();
        drive.server.open_gate();
        let (mut status, mut native_gone, mut lock_gone, mut hold_gone) = (None, None, None, None);
        while status.is_none() || lock_gone.is_none() || hold_gone.is_none() {
            if status.is_none() {
                status = self.sessions[session].child.try_wait()?.map(|status| (status, Instant::now()));
            }
            if native_gone.is_none() && !process_running(pid) {
                native_gone = Some(Instant::now());
            }
            lock_gone = lock_gone.or_else(|| self.log.first_seen(&session_id, &lock_name, Option::is_none));
            hold_gone = hold_gone.or_else(|| self.log.first_seen(&session_id, &hold_name, Option::is_none));
            if opened_at.elapsed() > STEP_DEADLINE {
                let evidence = format!(
                    "{STEP_DEADLINE:?} after its turn was answered: loader {}, {lock_name} {}, {hold_name} {}; {}",
                    status
                        .map_or_else(|| "still runs".to_owned(), |(status, _)| format!("exited ({status})")),
                    if lock_gone.is_some() { "removed" } else { "still there" },
                    if hold_gone.is_some() { "removed" } else { "still there" },
                    describe_timeline(&self.log, &session_id, pid)
                );
                if status.is_some() {
                    proof
                        .mismatches
                        .push(format!("Copilot CLI ended normally but left its files: {evidence}"));
                }
                bail!("Copilot CLI's second session did not end as roster assumes: {evidence}");
            }
            std::thread::sleep(READ_INTERVAL);
        }
        let (status, exited_at) = status.context("the loader exited")?;
        let lock_gone = lock_gone.context("the lock file went")?;
        let hold_gone = hold_gone.context("the hold file went")?;
        let after = |at: Instant| shown(at.saturating_duration_since(opened_at));
        let output = fs::read_to_string(drive.world.harness_output()).unwrap_or_default();
        proof.note(format!(
            "its turn answered, Copilot CLI exited ({status}) {} later, printing the reply: {}; {lock_name} was seen \
             gone at +{}, {hold_name} at +{}, pid {pid} at +{}",
            after(exited_at),
            output.contains(REPLY_TEXT),
            after(lock_gone),
            after(hold_gone),
            native_gone.map_or_else(|| "?".to_owned(), after)
        ));
        if !status.success() {
            outcome
                .fail(format!("Copilot CLI exited {status} after its turn was answered: {}", output.trim()));
        }
        Ok(lock_gone)
    }

    /// Between alive and removed the watch may only say refreshed, died or removed.
    fn after_end(
        &mut self,
        drive: &mut Drive<'_>,
        session: usize,
        alive: &WatchEvent,
        outcome: &mut PartOutcome,
        proof: &mut AdoptedProof,
    ) {
        let pid = self.sessions[session].marks.pid;
        let events: Vec<String> = drive
            .watch
            .events()
            .iter()
            .filter(|event| event.row()["session_pid"].as_u64() == Some(u64::from(pid)))
            .filter(|event| event.received_at >= alive.received_at)
            .map(|event| format!("{} {}", event.kind(), event.row()["liveness"].as_str().unwrap_or("-"),))
            .collect();
        proof.note(format!("the watch's events of the second session from alive on: {}", events.join(", ")));
        let unexpected: Vec<&String> = events
            .iter()
            .skip(1)
            .filter(|event| {
                !event.starts_with("died") && !event.starts_with("removed") && !event.starts_with("refreshed")
            })
            .collect();
        if !unexpected.is_empty() {
            outcome.fail(format!("between alive and removed the watch reported {unexpected:?}"));
        }
    }

    fn evidence(&self, _drive: &Drive<'_>, session: usize, _proof: &AdoptedProof) -> String {
        self.evidence_of(session)
    }

    fn wind_up(mut self, drive: &mut Drive<'_>, proof: &mut AdoptedProof) {
        for session in &mut self.sessions {
            session.kill_group();
        }
        // A native process that left its loader's group is killed by the pid its lock file
        // names, while it is still Copilot CLI's.
        for session in &self.sessions {
            let pid = session.marks.pid;
            if process_running(pid) && describe_process(pid).starts_with(NATIVE_COMM) {
                signal_process(pid, "KILL");
            }
        }
        drive.watch.stop();
        proof.note(format!("the watch's events: {}", drive.watch.summary()));
        for session in &self.sessions {
            proof.note(format!(
                "session {}, as the log saw it: {}",
                session.marks.session_id,
                describe_timeline(&self.log, &session.marks.session_id, session.marks.pid)
            ));
        }
    }
}

impl CopilotMarks {
    /// Starts `copilot -p hi` and waits for the lock file of a session directory not among
    /// `known`, filled with its pid, and for the `flock` on its hold file.
    fn start_copilot(
        &mut self,
        drive: &Drive<'_>,
        known: &[String],
        proof: &mut AdoptedProof,
    ) -> anyhow::Result<usize> {
        let arguments = drive.installed.harness.arguments(&drive.installed.help);
        let spawned_at = Instant::now();
        let child =
            drive.world.spawn_harness(drive.installed, &arguments, drive.node, &drive.server.base_url())?;
        let loader = child.id();
        let index = self.sessions.len();
        // Kept at once, so that whatever fails below, the run kills it.
        let marks = SessionMarks {
            session_id: String::new(),
            lock_name: String::new(),
            pid: 0,
            lock_seen_at: spawned_at,
        };
        self.sessions.push(CopilotSession { child, marks });
        let (session_id, lock_name) = loop {
            let found = self.log.sessions().into_iter().filter(|session| !known.contains(session)).find_map(
                |session| {
                    let lock =
                        self.log.names(&session).into_iter().find(|name| lock_file_pid(name).is_some())?;
                    Some((session, lock))
                },
            );
            if let Some(found) = found {
                break found;
            }
            if let Some(status) = self.sessions[index].child.try_wait()? {
                bail!(
                    "Copilot CLI (loader pid {loader}) exited ({status}) before any new session directory of {} held an \
                     inuse.<pid>.lock; the directory: {}; requests: {:?}",
                    neutral_path(&drive.marks, drive.world),
                    self.directory_listing(known),
                    drive.server.requests()
                );
            }
            ensure!(
                spawned_at.elapsed() < START_DEADLINE,
                "Copilot CLI (loader pid {loader}) made no new session directory with an inuse.<pid>.lock in {} within \
                 {START_DEADLINE:?}; the directory: {}; requests: {:?}",
                neutral_path(&drive.marks, drive.world),
                self.directory_listing(known),
                drive.server.requests()
            );
            std::thread::sleep(READ_INTERVAL);
        };
        let pid = lock_file_pid(&lock_name).context("a lock file's name carries a pid")?;
        let lock_seen_at =
            self.log.first_seen(&session_id, &lock_name, Option::is_some).context("the lock was seen")?;
        {
            let marks = &mut self.sessions[index].marks;
            marks.session_id = session_id.clone();
            marks.lock_name = lock_name.clone();
            marks.pid = pid;
            marks.lock_seen_at = lock_seen_at;
        }
        proof.note(format!(
            "{session_id}/{lock_name} appeared {} after the start; the loader is pid {loader} ({}), pid {pid} is {} \
             (parent {})",
            shown(lock_seen_at.saturating_duration_since(spawned_at)),
            describe_process(loader),
            describe_process(pid),
            parent_of(pid).map_or_else(|| "?".to_owned(), |parent| parent.to_string())
        ));
        if !describe_process(pid).starts_with(NATIVE_COMM) {
            proof.note(format!("pid {pid} is not named {NATIVE_COMM}: {}", describe_process(pid)));
        }
        // The lock file filled with its pid, and the hold file locked, each within a deadline.
        let started = Instant::now();
        loop {
            let lock = self.log.latest(&session_id, &lock_name);
            let hold = self.log.latest(&session_id, &format!("inuse.{pid}.hold"));
            let filled = lock.as_ref().is_some_and(|lock| !lock.bytes.is_empty());
            let held = hold.as_ref().is_some_and(|hold| hold.holders.contains(&pid));
            if filled && held {
                break;
            }
            if started.elapsed() > STEP_DEADLINE {
                let evidence = format!(
                    "the lock file holds {:?}; the hold file {}; {}",
                    lock.map(|lock| String::from_utf8_lossy(&lock.bytes).into_owned()),
                    match hold {
                        None => "is not there".to_owned(),
                        Some(hold) if hold.holders.is_empty() => "is locked by nobody".to_owned(),
                        Some(hold) => format!("is locked by pid(s) {:?}, not {pid}", hold.holders),
                    },
                    describe_timeline(&self.log, &session_id, pid)
                );
                proof.mismatches.push(format!("{STEP_DEADLINE:?} after {lock_name} appeared, {evidence}"));
                bail!(
                    "Copilot CLI's session never showed what roster assumes within {STEP_DEADLINE:?}: {evidence}"
                );
            }
            std::thread::sleep(READ_INTERVAL);
        }
        proof.mismatches.extend(self.file_mismatches(drive, &self.sessions[index].marks));
        Ok(index)
    }

    /// What the session directory holds, as the log saw it: each new session and its names.
    fn directory_listing(&self, known: &[String]) -> String {
        let sessions: Vec<String> = self
            .log
            .sessions()
            .into_iter()
            .filter(|session| !known.contains(session))
            .map(|session| format!("{session}: {}", self.log.names(&session).join(" ")))
            .collect();
        if sessions.is_empty() { "no new session directory".to_owned() } else { sessions.join("; ") }
    }

    /// Where the session's files differ from what roster assumes of them, each one line.
    fn file_mismatches(&self, drive: &Drive<'_>, session: &SessionMarks) -> Vec<String> {
        let mut mismatches = Vec::new();
        let pid = session.pid;
        let lock = self.log.latest(&session.session_id, &session.lock_name).unwrap_or_else(empty_state);
        let said = String::from_utf8_lossy(&lock.bytes).trim().to_owned();
        if said != pid.to_string() {
            mismatches.push(format!("{} holds {said:?}, not its name's pid {pid}", session.lock_name));
        }
        let hold = self.log.latest(&session.session_id, &session.hold_name()).unwrap_or_else(empty_state);
        if hold.holders.iter().any(|holder| *holder != pid) {
            mismatches.push(format!(
                "{} is locked by {:?}, not only by {pid}",
                session.hold_name(),
                hold.holders
            ));
        }
        let workspace = self.log.latest(&session.session_id, "workspace.yaml");
        match workspace.as_ref().map(|workspace| String::from_utf8_lossy(&workspace.bytes).into_owned()) {
            None => mismatches.push("no workspace.yaml beside the lock file".to_owned()),
            Some(text) => {
                let id = yaml_value(&text, "id");
                let cwd = yaml_value(&text, "cwd");
                if id.as_deref() != Some(session.session_id.as_str()) {
                    mismatches.push(format!(
                        "workspace.yaml's id is {id:?}, not its directory's {}",
                        session.session_id
                    ));
                }
                let project = drive.world.project.display().to_string();
                if cwd.as_deref() != Some(project.as_str()) {
                    mismatches.push(format!("workspace.yaml's cwd is {cwd:?}, not the project {project}"));
                }
            }
        }
        mismatches
    }

    /// Waits for the watch to say the session is alive: `registered`, or `registered`
    /// unproven then `refreshed` alive. Returns the alive event and the events before it.
    fn wait_alive(
        &self,
        drive: &mut Drive<'_>,
        session: usize,
        outcome: &mut PartOutcome,
        proof: &mut AdoptedProof,
    ) -> anyhow::Result<(WatchEvent, Vec<WatchEvent>)> {
        let (pid, lock_seen_at) =
            (self.sessions[session].marks.pid, self.sessions[session].marks.lock_seen_at);
        let started = Instant::now();
        let mut before = Vec::new();
        let alive = loop {
            let left = EVENT_DEADLINE.saturating_sub(started.elapsed());
            let event = drive
                .watch
                .wait_for(&format!("alive event for pid {pid}"), left, |event| {
                    event.is_about(
                        &["registered", "refreshed", "problem", "died", "removed", "unmatched"],
                        pid,
                    )
                })
                .map_err(|error| error.context(self.evidence_of(session)))?;
            if event.row()["liveness"] == "alive" {
                break event;
            }
            before.push(event);
        };
        let kinds: Vec<&str> = before.iter().chain([&alive]).map(WatchEvent::kind).collect();
        let expected =
            kinds.first() == Some(&"registered") && kinds[1..].iter().all(|kind| *kind == "refreshed");
        if !expected {
            outcome.fail(format!(
                "the watch reported {} for pid {pid}, not registered (then refreshed){}",
                kinds.join(", "),
                self.evidence_of(session)
            ));
        }
        let latency = alive.received_at.saturating_duration_since(lock_seen_at);
        outcome.latency(&format!("alive (session {})", session + 1), latency);
        let held_at = self.log.first_seen(
            &self.sessions[session].marks.session_id,
            &self.sessions[session].marks.hold_name(),
            |state| state.as_ref().is_some_and(|state| state.holders.contains(&pid)),
        );
        proof.note(format!(
            "the watch: {} ; alive {} after the lock file was seen{}",
            before
                .iter()
                .chain([&alive])
                .map(|event| format!(
                    "{} {} at +{} ({})",
                    event.kind(),
                    event.row()["liveness"].as_str().unwrap_or("-"),
                    shown(event.received_at.saturating_duration_since(lock_seen_at)),
                    event.row()["liveness_reason"].as_str().unwrap_or_default()
                ))
                .collect::<Vec<_>>()
                .join(", "),
            shown(latency),
            held_at.map_or_else(String::new, |held_at| format!(
                ", {} after the flock was seen held",
                shown(alive.received_at.saturating_duration_since(held_at))
            ))
        ));
        Ok((alive, before))
    }

    /// Checks a row the watch or roster-list showed against the session and the world.
    fn check_row(&self, drive: &Drive<'_>, row: &Value, session: usize, outcome: &mut PartOutcome) {
        let session_record = &self.sessions[session].marks;
        let evidence = self.evidence_of(session);
        if row["origin"] != COPILOT {
            outcome.fail(format!("the row's origin is {}, not \"copilot\"{evidence}", row["origin"]));
        }
        if row["liveness"] != "alive" {
            outcome.fail(format!(
                "the row says {} ({}) while Copilot CLI runs{evidence}",
                row["liveness"], row["liveness_reason"]
            ));
        }
        if row["harness"] != COPILOT {
            outcome.fail(format!("the row's harness is {}, not copilot{evidence}", row["harness"]));
        }
        if row["session_id"].as_str() != Some(session_record.session_id.as_str()) {
            outcome.fail(format!(
                "the row's session_id is {}, the session directory is {}{evidence}",
                row["session_id"], session_record.session_id
            ));
        }
        let project = drive.world.project.display().to_string();
        if row["cwd"].as_str() != Some(project.as_str()) {
            outcome.fail(format!("the row's cwd is {}, not the project {project:?}{evidence}", row["cwd"]));
        }
    }

    /// Waits until the server has seen `count` model calls in all, the session's loader
    /// still running.
    fn wait_for_model_calls(
        &mut self,
        drive: &Drive<'_>,
        count: usize,
        session: usize,
    ) -> anyhow::Result<()> {
        let started = Instant::now();
        while drive.server.model_call_count() < count {
            if let Some(status) = self.sessions[session].child.try_wait()? {
                bail!(
                    "Copilot CLI exited ({status}) before its model call; requests: {:?}",
                    drive.server.requests()
                );
            }
            ensure!(
                started.elapsed() < STEP_DEADLINE,
                "Copilot CLI made no model call within {STEP_DEADLINE:?}; requests: {:?}",
                drive.server.requests()
            );
            std::thread::sleep(POLL);
        }
        Ok(())
    }

    /// The session's files as the log saw them, for a failure message.
    fn evidence_of(&self, session: usize) -> String {
        let marks = &self.sessions[session].marks;
        format!(" [{}]", describe_timeline(&self.log, &marks.session_id, marks.pid))
    }
}

/// The pid an `inuse.<pid>.lock` name carries.
fn lock_file_pid(name: &str) -> Option<u32> {
    let digits = name.strip_prefix("inuse.")?.strip_suffix(".lock")?;
    (!digits.is_empty() && digits.bytes().all(|byte| byte.is_ascii_digit()))
        .then(|| digits.parse().ok())
        .flatten()
}

/// A top-level plain scalar of a YAML text (`cwd: /home/me/app`).
fn yaml_value(text: &str, key: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let value = line.strip_prefix(key)?.strip_prefix(':')?.trim();
        Some(value.trim_matches(|character| character == '"' || character == '\'').to_owned())
    })
}

/// Whether a process runs at `pid` (a zombie does not).
fn process_running(pid: u32) -> bool {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    stat.rfind(')').and_then(|end| stat.get(end + 2..)?.chars().next()).is_some_and(|state| state != 'Z')
}

/// The parent pid of `pid`.
fn parent_of(pid: u32) -> Option<u32> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat[stat.rfind(')')? + 2..].split(' ').nth(1)?.parse().ok()
}
