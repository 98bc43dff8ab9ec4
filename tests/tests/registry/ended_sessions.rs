//! Ended sessions (docs/contract.md §2, §6.2): every record that leaves the
//! registry leaves an entry in `ended/` saying how it ended (a session end
//! `exited`, a dead owner pruned `crashed`, an earlier boot's `reboot`, a
//! removal by age `removed`), and `roster-list --ended` lists them newest
//! first; a `/clear` is no end; an entry that cannot be believed is skipped
//! and counted, never listed.

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use serde_json::Value;
use tests::hooks::{MACHINE_DEADLINE, StdinFeed, run_to_completion};
use tests::{Owner, Sandbox, ago, rfc3339, write_file_0600};

const DAY: Duration = Duration::from_secs(86400);

fn ended(sandbox: &Sandbox, extra: &[&str]) -> Vec<Value> {
    let mut args = vec!["--ended", "--json"];
    args.extend_from_slice(extra);
    sandbox.run("roster-list", &args).rows()
}

fn text<'v>(row: &'v Value, key: &str) -> &'v str {
    row[key].as_str().unwrap_or_else(|| panic!("{key} missing from {row:#}"))
}

fn hook(sandbox: &Sandbox, tool: &str, owner_pid: u32, payload: Value) {
    let mut command = sandbox.roster_command(tool);
    let current: &[&str] = if tool == "roster-prune" { &["--current"] } else { &[] };
    command.args(current).args(["--hook", "claude-code", "--pid", &owner_pid.to_string()]);
    let finished =
        run_to_completion(command, StdinFeed::Bytes(payload.to_string().into_bytes()), MACHINE_DEADLINE);
    assert_eq!(finished.code(), Some(0), "{tool}: {}", finished.stderr_text());
    assert!(sandbox.hook_error_lines().is_empty(), "{:?}", sandbox.hook_error_lines());
}

fn session_start(sandbox: &Sandbox, session_id: &str, source: &str) -> Value {
    serde_json::json!({
        "session_id": session_id,
        "cwd": sandbox.project(),
        "hook_event_name": "SessionStart",
        "source": source,
    })
}

fn session_end(session_id: &str, reason: &str) -> Value {
    serde_json::json!({"session_id": session_id, "cwd": "/", "hook_event_name": "SessionEnd", "reason": reason})
}

#[test]
fn a_session_end_is_exited_and_a_clear_is_no_end() {
    let sandbox = Sandbox::with_default_roster();
    let owner = sandbox.spawn_idle_owner();
    hook(&sandbox, "roster-register", owner.pid(), session_start(&sandbox, "before-clear", "startup"));
    assert!(ended(&sandbox, &[]).is_empty());

    // `/clear`: the session end of the conversation, then a session start
    // with a new id in the same process. The session goes on.
    hook(&sandbox, "roster-prune", owner.pid(), session_end("before-clear", "clear"));
    hook(&sandbox, "roster-register", owner.pid(), session_start(&sandbox, "after-clear", "clear"));
    assert!(ended(&sandbox, &[]).is_empty(), "a /clear was kept as an end: {:#?}", ended(&sandbox, &[]));
    let live = sandbox.list(&[]);
    assert_eq!(live.len(), 1, "{live:#?}");
    assert_eq!(text(&live[0], "session_id"), "after-clear");

    hook(&sandbox, "roster-prune", owner.pid(), session_end("after-clear", "exit"));
    assert!(sandbox.list(&[]).is_empty());
    let rows = ended(&sandbox, &[]);
    assert_eq!(rows.len(), 1, "{rows:#?}");
    let row = &rows[0];
    assert_eq!(text(row, "how"), "exited");
    assert_eq!(text(row, "session_id"), "after-clear");
    assert_eq!(text(row, "harness"), "claude-code");
    assert_eq!(row["owner_pid"], Value::from(owner.pid()));
    assert_eq!(row["format"], Value::from(1));
    assert_eq!(std::path::Path::new(text(row, "cwd")), sandbox.project().canonicalize().unwrap());

    let entries: Vec<_> =
        std::fs::read_dir(sandbox.root().join("ended")).unwrap().map(Result::unwrap).collect();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].metadata().unwrap().permissions().mode() & 0o777, 0o600);
}

#[test]
fn prune_keeps_how_each_record_ended_and_the_list_shows_the_newest_first() {
    let sandbox = Sandbox::new();
    let crashed = Owner::spawn();
    let rebooted = Owner::spawn();
    let old_unknown = Owner::spawn();
    let alive = Owner::spawn();
    sandbox.register(crashed.pid(), &["--agent", "wren", "--session-id", "crashed-1"]);
    sandbox.register(rebooted.pid(), &["--session-id", "rebooted-1"]);
    sandbox.register(old_unknown.pid(), &["--session-id", "old-1"]);
    sandbox.register(alive.pid(), &["--agent", "alive"]);
    sandbox.edit_record(rebooted.pid(), |record| {
        record.insert("boot_id".into(), Value::from("00000000-0000-4000-8000-000000000000"));
    });
    sandbox.edit_record(old_unknown.pid(), |record| {
        let namespace = record["pid_ns"].as_u64().unwrap();
        record.insert("pid_ns".into(), Value::from(namespace + 1));
        record.insert("registered_at".into(), Value::from(rfc3339(ago(2 * DAY))));
    });
    let crashed_pid = crashed.kill();

    sandbox.run("roster-prune", &["--quiet"]).expect_code(0);
    // Ended later, so listed first.
    std::thread::sleep(Duration::from_millis(20));
    sandbox.run("roster-prune", &["--quiet", "--older-than", "1d"]).expect_code(0);

    let rows = ended(&sandbox, &[]);
    let seen: Vec<(&str, &str)> =
        rows.iter().map(|row| (text(row, "session_id"), text(row, "how"))).collect();
    assert_eq!(seen[0], ("old-1", "removed"), "{rows:#?}");
    let mut rest = seen[1..].to_vec();
    rest.sort();
    assert_eq!(rest, vec![("crashed-1", "crashed"), ("rebooted-1", "reboot")], "{rows:#?}");
    let crashed_row = rows.iter().find(|row| row["session_id"] == "crashed-1").unwrap();
    assert_eq!(crashed_row["owner_pid"], Value::from(crashed_pid));
    assert_eq!(text(crashed_row, "agent"), "wren");

    // The filters.
    let wren = ended(&sandbox, &["--agent", "wren"]);
    assert_eq!(wren.len(), 1, "{wren:#?}");
    assert!(ended(&sandbox, &["--harness", "codex"]).is_empty());
    assert_eq!(ended(&sandbox, &["--since", "1h"]).len(), 3);

    // The table says how and which session.
    let table = sandbox.run("roster-list", &["--ended"]);
    table.expect_code(0);
    let table = table.stdout_text();
    assert!(table.starts_with("ENDED"), "{table}");
    for word in ["removed", "crashed", "reboot", "crashed-1", "wren"] {
        assert!(table.contains(word), "{word} missing from\n{table}");
    }
    // --since without --ended is a usage error.
    sandbox.run("roster-list", &["--since", "1h"]).expect_code(2);
}

#[test]
fn hostile_entries_are_skipped_and_counted_never_believed() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    sandbox.register(owner.pid(), &["--session-id", "real-1"]);
    owner.kill();
    sandbox.run("roster-prune", &["--quiet"]).expect_code(0);
    let directory = sandbox.root().join("ended");
    let real = std::fs::read_dir(&directory).unwrap().next().unwrap().unwrap().path();
    let mut forged: Value = serde_json::from_slice(&std::fs::read(&real).unwrap()).unwrap();
    forged["session_id"] = Value::from("forged-1");

    // A symlink to a believable entry, a group-writable one, bad JSON, and
    // a cwd no record may hold.
    let target = sandbox.base().join("elsewhere.json");
    write_file_0600(&target, &serde_json::to_vec(&forged).unwrap());
    std::os::unix::fs::symlink(&target, directory.join("link.json")).unwrap();
    let writable = directory.join("writable.json");
    write_file_0600(&writable, &serde_json::to_vec(&forged).unwrap());
    std::fs::set_permissions(&writable, std::fs::Permissions::from_mode(0o660)).unwrap();
    write_file_0600(&directory.join("torn.json"), b"{\"format\": 1, \"how\": \"exi");
    let mut relative = forged.clone();
    relative["cwd"] = Value::from("not/absolute");
    write_file_0600(&directory.join("relative.json"), &serde_json::to_vec(&relative).unwrap());

    let outcome = sandbox.run("roster-list", &["--ended", "--json"]);
    let rows = outcome.rows();
    assert_eq!(rows.len(), 1, "{rows:#?}");
    assert_eq!(text(&rows[0], "session_id"), "real-1");
    let notes: Value = serde_json::from_str(outcome.stderr.trim()).expect("one JSON line of notes");
    assert_eq!(notes["notes"][0]["kind"], "ended-skipped", "{notes:#}");
    assert!(text(&notes["notes"][0], "message").starts_with("4 "), "{notes:#}");

    let text_outcome = sandbox.run("roster-list", &["--ended"]);
    text_outcome.expect_code(0);
    assert!(!text_outcome.stdout_text().contains("forged"), "{}", text_outcome.stdout_text());
    assert!(text_outcome.stderr.contains("4 ended-session entries skipped"), "{}", text_outcome.stderr);
}

#[test]
fn a_dead_record_reaped_by_a_registration_is_kept_as_crashed() {
    let sandbox = Sandbox::new();
    let dead = Owner::spawn();
    sandbox.register(dead.pid(), &["--session-id", "reaped-1"]);
    dead.kill();
    let next = Owner::spawn();
    sandbox.register(next.pid(), &[]);
    let rows = ended(&sandbox, &[]);
    assert_eq!(rows.len(), 1, "the registration reaped nothing: {rows:#?}");
    assert_eq!((text(&rows[0], "session_id"), text(&rows[0], "how")), ("reaped-1", "crashed"));
}

#[test]
fn a_crashed_session_resumed_in_a_new_process_is_kept_as_crashed() {
    let sandbox = Sandbox::new();
    let crashed = Owner::spawn();
    sandbox.register(crashed.pid(), &["--session-id", "resumed-1", "--agent", "wren"]);
    let crashed_pid = crashed.kill();
    // The same session id in a new process: the dead holder's record goes.
    let resumed = Owner::spawn();
    sandbox.register(resumed.pid(), &["--session-id", "resumed-1"]);
    let rows = ended(&sandbox, &[]);
    assert_eq!(rows.len(), 1, "{rows:#?}");
    assert_eq!((text(&rows[0], "session_id"), text(&rows[0], "how")), ("resumed-1", "crashed"));
    assert_eq!(rows[0]["owner_pid"], Value::from(crashed_pid));
    let live = sandbox.list(&[]);
    assert_eq!(live.len(), 1, "{live:#?}");
    assert_eq!(live[0]["session_pid"], Value::from(resumed.pid()));
}

/// Each ended session is listed with the command that resumes it in its
/// directory: by id where its harness has a by-id form, the latest of the
/// directory for a session without id, none (and why) for a harness that
/// cannot resume, or an id that would read as a flag.
#[test]
fn each_ended_session_is_listed_with_the_command_that_resumes_it() {
    let sandbox = Sandbox::new();
    std::fs::create_dir_all(sandbox.project()).unwrap();
    let cwd = sandbox.project().canonicalize().unwrap();
    let cwd_text = cwd.to_str().unwrap().to_owned();
    let cases: [(&[&str], Value, &str); 5] = [
        (
            &["--harness", "claude-code", "--session-id", "7c660e54-2e19-4577-b46a-16f46484eaf4"],
            serde_json::json!(["claude", "--resume", "7c660e54-2e19-4577-b46a-16f46484eaf4"]),
            "by-id",
        ),
        (
            &["--harness", "copilot", "--session-id", "cop-1"],
            serde_json::json!(["copilot", "--resume=cop-1"]),
            "by-id",
        ),
        (&["--harness", "codex"], serde_json::json!(["codex", "resume", "--last"]), "latest"),
        (&["--harness", "aider", "--session-id", "aider-1"], Value::Null, ""),
        (&["--harness", "opencode", "--session-id=--yolo"], Value::Null, ""),
    ];
    let mut owners = Vec::new();
    for (flags, _, _) in &cases {
        let owner = Owner::spawn();
        let mut args: Vec<&str> = flags.to_vec();
        args.extend(["--cwd", &cwd_text]);
        sandbox.register(owner.pid(), &args);
        owners.push(owner);
    }
    for owner in owners {
        owner.kill();
    }
    sandbox.run("roster-prune", &["--quiet"]).expect_code(0);

    let rows = ended(&sandbox, &[]);
    assert_eq!(rows.len(), cases.len(), "{rows:#?}");
    for (flags, argv, form) in &cases {
        let harness = flags[1];
        let row = rows
            .iter()
            .find(|row| row["harness"] == harness)
            .unwrap_or_else(|| panic!("{harness}: {rows:#?}"));
        let resume = &row["resume"];
        assert_eq!(resume["argv"], *argv, "{harness}: {resume:#}");
        assert_eq!(resume["cwd"], Value::from(cwd_text.as_str()), "{harness}: {resume:#}");
        if argv.is_null() {
            assert!(resume["form"].is_null(), "{resume:#}");
            assert!(!text(resume, "none").is_empty(), "{resume:#}");
        } else {
            assert_eq!(text(resume, "form"), *form, "{resume:#}");
            assert!(resume["none"].is_null(), "{resume:#}");
        }
    }
    let aider = rows.iter().find(|row| row["harness"] == "aider").unwrap();
    assert!(text(&aider["resume"], "none").contains("Aider has no command"), "{aider:#}");

    // The table's last column is the command line, or none and why.
    let table = sandbox.run("roster-list", &["--ended"]);
    table.expect_code(0);
    let table = table.stdout_text();
    assert!(table.lines().next().unwrap().trim_end().ends_with("RESUME"), "{table}");
    for shown in [
        "claude --resume 7c660e54-2e19-4577-b46a-16f46484eaf4",
        "copilot --resume=cop-1",
        "codex resume --last",
        "none: Aider has no command that resumes a session",
        "none: its session id \"--yolo\" starts with '-'",
    ] {
        assert!(table.contains(shown), "{shown} missing from\n{table}");
    }
}

/// `[ended] kept_most` in the user's config.toml bounds `ended/` instead
/// of the default; a bad value there is refused like any bad key, and the
/// defaults hold (nothing kept is lost for it).
#[test]
fn the_user_config_bounds_how_many_ended_sessions_are_kept() {
    let sandbox = Sandbox::new();
    let config = sandbox.home().join(".config/roster");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("config.toml"), "[ended]\nkept_most = 3\nkept_days = 7\n").unwrap();
    for round in 0..5 {
        let owner = Owner::spawn();
        sandbox.register(owner.pid(), &["--session-id", &format!("bounded-{round}")]);
        owner.kill();
        sandbox.run("roster-prune", &["--quiet"]).expect_code(0);
        std::thread::sleep(Duration::from_millis(20));
    }
    let rows = ended(&sandbox, &[]);
    let ids: Vec<&str> = rows.iter().map(|row| text(row, "session_id")).collect();
    assert_eq!(ids, ["bounded-4", "bounded-3", "bounded-2"], "{rows:#?}");
    assert_eq!(std::fs::read_dir(sandbox.root().join("ended")).unwrap().count(), 3);

    // A value out of range: the file is refused as any bad key is,
    // and the default bound holds: nothing more is trimmed.
    std::fs::write(config.join("config.toml"), "[ended]\nkept_most = 0\n").unwrap();
    let owner = Owner::spawn();
    sandbox.register(owner.pid(), &["--session-id", "bounded-5"]);
    owner.kill();
    sandbox.run("roster-prune", &["--quiet"]).expect_code(0);
    assert_eq!(ended(&sandbox, &[]).len(), 4);
}
