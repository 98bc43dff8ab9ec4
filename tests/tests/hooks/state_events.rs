//! The state hook driven as harnesses drive it: every captured state event
//! of every harness sets the state it means, events of one session apply
//! in the order they were sent however their processes race, the registry
//! lock never holds an update up, a dead owner's state is never shown, and
//! whatever the hook is fed it stays silent and exits 0.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::Value;
use tests::{
    COMMAND_DEADLINE, Finished, LockHolder, Owner, Sandbox, StdinFeed, record_file_name_here,
    run_to_completion,
};

const CAPTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/data/harness-captures/state-events");

/// Each captured payload, the harness and event it was sent for, and the
/// state and `waiting_for` it must set, as the pinned release means it.
const CAPTURED: [(&str, &str, &str, &str, Option<&str>); 30] = [
    ("claude-code-2.1.332/UserPromptSubmit.json", "claude-code", "UserPromptSubmit", "working", None),
    ("claude-code-2.1.332/PreToolUse.json", "claude-code", "PreToolUse", "working", None),
    (
        "claude-code-2.1.332/PermissionRequest.json",
        "claude-code",
        "PermissionRequest",
        "waiting",
        Some("permission"),
    ),
    ("claude-code-2.1.332/PostToolUse.json", "claude-code", "PostToolUse", "working", None),
    (
        "claude-code-2.1.332/Notification-permission_prompt.json",
        "claude-code",
        "Notification",
        "waiting",
        Some("permission"),
    ),
    ("claude-code-2.1.332/Stop.json", "claude-code", "Stop", "idle", None),
    ("claude-code-2.1.332/UserPromptSubmit.json", "claude-code", "UserPromptSubmit", "working", None),
    ("claude-code-2.1.332/StopFailure.json", "claude-code", "StopFailure", "idle", None),
    ("claude-code-2.1.332/Notification-idle_prompt.json", "claude-code", "Notification", "idle", None),
    ("codex-0.171.0/UserPromptSubmit.json", "codex", "UserPromptSubmit", "working", None),
    ("codex-0.171.0/PreToolUse.json", "codex", "PreToolUse", "working", None),
    ("codex-0.171.0/PermissionRequest.json", "codex", "PermissionRequest", "waiting", Some("permission")),
    ("codex-0.171.0/PostToolUse.json", "codex", "PostToolUse", "working", None),
    ("codex-0.171.0/Stop.json", "codex", "Stop", "idle", None),
    ("codex-0.171.0/Interrupt.json", "codex", "Interrupt", "idle", None),
    ("gemini-cli-0.61.0/BeforeAgent.json", "gemini-cli", "BeforeAgent", "working", None),
    ("gemini-cli-0.61.0/BeforeTool.json", "gemini-cli", "BeforeTool", "working", None),
    ("gemini-cli-0.61.0/Notification.json", "gemini-cli", "Notification", "waiting", Some("permission")),
    ("gemini-cli-0.61.0/AfterTool.json", "gemini-cli", "AfterTool", "working", None),
    ("gemini-cli-0.61.0/AfterAgent.json", "gemini-cli", "AfterAgent", "idle", None),
    ("copilot-1.0.102/userPromptSubmitted.json", "copilot", "userPromptSubmitted", "working", None),
    ("copilot-1.0.102/preToolUse.json", "copilot", "preToolUse", "working", None),
    ("copilot-1.0.102/notification.json", "copilot", "notification", "waiting", Some("permission")),
    ("copilot-1.0.102/postToolUse.json", "copilot", "postToolUse", "working", None),
    ("copilot-1.0.102/agentStop.json", "copilot", "agentStop", "idle", None),
    ("opencode-1.18.33/session.status-busy.json", "opencode", "session.status", "working", None),
    ("opencode-1.18.33/permission.asked.json", "opencode", "permission.asked", "waiting", Some("permission")),
    ("opencode-1.18.33/permission.replied.json", "opencode", "permission.replied", "working", None),
    ("opencode-1.18.33/session.status-idle.json", "opencode", "session.status", "idle", None),
    ("opencode-1.18.33/session.idle.json", "opencode", "session.idle", "idle", None),
];

/// A captured payload with its session id replaced by `session_id`, in
/// the key the harness sends it under.
pub(crate) fn captured_payload(file: &str, session_id: &str) -> Vec<u8> {
    let path = Path::new(CAPTURES).join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    let mut payload: Value = serde_json::from_str(&text).expect("a capture is JSON");
    if payload.get("session_id").is_some() {
        payload["session_id"] = session_id.into();
    } else if payload.get("sessionId").is_some() {
        payload["sessionId"] = session_id.into();
    } else if payload["properties"].get("sessionID").is_some() {
        payload["properties"]["sessionID"] = session_id.into();
    } else {
        panic!("{file} names no session");
    }
    serde_json::to_vec(&payload).expect("serialize")
}

/// `roster-state --hook HARNESS --event EVENT` with `payload` on stdin, as
/// the harness runs it, with extra environment variables.
pub(crate) fn state_hook(
    sandbox: &Sandbox,
    harness: &str,
    event: &str,
    payload: &[u8],
    env: &[(&str, &str)],
) -> Finished {
    let mut command = sandbox.command_in_root("roster-state", &["--hook", harness, "--event", event]);
    command.envs(env.iter().copied());
    run_to_completion(command, StdinFeed::Bytes(payload.to_vec()), COMMAND_DEADLINE)
}

/// Asserts a hook run was silent and exited 0, and logged no failure.
#[track_caller]
pub(crate) fn assert_quiet_success(sandbox: &Sandbox, run: &Finished) {
    assert_eq!(run.code(), Some(0), "{}", run.stderr_text());
    assert!(run.stdout.is_empty(), "a hook printed on stdout: {}", run.stdout_text());
    assert!(run.stderr.is_empty(), "{}", run.stderr_text());
    let log = sandbox.root().join("hook-errors.log");
    assert!(!log.exists(), "{}", std::fs::read_to_string(&log).unwrap_or_default());
}

/// The row of `pid` in `roster-list --json --all`.
fn row_of(sandbox: &Sandbox, pid: u32) -> Value {
    let rows = sandbox.list(&["--all"]);
    rows.into_iter().find(|row| row["session_pid"] == pid).unwrap_or_else(|| panic!("no row for {pid}"))
}

fn state_file(sandbox: &Sandbox, pid: u32) -> PathBuf {
    sandbox.root().join("states").join(record_file_name_here(pid))
}

#[test]
fn every_captured_state_event_sets_the_state_it_means() {
    let sandbox = Sandbox::new();
    let mut owners = std::collections::BTreeMap::new();
    for (file, harness, event, state, waiting_for) in CAPTURED {
        let owner = owners.entry(harness).or_insert_with(|| {
            let owner = Owner::spawn();
            let session_id = format!("s-{harness}");
            sandbox.register(owner.pid(), &["--harness", harness, "--session-id", &session_id]);
            owner
        });
        let pid = owner.pid();
        let run = state_hook(&sandbox, harness, event, &captured_payload(file, &format!("s-{harness}")), &[]);
        assert_quiet_success(&sandbox, &run);
        let row = row_of(&sandbox, pid);
        assert_eq!(row["state"], state, "{file}: {row}");
        assert_eq!(row["waiting_for"], waiting_for.map_or(Value::Null, Value::from), "{file}: {row}");
        let source = row["state_source"].as_str().unwrap_or_default();
        assert!(source.starts_with(&format!("{harness}:")), "{file}: {row}");
        assert!(tests::parse_rfc3339(row["state_since"].as_str().unwrap_or_default()).is_some(), "{row}");
    }
}

#[test]
fn every_captured_state_event_file_is_fed_to_the_hook() {
    let mut on_disk = Vec::new();
    for folder in std::fs::read_dir(CAPTURES).expect("the state event captures") {
        let folder = folder.expect("an entry").path();
        for file in std::fs::read_dir(&folder).expect("a capture folder") {
            let file = file.expect("an entry").path();
            let relative =
                file.strip_prefix(CAPTURES).expect("below the captures").to_string_lossy().into_owned();
            on_disk.push(relative);
        }
    }
    on_disk.sort();
    let mut fed: Vec<String> = CAPTURED.iter().map(|(file, ..)| (*file).to_owned()).collect();
    fed.sort();
    fed.dedup();
    assert_eq!(on_disk, fed, "a captured state event without a row in CAPTURED (or a row without its file)");
}

#[test]
fn a_state_stays_unknown_until_an_event_says_and_an_event_roster_ignores_changes_nothing() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    sandbox.register(owner.pid(), &["--harness", "claude-code", "--session-id", "s-1"]);
    let row = row_of(&sandbox, owner.pid());
    assert_eq!((row["state"].clone(), row["state_since"].clone()), ("unknown".into(), Value::Null), "{row}");
    // Notifications of a kind roster does not read, and events it does not
    // listen to, leave no state behind.
    let auth = br#"{"session_id":"s-1","hook_event_name":"Notification","notification_type":"auth_success"}"#;
    assert_quiet_success(&sandbox, &state_hook(&sandbox, "claude-code", "Notification", auth, &[]));
    let compact = br#"{"session_id":"s-1","hook_event_name":"PreCompact"}"#;
    assert_quiet_success(&sandbox, &state_hook(&sandbox, "claude-code", "PreCompact", compact, &[]));
    assert!(!state_file(&sandbox, owner.pid()).exists());
    assert_eq!(row_of(&sandbox, owner.pid())["state"], "unknown");
}

#[test]
fn the_same_state_again_keeps_its_since_and_source() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    sandbox.register(owner.pid(), &["--harness", "claude-code", "--session-id", "s-1"]);
    let payload = br#"{"session_id":"s-1"}"#;
    assert_quiet_success(&sandbox, &state_hook(&sandbox, "claude-code", "PreToolUse", payload, &[]));
    let first = row_of(&sandbox, owner.pid());
    for event in ["PostToolUse", "PreToolUse", "PostToolUse"] {
        assert_quiet_success(&sandbox, &state_hook(&sandbox, "claude-code", event, payload, &[]));
    }
    let later = row_of(&sandbox, owner.pid());
    assert_eq!(later["state"], "working");
    assert_eq!(later["state_since"], first["state_since"], "{later}");
    assert_eq!(later["state_source"], "claude-code:PreToolUse", "{later}");
    // A change moves both.
    assert_quiet_success(&sandbox, &state_hook(&sandbox, "claude-code", "Stop", payload, &[]));
    let idle = row_of(&sandbox, owner.pid());
    assert_eq!(
        (idle["state"].as_str(), idle["state_source"].as_str()),
        (Some("idle"), Some("claude-code:Stop"))
    );
    assert_ne!(idle["state_since"], first["state_since"]);
}

/// Two hooks of one session race: the one sent first waits for the state
/// file longest and writes last. The later event wins all the same.
#[test]
fn racing_events_of_one_session_apply_in_the_order_they_were_sent() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    sandbox.register(owner.pid(), &["--harness", "claude-code", "--session-id", "s-1"]);
    let payload = br#"{"session_id":"s-1"}"#;
    assert_quiet_success(&sandbox, &state_hook(&sandbox, "claude-code", "UserPromptSubmit", payload, &[]));
    let file = state_file(&sandbox, owner.pid());
    for (first, second, expect) in
        [("PermissionRequest", "PostToolUse", "working"), ("PreToolUse", "Stop", "idle")]
    {
        // Held, as a hook of the session holds it while it writes.
        let holder = LockHolder::spawn(&file);
        let start = |event: &str| {
            let mut command =
                sandbox.command_in_root("roster-state", &["--hook", "claude-code", "--event", event]);
            command.stdin(Stdio::piped()).stdout(Stdio::null()).stderr(Stdio::piped());
            let mut child = command.spawn().expect("start roster-state");
            use std::io::Write;
            child.stdin.take().unwrap().write_all(payload).unwrap();
            child
        };
        let earlier = start(first);
        wait_until_blocked_on_the_lock(earlier.id(), &file);
        let later = start(second);
        wait_until_blocked_on_the_lock(later.id(), &file);
        holder.kill();
        for child in [later, earlier] {
            let output = child.wait_with_output().expect("roster-state ends");
            assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        }
        let row = row_of(&sandbox, owner.pid());
        assert_eq!(row["state"], expect, "{first} then {second}: {row}");
        let log = sandbox.root().join("hook-errors.log");
        assert!(
            !log.exists(),
            "a racing update gave up: {}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
    }
}

/// Waits until `pid` has `file` open: a state hook opens its state file and
/// then waits for its lock.
fn wait_until_blocked_on_the_lock(pid: u32, file: &Path) {
    let open = tests::poll_until(COMMAND_DEADLINE, || tests::process_has_open(pid, file));
    assert!(open, "roster-state {pid} never opened {}", file.display());
}

#[test]
fn the_registry_lock_held_elsewhere_never_holds_an_update_up() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    sandbox.register(owner.pid(), &["--harness", "codex", "--session-id", "s-1"]);
    // A prune of ten thousand records holds the lock for tens of
    // milliseconds; this holder keeps it for the whole test.
    let holder = LockHolder::spawn(&sandbox.root().join(".lock"));
    let run = state_hook(&sandbox, "codex", "PermissionRequest", br#"{"session_id":"s-1"}"#, &[]);
    assert_quiet_success(&sandbox, &run);
    assert!(
        tests::lock_is_held(&sandbox.root().join(".lock")),
        "the lock was let go before the update ended"
    );
    let row = row_of(&sandbox, owner.pid());
    assert_eq!((row["state"].as_str(), row["waiting_for"].as_str()), (Some("waiting"), Some("permission")));
    holder.kill();
}

#[test]
fn a_dead_owners_state_is_never_shown_and_goes_with_its_record() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    let pid = owner.pid();
    sandbox.register(pid, &["--harness", "claude-code", "--session-id", "s-1"]);
    let payload = br#"{"session_id":"s-1"}"#;
    assert_quiet_success(&sandbox, &state_hook(&sandbox, "claude-code", "PreToolUse", payload, &[]));
    owner.kill();
    let row = row_of(&sandbox, pid);
    assert_eq!(row["liveness"], "dead");
    assert_eq!((row["state"].clone(), row["state_since"].clone()), ("unknown".into(), Value::Null), "{row}");
    // A stop that comes after the death writes what it says, and is still
    // not shown.
    assert_quiet_success(&sandbox, &state_hook(&sandbox, "claude-code", "Stop", payload, &[]));
    assert_eq!(row_of(&sandbox, pid)["state"], "unknown");
    assert!(sandbox.list(&["--state", "working"]).is_empty());
    let pruned = sandbox.run("roster-prune", &["--json"]);
    assert_eq!(pruned.code(), 0);
    assert!(!state_file(&sandbox, pid).exists(), "the state outlived its record");
}

#[test]
fn the_session_end_removes_its_state_and_a_prune_removes_one_left_behind() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    let pid = owner.pid();
    sandbox.register(pid, &["--harness", "claude-code", "--session-id", "s-1"]);
    let payload = br#"{"session_id":"s-1"}"#;
    assert_quiet_success(&sandbox, &state_hook(&sandbox, "claude-code", "Stop", payload, &[]));
    let end =
        sandbox.run_with_env("roster-prune", &["--current"], &[("ROSTER_SESSION_PID", &pid.to_string())]);
    assert_eq!(end.code(), 0, "{}", end.stderr);
    assert!(!state_file(&sandbox, pid).exists(), "the session end left its state");
    // A state written after the record went (a late hook) describes nobody
    // and goes with the next prune.
    let orphan = state_file(&sandbox, pid);
    tests::write_file_0600(&orphan, br#"{"late": true}"#);
    assert_eq!(sandbox.run("roster-prune", &[]).code(), 0);
    assert!(!orphan.exists(), "an orphaned state file stayed");
}

#[test]
fn a_state_written_for_an_earlier_owner_of_the_name_is_not_believed() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    let pid = owner.pid();
    sandbox.register(pid, &["--harness", "claude-code", "--session-id", "s-1"]);
    assert_quiet_success(
        &sandbox,
        &state_hook(&sandbox, "claude-code", "PermissionRequest", br#"{"session_id":"s-1"}"#, &[]),
    );
    let file = state_file(&sandbox, pid);
    let mut state: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    state["start_ticks"] = (state["start_ticks"].as_u64().unwrap() - 1).into();
    tests::write_file_0600(&file, &serde_json::to_vec(&state).unwrap());
    assert_eq!(row_of(&sandbox, pid)["state"], "unknown", "another process's state was shown");
    // Nor is a state file that is a symlink: it is replaced, never followed.
    let elsewhere = sandbox.base().join("elsewhere.json");
    std::fs::write(&elsewhere, b"keep").unwrap();
    std::fs::remove_file(&file).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &file).unwrap();
    assert_quiet_success(
        &sandbox,
        &state_hook(&sandbox, "claude-code", "Stop", br#"{"session_id":"s-1"}"#, &[]),
    );
    assert_eq!(std::fs::read(&elsewhere).unwrap(), b"keep");
    assert!(!std::fs::symlink_metadata(&file).unwrap().file_type().is_symlink());
    assert_eq!(row_of(&sandbox, pid)["state"], "idle");
}

#[test]
fn a_payload_too_large_to_keep_still_finds_its_session_through_the_process_tree() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    let pid = owner.pid();
    sandbox.register(pid, &["--harness", "claude-code", "--session-id", "s-1"]);
    // A tool's output of 20 MiB in a PostToolUse payload.
    let mut payload =
        br#"{"session_id":"s-1","hook_event_name":"PostToolUse","tool_response":{"stdout":""#.to_vec();
    payload.resize(payload.len() + (20 << 20), b'x');
    payload.extend_from_slice(br#""}}"#);
    let run = state_hook(
        &sandbox,
        "claude-code",
        "PostToolUse",
        &payload,
        &[("ROSTER_SESSION_PID", &pid.to_string())],
    );
    assert_quiet_success(&sandbox, &run);
    assert_eq!(row_of(&sandbox, pid)["state"], "working");
    // Two megabytes are kept and read.
    let mut payload = br#"{"session_id":"s-1","tool_response":""#.to_vec();
    payload.resize(payload.len() + (2 << 20), b'y');
    payload.extend_from_slice(br#""}"#);
    assert_quiet_success(&sandbox, &state_hook(&sandbox, "claude-code", "Stop", &payload, &[]));
    assert_eq!(row_of(&sandbox, pid)["state"], "idle");
}

#[test]
fn whatever_the_hook_is_fed_it_is_silent_exits_0_and_logs_what_failed() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    sandbox.register(owner.pid(), &["--harness", "claude-code", "--session-id", "s-1"]);
    for payload in [&b"not json"[..], b"[1, 2]", b"{\"session_id\": 7}", b""] {
        let run = state_hook(&sandbox, "claude-code", "Stop", payload, &[]);
        assert_eq!(run.code(), Some(0), "{}", run.stderr_text());
        assert!(run.stdout.is_empty());
    }
    let log = std::fs::read_to_string(sandbox.root().join("hook-errors.log")).expect("failures are logged");
    assert_eq!(log.lines().count(), 4, "{log}");
    assert!(log.lines().all(|line| line.contains("roster-state")), "{log}");
    // A session roster holds no record of is no failure: nothing to do.
    std::fs::remove_file(sandbox.root().join("hook-errors.log")).unwrap();
    let stranger = state_hook(&sandbox, "claude-code", "Stop", br#"{"session_id":"nobody"}"#, &[]);
    assert_quiet_success(&sandbox, &stranger);
    // By hand, the same is refused and said.
    let mut command =
        sandbox.command_in_root("roster-state", &["--harness", "claude-code", "--event", "Stop"]);
    command.stdin(Stdio::piped());
    let by_hand = run_to_completion(
        command,
        StdinFeed::Bytes(br#"{"session_id":"nobody"}"#.to_vec()),
        COMMAND_DEADLINE,
    );
    assert_eq!(by_hand.code(), Some(3), "{}", by_hand.stderr_text());
    assert!(by_hand.stderr_text().contains("no record of this session"), "{}", by_hand.stderr_text());
}

/// Regression: `roster-state --hook claude-code --event Stopp` was ignored
/// with exit 0 and no word. A mistyped event name is logged with the
/// nearest known one (and said on stderr), still records nothing, and
/// exits 0 in hook mode; by hand (`--harness`) stderr says it.
#[test]
fn a_mistyped_event_name_is_logged_with_the_nearest_known_one() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    sandbox.register(owner.pid(), &["--harness", "claude-code", "--session-id", "s-1"]);
    let payload = br#"{"session_id":"s-1"}"#;
    let run = state_hook(&sandbox, "claude-code", "Stopp", payload, &[]);
    assert_eq!(run.code(), Some(0), "{}", run.stderr_text());
    assert!(run.stdout.is_empty(), "{}", run.stdout_text());
    assert!(run.stderr_text().contains("the nearest known event is Stop"), "{}", run.stderr_text());
    let log = std::fs::read_to_string(sandbox.root().join("hook-errors.log")).expect("the typo is logged");
    assert!(log.contains("\"Stopp\"") && log.contains("the nearest known event is Stop"), "{log}");
    assert!(!state_file(&sandbox, owner.pid()).exists(), "a guess set a state");

    let by_hand = run_to_completion(
        sandbox.command_in_root("roster-state", &["--harness", "claude-code", "--event", "PreToolUs"]),
        StdinFeed::Bytes(payload.to_vec()),
        COMMAND_DEADLINE,
    );
    assert_eq!(by_hand.code(), Some(0), "{}", by_hand.stderr_text());
    assert!(
        by_hand.stderr_text().contains("the nearest known event is PreToolUse"),
        "{}",
        by_hand.stderr_text()
    );
    assert!(!state_file(&sandbox, owner.pid()).exists(), "a guess set a state");
}
