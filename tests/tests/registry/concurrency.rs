//! Many writers, pruners and readers at once (docs/contract.md §10 "Concurrency"): 64
//! processes register distinct live owners while others prune and list.
//! Every live record stays present and well-formed throughout, none is
//! ever removed, no command fails, no temporary is ever visible; and when
//! several sessions race for one session id, exactly one wins.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use tests::{Owner, Sandbox, dead_pid, missing_row_keys, row_pids};

const WRITERS: usize = 64;
const ROUNDS_PER_WRITER: usize = 3;
const DEAD_RECORDS: usize = 16;
/// How long the pruners and listers keep going at most; the writers are
/// usually done well before.
const BOUND: Duration = Duration::from_secs(6);

fn check_rows(rows: &[Value], must_see: &[u32], failures: &Mutex<Vec<String>>, what: &str) {
    let mut found = Vec::new();
    for row in rows {
        let path = row["path"].as_str().unwrap_or("");
        let name = path.rsplit('/').next().unwrap_or("");
        if name.starts_with('.') {
            found.push(format!("{what}: a dotfile (temporary?) is listed: {path}"));
        }
        if !row["problem"].is_null() {
            found.push(format!("{what}: a {} entry is visible: {row}", row["problem"]));
        }
        let missing = missing_row_keys(row);
        if !missing.is_empty() {
            found.push(format!("{what}: a row lacks {missing:?}"));
        }
    }
    let listed = row_pids(rows);
    for pid in must_see {
        let alive = rows.iter().any(|row| row["session_pid"] == *pid && row["liveness"] == "alive");
        if !listed.contains(&u64::from(*pid)) || !alive {
            found.push(format!("{what}: registered live owner {pid} is missing or not alive"));
        }
    }
    failures.lock().unwrap().extend(found);
}

#[test]
fn writers_pruners_and_readers_together() {
    let sandbox = Arc::new(Sandbox::new());
    let owners: Vec<Owner> = (0..WRITERS).map(|_| Owner::spawn()).collect();
    let pids: Arc<Vec<u32>> = Arc::new(owners.iter().map(Owner::pid).collect());

    // Dead records for the pruners (and register's own reaping) to take.
    let template_owner = Owner::spawn();
    let template = sandbox.register(template_owner.pid(), &[]);
    std::fs::remove_file(sandbox.record_path(template_owner.pid())).unwrap();
    let mut dead = Vec::new();
    for _ in 0..DEAD_RECORDS {
        let pid = dead_pid();
        let mut record = serde_json::Map::new();
        for key in tests::RECORD_KEYS {
            if !template[key].is_null() {
                record.insert(key.into(), template[key].clone());
            }
        }
        record.insert("session_pid".into(), Value::from(pid));
        sandbox.write_record(pid, &Value::Object(record));
        dead.push(pid);
    }

    let registered: Arc<Vec<AtomicBool>> = Arc::new((0..WRITERS).map(|_| AtomicBool::new(false)).collect());
    let writers_left = Arc::new(AtomicUsize::new(WRITERS));
    let failures = Arc::new(Mutex::new(Vec::<String>::new()));
    let start = Arc::new(Barrier::new(WRITERS + 4));
    let started = Instant::now();
    let mut threads = Vec::new();

    for index in 0..WRITERS {
        let (sandbox, pids, registered, writers_left, failures, start) = (
            sandbox.clone(),
            pids.clone(),
            registered.clone(),
            writers_left.clone(),
            failures.clone(),
            start.clone(),
        );
        threads.push(std::thread::spawn(move || {
            start.wait();
            let pid = pids[index].to_string();
            for round in 0..ROUNDS_PER_WRITER {
                let agent = format!("agent-{index}-{round}");
                let outcome = sandbox.run("roster-register", &["--json", "--pid", &pid, "--agent", &agent]);
                if outcome.status.code() != Some(0) {
                    failures.lock().unwrap().push(format!("register {pid} failed\n{outcome}"));
                    continue;
                }
                match serde_json::from_slice::<Value>(&outcome.stdout) {
                    Ok(row) if row["liveness"] == "alive" && row["agent"] == agent.as_str() => {}
                    other => failures.lock().unwrap().push(format!("register {pid} printed {other:?}")),
                }
                registered[index].store(true, Ordering::SeqCst);
            }
            writers_left.fetch_sub(1, Ordering::SeqCst);
        }));
    }

    let keep_going = {
        let writers_left = writers_left.clone();
        move || writers_left.load(Ordering::SeqCst) > 0 && started.elapsed() < BOUND
    };
    for tool in ["roster-prune", "roster-prune", "roster-list", "roster-list"] {
        let (sandbox, pids, registered, failures, start, keep_going) = (
            sandbox.clone(),
            pids.clone(),
            registered.clone(),
            failures.clone(),
            start.clone(),
            keep_going.clone(),
        );
        threads.push(std::thread::spawn(move || {
            start.wait();
            let mut runs = 0;
            while keep_going() || runs == 0 {
                runs += 1;
                // Owners registered before this run began must be seen by it.
                let must_see: Vec<u32> = (0..WRITERS)
                    .filter(|index| registered[*index].load(Ordering::SeqCst))
                    .map(|index| pids[index])
                    .collect();
                let args: &[&str] = if tool == "roster-list" { &["--json", "--all"] } else { &["--json"] };
                let outcome = sandbox.run(tool, args);
                if outcome.status.code() != Some(0) {
                    failures.lock().unwrap().push(format!("{tool} failed\n{outcome}"));
                    continue;
                }
                let Ok(value) = serde_json::from_slice::<Value>(&outcome.stdout) else {
                    failures.lock().unwrap().push(format!("{tool} printed no JSON\n{outcome}"));
                    continue;
                };
                if tool == "roster-list" {
                    check_rows(
                        value.as_array().map(Vec::as_slice).unwrap_or(&[]),
                        &must_see,
                        &failures,
                        tool,
                    );
                } else {
                    let removed = value["removed"].as_array().cloned().unwrap_or_default();
                    let live_removed: Vec<u64> =
                        row_pids(&removed).into_iter().filter(|pid| pids.contains(&(*pid as u32))).collect();
                    if !live_removed.is_empty() {
                        failures.lock().unwrap().push(format!("prune removed live records {live_removed:?}"));
                    }
                }
            }
        }));
    }
    for thread in threads {
        thread.join().expect("a worker thread panicked");
    }
    let elapsed = started.elapsed();

    let failures = std::mem::take(&mut *failures.lock().unwrap());
    assert!(failures.is_empty(), "{} failures in {elapsed:?}:\n{}", failures.len(), failures.join("\n"));
    assert_eq!(writers_left.load(Ordering::SeqCst), 0, "the writers did not finish within {BOUND:?}");

    // Afterwards: every live record there, complete and current; the dead
    // ones gone after one more prune; no temporaries anywhere.
    sandbox.run("roster-prune", &["--json"]).expect_code(0);
    let rows = sandbox.list(&["--all"]);
    let final_failures = Mutex::new(Vec::new());
    check_rows(&rows, &pids, &final_failures, "final list");
    let final_failures = final_failures.into_inner().unwrap();
    assert!(final_failures.is_empty(), "{}", final_failures.join("\n"));
    for (index, pid) in pids.iter().enumerate() {
        let record = sandbox.record(*pid);
        assert_eq!(record["agent"], format!("agent-{index}-{}", ROUNDS_PER_WRITER - 1), "record of {pid}");
    }
    assert_eq!(rows.len(), WRITERS, "dead records survived a final prune: {:?}", row_pids(&rows));
    assert!(sandbox.temporaries().is_empty(), "temporaries left: {:?}", sandbox.temporaries());
    for pid in dead {
        assert!(!sandbox.record_path(pid).exists(), "dead record {pid} survived");
    }
    drop(owners);
}

#[test]
fn exactly_one_winner_per_session_id() {
    // The roster directory does not exist yet: the racers create it too.
    let sandbox = Arc::new(Sandbox::new());
    let owners: Vec<Owner> = (0..8).map(|_| Owner::spawn()).collect();
    let start = Arc::new(Barrier::new(owners.len()));
    let threads: Vec<_> = owners
        .iter()
        .map(|owner| {
            let (sandbox, start, pid) = (sandbox.clone(), start.clone(), owner.pid());
            std::thread::spawn(move || {
                start.wait();
                let outcome =
                    sandbox.run("roster-register", &["--pid", &pid.to_string(), "--session-id", "contested"]);
                (pid, outcome)
            })
        })
        .collect();
    let outcomes: Vec<_> = threads.into_iter().map(|thread| thread.join().unwrap()).collect();
    let winners: Vec<u32> =
        outcomes.iter().filter(|(_, outcome)| outcome.code() == 0).map(|(pid, _)| *pid).collect();
    assert_eq!(winners.len(), 1, "winners {winners:?}\n{outcomes:#?}");
    for (pid, outcome) in &outcomes {
        if *pid != winners[0] {
            outcome.expect_code(3);
            assert!(
                outcome.stderr.contains(&winners[0].to_string()),
                "the refusal does not name the winner\n{outcome}"
            );
            assert!(!sandbox.record_path(*pid).exists());
        }
    }
    let rows = sandbox.list(&["--all", "--session-id", "contested"]);
    assert_eq!(row_pids(&rows), [u64::from(winners[0])].into());
}
