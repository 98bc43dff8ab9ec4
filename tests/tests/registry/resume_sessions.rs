//! `roster-resume` (docs/contract.md §6.9) against ended sessions: `--print`
//! gives each session's command line in its directory; a real tmux server
//! gets a new window per session, named by agent or harness, in the
//! session's directory, running the harness's resume command (a stand-in
//! `claude` on PATH that registers the session id it was given); a second
//! `roster-resume` of the same session is refused while the first runs,
//! also when both start at once; and each refusal has its own exit status:
//! already running (8), directory gone (9), harness not installed (10),
//! nothing resumes it (3), outside tmux without `--here` or `--print` (2).
//! After a reboot made as the worlds tests make one (another boot id
//! bind-mounted in a mount namespace), the earlier boot's sessions are
//! listed `reboot`, and `roster-resume --boot` resumes them all, printed
//! and in tmux, but not one that exited.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::Value;
use tests::tmux::TmuxServer;
use tests::{
    COMMAND_DEADLINE, Outcome, Owner, Sandbox, binary, clean_environment, poll_until, require_tool,
    run_with_deadline,
};

const ID: &str = "7c660e54-2e19-4577-b46a-16f46484eaf4";

/// A directory with a stand-in `claude` that registers the session id it
/// is resumed with (`claude --resume ID`) after `delay`, for its own
/// process, in the roster at `root`, then waits.
fn stand_in_claude(sandbox: &Sandbox, delay: &str) -> PathBuf {
    let bin = sandbox.base().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let register = tests::binary("roster-register");
    let script = format!(
        "#!/bin/sh\n# A stand-in for Claude Code: `claude --resume ID` registers ID for this process.\n\
         [ \"$1\" = --resume ] || exit 64\nsleep {delay}\n\
         '{}' --dir '{}' --pid $$ --harness claude-code --session-id \"$2\" --cwd \"$PWD\" -q || exit 65\n\
         exec sleep 600\n",
        register.display(),
        sandbox.root().display()
    );
    let path = bin.join("claude");
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

fn path_with(bin: &Path) -> String {
    format!("{}:/usr/bin:/bin", bin.display())
}

/// A crashed Claude Code session `id` in `cwd` (agent `agent`), kept in
/// `ended/` by a prune.
fn crashed_session(sandbox: &Sandbox, id: &str, cwd: &Path, agent: Option<&str>) {
    let owner = Owner::spawn();
    let cwd = cwd.to_str().unwrap();
    let mut args = vec!["--harness", "claude-code", "--session-id", id, "--cwd", cwd];
    if let Some(agent) = agent {
        args.extend(["--agent", agent]);
    }
    sandbox.register(owner.pid(), &args);
    owner.kill();
    sandbox.run("roster-prune", &["--quiet"]).expect_code(0);
}

fn project(sandbox: &Sandbox, name: &str) -> PathBuf {
    let directory = sandbox.base().join(name);
    std::fs::create_dir_all(&directory).unwrap();
    directory.canonicalize().unwrap()
}

#[test]
fn print_gives_the_command_line_of_a_crashed_session_in_its_directory() {
    let sandbox = Sandbox::new();
    let bin = stand_in_claude(&sandbox, "0");
    let app = project(&sandbox, "my app");
    crashed_session(&sandbox, ID, &app, Some("wren"));
    let path = path_with(&bin);

    let printed = sandbox.run_with_env("roster-resume", &["--print", ID], &[("PATH", &path)]);
    printed.expect_code(0);
    assert_eq!(printed.stdout_text().trim(), format!("cd '{}' && claude --resume {ID}", app.display()));

    let json = sandbox.run_with_env("roster-resume", &["--print", "--last", "--json"], &[("PATH", &path)]);
    json.expect_code(0);
    let rows: Value = serde_json::from_str(&json.stdout_text()).unwrap();
    let row = &rows[0];
    assert_eq!(row["outcome"], "printed");
    assert_eq!(row["argv"], serde_json::json!(["claude", "--resume", ID]));
    assert_eq!(row["cwd"], Value::from(app.to_str().unwrap()));
    assert_eq!(row["how"], "crashed");
    assert_eq!(row["agent"], "wren");
    assert_eq!(row["form"], "by-id");
}

#[test]
fn each_refusal_says_why_with_its_own_exit_status() {
    let sandbox = Sandbox::new();
    let bin = stand_in_claude(&sandbox, "0");
    let path = path_with(&bin);
    let env = [("PATH", path.as_str())];
    let app = project(&sandbox, "app");
    let gone = project(&sandbox, "gone");

    // No such ended session: 3.
    let none = sandbox.run_with_env("roster-resume", &["--print", ID], &env);
    none.expect_code(3);
    assert!(none.stderr.clone().contains("no ended session has the session id"), "{}", none.stderr.clone());

    // A live session holds the id again: 8, naming it.
    crashed_session(&sandbox, ID, &app, None);
    let holder = Owner::spawn();
    sandbox.register(holder.pid(), &["--harness", "claude-code", "--session-id", ID, "--agent", "heron"]);
    let running = sandbox.run_with_env("roster-resume", &["--print", ID], &env);
    running.expect_code(8);
    let said = running.stderr.clone();
    assert!(said.contains("already runs") && said.contains(&format!("pid {}", holder.pid())), "{said}");
    assert!(said.contains("heron") && said.contains(&format!("roster-focus {}", holder.pid())), "{said}");
    drop(holder);

    // Its directory is gone: 9.
    crashed_session(&sandbox, "gone-1", &gone, None);
    std::fs::remove_dir(&gone).unwrap();
    let directory_gone = sandbox.run_with_env("roster-resume", &["--print", "gone-1"], &env);
    directory_gone.expect_code(9);
    assert!(directory_gone.stderr.clone().contains("is gone"), "{}", directory_gone.stderr.clone());
    assert!(
        directory_gone.stderr.clone().contains(gone.to_str().unwrap()),
        "{}",
        directory_gone.stderr.clone()
    );

    // Its harness is not on PATH: 10.
    crashed_session(&sandbox, "elsewhere-1", &app, None);
    let missing =
        sandbox.run_with_env("roster-resume", &["--print", "elsewhere-1"], &[("PATH", "/usr/bin:/bin")]);
    missing.expect_code(10);
    assert!(missing.stderr.clone().contains("no `claude` on PATH"), "{}", missing.stderr.clone());

    // Aider cannot resume: 3.
    let owner = Owner::spawn();
    sandbox.register(
        owner.pid(),
        &["--harness", "aider", "--session-id", "aider-1", "--cwd", app.to_str().unwrap()],
    );
    owner.kill();
    sandbox.run("roster-prune", &["--quiet"]).expect_code(0);
    let aider = sandbox.run_with_env("roster-resume", &["--print", "aider-1"], &env);
    aider.expect_code(3);
    assert!(aider.stderr.clone().contains("Aider has no command"), "{}", aider.stderr.clone());

    // Outside tmux, without --here or --print: 2, saying what to use.
    let outside = sandbox.run_with_env("roster-resume", &["elsewhere-1"], &env);
    outside.expect_code(2);
    let said = outside.stderr.clone();
    assert!(said.contains("--here") && said.contains("--print") && said.contains("tmux"), "{said}");
}

#[test]
fn in_tmux_each_session_opens_in_a_window_of_its_own_and_never_twice() {
    let sandbox = Sandbox::new();
    // Registers 2 s after it starts: meanwhile only the claim says it runs.
    let bin = stand_in_claude(&sandbox, "2");
    let path = path_with(&bin);
    let app = project(&sandbox, "app");
    crashed_session(&sandbox, ID, &app, Some("wren"));
    let server = TmuxServer::start("work");
    let tmux = server.tmux_variable("work");
    let env = [("PATH", path.as_str()), ("TMUX", tmux.as_str())];

    // Two at once: exactly one starts it.
    let racers: Vec<std::process::Child> = (0..2)
        .map(|_| {
            let mut command = sandbox.command_in_root("roster-resume", &[ID]);
            command.envs(env).stdout(Stdio::piped()).stderr(Stdio::piped());
            command.spawn().unwrap()
        })
        .collect();
    let mut codes: Vec<i32> =
        racers.into_iter().map(|child| child.wait_with_output().unwrap().status.code().unwrap()).collect();
    codes.sort();
    assert_eq!(codes, vec![0, 8], "two roster-resume of one session at once");

    let windows = server.windows();
    let resumed: Vec<&(String, String, u32)> = windows.iter().filter(|(name, _, _)| name == "wren").collect();
    assert_eq!(resumed.len(), 1, "{windows:?}");
    let (_, directory, pane_pid) = resumed[0];
    assert_eq!(Path::new(directory), app, "{windows:?}");

    // The harness registers the same session id again, from that window.
    let mut live = Vec::new();
    let registered = poll_until(Duration::from_secs(30), || {
        live = sandbox.list(&["--session-id", ID]);
        !live.is_empty()
    });
    assert!(registered, "the resumed session never registered its id");
    assert_eq!(live[0]["session_pid"], Value::from(*pane_pid));
    assert_eq!(Path::new(live[0]["cwd"].as_str().unwrap()), app);

    // While it runs, another roster-resume is refused, naming it.
    let again = sandbox.run_with_env("roster-resume", &[ID], &env);
    again.expect_code(8);
    assert!(again.stderr.clone().contains(&format!("pid {pane_pid}")), "{}", again.stderr.clone());
    assert_eq!(server.windows().iter().filter(|(name, _, _)| name == "wren").count(), 1);
}

/// Runs `tool --dir <root> args…` as this machine after a reboot: another
/// boot id bind-mounted over the kernel's in a mount namespace of its own,
/// with `env` added to the clean environment.
fn after_reboot(sandbox: &Sandbox, tool: &str, args: &[&str], env: &[(&str, &str)]) -> Outcome {
    let boot_id_file = sandbox.base().join("boot_id-after-reboot");
    std::fs::write(&boot_id_file, "0b0e5eed-0000-4000-8000-00000000000b\n").unwrap();
    let script = "mount --bind \"$BOOT_ID\" /proc/sys/kernel/random/boot_id || exit 90\nexec \"$@\"\n";
    let mut command = Command::new(require_tool("unshare"));
    clean_environment(&mut command, sandbox.home());
    command
        .args(["-m", "--propagation", "private", "sh", "-c", script, "sh"])
        .arg(binary(tool))
        .arg("--dir")
        .arg(sandbox.root())
        .args(args)
        .env("BOOT_ID", &boot_id_file)
        .envs(env.iter().copied())
        .current_dir(sandbox.home());
    let outcome = run_with_deadline(&mut command, COMMAND_DEADLINE);
    assert_ne!(outcome.code(), 90, "cannot bind-mount a boot id in a mount namespace: {outcome}");
    outcome
}

#[test]
fn after_a_reboot_boot_resumes_every_session_it_ended_and_not_those_that_exited() {
    let sandbox = Sandbox::new();
    let bin = stand_in_claude(&sandbox, "0");
    let path = path_with(&bin);
    let (alpha, beta, gamma) =
        (project(&sandbox, "alpha"), project(&sandbox, "beta"), project(&sandbox, "gamma"));
    let mut owners = Vec::new();
    for (id, cwd, agent) in
        [("boot-a", &alpha, Some("alpha")), ("boot-b", &beta, None), ("boot-c", &gamma, None)]
    {
        let owner = Owner::spawn();
        let mut args = vec!["--harness", "claude-code", "--session-id", id, "--cwd", cwd.to_str().unwrap()];
        if let Some(agent) = agent {
            args.extend(["--agent", agent]);
        }
        sandbox.register(owner.pid(), &args);
        owners.push(owner);
    }
    // boot-c exits through its session end before the reboot.
    let exited = owners.pop().unwrap();
    sandbox.run("roster-prune", &["--current", "--pid", &exited.pid().to_string()]).expect_code(0);
    // The reboot: every process of the earlier boot is gone.
    for owner in owners {
        owner.kill();
    }
    after_reboot(&sandbox, "roster-prune", &["--quiet"], &[]).expect_code(0);

    let listed = after_reboot(&sandbox, "roster-list", &["--ended", "--json"], &[]);
    listed.expect_code(0);
    let rows = listed.rows();
    let mut how: Vec<(String, String)> = rows
        .iter()
        .map(|row| (row["session_id"].as_str().unwrap().to_owned(), row["how"].as_str().unwrap().to_owned()))
        .collect();
    how.sort();
    let expected: Vec<(String, String)> = [("boot-a", "reboot"), ("boot-b", "reboot"), ("boot-c", "exited")]
        .map(|(id, how)| (id.into(), how.into()))
        .into();
    assert_eq!(how, expected, "{rows:#?}");

    // Printed: the two the reboot ended, each in its directory.
    let printed = after_reboot(&sandbox, "roster-resume", &["--boot", "--print"], &[("PATH", &path)]);
    printed.expect_code(0);
    let mut lines: Vec<String> = printed.stdout_text().lines().map(str::to_owned).collect();
    lines.sort();
    assert_eq!(
        lines,
        [
            format!("cd {} && claude --resume boot-a", alpha.display()),
            format!("cd {} && claude --resume boot-b", beta.display())
        ],
        "{}",
        printed.stderr
    );

    // In tmux: a window each, in its directory, named by agent or harness.
    let server = TmuxServer::start("work");
    let tmux = server.tmux_variable("work");
    let started =
        after_reboot(&sandbox, "roster-resume", &["--boot", "--json"], &[("PATH", &path), ("TMUX", &tmux)]);
    started.expect_code(0);
    let started: Value = serde_json::from_slice(&started.stdout).unwrap();
    assert_eq!(started.as_array().unwrap().len(), 2, "{started:#}");
    assert!(started.as_array().unwrap().iter().all(|row| row["outcome"] == "started"), "{started:#}");
    let windows = server.windows();
    for (name, directory) in [("alpha", &alpha), ("claude-code", &beta)] {
        assert!(
            windows.iter().any(|(window, cwd, _)| window == name && Path::new(cwd) == directory.as_path()),
            "no window {name} in {}: {windows:?}",
            directory.display()
        );
    }
    // Each registers its session id again; then --boot finds both running.
    let registered = poll_until(Duration::from_secs(30), || {
        ["boot-a", "boot-b"].iter().all(|id| !sandbox.list(&["--session-id", id]).is_empty())
    });
    assert!(registered, "the resumed sessions did not register again: {:#?}", sandbox.list(&["--all"]));
    let again = sandbox.run_with_env("roster-resume", &["--boot", "--print"], &[("PATH", &path)]);
    again.expect_code(8);
    assert!(again.stderr.contains("2 of 2 sessions not resumed"), "{}", again.stderr);
}

/// `--here` becomes the harness in this terminal: the same process (its
/// pid) runs the resume command in the session's directory, claimed, so a
/// second `roster-resume` is refused at once, before the harness has
/// registered; `--here` for several sessions is a usage error.
#[test]
fn here_becomes_the_harness_in_its_directory_and_claims_it() {
    let sandbox = Sandbox::new();
    // Registers 3 s after it starts: until then only the claim says it runs.
    let bin = stand_in_claude(&sandbox, "3");
    let path = path_with(&bin);
    let app = project(&sandbox, "app");
    crashed_session(&sandbox, ID, &app, Some("wren"));
    crashed_session(&sandbox, "other-1", &app, None);

    let mut here = sandbox.command_in_root("roster-resume", &["--here", ID]);
    here.env("PATH", &path).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped());
    let mut child = here.spawn().unwrap();
    let pid = child.id();
    let became = poll_until(Duration::from_secs(10), || {
        std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd == app)
            && std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|line| line.starts_with(b"/bin/sh"))
    });
    assert!(became, "roster-resume --here did not become the harness in {}", app.display());

    let refused = sandbox.run_with_env("roster-resume", &["--print", ID], &[("PATH", &path)]);
    refused.expect_code(8);
    assert!(refused.stderr.contains(&format!("as pid {pid}")), "{}", refused.stderr);

    let mut live = Vec::new();
    let registered = poll_until(Duration::from_secs(30), || {
        live = sandbox.list(&["--session-id", ID]);
        !live.is_empty()
    });
    assert!(registered, "the session never registered again");
    assert_eq!(live[0]["session_pid"], Value::from(pid));
    let _ = child.kill();
    let _ = child.wait();

    let several = sandbox.run_with_env("roster-resume", &["--here", "--boot"], &[("PATH", &path)]);
    several.expect_code(2);
    assert!(several.stderr.contains("--here runs exactly one session"), "{}", several.stderr);
}
