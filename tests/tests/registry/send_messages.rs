//! `roster-send` driven as a real process against real session owners
//! (docs/contract.md §6.6): what it queues for a live session that
//! accepts messages and what it refuses, with which exit code; that every
//! message reaches its session exactly once and in each sender's order
//! when sixteen senders race; and that a session killed while a sender
//! waits expires the message, and prune removes its queue. Deliveries are
//! made through the library call the delivery hook makes.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use registry_core::Timestamp;
use registry_core::messages::{ConsentNow, Message};
use serde_json::Value;
use tests::{
    ArmedOwner, COMMAND_DEADLINE, Outcome, Owner, Sandbox, StdinFeed, deliver_at_prompt, poll_until,
    record_file_name_here, run_to_completion, wait_with_deadline,
};

/// A sandbox with a project directory whose `.roster.toml` does not opt in
/// (a session there accepts messages only when armed by hand).
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

    /// A live session that armed itself, registered in the project.
    fn armed_session(&self) -> ArmedOwner {
        let owner = ArmedOwner::spawn(self.sandbox.root(), self.sandbox.home(), &self.project);
        self.register(owner.pid());
        owner
    }

    /// A live session that never armed, in a repository that did not opt in.
    fn closed_session(&self) -> Owner {
        let owner = Owner::spawn();
        self.register(owner.pid());
        owner
    }

    /// Registers `pid` as a Claude Code session, whose hooks deliver.
    fn register(&self, pid: u32) {
        let cwd = self.project.to_str().unwrap();
        self.sandbox.register(pid, &["--cwd", cwd, "--harness", "claude-code"]);
    }

    fn send(&self, args: &[&str]) -> Outcome {
        self.sandbox.run("roster-send", args)
    }

    fn send_stdin(&self, args: &[&str], stdin: &[u8]) -> tests::Finished {
        let command = self.sandbox.command_in_root("roster-send", args);
        run_to_completion(command, StdinFeed::Bytes(stdin.to_vec()), COMMAND_DEADLINE)
    }

    fn queue_path(&self, pid: u32) -> PathBuf {
        let name = record_file_name_here(pid);
        self.sandbox.root().join("messages").join(name.trim_end_matches(".json"))
    }

    /// The message files queued for `pid`, sorted; temporaries of a write
    /// under way are not messages yet.
    fn message_files(&self, pid: u32) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.queue_path(pid))
            .map(|entries| entries.map(|entry| entry.unwrap().file_name().into_string().unwrap()).collect())
            .unwrap_or_default();
        names.retain(|name| !name.starts_with('.'));
        names.sort();
        names
    }
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

#[test]
fn a_message_to_a_live_armed_session_is_queued_privately_and_its_id_printed() {
    let scene = Scene::new();
    let owner = scene.armed_session();
    let pid = owner.pid().to_string();
    let queued = scene.send(&["--json", "--to", &pid, "please rebase onto main"]).json();
    assert_eq!(queued["status"], "queued");
    assert_eq!(queued["seq"], 1);
    assert_eq!(queued["to"]["pid"], owner.pid());
    let id = queued["id"].as_str().unwrap();
    assert!(id.len() == 32 && id.bytes().all(|byte| byte.is_ascii_hexdigit()), "{queued}");
    let files = scene.message_files(owner.pid());
    assert_eq!(files, [format!("0000000000000001-{id}.json")]);
    assert_eq!(mode(&scene.queue_path(owner.pid())), 0o700);
    let file = scene.queue_path(owner.pid()).join(&files[0]);
    assert_eq!(mode(&file), 0o600);
    let content: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    assert_eq!(content["text"], "please rebase onto main");
    assert_eq!(content["outcome"], Value::Null);

    let text = scene.send(&["--to", &pid, "and then run the tests"]);
    text.expect_code(0);
    assert!(text.stdout_text().starts_with("queued "), "{text}");
    let status = scene.send(&["--json", "--status", id]).json();
    assert_eq!((status["status"].as_str(), status["seq"].as_u64()), (Some("pending"), Some(1)));
}

#[test]
fn a_session_that_does_not_accept_messages_refuses_with_exit_1_and_nothing_is_queued() {
    let scene = Scene::new();
    let owner = scene.closed_session();
    let pid = owner.pid().to_string();
    let refused = scene.send(&["--json", "--to", &pid, "hello"]);
    refused.expect_code(1).expect_error_line("roster-send");
    assert!(refused.stderr.contains("does not accept messages"), "{refused}");
    let answer: Value = serde_json::from_slice(&refused.stdout).unwrap();
    assert_eq!(answer["status"], "refused");
    assert!(answer["reason"].as_str().is_some_and(|reason| !reason.is_empty()), "{answer}");
    assert!(scene.message_files(owner.pid()).is_empty());

    // Armed, then disarmed: closed again.
    let armed = scene.armed_session();
    let armed_pid = armed.pid().to_string();
    scene.send(&["--to", &armed_pid, "first"]).expect_code(0);
    let disarm = scene.sandbox.run("roster-consent", &["disarm", "--pid", &armed_pid]);
    disarm.expect_code(0);
    scene.send(&["--to", &armed_pid, "second"]).expect_code(1);
    assert_eq!(scene.message_files(armed.pid()).len(), 1);
}

#[test]
fn no_live_session_is_exit_3() {
    let scene = Scene::new();
    let owner = scene.armed_session();
    let live = owner.pid();
    let dying = Owner::spawn();
    scene.register(dying.pid());
    let dead = dying.kill();
    scene.send(&["--to", &live.to_string(), "so a registry exists"]).expect_code(0);
    for (to, says) in [
        (dead.to_string(), "dead"),
        (tests::dead_pid().to_string(), "no session with owner pid"),
        ("no-such-session-id".to_owned(), "no session holds the session id"),
    ] {
        let outcome = scene.send(&["--to", &to, "hello"]);
        outcome.expect_code(3).expect_error_line("roster-send");
        assert!(outcome.stderr.contains(says), "{to}: {outcome}");
    }
    let unknown = scene.send(&["--status", "0123456789abcdef0123456789abcdef"]);
    unknown.expect_code(3);
    scene.send(&["--status", "not-an-id"]).expect_code(2);
}

/// `--to` takes an agent name when it names exactly one live session: several are bad
/// input naming their pids, none is no such session.
#[test]
fn an_agent_name_names_the_one_live_session_registered_under_it() {
    let scene = Scene::new();
    let wren = scene.armed_session();
    scene.sandbox.register(wren.pid(), &["--agent", "wren"]);
    let ended = Owner::spawn();
    scene.register(ended.pid());
    scene.sandbox.register(ended.pid(), &["--agent", "wren"]);
    ended.kill();
    scene.send(&["--to", "wren", "for the live wren"]).expect_code(0);
    assert_eq!(scene.message_files(wren.pid()).len(), 1, "the message did not reach the live wren");

    let twin = scene.armed_session();
    scene.sandbox.register(twin.pid(), &["--agent", "wren"]);
    let ambiguous = scene.send(&["--to", "wren", "which one?"]);
    ambiguous.expect_code(2).expect_error_line("roster-send");
    for pid in [wren.pid(), twin.pid()] {
        assert!(ambiguous.stderr.contains(&pid.to_string()), "{pid} is not named: {ambiguous}");
    }
    assert_eq!(scene.message_files(wren.pid()).len() + scene.message_files(twin.pid()).len(), 1);

    let nobody = scene.send(&["--to", "heron", "hello"]);
    nobody.expect_code(3).expect_error_line("roster-send");
}

#[test]
fn an_empty_overlong_or_control_character_message_is_bad_input_and_nothing_is_queued() {
    let scene = Scene::new();
    let owner = scene.armed_session();
    let pid = owner.pid().to_string();
    let cases: [(&[u8], &str); 5] = [
        // Nothing at all is a missing message; blank lines an empty one.
        (b"", "no message given"),
        (b"\n \n", "the message is empty"),
        (b"clear the screen \x1b[2J", "U+001B"),
        (b"bell\x07", "U+0007"),
        (&[0xff, 0xfe], "not UTF-8"),
    ];
    for (stdin, says) in cases {
        let finished = scene.send_stdin(&["--to", &pid], stdin);
        assert_eq!(finished.code(), Some(2), "{stdin:?}: {}", finished.stderr_text());
        assert!(finished.stderr_text().contains(says), "{stdin:?}: {}", finished.stderr_text());
    }
    let too_long = "x".repeat(16 * 1024 + 1);
    let outcome = scene.send(&["--to", &pid, &too_long]);
    outcome.expect_code(2);
    assert!(outcome.stderr.contains("16 KiB"), "{outcome}");
    // 16 KiB is more than Claude Code keeps whole in one hook reply
    // (10,000 UTF-16 units, the frame included): refused for its harness,
    // naming the limit.
    let at_limit = "x".repeat(16 * 1024);
    let over_harness = scene.send(&["--to", &pid, &at_limit]);
    over_harness.expect_code(2);
    assert!(over_harness.stderr.contains("claude-code keeps at most 10000"), "{over_harness}");
    for ttl in ["0s", "ten minutes", "-1h"] {
        scene.send(&["--to", &pid, "--ttl", ttl, "hello"]).expect_code(2);
    }
    assert!(scene.message_files(owner.pid()).is_empty(), "nothing was queued");
    // A harness that keeps more takes a message at the text's own limit.
    let roomy = ArmedOwner::spawn(scene.sandbox.root(), scene.sandbox.home(), &scene.project);
    let cwd = scene.project.to_str().unwrap();
    scene.sandbox.register(roomy.pid(), &["--cwd", cwd, "--harness", "gemini-cli"]);
    scene.send(&["--to", &roomy.pid().to_string(), &at_limit]).expect_code(0);
    assert_eq!(scene.message_files(roomy.pid()).len(), 1, "the message at the limit was queued");
}

#[test]
fn a_message_whose_frame_passes_its_harness_limit_by_one_is_refused_and_one_at_it_is_queued() {
    let scene = Scene::new();
    let owner = scene.armed_session();
    let pid = owner.pid().to_string();
    // The frame's length for a one-character text, from the refusal of a
    // text far too long: the excess it names is exact.
    let probe = "x".repeat(12_000);
    let refused = scene.send(&["--to", &pid, &probe]);
    refused.expect_code(2);
    let excess: usize = refused
        .stderr
        .split("shorten it by ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|number| number.parse().ok())
        .unwrap_or_else(|| panic!("the refusal names the excess: {refused}"));
    let fits = 12_000 - excess;
    // Astral characters count two units each, as the harness counts them.
    let over = format!("{}\u{1f600}", "x".repeat(fits - 1));
    scene.send(&["--to", &pid, &over]).expect_code(2);
    scene.send(&["--to", &pid, &"x".repeat(fits)]).expect_code(0);
    scene.send(&["--to", &pid, &"x".repeat(fits + 1)]).expect_code(2);
    assert_eq!(scene.message_files(owner.pid()).len(), 1, "only the message at the limit was queued");
}

#[test]
fn the_65th_pending_message_is_refused_as_queue_full() {
    let scene = Scene::new();
    let owner = scene.armed_session();
    let pid = owner.pid().to_string();
    for index in 0..64 {
        scene.send(&["-q", "--to", &pid, &format!("message {index}")]).expect_code(0);
    }
    let full = scene.send(&["--to", &pid, "one too many"]);
    full.expect_code(1).expect_error_line("roster-send");
    assert!(full.stderr.contains("is full"), "{full}");
    assert_eq!(scene.message_files(owner.pid()).len(), 64, "a message was dropped or added");
}

/// Sixteen senders race fifty messages each into one session's queue (at
/// most 64 pending: a sender told the queue is full sends again after a
/// delivery) while its delivery hook takes what waits: every message
/// arrives exactly once, and each sender's in the order it sent them.
#[test]
fn sixteen_racing_senders_each_get_every_message_delivered_once_and_in_order() {
    const SENDERS: usize = 16;
    const MESSAGES: usize = 50;
    let scene = Scene::new();
    let owner = scene.armed_session();
    let pid = owner.pid().to_string();
    let sending_done = std::sync::atomic::AtomicUsize::new(0);
    let delivered: Vec<Message> = std::thread::scope(|scope| {
        for sender in 0..SENDERS {
            let (scene, pid, sending_done) = (&scene, &pid, &sending_done);
            scope.spawn(move || {
                for index in 0..MESSAGES {
                    let text = format!("sender {sender} message {index}");
                    let deadline = Instant::now() + Duration::from_secs(60);
                    loop {
                        let outcome = scene.send(&["-q", "--to", pid, &text]);
                        if outcome.code() == 0 {
                            break;
                        }
                        // Full, or (on a loaded machine, fifteen other senders
                        // and the deliverer taking turns with fsyncs) its lock
                        // held past a send's 1 s bound: both say nothing was
                        // queued, and the sender sends again.
                        assert!(
                            outcome.stderr.contains("is full")
                                || outcome.stderr.contains("another process holds its lock"),
                            "{outcome}"
                        );
                        assert!(Instant::now() < deadline, "the queue stayed full: {outcome}");
                        // A back-off before sending again, not a wait for
                        // anything: the deliverer empties the queue meanwhile.
                        std::thread::sleep(Duration::from_millis(20));
                    }
                }
                sending_done.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            });
        }
        let mut delivered = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(120);
        while delivered.len() < SENDERS * MESSAGES {
            assert!(Instant::now() < deadline, "only {} messages were delivered", delivered.len());
            let taken = deliver_at_prompt(&scene.sandbox, owner.pid(), ConsentNow::Accepts);
            if taken.is_empty() {
                // Nothing waits yet: a back-off, as a hook runs only now and then.
                std::thread::sleep(Duration::from_millis(2));
            }
            delivered.extend(taken);
        }
        delivered
    });
    assert_eq!(sending_done.load(std::sync::atomic::Ordering::SeqCst), SENDERS);
    assert!(
        deliver_at_prompt(&scene.sandbox, owner.pid(), ConsentNow::Accepts).is_empty(),
        "a message was delivered twice"
    );
    let mut seen = std::collections::HashSet::new();
    let mut next_of_sender = [0usize; SENDERS];
    let mut last_seq = 0;
    for message in &delivered {
        assert!(seen.insert(message.text.clone()), "{} delivered twice", message.text);
        assert!(message.seq > last_seq, "delivered out of sequence: {} after {last_seq}", message.seq);
        last_seq = message.seq;
        let words: Vec<&str> = message.text.split(' ').collect();
        let (sender, index): (usize, usize) = (words[1].parse().unwrap(), words[3].parse().unwrap());
        assert_eq!(index, next_of_sender[sender], "sender {sender}'s messages out of order");
        next_of_sender[sender] += 1;
    }
    assert_eq!(next_of_sender, [MESSAGES; SENDERS]);
}

#[test]
fn a_waiting_sender_learns_of_the_delivery() {
    let scene = Scene::new();
    let owner = scene.armed_session();
    let pid = owner.pid().to_string();
    let mut waiting =
        scene.sandbox.command_in_root("roster-send", &["--json", "--to", &pid, "--wait=60s", "wait for me"]);
    let mut child = waiting.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    assert!(poll_until(Duration::from_secs(10), || !scene.message_files(owner.pid()).is_empty()));
    let delivered = deliver_at_prompt(&scene.sandbox, owner.pid(), ConsentNow::Accepts);
    assert_eq!(delivered.len(), 1);
    let status = wait_with_deadline(&mut child, Duration::from_secs(20)).expect("the sender waited on");
    let output = child.wait_with_output().unwrap();
    assert_eq!(status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let answer: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(answer["status"], "delivered");
    assert_eq!(answer["event"], "claude-code:UserPromptSubmit");
}

#[test]
fn a_session_killed_while_its_message_waits_expires_it_and_prune_removes_the_queue() {
    let scene = Scene::new();
    let owner = scene.armed_session();
    let owner_pid = owner.pid();
    let pid = owner_pid.to_string();
    let mut waiting =
        scene.sandbox.command_in_root("roster-send", &["--json", "--to", &pid, "--wait", "are you there?"]);
    let mut child = waiting.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    assert!(poll_until(Duration::from_secs(10), || !scene.message_files(owner_pid).is_empty()));
    drop(owner);
    let status = wait_with_deadline(&mut child, Duration::from_secs(20)).expect("the sender noticed the end");
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(status.code(), Some(4), "{stderr}");
    assert!(stderr.contains("its session ended"), "{stderr}");
    let answer: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        (answer["status"].as_str(), answer["reason"].as_str()),
        (Some("expired"), Some("its session ended"))
    );
    let id = answer["id"].as_str().unwrap().to_owned();
    assert_eq!(scene.send(&["--json", "--status", &id]).json()["status"], "expired");

    scene.sandbox.run("roster-prune", &[]).expect_code(0);
    assert!(!scene.queue_path(owner_pid).exists(), "prune left the dead session's queue");
    // What became of it outlives its queue: the sender still learns it.
    let kept = scene.send(&["--json", "--status", &id]);
    kept.expect_code(0);
    assert_eq!(
        (kept.json()["status"].as_str(), kept.json()["reason"].as_str()),
        (Some("expired"), Some("its session ended")),
        "{kept}"
    );
    let unknown = "0123456789abcdef0123456789abcdef";
    scene.send(&["--status", unknown]).expect_code(3);
}

#[test]
fn a_session_whose_harness_cannot_deliver_is_refused_with_that_reason() {
    let scene = Scene::new();
    for (flags, says) in [
        (vec!["--harness", "goose"], "goose has no hook that can hand a message"),
        (vec![], "not one roster knows"),
    ] {
        let owner = ArmedOwner::spawn(scene.sandbox.root(), scene.sandbox.home(), &scene.project);
        let cwd = scene.project.to_str().unwrap();
        let mut args = vec!["--cwd", cwd];
        args.extend(flags);
        scene.sandbox.register(owner.pid(), &args);
        let outcome = scene.send(&["--to", &owner.pid().to_string(), "hello"]);
        assert_eq!(outcome.status.code(), Some(1), "{outcome}");
        assert!(outcome.stderr.contains(says), "{outcome}");
        let queue = scene.sandbox.root().join("messages");
        assert!(!queue.exists() || tests::names_in(&queue).is_empty(), "nothing queued");
    }
}

#[test]
fn a_ttl_past_a_year_is_bad_input_and_from_must_be_the_senders_own_session() {
    let scene = Scene::new();
    let owner = scene.armed_session();
    let to = owner.pid().to_string();
    let outcome = scene.send(&["--to", &to, "--ttl", "400d", "hello"]);
    assert_eq!(outcome.status.code(), Some(2), "{outcome}");
    // Another live session's pid as the sender: the model would be told
    // that session sent it.
    let other = scene.closed_session();
    let outcome = scene.send(&["--to", &to, "--from", &other.pid().to_string(), "hello"]);
    assert_eq!(outcome.status.code(), Some(3), "{outcome}");
    assert!(outcome.stderr.contains("neither this command nor one of its ancestors"), "{outcome}");
    let queue = scene.sandbox.root().join("messages");
    assert!(
        !queue.exists()
            || tests::names_in(&queue).iter().all(|name| tests::names_in(&queue.join(name)).is_empty())
    );
}

/// Regression: `--status` printed `expires at 2026-12-04T20:32:25.272870736Z`,
/// raw UTC with nanoseconds. Text shows the local time to the second and
/// how far away it is; JSON keeps RFC 3339. Run in two zones (POSIX `TZ`
/// strings, no zone files needed) to see the time is the local one.
#[test]
fn status_text_shows_local_readable_times_and_json_keeps_rfc3339() {
    let scene = Scene::new();
    let owner = scene.armed_session();
    let pid = owner.pid().to_string();
    let queued = scene.send(&["--json", "--to", &pid, "--ttl", "2h", "look at the build"]).json();
    let id = queued["id"].as_str().unwrap();
    let expires_at = queued["expires_at"].as_str().unwrap();
    assert!(Timestamp::parse(expires_at).is_some() && expires_at.ends_with('Z'), "{queued}");
    let expires = Timestamp::parse(expires_at).unwrap().unix_nanos() / 1_000_000_000;
    // `YYYY-MM-DD HH:MM:SS` of the expiry, shifted by `offset` seconds.
    let local = |offset: i128| {
        let shifted = Timestamp::from_unix_nanos((expires + offset) * 1_000_000_000).to_string();
        format!("{} {}", &shifted[..10], &shifted[11..19])
    };
    for (zone, offset) in [("UTC0", 0), ("XST-5:30", 5 * 3600 + 30 * 60)] {
        let shown = scene.sandbox.run_with_env("roster-send", &["--status", id], &[("TZ", zone)]);
        shown.expect_code(0);
        let line = shown.stdout_text();
        // An expiry 2 h away reads `in 1h` once a moment has passed, `in 2h` before.
        let expected_prefix = format!("{id} pending for pid {pid}, expires at {} (in ", local(offset));
        assert!(line.starts_with(&expected_prefix), "TZ={zone}: {line:?}, expected {expected_prefix:?}");
        assert!(line.trim_end().ends_with("h)"), "TZ={zone}: {line:?}");
        assert!(!line.contains(expires_at), "TZ={zone}: {line:?}");
    }
    let status = scene.send(&["--json", "--status", id]).json();
    assert_eq!(status["expires_at"], expires_at);
}
