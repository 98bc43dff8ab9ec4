//! Two sessions started by one wrapper that exported its own pid as
//! `ROSTER_SESSION_PID` (docs/contract.md §4.1): each harness process owns
//! its own session, so their registrations never rewrite one record, and a
//! message sent to one conversation never reaches its sibling.

use serde_json::Value;
use tests::{Sandbox, SessionShell};

use super::message_delivery::{send, session_hook, status};
use super::state_events::captured_payload;

/// A SessionStart of Claude Code for `session_id`, started afresh in `cwd`.
fn session_start(session_id: &str, cwd: &str) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "session_id": session_id,
        "cwd": cwd,
        "hook_event_name": "SessionStart",
        "source": "startup",
    }))
    .unwrap()
}

#[test]
fn two_sessions_under_one_exporting_wrapper_each_own_their_record_and_messages() {
    let sandbox = Sandbox::new();
    let project = sandbox.project();
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join(".roster.toml"), "[consent]\nauto_arm = true\n").unwrap();
    let cwd = project.to_string_lossy().into_owned();
    // The wrapper is this test process: an ancestor of both sessions.
    let wrapper = std::process::id().to_string();
    let exported = [("ROSTER_SESSION_PID", wrapper.as_str())];
    let mut first = SessionShell::spawn_named("claude", &exported);
    let mut second = SessionShell::spawn_named("claude", &exported);
    for (shell, session_id) in [(&mut first, "wrapped-1"), (&mut second, "wrapped-2")] {
        let command = sandbox.command_in_root("roster-register", &["--hook", "claude-code"]);
        let run = shell.run(&command, &session_start(session_id, &cwd), tests::COMMAND_DEADLINE);
        assert_eq!(run.code(), Some(0), "{}", run.stderr_text());
    }
    let rows = sandbox.run("roster-list", &["--json"]).json();
    let owner_of = |session_id: &str| {
        rows.as_array()
            .unwrap()
            .iter()
            .find(|row| row["session_id"] == session_id)
            .unwrap_or_else(|| panic!("no row for {session_id}: {rows:#}"))["session_pid"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(owner_of("wrapped-1"), u64::from(first.pid()), "{rows:#}");
    assert_eq!(owner_of("wrapped-2"), u64::from(second.pid()), "{rows:#}");
    assert!(
        !rows.as_array().unwrap().iter().any(|row| row["session_pid"].as_u64() == wrapper.parse().ok()),
        "the wrapper got a record of its own: {rows:#}"
    );

    let id = send(&sandbox, "wrapped-1", "ROSTER-TEST: for the first session only");
    let prompt = |session_id: &str| captured_payload("claude-code-2.1.332/UserPromptSubmit.json", session_id);
    let sibling =
        session_hook(&sandbox, &mut second, "claude-code", "UserPromptSubmit", &prompt("wrapped-2"));
    assert!(!sibling.stdout_text().contains("ROSTER-TEST"), "the sibling got it: {}", sibling.stdout_text());
    assert_eq!(status(&sandbox, &id)["status"], "pending");
    let own = session_hook(&sandbox, &mut first, "claude-code", "UserPromptSubmit", &prompt("wrapped-1"));
    let reply: Value = serde_json::from_slice(&own.stdout).unwrap_or(Value::Null);
    let context = reply["hookSpecificOutput"]["additionalContext"].as_str().unwrap_or_default();
    assert!(context.contains("ROSTER-TEST: for the first session only"), "{}", own.stdout_text());
    assert_eq!(status(&sandbox, &id)["status"], "delivered");

    // A message sent from inside the second session names the second
    // session, not the wrapper.
    let command =
        sandbox.command_in_root("roster-send", &["--json", "--to", "wrapped-1", "from the sibling"]);
    let sent = second.run(&command, b"", tests::COMMAND_DEADLINE);
    assert_eq!(sent.code(), Some(0), "{}", sent.stderr_text());
    let own = session_hook(&sandbox, &mut first, "claude-code", "UserPromptSubmit", &prompt("wrapped-1"));
    let reply: Value = serde_json::from_slice(&own.stdout).unwrap_or(Value::Null);
    let context = reply["hookSpecificOutput"]["additionalContext"].as_str().unwrap_or_default();
    assert!(
        context.contains(&format!("from pid {}, harness claude-code, session wrapped-2", second.pid())),
        "{context}"
    );
    // Withdrawing consent from inside the first session withdraws the
    // first session's, not the wrapper's nor its sibling's.
    let command = sandbox.command_in_root("roster-consent", &["disarm"]);
    let disarmed = first.run(&command, b"", tests::COMMAND_DEADLINE);
    assert_eq!(disarmed.code(), Some(0), "{}", disarmed.stderr_text());
    assert!(disarmed.stdout_text().contains(&first.pid().to_string()), "{}", disarmed.stdout_text());
    let refused = sandbox.run("roster-send", &["--to", "wrapped-1", "after the disarm"]);
    assert_eq!(refused.status.code(), Some(1), "{refused}");
    send(&sandbox, "wrapped-2", "the sibling still accepts");

    // The end of the second session removes its own record, not the first's.
    let end = serde_json::to_vec(&serde_json::json!({
        "session_id": "wrapped-2", "cwd": cwd, "hook_event_name": "SessionEnd", "reason": "logout",
    }))
    .unwrap();
    let command = sandbox.command_in_root("roster-prune", &["--current", "--hook", "claude-code"]);
    let run = second.run(&command, &end, tests::COMMAND_DEADLINE);
    assert_eq!(run.code(), Some(0), "{}", run.stderr_text());
    let rows = sandbox.run("roster-list", &["--json"]).json();
    let ids: Vec<&str> =
        rows.as_array().unwrap().iter().filter_map(|row| row["session_id"].as_str()).collect();
    assert_eq!(ids, ["wrapped-1"], "{rows:#}");
}
