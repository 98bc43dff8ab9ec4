//! Owner chains end to end with stand-in harnesses: a `node …/.bin/copilot` loader above a
//! native `copilot` whose comm is `MainThread` (and Codex's `node` wrapper above its native
//! `codex`). A signal to the loader alone leaves the native process running, reparented,
//! mid-turn: the session's record must stay alive and be kept by `roster-prune`, consent
//! armed through the chain must still count, and a hook from the surviving process must
//! refresh the same record. Only when the native process ends too is the session dead,
//! pruned, and its consent gone.

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::Value;
use tests::Sandbox;
use tests::hooks::{
    Capture, MACHINE_DEADLINE, StandIn, StandInKind, StdinFeed, run_to_completion, session_start_command,
};
use tests::process_exit::has_exited;
use tests::shell_quote;

fn signal(pid: u32, signal: Signal) {
    kill(Pid::from_raw(pid as i32), signal).unwrap_or_else(|error| panic!("kill -{signal} {pid}: {error}"));
}

fn wait_for_exit(pid: u32) {
    assert!(tests::poll_until(MACHINE_DEADLINE, || has_exited(pid)), "pid {pid} did not exit");
}

/// `roster-list --all --json`: every row.
fn rows(sandbox: &Sandbox) -> Vec<Value> {
    let mut list = sandbox.roster_command("roster-list");
    list.args(["--all", "--json"]);
    let listed = run_to_completion(list, StdinFeed::Null, MACHINE_DEADLINE);
    assert_eq!(listed.code(), Some(0), "roster-list: {}", listed.stderr_text());
    serde_json::from_slice::<Value>(&listed.stdout).expect("JSON").as_array().expect("an array").clone()
}

fn only_row(sandbox: &Sandbox) -> Value {
    let rows = rows(sandbox);
    assert_eq!(rows.len(), 1, "{rows:#?}");
    rows[0].clone()
}

/// `roster-prune --json`: the report.
fn prune(sandbox: &Sandbox) -> Value {
    let mut prune = sandbox.roster_command("roster-prune");
    prune.arg("--json");
    let pruned = run_to_completion(prune, StdinFeed::Null, MACHINE_DEADLINE);
    assert_eq!(pruned.code(), Some(0), "roster-prune: {}", pruned.stderr_text());
    serde_json::from_slice(&pruned.stdout).expect("roster-prune --json is JSON")
}

/// `roster-consent should-arm --pid <pid>`: the gate's answer (exit 0 = accepts pushes).
fn should_arm(sandbox: &Sandbox, pid: u32) -> bool {
    let mut gate = sandbox.roster_command("roster-consent");
    gate.args(["should-arm", "--pid", &pid.to_string()]);
    run_to_completion(gate, StdinFeed::Null, MACHINE_DEADLINE).code() == Some(0)
}

/// One session of `kind` whose loader gets `loader_signal` alone.
fn loader_killed_alone(kind: StandInKind, loader_signal: Signal) {
    let capture = Capture::load(kind.capture_folder());
    let sandbox = Sandbox::with_default_roster();
    let environment = capture.environment_in(&sandbox, &[]);
    let payload = sandbox.relocate_payload(capture.payload("session-start.json"));
    let mut stand_in = StandIn::launch(&sandbox, kind, &environment);
    let (loader, native) = (stand_in.owner_pid, stand_in.hook_runner_pid);
    assert_ne!(loader, native);

    let start = stand_in.run_hook(&session_start_command(kind.harness()), payload.as_bytes());
    start.assert_quiet_success(&format!("{kind:?} session start"));
    let record = sandbox.find_record(loader).unwrap_or_else(|| panic!("no record for {loader}"));
    let chain = record["chain"].as_array().unwrap_or_else(|| panic!("{kind:?}: no chain in {record:#}"));
    assert_eq!(chain.len(), 1, "{record:#}");
    assert_eq!(chain[0]["pid"], native, "{record:#}");
    let native_stat = std::fs::read_to_string(format!("/proc/{native}/stat")).expect("stat");
    let native_ticks: u64 = native_stat[native_stat.rfind(')').unwrap() + 2..]
        .split(' ')
        .nth(19)
        .and_then(|field| field.parse().ok())
        .expect("start ticks");
    assert_eq!(chain[0]["start_ticks"], native_ticks, "{record:#}");

    // Consent armed from inside the session binds to the whole chain.
    let arm = format!("{} arm", shell_quote(&tests::binary("roster-consent").to_string_lossy()));
    let armed = stand_in.run_hook(&arm, b"");
    assert_eq!(armed.exit_status, 0, "{kind:?}: arm: {}", armed.stderr_text());
    let marker: Value = serde_json::from_slice(
        &std::fs::read(sandbox.root().join("consent").join(tests::record_file_name_here(loader)))
            .expect("the marker"),
    )
    .expect("JSON");
    assert_eq!(marker["format"], 4, "{marker:#}");
    assert_eq!(marker["chain"][0]["pid"], native, "{marker:#}");
    assert!(should_arm(&sandbox, loader));

    // The loader alone gets the signal; the native process runs on, reparented.
    signal(loader, loader_signal);
    wait_for_exit(loader);
    assert!(!has_exited(native), "{kind:?}: the native process went with its loader");

    let row = only_row(&sandbox);
    assert_eq!(row["liveness"], "alive", "{kind:?} after {loader_signal}: {row:#}");
    let reason = row["liveness_reason"].as_str().expect("a reason");
    assert!(
        reason.starts_with(&format!("owner {loader} "))
            && reason.contains(&format!("harness process {native} still running")),
        "{kind:?}: the reason must name the member it rests on: {reason}"
    );
    assert_eq!(row["consent"], "armed", "{row:#}");
    let report = prune(&sandbox);
    assert_eq!(report["dead_removed"], 0, "{kind:?}: a live session was pruned: {report:#}");
    assert!(sandbox.find_record(loader).is_some(), "{kind:?}: the record went with the loader");
    assert!(should_arm(&sandbox, loader), "{kind:?}: consent died with the loader");

    // The surviving process registers again (a resumed or cleared session): the same
    // session, so the same record is refreshed, not a second one started.
    let again = stand_in.run_hook(&session_start_command(kind.harness()), payload.as_bytes());
    again.assert_quiet_success(&format!("{kind:?} session start from the surviving process"));
    assert_eq!(sandbox.visible_session_entries(), [tests::record_file_name_here(loader)], "{kind:?}");
    let refreshed = sandbox.find_record(loader).expect("the record");
    assert_eq!(refreshed["registered_at"], record["registered_at"], "{refreshed:#}");
    assert_ne!(refreshed["refreshed_at"], record["refreshed_at"], "{refreshed:#}");
    assert_eq!(refreshed["chain"], record["chain"], "{refreshed:#}");
    assert!(sandbox.hook_error_lines().is_empty(), "{:?}", sandbox.hook_error_lines());

    // The last member ends: the session is dead, pruned, and its consent gone.
    signal(native, Signal::SIGKILL);
    wait_for_exit(native);
    let row = only_row(&sandbox);
    assert_eq!(row["liveness"], "dead", "{row:#}");
    assert!(
        row["liveness_reason"].as_str().expect("a reason").contains(&format!("harness process {native}")),
        "{row:#}"
    );
    assert_eq!(row["consent"], "none", "{row:#}");
    assert!(!should_arm(&sandbox, loader), "{kind:?}: consent outlived the chain");
    let report = prune(&sandbox);
    assert_eq!(report["dead_removed"], 1, "{report:#}");
    assert!(sandbox.visible_session_entries().is_empty(), "{:?}", sandbox.visible_session_entries());
    assert!(
        !sandbox.root().join("consent").join(tests::record_file_name_here(loader)).exists(),
        "the marker outlived the chain"
    );
    drop(stand_in);
}

#[test]
fn copilot_loader_sigterm_alone_leaves_the_session_alive_until_the_native_process_ends() {
    loader_killed_alone(StandInKind::Copilot, Signal::SIGTERM);
}

#[test]
fn copilot_loader_sigkill_alone_leaves_the_session_alive_until_the_native_process_ends() {
    loader_killed_alone(StandInKind::Copilot, Signal::SIGKILL);
}

#[test]
fn codex_wrapper_killed_alone_leaves_the_session_alive_until_the_native_process_ends() {
    loader_killed_alone(StandInKind::Codex, Signal::SIGTERM);
}

/// The native process ending first (the usual end of a turn that crashed) while the loader
/// lingers: alive on the loader, dead once it exits too.
#[test]
fn the_native_process_ending_first_leaves_the_session_alive_on_the_loader() {
    let kind = StandInKind::Copilot;
    let capture = Capture::load(kind.capture_folder());
    let sandbox = Sandbox::with_default_roster();
    let environment = capture.environment_in(&sandbox, &[]);
    let payload = sandbox.relocate_payload(capture.payload("session-start.json"));
    let mut stand_in = StandIn::launch(&sandbox, kind, &environment);
    let (loader, native) = (stand_in.owner_pid, stand_in.hook_runner_pid);
    stand_in
        .run_hook(&session_start_command(kind.harness()), payload.as_bytes())
        .assert_quiet_success("start");
    // Stop the loader so that it cannot follow its child out, then end the child.
    signal(loader, Signal::SIGSTOP);
    signal(native, Signal::SIGKILL);
    wait_for_exit(native);
    let row = only_row(&sandbox);
    assert_eq!(row["liveness"], "alive", "{row:#}");
    assert_eq!(
        row["liveness_reason"].as_str().map(|reason| reason.starts_with(&format!("owner {loader} running"))),
        Some(true),
        "{row:#}"
    );
    assert_eq!(prune(&sandbox)["dead_removed"], 0);
    signal(loader, Signal::SIGKILL);
    wait_for_exit(loader);
    assert_eq!(only_row(&sandbox)["liveness"], "dead");
    assert_eq!(prune(&sandbox)["dead_removed"], 1);
}
