//! The e2e's state proof: what `roster-list` says a session is doing, while the real pinned
//! harness runs its interactive TUI in a terminal (tmux) against the stepped fake model
//! server, with the state hooks `roster-hooks install` wrote. Five steps, each waited for
//! by polling `roster-list --dir <roster> --format json` against a deadline:
//!
//! 1. working: a prompt is sent and the turn's model call is held at the server;
//! 2. idle: the call is answered with text, the turn ends, the TUI stays open;
//! 3. waiting for permission: a prompt asks for a shell command, the model answers with a
//!    call of the harness's shell tool, the harness's permission dialog shows;
//! 4. working again: the dialog is answered "yes" by a keystroke, the command runs (its
//!    file appears) and the call carrying its result is held;
//! 5. idle again: that call is answered with text.
//!
//! Each step must show the state the harness's own event means (`state_source` names it),
//! and `roster-top`, running in a tmux terminal of its own on the same registry from the
//! start, must show it too (`working`, `idle`, `waiting: permission`), redrawn from the
//! watch's events as it happens.
//! What a harness's binary cannot show is reported as unknown, with the reason, never as
//! passed.

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use serde_json::Value;

use super::fake_model_server::{FakeModelServer, REPLY_TEXT};
use super::harness_processes::HarnessProcesses;
use super::hook_shim::{HookCall, HookKind, HookShim};
use super::notify::NoticeWatch;
use super::real_harnesses::{InstalledHarness, RealHarness};
use super::terminal::{Terminal, screen_excerpt};
use super::tui_recipes::{TuiRecipe, prepare_tui_home, recipe};
use super::{SessionWorld, install_hooks, last_lines, signal_process};

/// How long a TUI may take to start and show its prompt (npm loaders unpack native
/// binaries on a first run; the machine may be loaded).
pub(super) const TUI_START_DEADLINE: Duration = Duration::from_secs(180);

/// How long a harness may take from an action (a prompt sent, a call answered, a key
/// pressed) to the model call, dialog or state it leads to.
pub(super) const STEP_DEADLINE: Duration = Duration::from_secs(60);

/// How long a dialog gets to close after its answer was typed before the keys are pressed
/// again, and how many times they are.
const DIALOG_REACTION: Duration = Duration::from_secs(2);
const APPROVAL_ATTEMPTS: u32 = 5;

/// How long a harness gets to show a sign of a prompt (a hook run, a model call) after
/// Enter before Enter is pressed again, and how many times it is.
const SUBMIT_REACTION: Duration = Duration::from_secs(5);
const SUBMIT_ATTEMPTS: u32 = 4;

/// How often the run lists the roster while it waits for a state.
const LIST_INTERVAL: Duration = Duration::from_millis(50);

/// The first prompt: plain text, answered with text.
const GREETING_PROMPT: &str = "Say hello to the roster e2e";

/// One step of the proof, in the order they run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Working,
    Idle,
    WaitingForPermission,
    NoticeShown,
    WorkingAfterApproval,
    NoticeClosed,
    IdleAfterApproval,
}

impl Step {
    const ALL: [Step; 7] = [
        Step::Working,
        Step::Idle,
        Step::WaitingForPermission,
        Step::NoticeShown,
        Step::WorkingAfterApproval,
        Step::NoticeClosed,
        Step::IdleAfterApproval,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Step::Working => "working (model call held)",
            Step::Idle => "idle (turn ended, TUI open)",
            Step::WaitingForPermission => "waiting for permission (dialog)",
            Step::NoticeShown => "notice: one, its action goes there",
            Step::WorkingAfterApproval => "approved: working again",
            Step::NoticeClosed => "notice: closed once approved",
            Step::IdleAfterApproval => "approved: idle again",
        }
    }
}

/// What one step showed.
#[derive(Clone, Debug)]
pub enum StepResult {
    /// The row showed the expected state; what it showed.
    Proven(String),
    Failed(String),
    /// Not shown by this run, and why (the binary cannot show it here, or an earlier step
    /// failed).
    Unknown(String),
}

/// What the proof showed for one harness.
pub struct StateProof {
    pub harness: &'static str,
    pub steps: Vec<(Step, StepResult)>,
    /// The state events the harness sent, each once, in the order first seen.
    pub events: Vec<String>,
    /// What this harness's binary cannot show, found by the run or known of the release.
    pub limits: Vec<String>,
    /// The run's own notes, for the log.
    pub lines: Vec<String>,
    pub hook_calls: Vec<HookCall>,
    /// A failure after every step was shown (a line in hook-errors.log).
    pub failed_after_steps: Option<String>,
}

impl StateProof {
    fn new(harness: &'static str) -> StateProof {
        StateProof {
            harness,
            steps: Vec::new(),
            events: Vec::new(),
            limits: Vec::new(),
            lines: Vec::new(),
            hook_calls: Vec::new(),
            failed_after_steps: None,
        }
    }

    /// The failures, one line each.
    pub fn failures(&self) -> Vec<String> {
        self.steps
            .iter()
            .filter_map(|(step, result)| match result {
                StepResult::Failed(why) => Some(format!("{}: {why}", step.label())),
                _ => None,
            })
            .chain(self.failed_after_steps.clone())
            .collect()
    }

    /// Whether any step was proven (a harness whose every step is unknown did not run).
    pub fn proved_anything(&self) -> bool {
        self.steps.iter().any(|(_, result)| matches!(result, StepResult::Proven(_)))
    }

    fn note(&mut self, line: impl Into<String>) {
        self.lines.push(line.into());
    }
}

/// Runs the proof for one installed harness.
pub fn prove(installed: &InstalledHarness, binaries: &Path, node: &Path) -> StateProof {
    let harness = installed.harness;
    let mut proof = StateProof::new(harness.name);
    let recipe = match recipe(harness.name) {
        Ok(recipe) => recipe,
        Err(why) => {
            proof.steps = Step::ALL.iter().map(|step| (*step, StepResult::Unknown(why.to_owned()))).collect();
            return proof;
        }
    };
    proof.limits = recipe.limits.iter().map(|limit| (*limit).to_owned()).collect();
    if let Err(error) = run(installed, &recipe, binaries, node, &mut proof) {
        let error = format!("{error:#}");
        proof.note(format!("FAILED: {error}"));
        let failed_at = proof.steps.len();
        if failed_at == Step::ALL.len() {
            proof.failed_after_steps = Some(error.clone());
        }
        for (index, step) in Step::ALL.iter().enumerate().skip(failed_at) {
            let result = if index == failed_at {
                StepResult::Failed(error.clone())
            } else {
                StepResult::Unknown("not reached: an earlier step failed".to_owned())
            };
            proof.steps.push((*step, result));
        }
    }
    proof
}

/// The session under proof: its world, terminal, server and processes.
pub(super) struct Drive<'a> {
    harness: RealHarness,
    /// The pid of the program the terminal runs.
    owner: u32,
    world: &'a SessionWorld,
    server: &'a FakeModelServer,
    terminal: &'a Terminal,
    shim: &'a HookShim,
    processes: &'a mut HarnessProcesses,
    binaries: &'a Path,
    node: &'a Path,
}

/// A harness's TUI running in a terminal of its own, in a world of its own, against a
/// stepped fake model server, with roster's hooks installed through the shim.
pub(super) struct TuiSession {
    pub world: SessionWorld,
    pub server: FakeModelServer,
    pub shim: HookShim,
    pub terminal: Terminal,
    /// The pid of the program the terminal runs.
    pub owner: u32,
    pub processes: HarnessProcesses,
}

impl TuiSession {
    /// Starts the TUI of `installed` as `recipe` says, in a new world labelled `label`;
    /// `prepare_project` runs on the world before the harness starts. The lines
    /// `roster-hooks` reported go to `notes`.
    pub(super) fn start(
        installed: &InstalledHarness,
        recipe: &TuiRecipe,
        binaries: &Path,
        node: &Path,
        label: &str,
        prepare_project: impl FnOnce(&SessionWorld) -> anyhow::Result<()>,
        notes: &mut Vec<String>,
    ) -> anyhow::Result<TuiSession> {
        let harness = installed.harness;
        let tmux = tests::find_or_install_tool("tmux")
            .context("the TUI proofs drive the TUI in tmux, which is missing (Debian package: tmux)")?;
        let world = SessionWorld::create(harness.name, label)?;
        let api = harness.api.context("the harness speaks no model API")?;
        let server = FakeModelServer::start_stepped(api, recipe.shell_command)?;
        harness.prepare_home(&world.home, &server.base_url())?;
        prepare_tui_home(harness.name, &world)?;
        prepare_project(&world)?;
        let shim = HookShim::create(&world.root, binaries)?;
        let mut install_report = super::SessionReport::new();
        install_hooks(&world, harness, &shim, binaries, node, &mut install_report)?;
        notes.extend(install_report.lines);

        let mut environment = world.base_environment(node);
        environment.retain(|(key, _)| key != "TERM");
        environment.push(("TERM".to_owned(), "xterm-256color".to_owned()));
        environment.extend(harness.environment(&server.base_url()));
        let arguments: Vec<String> = recipe.arguments.iter().map(|argument| (*argument).to_owned()).collect();
        let terminal = Terminal::start(
            &tmux,
            &world.root.join("tmux.socket"),
            &world.project,
            &environment,
            &installed.executable,
            &arguments,
        )?;
        let owner = terminal.program_pid()?;
        let processes = HarnessProcesses::new(owner, vec![installed.prefix.clone(), world.home.clone()]);
        Ok(TuiSession { world, server, shim, terminal, owner, processes })
    }

    /// A driver of the session.
    pub(super) fn drive<'a>(
        &'a mut self,
        harness: RealHarness,
        binaries: &'a Path,
        node: &'a Path,
    ) -> Drive<'a> {
        Drive {
            harness,
            owner: self.owner,
            world: &self.world,
            server: &self.server,
            terminal: &self.terminal,
            shim: &self.shim,
            processes: &mut self.processes,
            binaries,
            node,
        }
    }

    /// Closes the terminal and kills whatever of the harness is left; returns the screen
    /// as it was last.
    pub(super) fn stop(&mut self) -> String {
        let screen = self.terminal.screen();
        self.terminal.close();
        for pid in self.processes.running_pids() {
            signal_process(pid, "KILL");
        }
        self.server.open_gate();
        screen
    }
}

fn run(
    installed: &InstalledHarness,
    recipe: &TuiRecipe,
    binaries: &Path,
    node: &Path,
    proof: &mut StateProof,
) -> anyhow::Result<()> {
    let harness = installed.harness;
    let mut session =
        TuiSession::start(installed, recipe, binaries, node, "states", |_| Ok(()), &mut proof.lines)?;
    let outcome = session.drive(harness, binaries, node).steps(recipe, proof);
    let screen = session.stop();
    let TuiSession { world, server, shim, .. } = &session;
    proof.hook_calls = shim.calls();
    for call in proof.hook_calls.iter().filter(|call| call.kind == HookKind::State) {
        let event = call.event.clone().unwrap_or_else(|| "?".to_owned());
        if !proof.events.contains(&event) {
            proof.events.push(event);
        }
    }
    proof.note(format!("model replies: {}", server.replies().join(", ")));
    let errors = world.hook_errors();
    let outcome = outcome.and_then(|()| {
        ensure!(errors.is_empty(), "hook-errors.log: {errors:?}");
        Ok(())
    });
    if outcome.is_ok() {
        let _ = fs::remove_dir_all(&world.root);
    } else {
        proof.note(format!(
            "kept {} for inspection; the terminal showed:\n{}",
            world.root.display(),
            screen_excerpt(&screen)
        ));
        for line in last_lines(&world.harness_output(), 5) {
            proof.note(format!("  | {line}"));
        }
    }
    outcome
}

impl Drive<'_> {
    fn steps(&mut self, recipe: &TuiRecipe, proof: &mut StateProof) -> anyhow::Result<()> {
        let started = Instant::now();
        let top = self.start_top()?;
        let notices = NoticeWatch::start(self.world, self.terminal, self.binaries, self.node)?;
        self.terminal
            .wait_for_text(recipe.ready, TUI_START_DEADLINE)
            .with_context(|| format!("{} did not take a prompt", self.harness.name))?;
        // Some harnesses register at start, some (Codex) with their first prompt.
        let before = self.row()?.map_or_else(|| "no row yet".to_owned(), |row| describe(&row));
        proof.note(format!(
            "TUI ready after {:.1} s, pid {}; before any prompt: {before}",
            started.elapsed().as_secs_f64(),
            self.owner
        ));

        // 1. working, while the turn's model call is held.
        let presses = self.submit(GREETING_PROMPT)?;
        proof.note(format!("the first prompt was taken after Enter was pressed {presses} time(s)"));
        self.wait_for_held_call("the first prompt's model call")?;
        let row = self.wait_for_row("state working", STEP_DEADLINE, |row| row["state"] == "working")?;
        ensure!(self.server.calls_waiting() > 0, "the model call was no longer held when working showed");
        proof.note(format!("the row's owner: {} (the TUI's pid: {})", row["session_pid"], self.owner));
        proof.steps.push((Step::Working, self.judge(&row, recipe.working)));
        self.top_shows(&top, "working")?;

        // 2. idle, once the answer ended the turn; the TUI stays open.
        self.server.let_one_through();
        self.terminal.wait_for_text(REPLY_TEXT, STEP_DEADLINE)?;
        let row = self.wait_for_row("state idle", STEP_DEADLINE, |row| row["state"] == "idle")?;
        proof.steps.push((Step::Idle, self.judge(&row, recipe.idle)));
        self.top_shows(&top, "idle")?;

        // 3. waiting for permission, while the dialog for the shell command shows.
        let presses = self.submit(&format!("Run this shell command: {}", recipe.shell_command))?;
        proof.note(format!("the shell prompt was taken after Enter was pressed {presses} time(s)"));
        self.wait_for_held_call("the shell prompt's model call")?;
        self.server.let_one_through();
        self.terminal
            .wait_for_text(recipe.dialog, STEP_DEADLINE)
            .with_context(|| format!("no permission dialog for `{}`", recipe.shell_command))?;
        let row = self.wait_for_row("state waiting", STEP_DEADLINE, |row| row["state"] == "waiting")?;
        let created = self.world.project.join(recipe.creates);
        ensure!(!created.exists(), "{} exists before the dialog was answered", created.display());
        let mut result = self.judge(&row, recipe.waiting);
        if row["waiting_for"] != "permission" && matches!(result, StepResult::Proven(_)) {
            result = StepResult::Failed(format!("waiting_for is {}, not \"permission\"", row["waiting_for"]));
        }
        proof.steps.push((Step::WaitingForPermission, result));
        // What the row waits for, as roster-top words it (the step's own verdict is above).
        let waiting = match row["waiting_for"].as_str() {
            Some(what) => format!("waiting: {what}"),
            None => "waiting".to_owned(),
        };
        self.top_shows(&top, &waiting)?;
        proof
            .steps
            .push((Step::NoticeShown, notices.judge_waiting(self.harness.name, &row, self.terminal.pane())));

        // 4. approved: the command runs and the call with its result is held.
        let presses = self.approve(recipe)?;
        proof.note(format!("the dialog closed after the approval keys were pressed {presses} time(s)"));
        self.wait_for_held_call("the model call with the command's result")?;
        ensure!(
            created.exists(),
            "the approved `{}` did not create {}",
            recipe.shell_command,
            created.display()
        );
        let row = self.wait_for_row("state working", STEP_DEADLINE, |row| row["state"] == "working")?;
        ensure!(self.server.calls_waiting() > 0, "the model call was no longer held when working showed");
        proof.steps.push((Step::WorkingAfterApproval, self.judge(&row, recipe.working_after_approval)));
        self.top_shows(&top, "working")?;
        proof.steps.push((Step::NoticeClosed, notices.judge_closed()));

        // 5. idle again once that call is answered.
        self.server.let_one_through();
        let row = self.wait_for_row("state idle", STEP_DEADLINE, |row| row["state"] == "idle")?;
        proof.steps.push((Step::IdleAfterApproval, self.judge(&row, recipe.idle)));
        self.top_shows(&top, "idle")?;
        proof.note("roster-top showed each state as it happened".to_owned());
        Ok(())
    }

    /// `roster-top` on the session's registry, in a tmux terminal of its own.
    fn start_top(&self) -> anyhow::Result<Terminal> {
        let tmux = tests::find_or_install_tool("tmux").context("roster-top is driven in tmux")?;
        let mut environment = self.world.base_environment(self.node);
        environment.retain(|(key, _)| key != "TERM");
        environment.push(("TERM".to_owned(), "xterm-256color".to_owned()));
        let arguments = vec!["--dir".to_owned(), self.world.roster.display().to_string()];
        let top = Terminal::start(
            &tmux,
            &self.world.root.join("top.socket"),
            &self.world.project,
            &environment,
            &self.binaries.join("roster-top"),
            &arguments,
        )?;
        top.wait_for_text("roster-top", STEP_DEADLINE).context("roster-top did not draw")?;
        Ok(top)
    }

    /// Waits until roster-top's row of the session shows `state` (its first row: the
    /// session is the only one in its registry).
    fn top_shows(&self, top: &Terminal, state: &str) -> anyhow::Result<()> {
        let harness = self.harness.name;
        top.wait_for_screen(
            &format!("roster-top's {harness} row in state {state}"),
            STEP_DEADLINE,
            |screen| screen.lines().nth(2).is_some_and(|row| row.contains(harness) && row.contains(state)),
        )
    }

    /// Answers the open dialog "yes, once". A TUI may drop keys that come right as its
    /// dialog opens (Claude Code does, against a stray key approving a command): the keys
    /// are pressed again while the dialog still shows a moment later, a few times at most.
    fn approve(&self, recipe: &TuiRecipe) -> anyhow::Result<u32> {
        for attempt in 1..=APPROVAL_ATTEMPTS {
            for key in recipe.approve {
                self.terminal.press(key)?;
            }
            let gone = self.terminal.wait_for_screen("the dialog closed", DIALOG_REACTION, |screen| {
                !screen.contains(recipe.dialog)
            });
            if gone.is_ok() {
                return Ok(attempt);
            }
        }
        bail!(
            "the dialog stayed open after {APPROVAL_ATTEMPTS} tries of {:?}; the terminal shows:\n{}",
            recipe.approve,
            screen_excerpt(&self.terminal.screen())
        )
    }

    /// Types `prompt` and, once the screen shows it, sends it with Enter. A TUI may take
    /// an Enter that comes right after the text for part of a paste (Gemini CLI does, at
    /// times): Enter is pressed again while the harness shows no sign of the prompt (no
    /// hook ran, no model call came) a moment later, a few times at most; an Enter on an
    /// empty prompt line does nothing.
    pub(super) fn submit(&self, prompt: &str) -> anyhow::Result<u32> {
        self.terminal.type_text(prompt)?;
        self.terminal.wait_for_text(prompt, STEP_DEADLINE).context("the prompt typed did not show")?;
        for attempt in 1..=SUBMIT_ATTEMPTS {
            let hooks_before = self.shim.calls().len();
            let replies_before = self.server.replies().len();
            self.terminal.press("Enter")?;
            let started = Instant::now();
            while started.elapsed() < SUBMIT_REACTION {
                if self.shim.calls().len() > hooks_before
                    || self.server.replies().len() > replies_before
                    || self.server.calls_waiting() > 0
                {
                    return Ok(attempt);
                }
                std::thread::sleep(LIST_INTERVAL);
            }
        }
        bail!(
            "{} showed no sign of the prompt after {SUBMIT_ATTEMPTS} presses of Enter; the terminal shows:\n{}",
            self.harness.name,
            screen_excerpt(&self.terminal.screen())
        )
    }

    /// Waits until a model call of a turn waits at the server's gate.
    pub(super) fn wait_for_held_call(&mut self, what: &str) -> anyhow::Result<()> {
        let started = Instant::now();
        while self.server.calls_waiting() == 0 {
            self.ensure_running()?;
            ensure!(
                started.elapsed() < STEP_DEADLINE,
                "{what} did not come within {STEP_DEADLINE:?}; replies so far: {:?}; the terminal shows:\n{}",
                self.server.replies(),
                screen_excerpt(&self.terminal.screen())
            );
            std::thread::sleep(LIST_INTERVAL);
        }
        Ok(())
    }

    pub(super) fn ensure_running(&mut self) -> anyhow::Result<()> {
        if self.processes.running().is_empty() {
            bail!(
                "{} exited; the terminal showed:\n{}",
                self.harness.name,
                screen_excerpt(&self.terminal.screen())
            );
        }
        Ok(())
    }

    /// The harness's one row in `roster-list --dir <roster> --format json`, if it has one.
    pub(super) fn row(&self) -> anyhow::Result<Option<Value>> {
        let output = self
            .world
            .roster_tool(self.binaries, "roster-list", self.node)
            .arg("--dir")
            .arg(&self.world.roster)
            .args(["--format", "json"])
            .output()?;
        ensure!(
            output.status.success(),
            "roster-list failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        );
        let rows: Value = serde_json::from_slice(&output.stdout).context("roster-list printed no JSON")?;
        let rows: Vec<&Value> = rows
            .as_array()
            .context("roster-list printed no array")?
            .iter()
            .filter(|row| row["harness"] == self.harness.name)
            .collect();
        ensure!(rows.len() <= 1, "more than one row of {}: {rows:?}", self.harness.name);
        Ok(rows.first().map(|row| (*row).clone()))
    }

    /// Polls the listing until the harness's row satisfies `wanted`, at most `deadline`.
    pub(super) fn wait_for_row(
        &mut self,
        what: &str,
        deadline: Duration,
        wanted: impl Fn(&Value) -> bool,
    ) -> anyhow::Result<Value> {
        let started = Instant::now();
        let mut last = None;
        loop {
            if let Some(row) = self.row()? {
                if wanted(&row) {
                    return Ok(row);
                }
                last = Some(row);
            }
            self.ensure_running()?;
            if started.elapsed() > deadline {
                bail!(
                    "roster-list did not show {what} within {deadline:?}; the row says {}; state events so far: {}; \
                     hook errors: {:?}; the terminal shows:\n{}",
                    last.as_ref().map_or_else(|| "nothing (no row)".to_owned(), describe),
                    state_events(&self.world.root),
                    self.world.hook_errors(),
                    screen_excerpt(&self.terminal.screen())
                );
            }
            std::thread::sleep(LIST_INTERVAL);
        }
    }

    /// Proven when the row's state comes from one of `events` of this harness.
    fn judge(&self, row: &Value, events: &[&str]) -> StepResult {
        let source = row["state_source"].as_str().unwrap_or_default();
        let expected: Vec<String> =
            events.iter().map(|event| format!("{}:{event}", self.harness.name)).collect();
        if expected.iter().any(|wanted| wanted == source) {
            StepResult::Proven(describe(row))
        } else {
            StepResult::Failed(format!("{}; expected the source {}", describe(row), expected.join(" or ")))
        }
    }
}

/// A row's state in a few words: `waiting for permission (claude-code:PermissionRequest)`.
fn describe(row: &Value) -> String {
    let state = row["state"].as_str().unwrap_or("?");
    let waiting_for = row["waiting_for"].as_str().map(|what| format!(" for {what}")).unwrap_or_default();
    let source = row["state_source"].as_str().unwrap_or("no source");
    format!("{state}{waiting_for} ({source})")
}

/// The state hooks that ran so far, as the shim logged them, for an error message.
fn state_events(root: &Path) -> String {
    let calls = fs::read_to_string(root.join("hook-calls").join("calls.log")).unwrap_or_default();
    let events: Vec<String> = calls
        .lines()
        .filter(|line| line.starts_with("roster-state "))
        .map(|line| {
            let words: Vec<&str> = line.split(' ').collect();
            let event =
                words.iter().position(|word| *word == "--event").and_then(|index| words.get(index + 1));
            format!("{} (exit {})", event.unwrap_or(&"?"), words.get(3).unwrap_or(&"?"))
        })
        .collect();
    if events.is_empty() { "none".to_owned() } else { events.join(", ") }
}

/// Prints the proofs as one table: harness × step × result × what the row showed; then the
/// events each harness sent and what its binary cannot show.
pub fn print_table(proofs: &[StateProof]) {
    println!("{:<12} {:<34} {:<8} {:<64} detail", "HARNESS", "STATE STEP", "RESULT", "ROW SHOWED");
    for proof in proofs {
        // A harness whose every step is unknown for one reason gets one row.
        let reasons: Vec<&str> = proof
            .steps
            .iter()
            .filter_map(|(_, result)| match result {
                StepResult::Unknown(why) => Some(why.as_str()),
                _ => None,
            })
            .collect();
        if reasons.len() == proof.steps.len() && reasons.windows(2).all(|pair| pair[0] == pair[1]) {
            let why = reasons.first().copied().unwrap_or("no step ran");
            println!("{:<12} {:<34} {:<8} {:<64} {why}", proof.harness, "every step", "unknown", "");
            continue;
        }
        for (step, result) in &proof.steps {
            let (word, showed, detail) = match result {
                StepResult::Proven(showed) => ("ok", showed.as_str(), ""),
                StepResult::Failed(why) => ("FAILED", "", why.as_str()),
                StepResult::Unknown(why) => ("unknown", "", why.as_str()),
            };
            // The first line: the whole text, with the screen, is in the log above.
            let detail: String = detail.lines().next().unwrap_or_default().chars().take(300).collect();
            println!("{:<12} {:<34} {word:<8} {showed:<64} {detail}", proof.harness, step.label());
        }
        if let Some(why) = &proof.failed_after_steps {
            let why: String = why.lines().next().unwrap_or_default().chars().take(300).collect();
            println!("{:<12} {:<34} {:<8} {:<64} {why}", proof.harness, "after the steps", "FAILED", "");
        }
        if proof.proved_anything() || !proof.events.is_empty() {
            println!("{:<12} {:<34} {}", proof.harness, "state events sent", proof.events.join(" "));
        }
        for limit in &proof.limits {
            println!("{:<12} {:<34} {limit}", proof.harness, "cannot show");
        }
    }
}
