//! pid 1 (init) and kernel threads outlive every session: a record or a
//! consent marker naming one would never die. Every tool that names an
//! owner refuses them with exit 2 and says what to name instead, and
//! nothing is written.

use tests::{Sandbox, names_in};

/// kthreadd's pid where this test can see it: pid 2 in the initial pid
/// namespace. Fails loudly where it is not (the check would be empty).
fn kthreadd_pid() -> &'static str {
    let comm = std::fs::read_to_string("/proc/2/comm").unwrap_or_default();
    assert_eq!(
        comm.trim(),
        "kthreadd",
        "pid 2 is not kthreadd here; run the tests in the initial pid namespace"
    );
    "2"
}

/// Flags, environment, and what the refusal must say.
type Claim<'a> = (Vec<&'a str>, Vec<(&'a str, &'a str)>, &'a str);

#[test]
fn init_and_kernel_threads_are_refused_by_every_tool_that_names_an_owner() {
    let sandbox = Sandbox::new();
    let claims: Vec<Claim> = vec![
        (vec!["--pid", "1"], vec![], "--pid names pid 1, init"),
        (vec!["--pid", kthreadd_pid()], vec![], "--pid names pid 2, a kernel thread"),
        (vec![], vec![("ROSTER_SESSION_PID", "1")], "ROSTER_SESSION_PID names pid 1, init"),
        (vec![], vec![("CLAUDE_PID", "1")], "CLAUDE_PID names pid 1, init"),
        (vec![], vec![("ROSTER_SESSION_PID", "2")], "ROSTER_SESSION_PID names pid 2, a kernel thread"),
    ];
    let tools: [(&str, &[&str]); 5] = [
        ("roster-register", &[]),
        ("roster-prune", &["--current"]),
        ("roster-consent", &["arm"]),
        ("roster-consent", &["disarm"]),
        ("roster-consent", &["status"]),
    ];
    for (tool, verb) in tools {
        for (flags, env, says) in &claims {
            let mut args: Vec<&str> = verb.to_vec();
            args.extend(flags);
            let outcome = sandbox.run_with_env(tool, &args, env);
            assert_eq!(outcome.code(), 2, "{tool} {args:?} {env:?}\n{outcome}");
            outcome.expect_error_line(tool);
            assert!(outcome.stderr.contains(says), "{tool} {args:?} {env:?}: {}", outcome.stderr);
            assert!(
                outcome.stderr.contains("--pid parent"),
                "names what to give instead: {}",
                outcome.stderr
            );
        }
    }
    for subdirectory in [sandbox.sessions(), sandbox.consent()] {
        let written: Vec<String> =
            names_in(&subdirectory).into_iter().filter(|name| !name.starts_with('.')).collect();
        assert!(written.is_empty(), "{} holds {written:?}", subdirectory.display());
    }
    // should-arm says no, silently.
    let outcome = sandbox.run("roster-consent", &["should-arm", "--pid", "1"]);
    assert_eq!((outcome.code(), outcome.stdout.len(), outcome.stderr.len()), (1, 0, 0), "{outcome}");
}

/// In hook mode the walk passes init by, so a hook run with no harness
/// above it registers nothing (and says why in the log) instead of
/// recording init.
#[test]
fn a_hook_whose_only_claim_is_init_registers_nothing() {
    let sandbox = Sandbox::new();
    let mut command = sandbox.command_in_root("roster-register", &["--hook", "claude-code"]);
    command.env("CLAUDE_PID", "1");
    let payload = sandbox.base().join("payload.json");
    std::fs::write(&payload, br#"{"session_id":"s-1","hook_event_name":"SessionStart","source":"startup"}"#)
        .expect("write the payload");
    command.stdin(std::fs::File::open(&payload).expect("open the payload"));
    let stdout_path = sandbox.base().join("stdout");
    command.stdout(std::fs::File::create(&stdout_path).expect("create stdout file"));
    command.stderr(std::process::Stdio::null());
    let mut child = command.spawn().expect("start roster-register");
    let status = tests::wait_with_deadline(&mut child, tests::COMMAND_DEADLINE).expect("hook mode hung");
    assert_eq!(status.code(), Some(0));
    assert_eq!(std::fs::read(&stdout_path).expect("read stdout"), b"", "hook mode printed on stdout");
    assert!(!sandbox.record_path(1).exists());
    let log =
        std::fs::read_to_string(sandbox.root().join("hook-errors.log")).expect("the hook logged its failure");
    assert!(log.contains("CLAUDE_PID names pid 1, init"), "{log}");
}
