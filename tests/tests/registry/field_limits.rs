//! Every string field of a record has a byte limit, and a record register writes is always
//! one list trusts. Regression: a 100 KiB `transcript_path` in a hook payload (or a long
//! version, socket path, session id, cwd) made a record over the 64 KiB entry cap that
//! `roster-list` then showed as untrusted, breaking one owner per session id. Plain mode
//! refuses an over-long value with exit 2 naming where it came from and the limit; hook
//! mode drops the value, logs it and registers.
//!
//! The kernel refuses a single argument or environment string of 128 KiB or more
//! (`MAX_ARG_STRLEN`), so flags and variables are tested just under that; hook payloads
//! (capped at 1 MiB in total) carry values just under 1 MiB.

use serde_json::Value;
use tests::hooks::{MACHINE_DEADLINE, StdinFeed, run_to_completion};
use tests::{Owner, Sandbox};

/// Just under the kernel's limit for one argument or environment string.
const LONG_ARGUMENT_BYTES: usize = 120 * 1024;
/// Just under the 1 MiB hook payload cap, leaving room for the rest of the payload.
const LONG_PAYLOAD_VALUE_BYTES: usize = (1 << 20) - 4096;

fn long(bytes: usize) -> String {
    "a".repeat(bytes)
}

fn long_path(bytes: usize) -> String {
    format!("/{}", "a".repeat(bytes - 1))
}

/// The error line names the source, the field and its limit, and never echoes the value.
fn assert_refused(outcome: &tests::Outcome, source: &str, limit: &str) {
    outcome.expect_code(2).expect_error_line("roster-register");
    assert!(outcome.stderr.contains(source), "the error does not name {source}:\n{}", outcome.stderr);
    assert!(outcome.stderr.contains(limit), "the error does not name the limit {limit}:\n{}", outcome.stderr);
    assert!(outcome.stderr.len() < 1024, "the error echoes the value: {} bytes", outcome.stderr.len());
}

#[test]
fn plain_mode_refuses_an_over_long_flag_naming_it_and_its_limit() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    let pid = owner.pid().to_string();
    let cases = [
        ("--cwd", long_path(LONG_ARGUMENT_BYTES), "4096 bytes"),
        ("--socket", long_path(LONG_ARGUMENT_BYTES), "108 bytes"),
        ("--agent", long(LONG_ARGUMENT_BYTES), "64 characters"),
        ("--session-id", long(LONG_ARGUMENT_BYTES), "128 bytes"),
        ("--harness", long(LONG_ARGUMENT_BYTES), "32 bytes"),
    ];
    for (flag, value, limit) in &cases {
        let outcome = sandbox.run("roster-register", &["--pid", &pid, flag, value]);
        assert_refused(&outcome, flag, limit);
        assert!(!sandbox.record_path(owner.pid()).exists(), "{flag}: a record was written");
    }
}

#[test]
fn plain_mode_refuses_an_over_long_variable_naming_it_and_its_limit() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    let pid = owner.pid().to_string();
    let cases = [
        ("ROSTER_AGENT", long(LONG_ARGUMENT_BYTES), "64 characters"),
        ("ROSTER_SESSION_ID", long(LONG_ARGUMENT_BYTES), "128 bytes"),
        ("CLAUDE_CODE_SESSION_ID", long(LONG_ARGUMENT_BYTES), "128 bytes"),
        ("CLAUDE_CODE_MESSAGING_SOCKET", long_path(LONG_ARGUMENT_BYTES), "108 bytes"),
    ];
    for (variable, value, limit) in &cases {
        let outcome = sandbox.run_with_env("roster-register", &["--pid", &pid], &[(variable, value)]);
        assert_refused(&outcome, variable, limit);
        assert!(!sandbox.record_path(owner.pid()).exists(), "{variable}: a record was written");
    }
}

/// A version variable that is not a plausible version is ignored, never recorded.
#[test]
fn an_over_long_version_variable_never_makes_an_untrusted_record() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    let pid = owner.pid().to_string();
    let ai_agent = format!("claude-code_{}_harness", "1-".repeat(LONG_ARGUMENT_BYTES / 2 - 16) + "1");
    let copilot_version = format!("1.{}", "0".repeat(LONG_ARGUMENT_BYTES));
    for (variable, value, harness) in
        [("AI_AGENT", &ai_agent, "claude-code"), ("COPILOT_CLI_BINARY_VERSION", &copilot_version, "copilot")]
    {
        let outcome = sandbox.run_with_env(
            "roster-register",
            &["--json", "--pid", &pid, "--harness", harness],
            &[(variable, value)],
        );
        outcome.expect_code(0);
        let rows = sandbox.list(&[]);
        assert_eq!(rows.len(), 1, "{variable}: {rows:#?}");
        assert_eq!(rows[0]["problem"], Value::Null, "{variable}: {:#}", rows[0]);
        assert_eq!(rows[0]["harness_version"], Value::Null, "{variable}");
    }
}

fn claude_payload(
    sandbox: &tests::Sandbox,
    edit: impl FnOnce(&mut serde_json::Map<String, Value>),
) -> Vec<u8> {
    let mut payload = serde_json::json!({
        "session_id": "7c660e54-2e19-4577-b46a-16f46484eaf4",
        "transcript_path": format!("{}/.claude/projects/app/t.jsonl", sandbox.home().display()),
        "cwd": sandbox.project(),
        "hook_event_name": "SessionStart",
        "source": "startup",
    });
    edit(payload.as_object_mut().unwrap());
    let bytes = payload.to_string().into_bytes();
    assert!(bytes.len() <= 1 << 20, "the payload itself must fit the 1 MiB cap: {}", bytes.len());
    bytes
}

fn hook_register(sandbox: &tests::Sandbox, owner_pid: u32, payload: Vec<u8>, env: &[(&str, &str)]) {
    let mut command = sandbox.roster_command("roster-register");
    command.args(["--hook", "claude-code", "--pid", &owner_pid.to_string()]);
    command.envs(env.iter().copied());
    let finished = run_to_completion(command, StdinFeed::Bytes(payload), MACHINE_DEADLINE);
    assert_eq!(finished.code(), Some(0), "stderr {}", finished.stderr_text());
    assert!(finished.stdout.is_empty(), "wrote to stdout");
}

fn listed_rows(sandbox: &tests::Sandbox) -> Vec<Value> {
    let mut command = sandbox.roster_command("roster-list");
    command.arg("--json");
    let finished = run_to_completion(command, StdinFeed::Null, MACHINE_DEADLINE);
    assert_eq!(finished.code(), Some(0), "{}", finished.stderr_text());
    serde_json::from_slice(&finished.stdout).expect("roster-list --json prints JSON")
}

/// Each over-long value is dropped (`absent` names the record key that must then be
/// missing), the drop is logged naming the field and its limit, and the session is
/// registered with a record list trusts.
#[test]
fn hook_mode_drops_an_over_long_value_logs_it_and_registers() {
    let huge = long(LONG_PAYLOAD_VALUE_BYTES);
    let huge_path = long_path(LONG_PAYLOAD_VALUE_BYTES);
    type Edit<'a> = Box<dyn Fn(&mut serde_json::Map<String, Value>) + 'a>;
    let cases: Vec<(&str, Edit<'_>, &str, &str)> = vec![
        (
            "transcript_path",
            Box::new(|map| drop(map.insert("transcript_path".into(), huge_path.clone().into()))),
            "transcript_path",
            "4096 bytes",
        ),
        (
            "session_id",
            Box::new(|map| drop(map.insert("session_id".into(), huge.clone().into()))),
            "session_id",
            "128 bytes",
        ),
        (
            "cursor_version",
            Box::new(|map| drop(map.insert("cursor_version".into(), huge.clone().into()))),
            "harness_version",
            "128 bytes",
        ),
        ("cwd", Box::new(|map| drop(map.insert("cwd".into(), huge_path.clone().into()))), "", "4096 bytes"),
    ];
    for (key, edit, absent, limit) in cases {
        let sandbox = tests::Sandbox::with_default_roster();
        let owner = sandbox.spawn_idle_owner();
        hook_register(&sandbox, owner.pid(), claude_payload(&sandbox, |map| edit(map)), &[]);
        let record = sandbox
            .find_record(owner.pid())
            .unwrap_or_else(|| panic!("{key}: the session was not registered"));
        if absent.is_empty() {
            // A cwd over its limit falls back to the directory the hook runs in.
            assert_eq!(record["cwd"], sandbox.project().to_str().unwrap(), "{key}");
        } else {
            assert!(
                record.get(absent).is_none(),
                "{key}: {absent} was kept: {} bytes",
                record[absent].to_string().len()
            );
        }
        let rows = listed_rows(&sandbox);
        assert_eq!(rows.len(), 1, "{key}: {rows:#?}");
        assert_eq!(rows[0]["problem"], Value::Null, "{key}: {:#}", rows[0]);
        assert_eq!(rows[0]["liveness"], "alive", "{key}: {:#}", rows[0]);
        let log = sandbox.hook_error_lines();
        assert_eq!(log.len(), 1, "{key}: {log:?}");
        let field = if absent.is_empty() { "cwd".to_owned() } else { absent.replace('_', " ") };
        assert!(
            log[0].contains(&field) && log[0].contains(limit),
            "{key}: the log line does not name {field} and {limit}: {log:?}"
        );
    }
}

#[test]
fn hook_mode_drops_every_over_long_value_at_once() {
    let sandbox = tests::Sandbox::with_default_roster();
    let owner = sandbox.spawn_idle_owner();
    let quarter = LONG_PAYLOAD_VALUE_BYTES / 4 - 1024;
    let payload = claude_payload(&sandbox, |map| {
        map.insert("transcript_path".into(), long_path(quarter).into());
        map.insert("session_id".into(), long(quarter).into());
        map.insert("cursor_version".into(), long(quarter).into());
        map.insert("cwd".into(), long_path(quarter).into());
    });
    let agent = long(LONG_ARGUMENT_BYTES);
    let socket = long_path(LONG_ARGUMENT_BYTES);
    hook_register(
        &sandbox,
        owner.pid(),
        payload,
        &[("ROSTER_AGENT", &agent), ("CLAUDE_CODE_MESSAGING_SOCKET", &socket)],
    );
    let record = sandbox.find_record(owner.pid()).expect("the session was not registered");
    for key in ["transcript_path", "session_id", "harness_version", "agent", "socket"] {
        assert!(record.get(key).is_none(), "{key} was kept");
    }
    assert_eq!(record["cwd"], sandbox.project().to_str().unwrap());
    let rows = listed_rows(&sandbox);
    assert_eq!(rows[0]["problem"], Value::Null, "{:#}", rows[0]);
    let log = sandbox.hook_error_lines().join("\n");
    for source in
        ["transcript_path", "session id", "version", "ROSTER_AGENT", "CLAUDE_CODE_MESSAGING_SOCKET", "cwd"]
    {
        assert!(log.contains(source), "the log does not name {source}: {log}");
    }
}
