//! `cargo xtask install --prefix DIR`, run for real, checked the way a
//! user would: every file is where its tool looks, the binaries run, `man`
//! finds the pages through MANPATH, and bash, zsh and fish complete
//! subcommands, flags and values from the installed completion scripts. A
//! shell that is missing fails the test (CI installs them). `cargo xtask
//! uninstall` removes what install put in place, and nothing else.
//!
//! One installation serves every test here. It is a release build, as
//! `cargo xtask install` makes it; the Debian package test and CI's
//! `cargo xtask deb` build the same binaries, so cargo builds them once.

use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use tests::require_tool;
use tests::shell_completion::{CompletionDirectories, TestedShell, complete_lines};
use tests::workspace::{ROSTER_BINARIES, target_directory, xtask};

/// What `cargo xtask install --prefix` left: the prefix and the paths it
/// reported writing.
struct Installation {
    prefix: PathBuf,
    reported: Vec<PathBuf>,
}

/// The installation, made once for all tests here, under the target
/// directory (a fresh prefix each run).
fn installation() -> &'static Installation {
    static INSTALLATION: OnceLock<Installation> = OnceLock::new();
    INSTALLATION.get_or_init(|| {
        let prefix = target_directory().expect("cargo metadata answers").join("install-test-prefix");
        if prefix.exists() {
            std::fs::remove_dir_all(&prefix).expect("the old test prefix can be removed");
        }
        let output = xtask(["install".as_ref(), "--prefix".as_ref(), prefix.as_os_str()])
            .output()
            .expect("cargo runs");
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "cargo xtask install --prefix {} failed ({}):\n{stdout}\n{}",
            prefix.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        let reported = stdout
            .lines()
            .skip_while(|line| *line != format!("installed under {}:", prefix.display()))
            .skip(1)
            .map_while(|line| line.strip_prefix("  "))
            .map(PathBuf::from)
            .collect();
        Installation { prefix, reported }
    })
}

#[test]
fn install_puts_every_file_where_its_tool_looks_and_the_binaries_run() {
    let Installation { prefix, reported } = installation();
    let expected_files = [
        ("bin/roster-list", 0o755),
        ("share/man/man1/roster-list.1", 0o644),
        ("share/man/man7/roster.7", 0o644),
        ("share/bash-completion/completions/roster-list", 0o644),
        ("share/zsh/site-functions/_roster-list", 0o644),
        ("share/fish/vendor_completions.d/roster-list.fish", 0o644),
        ("share/roster/completions/roster-list.elv", 0o644),
        ("share/roster/completions/_roster-list.ps1", 0o644),
        ("share/systemd/user/roster-notify.service", 0o644),
    ];
    for (relative_path, mode) in expected_files {
        let path = prefix.join(relative_path);
        assert!(reported.contains(&path), "install did not report {relative_path}");
        let metadata = std::fs::metadata(&path).unwrap_or_else(|error| panic!("{relative_path}: {error}"));
        assert_eq!(metadata.permissions().mode() & 0o777, mode, "mode of {relative_path}");
    }
    // A binary, a page and 5 completion scripts per binary, roster(7),
    // roster-notify's systemd user unit, and the manifest uninstall reads.
    let binaries = ROSTER_BINARIES.len();
    assert_eq!(
        reported.len(),
        binaries + (binaries + 1) + 5 * binaries + 1 + 1,
        "installed files: {reported:#?}"
    );
    assert!(reported.contains(&prefix.join("share/roster/installed-files")), "{reported:#?}");

    let unit = std::fs::read_to_string(prefix.join("share/systemd/user/roster-notify.service")).unwrap();
    let started = format!("\nExecStart={}\n", prefix.join("bin/roster-notify").display());
    assert!(unit.contains(&started), "the unit does not start the installed binary ({started:?}):\n{unit}");

    for binary in ROSTER_BINARIES {
        let output = Command::new(prefix.join("bin").join(binary))
            .arg("--version")
            .output()
            .unwrap_or_else(|error| panic!("cannot run the installed {binary}: {error}"));
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success() && stdout.starts_with(binary),
            "installed {binary} --version: {}\nstdout: {stdout}\nstderr: {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    }

    require_tool("man");
    let man_directory = prefix.join("share/man");
    for (section, page) in [("1", "roster-list"), ("7", "roster")] {
        let output = Command::new("man")
            .args(["-w", section, page])
            .env("MANPATH", &man_directory)
            .output()
            .unwrap_or_else(|error| panic!("cannot run man: {error}"));
        let found = String::from_utf8_lossy(&output.stdout).trim().to_owned();
        let expected = man_directory.join(format!("man{section}/{page}.{section}"));
        assert_eq!(
            Path::new(&found),
            expected,
            "MANPATH={} man -w {section} {page} ({}): {}",
            man_directory.display(),
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

/// What completing one line must give.
#[derive(Clone, Copy)]
enum Expect<'a> {
    /// Exactly these candidates: a fixed set of values or subcommands.
    Exactly(&'a [&'a str]),
    /// At least these candidates: flags, where shells differ in what else
    /// they offer (`-h` beside the long flags, flags of a parent command).
    Includes(&'a [&'a str]),
}

const HARNESSES: &[&str] =
    &["aider", "amp", "claude-code", "codex", "copilot", "cursor-agent", "gemini-cli", "goose", "opencode"];
const HOOK_TARGETS: &[&str] = &[
    "aider",
    "amp",
    "auto",
    "claude-code",
    "codex",
    "copilot",
    "cursor-agent",
    "gemini-cli",
    "goose",
    "opencode",
];
const HOOK_HARNESSES: &[&str] =
    &["amp", "claude-code", "codex", "copilot", "cursor-agent", "gemini-cli", "opencode"];

/// Durations `--older-than <TAB>` offers (regression: bash offered file names).
const DURATIONS: &[&str] = &["1d", "1h", "2w", "7d"];

/// Lines a user types before TAB, and what every shell must offer. The
/// `roster-consent` and `roster-hooks` lines after a subcommand are the
/// ones clap-rs/clap#6421 broke in bash. An empty word gets a command's
/// subcommands or a positional's values alone, the flags once `-` is typed
/// (regression: bash put `--color --dir …` before `arm disarm …`).
const CASES: &[(&str, Expect)] = &[
    ("roster-register --", Expect::Includes(&["--pid", "--agent", "--harness", "--hook", "--format"])),
    ("roster-register --harness ", Expect::Exactly(HARNESSES)),
    ("roster-register --hook ", Expect::Exactly(HOOK_TARGETS)),
    ("roster-register --format ", Expect::Exactly(&["json", "text"])),
    ("roster-list --", Expect::Includes(&["--all", "--agent", "--harness", "--session-id", "--cwd"])),
    ("roster-list --harness c", Expect::Exactly(&["claude-code", "codex", "copilot", "cursor-agent"])),
    ("roster-prune --", Expect::Includes(&["--older-than", "--dry-run", "--current", "--pid", "--hook"])),
    ("roster-prune --current --hook ", Expect::Exactly(HOOK_TARGETS)),
    ("roster-prune --older-than ", Expect::Exactly(DURATIONS)),
    ("roster-prune --dry-run --older-than 1", Expect::Exactly(&["1d", "1h"])),
    ("roster-consent ", Expect::Exactly(&["arm", "disarm", "help", "should-arm", "status"])),
    ("roster-consent --", Expect::Includes(&["--dir", "--format", "--json", "--color"])),
    ("roster-consent arm --", Expect::Includes(&["--pid", "--cwd", "--dir", "--format"])),
    ("roster-consent should-arm --p", Expect::Exactly(&["--pid"])),
    ("roster-consent status --format ", Expect::Exactly(&["json", "text"])),
    ("roster-hooks ", Expect::Exactly(&["help", "install", "print", "status", "uninstall"])),
    ("roster-hooks install ", Expect::Exactly(HOOK_HARNESSES)),
    ("roster-hooks install cl", Expect::Exactly(&["claude-code"])),
    ("roster-hooks install codex --", Expect::Includes(&["--bin-dir", "--scope", "--dir"])),
    ("roster-hooks install claude-code --scope ", Expect::Exactly(&["project", "user"])),
    ("roster-hooks status --scope ", Expect::Exactly(&["project", "user"])),
];

/// Lines whose value is the pid of any process: `parent` and the live pids
/// must be offered. Only a registration names a process that is no session
/// yet; the other `--pid` flags offer the registered sessions alone
/// (`tests/tooling/session_completion.rs`).
const PID_LINES: &[&str] = &["roster-register --pid "];

/// The directories each shell searches below the installation's prefix,
/// and its `bin` (fish completes only a command it can find).
fn installed_completions() -> CompletionDirectories {
    let prefix = &installation().prefix;
    CompletionDirectories {
        bash: prefix.join("share/bash-completion/completions"),
        zsh: prefix.join("share/zsh/site-functions"),
        fish: prefix.join("share/fish/vendor_completions.d"),
        commands: prefix.join("bin"),
    }
}

/// Checks `lines` against what every shell offers, collecting every
/// mismatch so one run shows them all.
fn check_completions(directories: &CompletionDirectories, cases: &[(&str, Expect)]) {
    // One thread per shell: the shells start a process per line, and zsh a terminal.
    let problems: Vec<String> = std::thread::scope(|scope| {
        let checks: Vec<_> = TestedShell::ALL
            .into_iter()
            .map(|shell| scope.spawn(move || completion_problems(shell, directories, cases)))
            .collect();
        checks
            .into_iter()
            .flat_map(|check| check.join().expect("a completion check does not panic"))
            .collect()
    });
    assert!(problems.is_empty(), "completion is wrong:\n  {}", problems.join("\n  "));
}

/// What `shell` offers wrongly for `cases`.
fn completion_problems(
    shell: TestedShell,
    directories: &CompletionDirectories,
    cases: &[(&str, Expect)],
) -> Vec<String> {
    let lines: Vec<&str> = cases.iter().map(|(line, _)| *line).collect();
    let answers = complete_lines(shell, directories, &lines);
    let mut problems = Vec::new();
    for ((line, expect), offered) in cases.iter().zip(answers) {
        let offered_set: BTreeSet<&str> = offered.iter().map(String::as_str).collect();
        match expect {
            Expect::Exactly(expected) => {
                let expected: BTreeSet<&str> = expected.iter().copied().collect();
                if offered_set != expected {
                    problems.push(format!("{shell:?} {line:?}: offered {offered:?}, expected {expected:?}"));
                }
            }
            Expect::Includes(expected) => {
                let missing: Vec<&&str> =
                    expected.iter().filter(|candidate| !offered_set.contains(**candidate)).collect();
                if !missing.is_empty() {
                    problems.push(format!("{shell:?} {line:?}: {missing:?} missing from {offered:?}"));
                }
            }
        }
    }
    problems
}

#[test]
fn every_binary_completes_subcommands_flags_and_values_in_bash_zsh_and_fish() {
    let directories = installed_completions();
    check_completions(&directories, CASES);
}

#[test]
fn pid_flags_complete_parent_and_live_pids_but_never_init() {
    let directories = installed_completions();
    let mut live = std::process::Command::new("sleep").arg("600").spawn().expect("sleep runs");
    let live_pid = live.id().to_string();
    let mut problems = Vec::new();
    for shell in TestedShell::ALL {
        for (line, offered) in PID_LINES.iter().zip(complete_lines(shell, &directories, PID_LINES)) {
            for wanted in ["parent", live_pid.as_str()] {
                if !offered.iter().any(|candidate| candidate == wanted) {
                    problems
                        .push(format!("{shell:?} {line:?}: {wanted} missing ({} offered)", offered.len()));
                }
            }
            if offered.iter().any(|candidate| candidate == "1") {
                problems.push(format!("{shell:?} {line:?}: offers pid 1, which is never an owner"));
            }
            if let Some(odd) = offered.iter().find(|candidate| {
                *candidate != "parent" && !candidate.chars().all(|character| character.is_ascii_digit())
            }) {
                problems.push(format!("{shell:?} {line:?}: offers {odd:?}, neither a pid nor parent"));
            }
        }
    }
    let _ = live.kill();
    let _ = live.wait();
    assert!(problems.is_empty(), "pid completion is wrong:\n  {}", problems.join("\n  "));
}

/// Every path below `root`, relative to it, sorted.
fn tree(root: &Path) -> BTreeSet<PathBuf> {
    let mut found = BTreeSet::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(directory) = pending.pop() {
        for entry in std::fs::read_dir(&directory).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path.clone());
            }
            found.insert(path.strip_prefix(root).unwrap().to_path_buf());
        }
    }
    found
}

/// Regression: there was no way back from `cargo xtask install` but
/// removing its files one by one. `cargo xtask uninstall --prefix` removes
/// every file install wrote and every directory it created, and leaves
/// what was there before: here a file of the user's in `bin/`, and a page
/// of another program in `share/man/man1`.
#[test]
fn uninstall_removes_what_install_put_in_place_and_nothing_else() {
    let prefix = target_directory().expect("cargo metadata answers").join("uninstall-test-prefix");
    if prefix.exists() {
        std::fs::remove_dir_all(&prefix).expect("the old test prefix can be removed");
    }
    for (file, text) in [("bin/mine", "#!/bin/sh\n"), ("share/man/man1/other.1", ".TH OTHER 1\n")] {
        std::fs::create_dir_all(prefix.join(file).parent().unwrap()).unwrap();
        std::fs::write(prefix.join(file), text).unwrap();
    }
    let before = tree(&prefix);
    let run = |verb: &str| {
        let output =
            xtask([verb.as_ref(), "--prefix".as_ref(), prefix.as_os_str()]).output().expect("cargo runs");
        let text =
            format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
        (output.status.success(), text)
    };
    let (installed, text) = run("install");
    assert!(installed, "cargo xtask install failed:\n{text}");
    assert!(tree(&prefix).len() > before.len() + 30, "install put little in place:\n{text}");
    // Installing twice records the directories the first install created.
    let (installed, text) = run("install");
    assert!(installed, "cargo xtask install failed the second time:\n{text}");

    let (uninstalled, text) = run("uninstall");
    assert!(uninstalled, "cargo xtask uninstall failed:\n{text}");
    assert!(text.contains(&format!("removed from {}:", prefix.display())), "{text}");
    assert_eq!(tree(&prefix), before, "uninstall left or took other files:\n{text}");

    let (again, text) = run("uninstall");
    assert!(!again, "a second uninstall found something to remove:\n{text}");
    assert!(
        text.contains("installed-files does not exist") && text.contains("nothing was removed"),
        "{text}"
    );
}
