//! The session cases of one harness: each ending (own exit, each signal to the owner or
//! its group, untrusted hooks), the start checks over all of them, clear/resume, the chain
//! case and the worst hook latency, as rows of the run's table.

use std::path::Path;

use super::cases::{CaseResult, CaseTable};
use super::hook_latency::{latency_summary, latency_verdict};
use super::real_harnesses::InstalledHarness;
use super::session_run::{SessionReport, run_session};
use super::{CODEX_BYPASS_HOOK_TRUST, chains, opencode_sessions};

/// How each session ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum SessionEnding {
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
pub(super) enum SignalTarget {
    /// The recorded owner (the outermost harness process) alone.
    Owner,
    /// The harness's process group (a closed terminal, `timeout`, a supervisor).
    Group,
}

/// The signals every harness gets, to its owner alone and to its group.
pub(super) const ENDING_SIGNALS: [&str; 4] = ["TERM", "HUP", "INT", "KILL"];

impl SessionEnding {
    pub(super) fn describe(self) -> String {
        match self {
            SessionEnding::TurnCompletes => "own exit".to_owned(),
            SessionEnding::Signal(signal, SignalTarget::Owner) => format!("SIG{signal} to owner"),
            SessionEnding::Signal(signal, SignalTarget::Group) => format!("SIG{signal} to group"),
            SessionEnding::HooksUntrusted => "hooks untrusted".to_owned(),
        }
    }

    pub(super) fn directory_label(self) -> String {
        match self {
            SessionEnding::TurnCompletes => "exit".to_owned(),
            SessionEnding::Signal(signal, SignalTarget::Owner) => format!("{}-owner", signal.to_lowercase()),
            SessionEnding::Signal(signal, SignalTarget::Group) => format!("{}-group", signal.to_lowercase()),
            SessionEnding::HooksUntrusted => "untrusted".to_owned(),
        }
    }
}

/// The endings a harness is put through.
pub(super) fn endings_for(installed: &InstalledHarness) -> Vec<SessionEnding> {
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
pub(super) fn run_harness_cases(
    installed: &InstalledHarness,
    binaries: &Path,
    node: &Path,
    table: &mut CaseTable,
) {
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
pub(super) fn clear_resume_case(
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
