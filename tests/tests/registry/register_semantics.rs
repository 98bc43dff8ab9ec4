//! What `roster-register` does to the registry (docs/contract.md §3, §4.1, §6.1): a
//! refresh keeps one file and `registered_at`; a record of another process
//! at the same pid is replaced; one live owner per session id; a record is
//! never born dead; and which source wins for the owner, the agent name,
//! the session id and the roster directory.

use std::time::Duration;

use serde_json::Value;
use tests::{Owner, Sandbox, dead_pid, make_identity_stale, parse_rfc3339, poll_until, rows_for_pid};

fn stamp(row: &Value, key: &str) -> i128 {
    let text = row[key].as_str().unwrap_or_else(|| panic!("{key} is not a string in {row:#}"));
    parse_rfc3339(text).unwrap_or_else(|| panic!("{key} {text:?} is not RFC 3339"))
}

#[test]
fn refresh_keeps_one_file_and_registered_at() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    let (first_cwd, second_cwd) = (sandbox.home().join("one"), sandbox.home().join("two"));
    std::fs::create_dir(&first_cwd).unwrap();
    std::fs::create_dir(&second_cwd).unwrap();
    let first = sandbox.register(
        owner.pid(),
        &["--agent", "wren", "--session-id", "before-clear", "--cwd", first_cwd.to_str().unwrap()],
    );
    let second = sandbox.register(
        owner.pid(),
        &["--agent", "robin", "--session-id", "after-clear", "--cwd", second_cwd.to_str().unwrap()],
    );
    assert_eq!(sandbox.visible_session_entries(), vec![tests::record_file_name_here(owner.pid())]);
    assert_eq!(second["registered_at"], first["registered_at"], "a refresh must keep registered_at");
    assert!(stamp(&second, "refreshed_at") > stamp(&first, "refreshed_at"), "refreshed_at did not move");
    let record = sandbox.record(owner.pid());
    assert_eq!(record["registered_at"], first["registered_at"]);
    assert_eq!(record["agent"], "robin");
    assert_eq!(record["session_id"], "after-clear");
    assert_eq!(record["cwd"], second_cwd.to_str().unwrap());
    let rows = sandbox.list(&[]);
    assert_eq!(rows.len(), 1, "{rows:#?}");

    // The id given up by the refresh is free for another session.
    let other = Owner::spawn();
    let taken =
        sandbox.run("roster-register", &["--pid", &other.pid().to_string(), "--session-id", "before-clear"]);
    taken.expect_code(0);
}

#[test]
fn record_of_another_process_at_the_same_pid_is_replaced() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    let original = sandbox.register(owner.pid(), &["--agent", "wren"]);
    // Make the file look written for an earlier process that had this pid.
    sandbox.edit_record(owner.pid(), |record| {
        make_identity_stale(record);
        record.insert("registered_at".into(), Value::from("2001-01-01T00:00:00.000000000Z"));
        record.insert("agent".into(), Value::from("ghost"));
    });
    let stale = rows_for_pid(&sandbox.list_all(), owner.pid())[0].clone();
    assert_eq!(
        stale["liveness"], "dead",
        "the edited record should read as another, dead process: {stale:#}"
    );

    let fresh = sandbox.register(owner.pid(), &["--agent", "finch"]);
    assert_eq!(sandbox.visible_session_entries(), vec![tests::record_file_name_here(owner.pid())]);
    let record = sandbox.record(owner.pid());
    assert_eq!(record["start_ticks"], original["start_ticks"], "the new record carries the live identity");
    assert_eq!(record["pidfs_ino"], original["pidfs_ino"]);
    assert_eq!(record["agent"], "finch");
    assert_ne!(
        record["registered_at"], "2001-01-01T00:00:00.000000000Z",
        "registered_at of a dead process was kept"
    );
    assert_eq!(fresh["liveness"], "alive");
    assert_eq!(rows_for_pid(&sandbox.list(&[]), owner.pid())[0]["liveness"], "alive");
}

#[test]
fn session_id_held_by_a_live_owner_refuses_with_3() {
    let sandbox = Sandbox::new();
    let holder = Owner::spawn();
    let newcomer = Owner::spawn();
    sandbox.register(holder.pid(), &["--session-id", "shared-id"]);
    let holder_bytes = std::fs::read(sandbox.record_path(holder.pid())).unwrap();

    let outcome =
        sandbox.run("roster-register", &["--pid", &newcomer.pid().to_string(), "--session-id", "shared-id"]);
    outcome.expect_code(3).expect_error_line("roster-register");
    assert!(
        outcome.stderr.contains(&holder.pid().to_string()),
        "the message does not name the holder\n{outcome}"
    );
    assert!(!sandbox.record_path(newcomer.pid()).exists(), "the refused newcomer got a record");
    assert_eq!(
        std::fs::read(sandbox.record_path(holder.pid())).unwrap(),
        holder_bytes,
        "the holder's record changed"
    );

    // The holder itself may refresh with its own id.
    sandbox.register(holder.pid(), &["--session-id", "shared-id", "--agent", "wren"]);
}

#[test]
fn session_id_held_by_an_unknown_owner_refuses_with_3() {
    // Unknown is not dead: first writer wins until death is proven.
    let sandbox = Sandbox::new();
    let holder = Owner::spawn();
    let newcomer = Owner::spawn();
    sandbox.register(holder.pid(), &["--session-id", "shared-id"]);
    sandbox.edit_record(holder.pid(), |record| {
        let namespace = record["pid_ns"].as_u64().unwrap();
        record.insert("pid_ns".into(), Value::from(namespace + 1));
    });
    assert_eq!(rows_for_pid(&sandbox.list(&[]), holder.pid())[0]["liveness"], "unknown");
    let outcome =
        sandbox.run("roster-register", &["--pid", &newcomer.pid().to_string(), "--session-id", "shared-id"]);
    outcome.expect_code(3).expect_error_line("roster-register");
    assert!(
        outcome.stderr.contains(&holder.pid().to_string()),
        "the message does not name the holder\n{outcome}"
    );
    assert!(!sandbox.record_path(newcomer.pid()).exists());
}

#[test]
fn session_id_held_by_a_dead_owner_is_taken_over() {
    let sandbox = Sandbox::new();
    let holder = Owner::spawn();
    sandbox.register(holder.pid(), &["--session-id", "shared-id"]);
    let holder_pid = holder.kill();
    let newcomer = Owner::spawn();
    let row = sandbox.register(newcomer.pid(), &["--session-id", "shared-id"]);
    assert_eq!(row["session_id"], "shared-id");
    let rows = sandbox.list(&["--all", "--session-id", "shared-id"]);
    assert_eq!(
        tests::row_pids(&rows),
        [u64::from(newcomer.pid())].into(),
        "the dead holder {holder_pid} still claims the id: {rows:#?}"
    );
}

#[test]
fn a_record_is_never_born_dead() {
    let sandbox = Sandbox::new();
    let gone = dead_pid();
    sandbox.run("roster-register", &["--pid", &gone.to_string()]).expect_code(3);
    assert!(!sandbox.record_path(gone).exists());

    // A zombie has exited: it is not running, whatever /proc still shows.
    let zombie = Owner::spawn();
    zombie.kill_leaving_zombie();
    let is_zombie = || {
        std::fs::read_to_string(format!("/proc/{}/stat", zombie.pid()))
            .is_ok_and(|stat| stat[stat.rfind(')').unwrap() + 1..].trim_start().starts_with('Z'))
    };
    assert!(poll_until(Duration::from_secs(5), is_zombie), "the killed owner never became a zombie");
    let outcome = sandbox.run("roster-register", &["--pid", &zombie.pid().to_string()]);
    outcome.expect_code(3).expect_error_line("roster-register");
    assert!(!sandbox.record_path(zombie.pid()).exists(), "a zombie owner was registered");
}

#[test]
fn owner_sources_in_order() {
    let sandbox = Sandbox::new();
    let by_env = Owner::spawn();
    let by_flag = Owner::spawn();
    let env_pid = by_env.pid().to_string();

    let row =
        sandbox.run_with_env("roster-register", &["--json"], &[("ROSTER_SESSION_PID", &env_pid)]).json();
    assert_eq!(row["session_pid"], by_env.pid());
    assert_eq!(row["session_pid_source"], "ROSTER_SESSION_PID");

    let row = sandbox
        .run_with_env(
            "roster-register",
            &["--json", "--pid", &by_flag.pid().to_string()],
            &[("ROSTER_SESSION_PID", &env_pid), ("CLAUDE_PID", &env_pid)],
        )
        .json();
    assert_eq!(row["session_pid"], by_flag.pid(), "--pid must beat ROSTER_SESSION_PID");
    assert_eq!(row["session_pid_source"], "flag");
    assert_eq!(row["session_pid_verified"], false, "an unrelated owner is unverified");

    // `parent` is the process that ran the command: this test.
    let row = sandbox.run("roster-register", &["--json", "--pid", "parent"]).json();
    assert_eq!(row["session_pid"], std::process::id());
    assert_eq!(row["session_pid_source"], "parent");
    assert_eq!(row["session_pid_verified"], true, "the parent is an ancestor");
}

#[test]
fn agent_name_sources_in_order() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    let pid = owner.pid().to_string();
    let repo = sandbox.home().join("src/repo");
    let inside = repo.join("crates/deep");
    std::fs::create_dir_all(&inside).unwrap();
    std::fs::write(repo.join(".roster.toml"), "agent_name = \"wren\"\n").unwrap();
    let cwd = inside.to_str().unwrap();

    let agent = |args: &[&str], env: &[(&str, &str)]| {
        let mut all = vec!["--json", "--pid", pid.as_str(), "--cwd", cwd];
        all.extend_from_slice(args);
        sandbox.run_with_env("roster-register", &all, env).json()["agent"].clone()
    };
    assert_eq!(agent(&[], &[]), "wren", "the nearest .roster.toml names the agent");
    assert_eq!(agent(&[], &[("ROSTER_AGENT", "robin")]), "robin", "ROSTER_AGENT beats .roster.toml");
    assert_eq!(
        agent(&["--agent", "finch"], &[("ROSTER_AGENT", "robin")]),
        "finch",
        "--agent beats ROSTER_AGENT"
    );
    assert_eq!(
        agent(&["--agent", ""], &[("ROSTER_AGENT", "robin")]),
        Value::Null,
        "--agent \"\" is anonymous"
    );
    let outside = sandbox.home().to_str().unwrap().to_owned();
    let row = sandbox.run("roster-register", &["--json", "--pid", &pid, "--cwd", &outside]).json();
    assert_eq!(row["agent"], Value::Null, "no .roster.toml above the home: anonymous");
}

#[test]
fn session_id_sources_in_order() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    let pid = owner.pid().to_string();
    let row = sandbox
        .run_with_env("roster-register", &["--json", "--pid", &pid], &[("ROSTER_SESSION_ID", "from-env")])
        .json();
    assert_eq!(row["session_id"], "from-env");
    let row = sandbox
        .run_with_env(
            "roster-register",
            &["--json", "--pid", &pid, "--session-id", "from-flag"],
            &[("ROSTER_SESSION_ID", "from-env")],
        )
        .json();
    assert_eq!(row["session_id"], "from-flag");
}

#[test]
fn cwd_is_the_real_path() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    let real = sandbox.home().join("real/work");
    std::fs::create_dir_all(&real).unwrap();
    let link = sandbox.home().join("shortcut");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let row = sandbox.register(owner.pid(), &["--cwd", link.join(".").to_str().unwrap()]);
    assert_eq!(row["cwd"], real.to_str().unwrap());
    // Without --cwd a new session takes the command's own working directory (the home
    // here); a refresh by hand keeps the directory recorded (register_refresh.rs).
    let another = Owner::spawn();
    let row = sandbox.register(another.pid(), &[]);
    assert_eq!(row["cwd"], sandbox.home().to_str().unwrap());
}

#[test]
fn text_output_is_one_line_and_quiet_is_silent() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    let app = sandbox.home().join("src/app");
    std::fs::create_dir_all(&app).unwrap();
    let pid = owner.pid().to_string();
    let outcome = sandbox.run(
        "roster-register",
        &["--pid", &pid, "--agent", "wren", "--harness", "claude-code", "--cwd", app.to_str().unwrap()],
    );
    outcome.expect_code(0);
    let text = outcome.stdout_text();
    assert_eq!(text.lines().count(), 1, "not one line: {text:?}");
    let line = text.trim_end();
    assert!(line.starts_with(&format!("registered pid {pid} ")), "{line:?}");
    for part in ["claude-code", "agent=wren", "~/src/app"] {
        assert!(line.contains(part), "{line:?} lacks {part:?}");
    }
    assert!(outcome.stderr.is_empty(), "{outcome}");
    let quiet = sandbox.run("roster-register", &["--pid", &pid, "--quiet"]);
    quiet.expect_code(0);
    assert!(quiet.stdout.is_empty() && quiet.stderr.is_empty(), "--quiet printed\n{quiet}");
}

#[test]
fn roster_directory_sources_in_order() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    let pid = owner.pid().to_string();
    let base = sandbox.base();
    let (flag_dir, env_dir, state_home) = (base.join("by-flag"), base.join("by-env"), base.join("state"));
    let record = format!("sessions/{}", tests::record_file_name_here(owner.pid()));
    let run = |flag: Option<&std::path::Path>, env: &[(&str, &std::path::Path)]| {
        let mut command = sandbox.command("roster-register");
        if let Some(dir) = flag {
            command.arg("--dir").arg(dir);
        }
        for (key, value) in env {
            command.env(key, value);
        }
        command.args(["--pid", &pid, "--quiet"]);
        tests::run_with_deadline(&mut command, tests::COMMAND_DEADLINE).expect_code(0);
    };
    run(Some(&flag_dir), &[("ROSTER_DIR", &env_dir), ("XDG_STATE_HOME", &state_home)]);
    assert!(flag_dir.join(&record).exists(), "--dir must win");
    assert!(!env_dir.exists() && !state_home.exists());
    run(None, &[("ROSTER_DIR", &env_dir), ("XDG_STATE_HOME", &state_home)]);
    assert!(env_dir.join(&record).exists(), "ROSTER_DIR must beat XDG_STATE_HOME");
    assert!(!state_home.exists());
    run(None, &[("XDG_STATE_HOME", &state_home)]);
    assert!(state_home.join("roster").join(&record).exists(), "XDG_STATE_HOME/roster is the default");
    run(None, &[]);
    assert!(
        sandbox.home().join(".local/state/roster").join(&record).exists(),
        "~/.local/state/roster is the fallback"
    );
}
