//! Session hooks end to end with stand-in harnesses: programs named and shaped like each
//! harness's real processes (a native `claude` under `sh -c`; `node …/.bin/gemini`, also
//! relaunched; `node …/.bin/codex` above a native `codex`; `node …/.bin/copilot` above a
//! native process whose comm is `MainThread`) run the hook commands `roster-hooks install`
//! writes, the way each harness runs them, with the captured payloads and environment.
//! The session-start hook registers the outermost harness process as the owner, the
//! session-end hook removes the record well inside the harness's hook budget, and a
//! harness that dies without a session end leaves a record `roster-prune` removes as dead.

use std::os::unix::net::UnixListener;
use std::time::Duration;

use serde_json::Value;
use tests::Sandbox;
use tests::hooks::{
    Capture, MACHINE_DEADLINE, StandIn, StandInKind, StdinFeed, median, run_to_completion,
    session_end_command, session_start_command,
};

/// Codex gives a SessionEnd hook 1 s by default, Claude Code 1.5 s: the session-end hook
/// must finish inside the tightest, with room to spare even on a loaded machine.
const SESSION_END_BUDGET: Duration = Duration::from_secs(1);

/// The payload file names of each capture folder.
fn session_payload_names(folder: &str) -> (&'static str, &'static str) {
    match folder {
        "claude-code-2.1.328" | "codex" | "gemini" | "copilot" => ("session-start.json", "session-end.json"),
        other => panic!("no session payloads for {other}"),
    }
}

/// What one stand-in session showed.
struct SessionOutcome {
    session_end_took: Duration,
}

/// Runs one whole session under a stand-in of `kind`: start, check the record, end, check
/// it is gone; then a second session that dies without a session end, and the reaper.
fn run_session_under_stand_in(kind: StandInKind) -> SessionOutcome {
    let capture = Capture::load(kind.capture_folder());
    let (start_name, end_name) = session_payload_names(capture.folder);
    let sandbox = Sandbox::with_default_roster();
    let mut environment = capture.environment_in(&sandbox, &[]);

    // Claude Code's messaging socket, where the capture had one: a real listening socket at
    // the relocated path, which the record must then carry.
    let socket = capture.variable("CLAUDE_CODE_MESSAGING_SOCKET").map(|path| {
        let path = std::path::PathBuf::from(sandbox.relocate(path));
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("creating the socket directory");
        let listener = UnixListener::bind(&path).expect("binding the messaging socket");
        (path, listener)
    });
    if kind == StandInKind::ClaudeCodeNamedByArgv0Only {
        environment.retain(|(key, _)| key != "CLAUDE_PID");
    }

    let start_payload = sandbox.relocate_payload(capture.payload(start_name));
    let end_payload = sandbox.relocate_payload(capture.payload(end_name));
    let start_command = session_start_command(kind.harness());
    let end_command = session_end_command(kind.harness());

    let mut stand_in = StandIn::launch(&sandbox, kind, &environment);
    let start = stand_in.run_hook(&start_command, start_payload.as_bytes());
    start.assert_quiet_success(&format!("{kind:?} session start"));
    assert!(start.stderr.is_empty(), "{kind:?}: session start complained: {}", start.stderr_text());

    let record = sandbox.find_record(stand_in.owner_pid).unwrap_or_else(|| {
        panic!(
            "{kind:?}: no record for the harness pid {}: {:?}",
            stand_in.owner_pid,
            sandbox.visible_session_entries()
        )
    });
    assert_eq!(
        sandbox.visible_session_entries().len(),
        1,
        "{kind:?}: {:?}",
        sandbox.visible_session_entries()
    );
    assert_eq!(record["session_pid"], stand_in.owner_pid, "{kind:?}");
    assert_eq!(record["harness"], kind.harness(), "{kind:?}");
    assert_eq!(record["session_pid_verified"], true, "{kind:?}");
    let expected_source = match kind {
        StandInKind::ClaudeCode => "CLAUDE_PID",
        _ => "ancestor",
    };
    assert_eq!(record["session_pid_source"], expected_source, "{kind:?}");
    let start_value: Value = serde_json::from_str(&start_payload).expect("JSON");
    let session_id = start_value.get("session_id").or_else(|| start_value.get("sessionId"));
    assert_eq!(record.get("session_id"), session_id, "{kind:?}");
    assert_eq!(record["cwd"], sandbox.project().to_string_lossy().as_ref(), "{kind:?}");
    let expected_version = match kind.harness() {
        "claude-code" => Value::from("2.1.328"),
        "copilot" => Value::from("1.0.102"),
        _ => Value::Null,
    };
    assert_eq!(record.get("harness_version").cloned().unwrap_or(Value::Null), expected_version, "{kind:?}");
    if let Some((path, _)) = &socket {
        assert_eq!(record["socket"]["path"], path.to_string_lossy().as_ref(), "{kind:?}: {record:#}");
    }

    // The record is alive by roster-list's verdict, too.
    let mut list = sandbox.roster_command("roster-list");
    list.arg("--json");
    let listed = run_to_completion(list, StdinFeed::Null, MACHINE_DEADLINE);
    let rows: Value = serde_json::from_slice(&listed.stdout).expect("roster-list --json is JSON");
    assert_eq!(rows[0]["liveness"], "alive", "{kind:?}: {rows:#}");

    let end = stand_in.run_hook(&end_command, end_payload.as_bytes());
    end.assert_quiet_success(&format!("{kind:?} session end"));
    assert!(end.stderr.is_empty(), "{kind:?}: session end complained: {}", end.stderr_text());
    assert!(
        sandbox.find_record(stand_in.owner_pid).is_none(),
        "{kind:?}: the session-end hook left the record"
    );
    assert!(
        end.elapsed < SESSION_END_BUDGET,
        "{kind:?}: the session-end hook took {:?}, over the {SESSION_END_BUDGET:?} budget",
        end.elapsed
    );
    let session_end_took = end.elapsed;

    // A new session in the same process, which then dies without a session end.
    let again = stand_in.run_hook(&start_command, start_payload.as_bytes());
    again.assert_quiet_success(&format!("{kind:?} second session start"));
    assert!(
        sandbox.find_record(stand_in.owner_pid).is_some(),
        "{kind:?}: the second session was not registered"
    );
    let owner_pid = stand_in.owner_pid;
    stand_in.exit_without_session_end();

    let mut prune = sandbox.roster_command("roster-prune");
    prune.arg("--json");
    let pruned = run_to_completion(prune, StdinFeed::Null, MACHINE_DEADLINE);
    assert_eq!(pruned.code(), Some(0), "{kind:?}: roster-prune: {}", pruned.stderr_text());
    let report: Value = serde_json::from_slice(&pruned.stdout).expect("roster-prune --json is JSON");
    assert_eq!(report["dead_removed"], 1, "{kind:?}: {report:#}");
    assert_eq!(report["removed"][0]["session_pid"], owner_pid, "{kind:?}: {report:#}");
    assert!(sandbox.find_record(owner_pid).is_none(), "{kind:?}: the dead session's record is still there");
    assert!(sandbox.hook_error_lines().is_empty(), "{kind:?}: {:?}", sandbox.hook_error_lines());
    drop(socket);
    SessionOutcome { session_end_took }
}

#[test]
fn claude_code_stand_in_registers_the_claude_process_and_removes_it_at_session_end() {
    run_session_under_stand_in(StandInKind::ClaudeCode);
}

/// The native Claude Code binary's comm and exe can be its version (`2.1.128`) while
/// argv[0] is `claude`; without CLAUDE_PID only argv[0] names it.
#[test]
fn claude_code_stand_in_named_only_by_argv0_is_still_the_owner() {
    run_session_under_stand_in(StandInKind::ClaudeCodeNamedByArgv0Only);
}

#[test]
fn gemini_cli_stand_in_registers_the_node_process_and_removes_it_at_session_end() {
    run_session_under_stand_in(StandInKind::GeminiCli);
}

/// Gemini CLI relaunches itself: the hooks run under the inner node, the session's owner
/// is the outer one, which lives exactly as long as the session.
#[test]
fn relaunched_gemini_cli_stand_in_registers_the_outer_node_process() {
    run_session_under_stand_in(StandInKind::GeminiCliRelaunching);
}

/// The npm Codex package runs a node loader above the native binary: the loader is the
/// outermost harness process and so the owner.
#[test]
fn codex_stand_in_registers_the_node_loader_above_the_native_binary() {
    run_session_under_stand_in(StandInKind::Codex);
}

/// Copilot CLI's native process calls itself `MainThread`; its exe still says copilot, and
/// the node loader above it is the owner.
#[test]
fn copilot_stand_in_registers_the_node_loader_above_the_main_thread_process() {
    run_session_under_stand_in(StandInKind::Copilot);
}

/// Many session-end hooks through the tightest-budget harness (Codex, 1 s), each within
/// budget; prints the median so a run with `--nocapture` reports it.
#[test]
fn session_end_hooks_finish_far_inside_the_tightest_harness_budget() {
    const SESSIONS: usize = 15;
    let capture = Capture::load("codex");
    let sandbox = Sandbox::with_default_roster();
    let environment = capture.environment_in(&sandbox, &[]);
    let start_payload = sandbox.relocate_payload(capture.payload("session-start.json"));
    let end_payload = sandbox.relocate_payload(capture.payload("session-end.json"));
    let mut stand_in = StandIn::launch(&sandbox, StandInKind::Codex, &environment);
    let mut durations = Vec::new();
    for round in 0..SESSIONS {
        stand_in
            .run_hook(&session_start_command("codex"), start_payload.as_bytes())
            .assert_quiet_success("start");
        assert!(sandbox.find_record(stand_in.owner_pid).is_some(), "round {round}: not registered");
        let end = stand_in.run_hook(&session_end_command("codex"), end_payload.as_bytes());
        end.assert_quiet_success("end");
        assert!(sandbox.find_record(stand_in.owner_pid).is_none(), "round {round}: not removed");
        assert!(
            end.elapsed < SESSION_END_BUDGET,
            "round {round}: the session-end hook took {:?}",
            end.elapsed
        );
        durations.push(end.elapsed);
    }
    let all = durations.clone();
    let median = median(&mut durations);
    println!(
        "session-end hook under the codex stand-in: median {median:?} over {SESSIONS} sessions: {all:?}"
    );
    assert!(median < SESSION_END_BUDGET / 2, "median session-end hook {median:?}");
}

/// Every stand-in harness once more: each session-end hook ends within
/// roster's own session-end budget (the one its hook clock keeps), and its
/// time is reported (with `--nocapture`).
#[test]
fn session_end_times_under_every_stand_in() {
    let budget = cli_support::HookEvent::SessionEnd.budget();
    let kinds = [
        StandInKind::ClaudeCode,
        StandInKind::GeminiCliRelaunching,
        StandInKind::Codex,
        StandInKind::Copilot,
    ];
    for kind in kinds {
        let outcome = run_session_under_stand_in(kind);
        println!("session-end hook under the {kind:?} stand-in took {:?}", outcome.session_end_took);
        assert!(
            outcome.session_end_took < budget,
            "{kind:?}: the session-end hook took {:?}, over roster's {budget:?} budget",
            outcome.session_end_took
        );
    }
}
