//! A session that starts over inside the same harness process (`/clear`, `/resume`,
//! compaction: a SessionStart hook with `source` `clear`, `resume` or `compact` and a new
//! session id) refreshes its record rather than adding one: the new id replaces the old,
//! `registered_at` is kept, and the session-id index follows, so the old id is free for
//! another session and the new one is held.

use serde_json::Value;
use tests::Sandbox;
use tests::hooks::{MACHINE_DEADLINE, StdinFeed, run_to_completion};

const FIRST_SESSION_ID: &str = "7c660e54-2e19-4577-b46a-16f46484eaf4";
const NEXT_SESSION_ID: &str = "0d9e6a8c-51f7-4b7e-a0a4-3f2cbbd0c2e1";

fn session_start_payload(sandbox: &Sandbox, session_id: &str, source: &str) -> Vec<u8> {
    serde_json::json!({
        "session_id": session_id,
        "transcript_path": format!("{}/.claude/projects/app/{session_id}.jsonl", sandbox.home().display()),
        "cwd": sandbox.project(),
        "hook_event_name": "SessionStart",
        "source": source,
    })
    .to_string()
    .into_bytes()
}

fn hook_register(sandbox: &Sandbox, owner_pid: u32, payload: Vec<u8>) -> tests::hooks::Finished {
    let mut command = sandbox.roster_command("roster-register");
    command.args(["--hook", "claude-code", "--pid", &owner_pid.to_string()]);
    let finished = run_to_completion(command, StdinFeed::Bytes(payload), MACHINE_DEADLINE);
    assert_eq!(finished.code(), Some(0), "stderr {}", finished.stderr_text());
    assert!(finished.stdout.is_empty(), "wrote to stdout: {}", finished.stdout_text());
    finished
}

fn plain_register(sandbox: &Sandbox, owner_pid: u32, session_id: &str) -> tests::hooks::Finished {
    let mut command = sandbox.roster_command("roster-register");
    command.args(["--pid", &owner_pid.to_string(), "--session-id", session_id, "--quiet"]);
    run_to_completion(command, StdinFeed::Null, MACHINE_DEADLINE)
}

fn text(record: &Value, key: &str) -> String {
    record[key].as_str().unwrap_or_else(|| panic!("{key} missing from {record:#}")).to_owned()
}

#[test]
fn a_restarted_session_refreshes_its_record_and_moves_its_session_id() {
    for source in ["clear", "resume", "compact"] {
        let sandbox = Sandbox::with_default_roster();
        let owner = sandbox.spawn_idle_owner();
        hook_register(&sandbox, owner.pid(), session_start_payload(&sandbox, FIRST_SESSION_ID, "startup"));
        let first = sandbox.find_record(owner.pid()).expect("the first registration");
        assert_eq!(text(&first, "session_id"), FIRST_SESSION_ID);

        let quiet =
            hook_register(&sandbox, owner.pid(), session_start_payload(&sandbox, NEXT_SESSION_ID, source));
        assert!(quiet.stderr.is_empty(), "source {source}: {}", quiet.stderr_text());
        let refreshed = sandbox.find_record(owner.pid()).expect("the refreshed record");
        assert_eq!(text(&refreshed, "session_id"), NEXT_SESSION_ID, "source {source}");
        assert!(
            text(&refreshed, "transcript_path").ends_with(&format!("{NEXT_SESSION_ID}.jsonl")),
            "source {source}"
        );
        assert_eq!(text(&refreshed, "registered_at"), text(&first, "registered_at"), "source {source}");
        assert!(
            text(&refreshed, "refreshed_at") > text(&first, "refreshed_at"),
            "source {source}: refreshed_at did not move: {refreshed:#}"
        );
        assert_eq!(
            sandbox.visible_session_entries(),
            vec![tests::record_file_name_here(owner.pid())],
            "source {source}"
        );
        assert_eq!(
            sandbox.session_index_entries().len(),
            1,
            "source {source}: {:?}",
            sandbox.session_index_entries()
        );

        // The old id is free: another live session may take it.
        let another = sandbox.spawn_idle_owner();
        let finished = plain_register(&sandbox, another.pid(), FIRST_SESSION_ID);
        assert_eq!(
            finished.code(),
            Some(0),
            "source {source}: the old id is still held: {}",
            finished.stderr_text()
        );
        assert_eq!(
            text(&sandbox.find_record(another.pid()).expect("registered"), "session_id"),
            FIRST_SESSION_ID
        );

        // The new id is held by the refreshed owner: a third session is refused, told who holds it.
        let third = sandbox.spawn_idle_owner();
        let finished = plain_register(&sandbox, third.pid(), NEXT_SESSION_ID);
        assert_eq!(finished.code(), Some(3), "source {source}: {}", finished.stderr_text());
        assert!(
            finished.stderr_text().contains(&owner.pid().to_string()),
            "source {source}: the refusal must name holder pid {}: {}",
            owner.pid(),
            finished.stderr_text()
        );
        assert!(
            sandbox.find_record(third.pid()).is_none(),
            "source {source}: the refused session was written"
        );

        // In hook mode the same conflict is silent and exits 0, but is logged with the holder.
        let before = sandbox.hook_error_lines().len();
        let finished =
            hook_register(&sandbox, third.pid(), session_start_payload(&sandbox, NEXT_SESSION_ID, "startup"));
        assert_eq!(finished.stderr_text().lines().count(), 1, "source {source}: {}", finished.stderr_text());
        let log = sandbox.hook_error_lines();
        assert_eq!(log.len(), before + 1, "source {source}: {log:?}");
        assert!(log.last().is_some_and(|line| line.contains(&owner.pid().to_string())), "{log:?}");
        assert!(
            sandbox.find_record(third.pid()).is_none(),
            "source {source}: the refused session was written"
        );
    }
}

/// When the holder of an id has ended, the id goes to whoever asks next: first writer wins
/// only while it lives.
#[test]
fn a_session_id_of_an_ended_session_can_be_taken_over() {
    let sandbox = Sandbox::with_default_roster();
    let first = sandbox.spawn_idle_owner();
    let first_pid = first.pid();
    hook_register(&sandbox, first_pid, session_start_payload(&sandbox, FIRST_SESSION_ID, "startup"));
    first.kill();
    let resumed = sandbox.spawn_idle_owner();
    let finished =
        hook_register(&sandbox, resumed.pid(), session_start_payload(&sandbox, FIRST_SESSION_ID, "resume"));
    assert!(finished.stderr.is_empty(), "{}", finished.stderr_text());
    assert_eq!(
        text(&sandbox.find_record(resumed.pid()).expect("registered"), "session_id"),
        FIRST_SESSION_ID
    );
    assert!(sandbox.find_record(first_pid).is_none(), "the dead holder's record was kept");
}

fn plain_register_with(sandbox: &Sandbox, owner_pid: u32, extra: &[&str]) {
    let mut command = sandbox.roster_command("roster-register");
    command.args(["--pid", &owner_pid.to_string(), "--quiet"]).args(extra);
    let finished = run_to_completion(command, StdinFeed::Null, MACHINE_DEADLINE);
    assert_eq!(finished.code(), Some(0), "{extra:?}: {}", finished.stderr_text());
}

fn recorded_agent(sandbox: &Sandbox, owner_pid: u32) -> Value {
    sandbox.find_record(owner_pid).expect("registered")["agent"].clone()
}

/// Regression: a SessionStart hook after `/clear` (a new session id, same owner) dropped the
/// agent name the user had given by hand. A refresh keeps it unless a name is given again:
/// `--agent NAME` or `ROSTER_AGENT` replaces it, `--agent ""` clears it, and the repository
/// file's `agent_name` never overrides it.
#[test]
fn a_refresh_keeps_the_agent_name_given_by_hand() {
    let sandbox = Sandbox::with_default_roster();
    std::fs::write(sandbox.project().join(".roster.toml"), "agent_name = \"from-repo\"\n").unwrap();
    let owner = sandbox.spawn_idle_owner();
    plain_register_with(&sandbox, owner.pid(), &["--agent", "wren", "--session-id", FIRST_SESSION_ID]);
    assert_eq!(recorded_agent(&sandbox, owner.pid()), "wren");

    for source in ["clear", "resume", "compact"] {
        let session_id = format!("{NEXT_SESSION_ID}-{source}");
        hook_register(&sandbox, owner.pid(), session_start_payload(&sandbox, &session_id, source));
        let refreshed = sandbox.find_record(owner.pid()).expect("the refreshed record");
        assert_eq!(text(&refreshed, "session_id"), session_id, "source {source}");
        assert_eq!(refreshed["agent"], "wren", "source {source}: the hand-given name was dropped");
    }

    plain_register_with(&sandbox, owner.pid(), &["--agent", "robin"]);
    assert_eq!(recorded_agent(&sandbox, owner.pid()), "robin", "an explicit name replaces the old one");
    hook_register(&sandbox, owner.pid(), session_start_payload(&sandbox, FIRST_SESSION_ID, "clear"));
    assert_eq!(recorded_agent(&sandbox, owner.pid()), "robin");

    let mut command = sandbox.roster_command("roster-register");
    command.args(["--hook", "claude-code", "--pid", &owner.pid().to_string()]).env("ROSTER_AGENT", "finch");
    let finished = run_to_completion(
        command,
        StdinFeed::Bytes(session_start_payload(&sandbox, NEXT_SESSION_ID, "clear")),
        MACHINE_DEADLINE,
    );
    assert_eq!(finished.code(), Some(0), "{}", finished.stderr_text());
    assert_eq!(recorded_agent(&sandbox, owner.pid()), "finch", "ROSTER_AGENT is a name given by hand");

    plain_register_with(&sandbox, owner.pid(), &["--agent", ""]);
    assert_eq!(recorded_agent(&sandbox, owner.pid()), Value::Null, "--agent \"\" clears the name");
    hook_register(&sandbox, owner.pid(), session_start_payload(&sandbox, FIRST_SESSION_ID, "clear"));
    assert_eq!(
        recorded_agent(&sandbox, owner.pid()),
        Value::Null,
        "a refresh keeps anonymous too: the repository file names a session only when it is first registered"
    );

    // A new owner still takes the repository file's name.
    let newcomer = sandbox.spawn_idle_owner();
    hook_register(&sandbox, newcomer.pid(), session_start_payload(&sandbox, "newcomer-session", "startup"));
    assert_eq!(recorded_agent(&sandbox, newcomer.pid()), "from-repo");
}
