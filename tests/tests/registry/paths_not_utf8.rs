//! Paths are kept exactly (docs/contract.md §3, §6.1): roster records directories and
//! socket paths as JSON text, so a path that is not valid UTF-8 is refused, never
//! written lossily with U+FFFD in place of its bytes.
//!
//! Regression: roster-register recorded `to_string_lossy()` of a session directory named
//! with the byte 0xff, so the record named `<dir>/\u{fffd}` instead, and a sibling
//! directory literally called `\u{fffd}` holding `.roster.toml` with
//! `[consent] auto_arm = true` decided the consent of the session that registered in
//! the 0xff directory.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use tests::hooks::{MACHINE_DEADLINE, StdinFeed, run_to_completion};
use tests::{COMMAND_DEADLINE, Finished, Owner, Sandbox, binary, clean_environment, run_with_deadline};

/// The directories of one test: `<base>/\xff` (not UTF-8), its lossy twin
/// `<base>/\u{fffd}` that opts in to auto-arm, `<base>/link` leading to the first,
/// and `<base>/plain`, an ordinary project.
struct Directories {
    not_utf8: PathBuf,
    link: PathBuf,
    plain: PathBuf,
}

impl Directories {
    fn new(sandbox: &Sandbox) -> Directories {
        let base = sandbox.base();
        let not_utf8 = base.join(OsStr::from_bytes(b"\xff"));
        let lossy_twin = base.join("\u{fffd}");
        let link = base.join("link");
        let plain = base.join("plain");
        for dir in [&not_utf8, &lossy_twin, &plain] {
            std::fs::create_dir(dir).unwrap();
        }
        std::os::unix::fs::symlink(&not_utf8, &link).unwrap();
        tests::write_file_0600(&lossy_twin.join(".roster.toml"), b"[consent]\nauto_arm = true\n");
        Directories { not_utf8, link, plain }
    }

    /// `<base>/\xff` as the messages show it.
    fn shown(&self) -> String {
        format!("{}/\\xff", self.not_utf8.parent().unwrap().display())
    }
}

/// The one line `roster-register` refuses a session directory with.
fn register_refusal(directories: &Directories) -> String {
    format!(
        "roster-register: the session directory {} is not valid UTF-8: roster records directories as \
         text; register from (or pass --cwd) a directory whose path is UTF-8\n",
        directories.shown()
    )
}

/// Fails when any of `texts` holds U+FFFD: a path shown or recorded lossily.
fn assert_no_replacement_character(texts: &[&[u8]], what: &str) {
    for text in texts {
        let text = String::from_utf8_lossy(text);
        assert!(!text.contains('\u{fffd}'), "{what}: U+FFFD in {text:?}");
    }
}

/// Nothing of the session was written: no record, no consent marker.
fn assert_nothing_written(sandbox: &Sandbox, owner: u32, what: &str) {
    assert!(!sandbox.record_path(owner).exists(), "{what}: a record was written");
    assert!(sandbox.visible_session_entries().is_empty(), "{what}: {:?}", sandbox.visible_session_entries());
    assert!(!sandbox.marker_path(owner).exists(), "{what}: a consent marker was written");
    assert!(
        tests::names_in(&sandbox.consent()).is_empty(),
        "{what}: {:?}",
        tests::names_in(&sandbox.consent())
    );
}

/// `tool --dir <root> args…`, run in `directory`.
fn run_in(sandbox: &Sandbox, directory: &Path, tool: &str, args: &[&str]) -> tests::Outcome {
    let mut command = sandbox.command_in_root(tool, args);
    command.current_dir(directory);
    run_with_deadline(&mut command, COMMAND_DEADLINE)
}

/// `roster-register --hook claude-code` run in `directory` with `payload`.
fn hook_register(sandbox: &Sandbox, directory: &Path, owner: u32, payload: &str) -> Finished {
    let mut command = sandbox.command_in_root(
        "roster-register",
        &["--hook", "claude-code", "--pid", &owner.to_string(), "--agent", "wren"],
    );
    command.current_dir(directory);
    let finished =
        run_to_completion(command, StdinFeed::Bytes(payload.as_bytes().to_vec()), MACHINE_DEADLINE);
    assert_eq!(finished.code(), Some(0), "hook mode always exits 0: {}", finished.stderr_text());
    assert!(finished.stdout.is_empty(), "hook mode wrote to stdout: {}", finished.stdout_text());
    finished
}

fn hook_error_lines(sandbox: &Sandbox) -> Vec<String> {
    std::fs::read_to_string(sandbox.root().join("hook-errors.log"))
        .map(|text| text.lines().map(str::to_owned).collect())
        .unwrap_or_default()
}

#[test]
fn register_refuses_a_directory_that_is_not_utf8_wherever_it_comes_from() {
    let sandbox = Sandbox::new();
    let directories = Directories::new(&sandbox);
    let owner = Owner::spawn();
    let pid = owner.pid().to_string();
    assert!(directories.not_utf8.to_str().is_none(), "the test directory must not be UTF-8");

    let mut runs = Vec::new();
    for json in [false, true] {
        let format = if json { "json" } else { "text" };
        let mut by_flag = sandbox.command_in_root("roster-register", &["--pid", &pid, "--format", format]);
        by_flag.arg("--cwd").arg(&directories.not_utf8).current_dir(&directories.plain);
        runs.push((format!("--cwd <\\xff> ({format})"), run_with_deadline(&mut by_flag, COMMAND_DEADLINE)));
        let through_link = ["--pid", &pid, "--format", format, "--cwd", directories.link.to_str().unwrap()];
        runs.push((
            format!("--cwd <link to \\xff> ({format})"),
            run_in(&sandbox, &directories.plain, "roster-register", &through_link),
        ));
        runs.push((
            format!("the current directory ({format})"),
            run_in(&sandbox, &directories.not_utf8, "roster-register", &["--pid", &pid, "--format", format]),
        ));
    }
    for (what, outcome) in &runs {
        outcome.expect_code(2);
        assert_eq!(outcome.stderr, register_refusal(&directories), "{what}");
        assert!(outcome.stdout.is_empty(), "{what}: {}", outcome.stdout_text());
        assert_nothing_written(&sandbox, owner.pid(), what);
    }
}

#[test]
fn a_socket_path_that_is_not_utf8_is_refused_or_dropped_in_hook_mode() {
    let sandbox = Sandbox::new();
    let directories = Directories::new(&sandbox);
    let owner = Owner::spawn();
    let pid = owner.pid().to_string();
    let socket = directories.not_utf8.join("socket");
    let shown = format!("{}/socket", directories.shown());

    let mut by_flag = sandbox.command_in_root("roster-register", &["--pid", &pid]);
    by_flag.arg("--socket").arg(&socket).current_dir(&directories.plain);
    let refused = run_with_deadline(&mut by_flag, COMMAND_DEADLINE);
    refused.expect_code(2).expect_error_line("roster-register");
    assert!(refused.stderr.contains(&format!("--socket {shown} is not valid UTF-8")), "{refused}");
    let mut by_variable = sandbox.command_in_root("roster-register", &["--pid", &pid]);
    by_variable.env("CLAUDE_CODE_MESSAGING_SOCKET", &socket).current_dir(&directories.plain);
    let refused_variable = run_with_deadline(&mut by_variable, COMMAND_DEADLINE);
    refused_variable.expect_code(2).expect_error_line("roster-register");
    assert!(
        refused_variable.stderr.contains(&format!("CLAUDE_CODE_MESSAGING_SOCKET {shown} is not valid UTF-8")),
        "{refused_variable}"
    );
    assert_nothing_written(&sandbox, owner.pid(), "a socket that is not UTF-8");

    // In hook mode the value is dropped, as an over-long one is, and the session registers.
    let mut hook = sandbox.command_in_root("roster-register", &["--hook", "claude-code", "--pid", &pid]);
    hook.env("CLAUDE_CODE_MESSAGING_SOCKET", &socket).current_dir(&directories.plain);
    let finished = run_to_completion(hook, StdinFeed::Bytes(b"{}".to_vec()), MACHINE_DEADLINE);
    assert_eq!(finished.code(), Some(0), "{}", finished.stderr_text());
    assert!(finished.stdout.is_empty());
    let record = sandbox.record(owner.pid());
    assert!(record.get("socket").is_none(), "{record}");
    assert_eq!(record["cwd"], directories.plain.to_str().unwrap());
    let log = hook_error_lines(&sandbox);
    assert!(
        log.iter().any(|line| line.contains(&format!("{shown} is not valid UTF-8"))
            && line.ends_with("registered without it")),
        "{log:?}"
    );
    assert_no_replacement_character(
        &[&refused.stdout, refused.stderr.as_bytes(), &finished.stderr, log.join("\n").as_bytes()],
        "socket",
    );
}

#[test]
fn hook_mode_logs_a_directory_that_is_not_utf8_and_registers_only_from_a_utf8_one() {
    let sandbox = Sandbox::new();
    let directories = Directories::new(&sandbox);
    let owner = Owner::spawn();
    let message = register_refusal(&directories);
    let message = message.trim_end().strip_prefix("roster-register: ").unwrap();

    // The hook runs in the 0xff directory, and the payload names none.
    let in_not_utf8 = hook_register(&sandbox, &directories.not_utf8, owner.pid(), "{}");
    assert_nothing_written(&sandbox, owner.pid(), "a hook run in the 0xff directory");
    let log = hook_error_lines(&sandbox);
    assert_eq!(log.len(), 1, "{log:?}");
    assert!(log[0].ends_with(&format!("roster-register: {message}")), "{log:?}");
    assert_eq!(in_not_utf8.stderr_text(), format!("roster-register: hook: {message}\n"));

    // The payload's cwd leads to the 0xff directory, and the hook runs there too.
    let payload = serde_json::json!({"cwd": directories.link, "hook_event_name": "SessionStart"}).to_string();
    let both = hook_register(&sandbox, &directories.not_utf8, owner.pid(), &payload);
    assert_nothing_written(&sandbox, owner.pid(), "a payload cwd and a hook directory both 0xff");
    assert_eq!(hook_error_lines(&sandbox).len(), 3, "{:?}", hook_error_lines(&sandbox));

    // The payload's cwd leads to the 0xff directory; the hook's own directory stands in.
    let falls_back = hook_register(&sandbox, &directories.plain, owner.pid(), &payload);
    let record = sandbox.record(owner.pid());
    assert_eq!(record["cwd"], directories.plain.to_str().unwrap(), "{record}");
    let log = hook_error_lines(&sandbox);
    assert_eq!(log.len(), 4, "{log:?}");
    assert!(log[3].ends_with(&format!("roster-register: {message}; registered without it")), "{log:?}");

    let listed = sandbox.run("roster-list", &["--json", "--all"]);
    listed.expect_code(0);
    let all_text = sandbox.run("roster-list", &["--all"]);
    assert_no_replacement_character(
        &[
            &in_not_utf8.stderr,
            &both.stderr,
            &falls_back.stderr,
            log.join("\n").as_bytes(),
            &listed.stdout,
            &all_text.stdout,
        ],
        "hook mode",
    );
}

/// A shell in `directory` as the session's owner, verified as a session's own
/// shell is (consent counts only a verified owner): it runs `script` with
/// REGISTER, CONSENT and DIR set and prints what it echoes.
fn session_shell(sandbox: &Sandbox, directory: &Path, script: &str) -> tests::Outcome {
    let mut shell = Command::new("sh");
    clean_environment(&mut shell, sandbox.home())
        .args(["-c", script])
        .env("REGISTER", binary("roster-register"))
        .env("CONSENT", binary("roster-consent"))
        .env("DIR", sandbox.root())
        .current_dir(directory);
    run_with_deadline(&mut shell, COMMAND_DEADLINE)
}

/// The regression itself: a session registering in the 0xff directory, by hand or by
/// hook, is never armed by the `.roster.toml` of its lossy twin, and consent refuses
/// the directory as register does.
#[test]
fn the_lossy_twin_never_decides_consent() {
    let sandbox = Sandbox::new();
    let directories = Directories::new(&sandbox);
    let script = r#"
        "$REGISTER" --dir "$DIR" --pid parent --quiet 2>/dev/null; echo "register=$?"
        echo '{}' | "$REGISTER" --dir "$DIR" --hook claude-code --pid parent; echo "hook=$?"
        "$CONSENT" --dir "$DIR" should-arm --pid parent; echo "should-arm=$?"
        "$CONSENT" --dir "$DIR" should-arm --pid parent --cwd .; echo "should-arm-here=$?"
        "$CONSENT" --dir "$DIR" arm --pid parent --quiet 2>/dev/null; echo "arm=$?"
        "$CONSENT" --dir "$DIR" status --pid parent --cwd . 2>&1; echo "status=$?"
        echo "pid=$$"
    "#;
    let outcome = session_shell(&sandbox, &directories.not_utf8, script);
    outcome.expect_code(0);
    let text = outcome.stdout_text();
    for expected in ["register=2", "hook=0", "should-arm=1", "should-arm-here=1", "arm=2", "status=2"] {
        assert!(text.lines().any(|line| line == expected), "{expected} missing:\n{text}");
    }
    let status_refusal = format!(
        "roster-consent: the session directory {} is not valid UTF-8: roster records directories as text; \
         pass --cwd a directory whose path is UTF-8",
        directories.shown()
    );
    assert!(text.lines().any(|line| line == status_refusal), "{text}");
    let shell_pid: u32 = text
        .lines()
        .find_map(|line| line.strip_prefix("pid="))
        .and_then(|pid| pid.parse().ok())
        .unwrap_or_else(|| panic!("no pid:\n{text}"));
    assert_nothing_written(&sandbox, shell_pid, "a session in the 0xff directory");
    assert_no_replacement_character(&[&outcome.stdout, outcome.stderr.as_bytes()], "consent");

    // By hand too: --cwd naming the 0xff directory, or a link to it.
    let owner = Owner::spawn();
    let pid = owner.pid().to_string();
    for cwd in [directories.not_utf8.as_os_str(), directories.link.as_os_str()] {
        let mut status = sandbox.command_in_root("roster-consent", &["status", "--pid", &pid, "--cwd"]);
        status.arg(cwd);
        let refused = run_with_deadline(&mut status, COMMAND_DEADLINE);
        refused.expect_code(2).expect_error_line("roster-consent");
        assert_eq!(refused.stderr, format!("{status_refusal}\n"));
        let mut should_arm =
            sandbox.command_in_root("roster-consent", &["should-arm", "--pid", &pid, "--cwd"]);
        should_arm.arg(cwd);
        let silent = run_with_deadline(&mut should_arm, COMMAND_DEADLINE);
        silent.expect_code(1);
        assert!(silent.stdout.is_empty() && silent.stderr.is_empty(), "{silent}");
    }
}

#[test]
fn list_refuses_a_cwd_filter_that_is_not_utf8() {
    let sandbox = Sandbox::new();
    let directories = Directories::new(&sandbox);
    let owner = Owner::spawn();
    sandbox.register(owner.pid(), &["--cwd", directories.plain.to_str().unwrap()]);
    let expected = format!(
        "roster-list: --cwd {} is not valid UTF-8: roster records directories as text; give --cwd a \
         directory whose path is UTF-8\n",
        directories.shown()
    );
    for cwd in [directories.not_utf8.as_os_str(), directories.link.as_os_str()] {
        for format in ["text", "json"] {
            let mut list = sandbox.command_in_root("roster-list", &["--format", format, "--cwd"]);
            list.arg(cwd);
            let refused = run_with_deadline(&mut list, COMMAND_DEADLINE);
            refused.expect_code(2);
            assert_eq!(refused.stderr, expected, "{refused}");
            assert!(refused.stdout.is_empty(), "{refused}");
        }
    }
}

/// Regression: arm and disarm without --cwd, from a directory that is not
/// UTF-8, created the registry before they refused it.
#[test]
fn consent_from_a_directory_that_is_not_utf8_creates_nothing() {
    let sandbox = Sandbox::new();
    let directories = Directories::new(&sandbox);
    let owner = Owner::spawn();
    let script = r#"
        "$CONSENT" --dir "$DIR" arm --pid parent 2>/dev/null; echo "arm=$?"
    "#;
    let outcome = session_shell(&sandbox, &directories.not_utf8, script);
    assert!(outcome.stdout_text().lines().any(|line| line == "arm=2"), "{outcome}");
    let disarm = run_in(
        &sandbox,
        &directories.not_utf8,
        "roster-consent",
        &["disarm", "--pid", &owner.pid().to_string()],
    );
    disarm.expect_code(2).expect_error_line("roster-consent");
    assert!(!sandbox.root().exists(), "the registry was created by a refused consent command");
}
