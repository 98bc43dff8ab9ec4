//! The short flags of the common options, each doing what its long flag
//! does: `roster-register -p -a -s -H`, `roster-consent -p`, `roster-send
//! -t -f -s`, `roster-state -e -p`, `roster-hooks -s`. Regression: there
//! were none but `-q`, `-h` and `-V`.

use tests::{COMMAND_DEADLINE, Owner, Sandbox, StdinFeed, run_to_completion};

#[test]
fn each_short_flag_does_what_its_long_flag_does() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    let pid = owner.pid().to_string();

    let registered = sandbox
        .run("roster-register", &["--json", "-p", &pid, "-a", "heron", "-H", "claude-code", "-s", "s-short"])
        .json();
    let record = sandbox.record(owner.pid());
    assert_eq!(
        (&record["agent"], &record["harness"], &record["session_id"]),
        (&"heron".into(), &"claude-code".into(), &"s-short".into()),
        "{registered}"
    );

    let status = sandbox.run("roster-consent", &["status", "--json", "-p", &pid]).json();
    assert_eq!(status["pid"], owner.pid(), "{status}");

    // -t names the session (an empty message is refused only once the
    // flags parsed), -f the sender, -s a message id.
    let empty = sandbox.run("roster-send", &["-t", "heron", ""]);
    empty.expect_code(2);
    assert!(empty.stderr.contains("the message is empty"), "{empty}");
    let from = sandbox.run("roster-send", &["-t", "heron", "-f", "x", "hi"]);
    from.expect_code(2);
    assert!(from.stderr.contains("--from x"), "{from}");
    let unknown = sandbox.run("roster-send", &["-s", "0123456789abcdef0123456789abcdef"]);
    unknown.expect_code(3);
    assert!(unknown.stderr.contains("no message 0123456789abcdef0123456789abcdef"), "{unknown}");

    let state = run_to_completion(
        sandbox.command_in_root(
            "roster-state",
            &["--json", "--harness", "claude-code", "-e", "PreToolUse", "-p", &pid],
        ),
        StdinFeed::Bytes(b"{}".to_vec()),
        COMMAND_DEADLINE,
    );
    assert_eq!(state.code(), Some(0), "{}", state.stderr_text());
    let state: serde_json::Value = serde_json::from_slice(&state.stdout).unwrap();
    assert_eq!((&state["state"], &state["session_pid"]), (&"working".into(), &owner.pid().into()), "{state}");

    let hooks = sandbox.run("roster-hooks", &["status", "--json", "-s", "user"]).json();
    let scopes: Vec<&str> =
        hooks.as_array().unwrap().iter().filter_map(|row| row["scope"].as_str()).collect();
    assert!(!scopes.is_empty() && scopes.iter().all(|scope| *scope == "user"), "{hooks}");
}
