//! One `roster-prune` run takes the registry lock once: removing dead
//! records, old temporaries and dead consent markers happens under one
//! hold of it. (It used to take it twice, once for the records and again
//! for the markers, so a writer could slip in between.)

use tests::{ArmedOwner, Owner, Sandbox, require_tool};

#[test]
fn prune_opens_and_takes_the_lock_once_for_records_and_markers() {
    let strace = require_tool("strace");
    let sandbox = Sandbox::new();
    let doomed = Owner::spawn();
    sandbox.register(doomed.pid(), &[]);
    let dead_record = doomed.kill();
    let armed = ArmedOwner::spawn(sandbox.root(), sandbox.home(), sandbox.home());
    let dead_marker = armed.pid();
    // `arm` reaps dead owners' markers after writing its own: let it finish
    // (its shell then becomes `sleep`) before the owner dies, or it would
    // take this marker before prune gets to it.
    let comm = format!("/proc/{dead_marker}/comm");
    let armed_and_done = || std::fs::read_to_string(&comm).is_ok_and(|name| name.trim() == "sleep");
    assert!(tests::poll_until(std::time::Duration::from_secs(10), armed_and_done), "arm did not finish");
    drop(armed);

    let log = sandbox.base().join("strace.log");
    let mut command = std::process::Command::new(&strace);
    command
        .args(["-f", "-qq", "-o"])
        .arg(&log)
        .args(["-e", "trace=open,openat,openat2"])
        .arg(tests::binary("roster-prune"))
        .arg("--dir")
        .arg(sandbox.root())
        .arg("--json");
    command.env_clear().env("HOME", sandbox.home()).current_dir(sandbox.home());
    let outcome = tests::run_with_deadline(&mut command, tests::COMMAND_DEADLINE);
    outcome.expect_code(0);
    let report = outcome.json();
    assert_eq!(report["dead_removed"], 1, "{report}");
    assert_eq!(report["consent_removed"], 1, "{report}");
    assert_eq!(report["removed"][0]["session_pid"], dead_record, "{report}");
    assert!(
        !sandbox.consent().join(tests::record_file_name_here(dead_marker)).exists(),
        "the dead marker stayed"
    );

    let text = std::fs::read_to_string(&log).expect("strace wrote its log");
    let lock_opens: Vec<&str> = text
        .lines()
        .filter(|line| line.contains("open") && (line.contains("\".lock\"") || line.contains("/.lock\"")))
        .collect();
    assert_eq!(
        lock_opens.len(),
        1,
        "roster-prune opened the lock {} times:\n{}",
        lock_opens.len(),
        lock_opens.join("\n")
    );
}
