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
mod adopted_claude_code;
mod adopted_claude_code_turns;
mod adopted_copilot;
mod cases;
mod chains;
mod copilot_session_state_log;
mod fake_model_server;
mod harness_processes;
mod hook_latency;
mod hook_shim;
mod install;
mod notify;
mod opencode_sessions;
mod real_harnesses;
mod resume;
mod roster_watch;
mod send;
mod send_message_text;
mod session_cases;
mod session_run;
mod session_world;
mod sessions_directory_log;
mod states;
mod terminal;
mod tui_recipes;

use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use cases::{CaseResult, CaseTable};
use hook_latency::{STATE_CASE, send_hook_failures, state_proof_verdict};
use install::install_harness;
use real_harnesses::{REAL_HARNESSES, RealHarness};
use session_cases::run_harness_cases;
use tests::find_on_path;
use tests::workspace::{Profile, build_binaries, target_directory};

// What the state proof reaches as `super::NAME`, from where each lives.
use harness_processes::signal_process;
use session_run::SessionReport;
use session_world::{SessionWorld, install_hooks, last_lines};

/// How long a harness may take to start and register (npm loaders unpack native binaries on
/// a first run; the machine may be loaded).
const REGISTRATION_DEADLINE: Duration = Duration::from_secs(180);

/// How long a harness may take to end once its turn is answered or it got SIGTERM.
const EXIT_DEADLINE: Duration = Duration::from_secs(180);

/// How often the run looks at the roster directory and the harness while it waits.
const POLL_INTERVAL: Duration = Duration::from_millis(20);

/// The Codex flag that runs hooks nobody trusted, for one invocation.
const CODEX_BYPASS_HOOK_TRUST: &str = "--dangerously-bypass-hook-trust";

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
            REAL_HARNESSES.into_iter().filter(|harness| adopted::adopts(harness.name)).collect()
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
        if selection.adopted && (adopted::adopts(harness.name) || asked_for_adopted) {
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
        adopted::print_summary(name, proof);
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
