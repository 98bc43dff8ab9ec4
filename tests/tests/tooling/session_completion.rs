//! The committed completion scripts complete what only the registry knows:
//! bash, zsh and fish, driven for real, offer a registered live session's
//! pid, session id and agent name where a flag names a session, and never
//! a process that is no session. The scripts call back into the built
//! binaries (put first on PATH), which read the registry `ROSTER_DIR`
//! names.

use std::collections::BTreeSet;
use std::path::Path;

use tests::shell_completion::{CompletionDirectories, TestedShell, complete_lines_with_environment};
use tests::workspace::{ROSTER_BINARIES, workspace_root};
use tests::{Owner, Sandbox, binary};

/// The committed scripts laid out under `root` as each shell looks for
/// them (bash-completion's `<binary>`, zsh's `_<binary>`, fish's
/// `<binary>.fish`), and the built binaries linked into `root/bin`.
fn committed_scripts_installed_under(root: &Path) -> CompletionDirectories {
    let directories = CompletionDirectories {
        bash: root.join("bash"),
        zsh: root.join("zsh"),
        fish: root.join("fish"),
        commands: root.join("bin"),
    };
    for directory in [&directories.bash, &directories.zsh, &directories.fish, &directories.commands] {
        std::fs::create_dir(directory).unwrap();
    }
    let committed = workspace_root().join("completions");
    for name in ROSTER_BINARIES {
        for (from, to) in [
            (format!("{name}.bash"), directories.bash.join(name)),
            (format!("_{name}"), directories.zsh.join(format!("_{name}"))),
            (format!("{name}.fish"), directories.fish.join(format!("{name}.fish"))),
        ] {
            std::fs::copy(committed.join(&from), &to)
                .unwrap_or_else(|error| panic!("copying {from}: {error}"));
        }
        std::os::unix::fs::symlink(binary(name), directories.commands.join(name)).unwrap();
    }
    directories
}

/// Regression: `roster-send --to`, `roster-list --agent` and `--until-gone`
/// completed file names, and `roster-consent status --pid` every process.
#[test]
fn session_flags_complete_the_registered_sessions_in_bash_zsh_and_fish() {
    let sandbox = Sandbox::new();
    let session = Owner::spawn();
    let stranger = Owner::spawn();
    let session_id = "3f1c9a2e-5b7d-4c1e-9a2b-0c4d6e8f1a3b";
    sandbox.register(
        session.pid(),
        &["--agent", "heron", "--harness", "claude-code", "--session-id", session_id],
    );
    let pid = session.pid().to_string();
    let stranger_pid = stranger.pid().to_string();
    let cases: &[(&str, &[&str])] = &[
        ("roster-send --to ", &[&pid, "heron", session_id]),
        ("roster-send --to he", &["heron"]),
        ("roster-list --agent ", &["heron"]),
        ("roster-list --until-gone ", &[&pid, session_id]),
        ("roster-list --session-id ", &[session_id]),
        ("roster-consent status --pid ", &["parent", &pid]),
        ("roster-consent arm --pid ", &["parent", &pid]),
        ("roster-prune --current --pid ", &["parent", &pid]),
        ("roster-state --pid ", &["parent", &pid]),
    ];
    let scratch = tempfile::tempdir().unwrap();
    let directories = committed_scripts_installed_under(scratch.path());
    let lines: Vec<&str> = cases.iter().map(|(line, _)| *line).collect();
    let environment = [("ROSTER_DIR", sandbox.root().as_os_str())];
    let mut problems = Vec::new();
    for shell in TestedShell::ALL {
        let answers = complete_lines_with_environment(shell, &directories, &lines, &environment);
        for ((line, expected), offered) in cases.iter().zip(answers) {
            let offered: BTreeSet<&str> = offered.iter().map(String::as_str).collect();
            let expected: BTreeSet<&str> = expected.iter().copied().collect();
            if offered != expected {
                problems.push(format!("{shell:?} {line:?}: offered {offered:?}, expected {expected:?}"));
            }
            if offered.contains(stranger_pid.as_str()) {
                problems
                    .push(format!("{shell:?} {line:?}: offers {stranger_pid}, a process that is no session"));
            }
        }
    }
    assert!(problems.is_empty(), "session completion is wrong:\n  {}", problems.join("\n  "));
}
