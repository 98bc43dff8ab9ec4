//! Exit codes (docs/contract.md §6) as a caller sees them: 0 done, 1 failed, 2 bad input
//! or usage, 3 refused by rule — and for every refused or invalid input,
//! nothing written to the roster directory (docs/contract.md §10 "every bad flag and env
//! value → a clear message and the documented exit code, nothing written").
//!
//! Session-id conflicts (3) are in `register_semantics.rs`, lock timeouts
//! (1) in `lock.rs` and a full disk (1) in `full_disk.rs`.

use std::collections::BTreeMap;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use tests::{Outcome, Owner, REGISTRY_TOOLS, Sandbox, dead_pid, pid_max, run_with_deadline};

/// Everything under a directory: kind, mode and contents of each entry, so
/// "nothing written" can be checked as "nothing changed".
fn snapshot(root: &Path) -> BTreeMap<PathBuf, (u32, Vec<u8>)> {
    let mut found = BTreeMap::new();
    let mut pending = vec![root.to_owned()];
    while let Some(path) = pending.pop() {
        let Ok(metadata) = std::fs::symlink_metadata(&path) else { continue };
        let contents = if metadata.file_type().is_symlink() {
            std::fs::read_link(&path).expect("readlink").into_os_string().into_encoded_bytes()
        } else if metadata.is_file() {
            std::fs::read(&path).expect("read")
        } else {
            Vec::new()
        };
        if metadata.is_dir() {
            for entry in std::fs::read_dir(&path).expect("read_dir") {
                pending.push(entry.expect("entry").path());
            }
        }
        found.insert(path, (metadata.mode(), contents));
    }
    found
}

/// A roster directory that already holds one live record, so a refused
/// command has something it could wrongly change.
fn populated_sandbox() -> (Sandbox, Owner) {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    sandbox.register(owner.pid(), &["--agent", "wren"]);
    (sandbox, owner)
}

/// Runs each case, checks exit code 2, the one-line report, a mention of
/// what was wrong, and that the roster directory did not change; collects
/// every failure so one run shows all of them.
struct BadInputCases<'a> {
    sandbox: &'a Sandbox,
    failures: Vec<String>,
}

impl<'a> BadInputCases<'a> {
    fn new(sandbox: &'a Sandbox) -> Self {
        BadInputCases { sandbox, failures: Vec::new() }
    }

    fn check(&mut self, tool: &str, args: &[&str], env: &[(&str, &str)], mention: &str) {
        let before = snapshot(self.sandbox.root());
        let outcome = self.sandbox.run_with_env(tool, args, env);
        let after = snapshot(self.sandbox.root());
        let label = format!("{tool} {args:?} env {env:?}");
        if outcome.status.code() != Some(2) {
            self.failures.push(format!(
                "{label}: expected exit 2, got {:?}; stderr {:?}",
                outcome.status, outcome.stderr
            ));
            if before != after {
                self.failures.push(format!("{label}: the roster directory changed"));
            }
            return;
        }
        for problem in outcome.error_line_problems(tool) {
            self.failures.push(format!("{label}: {problem}"));
        }
        if !outcome.stderr.contains(mention) {
            self.failures.push(format!("{label}: stderr does not mention {mention:?}: {:?}", outcome.stderr));
        }
        if !outcome.stdout.is_empty() {
            self.failures.push(format!("{label}: printed to stdout: {:?}", outcome.stdout_text()));
        }
        if before != after {
            self.failures.push(format!("{label}: the roster directory changed (something was written)"));
        }
    }

    fn finish(self) {
        assert!(self.failures.is_empty(), "{} failures:\n{}", self.failures.len(), self.failures.join("\n"));
    }
}

#[test]
fn help_and_version_exit_0_on_stdout() {
    let sandbox = Sandbox::new();
    for tool in REGISTRY_TOOLS {
        for flag in ["-h", "--help", "-V", "--version"] {
            let outcome = run_with_deadline(sandbox.command(tool).arg(flag), tests::COMMAND_DEADLINE);
            outcome.expect_code(0);
            assert!(!outcome.stdout.is_empty(), "{tool} {flag} printed nothing on stdout\n{outcome}");
        }
    }
    assert!(!sandbox.root().exists(), "help or version created the roster directory");
}

#[test]
fn usage_errors_exit_2() {
    let (sandbox, _owner) = populated_sandbox();
    let mut cases = BadInputCases::new(&sandbox);
    for tool in REGISTRY_TOOLS {
        cases.check(tool, &["--no-such-flag"], &[], "--no-such-flag");
        cases.check(tool, &["--format", "yaml"], &[], "yaml");
        cases.check(tool, &["--format="], &[], "--format");
    }
    cases.check("roster-list", &["stray-argument"], &[], "stray-argument");
    cases.finish();
}

#[test]
fn invalid_pid_flag_exits_2_and_writes_nothing() {
    let (sandbox, _owner) = populated_sandbox();
    let mut cases = BadInputCases::new(&sandbox);
    let at_max = pid_max().to_string();
    let above_max = (pid_max() + 1).to_string();
    for value in [
        "0",
        "-1",
        "12abc",
        " 12",
        "12 ",
        "1e3",
        "+12",
        "012",
        "0x10",
        "",
        &at_max,
        &above_max,
        "99999999999",
    ] {
        let flag = format!("--pid={value}");
        cases.check("roster-register", &[&flag], &[], "--pid");
    }
    cases.finish();
}

#[test]
fn invalid_roster_session_pid_exits_2_and_never_falls_through() {
    // A set but invalid variable must be an error, never skipped in favour
    // of the next source (docs/contract.md §4.1): the message names the variable.
    let (sandbox, _owner) = populated_sandbox();
    let mut cases = BadInputCases::new(&sandbox);
    let at_max = pid_max().to_string();
    let above_max = (pid_max() + 1).to_string();
    for value in ["0", "-1", "12abc", " 12", "12 ", "1e3", "+12", "012", &at_max, &above_max, "99999999999"] {
        cases.check("roster-register", &[], &[("ROSTER_SESSION_PID", value)], "ROSTER_SESSION_PID");
    }
    cases.finish();
}

#[test]
fn invalid_agent_names_exit_2() {
    let (sandbox, owner) = populated_sandbox();
    let pid = owner.pid().to_string();
    let mut cases = BadInputCases::new(&sandbox);
    let too_long = "x".repeat(65);
    for value in
        [" wren", "wren ", "a\nb", "tab\there", "\u{1b}[31m", "bell\u{7}", "del\u{7f}", "c1\u{9b}", &too_long]
    {
        let flag = format!("--agent={value}");
        cases.check("roster-register", &["--pid", &pid, &flag], &[], "agent");
        cases.check("roster-register", &["--pid", &pid], &[("ROSTER_AGENT", value)], "agent");
    }
    cases.finish();
}

#[test]
fn invalid_session_ids_exit_2() {
    let (sandbox, owner) = populated_sandbox();
    let pid = owner.pid().to_string();
    let mut cases = BadInputCases::new(&sandbox);
    let too_long = "x".repeat(129);
    for value in ["", "a/b", "/", "tab\there", "new\nline", "ünïcödé", "del\u{7f}", "\u{1b}[2J", &too_long]
    {
        let flag = format!("--session-id={value}");
        cases.check("roster-register", &["--pid", &pid, &flag], &[], "session id");
        if !value.is_empty() {
            cases.check("roster-register", &["--pid", &pid], &[("ROSTER_SESSION_ID", value)], "session id");
        }
    }
    cases.finish();
}

#[test]
fn valid_edge_values_are_accepted() {
    // The other side of the boundaries above, so the refusals cannot pass
    // by refusing everything.
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    let longest_agent = "x".repeat(64);
    let longest_id = "y".repeat(128);
    let row = sandbox.register(owner.pid(), &["--agent", &longest_agent, "--session-id", &longest_id]);
    assert_eq!(row["agent"], longest_agent.as_str());
    assert_eq!(row["session_id"], longest_id.as_str());
    let row = sandbox.register(owner.pid(), &["--agent", "ünïcödé agent", "--session-id", "a b~c"]);
    assert_eq!(row["agent"], "ünïcödé agent");
    let row = sandbox.register(owner.pid(), &["--agent", ""]);
    assert!(row["agent"].is_null(), "--agent \"\" means anonymous: {row}");
}

#[test]
fn invalid_cwd_exits_2() {
    let (sandbox, owner) = populated_sandbox();
    let pid = owner.pid().to_string();
    let missing = sandbox.base().join("no-such-directory");
    let mut cases = BadInputCases::new(&sandbox);
    cases.check(
        "roster-register",
        &["--pid", &pid, "--cwd", missing.to_str().unwrap()],
        &[],
        "no-such-directory",
    );
    cases.finish();
}

#[test]
fn invalid_older_than_exits_2_and_removes_nothing() {
    let sandbox = Sandbox::new();
    let doomed = Owner::spawn();
    sandbox.register(doomed.pid(), &[]);
    let dead = doomed.kill();
    let mut cases = BadInputCases::new(&sandbox);
    for value in ["", "7", "7y", "-1d", "1.5h", "07d", "d", " 7d", "7d ", "7 d", "99999999999999999999d"] {
        let flag = format!("--older-than={value}");
        cases.check("roster-prune", &[&flag], &[], "--older-than");
    }
    cases.finish();
    assert!(sandbox.record_path(dead).exists(), "a refused prune removed the dead record");
}

#[test]
fn relative_or_empty_roster_dir_exits_2() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    let pid = owner.pid().to_string();
    let mut failures = Vec::new();
    for tool in REGISTRY_TOOLS {
        let args: &[&str] = if tool == "roster-register" { &["--pid", &pid] } else { &[] };
        for (how, value) in [("env", "relative/roster"), ("env", "./roster"), ("flag", "")] {
            let mut command = sandbox.command(tool);
            match how {
                "env" => command.env("ROSTER_DIR", value),
                _ => command.arg(format!("--dir={value}")),
            };
            let outcome = run_with_deadline(command.args(args), tests::COMMAND_DEADLINE);
            let label = format!("{tool} with {how} {value:?}");
            if outcome.status.code() != Some(2) {
                failures.push(format!("{label}: expected exit 2\n{outcome}"));
                continue;
            }
            failures.extend(outcome.error_line_problems(tool).into_iter().map(|p| format!("{label}: {p}")));
            let names = if how == "env" { "ROSTER_DIR" } else { "--dir" };
            if !outcome.stderr.contains(names) {
                failures.push(format!("{label}: stderr does not name {names}: {:?}", outcome.stderr));
            }
        }
    }
    // The commands ran in the home directory: nothing may appear there.
    let created = tests::names_in(sandbox.home());
    assert!(created.is_empty(), "a relative ROSTER_DIR created {created:?} in the working directory");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn owner_not_running_exits_3_and_writes_nothing() {
    let (sandbox, _owner) = populated_sandbox();
    let dead = dead_pid();
    let before = snapshot(sandbox.root());
    let by_flag = sandbox.run("roster-register", &["--pid", &dead.to_string()]);
    let by_env = sandbox.run_with_env("roster-register", &[], &[("ROSTER_SESSION_PID", &dead.to_string())]);
    for outcome in [&by_flag, &by_env] {
        outcome.expect_code(3).expect_error_line("roster-register");
        assert!(
            outcome.stderr.contains(&dead.to_string()),
            "the message does not name pid {dead}\n{outcome}"
        );
    }
    assert_eq!(before, snapshot(sandbox.root()), "a refused register changed the roster directory");
    assert!(!sandbox.record_path(dead).exists(), "a record was born dead");
}

/// Regression: the message printed the OS error twice ("create …: Not a
/// directory (os error 20): Not a directory (os error 20)").
#[test]
fn unwritable_location_exits_1() {
    // The roster directory cannot be created (a path component is a file):
    // an I/O failure, not bad input and not a rule.
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    let file = sandbox.base().join("a-file");
    std::fs::write(&file, b"").unwrap();
    let dir = file.join("roster");
    let mut command = sandbox.command("roster-register");
    command.arg("--dir").arg(&dir).args(["--pid", &owner.pid().to_string()]);
    let outcome = run_with_deadline(&mut command, tests::COMMAND_DEADLINE);
    outcome.expect_code(1).expect_error_line("roster-register");
    assert!(outcome.stderr.contains(file.to_str().unwrap()), "the message does not name the path\n{outcome}");
}

#[test]
fn no_owner_anywhere_exits_2_naming_the_ways() {
    // In a fresh pid namespace the command is pid 1: no flag, no variable,
    // no harness ancestor — nothing names the owner (docs/contract.md §4.1 step 5).
    let unshare = tests::require_tool("unshare");
    let sandbox = Sandbox::new();
    let mut command = std::process::Command::new(unshare);
    command.args(["--pid", "--fork", "--mount-proc"]).arg(tests::binary("roster-register"));
    command.arg("--dir").arg(sandbox.root());
    command.env_clear().env("HOME", sandbox.home()).current_dir(sandbox.home());
    if let Some(path) = std::env::var_os("PATH") {
        command.env("PATH", path);
    }
    let outcome = run_with_deadline(&mut command, tests::COMMAND_DEADLINE);
    assert!(
        !outcome.stderr.starts_with("unshare:"),
        "cannot create a pid namespace here (needs root or user namespaces): {}",
        outcome.stderr
    );
    outcome.expect_code(2).expect_error_line("roster-register");
    for way in ["--pid", "ROSTER_SESSION_PID"] {
        assert!(outcome.stderr.contains(way), "the message does not name {way}\n{outcome}");
    }
    assert!(!sandbox.record_path(1).exists());
}

/// One way of making the roster directory untrusted (docs/contract.md §2).
struct Untrusted {
    what: &'static str,
    /// The path the message must name.
    shown: PathBuf,
    /// A word of the "what is wrong" part.
    problem_word: &'static str,
    /// A word of the fix, when the fix is a command.
    fix_word: Option<&'static str>,
}

fn check_untrusted(sandbox: &Sandbox, case: &Untrusted, owner: &Owner, failures: &mut Vec<String>) {
    let before = snapshot(&sandbox.base());
    for tool in REGISTRY_TOOLS {
        let pid = owner.pid().to_string();
        let args: &[&str] = if tool == "roster-register" { &["--pid", &pid] } else { &[] };
        let outcome = sandbox.run(tool, args);
        let label = format!("{} / {tool}", case.what);
        if outcome.status.code() != Some(3) {
            failures.push(format!("{label}: expected exit 3\n{outcome}"));
            continue;
        }
        failures.extend(outcome.error_line_problems(tool).into_iter().map(|p| format!("{label}: {p}")));
        let shown = case.shown.to_str().unwrap();
        if !outcome.stderr.contains(shown) {
            failures.push(format!("{label}: message does not name {shown}: {:?}", outcome.stderr));
        }
        if !outcome.stderr.contains(case.problem_word) {
            failures
                .push(format!("{label}: message does not say {:?}: {:?}", case.problem_word, outcome.stderr));
        }
        if let Some(fix) = case.fix_word
            && !outcome.stderr.contains(fix)
        {
            failures.push(format!("{label}: message does not give the fix {fix:?}: {:?}", outcome.stderr));
        }
    }
    if before != snapshot(&sandbox.base()) {
        failures.push(format!("{}: a refused command changed something", case.what));
    }
}

#[test]
fn untrusted_directory_exits_3_for_every_binary() {
    let owner = Owner::spawn();
    let mut failures = Vec::new();

    // The roster directory is a symlink to a good directory.
    let sandbox = Sandbox::new();
    let real = sandbox.base().join("real-roster");
    std::fs::create_dir(&real).unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o700)).unwrap();
    std::os::unix::fs::symlink(&real, sandbox.root()).unwrap();
    let case = Untrusted {
        what: "symlinked",
        shown: sandbox.root().to_owned(),
        problem_word: "symlink",
        fix_word: None,
    };
    check_untrusted(&sandbox, &case, &owner, &mut failures);

    // Owned by someone else.
    let sandbox = Sandbox::new();
    sandbox.register(owner.pid(), &[]);
    std::fs::remove_file(sandbox.record_path(owner.pid())).unwrap();
    std::os::unix::fs::chown(sandbox.root(), Some(65534), None)
        .expect("chown to uid 65534 (this test needs root)");
    let case = Untrusted {
        what: "foreign-owned",
        shown: sandbox.root().to_owned(),
        problem_word: "65534",
        fix_word: None,
    };
    check_untrusted(&sandbox, &case, &owner, &mut failures);

    // Group- or other-writable, at the top or in a subdirectory.
    for (what, mode, sub) in [
        ("group-writable", 0o720, None),
        ("other-writable", 0o702, None),
        ("group-writable sticky", 0o1770, None),
        ("group-writable sessions/", 0o770, Some("sessions")),
        ("other-writable consent/", 0o703, Some("consent")),
    ] {
        let sandbox = Sandbox::new();
        sandbox.register(owner.pid(), &[]);
        std::fs::remove_file(sandbox.record_path(owner.pid())).unwrap();
        let target = match sub {
            Some(sub) => sandbox.root().join(sub),
            None => sandbox.root().to_owned(),
        };
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(mode)).unwrap();
        let case =
            Untrusted { what, shown: target.clone(), problem_word: "writable", fix_word: Some("chmod") };
        check_untrusted(&sandbox, &case, &owner, &mut failures);
        let after = std::fs::metadata(&target).unwrap().mode() & 0o7777;
        if after != mode {
            failures.push(format!(
                "{what}: the mode changed from {mode:o} to {after:o}; a refusal must not fix it silently"
            ));
        }
    }

    // The roster directory is a regular file, and sessions/ is a symlink.
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.root(), b"").unwrap();
    let case = Untrusted {
        what: "a regular file",
        shown: sandbox.root().to_owned(),
        problem_word: "directory",
        fix_word: None,
    };
    check_untrusted(&sandbox, &case, &owner, &mut failures);

    let sandbox = Sandbox::new();
    sandbox.register(owner.pid(), &[]);
    let elsewhere = sandbox.base().join("elsewhere");
    std::fs::rename(sandbox.sessions(), &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, sandbox.sessions()).unwrap();
    let case = Untrusted {
        what: "symlinked sessions/",
        shown: sandbox.sessions(),
        problem_word: "symlink",
        fix_word: None,
    };
    check_untrusted(&sandbox, &case, &owner, &mut failures);

    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn group_and_other_read_bits_are_tightened_silently() {
    let owner = Owner::spawn();
    let mut failures = Vec::new();
    for tool in REGISTRY_TOOLS {
        for (mode, sub) in
            [(0o755, None), (0o750, None), (0o705, None), (0o711, None), (0o755, Some("sessions"))]
        {
            let sandbox = Sandbox::new();
            sandbox.register(owner.pid(), &[]);
            let target = match sub {
                Some(sub) => sandbox.root().join(sub),
                None => sandbox.root().to_owned(),
            };
            std::fs::set_permissions(&target, std::fs::Permissions::from_mode(mode)).unwrap();
            let pid = owner.pid().to_string();
            let args: &[&str] =
                if tool == "roster-register" { &["--pid", &pid, "--quiet"] } else { &["--quiet"] };
            let outcome: Outcome = sandbox.run(tool, args);
            let label = format!("{tool} on {} mode {mode:o}", target.display());
            if outcome.status.code() != Some(0) {
                failures.push(format!("{label}: expected exit 0\n{outcome}"));
            }
            if !outcome.stderr.is_empty() {
                failures.push(format!("{label}: not silent: {:?}", outcome.stderr));
            }
            let after = std::fs::metadata(&target).unwrap().mode() & 0o7777;
            if after != 0o700 {
                failures.push(format!("{label}: mode is {after:o} afterwards, not 700"));
            }
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

/// `roster-list | head -0` and the like: a reader that went away is not a
/// failure of the tool (docs/contract.md §6 "broken pipe exits 0"), and says nothing.
/// Regression: `roster-register --json` into a closed pipe exited 1 with
/// "Broken pipe (os error 32)" (the JSON writer's error hid the EPIPE).
#[test]
fn broken_pipe_exits_0_quietly() {
    let sandbox = Sandbox::new();
    let owner = Owner::spawn();
    sandbox.register(owner.pid(), &["--agent", "wren"]);
    let pid = owner.pid().to_string();
    let mut failures = Vec::new();
    for (tool, args) in [
        ("roster-list", vec![]),
        ("roster-list", vec!["--json"]),
        ("roster-register", vec!["--pid", pid.as_str()]),
        ("roster-register", vec!["--pid", pid.as_str(), "--json"]),
        ("roster-prune", vec!["--json"]),
    ] {
        // The read end is closed before the command starts, so its first
        // write fails with EPIPE whatever the timing.
        let (read_end, write_end) = nix::unistd::pipe().expect("pipe");
        drop(read_end);
        let mut command = sandbox.command_in_root(tool, &args);
        command.stdin(std::process::Stdio::null()).stdout(write_end).stderr(std::process::Stdio::piped());
        let mut child = command.spawn().expect("spawn");
        let status =
            tests::wait_with_deadline(&mut child, tests::COMMAND_DEADLINE).expect("hung on a broken pipe");
        let mut stderr = String::new();
        std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
        if status.code() != Some(0) || !stderr.is_empty() {
            failures.push(format!("{tool} {args:?} into a closed pipe: {status:?}, stderr {stderr:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
