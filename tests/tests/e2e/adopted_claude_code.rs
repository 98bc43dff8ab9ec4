//! The adopted-session proof's row for Claude Code (`adopted` drives it): its own registry
//! of live sessions, `~/.claude/sessions/<pid>.json`, read beside roster by a log of that
//! directory (`sessions_directory_log`). The real pinned Claude Code runs its TUI in a
//! terminal (tmux) against the stepped fake model server; beyond the driver's parts its
//! file's `status` must be followed: working while a prompt's model call is held, idle once
//! answered, and waiting for permission while its permission dialog shows for a shell
//! command the model asks for. Its sessions end with `/exit` (Ctrl-D twice if that does not
//! end it). Where the file differs from what roster assumes (its name, keys, `procStart`,
//! `pidDomain`, status words, when it is written or removed), the run says what it saw.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, ensure};
use serde_json::Value;

use super::adopted::{
    AdoptedProof, Drive, EVENT_DEADLINE, MarkingHarness, Part, PartOutcome, shown, wait_for_exit,
};
use super::adopted_claude_code_turns::COMMAND_ASKED_FOR;
use super::fake_model_server::{FakeModelServer, ModelApi};
use super::harness_processes::{describe_process, process_start_ticks, signal_process};
use super::roster_watch::WatchEvent;
use super::session_world::SessionWorld;
use super::sessions_directory_log::{
    FileVersion, SessionsDirectoryLog, directory_history, report_what_was_seen,
};
use super::terminal::{Terminal, screen_excerpt};

/// How long the TUI may take to start and show its prompt (the machine may be loaded).
const TUI_START_DEADLINE: Duration = Duration::from_secs(180);

/// How long the harness may take from an action (start, a prompt, an answer, `/exit`) to
/// the file or model call it leads to.
pub(super) const STEP_DEADLINE: Duration = Duration::from_secs(60);

/// What the TUI shows once it takes a prompt.
const READY: &str = "? for shortcuts";

/// How long `/exit` gets to end the session before Ctrl-D twice is tried instead.
const EXIT_REACTION: Duration = Duration::from_secs(10);

/// How often the run looks at the terminal, the server and the log while it waits.
pub(super) const POLL: Duration = Duration::from_millis(5);

/// The file's keys roster reads, and the JSON type each must have.
const KEYS_ROSTER_READS: [(&str, &str); 6] = [
    ("pid", "number"),
    ("sessionId", "string"),
    ("cwd", "string"),
    ("startedAt", "number"),
    ("procStart", "string"),
    ("pidDomain", "string"),
];

/// The statuses roster maps to a state; any other is no state (`unknown`).
const STATUSES: [(&str, &str); 3] = [("busy", "working"), ("idle", "idle"), ("waiting", "waiting")];

/// One Claude Code session: its terminal and the file it keeps.
pub(super) struct ClaudeSession {
    pub(super) terminal: Terminal,
    /// The pid the terminal runs (`env` execs Claude Code).
    pub(super) terminal_pid: u32,
    /// The file's name in the sessions directory.
    pub(super) file_name: String,
    /// The pid the file names.
    pub(super) pid: u32,
    /// When the directory log first saw the file.
    pub(super) file_seen_at: Instant,
}

/// Claude Code's row: the log of its sessions directory, and the sessions the run started.
pub(super) struct ClaudeCodeMarks {
    pub(super) log: SessionsDirectoryLog,
    pub(super) tmux: PathBuf,
    pub(super) sessions: Vec<ClaudeSession>,
    /// The files in the directory before the second session started.
    pub(super) known_before_second: Vec<String>,
    /// When the second session's file was seen gone.
    pub(super) second_gone_at: Option<Instant>,
}

impl MarkingHarness for ClaudeCodeMarks {
    const NAME: &'static str = "claude-code";
    const CALLED: &'static str = "Claude Code";
    const DEAD_REASON: &'static str = "Claude Code removes its file";
    const PARTS: &'static [(Part, &'static str)] = &[
        (Part::Listed, "adopted: listed, no hooks"),
        (Part::State, "adopted: state from its file"),
        (Part::Waiting, "adopted: waiting for permission"),
        (Part::Killed, "adopted: SIGKILL, died, file kept"),
        (Part::Exited, "adopted: /exit, file removed"),
    ];
    const LISTED_KEYS: &'static [&'static str] =
        &["origin", "liveness", "cwd", "session_id", "start_ticks", "harness", "path"];
    const AS_ASSUMED: &'static str = "the file is as roster assumes (name, keys, procStart, pidDomain, status, \
         modes), and no read caught it half-written";

    fn marks_directory(home: &Path) -> PathBuf {
        home.join(".claude").join("sessions")
    }

    fn start_server(api: ModelApi) -> anyhow::Result<FakeModelServer> {
        FakeModelServer::start_stepped(api, COMMAND_ASKED_FOR)
    }

    fn begin(world: &SessionWorld, marks: &Path) -> anyhow::Result<ClaudeCodeMarks> {
        let tmux = tests::find_or_install_tool("tmux").context(
            "the adopted-session proof drives the TUI in tmux, which is missing (Debian package: tmux)",
        )?;
        super::tui_recipes::prepare_tui_home(Self::NAME, world)?;
        let log = SessionsDirectoryLog::start(marks);
        Ok(ClaudeCodeMarks {
            log,
            tmux,
            sessions: Vec::new(),
            known_before_second: Vec::new(),
            second_gone_at: None,
        })
    }

    fn start_session(
        &mut self,
        drive: &mut Drive<'_>,
        second: bool,
        proof: &mut AdoptedProof,
    ) -> anyhow::Result<usize> {
        let session = if second {
            self.known_before_second = self.log.names();
            let session = self.start_tui(drive, "tmux-second.socket", &self.known_before_second)?;
            proof.note(format!("second session: {} appeared", session.file_name));
            session
        } else {
            let session = self.start_tui(drive, "tmux-first.socket", &[])?;
            proof.note(format!(
                "first session: {} appeared; the terminal's program is pid {}",
                session.file_name, session.terminal_pid
            ));
            session
        };
        self.sessions.push(session);
        Ok(self.sessions.len() - 1)
    }

    fn pid(&self, session: usize) -> u32 {
        self.sessions[session].pid
    }

    /// The first session: `registered` (or `listed`, when its file was there before the
    /// watch read the directory), its file's mismatches and content kept for the report;
    /// the second: `registered`.
    fn await_listed(
        &mut self,
        drive: &mut Drive<'_>,
        index: usize,
        outcome: &mut PartOutcome,
        proof: &mut AdoptedProof,
    ) -> anyhow::Result<WatchEvent> {
        let session = &self.sessions[index];
        let pid = session.pid;
        if index > 0 {
            let registered =
                drive.watch.wait_for("registered event of the second session", EVENT_DEADLINE, |event| {
                    event.is_about(&["registered"], pid)
                })?;
            outcome.latency(
                "registered",
                registered.received_at.saturating_duration_since(session.file_seen_at),
            );
            let evidence = self.session_evidence(drive, session, proof);
            self.check_row(drive, registered.row(), session, &registered, &evidence, outcome);
            return Ok(registered);
        }
        let file_version = self.log.latest(&session.file_name).context("the file was seen")?;
        proof.mismatches.extend(Self::file_mismatches(drive, session, &file_version));
        proof.example_file =
            file_version.bytes.as_deref().map(|bytes| Self::neutral_text(drive.world, bytes));
        let event =
            drive.watch.wait_for("registered or listed event of the session", EVENT_DEADLINE, |event| {
                event.is_about(&["registered", "listed"], pid)
            })?;
        let evidence = self.session_evidence(drive, session, proof);
        if event.kind() == "listed" {
            proof.note("the session was `listed`: its file was there before the watch read the directory");
        } else {
            let latency = event.received_at.saturating_duration_since(session.file_seen_at);
            outcome.latency("registered", latency);
            if let Some(mtime) =
                self.log.versions(&session.file_name).first().and_then(|version| version.modified)
            {
                proof.note(format!(
                    "registered {} after the log first saw {}, {} after its first mtime",
                    shown(latency),
                    session.file_name,
                    shown(wall_since(mtime, event.received_at))
                ));
            }
        }
        self.check_row(drive, event.row(), session, &event, &evidence, outcome);
        Ok(event)
    }

    /// The listed row's state is the one the file's status means.
    fn check_listed_row(
        &self,
        drive: &Drive<'_>,
        index: usize,
        row: &Value,
        outcome: &mut PartOutcome,
        proof: &mut AdoptedProof,
    ) {
        let session = &self.sessions[index];
        let status = self.log.latest(&session.file_name).and_then(|version| version.status());
        let expected = expected_state(status.as_deref());
        if row["state"] != expected {
            outcome.fail(format!(
                "roster-list --format json says state {}, the file's status {status:?} means {expected}{}",
                row["state"],
                self.session_evidence(drive, session, proof)
            ));
        }
        proof.note(format!(
            "roster-list --format json: {} {} {} {} {} (source {})",
            row["origin"], row["session_pid"], row["liveness"], row["state"], row["cwd"], row["state_source"]
        ));
    }

    /// Parts 2 and 3: the state the file's status means, then waiting for permission.
    fn turn_parts(
        &mut self,
        drive: &mut Drive<'_>,
        index: usize,
        proof: &mut AdoptedProof,
    ) -> anyhow::Result<()> {
        let session = &self.sessions[index];
        self.state(drive, session, proof)?;
        self.waiting(drive, session, proof)
    }

    /// A prompt's model call held: the file says busy.
    fn mid_turn(&mut self, drive: &mut Drive<'_>, index: usize) -> anyhow::Result<Vec<PathBuf>> {
        let session = &self.sessions[index];
        let submitted = Self::submit(drive, &session.terminal, "Say hello once more")?;
        self.wait_for_status(session, submitted, "busy")?;
        Ok(vec![drive.marks.join(&session.file_name)])
    }

    fn after_kill(
        &mut self,
        _drive: &mut Drive<'_>,
        index: usize,
        kept: &[(PathBuf, Vec<u8>)],
        proof: &mut AdoptedProof,
    ) -> anyhow::Result<()> {
        let session = &self.sessions[index];
        proof.note(format!(
            "SIGKILL to pid {} mid-turn (the file said busy): {} left as it was ({} bytes)",
            session.pid,
            session.file_name,
            kept.first().map_or(0, |(_, before)| before.len())
        ));
        session.terminal.close();
        Ok(())
    }

    /// `/exit` typed (Ctrl-D twice if it does not end the session): when its file was seen
    /// gone.
    fn end(
        &mut self,
        _drive: &mut Drive<'_>,
        index: usize,
        _outcome: &mut PartOutcome,
        proof: &mut AdoptedProof,
    ) -> anyhow::Result<Instant> {
        let session = &self.sessions[index];
        // What the new session did with the file the killed one left.
        for name in self.known_before_second.iter().filter(|name| name.ends_with(".json")) {
            match self.log.latest(name) {
                Some(version) if version.bytes.is_none() => proof
                    .note(format!("{name}, the killed session's, was removed by the second session's start")),
                _ => proof.note(format!(
                    "{name}, the killed session's, is still there after the second session started"
                )),
            }
        }
        session.terminal.type_text("/exit")?;
        session.terminal.wait_for_text("/exit", STEP_DEADLINE)?;
        let typed_at = Instant::now();
        session.terminal.press("Enter")?;
        let mut ended_by = "/exit";
        let gone = loop {
            if let Some(version) =
                self.log.first_after(&session.file_name, typed_at, |version| version.bytes.is_none())
            {
                break version;
            }
            if ended_by == "/exit" && typed_at.elapsed() > EXIT_REACTION {
                ended_by = "Ctrl-D twice";
                proof.note(format!(
                    "/exit did not end the session within {EXIT_REACTION:?}; the terminal shows:\n{}",
                    screen_excerpt(&session.terminal.screen())
                ));
                session.terminal.press("C-d")?;
                session.terminal.press("C-d")?;
            }
            ensure!(
                typed_at.elapsed() < STEP_DEADLINE,
                "{} stayed after /exit and Ctrl-D twice; the terminal shows:\n{}",
                session.file_name,
                screen_excerpt(&session.terminal.screen())
            );
            std::thread::sleep(POLL);
        };
        proof.note(format!(
            "{ended_by} ended the second session: {} gone {} after Enter",
            session.file_name,
            shown(gone.seen_at.saturating_duration_since(typed_at))
        ));
        self.second_gone_at = Some(gone.seen_at);
        Ok(gone.seen_at)
    }

    fn after_end(
        &mut self,
        drive: &mut Drive<'_>,
        index: usize,
        _alive: &WatchEvent,
        _outcome: &mut PartOutcome,
        proof: &mut AdoptedProof,
    ) {
        let session = &self.sessions[index];
        let pid = session.pid;
        let gone_at = self.second_gone_at.unwrap_or(session.file_seen_at);
        let exited = wait_for_exit(pid, STEP_DEADLINE);
        proof.note(match exited {
            Some(at) => format!(
                "pid {pid} exited {} after its file was seen gone",
                shown(at.saturating_duration_since(gone_at))
            ),
            None => format!("pid {pid} still ran {STEP_DEADLINE:?} after its file was removed"),
        });
        let events: Vec<String> = drive
            .watch
            .events()
            .iter()
            .filter(|event| event.row()["session_pid"].as_u64() == Some(u64::from(pid)))
            .map(|event| event.kind().to_owned())
            .collect();
        proof.note(format!("the watch's events of the second session: {}", events.join(", ")));
        session.terminal.close();
    }

    fn evidence(&self, drive: &Drive<'_>, index: usize, proof: &AdoptedProof) -> String {
        self.session_evidence(drive, &self.sessions[index], proof)
    }

    fn wind_up(self, drive: &mut Drive<'_>, proof: &mut AdoptedProof) {
        kill_leftover_sessions(&self.log);
        drive.watch.stop();
        report_what_was_seen(&self.log, drive.watch, drive.world, proof);
    }
}

/// Whatever happened, no Claude Code of the run outlives it: each pid a file named is
/// killed, while it is still the process the file names (its start ticks).
fn kill_leftover_sessions(log: &SessionsDirectoryLog) {
    for name in log.names() {
        let file = log.versions(&name).iter().rev().find_map(FileVersion::json);
        let Some(file) = file else { continue };
        let pid = file["pid"].as_u64().and_then(|pid| u32::try_from(pid).ok());
        let ticks = file["procStart"].as_str().and_then(|text| text.parse::<u64>().ok());
        if let Some(pid) = pid
            && ticks.is_some()
            && process_start_ticks(pid) == ticks
        {
            signal_process(pid, "KILL");
        }
    }
}

impl ClaudeCodeMarks {
    /// Starts a Claude Code TUI in a terminal of its own and waits for its prompt and the
    /// file it keeps (one not among `known`).
    fn start_tui(&self, drive: &Drive<'_>, socket: &str, known: &[String]) -> anyhow::Result<ClaudeSession> {
        // As the state proof starts it: the permission mode that asks (2.1.332's default,
        // auto, does not), though no tool is called here.
        let arguments = vec!["--permission-mode".to_owned(), "default".to_owned()];
        // The environment the TUI runs with: the world's, a real terminal's, the harness's.
        let mut environment = drive.world.base_environment(drive.node);
        environment.retain(|(key, _)| key != "TERM");
        environment.push(("TERM".to_owned(), "xterm-256color".to_owned()));
        environment.extend(drive.installed.harness.environment(&drive.server.base_url()));
        let terminal = Terminal::start(
            &self.tmux,
            &drive.world.root.join(socket),
            &drive.world.project,
            &environment,
            &drive.installed.executable,
            &arguments,
        )?;
        let terminal_pid = terminal.program_pid()?;
        terminal.wait_for_text(READY, TUI_START_DEADLINE).context("Claude Code did not take a prompt")?;
        let started = Instant::now();
        let (file_name, file_seen_at) = loop {
            let new_file = self.log.names().into_iter().find(|name| {
                name.ends_with(".json")
                    && !name.starts_with('.')
                    && !known.contains(name)
                    && self.log.latest(name).is_some_and(|version| version.json().is_some())
            });
            if let Some(name) = new_file {
                let first_seen = self.log.versions(&name).first().map(|version| version.seen_at);
                break (name, first_seen.context("a file seen has a version")?);
            }
            ensure!(
                started.elapsed() < STEP_DEADLINE,
                "Claude Code (pid {terminal_pid}) wrote no new *.json in its sessions directory within \
                 {STEP_DEADLINE:?} of showing its prompt; the directory: {}",
                directory_history(&self.log, drive.world)
            );
            std::thread::sleep(POLL);
        };
        let file =
            self.log.latest(&file_name).and_then(|version| version.json()).context("the file is JSON")?;
        let pid = match file["pid"].as_u64().and_then(|pid| u32::try_from(pid).ok()) {
            Some(pid) => pid,
            None => file_name
                .strip_suffix(".json")
                .and_then(|stem| stem.parse().ok())
                .with_context(|| format!("{file_name} names no pid, in its name or its content: {file}"))?,
        };
        Ok(ClaudeSession { terminal, terminal_pid, file_name, pid, file_seen_at })
    }

    /// Checks the watch's row against the file and the world.
    fn check_row(
        &self,
        drive: &Drive<'_>,
        row: &Value,
        session: &ClaudeSession,
        event: &WatchEvent,
        evidence: &str,
        outcome: &mut PartOutcome,
    ) {
        let file = self.log.latest(&session.file_name).and_then(|version| version.json()).unwrap_or_default();
        if row["origin"] != "claude-code" {
            outcome.fail(format!("the row's origin is {}, not \"claude-code\"{evidence}", row["origin"]));
        }
        if row["liveness"] != "alive" {
            outcome.fail(format!(
                "the row says {} ({}) while Claude Code runs{evidence}",
                row["liveness"], row["liveness_reason"]
            ));
        }
        // No hook told roster where it runs: its process's environment did
        // (the TUI runs in a tmux pane).
        if row["location"]["multiplexer"] != "tmux" || row["location"]["pane"].is_null() {
            outcome.fail(format!(
                "the row's location is {}, not the tmux pane its process's environment names{evidence}",
                row["location"]
            ));
        }
        let project = drive.world.project.display().to_string();
        if row["cwd"].as_str() != Some(project.as_str()) {
            outcome.fail(format!("the row's cwd is {}, not the project {project:?}{evidence}", row["cwd"]));
        }
        if row["session_id"] != file["sessionId"] || row["session_id"].is_null() {
            outcome.fail(format!(
                "the row's session_id is {}, the file's sessionId {}{evidence}",
                row["session_id"], file["sessionId"]
            ));
        }
        // The state the file said when the watch printed the row, or said just after:
        // the watch may read a write the log (every millisecond) has not seen yet.
        let versions = self.log.versions(&session.file_name);
        let current = versions.iter().rposition(|version| version.seen_at <= event.received_at);
        let candidates: Vec<&FileVersion> = versions
            .iter()
            .enumerate()
            .filter(|(index, version)| {
                Some(*index) == current
                    || (version.seen_at > event.received_at
                        && version.seen_at <= event.received_at + Duration::from_millis(20))
            })
            .map(|(_, version)| version)
            .collect();
        let expected: Vec<&str> =
            candidates.iter().map(|version| expected_state(version.status().as_deref())).collect();
        if !expected.iter().any(|state| row["state"] == *state) {
            outcome.fail(format!(
                "the row's state is {}, the file's status then meant {expected:?}{evidence}",
                row["state"]
            ));
        }
        if row["state"] != "unknown" && row["state_source"] != "claude-code:sessions-file" {
            outcome.fail(format!(
                "the row's state_source is {}, not claude-code:sessions-file",
                row["state_source"]
            ));
        }
    }

    /// Where the file differs from what roster assumes of it, each one line.
    fn file_mismatches(drive: &Drive<'_>, session: &ClaudeSession, version: &FileVersion) -> Vec<String> {
        let mut mismatches = Vec::new();
        let name = &session.file_name;
        let pid = session.pid;
        if *name != format!("{pid}.json") {
            mismatches.push(format!("the file is named {name}, not <pid>.json for its pid {pid}"));
        }
        if pid != session.terminal_pid {
            mismatches.push(format!(
                "the file names pid {pid}, the terminal runs pid {} ({})",
                session.terminal_pid,
                describe_process(pid)
            ));
        }
        let file = version.json().unwrap_or_default();
        for (key, kind) in KEYS_ROSTER_READS {
            let has_kind = match kind {
                "number" => file[key].is_u64(),
                _ => file[key].is_string(),
            };
            if !has_kind {
                mismatches.push(format!("{key} is {}, not a {kind}", file[key]));
            }
        }
        let ticks = process_start_ticks(pid);
        if file["procStart"].as_str().and_then(|text| text.parse::<u64>().ok()) != ticks {
            mismatches.push(format!(
                "procStart {} is not the start ticks of pid {pid} (field 22 of its stat: {ticks:?})",
                file["procStart"]
            ));
        }
        let domain = pid_domain_of(pid);
        if file["pidDomain"].as_str() != domain.as_deref() {
            mismatches.push(format!("pidDomain {} is not {domain:?}", file["pidDomain"]));
        }
        let project = drive.world.project.display().to_string();
        if file["cwd"].as_str() != Some(project.as_str()) {
            mismatches.push(format!("cwd {} is not the project {project}", file["cwd"]));
        }
        if let Some(status) = file["status"].as_str()
            && !STATUSES.iter().any(|(word, _)| *word == status)
        {
            mismatches.push(format!("status {status:?} is none of busy, idle, waiting"));
        }
        if version.mode != 0o644 {
            mismatches.push(format!("the file's mode is {:o}, not 644", version.mode));
        }
        match fs::metadata(&drive.marks).map(|metadata| metadata.mode() & 0o7777) {
            Ok(0o700) => {}
            Ok(mode) => mismatches.push(format!("the directory's mode is {mode:o}, not 700")),
            Err(error) => mismatches.push(format!("the directory cannot be read: {error}")),
        }
        mismatches
    }

    /// The mismatches found so far and the file as it is, for a failure message.
    pub(super) fn session_evidence(
        &self,
        drive: &Drive<'_>,
        session: &ClaudeSession,
        proof: &AdoptedProof,
    ) -> String {
        let file = self
            .log
            .latest(&session.file_name)
            .and_then(|version| version.bytes)
            .map(|bytes| Self::neutral_text(drive.world, &bytes))
            .unwrap_or_else(|| "(gone)".to_owned());
        let mismatches =
            if proof.mismatches.is_empty() { "none".to_owned() } else { proof.mismatches.join("; ") };
        format!(" [{}: {file}; where it differs from what roster assumes: {mismatches}]", session.file_name)
    }

    /// `bytes` as text, the home directory as `~` and this machine's id as `<machine-id>`.
    fn neutral_text(world: &SessionWorld, bytes: &[u8]) -> String {
        let text = String::from_utf8_lossy(bytes).replace(&world.home.display().to_string(), "~");
        match fs::read_to_string("/etc/machine-id") {
            Ok(machine) if !machine.trim().is_empty() => text.replace(machine.trim(), "<machine-id>"),
            _ => text,
        }
    }
}

/// The state roster's row must show for a file's `status`.
pub(super) fn expected_state(status: Option<&str>) -> &'static str {
    STATUSES.iter().find(|(word, _)| Some(*word) == status).map_or("unknown", |(_, state)| state)
}

/// `linux:<machine-id>:pid:[<pid namespace inode>]` of `pid`, as roster reads it.
fn pid_domain_of(pid: u32) -> Option<String> {
    let machine = fs::read_to_string("/etc/machine-id").ok()?;
    let namespace = fs::metadata(format!("/proc/{pid}/ns/pid")).ok()?.ino();
    Some(format!("linux:{}:pid:[{namespace}]", machine.trim()))
}

/// How long ago `then` (a wall-clock time) was at the instant `at`.
fn wall_since(then: SystemTime, at: Instant) -> Duration {
    let now = SystemTime::now() - at.elapsed();
    now.duration_since(then).unwrap_or_default()
}
