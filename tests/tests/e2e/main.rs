//! `cargo test -p tests --features e2e --test e2e -- [HARNESS] [states] [adopted] [send]
//! [resume]` (all six when no harness is named; `states` runs the state proof, `adopted` the
//! adopted-session proof, `send` the send proof, `resume` the resume proof (a session killed
//! with SIGKILL, listed crashed, started again by `roster-resume` in tmux on the same id), any
//! of them alone or together): drives the real harnesses,
//! installed from npm, through their session hooks as `roster-hooks install` wires them, and
//! checks what docs/contract.md §8 claims: during the session the roster holds one record
//! whose owner is the harness process (the outermost one: Codex's and Copilot's node loaders,
//! Gemini's first node), and at session end the record goes. Then each harness's interactive
//! TUI, in a terminal, must show working, idle and waiting for permission through its state
//! hooks (`states`). Claude Code's and Copilot CLI's sessions must also be listed and followed
//! by `roster-list --watch` with no hook installed, from the files each keeps itself
//! (`adopted`, §6.5): Claude Code's `~/.claude/sessions/<pid>.json`, Copilot CLI's
//! `~/.copilot/session-state/<id>/inuse.<pid>.lock` beside the `flock` its process holds.
//! A message queued with `roster-send` must reach each TUI's model once, through the state
//! hook, at the next prompt and at a turn's end, and never once the session is disarmed
//! (`send`, §6.6).
//!
//! Each harness runs offline in a temporary HOME with a fake API key, against a fake model
//! server on 127.0.0.1 (`fake_model_server`) that holds every model call until the record
//! has been examined. Two endings per harness: the model answers and the harness finishes
//! its turn and exits; or the harness's process group gets SIGTERM mid-turn (a closed
//! terminal, `timeout`). Where no session-end hook removes the record, `roster-prune` must
//! remove it as dead. Opt-in and slow (npm installs, real processes), so not part of CI.

#![forbid(unsafe_code)]

mod adopted;
mod adopted_copilot;
mod chains;
mod fake_model_server;
mod harness_processes;
mod hook_shim;
mod notify;
mod opencode_sessions;
mod real_harnesses;
mod resume;
mod roster_watch;
mod send;
mod sessions_directory_log;
mod states;
mod terminal;

use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use nix::sys::signal::Signal;
use nix::unistd::Pid;
use serde_json::Value;

use fake_model_server::FakeModelServer;
use harness_processes::HarnessProcesses;
use hook_shim::{HookCall, HookKind, HookShim};
use real_harnesses::{AMP_THREAD_ID, InstalledHarness, REAL_HARNESSES, RealHarness};
use tests::find_on_path;
use tests::workspace::{Profile, build_binaries, target_directory};

/// How long a harness may take to start and register (npm loaders unpack native binaries on
/// a first run; the machine may be loaded).
const REGISTRATION_DEADLINE: Duration = Duration::from_secs(180);

/// How long a harness may take to end once its turn is answered or it got SIGTERM.
const EXIT_DEADLINE: Duration = Duration::from_secs(180);

/// How often the run looks at the roster directory and the harness while it waits.
const POLL_INTERVAL: Duration = Duration::from_millis(20);

/// The Codex flag that runs hooks nobody trusted, for one invocation.
const CODEX_BYPASS_HOOK_TRUST: &str = "--dangerously-bypass-hook-trust";

/// How each session ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SessionEnding {
    /// The fake model answers; the harness finishes its turn and exits on its own.
    TurnCompletes,
    /// A signal, sent while the harness's model call is held, to the harness process alone
    /// or to its whole process group.
    Signal(&'static str, SignalTarget),
    /// Codex without `--dangerously-bypass-hook-trust`: roster's hooks are installed but
    /// not trusted, so Codex must skip them (what `roster-hooks status` reports).
    HooksUntrusted,
}

/// Who gets the signal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SignalTarget {
    /// The recorded owner (the outermost harness process) alone.
    Owner,
    /// The harness's process group (a closed terminal, `timeout`, a supervisor).
    Group,
}

/// The signals every harness gets, to its owner alone and to its group.
const ENDING_SIGNALS: [&str; 4] = ["TERM", "HUP", "INT", "KILL"];

impl SessionEnding {
    fn describe(self) -> String {
        match self {
            SessionEnding::TurnCompletes => "own exit".to_owned(),
            SessionEnding::Signal(signal, SignalTarget::Owner) => format!("SIG{signal} to owner"),
            SessionEnding::Signal(signal, SignalTarget::Group) => format!("SIG{signal} to group"),
            SessionEnding::HooksUntrusted => "hooks untrusted".to_owned(),
        }
    }

    fn directory_label(self) -> String {
        match self {
            SessionEnding::TurnCompletes => "exit".to_owned(),
            SessionEnding::Signal(signal, SignalTarget::Owner) => format!("{}-owner", signal.to_lowercase()),
            SessionEnding::Signal(signal, SignalTarget::Group) => format!("{}-group", signal.to_lowercase()),
            SessionEnding::HooksUntrusted => "untrusted".to_owned(),
        }
    }
}

/// What one session showed.
struct SessionReport {
    lines: Vec<String>,
    failures: Vec<String>,
    /// Failures of the session's start checks (record, payload, owner), kept apart so the
    /// table can show the start as a case of its own.
    start_failures: Vec<String>,
    /// Why the case could not run here, when it could not.
    not_run: Option<String>,
    /// The hook runs the shim saw.
    hook_calls: Vec<HookCall>,
}

impl SessionReport {
    fn new() -> SessionReport {
        SessionReport {
            lines: Vec::new(),
            failures: Vec::new(),
            start_failures: Vec::new(),
            not_run: None,
            hook_calls: Vec::new(),
        }
    }

    fn note(&mut self, line: impl Into<String>) {
        self.lines.push(line.into());
    }

    fn fail(&mut self, failure: impl Into<String>) {
        let failure = failure.into();
        self.lines.push(format!("FAILED: {failure}"));
        self.failures.push(failure);
    }

    fn fail_start(&mut self, failure: impl Into<String>) {
        let failure = failure.into();
        self.lines.push(format!("FAILED (start): {failure}"));
        self.start_failures.push(failure);
    }
}

/// The word that selects the state proof.
const STATES_WORD: &str = "states";

/// The word that selects the adopted-session proof.
const ADOPTED_WORD: &str = "adopted";

/// The word that selects the send proof.
const SEND_WORD: &str = "send";

/// The word that selects the resume proof.
const RESUME_WORD: &str = "resume";

/// What a run runs: everything when no proof is named, else the proofs named.
#[derive(Clone, Copy, Debug)]
struct Selection {
    /// The session cases (start, endings, chains, hook latency).
    session_cases: bool,
    states: bool,
    adopted: bool,
    send: bool,
    resume: bool,
}

impl Selection {
    fn from_words(words: &[String]) -> Selection {
        let named = |word: &str| words.iter().any(|argument| argument == word);
        let (states, adopted, send) = (named(STATES_WORD), named(ADOPTED_WORD), named(SEND_WORD));
        let resume = named(RESUME_WORD);
        let everything = !states && !adopted && !send && !resume;
        Selection {
            session_cases: everything,
            states: everything || states,
            adopted: everything || adopted,
            send: everything || send,
            resume: everything || resume,
        }
    }
}

fn main() -> anyhow::Result<()> {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let selection = Selection::from_words(&arguments);
    let harness = arguments
        .iter()
        .find(|argument| ![STATES_WORD, ADOPTED_WORD, SEND_WORD, RESUME_WORD].contains(&argument.as_str()));
    run(harness.map(String::as_str), selection)
}

/// Runs the e2e for one harness (by roster name or command name) or for all of them, the
/// proofs `selection` names.
fn run(harness: Option<&str>, selection: Selection) -> anyhow::Result<()> {
    let harnesses: Vec<RealHarness> = match harness {
        Some(name) => vec![RealHarness::named(name).with_context(|| {
            let names: Vec<&str> = REAL_HARNESSES.iter().map(|harness| harness.name).collect();
            format!("unknown harness {name:?}; use one of {}", names.join(", "))
        })?],
        // The adopted-session proof alone has nothing to run with the other harnesses.
        None if selection.adopted
            && !selection.states
            && !selection.send
            && !selection.resume
            && !selection.session_cases =>
        {
            REAL_HARNESSES
                .into_iter()
                .filter(|harness| adopted::ADOPTING_HARNESSES.contains(&harness.name))
                .collect()
        }
        None => REAL_HARNESSES.to_vec(),
    };
    let node =
        find_on_path("node").context("node is not on PATH: the harnesses are npm packages run by node")?;
    let npm = find_on_path("npm")
        .context("npm is not on PATH: the harnesses are installed from the npm registry")?;
    let binaries = build_binaries(Profile::Debug, &tests::workspace::ROSTER_BINARIES)?;
    let target = target_directory()?;
    let run_started = Instant::now();

    let mut table = CaseTable::default();
    let mut proofs = Vec::new();
    let mut adopted_proofs = Vec::new();
    let mut send_proofs = Vec::new();
    let mut warnings = Vec::new();
    for harness in harnesses {
        let prefix =
            target.join("e2e").join("npm").join(format!("{}-{}", harness.name, harness.pinned_version));
        let installed = match install_harness(&npm, &node, &prefix, harness) {
            Ok(installed) => installed,
            Err(error) => {
                println!("\n=== {} {}: install FAILED: {error:#}", harness.name, harness.pinned_version);
                table.push(harness.name, "install", CaseResult::Failed(format!("{error:#}")), String::new());
                continue;
            }
        };
        println!(
            "\n=== {} {} (pinned {}; {})",
            harness.name,
            installed.running_version,
            harness.pinned_version,
            installed.executable.display()
        );
        if let Some(warning) = &installed.engine_warning {
            let warning = format!("{}: {warning}", harness.name);
            println!("\n!!! WARNING: {warning}\n");
            warnings.push(warning);
        }
        if let Some(note) = harness.trust_note(&installed.help) {
            println!("    {note}");
        }
        if selection.session_cases {
            run_harness_cases(&installed, &binaries, &node, &mut table);
        }
        if selection.states {
            println!("--- {}: states", harness.name);
            let proof = states::prove(&installed, &binaries, &node);
            proof.lines.iter().for_each(|line| println!("    {line}"));
            let (result, latency) = state_proof_verdict(&proof);
            table.push(harness.name, STATE_CASE, result, latency);
            proofs.push(proof);
        }
        // Only Claude Code and Copilot CLI mark their own sessions: for another harness the
        // proof is listed as not run when it was asked for by name, and left out of a whole
        // run.
        let asked_for_adopted = selection.adopted && !selection.session_cases;
        if selection.adopted && (adopted::ADOPTING_HARNESSES.contains(&harness.name) || asked_for_adopted) {
            println!("--- {}: adopted (no roster hook installed)", harness.name);
            let proof = adopted::prove(&installed, &binaries, &node);
            proof.lines.iter().for_each(|line| println!("    {line}"));
            for (part, result, latency) in &proof.parts {
                let latency = if latency.is_empty() { String::new() } else { format!("watch: {latency}") };
                table.push(harness.name, part, result.clone(), latency);
            }
            warnings.extend(proof.warnings.iter().map(|warning| format!("{}: {warning}", harness.name)));
            adopted_proofs.push((harness.name, proof));
        }
        if selection.send {
            println!("--- {}: send", harness.name);
            let proof = send::prove(&installed, &binaries, &node);
            proof.lines.iter().for_each(|line| println!("    {line}"));
            for (step, result, timing) in &proof.steps {
                let result = match result {
                    send::SendResult::Passed(_) => CaseResult::Passed,
                    send::SendResult::Failed(why) => CaseResult::Failed(why.clone()),
                    send::SendResult::NotRun(why) => CaseResult::NotRun(why.clone()),
                };
                let (result, latency) = match send_hook_failures(harness.name, &proof.hook_calls) {
                    Some(why) if matches!(result, CaseResult::Passed) => (CaseResult::Failed(why), timing),
                    _ => (result, timing),
                };
                table.push(harness.name, step.label(), result, latency.chars().take(62).collect());
            }
            send_proofs.push(proof);
        }
        if selection.resume {
            println!("--- {}: resume", harness.name);
            let proof = resume::prove(&installed, &binaries, &node);
            proof.lines.iter().for_each(|line| println!("    {line}"));
            let result = match (&proof.failure, &proof.not_run) {
                (Some(why), _) => CaseResult::Failed(why.clone()),
                (None, Some(why)) => CaseResult::NotRun(why.clone()),
                (None, None) => CaseResult::Passed,
            };
            table.push(harness.name, "resume after SIGKILL", result, String::new());
        }
    }
    println!("\n=== results ({:.0} s)", run_started.elapsed().as_secs_f64());
    table.print();
    if !proofs.is_empty() {
        println!("\n=== session states, as roster-list showed them while each TUI ran");
        states::print_table(&proofs);
    }
    for (name, proof) in &adopted_proofs {
        print_adopted_summary(name, proof);
    }
    if !send_proofs.is_empty() {
        println!("\n=== roster-send, delivered through each harness's state hook to its model");
        send::print_table(&send_proofs);
    }
    for warning in &warnings {
        println!("\n!!! WARNING: {warning}");
    }
    let failed = table.failed();
    if !failed.is_empty() {
        bail!("e2e failed: {}", failed.join("; "));
    }
    Ok(())
}

/// What the adopted-session proof measured and saw of Claude Code's own file.
fn print_adopted_summary(harness: &str, proof: &adopted::AdoptedProof) {
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
    if proof.mismatches.is_empty() {
        if harness == adopted_copilot::COPILOT {
            println!(
                "    the files are as roster assumes (inuse.<pid>.lock naming the pid that holds the flock \
                 on inuse.<pid>.hold, workspace.yaml's id and cwd; kept after SIGKILL, removed at the end)"
            );
        } else {
            println!(
                "    the file is as roster assumes (name, keys, procStart, pidDomain, status, modes), and no \
                 read caught it half-written"
            );
        }
    }
    for mismatch in &proof.mismatches {
        println!("    differs from what roster assumes: {mismatch}");
    }
}

/// A send proof's state hook runs that failed or were slow: exit 2 is Claude Code's
/// turn-end delivery (the text on stderr), every other status but 0 a failure.
fn send_hook_failures(harness: &str, calls: &[HookCall]) -> Option<String> {
    let failures: Vec<String> = calls
        .iter()
        .filter(|call| call.kind == HookKind::State)
        .filter_map(|call| {
            let event = call.event.as_deref().unwrap_or("?");
            let delivering_exit = harness == "claude-code" && event == "Stop" && call.exit_status == 2;
            if call.exit_status != 0 && !delivering_exit {
                Some(format!("the {event} state hook exited {}", call.exit_status))
            } else if call.latency > STATE_BUDGET {
                Some(format!(
                    "a state hook over {}: {}",
                    milliseconds(STATE_BUDGET),
                    describe_slow_call(call)
                ))
            } else {
                None
            }
        })
        .collect();
    (!failures.is_empty()).then(|| failures.join("; "))
}

/// The state proof's case in the table.
const STATE_CASE: &str = "states: working, idle, waiting";

/// The state proof as one case: failed when a step failed or a state hook was slow or
/// failed, not run when no step could be shown.
fn state_proof_verdict(proof: &states::StateProof) -> (CaseResult, String) {
    let mut failures = proof.failures();
    let state_calls: Vec<&HookCall> =
        proof.hook_calls.iter().filter(|call| call.kind == HookKind::State).collect();
    for call in &state_calls {
        let event = call.event.as_deref().unwrap_or("?");
        if call.exit_status != 0 {
            failures.push(format!("the {event} state hook exited {}", call.exit_status));
        }
        if call.latency > STATE_BUDGET {
            failures.push(format!(
                "a state hook over {}: {}",
                milliseconds(STATE_BUDGET),
                describe_slow_call(call)
            ));
        }
    }
    let latency = worst(&proof.hook_calls, HookKind::State)
        .map(|state| format!("state {} / {}", milliseconds(state), milliseconds(STATE_BUDGET)))
        .unwrap_or_default();
    let result = if !failures.is_empty() {
        CaseResult::Failed(failures.join("; "))
    } else if !proof.proved_anything() {
        let why = proof.steps.iter().find_map(|(_, result)| match result {
            states::StepResult::Unknown(why) => Some(why.clone()),
            _ => None,
        });
        CaseResult::NotRun(why.unwrap_or_else(|| "no step ran".to_owned()))
    } else {
        CaseResult::Passed
    };
    (result, latency)
}

/// The endings a harness is put through.
fn endings_for(installed: &InstalledHarness) -> Vec<SessionEnding> {
    let mut endings = vec![SessionEnding::TurnCompletes];
    for target in [SignalTarget::Owner, SignalTarget::Group] {
        for signal in ENDING_SIGNALS {
            endings.push(SessionEnding::Signal(signal, target));
        }
    }
    if installed.harness.name == "codex" && installed.help.contains(CODEX_BYPASS_HOOK_TRUST) {
        endings.push(SessionEnding::HooksUntrusted);
    }
    endings
}

/// Runs every case of one installed harness into `table`.
fn run_harness_cases(installed: &InstalledHarness, binaries: &Path, node: &Path, table: &mut CaseTable) {
    let name = installed.harness.name;
    let mut start_failures = Vec::new();
    let mut start_sessions = 0;
    let mut all_calls = Vec::new();
    let mut rows = Vec::new();
    for ending in endings_for(installed) {
        println!("--- {name}: {}", ending.describe());
        let report = run_session(installed, ending, binaries, node).unwrap_or_else(|error| {
            let mut report = SessionReport::new();
            report.fail(format!("{error:#}"));
            report
        });
        for line in &report.lines {
            println!("    {line}");
        }
        if ending != SessionEnding::HooksUntrusted && report.not_run.is_none() {
            start_sessions += 1;
            start_failures.extend(
                report.start_failures.iter().map(|failure| format!("{}: {failure}", ending.describe())),
            );
        }
        let result = match (&report.not_run, report.failures.first()) {
            (_, Some(_)) => CaseResult::Failed(report.failures.join("; ")),
            (Some(why), None) => CaseResult::NotRun(why.clone()),
            (None, None) => CaseResult::Passed,
        };
        rows.push((ending.describe(), result, latency_summary(&report.hook_calls)));
        all_calls.extend(report.hook_calls);
    }
    let start_result = match (start_sessions, start_failures.first()) {
        (0, _) => CaseResult::NotRun("no session reached its start".to_owned()),
        (_, Some(_)) => CaseResult::Failed(start_failures.join("; ")),
        (_, None) => CaseResult::Passed,
    };
    let start_label = format!("start (checked in {start_sessions} sessions)");
    table.push(name, &start_label, start_result, String::new());
    let (clear_label, clear_result) = clear_resume_case(installed, binaries, node);
    table.push(name, &clear_label, clear_result.0, clear_result.1);
    for (label, result, latency) in rows {
        table.push(name, &label, result, latency);
    }
    if chains::CHAIN_HARNESSES.contains(&name) {
        println!("--- {name}: {}", chains::CASE);
        let report = chains::loader_killed_alone(installed, binaries, node);
        report.lines.iter().for_each(|line| println!("    {line}"));
        let result = if report.failures.is_empty() {
            CaseResult::Passed
        } else {
            CaseResult::Failed(report.failures.join("; "))
        };
        table.push(name, chains::CASE, result, String::new());
    }
    let (result, latency) = latency_verdict(installed.harness, &all_calls);
    table.push(name, "hook latency (worst of all runs)", result, latency);
}

/// The clear/resume case: a new session inside the same harness process must refresh the
/// record, same owner. Only where the harness can be driven to it without a person.
fn clear_resume_case(
    installed: &InstalledHarness,
    binaries: &Path,
    node: &Path,
) -> (String, (CaseResult, String)) {
    let label = "clear/resume, same process".to_owned();
    let why = match installed.harness.name {
        "opencode" => {
            println!("--- opencode: {label}");
            let report =
                opencode_sessions::second_session(installed, binaries, node).unwrap_or_else(|error| {
                    let mut report = SessionReport::new();
                    report.fail(format!("{error:#}"));
                    report
                });
            report.lines.iter().for_each(|line| println!("    {line}"));
            let result = match report.failures.first() {
                Some(_) => CaseResult::Failed(report.failures.join("; ")),
                None => CaseResult::Passed,
            };
            return (label, (result, latency_summary(&report.hook_calls)));
        }
        "claude-code" => "/clear needs the interactive TUI, which only the state proof drives so far",
        "codex" => {
            "`codex exec resume` starts a new process (a new owner); /new needs the interactive TUI, which \
             only the state proof drives so far"
        }
        "gemini-cli" => {
            "/clear and /resume need the interactive TUI, which only the state proof drives so far"
        }
        "copilot" => "/clear needs the interactive TUI, which only the state proof drives so far",
        "amp" => "Amp's threads need ampcode.com; `amp plugins exec` sends one event per process",
        _ => "no scripted way known",
    };
    (label, (CaseResult::NotRun(why.to_owned()), String::new()))
}

/// The result of one case.
#[derive(Clone, Debug)]
enum CaseResult {
    Passed,
    Failed(String),
    NotRun(String),
}

/// harness × case × result × hook latency.
#[derive(Default)]
struct CaseTable {
    rows: Vec<(String, String, CaseResult, String)>,
}

impl CaseTable {
    fn push(&mut self, harness: &str, case: &str, result: CaseResult, latency: String) {
        self.rows.push((harness.to_owned(), case.to_owned(), result, latency));
    }

    fn print(&self) {
        println!("{:<12} {:<34} {:<8} {:<62} detail", "HARNESS", "CASE", "RESULT", "HOOK LATENCY");
        for (harness, case, result, latency) in &self.rows {
            let (word, detail) = match result {
                CaseResult::Passed => ("ok", String::new()),
                CaseResult::Failed(why) => ("FAILED", why.clone()),
                CaseResult::NotRun(why) => ("not run", why.clone()),
            };
            let detail: String = detail.lines().next().unwrap_or_default().chars().take(400).collect();
            println!("{harness:<12} {case:<34} {word:<8} {latency:<62} {detail}");
        }
    }

    fn failed(&self) -> Vec<String> {
        self.rows
            .iter()
            .filter(|(_, _, result, _)| matches!(result, CaseResult::Failed(_)))
            .map(|(harness, case, _, _)| format!("{harness} {case}"))
            .collect()
    }
}

/// SessionStart's bound in roster's hook mode (`roster-register --hook`).
const SESSION_START_BUDGET: Duration = Duration::from_millis(1000);

/// SessionEnd's bound in roster's hook mode (`roster-prune --current --hook`).
const SESSION_END_BUDGET: Duration = Duration::from_millis(500);

/// A state hook's bound (`roster-state --hook`).
const STATE_BUDGET: Duration = Duration::from_millis(500);

/// The harness's own budget for a session-end hook, where it has a short one.
fn harness_end_budget(harness: &str) -> Option<Duration> {
    match harness {
        "codex" => Some(Duration::from_millis(1000)),
        "claude-code" => Some(Duration::from_millis(1500)),
        _ => None,
    }
}

fn worst(calls: &[HookCall], kind: HookKind) -> Option<Duration> {
    calls.iter().filter(|call| call.kind == kind).map(|call| call.latency).max()
}

fn milliseconds(duration: Duration) -> String {
    format!("{:.0} ms", duration.as_secs_f64() * 1000.0)
}

fn latency_summary(calls: &[HookCall]) -> String {
    let part = |label: &str, latency: Option<Duration>| {
        latency.map(|latency| format!("{label} {}", milliseconds(latency)))
    };
    [
        part("start", worst(calls, HookKind::SessionStart)),
        part("end", worst(calls, HookKind::SessionEnd)),
        part("state", worst(calls, HookKind::State)),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join(", ")
}

/// A hook run over its budget: its event, how long, and how much of that the harness took
/// to close the payload.
fn describe_slow_call(call: &HookCall) -> String {
    format!(
        "{} {} ({} of it before the payload's end)",
        call.event.as_deref().unwrap_or(&call.tool),
        milliseconds(call.latency),
        milliseconds(call.payload_wait)
    )
}

/// The worst session-start, session-end and state hook latency of a harness against its
/// budgets.
fn latency_verdict(harness: RealHarness, calls: &[HookCall]) -> (CaseResult, String) {
    let start = worst(calls, HookKind::SessionStart);
    let end = worst(calls, HookKind::SessionEnd);
    let state = worst(calls, HookKind::State);
    let end_budget =
        harness_end_budget(harness.name).map_or(SESSION_END_BUDGET, |own| own.min(SESSION_END_BUDGET));
    let mut text = match start {
        Some(start) => format!("start {} / {}", milliseconds(start), milliseconds(SESSION_START_BUDGET)),
        None => "start -".to_owned(),
    };
    match end {
        Some(end) => text.push_str(&format!(", end {} / {}", milliseconds(end), milliseconds(end_budget))),
        None => text.push_str(", end - (no end hook ran)"),
    }
    if let Some(state) = state {
        text.push_str(&format!(", state {} / {}", milliseconds(state), milliseconds(STATE_BUDGET)));
    }
    let mut over = Vec::new();
    if start.is_some_and(|start| start > SESSION_START_BUDGET) {
        over.push("a session-start hook took longer than roster's 1 s bound".to_owned());
    }
    if end.is_some_and(|end| end > end_budget) {
        over.push(format!("a session-end hook took longer than {}", milliseconds(end_budget)));
    }
    if state.is_some_and(|state| state > STATE_BUDGET) {
        let slow: Vec<String> = calls
            .iter()
            .filter(|call| call.kind == HookKind::State && call.latency > STATE_BUDGET)
            .map(describe_slow_call)
            .collect();
        over.push(format!(
            "a state hook took longer than roster's {}: {}",
            milliseconds(STATE_BUDGET),
            slow.join(", ")
        ));
    }
    let failed_calls: Vec<String> = calls
        .iter()
        .filter(|call| call.exit_status != 0)
        .map(|call| match &call.event {
            Some(event) => format!("{} ({event}) exited {}", call.tool, call.exit_status),
            None => format!("{} exited {}", call.tool, call.exit_status),
        })
        .collect();
    over.extend(failed_calls);
    let own = harness_end_budget(harness.name)
        .map(|own| format!(" ({} allows session-end hooks {})", harness.name, milliseconds(own)))
        .unwrap_or_default();
    let result = if calls.is_empty() {
        CaseResult::NotRun("no hook ran".to_owned())
    } else if over.is_empty() {
        CaseResult::Passed
    } else {
        CaseResult::Failed(over.join("; "))
    };
    (
        match result {
            CaseResult::Passed => CaseResult::Passed,
            CaseResult::Failed(why) => CaseResult::Failed(format!("{why}{own}")),
            not_run => not_run,
        },
        text,
    )
}

/// Installs `harness` at its pinned version under `prefix` with npm, unless an earlier run
/// did; delete the prefix to reinstall. Says which version runs, and whether the package's
/// node engine excludes the node here.
fn install_harness(
    npm: &Path,
    node: &Path,
    prefix: &Path,
    harness: RealHarness,
) -> anyhow::Result<InstalledHarness> {
    let executable = prefix.join("node_modules").join(".bin").join(harness.command);
    let spec = format!("{}@{}", harness.package, harness.pinned_version);
    if executable.exists() {
        eprintln!("using {spec} installed under {} (delete it to reinstall)", prefix.display());
    } else {
        fs::create_dir_all(prefix)?;
        eprintln!("installing {spec} from npm under {} (this can take minutes)", prefix.display());
        let status = Command::new(npm)
            .current_dir(prefix)
            .args(["install", "--prefix"])
            .arg(prefix)
            .args(["--no-audit", "--no-fund", "--loglevel=error", &spec])
            .status()
            .context("running npm install")?;
        ensure!(status.success(), "npm install {spec} failed ({status})");
        ensure!(executable.exists(), "npm installed {spec} but not {}", executable.display());
    }
    let manifest = prefix.join("node_modules").join(harness.package).join("package.json");
    let manifest: Value = serde_json::from_slice(
        &fs::read(&manifest).with_context(|| format!("reading {}", manifest.display()))?,
    )
    .context("parsing the package's package.json")?;
    let version = manifest["version"].as_str().context("package.json has no version")?.to_owned();
    ensure!(
        version == harness.pinned_version,
        "{} holds {} {version}, not the pinned {}; delete it to reinstall",
        prefix.display(),
        harness.package,
        harness.pinned_version
    );
    let help_arguments: &[&str] = if harness.name == "codex" { &["exec", "--help"] } else { &["--help"] };
    let help = command_text(&executable, help_arguments);
    let reported = command_text(&executable, &["--version"]);
    let running_version = reported
        .split(|character: char| character.is_whitespace())
        .find(|word| word.contains(harness.pinned_version))
        .map(|_| harness.pinned_version.to_owned())
        .unwrap_or_else(|| reported.lines().next().unwrap_or("unknown").trim().to_owned());
    ensure!(
        running_version == harness.pinned_version,
        "the pinned {spec} is installed but `{} --version` says {reported:?}",
        harness.command
    );
    let node_version = command_text(node, &["--version"]).trim().to_owned();
    let engine_warning = manifest["engines"]["node"].as_str().and_then(|range| {
        let satisfied = node_satisfies(&node_version, range)?;
        (!satisfied).then(|| {
            format!(
                "{spec} asks for node {range}, this machine has node {node_version}: npm installed the pinned \
                 version anyway (EBADENGINE) and {} {running_version} is what ran (its launcher does not need \
                 node). An unpinned `npm install {}` here picks an older release that fits node {node_version}",
                harness.command, harness.package
            )
        })
    });
    Ok(InstalledHarness {
        harness,
        executable,
        prefix: prefix.to_path_buf(),
        running_version,
        engine_warning,
        help,
    })
}

/// Stdout and stderr of a short command, empty when it cannot run.
fn command_text(program: &Path, arguments: &[&str]) -> String {
    Command::new(program)
        .args(arguments)
        .stdin(Stdio::null())
        .output()
        .map(|output| {
            format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
        })
        .unwrap_or_default()
}

/// Whether node `version` (`v20.20.2`) satisfies `range` when it has the one form the
/// harnesses use (`>=22.0.0`, `>=18`); `None` for any other form, which is not judged.
fn node_satisfies(version: &str, range: &str) -> Option<bool> {
    let parse = |text: &str| -> Option<Vec<u64>> {
        text.trim().trim_start_matches('v').split('.').map(|part| part.parse().ok()).collect()
    };
    let have = parse(version)?;
    let want = parse(range.trim().strip_prefix(">=")?)?;
    Some(have >= want)
}

/// A temporary world for one session: HOME, a project directory, and the roster directory
/// the installed hooks use by default (`~/.local/state/roster`).
struct SessionWorld {
    root: PathBuf,
    home: PathBuf,
    project: PathBuf,
    roster: PathBuf,
}

impl SessionWorld {
    /// Under the system temp directory, never inside this repository: the harnesses read
    /// instructions and settings from every parent directory of their project.
    fn create(harness: &str, label: &str) -> anyhow::Result<SessionWorld> {
        let root = std::env::temp_dir().join(format!("roster-e2e-{harness}-{label}-{}", std::process::id()));
        if root.exists() {
            fs::remove_dir_all(&root).with_context(|| format!("clearing {}", root.display()))?;
        }
        let home = root.join("home");
        let project = home.join("src").join("app");
        fs::create_dir_all(&project).with_context(|| format!("creating {}", project.display()))?;
        let root = fs::canonicalize(&root)?;
        let home = root.join("home");
        let project = home.join("src").join("app");
        let roster = home.join(".local").join("state").join("roster");
        Ok(SessionWorld { root, home, project, roster })
    }

    /// The record of owner `pid`: `sessions/<pid>@<world>.json` (an older roster's
    /// `<pid>.json` too); the world is always this machine's here.
    fn record(&self, pid: u32) -> Option<Value> {
        let Ok(entries) = fs::read_dir(self.roster.join("sessions")) else { return None };
        let path = entries
            .filter_map(|entry| entry.ok())
            .find(|entry| record_file_pid(&entry.file_name().to_string_lossy()) == Some(pid))?
            .path();
        serde_json::from_slice(&fs::read(path).ok()?).ok()
    }

    fn record_pids(&self) -> Vec<u32> {
        let Ok(entries) = fs::read_dir(self.roster.join("sessions")) else { return Vec::new() };
        entries
            .filter_map(|entry| entry.ok())
            .filter_map(|entry| record_file_pid(&entry.file_name().to_string_lossy()))
            .collect()
    }

    fn hook_errors(&self) -> Vec<String> {
        fs::read_to_string(self.roster.join("hook-errors.log"))
            .map(|text| text.lines().map(str::to_owned).collect())
            .unwrap_or_default()
    }

    /// Where a harness started by `spawn_harness` writes its output.
    fn harness_output(&self) -> PathBuf {
        self.root.join("harness-output.txt")
    }

    /// Starts the installed harness in this world (its project directory,
    /// the world's environment and the harness's own, a process group of
    /// its own), its output going to `harness_output`.
    fn spawn_harness(
        &self,
        installed: &InstalledHarness,
        arguments: &[String],
        node: &Path,
        model_base_url: &str,
    ) -> anyhow::Result<std::process::Child> {
        let output = fs::File::create(self.harness_output())?;
        Command::new(&installed.executable)
            .args(arguments)
            .env_clear()
            .envs(self.base_environment(node))
            .envs(installed.harness.environment(model_base_url))
            .current_dir(&self.project)
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(output.try_clone()?)
            .stderr(output)
            .spawn()
            .with_context(|| format!("starting {} {}", installed.executable.display(), arguments.join(" ")))
    }

    /// The environment every process of the world starts from: nothing of this process's
    /// own (which may itself run inside a harness) but PATH, HOME and a plain locale.
    fn base_environment(&self, node: &Path) -> Vec<(String, String)> {
        let node_directory =
            node.parent().map(|directory| directory.display().to_string()).unwrap_or_default();
        vec![
            ("PATH".to_owned(), format!("{node_directory}:/usr/local/bin:/usr/bin:/bin")),
            ("HOME".to_owned(), self.home.display().to_string()),
            ("LANG".to_owned(), "C.UTF-8".to_owned()),
            ("TERM".to_owned(), "dumb".to_owned()),
            ("NO_COLOR".to_owned(), "1".to_owned()),
        ]
    }

    fn roster_tool(&self, binaries: &Path, tool: &str, node: &Path) -> Command {
        let mut command = Command::new(binaries.join(tool));
        command.env_clear().envs(self.base_environment(node)).current_dir(&self.project).stdin(Stdio::null());
        command
    }
}

/// One session of `installed`, ended as `ending` says.
fn run_session(
    installed: &InstalledHarness,
    ending: SessionEnding,
    binaries: &Path,
    node: &Path,
) -> anyhow::Result<SessionReport> {
    let harness = installed.harness;
    let world = SessionWorld::create(harness.name, &ending.directory_label())?;
    let mut report = SessionReport::new();
    let server = harness.api.map(FakeModelServer::start).transpose()?;
    let base_url = server.as_ref().map(FakeModelServer::base_url).unwrap_or_default();
    harness.prepare_home(&world.home, &base_url)?;
    let shim = HookShim::create(&world.root, binaries)?;
    install_hooks(&world, harness, &shim, binaries, node, &mut report)?;
    if ending == SessionEnding::HooksUntrusted {
        let status =
            world.roster_tool(binaries, "roster-hooks", node).args(["status", harness.name]).output()?;
        if !String::from_utf8_lossy(&status.stdout).contains("untrusted") {
            report.fail("roster-hooks status does not call the installed Codex hooks untrusted");
        }
    }

    let output_path = world.harness_output();
    let started = Instant::now();
    let mut arguments = harness.arguments(&installed.help);
    if ending == SessionEnding::HooksUntrusted {
        arguments.retain(|argument| argument != CODEX_BYPASS_HOOK_TRUST);
    }
    let mut child = world.spawn_harness(installed, &arguments, node, &base_url)?;
    let owner = child.id();
    let mut harness_group = ProcessGroup { leader: owner, child: Some(&mut child) };
    let mut processes = HarnessProcesses::new(owner, vec![installed.prefix.clone(), world.home.clone()]);

    let outcome = if ending == SessionEnding::HooksUntrusted {
        let server = server.as_ref().context("codex has a model server")?;
        examine_untrusted_session(&world, server, harness, &mut harness_group, &mut report)
    } else {
        let mut session = Session {
            world: &world,
            server: server.as_ref(),
            installed,
            group: &mut harness_group,
            processes: &mut processes,
            shim: &shim,
            binaries,
            node,
        };
        session.examine(ending, &mut report)
    };
    // Whatever happened, nothing of the harness may outlive its session here.
    harness_group.kill();
    for pid in processes.running_pids() {
        signal_process(pid, "KILL");
    }
    if let Some(server) = &server {
        server.open_gate();
    }
    if let Err(error) = outcome {
        report.fail(format!("{error:#}"));
    }
    report.hook_calls = shim.calls();
    if let Some(server) = &server {
        report.note(format!(
            "model server saw {} request(s), {} model call(s); harness ran {:.1} s",
            server.requests().len(),
            server.model_call_count(),
            started.elapsed().as_secs_f64()
        ));
    }
    if report.failures.is_empty() && report.start_failures.is_empty() {
        let _ = fs::remove_dir_all(&world.root);
    } else {
        let tail = last_lines(&output_path, 15);
        report.note(format!("kept {} for inspection; harness output ends with:", world.root.display()));
        for line in tail {
            report.note(format!("  | {line}"));
        }
    }
    Ok(report)
}

/// `roster-hooks install` for the harness, its hooks calling roster's tools through the shim.
fn install_hooks(
    world: &SessionWorld,
    harness: RealHarness,
    shim: &HookShim,
    binaries: &Path,
    node: &Path,
    report: &mut SessionReport,
) -> anyhow::Result<()> {
    let mut install = world.roster_tool(binaries, "roster-hooks", node);
    install.args(["install", harness.name, "--bin-dir"]).arg(&shim.bin_dir);
    if let Some(scope) = harness.install_scope() {
        install.args(["--scope", scope]);
    }
    let installation = install.output().context("running roster-hooks install")?;
    ensure!(
        installation.status.success(),
        "roster-hooks install {} failed: {}",
        harness.name,
        String::from_utf8_lossy(&installation.stderr).trim()
    );
    let status = world.roster_tool(binaries, "roster-hooks", node).args(["status", harness.name]).output()?;
    let status = String::from_utf8_lossy(&status.stdout).into_owned();
    for line in status.lines().filter(|line| line.contains("installed") || line.contains("untrusted")) {
        report.note(format!("roster-hooks status: {}", line.trim()));
    }
    Ok(())
}

/// The harness's process group, killed on request and reaped.
struct ProcessGroup<'a> {
    leader: u32,
    child: Option<&'a mut Child>,
}

impl ProcessGroup<'_> {
    fn signal(&self, signal: &str) {
        if let (Ok(leader), Ok(signal)) =
            (i32::try_from(self.leader), format!("SIG{signal}").parse::<Signal>())
        {
            let _ = nix::sys::signal::killpg(Pid::from_raw(leader), signal);
        }
    }

    fn try_wait(&mut self) -> Option<ExitStatus> {
        self.child.as_mut().and_then(|child| child.try_wait().ok().flatten())
    }

    fn kill(&mut self) {
        self.signal("KILL");
        if let Some(child) = self.child.take() {
            let _ = child.wait();
        }
    }
}

/// Sends `signal` (`TERM`, `HUP`, `INT`, `KILL`) to `pid` at once (no `kill` process in between).
fn signal_process(pid: u32, signal: &str) {
    if let (Ok(pid), Ok(signal)) = (i32::try_from(pid), format!("SIG{signal}").parse::<Signal>()) {
        let _ = nix::sys::signal::kill(Pid::from_raw(pid), signal);
    }
}

/// The list-and-prune rounds run mid-turn (the model call held), before the session is ended.
const MID_TURN_ROUNDS: u32 = 3;

/// How long a harness gets to end after a signal before its turn is answered.
const SIGNAL_GRACE: Duration = Duration::from_secs(10);

/// How long a harness gets to end after its turn is answered before it gets SIGTERM.
const TURN_GRACE: Duration = Duration::from_secs(60);

/// How soon after the harness's last process exits its record must be gone or dead.
const GONE_AFTER_LAST_PROCESS: Duration = Duration::from_secs(1);

/// One running session and everything needed to watch it.
struct Session<'a, 'b> {
    world: &'a SessionWorld,
    server: Option<&'a FakeModelServer>,
    installed: &'a InstalledHarness,
    group: &'a mut ProcessGroup<'b>,
    processes: &'a mut HarnessProcesses,
    shim: &'a HookShim,
    binaries: &'a Path,
    node: &'a Path,
}

impl Session<'_, '_> {
    fn tool_json(&self, tool: &str, arguments: &[&str]) -> anyhow::Result<Value> {
        let output = self.world.roster_tool(self.binaries, tool, self.node).args(arguments).output()?;
        ensure!(output.status.success(), "{tool} failed: {}", String::from_utf8_lossy(&output.stderr).trim());
        serde_json::from_slice(&output.stdout).with_context(|| format!("{tool} printed no JSON"))
    }

    /// The owner's row in `roster-list --all --json`, if any.
    fn owner_row(&self, owner: u32) -> anyhow::Result<Option<Value>> {
        let rows = self.tool_json("roster-list", &["--all", "--json"])?;
        Ok(rows.as_array().and_then(|rows| {
            rows.iter().find(|row| row["session_pid"].as_u64() == Some(u64::from(owner))).cloned()
        }))
    }

    fn examine(&mut self, ending: SessionEnding, report: &mut SessionReport) -> anyhow::Result<()> {
        let owner = self.group.leader;
        let harness = self.installed.harness;
        let started = Instant::now();
        // The session start: the record of the harness process appears (while its model
        // call is held at the fake server's gate, for the harnesses that have one).
        let record = loop {
            if let Some(record) = self.world.record(owner) {
                break record;
            }
            if let Some(status) = self.group.try_wait() {
                bail!(
                    "{} exited ({status}) without registering pid {owner}; records: {:?}; hook errors: {:?}",
                    harness.name,
                    self.world.record_pids(),
                    self.world.hook_errors()
                );
            }
            ensure!(
                started.elapsed() < REGISTRATION_DEADLINE,
                "no record for pid {owner} within {REGISTRATION_DEADLINE:?}; records: {:?} {}; hook errors: {:?}",
                self.world.record_pids(),
                self.world
                    .record_pids()
                    .iter()
                    .map(|pid| describe_process(*pid))
                    .collect::<Vec<_>>()
                    .join(", "),
                self.world.hook_errors()
            );
            std::thread::sleep(POLL_INTERVAL);
        };
        report.note(format!(
            "registered after {:.1} s: owner {owner} = {}",
            started.elapsed().as_secs_f64(),
            describe_process(owner)
        ));
        self.check_start(&record, owner, report)?;

        // The session end, once the harness is inside its turn (its model call held).
        if let Some(server) = self.server {
            wait_for_model_call(server, self.group, harness)?;
        }
        let Some(last_exit) = self.watch_until_last_exit(owner, ending, report)? else {
            return Ok(());
        };
        self.check_after_last_exit(owner, last_exit, report)?;
        let errors = self.world.hook_errors();
        if !errors.is_empty() {
            report.fail(format!("hook-errors.log: {errors:?}"));
        }
        Ok(())
    }

    fn open_gate(&self) {
        if let Some(server) = self.server {
            server.open_gate();
        }
    }

    /// The record against what the harness said: the payload's session id and cwd, the
    /// harness process as owner (its identity verified), alive in `roster-list`.
    fn check_start(&mut self, record: &Value, owner: u32, report: &mut SessionReport) -> anyhow::Result<()> {
        let harness = self.installed.harness;
        let text = |key: &str| record.get(key).and_then(Value::as_str).map(str::to_owned);
        if record["session_pid"].as_u64() != Some(u64::from(owner)) {
            report.fail_start(format!(
                "session_pid {} is not the harness process {owner}",
                record["session_pid"]
            ));
        }
        if text("harness").as_deref() != Some(harness.name) {
            report.fail_start(format!("harness {:?}, expected {}", text("harness"), harness.name));
        }
        if record["session_pid_verified"] != Value::Bool(true) {
            report.fail_start("session_pid_verified is not true");
        }
        let actual_ticks = process_start_ticks(owner);
        if actual_ticks.is_none() || record["start_ticks"].as_u64() != actual_ticks {
            report.fail_start(format!(
                "start_ticks {} is not the harness process's {actual_ticks:?}",
                record["start_ticks"]
            ));
        }
        let running = self.processes.running();
        if !running.iter().any(|process| process.starts_with(&format!("{owner} ")))
            && self.group.try_wait().is_none()
        {
            report.fail_start(format!(
                "the owner {owner} is not a process of the harness: {}",
                describe_process(owner)
            ));
        }
        if harness.exports_its_version
            && text("harness_version").as_deref() != Some(self.installed.running_version.as_str())
        {
            report.fail_start(format!(
                "harness_version {:?}, expected the running {}",
                text("harness_version"),
                self.installed.running_version
            ));
        }
        // The payload the hook got, as the shim kept it (its log line follows the tool's exit).
        let waited = Instant::now();
        let call = loop {
            if let Some(call) = self.shim.calls().into_iter().find(HookCall::is_session_start) {
                break Some(call);
            }
            if waited.elapsed() > Duration::from_secs(2) {
                break None;
            }
            std::thread::sleep(POLL_INTERVAL);
        };
        let Some(call) = call else {
            report.fail_start("the shim saw no session-start hook run");
            return Ok(());
        };
        let (payload_id, payload_cwd) = harness.payload_session(&call.payload);
        let expected_id =
            if harness.name == "amp" { Some(AMP_THREAD_ID.to_owned()) } else { payload_id.clone() };
        match (&expected_id, text("session_id")) {
            (Some(expected), Some(actual)) if *expected == actual => {}
            (expected, actual) => report.fail_start(format!(
                "record session id {actual:?}, the payload says {payload_id:?} (expected {expected:?})"
            )),
        }
        let same_directory = |left: &str, right: &str| {
            left == right
                || fs::canonicalize(left).ok().is_some_and(|left| fs::canonicalize(right).ok() == Some(left))
        };
        match (&payload_cwd, text("cwd")) {
            (Some(expected), Some(actual)) if same_directory(expected, &actual) => {}
            (expected, actual) => {
                report.fail_start(format!("record cwd {actual:?}, the payload says {expected:?}"));
            }
        }
        report.note(format!(
            "record = payload: session id {}, cwd {}; owner {owner} verified (start tick {}); chain {}",
            text("session_id").unwrap_or_default(),
            text("cwd").unwrap_or_default(),
            record["start_ticks"],
            record["chain"]
        ));
        if self.group.try_wait().is_none() && !self.processes.running().is_empty() {
            let liveness = self.owner_row(owner)?.map(|row| row["liveness"].clone());
            if liveness != Some(Value::from("alive")) {
                report.fail_start(format!("roster-list says {liveness:?} while the harness runs"));
            }
        }
        Ok(())
    }

    /// Watches the session mid-turn, ends it, and goes on until no process of the harness
    /// runs: every round lists and prunes, and the record must never be pruned or judged
    /// dead while one runs. A harness that does not end on a signal gets its turn answered,
    /// then SIGTERM, then SIGKILL. Returns when the last process was seen gone; `None` when
    /// the harness ended before the signal could be sent (the case did not run).
    fn watch_until_last_exit(
        &mut self,
        owner: u32,
        ending: SessionEnding,
        report: &mut SessionReport,
    ) -> anyhow::Result<Option<Instant>> {
        let watch_started = Instant::now();
        // Amp's session (one plugin event) holds no turn to watch: it is ended at once.
        let mid_turn_rounds = if self.server.is_some() { MID_TURN_ROUNDS } else { 0 };
        let mut ended_at = None;
        let mut rounds_before_end = 0;
        let mut gate_opened = ending == SessionEnding::TurnCompletes;
        let mut terminated = false;
        let mut rounds = 0;
        let mut hook_removed = None;
        let mut problems = Vec::new();
        let ended_at = loop {
            let _ = self.group.try_wait();
            let before = self.processes.running();
            if before.is_empty() {
                match (ended_at, ending) {
                    (Some(ended_at), _) => break ended_at,
                    (None, SessionEnding::Signal(..)) => {
                        report.not_run = Some(format!(
                            "{} ended before the signal could be sent (its session lasts one event)",
                            self.installed.harness.name
                        ));
                        return Ok(None);
                    }
                    (None, _) => {
                        report.note("the harness ended on its own before its turn was answered");
                        break watch_started;
                    }
                }
            }
            // Mid-turn rounds first (the model call held): prune must keep the live record.
            let ended_at = match ended_at {
                Some(ended_at) => ended_at,
                None if rounds_before_end >= mid_turn_rounds => {
                    match ending {
                        SessionEnding::TurnCompletes => self.open_gate(),
                        SessionEnding::Signal(signal, SignalTarget::Owner) => signal_process(owner, signal),
                        SessionEnding::Signal(signal, SignalTarget::Group) => self.group.signal(signal),
                        SessionEnding::HooksUntrusted => unreachable!("examined apart"),
                    }
                    *ended_at.insert(Instant::now())
                }
                None => {
                    rounds_before_end += 1;
                    watch_started
                }
            };
            let row = self.owner_row(owner)?;
            let pruned = self.tool_json("roster-prune", &["--json"])?;
            let pruned_owner = pruned["removed"].as_array().is_some_and(|rows| {
                rows.iter().any(|row| row["session_pid"].as_u64() == Some(u64::from(owner)))
            });
            let after = self.processes.running();
            rounds += 1;
            if !after.is_empty() {
                let still = after.join(", ");
                if pruned_owner {
                    problems.push(format!("roster-prune removed the record while {still} ran"));
                }
                match &row {
                    Some(row) if row["liveness"] == "dead" => problems.push(format!(
                        "roster-list judged it dead ({}) while {still} ran",
                        row["liveness_reason"].as_str().unwrap_or_default()
                    )),
                    None if hook_removed.is_none() => {
                        if self.shim.session_end_begun() {
                            hook_removed = Some(ended_at.elapsed());
                        } else if !pruned_owner {
                            problems.push(format!(
                                "the record vanished without a session-end hook while {still} ran"
                            ));
                        }
                    }
                    _ => {}
                }
            }
            if problems.len() > 3 {
                break ended_at;
            }
            let waited = ended_at.elapsed();
            if rounds_before_end < mid_turn_rounds {
                // not ended yet
            } else if !gate_opened && waited > SIGNAL_GRACE {
                report.note(format!(
                    "still running {} after the signal: {}; the turn is answered",
                    milliseconds(waited),
                    after.join(", ")
                ));
                self.open_gate();
                gate_opened = true;
            } else if !terminated && waited > SIGNAL_GRACE + TURN_GRACE {
                if ending == SessionEnding::TurnCompletes {
                    report.fail(format!(
                        "{} did not exit within {TURN_GRACE:?} of its turn's answer",
                        self.installed.harness.name
                    ));
                }
                report.note(format!("still running: {}; SIGTERM to each", after.join(", ")));
                for pid in self.processes.running_pids() {
                    signal_process(pid, "TERM");
                }
                terminated = true;
            } else if waited > SIGNAL_GRACE + TURN_GRACE + Duration::from_secs(10) {
                report.note(format!("ignored SIGTERM: {}; SIGKILL to each", after.join(", ")));
                for pid in self.processes.running_pids() {
                    signal_process(pid, "KILL");
                }
            }
            ensure!(
                waited < EXIT_DEADLINE,
                "{} did not end within {EXIT_DEADLINE:?}",
                self.installed.harness.name
            );
            std::thread::sleep(POLL_INTERVAL);
        };
        let last_exit = Instant::now();
        let status =
            self.group.try_wait().map(|status| status.to_string()).unwrap_or_else(|| "not reaped".to_owned());
        report.note(format!(
            "last harness process gone {} after the end began (owner: {status}); {rounds} list+prune rounds while it ran ({} after the end began); processes seen: {}",
            milliseconds(last_exit - ended_at),
            rounds - rounds_before_end,
            self.processes.all_seen().join(", ")
        ));
        if let Some(after) = hook_removed {
            report.note(format!(
                "the session-end hook removed the record {} after the end began",
                milliseconds(after)
            ));
        }
        for problem in problems {
            report.fail(problem);
        }
        Ok(Some(last_exit))
    }

    /// Within 1 s after the last process exits the record is gone or dead, and prune
    /// removes a dead one.
    fn check_after_last_exit(
        &mut self,
        owner: u32,
        last_exit: Instant,
        report: &mut SessionReport,
    ) -> anyhow::Result<()> {
        let verdict = loop {
            match self.owner_row(owner)? {
                None => break Some(("gone", last_exit.elapsed())),
                Some(row) if row["liveness"] == "dead" => break Some(("dead", last_exit.elapsed())),
                Some(_) if last_exit.elapsed() > GONE_AFTER_LAST_PROCESS * 5 => break None,
                Some(_) => std::thread::sleep(POLL_INTERVAL),
            }
        };
        match verdict {
            Some((state, after)) if after <= GONE_AFTER_LAST_PROCESS => {
                report.note(format!("record {state} {} after the last harness process", milliseconds(after)));
            }
            other => report.fail(format!(
                "the record was not gone or dead within {} after the last harness process exited ({other:?})",
                milliseconds(GONE_AFTER_LAST_PROCESS)
            )),
        }
        if self.world.record(owner).is_some() {
            reap_dead_record(self.world, owner, self.binaries, self.node, report)?;
        }
        Ok(())
    }
}

/// The owner pid a record's file name names: `<pid>@<world>.json`, or an older
/// roster's `<pid>.json`; `None` for any other file (a temporary file of a write).
fn record_file_pid(file_name: &str) -> Option<u32> {
    let stem = file_name.strip_suffix(".json")?;
    stem.split_once('@').map_or(stem, |(pid, _world)| pid).parse().ok()
}

fn process_start_ticks(pid: u32) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat[stat.rfind(')')? + 2..].split(' ').nth(19)?.parse().ok()
}

/// Codex with roster's hooks installed but not trusted: no record while its turn is held,
/// none after it ends, and nothing in the hook log: Codex skipped the hooks silently.
fn examine_untrusted_session(
    world: &SessionWorld,
    server: &FakeModelServer,
    harness: RealHarness,
    group: &mut ProcessGroup<'_>,
    report: &mut SessionReport,
) -> anyhow::Result<()> {
    wait_for_model_call(server, group, harness)?;
    let during = world.record_pids();
    server.open_gate();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = group.try_wait() {
            break status;
        }
        ensure!(started.elapsed() < EXIT_DEADLINE, "{} did not exit within {EXIT_DEADLINE:?}", harness.name);
        std::thread::sleep(POLL_INTERVAL);
    };
    report.note(format!("{} exited with {status}", harness.name));
    if during.is_empty() && world.record_pids().is_empty() && world.hook_errors().is_empty() {
        report.note("no record during or after the turn: Codex skipped the untrusted hooks, as status said");
    } else {
        report.fail(format!(
            "untrusted hooks ran: records during the turn {during:?}, after {:?}, hook errors {:?}",
            world.record_pids(),
            world.hook_errors()
        ));
    }
    Ok(())
}

/// Waits until the harness's first model call is held at the fake server's gate.
fn wait_for_model_call(
    server: &FakeModelServer,
    group: &mut ProcessGroup<'_>,
    harness: RealHarness,
) -> anyhow::Result<()> {
    let started = Instant::now();
    while server.model_call_count() == 0 {
        if let Some(status) = group.try_wait() {
            bail!(
                "{} exited ({status}) before calling the model; requests: {:?}",
                harness.name,
                server.requests()
            );
        }
        ensure!(
            started.elapsed() < REGISTRATION_DEADLINE,
            "{} made no model call within {REGISTRATION_DEADLINE:?}; requests: {:?}",
            harness.name,
            server.requests()
        );
        std::thread::sleep(POLL_INTERVAL);
    }
    Ok(())
}

/// A session that ended without a session-end hook leaves a record of a dead owner, which
/// `roster-prune` must remove.
fn reap_dead_record(
    world: &SessionWorld,
    owner: u32,
    binaries: &Path,
    node: &Path,
    report: &mut SessionReport,
) -> anyhow::Result<()> {
    let pruned = world.roster_tool(binaries, "roster-prune", node).arg("--json").output()?;
    ensure!(
        pruned.status.success(),
        "roster-prune failed: {}",
        String::from_utf8_lossy(&pruned.stderr).trim()
    );
    let pruned: Value =
        serde_json::from_slice(&pruned.stdout).context("roster-prune --json printed no JSON")?;
    let removed_owner = pruned["removed"].as_array().is_some_and(|rows| {
        rows.iter()
            .any(|row| row["session_pid"].as_u64() == Some(u64::from(owner)) && row["liveness"] == "dead")
    });
    if removed_owner && world.record(owner).is_none() {
        report.note("roster-prune removed it as dead");
    } else {
        report.fail(format!("roster-prune did not remove the dead record: {pruned}"));
    }
    Ok(())
}

/// `comm` and the first arguments of a process, for the report.
fn describe_process(pid: u32) -> String {
    let comm = fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    let argv: Vec<String> = fs::read(format!("/proc/{pid}/cmdline"))
        .unwrap_or_default()
        .split(|byte| *byte == 0)
        .filter(|argument| !argument.is_empty())
        .take(2)
        .map(|argument| String::from_utf8_lossy(argument).into_owned())
        .collect();
    format!("{} [{}]", comm.trim_end(), argv.join(" "))
}

fn last_lines(path: &Path, count: usize) -> Vec<String> {
    let text = fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<String> = text.lines().map(str::to_owned).collect();
    lines[lines.len().saturating_sub(count)..].to_vec()
}
