//! Edge cases of the two promises (a live session is never called dead;
//! consent is never armed without a reason the user gave) found by trying
//! the tools as a sandbox and a hostile user would: a user namespace with
//! no mapping, where every foreign uid shows as the overflow uid; an older
//! record written inside a user namespace; a harness that is pid 1 of its
//! pid namespace.

use std::path::{Path, PathBuf};
use std::process::Command;

use tests::{COMMAND_DEADLINE, Outcome, Owner, Sandbox, binary, require_tool, run_with_deadline};

/// Another user: no account needed, only a uid that is neither root nor us.
const OTHER_UID: u32 = 4242;

/// `tool --dir ROOT args…` run inside `unshare -U` with no uid mapped:
/// there the caller's euid and the owner of every file of another user
/// both show as the overflow uid.
fn in_unmapped_user_namespace(sandbox: &Sandbox, tool: &str, args: &[&str], cwd: &Path) -> Outcome {
    let mut command = Command::new(require_tool("unshare"));
    command.args(["-U", "--"]).arg(binary(tool)).arg("--dir").arg(sandbox.root()).args(args);
    command.env_clear().env("HOME", sandbox.home()).current_dir(cwd);
    if let Some(path) = std::env::var_os("PATH") {
        command.env("PATH", path);
    }
    run_with_deadline(&mut command, COMMAND_DEADLINE)
}

/// A repository below the sandbox's home whose `.roster.toml` (opted in,
/// naming agent `planted`) belongs to another user.
fn repo_with_another_users_file(sandbox: &Sandbox) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let repo = sandbox.home().join("src/app");
    std::fs::create_dir_all(&repo).unwrap();
    let file = repo.join(".roster.toml");
    std::fs::write(&file, "agent_name = \"planted\"\n[consent]\nauto_arm = true\n").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    nix::unistd::chown(&file, Some(nix::unistd::Uid::from_raw(OTHER_UID)), None).unwrap_or_else(|error| {
        panic!("chown {} to uid {OTHER_UID} failed ({error}); this test must run as root", file.display())
    });
    repo
}

#[test]
fn another_users_repo_file_enables_nothing_from_a_user_namespace_without_a_mapping() {
    let sandbox = Sandbox::new();
    let repo = repo_with_another_users_file(&sandbox);
    let repo_text = repo.to_str().unwrap();
    let owner = Owner::spawn();
    let pid = owner.pid().to_string();
    sandbox.register(owner.pid(), &["--cwd", repo_text]);

    // On the host the planted file is refused.
    let host = sandbox.run("roster-consent", &["should-arm", "--pid", &pid]);
    assert_eq!(host.code(), 1, "host should-arm\n{host}");

    // In the sandbox the same file must be refused too: its owner (4242)
    // only looks like the caller because both show as the overflow uid.
    let inside =
        in_unmapped_user_namespace(&sandbox, "roster-consent", &["should-arm", "--pid", &pid], &repo);
    assert_eq!(
        inside.code(),
        1,
        "should-arm from `unshare -U` armed a session on another user's .roster.toml\n{inside}"
    );

    // Nor may it name a session registered from inside.
    let second = Owner::spawn();
    let second_pid = second.pid().to_string();
    let registered = in_unmapped_user_namespace(
        &sandbox,
        "roster-register",
        &["--json", "--pid", &second_pid, "--cwd", repo_text],
        &repo,
    );
    assert_eq!(registered.code(), 0, "{registered}");
    assert_eq!(
        registered.json()["agent"],
        serde_json::Value::Null,
        "register from `unshare -U` took the agent name of another user's .roster.toml\n{registered}"
    );
}

#[test]
fn an_older_record_written_inside_a_user_namespace_is_never_called_dead_while_its_owner_runs() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    let pid = owner.pid().to_string();
    let registered =
        in_unmapped_user_namespace(&sandbox, "roster-register", &["--quiet", "--pid", &pid], sandbox.home());
    assert_eq!(registered.code(), 0, "{registered}");
    // As a roster from before `user_ns` wrote it: the uid (the overflow
    // uid) was read in the sandbox, and nothing says so.
    let record = sandbox.edit_record(owner.pid(), |record| {
        record.remove("user_ns");
    });
    assert!(record.get("pidfs_ino").is_some_and(|ino| ino.is_u64()), "no pidfs inode recorded: {record}");

    let rows = sandbox.list_all();
    let row = rows.iter().find(|row| row["session_pid"] == owner.pid()).expect("a row for the owner");
    assert_ne!(
        row["liveness"], "dead",
        "a running owner whose pidfs inode and start tick match was called dead: {row:#}"
    );
    let pruned = sandbox.run("roster-prune", &["--json"]);
    assert_eq!(pruned.code(), 0, "{pruned}");
    assert!(sandbox.record_path(owner.pid()).exists(), "prune removed a live session's record\n{pruned}");
}

#[test]
fn a_harness_that_is_pid_1_of_its_namespace_is_named_in_the_refusal() {
    let unshare = require_tool("unshare");
    let sandbox = Sandbox::new();
    let claude = sandbox.base().join("claude");
    std::os::unix::fs::symlink("/bin/sh", &claude).unwrap();
    // `claude` is pid 1 of a new pid namespace, as in a container whose
    // entry point is the harness; it runs register as its hook would.
    let script =
        format!("\"{}\" --dir \"{}\"; true", binary("roster-register").display(), sandbox.root().display());
    let mut command = Command::new(unshare);
    command.args(["--pid", "--fork", "--mount-proc", "--"]).arg(&claude).args(["-c", &script]);
    command.env_clear().env("HOME", sandbox.home()).current_dir(sandbox.home());
    if let Some(path) = std::env::var_os("PATH") {
        command.env("PATH", path);
    }
    let outcome = run_with_deadline(&mut command, COMMAND_DEADLINE);
    assert!(outcome.stderr.contains("roster-register:"), "register did not refuse\n{outcome}");
    assert!(
        !outcome.stderr.contains("no harness process among the caller's ancestors"),
        "the refusal denies the harness that is there (pid 1)\n{outcome}"
    );
    assert!(outcome.stderr.contains("pid 1"), "the refusal does not say the harness is pid 1\n{outcome}");
}

/// Without a mapping, another user's roster directory looks like the
/// caller's: it must still be refused, on the kernel's word.
#[test]
fn another_users_registry_is_refused_from_a_user_namespace_without_a_mapping() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    sandbox.register(owner.pid(), &[]);
    for directory in [sandbox.root().to_owned(), sandbox.sessions(), sandbox.consent()] {
        nix::unistd::chown(&directory, Some(nix::unistd::Uid::from_raw(OTHER_UID)), None)
            .unwrap_or_else(|error| panic!("chown {} (the tests run as root): {error}", directory.display()));
        // Readable by others, so the sandboxed caller can open it at all.
        std::fs::set_permissions(&directory, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .expect("chmod");
    }
    let listed = in_unmapped_user_namespace(&sandbox, "roster-list", &[], sandbox.home());
    assert_eq!(listed.code(), 3, "another user's registry was trusted from `unshare -U`\n{listed}");
    assert!(listed.stderr.contains("cannot be proved yours"), "{listed}");
    // And the same registry, given back, is trusted again.
    for directory in [sandbox.root().to_owned(), sandbox.sessions(), sandbox.consent()] {
        nix::unistd::chown(&directory, Some(nix::unistd::Uid::from_raw(0)), None).expect("chown back");
    }
    let listed = in_unmapped_user_namespace(&sandbox, "roster-list", &["--json"], sandbox.home());
    assert_eq!(listed.code(), 0, "{listed}");
}

/// An owner that changes its uid after registering (dropping privileges)
/// is still the process the pidfs inode names: alive, and kept by prune.
#[test]
fn an_owner_that_changes_its_uid_is_still_alive() {
    let setpriv = require_tool("setpriv");
    let sandbox = Sandbox::new();
    let script = format!(
        "\"{}\" --dir \"{}\" --pid $$ --quiet && exec \"{}\" --reuid={OTHER_UID} --regid={OTHER_UID} --clear-groups sleep 100000",
        binary("roster-register").display(),
        sandbox.root().display(),
        setpriv.display()
    );
    let mut child = Command::new("sh").args(["-c", &script]).spawn().expect("spawn an owner");
    let pid = child.id();
    let record = sandbox.record_path(pid);
    let changed = tests::poll_until(std::time::Duration::from_secs(10), || {
        record.exists()
            && std::fs::read_to_string(format!("/proc/{pid}/status")).is_ok_and(|status| {
                status.lines().any(|line| line.starts_with("Uid:") && line.contains(&OTHER_UID.to_string()))
            })
    });
    assert!(changed, "the owner did not register and change its uid");
    let rows = sandbox.list_all();
    let row = rows.iter().find(|row| row["session_pid"] == pid).expect("a row");
    assert_eq!(row["liveness"], "alive", "{row:#}");
    sandbox.run("roster-prune", &[]).expect_code(0);
    assert!(record.exists(), "prune removed a live session whose owner changed its uid");
    let _ = child.kill();
    let _ = child.wait();
}

/// Regression: `roster-list --dir /tmp` advised "run `chmod 700 /tmp`",
/// which would break every other user of the shared directory. A sticky
/// directory others may write to gets the advice to use a private one (and
/// that advice, followed, works); one of the user's own that is merely too
/// open still gets the `chmod 700` that fixes it.
#[test]
fn a_shared_sticky_directory_is_never_advised_chmod_700() {
    use std::os::unix::fs::PermissionsExt;
    let sandbox = Sandbox::new();
    let shared = sandbox.base().join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o1777)).unwrap();
    let mut command = sandbox.command("roster-list");
    command.arg("--dir").arg(&shared);
    let refused = run_with_deadline(&mut command, COMMAND_DEADLINE);
    refused.expect_code(3);
    assert!(!refused.stderr.contains("chmod"), "{}", refused.stderr);
    let private = shared.join(format!("roster-{}", nix::unistd::geteuid()));
    assert!(
        refused.stderr.contains("use a private directory instead")
            && refused.stderr.contains(&private.display().to_string()),
        "{}",
        refused.stderr
    );
    let mut followed = sandbox.command("roster-register");
    followed.arg("--dir").arg(&private).args(["--pid", "parent"]);
    run_with_deadline(&mut followed, COMMAND_DEADLINE).expect_code(0);

    let open = sandbox.base().join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let mut command = sandbox.command("roster-list");
    command.arg("--dir").arg(&open);
    let refused = run_with_deadline(&mut command, COMMAND_DEADLINE);
    refused.expect_code(3);
    assert!(refused.stderr.contains(&format!("run `chmod 700 {}`", open.display())), "{}", refused.stderr);
}
