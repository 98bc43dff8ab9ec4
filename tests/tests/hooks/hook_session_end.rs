//! The session-end hook (`roster-prune --current --hook`) as harnesses call
//! it: the record goes even when the payload is broken, and a `/clear`
//! (an ended session inside a continuing owner) keeps it for the session
//! start that follows.

use tests::Sandbox;
use tests::hooks::{MACHINE_DEADLINE, StdinFeed, run_to_completion};

fn register(sandbox: &Sandbox, owner_pid: u32, session_id: &str) {
    let mut command = sandbox.roster_command("roster-register");
    command.args(["--pid", &owner_pid.to_string(), "--session-id", session_id]);
    let finished = run_to_completion(command, StdinFeed::Null, MACHINE_DEADLINE);
    assert_eq!(finished.code(), Some(0), "register: {}", finished.stderr_text());
}

fn session_end(sandbox: &Sandbox, owner_pid: u32, payload: &[u8]) -> tests::hooks::Finished {
    let mut command = sandbox.roster_command("roster-prune");
    command.args(["--current", "--hook", "claude-code", "--pid", &owner_pid.to_string()]);
    run_to_completion(command, StdinFeed::Bytes(payload.to_vec()), MACHINE_DEADLINE)
}

// Regression: a broken session-end payload used to stop prune before it
// removed anything, leaving a finished session listed until the next prune.
#[test]
fn a_broken_payload_still_removes_the_record_and_is_logged() {
    let sandbox = Sandbox::with_default_roster();
    let owner = sandbox.spawn_idle_owner();
    register(&sandbox, owner.pid(), "ending");
    let finished = session_end(&sandbox, owner.pid(), b"this is not json");
    assert_eq!(finished.code(), Some(0), "{}", finished.stderr_text());
    assert!(finished.stdout.is_empty(), "{}", finished.stdout_text());
    assert!(sandbox.find_record(owner.pid()).is_none(), "the record survived a broken session-end payload");
    let log = sandbox.hook_error_lines();
    assert_eq!(log.len(), 1, "{log:?}");
    assert!(log[0].contains("roster-prune") && log[0].contains("payload"), "{log:?}");
}

#[test]
fn a_clear_keeps_the_record_for_the_next_session_start() {
    let sandbox = Sandbox::with_default_roster();
    let owner = sandbox.spawn_idle_owner();
    register(&sandbox, owner.pid(), "before-clear");
    let before = sandbox.find_record(owner.pid()).expect("registered");
    let clear = br#"{"session_id":"before-clear","cwd":"/","hook_event_name":"SessionEnd","reason":"clear"}"#;
    let finished = session_end(&sandbox, owner.pid(), clear);
    assert_eq!(finished.code(), Some(0), "{}", finished.stderr_text());
    let after = sandbox.find_record(owner.pid()).expect("a /clear removed the owner's record");
    assert_eq!(after["registered_at"], before["registered_at"]);

    let exit = br#"{"session_id":"before-clear","cwd":"/","hook_event_name":"SessionEnd","reason":"exit"}"#;
    let finished = session_end(&sandbox, owner.pid(), exit);
    assert_eq!(finished.code(), Some(0), "{}", finished.stderr_text());
    assert!(sandbox.find_record(owner.pid()).is_none(), "an ended session's record survived");
    assert!(sandbox.hook_error_lines().is_empty(), "{:?}", sandbox.hook_error_lines());
}
