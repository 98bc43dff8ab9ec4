//! Drives real shells through their completion machinery and reads back
//! what they offer, so a completion test checks what a user's TAB gives
//! rather than whether a script parses: bash runs the registered completion
//! function with `COMP_WORDS`/`COMP_CWORD` set and prints `COMPREPLY`; zsh
//! runs an interactive shell on a pseudo-terminal (zpty) with `compinit`,
//! types the line and a TAB, and records every match through a `compadd`
//! wrapper; fish answers `complete -C`. Used by the completion tests and by
//! the Debian package test, which points them at the installed files.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use super::tests::require_program;

/// The shells completion is tested in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TestedShell {
    Bash,
    Zsh,
    Fish,
}

impl TestedShell {
    pub const ALL: [TestedShell; 3] = [TestedShell::Bash, TestedShell::Zsh, TestedShell::Fish];
}

/// Where each shell finds the completion scripts: the directories a
/// distribution or a prefix installs them in.
#[derive(Clone, Debug)]
pub struct CompletionDirectories {
    /// Holds `<binary>` (bash-completion's naming).
    pub bash: PathBuf,
    /// Holds `_<binary>`, put on zsh's `fpath`.
    pub zsh: PathBuf,
    /// Holds `<binary>.fish`, put on fish's `fish_complete_path`.
    pub fish: PathBuf,
    /// Holds the binaries themselves (or stand-ins), put first on `PATH`:
    /// fish loads a command's completions only for a command it can find.
    pub commands: PathBuf,
}

/// How long one shell may take to answer; far more than it needs.
const SHELL_DEADLINE: Duration = Duration::from_secs(30);

/// What `shell` offers when the user has typed `line` (the cursor at its
/// end) and presses TAB. `line` starts with the binary's name; words are
/// separated by single spaces, and a trailing space starts an empty word.
pub fn complete(shell: TestedShell, directories: &CompletionDirectories, line: &str) -> Vec<String> {
    complete_through(&[], shell, directories, line)
}

/// Like [`complete`], with the shell started through `wrapper` (a command
/// and its arguments, such as `nsenter --target PID --mount --`), so that
/// it runs where the wrapper puts it.
pub fn complete_through(
    wrapper: &[&std::ffi::OsStr],
    shell: TestedShell,
    directories: &CompletionDirectories,
    line: &str,
) -> Vec<String> {
    let binary = line.split(' ').next().expect("a line names the binary");
    let scratch = tempfile::tempdir().expect("a temporary directory can be made");
    let (program, mut command) = match shell {
        TestedShell::Bash => ("bash", bash_command(&directories.bash.join(binary), binary, line)),
        TestedShell::Zsh => ("zsh", zsh_command(&directories.zsh, line, scratch.path())),
        TestedShell::Fish => ("fish", fish_command(&directories.fish, line)),
    };
    require_program(program, &format!("{program} (Debian and Ubuntu package: {program})"));
    // A scratch HOME keeps the user's start-up files and caches out of the answer.
    command.env("HOME", scratch.path()).env("TERM", "dumb").stdin(Stdio::null());
    let path = std::env::var_os("PATH").unwrap_or_default();
    let search_path = std::env::join_paths(
        std::iter::once(directories.commands.clone()).chain(std::env::split_paths(&path)),
    )
    .expect("the commands directory can be put on PATH");
    command.env("PATH", search_path);
    if let Some((wrapper_program, wrapper_arguments)) = wrapper.split_first() {
        let mut wrapped = Command::new(wrapper_program);
        wrapped.args(wrapper_arguments).arg(command.get_program()).args(command.get_args());
        for (name, value) in command.get_envs() {
            if let Some(value) = value {
                wrapped.env(name, value);
            }
        }
        wrapped.stdin(Stdio::null());
        command = wrapped;
    }
    let output = run_with_deadline(&mut command, program, line);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{program} completing {line:?} failed ({}):\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let mut candidates: Vec<String> = stdout
        .lines()
        // fish prints `candidate<TAB>description`.
        .map(|line| line.split('\t').next().unwrap_or("").trim_end().to_owned())
        .filter(|candidate| !candidate.is_empty())
        .collect();
    candidates.sort();
    candidates.dedup();
    candidates
}

/// bash: source the script, find the function `complete -p` registered for
/// the binary, call it as readline would and print `COMPREPLY`.
fn bash_command(script: &Path, binary: &str, line: &str) -> Command {
    const DRIVER: &str = r#"
        script=$1 binary=$2 line=$3
        source "$script" || exit 3
        read -ra COMP_WORDS <<< "$line"
        [[ $line == *" " ]] && COMP_WORDS+=("")
        COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
        COMP_LINE=$line
        COMP_POINT=${#line}
        read -ra registration <<< "$(complete -p "$binary")"
        function=
        for index in "${!registration[@]}"; do
            [[ ${registration[index]} == -F ]] && function=${registration[index + 1]}
        done
        [[ -n $function ]] || { echo "no completion function registered for $binary" >&2; exit 4; }
        COMPREPLY=()
        "$function" "$binary" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
        printf '%s\n' "${COMPREPLY[@]}"
    "#;
    let mut command = Command::new("bash");
    command.args(["--noprofile", "--norc", "-c", DRIVER, "bash"]).arg(script).args([binary, line]);
    command
}

/// zsh: an interactive `zsh -f` on a pseudo-terminal loads compinit with
/// the scripts' directory first on `fpath`, records each match `compadd`
/// adds into a file, and prints a marker once completion is done, which the
/// driver waits for.
fn zsh_command(fpath_directory: &Path, line: &str, scratch: &Path) -> Command {
    const SETUP: &str = r#"
        PS1= PROMPT= RPROMPT=
        fpath=("$ROSTER_TEST_FPATH" $fpath)
        autoload -U compinit && compinit -u -D
        unsetopt autolist
        bindkey '^I' complete-word
        compadd() {
            local argument
            for argument in "$@"; do
                [[ $argument == (-|--) ]] && break
                # -O, -A and -D ask for the matches back instead of adding them.
                if [[ $argument == -[OAD]* ]]; then builtin compadd "$@"; return; fi
            done
            local -a roster_matches
            builtin compadd -A roster_matches "$@"
            (( ${#roster_matches} )) && print -rl -- $roster_matches >> "$ROSTER_TEST_MATCHES"
            builtin compadd "$@"
        }
        _roster_test_completion_done() { print -r -- ROSTER-TEST-COMPLETION'-'DONE }
        comppostfuncs=(_roster_test_completion_done)
    "#;
    const DRIVER: &str = r#"
        setup=$1 line=$2
        zmodload zsh/zpty || exit 3
        zpty roster_test_shell zsh -f -i || exit 3
        zpty -w roster_test_shell "source ${(q)setup}"
        zpty -w -n roster_test_shell "$line"$'\t'
        zpty -r roster_test_shell seen '*ROSTER-TEST-COMPLETION-DONE*' || exit 5
        zpty -d roster_test_shell
        [[ -e $ROSTER_TEST_MATCHES ]] && cat -- "$ROSTER_TEST_MATCHES"
        exit 0
    "#;
    let setup = scratch.join("setup.zsh");
    std::fs::write(&setup, SETUP).expect("the scratch directory is writable");
    let mut command = Command::new("zsh");
    command
        .args(["-f", "-c", DRIVER, "zsh"])
        .arg(&setup)
        .arg(line)
        .env("ROSTER_TEST_FPATH", fpath_directory)
        .env("ROSTER_TEST_MATCHES", scratch.join("matches"));
    command
}

/// fish: `complete -C` prints what fish would offer for the line, with the
/// scripts' directory first on `fish_complete_path`, so fish loads the
/// script by the binary's name as it does for an installed one.
fn fish_command(complete_directory: &Path, line: &str) -> Command {
    const DRIVER: &str = r#"set --prepend fish_complete_path $argv[1]; complete --do-complete=$argv[2]"#;
    let mut command = Command::new("fish");
    command.args(["--no-config", "-c", DRIVER]).arg(complete_directory).arg(line);
    command
}

/// Runs `command`, killing it past [`SHELL_DEADLINE`]: a shell waiting on
/// a prompt must fail the test, not hang it.
fn run_with_deadline(command: &mut Command, program: &str, line: &str) -> std::process::Output {
    let child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|error| panic!("cannot run {program}: {error}"));
    let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).expect("a pid fits an i32"));
    let (finished, finished_seen) = std::sync::mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        let timed_out = finished_seen.recv_timeout(SHELL_DEADLINE).is_err();
        if timed_out {
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
        }
        timed_out
    });
    let output = child.wait_with_output().expect("the shell's output can be read");
    let _ = finished.send(());
    let timed_out = watchdog.join().expect("the watchdog does not panic");
    assert!(
        !timed_out,
        "{program} did not finish completing {line:?} within {SHELL_DEADLINE:?}:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}
