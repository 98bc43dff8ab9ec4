//! Claude Code's turns in its TUI, as the adopted-session proof drives them
//! (`adopted_claude_code`): a prompt typed and submitted until its model call is held, the
//! file's `status` followed to working and idle (part 2), and a shell command the model asks
//! for held at Claude Code's permission dialog, the file saying waiting, then approved
//! (part 3); the watch's `state-changed` events timed against the file.

use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};

use super::adopted::{AdoptedProof, Drive, EVENT_DEADLINE, Part, PartOutcome, label, record_part};
use super::adopted_claude_code::{ClaudeCodeMarks, ClaudeSession, POLL, STEP_DEADLINE, expected_state};
use super::fake_model_server::REPLY_TEXT;
use super::roster_watch::WatchEvent;
use super::sessions_directory_log::{FileVersion, statuses};
use super::terminal::{Terminal, screen_excerpt};

/// How long the TUI gets to show a sign of a prompt (a model call held) after Enter before
/// Enter is pressed again, and how many times it is.
const SUBMIT_REACTION: Duration = Duration::from_secs(5);
const SUBMIT_ATTEMPTS: u32 = 4;

/// The shell command the model asks to run in the waiting part, where Claude Code asks
/// for permission first; what its dialog shows; the key that answers it "yes".
pub(super) const COMMAND_ASKED_FOR: &str = "touch roster-e2e-approved";
const DIALOG: &str = "Do you want to proceed?";
const APPROVE_KEY: &str = "1";

/// How long the dialog gets to close after its answer was typed before the key is pressed
/// again (Claude Code drops keys that come right as its dialog opens), and how many times
/// it is.
const DIALOG_REACTION: Duration = Duration::from_secs(2);
const APPROVAL_ATTEMPTS: u32 = 5;

impl ClaudeCodeMarks {
    /// Part 2: a prompt's model call held, the file says busy and the row working; the call
    /// answered, idle.
    pub(super) fn state(
        &self,
        drive: &mut Drive<'_>,
        session: &ClaudeSession,
        proof: &mut AdoptedProof,
    ) -> anyhow::Result<()> {
        let mut outcome = PartOutcome::default();
        let submitted = Self::submit(drive, &session.terminal, "Say hello to the roster e2e")?;
        self.wait_for_status(session, submitted, "busy")?;
        self.expect_state(drive, session, submitted, "busy", &mut outcome)?;
        let answered = Instant::now();
        drive.server.let_one_through();
        session.terminal.wait_for_text(REPLY_TEXT, STEP_DEADLINE)?;
        self.wait_for_status(session, answered, "idle")?;
        self.expect_state(drive, session, answered, "idle", &mut outcome)?;
        proof.note(format!(
            "statuses the file went through: {}",
            statuses(&self.log.versions(&session.file_name)).join(" → ")
        ));
        record_part(label::<Self>(Part::State), outcome, proof);
        Ok(())
    }

    /// Waits until the file says `status`, written at or after `after`.
    pub(super) fn wait_for_status(
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
    pub(super) fn expect_state(
        &self,
        drive: &mut Drive<'_>,
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
        let event = drive.watch.wait_for(&format!("state-changed to {state}"), EVENT_DEADLINE, |event| {
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
    pub(super) fn waiting(
        &self,
        drive: &mut Drive<'_>,
        session: &ClaudeSession,
        proof: &mut AdoptedProof,
    ) -> anyhow::Result<()> {
        let mut outcome = PartOutcome::default();
        let submitted =
            Self::submit(drive, &session.terminal, &format!("Run this shell command: {COMMAND_ASKED_FOR}"))?;
        drive.server.let_one_through();
        session
            .terminal
            .wait_for_text(DIALOG, STEP_DEADLINE)
            .with_context(|| format!("no permission dialog for `{COMMAND_ASKED_FOR}`"))?;
        let written = self.wait_for_status(session, submitted, "waiting")?;
        let waiting_for = written.json().map(|file| file["waitingFor"].clone()).unwrap_or_default();
        proof.note(format!(
            "while the dialog shows, the file says status \"waiting\", waitingFor {waiting_for}"
        ));
        if let Some(event) = self.expect_state(drive, session, submitted, "waiting", &mut outcome)? {
            let row = event.row();
            proof.note(format!("the watch: waiting for {} ({})", row["waiting_for"], row["state_source"]));
            if row["waiting_for"] != "permission" {
                outcome.fail(format!(
                    "the row says waiting for {} while Claude Code's permission dialog shows; Claude Code \
                     {} writes waitingFor {waiting_for}{}",
                    row["waiting_for"],
                    file_version(session, &written),
                    self.session_evidence(drive, session, proof)
                ));
            }
        }
        // Approved, the command runs and the call with its result is held; answered, the
        // turn ends.
        Self::approve(&session.terminal)?;
        let approved = Instant::now();
        let started = Instant::now();
        while drive.server.calls_waiting() == 0 {
            ensure!(
                started.elapsed() < STEP_DEADLINE,
                "no model call with the command's result within {STEP_DEADLINE:?}; the terminal shows:\n{}",
                screen_excerpt(&session.terminal.screen())
            );
            std::thread::sleep(POLL);
        }
        drive.server.let_one_through();
        self.wait_for_status(session, approved, "idle")?;
        record_part(label::<Self>(Part::Waiting), outcome, proof);
        Ok(())
    }

    /// Answers the open dialog "yes", pressing the key again while the dialog still shows a
    /// moment later, a few times at most.
    pub(super) fn approve(terminal: &Terminal) -> anyhow::Result<()> {
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
    pub(super) fn submit(drive: &Drive<'_>, terminal: &Terminal, prompt: &str) -> anyhow::Result<Instant> {
        terminal.type_text(prompt)?;
        terminal.wait_for_text(prompt, STEP_DEADLINE).context("the prompt typed did not show")?;
        for _ in 0..SUBMIT_ATTEMPTS {
            let pressed = Instant::now();
            terminal.press("Enter")?;
            while pressed.elapsed() < SUBMIT_REACTION {
                if drive.server.calls_waiting() > 0 {
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
}

/// The `version` key of the file as `version` read it, for a report (`2.1.332`).
fn file_version(session: &ClaudeSession, version: &FileVersion) -> String {
    version
        .json()
        .and_then(|file| file["version"].as_str().map(str::to_owned))
        .unwrap_or_else(|| format!("(no version in {})", session.file_name))
}
