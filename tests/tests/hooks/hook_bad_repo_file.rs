//! A SessionStart hook in a repository whose `.roster.toml` is broken or
//! not the user's (docs/contract.md §7, §8.2). Regression: invalid TOML, a
//! misspelt key or another user's file above the cwd made the hook fail,
//! and the session silently went unregistered. Now the session is
//! registered without the file's agent name, stdout stays silent, the exit
//! is 0, and the warning goes to `hook-errors.log`.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::Value;
use tests::Sandbox;
use tests::hooks::{MACHINE_DEADLINE, StdinFeed, run_to_completion};

fn write_0644(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644)).unwrap();
}

#[test]
fn a_bad_repository_file_is_logged_and_the_session_registered() {
    type Plant = fn(&Sandbox) -> PathBuf;
    let cases: [(&str, Plant, &str); 3] = [
        (
            "invalid TOML",
            |sandbox| {
                let path = sandbox.project().join(".roster.toml");
                write_0644(&path, "agent_name = \"wren\"\n[consent\n");
                path
            },
            "does not parse: line 2",
        ),
        (
            "a misspelt key",
            |sandbox| {
                let path = sandbox.project().join(".roster.toml");
                write_0644(&path, "agent_nmae = \"wren\"\n");
                path
            },
            "did you mean agent_name?",
        ),
        (
            "another user's file above the cwd",
            |sandbox| {
                let path = sandbox.home().join("src/.roster.toml");
                write_0644(&path, "agent_name = \"wren\"\n[consent]\nauto_arm = true\n");
                nix::unistd::chown(&path, Some(nix::unistd::Uid::from_raw(4242)), None)
                    .unwrap_or_else(|error| panic!("chown to uid 4242 failed ({error}); run as root"));
                path
            },
            "untrusted: is owned by uid 4242",
        ),
    ];
    for (name, plant, mention) in cases {
        let sandbox = Sandbox::with_default_roster();
        let path = plant(&sandbox);
        let owner = sandbox.spawn_idle_owner();
        let payload = serde_json::json!({
            "session_id": "7c660e54-2e19-4577-b46a-16f46484eaf4",
            "cwd": sandbox.project(),
            "hook_event_name": "SessionStart",
            "source": "startup",
        });
        let mut command = sandbox.roster_command("roster-register");
        // Run from elsewhere: the payload's cwd is the session's directory.
        command.current_dir(sandbox.home()).args([
            "--hook",
            "claude-code",
            "--pid",
            &owner.pid().to_string(),
        ]);
        let finished =
            run_to_completion(command, StdinFeed::Bytes(payload.to_string().into_bytes()), MACHINE_DEADLINE);
        assert_eq!(finished.code(), Some(0), "{name}: stderr {}", finished.stderr_text());
        assert!(finished.stdout.is_empty(), "{name}: wrote to stdout: {}", finished.stdout_text());

        let record = sandbox.find_record(owner.pid()).unwrap_or_else(|| panic!("{name}: not registered"));
        assert_eq!(record["agent"], Value::Null, "{name}: {record:#}");
        assert_eq!(record["cwd"], sandbox.project().to_str().unwrap(), "{name}: {record:#}");

        let logged = sandbox.hook_error_lines();
        let prefix = format!("roster-register: warning: {}: ", path.display());
        assert_eq!(logged.len(), 1, "{name}: {logged:?}");
        assert!(logged[0].contains(&prefix), "{name}: {logged:?}");
        assert!(logged[0].contains(mention), "{name}: {logged:?}");
    }
}
