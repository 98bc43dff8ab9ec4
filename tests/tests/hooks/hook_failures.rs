//! Hook mode when things go wrong (docs/contract.md §8.2): a garbage, empty, huge or never-ending
//! payload, a bad `--hook` value, an invalid environment, a dead owner, an untrusted roster
//! directory. Whatever happens the command exits 0, writes nothing on stdout, says one line
//! on stderr, appends one line to `hook-errors.log` (where the directory can be trusted),
//! finishes within the payload deadline, and `roster-list` points at the failure.

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use tests::Sandbox;
use tests::hooks::{MACHINE_DEADLINE, StdinFeed, run_to_completion};

/// The payload read deadline is at most 2 s (in hook mode less, inside the hook's budget);
/// everything after it (logging under a lock) is short.
const HOOK_WALL_LIMIT: Duration = Duration::from_secs(4);

/// A payload one byte over the 1 MiB limit, otherwise a perfectly good one.
fn oversized_payload() -> Vec<u8> {
    let limit = 1 << 20;
    let head = br#"{"session_id":"huge","hook_event_name":"SessionStart","padding":""#;
    let tail = br#""}"#;
    let mut payload = head.to_vec();
    payload.resize(limit + 1 - tail.len(), b'x');
    payload.extend_from_slice(tail);
    assert_eq!(payload.len(), limit + 1);
    payload
}

/// One way a hook's input can be wrong, and a word its error line must contain.
struct BadPayload {
    name: &'static str,
    feed: fn() -> StdinFeed,
    message_mentions: &'static str,
}

const BAD_PAYLOADS: [BadPayload; 8] = [
    BadPayload {
        name: "garbage bytes",
        feed: || StdinFeed::Bytes(b"\x00\xff\xfe not json at all".to_vec()),
        message_mentions: "UTF-8",
    },
    BadPayload {
        name: "text that is not JSON",
        feed: || StdinFeed::Bytes(b"hello".to_vec()),
        message_mentions: "JSON",
    },
    BadPayload {
        name: "a JSON array",
        feed: || StdinFeed::Bytes(b"[1, 2, 3]".to_vec()),
        message_mentions: "object",
    },
    BadPayload { name: "an empty payload", feed: || StdinFeed::Bytes(Vec::new()), message_mentions: "empty" },
    BadPayload { name: "/dev/null", feed: || StdinFeed::Null, message_mentions: "empty" },
    BadPayload {
        name: "a session id of the wrong type",
        feed: || StdinFeed::Bytes(br#"{"session_id": 7}"#.to_vec()),
        message_mentions: "session_id",
    },
    BadPayload {
        name: "a payload over 1 MiB",
        feed: || StdinFeed::Bytes(oversized_payload()),
        message_mentions: "1 MiB",
    },
    BadPayload {
        name: "a writer that never closes stdin",
        feed: || StdinFeed::HeldOpen,
        message_mentions: "kept stdin open",
    },
];

/// The arguments of a hook-mode call of `binary`, with the owner named so that nothing
/// but the payload can be wrong.
fn hook_arguments(binary: &str, owner_pid: u32) -> Vec<String> {
    let mut arguments: Vec<String> = Vec::new();
    if binary == "roster-prune" {
        arguments.push("--current".into());
    }
    arguments.extend(["--hook".into(), "claude-code".into(), "--pid".into(), owner_pid.to_string()]);
    arguments
}

#[test]
fn bad_payloads_exit_zero_silently_log_one_line_and_finish_within_the_deadline() {
    for bad in &BAD_PAYLOADS {
        for binary in ["roster-register", "roster-prune"] {
            let sandbox = Sandbox::with_default_roster();
            let owner = sandbox.spawn_idle_owner();
            let args = hook_arguments(binary, owner.pid());
            let what = format!("{binary} {} with {}", args.join(" "), bad.name);
            let mut command = sandbox.roster_command(binary);
            command.args(&args);
            let finished = run_to_completion(command, (bad.feed)(), MACHINE_DEADLINE);

            assert_eq!(finished.code(), Some(0), "{what}: stderr {}", finished.stderr_text());
            assert!(finished.stdout.is_empty(), "{what}: wrote to stdout: {}", finished.stdout_text());
            assert!(finished.elapsed < HOOK_WALL_LIMIT, "{what}: took {:?}", finished.elapsed);
            let stderr = finished.stderr_text();
            assert_eq!(stderr.lines().count(), 1, "{what}: stderr must be one line: {stderr:?}");
            assert!(stderr.starts_with(&format!("{binary}: hook: ")), "{what}: {stderr:?}");
            assert!(
                stderr.contains(bad.message_mentions),
                "{what}: {stderr:?} should mention {:?}",
                bad.message_mentions
            );

            let log = sandbox.hook_error_lines();
            assert_eq!(log.len(), 1, "{what}: hook-errors.log {log:?}");
            assert!(log[0].contains(binary) && log[0].contains(bad.message_mentions), "{what}: {log:?}");
            assert!(
                sandbox.visible_session_entries().is_empty(),
                "{what}: wrote {:?}",
                sandbox.visible_session_entries()
            );

            let listing = sandbox.list_notes();
            assert!(listing.contains("1 hook failure"), "{what}: roster-list notes: {listing}");
            assert!(listing.contains("hook-errors.log"), "{what}: roster-list notes: {listing}");
        }
    }
}

/// The never-ending writer is cut off by the payload deadline, not by anything else: the
/// command waits the session start's share of its budget for the payload (600 ms), then gives
/// up, well inside the 1 s a harness allows a session-start hook.
#[test]
fn a_writer_that_never_closes_stdin_is_cut_off_within_the_session_start_budget() {
    let sandbox = Sandbox::with_default_roster();
    let owner = sandbox.spawn_idle_owner();
    let mut command = sandbox.roster_command("roster-register");
    command.args(["--hook", "auto", "--pid", &owner.pid().to_string()]);
    let finished = run_to_completion(command, StdinFeed::HeldOpen, MACHINE_DEADLINE);
    assert_eq!(finished.code(), Some(0), "stderr {}", finished.stderr_text());
    assert!(finished.stdout.is_empty());
    assert!(
        finished.elapsed >= Duration::from_millis(550) && finished.elapsed < Duration::from_secs(1),
        "took {:?}",
        finished.elapsed
    );
    assert!(finished.stderr_text().contains("payload"), "stderr {}", finished.stderr_text());
}

/// Each failure is one more line: the log grows by exactly one per failed hook call.
#[test]
fn each_failed_hook_call_adds_exactly_one_log_line() {
    let sandbox = Sandbox::with_default_roster();
    let owner = sandbox.spawn_idle_owner();
    for round in 1..=3 {
        let mut command = sandbox.roster_command("roster-register");
        command.args(["--hook", "codex", "--pid", &owner.pid().to_string()]);
        let finished = run_to_completion(command, StdinFeed::Bytes(b"{".to_vec()), MACHINE_DEADLINE);
        assert_eq!(finished.code(), Some(0));
        assert!(finished.stdout.is_empty());
        assert_eq!(sandbox.hook_error_lines().len(), round, "{:?}", sandbox.hook_error_lines());
    }
    let listing = sandbox.list_notes();
    assert!(listing.contains("3 hook failures"), "roster-list notes: {listing}");
}

/// Regression: a failure naming a long path made a long log line; some 20 of them took the
/// log past the 64 KiB that roster reads of any file, after which the next failure could not
/// read it, started it over, and `roster-list` counted only what was left. The log must keep
/// one line per failure up to its bound of 100, however long the messages.
#[test]
fn long_failure_messages_never_cost_the_log_its_history() {
    let sandbox = Sandbox::with_default_roster();
    let owner = sandbox.spawn_idle_owner();
    let long_directory = format!("{}/{}", sandbox.project().display(), "missing-directory-".repeat(200));
    let payload = format!(r#"{{"session_id":"long-1","cwd":"{long_directory}"}}"#);
    for failure in 1..=105 {
        let mut command = sandbox.roster_command("roster-register");
        command.args(["--hook", "codex", "--pid", &owner.pid().to_string()]);
        let finished =
            run_to_completion(command, StdinFeed::Bytes(payload.clone().into_bytes()), MACHINE_DEADLINE);
        assert_eq!(finished.code(), Some(0));
        assert!(finished.stderr_text().contains("missing-directory-"), "{}", finished.stderr_text());
        let lines = sandbox.hook_error_lines().len();
        assert_eq!(lines, failure.min(100), "after failure {failure} the log holds {lines} lines");
    }
    let listing = sandbox.list_notes();
    assert!(listing.contains("100 hook failures"), "roster-list notes: {listing}");
}

/// A hook command line that does not parse (a flag this roster does not know) still exits
/// 0 silently, and its failure is logged in the roster directory the command names with
/// `--dir`. Regression: it was logged in the default directory, which it created.
#[test]
fn an_unparsable_hook_command_line_is_logged_where_its_dir_points() {
    for binary in ["roster-register", "roster-prune"] {
        let sandbox = Sandbox::with_default_roster();
        let owner = sandbox.spawn_idle_owner();
        let named = sandbox.base().join("named-roster");
        let mut arguments = hook_arguments(binary, owner.pid());
        arguments.extend([
            "--dir".to_owned(),
            named.display().to_string(),
            "--from-a-newer-roster".to_owned(),
        ]);
        let mut command = sandbox.roster_command(binary);
        command.args(&arguments);
        let finished = run_to_completion(command, StdinFeed::Bytes(b"{}".to_vec()), MACHINE_DEADLINE);
        let what = format!("{binary} {}", arguments.join(" "));
        assert_eq!(finished.code(), Some(0), "{what}: stderr {}", finished.stderr_text());
        assert!(finished.stdout.is_empty(), "{what}: wrote to stdout: {}", finished.stdout_text());
        assert_eq!(finished.stderr_text().lines().count(), 1, "{what}: {:?}", finished.stderr_text());
        assert!(
            finished.stderr_text().contains("--from-a-newer-roster"),
            "{what}: {}",
            finished.stderr_text()
        );
        let log = std::fs::read_to_string(named.join("hook-errors.log")).unwrap_or_default();
        assert_eq!(log.lines().count(), 1, "{what}: the log in --dir: {log:?}");
        assert!(!sandbox.root().exists(), "{what}: the default roster directory was created");
    }
}

/// Failures that are not about the payload: a `--hook` value that names no harness, an
/// invalid ROSTER_SESSION_PID, an owner that is not running, a payload cwd that does not
/// exist, a session id roster cannot store.
#[test]
fn other_hook_failures_are_logged_the_same_way() {
    /// One failure: the arguments and environment of the call, and a word its line names.
    struct Case {
        name: &'static str,
        arguments: Vec<String>,
        environment: Vec<(String, String)>,
        payload: String,
        message_mentions: &'static str,
    }
    let strings = |words: &[&str]| words.iter().map(|word| (*word).to_owned()).collect::<Vec<String>>();
    let sandbox_for_cases = Sandbox::with_default_roster();
    let project = sandbox_for_cases.project().display().to_string();
    let good_payload =
        format!(r#"{{"session_id":"s-1","cwd":"{project}","hook_event_name":"SessionStart"}}"#);
    // A pid that provably names no process: a child that was started, ended and reaped.
    let ended = sandbox_for_cases.spawn_idle_owner();
    let gone_pid = ended.pid().to_string();
    ended.kill();
    let live = sandbox_for_cases.spawn_idle_owner();
    let live_pid = live.pid().to_string();
    let cases = [
        Case {
            name: "an unknown --hook value",
            arguments: strings(&["--hook", "vim", "--pid", &live_pid]),
            environment: vec![],
            payload: good_payload.clone(),
            message_mentions: "vim",
        },
        Case {
            name: "ROSTER_SESSION_PID=0",
            arguments: strings(&["--hook", "claude-code"]),
            environment: vec![("ROSTER_SESSION_PID".into(), "0".into())],
            payload: good_payload.clone(),
            message_mentions: "ROSTER_SESSION_PID",
        },
        Case {
            name: "an owner pid that is not running",
            arguments: strings(&["--hook", "claude-code", "--pid", &gone_pid]),
            environment: vec![],
            payload: good_payload.clone(),
            message_mentions: "not running",
        },
        // A payload cwd that does not exist, or a session id roster cannot
        // hold, no longer keeps the session out: it registers without them
        // (tests/tests/hooks/hook_payload_fallbacks.rs).
    ];
    for case in cases {
        let sandbox = Sandbox::with_default_roster();
        let mut command = sandbox.roster_command("roster-register");
        command.args(&case.arguments).envs(case.environment.iter().cloned());
        let finished =
            run_to_completion(command, StdinFeed::Bytes(case.payload.into_bytes()), MACHINE_DEADLINE);
        let name = case.name;
        assert_eq!(finished.code(), Some(0), "{name}: stderr {}", finished.stderr_text());
        assert!(finished.stdout.is_empty(), "{name}: wrote to stdout: {}", finished.stdout_text());
        let stderr = finished.stderr_text();
        assert_eq!(stderr.lines().count(), 1, "{name}: {stderr:?}");
        let mentions = case.message_mentions;
        assert!(stderr.contains(mentions), "{name}: {stderr:?} should mention {mentions:?}");
        assert_eq!(sandbox.hook_error_lines().len(), 1, "{name}: {:?}", sandbox.hook_error_lines());
        assert!(
            sandbox.visible_session_entries().is_empty(),
            "{name}: wrote {:?}",
            sandbox.visible_session_entries()
        );
    }
}

/// An untrusted roster directory (group-writable, or a symlink) makes every command refuse
/// with exit 3, except a hook: exit 0, one line on stderr naming the path, nothing on stdout,
/// and nothing written into the directory it does not trust (not even the log).
#[test]
fn an_untrusted_roster_directory_is_refused_quietly_in_hook_mode() {
    type Tamper = fn(&Sandbox);
    let tampers: [(&str, Tamper); 2] = [
        ("group-writable", |sandbox| {
            sandbox.create_roster_directory();
            std::fs::set_permissions(sandbox.root(), std::fs::Permissions::from_mode(0o770))
                .expect("chmod 0770");
        }),
        ("a symlink", |sandbox| {
            let real = sandbox.base().join("elsewhere");
            std::fs::create_dir_all(&real).expect("creating the symlink target");
            std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o700)).expect("chmod 0700");
            std::fs::create_dir_all(sandbox.root().parent().expect("a parent"))
                .expect("creating ~/.local/state");
            std::os::unix::fs::symlink(&real, sandbox.root()).expect("creating the symlink");
        }),
    ];
    for (name, tamper) in tampers {
        let sandbox = Sandbox::with_default_roster();
        tamper(&sandbox);
        let owner = sandbox.spawn_idle_owner();
        let payload = format!(r#"{{"session_id":"s-1","cwd":"{}"}}"#, sandbox.project().display());
        let pid = owner.pid().to_string();

        let mut hook = sandbox.roster_command("roster-register");
        hook.args(["--hook", "claude-code", "--pid", &pid]);
        let finished =
            run_to_completion(hook, StdinFeed::Bytes(payload.clone().into_bytes()), MACHINE_DEADLINE);
        assert_eq!(finished.code(), Some(0), "{name}: stderr {}", finished.stderr_text());
        assert!(finished.stdout.is_empty(), "{name}: wrote to stdout: {}", finished.stdout_text());
        let stderr = finished.stderr_text();
        assert_eq!(stderr.lines().count(), 1, "{name}: {stderr:?}");
        assert!(
            stderr.contains(&sandbox.root().display().to_string()),
            "{name}: {stderr:?} should name the path"
        );
        let inside = std::fs::read_dir(sandbox.root()).expect("reading the roster directory").count();
        assert_eq!(inside, 0, "{name}: something was written into the untrusted directory");

        let mut prune_hook = sandbox.roster_command("roster-prune");
        prune_hook.args(["--current", "--hook", "claude-code", "--pid", &pid]);
        let finished =
            run_to_completion(prune_hook, StdinFeed::Bytes(payload.clone().into_bytes()), MACHINE_DEADLINE);
        assert_eq!(finished.code(), Some(0), "{name}: prune stderr {}", finished.stderr_text());
        assert!(finished.stdout.is_empty(), "{name}: prune wrote to stdout: {}", finished.stdout_text());
        assert_eq!(finished.stderr_text().lines().count(), 1, "{name}: {:?}", finished.stderr_text());

        let mut plain = sandbox.roster_command("roster-register");
        plain.args(["--pid", &pid]);
        let finished = run_to_completion(plain, StdinFeed::Null, MACHINE_DEADLINE);
        assert_eq!(finished.code(), Some(3), "{name}: outside hook mode: stderr {}", finished.stderr_text());
    }
}

/// Success is silent too: a hook-mode register writes nothing on stdout, while the same
/// registration outside hook mode prints its one line (so the silence is hook mode's).
#[test]
fn a_successful_hook_writes_nothing_on_stdout() {
    let sandbox = Sandbox::with_default_roster();
    let owner = sandbox.spawn_idle_owner();
    let payload = format!(
        r#"{{"session_id":"quiet-1","cwd":"{}","hook_event_name":"SessionStart","source":"startup"}}"#,
        sandbox.project().display()
    );
    let pid = owner.pid().to_string();
    for target in ["claude-code", "auto"] {
        let mut hook = sandbox.roster_command("roster-register");
        hook.args(["--hook", target, "--pid", &pid]);
        let finished =
            run_to_completion(hook, StdinFeed::Bytes(payload.clone().into_bytes()), MACHINE_DEADLINE);
        assert_eq!(finished.code(), Some(0), "--hook {target}: stderr {}", finished.stderr_text());
        assert!(finished.stdout.is_empty(), "--hook {target}: wrote to stdout: {}", finished.stdout_text());
        assert!(finished.stderr.is_empty(), "--hook {target}: {}", finished.stderr_text());
        assert_eq!(sandbox.find_record(owner.pid()).expect("registered")["session_id"], "quiet-1");
    }
    let mut plain = sandbox.roster_command("roster-register");
    plain.args(["--pid", &pid, "--session-id", "quiet-1"]);
    let finished = run_to_completion(plain, StdinFeed::Null, MACHINE_DEADLINE);
    assert_eq!(finished.code(), Some(0), "stderr {}", finished.stderr_text());
    assert!(finished.stdout_text().contains(&format!("pid {pid}")), "{}", finished.stdout_text());

    let mut end = sandbox.roster_command("roster-prune");
    end.args(["--current", "--hook", "claude-code", "--pid", &pid]);
    let finished = run_to_completion(end, StdinFeed::Bytes(payload.into_bytes()), MACHINE_DEADLINE);
    assert_eq!(finished.code(), Some(0), "stderr {}", finished.stderr_text());
    assert!(finished.stdout.is_empty(), "prune --hook wrote to stdout: {}", finished.stdout_text());
    assert!(sandbox.find_record(owner.pid()).is_none(), "the session-end hook left the record");
    assert!(sandbox.hook_error_lines().is_empty(), "{:?}", sandbox.hook_error_lines());
}
