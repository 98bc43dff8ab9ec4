//! A registration never drops or replaces a fact it was not given (docs/contract.md
//! §6.1): a refresh by hand (`roster-register --pid P --agent NAME`, from anywhere, or
//! from inside the session) keeps the recorded harness, session id, directory,
//! transcript, socket, the owner's verification and `registered_at`, and says which
//! facts it changed; a first registration of a session Claude Code lists in its own
//! registry (§6.5) takes what that says. Driven with a stand-in `claude` whose hooks
//! and commands run as its children, as a real session's do.

use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tests::hooks::{
    MACHINE_DEADLINE, StandIn, StandInKind, StdinFeed, run_to_completion, session_start_command,
};
use tests::{Owner, Sandbox, binary, shell_quote};

const SESSION_ID: &str = "5b0d2c1e-8f7a-4e39-9c61-2a4f0b7d3e18";

/// A Claude Code session registered by its session-start hook, working in
/// `~/work/api` (a repository that opted in to messages), with a live
/// messaging socket.
struct HookedSession {
    sandbox: Sandbox,
    claude: StandIn,
    work: PathBuf,
    scratch: PathBuf,
    _socket: UnixListener,
}

impl HookedSession {
    fn start() -> HookedSession {
        let sandbox = Sandbox::with_default_roster();
        let work = sandbox.home().join("work/api");
        let scratch = sandbox.home().join("scratch");
        std::fs::create_dir_all(&work).unwrap();
        std::fs::create_dir_all(&scratch).unwrap();
        std::fs::write(work.join(".roster.toml"), "[consent]\nauto_arm = true\n").unwrap();
        let socket_path = sandbox.base().join("claude-socket");
        let socket = UnixListener::bind(&socket_path).expect("binding the messaging socket");
        let environment =
            [("CLAUDE_CODE_MESSAGING_SOCKET".to_owned(), socket_path.to_string_lossy().into_owned())];
        let mut claude = StandIn::launch(&sandbox, StandInKind::ClaudeCode, &environment);
        let payload = json!({
            "session_id": SESSION_ID,
            "transcript_path": format!("{}/.claude/projects/api/{SESSION_ID}.jsonl", sandbox.home().display()),
            "cwd": work,
            "hook_event_name": "SessionStart",
            "source": "startup",
        });
        let start = claude.run_hook(&session_start_command("claude-code"), payload.to_string().as_bytes());
        start.assert_quiet_success("session start");
        HookedSession { sandbox, claude, work, scratch, _socket: socket }
    }

    fn pid(&self) -> String {
        self.claude.owner_pid.to_string()
    }

    fn record(&self) -> Value {
        self.sandbox.find_record(self.claude.owner_pid).expect("the session's record")
    }

    /// `tool args…` run by hand from `directory`, outside the session.
    fn run_from(&self, directory: &Path, tool: &str, args: &[&str]) -> tests::Finished {
        let mut command = self.sandbox.roster_command(tool);
        command.current_dir(directory).args(args);
        run_to_completion(command, StdinFeed::Null, MACHINE_DEADLINE)
    }
}

/// The facts a refresh that is given none of them must keep.
const KEPT_FACTS: [&str; 9] = [
    "harness",
    "harness_version",
    "session_id",
    "transcript_path",
    "socket",
    "cwd",
    "session_pid_source",
    "session_pid_verified",
    "registered_at",
];

fn assert_kept(before: &Value, after: &Value, what: &str) {
    for key in KEPT_FACTS {
        assert_eq!(after.get(key), before.get(key), "{what}: {key} changed: {after:#}");
    }
}

/// Regression: `roster-register --pid P --agent heron` from another directory turned a
/// hook-registered Claude Code session's harness into none, lost its session id, moved
/// it to the caller's directory and made its owner unverified; messages to it were then
/// refused ("its harness (none recorded)") and its repository's auto-arm no longer
/// applied. And `roster-register --agent bluejay` run inside the session dropped its
/// session id.
#[test]
fn a_rename_by_hand_changes_the_agent_name_and_nothing_else() {
    let session = HookedSession::start();
    let pid = session.pid();
    let before = session.record();
    assert_eq!(
        (before["harness"].as_str(), before["session_id"].as_str(), before["session_pid_verified"].as_bool()),
        (Some("claude-code"), Some(SESSION_ID), Some(true)),
        "{before:#}"
    );

    let renamed = session.run_from(&session.scratch, "roster-register", &["--pid", &pid, "--agent", "heron"]);
    assert_eq!(renamed.code(), Some(0), "{}", renamed.stderr_text());
    assert_eq!(
        renamed.stdout_text(),
        format!("renamed pid {pid} claude-code agent=heron ~/work/api (was anonymous)\n")
    );
    let after = session.record();
    assert_kept(&before, &after, "--pid --agent from another directory");
    assert_eq!(after["agent"], "heron");

    // Still a session of its repository, which opted in, and one a hook delivers to.
    let should_arm = session.run_from(&session.scratch, "roster-consent", &["should-arm", "--pid", &pid]);
    assert_eq!(should_arm.code(), Some(0), "auto-arm no longer applies: {}", should_arm.stderr_text());
    let sent = session.run_from(&session.scratch, "roster-send", &["--to", &pid, "hi"]);
    assert_eq!(sent.code(), Some(0), "{}", sent.stderr_text());

    // From inside the session, where no variable says the session id.
    let inside = format!("{} --agent bluejay", shell_quote(&binary("roster-register").to_string_lossy()));
    let mut claude = session.claude;
    let run = claude.run_hook(&inside, b"");
    assert_eq!(run.exit_status, 0, "{}", run.stderr_text());
    assert_eq!(
        String::from_utf8_lossy(&run.stdout),
        format!("renamed pid {pid} claude-code agent=bluejay ~/work/api (was agent=heron)\n")
    );
    let inside_after = session.sandbox.find_record(claude.owner_pid).expect("the record");
    assert_kept(&before, &inside_after, "--agent inside the session");
    assert_eq!(inside_after["agent"], "bluejay");
}

/// A flag gives its fact a new value, and the report names each fact changed: a new
/// session id takes the old one's transcript with it.
#[test]
fn a_refresh_by_hand_says_which_facts_it_changed() {
    let session = HookedSession::start();
    let pid = session.pid();
    let before = session.record();
    let scratch = session.scratch.to_str().unwrap();
    let unchanged = session.run_from(&session.work, "roster-register", &["--pid", &pid]);
    assert_eq!(unchanged.code(), Some(0), "{}", unchanged.stderr_text());
    assert_eq!(
        unchanged.stdout_text(),
        format!("refreshed pid {pid} claude-code ~/work/api (nothing changed)\n")
    );
    assert_kept(&before, &session.record(), "a refresh given nothing");

    let moved = session.run_from(
        &session.work,
        "roster-register",
        &["--pid", &pid, "--session-id", "moved-on", "--cwd", scratch],
    );
    assert_eq!(moved.code(), Some(0), "{}", moved.stderr_text());
    assert_eq!(
        moved.stdout_text(),
        format!("refreshed pid {pid} claude-code ~/scratch (changed: session id, transcript, directory)\n")
    );
    let after = session.record();
    assert_eq!((after["session_id"].as_str(), after["cwd"].as_str()), (Some("moved-on"), Some(scratch)));
    assert_eq!(after.get("transcript_path"), None, "the old conversation's transcript was kept: {after:#}");
    for key in ["harness", "socket", "session_pid_verified", "registered_at"] {
        assert_eq!(after.get(key), before.get(key), "{key} changed: {after:#}");
    }
}

/// Regression: registering by hand a session listed from Claude Code's own
/// `~/.claude/sessions` file recorded it with no harness, no session id and the caller's
/// directory, and reset its age to 0 s. The first registration takes what the file says.
#[test]
fn a_first_registration_of_a_session_claude_code_lists_takes_what_its_file_says() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    let work = sandbox.home().join("work/api");
    let scratch = sandbox.home().join("scratch");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(&scratch).unwrap();
    let socket_path = sandbox.base().join("claude-socket");
    let _socket = UnixListener::bind(&socket_path).expect("binding the messaging socket");
    // Started a while ago, and after this boot began: listed alive.
    let a_while_ago = crate::adopted_sessions::now_ms() - 20_000;
    let mut file = crate::adopted_sessions::session_file(owner.pid(), "4d1f-adopted", work.to_str().unwrap());
    file["startedAt"] = a_while_ago.into();
    file["messagingSocketPath"] = socket_path.to_str().unwrap().into();
    crate::adopted_sessions::write_session(&sandbox, &format!("{}.json", owner.pid()), &file);
    let listed =
        crate::adopted_sessions::row_for(&crate::adopted_sessions::rows_of(&sandbox, &[]), owner.pid());
    assert_eq!(
        (listed["origin"].as_str(), listed["liveness"].as_str()),
        (Some("claude-code"), Some("alive")),
        "{listed:#}"
    );

    let mut command = sandbox.command_in_root("roster-register", &["--pid", &owner.pid().to_string()]);
    command.args(["--agent", "heron"]).current_dir(&scratch);
    let registered = tests::run_with_deadline(&mut command, tests::COMMAND_DEADLINE);
    registered.expect_code(0);
    assert_eq!(
        registered.stdout_text(),
        format!("registered pid {} claude-code agent=heron ~/work/api\n", owner.pid())
    );
    let rows = crate::adopted_sessions::rows_of(&sandbox, &[]);
    assert_eq!(rows.len(), 1, "{rows:#?}");
    let row = &rows[0];
    assert_eq!(row["origin"], "roster", "{row:#}");
    assert_eq!(row["agent"], "heron");
    for key in ["harness", "session_id", "cwd", "harness_version", "registered_at"] {
        assert_eq!(row[key], listed[key], "{key}: {row:#}");
    }
    assert_eq!(row["socket"]["path"], socket_path.to_str().unwrap(), "{row:#}");
}
