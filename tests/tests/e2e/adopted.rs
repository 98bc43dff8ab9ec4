//! The e2e's proof for the sessions Claude Code keeps itself (docs/contract.md §6.5), with no
//! roster hook installed anywhere: the real pinned Claude Code runs its TUI in a terminal
//! (tmux) against the stepped fake model server, in a temporary HOME, while `roster-list
//! --watch --format json --dir <an empty roster>` runs with the same HOME. Beside roster, a
//! log of Claude Code's sessions directory (`sessions_directory_log`) reads the harness's
//! own `~/.claude/sessions/<pid>.json`, to compare roster's rows with it and to time the
//! watch's events. Five parts, each waited for against a deadline:
//!
//! 1. listed: the watch reports the new session (`registered`) with the file's session id,
//!    the project as cwd, alive, in the state the file's `status` means; `roster-list
//!    --format json` shows the same row;
//! 2. state: a prompt's model call held, the file says busy and the watch says working
//!    (`state-changed`); the call answered, idle;
//! 3. waiting: the model asks for a shell command, Claude Code's permission dialog shows,
//!    the file says waiting, and the watch must say waiting for permission; the dialog
//!    approved, the turn ends;
//! 4. SIGKILL of the file's pid mid-turn: `died` at once; `roster-list --all` shows it dead,
//!    saying Claude Code removes its file; the file stays byte for byte, `roster-prune`
//!    included;
//! 5. a second session ended with `/exit`: its file goes, the watch reports `removed`, and
//!    `roster-list` no longer shows it.
//!
//! Where the binary's file differs from what roster assumes of it (its name, keys,
//! `procStart`, `pidDomain`, status words, when it is written or removed), the run reports
//! what it saw; a roster check that fails because of it fails with that evidence.
//!
//! Copilot CLI's own marks of its sessions are proved in `adopted_copilot`, which `prove`
//! hands that harness to.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, bail, ensure};
use serde_json::Value;

use super::fake_model_server::{FakeModelServer, REPLY_TEXT};
use super::real_harnesses::InstalledHarness;
use super::roster_watch::{RosterWatch, WatchEvent};
use super::sessions_directory_log::{FileVersion, SessionsDirectoryLog};
use super::terminal::{Terminal, screen_excerpt};
use super::{CaseResult, SessionWorld, process_start_ticks, signal_process};

/// The harness that keeps a registry of its own sessions (docs/harnesses.md).
pub const CLAUDE_CODE: &str = "claude-code";

/// The harnesses whose own marks of their live sessions roster lists: Claude Code's
/// registry, and Copilot CLI's lock files (`adopted_copilot`).
pub const ADOPTING_HARNESSES: [&str; 2] = [CLAUDE_CODE, super::adopted_copilot::COPILOT];

/// Why the proof does not apply to any other harness.
pub const NOT_APPLICABLE: &str = "only Claude Code and Copilot CLI mark their own live sessions (docs/harnesses.md names what the others keep)";

/// How long the TUI may take to start and show its prompt (the machine may be loaded).
const TUI_START_DEADLINE: Duration = Duration::from_secs(180);

/// How long the harness may take from an action (start, a prompt, an answer, `/exit`) to
/// the file or model call it leads to.
const STEP_DEADLINE: Duration = Duration::from_secs(60);

/// How long the watch may take to report what the directory log saw, before the run calls
/// the event missing.
const EVENT_DEADLINE: Duration = Duration::from_secs(10);

/// The watch's latency target (docs/contract.md §9, a p99 the benchmark checks): each
/// latency here is one sample, reported against it.
pub(super) const WATCH_TARGET: Duration = Duration::from_millis(100);

/// The latency past which one sample fails the proof: well above the target, since one
/// sample on a loaded machine is not a p99, yet far below anything a person would call
/// "at once".
pub(super) const WATCH_BOUND: Duration = Duration::from_secs(1);

/// What the TUI shows once it takes a prompt.
const READY: &str = "? for shortcuts";

/// How long the TUI gets to show a sign of a prompt (a model call held) after Enter before
/// Enter is pressed again, and how many times it is.
const SUBMIT_REACTION: Duration = Duration::from_secs(5);
const SUBMIT_ATTEMPTS: u32 = 4;

/// How long `/exit` gets to end the session before Ctrl-D twice is tried instead.
const EXIT_REACTION: Duration = Duration::from_secs(10);

/// How often the run looks at the terminal, the server and the log while it waits.
const POLL: Duration = Duration::from_millis(5);

/// How often the run looks whether a process has exited: the resolution of the times
/// measured from its exit.
const EXIT_POLL: Duration = Duration::from_millis(1);

/// The file's keys roster reads, and the JSON type each must have.
const KEYS_ROSTER_READS: [(&str, &str); 6] = [
    ("pid", "number"),
    ("sessionId", "string"),
    ("cwd", "string"),
    ("startedAt", "number"),
    ("procStart", "string"),
    ("pidDomain", "string"),
];

/// The shell command the model asks to run in the waiting part, where Claude Code asks
/// for permission first; what its dialog shows; the key that answers it "yes".
const COMMAND_ASKED_FOR: &str = "touch roster-e2e-approved";
const DIALOG: &str = "Do you want to proceed?";
const APPROVE_KEY: &str = "1";

/// How long the dialog gets to close after its answer was typed before the key is pressed
/// again (Claude Code drops keys that come right as its dialog opens), and how many times
/// it is.
const DIALOG_REACTION: Duration = Duration::from_secs(2);
const APPROVAL_ATTEMPTS: u32 = 5;

/// The statuses roster maps to a state; any other is no state (`unknown`).
const STATUSES: [(&str, &str); 3] = [("busy", "working"), ("idle", "idle"), ("waiting", "waiting")];

/// One part of the proof, in the order they run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    Listed,
    State,
    Waiting,
    Killed,
    Exited,
}

impl Part {
    const ALL: [Part; 5] = [Part::Listed, Part::State, Part::Waiting, Part::Killed, Part::Exited];

    pub fn label(self) -> &'static str {
        match self {
            Part::Listed => "adopted: listed, no hooks",
            Part::State => "adopted: state from its file",
            Part::Waiting => "adopted: waiting for permission",
            Part::Killed => "adopted: SIGKILL, died, file kept",
            Part::Exited => "adopted: /exit, file removed",
        }
    }
}

/// What the proof showed.
pub struct AdoptedProof {
    /// Each part's result (by its label) and the watch latencies it measured.
    pub parts: Vec<(&'static str, CaseResult, String)>,
    /// The run's notes, for the log.
    pub lines: Vec<String>,
    /// Each watch latency measured, what it was of, in order.
    pub latencies: Vec<(String, Duration)>,
    /// One session file as the harness wrote it, the home directory shown as `~`.
    pub example_file: Option<String>,
    /// What the harness did with its files, seen from outside roster, for the summary.
    pub observations: Vec<String>,
    /// Where the binary's file differs from what roster assumes of it.
    pub mismatches: Vec<String>,
    /// What roster did with that difference that a user would not expect, though no check
    /// failed: the run's warnings.
    pub warnings: Vec<String>,
}

impl AdoptedProof {
    pub(super) fn new() -> AdoptedProof {
        AdoptedProof {
            parts: Vec::new(),
            lines: Vec::new(),
            latencies: Vec::new(),
            example_file: None,
            observations: Vec::new(),
            mismatches: Vec::new(),
            warnings: Vec::new(),
        }
    }

    pub(super) fn note(&mut self, line: impl Into<String>) {
        self.lines.push(line.into());
    }

    /// The parts that failed, one line each.
    pub fn failures(&self) -> Vec<String> {
        self.parts
            .iter()
            .filter_map(|(part, result, _)| match result {
                CaseResult::Failed(why) => Some(format!("{part}: {why}")),
                _ => None,
            })
            .collect()
    }
}

/// The checks of one part that failed, and the latencies it measured.
#[derive(Default)]
pub(super) struct PartOutcome {
    pub(super) failures: Vec<String>,
    pub(super) latencies: Vec<(String, Duration)>,
}

impl PartOutcome {
    pub(super) fn fail(&mut self, failure: impl Into<String>) {
        self.failures.push(failure.into());
    }

    /// Records a watch latency; one over `WATCH_BOUND` fails the part.
    pub(super) fn latency(&mut self, what: &str, latency: Duration) {
        if latency > WATCH_BOUND {
            self.fail(format!(
                "the watch reported {what} {} late (bound {})",
                shown(latency),
                shown(WATCH_BOUND)
            ));
        }
        self.latencies.push((what.to_owned(), latency));
    }

    pub(super) fn latency_text(&self) -> String {
        self.latencies
            .iter()
            .map(|(what, latency)| format!("{what} {}", shown(*latency)))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Runs the proof with the installed harness: Claude Code's here, Copilot CLI's in
/// `adopted_copilot`; for any other harness every part is not run.
pub fn prove(installed: &InstalledHarness, binaries: &Path, node: &Path) -> AdoptedProof {
    if installed.harness.name == super::adopted_copilot::COPILOT {
        return super::adopted_copilot::prove(installed, binaries, node);
    }
    let mut proof = AdoptedProof::new();
    if installed.harness.name != CLAUDE_CODE {
        proof.parts = Part::ALL
            .iter()
            .map(|part| (part.label(), CaseResult::NotRun(NOT_APPLICABLE.to_owned()), String::new()))
            .collect();
        return proof;
    }
    if let Err(error) = run(installed, binaries, node, &mut proof) {
        let error = format!("{error:#}");
        proof.note(format!("FAILED: {error}"));
        let failed_at = proof.parts.len();
        for (index, part) in Part::ALL.iter().enumerate().skip(failed_at) {
            let result = if index == failed_at {
                CaseResult::Failed(error.clone())
            } else {
                CaseResult::NotRun("not reached: an earlier part failed".to_owned())
            };
            proof.parts.push((part.label(), result, String::new()));
        }
    }
    proof
}

/// Everything a part needs: the world, the server, the log, the watch.
struct Drive<'a> {
    world: &'a SessionWorld,
    server: &'a FakeModelServer,
    log: &'a SessionsDirectoryLog,
    watch: &'a mut RosterWatch,
    binaries: &'a Path,
    node: &'a Path,
    tmux: PathBuf,
    executable: &'a Path,
    /// The environment the TUI runs with: the world's, a real terminal's, the harness's.
    environment: Vec<(String, String)>,
    sessions_directory: PathBuf,
}

/// One Claude Code session: its terminal and the file it keeps.
struct ClaudeSession {
    terminal: Terminal,
    /// The pid the terminal runs (`env` execs Claude Code).
    terminal_pid: u32,
    /// The file's name in the sessions directory.
    file_name: String,
    /// The pid the file names.
    pid: u32,
    /// When the directory log first saw the file.
    file_seen_at: Instant,
}

fn run(
    installed: &InstalledHarness,
    binaries: &Path,
    node: &Path,
    proof: &mut AdoptedProof,
) -> anyhow::Result<()> {
    let harness = installed.harness;
    let tmux = tests::find_or_install_tool("tmux").context(
        "the adopted-session proof drives the TUI in tmux, which is missing (Debian package: tmux)",
    )?;
    let world = SessionWorld::create(harness.name, "adopted")?;
    let api = harness.api.context("the harness speaks no model API")?;
    let server = FakeModelServer::start_stepped(api, COMMAND_ASKED_FOR)?;
    harness.prepare_home(&world.home, &server.base_url())?;
    super::states::prepare_tui_home(harness.name, &world)?;
    // An empty roster: nobody ever registered here, and no hook is installed.
    fs::create_dir_all(&world.roster)?;
    fs::set_permissions(&world.roster, std::os::unix::fs::PermissionsExt::from_mode(0o700))?;
    let sessions_directory = world.home.join(".claude").join("sessions");
    proof.note(format!(
        "no roster hook installed; Claude Code's directory {} does not exist yet",
        neutral_path(&sessions_directory, &world)
    ));

    let log = SessionsDirectoryLog::start(&sessions_directory);
    let mut watch_command = world.roster_tool(binaries, "roster-list", node);
    watch_command.args(["--watch", "--format", "json", "--dir"]).arg(&world.roster);
    let mut watch = RosterWatch::start(watch_command, &world.root.join("watch-stderr.txt"))?;
    watch.wait_until_following(EVENT_DEADLINE)?;

    let mut environment = world.base_environment(node);
    environment.retain(|(key, _)| key != "TERM");
    environment.push(("TERM".to_owned(), "xterm-256color".to_owned()));
    environment.extend(harness.environment(&server.base_url()));
    let mut drive = Drive {
        world: &world,
        server: &server,
        log: &log,
        watch: &mut watch,
        binaries,
        node,
        tmux,
        executable: &installed.executable,
        environment,
        sessions_directory,
    };
    let outcome = drive.parts(proof);
    server.open_gate();
    kill_leftover_sessions(&log);
    watch.stop();
    report_what_was_seen(&log, &mut watch, &world, proof);
    drop(log);
    let kept = outcome.is_err() || !proof.failures().is_empty();
    if kept {
        proof.note(format!("kept {} for inspection", world.root.display()));
    } else {
        let _ = fs::remove_dir_all(&world.root);
    }
    outcome
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

/// What the run saw beside its checks: the file's partial reads, the `problem` events they
/// led to, every event of the watch, and the directory's history.
fn report_what_was_seen(
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

impl Drive<'_> {
    fn parts(&mut self, proof: &mut AdoptedProof) -> anyhow::Result<()> {
        let first = self.listed(proof)?;
        self.state(&first, proof)?;
        self.waiting(&first, proof)?;
        self.killed(first, proof)?;
        self.exited(proof)
    }

    /// Starts a Claude Code TUI in a terminal of its own and waits for its prompt and the
    /// file it keeps (one not among `known`).
    fn start_session(&self, socket: &str, known: &[String]) -> anyhow::Result<ClaudeSession> {
        // As the state proof starts it: the permission mode that asks (2.1.332's default,
        // auto, does not), though no tool is called here.
        let arguments = vec!["--permission-mode".to_owned(), "default".to_owned()];
        let terminal = Terminal::start(
            &self.tmux,
            &self.world.root.join(socket),
            &self.world.project,
            &self.environment,
            self.executable,
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
                directory_history(self.log, self.world)
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

    /// Part 1: the watch reports the session Claude Code started, as its file says.
    fn listed(&mut self, proof: &mut AdoptedProof) -> anyhow::Result<ClaudeSession> {
        let mut outcome = PartOutcome::default();
        let session = self.start_session("tmux-first.socket", &[])?;
        let pid = session.pid;
        proof.note(format!(
            "first session: {} appeared; the terminal's program is pid {}",
            session.file_name, session.terminal_pid
        ));
        let file_version = self.log.latest(&session.file_name).context("the file was seen")?;
        proof.mismatches.extend(self.file_mismatches(&session, &file_version));
        proof.example_file = file_version.bytes.as_deref().map(|bytes| self.neutral_text(bytes));

        let event =
            self.watch.wait_for("registered or listed event of the session", EVENT_DEADLINE, |event| {
                event.is_about(&["registered", "listed"], pid)
            })?;
        let evidence = self.evidence(&session, proof);
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
        self.check_row(event.row(), &session, &event, &evidence, &mut outcome);

        // The listing without --watch shows the same row.
        let listed = self.rows(&[])?;
        match listed.iter().find(|row| row["session_pid"].as_u64() == Some(u64::from(pid))) {
            Some(row) => {
                for key in ["origin", "liveness", "cwd", "session_id", "start_ticks", "harness", "path"] {
                    if row[key] != event.row()[key] {
                        outcome.fail(format!(
                            "roster-list --format json says {key} {}, the watch said {}",
                            row[key],
                            event.row()[key]
                        ));
                    }
                }
                let status = self.log.latest(&session.file_name).and_then(|version| version.status());
                let expected = expected_state(status.as_deref());
                if row["state"] != expected {
                    outcome.fail(format!(
                        "roster-list --format json says state {}, the file's status {status:?} means {expected}{evidence}",
                        row["state"]
                    ));
                }
                proof.note(format!(
                    "roster-list --format json: {} {} {} {} {} (source {})",
                    row["origin"],
                    row["session_pid"],
                    row["liveness"],
                    row["state"],
                    row["cwd"],
                    row["state_source"]
                ));
            }
            None => outcome.fail(format!(
                "roster-list --format json shows no row for pid {pid}: {}{evidence}",
                Value::from(listed.clone())
            )),
        }
        self.finish(Part::Listed, outcome, proof);
        Ok(session)
    }

    /// Checks the watch's row against the file and the world.
    fn check_row(
        &self,
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
        let project = self.world.project.display().to_string();
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

    /// Part 2: a prompt's model call held, the file says busy and the row working; the call
    /// answered, idle.
    fn state(&mut self, session: &ClaudeSession, proof: &mut AdoptedProof) -> anyhow::Result<()> {
        let mut outcome = PartOutcome::default();
        let submitted = self.submit(&session.terminal, "Say hello to the roster e2e")?;
        self.wait_for_status(session, submitted, "busy")?;
        self.expect_state(session, submitted, "busy", &mut outcome)?;
        let answered = Instant::now();
        self.server.let_one_through();
        session.terminal.wait_for_text(REPLY_TEXT, STEP_DEADLINE)?;
        self.wait_for_status(session, answered, "idle")?;
        self.expect_state(session, answered, "idle", &mut outcome)?;
        proof.note(format!(
            "statuses the file went through: {}",
            statuses(&self.log.versions(&session.file_name)).join(" → ")
        ));
        self.finish(Part::State, outcome, proof);
        Ok(())
    }

    /// Waits until the file says `status`, written at or after `after`.
    fn wait_for_status(
        &self,
        session: &ClaudeSession,
        after: Instant,
        status: &str,
    ) -> anyhow::Result<FileVersion> {
        let started = Instant::now();
        loop {
            if let Some(version) = self
                .log
                .first_after(&session.file_name, after, |version| version.status().as_deref() == Some(status))
            {
                return Ok(version);
            }
            ensure!(
                started.elapsed() < STEP_DEADLINE,
                "{} never said status {status:?} within {STEP_DEADLINE:?}; its statuses: {}; the terminal shows:\n{}",
                session.file_name,
                statuses(&self.log.versions(&session.file_name)).join(" → "),
                screen_excerpt(&session.terminal.screen())
            );
            std::thread::sleep(POLL);
        }
    }

    /// The watch's `state-changed` to the state `status` means, timed from the log's first
    /// sight of that status; the event, when it came.
    fn expect_state(
        &mut self,
        session: &ClaudeSession,
        after: Instant,
        status: &str,
        outcome: &mut PartOutcome,
    ) -> anyhow::Result<Option<WatchEvent>> {
        let state = expected_state(Some(status));
        let pid = session.pid;
        let written = self
            .log
            .first_after(&session.file_name, after, |version| version.status().as_deref() == Some(status))
            .context("the status was seen")?;
        let event = self.watch.wait_for(&format!("state-changed to {state}"), EVENT_DEADLINE, |event| {
            event.is_about(&["state-changed"], pid) && event.row()["state"] == state
        });
        match event {
            Ok(event) => {
                outcome.latency(
                    &format!("state-changed {state}"),
                    event.received_at.saturating_duration_since(written.seen_at),
                );
                if event.row()["state_source"] != "claude-code:sessions-file" {
                    outcome.fail(format!(
                        "state_source {}, not claude-code:sessions-file",
                        event.row()["state_source"]
                    ));
                }
                Ok(Some(event))
            }
            Err(error) => {
                outcome.fail(format!(
                    "{error:#}; the file's statuses: {}",
                    statuses(&self.log.versions(&session.file_name)).join(" → ")
                ));
                Ok(None)
            }
        }
    }

    /// Part 3: the model asks for a shell command; while Claude Code's permission dialog
    /// shows, the file says waiting and the row must say waiting for permission. The
    /// dialog approved and the turn answered, idle again.
    fn waiting(&mut self, session: &ClaudeSession, proof: &mut AdoptedProof) -> anyhow::Result<()> {
        let mut outcome = PartOutcome::default();
        let submitted =
            self.submit(&session.terminal, &format!("Run this shell command: {COMMAND_ASKED_FOR}"))?;
        self.server.let_one_through();
        session
            .terminal
            .wait_for_text(DIALOG, STEP_DEADLINE)
            .with_context(|| format!("no permission dialog for `{COMMAND_ASKED_FOR}`"))?;
        let written = self.wait_for_status(session, submitted, "waiting")?;
        let waiting_for = written.json().map(|file| file["waitingFor"].clone()).unwrap_or_default();
        proof.note(format!(
            "while the dialog shows, the file says status \"waiting\", waitingFor {waiting_for}"
        ));
        if let Some(event) = self.expect_state(session, submitted, "waiting", &mut outcome)? {
            let row = event.row();
            proof.note(format!("the watch: waiting for {} ({})", row["waiting_for"], row["state_source"]));
            if row["waiting_for"] != "permission" {
                outcome.fail(format!(
                    "the row says waiting for {} while Claude Code's permission dialog shows; Claude Code \
                     {} writes waitingFor {waiting_for}{}",
                    row["waiting_for"],
                    file_version(session, &written),
                    self.evidence(session, proof)
                ));
            }
        }
        // Approved, the command runs and the call with its result is held; answered, the
        // turn ends.
        self.approve(&session.terminal)?;
        let approved = Instant::now();
        let started = Instant::now();
        while self.server.calls_waiting() == 0 {
            ensure!(
                started.elapsed() < STEP_DEADLINE,
                "no model call with the command's result within {STEP_DEADLINE:?}; the terminal shows:\n{}",
                screen_excerpt(&session.terminal.screen())
            );
            std::thread::sleep(POLL);
        }
        self.server.let_one_through();
        self.wait_for_status(session, approved, "idle")?;
        self.finish(Part::Waiting, outcome, proof);
        Ok(())
    }

    /// Answers the open dialog "yes", pressing the key again while the dialog still shows a
    /// moment later, a few times at most.
    fn approve(&self, terminal: &Terminal) -> anyhow::Result<()> {
        for _ in 0..APPROVAL_ATTEMPTS {
            terminal.press(APPROVE_KEY)?;
            let closed = terminal
                .wait_for_screen("the dialog closed", DIALOG_REACTION, |screen| !screen.contains(DIALOG));
            if closed.is_ok() {
                return Ok(());
            }
        }
        bail!(
            "the dialog stayed open after {APPROVAL_ATTEMPTS} presses of {APPROVE_KEY:?}; the terminal shows:\n{}",
            screen_excerpt(&terminal.screen())
        )
    }

    /// Types `prompt`, sends it with Enter and waits until its model call is held at the
    /// server; Enter is pressed again when the TUI showed no sign of it. Returns when
    /// Enter was pressed the last time.
    fn submit(&self, terminal: &Terminal, prompt: &str) -> anyhow::Result<Instant> {
        terminal.type_text(prompt)?;
        terminal.wait_for_text(prompt, STEP_DEADLINE).context("the prompt typed did not show")?;
        for _ in 0..SUBMIT_ATTEMPTS {
            let pressed = Instant::now();
            terminal.press("Enter")?;
            while pressed.elapsed() < SUBMIT_REACTION {
                if self.server.calls_waiting() > 0 {
                    return Ok(pressed);
                }
                std::thread::sleep(POLL);
            }
        }
        bail!(
            "Claude Code made no model call after {SUBMIT_ATTEMPTS} presses of Enter; the terminal shows:\n{}",
            screen_excerpt(&terminal.screen())
        )
    }

    /// Part 3: SIGKILL mid-turn. The watch says `died` at once; the row is dead, saying
    /// Claude Code removes its file; the file stays as it was, `roster-prune` included.
    fn killed(&mut self, session: ClaudeSession, proof: &mut AdoptedProof) -> anyhow::Result<()> {
        let mut outcome = PartOutcome::default();
        let pid = session.pid;
        let submitted = self.submit(&session.terminal, "Say hello once more")?;
        self.wait_for_status(&session, submitted, "busy")?;
        let path = self.sessions_directory.join(&session.file_name);
        let before = fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
        let killed_at = Instant::now();
        signal_process(pid, "KILL");
        // The kernel takes a while to tear a big process down after SIGKILL: the watch is
        // timed from the signal, and from the moment the process was seen exited.
        let exited_at = wait_for_exit(pid, EVENT_DEADLINE);
        let evidence = self.evidence(&session, proof);
        match self.watch.wait_for("died", EVENT_DEADLINE, |event| event.is_about(&["died"], pid)) {
            Ok(event) => {
                outcome.latency("died", event.received_at.saturating_duration_since(killed_at));
                match exited_at {
                    Some(exited_at) => proof.note(format!(
                        "pid {pid} was seen exited {} after SIGKILL; died came {} after that",
                        shown(exited_at.saturating_duration_since(killed_at)),
                        shown(event.received_at.saturating_duration_since(exited_at))
                    )),
                    None => outcome.fail(format!("pid {pid} still ran {EVENT_DEADLINE:?} after SIGKILL")),
                }
                if event.row()["origin"] != "claude-code" {
                    outcome.fail(format!("the died row's origin is {}", event.row()["origin"]));
                }
            }
            Err(error) => outcome.fail(format!("{error:#}{evidence}")),
        }
        let row = self
            .rows(&["--all"])?
            .into_iter()
            .find(|row| row["session_pid"].as_u64() == Some(u64::from(pid)));
        match &row {
            Some(row) if row["liveness"] == "dead" => {
                let reason = row["liveness_reason"].as_str().unwrap_or_default();
                if !reason.contains("Claude Code removes its file") {
                    outcome.fail(format!(
                        "the dead row's reason does not say Claude Code removes its file: {reason:?}"
                    ));
                }
                proof.note(format!("roster-list --all: dead, {reason:?}"));
            }
            other => {
                outcome.fail(format!("roster-list --all shows {other:?} for the killed pid {pid}{evidence}"))
            }
        }
        self.check_file_kept(&path, &before, "after the kill and roster-list", &mut outcome);
        let pruned = self
            .world
            .roster_tool(self.binaries, "roster-prune", self.node)
            .arg("--dir")
            .arg(&self.world.roster)
            .arg("--json")
            .output()?;
        if !pruned.status.success() {
            outcome.fail(format!("roster-prune failed: {}", String::from_utf8_lossy(&pruned.stderr).trim()));
        }
        let pruned: Value = serde_json::from_slice(&pruned.stdout).unwrap_or_default();
        let path_text = path.display().to_string();
        let removed_it = pruned["removed"].as_array().is_some_and(|rows| {
            rows.iter().any(|row| {
                row["session_pid"].as_u64() == Some(u64::from(pid))
                    || row["path"].as_str() == Some(path_text.as_str())
            })
        });
        if removed_it {
            outcome.fail(format!("roster-prune says it removed Claude Code's session: {pruned}"));
        }
        self.check_file_kept(&path, &before, "after roster-prune", &mut outcome);
        let still_listed = self
            .rows(&["--all"])?
            .iter()
            .any(|row| row["session_pid"].as_u64() == Some(u64::from(pid)) && row["liveness"] == "dead");
        if !still_listed {
            outcome.fail("after roster-prune, roster-list --all no longer shows the dead session");
        }
        proof.note(format!(
            "SIGKILL to pid {pid} mid-turn (the file said busy): {} left as it was ({} bytes)",
            session.file_name,
            before.len()
        ));
        session.terminal.close();
        self.finish(Part::Killed, outcome, proof);
        Ok(())
    }

    fn check_file_kept(&self, path: &Path, before: &[u8], when: &str, outcome: &mut PartOutcome) {
        match fs::read(path) {
            Ok(now) if now == before => {}
            Ok(now) => outcome.fail(format!(
                "{} changed {when}: was {}, is {}",
                path.display(),
                String::from_utf8_lossy(before),
                String::from_utf8_lossy(&now)
            )),
            Err(error) => outcome.fail(format!("{} is gone {when}: {error}", path.display())),
        }
    }

    /// Part 4: a second session ended with `/exit` (Ctrl-D twice if `/exit` does not end
    /// it): its file goes, the watch says `removed`, `roster-list` shows it no more.
    fn exited(&mut self, proof: &mut AdoptedProof) -> anyhow::Result<()> {
        let mut outcome = PartOutcome::default();
        let known = self.log.names();
        let session = self.start_session("tmux-second.socket", &known)?;
        let pid = session.pid;
        proof.note(format!("second session: {} appeared", session.file_name));
        let registered =
            self.watch.wait_for("registered event of the second session", EVENT_DEADLINE, |event| {
                event.is_about(&["registered"], pid)
            })?;
        outcome.latency("registered", registered.received_at.saturating_duration_since(session.file_seen_at));
        let evidence = self.evidence(&session, proof);
        self.check_row(registered.row(), &session, &registered, &evidence, &mut outcome);
        // What the new session did with the file the killed one left.
        for name in known.iter().filter(|name| name.ends_with(".json")) {
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
        match self.watch.wait_for("removed", EVENT_DEADLINE, |event| event.is_about(&["removed"], pid)) {
            Ok(event) => {
                outcome.latency("removed", event.received_at.saturating_duration_since(gone.seen_at))
            }
            Err(error) => outcome.fail(format!("{error:#}{evidence}")),
        }
        let exited = wait_for_exit(pid, STEP_DEADLINE);
        proof.note(match exited {
            Some(at) => format!(
                "pid {pid} exited {} after its file was seen gone",
                shown(at.saturating_duration_since(gone.seen_at))
            ),
            None => format!("pid {pid} still ran {STEP_DEADLINE:?} after its file was removed"),
        });
        let events: Vec<String> = self
            .watch
            .events()
            .iter()
            .filter(|event| event.row()["session_pid"].as_u64() == Some(u64::from(pid)))
            .map(|event| event.kind().to_owned())
            .collect();
        proof.note(format!("the watch's events of the second session: {}", events.join(", ")));
        let rows = self.rows(&["--all"])?;
        if let Some(row) = rows.iter().find(|row| row["session_pid"].as_u64() == Some(u64::from(pid))) {
            outcome.fail(format!("roster-list --all still shows the session that ended: {row}"));
        }
        session.terminal.close();
        self.finish(Part::Exited, outcome, proof);
        Ok(())
    }

    /// Records a part's result and latencies.
    fn finish(&self, part: Part, outcome: PartOutcome, proof: &mut AdoptedProof) {
        record_part(part.label(), outcome, proof);
    }

    /// `roster-list --dir <roster> --format json [extra]`, parsed.
    fn rows(&self, extra: &[&str]) -> anyhow::Result<Vec<Value>> {
        roster_rows(self.world, self.binaries, self.node, extra)
    }

    /// Where the file differs from what roster assumes of it, each one line.
    fn file_mismatches(&self, session: &ClaudeSession, version: &FileVersion) -> Vec<String> {
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
                super::describe_process(pid)
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
        let project = self.world.project.display().to_string();
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
        match fs::metadata(&self.sessions_directory).map(|metadata| metadata.mode() & 0o7777) {
            Ok(0o700) => {}
            Ok(mode) => mismatches.push(format!("the directory's mode is {mode:o}, not 700")),
            Err(error) => mismatches.push(format!("the directory cannot be read: {error}")),
        }
        mismatches
    }

    /// The mismatches found so far and the file as it is, for a failure message.
    fn evidence(&self, session: &ClaudeSession, proof: &AdoptedProof) -> String {
        let file = self
            .log
            .latest(&session.file_name)
            .and_then(|version| version.bytes)
            .map(|bytes| self.neutral_text(&bytes))
            .unwrap_or_else(|| "(gone)".to_owned());
        let mismatches =
            if proof.mismatches.is_empty() { "none".to_owned() } else { proof.mismatches.join("; ") };
        format!(" [{}: {file}; where it differs from what roster assumes: {mismatches}]", session.file_name)
    }

    /// `bytes` as text, the home directory as `~` and this machine's id as `<machine-id>`.
    fn neutral_text(&self, bytes: &[u8]) -> String {
        let text = String::from_utf8_lossy(bytes).replace(&self.world.home.display().to_string(), "~");
        match fs::read_to_string("/etc/machine-id") {
            Ok(machine) if !machine.trim().is_empty() => text.replace(machine.trim(), "<machine-id>"),
            _ => text,
        }
    }
}

/// The `version` key of the file as `version` read it, for a report (`2.1.332`).
fn file_version(session: &ClaudeSession, version: &FileVersion) -> String {
    version
        .json()
        .and_then(|file| file["version"].as_str().map(str::to_owned))
        .unwrap_or_else(|| format!("(no version in {})", session.file_name))
}

/// The state roster's row must show for a file's `status`.
fn expected_state(status: Option<&str>) -> &'static str {
    STATUSES.iter().find(|(word, _)| Some(*word) == status).map_or("unknown", |(_, state)| state)
}

/// `linux:<machine-id>:pid:[<pid namespace inode>]` of `pid`, as roster reads it.
fn pid_domain_of(pid: u32) -> Option<String> {
    let machine = fs::read_to_string("/etc/machine-id").ok()?;
    let namespace = fs::metadata(format!("/proc/{pid}/ns/pid")).ok()?.ino();
    Some(format!("linux:{}:pid:[{namespace}]", machine.trim()))
}

/// The statuses of `versions` in order, each once in a row; `(gone)` for a removal.
fn statuses(versions: &[FileVersion]) -> Vec<String> {
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
fn torn_reads(log: &SessionsDirectoryLog) -> Vec<String> {
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
fn directory_history(log: &SessionsDirectoryLog, world: &SessionWorld) -> String {
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

/// `path` with the world's home shown as `~`.
pub(super) fn neutral_path(path: &Path, world: &SessionWorld) -> String {
    path.strip_prefix(&world.home)
        .map_or_else(|_| path.display().to_string(), |rest| format!("~/{}", rest.display()))
}

/// Waits until `pid` has exited, every thread of it (a zombie leader whose other threads
/// still run has not: the process ends, and its pidfd says so, with its last thread); when
/// it was seen so.
pub(super) fn wait_for_exit(pid: u32, deadline: Duration) -> Option<Instant> {
    let started = Instant::now();
    while started.elapsed() < deadline {
        let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat.rfind(')').and_then(|end| stat[end + 2..].chars().next());
        let threads = fs::read_dir(format!("/proc/{pid}/task")).map_or(0, |tasks| tasks.count());
        if state.is_none() || (state == Some('Z') && threads <= 1) {
            return Some(Instant::now());
        }
        std::thread::sleep(EXIT_POLL);
    }
    None
}

/// How long ago `then` (a wall-clock time) was at the instant `at`.
fn wall_since(then: SystemTime, at: Instant) -> Duration {
    let now = SystemTime::now() - at.elapsed();
    now.duration_since(then).unwrap_or_default()
}

/// A latency to the tenth of a millisecond.
pub(super) fn shown(duration: Duration) -> String {
    format!("{:.1} ms", duration.as_secs_f64() * 1000.0)
}

/// Records the result of the part labelled `label`, and its latencies, in
/// `proof`: each latency a note (over the target said so), each failure a
/// note.
pub(super) fn record_part(label: &'static str, outcome: PartOutcome, proof: &mut AdoptedProof) {
    let latency = outcome.latency_text();
    for (what, latency) in &outcome.latencies {
        let over = if *latency > WATCH_TARGET { " (over the 100 ms target)" } else { "" };
        proof.note(format!("watch latency: {what} {}{over}", shown(*latency)));
    }
    proof.latencies.extend(outcome.latencies);
    let result = if outcome.failures.is_empty() {
        CaseResult::Passed
    } else {
        outcome.failures.iter().for_each(|failure| proof.note(format!("FAILED: {failure}")));
        CaseResult::Failed(outcome.failures.join("; "))
    };
    proof.parts.push((label, result, latency));
}

/// `roster-list --dir <the world's roster> --format json [extra]`, parsed.
pub(super) fn roster_rows(
    world: &SessionWorld,
    binaries: &Path,
    node: &Path,
    extra: &[&str],
) -> anyhow::Result<Vec<Value>> {
    let output = world
        .roster_tool(binaries, "roster-list", node)
        .arg("--dir")
        .arg(&world.roster)
        .args(["--format", "json"])
        .args(extra)
        .output()?;
    ensure!(
        output.status.success(),
        "roster-list failed: {}",
        String::from_utf8_lossy(&output.stderr).trim()
    );
    let rows: Value = serde_json::from_slice(&output.stdout).context("roster-list printed no JSON")?;
    rows.as_array().cloned().context("roster-list printed no array")
}
