//! Consent is decided from the session's own directory (docs/contract.md §6.4, §7,
//! §11): `roster-consent status --pid P` and `should-arm --pid P` find the
//! repository file from the `cwd` recorded for the session, never from the
//! caller's directory. Regression: an orchestrator asking from `/` got "no"
//! for a session in an opted-in repository, and one asking from a
//! repository of its own got that repository's answer for every session.

use std::path::{Path, PathBuf};

use serde_json::Value;
use tests::{COMMAND_DEADLINE, Outcome, Owner, Sandbox, make_identity_stale, run_with_deadline};

const OPTED_IN: &str = "[consent]\nauto_arm = true\n";

/// A sandbox with an opted-in repository, one that did not opt in, and an
/// unrelated directory (the orchestrator's) that opted in on its own.
struct Scene {
    sandbox: Sandbox,
    opted_in: PathBuf,
    plain: PathBuf,
    orchestrator: PathBuf,
}

impl Scene {
    fn new() -> Scene {
        let sandbox = Sandbox::new();
        let opted_in = sandbox.home().join("src/opted-in");
        let plain = sandbox.home().join("src/plain");
        let orchestrator = sandbox.home().join("orchestrator");
        for directory in [&opted_in, &plain, &orchestrator] {
            std::fs::create_dir_all(directory).unwrap();
        }
        write_repo_file(&opted_in, OPTED_IN);
        write_repo_file(&orchestrator, OPTED_IN);
        Scene { sandbox, opted_in, plain, orchestrator }
    }

    /// `roster-consent ARGS` run from `directory`.
    fn consent_from(&self, directory: &Path, args: &[&str]) -> Outcome {
        let mut command = self.sandbox.command_in_root("roster-consent", args);
        command.current_dir(directory);
        run_with_deadline(&mut command, COMMAND_DEADLINE)
    }

    /// `should-arm --pid PID` from `directory`: its exit code, after
    /// checking that it printed nothing.
    fn should_arm_from(&self, directory: &Path, pid: u32) -> i32 {
        let outcome = self.consent_from(directory, &["should-arm", "--pid", &pid.to_string()]);
        assert!(outcome.stdout.is_empty() && outcome.stderr.is_empty(), "should-arm printed\n{outcome}");
        outcome.code()
    }

    fn status_json_from(&self, directory: &Path, pid: u32) -> Value {
        self.consent_from(directory, &["status", "--json", "--pid", &pid.to_string()]).json()
    }

    /// A running owner registered as working in `directory`.
    fn registered_owner(&self, directory: &Path) -> Owner {
        let owner = Owner::spawn();
        self.sandbox.register(owner.pid(), &["--cwd", directory.to_str().unwrap()]);
        owner
    }
}

/// A repository file as its owner writes it: a regular file, mode 0644.
fn write_repo_file(directory: &Path, text: &str) {
    let path = directory.join(".roster.toml");
    std::fs::write(&path, text).unwrap();
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o644)).unwrap();
}

#[test]
fn an_orchestrator_gets_each_sessions_own_answer_from_anywhere() {
    let scene = Scene::new();
    let in_opted_in = scene.registered_owner(&scene.opted_in);
    let in_plain = scene.registered_owner(&scene.plain);
    for caller_directory in [Path::new("/"), scene.orchestrator.as_path(), scene.plain.as_path()] {
        let from = caller_directory.display();
        assert_eq!(
            scene.should_arm_from(caller_directory, in_opted_in.pid()),
            0,
            "opted-in session, from {from}"
        );
        assert_eq!(scene.should_arm_from(caller_directory, in_plain.pid()), 1, "plain session, from {from}");
    }

    let status = scene.status_json_from(Path::new("/"), in_opted_in.pid());
    assert_eq!(status["directory"]["path"], scene.opted_in.to_str().unwrap(), "{status:#}");
    assert_eq!(status["directory"]["source"], "record", "{status:#}");
    assert_eq!(status["repo"]["path"], scene.opted_in.join(".roster.toml").to_str().unwrap(), "{status:#}");
    assert_eq!(status["should_arm"], true, "{status:#}");

    let status = scene.status_json_from(&scene.orchestrator, in_plain.pid());
    assert_eq!(status["directory"]["path"], scene.plain.to_str().unwrap(), "{status:#}");
    assert_eq!(status["repo"]["path"], Value::Null, "the orchestrator's own file answered: {status:#}");
    assert_eq!(status["should_arm"], false, "{status:#}");

    let text = scene.consent_from(Path::new("/"), &["status", "--pid", &in_opted_in.pid().to_string()]);
    let text = text.expect_code(0).stdout_text();
    assert!(text.contains("directory   ~/src/opted-in (from the session's record)"), "{text}");
}

#[test]
fn an_explicit_cwd_still_wins_over_the_record() {
    let scene = Scene::new();
    let in_plain = scene.registered_owner(&scene.plain);
    let pid = in_plain.pid().to_string();
    let opted_in = scene.opted_in.to_str().unwrap();
    let outcome = scene.consent_from(Path::new("/"), &["should-arm", "--pid", &pid, "--cwd", opted_in]);
    assert_eq!(outcome.code(), 0, "{outcome}");
    let status =
        scene.consent_from(Path::new("/"), &["status", "--json", "--pid", &pid, "--cwd", opted_in]).json();
    assert_eq!(status["directory"]["path"], opted_in, "{status:#}");
    assert_eq!(status["directory"]["source"], "--cwd", "{status:#}");
}

#[test]
fn a_session_without_a_record_is_named_not_guessed() {
    let scene = Scene::new();
    // The registry does not exist yet.
    let unregistered = Owner::spawn();
    let pid = unregistered.pid().to_string();
    let outcome = scene.consent_from(&scene.orchestrator, &["status", "--pid", &pid]);
    outcome.expect_code(2).expect_error_line("roster-consent");
    assert!(outcome.stderr.contains(&format!("pid {pid}")), "{outcome}");
    assert!(outcome.stderr.contains(scene.sandbox.root().to_str().unwrap()), "{outcome}");
    assert!(outcome.stderr.contains("--cwd"), "{outcome}");
    assert_eq!(scene.should_arm_from(&scene.orchestrator, unregistered.pid()), 1);

    // The registry exists, with another session in it.
    let _other = scene.registered_owner(&scene.opted_in);
    let outcome = scene.consent_from(&scene.orchestrator, &["status", "--json", "--pid", &pid]);
    outcome.expect_code(2).expect_error_line("roster-consent");
    assert!(outcome.stdout.is_empty(), "{outcome}");
    let record = scene.sandbox.record_path(unregistered.pid());
    assert!(outcome.stderr.contains(&format!("pid {pid}")), "{outcome}");
    assert!(outcome.stderr.contains(record.to_str().unwrap()), "{outcome}");
    assert!(outcome.stderr.contains("pass the session's directory with --cwd DIR"), "{outcome}");
    assert!(outcome.stderr.contains("roster-register"), "{outcome}");
    assert_eq!(scene.should_arm_from(&scene.orchestrator, unregistered.pid()), 1);
    assert_eq!(scene.should_arm_from(Path::new("/"), unregistered.pid()), 1);
}

#[test]
fn a_record_of_another_process_at_the_pid_lends_no_directory() {
    let scene = Scene::new();
    let owner = scene.registered_owner(&scene.opted_in);
    let pid = owner.pid();
    assert_eq!(scene.should_arm_from(&scene.orchestrator, pid), 0, "the record's directory is believed");

    // The record now names an earlier process that had this pid.
    scene.sandbox.edit_record(pid, make_identity_stale);
    assert_eq!(scene.should_arm_from(&scene.orchestrator, pid), 1);
    assert_eq!(scene.should_arm_from(Path::new("/"), pid), 1);
    let outcome = scene.consent_from(&scene.orchestrator, &["status", "--pid", &pid.to_string()]);
    outcome.expect_code(2).expect_error_line("roster-consent");
    assert!(outcome.stderr.contains("belongs to a process that is gone"), "{outcome}");
}

/// Regression: `status` of a session that ended was bad input (exit 2,
/// "cannot tell pid N's directory"), and otherwise printed the marker's
/// path where there was none and said "auto-arm is off" twice. A session
/// that ended is said gone, with what it last was (its marker's state, its
/// record's directory), and refused like any owner that is not running
/// (exit 3); should-arm still says no.
#[test]
fn a_session_that_ended_is_said_gone_with_what_it_last_was() {
    let scene = Scene::new();
    let owner = scene.registered_owner(&scene.plain);
    let pid = owner.pid().to_string();
    let running = scene.consent_from(&scene.orchestrator, &["status", "--pid", &pid]);
    let text = running.expect_code(0).stdout_text();
    assert_eq!(text.matches("auto-arm is off").count(), 1, "said more than once:\n{text}");
    assert!(!text.contains("marker "), "a marker's path shown where there is none:\n{text}");
    scene.sandbox.run("roster-consent", &["disarm", "--pid", &pid]).expect_code(0);

    let ended_pid = owner.kill();
    assert_eq!(scene.should_arm_from(&scene.orchestrator, ended_pid), 1);
    let outcome = scene.consent_from(&scene.orchestrator, &["status", "--pid", &pid]);
    outcome.expect_code(3).expect_error_line("roster-consent");
    assert!(outcome.stderr.contains("has ended"), "{outcome}");
    let text = outcome.stdout_text();
    assert!(text.contains(&format!("gone: pid {pid} is not running")), "{text}");
    assert!(text.contains("directory   ~/src/plain (from the session's record)"), "{text}");
    assert!(text.contains("last state  disarmed"), "{text}");
    let marker = scene.sandbox.marker_path(ended_pid);
    assert!(text.contains(&format!("marker      {}", marker.display())), "{text}");
    assert!(!text.contains("auto-arm"), "nothing is decided for a session that ended:\n{text}");

    let outcome = scene.consent_from(&scene.orchestrator, &["status", "--json", "--pid", &pid]);
    outcome.expect_code(3);
    let status: Value = serde_json::from_slice(&outcome.stdout).expect("status --json prints JSON");
    assert_eq!(status["session_ended"], true, "{status:#}");
    assert_eq!(status["should_arm"], false, "{status:#}");
    assert_eq!(status["directory"]["path"], scene.plain.to_str().unwrap(), "{status:#}");
    assert_eq!(status["record"]["liveness"], "dead", "{status:#}");
    assert_eq!(status["marker"]["written_state"], "disarmed", "{status:#}");

    // Pruned: nothing is left of it, and it is still gone, not bad input.
    scene.sandbox.run("roster-prune", &[]).expect_code(0);
    let outcome = scene.consent_from(&scene.orchestrator, &["status", "--pid", &pid]);
    outcome.expect_code(3);
    let text = outcome.stdout_text();
    assert!(text.contains("record      none left") && text.contains("last state  none"), "{text}");
    assert!(!text.contains("marker ") && !text.contains("directory "), "{text}");
}

#[test]
fn arm_records_the_sessions_directory_not_the_callers() {
    let scene = Scene::new();
    // This test process is the session (`--pid parent`), registered as
    // working in the opted-in repository; the commands run from home.
    let opted_in = scene.opted_in.to_str().unwrap();
    scene.sandbox.run("roster-register", &["--pid", "parent", "--cwd", opted_in, "--quiet"]).expect_code(0);
    let marker = scene.sandbox.run("roster-consent", &["arm", "--pid", "parent", "--json"]).json();
    assert_eq!(marker["cwd"], opted_in, "{marker:#}");
    let status = scene.sandbox.run("roster-consent", &["status", "--json", "--pid", "parent"]).json();
    assert_eq!(status["directory"]["source"], "record", "{status:#}");
}
