//! The e2e's send proof: a message queued with `roster-send` reaches the real pinned harness's
//! model once, through the state hook `roster-hooks install` wrote, in the harness's own reply
//! format (`harness::DELIVERY_EVENTS`, docs/contract.md §6.6), and never when the session has
//! withdrawn its consent. Unit tests can only check the reply the hook prints; whether a
//! harness puts that text in front of its model, once, is something only the binary shows.
//!
//! The harness runs its interactive TUI in a terminal (tmux) against the stepped fake model
//! server, which keeps every model call's body; the project holds a `.roster.toml` with
//! `[consent] auto_arm = true`. After a first turn (every harness is registered and idle by
//! then), three steps:
//!
//! 1. delivered at the next prompt: a message as long as the harness keeps whole (its framed
//!    length at the harness's limit, `harness::delivery_limit`, or as long as roster-send
//!    takes when that is less), its nonce at the very end where a cut would fall, is sent to
//!    the idle session (by its session id); a prompt is typed, and the first conversation
//!    request that follows carries the nonce exactly once, inside roster's whole frame;
//!    `--status` says delivered, with the harness's prompt event;
//! 2. delivered at a turn's end: while a turn's model call is held, a message is sent (by
//!    the owner's pid); once the call is answered the turn-end hook blocks, and the harness
//!    makes a new request carrying the nonce once, with nobody typing; `--status` says
//!    delivered, with the turn-end event;
//! 3. refused: a message is queued while the session accepts messages, then the session is
//!    disarmed from outside (`roster-consent disarm --pid`); a send now exits 1 with the
//!    reason and queues nothing; a prompt is typed: the queued message is settled refused,
//!    and neither nonce reaches any request.
//!
//! A delivered message may stay in the conversation's history, which a harness sends again
//! with each later request; it must never be there twice (a second delivery).

use std::fs;
use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use serde_json::Value;

use super::fake_model_server::{ModelCall, REPLY_TEXT};
use super::hook_latency::milliseconds;
use super::hook_shim::{HookCall, HookKind};
use super::real_harnesses::{InstalledHarness, RealHarness};
use super::send_message_text::{
    LIMIT_PADDING, LONGEST_TEXT_BYTES, Queued, check_carried, locate, new_nonce, shorten_by,
};
use super::session_world::{SessionWorld, last_lines};
use super::states::{STEP_DEADLINE, TUI_START_DEADLINE, TuiSession};
use super::terminal::screen_excerpt;
use super::tui_recipes::{self, TuiRecipe};

/// The project's repository configuration: the session accepts messages.
const AUTO_ARM: &str = "[consent]\nauto_arm = true\n";

/// The first turn, before any message: afterwards every harness is registered and idle.
const WARM_UP_PROMPT: &str = "Say hello to the roster e2e";

/// The prompts typed in steps 1, 2 and 3.
const NEXT_PROMPT: &str = "Say hello once more";
const TURN_PROMPT: &str = "Say hello for the turn that ends";
const REFUSED_PROMPT: &str = "Say hello while messages are refused";

/// How often the run looks at the server's calls while it waits.
const POLL: Duration = Duration::from_millis(50);

/// Why Amp is not run.
const AMP_OFFLINE: &str = "Amp's threads run on ampcode.com: there is no model endpoint to point at a fake \
                           server, so no model request can be seen offline";

/// One step of the proof.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendStep {
    Located,
    NextPrompt,
    TurnEnd,
    Refused,
}

impl SendStep {
    const ALL: [SendStep; 4] =
        [SendStep::Located, SendStep::NextPrompt, SendStep::TurnEnd, SendStep::Refused];

    pub fn label(self) -> &'static str {
        match self {
            SendStep::Located => "located: its tmux pane, current",
            SendStep::NextPrompt => "send: delivered at next prompt",
            SendStep::TurnEnd => "send: delivered at turn end",
            SendStep::Refused => "send: refused when disarmed",
        }
    }
}

/// What one step showed.
#[derive(Clone, Debug)]
pub enum SendResult {
    /// What it showed: where the text was, the event that carried it.
    Passed(String),
    Failed(String),
    NotRun(String),
}

/// What the proof showed for one harness.
pub struct SendProof {
    pub harness: &'static str,
    pub steps: Vec<(SendStep, SendResult, String)>,
    pub lines: Vec<String>,
    pub hook_calls: Vec<HookCall>,
}

impl SendProof {
    fn note(&mut self, line: impl Into<String>) {
        self.lines.push(line.into());
    }

    fn record(&mut self, step: SendStep, result: SendResult, timing: String) {
        let line = match &result {
            SendResult::Passed(what) => format!("{}: ok: {what}", step.label()),
            SendResult::Failed(why) => format!("{}: FAILED: {why}", step.label()),
            SendResult::NotRun(why) => format!("{}: not run: {why}", step.label()),
        };
        self.lines.push(line);
        if !timing.is_empty() {
            self.lines.push(format!("  timings: {timing}"));
        }
        self.steps.push((step, result, timing));
    }
}

/// Runs the proof for one installed harness.
pub fn prove(installed: &InstalledHarness, binaries: &Path, node: &Path) -> SendProof {
    let harness = installed.harness;
    let mut proof =
        SendProof { harness: harness.name, steps: Vec::new(), lines: Vec::new(), hook_calls: Vec::new() };
    let recipe = match (harness.name, tui_recipes::recipe(harness.name)) {
        ("amp", _) => Err(AMP_OFFLINE),
        (_, recipe) => recipe,
    };
    let recipe = match recipe {
        Ok(recipe) => recipe,
        Err(why) => {
            for step in SendStep::ALL {
                proof.steps.push((step, SendResult::NotRun(why.to_owned()), String::new()));
            }
            return proof;
        }
    };
    if let Err(error) = run(installed, &recipe, binaries, node, &mut proof) {
        let error = format!("{error:#}");
        proof.note(format!("FAILED: {error}"));
        let failed_at = proof.steps.len();
        for (index, step) in SendStep::ALL.iter().enumerate().skip(failed_at) {
            let result = if index == failed_at {
                SendResult::Failed(error.clone())
            } else {
                SendResult::NotRun("not reached: an earlier step failed".to_owned())
            };
            proof.steps.push((*step, result, String::new()));
        }
    }
    proof
}

fn run(
    installed: &InstalledHarness,
    recipe: &TuiRecipe,
    binaries: &Path,
    node: &Path,
    proof: &mut SendProof,
) -> anyhow::Result<()> {
    let write_configuration = |world: &SessionWorld| {
        fs::write(world.project.join(".roster.toml"), AUTO_ARM).context("writing the project's .roster.toml")
    };
    let mut session =
        TuiSession::start(installed, recipe, binaries, node, "send", write_configuration, &mut proof.lines)?;
    let outcome =
        Proof { harness: installed.harness, recipe, session: &mut session, binaries, node }.steps(proof);
    let screen = session.stop();
    proof.hook_calls = session.shim.calls();
    let errors = session.world.hook_errors();
    let outcome = outcome.and_then(|()| {
        ensure!(errors.is_empty(), "hook-errors.log: {errors:?}");
        Ok(())
    });
    let failed = proof.steps.iter().any(|(_, result, _)| matches!(result, SendResult::Failed(_)));
    if outcome.is_ok() && !failed {
        let _ = fs::remove_dir_all(&session.world.root);
    } else {
        proof.note(format!(
            "kept {} for inspection (model-calls/ holds every request body); the terminal showed:\n{}",
            session.world.root.display(),
            screen_excerpt(&screen)
        ));
        let directory = session.world.root.join("model-calls");
        if fs::create_dir_all(&directory).is_ok() {
            for (index, call) in session.server.model_calls().iter().enumerate() {
                let kind = if call.turn { "turn" } else { "side" };
                let _ = fs::write(directory.join(format!("{index:02}-{kind}.json")), &call.body);
            }
        }
        for line in last_lines(&session.world.harness_output(), 5) {
            proof.note(format!("  | {line}"));
        }
    }
    outcome
}

struct Proof<'a> {
    harness: RealHarness,
    recipe: &'a TuiRecipe,
    session: &'a mut TuiSession,
    binaries: &'a Path,
    node: &'a Path,
}

impl Proof<'_> {
    fn steps(&mut self, proof: &mut SendProof) -> anyhow::Result<()> {
        let started = Instant::now();
        self.session
            .terminal
            .wait_for_text(self.recipe.ready, TUI_START_DEADLINE)
            .with_context(|| format!("{} did not take a prompt", self.harness.name))?;
        proof.note(format!(
            "TUI ready after {:.1} s, pid {}",
            started.elapsed().as_secs_f64(),
            self.session.owner
        ));

        // The first turn: registered, idle, accepting messages.
        self.prompt_and_finish(WARM_UP_PROMPT)?;
        let row = self.idle_row()?;
        let owner = row["session_pid"].as_u64().context("the row has no session_pid")?.to_string();
        let session_id = row["session_id"].as_str().context("the row has no session_id")?.to_owned();
        proof.note(format!(
            "after the first turn: owner {owner}, session {session_id}, state {}, should_arm {}, consent {}",
            row["state"], row["should_arm"], row["consent"]
        ));
        let delivered_calls_from = self.session.server.model_calls().len();

        // 0. where it shows: the TUI runs in a tmux pane, and the hook's
        // registration recorded that pane, checked current by the listing.
        let location = &row["location"];
        let located = format!(
            "{} {} on {}: {} ({})",
            location["multiplexer"],
            location["pane"],
            location["server"],
            location["status"],
            location["reason"]
        );
        let result = if location["multiplexer"] == "tmux" && location["status"] == "current" {
            SendResult::Passed(located)
        } else {
            SendResult::Failed(format!("the row's location is {located}"))
        };
        proof.record(SendStep::Located, result, String::new());

        // 1. delivered with the next prompt.
        let (result, timing, first) = self.next_prompt(&session_id)?;
        proof.record(SendStep::NextPrompt, result, timing);

        // 2. delivered at a turn's end.
        let (result, timing, second) = self.turn_end(&owner)?;
        proof.record(SendStep::TurnEnd, result, timing);

        // 3. refused once disarmed.
        let (result, timing) = self.refused(&owner, proof)?;
        proof.record(SendStep::Refused, result, timing);

        // Never delivered again: no later request holds a delivered nonce more than once.
        let calls = self.session.server.model_calls();
        let mut again = Vec::new();
        for (step, message) in [(SendStep::NextPrompt, &first), (SendStep::TurnEnd, &second)] {
            let Some(message) = message else { continue };
            let later: Vec<(usize, &ModelCall)> = calls
                .iter()
                .enumerate()
                .skip(delivered_calls_from)
                .filter(|(_, call)| call.body.contains(&message.nonce))
                .collect();
            let twice: Vec<String> = later
                .iter()
                .filter(|(_, call)| call.body.matches(&message.nonce).count() > 1)
                .map(|(index, call)| format!("request {index}: {}", locate(call, &message.nonce).join(", ")))
                .collect();
            let history = later.iter().filter(|(_, call)| call.turn).count();
            proof.note(format!(
                "{}: {} turn request(s) carried {} (the delivering one and later ones, as history)",
                step.label(),
                history,
                message.nonce
            ));
            if !twice.is_empty() {
                again.push(format!("{} twice in {}", message.nonce, twice.join("; ")));
            }
        }
        if !again.is_empty() {
            let why = format!("a delivered message came again: {}", again.join("; "));
            for (_, result, _) in proof.steps.iter_mut().filter(|(step, _, _)| *step != SendStep::Located) {
                if matches!(result, SendResult::Passed(_)) {
                    *result = SendResult::Failed(why.clone());
                }
            }
            proof.note(format!("FAILED: {why}"));
        }
        proof.note(format!("model replies: {}", self.session.server.replies().join(", ")));
        Ok(())
    }

    fn next_prompt(&mut self, session_id: &str) -> anyhow::Result<(SendResult, String, Option<Queued>)> {
        let queued = match self.send_at_limit(session_id)? {
            Ok(queued) => queued,
            Err(why) => return Ok((SendResult::Failed(why), String::new(), None)),
        };
        let from = self.session.server.model_calls().len();
        let typed = Instant::now();
        self.session.drive(self.harness, self.binaries, self.node).submit(NEXT_PROMPT)?;
        self.session
            .drive(self.harness, self.binaries, self.node)
            .wait_for_held_call("the prompt's model call")?;
        let reached = typed.elapsed();
        let calls = self.session.server.model_calls()[from..].to_vec();
        self.let_through_until_idle()?;
        let mut problems = Vec::new();
        let Some(turn) = calls.iter().find(|call| call.turn) else { bail!("no turn call after the prompt") };
        let carried = check_carried(turn, &queued, &mut problems);
        if let Some(first) = calls.first().filter(|first| !first.turn) {
            let count = first.body.matches(&queued.nonce).count();
            problems.extend((count > 1).then(|| {
                format!(
                    "the side request before it has the nonce {count} times: {}",
                    locate(first, &queued.nonce).join(", ")
                )
            }));
        }
        let side: Vec<String> = calls
            .iter()
            .filter(|call| !call.turn && call.body.contains(&queued.nonce))
            .map(|call| format!("{} ({})", call.request, locate(call, &queued.nonce).join(", ")))
            .collect();
        let status = self.expect_settled(
            &queued,
            "delivered",
            self.delivery_event(harness::DeliveryPoint::Prompt),
            &mut problems,
        )?;
        let timing = format!(
            "send {}, typed → request {}, {}",
            milliseconds(queued.took),
            milliseconds(reached),
            self.hook_latency(harness::DeliveryPoint::Prompt)
        );
        let position = calls.iter().position(|call| call.turn).unwrap_or_default();
        let before: Vec<String> = calls[..position]
            .iter()
            .map(|call| format!("{} ({} times)", call.request, call.body.matches(&queued.nonce).count()))
            .collect();
        let mut what = if before.is_empty() {
            format!("the very next request: {carried}; {status}")
        } else {
            format!(
                "the first turn request, after side request(s) {}: {carried}; {status}",
                before.join(", ")
            )
        };
        if !side.is_empty() {
            what.push_str(&format!("; also in side request(s): {}", side.join("; ")));
        }
        if let Some(length) = &queued.length {
            what = format!("{length}: {what}");
        }
        Ok((verdict(what, problems), timing, Some(queued)))
    }

    fn turn_end(&mut self, owner: &str) -> anyhow::Result<(SendResult, String, Option<Queued>)> {
        self.session.drive(self.harness, self.binaries, self.node).submit(TURN_PROMPT)?;
        self.session
            .drive(self.harness, self.binaries, self.node)
            .wait_for_held_call("the turn's model call")?;
        let queued = match self.send(owner)? {
            Ok(queued) => queued,
            Err(why) => {
                self.let_through_until_idle()?;
                return Ok((SendResult::Failed(why), String::new(), None));
            }
        };
        let from = self.session.server.model_calls().len();
        let released = Instant::now();
        self.session.server.let_one_through();
        // The turn ends; its end hook must block it and a new request come, with nobody typing.
        let carrying = loop {
            let calls = self.session.server.model_calls();
            if let Some(call) = calls[from..].iter().find(|call| call.body.contains(&queued.nonce)) {
                break Some(call.clone());
            }
            if released.elapsed() > STEP_DEADLINE {
                break None;
            }
            self.session.drive(self.harness, self.binaries, self.node).ensure_running()?;
            std::thread::sleep(POLL);
        };
        let reached = released.elapsed();
        let event = self.delivery_event(harness::DeliveryPoint::TurnEnd);
        let Some(carrying) = carrying else {
            let status = self.status(&queued.id)?;
            let end_hooks: Vec<String> = self
                .session
                .shim
                .calls()
                .iter()
                .filter(|call| call.kind == HookKind::State && call.event.as_deref() == Some(event))
                .map(|call| format!("{} exit {} ({})", event, call.exit_status, milliseconds(call.latency)))
                .collect();
            let why = format!(
                "no request carried {} within {STEP_DEADLINE:?} of the turn's answer; the message is {}; {} hook \
                 runs: [{}]; requests after the answer: {}; the terminal shows:\n{}",
                queued.nonce,
                describe_status(&status),
                event,
                end_hooks.join(", "),
                self.session.server.model_calls().len() - from,
                screen_excerpt(&self.session.terminal.screen())
            );
            self.let_through_until_idle()?;
            return Ok((
                SendResult::Failed(why),
                format!("send {}", milliseconds(queued.took)),
                Some(queued),
            ));
        };
        self.let_through_until_idle()?;
        let mut problems = Vec::new();
        if !carrying.turn {
            problems.push(format!(
                "the request that carried it offers no tools (a side call: {})",
                carrying.request
            ));
        }
        let carried = check_carried(&carrying, &queued, &mut problems);
        let status = self.expect_settled(&queued, "delivered", event, &mut problems)?;
        let timing = format!(
            "send {}, answer released → new request {}, {}",
            milliseconds(queued.took),
            milliseconds(reached),
            self.hook_latency(harness::DeliveryPoint::TurnEnd)
        );
        Ok((verdict(format!("{carried}; {status}"), problems), timing, Some(queued)))
    }

    fn refused(&mut self, owner: &str, proof: &mut SendProof) -> anyhow::Result<(SendResult, String)> {
        let mut problems = Vec::new();
        // Queued while the session accepts messages.
        let waiting = match self.send(owner)? {
            Ok(queued) => queued,
            Err(why) => {
                return Ok((
                    SendResult::Failed(format!("the message to be refused later: {why}")),
                    String::new(),
                ));
            }
        };
        let disarm = self
            .session
            .world
            .roster_tool(self.binaries, "roster-consent", self.node)
            .args(["disarm", "--pid", owner])
            .output()?;
        let disarmed_by = if disarm.status.success() {
            format!("roster-consent disarm --pid {owner} from outside: {}", text(&disarm.stdout).trim())
        } else {
            // Not allowed from outside: the project's auto-arm goes instead.
            fs::remove_file(self.session.world.project.join(".roster.toml"))?;
            format!(
                "roster-consent disarm --pid {owner} refused from outside ({}: {}); .roster.toml removed instead",
                disarm.status,
                text(&disarm.stderr).trim()
            )
        };
        proof.note(disarmed_by.clone());
        // A send now is refused: exit 1, the reason on stderr, nothing queued.
        let nonce = new_nonce()?;
        let sent = Instant::now();
        let refused = self.roster_send(&["--format", "json", "--to", owner, &nonce])?;
        let refused_took = sent.elapsed();
        let reason = text(&refused.stderr).trim().to_owned();
        proof.note(format!("roster-send to the disarmed session: {}, stderr: {reason}", refused.status));
        if refused.status.code() != Some(1) {
            problems.push(format!(
                "roster-send to the disarmed session exited {} (stdout {})",
                refused.status,
                text(&refused.stdout).trim()
            ));
        }
        if reason.is_empty() {
            problems.push("roster-send said no reason on stderr".to_owned());
        }
        let json: Value = serde_json::from_slice(&refused.stdout).unwrap_or(Value::Null);
        if json["status"] != "refused" {
            problems.push(format!("roster-send --format json printed {json}, not status refused"));
        }
        let queued_files = self.files_holding(&nonce);
        if !queued_files.is_empty() {
            problems.push(format!("the refused message was queued anyway: {}", queued_files.join(", ")));
        }
        // The delivery event comes: the waiting message is refused, nothing reaches the model.
        self.prompt_and_finish(REFUSED_PROMPT)?;
        let event = self.delivery_event(harness::DeliveryPoint::Prompt);
        let status = self.expect_settled(&waiting, "refused", event, &mut problems)?;
        for nonce in [&waiting.nonce, &nonce] {
            let seen: Vec<String> = self
                .session
                .server
                .model_calls()
                .iter()
                .filter(|call| call.body.contains(nonce.as_str()))
                .map(|call| format!("{} ({})", call.request, locate(call, nonce).join(", ")))
                .collect();
            if !seen.is_empty() {
                problems.push(format!("{nonce} reached the model: {}", seen.join("; ")));
            }
        }
        let what = format!(
            "{}; send refused (exit 1: {}); the message queued before: {}; neither nonce in any request",
            if disarm.status.success() { "disarmed from outside" } else { "auto-arm removed" },
            first_clause(&reason),
            first_clause(&status),
        );
        let timing = format!(
            "refused send {}, queued send {}",
            milliseconds(refused_took),
            milliseconds(waiting.took)
        );
        Ok((verdict(what, problems), timing))
    }

    /// The harness's delivery event at `point`, as `state_source` and `--status` name it
    /// after the harness.
    fn delivery_event(&self, point: harness::DeliveryPoint) -> &'static str {
        harness::DELIVERY_EVENTS
            .iter()
            .find(|row| row.harness.to_string() == self.harness.name && row.point == point)
            .map_or("?", |row| row.event)
    }

    /// The slowest state hook run of the delivery event at `point`.
    fn hook_latency(&self, point: harness::DeliveryPoint) -> String {
        let event = self.delivery_event(point);
        let slowest = self
            .session
            .shim
            .calls()
            .iter()
            .filter(|call| call.kind == HookKind::State && call.event.as_deref() == Some(event))
            .map(|call| call.latency)
            .max();
        slowest.map_or_else(
            || format!("no {event} hook run seen"),
            |latency| format!("{event} hook ≤ {}", milliseconds(latency)),
        )
    }

    /// Types `prompt`, lets every call of the turn through, and waits until it is idle.
    fn prompt_and_finish(&mut self, prompt: &str) -> anyhow::Result<()> {
        self.session.drive(self.harness, self.binaries, self.node).submit(prompt)?;
        self.session
            .drive(self.harness, self.binaries, self.node)
            .wait_for_held_call("the prompt's model call")?;
        self.let_through_until_idle()
    }

    /// Lets held calls through until the session's row says idle with no call held, the
    /// reply on the screen.
    fn let_through_until_idle(&mut self) -> anyhow::Result<()> {
        let started = Instant::now();
        loop {
            if self.session.server.calls_waiting() > 0 {
                self.session.server.let_one_through();
            }
            let row = self.session.drive(self.harness, self.binaries, self.node).row()?;
            if row.as_ref().is_some_and(|row| row["state"] == "idle")
                && self.session.server.calls_waiting() == 0
                && self.session.terminal.screen().contains(REPLY_TEXT)
            {
                // A moment for a turn-end continuation to show itself.
                std::thread::sleep(Duration::from_millis(500));
                let row = self.session.drive(self.harness, self.binaries, self.node).row()?;
                if row.as_ref().is_some_and(|row| row["state"] == "idle")
                    && self.session.server.calls_waiting() == 0
                {
                    return Ok(());
                }
            }
            self.session.drive(self.harness, self.binaries, self.node).ensure_running()?;
            ensure!(
                started.elapsed() < STEP_DEADLINE,
                "the session was not idle within {STEP_DEADLINE:?} of its turn; the row says {:?}; the terminal \
                 shows:\n{}",
                row.map(|row| row["state"].clone()),
                screen_excerpt(&self.session.terminal.screen())
            );
            std::thread::sleep(POLL);
        }
    }

    fn idle_row(&mut self) -> anyhow::Result<Value> {
        self.session.drive(self.harness, self.binaries, self.node).wait_for_row(
            "state idle",
            STEP_DEADLINE,
            |row| row["state"] == "idle",
        )
    }

    fn roster_send(&self, arguments: &[&str]) -> anyhow::Result<Output> {
        self.session
            .world
            .roster_tool(self.binaries, "roster-send", self.node)
            .args(arguments)
            .output()
            .context("running roster-send")
    }

    /// Sends a new nonce to `to`; `Err(why)` inside when roster-send did not queue it.
    fn send(&self, to: &str) -> anyhow::Result<Result<Queued, String>> {
        let nonce = new_nonce()?;
        let started = Instant::now();
        let output = self.roster_send(&["--format", "json", "--to", to, &nonce])?;
        let took = started.elapsed();
        let json: Value = serde_json::from_slice(&output.stdout).unwrap_or(Value::Null);
        match (output.status.code(), json["status"].as_str(), json["id"].as_str()) {
            (Some(0), Some("queued"), Some(id)) => {
                Ok(Ok(Queued { id: id.to_owned(), nonce, took, length: None }))
            }
            _ => Ok(Err(format!(
                "roster-send --to {to} exited {}: stdout {}, stderr {}",
                output.status,
                text(&output.stdout).trim(),
                text(&output.stderr).trim()
            ))),
        }
    }

    /// Sends a message as long as the harness keeps whole at every event, or as long as
    /// roster-send takes when that is less: its text padded with characters each measure
    /// counts differently (ASCII, `é`: one UTF-16 unit, two bytes) and a fresh nonce at its
    /// very end, where a cut would fall. The length comes from roster-send itself: a text
    /// too long is refused with how much to shorten it by, in the harness's own unit.
    fn send_at_limit(&self, to: &str) -> anyhow::Result<Result<Queued, String>> {
        let nonce = new_nonce()?;
        let mut padding = LIMIT_PADDING.repeat(LONGEST_TEXT_BYTES / LIMIT_PADDING.len());
        for _ in 0..4 {
            let message = format!("{padding} {nonce}");
            let started = Instant::now();
            let output = self.roster_send(&["--format", "json", "--to", to, "--", &message])?;
            let took = started.elapsed();
            let json: Value = serde_json::from_slice(&output.stdout).unwrap_or(Value::Null);
            if let (Some(0), Some("queued"), Some(id)) =
                (output.status.code(), json["status"].as_str(), json["id"].as_str())
            {
                let length = format!(
                    "a text of {} UTF-16 units, {} bytes, sent at its harness's limit",
                    message.encode_utf16().count(),
                    message.len()
                );
                return Ok(Ok(Queued { id: id.to_owned(), nonce, took, length: Some(length) }));
            }
            let refusal = text(&output.stderr);
            let Some((over, measure)) = shorten_by(&refusal) else {
                return Ok(Err(format!(
                    "roster-send --to {to} exited {}: {}",
                    output.status,
                    refusal.trim()
                )));
            };
            let mut removed = 0;
            while removed < over {
                let Some(character) = padding.pop() else { break };
                removed += measure.length(character.encode_utf8(&mut [0; 4]));
            }
        }
        Ok(Err(format!("roster-send --to {to} kept refusing a message shortened to its limit")))
    }

    fn status(&self, id: &str) -> anyhow::Result<Value> {
        let output = self.roster_send(&["--format", "json", "--status", id])?;
        ensure!(
            output.status.success(),
            "roster-send --status {id} exited {}: {}",
            output.status,
            text(&output.stderr).trim()
        );
        serde_json::from_slice(&output.stdout).context("roster-send --status printed no JSON")
    }

    /// Checks that the message is settled `kind` by the harness's `event`; says what
    /// `--status` said.
    fn expect_settled(
        &self,
        queued: &Queued,
        kind: &str,
        event: &str,
        problems: &mut Vec<String>,
    ) -> anyhow::Result<String> {
        let status = self.status(&queued.id)?;
        let wanted_event = format!("{}:{event}", self.harness.name);
        if status["status"] != kind {
            problems.push(format!("--status says {}, not {kind}", describe_status(&status)));
        } else if kind == "delivered" && status["event"] != wanted_event.as_str() {
            problems.push(format!("--status says {}, not by {wanted_event}", describe_status(&status)));
        } else if kind == "refused" && status["reason"].as_str().unwrap_or_default().is_empty() {
            problems.push(format!("--status says {} with no reason", describe_status(&status)));
        }
        Ok(format!("--status: {}", describe_status(&status)))
    }

    /// The files of the roster's message queues that hold `nonce`.
    fn files_holding(&self, nonce: &str) -> Vec<String> {
        let mut found = Vec::new();
        let Ok(queues) = fs::read_dir(self.session.world.roster.join("messages")) else { return found };
        for queue in queues.flatten() {
            let Ok(files) = fs::read_dir(queue.path()) else { continue };
            for file in files.flatten() {
                if fs::read_to_string(file.path()).is_ok_and(|content| content.contains(nonce)) {
                    found.push(file.path().display().to_string());
                }
            }
        }
        found
    }
}

fn verdict(what: String, problems: Vec<String>) -> SendResult {
    if problems.is_empty() {
        SendResult::Passed(what)
    } else {
        SendResult::Failed(format!("{}; saw: {what}", problems.join("; ")))
    }
}

fn describe_status(status: &Value) -> String {
    let mut text = status["status"].as_str().unwrap_or("?").to_owned();
    if let Some(event) = status["event"].as_str() {
        text.push_str(&format!(" by {event}"));
    }
    if let Some(reason) = status["reason"].as_str() {
        text.push_str(&format!(" ({reason})"));
    }
    text
}

/// A long reason up to its first `;`, for the table (the log has it whole).
fn first_clause(reason: &str) -> &str {
    reason.split(';').next().unwrap_or(reason)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Prints the proofs as one table: harness × step × result × where the text was × timings.
pub fn print_table(proofs: &[SendProof]) {
    println!("{:<12} {:<32} {:<8} detail", "HARNESS", "SEND STEP", "RESULT");
    for proof in proofs {
        for (step, result, timing) in &proof.steps {
            let (word, detail) = match result {
                SendResult::Passed(what) => ("ok", what.as_str()),
                SendResult::Failed(why) => ("FAILED", why.as_str()),
                SendResult::NotRun(why) => ("not run", why.as_str()),
            };
            let detail: String = detail.lines().next().unwrap_or_default().chars().take(400).collect();
            println!("{:<12} {:<32} {word:<8} {detail}", proof.harness, step.label());
            if !timing.is_empty() {
                println!("{:<12} {:<32} {:<8} {timing}", "", "", "");
            }
        }
    }
}
