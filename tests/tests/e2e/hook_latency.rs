//! Hook latency against roster's budgets: the worst session-start, session-end and state
//! hook runs of a harness, and the verdicts of the state and send proofs' hook runs.

use std::time::Duration;

use super::cases::CaseResult;
use super::hook_shim::{HookCall, HookKind};
use super::real_harnesses::RealHarness;
use super::states;

/// SessionStart's bound in roster's hook mode (`roster-register --hook`).
pub(super) const SESSION_START_BUDGET: Duration = Duration::from_millis(1000);

/// SessionEnd's bound in roster's hook mode (`roster-prune --current --hook`).
pub(super) const SESSION_END_BUDGET: Duration = Duration::from_millis(500);

/// A state hook's bound (`roster-state --hook`).
pub(super) const STATE_BUDGET: Duration = Duration::from_millis(500);

/// The harness's own budget for a session-end hook, where it has a short one.
pub(super) fn harness_end_budget(harness: &str) -> Option<Duration> {
    match harness {
        "codex" => Some(Duration::from_millis(1000)),
        "claude-code" => Some(Duration::from_millis(1500)),
        _ => None,
    }
}

pub(super) fn worst(calls: &[HookCall], kind: HookKind) -> Option<Duration> {
    calls.iter().filter(|call| call.kind == kind).map(|call| call.latency).max()
}

pub(super) fn milliseconds(duration: Duration) -> String {
    format!("{:.0} ms", duration.as_secs_f64() * 1000.0)
}

pub(super) fn latency_summary(calls: &[HookCall]) -> String {
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
pub(super) fn describe_slow_call(call: &HookCall) -> String {
    format!(
        "{} {} ({} of it before the payload's end)",
        call.event.as_deref().unwrap_or(&call.tool),
        milliseconds(call.latency),
        milliseconds(call.payload_wait)
    )
}

/// The worst session-start, session-end and state hook latency of a harness against its
/// budgets.
pub(super) fn latency_verdict(harness: RealHarness, calls: &[HookCall]) -> (CaseResult, String) {
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

/// A send proof's state hook runs that failed or were slow: exit 2 is Claude Code's
/// turn-end delivery (the text on stderr), every other status but 0 a failure.
pub(super) fn send_hook_failures(harness: &str, calls: &[HookCall]) -> Option<String> {
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
pub(super) const STATE_CASE: &str = "states: working, idle, waiting";

/// The state proof as one case: failed when a step failed or a state hook was slow or
/// failed, not run when no step could be shown.
pub(super) fn state_proof_verdict(proof: &states::StateProof) -> (CaseResult, String) {
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
