//! Asking another machine through the user's own OpenSSH (their config,
//! keys and agent), never a server of roster's: the ssh command line
//! (`ROSTER_SSH_COMMAND`, split into words as a POSIX shell splits them,
//! like git's `GIT_SSH_COMMAND`), the remote command quoted for the remote
//! shell, a call that never prompts, and the `[USER@]HOST[:PORT]` a
//! `--host` names. `roster-list --host` and `roster-focus --host` both ask
//! this way.

use std::ffi::OsString;
use std::process::Command;
use std::time::Duration;

use harness::hook_config::shell_quote;

/// The variable that replaces `ssh` (for a jump host, a wrapper, options).
pub const SSH_COMMAND_VARIABLE: &str = "ROSTER_SSH_COMMAND";

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

/// The remote command line: `program` and its arguments, each quoted for
/// the remote shell (ssh hands the remote shell one line).
pub fn remote_command_line(program: &str, arguments: &[String]) -> String {
    std::iter::once(program)
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

/// The word that means this machine, listed in-process (no ssh).
pub const LOCAL_HOST: &str = "local";

/// One host to ask, as the user gave it (`given`, the `host` key of its
/// rows) and where it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Host {
    pub given: String,
    pub place: Place,
}

/// Where a host's sessions are read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Place {
    /// This machine, in-process.
    Local,
    /// Through ssh: `destination` (`[user@]host`) and the port, when given.
    Remote { destination: String, port: Option<u16> },
}

/// Parses `[USER@]HOST[:PORT]` (an IPv6 address in brackets when a port
/// follows: `[::1]:2222`), or `local`. Refused: an empty host, one that
/// starts with `-` (ssh would read it as an option), whitespace or control
/// characters, and a port that is not 1 to 65535.
pub fn parse_host(text: &str) -> Result<Host, String> {
    if text == LOCAL_HOST {
        return Ok(Host { given: text.to_owned(), place: Place::Local });
    }
    if text.chars().any(|character| character.is_whitespace() || character.is_control()) {
        return Err("a host holds no spaces or control characters".to_owned());
    }
    let (user, rest) = match text.rsplit_once('@') {
        Some((user, rest)) => (Some(user), rest),
        None => (None, text),
    };
    if user.is_some_and(|user| user.is_empty() || user.starts_with('-')) {
        return Err("the user before @ is empty or starts with -".to_owned());
    }
    let (name, port) = if let Some(bracketed) = rest.strip_prefix('[') {
        let (address, after) =
            bracketed.split_once(']').ok_or_else(|| "an IPv6 address in [ ] lacks its ]".to_owned())?;
        match after {
            "" => (address, None),
            _ => match after.strip_prefix(':') {
                Some(port) => (address, Some(port)),
                None => return Err(format!("unexpected {after:?} after ]")),
            },
        }
    } else {
        match rest.split_once(':') {
            // More than one colon: an IPv6 address without a port.
            Some((_, after)) if after.contains(':') => (rest, None),
            Some((name, port)) => (name, Some(port)),
            None => (rest, None),
        }
    };
    if name.is_empty() {
        return Err("the host name is empty".to_owned());
    }
    if name.starts_with('-') {
        return Err("a host name never starts with - (ssh would read it as an option)".to_owned());
    }
    let port = match port {
        None => None,
        Some(port) => match port.parse::<u16>() {
            Ok(port) if port > 0 => Some(port),
            _ => return Err(format!("port {port:?} is not a number from 1 to 65535")),
        },
    };
    let destination = match user {
        Some(user) => format!("{user}@{name}"),
        None => name.to_owned(),
    };
    Ok(Host { given: text.to_owned(), place: Place::Remote { destination, port } })
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
        let line = remote_command_line("roster-focus", &["--print".to_owned(), "it's $x".to_owned()]);
        assert_eq!(line, r"roster-focus --print 'it'\''s $x'");
        assert_eq!(split_words(&line).expect("splits"), ["roster-focus", "--print", "it's $x"]);
    }
}
