//! The e2e's proof for the sessions a harness marks itself (docs/contract.md §6.5), with no
//! roster hook installed anywhere: one driver over a table of the harnesses that mark their
//! live sessions (`ADOPTING`), each row a small adapter (`MarkingHarness`) that knows how to
//! start, drive and end that harness and where its marks lie. The real pinned harness runs
//! in a temporary HOME against the fake model server while `roster-list --watch --format
//! json --dir <an empty roster>` runs with the same HOME, and a log of the harness's own
//! directory (read every millisecond, beside roster) times the watch's events. The parts,
//! each waited for against a deadline:
//!
//! 1. listed: the watch reports the new session (`registered`) alive, with the harness as
//!    origin, its session id and the project as cwd; `roster-list --format json` shows the
//!    same row;
//! 2. (Claude Code) state and waiting: the file's status followed as working, idle and
//!    waiting for permission while the TUI runs a turn and shows a permission dialog;
//! 3. SIGKILL of the marked pid mid-turn: `died` at once; `roster-list --all` shows it dead,
//!    saying the harness removes its marks; the marks stay byte for byte, `roster-prune`
//!    included;
//! 4. a second session ended as the harness ends on its own: its marks go, the watch
//!    reports `removed`, and `roster-list` no longer shows it.
//!
//! Where the binary's marks differ from what roster assumes of them, the run reports what
//! it saw; a roster check that fails because of it fails with that evidence. The adapters:
//! `adopted_claude_code` (`~/.claude/sessions/<pid>.json`, its TUI in tmux) and
//! `adopted_copilot` (`~/.copilot/session-state/<id>/inuse.<pid>.lock` and the `flock` on
//! its hold file, `copilot -p`).

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, ensure};
use serde_json::Value;

use super::adopted_claude_code::ClaudeCodeMarks;
use super::adopted_copilot::CopilotMarks;
use super::cases::CaseResult;
use super::fake_model_server::{FakeModelServer, ModelApi};
use super::harness_processes::signal_process;
use super::real_harnesses::InstalledHarness;
use super::roster_watch::{RosterWatch, WatchEvent};
use super::session_world::{SessionWorld, last_lines};

/// One row of the table: a harness that marks its own live sessions, and its proof.
pub struct AdoptingHarness {
    pub name: &'static str,
    /// The harness's name in a sentence.
    called: &'static str,
    prove: fn(&InstalledHarness, &Path, &Path) -> AdoptedProof,
    /// The summary's line when the marks are as roster assumes.
    as_assumed: &'static str,
}

/// The harnesses whose own marks of their live sessions roster lists: a new one is a row
/// here and an adapter of its own.
pub const ADOPTING: &[AdoptingHarness] = &[row::<ClaudeCodeMarks>(), row::<CopilotMarks>()];

const fn row<Marks: MarkingHarness>() -> AdoptingHarness {
    AdoptingHarness {
        name: Marks::NAME,
        called: Marks::CALLED,
        prove: drive::<Marks>,
        as_assumed: Marks::AS_ASSUMED,
    }
}

/// Whether `harness` marks its own live sessions.
pub fn adopts(harness: &str) -> bool {
    ADOPTING.iter().any(|row| row.name == harness)
}

/// Why the proof does not apply to a harness with no row: which harnesses have one.
fn not_applicable() -> String {
    let called: Vec<&str> = ADOPTING.iter().map(|row| row.called).collect();
    let harnesses = match called.split_last() {
        Some((last, [])) => (*last).to_owned(),
        Some((last, others)) => format!("{} and {last}", others.join(", ")),
        None => "no harness".to_owned(),
    };
    format!("only {harnesses} mark their own live sessions (docs/harnesses.md names what the others keep)")
}

/// How long the watch may take to report what the log saw, before the run calls the event
/// missing.
pub(super) const EVENT_DEADLINE: Duration = Duration::from_secs(10);

/// The watch's latency target (docs/contract.md §9, a p99 the benchmark checks): each
/// latency here is one sample, reported against it.
const WATCH_TARGET: Duration = Duration::from_millis(100);

/// The latency past which one sample fails the proof: well above the target, since one
/// sample on a loaded machine is not a p99, yet far below anything a person would call
/// "at once".
const WATCH_BOUND: Duration = Duration::from_secs(1);

/// How often the run looks whether a process has exited: the resolution of the times
/// measured from its exit.
const EXIT_POLL: Duration = Duration::from_millis(1);

/// One part of the proof, in the order they run; each harness's row names its own.
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

    /// The part's label where no harness says it in its own words.
    fn label(self) -> &'static str {
        match self {
            Part::Listed => "adopted: listed, no hooks",
            Part::State => "adopted: state from its file",
            Part::Waiting => "adopted: waiting for permission",
            Part::Killed => "adopted: SIGKILL, died, file kept",
            Part::Exited => "adopted: /exit, file removed",
        }
    }
}

/// What the driver needs of a harness that marks its own live sessions: where its marks
/// are, how to start a session, bring it mid-turn and end it, and how to read its row.
/// Sessions are told apart by the index `start_session` returns.
pub(super) trait MarkingHarness: Sized {
    /// Roster's name of the harness: the rows' origin and harness.
    const NAME: &'static str;
    /// The harness's name in a sentence.
    const CALLED: &'static str;
    /// What the dead row's reason must say of a session killed.
    const DEAD_REASON: &'static str;
    /// Its parts and their labels, in the order they run.
    const PARTS: &'static [(Part, &'static str)];
    /// The keys `roster-list --format json` must show as the watch showed them.
    const LISTED_KEYS: &'static [&'static str];
    /// The summary's line when the marks are as roster assumes.
    const AS_ASSUMED: &'static str;

    /// Where the harness keeps its marks, below `home`.
    fn marks_directory(home: &Path) -> PathBuf;

    /// The fake model server the harness runs against.
    fn start_server(api: ModelApi) -> anyhow::Result<FakeModelServer>;

    /// Prepares the world's HOME and starts reading the marks' directory, before the watch
    /// starts.
    fn begin(world: &SessionWorld, marks: &Path) -> anyhow::Result<Self>;

    /// Starts a session (the second one when `second`) and waits until it is marked;
    /// returns its index.
    fn start_session(
        &mut self,
        drive: &mut Drive<'_>,
        second: bool,
        proof: &mut AdoptedProof,
    ) -> anyhow::Result<usize>;

    /// The pid the session's marks name.
    fn pid(&self, session: usize) -> u32;

    /// Waits for the watch's first row of the session saying it is there, timed, and
    /// checks that row against the marks.
    fn await_listed(
        &mut self,
        drive: &mut Drive<'_>,
        session: usize,
        outcome: &mut PartOutcome,
        proof: &mut AdoptedProof,
    ) -> anyhow::Result<WatchEvent>;

    /// The harness's own checks of the session's row in `roster-list --format json`.
    fn check_listed_row(
        &self,
        drive: &Drive<'_>,
        session: usize,
        row: &Value,
        outcome: &mut PartOutcome,
        proof: &mut AdoptedProof,
    );

    /// The parts between listed and killed that only some harnesses have (a TUI's state,
    /// a permission dialog).
    fn turn_parts(
        &mut self,
        _drive: &mut Drive<'_>,
        _session: usize,
        _proof: &mut AdoptedProof,
    ) -> anyhow::Result<()> {
        Ok(())
    }

    /// Brings the session mid-turn, ready for its SIGKILL; the files that must stay as
    /// they are, the one that names the session first.
    fn mid_turn(&mut self, drive: &mut Drive<'_>, session: usize) -> anyhow::Result<Vec<PathBuf>>;

    /// What the harness did once its session was killed, for the notes; closes what the
    /// session held.
    fn after_kill(
        &mut self,
        drive: &mut Drive<'_>,
        session: usize,
        kept: &[(PathBuf, Vec<u8>)],
        proof: &mut AdoptedProof,
    ) -> anyhow::Result<()>;

    /// Ends the session as the harness ends on its own; returns when its marks were seen
    /// gone.
    fn end(
        &mut self,
        drive: &mut Drive<'_>,
        session: usize,
        outcome: &mut PartOutcome,
        proof: &mut AdoptedProof,
    ) -> anyhow::Result<Instant>;

    /// What the watch and the process did after the end; closes what the session held.
    fn after_end(
        &mut self,
        drive: &mut Drive<'_>,
        session: usize,
        alive: &WatchEvent,
        outcome: &mut PartOutcome,
        proof: &mut AdoptedProof,
    );

    /// The session's marks as the log saw them, for a failure message.
    fn evidence(&self, drive: &Drive<'_>, session: usize, proof: &AdoptedProof) -> String;

    /// Whatever happened, kills what the run started, then says what the log saw.
    fn wind_up(self, drive: &mut Drive<'_>, proof: &mut AdoptedProof);
}

/// What the proof showed.
pub struct AdoptedProof {
    /// Each part's result (by its label) and the watch latencies it measured.
    pub parts: Vec<(&'static str, CaseResult, String)>,
    /// The run's notes, for the log.
    pub lines: Vec<String>,
    /// Each watch latency measured, what it was of, in order.
    pub latencies: Vec<(String, Duration)>,
    /// One session's marks as the harness wrote them, the home directory shown as `~`.
    pub example_file: Option<String>,
    /// What the harness did with its files, seen from outside roster, for the summary.
    pub observations: Vec<String>,
    /// Where the binary's marks differ from what roster assumes of them.
    pub mismatches: Vec<String>,
    /// What roster did with that difference that a user would not expect, though no check
    /// failed: the run's warnings.
    pub warnings: Vec<String>,
}

impl AdoptedProof {
    fn new() -> AdoptedProof {
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
    failures: Vec<String>,
    latencies: Vec<(String, Duration)>,
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

    fn latency_text(&self) -> String {
        self.latencies
            .iter()
            .map(|(what, latency)| format!("{what} {}", shown(*latency)))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Runs the proof with the installed harness, by its row; for a harness with no row every
/// part is not run.
pub fn prove(installed: &InstalledHarness, binaries: &Path, node: &Path) -> AdoptedProof {
    match ADOPTING.iter().find(|row| row.name == installed.harness.name) {
        Some(row) => (row.prove)(installed, binaries, node),
        None => {
            let mut proof = AdoptedProof::new();
            proof.parts = Part::ALL
                .iter()
                .map(|part| (part.label(), CaseResult::NotRun(not_applicable()), String::new()))
                .collect();
            proof
        }
    }
}

/// The proof of one harness that marks its sessions: the parts its row names, the ones
/// not reached after a failure listed as such.
fn drive<Marks: MarkingHarness>(installed: &InstalledHarness, binaries: &Path, node: &Path) -> AdoptedProof {
    let mut proof = AdoptedProof::new();
    if let Err(error) = run::<Marks>(installed, binaries, node, &mut proof) {
        let error = format!("{error:#}");
        proof.note(format!("FAILED: {error}"));
        let failed_at = proof.parts.len();
        for (index, (_, label)) in Marks::PARTS.iter().enumerate().skip(failed_at) {
            let result = if index == failed_at {
                CaseResult::Failed(error.clone())
            } else {
                CaseResult::NotRun("not reached: an earlier part failed".to_owned())
            };
            proof.parts.push((label, result, String::new()));
        }
    }
    proof
}

/// Everything a part needs: the world, the server, the watch, the harness.
pub(super) struct Drive<'a> {
    pub(super) world: &'a SessionWorld,
    pub(super) server: &'a FakeModelServer,
    pub(super) watch: &'a mut RosterWatch,
    pub(super) installed: &'a InstalledHarness,
    pub(super) binaries: &'a Path,
    pub(super) node: &'a Path,
    /// Where the harness keeps its marks.
    pub(super) marks: PathBuf,
}

fn run<Marks: MarkingHarness>(
    installed: &InstalledHarness,
    binaries: &Path,
    node: &Path,
    proof: &mut AdoptedProof,
) -> anyhow::Result<()> {
    let harness = installed.harness;
    let world = SessionWorld::create(harness.name, "adopted")?;
    let api = harness.api.context("the harness speaks no model API")?;
    let server = Marks::start_server(api)?;
    harness.prepare_home(&world.home, &server.base_url())?;
    // An empty roster: nobody ever registered here, and no hook is installed.
    fs::create_dir_all(&world.roster)?;
    fs::set_permissions(&world.roster, std::os::unix::fs::PermissionsExt::from_mode(0o700))?;
    let marks = Marks::marks_directory(&world.home);
    proof.note(format!(
        "no roster hook installed; {}'s directory {} does not exist yet",
        Marks::CALLED,
        neutral_path(&marks, &world)
    ));
    let mut adapter = Marks::begin(&world, &marks)?;
    let mut watch_command = world.roster_tool(binaries, "roster-list", node);
    watch_command.args(["--watch", "--format", "json", "--dir"]).arg(&world.roster);
    let mut watch = RosterWatch::start(watch_command, &world.root.join("watch-stderr.txt"))?;
    watch.wait_until_following(EVENT_DEADLINE)?;

    let mut drive =
        Drive { world: &world, server: &server, watch: &mut watch, installed, binaries, node, marks };
    let outcome = parts(&mut adapter, &mut drive, proof);
    server.open_gate();
    adapter.wind_up(&mut drive, proof);
    let kept = outcome.is_err() || !proof.failures().is_empty();
    if kept {
        proof.note(format!("kept {} for inspection", world.root.display()));
        for line in last_lines(&world.harness_output(), 10) {
            proof.note(format!("  | {line}"));
        }
    } else {
        let _ = fs::remove_dir_all(&world.root);
    }
    outcome
}

fn parts<Marks: MarkingHarness>(
    adapter: &mut Marks,
    drive: &mut Drive<'_>,
    proof: &mut AdoptedProof,
) -> anyhow::Result<()> {
    let first = listed(adapter, drive, proof)?;
    adapter.turn_parts(drive, first, proof)?;
    killed(adapter, drive, first, proof)?;
    exited(adapter, drive, proof)
}

/// The label the harness's row gives `part`.
pub(super) fn label<Marks: MarkingHarness>(part: Part) -> &'static str {
    Marks::PARTS.iter().find(|(of, _)| *of == part).map_or_else(|| part.label(), |(_, label)| label)
}

/// Part 1: the watch reports the session the harness marked; `roster-list` shows the same
/// row.
fn listed<Marks: MarkingHarness>(
    adapter: &mut Marks,
    drive: &mut Drive<'_>,
    proof: &mut AdoptedProof,
) -> anyhow::Result<usize> {
    let mut outcome = PartOutcome::default();
    let session = adapter.start_session(drive, false, proof)?;
    let pid = adapter.pid(session);
    let event = adapter.await_listed(drive, session, &mut outcome, proof)?;
    let listed = roster_rows(drive, &[])?;
    match listed.iter().find(|row| row["session_pid"].as_u64() == Some(u64::from(pid))) {
        Some(row) => {
            for key in Marks::LISTED_KEYS {
                if row[key] != event.row()[key] {
                    outcome.fail(format!(
                        "roster-list --format json says {key} {}, the watch said {}",
                        row[key],
                        event.row()[key]
                    ));
                }
            }
            adapter.check_listed_row(drive, session, row, &mut outcome, proof);
        }
        None => outcome.fail(format!(
            "roster-list --format json shows no row for pid {pid}: {}{}",
            Value::from(listed.clone()),
            adapter.evidence(drive, session, proof)
        )),
    }
    record_part(label::<Marks>(Part::Listed), outcome, proof);
    Ok(session)
}

/// Part 3: SIGKILL to the marked pid mid-turn. The watch says `died` at once; the row is
/// dead, saying the harness removes its marks; the marks stay as they were, `roster-prune`
/// included.
fn killed<Marks: MarkingHarness>(
    adapter: &mut Marks,
    drive: &mut Drive<'_>,
    session: usize,
    proof: &mut AdoptedProof,
) -> anyhow::Result<()> {
    let mut outcome = PartOutcome::default();
    let pid = adapter.pid(session);
    let paths = adapter.mid_turn(drive, session)?;
    let mut kept = Vec::new();
    for path in paths {
        let before = fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
        kept.push((path, before));
    }
    let evidence = adapter.evidence(drive, session, proof);
    let killed_at = Instant::now();
    signal_process(pid, "KILL");
    // The kernel takes a while to tear a big process down after SIGKILL: the watch is
    // timed from the signal, and from the moment the process was seen exited.
    let exited_at = wait_for_exit(pid, EVENT_DEADLINE);
    match drive.watch.wait_for("died", EVENT_DEADLINE, |event| event.is_about(&["died"], pid)) {
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
            if event.row()["origin"] != Marks::NAME {
                outcome.fail(format!("the died row's origin is {}", event.row()["origin"]));
            }
        }
        Err(error) => outcome.fail(format!("{error:#}{evidence}")),
    }
    let row = roster_rows(drive, &["--all"])?
        .into_iter()
        .find(|row| row["session_pid"].as_u64() == Some(u64::from(pid)));
    match &row {
        Some(row) if row["liveness"] == "dead" => {
            let reason = row["liveness_reason"].as_str().unwrap_or_default();
            if !reason.contains(Marks::DEAD_REASON) {
                outcome
                    .fail(format!("the dead row's reason does not say {:?}: {reason:?}", Marks::DEAD_REASON));
            }
            proof.note(format!("roster-list --all: dead, {reason:?}"));
        }
        other => {
            outcome.fail(format!("roster-list --all shows {other:?} for the killed pid {pid}{evidence}"))
        }
    }
    check_files_kept(&kept, "after the kill and roster-list", &mut outcome);
    let pruned = drive
        .world
        .roster_tool(drive.binaries, "roster-prune", drive.node)
        .arg("--dir")
        .arg(&drive.world.roster)
        .arg("--json")
        .output()?;
    if !pruned.status.success() {
        outcome.fail(format!("roster-prune failed: {}", String::from_utf8_lossy(&pruned.stderr).trim()));
    }
    let pruned: Value = serde_json::from_slice(&pruned.stdout).unwrap_or_default();
    let marked_path = kept.first().map(|(path, _)| path.display().to_string()).unwrap_or_default();
    let removed_it = pruned["removed"].as_array().is_some_and(|rows| {
        rows.iter().any(|row| {
            row["session_pid"].as_u64() == Some(u64::from(pid))
                || row["path"].as_str() == Some(marked_path.as_str())
        })
    });
    if removed_it {
        outcome.fail(format!("roster-prune says it removed {}'s session: {pruned}", Marks::CALLED));
    }
    check_files_kept(&kept, "after roster-prune", &mut outcome);
    let still_listed = roster_rows(drive, &["--all"])?
        .iter()
        .any(|row| row["session_pid"].as_u64() == Some(u64::from(pid)) && row["liveness"] == "dead");
    if !still_listed {
        outcome.fail("after roster-prune, roster-list --all no longer shows the dead session");
    }
    adapter.after_kill(drive, session, &kept, proof)?;
    record_part(label::<Marks>(Part::Killed), outcome, proof);
    Ok(())
}

/// Part 4: a second session ended as the harness ends on its own: its marks go, the watch
/// says `removed`, `roster-list` shows it no more.
fn exited<Marks: MarkingHarness>(
    adapter: &mut Marks,
    drive: &mut Drive<'_>,
    proof: &mut AdoptedProof,
) -> anyhow::Result<()> {
    let mut outcome = PartOutcome::default();
    let session = adapter.start_session(drive, true, proof)?;
    let pid = adapter.pid(session);
    let alive = adapter.await_listed(drive, session, &mut outcome, proof)?;
    let gone_at = adapter.end(drive, session, &mut outcome, proof)?;
    match drive.watch.wait_for("removed", EVENT_DEADLINE, |event| event.is_about(&["removed"], pid)) {
        Ok(event) => outcome.latency("removed", event.received_at.saturating_duration_since(gone_at)),
        Err(error) => outcome.fail(format!("{error:#}{}", adapter.evidence(drive, session, proof))),
    }
    adapter.after_end(drive, session, &alive, &mut outcome, proof);
    let rows = roster_rows(drive, &["--all"])?;
    if let Some(row) = rows.iter().find(|row| row["session_pid"].as_u64() == Some(u64::from(pid))) {
        outcome.fail(format!("roster-list --all still shows the session that ended: {row}"));
    }
    record_part(label::<Marks>(Part::Exited), outcome, proof);
    Ok(())
}

/// Each file as it was read before the kill, or the failure that says how it changed.
fn check_files_kept(kept: &[(PathBuf, Vec<u8>)], when: &str, outcome: &mut PartOutcome) {
    for (path, before) in kept {
        match fs::read(path) {
            Ok(now) if now == *before => {}
            Ok(now) => outcome.fail(format!(
                "{} changed {when}: was {:?}, is {:?}",
                path.display(),
                String::from_utf8_lossy(before),
                String::from_utf8_lossy(&now)
            )),
            Err(error) => outcome.fail(format!("{} is gone {when}: {error}", path.display())),
        }
    }
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

/// A latency to the tenth of a millisecond.
pub(super) fn shown(duration: Duration) -> String {
    format!("{:.1} ms", duration.as_secs_f64() * 1000.0)
}

/// Records the result of the part labelled `label`, and its latencies, in `proof`: each
/// latency a note (over the target said so), each failure a note.
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
pub(super) fn roster_rows(drive: &Drive<'_>, extra: &[&str]) -> anyhow::Result<Vec<Value>> {
    let output = drive
        .world
        .roster_tool(drive.binaries, "roster-list", drive.node)
        .arg("--dir")
        .arg(&drive.world.roster)
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

/// What the adopted-session proof measured and saw of `harness`'s own marks: each watch
/// latency, one session's marks as the harness wrote them, what it did, and where that
/// differs from what roster assumes.
pub fn print_summary(harness: &str, proof: &AdoptedProof) {
    if proof.latencies.is_empty() && proof.example_file.is_none() {
        return;
    }
    println!("\n=== {harness}: its own sessions, as roster-list --watch followed them (no hook installed)");
    println!(
        "    each from what the run saw (the file in the directory, read every millisecond; the \
         signal; the process's exit) to the event's line; 0.0 ms: the watch was first"
    );
    for (what, latency) in &proof.latencies {
        println!("    watch {what:<24} {:>8.1} ms", latency.as_secs_f64() * 1000.0);
    }
    if let Some(file) = &proof.example_file {
        println!("    one session's files as {harness} wrote them: {file}");
    }
    for observation in &proof.observations {
        println!("    what {harness} did: {observation}");
    }
    if proof.mismatches.is_empty()
        && let Some(row) = ADOPTING.iter().find(|row| row.name == harness)
    {
        println!("    {}", row.as_assumed);
    }
    for mismatch in &proof.mismatches {
        println!("    differs from what roster assumes: {mismatch}");
    }
}
