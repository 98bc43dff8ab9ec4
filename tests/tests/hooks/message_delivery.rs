//! Messages handed to a session by its state hook, as each harness runs it
//! (captured payloads): on a delivery event the waiting messages come out
//! once, in the harness's own reply format and framed as roster's; consent
//! is decided again first; an event that is no delivery point leaves them
//! waiting; a turn's end that took a message leaves the session working;
//! one reply holds no more than the harness keeps whole.

use serde_json::Value;
use tests::{Sandbox, SessionShell};

use super::state_events::{assert_quiet_success, captured_payload, state_hook};

/// The hook as its session's process tree runs it: a child of the
/// session's owner, as a harness runs its hooks.
pub(crate) fn session_hook(
    sandbox: &Sandbox,
    owner: &mut SessionShell,
    harness: &str,
    event: &str,
    payload: &[u8],
) -> tests::Finished {
    let command = sandbox.command_in_root("roster-state", &["--hook", harness, "--event", event]);
    owner.run(&command, payload, tests::COMMAND_DEADLINE)
}

/// Each delivery event with a captured payload, and how its reply carries
/// the text: a JSON pointer into stdout, or `None` for stderr with exit 2.
const DELIVERY: [(&str, &str, &str, Option<&str>); 9] = [
    (
        "claude-code",
        "UserPromptSubmit",
        "claude-code-2.1.332/UserPromptSubmit.json",
        Some("/hookSpecificOutput/additionalContext"),
    ),
    ("claude-code", "Stop", "claude-code-2.1.332/Stop.json", None),
    (
        "codex",
        "UserPromptSubmit",
        "codex-0.171.0/UserPromptSubmit.json",
        Some("/hookSpecificOutput/additionalContext"),
    ),
    ("codex", "Stop", "codex-0.171.0/Stop.json", Some("/reason")),
    (
        "gemini-cli",
        "BeforeAgent",
        "gemini-cli-0.61.0/BeforeAgent.json",
        Some("/hookSpecificOutput/additionalContext"),
    ),
    ("gemini-cli", "AfterAgent", "gemini-cli-0.61.0/AfterAgent.json", Some("/reason")),
    (
        "copilot",
        "userPromptSubmitted",
        "copilot-1.0.102/userPromptSubmitted.json",
        Some("/additionalContext"),
    ),
    ("copilot", "agentStop", "copilot-1.0.102/agentStop.json", Some("/reason")),
    ("opencode", "session.idle", "opencode-1.18.33/session.idle.json", Some("/deliver")),
];

/// A live session of `harness` with the session id `session_id`, in a
/// project whose `.roster.toml` auto-arms it: it accepts messages.
pub(crate) fn accepting_session(sandbox: &Sandbox, harness: &str, session_id: &str) -> SessionShell {
    let project = sandbox.project();
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join(".roster.toml"), "[consent]\nauto_arm = true\n").unwrap();
    let owner = SessionShell::spawn();
    let cwd = project.to_string_lossy().into_owned();
    sandbox.register(owner.pid(), &["--harness", harness, "--session-id", session_id, "--cwd", &cwd]);
    owner
}

/// Queues `text` for `session_id`; the message's id.
pub(crate) fn send(sandbox: &Sandbox, session_id: &str, text: &str) -> String {
    let outcome = sandbox.run("roster-send", &["--json", "--to", session_id, "--", text]);
    assert!(outcome.status.success(), "{outcome}");
    outcome.json()["id"].as_str().expect("an id").to_owned()
}

pub(crate) fn status(sandbox: &Sandbox, id: &str) -> Value {
    sandbox.run("roster-send", &["--json", "--status", id]).json()
}

#[test]
fn every_delivery_event_hands_the_messages_over_once_in_its_harness_format() {
    for (index, (harness, event, capture, pointer)) in DELIVERY.iter().enumerate() {
        let sandbox = Sandbox::new();
        let session_id = format!("delivery-{index}");
        let mut owner = accepting_session(&sandbox, harness, &session_id);
        let text =
            format!("ROSTER-TEST-{index}: run the tests\n\"quoted\" <b>and</b> {{\"decision\":\"allow\"}}");
        let id = send(&sandbox, &session_id, &text);
        let payload = captured_payload(capture, &session_id);
        let run = session_hook(&sandbox, &mut owner, harness, event, &payload);
        let carried = match pointer {
            Some(pointer) => {
                assert_eq!(run.code(), Some(0), "{harness} {event}: {}", run.stderr_text());
                let reply: Value = serde_json::from_slice(&run.stdout)
                    .unwrap_or_else(|error| panic!("{harness} {event}: {error}: {}", run.stdout_text()));
                reply.pointer(pointer).and_then(Value::as_str).unwrap_or_else(|| panic!("{reply}")).to_owned()
            }
            None => {
                assert_eq!(run.code(), Some(2), "{harness} {event} blocks with exit 2");
                assert!(run.stdout.is_empty(), "{}", run.stdout_text());
                run.stderr_text().trim_end().to_owned()
            }
        };
        assert!(carried.contains(&text), "{harness} {event}: {carried}");
        assert!(carried.starts_with(&format!("[roster message {id} from pid ")), "{carried}");
        assert!(carried.contains("your user did not type it"), "{carried}");
        assert!(carried.ends_with(&format!("[end of roster message {id}]")), "{carried}");
        let settled = status(&sandbox, &id);
        assert_eq!(settled["status"], "delivered", "{settled}");
        assert_eq!(settled["event"], format!("{harness}:{event}"), "{settled}");
        // Once: the same event again finds nothing, and says nothing.
        let again = session_hook(&sandbox, &mut owner, harness, event, &payload);
        assert_quiet_success(&sandbox, &again);
        drop(owner);
    }
}

#[test]
fn a_hook_of_another_session_naming_this_ones_id_takes_nothing() {
    let sandbox = Sandbox::new();
    let mut owner = accepting_session(&sandbox, "claude-code", "mine");
    let id = send(&sandbox, "mine", "ROSTER-TEST: only for mine");
    let payload = captured_payload("claude-code-2.1.332/UserPromptSubmit.json", "mine");
    // Run outside any session, and as another session's hook.
    let outside = state_hook(&sandbox, "claude-code", "UserPromptSubmit", &payload, &[]);
    assert_quiet_success(&sandbox, &outside);
    let mut other = SessionShell::spawn();
    let run = session_hook(&sandbox, &mut other, "claude-code", "UserPromptSubmit", &payload);
    assert_quiet_success(&sandbox, &run);
    // Outside the session, naming its owner by the environment or by
    // --pid proves nothing: the owner is no ancestor of the hook.
    let pid = owner.pid().to_string();
    let named =
        state_hook(&sandbox, "claude-code", "UserPromptSubmit", &payload, &[("ROSTER_SESSION_PID", &pid)]);
    assert_quiet_success(&sandbox, &named);
    let mut command = sandbox.command_in_root(
        "roster-state",
        &["--hook", "claude-code", "--event", "UserPromptSubmit", "--pid", &pid],
    );
    command.env("ROSTER_SESSION_PID", &pid);
    let flagged =
        tests::run_to_completion(command, tests::StdinFeed::Bytes(payload.clone()), tests::COMMAND_DEADLINE);
    assert_quiet_success(&sandbox, &flagged);
    assert_eq!(status(&sandbox, &id)["status"], "pending");
    let run = session_hook(&sandbox, &mut owner, "claude-code", "UserPromptSubmit", &payload);
    assert!(!run.stdout.is_empty(), "its own hook gets it");
    assert_eq!(status(&sandbox, &id)["status"], "delivered");
}

#[test]
fn a_session_that_stopped_accepting_gets_nothing_and_its_sender_learns_refused() {
    let sandbox = Sandbox::new();
    let mut owner = accepting_session(&sandbox, "claude-code", "closing");
    let id = send(&sandbox, "closing", "ROSTER-TEST: never seen");
    // The repository stops opting in after the send.
    std::fs::remove_file(sandbox.project().join(".roster.toml")).unwrap();
    let payload = captured_payload("claude-code-2.1.332/UserPromptSubmit.json", "closing");
    let run = session_hook(&sandbox, &mut owner, "claude-code", "UserPromptSubmit", &payload);
    assert_quiet_success(&sandbox, &run);
    let settled = status(&sandbox, &id);
    assert_eq!(settled["status"], "refused", "{settled}");
    assert!(settled["reason"].as_str().is_some_and(|reason| !reason.is_empty()), "{settled}");
}

#[test]
fn an_event_that_is_no_delivery_point_leaves_messages_waiting() {
    let sandbox = Sandbox::new();
    let mut owner = accepting_session(&sandbox, "claude-code", "waiting");
    let id = send(&sandbox, "waiting", "ROSTER-TEST: later");
    let payload = captured_payload("claude-code-2.1.332/PreToolUse.json", "waiting");
    let run = session_hook(&sandbox, &mut owner, "claude-code", "PreToolUse", &payload);
    assert_quiet_success(&sandbox, &run);
    assert_eq!(status(&sandbox, &id)["status"], "pending");
}

#[test]
fn a_turn_end_that_took_a_message_leaves_the_session_working() {
    let sandbox = Sandbox::new();
    let mut owner = accepting_session(&sandbox, "codex", "goes-on");
    send(&sandbox, "goes-on", "ROSTER-TEST: one more thing");
    let payload = captured_payload("codex-0.171.0/Stop.json", "goes-on");
    let run = session_hook(&sandbox, &mut owner, "codex", "Stop", &payload);
    assert_eq!(run.code(), Some(0), "{}", run.stderr_text());
    let row = sandbox.list(&[]).into_iter().find(|row| row["session_pid"] == owner.pid()).expect("its row");
    assert_eq!(
        (row["state"].as_str(), row["state_source"].as_str()),
        (Some("working"), Some("codex:Stop")),
        "{row}"
    );
    // With nothing left, the next turn end is an ordinary one: idle.
    let run = session_hook(&sandbox, &mut owner, "codex", "Stop", &payload);
    assert_quiet_success(&sandbox, &run);
    let row = sandbox.list(&[]).into_iter().find(|row| row["session_pid"] == owner.pid()).expect("its row");
    assert_eq!(row["state"], "idle", "{row}");
}

#[test]
fn one_reply_holds_no_more_than_the_harness_keeps_whole_and_the_rest_waits_in_order() {
    let sandbox = Sandbox::new();
    let mut owner = accepting_session(&sandbox, "claude-code", "budget");
    // Claude Code keeps about 10,000 characters whole: 9,000 bytes a reply.
    let ids: Vec<String> = (0..3)
        .map(|index| send(&sandbox, "budget", &format!("ROSTER-PART-{index} {}", "x".repeat(4000))))
        .collect();
    let payload = captured_payload("claude-code-2.1.332/UserPromptSubmit.json", "budget");
    let first = session_hook(&sandbox, &mut owner, "claude-code", "UserPromptSubmit", &payload);
    let reply: Value = serde_json::from_slice(&first.stdout).expect("a JSON reply");
    let text = reply["hookSpecificOutput"]["additionalContext"].as_str().unwrap();
    assert!(
        text.contains("ROSTER-PART-0") && text.contains("ROSTER-PART-1") && !text.contains("ROSTER-PART-2")
    );
    assert!(text.find("ROSTER-PART-0") < text.find("ROSTER-PART-1"), "in the order sent");
    assert_eq!(status(&sandbox, &ids[2])["status"], "pending");
    let second = session_hook(&sandbox, &mut owner, "claude-code", "UserPromptSubmit", &payload);
    let reply: Value = serde_json::from_slice(&second.stdout).expect("a JSON reply");
    assert!(reply["hookSpecificOutput"]["additionalContext"].as_str().unwrap().contains("ROSTER-PART-2"));
    assert!(ids.iter().all(|id| status(&sandbox, id)["status"] == "delivered"));
}

#[test]
fn a_queue_held_locked_elsewhere_keeps_its_messages_and_the_state_is_recorded_all_the_same() {
    let sandbox = Sandbox::new();
    let mut owner = accepting_session(&sandbox, "claude-code", "held");
    let id = send(&sandbox, "held", "ROSTER-TEST: wait for the lock");
    let queues = sandbox.root().join("messages");
    let queue = queues.join(tests::names_in(&queues).pop().expect("its queue"));
    // `flock DIR sleep`: the queue's lock held until it is killed.
    let mut holder = std::process::Command::new(tests::require_tool("flock"))
        .arg(&queue)
        .args(["sleep", "100000"])
        .spawn()
        .expect("hold the queue's lock");
    assert!(tests::poll_until(std::time::Duration::from_secs(5), || tests::lock_is_held(&queue)));
    let payload = captured_payload("claude-code-2.1.332/UserPromptSubmit.json", "held");
    let run = session_hook(&sandbox, &mut owner, "claude-code", "UserPromptSubmit", &payload);
    assert_eq!(run.code(), Some(0), "{}", run.stderr_text());
    assert!(run.stdout.is_empty(), "nothing handed over: {}", run.stdout_text());
    assert_eq!(status_while_held(&sandbox, &id), "pending");
    let row = sandbox.list(&[]).into_iter().find(|row| row["session_pid"] == owner.pid()).expect("its row");
    assert_eq!(row["state"], "working", "the state is recorded: {row}");
    // `sleep` shares flock's descriptor: both go.
    for child in tests::sshd::descendants(holder.id()) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(child as i32),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    let _ = holder.kill();
    let _ = holder.wait();
    assert!(tests::poll_until(std::time::Duration::from_secs(5), || !tests::lock_is_held(&queue)));
    let run = session_hook(&sandbox, &mut owner, "claude-code", "UserPromptSubmit", &payload);
    assert!(run.stdout_text().contains("ROSTER-TEST: wait for the lock"), "{}", run.stderr_text());
}

/// The message's status, read without waiting on the queue's lock.
fn status_while_held(sandbox: &Sandbox, id: &str) -> String {
    let pending = sandbox.root().join("messages");
    let names: Vec<String> = tests::names_in(&pending)
        .into_iter()
        .flat_map(|queue| tests::names_in(&pending.join(queue)))
        .collect();
    if names.iter().any(|name| name.contains(id) && !name.ends_with(".done.json")) {
        "pending"
    } else {
        "settled"
    }
    .to_owned()
}
