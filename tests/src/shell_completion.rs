//! Drives real shells through their completion machinery and reads back
//! what they offer, so a completion test checks what a user's TAB gives
//! rather than whether a script parses: bash runs the registered completion
//! function with `COMP_WORDS`/`COMP_CWORD` set and prints `COMPREPLY`; zsh
//! runs an interactive shell on a pseudo-terminal (zpty) with `compinit`,
//! types the line and a TAB, and records every match through a `compadd`
//! wrapper; fish answers `complete -C`. Used by the completion tests of
//! `cargo xtask install`'s layout and by the Debian package test, each
//! pointing the shells at the files installed there.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::{StdinFeed, require_tool, run_to_completion};

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
/// end) and presses TAB, with the shell started through `wrapper` (a
/// command and its arguments, such as `nsenter --target PID --mount --`,
/// or none), so that it runs where the wrapper puts it. `line` starts with
/// the binary's name; words are separated by single spaces, and a trailing
/// space starts an empty word.
pub fn complete_through(
    wrapper: &[&std::ffi::OsStr],
    shell: TestedShell,
    directories: &CompletionDirectories,
    line: &str,
) -> Vec<String> {
    complete_lines_through(wrapper, shell, directories, &[line], &[]).remove(0)
}

/// What `shell` offers for each of `lines`, in one run of the shell (zsh
/// starts a terminal and loads compinit once for all of them).
pub fn complete_lines(
    shell: TestedShell,
    directories: &CompletionDirectories,
    lines: &[&str],
) -> Vec<Vec<String>> {
    complete_lines_through(&[], shell, directories, lines, &[])
}

/// `complete_lines` with `environment` added to the shell's, which the
/// binaries a script calls back inherit (`ROSTER_DIR` naming the registry
/// whose sessions complete).
pub fn complete_lines_with_environment(
    shell: TestedShell,
    directories: &CompletionDirectories,
    lines: &[&str],
    environment: &[(&str, &std::ffi::OsStr)],
) -> Vec<Vec<String>> {
    complete_lines_through(&[], shell, directories, lines, environment)
}

/// The line a driver prints after the candidates for each line typed.
const NEXT_LINE_MARK: &str = "ROSTER-TEST-NEXT-LINE";

fn complete_lines_through(
    wrapper: &[&std::ffi::OsStr],
    shell: TestedShell,
    directories: &CompletionDirectories,
    lines: &[&str],
    environment: &[(&str, &std::ffi::OsStr)],
) -> Vec<Vec<String>> {
    let scratch = tempfile::tempdir().expect("a temporary directory can be made");
    let (program, mut command) = match shell {
        TestedShell::Bash => ("bash", bash_command(&directories.bash, lines)),
        TestedShell::Zsh => ("zsh", zsh_command(&directories.zsh, lines, scratch.path())),
        TestedShell::Fish => ("fish", fish_command(&directories.fish, lines)),
    };
    require_tool(program);
    // A scratch HOME keeps the user's start-up files and caches out of the answer.
    command.env("HOME", scratch.path()).env("TERM", "dumb");
    command.envs(environment.iter().copied());
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
        command = wrapped;
    }
    // A shell waiting on a prompt must fail the test, not hang it.
    let output = run_to_completion(command, StdinFeed::Null, SHELL_DEADLINE);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{program} completing {lines:?} failed ({}):\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let mut answers: Vec<Vec<String>> = vec![Vec::new()];
    for printed in stdout.lines() {
        if printed.trim_end() == NEXT_LINE_MARK {
            answers.push(Vec::new());
            continue;
        }
        // fish prints `candidate<TAB>description`.
        let candidate = printed.split('\t').next().unwrap_or("").trim_end();
        if !candidate.is_empty() {
            answers.last_mut().expect("one answer is open").push(candidate.to_owned());
        }
    }
    answers.pop();
    assert_eq!(answers.len(), lines.len(), "{program} answered {} of {lines:?}:\n{stdout}", answers.len());
    for candidates in &mut answers {
        candidates.sort();
        candidates.dedup();
    }
    answers
}

/// bash: for each line, source the binary's script, find the function
/// `complete -p` registered for it, call it as readline would and print
/// `COMPREPLY`.
fn bash_command(script_directory: &Path, lines: &[&str]) -> Command {
    const DRIVER: &str = r#"
        scripts=$1; shift
        for line in "$@"; do
            read -ra COMP_WORDS <<< "$line"
            binary=${COMP_WORDS[0]}
            source "$scripts/$binary" || exit 3
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
            printf '%s\n' "${COMPREPLY[@]}" ROSTER-TEST-NEXT-LINE
        done
    "#;
    let mut command = Command::new("bash");
    command.args(["--noprofile", "--norc", "-c", DRIVER, "bash"]).arg(script_directory).args(lines);
    command
}

/// zsh: an interactive `zsh -f` on a pseudo-terminal loads compinit with
/// the scripts' directory first on `fpath`. TAB runs a widget that
/// completes the line, with every match `compadd` adds recorded into a file
/// of its own per line, and then prints a marker the driver waits for
/// before it clears the line and types the next.
fn zsh_command(fpath_directory: &Path, lines: &[&str], scratch: &Path) -> Command {
    const SETUP: &str = r#"
        PS1= PROMPT= RPROMPT=
        fpath=("$ROSTER_TEST_FPATH" $fpath)
        autoload -U compinit && compinit -u -D
        unsetopt autolist
        integer roster_test_count=0
        compadd() {
            local argument
            for argument in "$@"; do
                [[ $argument == (-|--) ]] && break
                # -O, -A and -D ask for the matches back instead of adding them.
                if [[ $argument == -[OAD]* ]]; then builtin compadd "$@"; return; fi
            done
            local -a roster_matches
            builtin compadd -A roster_matches "$@"
            (( ${#roster_matches} )) && print -rl -- $roster_matches >> "$ROSTER_TEST_MATCHES/$roster_test_count"
            builtin compadd "$@"
        }
        roster_test_complete() {
            (( roster_test_count++ ))
            : >> "$ROSTER_TEST_MATCHES/$roster_test_count"
            zle complete-word
            print -r -- ROSTER-TEST-COMPLETION'-'DONE
        }
        zle -N roster_test_complete
        bindkey '^I' roster_test_complete
    "#;
    const DRIVER: &str = r#"
        setup=$1; shift
        zmodload zsh/zpty || exit 3
        zpty roster_test_shell zsh -f -i || exit 3
        zpty -w roster_test_shell "source ${(q)setup}"
        for line in "$@"; do
            zpty -w -n roster_test_shell "$line"$'\t'
            zpty -r roster_test_shell seen '*ROSTER-TEST-COMPLETION-DONE*' || exit 5
            # Ctrl-U empties the line for the next one.
            zpty -w -n roster_test_shell $'\x15'
        done
        zpty -d roster_test_shell
        for (( index = 1; index <= $#; index++ )); do
            cat -- "$ROSTER_TEST_MATCHES/$index" || exit 6
            print -r -- ROSTER-TEST-NEXT-LINE
        done
        exit 0
    "#;
    let setup = scratch.join("setup.zsh");
    std::fs::write(&setup, SETUP).expect("the scratch directory is writable");
    let matches = scratch.join("matches");
    std::fs::create_dir(&matches).expect("the scratch directory is writable");
    let mut command = Command::new("zsh");
    command
        .args(["-f", "-c", DRIVER, "zsh"])
        .arg(&setup)
        .args(lines)
        .env("ROSTER_TEST_FPATH", fpath_directory)
        .env("ROSTER_TEST_MATCHES", matches);
    command
}

/// fish: `complete -C` prints what fish would offer for each line, with the
/// scripts' directory first on `fish_complete_path`, so fish loads a script
/// by the binary's name as it does for an installed one.
fn fish_command(complete_directory: &Path, lines: &[&str]) -> Command {
    const DRIVER: &str = r#"
        set --prepend fish_complete_path $argv[1]
        for line in $argv[2..]
            complete --do-complete=$line
            echo ROSTER-TEST-NEXT-LINE
        end
    "#;
    let mut command = Command::new("fish");
    command.args(["--no-config", "-c", DRIVER]).arg(complete_directory).args(lines);
    command
}
