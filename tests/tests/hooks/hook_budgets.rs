//! Harnesses kill slow hooks, and give a session-end hook the least time
//! of all. In hook mode the whole run, lock wait and payload wait included,
//! fits its budget: a session start within 1 s, a session end within
//! 500 ms, even when another process holds the registry lock forever and
//! when stdin stays open with no data. Past the bound the hook logs what
//! held it, exits 0 and prints nothing on stdout.

use std::time::Duration;

use tests::LockHolder;
use tests::Sandbox;
use tests::hooks::{MACHINE_DEADLINE, StdinFeed, run_to_completion};

const SESSION_START_BUDGET: Duration = Duration::from_millis(1000);
const SESSION_END_BUDGET: Duration = Duration::from_millis(500);

fn payload(sandbox: &Sandbox) -> Vec<u8> {
    format!(
        r#"{{"session_id":"budget-1","hook_event_name":"SessionStart","source":"startup","cwd":{:?}}}"#,
        sandbox.project().to_string_lossy()
    )
    .into_bytes()
}

/// `feed` for each run: a payload, or stdin held open with nothing on it.
fn feeds(sandbox: &Sandbox) -> Vec<(&'static str, StdinFeed)> {
    vec![("payload", StdinFeed::Bytes(payload(sandbox))), ("stdin held open", StdinFeed::HeldOpen)]
}

#[test]
fn hooks_fit_their_budget_while_another_process_holds_the_lock_forever() {
    let sandbox = Sandbox::with_default_roster();
    let owner = sandbox.spawn_idle_owner();
    let pid = owner.pid().to_string();
    sandbox.create_roster_directory();
    let _holder = LockHolder::spawn(&sandbox.root().join(".lock"));
    let runs: [(&str, &[&str], Duration); 2] = [
        ("roster-register", &["--hook", "claude-code"], SESSION_START_BUDGET),
        ("roster-prune", &["--current", "--hook", "claude-code"], SESSION_END_BUDGET),
    ];
    let mut logged = 0;
    for (tool, args, budget) in runs {
        for (what, feed) in feeds(&sandbox) {
            let mut command = sandbox.roster_command(tool);
            command.args(args).args(["--pid", &pid]);
            let finished = run_to_completion(command, feed, MACHINE_DEADLINE);
            let context =
                format!("{tool} ({what}): {:?}, stderr {}", finished.elapsed, finished.stderr_text());
            assert_eq!(finished.code(), Some(0), "{context}");
            assert!(finished.stdout.is_empty(), "{context}");
            assert!(finished.elapsed < budget, "over the {budget:?} budget: {context}");
            logged += 1;
            let lines = sandbox.hook_error_lines();
            assert_eq!(lines.len(), logged, "{context}: the log holds {lines:?}");
            let last = lines.last().expect("a line");
            assert!(
                last.contains(&format!("{tool}: "))
                    && (last.contains("registry busy") || last.contains("payload")),
                "{context}: logged {last:?}"
            );
        }
    }
    assert!(sandbox.find_record(owner.pid()).is_none(), "nothing was registered under a held lock");
}

/// The harness's clock runs from its fork, not from the hook's first
/// step: a session end whose process spent 120 ms before it reached the
/// hook (here a shell that sleeps, then execs the hook in the same
/// process, as a machine short of CPU delays it) still ends within the
/// budget counted from the fork, with the lock held forever.
#[test]
fn a_session_end_started_late_still_fits_the_budget_counted_from_its_fork() {
    let sandbox = Sandbox::with_default_roster();
    let owner = sandbox.spawn_idle_owner();
    let pid = owner.pid().to_string();
    sandbox.create_roster_directory();
    let _holder = LockHolder::spawn(&sandbox.root().join(".lock"));
    let hook = sandbox.roster_command("roster-prune");
    let mut late = std::process::Command::new("/bin/sh");
    late.env_clear()
        .envs(hook.get_envs().filter_map(|(name, value)| Some((name, value?))))
        .current_dir(hook.get_current_dir().expect("the sandbox sets a directory"))
        .args(["-c", "sleep 0.12; exec \"$0\" \"$@\""])
        .arg(hook.get_program())
        .args(["--current", "--hook", "claude-code", "--pid", &pid]);
    let finished = run_to_completion(late, StdinFeed::HeldOpen, MACHINE_DEADLINE);
    let context = format!("{:?}, stderr {}", finished.elapsed, finished.stderr_text());
    assert_eq!(finished.code(), Some(0), "{context}");
    assert!(finished.elapsed >= Duration::from_millis(120), "the shell slept first: {context}");
    assert!(finished.elapsed < SESSION_END_BUDGET, "over the budget: {context}");
    let lines = sandbox.hook_error_lines();
    assert_eq!(lines.len(), 1, "{context}: the log holds {lines:?}");
    assert!(lines[0].contains("consent was withdrawn without the registry lock"), "{context}: {lines:?}");
}

/// A session end does not need its payload to find its owner: with stdin
/// held open, the record is still removed within the budget.
#[test]
fn a_session_end_with_stdin_held_open_removes_the_record_within_its_budget() {
    let sandbox = Sandbox::with_default_roster();
    let owner = sandbox.spawn_idle_owner();
    let pid = owner.pid().to_string();
    let mut register = sandbox.roster_command("roster-register");
    register.args(["--hook", "claude-code", "--pid", &pid]);
    let finished = run_to_completion(register, StdinFeed::Bytes(payload(&sandbox)), MACHINE_DEADLINE);
    assert_eq!(finished.code(), Some(0));
    assert!(sandbox.find_record(owner.pid()).is_some(), "registered: {}", finished.stderr_text());

    let mut end = sandbox.roster_command("roster-prune");
    end.args(["--current", "--hook", "claude-code", "--pid", &pid]);
    let finished = run_to_completion(end, StdinFeed::HeldOpen, MACHINE_DEADLINE);
    assert_eq!(finished.code(), Some(0));
    assert!(finished.stdout.is_empty());
    assert!(finished.elapsed < SESSION_END_BUDGET, "took {:?}", finished.elapsed);
    assert!(sandbox.find_record(owner.pid()).is_none(), "the session end kept the record");
}

/// Outside hook mode a person waits the full 5 s, and is told what for on
/// the terminal; a script (stderr not a terminal) gets the one error line.
#[test]
fn plain_mode_keeps_its_longer_wait_and_says_what_it_waits_for() {
    let sandbox = Sandbox::with_default_roster();
    let owner = sandbox.spawn_idle_owner();
    sandbox.create_roster_directory();
    let holder = LockHolder::spawn(&sandbox.root().join(".lock"));
    let register = format!(
        "{} --pid {}",
        tests::shell_quote(&tests::binary("roster-register").to_string_lossy()),
        owner.pid()
    );
    // `script` gives the command a terminal, as a person's shell would.
    let mut command = std::process::Command::new(tests::require_tool("script"));
    command.env_clear().envs(sandbox.base_environment()).current_dir(sandbox.project());
    command.args(["-qec", &register, "/dev/null"]);
    let finished = run_to_completion(command, StdinFeed::Null, MACHINE_DEADLINE);
    let output = finished.stdout_text();
    assert_eq!(finished.code(), Some(1), "{output}");
    assert!(finished.elapsed >= Duration::from_millis(4900), "gave up after {:?}", finished.elapsed);
    let lines: Vec<&str> = output.lines().map(|line| line.trim_end_matches('\r')).collect();
    assert_eq!(lines.len(), 2, "{output:?}");
    assert!(lines[0].starts_with("roster-register: waiting for the registry lock "), "{output}");
    assert!(lines[0].contains(&format!("(held by pid {})", holder.pid())), "{output}");
    assert!(lines[1].starts_with("roster-register: registry busy: "), "{output}");
    assert!(lines[1].contains(&format!("by pid {}", holder.pid())), "{output}");
}
