//! How another machine is asked (docs/contract.md §6.7): through the
//! user's own OpenSSH (their config, keys and agent), never a server of
//! roster's. The ssh command line (`ROSTER_SSH_COMMAND`, split into words
//! as a POSIX shell splits them, like git's `GIT_SSH_COMMAND`), the remote
//! command quoted for the remote shell, and what a failed call means.

use std::ffi::OsString;
use std::process::Command;
use std::time::Duration;

use harness::hook_config::shell_quote;

/// The variable that replaces `ssh` (for a jump host, a wrapper, options).
pub const SSH_COMMAND_VARIABLE: &str = "ROSTER_SSH_COMMAND";

/// The program run on the other machine.
pub const REMOTE_PROGRAM: &str = "roster-list";

/// The status ssh exits with when it failed itself (could not connect,
/// authenticate, or the connection broke).
const SSH_FAILED: i32 = 255;

/// The status a POSIX shell exits with for a command it cannot find.
const COMMAND_NOT_FOUND: i32 = 127;

/// Splits a command line into words as a POSIX shell does, without
/// expanding anything: blanks separate words, single quotes keep
/// everything, double quotes keep everything but `\` before `"`, `\`, `$`
/// and `` ` ``, and a backslash outside quotes keeps the next character.
pub fn split_words(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut characters = line.chars();
    while let Some(character) = characters.next() {
        match character {
            ' ' | '\t' | '\n' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match characters.next() {
                        Some('\'') => break,
                        Some(quoted) => word.push(quoted),
                        None => return Err("a single quote is not closed".to_owned()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match characters.next() {
                        Some('"') => break,
                        Some('\\') => match characters.next() {
                            Some(escaped @ ('"' | '\\' | '$' | '`')) => word.push(escaped),
                            Some('\n') => {}
                            Some(other) => {
                                word.push('\\');
                                word.push(other);
                            }
                            None => return Err("a double quote is not closed".to_owned()),
                        },
                        Some(quoted) => word.push(quoted),
                        None => return Err("a double quote is not closed".to_owned()),
                    }
                }
            }
            '\\' => match characters.next() {
                Some('\n') => {}
                Some(escaped) => {
                    in_word = true;
                    word.push(escaped);
                }
                None => return Err("the line ends in a backslash".to_owned()),
            },
            other => {
                in_word = true;
                word.push(other);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

/// The ssh program and its own arguments: `ROSTER_SSH_COMMAND` split into
/// words when it is set and not empty, else `ssh`.
pub fn ssh_words(variable: Option<OsString>) -> Result<Vec<String>, String> {
    let Some(value) = variable.filter(|value| !value.is_empty()) else {
        return Ok(vec!["ssh".to_owned()]);
    };
    let value = value.into_string().map_err(|_| format!("{SSH_COMMAND_VARIABLE} is not valid UTF-8"))?;
    let words = split_words(&value).map_err(|why| format!("{SSH_COMMAND_VARIABLE} {value:?}: {why}"))?;
    if words.is_empty() {
        return Ok(vec!["ssh".to_owned()]);
    }
    Ok(words)
}

/// The remote command line: `roster-list` and its arguments, each quoted
/// for the remote shell (ssh hands the remote shell one line).
pub fn remote_command_line(arguments: &[String]) -> String {
    std::iter::once(REMOTE_PROGRAM)
        .chain(arguments.iter().map(String::as_str))
        .map(shell_quote)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The ssh call that runs `remote_line` on `destination`: never a prompt
/// (`BatchMode`), a bounded connection (`ConnectTimeout`, which bounds the
/// protocol's greeting and key exchange too), no terminal, stdin closed.
pub fn ssh_call(
    ssh: &[String],
    destination: &str,
    port: Option<u16>,
    connect_timeout: Duration,
    remote_line: &str,
) -> Command {
    let mut command = Command::new(&ssh[0]);
    command.args(&ssh[1..]);
    command.args(["-o", "BatchMode=yes", "-o"]);
    command.arg(format!("ConnectTimeout={}", connect_timeout.as_secs().max(1)));
    command.arg("-T");
    if let Some(port) = port {
        command.arg("-p").arg(port.to_string());
    }
    command.arg("--").arg(destination).arg(remote_line);
    command.stdin(std::process::Stdio::null());
    command
}

/// Why a host gave no rows, as a note's kind says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostFailure {
    /// ssh could not reach it (exit 255), or it did not answer in time.
    Unreachable,
    /// No `roster-list` on the PATH of a non-interactive ssh session.
    WithoutRoster,
    /// Its roster is too old to know a flag asked for.
    OlderContract,
    /// It answered, but not with what roster-list prints.
    Unreadable,
}

impl HostFailure {
    /// The note's kind (docs/contract.md §6.7).
    pub fn kind(self) -> &'static str {
        match self {
            HostFailure::Unreachable => "host-unreachable",
            HostFailure::WithoutRoster => "host-without-roster",
            HostFailure::OlderContract => "host-older-contract",
            HostFailure::Unreadable => "host-unreadable",
        }
    }

    /// What to do about it.
    pub fn advice(self) -> &'static str {
        match self {
            HostFailure::Unreachable => {
                "check that `ssh HOST true` works without a prompt (keys or agent; BatchMode is on), or \
                 raise --connect-timeout"
            }
            HostFailure::WithoutRoster => {
                "install roster there, on the PATH of a non-interactive ssh session (e.g. /usr/bin with the \
                 Debian package, or ~/.local/bin in .bashrc before its interactive-only part)"
            }
            HostFailure::OlderContract => "upgrade roster there, or leave out the flags it does not know",
            HostFailure::Unreadable => "run `roster-list --format json` there to see what it prints",
        }
    }
}

/// What a finished remote call with `status` (`None`: killed by a signal)
/// and `stderr` means, when it gave no rows.
pub fn failure_of(status: Option<i32>, stderr: &str) -> HostFailure {
    let said = |words: &str| stderr.contains(words);
    match status {
        Some(SSH_FAILED) => HostFailure::Unreachable,
        Some(COMMAND_NOT_FOUND) => HostFailure::WithoutRoster,
        _ if said("command not found") || said("No such file or directory") && said(REMOTE_PROGRAM) => {
            HostFailure::WithoutRoster
        }
        // clap's usage error for a flag an older roster-list does not know.
        Some(2) if said("unexpected argument") || said("invalid value") => HostFailure::OlderContract,
        _ => HostFailure::Unreadable,
    }
}

/// The last line of what ssh or the remote program said on stderr that is
/// not its notes line, for a message: it names the cause (`Connection
/// refused`, `Permission denied (publickey)`).
pub fn last_words(stderr: &str) -> Option<String> {
    stderr
        .lines()
        .rev()
        .map(str::trim)
        .find(|line| !line.is_empty() && !line.starts_with("{\"notes\""))
        .map(|line| cli_support::escape_for_terminal(line).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_lines_split_as_a_posix_shell_splits_them() {
        let cases: [(&str, &[&str]); 7] = [
            ("ssh", &["ssh"]),
            ("  ssh   -F /dev/null  ", &["ssh", "-F", "/dev/null"]),
            ("ssh -o 'ProxyJump=a b' -i \"$HOME/k\"", &["ssh", "-o", "ProxyJump=a b", "-i", "$HOME/k"]),
            (r#"ssh -o "A=\"q\" \\ \x""#, &["ssh", "-o", r#"A="q" \ \x"#]),
            (r"a\ b c\\d", &["a b", r"c\d"]),
            ("x '' y", &["x", "", "y"]),
            ("x'y'\"z\"", &["xyz"]),
        ];
        for (line, words) in cases {
            assert_eq!(split_words(line).expect("splits"), words, "{line}");
        }
        for broken in ["ssh 'x", "ssh \"x", "ssh x\\"] {
            assert!(split_words(broken).is_err(), "{broken}");
        }
    }

    #[test]
    fn the_remote_command_quotes_each_argument_for_the_remote_shell() {
        let line = remote_command_line(&["--agent".to_owned(), "it's $x".to_owned(), "--all".to_owned()]);
        assert_eq!(line, r"roster-list --agent 'it'\''s $x' --all");
        assert_eq!(split_words(&line).expect("splits"), ["roster-list", "--agent", "it's $x", "--all"]);
    }

    #[test]
    fn failures_are_told_apart_by_status_and_words() {
        assert_eq!(
            failure_of(Some(255), "ssh: connect to host x: Connection refused"),
            HostFailure::Unreachable
        );
        assert_eq!(failure_of(Some(127), "bash: roster-list: command not found"), HostFailure::WithoutRoster);
        assert_eq!(failure_of(Some(1), "sh: 1: roster-list: command not found"), HostFailure::WithoutRoster);
        assert_eq!(
            failure_of(Some(2), "roster-list: unexpected argument '--state' found"),
            HostFailure::OlderContract
        );
        assert_eq!(failure_of(Some(1), "roster-list: reading: I/O error"), HostFailure::Unreadable);
        assert_eq!(failure_of(None, ""), HostFailure::Unreadable);
    }
}
