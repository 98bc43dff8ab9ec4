//! A harness's payload with an unusable value never keeps its session out
//! of the registry: a cwd that does not resolve falls back to the directory
//! the hook runs in, a session id roster cannot hold is left out, each said
//! in hook-errors.log; and a payload that is one whole JSON object is
//! taken at once even when the harness keeps stdin open.

use std::time::Duration;

use tests::Sandbox;
use tests::hooks::{MACHINE_DEADLINE, StdinFeed, run_to_completion};

fn register_with(sandbox: &Sandbox, pid: u32, payload: &str) -> tests::hooks::Finished {
    let mut command = sandbox.roster_command("roster-register");
    command.args(["--hook", "claude-code", "--pid", &pid.to_string()]);
    run_to_completion(command, StdinFeed::Bytes(payload.as_bytes().to_vec()), MACHINE_DEADLINE)
}

#[test]
fn unusable_payload_values_are_left_out_and_the_session_registered() {
    let sandbox = Sandbox::with_default_roster();
    let cases = [
        (r#"{"session_id":"ok-1","cwd":"/no/such/directory"}"#, "cwd", Some("ok-1")),
        (r#"{"session_id":"ok-2","cwd":"relative/dir"}"#, "cwd", Some("ok-2")),
        (r#"{"session_id":"a/b"}"#, "session id", None),
        (r#"{"session_id":"tab\there"}"#, "session id", None),
    ];
    for (payload, logged, session_id) in cases {
        let owner = sandbox.spawn_idle_owner();
        let finished = register_with(&sandbox, owner.pid(), payload);
        assert_eq!(finished.code(), Some(0), "{payload}: {}", finished.stderr_text());
        assert!(finished.stdout.is_empty(), "{payload}");
        let record = sandbox.find_record(owner.pid()).unwrap_or_else(|| panic!("{payload}: not registered"));
        assert_eq!(record["session_id"].as_str(), session_id, "{payload}: {record:#}");
        assert_eq!(
            record["cwd"].as_str(),
            Some(sandbox.project().to_str().expect("UTF-8")),
            "{payload}: the hook's own directory stands in"
        );
        let last = sandbox.hook_error_lines().last().cloned().unwrap_or_default();
        assert!(last.contains(logged) && last.contains("registered without it"), "{payload}: {last}");
    }
    // Outside hook mode the same value is refused.
    let owner = sandbox.spawn_idle_owner();
    let mut command = sandbox.roster_command("roster-register");
    command.args(["--pid", &owner.pid().to_string(), "--cwd", "/no/such/directory"]);
    let finished = run_to_completion(command, StdinFeed::Null, MACHINE_DEADLINE);
    assert_eq!(finished.code(), Some(2), "{}", finished.stderr_text());
}

#[test]
fn a_whole_payload_is_taken_while_the_harness_keeps_stdin_open() {
    let sandbox = Sandbox::with_default_roster();
    let owner = sandbox.spawn_idle_owner();
    let mut command = sandbox.roster_command("roster-register");
    command.args(["--hook", "claude-code", "--pid", &owner.pid().to_string()]);
    let payload = br#"{"session_id":"held-open","hook_event_name":"SessionStart"}"#.to_vec();
    let finished = run_to_completion(command, StdinFeed::BytesHeldOpen(payload), MACHINE_DEADLINE);
    assert_eq!(finished.code(), Some(0), "{}", finished.stderr_text());
    assert!(
        finished.elapsed < Duration::from_millis(500),
        "waited for the end of stdin: {:?}",
        finished.elapsed
    );
    let record = sandbox.find_record(owner.pid()).expect("registered");
    assert_eq!(record["session_id"], "held-open");
}
