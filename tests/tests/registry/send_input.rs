//! How `roster-send` takes its message and its session from the command
//! line: it never waits on a terminal in silence, a message not given is
//! told apart from an empty one, and a session named without `--to` gets
//! the command that was meant.

use tests::{COMMAND_DEADLINE, Sandbox, StdinFeed, run_to_completion, run_with_deadline};

/// Regression: `roster-send 22173 hi` said only "unexpected argument 'hi'".
#[test]
fn a_session_named_without_to_is_answered_with_the_command_meant() {
    let sandbox = Sandbox::new();
    for (args, meant) in [
        (&["22173", "hi"][..], "roster-send --to 22173 hi"),
        (&["22173", "hi", "there"], "roster-send --to 22173 'hi there'"),
        (&["--ttl", "10m", "22173", "hi"], "roster-send --ttl 10m --to 22173 hi"),
    ] {
        // Without --dir, so that the command meant is the one typed.
        let outcome = run_with_deadline(sandbox.command("roster-send").args(args), COMMAND_DEADLINE);
        outcome.expect_code(2).expect_error_line("roster-send");
        assert!(outcome.stderr.contains(meant), "{args:?}: {}", outcome.stderr);
    }
}

/// Regression: nothing on stdin and an empty argument both said "the
/// message is empty".
#[test]
fn a_missing_message_is_told_apart_from_an_empty_one() {
    let sandbox = Sandbox::new();
    let missing = run_to_completion(
        sandbox.command_in_root("roster-send", &["--to", "22173"]),
        StdinFeed::Null,
        COMMAND_DEADLINE,
    );
    assert_eq!(missing.code(), Some(2), "{}", missing.stderr_text());
    assert!(missing.stderr_text().contains("no message given"), "{}", missing.stderr_text());
    let empty = sandbox.run("roster-send", &["--to", "22173", ""]);
    empty.expect_code(2);
    assert!(empty.stderr.contains("the message is empty"), "{}", empty.stderr);
    assert!(!empty.stderr.contains("no message given"), "{}", empty.stderr);
}

/// Regression: on a terminal, `roster-send --to PID` waited for stdin
/// without a word.
#[test]
fn on_a_terminal_it_says_that_it_reads_the_message_from_stdin() {
    let sandbox = Sandbox::new();
    let finished = sandbox.run_on_terminal("roster-send", &["--to", "22173"], &[]);
    let shown = finished.stdout_text();
    assert!(shown.contains("reading the message from standard input until end of file (Ctrl-D"), "{shown}");
    // The terminal's end of file gives nothing: a missing message.
    assert!(shown.contains("no message given"), "{shown}");
    assert_eq!(finished.code(), Some(2), "{shown}");
}
