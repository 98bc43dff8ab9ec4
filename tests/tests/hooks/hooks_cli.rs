//! Black-box tests of the `roster-hooks` binary: a temporary HOME, a
//! temporary project as the working directory, and the exit codes, output
//! and files only a real process shows.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use harness::hook_config::HookHarness;
use tests::{Finished, run_to_end};

use serde_json::Value;

const HARNESSES: [(&str, &str); 5] = [
    ("claude-code", "home/.claude/settings.json"),
    ("codex", "home/.codex/hooks.json"),
    ("gemini-cli", "home/.gemini/settings.json"),
    ("cursor-agent", "home/.cursor/hooks.json"),
    ("copilot", "project/.github/hooks/roster.json"),
];

struct Sandbox {
    root: tempfile::TempDir,
}

impl Sandbox {
    fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        for directory in ["home", "project", "bin"] {
            fs::create_dir(root.path().join(directory)).unwrap();
        }
        for name in ["roster-register", "roster-prune", "roster-state"] {
            write_executable(&root.path().join("bin").join(name));
        }
        Sandbox { root }
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.root.path().join(relative)
    }

    fn bin_dir(&self) -> String {
        self.path("bin").display().to_string()
    }

    fn run(&self, arguments: &[&str]) -> Finished {
        self.run_program(&tests::binary("roster-hooks"), arguments)
    }

    fn run_program(&self, program: &Path, arguments: &[&str]) -> Finished {
        self.run_with_path(program, arguments, &std::env::var("PATH").unwrap_or_default())
    }

    fn run_with_path(&self, program: &Path, arguments: &[&str], path: &str) -> Finished {
        let mut command = Command::new(program);
        tests::clean_environment(&mut command, &self.path("home"))
            .args(arguments)
            .env("PATH", path)
            .env("NO_COLOR", "1")
            .current_dir(self.path("project"));
        run_to_end(&mut command)
    }
}

/// A stand-in for a hook binary: a shell script, executable.
fn write_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    fs::write(path, "#!/bin/sh\n").unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

fn code(output: &Finished) -> i32 {
    output.status.code().expect("exited, not killed")
}

fn stdout(output: &Finished) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn stderr(output: &Finished) -> String {
    String::from_utf8(output.stderr.clone()).unwrap()
}

fn json_of(output: &Finished) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|error| panic!("{error}: {}", stdout(output)))
}

#[test]
fn install_status_uninstall_for_each_harness() {
    for (harness, relative) in HARNESSES {
        let sandbox = Sandbox::new();
        let file = sandbox.path(relative);
        let installed = sandbox.run(&["install", harness, "--bin-dir", &sandbox.bin_dir()]);
        assert_eq!(code(&installed), 0, "{harness}: {}", stderr(&installed));
        assert!(stdout(&installed).contains("installed roster hooks for"), "{}", stdout(&installed));
        assert_eq!(
            stderr(&installed),
            "",
            "{harness}: no warning when the binaries are where --bin-dir says"
        );
        let text = fs::read_to_string(&file).unwrap();
        assert!(text.contains(&format!("{}/roster-register --hook {harness}", sandbox.bin_dir())), "{text}");
        assert!(
            text.contains(&format!("{}/roster-prune --current --hook {harness}", sandbox.bin_dir())),
            "{text}"
        );

        let status = sandbox.run(&["status", harness, "--format", "json"]);
        assert_eq!(code(&status), 0);
        let rows = json_of(&status);
        let expected_state = if harness == "codex" { "untrusted" } else { "installed" };
        assert_eq!(rows[0]["state"], expected_state, "{harness}: {rows}");
        assert_eq!(rows[0]["path"], file.display().to_string());

        let removed = sandbox.run(&["uninstall", harness]);
        assert_eq!(code(&removed), 0, "{harness}: {}", stderr(&removed));
        assert!(!file.exists(), "{harness}: install created the file, uninstall removes it");
        assert!(!file.parent().unwrap().exists(), "{harness}: and the directory it created for it");
        assert!(sandbox.path("home").exists() && sandbox.path("project").exists(), "{harness}");
        let after = json_of(&sandbox.run(&["status", harness, "--json"]));
        assert_eq!(after[0]["state"], "not-installed", "{harness}");
    }
}

#[test]
fn install_json_reports_change_and_backup() {
    let sandbox = Sandbox::new();
    let settings = sandbox.path("home/.claude/settings.json");
    fs::create_dir_all(settings.parent().unwrap()).unwrap();
    fs::write(&settings, "{\"model\": \"opus\"}\n").unwrap();

    let first = sandbox.run(&["install", "claude-code", "--bin-dir", &sandbox.bin_dir(), "--format", "json"]);
    assert_eq!(code(&first), 0, "{}", stderr(&first));
    let report = json_of(&first);
    assert_eq!(report["harness"], "claude-code");
    assert_eq!(report["scope"], "user");
    assert_eq!(report["path"], settings.display().to_string());
    assert_eq!(report["changed"], true);
    assert_eq!(report["created"], false);
    let backup = report["backup"].as_str().unwrap();
    assert_eq!(fs::read_to_string(backup).unwrap(), "{\"model\": \"opus\"}\n");
    assert!(
        report["commands"]["session_start"].as_str().unwrap().ends_with("roster-register --hook claude-code")
    );
    assert!(report["notes"].is_array());

    let second = sandbox.run(&["install", "claude-code", "--bin-dir", &sandbox.bin_dir(), "--json"]);
    let report = json_of(&second);
    assert_eq!(report["changed"], false);
    assert_eq!(report["backup"], Value::Null);

    let removed = json_of(&sandbox.run(&["uninstall", "claude-code", "--json"]));
    assert_eq!(removed["changed"], true);
    assert_eq!(removed["restored_backup"], true);
    assert_eq!(removed["removed_backup"], backup, "uninstall removes install's backup");
    assert!(!Path::new(backup).exists());
    assert_eq!(removed["removed_file"], false);
    assert_eq!(fs::read_to_string(&settings).unwrap(), "{\"model\": \"opus\"}\n");
}

#[test]
fn status_lists_every_harness_and_scope() {
    let sandbox = Sandbox::new();
    let output = sandbox.run(&["status", "--json"]);
    assert_eq!(code(&output), 0);
    let rows = json_of(&output);
    let pairs: Vec<(String, String)> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            for key in ["harness", "scope", "path", "state", "detail"] {
                assert!(row[key].is_string(), "{key} in {row}");
            }
            (row["harness"].as_str().unwrap().to_owned(), row["scope"].as_str().unwrap().to_owned())
        })
        .collect();
    let expect = [
        ("claude-code", "user"),
        ("claude-code", "project"),
        ("codex", "user"),
        ("gemini-cli", "user"),
        ("cursor-agent", "user"),
        ("copilot", "project"),
        ("opencode", "user"),
        ("opencode", "project"),
        ("amp", "user"),
        ("amp", "project"),
    ];
    assert_eq!(pairs, expect.map(|(harness, scope)| (harness.to_owned(), scope.to_owned())));

    let project_only = json_of(&sandbox.run(&["status", "--scope", "project", "--json"]));
    assert_eq!(project_only.as_array().unwrap().len(), 4);

    let text = sandbox.run(&["status"]);
    let first_line = stdout(&text).lines().next().unwrap().to_owned();
    assert_eq!(
        first_line.split_whitespace().collect::<Vec<_>>(),
        ["HARNESS", "SCOPE", "STATE", "PATH", "DETAIL"]
    );
    assert!(stdout(&text).contains("~/.claude/settings.json"), "{}", stdout(&text));
}

#[test]
fn unparseable_file_is_refused_with_exit_3_and_left_alone() {
    let sandbox = Sandbox::new();
    let settings = sandbox.path("home/.gemini/settings.json");
    fs::create_dir_all(settings.parent().unwrap()).unwrap();
    for bytes in ["{\"hooks\": {", "{\"hooks\": \"none\"}"] {
        fs::write(&settings, bytes).unwrap();
        for action in ["install", "uninstall"] {
            let output = sandbox.run(&[action, "gemini-cli"]);
            assert_eq!(code(&output), 3, "{action} {bytes}: {}", stderr(&output));
            assert_eq!(stdout(&output), "");
            let message = stderr(&output);
            assert_eq!(message.lines().count(), 1, "{message}");
            assert!(
                message.starts_with(&format!("roster-hooks: {action} gemini-cli: refusing to edit ")),
                "{message}"
            );
            assert!(!message.trim_end().ends_with('.'), "{message}");
            assert_eq!(fs::read_to_string(&settings).unwrap(), bytes);
        }
        let rows = json_of(&sandbox.run(&["status", "gemini-cli", "--json"]));
        assert_eq!(rows[0]["state"], "unparseable");
    }
    assert!(!sandbox.path("home/.gemini/settings.json.roster-backup").exists());
}

#[test]
fn bad_input_exits_2() {
    let sandbox = Sandbox::new();
    let cases: [(&[&str], &str); 8] = [
        (&["install", "vim"], "is not one roster-hooks can wire; use one of claude-code,"),
        (&["install", "goose"], "roster-register --pid"),
        (&["install", "aider"], "wrapper script"),
        (&["install", "claud-code"], "did you mean claude-code?"),
        (&["install", "copilot", "--scope", "user"], "--scope project"),
        (&["install", "codex", "--scope", "project"], "--scope user"),
        (&["install"], "required"),
        (&["status", "--format", "yaml"], "yaml"),
    ];
    for (arguments, expect) in cases {
        let output = sandbox.run(arguments);
        assert_eq!(code(&output), 2, "{arguments:?}: {}", stderr(&output));
        assert!(stderr(&output).contains(expect), "{arguments:?}: {}", stderr(&output));
        assert_eq!(stdout(&output), "", "{arguments:?}");
    }
    let output = sandbox.run(&["install", "codex", "--bin-dir", "relative/bin"]);
    assert_eq!(code(&output), 0, "a relative --bin-dir is made absolute: {}", stderr(&output));

    let mut command = Command::new(tests::binary("roster-hooks"));
    tests::clean_environment(&mut command, &sandbox.path("home"))
        .args(["status"])
        .current_dir(sandbox.path("project"))
        .env_remove("HOME");
    let no_home = run_to_end(&mut command);
    assert_eq!(code(&no_home), 2, "{}", stderr(&no_home));
    assert!(stderr(&no_home).contains("HOME"));
    assert!(!sandbox.path("home/.copilot").exists() && !sandbox.path("project/.github").exists());
}

#[test]
fn print_shows_the_snippet_and_writes_nothing() {
    let sandbox = Sandbox::new();
    let output = sandbox.run(&["print", "copilot", "--bin-dir", &sandbox.bin_dir(), "--json"]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    let report = json_of(&output);
    assert_eq!(report["snippet"]["version"], 1);
    let bash = report["snippet"]["hooks"]["sessionStart"][0]["bash"].as_str().unwrap();
    assert_eq!(bash, format!("{}/roster-register --hook copilot", sandbox.bin_dir()));
    assert!(report["notes"][0].as_str().unwrap().contains("trust"), "{report}");
    let text = sandbox.run(&["print", "claude-code", "--bin-dir", &sandbox.bin_dir()]);
    assert!(stdout(&text).starts_with("Merge into ~/.claude/settings.json:\n{\n"), "{}", stdout(&text));
    assert!(!sandbox.path("project/.github").exists() && !sandbox.path("home/.claude").exists());
}

#[test]
fn dir_flag_is_carried_into_the_hooks_and_quiet_prints_nothing() {
    let sandbox = Sandbox::new();
    let roster_dir = sandbox.path("state dir");
    let output = sandbox.run(&[
        "install",
        "cursor-agent",
        "--bin-dir",
        &sandbox.bin_dir(),
        "--dir",
        &roster_dir.display().to_string(),
        "-q",
    ]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert_eq!(stdout(&output), "");
    let hooks: Value =
        serde_json::from_slice(&fs::read(sandbox.path("home/.cursor/hooks.json")).unwrap()).unwrap();
    let command = hooks["hooks"]["sessionEnd"][0]["command"].as_str().unwrap();
    assert_eq!(
        command,
        format!(
            "{}/roster-prune --current --hook cursor-agent --dir '{}'",
            sandbox.bin_dir(),
            roster_dir.display()
        )
    );
}

/// Puts a link to the real binary at `directory/roster-hooks`, so that it
/// runs from there (a hard link: `/proc/self/exe` names the path it was run
/// by, and no write handle can make the exec fail with ETXTBSY).
fn roster_hooks_in(directory: &Path) -> PathBuf {
    let program = directory.join("roster-hooks");
    if fs::hard_link(tests::binary("roster-hooks"), &program).is_err() {
        fs::copy(tests::binary("roster-hooks"), &program).unwrap();
    }
    program
}

#[test]
fn binaries_next_to_roster_hooks_are_called_by_absolute_path() {
    let sandbox = Sandbox::new();
    let program = roster_hooks_in(&sandbox.path("bin"));
    let output = sandbox.run_program(&program, &["install", "gemini-cli", "--json"]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert_eq!(stderr(&output), "");
    let report = json_of(&output);
    assert_eq!(
        report["commands"]["session_start"],
        format!("{}/roster-register --hook gemini-cli", sandbox.bin_dir())
    );
}

#[test]
fn without_neighbours_the_hooks_use_path_and_say_so() {
    let sandbox = Sandbox::new();
    let lonely = sandbox.path("lonely");
    fs::create_dir(&lonely).unwrap();
    let program = roster_hooks_in(&lonely);
    let output = sandbox.run_program(&program, &["install", "claude-code"]);
    assert_eq!(code(&output), 0, "{}", stderr(&output));
    assert!(stderr(&output).contains("must be on the PATH"), "{}", stderr(&output));
    let settings: Value =
        serde_json::from_slice(&fs::read(sandbox.path("home/.claude/settings.json")).unwrap()).unwrap();
    assert_eq!(
        settings["hooks"]["SessionStart"][0]["hooks"][0]["command"],
        "roster-register --hook claude-code"
    );
}

/// Regression: `roster-hooks install` run from cargo's build directory
/// wrote `…/target/debug/roster-register` into the harness's settings
/// without a word, and a `cargo clean` then broke every hook silently. It
/// now warns and says how to install properly; elsewhere it stays quiet.
#[test]
fn install_from_a_cargo_build_directory_warns_and_says_how_to_install() {
    let sandbox = Sandbox::new();
    for build in ["work/roster/target/debug", "work/roster/target/x86_64-unknown-linux-gnu/release"] {
        let directory = sandbox.path(build);
        fs::create_dir_all(&directory).unwrap();
        for name in ["roster-register", "roster-prune", "roster-state"] {
            write_executable(&directory.join(name));
        }
        let program = roster_hooks_in(&directory);
        let output = sandbox.run_program(&program, &["install", "claude-code"]);
        assert_eq!(code(&output), 0, "{}", stderr(&output));
        let warning = stderr(&output);
        assert!(warning.starts_with("roster-hooks: warning: "), "{build}: {warning}");
        for words in
            ["cargo's build directory", "cargo clean", "cargo xtask install", "Debian package", "--bin-dir"]
        {
            assert!(warning.contains(words), "{build}: the warning lacks {words:?}: {warning}");
        }
        let settings = fs::read_to_string(sandbox.path("home/.claude/settings.json")).unwrap();
        assert!(settings.contains(&format!("{}/roster-register", directory.display())), "{settings}");
        let status = sandbox.run_program(&program, &["status", "claude-code", "--json"]);
        let detail = json_of(&status)[0]["detail"].as_str().unwrap_or_default().to_owned();
        assert!(detail.contains("cargo clean"), "{build}: status does not say so: {detail}");
    }
}

/// Regression: status said `installed` of hooks whose binary was gone or
/// not executable, which fail on every run without the harness showing it.
#[test]
fn status_reports_hooks_whose_program_is_missing_or_not_executable() {
    use std::os::unix::fs::PermissionsExt;
    let sandbox = Sandbox::new();
    for harness in ["gemini-cli", "opencode"] {
        let installed = sandbox.run(&["install", harness, "--bin-dir", &sandbox.bin_dir()]);
        assert_eq!(code(&installed), 0, "{}", stderr(&installed));
    }
    let register = sandbox.path("bin/roster-register");
    fs::set_permissions(&register, fs::Permissions::from_mode(0o644)).unwrap();
    let rows = json_of(&sandbox.run(&["status", "--json"]));
    for harness in ["gemini-cli", "opencode"] {
        let row = rows
            .as_array()
            .unwrap()
            .iter()
            .find(|row| row["harness"] == harness && row["scope"] == "user")
            .unwrap_or_else(|| panic!("no {harness} row: {rows}"));
        assert_eq!(row["state"], "broken", "{row}");
        let detail = row["detail"].as_str().unwrap();
        assert!(detail.contains(&format!("{} is not executable", register.display())), "{detail}");
    }
    fs::remove_file(sandbox.path("bin/roster-prune")).unwrap();
    let text = sandbox.run(&["status", "gemini-cli"]);
    assert_eq!(code(&text), 0, "{}", stderr(&text));
    let line =
        stdout(&text).lines().find(|line| line.starts_with("gemini-cli")).unwrap_or_default().to_owned();
    assert!(line.contains(" broken ") && line.contains("roster-prune does not exist"), "{}", stdout(&text));
}

/// Project files are committed and used on other machines: their hooks call
/// the binaries by name, even when roster-hooks runs next to them, and
/// install and status say so when PATH lacks them.
#[test]
fn project_hooks_call_the_binaries_by_name_and_warn_when_path_lacks_them() {
    let sandbox = Sandbox::new();
    let program = roster_hooks_in(&sandbox.path("bin"));
    let without_bin = "/usr/bin:/bin";
    for (harness, file) in
        [("claude-code", "project/.claude/settings.json"), ("copilot", "project/.github/hooks/roster.json")]
    {
        let output =
            sandbox.run_with_path(&program, &["install", harness, "--scope", "project"], without_bin);
        assert_eq!(code(&output), 0, "{}", stderr(&output));
        assert!(
            stderr(&output).contains("roster-register, roster-prune and roster-state are not on PATH"),
            "{harness}: {}",
            stderr(&output)
        );
        let text = fs::read_to_string(sandbox.path(file)).unwrap();
        assert!(text.contains("\"roster-register --hook "), "{harness}: {text}");
        assert!(text.contains("\"roster-prune --current --hook "), "{harness}: {text}");
        assert!(!text.contains(&sandbox.bin_dir()), "{harness}: a machine's path in a project file: {text}");
    }
    let status = sandbox.run_with_path(&program, &["status", "--json"], without_bin);
    assert_eq!(code(&status), 0);
    assert!(stderr(&status).contains("not on PATH"), "{}", stderr(&status));
    assert_eq!(json_of(&status)[1]["state"], "installed", "status JSON stays an array of rows");

    let with_bin = format!("{}:/usr/bin:/bin", sandbox.bin_dir());
    let status = sandbox.run_with_path(&program, &["status"], &with_bin);
    assert_eq!(stderr(&status), "", "no warning when PATH has them");

    let pinned = sandbox.run_with_path(
        &program,
        &["install", "copilot", "--bin-dir", &sandbox.bin_dir(), "--json"],
        without_bin,
    );
    assert_eq!(
        json_of(&pinned)["commands"]["session_start"],
        format!("{}/roster-register --hook copilot", sandbox.bin_dir()),
        "--bin-dir still pins the path"
    );
}

/// Every character a shell reads specially inside or around quotes, and a
/// blank: the directories the hook commands name hold all of them.
const SHELL_HOSTILE: &str = "o'brien $HOME \"q\" back\\slash";

/// The hook commands a `print` text shows: the strings of the JSON snippet
/// that run roster in hook mode, or the `const SESSION_…` string literals of a plugin
/// file, decoded as the harness decodes them.
fn commands_in_printed_text(text: &str) -> Vec<String> {
    let (heading, document) = text.split_once('\n').unwrap_or_else(|| panic!("no document: {text}"));
    if heading.starts_with("Save as ") {
        return document
            .lines()
            .filter(|line| line.starts_with("const SESSION_") || line.starts_with("const STATE = "))
            .map(|line| {
                let literal = line.split_once(" = ").expect("const NAME = literal").1;
                let literal = literal.strip_suffix(';').expect("the literal ends the statement");
                serde_json::from_str::<String>(literal)
                    .unwrap_or_else(|error| panic!("{literal} is not a string literal ({error})\n{text}"))
            })
            .collect();
    }
    assert!(heading.starts_with("Merge into "), "{text}");
    // The snippet is one JSON value; notes may follow it.
    let snippet = serde_json::Deserializer::from_str(document)
        .into_iter::<Value>()
        .next()
        .expect("a JSON snippet")
        .unwrap_or_else(|error| panic!("the snippet is not JSON ({error}):\n{text}"));
    fn strings_calling_roster(value: &Value, found: &mut Vec<String>) {
        match value {
            // A hook's `name` may be `roster-register` too; its command passes `--hook`.
            Value::String(text) if text.contains(" --hook ") => found.push(text.clone()),
            Value::Array(items) => items.iter().for_each(|item| strings_calling_roster(item, found)),
            Value::Object(members) => members.values().for_each(|item| strings_calling_roster(item, found)),
            _ => {}
        }
    }
    let mut found = Vec::new();
    strings_calling_roster(&snippet, &mut found);
    found
}

/// The commands an `install` text shows, one per event line
/// (`  SessionStart:    <command>`).
fn commands_in_install_text(text: &str) -> Vec<String> {
    text.lines()
        .filter(|line| line.starts_with("  ") && !line.trim_start().starts_with("previous file"))
        .filter_map(|line| line.trim_start().split_once(": "))
        .map(|(_, command)| command.trim_start().to_owned())
        .collect()
}

/// Runs a hook command as a harness does (`sh -c`), the payload on stdin,
/// owned by `owner` through ROSTER_SESSION_PID.
fn run_hook_command(home: &Path, project: &Path, command: &str, owner: u32) -> Finished {
    let mut shell = Command::new("sh");
    tests::clean_environment(&mut shell, home)
        .args(["-c", command])
        .env("ROSTER_SESSION_PID", owner.to_string())
        .current_dir(project);
    tests::run_to_completion(shell, tests::StdinFeed::Bytes(b"{}".to_vec()), tests::COMMAND_DEADLINE)
}

/// Regression: the text of `roster-hooks print` escaped its JSON snippet
/// (and plugin file) as plain text, doubling every backslash, so with a
/// `'` in --bin-dir the command shown failed in `sh` ("Unterminated quoted
/// string"); install's text doubled them too. For every harness, the
/// commands print and install show are the ones install writes, parse in
/// `sh`, and run: the session-start command registers a live owner in the
/// roster directory --dir names, the session-end command removes it.
#[test]
fn printed_and_installed_commands_run_in_sh_for_every_harness() {
    let sandbox = Sandbox::new();
    let bin_dir = sandbox.path(&format!("{SHELL_HOSTILE}/bin"));
    fs::create_dir_all(&bin_dir).unwrap();
    for name in ["roster-register", "roster-prune", "roster-state"] {
        let link = bin_dir.join(name);
        if fs::hard_link(tests::binary(name), &link).is_err() {
            fs::copy(tests::binary(name), &link).unwrap();
        }
    }
    let roster_parent = sandbox.path(&format!("state {SHELL_HOSTILE}"));
    fs::create_dir(&roster_parent).unwrap();
    let roster_dir = roster_parent.join("roster");
    let (bin_dir_text, roster_dir_text) =
        (bin_dir.to_str().unwrap().to_owned(), roster_dir.to_str().unwrap().to_owned());
    let flags = ["--bin-dir", bin_dir_text.as_str(), "--dir", roster_dir_text.as_str()];
    let owner = tests::Owner::spawn();
    let record = roster_dir.join("sessions").join(tests::record_file_name_here(owner.pid()));

    for harness in HookHarness::ALL {
        let name = harness.as_str();
        let report = json_of(&sandbox.run(&[&["print", name, "--json"][..], &flags].concat()));
        let mut written: Vec<String> = ["session_start", "session_end"]
            .iter()
            .map(|key| report["commands"][key].as_str().expect("a command").to_owned())
            .collect();
        // Then the state hooks' commands, in event order (a plugin runs one
        // command for every state event).
        for event in harness.state_events() {
            let command = report["commands"]["state"][harness.event_name(event)].as_str().expect("a command");
            if !written.iter().any(|known| known == command) {
                written.push(command.to_owned());
            }
        }
        let printed = sandbox.run(&[&["print", name][..], &flags].concat());
        assert_eq!(code(&printed), 0, "{}", stderr(&printed));
        let shown = commands_in_printed_text(&stdout(&printed));
        let installed = sandbox.run(&[&["install", name][..], &flags].concat());
        assert_eq!(code(&installed), 0, "{}", stderr(&installed));
        let shown_by_install = commands_in_install_text(&stdout(&installed));
        // Amp has no session-end event.
        if harness == HookHarness::Amp {
            written.remove(1);
        }
        let expected = &written[..];
        assert_eq!(
            shown,
            expected,
            "{name}: print shows other commands than install writes:\n{}",
            stdout(&printed)
        );
        assert_eq!(
            shown_by_install,
            expected,
            "{name}: install's report shows other commands than it wrote:\n{}",
            stdout(&installed)
        );

        for command in expected {
            let syntax = run_to_end(Command::new("sh").args(["-n", "-c", command]));
            assert_eq!(code(&syntax), 0, "{name}: sh cannot parse {command}: {}", stderr(&syntax));
        }
        let home = sandbox.path("home");
        let started = run_hook_command(&home, &sandbox.path("project"), &expected[0], owner.pid());
        assert_eq!(code(&started), 0, "{name}: {}", stderr(&started));
        let log = fs::read_to_string(roster_dir.join("hook-errors.log")).unwrap_or_default();
        assert!(record.exists(), "{name}: the session-start command registered nothing: {log}");
        // A state command of a settings file names its event: it records
        // the session's state beside its record.
        if !harness.uses_plugin_file() {
            let state = run_hook_command(&home, &sandbox.path("project"), &expected[2], owner.pid());
            assert_eq!(code(&state), 0, "{name}: {}", stderr(&state));
            let state_file = roster_dir.join("states").join(record.file_name().unwrap());
            let log = fs::read_to_string(roster_dir.join("hook-errors.log")).unwrap_or_default();
            assert!(state_file.exists(), "{name}: {} recorded no state: {log}", expected[2]);
        }
        if harness != HookHarness::Amp {
            let end = &expected[1];
            let ended = run_hook_command(&home, &sandbox.path("project"), end, owner.pid());
            assert_eq!(code(&ended), 0, "{name}: {}", stderr(&ended));
            let log = fs::read_to_string(roster_dir.join("hook-errors.log")).unwrap_or_default();
            assert!(!record.exists(), "{name}: the session-end command removed nothing: {log}");
        } else {
            fs::remove_file(&record).unwrap();
        }
    }
}

/// Where `harness`'s hooks go by default, from `status --json`.
fn hook_file(sandbox: &Sandbox, harness: &str) -> PathBuf {
    let rows = json_of(&sandbox.run(&["status", harness, "--json"]));
    PathBuf::from(rows[0]["path"].as_str().unwrap_or_else(|| panic!("{harness}: no path in {rows}")))
}

/// The directories between the home or project directory and `file`,
/// outermost first (`~/.config`, `~/.config/opencode`, ...).
fn directories_above(sandbox: &Sandbox, file: &Path) -> Vec<PathBuf> {
    let scope = ["home", "project"]
        .into_iter()
        .map(|name| sandbox.path(name))
        .find(|scope| file.starts_with(scope))
        .unwrap_or_else(|| panic!("{} is in neither home nor project", file.display()));
    let mut directories: Vec<PathBuf> =
        file.ancestors().skip(1).take_while(|directory| *directory != scope).map(Path::to_path_buf).collect();
    directories.reverse();
    directories
}

/// The directories an uninstall's text says it removed (`~` read as the
/// sandbox's home).
fn directories_said_removed(sandbox: &Sandbox, text: &str) -> Vec<PathBuf> {
    text.lines()
        .filter_map(|line| line.trim().strip_prefix("removed the empty directory "))
        .map(|shown| match shown.strip_prefix("~/") {
            Some(in_home) => sandbox.path("home").join(in_home),
            None => PathBuf::from(shown),
        })
        .collect()
}

/// Regression: `roster-hooks uninstall codex` removed `~/.codex`, a
/// directory the user had made before installing, and said "removed the
/// empty directory"; for opencode and Amp it removed the user's own empty
/// `~/.config`. For every harness: a configuration directory that was there
/// before install (made empty by the user) survives install and uninstall,
/// the directories install made below it go, and the output names exactly
/// those.
#[test]
fn uninstall_keeps_the_directories_that_were_there_before_install_for_every_harness() {
    for harness in HookHarness::ALL {
        let harness = harness.as_str();
        let sandbox = Sandbox::new();
        let file = hook_file(&sandbox, harness);
        let directories = directories_above(&sandbox, &file);
        let users_own = directories[0].clone();
        fs::create_dir(&users_own).unwrap();

        let installed = sandbox.run(&["install", harness, "--bin-dir", &sandbox.bin_dir()]);
        assert_eq!(code(&installed), 0, "{harness}: {}", stderr(&installed));
        assert!(file.is_file(), "{harness}: install wrote {}", file.display());

        let removed = sandbox.run(&["uninstall", harness]);
        assert_eq!(code(&removed), 0, "{harness}: {}", stderr(&removed));
        let text = stdout(&removed);
        assert!(!file.exists(), "{harness}: install created the file, uninstall removes it");
        assert!(
            users_own.is_dir(),
            "{harness}: uninstall removed {}, the user's own:\n{text}",
            users_own.display()
        );
        assert_eq!(
            fs::read_dir(&users_own).unwrap().count(),
            0,
            "{harness}: install left something behind in {}:\n{text}",
            users_own.display()
        );
        let created: Vec<PathBuf> = directories[1..].iter().rev().cloned().collect();
        assert_eq!(
            directories_said_removed(&sandbox, &text),
            created,
            "{harness}: the output names the directories install made, and only those:\n{text}"
        );
        assert!(!text.contains("trust"), "{harness}: no trust entry was ever there:\n{text}");
    }
}

/// The other half: with nothing there before install, every directory
/// install made for the file goes at uninstall, and the output says so; an
/// install of hooks already there changes nothing of that.
#[test]
fn uninstall_removes_every_directory_install_created_for_every_harness() {
    for harness in HookHarness::ALL {
        let harness = harness.as_str();
        let sandbox = Sandbox::new();
        let file = hook_file(&sandbox, harness);
        let directories = directories_above(&sandbox, &file);
        for _ in 0..2 {
            let installed = sandbox.run(&["install", harness, "--bin-dir", &sandbox.bin_dir()]);
            assert_eq!(code(&installed), 0, "{harness}: {}", stderr(&installed));
        }
        let removed = sandbox.run(&["uninstall", harness, "--json"]);
        assert_eq!(code(&removed), 0, "{harness}: {}", stderr(&removed));
        let report = json_of(&removed);
        let said: Vec<PathBuf> = report["removed_directories"]
            .as_array()
            .unwrap()
            .iter()
            .map(|directory| PathBuf::from(directory.as_str().unwrap()))
            .collect();
        let created: Vec<PathBuf> = directories.iter().rev().cloned().collect();
        assert_eq!(said, created, "{harness}: {report}");
        for directory in &directories {
            assert!(!directory.exists(), "{harness}: {} stays: {report}", directory.display());
        }
        assert_eq!(report["notes"], serde_json::json!([]), "{harness}: {report}");
    }
}

/// Regression: uninstalling Codex's hooks said their trust entries stay in
/// `config.toml` when that file held none. It says so only of entries it
/// found for the hooks it removed.
#[test]
fn codex_uninstall_mentions_only_trust_entries_that_exist() {
    for trusted in [false, true] {
        let sandbox = Sandbox::new();
        let file = hook_file(&sandbox, "codex");
        let installed = sandbox.run(&["install", "codex", "--bin-dir", &sandbox.bin_dir()]);
        assert_eq!(code(&installed), 0, "{}", stderr(&installed));
        let mut config = String::from("model = \"o4\"\n");
        if trusted {
            let key = harness::hook_config::codex_trust_key(
                &file,
                harness::hook_config::HookEvent::SessionStart,
                0,
                0,
            );
            config.push_str(&format!("[hooks.state.\"{key}\"]\ntrusted_hash = \"sha256:00\"\n"));
        }
        fs::write(sandbox.path("home/.codex/config.toml"), &config).unwrap();

        let removed = sandbox.run(&["uninstall", "codex"]);
        assert_eq!(code(&removed), 0, "{}", stderr(&removed));
        let text = stdout(&removed);
        assert_eq!(
            text.contains("trust entry of the removed hooks stays in"),
            trusted,
            "trusted: {trusted}:\n{text}"
        );
        assert!(!text.contains("trust entries"), "one entry was there at most:\n{text}");
        assert_eq!(fs::read_to_string(sandbox.path("home/.codex/config.toml")).unwrap(), config);
        assert!(sandbox.path("home/.codex").is_dir(), "config.toml keeps its directory");
    }
}
