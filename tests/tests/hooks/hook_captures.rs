//! Every hook payload a real harness sent (the captures in `data/harness-captures/`), fed
//! to `roster-register` in hook mode with that harness's captured environment: it exits 0,
//! prints nothing, and the record carries the session id, cwd, harness, transcript path
//! and harness version the payload and environment tell. Once with the harness named
//! (`--hook <harness>`, the owner named by `--pid`), once with `--hook auto` run by a
//! stand-in of the harness, so that detection sees the harness's own process tree.

use tests::Sandbox;
use tests::hooks::{
    CAPTURE_FOLDERS, Capture, MACHINE_DEADLINE, StandIn, StandInKind, StdinFeed, expected_fields,
    recorded_fields, run_to_completion, session_start_command,
};

/// The stand-in that runs each capture folder's hooks with `--hook auto`.
fn stand_in_for(folder: &str) -> StandInKind {
    match folder {
        "claude-code-2.1.328" => StandInKind::ClaudeCode,
        "codex" => StandInKind::Codex,
        "gemini" => StandInKind::GeminiCliRelaunching,
        "copilot" => StandInKind::Copilot,
        "opencode" => StandInKind::Opencode,
        other => panic!("no stand-in for capture folder {other}"),
    }
}

/// The names `--hook` accepts for a harness: its record name, and the short alias people
/// type where there is one.
fn hook_names(harness: &str) -> Vec<&'static str> {
    match harness {
        "claude-code" => vec!["claude-code", "claude"],
        "codex" => vec!["codex"],
        "gemini-cli" => vec!["gemini-cli", "gemini"],
        "copilot" => vec!["copilot"],
        "opencode" => vec!["opencode"],
        other => panic!("no hook names for {other}"),
    }
}

fn register_named_with_pid(folder: &'static str) {
    let capture = Capture::load(folder);
    for hook_name in hook_names(capture.harness) {
        let sandbox = Sandbox::with_default_roster();
        let owner = sandbox.spawn_idle_owner();
        // The harnesses' own pid exports name processes of the capture machine; the owner
        // is named by --pid here, which beats them anyway.
        let environment = capture.environment_in(&sandbox, &["CLAUDE_PID", "OPENCODE_PID"]);
        for (file_name, payload) in &capture.payloads {
            let payload = sandbox.relocate_payload(payload);
            let mut command = sandbox.roster_command("roster-register");
            command.args(["--hook", hook_name, "--pid", &owner.pid().to_string()]).envs(environment.clone());
            let finished =
                run_to_completion(command, StdinFeed::Bytes(payload.clone().into_bytes()), MACHINE_DEADLINE);
            let what = format!("{folder}/{file_name} with --hook {hook_name}");
            assert_eq!(finished.code(), Some(0), "{what}: stderr {}", finished.stderr_text());
            assert!(finished.stdout.is_empty(), "{what}: wrote to stdout: {}", finished.stdout_text());
            assert!(finished.stderr.is_empty(), "{what}: complained: {}", finished.stderr_text());
            let record = sandbox
                .find_record(owner.pid())
                .unwrap_or_else(|| panic!("{what}: no record for pid {}", owner.pid()));
            assert_eq!(
                recorded_fields(&record),
                expected_fields(&capture, &payload, &sandbox.project()),
                "{what}: record {record:#}"
            );
            assert_eq!(record["session_pid"], owner.pid(), "{what}");
            assert_eq!(record["session_pid_source"], "flag", "{what}");
            assert_eq!(record["session_pid_verified"], false, "{what}: sleep is not an ancestor of the hook");
            assert!(sandbox.hook_error_lines().is_empty(), "{what}: {:?}", sandbox.hook_error_lines());
        }
    }
}

fn register_auto_under_stand_in(folder: &'static str) {
    let capture = Capture::load(folder);
    let kind = stand_in_for(folder);
    let sandbox = Sandbox::with_default_roster();
    let environment = capture.environment_in(&sandbox, &[]);
    let mut stand_in = StandIn::launch(&sandbox, kind, &environment);
    for (file_name, payload) in &capture.payloads {
        let payload = sandbox.relocate_payload(payload);
        let what = format!("{folder}/{file_name} with --hook auto under a {kind:?} stand-in");
        let run = stand_in.run_hook(&session_start_command("auto"), payload.as_bytes());
        run.assert_quiet_success(&what);
        assert!(run.stderr.is_empty(), "{what}: complained: {}", run.stderr_text());
        let record = sandbox
            .find_record(stand_in.owner_pid)
            .unwrap_or_else(|| panic!("{what}: no record for the harness pid {}", stand_in.owner_pid));
        assert_eq!(
            recorded_fields(&record),
            expected_fields(&capture, &payload, &sandbox.project()),
            "{what}: record {record:#}"
        );
        assert_eq!(record["session_pid"], stand_in.owner_pid, "{what}");
        assert_eq!(record["session_pid_verified"], true, "{what}");
        assert_eq!(
            sandbox.visible_session_entries().len(),
            1,
            "{what}: {:?}",
            sandbox.visible_session_entries()
        );
    }
}

#[test]
fn claude_code_payloads_register_with_the_harness_named() {
    register_named_with_pid(CAPTURE_FOLDERS[0].0);
}

#[test]
fn codex_payloads_register_with_the_harness_named() {
    register_named_with_pid(CAPTURE_FOLDERS[1].0);
}

#[test]
fn gemini_cli_payloads_register_with_the_harness_named() {
    register_named_with_pid(CAPTURE_FOLDERS[2].0);
}

#[test]
fn copilot_payloads_register_with_the_harness_named() {
    register_named_with_pid(CAPTURE_FOLDERS[3].0);
}

#[test]
fn opencode_plugin_events_register_with_the_harness_named() {
    register_named_with_pid(CAPTURE_FOLDERS[4].0);
}

#[test]
fn claude_code_payloads_register_with_auto_detection_under_a_claude_stand_in() {
    register_auto_under_stand_in(CAPTURE_FOLDERS[0].0);
}

#[test]
fn codex_payloads_register_with_auto_detection_under_a_codex_stand_in() {
    register_auto_under_stand_in(CAPTURE_FOLDERS[1].0);
}

#[test]
fn gemini_cli_payloads_register_with_auto_detection_under_a_relaunched_gemini_stand_in() {
    register_auto_under_stand_in(CAPTURE_FOLDERS[2].0);
}

#[test]
fn copilot_payloads_register_with_auto_detection_under_a_copilot_stand_in() {
    register_auto_under_stand_in(CAPTURE_FOLDERS[3].0);
}

#[test]
fn opencode_plugin_events_register_with_auto_detection_under_an_opencode_stand_in() {
    register_auto_under_stand_in(CAPTURE_FOLDERS[4].0);
}

/// Every capture folder is covered by the tests above, and each one's payload set is the
/// one this file was written against: a new capture must get a look, not slip through.
#[test]
fn every_capture_folder_is_exercised() {
    let on_disk: Vec<String> = std::fs::read_dir(tests::hooks::captures_directory())
        .expect("reading the captures")
        .filter_map(|entry| entry.ok())
        .filter(|entry| entry.path().is_dir())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        // The state events' captures have tests of their own, which hold
        // every file of theirs (`state_events.rs`).
        .filter(|folder| folder != "state-events")
        // The harnesses' help captured for the resume commands is held by
        // a tooling test of its own, which reads every folder of it
        // (`tests/tests/tooling/resume_commands.rs`).
        .filter(|folder| folder != "resume-help")
        .collect();
    let mut on_disk = on_disk;
    on_disk.sort();
    let mut covered: Vec<String> = CAPTURE_FOLDERS.iter().map(|(folder, _)| (*folder).to_owned()).collect();
    covered.sort();
    assert_eq!(on_disk, covered, "a capture folder without tests here (or tests without a folder)");
    let payload_count: usize =
        CAPTURE_FOLDERS.iter().map(|(folder, _)| Capture::load(folder).payloads.len()).sum();
    assert_eq!(payload_count, 3 + 4 + 7 + 4 + 2, "the number of captured payloads changed");
}
