//! Regressions found by the fault table (`tests/faults`): each test makes one system
//! call fail the way the fault table did (strace's fault injection, aimed
//! at one call by its number or by the path it names) and checks the tool
//! now does what the rules say.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use tests::{COMMAND_DEADLINE, Outcome, Owner, Sandbox, require_tool, run_with_deadline};

/// `command` run under strace with `injections` (`-e inject=...` values)
/// and `paths` (`-P`, which limits them to calls naming those paths).
fn under_fault(command: &Command, injections: &[&str], paths: &[&Path]) -> Outcome {
    let strace = require_tool("strace");
    let mut traced = Command::new(strace);
    traced.args(["-f", "-qq", "-o", "/dev/null"]);
    for path in paths {
        traced.arg("-P").arg(path);
    }
    for injection in injections {
        traced.arg("-e").arg(format!("inject={injection}"));
    }
    traced.arg("--").arg(command.get_program()).args(command.get_args());
    traced.env_clear();
    for (name, value) in command.get_envs() {
        if let Some(value) = value {
            traced.env(name, value);
        }
    }
    if let Some(directory) = command.get_current_dir() {
        traced.current_dir(directory);
    }
    traced.stdin(Stdio::null());
    run_with_deadline(&mut traced, COMMAND_DEADLINE)
}

/// Regression: `mkdir` of a new roster directory interrupted by a signal
/// (EINTR) failed the registration instead of being retried.
#[test]
fn an_interrupted_mkdir_of_the_roster_directory_is_retried() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    let command = sandbox.command_in_root("roster-register", &["--pid", &owner.pid().to_string(), "--quiet"]);
    let outcome = under_fault(&command, &["mkdir:error=EINTR:when=1"], &[]);
    outcome.expect_code(0);
    assert!(sandbox.record_path(owner.pid()).is_file(), "no record after a retried mkdir\n{outcome}");
}

/// Regression: `canonicalize` of the roster directory's parents (a
/// `readlink`) interrupted by EINTR failed the registration.
#[test]
fn an_interrupted_readlink_while_checking_the_parents_is_retried() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    sandbox.register(owner.pid(), &[]);
    let command = sandbox.command_in_root("roster-register", &["--pid", &owner.pid().to_string(), "--quiet"]);
    let base = sandbox.base();
    let outcome = under_fault(&command, &["readlink:error=EINTR:when=1"], &[&base]);
    outcome.expect_code(0);
}

/// A sandbox, a live owner and an existing directory `work` in the sandbox.
fn owner_and_work_directory() -> (Sandbox, Owner, PathBuf) {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    let work = sandbox.base().join("work");
    std::fs::create_dir(&work).unwrap();
    (sandbox, owner, work)
}

/// Registers with `--cwd` an existing directory while `injections` fail
/// the calls naming it, and checks the outcome is an I/O error (exit 1)
/// that says `cause`, not bad input that says `not_said`, and no record.
fn register_fails_with_an_io_error(injections: &[&str], cause: &str, not_said: &str) {
    let (sandbox, owner, work) = owner_and_work_directory();
    let command = sandbox.command_in_root(
        "roster-register",
        &["--pid", &owner.pid().to_string(), "--cwd", work.to_str().unwrap()],
    );
    let outcome = under_fault(&command, injections, &[&work]);
    outcome.expect_code(1).expect_error_line("roster-register");
    assert!(!outcome.stderr.contains(not_said), "{outcome}");
    assert!(outcome.stderr.contains(cause), "{outcome}");
    assert!(!sandbox.record_path(owner.pid()).exists());
}

/// Regression: a `stat` of `--cwd` that failed with EIO was reported as
/// "is not a directory" with exit 2 (bad input); an I/O error is exit 1.
#[test]
fn a_failing_stat_of_the_cwd_is_an_io_error_not_bad_input() {
    register_fails_with_an_io_error(
        &["statx:error=EIO", "newfstatat:error=EIO"],
        "Input/output error",
        "is not a directory",
    );
}

/// Regression: resolving `--cwd` (a `readlink` per component) that failed
/// with ENOSPC was reported as bad input, "give an existing directory",
/// exit 2; the system failing while looking is an I/O error, exit 1.
#[test]
fn a_failing_resolution_of_the_cwd_is_an_io_error_not_bad_input() {
    register_fails_with_an_io_error(
        &["readlink:error=ENOSPC"],
        "No space left on device",
        "give an existing directory",
    );
}

/// Regression: resolving a consent command's session directory retried
/// neither an interrupted `readlink` (EINTR: exit 2) nor told a failing
/// system (ENOSPC) from a path that is not there (both "pass an existing
/// directory with --cwd", exit 2).
#[test]
fn resolving_the_session_directory_retries_eintr_and_an_io_error_is_exit_1() {
    let (sandbox, owner, work) = owner_and_work_directory();
    let status = || {
        sandbox.command_in_root(
            "roster-consent",
            &["status", "--pid", &owner.pid().to_string(), "--cwd", work.to_str().unwrap()],
        )
    };
    under_fault(&status(), &["readlink:error=EINTR:when=1"], &[&work]).expect_code(0);
    let failed = under_fault(&status(), &["readlink:error=ENOSPC"], &[&work]);
    failed.expect_code(1).expect_error_line("roster-consent");
    assert!(!failed.stderr.contains("pass an existing directory"), "{failed}");
    assert!(failed.stderr.contains("No space left on device"), "{failed}");
    let missing = sandbox.base().join("missing");
    let mut gone = sandbox.command_in_root(
        "roster-consent",
        &["status", "--pid", &owner.pid().to_string(), "--cwd", missing.to_str().unwrap()],
    );
    let outcome = run_with_deadline(&mut gone, COMMAND_DEADLINE);
    outcome.expect_code(2);
    assert!(outcome.stderr.contains("pass an existing directory with --cwd"), "{outcome}");
}

/// Regression: the `isatty` check of a hook's stdin (an `ioctl`)
/// interrupted by EINTR made the hook give up on its payload.
#[test]
fn an_interrupted_terminal_check_of_the_hook_payload_is_retried() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    let payload = sandbox.base().join("payload.json");
    std::fs::write(&payload, br#"{"session_id":"s-eintr","hook_event_name":"SessionStart"}"#).unwrap();
    let mut command = sandbox
        .command_in_root("roster-register", &["--hook", "claude-code", "--pid", &owner.pid().to_string()]);
    command.arg("--cwd").arg(sandbox.home());
    let strace = require_tool("strace");
    // The shell gives strace (and so the hook) the payload as stdin, which
    // `run_with_deadline` would otherwise make empty.
    let mut traced = Command::new("sh");
    traced.args(["-c", "exec \"$@\" < \"$0\""]).arg(&payload).arg(strace);
    traced.args(["-f", "-qq", "-o", "/dev/null", "-e", "inject=ioctl:error=EINTR:when=1", "--"]);
    traced.arg(command.get_program()).args(command.get_args());
    traced.env_clear().env("PATH", std::env::var_os("PATH").unwrap()).env("HOME", sandbox.home());
    traced.current_dir(sandbox.home());
    let outcome = run_with_deadline(&mut traced, COMMAND_DEADLINE);
    outcome.expect_code(0);
    assert_eq!(outcome.stdout, b"", "hook mode wrote to stdout");
    let log = std::fs::read_to_string(sandbox.root().join("hook-errors.log")).unwrap_or_default();
    assert!(sandbox.record_path(owner.pid()).is_file(), "no record\n{outcome}\nhook-errors.log: {log}");
    assert_eq!(sandbox.record(owner.pid())["session_id"], "s-eintr");
}

/// Regression: when the `stat` of roster-register next to roster-hooks
/// failed (EIO), install took the binaries for absent and wrote hooks that
/// call them by bare name, silently changing what the hooks run; it now
/// fails and leaves the settings file as it was.
#[test]
fn hooks_install_fails_when_it_cannot_tell_where_the_binaries_are() {
    let sandbox = Sandbox::new();
    let settings = sandbox.home().join(".claude/settings.json");
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    std::fs::write(&settings, b"{\"model\": \"opus\"}\n").unwrap();
    let mut command = sandbox.command("roster-hooks");
    command.args(["install", "claude-code"]);
    let register = tests::binary("roster-register");
    let outcome = under_fault(&command, &["statx:error=EIO", "newfstatat:error=EIO"], &[&register]);
    outcome.expect_code(1).expect_error_line("roster-hooks");
    assert!(outcome.stderr.contains("cannot inspect"), "{outcome}");
    assert_eq!(std::fs::read(&settings).unwrap(), b"{\"model\": \"opus\"}\n");
}
