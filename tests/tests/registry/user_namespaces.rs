//! Sandboxes built on user namespaces (`unshare -U`, `unshare -U -r`,
//! `unshare -U --map-user`, bubblewrap) share the host's pid namespace but
//! show every uid translated. Run from inside one, list, prune, the reap
//! pass of register and the consent gate must still see live host sessions
//! alive, and dead ones must still go where their death is provable.

use std::process::Command;

use serde_json::Value;
use tests::{ArmedOwner, COMMAND_DEADLINE, Outcome, Owner, Sandbox, require_tool, run_with_deadline};

/// The ways agent sandboxes enter a user namespace that keeps the host's
/// pid namespace: a wrapper command and its arguments before the tool.
fn user_namespace_wrappers() -> Vec<(&'static str, Vec<String>)> {
    let unshare = require_tool("unshare").to_string_lossy().into_owned();
    let bwrap = require_tool("bwrap").to_string_lossy().into_owned();
    let words = |list: &[&str]| list.iter().map(|word| (*word).to_owned()).collect::<Vec<_>>();
    vec![
        ("unshare -U (nobody mapped)", [vec![unshare.clone()], words(&["-U", "--"])].concat()),
        ("unshare -U -r (root mapped)", [vec![unshare.clone()], words(&["-U", "-r", "--"])].concat()),
        (
            "unshare -U --map-user=1000",
            [vec![unshare], words(&["-U", "--map-user=1000", "--map-group=1000", "--"])].concat(),
        ),
        (
            "bwrap --unshare-user --uid 1000",
            [
                vec![bwrap],
                words(&["--unshare-user", "--uid", "1000", "--gid", "1000", "--bind", "/", "/", "--"]),
            ]
            .concat(),
        ),
    ]
}

/// `command` run under `wrapper` (which enters the user namespace and then
/// executes the tool), with the same environment and directory.
fn wrapped(wrapper: &[String], command: &Command) -> Command {
    let mut inside = Command::new(&wrapper[0]);
    inside.args(&wrapper[1..]).arg(command.get_program()).args(command.get_args());
    inside.env_clear();
    for (key, value) in command.get_envs() {
        if let Some(value) = value {
            inside.env(key, value);
        }
    }
    if let Some(directory) = command.get_current_dir() {
        inside.current_dir(directory);
    }
    inside
}

fn run_inside(wrapper: &[String], sandbox: &Sandbox, tool: &str, args: &[&str]) -> Outcome {
    run_with_deadline(&mut wrapped(wrapper, &sandbox.command_in_root(tool, args)), COMMAND_DEADLINE)
}

/// Fails loudly when the wrapper cannot enter a user namespace here.
fn check_wrapper_works(name: &str, wrapper: &[String]) {
    let host = std::fs::metadata("/proc/self/ns/user").expect("stat own user namespace");
    let mut probe = Command::new(&wrapper[0]);
    probe.args(&wrapper[1..]).args(["readlink", "/proc/self/ns/user"]);
    let outcome = run_with_deadline(&mut probe, COMMAND_DEADLINE);
    assert_eq!(outcome.code(), 0, "{name} cannot create a user namespace here: {}", outcome.stderr);
    use std::os::unix::fs::MetadataExt;
    assert_ne!(
        outcome.stdout_text().trim(),
        format!("user:[{}]", host.ino()),
        "{name} did not enter another user namespace"
    );
}

fn liveness_of(rows: &[Value], pid: u32) -> String {
    let row = rows
        .iter()
        .find(|row| row["session_pid"] == pid)
        .unwrap_or_else(|| panic!("no row for pid {pid} in {rows:#?}"));
    format!("{}: {}", row["liveness"].as_str().unwrap_or("?"), row["liveness_reason"].as_str().unwrap_or("?"))
}

#[test]
fn live_host_sessions_stay_alive_seen_from_a_user_namespace_and_dead_ones_still_go() {
    for (name, wrapper) in user_namespace_wrappers() {
        check_wrapper_works(name, &wrapper);
        let sandbox = Sandbox::new();
        let work = sandbox.base().join("work");
        std::fs::create_dir(&work).expect("create the session directory");
        let work_text = work.to_str().expect("UTF-8 temp path");

        let live = Owner::spawn();
        sandbox.register(live.pid(), &["--agent", "live", "--cwd", work_text]);
        let armed = ArmedOwner::spawn(sandbox.root(), sandbox.home(), &work);
        sandbox.register(armed.pid(), &["--agent", "armed", "--cwd", work_text]);
        // Registered first and killed together, so no register reaps one
        // before the sandbox gets to judge it.
        let doomed: Vec<Owner> = (0..4).map(|_| Owner::spawn()).collect();
        for (index, owner) in doomed.iter().enumerate() {
            sandbox.register(owner.pid(), &["--agent", &format!("dead-{index}")]);
        }
        let dead: Vec<u32> = doomed.into_iter().map(Owner::kill).collect();

        // list
        let rows = run_inside(&wrapper, &sandbox, "roster-list", &["--json", "--all"]).rows();
        for pid in [live.pid(), armed.pid()] {
            assert!(liveness_of(&rows, pid).starts_with("alive: "), "{name}: {}", liveness_of(&rows, pid));
        }
        for &pid in &dead {
            assert!(liveness_of(&rows, pid).starts_with("dead: "), "{name}: {}", liveness_of(&rows, pid));
        }

        // the consent gate
        let armed_pid = armed.pid().to_string();
        let should_arm = run_inside(
            &wrapper,
            &sandbox,
            "roster-consent",
            &["should-arm", "--pid", &armed_pid, "--cwd", work_text],
        );
        assert_eq!(should_arm.code(), 0, "{name}: a live armed host session must accept pushes from inside");
        let status = run_inside(
            &wrapper,
            &sandbox,
            "roster-consent",
            &["--json", "status", "--pid", &armed_pid, "--cwd", work_text],
        )
        .json();
        assert_eq!(status["marker"]["state"], "armed", "{name}: {status:#}");

        // register's reap pass, registering another host process from inside
        let newcomer = Owner::spawn();
        let newcomer_pid = newcomer.pid().to_string();
        run_inside(&wrapper, &sandbox, "roster-register", &["--pid", &newcomer_pid, "--agent", "newcomer"])
            .expect_code(0);
        assert!(
            sandbox.record_path(live.pid()).exists(),
            "{name}: register's reap pass removed a live record"
        );
        assert!(
            sandbox.record_path(armed.pid()).exists(),
            "{name}: register's reap pass removed a live record"
        );

        // prune
        run_inside(&wrapper, &sandbox, "roster-prune", &[]).expect_code(0);
        for pid in [live.pid(), armed.pid(), newcomer.pid()] {
            assert!(sandbox.record_path(pid).exists(), "{name}: prune from inside removed live pid {pid}");
        }
        assert!(
            sandbox.consent().join(tests::record_file_name_here(armed.pid())).exists(),
            "{name}: prune from inside removed a live owner's consent"
        );
        for &pid in &dead {
            assert!(!sandbox.record_path(pid).exists(), "{name}: prune from inside kept dead pid {pid}");
        }

        // and back on the host, the record written inside is believed too
        let rows = sandbox.list_all();
        for pid in [live.pid(), armed.pid(), newcomer.pid()] {
            assert!(
                liveness_of(&rows, pid).starts_with("alive: "),
                "{name}: host sees {}",
                liveness_of(&rows, pid)
            );
        }
        assert_eq!(
            sandbox.run("roster-consent", &["should-arm", "--pid", &armed_pid, "--cwd", work_text]).code(),
            0,
            "{name}: the host's gate"
        );

        // an owner that exits is dead to the sandbox and to the host
        let newcomer_pid = newcomer.kill();
        let rows = run_inside(&wrapper, &sandbox, "roster-list", &["--json", "--all"]).rows();
        assert!(liveness_of(&rows, newcomer_pid).starts_with("dead: "), "{name}");
        drop(armed);
        assert_eq!(
            run_inside(
                &wrapper,
                &sandbox,
                "roster-consent",
                &["should-arm", "--pid", &armed_pid, "--cwd", work_text]
            )
            .code(),
            1,
            "{name}: consent must die with its session"
        );
    }
}

/// The record carries the user namespace its uid was read in: the
/// registrar's, inside a sandbox the sandbox's.
#[test]
fn a_record_names_the_user_namespace_of_its_uid() {
    use std::os::unix::fs::MetadataExt;
    let sandbox = Sandbox::new();
    let host = Owner::spawn();
    let row = sandbox.register(host.pid(), &[]);
    let own = std::fs::metadata("/proc/self/ns/user").expect("stat own user namespace").ino();
    assert_eq!(row["user_ns"], own);
    assert_eq!(sandbox.record(host.pid())["user_ns"], own);

    let (_, wrapper) = user_namespace_wrappers().remove(0);
    let inner = Owner::spawn();
    let inner_pid = inner.pid().to_string();
    let outcome = run_inside(&wrapper, &sandbox, "roster-register", &["--json", "--pid", &inner_pid]);
    let row = outcome.json();
    assert_ne!(row["user_ns"], own, "registered inside a user namespace: {row:#}");
    assert_eq!(row["owner_uid"], 65534, "an unmapped uid shows as the overflow uid: {row:#}");
    assert_eq!(row["liveness"], "alive", "{row:#}");
}
