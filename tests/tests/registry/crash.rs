//! Writers killed with SIGKILL at random instants, hundreds of times (docs/contract.md
//! §2 atomic writes, §10 "Crash"): every file in `sessions/` is always a
//! complete old or new record, never a torn one; `roster-list` never shows
//! a temporary; and `roster-prune` clears temporaries once they are more
//! than an hour old.
//!
//! The kill instants are random (seed printed on failure; set
//! `ROSTER_TEST_SEED` to replay). The pause before each kill is the point
//! of the test, not a synchronisation.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use tests::{Owner, Random, Sandbox, ago, dead_pid, set_mtime};

const REGISTER_KILLS: usize = 600;
const PRUNE_KILLS: usize = 200;

/// Median wall time of a command, to spread the kill instants over it.
fn median_runtime(mut make: impl FnMut() -> Command) -> Duration {
    let mut times: Vec<Duration> = (0..5)
        .map(|_| {
            let outcome = tests::run_with_deadline(&mut make(), tests::COMMAND_DEADLINE);
            outcome.expect_code(0);
            outcome.elapsed
        })
        .collect();
    times.sort();
    times[2]
}

/// Starts a command and SIGKILLs it after `delay` (unless it finished).
fn kill_after(mut command: Command, delay: Duration) {
    command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
    let mut child = command.spawn().expect("spawn");
    std::thread::sleep(delay);
    let _ = child.kill();
    child.wait().expect("reap");
}

/// Every visible entry parses as a complete record for one of `pids`, with
/// an agent among `agents`; returns what is wrong.
fn torn_entries(sandbox: &Sandbox, allowed: &dyn Fn(&Value) -> bool) -> Vec<String> {
    let mut problems = Vec::new();
    for name in sandbox.visible_session_entries() {
        let path = sandbox.sessions().join(&name);
        let Ok(bytes) = std::fs::read(&path) else { continue }; // removed meanwhile: fine
        match serde_json::from_slice::<Value>(&bytes) {
            Ok(value) if allowed(&value) => {}
            Ok(value) => problems.push(format!("{name} holds an unexpected record: {value}")),
            Err(error) => {
                problems.push(format!("{name} is torn ({error}): {:?}", String::from_utf8_lossy(&bytes)))
            }
        }
    }
    problems
}

fn list_shows_no_temporary(sandbox: &Sandbox) -> Vec<String> {
    sandbox
        .list(&["--all"])
        .iter()
        .filter(|row| {
            let name = row["path"].as_str().unwrap_or("").rsplit('/').next().unwrap_or("").to_owned();
            name.starts_with('.') || !row["problem"].is_null()
        })
        .map(|row| format!("list shows {row}"))
        .collect()
}

#[test]
fn killed_writers_leave_old_or_new_records_and_no_visible_temporaries() {
    let mut random = Random::new();
    let seed = random.seed;
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    let bystander = Owner::spawn();
    sandbox.register(owner.pid(), &["--agent", "v0", "--session-id", "sid-0"]);
    sandbox.register(bystander.pid(), &["--agent", "bystander"]);
    let pid = owner.pid().to_string();
    let register_time =
        median_runtime(|| sandbox.command_in_root("roster-register", &["--pid", &pid, "--agent", "v0"]));
    let started = Instant::now();
    let mut failures = Vec::new();

    let owner_pid = owner.pid();
    let bystander_pid = bystander.pid();
    for round in 1..=REGISTER_KILLS {
        let agent = format!("v{round}");
        let session = format!("sid-{}", round % 7);
        let command = sandbox.command_in_root(
            "roster-register",
            &["--pid", &pid, "--agent", &agent, "--session-id", &session],
        );
        let delay = Duration::from_micros(random.below(register_time.as_micros() as u64 * 3 / 2 + 1));
        kill_after(command, delay);
        let allowed = |value: &Value| {
            let agent_round = value["agent"]
                .as_str()
                .and_then(|agent| agent.strip_prefix('v'))
                .and_then(|n| n.parse::<usize>().ok());
            (value["session_pid"] == owner_pid && agent_round.is_some_and(|n| n <= round))
                || (value["session_pid"] == bystander_pid && value["agent"] == "bystander")
        };
        failures.extend(torn_entries(&sandbox, &allowed));
        if round % 25 == 0 {
            failures.extend(list_shows_no_temporary(&sandbox));
        }
        if !failures.is_empty() {
            break;
        }
    }
    assert!(failures.is_empty(), "seed {seed}: {}", failures.join("\n"));
    assert!(sandbox.record_path(owner_pid).exists(), "seed {seed}: the owner's record vanished");
    assert!(sandbox.record_path(bystander_pid).exists(), "seed {seed}: a bystander's record vanished");

    // Prune killed while it removes dead records.
    let template = sandbox.record(bystander_pid);
    let prune_time = median_runtime(|| sandbox.command_in_root("roster-prune", &[]));
    for round in 0..PRUNE_KILLS {
        for _ in 0..3 {
            let dead = dead_pid();
            let mut record = template.clone();
            record["session_pid"] = Value::from(dead);
            sandbox.write_record(dead, &record);
        }
        let delay = Duration::from_micros(random.below(prune_time.as_micros() as u64 * 2 + 1));
        kill_after(sandbox.command_in_root("roster-prune", &[]), delay);
        let allowed = |value: &Value| value["agent"] == "bystander" || value["session_pid"] == owner_pid;
        failures.extend(torn_entries(&sandbox, &allowed));
        if round % 25 == 0 {
            failures.extend(list_shows_no_temporary(&sandbox));
        }
        if !failures.is_empty() {
            break;
        }
    }
    assert!(failures.is_empty(), "seed {seed}: {}", failures.join("\n"));
    assert!(sandbox.record_path(owner_pid).exists(), "seed {seed}: prune removed a live record");
    assert!(sandbox.record_path(bystander_pid).exists(), "seed {seed}: prune removed a live record");

    // Whatever temporaries the kills left are invisible, and go once old.
    // Plant one as well, so the last step always has something to do.
    let left_by_kills = sandbox.temporaries().len();
    let planted = sandbox.sessions().join(".tmp-planted-leftover");
    tests::write_file_0600(&planted, b"{\"format\": 1, \"sess");
    failures.extend(list_shows_no_temporary(&sandbox));
    let fresh = sandbox.run("roster-prune", &["--json"]).json();
    assert_eq!(
        fresh["temp_removed"], 0,
        "seed {seed}: temporaries younger than an hour were removed: {fresh:#}"
    );
    let leftovers = sandbox.temporaries();
    for path in &leftovers {
        set_mtime(path, ago(Duration::from_secs(3600 + 60)));
    }
    let report = sandbox.run("roster-prune", &["--json"]).json();
    assert_eq!(report["temp_removed"], leftovers.len(), "seed {seed}: {report:#} for {leftovers:?}");
    assert!(sandbox.temporaries().is_empty(), "seed {seed}: left {:?}", sandbox.temporaries());
    assert!(failures.is_empty(), "seed {seed}: {}", failures.join("\n"));

    // And the registry still works.
    let row = sandbox.register(owner_pid, &["--agent", "after"]);
    assert_eq!(row["liveness"], "alive");
    eprintln!(
        "crash test: {} kills in {:?}, {left_by_kills} temporaries left by them (seed {seed})",
        REGISTER_KILLS + PRUNE_KILLS,
        started.elapsed()
    );
}
