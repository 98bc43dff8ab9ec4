//! How another machine is asked for its sessions (docs/contract.md §6.7):
//! `roster-list` run there through the user's own OpenSSH
//! (`cli_support::ssh`), and what a failed call means.

pub use cli_support::ssh::{SSH_COMMAND_VARIABLE, ssh_call, ssh_words};

/// The program run on the other machine.
pub const REMOTE_PROGRAM: &str = "roster-list";

/// The status ssh exits with when it failed itself (could not connect,
/// authenticate, or the connection broke).
const SSH_FAILED: i32 = 255;

/// The status a POSIX shell exits with for a command it cannot find.
const COMMAND_NOT_FOUND: i32 = 127;

/// The remote command line: `roster-list` and its arguments, each quoted
/// for the remote shell.
pub fn remote_command_line(arguments: &[String]) -> String {
    cli_support::ssh::remote_command_line(REMOTE_PROGRAM, arguments)
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
    fn the_remote_command_quotes_each_argument_for_the_remote_shell() {
        let line = remote_command_line(&["--agent".to_owned(), "it's $x".to_owned(), "--all".to_owned()]);
        assert_eq!(line, r"roster-list --agent 'it'\''s $x' --all");
        assert_eq!(
            cli_support::ssh::split_words(&line).expect("splits"),
            ["roster-list", "--agent", "it's $x", "--all"]
        );
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
