//! Consent and message queues while another process holds one of roster's
//! locks (docs/contract.md §2, §6.3, §6.4, §6.6). An `flock` works on a
//! read-only descriptor, so any process that can read the registry — one
//! in a sandbox that sees it read-only, too — can hold `.lock` or a
//! queue's lock for ever. Withdrawing consent must win all the same: a
//! disarm and a session end close consent within their bounds, and then
//! nothing is queued or delivered; a send to a queue held elsewhere is
//! refused within its bound, naming the queue.
//!
//! Regressions: a disarm used to fail with "registry busy" after 5 s while
//! a sandboxed process held `.lock`, and a send made meanwhile was queued
//! and delivered at the next prompt; a session end under a held lock left
//! the session armed; a held queue lock made every send wait 5 s, and a
//! session end spend its whole budget on the queue before its marker.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;
use tests::{
    ArmedOwner, COMMAND_DEADLINE, LockHolder, Outcome, Sandbox, StdinFeed, binary, lock_has_waiter,
    lock_is_held, poll_until, record_file_name_here, run_to_completion,
};

/// What "at once" allows a command on a loaded machine, well below the
/// 5 s the registry's writers wait for its lock.
const PROMPTLY: Duration = Duration::from_secs(3);

/// A sandbox whose project does not opt in: its sessions accept messages
/// only when armed by hand.
struct Scene {
    sandbox: Sandbox,
    project: PathBuf,
}

impl Scene {
    fn new() -> Scene {
        let sandbox = Sandbox::new();
        let project = sandbox.home().join("src/app");
        std::fs::create_dir_all(&project).unwrap();
        Scene { sandbox, project }
    }

    /// A live Claude Code session that armed itself, with `session_id`.
    fn armed_session(&self, session_id: &str) -> ArmedOwner {
        let owner = ArmedOwner::spawn(self.sandbox.root(), self.sandbox.home(), &self.project);
        let cwd = self.project.to_str().unwrap();
        self.sandbox
            .register(owner.pid(), &["--cwd", cwd, "--harness", "claude-code", "--session-id", session_id]);
        owner
    }

    fn lock_path(&self) -> PathBuf {
        self.sandbox.root().join(".lock")
    }

    fn queue_path(&self, pid: u32) -> PathBuf {
        let name = record_file_name_here(pid);
        self.sandbox.root().join("messages").join(name.trim_end_matches(".json"))
    }

    /// The message files queued for `pid` (temporaries aside).
    fn message_files(&self, pid: u32) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.queue_path(pid))
            .map(|entries| entries.map(|entry| entry.unwrap().file_name().into_string().unwrap()).collect())
            .unwrap_or_default();
        names.retain(|name| !name.starts_with('.'));
        names
    }

    fn send(&self, pid: u32, text: &str) -> Outcome {
        self.sandbox.run("roster-send", &["--to", &pid.to_string(), "--", text])
    }

    fn should_arm(&self, pid: u32) -> Outcome {
        self.sandbox.run("roster-consent", &["should-arm", "--pid", &pid.to_string()])
    }

    fn marker_state(&self, pid: u32) -> Value {
        let bytes = std::fs::read(self.sandbox.marker_path(pid)).expect("the session's marker");
        serde_json::from_slice::<Value>(&bytes).expect("a marker is JSON")["state"].clone()
    }

    /// The session-end hook of `pid`'s session, as Claude Code runs it.
    fn session_end(&self, pid: u32, session_id: &str) -> tests::Finished {
        let payload = serde_json::json!({
            "session_id": session_id,
            "hook_event_name": "SessionEnd",
            "reason": "exit",
            "cwd": self.project,
        });
        let command = self.sandbox.command_in_root(
            "roster-prune",
            &["--current", "--hook", "claude-code", "--pid", &pid.to_string()],
        );
        run_to_completion(command, StdinFeed::Bytes(payload.to_string().into_bytes()), COMMAND_DEADLINE)
    }

    /// A live session whose owner runs its hooks as its children (as a
    /// harness does), armed from inside it, with `session_id`.
    fn armed_shell(&self, session_id: &str) -> tests::SessionShell {
        let mut owner = tests::SessionShell::spawn();
        let cwd = self.project.to_str().unwrap();
        let arm = self.sandbox.command_in_root("roster-consent", &["arm", "--pid", "parent", "--cwd", cwd]);
        let armed = owner.run(&arm, b"", COMMAND_DEADLINE);
        assert_eq!(armed.code(), Some(0), "{}", armed.stderr_text());
        self.sandbox
            .register(owner.pid(), &["--cwd", cwd, "--harness", "claude-code", "--session-id", session_id]);
        owner
    }

    /// The delivery hook of `owner`'s session at the user's next prompt,
    /// run inside the session.
    fn next_prompt(&self, owner: &mut tests::SessionShell, session_id: &str) -> tests::Finished {
        let payload = serde_json::json!({
            "session_id": session_id,
            "hook_event_name": "UserPromptSubmit",
            "prompt": "go on",
            "cwd": self.project,
        });
        let command = self
            .sandbox
            .command_in_root("roster-state", &["--hook", "claude-code", "--event", "UserPromptSubmit"]);
        owner.run(&command, payload.to_string().as_bytes(), COMMAND_DEADLINE)
    }

    fn message_status(&self, id: &str) -> Value {
        self.sandbox.run("roster-send", &["--json", "--status", id]).json()
    }
}

#[test]
fn a_disarm_takes_effect_at_once_while_a_read_only_sandbox_holds_the_registry_lock() {
    let scene = Scene::new();
    let mut owner = scene.armed_shell("withdrawn");
    let queued_while_armed =
        scene.sandbox.run("roster-send", &["--json", "--to", "withdrawn", "before"]).json()["id"]
            .as_str()
            .expect("an id")
            .to_owned();
    let _holder = LockHolder::spawn_in_read_only_sandbox(scene.sandbox.root(), &scene.lock_path());

    let disarm = scene.sandbox.run("roster-consent", &["disarm", "--pid", &owner.pid().to_string()]);
    disarm.expect_code(0);
    assert!(disarm.elapsed < PROMPTLY, "the disarm waited {:?} for the lock\n{disarm}", disarm.elapsed);
    assert_eq!(scene.marker_state(owner.pid()), "disarmed");
    scene.should_arm(owner.pid()).expect_code(1);

    // Nothing is queued from now on, and nothing waits for the lock.
    let refused = scene.send(owner.pid(), "after");
    refused.expect_code(1).expect_error_line("roster-send");
    assert!(refused.stderr.contains("does not accept messages"), "{refused}");
    assert!(refused.elapsed < PROMPTLY, "the send waited {:?}\n{refused}", refused.elapsed);
    assert_eq!(scene.message_files(owner.pid()).len(), 1, "a message was queued after the disarm");

    // Nor delivered: the message queued before is refused at the prompt.
    let prompt = scene.next_prompt(&mut owner, "withdrawn");
    assert_eq!(prompt.code(), Some(0), "{}", prompt.stderr_text());
    assert!(prompt.stdout.is_empty(), "a message was delivered after the disarm: {}", prompt.stdout_text());
    assert_eq!(scene.message_status(&queued_while_armed)["status"], "refused");
}

#[test]
fn a_session_end_withdraws_consent_within_its_budget_while_the_registry_lock_is_held_read_only() {
    let scene = Scene::new();
    let owner = scene.armed_session("ending");
    let _holder = LockHolder::spawn_read_only(&scene.lock_path());

    let end = scene.session_end(owner.pid(), "ending");
    assert_eq!(end.code(), Some(0), "{}", end.stderr_text());
    assert!(end.stdout.is_empty(), "{}", end.stdout_text());
    assert!(end.elapsed < PROMPTLY, "the session end took {:?}", end.elapsed);

    // The owner still runs (a harness runs its session-end hook before it
    // exits), and accepts nothing any more.
    scene.should_arm(owner.pid()).expect_code(1);
    assert_eq!(scene.marker_state(owner.pid()), "disarmed");
    let refused = scene.send(owner.pid(), "too late");
    refused.expect_code(1);
    assert!(refused.stderr.contains("does not accept messages"), "{refused}");
    // The record waits for the next prune; the failure is logged.
    assert!(scene.sandbox.find_record(owner.pid()).is_some(), "a record was removed without the lock");
    let log = scene.sandbox.hook_error_lines();
    assert!(
        log.iter().any(
            |line| line.contains("withdrawn without the registry lock") && line.contains("registry busy")
        ),
        "{log:?}"
    );
}

#[test]
fn a_send_to_a_queue_whose_lock_is_held_read_only_is_refused_within_a_bound_naming_the_queue() {
    let scene = Scene::new();
    let owner = scene.armed_session("busy-queue");
    scene.send(owner.pid(), "first").expect_code(0);
    let queue = scene.queue_path(owner.pid());
    let _holder = LockHolder::spawn_read_only(&queue);

    let refused = scene.send(owner.pid(), "second");
    refused.expect_code(1).expect_error_line("roster-send");
    assert!(refused.elapsed < PROMPTLY, "the send waited {:?}\n{refused}", refused.elapsed);
    for said in [queue.to_str().unwrap(), "another process holds its lock", "nothing was queued"] {
        assert!(refused.stderr.contains(said), "the refusal does not say {said:?}\n{refused}");
    }
    assert_eq!(scene.message_files(owner.pid()).len(), 1);
}

#[test]
fn a_session_end_whose_queue_lock_is_held_read_only_still_ends_the_session_within_its_budget() {
    let scene = Scene::new();
    let owner = scene.armed_session("ending-with-mail");
    scene.send(owner.pid(), "unread").expect_code(0);
    let queue = scene.queue_path(owner.pid());
    let holder = LockHolder::spawn_read_only(&queue);

    let end = scene.session_end(owner.pid(), "ending-with-mail");
    assert_eq!(end.code(), Some(0), "{}", end.stderr_text());
    assert!(scene.sandbox.find_record(owner.pid()).is_none(), "the session's record survived its end");
    assert!(
        !scene.sandbox.marker_path(owner.pid()).exists(),
        "the session's consent marker survived its end"
    );
    assert!(scene.sandbox.hook_error_lines().is_empty(), "{:?}", scene.sandbox.hook_error_lines());
    scene.should_arm(owner.pid()).expect_code(1);

    // The queue its holder kept is an orphan the next prune removes.
    assert!(queue.exists());
    holder.kill();
    scene.sandbox.run("roster-prune", &[]).expect_code(0);
    assert!(!queue.exists(), "prune left the orphaned queue");
}

#[test]
fn an_arm_that_waited_for_the_registry_lock_gives_way_to_a_disarm_made_meanwhile() {
    let scene = Scene::new();
    // Any registration creates the registry and its lock.
    let other = ArmedOwner::spawn(scene.sandbox.root(), scene.sandbox.home(), &scene.project);
    // The registration's own lock (its reaper may take it again right
    // after) is let go before the holder takes it.
    assert!(poll_until(Duration::from_secs(10), || !lock_is_held(&scene.lock_path())));
    let holder = LockHolder::spawn_read_only(&scene.lock_path());

    let session = ArmingSession::spawn(&scene);
    assert!(
        poll_until(Duration::from_secs(10), || lock_has_waiter(&scene.lock_path())),
        "the arm never waited for the lock"
    );
    let disarm = scene.sandbox.run("roster-consent", &["disarm", "--pid", &session.pid().to_string()]);
    disarm.expect_code(0);
    assert!(disarm.elapsed < PROMPTLY, "the disarm waited {:?}\n{disarm}", disarm.elapsed);

    holder.kill();
    let (status, stderr) = session.arm_outcome();
    assert_eq!(status, "1", "the arm did not give way: {stderr}");
    assert!(stderr.contains("disarmed while this arm waited"), "{stderr}");
    assert_eq!(scene.marker_state(session.pid()), "disarmed");
    scene.should_arm(session.pid()).expect_code(1);
    assert!(!lock_is_held(&scene.lock_path()));
    drop(other);
}

/// A session's shell that runs `roster-consent arm --pid parent` (so the
/// owner is verified, as for `ArmedOwner`), keeps the arm's exit status
/// and stderr in files, then becomes `sleep`. Killed when dropped.
struct ArmingSession {
    child: std::process::Child,
    status_file: PathBuf,
    stderr_file: PathBuf,
}

impl ArmingSession {
    fn spawn(scene: &Scene) -> ArmingSession {
        let status_file = scene.sandbox.base().join("arm-status");
        let stderr_file = scene.sandbox.base().join("arm-stderr");
        let child = Command::new("sh")
            .args([
                "-c",
                "\"$0\" --dir \"$1\" arm --pid parent --cwd \"$2\" 2>\"$3\"; \
                 echo $? >\"$4.partial\" && mv \"$4.partial\" \"$4\" && exec sleep 100000",
            ])
            .arg(binary("roster-consent"))
            .arg(scene.sandbox.root())
            .arg(&scene.project)
            .arg(&stderr_file)
            .arg(&status_file)
            .env_clear()
            .env("HOME", scene.sandbox.home())
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .expect("spawn a session that arms itself");
        ArmingSession { child, status_file, stderr_file }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The arm's exit status and stderr, once it has ended.
    fn arm_outcome(&self) -> (String, String) {
        assert!(
            poll_until(COMMAND_DEADLINE, || self.status_file.exists()),
            "the arm did not end after the lock was freed"
        );
        let read = |path: &Path| std::fs::read_to_string(path).unwrap_or_default().trim().to_owned();
        (read(&self.status_file), read(&self.stderr_file))
    }
}

impl Drop for ArmingSession {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
